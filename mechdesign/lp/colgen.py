"""Column (and output) generation for kernel LPs whose only constraints are the (ε,𝒫)-PML ones.

The LP built by :func:`mechdesign.objectives.compile.add_pml_kernel` for 𝒫 = Q_X(c)
(c = 0: LDP) with an objective on K alone is

    minimise Σ_xy C_xy K_xy   s.t.  Σ_y K_xy = 1 (x),   K(:,y) ∈ 𝒦  (y),

where 𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k} (the t, u rows
of the lifted LP). Columns are coupled only by the N row sums, so the LP is a
*master* over points of 𝒦 (Dantzig–Wolfe):

    minimise Σ_j θ_j C(:,y_j)·r_j   s.t.  Σ_j θ_j r_j = 1,  θ ≥ 0,

with one column per generated point r_j of 𝒦 placed at output y_j. Given the
master's row duals π, the *pricing* problem of output y is
p_y = min_{r∈𝒦} (C(:,y) − π)·r, solved exactly by sorting w = C(:,y) − π: a
minimiser is a vertex of 𝒦 with max r = 1, whose entries at 1 are the q
smallest w and whose other entries are

    two-level:   u_q = (e^{−ε} − cq)/(1 − cq)      (cq ≤ e^{−ε}; Remark 2's m/M)
    zero-one:    0                                  (cq ≥ e^{−ε})
    three-level: f = (e^{−ε} − cq)/c on the next entry, 0 after   (cq < e^{−ε} < c(q+1)).

Lagrangian bound (valid for *any* π): optimum ≥ Σ_x π_x + Σ_y min(0, p_y).
The loop stops when the master value meets it. The solution handed back is
the full lifted LP's: x = (K, t = column maxima, u = column minima) and row
multipliers for *every* row of the lifted LP, built from π and, per column, a
multiplier λ_y of the PML row (LP duality of the pricing problem), so that
:func:`mechdesign.lp.program.dual_bound` re-derives the bound from the lifted LP itself
without trusting this module.

:func:`solve_output_generation` (what ``solve`` runs) keeps the lifted LP but
only for a few outputs, adding the output with the most negative p_y each
round: optimal kernels use few outputs, so this converges in a handful of
rounds. (Generating rays instead, a master with one column per ray, was tried:
exact as well, but it tails off over hundreds of rounds, 14–35 s at N = 100.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
from mechdesign.lp.incumbent import offer_lp
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.progress import report

from mechdesign.lp.threads import highs_threads
from mechdesign.lp.highs import new_highs, set_seconds_left

__all__ = ["KernelLayout", "price", "solve_output_generation", "full_row_dual"]

GROW_AFTER = 16
"""Rounds of one (mirrored: two) new output each before the restricted output set doubles per round."""


@dataclass(frozen=True)
class KernelLayout:
    """Where the lifted (ε,Q_X(c))-PML kernel LP keeps its variables and rows.

    ``K``, ``rows_t`` (K_xy − t_y ≤ 0) and ``rows_low`` are (N, M) index
    arrays; ``rows_sum`` (N,), ``t`` (M,). For c > 0 ``rows_low`` are the rows
    u_y − K_xy ≤ 0, ``u`` the minima and ``rows_pml`` the rows
    e^{−ε} t_y − c Σ_x K_xy − (1 − Nc) u_y ≤ 0; for c = 0 (LDP) ``rows_low``
    are e^{−ε} t_y − K_xy ≤ 0 and ``u``, ``rows_pml`` are None.
    """

    K: np.ndarray
    t: np.ndarray
    rows_sum: np.ndarray
    rows_t: np.ndarray
    rows_low: np.ndarray
    c: float
    scale: float
    """e^{−ε} as a float."""
    u: np.ndarray | None = None
    rows_pml: np.ndarray | None = None

    @property
    def num_rows(self) -> int:
        return (
            self.rows_sum.size
            + self.rows_t.size
            + self.rows_low.size
            + (0 if self.rows_pml is None else self.rows_pml.size)
        )


# ------------------------------------------------------------------ pricing
@dataclass(frozen=True)
class Priced:
    """Pricing of every output: value p_y and its minimising ray (sorted order, q ones, level)."""

    value: np.ndarray
    order: np.ndarray
    q: np.ndarray
    base: np.ndarray
    """The level of the entries after the ones and the fractional entry (u_q or 0)."""
    frac: np.ndarray
    """The value of entry q (three-level) or base (otherwise)."""


def price(W: np.ndarray, c: float, E: float) -> Priced:
    """min_{r∈𝒦} w·r for every column w of W (N × M), with its minimiser (see module doc)."""
    n, m = W.shape
    order = np.argsort(W, axis=0, kind="stable")
    Ws = np.take_along_axis(W, order, axis=0)
    S = np.vstack([np.zeros((1, m)), np.cumsum(Ws, axis=0)])  # S[q] = sum of the q smallest
    total = S[n]
    q = np.arange(n)[:, None].astype(float)  # q = 0 .. N-1 entries at 1
    cq = c * q
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(cq <= E, (E - cq) / (1.0 - cq), np.nan)  # two-level low value
        f = (E - cq) / c if c > 0 else np.full_like(cq, np.nan)
    two = np.where(np.isfinite(u), S[:n] + u * (total - S[:n]), np.inf)
    zero_one = np.where(cq >= E, S[:n], np.inf)
    three_ok = (cq < E) & (E < c * (q + 1))
    three = np.where(three_ok, S[:n] + np.where(three_ok, f, 0.0) * Ws, np.inf)
    # candidates: rows [two(q), zero_one(q), three(q)] for q < N, then all-ones
    cand = np.vstack([two, zero_one, three, total[None, :]])
    best = np.argmin(cand, axis=0)
    value = cand[best, np.arange(m)]
    kind, qq = np.divmod(best, n)
    qq = np.where(kind == 3, n, qq)
    uu = np.broadcast_to(np.nan_to_num(u, nan=0.0), (n, m))[np.minimum(qq, n - 1), np.arange(m)]
    ff = np.broadcast_to(np.nan_to_num(f, nan=0.0), (n, m))[np.minimum(qq, n - 1), np.arange(m)]
    base = np.where(kind == 0, uu, 0.0)
    frac = np.where(kind == 2, ff, base)
    return Priced(value=value, order=order, q=qq, base=base, frac=frac)


def pml_multipliers(W: np.ndarray, c: float, E: float) -> np.ndarray:
    """A multiplier λ_y ≥ 0 of the PML row per column that (nearly) maximises the Lagrangian

        g(λ) = min(0, h1(λ), h2(λ)),  h1 = Σ_x min(w_x − λc, 0) + λ e^{−ε},  h2 = Σ_x w_x − λ(1 − e^{−ε}),

    whose maximum is p_y by LP duality. g is concave and piecewise linear, so its
    maximum is at λ = 0, a breakpoint w_(k)/c of h1, or a crossing h1 = h2.
    Any λ ≥ 0 gives a valid bound; this one is optimal up to rounding.
    """
    n, m = W.shape
    if c <= 0:
        return np.zeros(m)
    Ws = np.sort(W, axis=0)
    S = np.vstack([np.zeros((1, m)), np.cumsum(Ws, axis=0)])
    total = S[n]
    k = np.arange(n + 1)[:, None].astype(float)
    lo = np.vstack([np.full((1, m), -np.inf), Ws])  # piece k: w_(k−1) ≤ λc ≤ w_(k)
    hi = np.vstack([Ws, np.full((1, m), np.inf)])
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(c * k < 1.0, (total - S) / (1.0 - c * k), np.nan)
    cross = np.where((cross * c >= lo) & (cross * c <= hi) & (cross >= 0), cross, np.nan)
    h1_cross = S + cross * (E - c * k)
    brk = np.maximum(Ws / c, 0.0)  # λ_k = w_(k)/c, piece k has k entries below
    kk = k[:n]
    h1_brk = np.where(Ws > 0, S[:n] - kk * Ws + brk * E, S[:n] + 0.0)
    h1_brk = np.where(Ws > 0, h1_brk, np.nan)
    h1_zero = np.sum(np.minimum(Ws, 0.0), axis=0)[None, :]
    lam = np.vstack([np.zeros((1, m)), brk, np.nan_to_num(cross, nan=0.0)])
    h1 = np.vstack([h1_zero, h1_brk, np.where(np.isnan(cross), np.nan, h1_cross)])
    g = np.minimum(np.minimum(h1, total[None, :] - lam * (1.0 - E)), 0.0)
    g = np.where(np.isnan(g), -np.inf, g)
    return lam[np.argmax(g, axis=0), np.arange(m)]


def full_row_dual(layout: KernelLayout, num_rows: int, C: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Row multipliers of the whole lifted LP from the row-sum duals π (see module doc).

    Per column, with v = C(:,y) − π − λ c: T rows get −max(−v, 0), the low rows −max(v, 0),
    so every K has reduced cost 0; the PML row gets −λ. For c > 0 a shift δ on one x moves
    a negative reduced cost of u onto t (the bound then sees the triangle u ≤ t, not a box).
    """
    c, E = layout.c, layout.scale
    W = C - pi[:, None]
    lam = pml_multipliers(W, c, E)
    v = W - lam[None, :] * c
    alpha = np.maximum(-v, 0.0)
    beta = np.maximum(v, 0.0)
    if layout.rows_pml is not None:
        z_u = beta.sum(axis=0) - lam * (1.0 - W.shape[0] * c)
        delta = np.maximum(-z_u, 0.0)
        alpha[0] += delta
        beta[0] += delta
    y = np.zeros(num_rows)
    y[layout.rows_sum] = pi
    y[layout.rows_t] = -alpha
    y[layout.rows_low] = -beta
    if layout.rows_pml is not None:
        y[layout.rows_pml] = -lam
    return y


# ------------------------------------------------------------------- the loop
@dataclass(frozen=True)
class ColgenResult:
    x: np.ndarray
    row_dual: np.ndarray
    value: float
    bound: float
    rounds: int
    iterations: int
    columns: int
    seconds: float
    status: str


def solve_output_generation(
    lp,
    layout: KernelLayout,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    initial: int = 2,
    per_round: int = 1,
    max_rounds: int = 1000,
    threads: int | None = None,
    verbose: bool = False,
) -> ColgenResult:
    """Solve the lifted kernel LP by generating *outputs* instead of rays.

    The restricted LP is the lifted LP with only the outputs Y' ⊆ {0..M−1}
    (an unused output is K(:,y) = 0, t_y = u_y = 0, which satisfies all its rows):

        minimise Σ_{x, y∈Y'} C_xy K_xy  s.t.  Σ_{y∈Y'} K_xy = 1,  K(:,y) ∈ 𝒦 (y ∈ Y'),

    written with K_xy = u_y + a_xy and t_y = u_y + d_y (a, u, d ∈ [0, 1]) so that
    u_y ≤ K_xy becomes the bound a_xy ≥ 0 and each output has N + 1 rows:

        a_xy − d_y ≤ 0,    e^{−ε} d_y − (1 − e^{−ε}) u_y − c Σ_x a_xy ≤ 0

    (the PML row e^{−ε} t ≤ c Σ K + (1 − Nc) u after substitution; for c = 0 it
    reads e^{−ε} t_y ≤ u_y ≤ min K, the LDP rows).

    With its row-sum duals π, every output is priced exactly (:func:`price`):
    p_y = min_{r∈𝒦} (C(:,y) − π)·r, and Σ_x π_x + Σ_y min(0, p_y) bounds the full
    optimum from below. Outputs with p_y < 0 join Y' (the most negative first,
    ``per_round`` at a time) until the bound meets the restricted value. Optimal
    kernels use few outputs (two for |x − y| at ε = 1, N ≤ 200), so the restricted
    LPs stay small and are solved by simplex to a vertex. The returned row
    multipliers are for the full lifted LP (:func:`full_row_dual`). With ``verbose`` (the spec's
    ``solver: {verbose: true}``) HiGHS logs each restricted LP and every round prints its bound,
    value and outputs to stderr.
    """

    start = time.perf_counter()
    n, m = layout.K.shape
    C = lp.c[layout.K]
    E, c = layout.scale, layout.c

    h = new_highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("presolve", "off")  # keep the basis between rounds
    h.setOptionValue("simplex_strategy", 4)  # primal: new outputs (zero columns, slack rows) keep it feasible
    h.setOptionValue(
        "threads", threads or highs_threads()
    )  # as in solve.py: HiGHS's scheduler is global, one count per process
    h.setOptionValue("primal_feasibility_tolerance", 1e-9)
    h.setOptionValue("dual_feasibility_tolerance", 1e-9)
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    offsets: dict[int, int] = {}  # output y -> its first restricted column (a_0y)
    width = n + 2  # a_0y .. a_{N-1}y, u_y, d_y

    def add_outputs(ys):
        """Columns of the new outputs (entries in the row sums), then their rows: the basis stays valid."""
        k, first = ys.size, h.getNumCol()
        cost = np.vstack([C[:, ys], C[:, ys].sum(axis=0)[None, :], np.zeros((1, k))])  # (N+2, k)
        idx = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int32)  # a: row x; u: all rows
        per = np.concatenate([np.arange(n), [n, 2 * n]])  # starts within one output
        starts = (np.arange(k)[:, None] * 2 * n + per[None, :]).ravel().astype(np.int32)
        h.addCols(
            k * width,
            cost.T.ravel(),
            np.zeros(k * width),
            np.ones(k * width),
            2 * n * k,
            starts,
            np.tile(idx, k),
            np.ones(2 * n * k),
        )
        rows_idx, rows_val = [], []
        for j, y in enumerate(ys):
            a0 = first + j * width
            offsets[int(y)] = a0
            u, d = a0 + n, a0 + n + 1
            # a_xy − d_y ≤ 0  (K ≤ t)
            rows_idx.append(np.stack([np.arange(a0, a0 + n), np.full(n, d)], 1).ravel())
            rows_val.append(np.tile([1.0, -1.0], n))
            # e^{−ε} d_y − (1 − e^{−ε}) u_y − c Σ_x a_xy ≤ 0  (the PML row)
            rows_idx.append(np.concatenate([np.arange(a0, a0 + n), [u, d]]))
            rows_val.append(np.concatenate([np.full(n, -c), [-(1.0 - E), E]]))
        sizes = [v.size for v in rows_val]
        # row starts: N rows of 2 entries then one row of N + 2 entries, per output
        one = np.concatenate([np.arange(n) * 2, [2 * n]])
        rstarts = (np.arange(k)[:, None] * (3 * n + 2) + one[None, :]).ravel().astype(np.int32)
        h.addRows(
            k * (n + 1),
            np.full(k * (n + 1), -np.inf),
            np.zeros(k * (n + 1)),
            int(sum(sizes)),
            rstarts,
            np.concatenate(rows_idx).astype(np.int32),
            np.concatenate(rows_val),
        )

    def kernel_columns(xs):
        """K(:,y), t_y, u_y of the restricted solution, written into a full-LP vector."""
        out = np.zeros(lp.num_cols)
        for y, a0 in offsets.items():
            a, u, d = xs[a0 : a0 + n], xs[a0 + n], xs[a0 + n + 1]
            out[layout.K[:, y]] = u + a
            out[layout.t[y]] = u + d
            if layout.u is not None:
                out[layout.u[y]] = u
        return out

    mirrored = bool(np.array_equal(C, C[::-1, ::-1]))
    chosen = np.unique(np.linspace(0, m - 1, min(initial, m)).round().astype(int))
    add_outputs(chosen)
    bound, value, rounds, iterations, status = -math.inf, math.inf, 0, 0, "optimal"
    x_full = np.zeros(lp.num_cols)
    pi = np.zeros(n)
    while True:
        if time_limit is not None:
            set_seconds_left(h, time_limit - (time.perf_counter() - start))
        run_interruptible(h)
        rounds += 1
        iterations += max(int(h.getInfo().simplex_iteration_count), 0)
        ms = h.modelStatusToString(h.getModelStatus())
        if ms != "Optimal":
            status = "time_limit" if "Time" in ms else "solver_error"
            break
        sol = h.getSolution()
        pi = np.asarray(sol.row_dual[:n], float)
        value = float(h.getInfo().objective_function_value)
        x_full = kernel_columns(np.asarray(sol.col_value, float))
        p = price(C - pi[:, None], c, E).value
        lagrangian = float(pi.sum() + np.minimum(p, 0.0).sum())
        bound = max(bound, lagrangian)
        # for Ctrl-C: the restricted solution is a feasible kernel of the full LP, and π a bound on it
        # (weak duality on the whole lifted LP, recomputed only if reported; lp/incumbent.py)
        offer_lp(
            lp,
            x_full,
            row_dual=partial(full_row_dual, layout, lp.num_rows, C, pi.copy()),
            estimate=lp.sense * (lagrangian + lp.offset),
            source=f"output generation, round {rounds}",
            feasible=True,  # the restricted LP is optimal: its point satisfies every row of the full LP
        )
        scale = max(1.0, abs(value))
        report(
            phase="output generation", round=rounds, gap=max(value - bound, 0.0), detail=f"{chosen.size} of {m} outputs"
        )
        if verbose:
            import sys

            print(
                f"output generation: round {rounds}, {chosen.size} of {m} outputs, restricted value "
                f"{value + lp.offset:.12g}, bound {bound + lp.offset:.12g}, {time.perf_counter() - start:.2f} s",
                file=sys.stderr,
            )
        if value - bound <= tolerance * scale:
            break
        p[chosen] = 0.0
        candidates = np.flatnonzero(p < -1e-12 * scale)
        if candidates.size == 0 or rounds >= max_rounds:
            status = "optimal" if candidates.size == 0 else "iteration_limit"
            break
        # optima that use most outputs (Hamming) would take M/2 rounds: past GROW_AFTER rounds the
        # restricted set doubles each round (issue 13); early rounds add one output, as before
        how_many = per_round if rounds < GROW_AFTER else max(per_round, int(chosen.size))
        take = candidates[np.argsort(p[candidates])][:how_many]
        if mirrored:  # reflection-invariant costs: an optimum symmetric under y -> M-1-y exists
            take = np.setdiff1d(np.union1d(take, m - 1 - take), chosen)
        chosen = np.union1d(chosen, take)
        add_outputs(take)
    y_full = full_row_dual(layout, lp.num_rows, C, pi)
    return ColgenResult(
        x=x_full,
        row_dual=y_full,
        value=value + lp.offset,
        bound=bound + lp.offset,
        rounds=rounds,
        iterations=iterations,
        columns=int(chosen.size),
        seconds=time.perf_counter() - start,
        status=status,
    )
