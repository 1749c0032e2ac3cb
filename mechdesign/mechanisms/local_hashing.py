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
seeds. Report format: ``seed:value`` (two integers).

Decoding with a known pool S (k seeds). Given the pool, a report is drawn from the explicit mixture
Pr[s, v | x] = (1/k) K_s(v | x), K_s(v | x) = r/D if h_s(x) = v else t/D (D = r + (g − 1) t), so the
probability that a report from x' supports x is

    A[x, x'] = (1/k) Σ_{s∈S} ( r/D · [h_s(x) = h_s(x')] + t/D · [h_s(x) ≠ h_s(x')] )
             = t/D + (r − t)/D · κ_S(x, x'),   κ_S(x, x') = #{s ∈ S : h_s(x) = h_s(x')} / k,

(A[x, x] = p*), and E[C / n] = A P for reports drawn i.i.d. from P. The fresh-seed decoder replaces every
κ_S(x, x') by its average κ over seeds: it is unbiased on average over the pool's draw only. The pool
decoder P̂ = A^{-1} C / n is exactly unbiased for the pool in use, whenever A is invertible (it is not
when two symbols collide under every seed of the pool: no unbiased estimator exists then). Its covariance
is A^{-1} Σ A^{-T} / n with Σ = E[Z Z^T] − π π^T, Z the 0/1 support vector of one report,
E[Z Z^T] = Σ_{s, v} Pr[s, v] z_{s,v} z_{s,v}^T and Pr[s, v] = (1/k) (t/D + (r − t)/D · Σ_{x: h_s(x)=v} P(x));
standard errors plug in the projected estimate. Forming κ_S costs about k N² / g operations and A is N × N:
above :data:`POOL_EXACT_LIMIT` operations (or N > :data:`POOL_EXACT_MAX_SYMBOLS`) the fresh-seed decoder is
used and the estimate carries a warning saying it is unbiased on average over pools only. With a pool of
those sizes, ``estimate(reports, method="mle")`` is the maximum-likelihood estimate on the (seed, value)
counts, with intervals (EM, :mod:`mechdesign.mechanisms.support_likelihood`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from fractions import Fraction

import numpy as np

from mechdesign.mechanisms.base import Reports, StructuredMechanism, project_to_simplex
from mechdesign.mechanisms.exact_random import uniform_below
from mechdesign.mechanisms.krr import alphabet_labels
from mechdesign.mechanisms.two_level import allowed_ratio, ratio_below
from mechdesign.spec.errors import InputError

__all__ = ["LocalHashing", "local_hashing", "hash_values", "MERSENNE_31", "POOL_EXACT_LIMIT", "POOL_EXACT_MAX_SYMBOLS"]

MERSENNE_31 = (1 << 31) - 1
POOL_EXACT_MAX_SYMBOLS = 3000
"""Largest N for which a pool's N × N support matrix A is formed and solved (module docstring)."""
POOL_EXACT_LIMIT = 3 * 10**8
"""Largest k N² / g (work to form the pool's collision matrix) for the pool-exact decoder."""
FRESH_SEED_WARNING = (
    "local hashing with a seed pool: the pool decoder is too large here (N = {n}, {k} seeds), so the "
    "fresh-seed estimator is used; it is unbiased only on average over pools, not for this pool"
)


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

    def pool_decoder_available(self) -> bool:
        """True when a pool is in use and its N × N support matrix is small enough (module docstring)."""
        if self.pool is None:
            return False
        n = self.n_symbols
        return n <= POOL_EXACT_MAX_SYMBOLS and self.pool.size * n * n <= POOL_EXACT_LIMIT * self.g

    def _pool_incidence(self):
        """The sparse N × (k g) 0/1 matrix M with M[x, (s, v)] = [h_s(x) = v] (column (s, v) is the support of
        report (s, v)); cached."""
        cached = self.__dict__.get("_incidence")
        if cached is None:
            from scipy.sparse import csr_matrix

            n, k = self.n_symbols, self.pool.size
            x = np.arange(n, dtype=np.int64)
            h = hash_values(self.pool[:, None], x[None, :], self.g, self.prime)  # (k, N)
            cols = (np.arange(k, dtype=np.int64)[:, None] * self.g + h).ravel()
            rows = np.broadcast_to(x[None, :], (k, n)).ravel()
            cached = csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n, k * self.g))
            self.__dict__["_incidence"] = cached
        return cached

    def pool_support_matrix(self) -> np.ndarray:
        """A[x, x'] = t/D + (r − t)/D · κ_S(x, x'): the probability that a report from x' supports x, given the
        pool (module docstring)."""
        cached = self.__dict__.get("_pool_A")
        if cached is None:
            m = self._pool_incidence()
            collisions = (m @ m.T).toarray() / self.pool.size
            cached = (self._t + (self._r - self._t) * collisions) / self._D
            self.__dict__["_pool_A"] = cached
        return cached

    def _pool_covariance(self, prior) -> np.ndarray:
        """Cov of one report's support vector Z under the pool and ``prior``: E[Z Z^T] − π π^T."""
        m = self._pool_incidence()
        f = np.clip(np.asarray(prior, dtype=float), 0, None)
        f = f / f.sum()
        k = self.pool.size
        mass = m.T @ f  # Σ_{x: h_s(x) = v} f(x), per (s, v)
        w = (self._t + (self._r - self._t) * mass) / (self._D * k)
        second = (m.multiply(w[None, :]) @ m.T).toarray()
        pi = np.diag(second).copy()
        return second - np.outer(pi, pi)

    def _pool_estimator_covariance(self, n: int, prior) -> np.ndarray:
        a_inv = np.linalg.inv(self.pool_support_matrix())
        return a_inv @ self._pool_covariance(prior) @ a_inv.T / n

    def variances(self, n, prior=None, population=False):
        """Var f̂_x: with a pool small enough, of the pool decoder A^{-1} C / n for i.i.d. records (exact, from
        the pool's explicit mixture); otherwise Wang et al.'s fresh-seed formula (base class)."""
        if self.pool_decoder_available() and not population and self._pool_invertible():
            f = np.full(self.n_symbols, 1.0 / self.n_symbols) if prior is None else np.asarray(prior, dtype=float)
            if f.shape != (self.n_symbols,):
                raise InputError(f"prior: needs {self.n_symbols} masses, found shape {f.shape}")
            return np.diag(self._pool_estimator_covariance(n, f)).copy()
        return super().variances(n, prior, population)

    def _pool_invertible(self) -> bool:
        """A is invertible (condition number < 1e10); cached."""
        cached = self.__dict__.get("_pool_invertible_flag")
        if cached is None:
            cached = bool(np.linalg.cond(self.pool_support_matrix()) < 1e10)
            self.__dict__["_pool_invertible_flag"] = cached
        return cached

    def estimate_from_counts(self, counts, n, method="unbiased", confidence=0.95, simultaneous=False):
        """With a pool: the pool decoder P̂ = A^{-1} C / n (exactly unbiased for this pool, module docstring),
        standard errors from its covariance at the projected estimate and normal intervals clipped to [0, 1];
        when the pool decoder is too large or A is singular, the fresh-seed decoder with a warning."""
        if self.pool is None:
            return super().estimate_from_counts(counts, n, method, confidence, simultaneous)
        if not (self.pool_decoder_available() and self._pool_invertible()):
            base = super().estimate_from_counts(counts, n, method, confidence, simultaneous)
            why = FRESH_SEED_WARNING.format(n=self.n_symbols, k=self.pool.size)
            if self.pool_decoder_available():
                why = (
                    "local hashing with a seed pool: two symbols collide under every seed of the pool, "
                    + why.split(", so ")[1]
                )
            warnings.warn(why, UserWarning, stacklevel=2)
            return replace(
                base, warnings=base.warnings + (why,), diagnostics={**base.diagnostics, "decoder": "fresh-seed"}
            )
        from scipy.stats import norm

        if method == "mle":
            raise InputError(
                "--method mle: local hashing's likelihood needs the (seed, value) counts, not the support counts; "
                "use unbiased or projected (in Python: estimate(reports, method='mle') with a seed pool)"
            )
        base = super().estimate_from_counts(counts, n, method, confidence, simultaneous)  # validates inputs
        raw = np.linalg.solve(self.pool_support_matrix(), np.asarray(counts, dtype=float) / n)
        projected = project_to_simplex(raw)
        se = np.sqrt(np.clip(np.diag(self._pool_estimator_covariance(n, projected)), 0, None))
        alpha = 1 - confidence
        z = norm.ppf(1 - (alpha / self.n_symbols if simultaneous else alpha) / 2)
        est = raw if method == "unbiased" else projected
        return replace(
            base,
            method=method,
            estimate=est,
            standard_error=se,
            lower=np.clip(raw - z * se, 0, 1),
            upper=np.clip(raw + z * se, 0, 1),
            uncertainty="asymptotic: the pool's exact support matrix, plug-in covariance, normal intervals",
            diagnostics={**base.diagnostics, "decoder": "pool-exact", "pool_size": int(self.pool.size)},
        )

    def has_report_likelihood(self):
        """A seed pool small enough for the pool decoder (module docstring): then the likelihood is a function of
        the (seed, value) counts. With a fresh seed per report each report has its own hash, and there is no
        compact likelihood (``method="mle"`` is refused)."""
        return self.pool_decoder_available()

    def support_sets(self, reports):
        """The (seed, value) counts T[s, v] of a known pool as grouped reports: given the pool,
        Pr[s, v] ∝ 1 + (R − 1) P(B_{s,v}) with B_{s,v} = {x : h_s(x) = v} (module docstring), so the
        log-likelihood is Σ_{s,v} T[s, v] log(1 + (R − 1) P(B_{s,v})) + const
        (:mod:`mechdesign.mechanisms.support_likelihood`)."""
        from mechdesign.mechanisms.support_likelihood import SupportSets

        if not self.has_report_likelihood():
            return super().support_sets(reports)
        m = self._pool_incidence()
        order = np.argsort(self.pool, kind="stable")  # each report's seed → its position in the pool
        where = order[np.searchsorted(self.pool[order], reports.seeds)]
        table = np.bincount(where * self.g + reports.values, minlength=self.pool.size * self.g).astype(float)
        used = np.flatnonzero(table)
        cols = m[:, used].tocsc()
        cols.sort_indices()
        return SupportSets(
            row=np.zeros(used.size, dtype=np.int64),
            offsets=cols.indptr.astype(np.int64),
            positions=cols.indices.astype(np.int64),
            rm1=np.full(used.size, float(self.ratio) - 1.0),
            weight=table[used],
            n_rows=1,
        )

    def mle_from_counts(self, counts, n):
        if self.pool is None:
            raise InputError(
                "--method mle: local hashing with a fresh seed per report has no compact likelihood (each report "
                "has its own hash); use unbiased or projected, or a seed pool (--seeds K)"
            )
        raise InputError(
            f"--method mle: local hashing with this seed pool is too large for its likelihood here "
            f"(N = {self.n_symbols}, {self.pool.size} seeds); use unbiased or projected"
        )

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
