"""Passes of the certify stage fused over blocks of rows, so that certification stays a small share of a design.

A kernel on the grid 2^−k is held as int64 numerators A (N × M, entries 0 ≤ A_xy ≤ 2^k ≤ 2^52, rows summing to
2^k). The exact (ε, Q_X(c))-PML check needs three aggregates per column (Lemma 4 of the Dobrushin paper:
min over Q_X(c) of P·k = c Σ_x k_x + (1 − Nc) min_x k_x),

    a_y = max_x A_xy,    b_y = min_x A_xy,    S_y = Σ_x A_xy,

and the emitted float kernel is A / 2^k (exact: integers ≤ 2^52 and a power of two). Instead of a separate pass
over the whole N × M array for each of them (and for the rounding and the mix that make A), every pass here
takes a block of rows of a few hundred kB, does all its work on it while it is in cache, and folds the block into
the column aggregates:

* :class:`ColumnAggregator` folds blocks of rows into (a, b, S): maxima and minima in int64, the sums in int64
  over at most :data:`SUM_ROWS` rows at a time (each entry ≤ 2^52, so a partial sum stays below 2^63), added
  into Python integers between (exact at any N);
* :func:`mix_rows_in_place` is :func:`mechdesign.certify.grid_repair.mix_on_grid`'s integer mix written into the
  array it reads (no new N × M array), each block checked (entries ≥ 0, rows summing to 2^k) and folded into the
  aggregates of the mixed kernel and, optionally, into its float kernel;
* :func:`coarse_probe_columns` rounds a few columns of the snapping grids 2^−(k−d) exactly (each row's threshold
  remainder from a radix sort of its 8/16-bit remainders), and :func:`coarse_probe_fails` decides whether one of
  them breaks the Lemma-4 constraint from bounds on the rows it has not rounded yet, rounding rows in stages
  until it is shown or every row is rounded (then the verdict is the exact one).

Scratch blocks are reused from block to block: a fresh temporary of half a megabyte is fresh pages each time.

The aggregates are folded from each block after its last write, so the exact check that reads them checks the
integers that are stored, as :func:`mechdesign.certify.grid_arith.column_aggregates` would compute them from the
finished array (tests/certify/test_certify_fused.py compares both with sums of Fractions).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.certify.grid_arith import exact_sums
from mechdesign.certify.grid_repair import _LOW_BITS, _floor_scaled, mixing_plan
from mechdesign.certify.parallel_rows import map_row_blocks

__all__ = [
    "ColumnAggregator",
    "ONE_BITS",
    "SUM_ROWS",
    "column_extremes_of_grid_floats",
    "grid_ints_from_shifted",
    "coarse_column",
    "coarse_probe_columns",
    "coarse_probe_fails",
    "ROW_BLOCK_ENTRIES",
    "mix_on_grid_in_place",
    "mix_rows_in_place",
    "mix_rows_from_floats",
    "row_blocks",
    "rows_stochastic",
]

ROW_BLOCK_ENTRIES = 1 << 17
"""Blocks of rows of about this many entries (1 MB of int64): a block's temporaries stay in cache, and the numpy
calls per block are few enough (the mix at N = 3000: 46 ms with 2^16, 43 ms with 2^17, 44 ms with 2^18)."""

PROBE_BLOCK_ENTRIES = 1 << 18
"""The probe columns of the snapping grids are rounded over larger blocks: their temporaries are 8/16-bit."""

SUM_ROWS = 2047
"""Column sums are taken in int64 over at most this many rows of entries ≤ 2^52 (2047 · 2^52 < 2^63)."""


ONE_BITS = 0x3FF0000000000000
"""The bits of the double 1.0 as an int64: the double 1 + k 2^−52 (0 ≤ k ≤ 2^52; 2.0 for k = 2^52) has the bits
ONE_BITS + k, since the doubles in [1, 2) are 1 + j 2^−52 with the mantissa j, and 2.0 is the next one."""


def grid_ints_from_shifted(shifted: np.ndarray, out: np.ndarray) -> np.ndarray:
    """k into the int64 ``out`` for every double 1 + k 2^−52 of ``shifted`` (each in [1, 2]): the integers of the
    floats x = k 2^−52 on the grid 2^−52, from their sum with 1 (one integer subtraction per entry; the float to
    int64 conversion of 2^52 x costs three to four times as much)."""
    return np.subtract(shifted.view(np.int64), ONE_BITS, out=out)


def column_extremes_of_grid_floats(block: np.ndarray, denominator: int) -> tuple[np.ndarray, np.ndarray]:
    """The column maxima and minima of the integers ``denominator`` · ``block`` (int64), from the floats: exact when
    every entry is an integer of magnitude ≤ 2^53 times 1 / ``denominator`` (a power of two), since the products
    are exact and the order of the floats is that of the integers. numpy's float64 max/min reduce 4× faster than
    its int64 ones (no 64-bit integer max/min instruction without AVX-512)."""
    scale = float(denominator)
    return (block.max(axis=0) * scale).astype(np.int64), (block.min(axis=0) * scale).astype(np.int64)


def row_blocks(n: int, m: int, entries: int | None = None):
    """Slices of consecutive rows covering range(n), each of about ``entries`` entries (at most
    :data:`SUM_ROWS` rows, so that a block's column sums fit in int64)."""
    entries = ROW_BLOCK_ENTRIES if entries is None else entries
    step = min(SUM_ROWS, max(1, entries // max(m, 1)))
    for lo in range(0, n, step):
        yield slice(lo, min(n, lo + step))


class ColumnAggregator:
    """Exact column maxima, minima and sums of an int64 array with entries in [0, 2^52], folded block of rows
    by block of rows (:meth:`add`), in the form :func:`mechdesign.certify.grid_arith.column_aggregates` returns:
    (maxima int64, minima int64, sums as an object array of Python ints)."""

    def __init__(self, m: int) -> None:
        self.maxima = np.zeros(m, dtype=np.int64)
        self.minima = np.zeros(m, dtype=np.int64)
        self._partial = np.zeros(m, dtype=np.int64)
        self._partial_rows = 0
        self._sums = np.zeros(m, dtype=object) if m else np.zeros(0, dtype=object)
        self._rows = 0

    def add(self, block: np.ndarray, maxima: np.ndarray | None = None, minima: np.ndarray | None = None) -> None:
        """Fold a block of rows (at most :data:`SUM_ROWS` of them, entries in [0, 2^52]); ``maxima`` and
        ``minima``: the block's own column maxima and minima, when the caller has them."""
        rows = block.shape[0]
        if rows == 0:
            return
        if rows > SUM_ROWS:
            raise ValueError(f"ColumnAggregator.add: at most {SUM_ROWS} rows per block, found {rows}")
        maxima = block.max(axis=0) if maxima is None else maxima
        minima = block.min(axis=0) if minima is None else minima
        if self._rows == 0:
            self.maxima[:] = maxima
            self.minima[:] = minima
        else:
            np.maximum(self.maxima, maxima, out=self.maxima)
            np.minimum(self.minima, minima, out=self.minima)
        if self._partial_rows + rows > SUM_ROWS:
            self._flush()
        self._partial += block.sum(axis=0, dtype=np.int64)  # ≤ SUM_ROWS · 2^52 < 2^63
        self._partial_rows += rows
        self._rows += rows

    def _flush(self) -> None:
        if self._partial_rows:
            self._sums = self._sums + self._partial.astype(object)
            self._partial[:] = 0
            self._partial_rows = 0

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(maxima, minima, exact sums) over every row added."""
        self._flush()
        return self.maxima, self.minima, self._sums

    @staticmethod
    def combined(parts: list[ColumnAggregator], m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`result` over the rows of every part (one per thread of a pass,
        :func:`mechdesign.certify.parallel_rows.map_row_blocks`): maxima, minima and Python-integer sums, exact, so
        the same integers in any order."""
        used = [part for part in parts if part._rows]
        if not used:
            return ColumnAggregator(m).result()
        first = used[0]
        first._flush()
        for part in used[1:]:
            part._flush()
            np.maximum(first.maxima, part.maxima, out=first.maxima)
            np.minimum(first.minima, part.minima, out=first.minima)
            first._sums = first._sums + part._sums
            first._rows += part._rows
        return first.result()


def _floor_scaled_into(ints: np.ndarray, W: int, P: int, out: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """:func:`mechdesign.certify.grid_repair._floor_scaled` (⌊W A / 2^P⌋ for 0 ≤ A ≤ 2^52, 0 < W < 2^31,
    22 ≤ P ≤ 85, exactly) written into ``out``, with ``spare`` (same shape) for the low part: no new array."""
    np.right_shift(ints, _LOW_BITS, out=out)  # A_h, with A = 2^22 A_h + A_l
    out *= W
    np.bitwise_and(ints, (1 << _LOW_BITS) - 1, out=spare)
    spare *= W
    spare >>= _LOW_BITS
    out += spare
    out >>= P - _LOW_BITS
    return out


def rows_stochastic(block: np.ndarray, denominator: int, maxima=None, minima=None) -> bool:
    """Whether every entry of the int64 ``block`` is in [0, denominator] (≤ 2^52) and every row sums to
    ``denominator``, exactly: uint64 row sums when M < 4096 (M · 2^52 < 2^64), else the sums of two limbs
    (A = 2^26 h + l, each limb sum exact for M < 2^26). ``maxima``, ``minima``: the block's column maxima and
    minima, when the caller has them."""
    if block.size == 0:
        return True
    largest = block.max() if maxima is None else maxima.max()
    smallest = block.min() if minima is None else minima.min()
    if smallest < 0 or largest > denominator:
        return False
    if block.shape[1] < 4096:  # nonnegative entries ≤ 2^52: a row sums to < 2^64 in uint64
        return bool((block.view(np.uint64).sum(axis=1) == denominator).all())  # (entries ≥ 0: same integers)
    high = (block >> 26).sum(axis=1)  # terms ≤ 2^26: exact for M < 2^37
    low = (block & ((1 << 26) - 1)).sum(axis=1)
    # Σ = 2^26 (high + ⌊low / 2^26⌋) + low mod 2^26, compared limb by limb with the denominator
    return bool(
        ((high + (low >> 26) == denominator >> 26) & (low & ((1 << 26) - 1) == denominator & ((1 << 26) - 1))).all()
    )


def mix_rows_in_place(
    ints: np.ndarray,
    denominator: int,
    W: int,
    P: int,
    h: np.ndarray,
    live: np.ndarray,
    floats: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A'' of :mod:`mechdesign.certify.grid_repair` written over ``ints`` (the kernel A / ``denominator``), block
    of rows by block of rows: A − ⌊w A⌋ + 1hᵀ (w = W / 2^P, h_y = ⌊w s_y / N⌋), then each row's shortfall
    R_x = Σ_y ⌊w A_xy⌋ − Σ_y h_y as +1 (or −1) on its first |R_x| live columns (``live``: s_y > 0), exactly as
    :func:`~mechdesign.certify.grid_repair.mix_on_grid` builds it. Each finished block is checked (entries ≥ 0,
    rows summing to ``denominator``), folded into the column aggregates and, when ``floats`` (N × M float64) is
    given, written to it divided by the denominator.

    Returns the column aggregates of A'' (:class:`ColumnAggregator`), or None when a block failed its check
    (then ``ints`` holds a partly mixed kernel: the caller starts again from its own copy of the kernel)."""
    n, m = ints.shape
    live_before, n_live, h_total = _live_columns(live, h)
    scale = 1.0 / denominator  # a power of two: exact
    blocks = list(row_blocks(n, m))
    step = blocks[0].stop if n else 0
    aggregators: list[ColumnAggregator] = []

    def buffers():
        """One thread's scratch blocks (fresh temporaries of this size would be fresh pages each block) and its
        column aggregates (exact integers: the threads' are combined after, in any order)."""
        aggregators.append(ColumnAggregator(m))
        return np.empty((step, m), dtype=np.int64), np.empty((step, m), dtype=np.int64), aggregators[-1]

    def mix_block(rows: slice, scratch_blocks) -> bool:
        """Mix the block ``rows`` of ``ints`` in place; False when it fails its check."""
        scratch, spare, aggregates = scratch_blocks
        block = ints[rows]  # a view: the mix is written into ints
        f = _floor_scaled_into(block, W, P, scratch[: block.shape[0]], spare[: block.shape[0]])
        short = f.sum(axis=1) - h_total  # R_x: |R_x| < number of live columns (both sums within it of w D)
        np.subtract(block, f, out=block)  # A − ⌊w A⌋ ≥ 0
        block += h
        top = int(np.abs(short).max()) if short.size else 0
        if top > n_live:
            return False
        if top:
            width = min(m, int(np.searchsorted(live_before, top)) + 1)  # holds the first `top` live columns
            head = block[:, :width]
            chosen = live[:width] & (live_before[:width] < np.abs(short)[:, None])
            np.add(head, np.sign(short)[:, None], out=head, where=chosen)
        maxima, minima = block.max(axis=0), block.min(axis=0)
        if not rows_stochastic(block, denominator, maxima, minima):
            return False
        aggregates.add(block, maxima, minima)
        if floats is not None:
            np.multiply(block, scale, out=floats[rows])
        return True

    # on the process's threads (certify/parallel_rows.py): every block on its own
    passed = map_row_blocks(mix_block, blocks, n * m, scratch=buffers, stop=lambda ok: not ok)
    if passed and not passed[-1]:
        return None
    return ColumnAggregator.combined(aggregators, m)


def _live_columns(live: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The live columns left of each column, how many are live, and Σ_y h_y (the mixes' shared preamble)."""
    live_before = np.cumsum(live) - live
    n_live = int(live_before[-1] + live[-1]) if live.size else 0
    return live_before, n_live, int(h.sum())


def mix_rows_from_floats(
    ints: np.ndarray,
    source: np.ndarray,
    denominator: int,
    W: int,
    P: int,
    h: np.ndarray,
    live: np.ndarray,
    out: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`mix_rows_in_place` (the integers A'' written over ``ints``, checked and folded into the column
    aggregates, A'' / D written to ``out``) with the arithmetic on the kernel's floats ``source`` = A / D (exact:
    D = 2^k, k ≤ 52), fewer passes over each block than the int64 floor of :func:`_floor_scaled_into`:

    * ⌊w A⌋ (w = W / 2^P) is ⌊p⌋ with p = fl(A/D · W D / 2^P), the double nearest w A (W D / 2^P is a double,
      W < 2^31): w A < 2^52, rounding is monotone and every integer below 2^53 is a double, so ⌊p⌋ = ⌊w A⌋
      unless p is itself an integer, where ⌊w A⌋ may be p − 1; those entries (p > 0 integral, rare) are taken
      from the exact int64 floor (:func:`mechdesign.certify.grid_repair._floor_scaled`);
    * (A − ⌊w A⌋ + h_y ± 1) / D in doubles is exact: every value is an integer in [0, D + 1] times 2^−k, a double;
    * the integers are D times those doubles (exact), and ``out`` receives the doubles themselves.

    ``out`` may be ``source`` (each block is read before it is written). Same integers, checks and aggregates as
    :func:`mix_rows_in_place` (tests/certify/test_certify_inplace.py checks both against Fractions); None when a block
    failed its check (``ints`` and ``out`` then partly mixed).

    It stays one function: ``mix_block``, run on every row block by several threads, closes over the constants and
    per-thread scratch buffers set up here once, which split-out helpers would have to be handed block by block."""
    n, m = ints.shape
    live_before, n_live, h_total = _live_columns(live, h)
    unit = 1.0 / denominator  # a power of two: exact
    scale = float(denominator)
    v = W * 2.0 ** (denominator.bit_length() - 1 - P)  # W D / 2^P, a double (W < 2^31, a power of two times it)
    h_floats = h * unit  # h_y / D: exact (h_y ≤ D)
    all_live = bool(live.all())
    blocks = list(row_blocks(n, m))
    step = blocks[0].stop if n else 0
    aggregators: list[ColumnAggregator] = []

    def buffers():
        """One thread's scratch blocks, reused from block to block, and its column aggregates (exact integers)."""
        aggregators.append(ColumnAggregator(m))
        return np.empty((step, m)), np.empty((step, m)), np.empty((step, m), dtype=bool), aggregators[-1]

    corrected: dict[int, np.ndarray] = {}

    def shifted_h(short: int) -> np.ndarray:
        """(h_y ± 1) / D per column for a row short by R_x = ``short``: h_y / D plus sign(R_x) / D on the first
        |R_x| live columns, the row's corrections below (exact: multiples of 2^−k in [−2^−k, 1 + 2^−k])."""
        row = corrected.get(short)
        if row is None:
            chosen = live_before < abs(short)
            if not all_live:
                chosen &= live
            row = h_floats + np.where(chosen, np.sign(short) * unit, 0.0)
            corrected[short] = row  # (a dict write: atomic under the GIL, and equal rows from any thread)
        return row

    def mix_block(rows: slice, scratch) -> bool:
        """Mix the block ``rows`` (floats to ``out``, integers over ``ints``); False when it fails its check."""
        prod, low, flags, aggregates = scratch
        count = rows.stop - rows.start
        a = source[rows]
        p = np.multiply(a, v, out=prod[:count])  # fl(w A)
        f = np.floor(p, out=low[:count])
        integral = np.equal(p, f, out=flags[:count])  # p integral: ⌊w A⌋ is p or p − 1
        if integral.any():
            exact_at = np.flatnonzero(integral.ravel())
            exact_at = exact_at[f.ravel()[exact_at] > 0]  # p = 0 means w A = 0 (A ≥ 0)
            if exact_at.size:
                f.ravel()[exact_at] = _floor_scaled(ints[rows].ravel()[exact_at], W, P)
        short = f.sum(axis=1).astype(np.int64) - h_total  # R_x (exact: integers, Σ ≤ w D < 2^53)
        top = int(np.abs(short).max()) if short.size else 0
        if top > n_live:
            return False
        f *= unit  # ⌊w A⌋ / D, exact
        np.subtract(a, f, out=f)  # (A − ⌊w A⌋) / D ≥ 0, exact (in the scratch block: one write to `out` below)
        target = out[rows]
        if top and short[0] == short[-1] and (short == short[0]).all():
            # every row of the block has the same R_x (k-RR: equal rows up to order): its ±1 corrections are one row
            # vector, added with h (the same sums, each exact: (A − ⌊w A⌋ + h_y ± 1) / D, no masked pass over the head)
            np.add(f, shifted_h(int(short[0])), out=target)
            top = 0
        else:
            np.add(f, h_floats, out=target)  # (A − ⌊w A⌋ + h_y) / D ≤ (D + 1) / D, exact
        if top:
            width = min(m, int(np.searchsorted(live_before, top)) + 1)  # holds the first `top` live columns
            head = target[:, :width]
            # the flags of ⌊w A⌋'s integral test are free again: the mask of the corrections goes there (a fresh
            # one, and the `&` with the live columns when all are live, cost as much as the masked add itself)
            chosen = np.less(live_before[:width], np.abs(short)[:, None], out=flags[:count, :width])
            if not all_live:
                chosen &= live[:width]
            np.add(head, (np.sign(short) * unit)[:, None], out=head, where=chosen)
        block = ints[rows]
        # the extremes from the exact floats: an entry outside [0, D] fails the check (as rows_stochastic's range
        # test), and the others, in [0, 1], are converted from 1 + A''/D by their bits (exact when D = 2^52)
        maxima, minima = column_extremes_of_grid_floats(target, denominator)
        if (minima < 0).any() or (maxima > denominator).any():
            return False
        if denominator == 1 << 52:
            grid_ints_from_shifted(np.add(target, 1.0, out=p), block)  # the integers A'' (exact)
        else:
            np.copyto(block, np.multiply(target, scale, out=p), casting="unsafe")  # the integers A'' (exact)
        if not rows_stochastic(block, denominator, maxima, minima):
            return False
        aggregates.add(block, maxima, minima)
        return True

    # on the process's threads (certify/parallel_rows.py): every block on its own
    passed = map_row_blocks(mix_block, blocks, n * m, scratch=buffers, stop=lambda ok: not ok)
    if passed and not passed[-1]:
        return None
    return ColumnAggregator.combined(aggregators, m)


def mix_on_grid_in_place(
    ints: np.ndarray,
    denominator: int,
    c: Fraction,
    bound: Fraction,
    aggregates: tuple[np.ndarray, np.ndarray, np.ndarray],
    floats: np.ndarray | None = None,
    source: np.ndarray | None = None,
) -> tuple[Fraction, tuple[np.ndarray, np.ndarray, np.ndarray] | None] | None:
    """:func:`mechdesign.certify.grid_repair.mix_on_grid` written over ``ints`` (a writeable int64 array the
    caller owns, entries ≥ 0, rows summing to ``denominator`` = 2^k, k ≤ 52, with column ``aggregates``): the
    same weight w and the same integers A'', with the column aggregates of A'' folded in the same pass and, when
    ``floats`` is given, A'' / 2^k written to it.

    Returns None, with ``ints`` untouched, where the copying version would not mix in one pass (no weight below 1
    meets (★), no column constrains it) and also where a −1 of the row corrections could meet an entry 0 (a live
    column with h_y = ⌊w s_y / N⌋ = 0: the copying version then gives up on finding an entry below 0, which this
    one would find only after writing); the caller then repairs as before. Otherwise (w, aggregates of A''), with aggregates None when a block failed its check
    (entries ≥ 0, rows summing to 2^k: the integers are then partly mixed, and the caller starts again from
    its own copy of the kernel).

    ``source``: ``ints / denominator`` as floats (exact), when the caller has them; the mix is then computed from
    them (:func:`mix_rows_from_floats`, same integers) and A'' / 2^k is written to ``floats`` (required then; it
    may be ``source``)."""
    plan = mixing_plan(ints, denominator, c, bound, aggregates)
    if plan is None or plan[0] == 0:
        return None
    weight, W, P, h, live = plan
    if (h[live] < 1).any():
        return None  # an entry A − ⌊wA⌋ + h_y could be 0 and take a −1: the copying version decides
    if source is not None:
        if floats is None:
            raise ValueError("mix_on_grid_in_place: a float source needs a float output (floats)")
        return weight, mix_rows_from_floats(ints, source, denominator, W, P, h, live, floats)
    return weight, mix_rows_in_place(ints, denominator, W, P, h, live, floats)


def coarse_probe_columns(ints: np.ndarray, from_bits: int, drops, ys) -> dict[int, np.ndarray]:
    """For each d in ``drops`` (1 ≤ d ≤ 16): the columns ``ys`` of the rounding of ``ints / 2^from_bits`` to the
    grid 2^−(from_bits − d), exactly as :meth:`mechdesign.certify.grid_repair.CoarseRounding.columns` has them
    (⌊A / 2^d⌋ plus 1 for each row's deficit_x largest remainders A mod 2^d, ties to the lower column), every
    grid in one pass over blocks of rows: a row's remainders, its deficit (Σ remainders / 2^d), its threshold
    t_x (the deficit_x-th largest remainder, from a radix sort of the 8/16-bit remainders), and for the entries
    at the threshold the count of ties left of them (sums of ``rem == t_x`` between the probed columns)."""
    n, m = ints.shape
    ys = np.asarray(list(ys), dtype=np.int64)
    drops = list(drops)
    out = {d: np.empty((n, ys.size), dtype=np.int64) for d in drops}
    if not ys.size or n == 0 or m == 0:
        return {d: ints[:, ys] >> d for d in drops}
    cuts = np.unique(ys[ys > 0])  # ties left of column y = Σ over the segments [0, cuts[0]), [cuts[0], cuts[1]), …
    starts = np.concatenate(([0], cuts))
    segment_of = np.searchsorted(cuts, ys, side="right") - 1  # y = cuts[k] → k; y = 0 → −1 (no ties before)
    blocks = list(row_blocks(n, m, PROBE_BLOCK_ENTRIES))
    step = blocks[0].stop

    def buffers():
        """One thread's scratch blocks, reused from block to block (fresh temporaries of this size would be fresh
        pages each time)."""
        remainders = {
            small: (np.empty((step, m), dtype=small), np.empty((step, m), dtype=small))
            for small in {np.uint8 if d <= 8 else np.uint16 for d in drops}
        }
        return remainders, np.empty((step, m), dtype=bool)

    def round_block(rows: slice, scratch) -> None:
        """The probe columns of the block ``rows``, rounded to each grid, written to ``out``."""
        remainders, flags = scratch
        block = ints[rows]
        count = block.shape[0]
        probed = block[:, ys]  # the probe entries of the block (in cache), ⌊A / 2^d⌋ below
        mark = flags[:count]
        for d in drops:
            small = np.uint8 if d <= 8 else np.uint16
            rem, ascending = (buffer[:count] for buffer in remainders[small])
            np.copyto(rem, block, casting="unsafe")  # A mod 2^8 (2^16), as A ≥ 0 (what astype gives)
            if d not in (8, 16):
                rem &= (1 << d) - 1
            deficit = rem.sum(axis=1, dtype=np.int64) >> d  # Σ_y ⌊A / 2^d⌋ = (2^from_bits − Σ rem) / 2^d
            ascending[...] = rem
            ascending.sort(axis=1, kind="stable")  # radix sort of 8/16-bit keys
            at = np.clip(m - deficit, 0, m - 1)
            threshold = ascending[np.arange(count), at][:, None]
            adds = (deficit > 0)[:, None]
            np.greater(rem, threshold, out=mark)
            above = np.add.reduce(mark.view(np.uint8), axis=1, dtype=np.int32)  # a count: 0 or 1 each
            wanted = np.where(deficit > 0, deficit - above, 0)[:, None]
            np.equal(rem, threshold, out=mark)
            segments = np.add.reduceat(mark.view(np.uint8), starts, axis=1, dtype=np.int32)
            before = np.cumsum(segments, axis=1, dtype=np.int32)
            ties_before = np.where(segment_of >= 0, before[:, np.maximum(segment_of, 0)], 0)
            r = rem[:, ys]
            np.right_shift(probed, d, out=out[d][rows])
            out[d][rows] += ((r > threshold) & adds) | ((r == threshold) & (ties_before < wanted))

    map_row_blocks(round_block, blocks, n * m, scratch=buffers)  # on the process's threads (parallel_rows.py)
    return out


def coarse_column(ints: np.ndarray, d: int, y: int) -> np.ndarray:
    """Column ``y`` of the rounding of ``ints / 2^k`` (rows summing to 2^k) to the grid 2^−(k − d), 1 ≤ d ≤ 16, over
    every row, exactly as :func:`coarse_probe_columns` has it, without sorting a row: C_xy = ⌊A_xy / 2^d⌋ + β_xy,
    and β_xy = 1 exactly when fewer than deficit_x entries of row x come before it in the order of the rounding
    (remainder A mod 2^d descending, ties to the lower column), i.e. when

        #{y' : r_xy' > r_xy} + #{y' < y : r_xy' = r_xy} < deficit_x = Σ_y' r_xy' / 2^d.

    (The threshold form of :func:`coarse_probe_columns` says the same: an entry above the deficit_x-th largest
    remainder t_x has fewer than deficit_x entries before it, one below t_x at least deficit_x, and one at t_x is
    taken when the ties left of it are fewer than deficit_x minus the entries above t_x.) Two comparisons and two
    counts per entry: a third of the sort-based rounding of the same rows."""
    n, m = ints.shape
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    small = np.uint8 if d <= 8 else np.uint16
    blocks = list(row_blocks(n, m, PROBE_BLOCK_ENTRIES))
    step = blocks[0].stop

    def buffers():
        return np.empty((step, m), dtype=small), np.empty((step, m), dtype=bool)

    def round_block(rows: slice, scratch) -> None:
        remainders, flags = scratch
        block = ints[rows]
        count = block.shape[0]
        rem, mark = remainders[:count], flags[:count]
        np.copyto(rem, block, casting="unsafe")  # A mod 2^8 (2^16), as A ≥ 0
        if d not in (8, 16):
            rem &= (1 << d) - 1
        deficit = rem.sum(axis=1, dtype=np.int64) >> d
        mine = rem[:, y : y + 1]
        np.greater(rem, mine, out=mark)
        before = np.add.reduce(mark.view(np.uint8), axis=1, dtype=np.int64)
        if y:
            ties = np.equal(rem[:, :y], mine, out=mark[:, :y])
            before += np.add.reduce(ties.view(np.uint8), axis=1, dtype=np.int64)
        np.add(block[:, y] >> d, before < deficit, out=out[rows])

    map_row_blocks(round_block, blocks, n * m, scratch=buffers)  # on the process's threads (parallel_rows.py)
    return out


def coarse_probe_fails(
    ints: np.ndarray, from_bits: int, d: int, ys, c: Fraction, bound: Fraction, entries: np.ndarray | None = None
) -> tuple[bool, np.ndarray | None]:
    """Whether a column ``ys`` of the rounding of ``ints / 2^from_bits`` to the grid 2^−(from_bits − d)
    (:class:`mechdesign.certify.grid_repair.CoarseRounding`) breaks (ε, Q_X(c))-PML against E = ``bound``, decided
    from as few rows' roundings as it takes: (True, None) when a column is shown to break it, else (False, the
    exact rounded columns, as :func:`coarse_probe_columns` gives them).

    A rounded entry is C_xy = ⌊A_xy / 2^d⌋ + β_xy with β_xy ∈ {0, 1}, and β_xy = 0 when A_xy mod 2^d = 0 (a row's
    deficit is Σ remainders / 2^d, less than the count of its nonzero remainders, so its threshold remainder is
    > 0). Before a row is rounded, C_xy lies in [⌊A_xy / 2^d⌋, ⌈A_xy / 2^d⌉]; with the rounded rows exact, per
    column

        max_x C_xy ≥ L = max_x lower_xy,     c Σ_x C_xy + (1 − Nc) min_x C_xy ≤ U = c Σ_x upper_xy + (1 − Nc) min_x upper_xy

    (c ≥ 0, 1 − Nc ≥ 0), and L > E U (or L > 0 with U ≤ 0) proves the column breaks the Lemma-4 constraint of the
    Dobrushin paper, as the exact check would find. The rows are rounded in stages, checking after each: first the
    two rows of the likeliest column's largest and smallest ⌊A / 2^d⌋ (the last such column among equal ones: a
    k-RR kernel, every column equal up to order, is decided by them, at N = 1000 2 rows instead of 64), then the
    row of each column's largest and of its smallest ⌊A / 2^d⌋ (which pin its maximum and minimum), then one probe
    column, the likeliest to break, rounded exactly over every row without sorting them (:func:`coarse_column`; its
    exact verdict: at N = 3000 the unknown rows' share of the Lemma-4 sum keeps U loose until 61 % of the rows are
    rounded, 30 ms of radix sorts against 12 ms for the one column), then the rows
    in chunks ending at N/8, N/4, N/2, 5N/8, 3N/4, 7N/8, N (the unknown rows' share of the Lemma-4 sum is what
    keeps U loose); once every row is rounded, L and U are the exact maximum
    and Lemma-4 minimum, so the verdict is the exact one (and the exact columns are returned).

    ``entries``: ``ints[:, ys]``, when the caller has it (the same probe on several grids).

    It stays one function: the stages share the running bounds L and U and the rows rounded so far (the closures
    below update them in place), which split-out helpers would have to pass back and forth."""
    n = ints.shape[0]
    ys = np.asarray(list(ys), dtype=np.int64)
    if ys.size == 0 or n == 0:
        return False, coarse_probe_columns(ints, from_bits, [d], ys)[d]
    cp, cq = c.numerator, c.denominator
    rest = cq - n * cp  # cq (1 − Nc) ≥ 0
    p, r = bound.numerator, bound.denominator
    entries = ints[:, ys] if entries is None else entries
    lower = entries >> d
    upper = entries + ((1 << d) - 1)
    upper >>= d  # ⌈A / 2^d⌉ (A ≥ 0, A + 2^d − 1 < 2^53: no overflow)
    exact = np.empty_like(lower)
    known = np.zeros(n, dtype=bool)
    top, bottom = lower.max(axis=0), upper.min(axis=0)
    total = exact_sums(upper, axis=0, largest=1 << max(0, from_bits - d))  # Python ints: exact at any N

    def shown_to_break() -> bool:
        for a, s, b in zip(top.tolist(), total.tolist(), bottom.tolist()):
            if a == 0:
                continue  # perhaps an all-zero column: no ratio
            low = cp * s + rest * b  # ≥ cq · (c Σ C + (1 − Nc) min C)
            if low <= 0 or a * cq * r > p * low:
                return True
        return False

    def likeliest_breaking(last: bool = False) -> int:
        """The probe column (index into ``ys``) closest to being shown to break: the largest L / U (the unknown
        rows' share of U is about the same in every column), the one to round exactly over every row first; among
        equal ratios the first, or with ``last`` the one of the largest column (the rounding gives its +1s to the
        lower columns first among equal remainders, so the last column of equal columns is rounded down most)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = top / (float(c) * total.astype(float) + (1 - n * float(c)) * bottom)
        ratio = np.where(np.isnan(ratio), -np.inf, ratio)
        if not last:
            return int(np.argmax(ratio))
        tied = np.flatnonzero(ratio == ratio.max())
        return int(tied[np.argmax(ys[tied])])

    def column_breaks(j: int) -> bool:
        """Whether probe column ``ys[j]``, rounded exactly over every row (:func:`coarse_column`), breaks the
        Lemma-4 constraint: the exact verdict for that column, which the stages below would reach too."""
        column = coarse_column(ints, d, int(ys[j]))
        a = int(column.max())
        if a == 0:
            return False
        s = int(exact_sums(column[:, None], axis=0, largest=1 << max(0, from_bits - d))[0])
        low = cp * s + rest * int(column.min())
        return low <= 0 or a * cq * r > p * low

    def learn(rows) -> None:
        """Round the rows ``rows`` (indices, or a slice: a view of the kernel, no copy) and tighten L and U."""
        nonlocal top, total, bottom
        if isinstance(rows, slice):
            got = coarse_probe_columns(ints[rows], from_bits, [d], ys)[d]
            fresh = ~known[rows]
            rows = np.arange(n)[rows][fresh]
            got = got[fresh]
        else:
            rows = rows[~known[rows]]
            got = coarse_probe_columns(ints[rows], from_bits, [d], ys)[d]
        if not rows.size:
            return
        exact[rows] = got
        known[rows] = True
        top = np.maximum(top, got.max(axis=0))
        total = total - (upper[rows] - got).sum(axis=0)
        bottom = np.minimum(bottom, got.min(axis=0))

    if shown_to_break():
        return True, None
    # the two rows pinning the likeliest column's maximum and minimum first: they decide a kernel of equal columns
    # (k-RR) on their own, before the rows of every probe column's extremes
    j = likeliest_breaking(last=True)
    learn(np.unique(np.array([np.argmax(lower[:, j]), np.argmin(lower[:, j])])))
    if shown_to_break():
        return True, None
    learn(np.unique(np.concatenate((np.argmax(lower, axis=0), np.argmin(lower, axis=0)))))
    if shown_to_break():
        return True, None
    if not known.all() and column_breaks(likeliest_breaking()):
        return True, None
    cuts = [0, n // 8, n // 4, n // 2, 5 * n // 8, 3 * n // 4, 7 * n // 8, n]
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        learn(slice(lo, hi))
        if not known.all() and shown_to_break():
            return True, None
    return shown_to_break(), exact  # every row rounded: the exact verdict
