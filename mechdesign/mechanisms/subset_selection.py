"""Subset selection (Ye and Barg, *Optimal schemes for discrete distribution estimation under locally
differential privacy*, IEEE Trans. IT 2018; Wang et al. 2016, "k-subset"), and mixtures of two sizes.

Output: a d-subset S of X. K_x(S) = H if x ∈ S, L = H / R otherwise. Column S has q = d high entries,
so size d is (ε, Q_X(c))-PML iff R ≤ R_d = E (1 − c d) / (1 − E c d) (two_level.py; c = 0: R ≤ e^ε).
Row sums give P(x ∈ S | X = x) = C(N−1, d−1) H = d R / (d R + N − d) =: p_in.

Sampler (exact): include x with probability p_in = d r / (d r + (N − d) s) for R = r / s (one integer
draw), then the other d − 1 (or d) symbols uniformly from the N − 1 others by Floyd's algorithm, O(d)
per report (:func:`mechdesign.mechanisms.set_reports.floyd_sample`). Every d-subset containing x then has
probability p_in / C(N−1, d−1) = H, and every other one (1 − p_in) / C(N−1, d) = L.

A mixture with weights w_1, w_2 of sizes d_1 ≠ d_2 draws the size first (exactly); its columns are
those of one component scaled by its weight, so it is private iff each component is.

Support: x ∈ S. p* = Σ_i w_i p_in,i and q* = Σ_i w_i (d_i − p_in,i) / (N − 1) (given X = x' ≠ x, x is
one of the d_i − 1 others with probability p_in,i (d_i − 1)/(N − 1), or of the d_i with (1 − p_in,i) d_i /(N − 1)).
The default size minimises the unbiased estimator's total variance at the uniform prior (Wang et al.'s
formula; about N / (e^ε + 1), Ye and Barg's optimum). Report format: :mod:`mechdesign.mechanisms.set_reports`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from mechdesign.mechanisms.base import StructuredMechanism
from mechdesign.mechanisms.exact_random import uniform_below
from mechdesign.mechanisms.krr import alphabet_labels
from mechdesign.mechanisms.set_reports import set_report_mle, floyd_sample, format_sets, parse_sets, sets_from_rows
from mechdesign.mechanisms.two_level import RATIO_CAP, allowed_ratio, ratio_below
from mechdesign.spec.errors import InputError

__all__ = ["SubsetSelection", "subset_selection", "best_subset_size"]


class SubsetSelection(StructuredMechanism):
    family = "subset_selection"

    def __init__(self, labels, epsilon, prior_set=None, d=None, weights=None):
        super().__init__(labels, epsilon, prior_set)
        n = self.n_symbols
        sizes = [best_subset_size(n, float(self.bound), float(self.c))] if d is None else _sizes(d)
        if weights is None:
            if len(sizes) != 1:
                raise InputError("weights: a mixture of two sizes needs weights (w1, w2) summing to 1")
            weights = [Fraction(1)]
        else:
            weights = [_fraction(w, "weights") for w in weights]
            if len(weights) != len(sizes) or sum(weights) != 1 or any(w <= 0 for w in weights):
                raise InputError(f"weights: need {len(sizes)} positive weights summing to exactly 1, found {weights}")
        for s in sizes:
            if not 1 <= s <= n - 1:
                raise InputError(f"d: subset sizes must lie in [1, N - 1] = [1, {n - 1}], found {s}")
        if len(set(sizes)) != len(sizes):
            raise InputError(f"d: the sizes of a mixture must differ, found {sizes}")
        self.sizes = tuple(sizes)
        self.weights = tuple(weights)
        self.ratios = tuple(ratio_below(allowed_ratio(self.bound, self.c, s), n) for s in sizes)
        # P(x ∈ S | X = x) = d r / (d r + (N − d) s), as (numerator, denominator) in integers
        self._include = tuple(
            (s * r.numerator, s * r.numerator + (n - s) * r.denominator) for s, r in zip(sizes, self.ratios)
        )

    def parameters(self):
        return {
            "d": list(self.sizes),
            "weights": [str(w) for w in self.weights],
            "ratios": [str(r) for r in self.ratios],
        }

    def output_size(self):
        return sum(math.comb(self.n_symbols, s) for s in self.sizes)

    def components(self):
        return list(zip(self.ratios, self.sizes))

    def expected_report_size(self):
        return float(sum(w * s for w, s in zip(self.weights, self.sizes)))

    def support_probabilities(self):
        n = self.n_symbols
        p = q = Fraction(0)
        for w, s, (a, b) in zip(self.weights, self.sizes, self._include):
            pin = Fraction(a, b)
            p += w * pin
            q += w * (s - pin) / (n - 1)
        return p, q

    def sample_indices(self, idx, rng):
        n, m = idx.size, self.n_symbols
        if len(self.sizes) == 1:
            comp = np.zeros(n, dtype=np.int64)
        else:
            w = self.weights[0]
            comp = (uniform_below(rng, w.denominator, n) >= w.numerator).astype(np.int64)
        include = np.empty(n, dtype=bool)
        for i, (a, b) in enumerate(self._include):
            sel = comp == i
            include[sel] = uniform_below(rng, b, int(sel.sum())) < a
        blocks, where = [], []
        for i, s in enumerate(self.sizes):
            for inc in (True, False):
                rows = np.flatnonzero((comp == i) & (include == inc))
                if rows.size == 0:
                    continue
                others = floyd_sample(rng, rows.size, m - 1, s - 1 if inc else s)
                x = idx[rows][:, None]
                others += others >= x  # index among the N − 1 others → symbol
                if inc:
                    others = np.concatenate([others, x], axis=1)
                    others.sort(axis=1)
                blocks.append(others)
                where.append(rows)
        return sets_from_rows(blocks, where, n)

    def mle_from_reports(self, reports):
        return set_report_mle(reports, self.report_ratios(reports), self.n_symbols)

    def report_ratios(self, reports):
        ratio_of_size = {s: float(r) for s, r in zip(self.sizes, self.ratios)}
        sizes = np.diff(reports.offsets)
        out = np.empty(reports.n)
        for s, r in ratio_of_size.items():
            out[sizes == s] = r
        return out

    def support_counts(self, reports):
        return np.bincount(reports.positions, minlength=self.n_symbols)

    def explicit_columns(self):
        n = self.n_symbols
        cols, labels = [], []
        for w, s, r in zip(self.weights, self.sizes, self.ratios):
            low = 1 / (r * math.comb(n - 1, s - 1) + math.comb(n - 1, s))
            high = r * low
            for subset in itertools.combinations(range(n), s):
                members = set(subset)
                cols.append([w * (high if x in members else low) for x in range(n)])
                labels.append(" ".join(map(str, subset)))
        return cols, labels

    def format_reports(self, reports):
        return format_sets(reports)

    def parse_reports(self, cells, first_row=1):
        return parse_sets(cells, self.n_symbols, self.sizes, first_row)


def subset_selection(alphabet, epsilon, d=None, weights=None, prior_set=None) -> SubsetSelection:
    """Subset selection of size ``d`` (default: the size of least estimation error at the uniform prior), or
    the mixture of sizes ``d = (d1, d2)`` with ``weights = (w1, w2)`` (rationals summing to 1)."""
    return SubsetSelection(alphabet_labels(alphabet), epsilon, prior_set, d, weights)


def best_subset_size(n: int, e: float, c: float = 0.0) -> int:
    """argmin over d ∈ [1, N − 1] of the unbiased estimator's total variance at the uniform prior,
    N π(1 − π) / (p* − q*)² with π = q* + (p* − q*)/N (float search; the mechanism itself is exact)."""
    d = np.arange(1, n, dtype=float)
    den = 1 - e * c * d
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, e * (1 - c * d) / np.where(den > 0, den, 1), float(RATIO_CAP))
    r = np.minimum(r, float(RATIO_CAP))
    pin = d * r / (d * r + n - d)
    q = (d - pin) / (n - 1)
    pi = q + (pin - q) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        total = n * pi * (1 - pi) / (pin - q) ** 2
    total = np.where(np.isfinite(total), total, np.inf)
    return int(d[int(np.argmin(total))])


def _sizes(d) -> list[int]:
    values = list(d) if isinstance(d, (list, tuple)) else [d]
    if not 1 <= len(values) <= 2:
        raise InputError(f"d: one size or a mixture of two sizes, found {len(values)}")
    out = []
    for v in values:
        if isinstance(v, bool) or int(v) != v:
            raise InputError(f"d: subset sizes must be integers, found {v!r}")
        out.append(int(v))
    return out


def _fraction(v, field: str) -> Fraction:
    try:
        return Fraction(str(v)) if isinstance(v, float) else Fraction(v)
    except (TypeError, ValueError):
        raise InputError(f"{field}: not a number: {v!r}") from None
