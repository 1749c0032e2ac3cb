"""Solve a :class:`~mechdesign.lp.program.LinearProgram` with HiGHS.

Two back ends solve the same LP: ``highs`` passes the sparse matrices to
highspy directly (no modelling overhead: what makes N = M = 1000 designs
possible), ``cvxpy`` states ``minimise cᵀx s.t. L ≤ Ax ≤ U, l ≤ x ≤ u`` in
cvxpy and solves it with cvxpy's HiGHS interface. Both return primal values
and row multipliers in one sign convention (c = Aᵀy + z), from which
:func:`mechdesign.lp.program.dual_bound` computes a bound of its own.

Method ``auto``: dual simplex for small LPs (exact vertices, tiny residuals); for large ones, interior point
with crossover. For the plain kernel LP of Q_X(c) or LDP (the caller passes its
:class:`~mechdesign.cone.layout.KernelLayout`), interior point runs without crossover and
:func:`polish_kernel` removes the ~1e−9 mass the interior point spreads over unused outputs when the exact
repair would stay tiny, else crossover runs. Which program solves a design (output generation, the
uncompiled kernel LP, ...) is chosen by :mod:`mechdesign.engines.routing`, not here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache, partial

import numpy as np
import scipy.sparse as sp

from mechdesign.lp.program import LinearProgram
from mechdesign.lp.threads import highs_threads
from mechdesign.spec.models import SolverOptions
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.highs import (
    HIGHS_PROFILES,
    configured_highs,
    highs_options,
    new_highs,
    silence_highs_banner,
    stdout_to_stderr,
)
from mechdesign.lp.incumbent import offer_lp

__all__ = [
    "Status",
    "LPSolution",
    "solve_lp",
    "plain_kernel_layout",
    "highs_model",
    "highs_status",
    "stopped_status",
    "IPM_THRESHOLD_NONZEROS",
]

IPM_THRESHOLD_NONZEROS = 20_000
"""Above this many nonzeros ``auto`` picks interior point + crossover."""


class Status(str, Enum):
    """Outcome of a design (the JSON ``status`` field)."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    SOLVER_ERROR = "solver_error"
    INTERRUPTED = "interrupted"
    SUBOPTIMAL = "suboptimal"
    """A private (certified) kernel whose optimality gap exceeds the tolerance."""
    UNKNOWN = "unknown"

    @property
    def is_ok(self) -> bool:
        return self is Status.OPTIMAL


@cache
def _highs_status_map() -> dict:
    """Every HiGHS model status → :class:`Status` (the one mapping of HiGHS's vocabulary)."""
    import highspy

    S = highspy.HighsModelStatus
    table = {
        "kOptimal": Status.OPTIMAL,
        "kInfeasible": Status.INFEASIBLE,
        "kUnbounded": Status.UNBOUNDED,
        "kUnboundedOrInfeasible": Status.INFEASIBLE,
        "kTimeLimit": Status.TIME_LIMIT,
        "kIterationLimit": Status.ITERATION_LIMIT,
        "kSolutionLimit": Status.ITERATION_LIMIT,
        "kInterrupt": Status.INTERRUPTED,
        "kHighsInterrupt": Status.INTERRUPTED,
        "kObjectiveBound": Status.UNKNOWN,
        "kObjectiveTarget": Status.UNKNOWN,
        "kMemoryLimit": Status.SOLVER_ERROR,
        "kLoadError": Status.SOLVER_ERROR,
        "kModelError": Status.SOLVER_ERROR,
        "kPresolveError": Status.SOLVER_ERROR,
        "kSolveError": Status.SOLVER_ERROR,
        "kPostsolveError": Status.SOLVER_ERROR,
        "kModelEmpty": Status.OPTIMAL,
        "kNotset": Status.UNKNOWN,
        "kUnknown": Status.UNKNOWN,
    }
    return {getattr(S, name): status for name, status in table.items() if hasattr(S, name)}


def highs_status(h) -> Status:
    """The :class:`Status` of the model ``h`` (a ``highspy.Highs``) after a run."""
    return _highs_status_map().get(h.getModelStatus(), Status.UNKNOWN)


def stopped_status(h) -> str:
    """Why a generation loop's restricted LP stopped short of optimal, in the loops' own words (values of
    :class:`Status`): ``time_limit`` when HiGHS ran out of time, else ``solver_error``."""
    return Status.TIME_LIMIT.value if highs_status(h) is Status.TIME_LIMIT else Status.SOLVER_ERROR.value


@dataclass(frozen=True)
class LPSolution:
    """What a back end returns: status, primal x, row multipliers y (c = Aᵀy + z)."""

    status: Status
    x: np.ndarray | None
    row_dual: np.ndarray | None
    objective: float | None
    """Solver-reported objective, in the user's sense."""
    seconds: float
    iterations: int
    method: str
    backend: str
    message: str = ""
    mip_dual_bound: float | None = None
    """For a MIP (``lp.integrality`` set): HiGHS's dual bound, in the user's sense (an upper bound
    on the optimum when maximising); row duals do not exist then."""


def _method(lp: LinearProgram, options: SolverOptions) -> str:
    if options.method != "auto":
        return options.method
    return "ipm" if lp.A.nnz > IPM_THRESHOLD_NONZEROS else "simplex"


NOISE_COLUMN = 1e-7
"""Polishing drops kernel columns whose largest entry is below this (interior-point noise)."""
POLISH_WEIGHT = 1e-7
"""Largest estimated repair weight (certify.repair) that a polished interior kernel may need: the
objective then moves by about weight × (loss of the constant kernel), far inside design.GAP_TOLERANCE."""


def plain_kernel_layout(lp: LinearProgram, layout):
    """``layout`` (a :class:`~mechdesign.cone.layout.KernelLayout`) when ``lp`` is exactly that kernel LP: its rows
    are the layout's rows and its objective is on K alone; else None."""
    if layout is None or layout.num_rows != lp.num_rows:
        return None
    c = lp.c.copy()
    c[layout.K] = 0.0
    return layout if not np.any(c) else None


def polish_kernel(lp: LinearProgram, layout, x: np.ndarray) -> np.ndarray | None:
    """Clean an interior-point (no crossover) solution of a kernel LP, or None if it stays unclean.

    Interior points spread ~1e−9 of mass over outputs the optimum leaves empty; for those the
    ratio max/min of the PML constraint is meaningless and the exact repair would need a large
    weight. Columns with max < NOISE_COLUMN are zeroed and rows renormalised (post-processing
    by merging outputs). The result is accepted when the repair weight it needs, estimated
    in floats as in :func:`mechdesign.certify.exact.repair`, is at most POLISH_WEIGHT; the exact check
    and dual bound downstream still decide.
    """
    K = np.clip(x[layout.K], 0.0, 1.0)
    K[:, K.max(axis=0) < NOISE_COLUMN] = 0.0
    sums = K.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        return None
    K /= sums
    n = K.shape[0]
    low = layout.c * K.sum(axis=0) + (1.0 - n * layout.c) * K.min(axis=0)
    # w = v / (v + q (E − 1)) with v = max − E·low, E = 1/scale, written with both sides divided by E: the
    # scale e^−ε is 0 past ε ≈ 745 (no PML row binds then, and w = 0), where 1/scale divided by zero
    v = np.maximum(layout.scale * K.max(axis=0) - low, 0.0)
    q = K.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(v > 0, v / (v + q * (1.0 - layout.scale)), 0.0)
    if not np.all(np.isfinite(w)) or w.max(initial=0.0) > POLISH_WEIGHT:
        return None
    out = x.copy()
    out[layout.K] = K
    out[layout.t] = K.max(axis=0)
    if layout.u is not None:
        out[layout.u] = K.min(axis=0)
    return out


MIP_FEASIBILITY_TOLERANCE = HIGHS_PROFILES["mip"]["mip_feasibility_tolerance"]
"""HiGHS's mip_feasibility_tolerance (default 1e−6, far above the 1e−7 scale of some f-divergence optima:
with it the secant MIP's bound can fall 6× below a value achieved). The slack it implies is
added to the MIP bound (:func:`mip_bound_slack`)."""


def mip_bound_slack(lp: LinearProgram) -> float:
    """How far HiGHS's MIP dual bound may sit on the wrong side because of its tolerances.

    HiGHS works with points feasible within τ_p (mip_feasibility_tolerance); such a point can be worth up to
    τ_p·Σ_j |c_j|(u_j − l_j) more than the feasible points near it, so that much is added (outwards),
    plus the absolute gap 1e−12. This is the tolerance stated explicitly, not a proof: the node LPs'
    own dual tolerance (τ_d·Σ_j (u_j − l_j) in the worst case, 1e−6 for 1000 variables) is not added,
    because it would make every MIP design suboptimal; a MIP bound cannot be recomputed by weak
    duality without the branch-and-bound tree. Where an exact bound is known (the auto design's
    ray-LP bound, valid for every M) the fixed-output designs take the smaller of the two.
    """
    width = np.where(np.isfinite(lp.col_upper) & np.isfinite(lp.col_lower), lp.col_upper - lp.col_lower, 0.0)
    return float(MIP_FEASIBILITY_TOLERANCE * (np.abs(lp.c) * width).sum() + 1e-12)


PRIMAL_CHECK_TOLERANCE = 1e-8
"""A solution said to be optimal whose rows or bounds are violated by more than this is re-solved."""


def primal_violation(lp: LinearProgram, x: np.ndarray) -> float:
    """Largest violation of a row or column bound by ``x`` (0 when feasible)."""
    Ax = lp.A @ x
    parts = [lp.row_lower - Ax, Ax - lp.row_upper, lp.col_lower - x, x - lp.col_upper]
    return float(max((np.max(p[np.isfinite(p)], initial=0.0) for p in parts), default=0.0))


def _suspicious(lp: LinearProgram, solution: "LPSolution") -> bool:
    # INFEASIBLE / UNBOUNDED too: every LP mechdesign builds has a feasible point (the constant kernel)
    # and bounded variables, so such a claim is a numerical failure and is re-solved.
    if solution.status in (Status.UNKNOWN, Status.SOLVER_ERROR, Status.INFEASIBLE, Status.UNBOUNDED):
        return True
    return (
        solution.status is Status.OPTIMAL
        and solution.x is not None
        and primal_violation(lp, solution.x) > PRIMAL_CHECK_TOLERANCE
    )


def _fallbacks(options: SolverOptions) -> list[SolverOptions]:
    tries = [
        options.model_copy(update={"presolve": False}),
        options.model_copy(update={"presolve": False, "method": "simplex" if options.method != "simplex" else "ipm"}),
        options.model_copy(update={"method": "ipm" if options.method != "ipm" else "simplex"}),
        options.model_copy(update={"backend": "cvxpy" if options.backend == "highs" else "highs"}),
    ]
    return [t for t in tries if t != options]


def solve_lp(lp: LinearProgram, options: SolverOptions, time_limit: float | None = None, layout=None) -> LPSolution:
    """Solve ``lp`` with the back end and method of ``options``.

    ``time_limit`` overrides ``options.time_limit`` (used when several LPs share one budget). ``layout``: the
    :class:`~mechdesign.cone.layout.KernelLayout` of the PML rows when ``lp`` may be the plain kernel LP
    (:func:`plain_kernel_layout`; interior point then polishes instead of running crossover).
    The solution is offered to the running design (:func:`mechdesign.lp.incumbent.offer_lp`): its
    kernel block, and its bound when the caller declared ``lp`` the design problem.
    """
    solution = _solve_lp(lp, options, time_limit, plain_kernel_layout(lp, layout))
    if solution.x is not None:
        optimal = solution.status is Status.OPTIMAL and solution.row_dual is not None
        offer_lp(
            lp,
            solution.x,
            solution.row_dual if optimal else None,
            estimate=solution.objective if optimal else None,
            bound=solution.mip_dual_bound,
            source=f"{solution.backend} {solution.method}",
        )
    return solution


def _solve_lp(lp: LinearProgram, options: SolverOptions, time_limit: float | None = None, layout=None) -> LPSolution:
    limit = options.time_limit if time_limit is None else time_limit
    if lp.integrality is not None:  # MIP: HiGHS directly, no fallback ladder (cvxpy would drop integrality)
        return _solve_highs(
            lp, options.model_copy(update={"method": "auto"}) if options.method == "exact" else options, limit
        )
    backends = {"highs": partial(_solve_highs, layout=layout), "cvxpy": _solve_cvxpy}
    if options.method == "exact":
        exact = _solve_exact(lp, limit)
        if exact is not None and exact.status is Status.OPTIMAL:
            return exact
        options = options.model_copy(update={"method": "auto"})
    solution = backends[options.backend](lp, options, limit)
    # HiGHS can end in "Unknown", or in an "Optimal" whose point breaks a row by 1e-7, on badly
    # scaled LPs (seen for ε ~ 1e-7, where every PML coefficient is 1 − O(ε) and all rows of the
    # optimum agree to 1e-7). Then retry: without presolve, with interior point, through cvxpy.
    for fallback in _fallbacks(options):
        if not _suspicious(lp, solution):
            break
        retry = backends[fallback.backend](lp, fallback, limit)
        solution = replace(
            retry,
            seconds=solution.seconds + retry.seconds,
            message=f"{retry.message} (after retrying: {solution.message})",
        )
    if _suspicious(lp, solution):  # last resort for small LPs: the exact simplex
        exact = _solve_exact(lp, limit)
        if exact is not None and exact.status is Status.OPTIMAL:
            return replace(
                exact,
                seconds=solution.seconds + exact.seconds,
                message=f"{exact.message} (after HiGHS: {solution.message})",
            )
    return solution


def _solve_exact(lp: LinearProgram, limit: float | None) -> LPSolution | None:
    """The LP by the rational simplex (:mod:`mechdesign.lp.exact`) when it is small enough, else None."""
    from mechdesign.lp.exact import exact_applies, solve_exact

    if not exact_applies(lp):
        return None
    start = time.perf_counter()
    res = solve_exact(lp, None if limit is None else start + float(limit))
    seconds = time.perf_counter() - start
    status = {
        "optimal": Status.OPTIMAL,
        "infeasible": Status.INFEASIBLE,
        "unbounded": Status.UNBOUNDED,
        "limit": Status.TIME_LIMIT,
    }[res.status]
    if status is not Status.OPTIMAL:
        return LPSolution(
            status, None, None, None, seconds, res.pivots, "exact", "fractions", f"exact simplex: {res.status}"
        )
    x = np.array([float(v) for v in res.x])
    y = np.array(res.y, dtype=object)  # exact: dual_bound then recomputes the bound without rounding y
    return LPSolution(
        Status.OPTIMAL,
        x,
        y,
        float(res.objective),
        seconds,
        res.pivots,
        "exact",
        "fractions",
        f"optimal (exact rational simplex, {res.pivots} pivots)",
    )


SMALL_MATRIX_VALUE = HIGHS_PROFILES["lp"]["small_matrix_value"]
"""HiGHS drops matrix entries with |a| ≤ its ``small_matrix_value`` (default 1e−9). A prior mass of 1e−9
is such an entry: dropping it from  t_y − Σ_x P(x) K_xy ≤ 0  makes the LP infeasible at ε = 0. mechdesign sets the smallest value HiGHS accepts, and scales rows (:func:`row_scales`)."""
ROW_SCALE_TARGET = 1e-6
"""Rows whose smallest nonzero |a| is below this are multiplied by a power of two that lifts it to at
least this (keeping the largest entry ≤ :data:`ROW_SCALE_MAX`)."""
ROW_SCALE_MAX = 1e6


def row_scales(lp: LinearProgram) -> np.ndarray:
    """Powers of two s_r (1 for most rows) such that row r of diag(s)·A has its smallest nonzero
    entry ≥ ROW_SCALE_TARGET where possible and its largest ≤ ROW_SCALE_MAX.

    Scaling a row by s (and its bounds by s) leaves the feasible set unchanged; powers of two keep it
    exact in floating point. It changes what HiGHS's absolute tolerances mean for the row: a row made of
    a mass 1e−9 and entries ~1 is then solved to a tolerance relative to its small entries, which is
    what the exact certificate needs. The multipliers of the scaled LP are
    mapped back by y_r = s_r·y'_r (the Lagrangian term y'_r (s_r a_r·x) is (s_r y'_r)(a_r·x)).
    """
    A = abs(lp.A.tocsr())
    n = A.shape[0]
    scales = np.ones(n)
    if A.nnz == 0:
        return scales
    A.eliminate_zeros()
    big = np.asarray(A.max(axis=1).todense()).ravel()
    small = np.zeros(n)
    nz = np.diff(A.indptr) > 0
    small[nz] = np.minimum.reduceat(A.data, A.indptr[:-1][nz])  # the smallest nonzero of each row
    want = nz & (small < ROW_SCALE_TARGET)
    if want.any():
        with np.errstate(over="ignore", divide="ignore"):  # subnormal entries (5e-324): up = inf, clipped
            up = np.ceil(np.log2(ROW_SCALE_TARGET / small[want]))
            room = np.floor(np.log2(ROW_SCALE_MAX / big[want]))
        scales[want] = np.exp2(np.clip(np.minimum(up, room), 0, 60))
    return scales


def highs_model(lp: LinearProgram, scales: np.ndarray | None = None):
    """The LP as a highspy ``HighsLp`` (column-wise matrix, infinite bounds as kHighsInf); with
    ``scales``, row r multiplied by scales[r] (:func:`row_scales`)."""
    import highspy

    model = highspy.HighsLp()
    model.num_col_ = lp.num_cols
    model.num_row_ = lp.num_rows
    inf = highspy.kHighsInf
    model.col_cost_ = lp.c
    model.col_lower_ = np.where(np.isfinite(lp.col_lower), lp.col_lower, -inf)
    model.col_upper_ = np.where(np.isfinite(lp.col_upper), lp.col_upper, inf)
    s = np.ones(lp.num_rows) if scales is None else scales
    model.row_lower_ = np.where(np.isfinite(lp.row_lower), s * lp.row_lower, -inf)
    model.row_upper_ = np.where(np.isfinite(lp.row_upper), s * lp.row_upper, inf)
    model.offset_ = lp.offset
    if lp.integrality is not None:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        model.integrality_ = [kinds[int(v)] for v in lp.integrality]
    A = (lp.A if scales is None else sp.diags(s) @ lp.A).tocsc()
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = A.indptr.astype(np.int32)
    model.a_matrix_.index_ = A.indices.astype(np.int32)
    model.a_matrix_.value_ = A.data
    return model


def write_lp(lp: LinearProgram, path: str) -> None:
    """Write the LP without solving it, in the format the file name asks for (.lp or .mps)."""
    import highspy

    from mechdesign.spec.errors import InputError

    if not str(path).lower().endswith((".lp", ".mps")):
        raise InputError(f"--write-lp: the file name must end in .lp or .mps, found {path}")
    h = new_highs()
    h.setOptionValue("output_flag", False)
    h.passModel(highs_model(lp))
    if h.writeModel(str(path)) == highspy.HighsStatus.kError:  # kWarning: written, e.g. without names
        raise InputError(f"--write-lp: HiGHS could not write {path}")


def _solve_highs(lp: LinearProgram, options: SolverOptions, limit: float | None, layout=None) -> LPSolution:
    """``lp`` by HiGHS; ``layout``: the plain kernel LP's (:func:`plain_kernel_layout`), for interior point's
    polish (:func:`polish_kernel`)."""
    mip = lp.integrality is not None
    method = "mip" if mip else _method(lp, options)
    layout = None if mip else layout
    per_solve = {"presolve": "on" if options.presolve else "off"}
    if not mip:
        per_solve["solver"] = method
    if method == "ipm":
        per_solve["run_crossover"] = "off" if layout is not None else "on"
    h = configured_highs("mip" if mip else "lp", verbose=bool(options.verbose), **per_solve)
    if limit is not None:
        h.setOptionValue("time_limit", float(limit))
    scales = row_scales(lp)
    model = highs_model(lp, scales)
    start = time.perf_counter()
    h.passModel(model)
    try:
        run_interruptible(h)
        raw = h.getModelStatus()
        if layout is not None and method == "ipm":
            polished = None
            if _highs_status_map().get(raw) is Status.OPTIMAL:
                polished = polish_kernel(lp, layout, np.asarray(h.getSolution().col_value, float))
            if polished is None:  # not clean enough to certify: finish with crossover as usual
                h.setOptionValue("run_crossover", "on")
                run_interruptible(h)
                raw = h.getModelStatus()
        else:
            polished = None
    except KeyboardInterrupt:
        _offer_interrupted(lp, h, mip)
        raise
    seconds = time.perf_counter() - start
    status = _highs_status_map().get(raw, Status.UNKNOWN)
    info = h.getInfo()
    iterations = int(
        max(info.simplex_iteration_count, 0) + max(info.ipm_iteration_count, 0) + max(info.crossover_iteration_count, 0)
    )
    x = y = obj = None
    sol = h.getSolution()
    # a model HiGHS refused (a matrix value beyond its large_matrix_value, e.g. a loss of 1e22) has no
    # solution vector at all, whatever the stale solution status says
    if (info.primal_solution_status >= 1 or status is Status.OPTIMAL) and len(sol.col_value) == lp.c.size:
        x = np.asarray(sol.col_value, float) if polished is None else polished
        y = scales * np.asarray(sol.row_dual, float) if sol.dual_valid and not mip else None
        obj = lp.user_objective(x)
    mip_bound = None
    if (
        mip
        and np.isfinite(info.mip_dual_bound)
        and status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT, Status.INTERRUPTED)
    ):
        mip_bound = lp.sense * float(info.mip_dual_bound)  # HiGHS minimises sense·(user objective)
        mip_bound -= lp.sense * mip_bound_slack(lp)  # outwards: its tolerances, stated explicitly
    message = h.modelStatusToString(raw) + (f", {int(info.mip_node_count)} nodes" if mip else "")
    return LPSolution(
        status=status,
        x=x,
        row_dual=y,
        objective=obj,
        seconds=seconds,
        iterations=iterations,
        method=method,
        backend="highs",
        message=message,
        mip_dual_bound=mip_bound,
    )


def _offer_interrupted(lp: LinearProgram, h, mip: bool) -> None:
    """After Ctrl-C cancelled HiGHS: offer what it holds to the running design (a MIP's incumbent and
    dual bound; a feasible point of an interrupted LP), read from the cancelled model."""
    try:
        if h.is_solver_running():  # a second Ctrl-C stopped the wait: reading now would race HiGHS's thread
            return
        info = h.getInfo()
        x = None
        if info.primal_solution_status == 2:  # kSolutionStatusFeasible
            x = np.asarray(h.getSolution().col_value, float)
        bound = None
        if mip and np.isfinite(info.mip_dual_bound):
            bound = lp.sense * float(info.mip_dual_bound) - lp.sense * mip_bound_slack(lp)
        offer_lp(lp, x, bound=bound, source="HiGHS, interrupted")
    except Exception:  # noqa: BLE001 - nothing to read from the cancelled model: nothing offered
        pass


def _solve_cvxpy(lp: LinearProgram, options: SolverOptions, limit: float | None) -> LPSolution:
    """The same LP through cvxpy: minimise cᵀx s.t. A x ≥ L, A x ≤ U, l ≤ x ≤ u (finite parts)."""
    import cvxpy as cp

    x = cp.Variable(lp.num_cols)
    lo_rows = np.flatnonzero(np.isfinite(lp.row_lower))
    up_rows = np.flatnonzero(np.isfinite(lp.row_upper))
    cons_lo = lp.A[lo_rows] @ x >= lp.row_lower[lo_rows]
    cons_up = lp.A[up_rows] @ x <= lp.row_upper[up_rows]
    constraints = [cons_lo, cons_up]
    fl = np.isfinite(lp.col_lower)
    fu = np.isfinite(lp.col_upper)
    if fl.any():
        constraints.append(x[np.flatnonzero(fl)] >= lp.col_lower[fl])
    if fu.any():
        constraints.append(x[np.flatnonzero(fu)] <= lp.col_upper[fu])
    problem = cp.Problem(cp.Minimize(lp.c @ x + lp.offset), constraints)
    method = _method(lp, options)
    highs_opts = highs_options(
        "cvxpy",
        threads=highs_threads(),  # HiGHS's scheduler is global: one thread count per process (see _solve_highs)
        solver=method,
        presolve="on" if options.presolve else "off",
    )
    if method == "ipm":
        highs_opts["run_crossover"] = "on"
    if limit is not None:
        highs_opts["time_limit"] = float(limit)
    start = time.perf_counter()
    try:
        # cvxpy makes its own highspy models: the process's first prints HiGHS's banner on standard output
        # (before any option can be set), and its verbose log goes there too. Standard output carries the
        # report (``solve --json`` is one JSON object), so the banner is used up silently first and the
        # whole solve writes to standard error.
        silence_highs_banner()
        with stdout_to_stderr():
            problem.solve(solver=cp.HIGHS, verbose=options.verbose, highs_options=highs_opts)
    except (cp.error.SolverError, ValueError) as exc:
        # cvxpy raises ValueError ("Cannot unpack invalid solution") when HiGHS stops without a point,
        # e.g. at the time limit
        seconds = time.perf_counter() - start
        status = Status.TIME_LIMIT if limit is not None and seconds >= 0.9 * float(limit) else Status.SOLVER_ERROR
        return LPSolution(
            status,
            None,
            None,
            None,
            seconds,
            0,
            method,
            "cvxpy",
            str(exc).splitlines()[0] if str(exc) else "solver error",
        )
    seconds = time.perf_counter() - start
    status = {
        cp.OPTIMAL: Status.OPTIMAL,
        cp.INFEASIBLE: Status.INFEASIBLE,
        cp.UNBOUNDED: Status.UNBOUNDED,
        cp.USER_LIMIT: Status.TIME_LIMIT,
        cp.OPTIMAL_INACCURATE: Status.UNKNOWN,
        cp.INFEASIBLE_INACCURATE: Status.INFEASIBLE,
        cp.UNBOUNDED_INACCURATE: Status.UNBOUNDED,
    }.get(problem.status, Status.SOLVER_ERROR)
    xv = y = obj = None
    if x.value is not None:
        xv = np.asarray(x.value, float)
        obj = lp.user_objective(xv)
        if cons_lo.dual_value is not None and cons_up.dual_value is not None:
            y = np.zeros(lp.num_rows)
            y[lo_rows] += np.asarray(cons_lo.dual_value, float)  # multiplier of A x ≥ L (≥ 0)
            y[up_rows] -= np.asarray(cons_up.dual_value, float)  # multiplier of A x ≤ U (≥ 0)
    stats = problem.solver_stats
    iterations = int(stats.num_iters or 0) if stats is not None else 0
    return LPSolution(
        status=status,
        x=xv,
        row_dual=y,
        objective=obj,
        seconds=seconds,
        iterations=iterations,
        method=method,
        backend="cvxpy",
        message=str(problem.status),
    )
