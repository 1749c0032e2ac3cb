"""Compile a spec into linear programs over the kernel K (N × M).

Every LP here shares the (ε,𝒫)-PML feasible set, written in lifted form
(docs/explanation/mathematics.md, Lemma 4 of the Dobrushin paper generalised to any prior set):

    K_xy ∈ [0, 1],   Σ_y K_xy = 1                         (row-stochastic)
    t_y ≥ K_xy                      for all x, y           (t_y ≥ column maximum)
    e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y)  for all y            (see priors.constrain_min_expectation)

The PML row is scaled by e^{−ε} (not multiplied by e^ε) so that coefficients
stay ≤ 1 for every ε; for ε ≳ 20 HiGHS drops coefficients below 1e−9, which
only relaxes the LP: the exact certificate then catches and repairs it.
Each objective that is linear in K builds its LP on :func:`add_pml_kernel` in its own module
(:mod:`~mechdesign.objectives.expected_loss`, :mod:`~mechdesign.objectives.dobrushin`,
:mod:`~mechdesign.objectives.bayes_vulnerability`); :func:`solve_kernel_lps` runs such LPs.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from mechdesign.lp.colgen import KernelLayout
from mechdesign.lp.program import LinearProgram, LPBuilder
from mechdesign.privacy.constraints import add_guarantee_rows
from mechdesign.privacy.priors import constrain_min_expectation, rules
from mechdesign.lp.program import dual_bound
from mechdesign.lp.incumbent import design_problem
from mechdesign.lp.kernel_engine import solve_kernel_lp
from mechdesign.lp.worst_case_engine import solve_worst_case_kernel_lp
from mechdesign.lp.solve import LPSolution, Status, solve_lp
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.models import Spec

__all__ = [
    "CompiledProblem",
    "add_pml_kernel",
    "solve_kernel_lps",
    "loss_matrix",
    "loss_rows",
    "objective_prior",
    "exact_objective_prior",
]


@dataclass(frozen=True)
class CompiledProblem:
    """One or more LPs whose best solution is the design.

    ``lps`` are solved independently (Dobrushin: one LP per pair of symbols);
    ``kernel`` holds the variable indices of K in each LP (the same layout).
    """

    lps: list[LinearProgram]
    kernel: np.ndarray
    labels: list[str] = field(default_factory=list)
    note: str = ""
    bound_lps: list[LinearProgram] | None = None
    """The LPs of the problem as the user stated it, when ``lps`` tightens a right-hand side to leave
    room for the solver's tolerance: the dual bound is computed on these (the same multipliers stay
    dual feasible, only the right-hand sides differ), so it bounds the stated problem."""


def add_pml_kernel(b: LPBuilder, spec: Spec, m: int) -> np.ndarray:
    """Add the kernel K (N × M) and its (ε,𝒫)-PML constraints; return K's indices.

        Σ_y K_xy = 1,  0 ≤ K_xy ≤ 1,
        K_xy − t_y ≤ 0,
        e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y).

    O(NM) rows with O(1) nonzeros each for the min_mass and simplex sets
    (plus V·M rows of N nonzeros for a hull of V priors).

    With a ``privacy`` list, the rows of every other constraint follow (privacy/constraints.py): another
    prior set's rows on the same t, or metric rows along the metric's graph (privacy/metric.py).

    For min_mass and simplex, ``b.structure`` records the layout of these rows
    (:class:`~mechdesign.lp.colgen.KernelLayout`) so that the solver can run
    column generation when nothing else is added to the LP.
    """
    n = spec.n
    K = b.variables("K", (n, m), lower=0.0, upper=1.0)
    t = b.variables("t", (m,), lower=0.0, upper=1.0)
    rows_sum = b.rows(K, np.ones((n, m)), 1.0, 1.0)
    rows_t = b.rows(np.stack([K, np.broadcast_to(t, (n, m))], -1).reshape(-1, 2), np.array([1.0, -1.0]), -np.inf, 0.0)
    scale = exp_minus_epsilon_down(spec)
    # with metric constraints only, the primary (eps*max d)-LDP is implied by them: no rows (spec/models.py)
    where = (
        {}
        if spec.primary_is_implied
        else constrain_min_expectation(b, spec.prior_set, n, K, 1.0, [(t, scale)], tag="pml", k_range=(0.0, 1.0))
    )
    if "low" in where:  # simplex or Q_X(c): output generation knows their rows
        c = float(rules(spec.prior_set, n).equivalent_c())
        b.structure = KernelLayout(
            K=K,
            t=t,
            rows_sum=rows_sum,
            rows_t=rows_t.reshape(n, m),
            rows_low=where["low"],
            c=c,
            scale=scale,
            u=where.get("u"),
            rows_pml=where.get("column"),
        )
    # the other constraints of privacy (issue 16); added after the layout, whose row count then no longer
    # matches the LP, so output generation (which prices only the layout's rows) is not used
    for i, guarantee in enumerate(spec.extra_guarantees):
        add_guarantee_rows(b, guarantee, K, t, tag=f"privacy{i}")
    return K


# ----------------------------------------------------------------- losses
def loss_matrix(spec: Spec) -> np.ndarray:
    """The N × M loss matrix L of an expected-loss objective (indices x, y from 0)."""
    return loss_rows(spec, 0, spec.n)


def loss_rows(spec: Spec, start: int, stop: int) -> np.ndarray:
    """Rows start, ..., stop − 1 of :func:`loss_matrix` (a named loss: by its formula, without the other rows)."""
    obj = spec.objective
    if isinstance(obj.loss, list):
        return np.asarray(obj.loss[start:stop], dtype=float)
    x = np.arange(start, stop)[:, None]
    y = np.arange(spec.m)[None, :]
    if obj.loss == "hamming":
        return (x != y).astype(float)
    if obj.loss == "absolute":
        return np.abs(x - y).astype(float)
    return ((x - y) ** 2).astype(float)


def exact_objective_prior(spec: Spec) -> list[Fraction] | str | None:
    """The prior an expected loss is averaged under, exactly: the spec's masses, ``"uniform"``, the point prior of
    𝒫 for worst_case over a single prior, or None for the worst prior of 𝒫."""
    obj = spec.objective
    if obj.prior == "worst_case":
        point = rules(spec.prior_set, spec.n).point_prior()
        return None if point is None else [Fraction(p) for p in point]
    return obj.prior


def objective_prior(spec: Spec) -> np.ndarray | None:
    """The prior an expected loss is averaged under (:func:`exact_objective_prior` in doubles), or None for worst
    case over 𝒫."""
    prior = exact_objective_prior(spec)
    if prior is None:
        return None
    if prior == "uniform":
        return np.full(spec.n, 1.0 / spec.n)
    return np.array([float(p) for p in prior])


def exp_minus_epsilon_down(spec: Spec) -> float:
    """A float ≤ e^−ε for the ε as written: 1/U rounded down, U ≥ e^ε a rigorous rational bound.

    With it the PML rows e^−ε t_y ≤ min_P P·K(:,y) are a relaxation of the true ones, so the LP's
    bound bounds the problem as written (issue 10, item 3): math.exp(−1e−9) can exceed e^−ε by an ulp,
    which at ε = 1e−9 is 1e−7 of the privacy budget 1 − e^−ε, and the bound fell below Ξ(ε,c).
    The exact certificate repairs the tiny excess this allows. Past ε = 50 the float is used as is
    (rounded down by an ulp): there the budget is the whole of [0, 1].
    """
    from fractions import Fraction

    from mechdesign.lp.rounding import float_down
    from mechdesign.spec import expr

    eps = spec.epsilon.value
    if eps <= 50:
        try:
            return float_down(1 / Fraction(expr.exp_upper_bound(spec.epsilon.text)))
        except Exception:  # noqa: BLE001 - an ε text the bound cannot parse: the float, an ulp down
            pass
    return math.nextafter(math.exp(-eps), 0.0)


# ----------------------------------------------------------------- kernel LPs solved uncompiled
def uncompiled_kernel_c(spec: Spec):
    """c of Q_X(c) (0 for the simplex) when :mod:`mechdesign.lp.kernel_engine` can solve the spec's kernel LP
    without compiling it: the prior set is some Q_X(c), ``privacy`` adds no other guarantee, and the solver is
    HiGHS with its automatic method. None otherwise (the compiled LP's path applies)."""
    options = spec.solver
    if spec.privacy is not None or options.method != "auto" or options.backend != "highs":
        return None
    return rules(spec.prior_set, spec.n).equivalent_c()


def solve_uncompiled(
    spec: Spec, C: np.ndarray, c, sense: int, compile_seconds: float = 0.0, *, worst_case: bool = False
) -> PlanOutcome | None:
    """The kernel LP  min Σ C_xy K_xy  over (ε,Q_X(c))-PML kernels by
    :func:`mechdesign.lp.kernel_engine.solve_kernel_lp`, as the design's outcome in its own ``sense`` (−1: the
    design maximises −Σ C K, whose value and bound are negated). ``worst_case``: C is a loss L and the LP
    minimises the worst expected loss over Q_X(c) (:func:`mechdesign.lp.worst_case_engine.solve_worst_case_kernel_lp`).
    A ``time_limit`` outcome when the spec's time limit ran out; None when the program stopped short of its
    bound otherwise."""
    options = spec.solver
    if worst_case:
        res = solve_worst_case_kernel_lp(
            C, c, exp_minus_epsilon_down(spec), time_limit=options.time_limit, verbose=bool(options.verbose)
        )
    else:
        res = solve_kernel_lp(
            C,
            c,
            exp_minus_epsilon_down(spec),
            time_limit=options.time_limit,
            verbose=bool(options.verbose),
            user_sense=sense,
        )
    if res.status not in ("optimal", "time_limit"):
        return None
    optimal = res.status == "optimal"
    return PlanOutcome(
        status=Status.OPTIMAL if optimal else Status.TIME_LIMIT,
        kernel=res.kernel,
        value=sense * res.value,
        # a rigorous bound whatever the status: at a time limit it is the certified gap the user gets
        bound=sense * res.bound if math.isfinite(res.bound) else None,
        sense=sense,
        method=res.method,
        seconds=res.seconds,
        compile_seconds=compile_seconds,
        iterations=res.iterations,
        lps=res.rounds,
        rows=res.rows,
        columns=res.cols,
        nonzeros=res.nonzeros,
        message=f"{res.status}: {res.method}, {res.rounds} rounds",
    )


# ----------------------------------------------------------------- running kernel LPs
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


def solve_kernel_lps(spec: Spec, compiled: CompiledProblem, compile_seconds: float = 0.0) -> PlanOutcome:
    """The program for objectives that are linear in K (expected loss, Dobrushin pairs, Bayes
    vulnerability with M ≥ N): solve each compiled kernel LP, keep the best; the bound is
    recomputed from the solver's row multipliers by weak duality (:func:`mechdesign.lp.program.dual_bound`)."""
    solutions = []
    budget = spec.solver.time_limit
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
            solutions.append(solve_lp(lp, options, time_limit=remaining))
        if solutions[-1].status in (Status.TIME_LIMIT, Status.SOLVER_ERROR, Status.INTERRUPTED):
            break
    statuses = [s.status for s in solutions]
    status = (
        Status.OPTIMAL
        if len(solutions) == len(compiled.lps) and all(s.is_ok for s in statuses)
        else next(s for s in statuses if not s.is_ok)
        if any(not s.is_ok for s in statuses)
        else Status.UNKNOWN
    )
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
