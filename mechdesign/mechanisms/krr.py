"""k-ary randomised response (Warner 1965; Kairouz, Oh, Viswanath 2016; Wang et al. 2017, "direct encoding").

Output y ∈ X: K_x(x) = R / (R + N − 1), K_x(y) = 1 / (R + N − 1) for y ≠ x. Column y has one high
entry (q = 1), so the family is (ε, Q_X(c))-PML iff R ≤ R_1 = E (1 − c) / (1 − E c) (two_level.py);
c = 0 gives R ≤ e^ε. Sampler: U uniform in [0, D), D = r + (N − 1) d for R = r / d: U < r → y = x,
else y' = (U − r) // d ∈ [0, N − 1) and y = y' + [y' ≥ x]. Support: report y supports x iff y = x;
p* = R / (R + N − 1), q* = 1 / (R + N − 1). Report format: the output symbol's label.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from mechdesign.mechanisms.base import Reports, StructuredMechanism
from mechdesign.mechanisms.exact_random import uniform_below
from mechdesign.mechanisms.two_level import allowed_ratio, ratio_below
from mechdesign.spec.errors import InputError

__all__ = ["RandomizedResponse", "krr"]


class RandomizedResponse(StructuredMechanism):
    family = "krr"

    def __init__(self, labels, epsilon, prior_set=None):
        super().__init__(labels, epsilon, prior_set)
        n = self.n_symbols
        self.ratio = ratio_below(allowed_ratio(self.bound, self.c, 1), n)
        self._r, self._d = self.ratio.numerator, self.ratio.denominator
        self._D = self._r + (n - 1) * self._d

    def parameters(self):
        return {"ratio": str(self.ratio)}

    def output_size(self):
        return self.n_symbols

    def components(self):
        return [(self.ratio, 1)]

    def support_probabilities(self):
        return Fraction(self._r, self._D), Fraction(self._d, self._D)

    def sample_indices(self, idx, rng):
        u = uniform_below(rng, self._D, idx.size)
        other = (u - self._r) // self._d
        other += other >= idx
        return Reports(n=idx.size, values=np.where(u < self._r, idx, other))

    def mle_from_counts(self, counts, n):
        """argmax over the simplex of L(p) = Σ_y c_y log(lo + δ p_y), δ = hi − lo (the output law of k-RR is
        (Kᵀp)_y = lo + δ p_y). KKT: p_y = max(c_y / λ − a, 0) with a = lo / δ and λ such that Σ p = 1, a
        water-filling solved exactly by sorting the counts: with the m largest counts positive,
        λ = (their sum) / (1 + m a). When every p_y > 0 this is the unbiased estimate (1/δ = 1 + N a)."""
        hi, lo = (float(v) for v in self.support_probabilities())
        a = lo / (hi - lo)
        c = np.asarray(counts, dtype=float)
        order = np.argsort(-c, kind="stable")
        top = np.cumsum(c[order])
        m = np.arange(1, c.size + 1)
        lam = top / (1 + m * a)
        ok = c[order] / lam - a > 0
        k = int(np.flatnonzero(ok)[-1])  # the largest support that keeps its smallest mass positive
        p = np.maximum(c / lam[k] - a, 0.0)
        return p / p.sum()

    def support_counts(self, reports):
        return np.bincount(reports.values, minlength=self.n_symbols)

    def explicit_columns(self):
        hi, lo = self.support_probabilities()
        n = self.n_symbols
        return [[hi if x == y else lo for x in range(n)] for y in range(n)], list(self.labels)

    def format_reports(self, reports):
        labels = np.asarray(self.labels, dtype=object)
        return labels[reports.values].tolist()

    def parse_reports(self, cells: Sequence[str], first_row: int = 1):
        return Reports(n=len(cells), values=self.indices_of(cells, first_row))


def krr(alphabet, epsilon, prior_set=None) -> RandomizedResponse:
    """k-ary randomised response on ``alphabet`` (labels, or N for 0..N−1) at ε (a number or an expression such
    as ``"log(3)"``), ε-LDP, or (ε, Q_X(c))-PML with ``prior_set`` (a number c or a min_mass prior set)."""
    return RandomizedResponse(alphabet_labels(alphabet), epsilon, prior_set)


def alphabet_labels(alphabet) -> list[str]:
    """Labels from a list, or 0..N−1 from an int N."""
    if isinstance(alphabet, (int, np.integer)) and not isinstance(alphabet, bool):
        if alphabet < 2:
            raise InputError(f"alphabet: N must be >= 2, found {alphabet}")
        return [str(i) for i in range(int(alphabet))]
    return [str(v) for v in alphabet]
