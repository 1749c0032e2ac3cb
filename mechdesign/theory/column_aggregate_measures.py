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

from fractions import Fraction

__all__ = ["aggregate_ldp_ratio", "aggregate_max_leakage_sum", "aggregate_capacity_ratio"]


def _aggregates(K):
    """(maxima, minima, sums) of an exact int64 kernel with no negative numerator, and N; else None."""
    from mechdesign.certify.exact import ExactKernel

    if not isinstance(K, ExactKernel):
        return None
    ints = K.int64()
    if ints is None or ints.ndim != 2 or ints.size == 0:
        return None
    aggregates = K.column_aggregates()
    if aggregates is None or int(aggregates[1].min()) < 0:
        return None
    return aggregates, ints.shape[0]


def _largest_lemma4_ratio(aggregates, c: Fraction, n: int) -> Fraction | float:
    """max(1, max_y a_y / (c S_y + (1 − Nc) b_y)) over the columns with a_y > 0 (``inf`` when such a column's
    denominator is 0): the exact check's own worst column (:func:`mechdesign.certify.lemma4.lemma4_worst`);
    1 when every column is zero (each ratio is ≥ 1: c S_y + (1 − Nc) b_y ≤ a_y)."""
    from mechdesign.certify.lemma4 import lemma4_worst

    _, ratio = lemma4_worst(aggregates, c, n)
    return Fraction(1) if ratio is None else ratio


def aggregate_ldp_ratio(K) -> Fraction | float | None:
    """exp LDP(K) = max(1, max_y a_y / b_y) over the columns with a_y > 0, or None (no fast path): Lemma 4's
    ratio at c = 0."""
    agg = _aggregates(K)
    if agg is None:
        return None
    return _largest_lemma4_ratio(agg[0], Fraction(0), agg[1])


def aggregate_max_leakage_sum(K) -> Fraction | None:
    """Σ_y max_x K_x(y) = Σ_y a_y / d exactly, or None (no fast path)."""
    agg = _aggregates(K)
    if agg is None:
        return None
    return Fraction(sum(agg[0][0].tolist()), K.denominator)


def aggregate_capacity_ratio(K, prior_set) -> Fraction | float | None:
    """exp C(K, 𝒫) = max(1, max_y a_y / (c S_y + (1 − Nc) b_y)) over the columns with a_y > 0, when 𝒫 is a
    prior-set model equal to Q_X(c); ``inf`` when such a column has a zero minimum; None (no fast path)."""
    from mechdesign.privacy.priors import rules

    if isinstance(prior_set, list):
        return None
    agg = _aggregates(K)
    if agg is None:
        return None
    aggregates, n = agg
    c = rules(prior_set, n).equivalent_c()
    if c is None:
        return None
    return _largest_lemma4_ratio(aggregates, Fraction(c), n)
