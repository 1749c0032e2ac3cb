"""Expected loss under the worst prior of Q_X(c) (or of all priors) by output generation with the epigraph
rows kept whole (:func:`mechdesign.lp.side_outputs.solve_side_output_generation`): outputs are priced with
the multipliers of the worst-case vertices, and the bound is weak duality on the compiled LP.

A plain Q_X(c) or simplex spec never gets here: :mod:`mechdesign.lp.worst_case_engine` solves it without
compiling the LP. This compiled path serves the worst case when ``privacy`` lists further guarantees (their
rows are side rows of the restricted LP)."""

from __future__ import annotations

from mechdesign.lp.colgen import KernelLayout
from mechdesign.lp.incumbent import design_problem
from mechdesign.lp.side_outputs import solve_side_output_generation
from mechdesign.lp.solve import Status
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.models import Spec

__all__ = ["solve_worst_case_outputs"]


def solve_worst_case_outputs(spec: Spec, compiled: CompiledProblem, compile_seconds: float) -> PlanOutcome | None:
    """The worst-case expected-loss LP of :func:`mechdesign.objectives.expected_loss.compile_expected_loss` by
    output generation, or None (the caller then solves the whole LP) when the LP has no kernel layout
    (prior sets other than min_mass and simplex), the solver options ask for something else, or the
    generation fails short of its bound (a time limit is reported as such)."""
    lp = compiled.lps[0]
    layout = lp.structure
    options = spec.solver
    if not isinstance(layout, KernelLayout) or options.method != "auto" or options.backend != "highs":
        return None
    with design_problem(lp):  # its rounds' kernels and bounds are the design's (Ctrl-C, lp/incumbent.py)
        res = solve_side_output_generation(lp, layout, time_limit=options.time_limit)
    optimal = res.status == "optimal" and res.x is not None
    # a time limit is reported (the budget is spent) rather than start the whole LP
    if not optimal and res.status != "time_limit":
        return None
    return PlanOutcome(
        status=Status.OPTIMAL if optimal else Status.TIME_LIMIT,
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
            else f"time limit after {res.rounds} rounds"
        ),
    )
