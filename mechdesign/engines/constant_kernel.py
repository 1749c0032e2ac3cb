"""Engine ``constant-kernel``: the last resort of every design. A kernel whose rows are all equal (K = 1e_yᵀ) leaks
nothing, so it is (ε,𝒫)-PML for every ε and 𝒫; the best one over the M outputs
(:func:`mechdesign.objectives.fallback.best_constant_kernel`), with the bound over all kernels, private or not
(:func:`mechdesign.objectives.fallback.unconstrained_bound`). :func:`mechdesign.design.design` runs it when no
engine produced a kernel that passed the exact privacy check, so a design is never ``infeasible``."""

from __future__ import annotations

from mechdesign.engines.base import Budget, EngineBase, Problem
from mechdesign.lp.solve import Status
from mechdesign.objectives.plan import PlanOutcome

__all__ = ["ConstantKernel"]


class ConstantKernel(EngineBase):
    name = "constant-kernel"
    solves = "the best constant kernel (zero leakage) and the bound over all kernels: the last resort"

    def applies(self, problem: Problem) -> str | None:
        return None

    def run(self, problem: Problem, budget: Budget) -> PlanOutcome:
        from mechdesign.objectives.fallback import best_constant_kernel, unconstrained_bound

        K, value = best_constant_kernel(problem.spec)
        return PlanOutcome(
            status=Status.SUBOPTIMAL,
            kernel=K,
            value=value,
            bound=unconstrained_bound(problem.spec),
            sense=problem.rules.sense,
            method="constant kernel",
        )

    def hands_over(self, outcome):
        return None
