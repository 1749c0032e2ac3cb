"""The |x − y| loss under the worst of all priors, ε-LDP, over mixtures of interval-partition mechanisms.

The design minimises max_x r_x(K), r_x = Σ_y |x − y| K_xy, over ε-LDP kernels K (N × M). Output generation on
the lifted LP (:mod:`mechdesign.engines.output_generation`) needs N + 1 rows per output, and the optimum's outputs make that LP
large and degenerate: 9.5–13 s at N = 1000 and 172–187 s at N = 3000 (ε = 1), minutes at ε ≥ 1.5. This module
decomposes the *kernel*, not its columns (Dantzig–Wolfe over whole mechanisms).

**Atoms.** An interval-partition mechanism A has cuts 0 = k_0 < k_1 < … < k_m = N and outputs a_1, …, a_m: x in
the cell I_j = [k_{j−1}, k_j) is answered by a_j with probability 1/Z and by each other a_i with probability E/Z,
Z = 1 + (m − 1)E, E = e^{−ε}: m-ary randomised response on the cell of x, ε-LDP (every column is E/Z or 1/Z,
a ratio 1/E = e^ε). Its row losses are r_x(A) = (E Σ_j |x − a_j| + (1 − E) |x − a_{j(x)}|)/Z. A mixture of
ε-LDP kernels is ε-LDP, and the master holds mixtures of atoms (and of any ε-LDP kernels given to it):

    minimise τ   s.t.   Σ_j λ_j r(A_j) − τ·1 ≤ 0,   Σ_j λ_j = 1,   λ ≥ 0.

N + 1 rows however many atoms join. Its row multipliers μ ≥ 0 (Σμ = 1) are a prior, and an atom's reduced cost
is μ·r(A) − τ*.

**Pricing** is exact over all interval partitions of up to the number of cells it reaches (below), by dynamic
programming over cells. With F(a) = Σ_x μ_x|x − a|,

    μ·r(A) = Σ_j g(k_{j−1}, k_j) / Z,   g(l, r) = min_a [E F(a) + (1 − E) Σ_{l≤x<r} μ_x |x − a|],

and the minimising a is a weighted median of ν = Eμ + (1 − E)μ·1[l, r), found with one binary search in the
prefix sums of μ (the cost then follows from the prefix sums of μ and xμ): g for all N²/2 cells in
O(N² log N). Then D_1(r) = g(0, r), D_m(r) = min_l D_{m−1}(l) + g(l, r), and the best m-cell atom ending its
last cell at l costs (D_{m−1}(l) + g(l, N))/Z_m. m grows until three more cells have not lowered the best cost.
Each round adds the 200 cheapest atoms that price below τ*; past 3000 atoms, those whose reduced cost exceeds the
family's gap are deleted from the master (they may join again), which keeps the large-ε masters small. The family's Lagrangian bound min_A μ·r(A) is not a
bound on the design (other kernels exist): the caller's given-prior LP at μ gives the rigorous one
(:mod:`mechdesign.engines.worst_case`), and a kernel it returns joins the master as one more atom.

**Rows.** For N = M the loss is unchanged by the reflection x ↦ N−1−x, y ↦ N−1−y and an optimum is symmetric:
every atom joins averaged with its mirror image, whose row losses are symmetric, so only rows x < ⌈N/2⌉ are kept.
The rows (with slacks, as equalities) are premultiplied by D² (:func:`mechdesign.cone.difference_rows.difference_matrix`,
(Dv)_0 = v_0, (Dv)_x = v_x − v_{x−1}): an atom's
row losses are piecewise linear in x with jumps at its cuts and kinks at its outputs, so its column has O(m)
nonzeros instead of N. They are computed from integer vectors (exact second differences): E·D²U_1 + (1 − E)·D²U_2
over Z, with U_1 = Σ_j |x − a_j| and U_2 = |x − a_{j(x)}| (plus their mirror images).

Measured (designs with their certificates, ε = 1, against 9.5 s and 181 s for output generation run beside):
N = 1000 in 2.0 s, N = 3000 in 19.3 s; ε = 1.5 and 2 at N = 1000 in 5.6 and 12.4 s, where output generation did not
finish in 300 s (docs/explanation/performance-notes.md, section
"The worst-case prior").
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from mechdesign.cone.difference_rows import difference_matrix
from mechdesign.lp.highs import new_warm_simplex, set_seconds_left
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.progress import report
from mechdesign.lp.solve import Status, highs_status, stopped_status

__all__ = [
    "IntervalPartitionMaster",
    "MasterRounds",
    "interval_costs",
    "is_index_absolute_loss",
    "partition_candidates",
]

ATOMS_PER_ROUND = 200
"""Atoms that join per round (the cheapest that price below the master's value, duplicates skipped)."""
PRUNE_ATOMS = 3000
"""Past this many atoms in the master, those whose reduced cost exceeds the family's gap are deleted."""
CELL_STALL = 3
"""The dynamic programme stops adding cells after this many that did not lower the best atom's cost."""
_BLOCK = 512
"""Rows l of g(l, r) computed per block (memory: a few N-wide arrays of that many rows)."""


def is_index_absolute_loss(L: np.ndarray) -> bool:
    """True when L_xy = |x − y| on the indices (the spec's ``loss: absolute``, or the same matrix written out)."""
    n, m = L.shape
    return bool(np.array_equal(L, np.abs(np.arange(n)[:, None] - np.arange(m)[None, :])))


def interval_costs(mu: np.ndarray, E: float, m: int) -> tuple[np.ndarray, np.ndarray]:
    """g(l, r) for 0 ≤ l < r ≤ N (inf elsewhere) and its minimising output a ∈ 0..m−1 (module doc, **Pricing**).

    ν = Eμ + (1 − E)μ·1[l, r) has cumulative C(a) = E M(a+1) + (1 − E)(M(min(max(a+1, l), r)) − M(l)), M the
    prefix sums of μ; its weighted median (the least a with C(a) ≥ C(N−1)/2) lies left of l, in [l, r) or
    right of r, and in each case C(a) ≥ C(N−1)/2 is one threshold on M(a+1): one binary search. Σ ν_x|x − a|
    = a(2C(a) − T) − 2X(a) + X_T with X the prefix sums of xν. For m < N the median is clipped to m − 1
    (the cost is convex in a)."""
    n = mu.size
    q = 1.0 - E
    Mu = np.concatenate(([0.0], np.cumsum(mu)))
    Xu = np.concatenate(([0.0], np.cumsum(np.arange(n) * mu)))
    G = np.full((n + 1, n + 1), np.inf)
    A = np.zeros((n + 1, n + 1), np.int32)  # outputs < 10,001 (the alphabet limit)
    for l0 in range(0, n, _BLOCK):
        l1 = min(l0 + _BLOCK, n)
        l = np.arange(l0, l1)[:, None]
        r = np.arange(l0 + 1, n + 1)[None, :]
        Ml, Mr, Xl, Xr = Mu[l], Mu[r], Xu[l], Xu[r]
        T = E + q * (Mr - Ml)
        half = 0.5 * T
        left = E * Ml >= half  # C(l − 1) already reaches half the mass
        right = Mr - q * Ml < half  # C(r − 1) does not
        # at E = 0 (ε = ∞) neither `left` nor `right` can hold unless ν = 0 on [l, r), where every a costs 0:
        # dividing by 1 instead keeps the unused branches finite
        Ed = E if E > 0 else 1.0
        threshold = np.where(left, half / Ed, np.where(right, (half - q * (Mr - Ml)) / Ed, half + q * Ml))
        a = np.searchsorted(Mu, threshold) - 1
        a = np.where(left, np.minimum(a, l - 1), np.where(right, np.maximum(a, r), np.clip(a, l, r - 1)))
        a = np.clip(a, 0, min(n, m) - 1)
        k = a + 1
        kc = np.clip(k, l, r)
        C = E * Mu[k] + q * (Mu[kc] - Ml)
        X = E * Xu[k] + q * (Xu[kc] - Xl)
        X_total = E * Xu[n] + q * (Xr - Xl)
        cost = a * (2.0 * C - T) - 2.0 * X + X_total
        G[l0:l1, l0 + 1 :] = np.where(r > l, cost, np.inf)
        A[l0:l1, l0 + 1 :] = a
    return G, A


@dataclass
class _Candidates:
    """Atom costs μ·r(A) (flat, one per (cells, last cut)) and how to rebuild each atom's cuts and outputs."""

    costs: np.ndarray
    offsets: np.ndarray
    cells: list[int]
    backs: list[np.ndarray]
    outputs: np.ndarray
    n: int

    def atom(self, j: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        i = int(np.searchsorted(self.offsets, j, side="right") - 1)
        m, last = self.cells[i], int(j - self.offsets[i])
        cuts = [self.n]
        if m > 1:
            cuts.append(last)
            r = last
            for cells in range(m - 1, 1, -1):  # D_cells(r) came from D_{cells−1}(backs[cells − 2][r])
                r = int(self.backs[cells - 2][r])
                cuts.append(r)
        cuts.append(0)
        cuts.reverse()
        outs = tuple(int(self.outputs[cuts[i], cuts[i + 1]]) for i in range(m))
        return tuple(cuts), outs


def partition_candidates(G: np.ndarray, A: np.ndarray, E: float) -> _Candidates:
    """The cheapest atom of each cell count m and last cut l (module doc, **Pricing**); m = 1 is the constant."""
    n = G.shape[0] - 1
    costs = [np.array([G[0, n]])]
    cells, backs = [1], []
    D = G[0].copy()  # D_1(r)
    GT = np.ascontiguousarray(G.T)  # g(l, r) by rows r: the minimum over l runs along rows
    total = np.empty_like(GT)
    rows = np.arange(n + 1)
    best, since = G[0, n], 0
    for m in range(2, n + 1):
        last = (D[:n] + G[:n, n]) / (1.0 + (m - 1) * E)
        costs.append(last)
        cells.append(m)
        low = float(last.min())
        if low < best:
            best, since = low, 0
        else:
            since += 1
        if since >= CELL_STALL or m == n:
            break
        np.add(GT, D[None, :], out=total)  # [r, l]: D_{m−1}(l) + g(l, r)
        back = np.argmin(total, axis=1)
        D = total[rows, back]
        backs.append(back)
    offsets = np.cumsum([0] + [c.size for c in costs])
    return _Candidates(np.concatenate(costs), offsets, cells, backs, A, n)


@dataclass
class MasterRounds:
    """What a run of :meth:`IntervalPartitionMaster.solve` ended with."""

    value: float
    """The master's value τ* (floating point)."""
    family_bound: float
    """min_A μ·r(A) over interval partitions at the last μ (not a bound on the design: module doc)."""
    mu: np.ndarray
    """The master's prior (N entries, ≥ 0, Σ = 1 in floating point)."""
    status: str
    """optimal (the family's gap closed, or no new atom priced below τ*) | time_limit | solver_error."""


@dataclass
class IntervalPartitionMaster:
    """The master LP of the module doc over atoms and added kernels, one warm HiGHS model."""

    n: int
    m: int
    E: float
    verbose: bool = False
    threads: int | None = None
    fold: bool = field(init=False)
    rows: int = field(init=False)

    def __post_init__(self):
        n = self.n
        self.fold = self.n == self.m
        self.rows = (n + 1) // 2 if self.fold else n
        R = self.rows
        self._atoms: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # cuts, outputs
        self._kernels: list[tuple[np.ndarray, np.ndarray]] = []  # outputs, columns (added kernels)
        self._order: list[tuple[str, int]] = []  # master column j (after τ and the slacks): which atom
        self._seen: set = set()
        self.rounds = 0
        self.iterations = 0
        h = new_warm_simplex(self.verbose, self.threads, 1e-9)
        inf = highspy.kHighsInf
        self._D2 = difference_matrix(R, 2)
        # rows 0..R−1: D²(Σ λ_j r_j − τ·1 + s) = 0; row R: Σ λ_j = 1
        h.addRows(R, np.zeros(R), np.zeros(R), 0, np.zeros(R, np.int32), np.array([], np.int32), np.array([]))
        h.addRow(1.0, 1.0, 0, np.array([], np.int32), np.array([]))
        tau = self._D2 @ -np.ones(R)
        nz = np.flatnonzero(tau)
        h.addCol(1.0, -inf, inf, nz.size, nz.astype(np.int32), tau[nz])
        slacks = self._D2.tocsc()  # the slack of row x: the column D²e_x
        h.addCols(
            R, np.zeros(R), np.zeros(R), np.full(R, inf), slacks.nnz,
            slacks.indptr[:-1].astype(np.int32), slacks.indices.astype(np.int32), slacks.data,
        )  # fmt: skip
        self._h = h
        self._first = 1 + R  # master columns before the atoms
        self.add_atoms([((0, n), ((min(n, self.m) - 1) // 2,))])  # the constant kernel at a middle output

    # ------------------------------------------------------------------ atoms and their columns
    def _canonical(self, cuts, outs):
        if not self.fold:
            return cuts, outs
        mirror = tuple(self.n - k for k in reversed(cuts)), tuple(self.n - 1 - a for a in reversed(outs))
        return min((cuts, outs), mirror)

    def _atom_column(self, cuts, outs) -> np.ndarray:
        """D² of the (folded) row losses of an atom, from integer vectors (module doc, **Rows**)."""
        n, E = self.n, self.E
        x = np.arange(n)
        u1 = np.zeros(n)
        u2 = np.zeros(n)
        for j, a in enumerate(outs):
            d = np.abs(x - a).astype(float)
            u1 += d
            u2[cuts[j] : cuts[j + 1]] = d[cuts[j] : cuts[j + 1]]
        z = 1.0 + (len(outs) - 1) * E
        if self.fold:
            u1, u2, z = u1 + u1[::-1], u2 + u2[::-1], 2.0 * z
        R = self.rows
        return (E * (self._D2 @ u1[:R]) + (1.0 - E) * (self._D2 @ u2[:R])) / z

    def add_atoms(self, atoms) -> int:
        """Add interval-partition atoms (cuts, outputs) not seen before; returns how many joined."""
        columns = []
        for cuts, outs in atoms:
            key = self._canonical(tuple(cuts), tuple(outs))
            if key in self._seen:
                continue
            self._seen.add(key)
            self._atoms.append(key)
            self._order.append(("atom", len(self._atoms) - 1))
            columns.append(self._atom_column(*key))
        self._add_columns(columns)
        return len(columns)

    def add_kernel(self, outputs: np.ndarray, columns: np.ndarray) -> None:
        """Add an ε-LDP kernel (its used outputs and their N × k columns) as one more atom."""
        L = np.abs(np.arange(self.n)[:, None] - np.asarray(outputs)[None, :])
        r = np.einsum("xy,xy->x", columns, L)
        if self.fold:
            r = 0.5 * (r + r[::-1])
        self._kernels.append((np.asarray(outputs), np.asarray(columns, float)))
        self._order.append(("kernel", len(self._kernels) - 1))
        self._add_columns([self._D2 @ r[: self.rows]])

    def _add_columns(self, columns) -> None:
        if not columns:
            return
        R = self.rows
        starts, index, value, total = [], [], [], 0
        for col in columns:
            nz = np.flatnonzero(col)
            starts.append(total)
            index.append(np.append(nz, R))
            value.append(np.append(col[nz], 1.0))
            total += nz.size + 1
        k = len(columns)
        self._h.addCols(
            k, np.zeros(k), np.zeros(k), np.full(k, highspy.kHighsInf), total,
            np.array(starts, np.int32), np.concatenate(index).astype(np.int32), np.concatenate(value),
        )  # fmt: skip

    # ------------------------------------------------------------------ the loop
    def _prior(self, row_dual: np.ndarray) -> np.ndarray:
        d = np.maximum(-(self._D2.T @ row_dual[: self.rows]), 0.0)
        if not self.fold:
            mu = d
        else:
            n = self.n
            mu = np.zeros(n)
            mu[: self.rows] = 0.5 * d
            mu[n - 1 - np.arange(self.rows)] += 0.5 * d
            if n % 2:
                mu[self.rows - 1] = d[self.rows - 1]
        s = mu.sum()
        return mu / s if s > 0 else np.full(self.n, 1.0 / self.n)

    def solve(self, tolerance: float, time_left=None, on_round=None) -> MasterRounds:
        """Rounds of solve and price until the family's gap is within ``tolerance``·max(1, τ*), no new atom
        prices below τ*, or ``time_left()`` (seconds, or None) runs out. ``on_round(kernel)`` is called after
        each solve with a callable that builds that round's kernel (its weights are copied: later rounds do
        not change it), for the running design's incumbent (Ctrl-C)."""
        h = self._h
        start = time.perf_counter()
        status = "optimal"
        value, family_bound, mu = math.inf, -math.inf, np.full(self.n, 1.0 / self.n)
        while True:
            left = None if time_left is None else time_left()
            if left is not None:
                if left <= 0:
                    status = "time_limit"
                    break
                set_seconds_left(h, left)
            run_interruptible(h)
            self.rounds += 1
            self.iterations += max(int(h.getInfo().simplex_iteration_count), 0)
            if highs_status(h) is not Status.OPTIMAL:
                status = stopped_status(h)
                break
            value = float(h.getInfo().objective_function_value)
            solution = h.getSolution()
            mu = self._prior(np.asarray(solution.row_dual, float))
            if on_round is not None:
                weights = np.asarray(solution.col_value, float)[self._first :]
                order = tuple(self._order)
                on_round(lambda weights=weights, order=order: self.kernel(weights, order))
            G, A = interval_costs(mu, self.E, self.m)
            cand = partition_candidates(G, A, self.E)
            family_bound = max(family_bound, float(cand.costs.min()))
            scale = max(1.0, abs(value))
            report(
                phase="interval-partition master",
                round=self.rounds,
                gap=max(value - family_bound, 0.0),
                detail=f"{len(self._order)} atoms",
            )
            if self.verbose:
                print(
                    f"interval-partition master: round {self.rounds}, {len(self._order)} atoms, value {value:.12g},"
                    f" family bound {family_bound:.12g}, {time.perf_counter() - start:.2f} s",
                    file=sys.stderr,
                )
            if value - family_bound <= tolerance * scale:
                break
            if len(self._order) > PRUNE_ATOMS:
                self._prune(np.asarray(solution.col_dual, float), max(value - family_bound, 1e-6 * scale))
            below = np.flatnonzero(cand.costs < value - 1e-12 * scale)
            below = below[np.argsort(cand.costs[below], kind="stable")]
            joining = {}
            for j in below:
                cuts, outs = cand.atom(int(j))
                key = self._canonical(cuts, outs)
                if key not in self._seen:
                    joining[key] = None
                    if len(joining) >= ATOMS_PER_ROUND:
                        break
            joined = self.add_atoms(list(joining))
            if joined == 0:
                break  # every atom pricing below τ* is in already: the floating-point floor
        return MasterRounds(value, family_bound, mu, status)

    def _prune(self, col_dual: np.ndarray, above: float) -> None:
        """Delete the atoms whose reduced cost exceeds ``above`` (nonbasic, at 0); they may join again."""
        reduced = col_dual[self._first : self._first + len(self._order)]
        drop = np.flatnonzero(reduced > above)
        drop = drop[[self._order[j][0] == "atom" for j in drop]]
        if drop.size == 0:
            return
        self._h.deleteCols(int(drop.size), (drop + self._first).astype(np.int32))
        for j in drop:
            self._seen.discard(self._atoms[self._order[j][1]])
        keep = np.ones(len(self._order), bool)
        keep[drop] = False
        self._order = [o for o, k in zip(self._order, keep) if k]

    # ------------------------------------------------------------------ the kernel
    def kernel(self, weights: np.ndarray | None = None, order=None) -> np.ndarray:
        """Σ_j λ_j A_j (N × M; with the fold, each atom averaged with its mirror image), λ clipped at 0 and
        scaled to Σλ = 1, so every row sums to 1 up to rounding and every column is a mixture of ε-LDP ones.
        ``weights``: the atoms' λ of an earlier round (the first atoms, in order); the last solve's otherwise."""
        n, m, E = self.n, self.m, self.E
        if weights is None:
            weights = np.asarray(self._h.getSolution().col_value, float)[self._first :]
        order = self._order if order is None else order
        lam = np.maximum(weights[: len(order)], 0.0)
        lam = lam / lam.sum()
        K = np.zeros((n, m))
        weight = 0.5 if self.fold else 1.0
        for (kind, i), w in zip(order, lam):
            if w <= 0.0:
                continue
            if kind == "atom":
                cuts, outs = self._atoms[i]
                z = 1.0 + (len(outs) - 1) * E
                parts = []
                for j, a in enumerate(outs):
                    col = np.full(n, E / z)
                    col[cuts[j] : cuts[j + 1]] = 1.0 / z
                    parts.append((a, col))
            else:
                outputs, columns = self._kernels[i]
                parts = list(zip(outputs.tolist(), columns.T))
            for a, col in parts:
                K[:, a] += weight * w * col
                if self.fold:
                    K[:, n - 1 - a] += weight * w * col[::-1]
        return K

    @property
    def size(self) -> tuple[int, int, int]:
        """Rows, columns and nonzeros of the master LP."""
        h = self._h
        return int(h.getNumRow()), int(h.getNumCol()), int(h.getNumNz())
