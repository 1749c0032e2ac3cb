"""EXPERIMENTAL, not routed into design(): measured to tail off (28–108 rounds at N = 50). A Dantzig–Wolfe master over the vertices of one output's PML set, for kernel LPs over Q_X(c) and LDP.

The kernel LP (DESIGN.md §2, Lemma 4 of the Dobrushin paper; c = 0 is ε-LDP)

    minimise Σ_xy C_xy K_xy   s.t.  Σ_y K_xy = 1 (x),   K(:,y) ∈ cone(𝒦) (y),
    𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k},

couples its columns only through the N row sums. Every point of cone(𝒦) is a non-negative
combination of vertices of 𝒦, and columns placed at the same output add up inside the cone, so the LP
is exactly the *master* over pairs (vertex r of 𝒦, output y):

    minimise Σ_j θ_j C(:,y_j)·r_j   s.t.  Σ_j θ_j r_j = 1,   θ ≥ 0            (N rows)

with K(:,y) = Σ_{j: y_j = y} θ_j r_j. Pricing (:func:`mechdesign.lp.colgen.price`) solves
p_y = min_{r∈𝒦} (C(:,y) − π)·r exactly for every output from one sort: the minimiser has max r = 1,
its ones are the q smallest entries of w = C(:,y) − π, the others one level (two-level vertex,
Remark 2's m/M), zero, or a fraction then zero (three-level).

What makes this fast where a one-ray-per-round master tailed off (see :mod:`mechdesign.lp.colgen`):

* **Sparse rows.** The N equality rows are pre-multiplied by the difference matrix D
  ((Dv)_0 = v_0, (Dv)_x = v_x − v_{x−1}): D·1 = e_0, and a vertex u·1 + (1 − u)·1_S has 1 + 2·runs(S)
  nonzeros (an interval around y for |x − y| or squared loss: 3). The duals of the original rows are
  π = Dᵀπ̃ (π_x = π̃_x − π̃_{x+1}).
* **Every output priced each round**; the best column of every output with a negative reduced cost
  joins the one live HiGHS model (``addCols``, warm-started primal simplex).
* **Wentges smoothing**: pricing at α·π_centre + (1 − α)·π, the centre moving to the point of the best
  Lagrangian bound; when smoothing finds no improving column (mis-pricing) the round prices at π.
* **Warm start**: the constant kernel's column 1 (the master is never infeasible) and the vertex each
  output's own cost picks at π = 0 (the k-RR / staircase shapes).

**Bound without the full LP.** For any π, by weak duality of the Lagrangian relaxation of the row
sums (every column of a feasible K lies in cone(𝒦) ∩ [0,1]^N = 𝒦),

    optimum ≥ Σ_x π_x + Σ_y min(0, min_{r∈𝒦} (C(:,y) − π)·r),

computed column by column in O(NM). It is made rigorous (:func:`lagrangian_bound`): 𝒦 is taken with a
lower bound of e^{−ε} and an upper bound of c (both enlarge 𝒦, so the bound holds for the ε and c as
written), each p_y is lowered by an a-posteriori bound on its floating-point error (Higham's γ_n for
the prefix sums of the sort), and the sums over x and y are ``math.fsum`` (correctly rounded) then
lowered by one more relative ulp.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.lp.colgen import price
from mechdesign.lp.highs import new_warm_simplex
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.progress import report

__all__ = ["RayMasterResult", "solve_ray_master", "lagrangian_bound", "pricing_c"]

UNIT_ROUNDOFF = 2.0**-53
PRICE_CHUNK_ENTRIES = 1 << 21
"""Outputs are priced in blocks of about this many kernel entries (bounds the memory of one sort)."""


def pricing_c(c: Fraction | float) -> float:
    """A float ≥ c (c ≤ 1/N as a rational): a larger c only enlarges 𝒦, so bounds stay valid."""
    f = float(c)
    if Fraction(f) < Fraction(c):
        f = math.nextafter(f, math.inf)
    return f


@dataclass(frozen=True)
class RayMasterResult:
    kernel: np.ndarray
    """N × M float kernel Σ θ_j r_j of the last master solution."""
    value: float
    """Master objective at ``kernel``."""
    bound: float
    """Rigorous lower bound on the optimum of the kernel LP (:func:`lagrangian_bound`)."""
    pi: np.ndarray
    """Row multipliers (original rows) at which ``bound`` was attained."""
    rounds: int
    columns: int
    iterations: int
    seconds: float
    price_seconds: float
    status: str
    """optimal | time_limit | iteration_limit | solver_error."""


def _price_blocks(C: np.ndarray, pi: np.ndarray, c: float, E: float):
    """Yield (first output, Priced) over blocks of outputs at multipliers π."""
    n, m = C.shape
    step = max(1, PRICE_CHUNK_ENTRIES // max(n, 1))
    for j0 in range(0, m, step):
        yield j0, price(C[:, j0 : j0 + step] - pi[:, None], c, E)


def _pricing_error(n: int, abs_cost: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """An upper bound on |computed p_y − min_{r∈𝒦} (C(:,y) − π)·r| for every y (floating point).

    Each entry of w = C(:,y) − π carries an error ≤ u|w_x|; a candidate's value (prefix sums of the
    sorted w, a level times the rest) is computed with error ≤ γ_{N+4} Σ|w| (Higham, Thm 3.1 and 4.1;
    entries of r in [0,1]); the level u_q itself is within a few u of its exact value. The sort on the
    computed w chooses the exact minimiser for the computed w, whose value differs from the true one
    by ≤ u Σ|w|. Doubling the total of these covers every term.
    """
    gamma = (n + 8) * UNIT_ROUNDOFF / (1.0 - (n + 8) * UNIT_ROUNDOFF)
    return 2.0 * (gamma + 4 * UNIT_ROUNDOFF) * (abs_cost + np.abs(pi).sum()) * (1.0 + 1e-12)


def lagrangian_bound(C: np.ndarray, pi: np.ndarray, c: float, E: float, values: np.ndarray | None = None) -> float:
    """A rigorous lower bound on min Σ C_xy K_xy over kernels with columns in cone(𝒦(E, c)):

        Σ_x π_x + Σ_y min(0, p_y − err_y),   p_y = min_{r∈𝒦} (C(:,y) − π)·r  (computed),

    with err_y of :func:`_pricing_error`, both sums by ``math.fsum`` and the total lowered by 2 ulps.
    ``E`` must be ≤ e^{−ε} and ``c`` ≥ the spec's c (then 𝒦(E, c) contains the true 𝒦 and the
    bound holds for the problem as written). ``values``: p_y already computed at this π.
    """
    if values is None:
        values = np.concatenate([pr.value for _, pr in _price_blocks(C, pi, c, E)])
    err = _pricing_error(C.shape[0], np.abs(C).sum(axis=0), pi)
    total = math.fsum(pi.tolist()) + math.fsum(np.minimum(0.0, values - err).tolist())
    return total - 2.0 * UNIT_ROUNDOFF * abs(total) - 1e-300


@dataclass(frozen=True)
class _Levels:
    """Every vertex the sort of one block of outputs offers: for each q = 0..N the best of the
    two-level / zero-one / three-level vertices with q ones (q = N: all ones)."""

    order: np.ndarray
    """N × k: entries of w by increasing value."""
    value: np.ndarray
    """(N+1) × k: w·r of the best vertex with q ones (inf where none exists)."""
    frac: np.ndarray
    """(N+1) × k: the value at rank q (three-level: f_q; otherwise the base)."""
    low: np.ndarray
    """(N+1) × k: the level at ranks > q."""


def _levels(W: np.ndarray, c: float, E: float) -> _Levels:
    """The candidates of :func:`mechdesign.lp.colgen.price` for every q, not only the best."""
    n, k = W.shape
    order = np.argsort(W, axis=0, kind="stable")
    Ws = np.take_along_axis(W, order, axis=0)
    S = np.vstack([np.zeros((1, k)), np.cumsum(Ws, axis=0)])
    total = S[n]
    q = np.arange(n)[:, None].astype(float)
    cq = c * q
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(cq <= E, (E - cq) / (1.0 - cq), np.nan)
        f = np.where((cq < E) & (E < c * (q + 1)), (E - cq) / c, np.nan) if c > 0 else np.full_like(cq, np.nan)
    two = np.where(np.isfinite(u), S[:n] + np.nan_to_num(u) * (total - S[:n]), np.inf)
    zero_one = np.where(cq >= E, S[:n], np.inf)
    three = np.where(np.isfinite(f), S[:n] + np.nan_to_num(f) * Ws, np.inf)
    use_two = two <= np.minimum(zero_one, three)
    use_three = ~use_two & (three < zero_one)
    value = np.vstack([np.minimum(two, np.minimum(zero_one, three)), total[None, :]])
    low = np.vstack([np.where(use_two, np.nan_to_num(u), 0.0), np.zeros((1, k))])
    frac = np.vstack([np.where(use_three, np.nan_to_num(f), low[:n]), np.ones((1, k))])
    return _Levels(order=order, value=value, frac=frac, low=low)


def _build(lv: _Levels, cols: np.ndarray, qs: np.ndarray, n: int) -> np.ndarray:
    """The vertices (q ones, then frac, then low, in the sort order of block column ``cols``) as N × k."""
    k = cols.size
    ranks = np.arange(n)[:, None]
    Rs = np.where(ranks < qs[None, :], 1.0, np.where(ranks == qs[None, :], lv.frac[qs, cols], lv.low[qs, cols]))
    out = np.empty((n, k))
    np.put_along_axis(out, lv.order[:, cols], Rs, axis=0)
    return out


class _Master:
    """The live HiGHS master: N difference-transformed rows, columns (θ_j) added in blocks."""

    def __init__(self, n: int, verbose: bool, threads: int | None, sparse_rows: bool):
        self.n = n
        self.sparse_rows = sparse_rows
        h = new_warm_simplex(verbose, threads, 1e-10)
        rhs = np.zeros(n)
        rhs[0] = 1.0
        if not sparse_rows:
            rhs[:] = 1.0
        h.addRows(n, rhs, rhs, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h = h
        self.R: list[np.ndarray] = []  # blocks of vertices (N × k), original coordinates
        self.Y: list[np.ndarray] = []  # their outputs

    def add(self, R: np.ndarray, ys: np.ndarray, cost: np.ndarray) -> None:
        if ys.size == 0:
            return
        A = np.diff(R, axis=0, prepend=0.0) if self.sparse_rows else R
        cols, rows = np.nonzero(A.T)  # column-major order
        vals = A.T[cols, rows]
        starts = np.searchsorted(cols, np.arange(ys.size)).astype(np.int32)
        k = ys.size
        self.h.addCols(
            k, cost, np.zeros(k), np.full(k, np.inf), rows.size, starts, rows.astype(np.int32), vals.astype(float)
        )
        self.R.append(R)
        self.Y.append(ys)

    def duals(self) -> np.ndarray:
        """Multipliers π of the original rows Σ_j θ_j r_j = 1."""
        yt = np.asarray(self.h.getSolution().row_dual, float)
        if not self.sparse_rows:
            return yt
        return yt - np.append(yt[1:], 0.0)  # π = Dᵀπ̃

    def kernel(self, m: int) -> np.ndarray:
        theta = np.asarray(self.h.getSolution().col_value, float)
        K = np.zeros((self.n, m))
        j = 0
        for R, ys in zip(self.R, self.Y):
            t = np.maximum(theta[j : j + ys.size], 0.0)
            used = t > 0
            if used.any():
                np.add.at(K.T, ys[used], (R[:, used] * t[used]).T)
            j += ys.size
        return K


def _dot_sorted(lv: _Levels, d: np.ndarray) -> np.ndarray:
    """d·r for every candidate vertex r of the block ((N+1) × k), by prefix sums in the sort order."""
    n = d.shape[0]
    ds = d[lv.order]
    S = np.vstack([np.zeros((1, ds.shape[1])), np.cumsum(ds, axis=0)])
    at_q = np.vstack([ds, np.zeros((1, ds.shape[1]))])
    after = S[n][None, :] - S[1:]  # ranks > q
    after = np.vstack([after, np.zeros((1, ds.shape[1]))])[: n + 1]
    return S + lv.frac * at_q + lv.low * after


def solve_ray_master(
    C: np.ndarray,
    c: float,
    E: float,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-10,
    max_rounds: int = 500,
    smoothing: float = 0.5,
    per_output: int = 8,
    sparse_rows: bool = True,
    threads: int | None = None,
    verbose: bool = False,
) -> RayMasterResult:
    """Minimise Σ C_xy K_xy over (ε,Q_X(c))-PML kernels (c = 0: ε-LDP) by the master of the module doc.

    ``E`` ≤ e^{−ε} and ``c`` ≥ the spec's c (:func:`pricing_c`): the vertices generated and the bound
    both use this slightly larger 𝒦, whose excess (an ulp) the exact certificate repairs. Each round
    adds, for every output, up to ``per_output`` vertices of its sort (different q) whose reduced cost
    at π is negative, the most negative first. Stops when the master value is within
    ``tolerance``·max(1, |value|) of the rigorous bound, when no vertex prices negative at π, at
    ``max_rounds`` or at ``time_limit`` (then the last master kernel and the best bound so far are
    returned with status ``time_limit``).
    """
    start = time.perf_counter()
    n, m = C.shape
    C = np.ascontiguousarray(C, dtype=float)
    master = _Master(n, verbose, threads, sparse_rows)
    step = max(1, PRICE_CHUNK_ENTRIES // max(n, 1))
    abs_cost = np.abs(C).sum(axis=0)

    def generate(point: np.ndarray, pi: np.ndarray | None, limit: int):
        """Price every output at ``point``; add improving vertices at ``pi`` (None: all best vertices).
        Returns (p values at point, number added)."""
        values, added = [], 0
        for j0 in range(0, m, step):
            ys = np.arange(j0, min(j0 + step, m))
            lv = _levels(C[:, ys] - point[:, None], c, E)
            values.append(lv.value.min(axis=0))
            if pi is None:
                qs = np.argmin(lv.value, axis=0)
                cols = np.arange(ys.size)
            else:
                reduced = lv.value if pi is point else lv.value + _dot_sorted(lv, point - pi)
                reduced = np.where(np.isfinite(reduced), reduced, np.inf)
                thr = -1e-12 * scale - _pricing_error(n, abs_cost[ys], pi)
                take = min(limit, n + 1)
                part = np.argpartition(reduced, take - 1, axis=0)[:take] if take <= n else np.argsort(reduced, axis=0)
                red = np.take_along_axis(reduced, part, axis=0)
                ok = red < thr[None, :]
                cols = np.broadcast_to(np.arange(ys.size), part.shape)[ok]
                qs = part[ok]
            if qs.size == 0:
                continue
            R = _build(lv, cols, qs, n)
            yy = ys[cols]
            cost = np.einsum("xk,xk->k", C[:, yy], R)
            master.add(R, yy, cost)
            added += qs.size
        return np.concatenate(values), added

    # warm start: the constant kernel (one column 1 at the cheapest output), then each output's own vertex at π = 0
    col_sums = C.sum(axis=0)
    y0 = int(np.argmin(col_sums))
    master.add(np.ones((n, 1)), np.array([y0]), np.array([col_sums[y0]]))
    scale = 1.0
    generate(np.zeros(n), None, 1)

    best_bound, centre = -math.inf, None
    rounds = iterations = 0
    status, value, pi = "optimal", math.inf, np.zeros(n)
    price_seconds = 0.0
    while True:
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - start)
            if left <= 0:
                status = "time_limit"
                break
            master.h.setOptionValue("time_limit", max(left, 1e-3))
        run_interruptible(master.h)
        rounds += 1
        iterations += max(int(master.h.getInfo().simplex_iteration_count), 0)
        ms = master.h.modelStatusToString(master.h.getModelStatus())
        if ms != "Optimal":
            status = "time_limit" if "Time" in ms else "solver_error"
            break
        value = float(master.h.getInfo().objective_function_value)
        pi = master.duals()
        scale = max(1.0, abs(value))
        added = 0
        t0 = time.perf_counter()
        points = [pi] if centre is None or smoothing <= 0 else [smoothing * centre + (1 - smoothing) * pi, pi]
        for point in points:
            values, added = generate(point, pi, per_output)
            bound = lagrangian_bound(C, point, c, E, values)
            if bound > best_bound:
                best_bound, centre = bound, point
            if centre is None:
                centre = point
            if added or value - best_bound <= tolerance * scale:
                break  # mis-pricing only when smoothing found nothing: then price at π itself
        price_seconds += time.perf_counter() - t0
        gap = max(value - best_bound, 0.0)
        report(phase="ray master", round=rounds, gap=gap, detail=f"{master.h.getNumCol()} columns")
        if verbose:
            print(
                f"ray master: round {rounds}, {master.h.getNumCol()} columns (+{added}), value {value:.12g}, "
                f"bound {best_bound:.12g}, {time.perf_counter() - start:.2f} s",
                file=sys.stderr,
            )
        if gap <= tolerance * scale or added == 0:
            break
        if rounds >= max_rounds:
            status = "iteration_limit"
            break
    kernel = master.kernel(m) if math.isfinite(value) else np.zeros((n, m))
    return RayMasterResult(
        kernel=kernel,
        value=value,
        bound=best_bound,
        pi=centre if centre is not None else pi,
        rounds=rounds,
        columns=int(master.h.getNumCol()),
        iterations=iterations,
        seconds=time.perf_counter() - start,
        price_seconds=price_seconds,
        status=status,
    )
