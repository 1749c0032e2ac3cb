"""The exact (ε, Q_X(c))-PML verdict from column aggregates, without a Fraction per column.

Lemma 4 of the Dobrushin paper: min over Q_X(c) of P·k = c Σ_x k_x + (1 − Nc) min_x k_x. With c = c_p / c_q and a
kernel A / D (the denominator cancels), column y has the ratio

    ρ_y = a_y c_q / low_y,      low_y = c_p S_y + (c_q − N c_p) b_y      (a = max, b = min, S = sum),

infinite when a_y > 0 and low_y ≤ 0, none for a zero column. The check needs only the largest ratio (the first
column among ties) and whether it is ≤ E; the N·M pass is over, so what is left is O(M) integer work. Building
a reduced Fraction per column (a gcd of ~100-bit integers each) cost more than the rest of the check at M = 3000;
here the largest ratio is found by cross-multiplication (ρ_i > ρ_j ⟺ a_i low_j > a_j low_i for positive lows)
among the columns whose floats are within 1e−9 of the largest, and :class:`Lemma4Ratios` makes the per-column
Fractions of :attr:`mechdesign.certify.exact.PMLCheck.ratios` when they are read (the same values as
:func:`mechdesign.certify.grid_arith.lemma4_column_ratios`). Columns with equal aggregates are one class
(:func:`mechdesign.certify.grid_arith.column_classes`): the largest ratio is found over the classes, so a k-RR
kernel (one class; every column a tie, 1000 exact cross-multiplications at M = 1000) costs one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from mechdesign.certify.grid_arith import column_classes

__all__ = ["Lemma4Ratios", "lemma4_worst"]


def _lows(minima: np.ndarray, sums: np.ndarray, c: Fraction, n: int) -> list[int]:
    """c_q · min over Q_X(c) of P·A(:,y) for every column (Python integers)."""
    cp, cq = c.numerator, c.denominator
    rest = cq - n * cp  # c_q (1 − Nc) ≥ 0
    return [cp * s + rest * b for s, b in zip(sums.tolist(), minima.tolist())]


class Lemma4Ratios(Sequence):
    """ρ_y = a_y c_q / low_y for every column as a Fraction (None for a zero column and for an unbounded one),
    each made when it is first read: a sequence equal to the list
    :func:`mechdesign.certify.grid_arith.lemma4_column_ratios` returns. It holds the kernel's aggregates (finished
    arrays, never written again) and forms low_y only for the columns read."""

    def __init__(self, aggregates, c: Fraction, n: int) -> None:
        self._aggregates, self._c, self._n = aggregates, c, n
        self._cq = c.denominator
        self._made: list | None = None

    def _ratios(self, ys: slice) -> list[Fraction | None]:
        """ρ_y for the columns ``ys``, low_y by :func:`_lows`."""
        maxima, minima, sums = self._aggregates
        return [
            None if a == 0 or low <= 0 else Fraction(a * self._cq, low)
            for a, low in zip(maxima[ys].tolist(), _lows(minima[ys], sums[ys], self._c, self._n))
        ]

    def _ratio(self, y: int) -> Fraction | None:
        return self._ratios(slice(y, y + 1))[0]

    def _all(self) -> list:
        if self._made is None:
            self._made = self._ratios(slice(None))
        return self._made

    def __len__(self) -> int:
        return len(self._aggregates[0])

    def __getitem__(self, y):
        if isinstance(y, slice):
            return self._all()[y]
        if self._made is not None:
            return self._made[y]
        return self._ratio(range(len(self))[y])

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, Lemma4Ratios)):
            return self._all() == list(other)
        return NotImplemented

    __hash__ = None  # a list, as the field it fills

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self):
        return (list, (self._all(),))


def lemma4_worst(aggregates, c: Fraction, n: int) -> tuple[int | None, Fraction | float | None]:
    """(y, ρ_y) for the largest ratio, the first column among ties: the first unbounded column with ratio
    ``math.inf`` when there is one, (None, None) when every column is zero. Candidates are the columns whose
    float ratio is within a relative 1e−9 of the largest float (each float within a relative 1e−15 of its ratio,
    from nonnegative terms: see :func:`mechdesign.certify.exact._approximate_ratios`), decided exactly by
    cross-multiplication in column order.

    Columns with the same aggregates (a_y, b_y, S_y) have the same ratio: the work is done once per class of
    :func:`mechdesign.certify.grid_arith.column_classes` (taken in the order of their first columns, so the first
    column among ties is the first column of the first class among ties). A k-RR kernel has one class."""
    maxima, minima, sums = aggregates
    first, _ = column_classes(aggregates)
    if first.size == 0:
        return None, None
    y, ratio = _worst_of_columns((maxima[first], minima[first], np.asarray(sums)[first]), c, n)
    return (None, None) if y is None else (int(first[y]), ratio)


def _worst_of_columns(aggregates, c: Fraction, n: int) -> tuple[int | None, Fraction | float | None]:
    """:func:`lemma4_worst` over every column of ``aggregates`` one by one."""
    maxima, minima, sums = aggregates
    lows = _lows(minima, sums, c, n)
    tops = maxima.tolist()
    unbounded = [y for y, (a, low) in enumerate(zip(tops, lows)) if a > 0 and low <= 0]
    if unbounded:
        return unbounded[0], math.inf
    finite = [y for y, a in enumerate(tops) if a > 0]
    if not finite:
        return None, None
    at = np.array(finite, dtype=np.int64)
    exact_floats = True  # negative entries: a low can cancel in floats
    if (minima[at] >= 0).all():
        try:
            low_f = np.array([float(lows[y]) for y in finite])
            scale = float(c.denominator)
        except OverflowError:  # c's denominator past 10^308 (c = 1/10^400 is a valid spec): exact ratios below
            low_f = None
        if low_f is not None:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                approx = maxima[at].astype(np.float64) * scale / low_f
            exact_floats = not np.isfinite(approx).all()
    if exact_floats:
        approx = np.array([_float_or_inf(Fraction(tops[y] * c.denominator, lows[y])) for y in finite])
    near = np.flatnonzero(approx >= approx.max() * (1 - 1e-9)).tolist()
    best = finite[near[0]]
    for i in near[1:]:
        y = finite[i]
        if tops[y] * lows[best] > tops[best] * lows[y]:  # ρ_y > ρ_best (both lows > 0)
            best = y
    return best, Fraction(tops[best] * c.denominator, lows[best])


def _float_or_inf(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf
