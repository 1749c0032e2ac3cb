"""Engine ``compiled-lp``: the objective's kernel LP(s), compiled whole and solved by HiGHS (or cvxpy) with the
fallback ladder of :func:`mechdesign.lp.solve.solve_lp` (no presolve, the other method, the other back end, the
exact rational simplex for small LPs; method ``exact`` asks for the rational simplex first).

It applies to every objective that is linear in K (expected loss, Dobrushin pairs, Bayes vulnerability with
M ≥ N, min vulnerability), whatever the prior set and guarantees: it is the last engine of their routes.
The LP it solves is the one ``mechdesign solve --write-lp`` writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext

import numpy as np

from mechdesign.engines.base import Budget, EngineBase, Problem
from mechdesign.lp.incumbent import design_problem
from mechdesign.lp.program import dual_bound
from mechdesign.lp.solve import LPSolution, Status, solve_lp
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.errors import InputError
from mechdesign.spec.models import Spec

__all__ = ["CompiledLP", "solve_kernel_lps"]


def _pick(compiled: CompiledProblem, solutions: list[LPSolution]) -> int:
    best, best_val = 0, None
    sense = compiled.lps[0].sense
    for i, s in enumerate(solutions):
        if s.objective is None:
            continue
        if best_val is None or sense * s.objective < sense * best_val:
            best, best_val = i, s.objective
    return best


def _emit_kernel(spec: Spec, compiled: CompiledProblem, x: np.ndarray) -> np.ndarray:
    K = x[compiled.kernel]
    if K.shape[1] < spec.m:  # dobrushin with M > 2: the binary extremal kernel, other outputs unused
        K = np.hstack([K, np.zeros((K.shape[0], spec.m - K.shape[1]))])
    return K


def solve_kernel_lps(
    spec: Spec,
    compiled: CompiledProblem,
    compile_seconds: float = 0.0,
    lp_solver: Callable[..., LPSolution] | None = None,
    time_limit: float | None = None,
) -> PlanOutcome:
    """The program for objectives that are linear in K (expected loss, Dobrushin pairs, Bayes
    vulnerability with M ≥ N): solve each compiled kernel LP, keep the best; the bound is
    recomputed from the solver's row multipliers by weak duality (:func:`mechdesign.lp.program.dual_bound`).

    ``lp_solver(lp, options, time_limit=, layout=)`` solves one LP (default :func:`mechdesign.lp.solve.solve_lp`,
    the HiGHS/cvxpy back ends with their fallback ladder; output generation passes its own); ``time_limit``
    overrides ``spec.solver.time_limit`` (what is left of the design's budget)."""
    solutions = _solve_each(spec, compiled, lp_solver or solve_lp, time_limit)
    status = _combined_status([s.status for s in solutions], len(compiled.lps))
    i = _pick(compiled, solutions)
    chosen, lp = solutions[i], compiled.lps[i]
    dual = None
    if status is Status.OPTIMAL and all(s.row_dual is not None for s in solutions):
        duals = [dual_bound(l, s.row_dual) for l, s in zip(compiled.bound_lps or compiled.lps, solutions)]
        dual = max(duals) if lp.sense < 0 else duals[0]
    return PlanOutcome(
        status=status,
        kernel=None if chosen.x is None else _emit_kernel(spec, compiled, chosen.x),
        value=chosen.objective,
        bound=dual,
        sense=lp.sense,
        method=chosen.method,
        backend=chosen.backend,
        seconds=sum(s.seconds for s in solutions),
        iterations=sum(s.iterations for s in solutions),
        lps=len(solutions),
        rows=lp.num_rows,
        columns=lp.num_cols,
        nonzeros=int(lp.A.nnz),
        message=chosen.message,
        compile_seconds=compile_seconds,
    )


def _solve_each(spec: Spec, compiled: CompiledProblem, lp_solver, time_limit: float | None) -> list[LPSolution]:
    """Each compiled LP in turn within the budget, stopping at a time limit, solver error or interrupt."""
    solutions = []
    budget = spec.solver.time_limit if time_limit is None else time_limit
    options = spec.solver
    if spec.extra_guarantees and options.method == "auto":
        # metric rows make kernels whose entries span e^{-eps max d}: interior point's multipliers then give
        # loose dual bounds (gap ~1e-5 at N = 60, eps = 0.5) or fail; dual simplex certifies them
        options = options.model_copy(update={"method": "simplex"})
    t1 = time.perf_counter()
    for i, lp in enumerate(compiled.lps):
        remaining = None if budget is None else max(budget - (time.perf_counter() - t1), 1e-3)
        # one LP is the design problem: its multipliers (output generation's rounds too) bound the design,
        # which Ctrl-C reports (lp/incumbent.py); one of several (Dobrushin pairs) bounds only its pair
        single = len(compiled.lps) == 1
        with design_problem(lp, (compiled.bound_lps or compiled.lps)[i]) if single else nullcontext():
            solutions.append(lp_solver(lp, options, time_limit=remaining, layout=compiled.layout))
        if solutions[-1].status in (Status.TIME_LIMIT, Status.SOLVER_ERROR, Status.INTERRUPTED):
            break
    return solutions


def _combined_status(statuses: list[Status], count: int) -> Status:
    """Optimal when all ``count`` LPs were solved to optimality, else the first status that is not."""
    if len(statuses) == count and all(s.is_ok for s in statuses):
        return Status.OPTIMAL
    return next((s for s in statuses if not s.is_ok), Status.UNKNOWN)


class CompiledLP(EngineBase):
    name = "compiled-lp"
    solves = (
        "the objective's kernel LP(s) compiled whole, HiGHS or cvxpy with the fallback ladder (or the exact simplex)"
    )

    def applies(self, problem: Problem) -> str | None:
        return problem.rules.kernel_lp_reason()

    def run(self, problem: Problem, budget: Budget) -> PlanOutcome:
        spec = problem.spec
        compiled = problem.compiled()
        outcome = solve_kernel_lps(spec, compiled, problem.take_compile_seconds(), time_limit=budget.remaining())
        if outcome.kernel is None and outcome.status is Status.INFEASIBLE:
            message = problem.rules.infeasible_message()
            if message is not None:
                raise InputError(message)
        return outcome

    def hands_over(self, outcome: PlanOutcome) -> str | None:
        return None  # the last engine of a kernel-LP route: whatever it found is the route's outcome
