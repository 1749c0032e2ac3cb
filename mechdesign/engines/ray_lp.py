"""Engine ``ray-lp``: a sublinear utility U(K) = Σ_y μ(K(:,y)) (mutual information, f-divergences, Bayes
vulnerability with M < N) maximised exactly over the extreme rays of the (ε,𝒫)-PML column cone, every ray listed
(:func:`mechdesign.engines.sublinear.design_exact`), while they can be listed; a fixed output size below the rays
used then goes to :mod:`mechdesign.engines.fixed_outputs` with the objective's own hooks."""

from __future__ import annotations

from mechdesign.engines.base import EngineBase
from mechdesign.engines.fixed_outputs import FixedHooks
from mechdesign.engines.sublinear import EXACT_MAX_RAYS, design_exact, solve_sublinear
from mechdesign.privacy.extremes import CDD_MAX_N, count_structured_rays

__all__ = ["RayLP", "FIXED_HOOKS", "fixed_hooks"]


def _tangent_secant_hooks() -> FixedHooks:
    from mechdesign.engines.fdiv_lines import _fixed_tangent_secant

    return FixedHooks(after_enumeration=_fixed_tangent_secant)


def _bayes_hooks() -> FixedHooks:
    from mechdesign.engines.bayes_lp import _fixed_bayes_mip

    return FixedHooks(before_enumeration=_fixed_bayes_mip)


FIXED_HOOKS = {"f_divergence": _tangent_secant_hooks, "bayes_vulnerability": _bayes_hooks}
"""Objective kind → its own methods for a fixed output size below the rays used (the others: the generic ones)."""


def fixed_hooks(kind: str) -> FixedHooks:
    """The objective's own methods for a fixed output size (:class:`~mechdesign.engines.fixed_outputs.FixedHooks`)."""
    make = FIXED_HOOKS.get(kind)
    return FixedHooks() if make is None else make()


class RayLP(EngineBase):
    name = "ray-lp"
    solves = "a sublinear utility over every extreme ray of the PML cone (listed), then fixed outputs if M is smaller"

    def applies(self, problem) -> str | None:
        spec = problem.spec
        if problem.rules.kernel_lp_reason() is None:
            return "the objective is the kernel LP here (the kernel LP engines solve it)"
        count = count_structured_rays(spec.prior_set, spec.n)
        if count is not None and count > EXACT_MAX_RAYS:
            return (
                f"{spec.objective.kind} over a {spec.prior_set.kind} prior set is designed by listing all extreme "
                f"rays, which is limited to about {EXACT_MAX_RAYS} rays (N = {spec.n} needs ~{count})"
            )
        if count is None and spec.n > CDD_MAX_N:
            return (
                f"the extreme rays of a {spec.prior_set.kind} prior set are listed by vertex enumeration, "
                f"which is limited to N <= {CDD_MAX_N} (N = {spec.n})"
            )
        return None

    def run(self, problem, budget):
        return solve_sublinear(problem.spec, design_exact, fixed_hooks(problem.spec.objective.kind))

    def hands_over(self, outcome):
        return None  # the route's outcome (a failed ray LP is certified through the constant kernel)
