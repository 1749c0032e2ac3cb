"""The repair of :func:`mechdesign.certify.exact.repair` in one exact integer pass.

A kernel on the grid 2^−k is K = A / D with D = 2^k and integers A ≥ 0 whose rows sum to D. When it
breaks (ε, Q_X(c))-PML against a rational E = p / r ≤ e^ε, the repair mixes it with the constant kernel
whose rows are the mean row q (zero leakage),

    B = (1 − w) A + w · 1 sᵀ / N,        s_y = Σ_x A_xy  (so q = s / (N D)).

Mixing keeps every row sum and every column sum (Σ_x B_xy = s_y), and it moves a column's maximum a_y,
minimum b_y and Lemma-4 minimum low_y = c s_y + (1 − Nc) b_y (min over Q_X(c) of P·A(:,y), Lemma 4 of
the Dobrushin paper) the same way: each becomes (1 − w)·(old) + w s_y / N. With u_y = a_y − E low_y (> 0
for a failing column) the exact slack of column y in B is

    E low_B − max_B = w (E − 1) s_y / N − (1 − w) u_y.

:func:`mix_on_grid` builds an integer kernel A'' with rows summing to D and |A''_xy − B_xy| < 2 for every
entry (below), so that a column's maximum rises by < 2, its minimum falls by < 2 and its sum moves by
< 2N; then low'' > low_B − 2 (c ≥ 0, 1 − Nc ≥ 0), and A'' passes column y exactly when

    w ((E − 1) s_y / N + u_y) ≥ u_y + 2 (1 + E),                                        (★)

i.e. w ≥ w_y = (u_y + 2(1 + E)) / (u_y + (E − 1) s_y / N) for every column with u_y + 2(1 + E) > 0.
The weight is the largest w_y, rounded up to W / 2^P with 2^30 ≤ W < 2^31 (⌊W A_xy / 2^P⌋ is then exact
in int64 from two 31-bit products, :func:`_floor_scaled`). One integer pass builds A'' and one O(NM) exact check
(:func:`mechdesign.certify.exact.check_pml`) confirms it: no loop of float mixes, re-roundings and
re-checks.

How far from the smallest weight. The exact mixture B passes every column from w* = max_y u_y / (u_y +
(E − 1) s_y / N) (over failing columns) on, the smallest weight any mixing with the mean row can have.
The weight used is at most

    w ≤ (w* + max_y 2(1 + E) / ((E − 1) s_y / N − 2(1 + E))) · (1 + 2^−30) + 2^−85,

the maximum over the columns that constrain w (u_y > −2(1 + E)), because (★) only adds the margin
2(1 + E) in units of 2^−k. For a column of mass q_y = s_y / (N D) that is 2(1 + E) / ((E − 1) q_y 2^k):
about 1e−12 for q_y = 1/3000 on the grid 2^−52 at ε = 1, where the loop of repeated float mixes it
replaces ended near 1e−9. A linear objective moves by at most w · |objective(K) − objective(1qᵀ)|.

Building A'' (w = W / 2^P). Per entry f_xy = ⌊w A_xy⌋ (exact: W A_xy >> P) is taken out and per column
h_y = ⌊w s_y / N⌋ (Python integers, M of them) put in; row x is then short by R_x = Σ_y f_xy − Σ_y h_y,
|R_x| < M (both sums are within M of w D), which goes as +1 (or −1) to the first |R_x| columns with
s_y > 0, so that only a block of the first columns is touched (None when a −1 would leave an entry < 0). So
A''_xy − B_xy = (w A_xy − f_xy) − (w s_y / N − h_y) ± δ ∈ (−2, 2), every entry ≥ 0, every row sums to
D, and a zero column stays zero.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.certify.grid_arith import column_aggregates, column_classes

__all__ = ["CoarseRounding", "mix_on_grid", "mixing_weight_on_grid", "round_to_coarser_grid"]


_LOW_BITS = 22
"""⌊W A / 2^P⌋ is formed from A = 2^22 A_h + A_l: W A_h < 2^31 · 2^30 and W A_l < 2^53 stay in int64."""
_WEIGHT_BITS = 31
"""W < 2^31 (and ≥ 2^30 unless the weight is below 2^−55): the weight is rounded up by a relative 2^−30 at most."""


def _weight_fraction(need_num: int, need_den: int) -> tuple[int, int]:
    """(W, P): the smallest W / 2^P ≥ need_num / need_den (in (0, 1)) with W < 2^31 and 22 ≤ P ≤ 85 (the
    shifts of :func:`_floor_scaled` stay below 64)."""
    p = _WEIGHT_BITS + need_den.bit_length() - need_num.bit_length()
    p = max(_LOW_BITS, min(_LOW_BITS + 63, p))
    while True:
        w = -((-need_num << p) // need_den)  # ⌈need · 2^p⌉
        if w < 1 << _WEIGHT_BITS or p == _LOW_BITS:
            return w, p
        p -= 1


def _floor_scaled(ints: np.ndarray, W: int, P: int) -> np.ndarray:
    """⌊W A / 2^P⌋ for int64 0 ≤ A ≤ 2^52, 0 < W < 2^31, 22 ≤ P ≤ 85, exactly: with A = 2^22 A_h + A_l,
    ⌊W A / 2^P⌋ = ⌊(W A_h + ⌊W A_l / 2^22⌋) / 2^(P − 22)⌋ (nested floors of positive divisors), and
    W A_h + ⌊W A_l / 2^22⌋ < 2^61 + 2^31."""
    out = ints >> _LOW_BITS
    out *= W
    low = ints & ((1 << _LOW_BITS) - 1)
    low *= W
    low >>= _LOW_BITS
    out += low
    out >>= P - _LOW_BITS
    return out


_ROW_BLOCK_ENTRIES = 1 << 16
"""The integer mix runs over blocks of rows of about this many entries: its temporaries stay in cache."""


def _mix_rows(ints: np.ndarray, W: int, P: int, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A − ⌊w A⌋ + 1hᵀ, Σ_y ⌊w A_xy⌋ per row), w = W / 2^P, block of rows by block of rows."""
    n, m = ints.shape
    out = np.empty_like(ints)
    taken = np.empty(n, dtype=np.int64)
    step = max(1, _ROW_BLOCK_ENTRIES // max(m, 1))
    for lo in range(0, n, step):
        rows = ints[lo : lo + step]
        f = _floor_scaled(rows, W, P)
        taken[lo : lo + step] = f.sum(axis=1)  # ≤ w D < 2^52
        block = out[lo : lo + step]
        np.subtract(rows, f, out=block)  # A − f ≥ 0
        block += h
    return out, taken


def mixing_weight_on_grid(
    ints: np.ndarray, c: Fraction, bound: Fraction, aggregates=None
) -> tuple[Fraction | None, list[int]]:
    """(w, s): the smallest weight that (★) of the module docstring guarantees, exactly, and the column sums
    s (Python ints). w = 0 when no column constrains it; w ≥ 1 means only the constant kernel is sure
    to pass. None when some column with little mass would need w below a bound that the others exceed
    ((E − 1) s_y / N < 2(1 + E): (★) cannot hold for every w); the mix may still pass the exact check."""
    n = ints.shape[0]
    c = Fraction(c)
    cp, cq = c.numerator, c.denominator
    rest = cq - n * cp  # cq (1 − Nc) ≥ 0
    p, r = bound.numerator, bound.denominator
    aggregates = column_aggregates(ints) if aggregates is None else aggregates
    maxima, minima, sums = aggregates
    # w_y depends on (a_y, b_y, s_y) alone: once per class of equal columns (one class for k-RR), exactly as per column
    first, _ = column_classes(aggregates)
    sums = np.asarray(sums)
    maxima, minima, class_sums = maxima[first].tolist(), minima[first].tolist(), sums[first].tolist()
    sums = sums.tolist()
    margin = 2 * n * cq * (r + p)  # r cq N · 2(1 + E)
    best_num, best_den = 0, 1
    caps = []
    for a, b, s in zip(maxima, minima, class_sums):
        if a == 0:
            continue  # a zero column stays zero
        big_u = n * (a * r * cq - p * (cp * s + rest * b))  # r cq N u_y
        alpha = (p - r) * cq * s + big_u  # r cq N (u_y + (E − 1) s_y / N)
        beta = big_u + margin  # r cq N (u_y + 2(1 + E))
        if beta <= 0:
            if alpha < beta:  # (★) holds only for w ≤ beta / alpha
                caps.append((beta, alpha))
            continue
        if alpha <= 0:
            return Fraction(1), sums
        if beta * best_den > best_num * alpha:
            best_num, best_den = beta, alpha
    w = Fraction(best_num, best_den)
    if any(w * alpha > beta for beta, alpha in caps):  # alpha < 0: w·alpha ≥ beta fails above beta/alpha
        return None, sums
    return w, sums


def mixing_plan(
    ints: np.ndarray, denominator: int, c: Fraction, bound: Fraction, aggregates=None
) -> tuple[Fraction, int, int, np.ndarray, np.ndarray] | None:
    """What :func:`mix_on_grid` and :func:`mechdesign.certify.fused.mix_on_grid_in_place` both mix by: (w, W, P,
    h, live) with w = W / 2^P the weight (★) asks for, h_y = ⌊w s_y / N⌋ the constant part added to column y and
    ``live`` the columns with s_y > 0; w = 0 (no mix needed) comes with W = P = 0 and h = 0. None when
    ``ints / denominator`` is not a kernel on a grid 2^−k (k ≤ 52) or no weight below 1 meets (★)."""
    n, m = ints.shape
    den_bits = denominator.bit_length() - 1
    if n == 0 or m == 0 or denominator != 1 << den_bits or den_bits > 52:
        return None
    aggregates = column_aggregates(ints) if aggregates is None else aggregates
    need, sums = mixing_weight_on_grid(ints, c, bound, aggregates)
    if need is None or need >= 1:
        return None
    first, inverse = column_classes(aggregates)  # s_y, and so h_y, once per class of equal columns
    class_sums = [sums[y] for y in first.tolist()]
    live = np.array([s > 0 for s in class_sums], dtype=bool)[inverse]
    if need == 0:
        return Fraction(0), 0, 0, np.zeros(m, dtype=np.int64), live
    W, P = _weight_fraction(need.numerator, need.denominator)
    weight = Fraction(W, 1 << P)
    if weight >= 1:
        return None
    h = np.array([(W * s) // (n << P) for s in class_sums], dtype=np.int64)[inverse]  # ⌊w s_y / N⌋
    return weight, W, P, h, live


def mix_on_grid(
    ints: np.ndarray, denominator: int, c: Fraction, bound: Fraction, aggregates=None
) -> tuple[np.ndarray, Fraction] | None:
    """(A'', w) of the module docstring: the kernel ``ints / denominator`` (int64, entries ≥ 0, rows summing to
    ``denominator`` = 2^k, k ≤ 52) mixed with its mean-row constant kernel by the weight (★) asks for, in
    exact integer arithmetic, and that weight; None when (★) cannot be met by one weight below 1 (the caller
    falls back to the constant kernel or a search). The result still goes through the exact check.
    ``aggregates``: :func:`~mechdesign.certify.grid_arith.column_aggregates` of ``ints``, when known."""
    m = ints.shape[1]
    plan = mixing_plan(ints, denominator, c, bound, aggregates)
    if plan is None:
        return None
    weight, W, P, h, live = plan
    if weight == 0:
        return ints, weight
    live_before = np.cumsum(live) - live  # live columns left of each column
    n_live = int(live_before[-1] + live[-1])

    out, taken = _mix_rows(ints, W, P, h)  # A − f + 1hᵀ with f = ⌊w A⌋, and Σ_y f_xy
    short = taken - int(h.sum())  # R_x, |R_x| < number of live columns
    top = int(np.abs(short).max())
    if top > n_live:
        return None
    # ±1 go to the first |R_x| live columns of each row, a block of the first columns. A −1 can meet an
    # entry 0 only in a column with h_y = 0, which (★) rarely leaves unconstrained: then no A'' is made
    # here (the caller searches the weight over float mixes instead)
    width = min(m, int(np.searchsorted(live_before, top)) + 1)  # holds the first `top` live columns
    block = out[:, :width]  # a view: edits go to out
    chosen = live[:width] & (live_before[:width] < np.abs(short)[:, None])
    np.add(block, np.sign(short)[:, None], out=block, where=chosen)
    if block.min() < 0:
        return None
    return out, weight


class CoarseRounding:
    """The rounding of a kernel ``ints / 2^from_bits`` (int64, entries ≥ 0, rows summing to 2^from_bits) to
    the grid 2^−to_bits, exactly: ⌊A / 2^d⌋ (d = from_bits − to_bits ≤ 16) plus 1 for each row's
    2^to_bits − Σ⌊·⌋ entries with the largest remainders A mod 2^d, ties to the lower column index; every
    entry moves by less than 2^−to_bits and every row sums to 2^to_bits.

    This is the rounding :func:`mechdesign.certify.exact.to_grid` does on floats (normalise the row, floor,
    largest remainders), done on the integers, where the row already sums to 1 exactly. Each row is rounded
    on its own, so the work goes block of rows by block of rows (temporaries in cache): per block the
    remainders (uint8/uint16), a radix sort of them for each row's threshold t_x (the deficit_x-th largest
    remainder), then :meth:`columns` (a few rounded columns, a cheap test) or :meth:`kernel` (all of them)."""

    def __init__(self, ints: np.ndarray, from_bits: int, to_bits: int) -> None:
        d = from_bits - to_bits
        if not 0 < d <= 16:
            raise ValueError(f"CoarseRounding: from_bits − to_bits must be in [1, 16], found {d}")
        self.ints, self.d, self.to_bits = ints, d, to_bits
        self.small = np.uint8 if d <= 8 else np.uint16

    def _blocks(self):
        """(row slice, remainders, threshold, wanted ties, deficit > 0) for each block of rows."""
        n, m = self.ints.shape
        step = max(1, _ROW_BLOCK_ENTRIES // max(m, 1))
        for lo in range(0, n, step):
            rows = slice(lo, min(n, lo + step))
            rem = self.ints[rows].astype(self.small)  # the low 8 (16) bits: A mod 2^8 (2^16), as A ≥ 0
            rem &= (1 << self.d) - 1
            # Σ_y ⌊A/2^d⌋ = (2^from_bits − Σ_y rem) / 2^d, so the deficit is Σ rem / 2^d ∈ [0, M)
            deficit = rem.sum(axis=1, dtype=np.int64) >> self.d
            ascending = np.sort(rem, axis=1, kind="stable")  # radix sort of 8/16-bit keys: O(M) per row
            at = np.clip(m - deficit, 0, m - 1)
            threshold = np.take_along_axis(ascending, at[:, None], axis=1)[:, 0]
            # ties at the threshold still to take; rows with deficit 0 take nothing
            above = np.count_nonzero(rem > threshold[:, None], axis=1)
            wanted = np.where(deficit > 0, deficit - above, 0)
            yield rows, rem, threshold, wanted, deficit > 0

    def columns(self, ys) -> np.ndarray:
        """The rounded columns ``ys`` (an N × len(ys) int64 array), exactly as :meth:`kernel` has them.
        Per block, a running count of each row's ties at its threshold tells which ties come first."""
        ys = np.asarray(list(ys), dtype=np.int64)
        out = self.ints[:, ys] >> self.d
        if not ys.size or out.shape[0] == 0:
            return out
        before = np.maximum(ys - 1, 0)
        for rows, rem, threshold, wanted, adds in self._blocks():
            t = threshold[:, None]
            ties_upto = np.cumsum(rem == t, axis=1, dtype=np.int32)
            ties_before = np.where(ys > 0, ties_upto[:, before], 0)  # ties left of each column y
            r = rem[:, ys]
            tie = (r == t) & (ties_before < wanted[:, None])  # wanted = 0 where the deficit is 0
            out[rows] += ((r > t) & adds[:, None]) | tie
        return out

    def kernel(self) -> np.ndarray:
        """The whole rounded kernel (int64, rows summing to 2^to_bits)."""
        out = self.ints >> self.d
        if out.size == 0:
            return out
        for rows, rem, threshold, wanted, adds in self._blocks():
            t = threshold[:, None]
            take = rem > t
            take &= adds[:, None]
            ties = rem == t
            ties &= (wanted > 0)[:, None]
            crowded = np.flatnonzero(np.count_nonzero(ties, axis=1) > wanted)
            if crowded.size:  # rows with more ties than wanted: the first ones in column order
                part = ties[crowded]
                part &= np.cumsum(part, axis=1, dtype=np.int32) <= wanted[crowded][:, None]
                ties[crowded] = part
            take |= ties
            out[rows] += take
        return out


def round_to_coarser_grid(ints: np.ndarray, from_bits: int, to_bits: int) -> np.ndarray:
    """``ints / 2^from_bits`` rounded to the grid 2^−to_bits as :class:`CoarseRounding` defines it."""
    return CoarseRounding(ints, from_bits, to_bits).kernel()
