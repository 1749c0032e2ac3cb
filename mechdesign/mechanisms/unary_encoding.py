"""Unary encoding: optimised (OUE, Wang et al., USENIX Security 2017, section 4.3) and symmetric (basic
RAPPOR, Erlingsson, Pihur, Korolova 2014; Wang et al. "SUE").

Output: a set B ⊆ X (a bit vector), bit x set with probability p for the true symbol and q for every
other one, independently. Column B with 1 ≤ |B| ≤ N − 1 is two-level: entries x ∈ B are
p q^{|B|−1} (1−q)^{N−|B|}, the others (1−p) q^{|B|} (1−q)^{N−|B|−1}, with ratio R = p(1 − q) / ((1 − p) q)
and q = |B| high entries; |B| = 0 and |B| = N give constant columns. Every size occurs, so the family is
(ε, Q_X(c))-PML iff R ≤ R_1 = E (1 − c) / (1 − E c) (two_level.py; c = 0: R ≤ e^ε).

Rates are dyadic, a / 2^32, so each bit is one exact comparison of a uniform 32-bit word:
* OUE: p = 1/2, q = a / 2^32 with a the least integer such that (1 − q)/q ≤ R_1 (q ≥ 1/(R_1 + 1));
* symmetric: p = 1 − q, a the least integer with ((1 − q)/q)² ≤ R_1 (q ≥ 1/(1 + √R_1)).
Sampling draws N words per report (O(N) = O(|B| / q) per report; vectorised). Support: x ∈ B; p* = p,
q* = q. Report format: :mod:`mechdesign.mechanisms.set_reports` (any size).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mechdesign.mechanisms.base import StructuredMechanism
from mechdesign.mechanisms.exact_random import uniform_words32
from mechdesign.mechanisms.krr import alphabet_labels
from mechdesign.mechanisms.set_reports import set_report_mle, format_sets, parse_sets
from mechdesign.mechanisms.two_level import allowed_ratio, ratio_below
from mechdesign.mechanisms.base import Reports
from mechdesign.spec.errors import InputError

__all__ = ["UnaryEncoding", "unary_encoding"]

_W = 1 << 32


class UnaryEncoding(StructuredMechanism):
    family = "unary_encoding"

    def __init__(self, labels, epsilon, prior_set=None, optimized: bool = True):
        super().__init__(labels, epsilon, prior_set)
        limit = ratio_below(allowed_ratio(self.bound, self.c, 1), 1, significant_bits=48)
        self.optimized = bool(optimized)
        if self.optimized:
            a = max(1, math.ceil(_W / (limit + 1)))  # least a with (2^32 − a)/a ≤ limit
            self._p, self._q = _W // 2, a
        else:
            a = max(1, math.ceil(_W / (1 + math.sqrt(float(limit)))) - 2)
            while (_W - a) ** 2 > limit * a * a:
                a += 1
            self._p, self._q = _W - a, a
        if self._q >= self._p:
            raise InputError("epsilon: too small for unary encoding to tell a symbol from the others")
        self.ratio = Fraction(self._p * (_W - self._q), (_W - self._p) * self._q)

    def parameters(self):
        return {"optimized": self.optimized, "p": f"{self._p}/{_W}", "q": f"{self._q}/{_W}"}

    def output_size(self):
        return 2**self.n_symbols

    def components(self):
        return [(self.ratio, 1)]

    def expected_report_size(self):
        return (self._p + (self.n_symbols - 1) * self._q) / _W

    def support_probabilities(self):
        return Fraction(self._p, _W), Fraction(self._q, _W)

    def sample_indices(self, idx, rng):
        n, m = idx.size, self.n_symbols
        batch = max(1, (1 << 24) // m)
        offsets = np.zeros(n + 1, dtype=np.int64)
        parts = []
        for start in range(0, n, batch):
            x = idx[start : start + batch]
            b = x.size
            words = uniform_words32(rng, b * m).reshape(b, m)
            bits = words < np.uint32(self._q)
            bits[np.arange(b), x] = words[np.arange(b), x] < np.uint32(self._p)
            rows, cols = np.nonzero(bits)
            offsets[start + 1 : start + b + 1] = np.bincount(rows, minlength=b)
            parts.append(cols.astype(np.int64))
        np.cumsum(offsets, out=offsets)
        return Reports(n=n, offsets=offsets, positions=np.concatenate(parts) if parts else np.zeros(0, np.int64))

    def mle_from_reports(self, reports):
        return set_report_mle(reports, self.report_ratios(reports), self.n_symbols)

    def report_ratios(self, reports):
        return np.full(reports.n, float(self.ratio))

    def support_counts(self, reports):
        return np.bincount(reports.positions, minlength=self.n_symbols)

    def explicit_columns(self):
        n = self.n_symbols
        p, q = self.support_probabilities()
        cols, labels = [], []
        for mask in range(2**n):
            members = [j for j in range(n) if mask >> j & 1]
            col = []
            for x in range(n):
                v = Fraction(1)
                for j in range(n):
                    on = mask >> j & 1
                    rate = p if j == x else q
                    v *= rate if on else 1 - rate
                col.append(v)
            cols.append(col)
            labels.append(" ".join(map(str, members)))
        return cols, labels

    def format_reports(self, reports):
        return format_sets(reports)

    def parse_reports(self, cells, first_row=1):
        return parse_sets(cells, self.n_symbols, None, first_row)


def unary_encoding(alphabet, epsilon, optimized: bool = True, prior_set=None) -> UnaryEncoding:
    """Optimised unary encoding (OUE, ``optimized=True``) or symmetric unary encoding / basic RAPPOR."""
    return UnaryEncoding(alphabet_labels(alphabet), epsilon, prior_set, optimized)
