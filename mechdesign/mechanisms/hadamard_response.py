"""Hadamard response (Acharya, Sun and Zhang, *Hadamard Response: Estimating Distributions Privately,
Efficiently, and with Little Communication*, AISTATS 2019).

K = the smallest power of two > N; H the K × K Sylvester–Hadamard matrix, H[i, y] = (−1)^{popcount(i & y)}.
Symbol x owns the row i = x + 1 (row 0, all ones, is skipped) and the set C_x = {y : H[x+1, y] = +1}
(|C_x| = K/2). Output y ∈ [0, K): uniform on C_x with probability R / (R + 1), else uniform on its
complement, so K_x(y) = 2R / (K (R + 1)) on C_x and 2 / (K (R + 1)) off it.

Column y is two-level with q_y = #{x : H[x+1, y] = +1} high entries (column 0 is constant); the family is
(ε, Q_X(c))-PML iff R ≤ R_{q_min}, q_min the smallest q_y strictly between 0 and N (two_level.py; c = 0:
R ≤ e^ε). The q_y come from one fast Walsh–Hadamard transform of the indicator of rows 1..N,
q_y = (N + (H 1_{1..N})_y) / 2, O(K log K).

Sampler: Bernoulli(R / (R + 1)) by one integer draw; a uniform y' in [0, K); if the parity of
popcount((x+1) & y') is not the one wanted, y = y' XOR lowbit(x+1) (a bijection between C_x and its
complement, so y is uniform on the wanted set). O(1) per report, vectorised.

Support: y ∈ C_x; p* = R / (R + 1) and, since two distinct rows of H agree on exactly K/2 columns,
q* = 1/2. C_x = (n + (H T)_{x+1}) / 2 with T the output counts: decoding is one transform,
O(K log K + n). Report format: the index y (an integer in [0, K)). ``method="mle"`` is the
maximum-likelihood estimate on the output counts, with intervals (:meth:`HadamardResponse.support_sets`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.mechanisms.base import Reports, StructuredMechanism
from mechdesign.mechanisms.exact_random import uniform_below
from mechdesign.mechanisms.krr import alphabet_labels
from mechdesign.mechanisms.two_level import allowed_ratio, ratio_below
from mechdesign.spec.errors import InputError

__all__ = ["HadamardResponse", "hadamard_response", "walsh_hadamard"]

MLE_MAX_ENTRIES = 5 * 10**7
"""Largest N·K for which ``estimate(..., method="mle")`` forms each output's support set (about N K / 2 integers)."""


def _parity(v: np.ndarray) -> np.ndarray:
    """The parity of the set bits of each nonnegative integer of ``v`` (< 2^63), by folding the halves with XOR
    (numpy's ``bitwise_count`` exists only from numpy 2.0; this project supports numpy 1.24)."""
    v = np.asarray(v, dtype=np.int64).copy()
    for shift in (32, 16, 8, 4, 2, 1):
        v ^= v >> shift
    return v & 1


def walsh_hadamard(v: np.ndarray) -> np.ndarray:
    """H v for the Sylvester–Hadamard matrix of order len(v) (a power of two), in O(K log K) by
    butterflies on reshaped views (exact for integer dtypes)."""
    a = np.array(v, copy=True)
    k = a.shape[0]
    if k & (k - 1):
        raise ValueError(f"length must be a power of two, found {k}")
    h = 1
    while h < k:
        a = a.reshape(-1, 2, h)
        top, bottom = a[:, 0, :].copy(), a[:, 1, :]
        a[:, 0, :] += bottom
        a[:, 1, :] = top - bottom
        a = a.reshape(k)
        h *= 2
    return a


class HadamardResponse(StructuredMechanism):
    family = "hadamard_response"

    def __init__(self, labels, epsilon, prior_set=None):
        super().__init__(labels, epsilon, prior_set)
        n = self.n_symbols
        self.order = 1 << n.bit_length()  # smallest power of two > N
        ones = np.zeros(self.order, dtype=np.int64)
        ones[1 : n + 1] = 1
        high = (n + walsh_hadamard(ones)) // 2
        inner = high[(high > 0) & (high < n)]
        self.min_high = int(inner.min()) if inner.size else n
        self.ratio = ratio_below(allowed_ratio(self.bound, self.c, self.min_high), 2)
        self._r, self._t = self.ratio.numerator, self.ratio.denominator

    def parameters(self):
        return {"K": self.order, "ratio": str(self.ratio), "min_high": self.min_high}

    def output_size(self):
        return self.order

    def components(self):
        return [(self.ratio, self.min_high)]

    def support_probabilities(self):
        return Fraction(self._r, self._r + self._t), Fraction(1, 2)

    def sample_indices(self, idx, rng):
        n = idx.size
        row = idx + 1
        inside = uniform_below(rng, self._r + self._t, n) < self._r
        y = uniform_below(rng, self.order, n)
        odd = _parity(row & y).astype(bool)  # y ∉ C_x
        flip = odd == inside
        y = np.where(flip, y ^ (row & -row), y)
        return Reports(n=n, values=y)

    def support_counts(self, reports):
        t = np.bincount(reports.values, minlength=self.order).astype(np.int64)
        w = walsh_hadamard(t)
        return (reports.n + w[1 : self.n_symbols + 1]) // 2

    def has_report_likelihood(self):
        """The MLE on the output counts (:meth:`support_sets`) up to N·K ≤ :data:`MLE_MAX_ENTRIES`."""
        return self.n_symbols * self.order <= MLE_MAX_ENTRIES

    def support_sets(self, reports, block: int = 1 << 22):
        """The output counts T_y as grouped reports: output y supports B_y = {x : H[x+1, y] = +1} and its column is
        K_x(y) = 2/(K(R + 1)) · (1 + (R − 1) 1{x ∈ B_y}), so the log-likelihood is
        Σ_y T_y log(1 + (R − 1) P(B_y)) + const (:mod:`mechdesign.mechanisms.support_likelihood`)."""
        from mechdesign.mechanisms.support_likelihood import SupportSets

        if not self.has_report_likelihood():
            return super().support_sets(reports)
        t = np.bincount(reports.values, minlength=self.order)
        used = np.flatnonzero(t)
        rows = np.arange(1, self.n_symbols + 1, dtype=np.int64)
        step = max(1, block // self.n_symbols)
        members = []
        for start in range(0, used.size, step):
            even = _parity(used[start : start + step, None] & rows[None, :]) == 0
            members.append(even)
        member = np.concatenate(members) if members else np.zeros((0, self.n_symbols), dtype=bool)
        offsets = np.zeros(used.size + 1, dtype=np.int64)
        np.cumsum(member.sum(axis=1), out=offsets[1:])
        return SupportSets(
            row=np.zeros(used.size, dtype=np.int64),
            offsets=offsets,
            positions=np.nonzero(member)[1].astype(np.int64),
            rm1=np.full(used.size, float(self.ratio) - 1.0),
            weight=t[used].astype(float),
            n_rows=1,
        )

    def explicit_columns(self):
        k, n = self.order, self.n_symbols
        hi = Fraction(2 * self._r, k * (self._r + self._t))
        lo = Fraction(2 * self._t, k * (self._r + self._t))
        cols = []
        for y in range(k):
            cols.append([hi if bin((x + 1) & y).count("1") % 2 == 0 else lo for x in range(n)])
        return cols, [str(y) for y in range(k)]

    def format_reports(self, reports):
        return [str(v) for v in reports.values.tolist()]

    def parse_reports(self, cells, first_row=1):
        n = len(cells)
        text = "\n".join(c.strip() for c in cells)
        try:
            values = np.array(text.split("\n"), dtype=np.int64) if n else np.zeros(0, np.int64)
        except ValueError:
            values = None
        if values is None or values.size != n:
            values = np.empty(n, dtype=np.int64)
            for r, c in enumerate(cells):
                try:
                    values[r] = int(c)
                except ValueError:
                    raise InputError(
                        f"row {first_row + r}: malformed report {c[:40]!r}: expected an integer index"
                    ) from None
        bad = np.flatnonzero((values < 0) | (values >= self.order))
        if bad.size:
            r = int(bad[0])
            raise InputError(f"row {first_row + r}: impossible report {values[r]}: indices lie in [0, {self.order})")
        return Reports(n=n, values=values)


def hadamard_response(alphabet, epsilon, prior_set=None) -> HadamardResponse:
    """Hadamard response on ``alphabet`` at ε (ε-LDP, or (ε, Q_X(c))-PML with ``prior_set``)."""
    return HadamardResponse(alphabet_labels(alphabet), epsilon, prior_set)
