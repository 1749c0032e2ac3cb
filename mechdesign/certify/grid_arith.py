"""Exact integer arithmetic on kernels held as int64 numerators: the certify stage in O(NM).

A kernel on the grid 2^−k (k ≤ 52) is K = A / 2^k with integers 0 ≤ A_xy ≤ 2^52, all of which fit in
int64. Everything the exact (ε, Q_X(c))-PML check needs from the N·M entries is three integer
aggregates per column,

    a_y = max_x A_xy,    b_y = min_x A_xy,    S_y = Σ_x A_xy,

after which Lemma 4 of the Dobrushin paper (min over Q_X(c) of P·k = c Σ_x k_x + (1 − Nc) min_x k_x; the
simplex is c = 0) leaves M exact rational comparisons,

    a_y ≤ E · (c S_y + (1 − Nc) b_y),

one per column. Maxima and minima are exact in int64 at any size. A sum of N entries of magnitude ≤ 2^62
can leave int64, so :func:`exact_sums` adds in int64 only when N·max|A| < 2^63, else in blocks of
⌊2^63 / max|A|⌋ terms (entries below 2^53: 2047 rows of a kernel on 2^−52) joined as Python integers, and
otherwise splits every entry into two limbs A = 2^26·h + l (h < 2^36 in magnitude, 0 ≤ l < 2^26), sums each limb in int64 (exact
for up to 2^26 terms) and joins the two sums as Python integers: O(NM) machine additions and O(M) Python
integer operations, never a Python object per entry.

The functions here are the arithmetic only; :mod:`mechdesign.certify.exact` builds its checks on them.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "INT64_ENTRY_LIMIT",
    "int64_numerators",
    "exact_sums",
    "column_aggregates",
    "column_classes",
    "lemma4_column_ratios",
    "largest_in_rows",
]

INT64_ENTRY_LIMIT = 1 << 62
"""Entries of magnitude ≤ this are handled in int64 (a kernel on any grid 2^−k, k ≤ 52, has ≤ 2^52)."""

_LIMB_BITS = 26
_LIMB_MASK = (1 << _LIMB_BITS) - 1
_MAX_TERMS = 1 << 26
"""Limb sums are exact for up to this many terms: |h| ≤ 2^36, so 2^26 of them stay below 2^62."""


def int64_numerators(nums: np.ndarray) -> np.ndarray | None:
    """``nums`` as an int64 array when every entry is an integer of magnitude ≤ 2^62, else None.

    An int64 array is returned as it is; an object array of Python ints is converted (O(NM), once).
    """
    if nums.dtype != object:
        if not np.issubdtype(nums.dtype, np.integer):
            return None
        if nums.size and (nums.max() > INT64_ENTRY_LIMIT or nums.min() < -INT64_ENTRY_LIMIT):
            return None  # (compared in the array's own dtype: a uint64 above 2^63 is not wrapped)
        return nums if nums.dtype == np.int64 else nums.astype(np.int64)
    if nums.dtype == object and not all(isinstance(v, (int, np.integer)) for v in nums.flat):
        return None  # a Fraction or a float would be truncated by the conversion below
    try:
        ints = np.asarray(nums, dtype=np.int64)
    except (OverflowError, TypeError, ValueError):
        return None
    if ints.size and (ints.max() > INT64_ENTRY_LIMIT or ints.min() < -INT64_ENTRY_LIMIT):
        return None
    return ints


def exact_sums(ints: np.ndarray, axis: int, largest: int | None = None, sum_bound: int | None = None) -> np.ndarray:
    """Σ along ``axis`` of a 2-d int64 array with entries of magnitude ≤ 2^62, exactly, as an object array
    of Python ints (int64 sums when N·max|A| < 2^63, else the two-limb sum of the module docstring).

    ``largest`` (≥ max|A|) or ``sum_bound`` (≥ every Σ|A| along the axis), when the caller knows one,
    saves the pass that finds max|A|."""
    terms = ints.shape[axis]
    if terms == 0:
        return np.zeros(ints.shape[1 - axis], dtype=object)
    if terms > _MAX_TERMS:
        raise ValueError(f"exact_sums: at most {_MAX_TERMS} terms per sum, found {terms}")
    if sum_bound is None:
        if largest is None:
            largest = max(abs(int(ints.max())), abs(int(ints.min())))
        sum_bound = largest * terms
    if sum_bound < 1 << 63:
        return ints.sum(axis=axis, dtype=np.int64).astype(object)
    if largest is not None and 0 < largest < 1 << 53:
        # blocks of ≤ 2^63 / largest terms sum exactly in int64 (a kernel on the grid 2^−52: 2047 rows at a
        # time); the block sums are added as Python ints: no N × M temporary
        step = ((1 << 63) - 1) // largest
        total = None
        for lo in range(0, terms, step):
            part = ints[lo : lo + step] if axis == 0 else ints[:, lo : lo + step]
            part = part.sum(axis=axis, dtype=np.int64).astype(object)
            total = part if total is None else total + part
        return total
    high = (ints >> _LIMB_BITS).sum(axis=axis, dtype=np.int64)  # arithmetic shift: A = 2^26·h + l, 0 ≤ l < 2^26
    low = (ints & _LIMB_MASK).sum(axis=axis, dtype=np.int64)
    return high.astype(object) * (1 << _LIMB_BITS) + low.astype(object)


def column_aggregates(ints: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, S) per column of A (int64, N × M): maxima and minima (int64) and exact sums (Python ints)."""
    maxima = ints.max(axis=0)
    minima = ints.min(axis=0)
    largest = max(abs(int(maxima.max())), abs(int(minima.min()))) if maxima.size else 0
    return maxima, minima, exact_sums(ints, axis=0, largest=largest)


def _int64_keys(values: np.ndarray) -> list[np.ndarray]:
    """Integers (an object array of Python ints, or an integer array) as int64 arrays that are equal entry by entry
    exactly where the integers are: the integers themselves when they fit in int64, else two limbs
    (⌊v / 2^62⌋, v mod 2^62), which fit for |v| < 2^125 (a column sum of at most 2^62 entries of magnitude ≤ 2^62;
    past that the conversion raises OverflowError)."""
    if values.dtype == np.int64:
        return [values]
    if values.dtype != object:
        return [values.astype(np.int64)]  # a narrower integer type
    try:
        return [values.astype(np.int64)]
    except OverflowError:  # a sum past int64 (N ≥ 2048 rows of 2^52): exact limbs, O(M) Python integers
        return [(values >> 62).astype(np.int64), (values & ((1 << 62) - 1)).astype(np.int64)]


def column_classes(aggregates: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The columns grouped by their exact aggregates (a_y, b_y, S_y) (:func:`column_aggregates`): (first,
    inverse), ``first[k]`` the smallest column of class k (classes numbered in increasing order of it) and
    ``inverse[y]`` the class of column y, both int64.

    Everything the Lemma-4 check, the snapping probe's ordering and the one-pass repair
    (:mod:`mechdesign.certify.grid_repair`) compute per column is a function of (a_y, b_y, S_y) alone, so it is
    computed once per class and read through ``inverse``; "the first column among ties" is the first column of
    the first class among ties. A kernel symmetric under permutations of the outputs (k-RR, the optima of the
    Hamming loss and of Bayes vulnerability under a uniform prior) has one class: O(M) Python integer
    arithmetic becomes O(1). One stable sort of the three int64 keys (the sums as one or two int64 limbs)."""
    maxima, minima, sums = aggregates
    m = maxima.size
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = [key for values in (maxima, minima, sums) for key in _int64_keys(np.asarray(values))]
    order = np.lexsort(keys[::-1])  # stable: within a class, columns stay in increasing order
    starts = np.zeros(m, dtype=bool)
    starts[0] = True
    for key in keys:
        ranked = key[order]
        starts[1:] |= ranked[1:] != ranked[:-1]
    firsts = order[starts]  # the smallest column of each class (stable sort), classes in key order
    by_first = np.argsort(firsts, kind="stable")
    renumber = np.empty_like(by_first)
    renumber[by_first] = np.arange(by_first.size)
    inverse = np.empty(m, dtype=np.int64)
    inverse[order] = renumber[np.cumsum(starts) - 1]
    return firsts[by_first].astype(np.int64), inverse


def lemma4_column_ratios(
    ints: np.ndarray, c: Fraction, aggregates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, list[Fraction | None], list[bool], np.ndarray]:
    """Per column y of A (int64, N × M): the ratio a_y / (c S_y + (1 − Nc) b_y) exactly.

    Returns (maxima a (int64), ratios, unbounded, sums S): ``ratios[y]`` is None for a column with
    a_y = 0 (an output that never occurs) and for a column whose denominator is ≤ 0
    (``unbounded[y]`` True: the ratio is +∞, an output some prior in Q_X(c) never sees).
    The common denominator of the kernel cancels, so the ratios are those of K itself. ``aggregates``:
    :func:`column_aggregates` of ``ints`` when the caller has them already.
    """
    n = ints.shape[0]
    maxima, minima, sums = column_aggregates(ints) if aggregates is None else aggregates
    c = Fraction(c)
    p, q = c.numerator, c.denominator
    rest = q - n * p  # q·(1 − Nc)
    ratios: list[Fraction | None] = []
    unbounded: list[bool] = []
    for mx, mn, s in zip(maxima.tolist(), minima.tolist(), sums.tolist()):
        if mx == 0:
            ratios.append(None)
            unbounded.append(False)
            continue
        low = p * s + rest * mn  # q · min_P P·A(:,y)
        if low <= 0:
            ratios.append(None)
            unbounded.append(True)
        else:
            ratios.append(Fraction(mx * q, low))
            unbounded.append(False)
    return maxima, ratios, unbounded, sums


def largest_in_rows(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """mask[x, y] True for the ``counts[x]`` largest entries of row x (0 ≤ counts[x] ≤ M), ties taken
    by increasing index: the first counts[x] positions of ``np.argsort(-row, kind="stable")``.

    Without an argsort: t_x = the counts[x]-th largest value of row x (one sort of the values); every
    entry > t_x is taken, and of the entries = t_x the first counts[x] − #{> t_x} in index order.
    """
    n, m = values.shape
    mask = np.zeros((n, m), dtype=bool)
    if n == 0 or m == 0:
        return mask
    ascending = np.sort(values, axis=1)
    at = np.clip(m - counts, 0, m - 1)
    threshold = np.take_along_axis(ascending, at[:, None], axis=1)
    np.greater(values, threshold, out=mask)
    ties = values == threshold
    wanted = counts - mask.sum(axis=1)  # ≥ 1 when counts ≥ 1: ties are needed to reach the count
    n_ties = ties.sum(axis=1)
    every = (n_ties <= wanted) & (counts > 0)  # rows that take all their ties (distinct values: every row)
    mask |= ties & every[:, None]
    some = np.flatnonzero(~every & (counts > 0))
    if some.size:  # rows with more ties than wanted: the first ones in index order
        part = ties[some]
        mask[some] |= part & (np.cumsum(part, axis=1) <= wanted[some][:, None])
    return mask
