"""The restricted ray LP of column generation, kept light: a live HiGHS model over the *active* rays and a
pool of the rays set aside, so that mutual information at N = 100 keeps a small master.

The restricted master of :func:`mechdesign.engines.sublinear.design_column_generation` is

    (P_S)  maximise Σ_{r ∈ S} θ_r μ(r)   s.t.  Σ_{r ∈ S} θ_r r = 1 (N rows),  θ ≥ 0,

over the rays S found so far (Kairouz, Oh, Viswanath's staircase LP for LDP; Grosse et al. for PML). Pricing
adds hundreds of rays a round and only N of them are basic, so without pruning the model grows to tens of
thousands of dense columns and each simplex iteration prices all of them: at N = 100 a warm re-solve took
1–2 s (3 ms an iteration) and the LP was 70 % of the time. Here, when S exceeds ``cap`` columns, the nonbasic
rays of least reduced value (μ(r) − λ·r)/(1·r) are deleted from the model (``deleteCols``: the basis of the
others stays valid, so the next solve is still warm) and kept in a pool; every round the pool is scanned at
the LP's duals (one matrix product) and the rays that would improve the LP return to it, at most
:data:`RESTORE_PER_ROW`·N of them (at N = 200 all of them were ~10,000 a round and the live LP grew to 25,000
columns). The model holds each ray in a sparse form, b_r·1 + d_r with one link row (:func:`_base_and_deviation`):
rays of the min_mass cone differ from their most frequent entry in about a quarter of the items, so a simplex
iteration prices about 4× fewer nonzeros than with dense columns.

Nothing here changes a bound: the certificate Σλ + N·max(g, 0) holds for any λ, and g comes from pricing over
all rays of the cone, not from S. Removing a nonbasic column keeps the optimal basis optimal, so the LP's value
never decreases from one round to the next.
"""

from __future__ import annotations

import numpy as np

from mechdesign.lp.highs import configured_highs, set_seconds_left
from mechdesign.lp.interrupt import run_interruptible

__all__ = ["PooledRayLP", "ACTIVE_CAP_PER_ROW"]

ACTIVE_CAP_PER_ROW = 50
"""Active columns allowed per row of (P_S) before pruning (to 3/4 of it). Measured at N = 100 (Dirichlet prior, 60 s):
12 or 25 per row stall the LP value (gap 0.2–0.5), 50 reaches 3e-6, no pruning 5e-2 (the LP then takes 55 of the 60 s)."""
RESTORE_PER_ROW = 5
"""Pooled rays returned to the LP per row and round at most (those of largest reduced value at the LP's duals)."""


class PooledRayLP:
    """(P_S) in one highspy model (columns appended with addCols and re-solved from the previous basis by
    primal simplex, which stays primal feasible), its rays ``R``/``mu`` in model order, and a pool of pruned
    rays. ``solve`` returns (θ, λ, objective) over the active rays, or None when HiGHS does not reach an
    optimum (the caller then solves (P_S) from scratch over ``R``, ``mu``)."""

    def __init__(self, n: int, cap: int | None = None):
        import highspy

        # primal simplex, no presolve: the basis stays primal feasible as columns are added
        self.h = h = configured_highs("ray_pool")
        # rows 0..n−1: T + Σ θ_r d_r = 1; row n: Σ θ_r b_r − T = 0 (the sparse column form, _base_and_deviation)
        h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        h.addRows(1, np.zeros(1), np.zeros(1), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        h.addCols(
            1, np.zeros(1), np.zeros(1), np.full(1, highspy.kHighsInf), n + 1,
            np.zeros(1, np.int32), np.arange(n + 1, dtype=np.int32), np.concatenate([np.ones(n), [-1.0]]),
        )  # fmt: skip
        self.n = n
        self.cap = max(cap if cap is not None else ACTIVE_CAP_PER_ROW * n, 4 * n)
        self.R, self.mu = np.zeros((0, n)), np.zeros(0)
        # the pool: rows [0, pool_len) of preallocated arrays, ``pool_alive`` False once a ray went back to the LP
        # (restoring copies nothing: at N = 100 the pool reaches 80,000 rays, and copying it every round took 4 s)
        self.pool_R, self.pool_mu, self.pool_sums = np.zeros((0, n)), np.zeros(0), np.zeros(0)
        self.pool_alive, self.pool_len = np.zeros(0, bool), 0
        self.active: set[bytes] = set()
        self.pruned = 0

    def add(self, R: np.ndarray, mu: np.ndarray) -> None:
        import highspy

        R = np.ascontiguousarray(R, float)
        r, n = R.shape
        if r == 0:
            return
        starts, index, value = _base_and_deviation(R)
        self.h.addCols(
            r, -np.asarray(mu, float), np.zeros(r), np.full(r, highspy.kHighsInf), len(value), starts, index, value
        )
        self.R, self.mu = np.vstack([self.R, R]), np.concatenate([self.mu, mu])
        self.active.update(x.tobytes() for x in R)

    def solve(self, time_limit: float | None):
        import highspy

        h = self.h
        if time_limit is not None:  # HiGHS's clock runs over all solves of the model: the limit is set past it
            set_seconds_left(h, time_limit)
        run_interruptible(h)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        sol = h.getSolution()
        if not sol.dual_valid:
            return None
        x = np.asarray(sol.col_value, float)[1:]  # column 0 is T
        return x, -np.asarray(sol.row_dual, float)[: self.n], -float(h.getInfo().objective_function_value)

    def prune(self, lam: np.ndarray) -> None:
        """Past ``cap`` active rays, move the nonbasic ones of least reduced value at λ to the pool until
        3/4 of ``cap`` remain; a ray with a nonnegative reduced value stays."""
        import highspy

        if len(self.mu) <= self.cap:
            return
        basis = self.h.getBasis()
        if not basis.valid:
            return
        status = basis.col_status[1:]  # column 0 is T
        basic = np.array([s == highspy.HighsBasisStatus.kBasic for s in status], bool)
        red = (self.mu - self.R @ lam) / self.R.sum(axis=1)
        red[basic] = np.inf
        drop = np.argsort(red, kind="stable")[: len(self.mu) - (3 * self.cap) // 4]
        drop = drop[~basic[drop] & (red[drop] < 0)]  # a ray that would improve the LP at λ stays
        if len(drop) == 0:
            return
        drop = np.sort(drop).astype(np.int32)
        self.h.deleteCols(len(drop), drop + 1)  # column 0 is T
        keep = np.ones(len(self.mu), bool)
        keep[drop] = False
        self._pool_append(self.R[drop], self.mu[drop])
        self.active.difference_update(x.tobytes() for x in self.R[drop])
        self.R, self.mu = self.R[keep], self.mu[keep]
        self.pruned += len(drop)

    def _pool_append(self, R: np.ndarray, mu: np.ndarray) -> None:
        """Append rays to the pool (capacity doubled when full; rays gone back to the LP are dropped then)."""
        k, m = len(mu), self.pool_len
        if m + k > len(self.pool_mu):
            alive = self.pool_alive[:m]
            keep_R, keep_mu, keep_s = self.pool_R[:m][alive], self.pool_mu[:m][alive], self.pool_sums[:m][alive]
            m = len(keep_mu)
            cap = max(2 * (m + k), 1024)
            self.pool_R, self.pool_mu = np.empty((cap, self.n)), np.empty(cap)
            self.pool_sums, self.pool_alive = np.empty(cap), np.zeros(cap, bool)
            self.pool_R[:m], self.pool_mu[:m], self.pool_sums[:m], self.pool_alive[:m] = keep_R, keep_mu, keep_s, True
        self.pool_R[m : m + k], self.pool_mu[m : m + k] = R, mu
        self.pool_sums[m : m + k], self.pool_alive[m : m + k] = R.sum(axis=1), True
        self.pool_len = m + k

    def restore_from_pool(self, lam: np.ndarray, floor: float) -> int:
        """Return to the LP the pooled rays whose reduced value at λ exceeds ``floor`` (how many)."""
        m = self.pool_len
        if m == 0:
            return 0
        red = (self.pool_mu[:m] - self.pool_R[:m] @ lam) / self.pool_sums[:m]
        back = np.flatnonzero((red > floor) & self.pool_alive[:m])
        if len(back) == 0:
            return 0
        if len(back) > RESTORE_PER_ROW * self.n:  # the best of them only (at N = 200 all of them were ~10,000 a round)
            back = back[np.argpartition(-red[back], RESTORE_PER_ROW * self.n - 1)[: RESTORE_PER_ROW * self.n]]
        self.pool_alive[back] = False
        # a pooled ray that pricing already brought back is not added twice
        return self.take(self.pool_R[back], self.pool_mu[back])

    def take(self, R: np.ndarray, mu: np.ndarray) -> int:
        """Add the rays of R not active now (new, or back from the pool); how many were added."""
        first, met = [], set()  # the first occurrence of each ray not active (a dict of bytes: np.unique(axis=0) took
        for i, x in enumerate(R):  # 9 of 60 s at N = 200)
            key = x.tobytes()
            if key not in self.active and key not in met:
                met.add(key)
                first.append(i)
        if not first:
            return 0
        self.add(R[first], mu[first])
        return len(first)


def _base_and_deviation(R: np.ndarray):
    """Each ray r as b_r·1 + d_r with b_r its most frequent value among its largest and smallest entries, d_r = r − b_r·1
    (zero wherever r_x = b_r): the column of θ_r in the sparse form of (P_S) is (d_r on the N rows, b_r on the link row).

    With T = Σ_r θ_r b_r (one more column, T ≥ 0, dense) the rows Σ_r θ_r r = 1 read T + Σ_r θ_r d_r = 1 and the link row
    Σ_r θ_r b_r − T = 0. A two-level ray m + (1 − m)1_A keeps min(|A|, N − |A|) entries of its N, a ray 1_A + w e_j
    N − |A| + 1 (about a quarter at ε = 1, c = 1/(2N)), so every simplex iteration prices about 4× fewer nonzeros. The
    duals of the N rows are those of the dense form (T's zero reduced cost makes the link row's dual Σλ, and then each
    column's reduced cost is μ(r) − λ·d_r − b_r Σλ = μ(r) − λ·r). Returns the CSC arrays (starts, index, value) of the rays.
    """
    r, n = R.shape
    hi, lo = R.max(axis=1), R.min(axis=1)
    base = np.where((R == hi[:, None]).sum(axis=1) >= (R == lo[:, None]).sum(axis=1), hi, lo)
    D = R - base[:, None]
    D[R == base[:, None]] = 0.0
    D = np.column_stack([D, base])  # the link row n
    rows, cols = np.nonzero(D)
    counts = np.count_nonzero(D, axis=1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
    return starts, cols.astype(np.int32), D[rows, cols]
