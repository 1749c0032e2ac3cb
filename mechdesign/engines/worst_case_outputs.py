"""Expected loss under the worst prior of Q_X(c) (or of all priors) by output generation with the epigraph
rows kept whole (:func:`mechdesign.engines.side_outputs.solve_side_output_generation`): outputs are priced with
the multipliers of the worst-case vertices, and the bound is weak duality on the compiled LP.

A plain Q_X(c) or simplex spec never gets here: :mod:`mechdesign.engines.worst_case` solves it without
compiling the LP. This compiled path serves the worst case when ``privacy`` lists further guarantees (their
rows are side rows of the restricted LP)."""

from __future__ import annotations

from mechdesign.cone.layout import layout_reason
from mechdesign.engines.base import EngineBase
from mechdesign.lp.incumbent import design_problem
from mechdesign.engines.side_outputs import solve_side_output_generation
from mechdesign.lp.solve import Status
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.models import Spec

__all__ = ["SideOutputGeneration", "solve_worst_case_outputs"]


def solve_worst_case_outputs(
    spec: Spec, compiled: CompiledProblem, compile_seconds: float, time_limit: float | None = None
) -> PlanOutcome:
    """The worst-case expected-loss LP of :func:`mechdesign.objectives.expected_loss.compile_expected_loss` by
    output generation (``compiled.layout``: the min_mass or simplex rows). Status ``optimal``, ``time_limit``, or
    the generation's own status when it stopped short of its bound (the route then solves the whole LP)."""
    lp = compiled.lps[0]
    layout = compiled.layout
    with design_problem(lp):  # its rounds' kernels and bounds are the design's (Ctrl-C, lp/incumbent.py)
        res = solve_side_output_generation(lp, layout, time_limit=time_limit)
    optimal = res.status == "optimal" and res.x is not None
    return PlanOutcome(
        status=Status.OPTIMAL if optimal else Status(res.status) if res.status != "optimal" else Status.UNKNOWN,
        kernel=None if res.x is None else res.x[compiled.kernel],
        value=None if res.x is None else lp.user_objective(res.x),
        bound=res.bound if optimal else None,
        sense=lp.sense,
        method="output-generation (epigraph rows kept)",
        seconds=res.seconds,
        compile_seconds=compile_seconds,
        iterations=res.iterations,
        lps=res.rounds,
        rows=lp.num_rows,
        columns=lp.num_cols,
        nonzeros=int(lp.A.nnz),
        message=(
            f"optimal: {res.rounds} rounds, {res.outputs} of {layout.K.shape[1]} outputs"
            if optimal
            else f"{res.status} after {res.rounds} rounds"
        ),
    )


class SideOutputGeneration(EngineBase):
    """Engine ``side-output-generation``: the compiled worst-case LP (or any kernel LP with rows besides the cone's)
    by output generation that keeps the side rows whole (:func:`solve_worst_case_outputs`)."""

    name = "side-output-generation"
    solves = "worst-case expected loss with further guarantees: output generation keeping the epigraph and side rows"

    def applies(self, problem) -> str | None:
        spec = problem.spec
        reason = problem.rules.worst_case_loss_reason()
        if reason is not None:
            return reason
        if spec.solver.method != "auto" or spec.solver.backend != "highs":
            return f"solver is {spec.solver.backend} {spec.solver.method} (this engine is HiGHS's automatic method)"
        return layout_reason(spec)

    def run(self, problem, budget):
        compiled = problem.compiled()
        return solve_worst_case_outputs(problem.spec, compiled, problem.take_compile_seconds(), budget.remaining())
