"""Exact measures of a kernel from three integer aggregates per column, in O(NM) numpy work.

For an :class:`~mechdesign.certify.exact.ExactKernel` K = A / d whose numerators A fit in int64 and are
≥ 0, every column y is summarised by a_y = max_x A_xy, b_y = min_x A_xy and S_y = Σ_x A_xy (exact Python
ints; :meth:`ExactKernel.column_aggregates`, shared with the exact check). Then, exactly:

* LDP(K) = max_y log a_y / b_y over the columns with a_y > 0 (``inf`` when such a column has b_y = 0;
  Dobrushin paper eq. 1);
* ℒ(X→Y) = log Σ_y a_y / d (envelopes paper, Theorem 3);
* C(K, Q_X(c)) = max_y log a_y / (c S_y + (1 − Nc) b_y) (Dobrushin paper, Definition 1 with Lemma 4:
  min_{P∈Q_X(c)} P·k = c Σ_x k_x + (1 − Nc) min_x k_x), for every prior set equal to some Q_X(c)
  (min_mass, the simplex c = 0, the uniform point prior c = 1/N).

The common denominator d cancels in every ratio. Each function returns None when its fast path does not
apply (not an exact int64 kernel, a negative numerator, a prior set that is no Q_X(c)); the callers in
:mod:`mechdesign.theory.measures` then run their entry-by-entry rational computation, which gives the
same value.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["aggregate_ldp_ratio", "aggregate_max_leakage_sum", "aggregate_capacity_ratio"]


def _aggregates(K):
    from mechdesign.certify.exact import ExactKernel

    if not isinstance(K, ExactKernel):
        return None
    ints = K.int64()
    if ints is None or ints.ndim != 2 or ints.size == 0:
        return None
    aggregates = K.column_aggregates()
    if aggregates is None or int(aggregates[1].min()) < 0:
        return None
    maxima, minima, sums = aggregates
    return maxima.tolist(), minima.tolist(), [int(s) for s in sums], ints.shape[0]


def _max_ratio(tops, lows) -> Fraction | float:
    """max(1, max_y tops_y / lows_y) over the columns with tops_y > 0, exactly; ``inf`` when such a
    column has lows_y ≤ 0 (integers: the comparisons are cross-multiplications, no Fraction per column)."""
    best_num, best_den = 1, 1
    for top, low in zip(tops, lows):
        if top <= 0:
            continue
        if low <= 0:
            return math.inf
        if top * best_den > best_num * low:
            best_num, best_den = top, low
    return Fraction(best_num, best_den)


def aggregate_ldp_ratio(K) -> Fraction | float | None:
    """exp LDP(K) = max(1, max_y a_y / b_y) over the columns with a_y > 0, or None (no fast path)."""
    agg = _aggregates(K)
    if agg is None:
        return None
    maxima, minima, _, _ = agg
    return _max_ratio(maxima, minima)


def aggregate_max_leakage_sum(K) -> Fraction | None:
    """Σ_y max_x K_x(y) = Σ_y a_y / d exactly, or None (no fast path)."""
    agg = _aggregates(K)
    if agg is None:
        return None
    return Fraction(sum(agg[0]), K.denominator)


def aggregate_capacity_ratio(K, prior_set) -> Fraction | float | None:
    """exp C(K, 𝒫) = max(1, max_y a_y / (c S_y + (1 − Nc) b_y)) over the columns with a_y > 0, when 𝒫 is a
    prior-set model equal to Q_X(c); ``inf`` when such a column has a zero minimum; None (no fast path)."""
    from mechdesign.privacy.priors import rules

    if isinstance(prior_set, list):
        return None
    agg = _aggregates(K)
    if agg is None:
        return None
    maxima, minima, sums, n = agg
    c = rules(prior_set, n).equivalent_c()
    if c is None:
        return None
    c = Fraction(c)
    p, rest = c.numerator, c.denominator - n * c.numerator  # c·q and (1 − Nc)·q, q = c.denominator
    tops = [c.denominator * a for a in maxima]  # q·a_y over q·min_P P·A(:,y): the ratio a_y / min_P P·A(:,y)
    lows = [p * s + rest * b for s, b in zip(sums, minima)]
    return _max_ratio(tops, lows)
