"""Expected loss under the worst prior of Q_X(c) (c = 0: of all priors) without compiling the LP.

For a loss L (N × M) the design minimises the worst expected loss max_{P∈Q_X(c)} P·r(K), r_x = Σ_y L_xy K_xy,
over (ε,Q_X(c))-PML kernels. The worst prior puts c on every symbol and 1 − Nc on the largest r_x, so with
a = 1 − Nc the LP is

    minimise  c Σ_xy L_xy K_xy + a τ   s.t.  Σ_y K_xy = 1,   Σ_y L_xy K_xy − τ ≤ 0 (x),   K(:,y) ∈ cone(𝒦).

**Bound.** For multipliers μ ≥ 0 of the epigraph rows with Σμ ≤ a, and w = c + μ (a prior of Q_X(c) when
Σμ = a), the objective is ≥ Σ_x w_x r_x(K) + (a − Σμ)τ: the worst case is at least the expected loss under
the prior w, and so at least the Lagrangian bound of that given-prior LP (:mod:`mechdesign.engines.kernel_lp`)

    Σ_x π_x + Σ_y min(0, min_{k∈𝒦} (w∘L(:,y) − π)·k)       (any π),

which :func:`worst_case_bound` evaluates rigorously (the cost w∘L is rounded: an allowance of 8 ulps of
Σ|w∘L| covers it; (a − Σμ)τ ≥ (a − Σμ) min(0, min L) is added for losses that can be negative).

**Programs.**

1. The prior w = uniform (1/N ≥ c: in Q_X(c)) through the one-ray-per-output master
   (:func:`mechdesign.engines.kernel_lp.ray_probe`). Its kernel is a feasible design; when the loss is
   symmetric enough that its rows' losses r_x are equal (Hamming loss), its worst case equals its expected loss
   under the uniform prior and the probe's bound closes the gap: one LP.
2. Otherwise output generation with the epigraph rows kept (:func:`mechdesign.engines.output_generation.generate_outputs` with
   ``epigraph``): the lifted LP over a growing set of outputs, each entering at the ray priced with the
   multipliers of the worst-case vertices, W = c·L + μ∘L − π ("price with the multipliers of the worst-case
   vertices"), starting from the two outputs priced lowest at the probe's duals. For a reflection-invariant
   loss (|x − y|, squared) the restricted LP holds symmetric kernels only, late outputs join as ray columns
   and, at large N, the coupling rows are differenced (:func:`mechdesign.engines.output_generation.generate_outputs`).

**ε-LDP with the loss |x − y|** (c = 0, L_xy = |x − y| on the indices) goes first to the master over mixtures of
interval-partition mechanisms (:mod:`mechdesign.engines.interval_partitions`), whose LP has N + 1 rows however many
atoms it holds. Its prior μ is checked by the given-prior LP at μ (output generation on C = μ∘L, which is fast: the
prior is fixed): :func:`worst_case_bound` with that LP's π and μ is the rigorous bound. When it does not meet the
master's value, that LP's kernel joins the master and the master goes on; after :data:`BOUND_ROUNDS` such
bounds the programs above finish the design from scratch in the time left, and the better kernel and bound are kept.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from mechdesign.lp import incumbent
from mechdesign.engines.output_generation import epigraph_multipliers, generate_outputs
from mechdesign.engines.interval_partitions import IntervalPartitionMaster, is_index_absolute_loss
from mechdesign.engines.base import EngineBase
from mechdesign.engines.kernel_lp import (
    RIGOROUS_TOLERANCE,
    KernelLPResult,
    kernel_lp_outcome,
    probe_then_generate,
    uncompiled_reason,
)
from mechdesign.cone.lagrangian_bound import UNIT_ROUNDOFF, lagrangian_bound, pricing_c

__all__ = [
    "WorstCaseKernelLP",
    "IntervalPartitions",
    "solve_by_interval_partitions",
    "solve_worst_case_kernel_lp",
    "worst_case_bound",
    "worst_case_value",
]

BOUND_ROUNDS = 6
"""Given-prior bounds the interval-partition master may ask for before output generation takes over."""
BOUND_SHARE = 0.25
"""Under ``solver.time_limit`` the master stops this share of the limit early, so that the given-prior LP at its
last prior still gives the design a rigorous bound within the limit."""
GIVEN_PRIOR_TOLERANCE = 1e-8
"""The given-prior LP's own gap when it bounds the interval-partition master: a tenth of the
:data:`~mechdesign.engines.kernel_lp.RIGOROUS_TOLERANCE` the kernel must meet. Its last rounds close the gap from
1e-8 to 1e-9 with hundreds of outputs (N = 1000, ε = 1.5: 25 of its 27 s)."""


def worst_case_value(K: np.ndarray, L: np.ndarray, c: float) -> float:
    """max_{P∈Q_X(c)} Σ_x P(x) Σ_y L_xy K_xy = c Σ r + (1 − Nc) max r (floating point)."""
    r = np.einsum("xy,xy->x", K, L)
    n = r.size
    return float(c * r.sum() + (1.0 - n * c) * r.max())


def _mass_left(c: Fraction, n: int) -> tuple[float, float]:
    """Floats a_down ≤ 1 − Nc ≤ a_up."""
    a = 1 - n * Fraction(c)
    f = float(a)
    down = f if Fraction(f) <= a else math.nextafter(f, -math.inf)
    up = f if Fraction(f) >= a else math.nextafter(f, math.inf)
    return max(down, 0.0), max(up, 0.0)


def worst_case_bound(
    L: np.ndarray, c: Fraction, pi: np.ndarray, mu: np.ndarray, E: float, values: np.ndarray | None = None
) -> float:
    """A rigorous lower bound on the worst-case LP of the module doc from any π and any μ ≥ 0 with
    Σμ ≤ 1 − Nc (module doc, **Bound**); ``E`` ≤ e^{−ε}. ``values``: the pricing values at W = C' − π."""
    n = L.shape[0]
    mu = np.asarray(mu, float)
    if np.any(mu < 0) or not np.all(np.isfinite(mu)):
        raise ValueError("worst_case_bound: μ must be finite and ≥ 0")
    a_down, a_up = _mass_left(Fraction(c), n)
    s_up = math.fsum(mu.tolist()) * (1.0 + 2.0 * n * UNIT_ROUNDOFF)
    if s_up > a_down:
        raise ValueError("worst_case_bound: Σμ must stay below 1 − Nc")
    s_down = math.fsum(mu.tolist()) * (1.0 - 2.0 * n * UNIT_ROUNDOFF)
    Cw = (float(c) + mu)[:, None] * L
    bound = lagrangian_bound(Cw, pi, pricing_c(c), E, values)
    bound -= 8.0 * UNIT_ROUNDOFF * float(np.abs(Cw).sum()) * (1.0 + 1e-6)
    lmin = float(L.min(initial=0.0))
    if lmin < 0:
        bound += (a_up - s_down) * lmin * (1.0 + 1e-6)
    return bound


def solve_worst_case_kernel_lp(
    L: np.ndarray,
    c: Fraction,
    E: float,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    threads: int | None = None,
    verbose: bool = False,
    interval_partitions: bool = True,
    first: KernelLPResult | None = None,
) -> KernelLPResult:
    """Minimise max_{P∈Q_X(c)} Σ P(x) L_xy K_xy over (ε,Q_X(c))-PML kernels (c = 0: ε-LDP, the worst of
    all priors); ``E`` a float ≤ e^{−ε}, ``c`` as written. The result's ``value`` is the worst-case loss of
    its kernel and ``bound`` a rigorous lower bound (module doc). Stops within ``tolerance``·max(1, |value|)
    (:func:`mechdesign.engines.kernel_lp.probe_then_generate`: the probe on the uniform prior's expected loss,
    output generation with the epigraph rows).

    For ε-LDP and L = |x − y| the interval-partition master (:func:`solve_by_interval_partitions`) runs first unless
    ``interval_partitions`` is False; ``first``: its result when it ran already (the engine ``interval-partitions``
    of the route), kept if better."""
    L = np.ascontiguousarray(L, dtype=float)
    n = L.shape[0]
    c = Fraction(c)
    c_lp = float(c)
    start = time.perf_counter()
    if first is None and interval_partitions and c == 0 and n >= 2 and is_index_absolute_loss(L):
        first = solve_by_interval_partitions(
            L, E, time_limit=time_limit, tolerance=tolerance, threads=threads, verbose=verbose
        )
        if first.status in ("optimal", "time_limit"):
            return first
        if time_limit is not None:
            time_limit = max(time_limit - (time.perf_counter() - start), 1e-3)
    a_down, _ = _mass_left(c, n)
    mu0 = epigraph_multipliers(np.ones(n), a_down)  # c + μ0: the uniform prior (a few ulps below 1/N)
    res = probe_then_generate(
        (c_lp + mu0)[:, None] * L,  # the expected loss under the uniform prior
        c,
        E,
        kernel_value=lambda K, lp_value: worst_case_value(K, L, c_lp),
        probe_bound=lambda pi, values: worst_case_bound(L, c, pi, mu0, E, values),
        round_bound=lambda res: -math.inf if res.mu is None else worst_case_bound(L, c, res.pi, res.mu, E),
        generate=lambda **options: generate_outputs(c_lp * L, c_lp, E, epigraph=(L, a_down), **options),
        probe_method="ray master (uniform prior)",
        probe_source="ray probe (uniform prior)",
        method="output generation (worst case)",
        time_limit=time_limit,
        tolerance=tolerance,
        threads=threads,
        verbose=verbose,
    )
    return res if first is None else _better_of(first, res, time.perf_counter() - start)


def _better_of(first: KernelLPResult, second: KernelLPResult, seconds: float) -> KernelLPResult:
    """The kernel with the lower value, the higher of the two rigorous bounds, the second program's status
    (optimal when the kept kernel meets the kept bound)."""
    kept = first if first.value < second.value else second
    bound = max(first.bound, second.bound)
    status = second.status
    if kept.value - bound <= RIGOROUS_TOLERANCE * max(1.0, abs(kept.value)):
        status = "optimal"
    return KernelLPResult(
        kernel=kept.kernel,
        value=kept.value,
        bound=bound,
        method=f"{first.method}, then {second.method}",
        rounds=first.rounds + second.rounds,
        iterations=first.iterations + second.iterations,
        rows=second.rows,
        cols=second.cols,
        seconds=seconds,
        status=status,
        nonzeros=second.nonzeros,
    )


def solve_by_interval_partitions(
    L: np.ndarray,
    E: float,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    threads: int | None = None,
    verbose: bool = False,
) -> KernelLPResult:
    """The ε-LDP worst case of L_xy = |x − y| (module doc, last paragraph): the interval-partition master, each
    time its family's gap closes the given-prior LP at its prior μ for the rigorous bound, and that LP's kernel
    into the master when the bound falls short. Status ``optimal`` when the kernel's worst case is within
    :data:`~mechdesign.engines.kernel_lp.RIGOROUS_TOLERANCE` of the bound, ``iteration_limit`` after
    :data:`BOUND_ROUNDS` bounds that were not, ``time_limit`` or ``solver_error`` as the LPs stopped."""
    start = time.perf_counter()
    n, m = L.shape

    def left():
        return None if time_limit is None else time_limit - (time.perf_counter() - start)

    master = IntervalPartitionMaster(n, m, E, verbose=verbose, threads=threads)
    stream = object()
    K, value, bound, iterations, status = None, math.inf, -math.inf, 0, "iteration_limit"

    def on_round(kernel):
        incumbent.offer(kernel, source=f"interval-partition master, round {master.rounds}", stream=stream)

    def master_left():  # the master leaves the bound its share of a time limit
        return None if time_limit is None else left() - BOUND_SHARE * time_limit

    for _ in range(BOUND_ROUNDS):
        rounds = master.solve(tolerance, master_left, on_round)
        if not math.isfinite(rounds.value):  # stopped before a solve
            status = rounds.status
            break
        K = master.kernel()
        value = worst_case_value(K, L, 0.0)
        # also when the master was stopped: the given-prior LP at any prior bounds the worst case
        mu = epigraph_multipliers(rounds.mu, 1.0)  # a prior, summing to a few ulps below 1
        given = generate_outputs(
            mu[:, None] * L,
            0.0,
            E,
            time_limit=left(),
            tolerance=max(tolerance, GIVEN_PRIOR_TOLERANCE),
            threads=threads,
            verbose=verbose,
        )
        iterations += given.iterations
        bound = max(bound, worst_case_bound(L, Fraction(0), given.pi, mu, E))  # any π gives a bound
        incumbent.offer(bound=bound, source="given-prior LP at the interval-partition master's prior")
        if value - bound <= RIGOROUS_TOLERANCE * max(1.0, abs(value)):
            status = "optimal"
            break
        if rounds.status != "optimal" or given.status != "optimal":
            status = rounds.status if rounds.status != "optimal" else given.status
            break
        master.add_kernel(given.outputs, given.columns)
    if K is None:
        K = np.zeros((n, m))
        K[:, (min(n, m) - 1) // 2] = 1.0  # a constant kernel (the master stopped before its first solve)
        value = worst_case_value(K, L, 0.0)
    rows, cols, nonzeros = master.size
    return KernelLPResult(
        kernel=K,
        value=value,
        bound=bound,
        method="interval-partition master (worst case, ε-LDP)",
        rounds=master.rounds,
        iterations=master.iterations + iterations,
        rows=rows,
        cols=cols,
        seconds=time.perf_counter() - start,
        status=status,
        nonzeros=nonzeros,
    )


# ------------------------------------------------------------------ the engines
def _worst_case_reason(problem) -> str | None:
    return uncompiled_reason(problem.spec) or problem.rules.worst_case_loss_reason()


class IntervalPartitions(EngineBase):
    """Engine ``interval-partitions``: the ε-LDP worst case of |x − y| by the interval-partition master
    (:func:`solve_by_interval_partitions`). When it stops short of its bound, its kernel and bound are carried to
    ``worst-case-kernel-lp``, which keeps the better of the two."""

    name = "interval-partitions"
    solves = "worst-case expected |x − y| under ε-LDP: the interval-partition master and given-prior bounds"

    def applies(self, problem) -> str | None:
        spec = problem.spec
        reason = _worst_case_reason(problem)
        if reason is not None:
            return reason
        from mechdesign.privacy.registry import rules

        if rules(spec.prior_set, spec.n).equivalent_c() != 0:
            return "the prior set is not the simplex (ε-LDP)"
        if spec.objective.loss != "absolute":
            return "the loss is not absolute (|x − y|)"
        if spec.n < 2:
            return "N < 2"
        return None

    def run(self, problem, budget):
        from mechdesign.objectives.compile import exp_minus_epsilon_down, loss_matrix

        spec = problem.spec
        L = np.ascontiguousarray(loss_matrix(spec), dtype=float)
        res = solve_by_interval_partitions(
            L, exp_minus_epsilon_down(spec), time_limit=budget.remaining(), verbose=bool(spec.solver.verbose)
        )
        problem.carried[self.name] = res
        return kernel_lp_outcome(res, +1)


class WorstCaseKernelLP(EngineBase):
    """Engine ``worst-case-kernel-lp``: min max_{P∈Q_X(c)} Σ P(x) L_xy K_xy by :func:`solve_worst_case_kernel_lp`
    (a probe at the uniform prior, then output generation with the epigraph rows), never compiled whole."""

    name = "worst-case-kernel-lp"
    solves = (
        "worst-case expected loss over Q_X(c) or all priors: uniform-prior probe, output generation with the epigraph"
    )

    def applies(self, problem) -> str | None:
        return _worst_case_reason(problem)

    def run(self, problem, budget):
        from mechdesign.objectives.compile import exp_minus_epsilon_down, loss_matrix
        from mechdesign.privacy.registry import rules

        spec = problem.spec
        res = solve_worst_case_kernel_lp(
            loss_matrix(spec),
            rules(spec.prior_set, spec.n).equivalent_c(),
            exp_minus_epsilon_down(spec),
            time_limit=budget.remaining(),
            verbose=bool(spec.solver.verbose),
            interval_partitions=False,
            first=problem.carried.get(IntervalPartitions.name),
        )
        return kernel_lp_outcome(res, +1)
