"""Exact certificates: every kernel that leaves mechdesign passes through here.

1. :func:`to_grid` rounds the solver's floats to an exact rational kernel on
   the grid 2^−52 (clipping negatives, rows summing to exactly 1). Such numbers
   are all exact doubles, so the float kernel a user receives *is* the exact
   kernel that was checked.
2. :func:`check_pml` verifies (ε,𝒫)-PML exactly: for every output y,
       max_x K_x(y) ≤ E · min_{P∈𝒫} P·K(:,y),
   where E ≤ e^ε is a rational lower bound (interval arithmetic on the ε
   expression), so passing with E implies passing with e^ε.
3. :func:`repair` mixes a failing kernel with the constant kernel whose rows
   are the mean row q (zero leakage): K' = (1−w)K + w·1qᵀ. For one column the
   smallest weight is w = v / (v + q_y(E − 1)) with v = max_x K_x(y) − E·min_P P·K(:,y).
   For 𝒫 = Q_X(c) on the grid the weight, with a margin of 2(1 + E) grid units for the
   rounding, is mixed in one exact integer pass that passes by construction
   (:mod:`mechdesign.certify.grid_repair`); otherwise the weight is raised a little,
   re-gridded and re-checked until it passes.
4. Coarser grids (rational kernels with small denominators): ``to_grid(K, bits)``
   and ``repair(..., bits=k)`` round to the grid 2^−k (k ≤ 52, so entries stay
   exact doubles). Rounding moves every entry by < 2^−k, which can break a tight
   constraint; the repair then mixes the fine kernel with the constant kernel by
   the smallest weight (found by doubling, then bisection) whose coarse rounding
   passes the exact check.
5. :func:`verify_kernel` is the verifier behind ``mechdesign verify``: the same
   :func:`check_pml` against E ≤ e^ε, plus an upper bound U ≥ e^ε so that a
   rejection is rigorous too (a ratio in (E, U] is re-checked at higher precision).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.certify.grid_arith import (
    INT64_ENTRY_LIMIT,
    column_aggregates,
    column_classes,
    exact_sums,
    int64_numerators,
    largest_in_rows,
)
from mechdesign.certify.fused import (
    ColumnAggregator,
    coarse_probe_fails,
    column_extremes_of_grid_floats,
    grid_ints_from_shifted,
    row_blocks,
)
from mechdesign.certify.grid_repair import CoarseRounding, mix_on_grid, mixing_weight_on_grid
from mechdesign.certify.lemma4 import Lemma4Ratios, lemma4_worst
from mechdesign.certify.parallel_rows import map_row_blocks
from mechdesign.lp.rounding import float_or_inf, log_of_rational
from mechdesign.privacy.priors import min_expectation, rules
from mechdesign.spec.models import PriorSet

__all__ = [
    "ExactKernel",
    "GridKernel",
    "PMLCheck",
    "Verification",
    "to_grid",
    "check_pml",
    "repair",
    "verify_kernel",
    "grid_bits",
    "GRID_BITS",
]

GRID_BITS = 52
GRID = 1 << GRID_BITS


@dataclass(frozen=True)
class ExactKernel:
    """K = numerators / denominator, with numerators an (N, M) object array of Python ints."""

    numerators: np.ndarray
    denominator: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.numerators.shape

    def int64(self) -> np.ndarray | None:
        """The numerators as int64 when every one has magnitude ≤ 2^62 (any kernel on a grid 2^−k,
        k ≤ 52), else None; the exact aggregates of :mod:`mechdesign.certify.grid_arith` run on it."""
        cached = self.__dict__.get("_int64", False)
        if cached is False:
            cached = int64_numerators(self.numerators)
            object.__setattr__(self, "_int64", cached)
        return cached

    def column_aggregates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(maxima, minima, exact sums) of the int64 numerators per column
        (:func:`mechdesign.certify.grid_arith.column_aggregates`), computed once and shared by the exact
        check and the repair; None when the numerators do not fit in int64."""
        cached = self.__dict__.get("_aggregates")
        if cached is None:
            ints = self.int64()
            if ints is None or ints.ndim != 2:
                return None
            cached = column_aggregates(ints)
            object.__setattr__(self, "_aggregates", cached)
        return cached

    def known_column_aggregates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`column_aggregates` when they are already held (folded by the pass that made the kernel, or
        computed once for the exact check), else None: never a pass over the kernel."""
        return self.__dict__.get("_aggregates")

    def to_float(self) -> np.ndarray:
        """The kernel as floats (exact when every entry is a double, as on any grid 2^−k, k ≤ 52)."""
        if grid_bits(self) is not None:
            # exact: integers < 2^53 convert exactly and dividing by a power of two is exact
            ints = self.int64()
            nums = ints if ints is not None else self.numerators
            out = nums.astype(np.float64)
            out /= float(self.denominator)  # in place: one fresh N × M array, not two
            return out
        return np.array([[float(Fraction(int(v), self.denominator)) for v in row] for row in self.numerators])

    def fractions(self) -> list[list[Fraction]]:
        return [[Fraction(int(v), self.denominator) for v in row] for row in self.numerators]

    def strings(self) -> list[list[str]]:
        """Each entry as the text of its reduced fraction ("p/q", "p" when q = 1), as ``str(Fraction)``
        writes it. On a grid 2^−k the reduction is by the entry's lowest set bit, in int64 (no Fraction
        per entry: the JSON of a 3000 × 3000 kernel is 4× faster)."""
        ints = self.int64() if grid_bits(self) is not None else None
        if ints is None or ints.ndim != 2:
            return [[str(q) for q in row] for row in self.fractions()]
        den = self.denominator
        common = np.where(ints == 0, den, np.minimum(ints & -ints, den))  # gcd(A, 2^k): lowest set bit, ≤ 2^k
        nums, dens = (ints // common).tolist(), (den // common).tolist()
        return [[f"{a}/{b}" if b != 1 else str(a) for a, b in zip(rn, rd)] for rn, rd in zip(nums, dens)]

    def is_stochastic(self) -> bool:
        ints = self.int64()
        if ints is not None:
            if ints.size and ints.min() < 0:
                return False
            largest = int(ints.max()) if ints.size else 0
            return all(s == self.denominator for s in exact_sums(ints, axis=1, largest=largest).tolist())
        return bool(np.all(self.numerators >= 0)) and all(
            int(s) == self.denominator for s in self.numerators.sum(axis=1)
        )

    @classmethod
    def from_fractions(cls, rows) -> "ExactKernel":
        rows = [[Fraction(v) for v in row] for row in rows]
        den = 1
        for row in rows:
            for v in row:
                den = den * v.denominator // math.gcd(den, v.denominator)
        nums = np.array([[int(v * den) for v in row] for row in rows], dtype=object)
        return cls(nums, den)


class GridKernel(ExactKernel):
    """An :class:`ExactKernel` held as int64 numerators (entries of magnitude ≤ 2^62, as on every grid
    2^−k with k ≤ 52): what :func:`to_grid` and :func:`repair` return. ``numerators`` (the object
    array of Python ints of the base class) is built on first use and read-only; the exact checks use
    the int64 array directly, so certifying an N × M kernel costs O(NM) machine operations."""

    def __init__(self, ints: np.ndarray, denominator: int, stochastic: bool | None = None, aggregates=None) -> None:
        """The kernel takes ``ints`` over (and marks it read-only): pass an array nobody else edits.
        ``stochastic``: True only when the caller has just made every entry ≥ 0 and every row sum
        equal to the denominator (the rounding functions); None: :meth:`is_stochastic` checks.
        ``aggregates``: the exact column (maxima, minima, sums) of ``ints`` when the caller has just folded them
        from the finished array (:class:`mechdesign.certify.fused.ColumnAggregator`): kept for the exact check,
        and the range of the entries is read from them instead of two passes over the array."""
        ints = np.asarray(ints)
        if ints.dtype != np.int64:
            raise TypeError(f"GridKernel needs int64 numerators, found {ints.dtype}")
        if aggregates is not None and ints.ndim == 2 and ints.size:
            largest, smallest = int(aggregates[0].max()), int(aggregates[1].min())
        elif ints.size:
            largest, smallest = int(ints.max()), int(ints.min())
        if ints.size and (largest > INT64_ENTRY_LIMIT or smallest < -INT64_ENTRY_LIMIT):
            raise ValueError("GridKernel numerators must have magnitude <= 2^62")
        ints.flags.writeable = False
        if aggregates is not None:
            object.__setattr__(self, "_aggregates", aggregates)
        object.__setattr__(self, "_int64", ints)
        object.__setattr__(self, "denominator", int(denominator))
        object.__setattr__(self, "_stochastic", stochastic)

    def is_stochastic(self) -> bool:
        if self._stochastic is None:
            object.__setattr__(self, "_stochastic", ExactKernel.is_stochastic(self))
        return self._stochastic

    @property
    def numerators(self) -> np.ndarray:  # type: ignore[override]
        objects = self.__dict__.get("_objects")
        if objects is None:
            objects = self._int64.astype(object)
            objects.flags.writeable = False  # the int64 array is the kernel: no edits behind its back
            object.__setattr__(self, "_objects", objects)
        return objects

    @property
    def shape(self) -> tuple[int, int]:
        return self._int64.shape

    def __reduce__(self):
        return (GridKernel, (np.array(self._int64), self.denominator))


def grid_bits(kernel: ExactKernel) -> int | None:
    """k when the kernel's denominator is 2^k with k ≤ 52 (entries on the grid 2^−k), else None."""
    d = kernel.denominator
    if d & (d - 1) == 0 and d.bit_length() - 1 <= GRID_BITS:
        return d.bit_length() - 1
    return None


def to_grid(K: np.ndarray, bits: int = GRID_BITS) -> ExactKernel:
    """Round a float kernel to the grid 2^−bits (1 ≤ bits ≤ 52) with rows summing exactly to 1.

    At 52 bits, entries are clipped to [0, 1] and rounded to the nearest multiple
    of 2^−52; each row's largest entry then absorbs the rounding remainder. On a
    coarser grid each row is normalised and rounded by largest remainders, so that
    every entry moves by less than 2^−bits.
    """
    if isinstance(K, ExactKernel):
        K = K.to_float()
    if bits != GRID_BITS:
        return _to_coarse_grid(K, bits)
    blocked = _to_fine_grid_by_rows(K)
    if blocked is not None:
        return blocked
    K = _clip_unit(K)
    scaled = K * GRID
    nums = np.rint(scaled, out=scaled).astype(np.int64)
    if nums.size == 0:
        return GridKernel(nums, GRID, stochastic=nums.shape[0] == 0)
    # Σ_y rint(2^52 K_xy) ≤ 2^52 Σ_y K_xy + M/2, and the float row sums are within a factor 1 + M·2^−52
    row_bound = float(K.sum(axis=1).max()) * (1 + nums.shape[1] * 2.0**-52) + 1.0
    rows = exact_sums(nums, axis=1, sum_bound=int(row_bound * GRID) + nums.shape[1])
    big = np.argmax(nums, axis=1)
    at = np.arange(nums.shape[0])
    absorbed = nums[at, big].astype(object) + (GRID - rows)  # each row's largest entry absorbs the remainder
    for x in np.flatnonzero(absorbed < 0):  # only for a row far from stochastic: renormalise instead
        row = K[x] / K[x].sum() if K[x].sum() > 0 else np.full(K.shape[1], 1.0 / K.shape[1])
        return to_grid(np.vstack([K[:x], row[None, :], K[x + 1 :]]))
    nums[at, big] = absorbed.astype(np.int64)  # 0 ≤ value ≤ 2^53: the entries are ≤ 2^52 and rows ≥ 0
    return GridKernel(nums, GRID, stochastic=True)  # every entry ≥ 0, every row sums to 2^52 (just made so)


ROW_BLOCK_ENTRIES = 1 << 17
"""The 2^−52 rounding works on blocks of rows of about this many entries: its float temporaries stay in
cache and only the int64 result is a fresh N × M array (fresh pages cost more than the arithmetic). 2^17 rather
than 2^16: half the numpy calls per pass, 37 → 34 ms at N = 3000 (2^15: 41 ms, 2^18: 35 ms)."""


def _to_fine_grid_by_rows(K, floats: np.ndarray | None = None) -> GridKernel | None:
    """:func:`to_grid` at 52 bits, block of rows by block of rows, with the same result (each row is rounded on
    its own: clip, rint(2^52 K), the largest entry absorbs the remainder); None when a row is far from
    stochastic (the full function renormalises it) or a row sum could leave int64.

    Each finished block is also folded into the kernel's exact column aggregates
    (:class:`mechdesign.certify.fused.ColumnAggregator`, cached for the exact check) and, when ``floats`` (an
    N × M float64 array) is given, written to it as the kernel's floats (A / 2^52, exact). ``floats`` may be ``K``
    itself (the certify stage's own copy of the solver's kernel, :func:`mechdesign.certify.stage.certify_on_fine_grid`):
    each block is read into a scratch block and written only once it has passed (a row far from stochastic returns
    None before its block is written), and a row written over holds its own rounding, whose rounding is itself (rows
    on the grid summing to exactly 1), so a reader of ``K`` after (or during) the pass rounds it to the same
    integers, and so does the caller's fallback after None.

    Per block (few passes over the entries): clip to [0, 1] (``np.clip``, one pass; a row holding a
    NaN, which ``np.clip`` keeps, is clipped again as :func:`_clip_unit` does, NaN → 0), then 1 + x in floats,
    which is 1 + rint(2^52 x) 2^−52 exactly (the doubles in [1, 2] are the multiples of 2^−52, and both round half
    to even): its bits minus those of 1.0 are the integers rint(2^52 x) (:func:`mechdesign.certify.fused.grid_ints_from_shifted`),
    and minus 1 (exact) the rounded floats, which are the float kernel but for the N absorbing entries, patched
    after; the column maxima and minima are then read from those exact floats (float reductions, 4× faster than
    int64 ones)."""
    K = np.asarray(K, float)
    if K.ndim != 2 or K.size == 0:
        return None
    n, m = K.shape
    out = np.empty((n, m), dtype=np.int64)
    blocks = list(row_blocks(n, m, ROW_BLOCK_ENTRIES))  # ≤ SUM_ROWS rows: a block's column sums fit in int64
    step = blocks[0].stop
    row_limit = 1 << 9
    aggregators: list[ColumnAggregator] = []

    def buffers():
        """One thread's scratch blocks, reused from block to block (a fresh one would be fresh pages), and its
        column aggregates (exact integers: the threads' are combined after, in any order)."""
        aggregators.append(ColumnAggregator(m))
        return np.empty((step, m)), aggregators[-1]

    def round_block(rows: slice, scratch) -> bool:
        """Round the block ``rows`` into ``out`` (and ``floats``); False for a row far from stochastic."""
        clipped, aggregates = scratch
        count = rows.stop - rows.start
        block = np.clip(K[rows], 0.0, 1.0, out=clipped[:count])  # NaN stays NaN here
        # Σ_y rint(2^52 K_xy) ≤ 2^52 Σ_y K_xy + M/2 (float row sums within a factor 1 + M·2^−52): int64 when small
        top = float(block.sum(axis=1).max()) * (1 + m * 2.0**-52)
        if not top <= row_limit:  # a NaN (or a large row): clip as _clip_unit does (fmax ignores NaN), then test
            np.fmax(K[rows], 0.0, out=block)
            np.fmin(block, 1.0, out=block)
            if float(block.sum(axis=1).max()) * (1 + m * 2.0**-52) > row_limit:
                return False
        block += 1.0  # 1 + rint(2^52 x) 2^−52: the doubles in [1, 2] are the multiples of 2^−52 (ties to even)
        nums = out[rows]
        grid_ints_from_shifted(block, nums)  # rint(2^52 x) from the bits of 1 + rint(2^52 x) 2^−52, exact
        block -= 1.0  # rint(2^52 x) 2^−52 exactly (Sterbenz), +0.0 for −0.0
        sums = nums.sum(axis=1)
        big = np.argmax(nums, axis=1)
        at = np.arange(count)
        absorbed = nums[at, big] + (GRID - sums)  # each row's largest entry absorbs the remainder
        if (absorbed < 0).any():
            return False  # a row far from stochastic: the full function renormalises it
        nums[at, big] = absorbed  # 0 ≤ value ≤ 2^52: the entries are ≥ 0 and the row sums to 2^52
        block[at, big] = absorbed * (1.0 / GRID)  # exact: integers ≤ 2^52, a power of two: the block is nums / 2^52
        aggregates.add(nums, *column_extremes_of_grid_floats(block, GRID))  # the extremes from the exact floats
        if floats is not None:  # written only now: a block that failed above left floats (and K) as they were
            np.copyto(floats[rows], block)
        return True

    # on the process's threads (certify/parallel_rows.py): every block on its own, the aggregates exact integers
    passed = map_row_blocks(round_block, blocks, n * m, scratch=buffers, stop=lambda ok: not ok)
    if not passed[-1]:
        return None  # a row far from stochastic (the blocks written over hold their own rounding, as above)
    # every entry ≥ 0, every row sums to 2^52 (just made so)
    return GridKernel(out, GRID, stochastic=True, aggregates=ColumnAggregator.combined(aggregators, m))


def _clip_unit(K) -> np.ndarray:
    """K as a new float array clipped to [0, 1], NaN → 0 (fmax ignores NaN; ±inf clip to 1 and 0)."""
    out = np.fmax(np.asarray(K, float), 0.0)
    return np.fmin(out, 1.0, out=out)


def _coarse_parts(K: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The pieces of the rounding to the grid 2^−bits: (floor(2^bits·K̂) as int64, the remainders, each
    row's deficit 2^bits − Σ floor (Python ints), 2^bits), K̂ the row-normalised, clipped kernel."""
    if not 1 <= bits <= GRID_BITS:
        raise ValueError(f"bits must be in [1, {GRID_BITS}], found {bits}")
    G = 1 << bits
    K = _clip_unit(K)  # a new array: the steps below work in place
    sums = K.sum(axis=1, keepdims=True)
    if (sums > 0).all():
        K /= sums
    else:
        flat = np.full(K.shape[1], 1.0 / K.shape[1])
        K = np.where(sums > 0, K / np.where(sums > 0, sums, 1.0), flat[None, :])
    K *= G  # exact: multiplication by a power of two
    base = np.floor(K)
    out = base.astype(np.int64)
    frac = np.subtract(K, base, out=K)
    return out, frac, G - exact_sums(out, axis=1, largest=G), G


def _to_coarse_grid(K: np.ndarray, bits: int) -> ExactKernel:
    out, frac, deficit, G = _coarse_parts(K, bits)
    m = out.shape[1]
    regular = np.array([0 <= d <= m for d in deficit.tolist()], dtype=bool)
    if regular.any():
        # each row's `deficit` entries with the largest remainders (ties: lower index first) get +1
        out[regular] += largest_in_rows(frac[regular], deficit[regular].astype(np.int64))
    for x in np.flatnonzero(~regular):  # float normalisation far off (cannot happen for finite rows)
        big = int(np.argmax(out[x]))
        value = int(out[x, big]) + int(deficit[x])
        if value < 0:
            raise ValueError("cannot round a row to the grid")
        out[x, big] = value
    return GridKernel(out, G, stochastic=True)  # entries ≥ 0, every row sums to 2^bits (just made so)


def _coarse_column_fails(K: np.ndarray, bits: int, ys, prior_set: PriorSet, bound: Fraction) -> bool:
    """True when a column y ∈ ``ys`` of ``to_grid(K, bits)`` alone already breaks (ε, Q_X(c))-PML against
    ``bound`` (then the whole rounded kernel fails the exact check); False when they pass or it cannot be
    decided this way (𝒫 not a Q_X(c), or a row whose rounding is irregular).

    The column is computed exactly as :func:`_to_coarse_grid` computes it: entry (x, y) gets +1 when
    fewer than deficit_x entries of row x have a larger remainder or an equal one at a lower index
    (the order of the stable sort). O(NM) comparisons, no sort: a cheap test before a full rounding."""
    n, m = np.shape(K)
    c = rules(prior_set, n).equivalent_c()
    ys = [y for y in ys if 0 <= y < m]
    if c is None or not ys:
        return False
    c = Fraction(c)
    out, frac, deficit, _ = _coarse_parts(K, bits)
    if not all(0 <= d <= m for d in deficit.tolist()):
        return False
    deficit = deficit.astype(np.int64)
    for y in ys:
        f = frac[:, y : y + 1]
        rank = (frac > f).sum(axis=1) + (frac[:, :y] == f).sum(axis=1)
        column = out[:, y] + (rank < deficit)
        mx, mn, total = int(column.max()), int(column.min()), int(exact_sums(column[:, None], axis=0)[0])
        if mx == 0:
            continue
        low = c.numerator * total + (c.denominator - n * c.numerator) * mn  # c.denominator · min_P P·k
        if low <= 0 or mx * c.denominator * bound.denominator > bound.numerator * low:
            return True
    return False


@dataclass(frozen=True)
class PMLCheck:
    """Result of the exact check. ``ratios[y]`` = max_x K_x(y) / min_P P·K(:,y) (None for a zero column)."""

    feasible: bool
    stochastic: bool
    bound: Fraction
    """The rational E ≤ e^ε checked against."""
    ratios: list[Fraction | None]
    worst_output: int | None
    worst_prior: list[Fraction] | None
    worst_ratio: Fraction | float | None

    @property
    def leakage(self) -> float:
        """sup_{P∈𝒫} max_y ℓ(X→y) in nats (0 for an empty kernel, inf if a ratio is unbounded)."""
        if self.worst_ratio is None:
            return 0.0
        if self.worst_ratio == math.inf:
            return math.inf
        q = Fraction(self.worst_ratio)
        # log of the correctly rounded ratio: log(num) − log(den) of two ~2^52-sized integers loses ~4e-15
        # absolute and reported a leakage above eps for a kernel that passed the exact check
        f = float_or_inf(q)  # inf beyond the doubles (a prior mass of 5e-324 at eps = 1e4)
        if 0 < f < math.inf:
            return math.log(f)
        return log_of_rational(q)


def _column_minima(prior_set: PriorSet, nums: np.ndarray) -> list[tuple[Fraction, list[Fraction] | None]]:
    """min_P P·K(:,y) (in units of the common denominator) for every column, exactly."""
    return rules(prior_set, nums.shape[0]).column_minima(nums)


def check_pml(kernel: ExactKernel, prior_set: PriorSet, bound: Fraction) -> PMLCheck:
    """Check exactly that ``kernel`` is row-stochastic and (ε,𝒫)-PML with e^ε replaced by ``bound``."""
    fast = _check_pml_lemma4(kernel, prior_set, bound)
    if fast is not None:
        return fast
    nums = kernel.numerators
    n, m = nums.shape
    stochastic = kernel.is_stochastic()
    maxima = nums.max(axis=0)
    minima = _column_minima(prior_set, nums)
    ratios: list[Fraction | None] = []
    worst = (None, None, None)
    feasible = stochastic
    for y in range(m):
        mx = int(maxima[y])
        if mx == 0:
            ratios.append(None)
            continue
        low, prior = minima[y]
        if low <= 0:
            ratio: Fraction | float = math.inf
            feasible = False
        else:
            ratio = Fraction(mx) / Fraction(low)
            if ratio > bound:
                feasible = False
        ratios.append(ratio if ratio != math.inf else None)
        if worst[2] is None or ratio > worst[2]:
            worst = (y, prior, ratio)
    y, prior, ratio = worst
    if y is not None and prior is None:
        prior = min_expectation(prior_set, n, [int(v) for v in nums[:, y]])[1]
    return PMLCheck(
        feasible=feasible,
        stochastic=stochastic,
        bound=bound,
        ratios=ratios,
        worst_output=y,
        worst_prior=prior,
        worst_ratio=ratio,
    )


def _check_pml_lemma4(kernel: ExactKernel, prior_set: PriorSet, bound: Fraction) -> PMLCheck | None:
    """:func:`check_pml` in O(NM) integer operations when 𝒫 = Q_X(c) for some c (min_mass, the simplex
    with c = 0, the uniform point prior with c = 1/N) and the numerators fit in int64; None otherwise.

    Lemma 4 of the Dobrushin paper: min_{P∈Q_X(c)} P·k = c Σ_x k_x + (1 − Nc) min_x k_x, so each column
    needs its exact maximum, minimum and sum (:func:`mechdesign.certify.grid_arith.column_aggregates`)
    and one exact rational comparison. Same verdict, ratios and worst prior as the generic check.
    """
    ints = kernel.int64()
    if ints is None or ints.ndim != 2:
        return None
    n = ints.shape[0]
    c = rules(prior_set, n).equivalent_c()
    if c is None:
        return None
    c = Fraction(c)
    memo = kernel.__dict__.get("_lemma4_checks")
    if memo is None:  # the kernel never changes: a second check against the same (c, E) is a look-up
        memo = {}
        object.__setattr__(kernel, "_lemma4_checks", memo)
    if (c, bound) in memo:
        return memo[c, bound]
    aggregates = kernel.column_aggregates()
    ratios = Lemma4Ratios(aggregates, c, n)  # the Fractions of every column, made when read (certify/lemma4.py)
    stochastic = kernel.is_stochastic()
    # the largest ratio, first column among ties (the first infinite one when a column is unbounded, as in the
    # generic check); candidates by float value, decided exactly
    worst_y, worst_ratio = lemma4_worst(aggregates, c, n)
    feasible = stochastic and worst_ratio != math.inf and (worst_ratio is None or worst_ratio <= bound)
    prior = None
    if worst_y is not None:
        # the minimising vertex of Q_X(c), c·1 + (1 − Nc)·e_j with j the first smallest entry (Lemma 4)
        j = int(np.argmin(ints[:, worst_y]))
        prior = [c] * n
        prior[j] = c + (1 - n * c)
    memo[c, bound] = PMLCheck(
        feasible=feasible,
        stochastic=stochastic,
        bound=bound,
        ratios=ratios,
        worst_output=worst_y,
        worst_prior=prior,
        worst_ratio=worst_ratio,
    )
    return memo[c, bound]


def _approximate_ratios(aggregates, c: Fraction, n: int, ys: list[int]) -> np.ndarray:
    """The Lemma-4 ratios a_y / (c S_y + (1 − Nc) b_y) of the columns ``ys`` (finite ratios: a_y > 0 and a positive
    denominator) as floats, from the exact column aggregates (a, b, S): each within a relative 1e−15 of the exact
    ratio (products and sums of nonnegative terms, each correctly rounded), without a Fraction per column; the
    correctly rounded float of each exact ratio when an entry is negative (the denominator could cancel in
    floats) or a quotient is not finite in floats."""
    maxima, minima, sums = aggregates
    at = np.array(ys, dtype=np.int64)
    if (minima[at] >= 0).all():
        total = np.array([float(v) for v in sums[at].tolist()], dtype=np.float64)
        low = float(c) * total + float(1 - n * c) * minima[at].astype(np.float64)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            approx = maxima[at].astype(np.float64) / low
        if np.isfinite(approx).all() and (low > 0).all():
            return approx
    rest = c.denominator - n * c.numerator
    return np.array(
        [
            _float_or_inf(Fraction(int(maxima[y]) * c.denominator, c.numerator * int(sums[y]) + rest * int(minima[y])))
            for y in ys
        ]
    )


def _float_or_inf(q: Fraction) -> float:
    """float(q), correctly rounded (so monotone in q), or inf past the largest double."""
    try:
        return float(q)
    except OverflowError:
        return math.inf


def _mix(kernel: ExactKernel, q: list[Fraction], w: Fraction, floats=None) -> np.ndarray:
    """(1−w)K + w·1qᵀ in floats (the result is re-gridded and checked exactly); ``floats`` = (K, q) in
    floats when the caller has them already."""
    wf = float(w)
    K, qf = floats if floats is not None else (kernel.to_float(), np.array([float(v) for v in q])[None, :])
    return (1 - wf) * K + wf * qf


SNAP_PROBES = 4
"""Before rounding a whole kernel to a coarser grid, :func:`repair` rounds only its few tightest columns
(this many), exactly as the full rounding would, and skips a grid on which one of them already fails."""


SNAP_PROBES_ON_GRID = 64
"""As :data:`SNAP_PROBES` for a kernel whose integers are rounded directly
(:class:`mechdesign.certify.grid_repair.CoarseRounding`), where a rounded column costs O(N): half of them
the tightest columns, half spread evenly over the kernel."""


def _tightest_columns(check: PMLCheck, count: int, kernel: ExactKernel | None = None, c=None) -> list[int]:
    """The columns with the largest ratios in ``check`` (infinite ones first), at most ``count``. ``kernel``
    and ``c``: the kernel ``check`` checked and the c of its Q_X(c), when known: the ratios are then ordered by
    their floats from its column aggregates (:func:`_approximate_ratios`), not one float per Fraction (which
    columns are probed only decides how soon a snapping grid is given up, never whether it passes)."""
    aggregates = kernel.column_aggregates() if kernel is not None and c is not None else None
    if aggregates is not None:  # the finite ratios from the aggregates: no Fraction per column
        c = Fraction(c)
        maxima, minima, sums = aggregates
        # once per class of equal columns (grid_arith.column_classes; one class for k-RR), read per column after
        first, inverse = column_classes(aggregates)
        rest = c.denominator - kernel.shape[0] * c.numerator
        lows = [c.numerator * s + rest * b for s, b in zip(np.asarray(sums)[first].tolist(), minima[first].tolist())]
        finite = np.array([a > 0 and low > 0 for a, low in zip(maxima[first].tolist(), lows)], dtype=bool)
        ys = np.flatnonzero(finite[inverse])
        inf = [check.worst_output] if check.worst_ratio == math.inf else []  # the first unbounded column
        if ys.size > count:
            classes = np.flatnonzero(finite)
            approx = np.zeros(first.size)
            approx[classes] = _approximate_ratios(aggregates, c, kernel.shape[0], first[classes].tolist())
            ys = ys[np.argsort(-approx[inverse[ys]], kind="stable")[:count]]
        return (inf + ys.tolist())[:count]
    inf = [y for y, r in enumerate(check.ratios) if r is None and y == check.worst_output]
    finite = [(r, y) for y, r in enumerate(check.ratios) if r is not None]
    if len(finite) > count:
        approx = np.array([_float_or_inf(r) for r, _ in finite])
        finite = [finite[i] for i in np.argsort(-approx, kind="stable")[:count]]
    return (inf + [y for _, y in finite])[:count]


NOISE_LEVEL = 1e-9
"""Columns whose largest entry is below this (solver tolerance) are treated as rounding noise."""


MERGE_NEED = Fraction(1, 10**9)
"""A noise column that is private but would alone ask the one-pass mix for a weight above this is merged too."""


def merge_noise_columns(
    kernel: ExactKernel, check: PMLCheck, bound: Fraction, c: Fraction | None = None
) -> ExactKernel:
    """Move violating columns whose entries are all below NOISE_LEVEL into the heaviest column.

    A solver leaves outputs with probabilities ~1e−14 that are pure noise; their ratio
    max/min can be huge, and mixing would then need a large weight. Merging an output
    into another is post-processing: the receiving column changes by at most the noise,
    which the mixing step then absorbs with a weight of the same order. Integer
    arithmetic on the grid keeps every row summing to exactly 1.

    With ``c`` (𝒫 = Q_X(c)), a noise column that passes its check is merged too when on its own it would ask the
    one-pass mix (:func:`mechdesign.certify.grid_repair.mixing_weight_on_grid`) for a weight above
    :data:`MERGE_NEED`: the mix's margin of 2(1 + E) grid units per column is most of such a column. Seen in a
    time-limited |x − y| worst case under LDP at N = 1000, ε = 2: an output pair with entries of 9 to 64 units
    (2e-15 to 1.4e-14, ratio 7.1 < e²) asked for w = 0.070 and raised the certified objective from 200.6 to 221.6.
    """
    ints = kernel.int64()
    # int64 on a grid 2^−k, k ≤ 52: the noise limit is < 2^23, so merged columns stay far inside int64
    known = kernel.__dict__.get("_aggregates")  # the column maxima, when folded already: no pass for the largest
    largest = (int(known[0].max()) if known is not None else int(ints.max())) if ints is not None and ints.size else 0
    small = ints is not None and grid_bits(kernel) is not None and largest <= 1 << 60
    noisy = _noise_columns(kernel, check, bound, c, ints if small else None)
    if not noisy:
        return kernel
    nums = ints.copy() if small else kernel.numerators.copy()
    heaviest = int(np.argmax(exact_sums(nums, axis=0) if small else nums.sum(axis=0)))
    for y in noisy:
        if y == heaviest:
            continue
        nums[:, heaviest] = nums[:, heaviest] + nums[:, y]
        nums[:, y] = 0
    return GridKernel(nums, kernel.denominator) if small else ExactKernel(nums, kernel.denominator)


def _noise_columns(kernel: ExactKernel, check: PMLCheck, bound: Fraction, c, ints) -> list[int]:
    """The columns :func:`merge_noise_columns` merges: largest entry in (0, NOISE_LEVEL], and either violating or
    (with ``c`` and the int64 numerators ``ints``) asking the one-pass mix alone for a weight above MERGE_NEED."""
    limit = int(NOISE_LEVEL * kernel.denominator)
    aggregates = kernel.column_aggregates() if ints is not None else None
    maxima = aggregates[0] if aggregates is not None else kernel.numerators.max(axis=0)
    small_columns = np.flatnonzero((np.asarray(maxima) > 0) & (np.asarray(maxima) <= limit)).tolist()
    noisy = [y for y in small_columns if check.ratios[y] is None or check.ratios[y] > bound]  # ratios read here only
    if c is not None and ints is not None:
        for y in sorted(set(small_columns) - set(noisy)):
            need, _ = mixing_weight_on_grid(np.ascontiguousarray(ints[:, [y]]), Fraction(c), bound)
            if need is None or need > MERGE_NEED:
                noisy.append(y)
    return noisy


SNAP_BITS = (48, 44, 40)
"""Before mixing, repair tries the coarser grids 2^−48, 2^−44, 2^−40: a solver vertex such as
Remark 2's (7/8, 0) comes back as 0.8749999999999994, and rounding it to a coarser grid
restores the exact value (and its exact zeros) at a utility cost below 1e−12."""


def repair(
    kernel: ExactKernel,
    prior_set: PriorSet,
    bound: Fraction,
    max_rounds: int = 60,
    bits: int | None = None,
    snap: bool = True,
) -> tuple[ExactKernel, Fraction, PMLCheck]:
    """Mix ``kernel`` with its mean-row constant kernel by the smallest weight that passes.

    Returns (repaired kernel, weight w, its check). w = 0 when the kernel already passes;
    w = 1 (the constant kernel, zero leakage) is the last resort and always passes.

    ``bits``: the emitted kernel lies on the grid 2^−bits (default: the kernel's own
    grid, or 52). ``kernel`` may be finer (the 52-bit rounding of the LP solution);
    mixing is done on it and each candidate is rounded to the coarse grid.

    ``snap=False`` skips the coarser grids of :data:`SNAP_BITS`: their cost (entries move by up to
    2^−49) is negligible for ordinary utilities but not for optima of 1e−9, so the
    certify stage also tries the repair without them and keeps the better kernel.

    Cost: for 𝒫 = Q_X(c) (and the simplex) and a stochastic kernel on the target grid, the
    snapping grids are rounded in integers (:class:`~mechdesign.certify.grid_repair.CoarseRounding`) after
    :data:`SNAP_PROBES_ON_GRID` rounded columns found no failure, and the mixing is one exact integer pass
    and one check (:func:`~mechdesign.certify.grid_repair.mix_on_grid`): O(NM) machine operations in a
    fixed number of passes. Otherwise (other prior sets, coarse targets, or kernels of at most
    :data:`SEARCH_ALSO_BELOW` entries) the weight is also searched over float mixes.
    """
    if bits is None:
        bits = grid_bits(kernel) or GRID_BITS
    on_grid = (1 << bits) % kernel.denominator == 0
    start = kernel if on_grid else to_grid(kernel, bits)
    check = check_pml(start, prior_set, bound)
    if check.feasible:
        return start, Fraction(0), check
    snapped = snap_to_coarser_grid(kernel, check, prior_set, bound, bits) if snap else None
    if snapped is not None:
        return snapped[0], Fraction(0), snapped[1]
    return repair_by_mixing(kernel, check, prior_set, bound, bits, max_rounds)


def snap_to_coarser_grid(
    kernel: ExactKernel, check: PMLCheck, prior_set: PriorSet, bound: Fraction, bits: int
) -> tuple[ExactKernel, PMLCheck] | None:
    """The first rounding of ``kernel`` to a grid of :data:`SNAP_BITS` coarser than 2^−bits that passes the
    exact check, with its check; None when none does (``check``: the failed check of ``kernel`` on 2^−bits, whose
    tightest columns are rounded first). The part of :func:`repair` before mixing."""
    exact_grid = _stochastic_grid_ints(kernel)  # (A, k): integer rounding (grid_repair.py)
    probe = _snap_probe_columns(kernel, check, prior_set, bits, exact_grid)
    fine = kernel.to_float() if probe and exact_grid is None else None
    on_ints = [] if exact_grid is None else [b for b in SNAP_BITS if b < bits and 0 < exact_grid[1] - b <= 16]
    # the grids whose probe columns are needed: not ruled out by the aggregates alone (a column breaking by more
    # than any rounding to the grid can mend)
    open_grids = [
        b for b in on_ints if not _violation_outlasts_rounding(kernel, probe, prior_set, bound, exact_grid[1] - b)
    ]
    c_probe = rules(prior_set, kernel.shape[0]).equivalent_c() if on_ints else None
    probed = exact_grid[0][:, probe] if c_probe is not None and open_grids else None  # shared by the grids' probes
    for coarse in SNAP_BITS:  # values the LP meant exactly (7/8, 0) often sit a few ulps off
        if coarse >= bits:
            continue
        if coarse in on_ints:
            if coarse not in open_grids:
                continue  # a column breaks by more than any rounding to this grid can mend
            snapped = _snap_on_ints(exact_grid, coarse, probe, c_probe, bound, probed)
        else:
            snapped = _snap_on_floats(kernel, fine, coarse, probe, prior_set, bound)
        if snapped is None:
            continue
        snapped_check = check_pml(snapped, prior_set, bound)
        if snapped_check.feasible:
            return snapped, snapped_check
    return None


def _snap_probe_columns(kernel: ExactKernel, check: PMLCheck, prior_set: PriorSet, bits: int, exact_grid) -> list[int]:
    """The columns whose rounding is tried first on each snapping grid: the tightest ones of ``check``, and on an
    int64 grid also columns spread over the kernel (many columns can be equally tight)."""
    if exact_grid is None:
        return _tightest_columns(check, SNAP_PROBES)
    m = kernel.shape[1]
    spread = np.linspace(0, m - 1, min(m, SNAP_PROBES_ON_GRID // 2)).astype(int).tolist() if m else []
    # check is the kernel's own when it is on the target grid (repair() checked it as it is)
    c = rules(prior_set, kernel.shape[0]).equivalent_c() if (1 << bits) % kernel.denominator == 0 else None
    tightest = _tightest_columns(check, SNAP_PROBES_ON_GRID // 2, kernel, c)
    return list(dict.fromkeys(tightest + spread))


def _snap_on_ints(exact_grid, coarse: int, probe, c_probe, bound: Fraction, probed) -> GridKernel | None:
    """The rounding of the stochastic int64 kernel to the grid 2^−coarse (the row sums are exactly 1: the
    integers are rounded, as to_grid does after normalising); None when a probe column already fails on that grid,
    decided from the rounding of as few rows as it takes (certify/fused.py; without a Q_X(c) nothing is decided)."""
    ints, k = exact_grid
    if c_probe is not None and coarse_probe_fails(ints, k, k - coarse, probe, Fraction(c_probe), bound, probed)[0]:
        return None
    rounding = CoarseRounding(ints, k, coarse)
    return GridKernel(rounding.kernel(), 1 << coarse, stochastic=True)


def _snap_on_floats(kernel: ExactKernel, fine, coarse: int, probe, prior_set: PriorSet, bound: Fraction):
    """:func:`to_grid` of the kernel at 2^−coarse; None when a probe column of ``fine`` (its floats) already fails
    on that grid (the full rounding would fail the check)."""
    if fine is not None and _coarse_column_fails(fine, coarse, probe, prior_set, bound):
        return None
    return to_grid(kernel, coarse)


def repair_by_mixing(
    kernel: ExactKernel, check: PMLCheck, prior_set: PriorSet, bound: Fraction, bits: int, max_rounds: int = 60
) -> tuple[ExactKernel, Fraction, PMLCheck]:
    """The part of :func:`repair` after snapping: noise columns merged, then the mix with the mean-row constant
    kernel (one integer pass, or a search over float mixes). ``check``: the failed check of ``kernel`` on the
    grid 2^−bits (of its rounding to that grid when ``kernel`` is finer)."""
    on_grid = (1 << bits) % kernel.denominator == 0
    c = rules(prior_set, kernel.shape[0]).equivalent_c()
    if not on_grid:
        fine_check = check_pml(kernel, prior_set, bound)
        kernel = merge_noise_columns(kernel, fine_check, bound, c) if not fine_check.feasible else kernel
    else:
        kernel = merge_noise_columns(kernel, check, bound, c)
    n, m = kernel.shape
    fast = _mix_in_one_pass(kernel, prior_set, bound, bits)
    if fast is not None and n * m > SEARCH_ALSO_BELOW:
        return fast
    searched = _search_mixing_weight(kernel, prior_set, bound, bits, max_rounds)
    return fast if fast is not None and fast[1] <= searched[1] else searched


SEARCH_ALSO_BELOW = 1 << 16
"""Up to this many entries (N·M), where a pass costs well under a millisecond, :func:`repair` also runs the
search over float mixes and keeps the smaller weight: the one-pass weight carries a margin of 2(1 + E)
units of the grid for its rounding (:mod:`mechdesign.certify.grid_repair`), which the search's rounding
to nearest can beat when the utility itself is a few units of 2^−52 (the identity kernel at ε = 1e4)."""


def _search_mixing_weight(
    kernel: ExactKernel, prior_set: PriorSet, bound: Fraction, bits: int, max_rounds: int
) -> tuple[ExactKernel, Fraction, PMLCheck]:
    """The repair by a search over float mixes: from the smallest weight of :func:`_mixing_need`, raised
    a little (geometrically) until the re-gridded mix passes the exact check; on a coarse grid the weight
    is then bisected down. The constant kernel (w = 1) when no weight below 1 passed."""
    n = kernel.shape[0]
    q, need = _mixing_need(kernel, prior_set, bound)
    extra = Fraction(1, 1 << min(50, bits))
    growth = 4 if bits >= 50 else 2
    failed = need
    floats = kernel.to_float(), np.array([float(v) for v in q])[None, :]
    for _ in range(max_rounds):
        w = min(Fraction(1), need * (1 + extra) + extra)
        if w >= 1:
            break
        candidate = to_grid(_mix(kernel, q, w, floats), bits)
        check = check_pml(candidate, prior_set, bound)
        if check.feasible:
            if bits < 50:  # coarse grid: bisect the weight down (utility), keeping a passing kernel
                for _ in range(8):
                    mid = (failed + w) / 2
                    trial = to_grid(_mix(kernel, q, mid, floats), bits)
                    trial_check = check_pml(trial, prior_set, bound)
                    if trial_check.feasible:
                        w, candidate, check = mid, trial, trial_check
                    else:
                        failed = mid
            return candidate, w, check
        failed = w
        extra *= growth
    row = to_grid(np.array([[float(v) for v in q]]), bits)
    constant = GridKernel(np.repeat(row.int64(), n, axis=0), row.denominator, stochastic=True)
    return constant, Fraction(1), check_pml(constant, prior_set, bound)


def _violation_outlasts_rounding(kernel: ExactKernel, ys, prior_set: PriorSet, bound: Fraction, d: int) -> bool:
    """True when a column y ∈ ``ys`` of the kernel A / 2^k breaks (ε, Q_X(c))-PML by so much that every kernel
    within 2^d units of it entrywise (any rounding to the grid 2^−(k−d)) breaks it too: from the column
    aggregates a (max), b (min), S (sum) alone, with low = c S + (1 − Nc) b,

        a − E·low ≥ 2^d (1 + E)

    suffices, since a rounded column C has 2^d max C > a − 2^d and 2^d low_C < low + 2^d (cN + 1 − Nc = 1), so
    max C > E low_C. O(len(ys)) exact integer comparisons; False when 𝒫 is not a Q_X(c)."""
    n = kernel.shape[0]
    c = rules(prior_set, n).equivalent_c()
    aggregates = kernel.column_aggregates()
    if c is None or aggregates is None:
        return False
    c = Fraction(c)
    cp, cq, p, r = c.numerator, c.denominator, bound.numerator, bound.denominator
    rest = cq - n * cp
    maxima, minima, sums = aggregates
    slack = (1 << d) * (r + p) * cq  # r cq 2^d (1 + E)
    for y in ys:
        a, b, total = int(maxima[y]), int(minima[y]), int(sums[y])
        if a > 0 and a * r * cq - p * (cp * total + rest * b) >= slack:
            return True
    return False


def _stochastic_grid_ints(kernel: ExactKernel) -> tuple[np.ndarray, int] | None:
    """(int64 numerators, k) when ``kernel`` is row-stochastic on the grid 2^−k (k ≤ 52), else None."""
    k = grid_bits(kernel)
    ints = kernel.int64() if k is not None else None
    if ints is None or ints.ndim != 2 or not kernel.is_stochastic():
        return None
    return ints, k


def _mix_in_one_pass(
    kernel: ExactKernel, prior_set: PriorSet, bound: Fraction, bits: int
) -> tuple[ExactKernel, Fraction, PMLCheck] | None:
    """The repair by mixing as one exact integer pass and one exact check
    (:func:`mechdesign.certify.grid_repair.mix_on_grid`): for 𝒫 = Q_X(c) (the simplex is c = 0) and a
    stochastic kernel on the target grid 2^−bits. None when it does not apply or its kernel fails the
    check (then :func:`repair` searches the weight as before)."""
    exact_grid = _stochastic_grid_ints(kernel)
    if exact_grid is None or exact_grid[1] != bits:
        return None
    c = rules(prior_set, kernel.shape[0]).equivalent_c()
    if c is None:
        return None
    mixed = mix_on_grid(exact_grid[0], kernel.denominator, Fraction(c), bound, kernel.column_aggregates())
    if mixed is None:
        return None
    candidate = GridKernel(mixed[0], kernel.denominator, stochastic=True)  # entries ≥ 0, rows sum to D (built so)
    check = check_pml(candidate, prior_set, bound)
    return (candidate, mixed[1], check) if check.feasible else None


def _mixing_need(kernel: ExactKernel, prior_set: PriorSet, bound: Fraction) -> tuple[list[Fraction], Fraction]:
    """(q, w): the mean row q and the largest per-column weight w = v / (v + q_y(E − 1)), v = max_x K_x(y)
    − E·min_P P·K(:,y) > 0, that :func:`repair` starts from (1 when E = 1 and some column fails).

    For 𝒫 = Q_X(c) on int64 numerators the column aggregates are exact integers (Lemma 4) and v is
    formed only for the columns that fail, decided by one integer comparison each."""
    n, m = kernel.shape
    den = kernel.denominator
    ints = kernel.int64()
    c = rules(prior_set, n).equivalent_c() if ints is not None else None
    if c is not None and ints.size:
        c = Fraction(c)
        cp, cq = c.numerator, c.denominator
        rest = cq - n * cp  # cq·(1 − Nc)
        sums = exact_sums(ints, axis=0).tolist()
        q = [Fraction(s, n * den) for s in sums]
        maxima, minima = ints.max(axis=0).tolist(), ints.min(axis=0).tolist()
        lows = [(cp * s + rest * mn, cq) for s, mn in zip(sums, minima)]  # min_P P·A(:,y) = low / cq
        passes = [mx * cq * bound.denominator <= bound.numerator * low for mx, (low, _) in zip(maxima, lows)]
    else:
        sums = kernel.numerators.sum(axis=0)
        q = [Fraction(int(s), n * den) for s in sums]
        maxima = [int(v) for v in kernel.numerators.max(axis=0)]
        lows = [(Fraction(low), 1) for low, _ in _column_minima(prior_set, kernel.numerators)]
        passes = [False] * m
    need = Fraction(0)
    for y in range(m):
        if maxima[y] == 0 or passes[y]:  # passes: v ≤ 0, decided in integers
            continue
        v = Fraction(maxima[y], den) - bound * Fraction(lows[y][0], lows[y][1]) / den
        if v <= 0:
            continue
        if bound == 1:
            return q, Fraction(1)
        need = max(need, v / (v + q[y] * (bound - 1)))
    return q, need


@dataclass(frozen=True)
class Verification:
    """Outcome of :func:`verify_kernel`.

    ``private`` is True when the kernel is row-stochastic and every ratio is ≤ E ≤ e^ε;
    False when it is not stochastic or some ratio exceeds U ≥ e^ε (a rigorous rejection);
    ``decided`` is False in the (practically empty) case that a ratio lies in (E, U] at
    every precision tried, which is then reported as not verified.
    """

    private: bool
    decided: bool
    check: PMLCheck
    upper_bound: Fraction | None
    """The rational U ≥ e^ε used to confirm a rejection (None when e^ε ≥ the kernel's ratio cap, past
    which only infinite ratios fail: :mod:`mechdesign.certify.saturation`)."""
    row_sums: list[Fraction]
    negative: list[tuple[int, int]]
    """(row, column) of negative entries (at most 10 listed)."""

    @property
    def bad_rows(self) -> list[int]:
        return [i for i, s in enumerate(self.row_sums) if s != 1]


def verify_kernel(kernel: ExactKernel, prior_set: PriorSet, epsilon) -> Verification:
    """Check exactly that ``kernel`` is row-stochastic and (ε,𝒫)-PML.

    ``epsilon`` is a :class:`~mechdesign.spec.models.Epsilon` or its text (``"log(3)"``, ``1``).
    The check is :func:`check_pml` against E ≤ e^ε (E = e^ε exactly when e^ε is evidently
    rational, as for ε = log 3, see :func:`mechdesign.spec.expr.exp_exact`), the same function that certifies every kernel :func:`mechdesign.design`
    emits. A failing ratio in (E, U] is re-checked with tighter interval bounds.
    """
    from mechdesign.spec import expr

    from mechdesign.certify.saturation import ratio_cap

    text = epsilon.text if hasattr(epsilon, "text") else str(epsilon)
    cap = ratio_cap(prior_set, kernel.denominator)  # e^ε ≥ cap behaves as ∞ for this kernel (saturation.py)
    ints = kernel.int64()
    if ints is not None and ints.ndim == 2:  # int64 numerators: no Python int per entry
        row_sums = [Fraction(s, kernel.denominator) for s in exact_sums(ints, axis=1).tolist()]
        negative = [(int(i), int(j)) for i, j in zip(*np.nonzero(ints < 0))][:10] if ints.size else []

        def column_maxima():
            aggregates = kernel.column_aggregates()
            return aggregates[0] if aggregates is not None else ints.max(axis=0)
    else:
        nums = kernel.numerators
        row_sums = [Fraction(int(s), kernel.denominator) for s in nums.sum(axis=1)]
        negative = [(int(i), int(j)) for i, j in zip(*np.nonzero(nums < 0))][:10]

        def column_maxima():
            return nums.max(axis=0)

    for bits in (160, 640, 2560):  # both bounds are e^ε itself when it is rational (ε = log 3)
        lower = expr.exp_lower_bound(text, bits, cap=cap)
        upper = expr.exp_upper_bound(text, bits, cap=cap)  # None: e^ε ≥ cap, only infinite ratios fail
        check = check_pml(kernel, prior_set, lower)
        if check.feasible or not check.stochastic:
            return Verification(check.feasible, True, check, upper, row_sums, negative)
        if any(r is not None and upper is not None and r > upper for r in check.ratios) or any(
            r is None and int(mx) > 0 for r, mx in zip(check.ratios, column_maxima())
        ):
            return Verification(False, True, check, upper, row_sums, negative)
    return Verification(False, False, check, upper, row_sums, negative)
