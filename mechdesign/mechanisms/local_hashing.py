"""Local hashing (optimised local hashing, OLH: Wang et al., USENIX Security 2017, section 4.4).

Each report carries a hash seed s and a value v ∈ [0, g): with R = r / t, v = h_s(x) with probability
p = R / (R + g − 1), else each of the g − 1 other values with probability 1 / (R + g − 1). The default
g = round(R) + 1 minimises Wang et al.'s variance (g = e^ε + 1 under ε-LDP).

Hash family: Carter and Wegman's universal family h_s(x) = ((a x + b) mod P) mod g over the Mersenne
prime P = 2^31 − 1, with seed s = (a − 1) P + b, a ∈ [1, P), b ∈ [0, P) (every seed is a pair (a, b)).
For x ≠ x' the pair (a x + b, a x' + b) mod P is uniform over the P (P − 1) pairs of distinct residues, so
the collision probability κ = P(h_s(x) = h_s(x')) = Σ_v m_v (m_v − 1) / (P (P − 1)), m_v = #{u < P :
u mod g = v}, is the same for every pair and exact. It is computed with int64 numpy arithmetic
(a x < 2^62), vectorised over reports and symbols.

Seeds: ``seeds=None`` draws a fresh uniform seed per report (unbiased decoding exactly); ``seeds=k``
draws a pool of k seeds once (stored with the mechanism) and each report picks one uniformly, which makes
decoding O(k N + n) instead of O(n N). Privacy does not depend on the seeds: given s, the column (s, v)
is two-level with q = |h_s^{−1}(v)| high entries (constant when q ∈ {0, N}), so the family is
(ε, Q_X(c))-PML iff R ≤ R_{q_min}, q_min the smallest non-empty, non-full bucket over the seeds in use;
this implementation takes R ≤ R_1 (c = 0: R ≤ e^ε), which is the exact condition whenever some
bucket holds one symbol and sufficient otherwise.

Support: report (s, v) supports x iff h_s(x) = v; p* = p, q* = κ p + (1 − κ) (1 − p)/(g − 1) for fresh
seeds (over a pool the unbiasedness holds on average over the pool's draw). Report format:
``seed:value`` (two integers).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mechdesign.mechanisms.base import Reports, StructuredMechanism
from mechdesign.mechanisms.exact_random import uniform_below
from mechdesign.mechanisms.krr import alphabet_labels
from mechdesign.mechanisms.two_level import allowed_ratio, ratio_below
from mechdesign.spec.errors import InputError

__all__ = ["LocalHashing", "local_hashing", "hash_values", "MERSENNE_31"]

MERSENNE_31 = (1 << 31) - 1


def hash_values(seeds: np.ndarray, x: np.ndarray, g: int, prime: int = MERSENNE_31) -> np.ndarray:
    """h_s(x) = ((a x + b) mod P) mod g with a = 1 + s // P, b = s mod P (broadcast over seeds and x)."""
    a = 1 + seeds // prime
    b = seeds % prime
    return ((a * x + b) % prime) % g


class LocalHashing(StructuredMechanism):
    family = "local_hashing"

    def __init__(
        self, labels, epsilon, prior_set=None, g=None, seeds=None, pool=None, prime: int = MERSENNE_31, rng=None
    ):
        super().__init__(labels, epsilon, prior_set)
        n = self.n_symbols
        if isinstance(prime, bool) or int(prime) != prime or not n < prime < 1 << 31 or not _is_prime(int(prime)):
            raise InputError(f"prime: must be a prime in (N, 2^31), found {prime}")
        self.prime = int(prime)
        limit = allowed_ratio(self.bound, self.c, 1)
        if g is None:
            approx = ratio_below(limit, 1, significant_bits=40)
            g = min(max(2, int(round(float(approx))) + 1), 1 << 20, int(prime))
        if isinstance(g, bool) or int(g) != g or not 2 <= int(g) <= min(1 << 20, self.prime):
            raise InputError(f"g: the number of hash values must be an integer in [2, 2^20], found {g!r}")
        self.g = int(g)
        self.ratio = ratio_below(limit, self.g)
        self._r, self._t = self.ratio.numerator, self.ratio.denominator
        self._D = self._r + (self.g - 1) * self._t
        space = self.prime * (self.prime - 1)
        if pool is not None:
            self.pool = np.array([int(s) for s in pool], dtype=np.int64)
            if self.pool.size == 0 or self.pool.min() < 0 or self.pool.max() >= space:
                raise InputError(f"pool: seeds must be integers in [0, P (P - 1)) = [0, {space})")
        elif seeds is None:
            self.pool = None
        else:
            if isinstance(seeds, bool) or int(seeds) != seeds or seeds < 1:
                raise InputError(f"seeds: the size of the seed pool must be an integer >= 1, found {seeds!r}")
            from mechdesign.mechanisms.exact_random import resolve_rng

            self.pool = uniform_below(resolve_rng(rng), space, int(seeds))

    def parameters(self):
        out = {"g": self.g, "ratio": str(self.ratio), "prime": self.prime}
        if self.pool is not None:
            out["pool"] = self.pool.tolist()
        return out

    def output_size(self):
        k = self.prime * (self.prime - 1) if self.pool is None else self.pool.size
        return k * self.g

    def components(self):
        return [(self.ratio, 1)]

    def collision_probability(self) -> Fraction:
        """κ = P(h_s(x) = h_s(x')) for x ≠ x' over a uniform seed (module docstring), exactly."""
        P, g = self.prime, self.g
        base, extra = divmod(P, g)  # extra residues v < extra occur base + 1 times
        pairs = extra * (base + 1) * base + (g - extra) * base * (base - 1)
        return Fraction(pairs, P * (P - 1))

    def support_probabilities(self):
        p = Fraction(self._r, self._D)
        kappa = self.collision_probability()
        return p, kappa * p + (1 - kappa) * Fraction(self._t, self._D)

    def sample_indices(self, idx, rng):
        n = idx.size
        if self.pool is None:
            seeds = uniform_below(rng, self.prime * (self.prime - 1), n)
        else:
            seeds = self.pool[uniform_below(rng, self.pool.size, n)]
        h = hash_values(seeds, idx, self.g, self.prime)
        u = uniform_below(rng, self._D, n)
        other = (u - self._r) // self._t
        other += other >= h
        return Reports(n=n, seeds=seeds, values=np.where(u < self._r, h, other))

    def support_counts(self, reports, block: int = 1 << 23):
        """C_x = Σ_s T[s, h_s(x)] over the distinct seeds s, T[s, v] = number of reports (s, v): O(U N + n)
        for U distinct seeds, in blocks of ``block`` hash evaluations."""
        n_sym = self.n_symbols
        useeds, inverse = np.unique(reports.seeds, return_inverse=True)
        table = np.zeros((useeds.size, self.g), dtype=np.int64)
        np.add.at(table, (inverse, reports.values), 1)
        x = np.arange(n_sym, dtype=np.int64)
        counts = np.zeros(n_sym, dtype=np.int64)
        step = max(1, block // n_sym)
        for start in range(0, useeds.size, step):
            s = useeds[start : start + step]
            h = hash_values(s[:, None], x[None, :], self.g, self.prime)
            counts += np.take_along_axis(table[start : start + step], h, axis=1).sum(axis=0)
        return counts

    def _seed_space(self) -> np.ndarray:
        if self.pool is not None:
            return self.pool
        space = self.prime * (self.prime - 1)
        if space > 10**5:
            raise InputError(f"to_kernel: {space} seeds; use a seed pool or a small prime")
        return np.arange(space, dtype=np.int64)

    def explicit_columns(self):
        seeds = self._seed_space()
        weight = Fraction(1, seeds.size)
        hi, lo = Fraction(self._r, self._D) * weight, Fraction(self._t, self._D) * weight
        x = np.arange(self.n_symbols)
        cols, labels = [], []
        for s in seeds.tolist():
            h = hash_values(np.int64(s), x, self.g, self.prime)
            for v in range(self.g):
                cols.append([hi if hv == v else lo for hv in h.tolist()])
                labels.append(f"{s}:{v}")
        return cols, labels

    def format_reports(self, reports):
        return [f"{s}:{v}" for s, v in zip(reports.seeds.tolist(), reports.values.tolist())]

    def parse_reports(self, cells, first_row=1):
        n = len(cells)
        seeds = np.empty(n, dtype=np.int64)
        values = np.empty(n, dtype=np.int64)
        space = self.prime * (self.prime - 1)
        for r, cell in enumerate(cells):
            s, sep, v = cell.strip().partition(":")
            try:
                if not sep:
                    raise ValueError
                seeds[r], values[r] = int(s), int(v)
            except ValueError:
                raise InputError(f"row {first_row + r}: malformed report {cell[:40]!r}: expected seed:value") from None
        bad = np.flatnonzero((seeds < 0) | (seeds >= space) | (values < 0) | (values >= self.g))
        if bad.size:
            r = int(bad[0])
            raise InputError(
                f"row {first_row + r}: impossible report {cells[r]!r}: seed must lie in [0, {space}) and value in [0, {self.g})"
            )
        if self.pool is not None:
            known = np.isin(seeds, self.pool)
            if not known.all():
                r = int(np.flatnonzero(~known)[0])
                raise InputError(
                    f"row {first_row + r}: impossible report {cells[r]!r}: seed not in the mechanism's pool"
                )
        return Reports(n=n, seeds=seeds, values=values)


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % k for k in range(2, math.isqrt(p) + 1))


def local_hashing(alphabet, epsilon, g=None, seeds=None, prior_set=None, rng=None, prime: int = MERSENNE_31):
    """Optimised local hashing with ``g`` hash values (default round(e^ε) + 1) and a fresh seed per report
    (``seeds=None``) or a pool of ``seeds`` seeds drawn once (from ``rng``: cryptographic by default)."""
    return LocalHashing(alphabet_labels(alphabet), epsilon, prior_set, g=g, seeds=seeds, prime=prime, rng=rng)
