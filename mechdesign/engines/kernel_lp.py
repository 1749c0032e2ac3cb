"""The kernel LP over Q_X(c) or the simplex without compiling it: N = M = 1000 in seconds.

The LP (docs/explanation/mathematics.md, section 'Linear constraints'; c = 0 is ε-LDP) for a cost matrix C (N × M), e.g. C_xy = P(x)·L(x,y) for an
expected loss under a prior P, or −P(x)·[x = y] for Bayes vulnerability:

    minimise Σ_xy C_xy K_xy   s.t.  Σ_y K_xy = 1 (x),   K(:,y) ∈ cone(𝒦) (y),
    𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k}.

Compiled whole it has ~2NM rows (8M at N = 2000: 7 s of compile before any solve). Here it is never
built. Two programs, cheapest first:

1. **One ray per output** (:func:`ray_probe`). Each output's best vertex of 𝒦 at π = 0 (its own cost's
   staircase / k-RR shape, :func:`mechdesign.cone.pricing.price`) becomes one column of the master
   (Dantzig–Wolfe over (vertex, output) pairs)

       minimise Σ_y θ_y C(:,y)·r_y   s.t.  Σ_y θ_y r_y = 1 (N rows),  θ ≥ 0,

   solved once; its duals π give the Lagrangian bound below. When every output is used (Hamming loss,
   Bayes vulnerability under a uniform prior) this closes the gap at once: N = 1000 in 0.2 s, where
   generating outputs one by one would build the N²-row LP.
2. **Output generation** (:func:`mechdesign.engines.output_generation.generate_outputs`): the lifted LP over a growing
   set of outputs, each entering at its priced ray. Optima that use few outputs (|x − y|, squared loss:
   2 at ε = 1) take 10–20 rounds of a few pivots each.

:func:`probe_then_generate` runs the two programs for this LP and for the worst-case prior's
(:mod:`mechdesign.engines.worst_case`); each engine gives it only what is its own: the probe's cost, its
bounds, the value of a kernel and its call of output generation.

**Bound.** For any π, optimum ≥ Σ_x π_x + Σ_y min(0, min_{r∈𝒦} (C(:,y) − π)·r) (Lagrangian relaxation of the
row sums; every column of a kernel lies in 𝒦 after scaling by its maximum ≤ 1), evaluated rigorously by
:func:`mechdesign.cone.lagrangian_bound.lagrangian_bound` with a float c' ≥ c and E ≤ e^{−ε} (a larger 𝒦: the
bound holds for the problem as written) and an a-posteriori bound on its rounding error. It is computed
column by column from the row multipliers: O(NM log N), no lifted LP.

The kernel returned is the program's float solution; :func:`mechdesign.design.certify_design` puts it
on the exact grid, checks it exactly and repairs it if an ulp of the float LP's slightly larger 𝒦 shows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.engines.base import EngineBase
from mechdesign.lp import incumbent
from mechdesign.engines.output_generation import RestrictedOutputs, generate_outputs, price, priced_rays
from mechdesign.lp.highs import configured_highs, set_seconds_left
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.solve import Status, highs_status
from mechdesign.cone.lagrangian_bound import lagrangian_bound, pricing_c

__all__ = ["KernelLPResult", "solve_kernel_lp", "ray_probe", "probe_then_generate"]

RIGOROUS_TOLERANCE = 1e-7
"""Largest relative gap to the *rigorous* bound that still counts as the program's optimum (the design's own
rule, GAP_TOLERANCE = 1e-6, then decides ``optimal``); the loops stop on the float bound at ``tolerance``."""


@dataclass(frozen=True)
class KernelLPResult:
    kernel: np.ndarray
    """N × M float kernel (rows sum to 1 up to the solver's tolerance)."""
    value: float
    """Σ C K of ``kernel`` as the program computed it."""
    bound: float
    """A rigorous lower bound on the optimum of the LP as written (−inf when none was found)."""
    method: str
    rounds: int
    iterations: int
    rows: int
    """Rows of the last LP solved (the N-row master or the restricted lifted LP)."""
    cols: int
    seconds: float
    status: str
    """optimal | time_limit | iteration_limit | solver_error."""
    nonzeros: int = 0
    """Constraint-matrix nonzeros of the last LP solved."""


def ray_probe(C: np.ndarray, c: float, E: float, time_limit: float | None, threads: int | None, verbose: bool):
    """Program 1 of the module doc: returns (kernel, value, π, iterations, (rows, columns, nonzeros)) or None if
    HiGHS fails.

    The master's rows are pre-multiplied by the difference matrix D ((Dv)_0 = v_0, (Dv)_x = v_x − v_{x−1}):
    a two-level vertex whose ones form an interval has 3 nonzeros instead of N; the duals of the original rows
    are π = Dᵀπ̃.
    """
    n, m = C.shape
    ys = np.arange(m)
    R = priced_rays(price(C, c, E), n, ys)
    # An output whose cheapest vertex is the constant one (q = 0 ones) adds nothing to the constant column.
    # Under ε-LDP the Hamming cost ties it with k-RR's vertex (q = 1); priced at π = δ·1 (δ tiny) ties go to
    # more ones instead (N = 1000: one LP instead of 63 rounds of output generation).
    flat = np.flatnonzero(np.ptp(R, axis=0) == 0)
    if flat.size:
        delta = 1e-9 * max(float(np.abs(C).max(initial=0.0)), 1e-300)
        R[:, flat] = priced_rays(price(C[:, flat] - delta, c, E), n, np.arange(flat.size))
    R = np.hstack([R, np.ones((n, 1))])  # the constant kernel: the master is never infeasible
    cost = np.concatenate([np.einsum("xy,xy->y", C, R[:, :m]), [C.sum(axis=0).min()]])
    y_const = int(np.argmin(C.sum(axis=0)))
    A = np.diff(R, axis=0, prepend=0.0)
    cols, rows = np.nonzero(A.T)
    vals = A.T[cols, rows]
    starts = np.searchsorted(cols, np.arange(m + 1)).astype(np.int32)
    h = configured_highs("ray_probe", verbose=verbose, threads=threads)
    if time_limit is not None:
        set_seconds_left(h, time_limit)
    rhs = np.zeros(n)
    rhs[0] = 1.0
    h.addRows(n, rhs, rhs, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    h.addCols(m + 1, cost, np.zeros(m + 1), np.full(m + 1, np.inf), rows.size, starts, rows.astype(np.int32), vals)
    run_interruptible(h)
    if highs_status(h) is not Status.OPTIMAL:
        return None
    sol = h.getSolution()
    theta = np.maximum(np.asarray(sol.col_value, float), 0.0)
    yt = np.asarray(sol.row_dual, float)
    pi = yt - np.append(yt[1:], 0.0)
    K = R[:, :m] * theta[None, :m]
    K[:, y_const] += theta[m]
    value = float(h.getInfo().objective_function_value)
    return K, value, pi, max(int(h.getInfo().simplex_iteration_count), 0), (n, m + 1, int(h.getNumNz()))


def probe_then_generate(
    C_probe: np.ndarray,
    c: Fraction | float,
    E: float,
    *,
    kernel_value: Callable[[np.ndarray, float], float],
    probe_bound: Callable[[np.ndarray, np.ndarray], float],
    round_bound: Callable[[RestrictedOutputs], float],
    generate: Callable[..., RestrictedOutputs],
    probe_method: str,
    probe_source: str,
    method: str,
    time_limit: float | None,
    tolerance: float,
    threads: int | None,
    verbose: bool,
    user_sense: int = 1,
) -> KernelLPResult:
    """Program 1, then program 2 of the module doc, for an LP that says only what is its own:

    - ``C_probe``: the cost whose one-ray-per-output master (:func:`ray_probe`) runs first;
    - ``kernel_value(K, v)``: the value reported for a kernel K of either program whose LP value is v;
    - ``probe_bound(π, p)``: a rigorous lower bound from the probe's duals π, with p the pricing values at
      C_probe − π;
    - ``round_bound(res)``: a rigorous lower bound from a round of output generation (−inf if it has none);
    - ``generate(**options)``: :func:`mechdesign.engines.output_generation.generate_outputs` on this LP, called with the
      options ``initial`` (the first outputs), ``time_limit``, ``tolerance``, ``threads``, ``verbose``, ``on_round``.

    The probe is the answer when its value meets its float Lagrangian within ``tolerance``·max(1, |value|)
    and its rigorous bound within :data:`RIGOROUS_TOLERANCE` (the rigorous bound is lower by its rounding
    allowance: 4e-9 at N = M = 3000, more than 1e-9 of an optimum near 1). Otherwise output generation starts
    from the two outputs that price lowest at the probe's duals (measured at N = 1500, |x − y|: 2.7× fewer
    HiGHS seconds than from the first and last output), and the probe's kernel stays the answer when
    output generation ends with none better (a time limit before its first round). Each program's kernel and
    bound are offered to the running design (Ctrl-C, :mod:`mechdesign.lp.incumbent`); ``user_sense = −1``
    when the design maximises −value: bounds are then offered negated, as upper bounds."""
    start = time.perf_counter()
    m = C_probe.shape[1]
    stream = object()

    def left():
        return None if time_limit is None else max(time_limit - (time.perf_counter() - start), 1e-3)

    def closed(value, bound, tol=tolerance):
        return value - bound <= tol * max(1.0, abs(value))

    best_bound, iterations, initial = -math.inf, 0, 2
    fallback = (None, math.inf)  # the probe's kernel and value
    probe = ray_probe(C_probe, float(c), E, left(), threads, verbose)
    if probe is not None:
        K, lp_value, pi, iterations, size = probe
        value = kernel_value(K, lp_value)
        values = price(C_probe - pi[:, None], pricing_c(c), E).value
        best_bound = probe_bound(pi, values)
        fallback = (K, value)
        initial = np.argsort(values, kind="stable")[:2]
        # offered outside the rounds' stream: their kernels need not beat the probe's
        incumbent.offer(K, user_sense * best_bound, source=probe_source)
        lagrangian = float(pi.sum() + np.minimum(values, 0.0).sum())
        if closed(value, lagrangian) and closed(value, best_bound, RIGOROUS_TOLERANCE):
            return KernelLPResult(
                K, value, best_bound, probe_method, 1, iterations, size[0], size[1],
                time.perf_counter() - start, "optimal", size[2],
            )  # fmt: skip

    def on_round(res: RestrictedOutputs):
        incumbent.offer(
            lambda: res.kernel(m),
            lambda: user_sense * round_bound(res),
            estimate=user_sense * res.bound,
            source=f"{method}, round {res.rounds}",
            stream=stream,
        )

    res = generate(
        initial=initial, time_limit=left(), tolerance=tolerance, threads=threads, verbose=verbose, on_round=on_round
    )
    K, value = res.kernel(m), math.inf
    if math.isfinite(res.value):
        best_bound = max(best_bound, round_bound(res))
        value = kernel_value(K, res.value)
    if fallback[1] < value:  # no round finished (a time limit: value is inf), or the probe's kernel is better
        K, value = fallback
    status = res.status
    if status == "optimal" and not closed(value, best_bound, RIGOROUS_TOLERANCE):
        status = "iteration_limit"  # the float loop closed, the rigorous bound not (never seen; reported as such)
    return KernelLPResult(
        kernel=K,
        value=value,
        bound=best_bound,
        method=method,
        rounds=res.rounds + 1,
        iterations=iterations + res.iterations,
        rows=res.rows,
        cols=res.cols,
        seconds=time.perf_counter() - start,
        status=status,
        nonzeros=res.nonzeros,
    )


def solve_kernel_lp(
    C: np.ndarray,
    c: Fraction | float,
    E: float,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    threads: int | None = None,
    verbose: bool = False,
    user_sense: int = 1,
) -> KernelLPResult:
    """Minimise Σ C_xy K_xy over (ε,Q_X(c))-PML kernels (c = 0: ε-LDP); ``E`` a float ≤ e^{−ε}, ``c`` as
    written (a Fraction: the bound then uses a float ≥ it). Stops when the value is within
    ``tolerance``·max(1, |value|) of the bound (:func:`probe_then_generate`: the probe and output generation
    on C itself, the value of a kernel is the program's Σ C K). ``user_sense = −1`` when the design maximises
    −Σ C K (Bayes vulnerability with C = −diag(P)): its bounds are then offered negated, as upper bounds."""
    C = np.ascontiguousarray(C, dtype=float)
    c_up = pricing_c(c)
    return probe_then_generate(
        C,
        c,
        E,
        kernel_value=lambda K, lp_value: lp_value,
        probe_bound=lambda pi, values: lagrangian_bound(C, pi, c_up, E, values),
        round_bound=lambda res: lagrangian_bound(C, res.pi, c_up, E),
        generate=lambda **options: generate_outputs(C, float(c), E, **options),
        probe_method="ray master (one ray per output)",
        probe_source="ray probe",
        method="output generation",
        time_limit=time_limit,
        tolerance=tolerance,
        threads=threads,
        verbose=verbose,
        user_sense=user_sense,
    )


# ------------------------------------------------------------------ the engine
def uncompiled_reason(spec) -> str | None:
    """None when the kernel LP of ``spec`` can be solved without compiling it: the prior set is some Q_X(c) (the
    simplex: c = 0), ``privacy`` lists no other guarantee and the solver is HiGHS with its automatic method."""
    from mechdesign.privacy.registry import rules

    options = spec.solver
    if spec.privacy is not None:
        return "privacy lists several constraints (their rows are not the cone's)"
    if options.method != "auto":
        return f"solver.method is {options.method} (this engine is HiGHS's automatic method)"
    if options.backend != "highs":
        return f"solver.backend is {options.backend}"
    if rules(spec.prior_set, spec.n).equivalent_c() is None:
        return f"the prior set {spec.prior_set.kind} is not some Q_X(c) or the simplex"
    return None


def kernel_lp_outcome(res: KernelLPResult, sense: int, compile_seconds: float = 0.0):
    """A :class:`KernelLPResult` as the design's outcome in its own ``sense`` (−1: the design maximises −Σ C K, whose
    value and bound are negated); the status read from the result's own vocabulary (the values of
    :class:`~mechdesign.lp.solve.Status`)."""
    from mechdesign.lp.solve import Status
    from mechdesign.objectives.plan import PlanOutcome

    status = Status(res.status)
    return PlanOutcome(
        status=status,
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


class UncompiledKernelLP(EngineBase):
    """Engine ``uncompiled-kernel-lp``: min Σ C_xy K_xy over (ε,Q_X(c))-PML kernels by :func:`solve_kernel_lp` (one
    ray per output, then output generation), never building the N·M-row LP."""

    name = "uncompiled-kernel-lp"
    solves = "min Σ C K over (ε,Q_X(c))-PML kernels (C = P·L, or −diag(P)): a ray probe, then output generation"

    def applies(self, problem) -> str | None:
        return uncompiled_reason(problem.spec) or problem.rules.kernel_cost_reason()

    def run(self, problem, budget):
        from mechdesign.objectives.compile import exp_minus_epsilon_down
        from mechdesign.privacy.registry import rules

        spec, objective = problem.spec, problem.rules
        t0 = time.perf_counter()
        C = objective.kernel_cost()
        compile_seconds = time.perf_counter() - t0
        res = solve_kernel_lp(
            C,
            rules(spec.prior_set, spec.n).equivalent_c(),
            exp_minus_epsilon_down(spec),
            time_limit=budget.remaining(),
            verbose=bool(spec.solver.verbose),
            user_sense=objective.sense,
        )
        outcome = kernel_lp_outcome(res, objective.sense, compile_seconds)
        if objective.kernel_lp_label is not None:
            outcome.method = f"{objective.kernel_lp_label} ({outcome.method})"
        return outcome
