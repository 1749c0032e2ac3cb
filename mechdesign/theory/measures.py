"""Quantities of a given kernel K (rows K_x, N × M): privacy, contraction, divergences, envelopes.

Papers cited (files in ``../shared/papers``):

* *Dobrushin paper*: Grosse, Saeidian, Oechtering, Skoglund, *Dobrushin Coefficients of
  Private Mechanisms Beyond Local Differential Privacy*.
* *f_α paper*: same authors, *Bounds on the Privacy Amplification of Arbitrary Channels via
  the Contraction of f_α-Divergence*.
* *Envelopes paper*: *Information Leakage Envelopes*.
* *Disclosure paper*: Saeidian, Cervia, Oechtering, Skoglund, *Rethinking Disclosure
  Prevention with Pointwise Maximal Leakage*.

Exactness. Functions that compare probabilities (PML, leakage capacity, Γ, quantiles of
the leakage random variable, Algorithm 1) work in exact rational arithmetic: a kernel may
be an :class:`~mechdesign.certify.exact.ExactKernel`, nested lists of ints, Fractions, strings
``"p/q"`` or floats, or a numpy array. A Python/numpy float ``0.45`` is read as the
decimal it prints as (``Fraction(repr(v))``, as :mod:`mechdesign.spec.models` reads priors), so
that ``0.45 + 0.45 == 0.9`` holds as the user meant; a prior summing to 1 within 1e−9 is
divided by its exact sum. Results are returned in nats as
floats (``math.inf`` where a ratio is unbounded). Divergences between two distributions
are computed in floating point.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from mechdesign.lp.rounding import float_or_inf

from mechdesign.theory.accuracy import InversionAccuracy, inversion_accuracy  # noqa: F401  (accuracy before release)
from mechdesign.theory.estimation import (  # noqa: F401  (the MLE's asymptotic accuracy, any kernel)
    mle_accuracy_summary,
    mle_covariance,
    mle_error,
)

__all__ = [
    # privacy of a kernel
    "pml",
    "leakage_capacity",
    "ldp",
    "max_leakage",
    "renyi_ldp",
    # contraction
    "dobrushin",
    "gamma_max",
    "gamma_min",
    "gamma_extremes",
    "confusion_graph",
    "disjoint_support_pairs",
    "has_disjoint_supports",
    "zeros_per_column",
    # divergences
    "total_variation",
    "kl_divergence",
    "hellinger_squared",
    "chi_squared",
    "f_divergence",
    "f_alpha_divergence",
    "renyi_divergence",
    "hockey_stick_divergence",
    # disclosure
    "min_entropy",
    "disclosure_threshold",
    "singling_out_threshold",
    "posterior_min_entropies",
    # probabilistic PML and envelopes
    "pml_tail_probability",
    "is_probabilistic_pml",
    "leakage_quantile",
    "leakage_upper_quantile",
    "binary_envelope",
    "event_leakage",
]


# ------------------------------------------------------------------ exact inputs
def _fraction(v) -> Fraction:
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"expected a number, found the boolean {v!r}")
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"entries must be finite, found {v}")
        return Fraction(repr(v))
    if isinstance(v, str):
        return Fraction(v.strip())
    raise ValueError(f"expected a number, found {type(v).__name__}")


def _frac_matrix(K) -> list[list[Fraction]]:
    from mechdesign.certify.exact import ExactKernel

    if isinstance(K, ExactKernel):
        return K.fractions()
    rows = [[_fraction(v) for v in row] for row in (K.tolist() if isinstance(K, np.ndarray) else K)]
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError("a kernel must be a non-empty rectangular matrix")
    if any(v < 0 for r in rows for v in r):
        raise ValueError("kernel entries must be >= 0")
    return rows


def _frac_vector(p, n: int | None = None, what: str = "prior") -> list[Fraction]:
    vec = [_fraction(v) for v in (p.tolist() if isinstance(p, np.ndarray) else p)]
    if n is not None and len(vec) != n:
        raise ValueError(f"{what} has {len(vec)} entries, the kernel has {n} rows")
    if any(v < 0 for v in vec):
        raise ValueError(f"{what} has a negative entry")
    total = sum(vec)
    if abs(total - 1) > Fraction(1, 10**9):
        raise ValueError(f"{what} must sum to 1 (within 1e-9), found {float(total):.17g}")
    return vec if total == 1 else [v / total for v in vec]  # as mechdesign.spec.models: divide by the exact sum


def _float_matrix(K) -> np.ndarray:
    from mechdesign.certify.exact import ExactKernel

    if isinstance(K, ExactKernel):
        return K.to_float()
    return np.asarray(K, dtype=float)


def _log(q: Fraction | float) -> float:
    """log of a positive rational without overflow (or of a float; inf stays inf)."""
    if isinstance(q, Fraction):
        return math.log(q.numerator) - math.log(q.denominator)
    return math.log(q) if q != math.inf else math.inf


def _columns(K: list[list[Fraction]]) -> list[list[Fraction]]:
    return [list(col) for col in zip(*K)]


def _dot(p: Sequence[Fraction], k: Sequence[Fraction]) -> Fraction:
    return sum((a * b for a, b in zip(p, k)), Fraction(0))


# ------------------------------------------------------------- privacy measures
def _pml_ratios(K: list[list[Fraction]], prior: list[Fraction]) -> tuple[list[Fraction | None], list[Fraction]]:
    """exp ℓ(X→y) = max_{x∈supp P} K_x(y) / P_Y(y) for each y (None where P_Y(y) = 0), and P_Y."""
    support = [x for x, p in enumerate(prior) if p > 0]
    ratios, py = [], []
    for col in _columns(K):
        mass = _dot(prior, col)
        py.append(mass)
        ratios.append(None if mass == 0 else max(col[x] for x in support) / mass)
    return ratios, py


def pml(K, prior) -> np.ndarray:
    """ℓ(X→y) = log max_{x ∈ supp P} K_x(y) / P_Y(y) for every output y, nats (NaN where P_Y(y) = 0).

    Dobrushin paper §II-B; envelopes paper Definition 4 (and the simplification below it).
    Domain: any kernel, any prior P on the N rows (for a prior with full support the
    maximum runs over all x). Values lie in [0, log 1/min_{x∈supp P} P(x)] (envelopes paper eq. 6).
    """
    Kf = _frac_matrix(K)
    ratios, _ = _pml_ratios(Kf, _frac_vector(prior, len(Kf)))
    return np.array([math.nan if r is None else _log(r) for r in ratios])


def _as_prior_set(prior_set):
    """A PriorSet model, a mapping or the shorthand ``"min_mass:0.05"`` / ``"simplex"`` /
    ``"point:0.2,0.8"`` (validated as in a spec), or a sequence of priors read as their convex hull."""
    if hasattr(prior_set, "kind"):
        return prior_set
    if isinstance(prior_set, (str, dict)):
        from pydantic import TypeAdapter, ValidationError

        from mechdesign.spec.errors import InputError
        from mechdesign.spec.models import PriorSet
        from mechdesign.spec.shorthand import expand_prior_set_shorthand

        try:
            return TypeAdapter(PriorSet).validate_python(expand_prior_set_shorthand(prior_set))
        except ValidationError as exc:
            raise InputError(f"prior_set: {exc.errors(include_url=False)[0]['msg']}: {prior_set!r}") from None
    return [list(v) for v in prior_set]


def _column_extremes(prior_set, n: int, col: list[Fraction]) -> tuple[Fraction, Fraction]:
    """(min_{P∈𝒫} P·k, max_{P∈𝒫} P·k), exactly."""
    from mechdesign.privacy.priors import min_expectation

    if isinstance(prior_set, list):
        vals = [_dot(_frac_vector(v, n), col) for v in prior_set]
        return min(vals), max(vals)
    low, _ = min_expectation(prior_set, n, col)
    neg, _ = min_expectation(prior_set, n, [-v for v in col])
    return Fraction(low), -Fraction(neg)


def _capacity_ratio(K: list[list[Fraction]], prior_set) -> Fraction | float:
    n = len(K)
    worst: Fraction | float = Fraction(1)
    for col in _columns(K):
        top = max(col)
        if top == 0:
            continue
        low, _ = _column_extremes(prior_set, n, col)
        if low <= 0:
            return math.inf
        worst = max(worst, top / low)
    return worst


def leakage_capacity(K, prior_set) -> float:
    """C(K, 𝒫) = sup_{P∈𝒫} max_y ℓ(X→y) = max_y log max_x K_x(y) / min_{P∈𝒫} P·K(:,y), nats.

    Dobrushin paper Definition 1 (𝒫-local leakage capacity); with 𝒫 = all priors it is
    LDP(K) (Proposition 1; disclosure paper Theorem 2), with 𝒫 = Q_X(c) the minimum is
    c Σ_x K_x(y) + (1 − Nc) min_x K_x(y) (Lemma 4). ``prior_set`` is a
    :mod:`mechdesign.spec.models` prior-set model (any kind) or a list of priors (their convex
    hull). The supremum runs over the closure of 𝒫, so the maximum is over all rows x.
    Returns ``inf`` when some output has positive mass under one prior of 𝒫 and zero
    under another. Exact (rational) computation.
    """
    from mechdesign.theory.column_aggregate_measures import aggregate_capacity_ratio

    ps = _as_prior_set(prior_set)
    fast = aggregate_capacity_ratio(K, ps)  # O(NM) integer aggregates when 𝒫 = Q_X(c)
    if fast is not None:
        return _log(fast)
    Kf = _frac_matrix(K)
    return _log(_capacity_ratio(Kf, ps))


def ldp(K) -> float:
    """LDP(K) = max_y max_{x,x'} log K_x(y)/K_x'(y), nats (Dobrushin paper eq. 1).

    ``inf`` when a column mixes zeros and non-zeros; all-zero columns are ignored. Domain: any kernel.
    """
    from mechdesign.theory.column_aggregate_measures import aggregate_ldp_ratio

    fast = aggregate_ldp_ratio(K)  # O(NM) integer aggregates of an exact kernel
    if fast is not None:
        return _log(fast)
    worst = Fraction(1)
    for col in _columns(_frac_matrix(K)):
        top, low = max(col), min(col)
        if top == 0:
            continue
        if low == 0:
            return math.inf
        worst = max(worst, top / low)
    return _log(worst)


def max_leakage(K) -> float:
    """ℒ(X→Y) = log Σ_y max_x K_x(y), nats: maximal leakage / multiplicative Bayes capacity
    (envelopes paper, Theorem 3). Independent of the prior. Domain: any stochastic kernel."""
    from mechdesign.theory.column_aggregate_measures import aggregate_max_leakage_sum

    fast = aggregate_max_leakage_sum(K)  # O(NM) integer aggregates of an exact kernel
    if fast is not None:
        return _log(fast)
    return _log(sum((max(col) for col in _columns(_frac_matrix(K))), Fraction(0)))


def renyi_ldp(K, alpha: float) -> float:
    """RLDP^(α)(K) = max_{x,x'} D_α(K_x ‖ K_x'), nats (f_α paper eqs. 47–48).

    Domain: α ≥ 0 (α = 1: KL; α = ∞: equals :func:`ldp`). ``inf`` when some pair is not
    absolutely continuous and α ≥ 1.
    """
    Kf = _float_matrix(K)
    n = Kf.shape[0]
    return max((renyi_divergence(Kf[i], Kf[j], alpha) for i in range(n) for j in range(n) if i != j), default=0.0)


# ----------------------------------------------------------------- contraction
DOBRUSHIN_PAIRS_AT_ONCE = 1 << 23
"""Up to this many row pairs (64 MB of distances, N ≤ 4096) go to one ``pdist``; larger kernels are taken a
block of rows at a time against the rows from it on (``cdist``, at most 32 MB at once)."""


DOBRUSHIN_NUMPY_ENTRIES = 1 << 18
"""Kernels with N²M up to this (2 MB of differences) are measured by one numpy broadcast."""


def dobrushin(K) -> float:
    """η_TV(K) = max_{x, x'} TV(K_x, K_x') = max ½ Σ_y |K_x(y) − K_x'(y)| (Dobrushin paper, eq. 2).

    O(N²M) in scipy's C loops for ℓ1 distances ("cityblock"): 2–3× numpy's row-by-row differences at
    N = 1000 (0.69 → 0.22–0.35 s). Small kernels (N²M ≤ :data:`DOBRUSHIN_NUMPY_ENTRIES`) take one numpy
    broadcast instead, which costs less than importing ``scipy.spatial``, summed in the same order (the same
    result to the bit)."""
    K = np.ascontiguousarray(K, dtype=float)
    n = K.shape[0]
    if n < 2:
        return 0.0
    if n * n * K.shape[1] <= DOBRUSHIN_NUMPY_ENTRIES:
        # summed left to right (cumsum), as scipy's cityblock loop does: the same double
        return 0.5 * float(np.cumsum(np.abs(K[:, None, :] - K[None, :, :]), axis=2)[..., -1].max())
    from scipy.spatial.distance import cdist, pdist

    if n * (n - 1) // 2 <= DOBRUSHIN_PAIRS_AT_ONCE:
        return 0.5 * float(pdist(K, "cityblock").max())
    best = 0.0
    step = max(1, (1 << 22) // n)  # pairs inside a block are measured twice: step/N of the work
    for x0 in range(0, n - 1, step):
        best = max(best, 0.5 * float(cdist(K[x0 : x0 + step], K[x0:], "cityblock").max()))
    return best


def gamma_extremes(K, prior_set) -> tuple[float, float]:
    """(Γ_max, Γ_min) of K over a prior set: the extreme likelihood ratios of output laws,

        Γ_max = sup_{P,Q∈𝒫} max_y (K∘P)(y) / (K∘Q)(y) = max_y max_P P·K(:,y) / min_Q Q·K(:,y),

    and Γ_min the infimum, which equals 1/Γ_max since P and Q range over the same set.
    Dobrushin paper §IV (definitions under eq. 8, here for a given kernel); f_α paper
    eqs. 42–43, and eqs. 56–57 when ``prior_set`` is the list of rows of an RLDP
    mechanism P_{X|W}. Outputs of zero mass under every prior are skipped; (inf, 0)
    when an output has zero mass under some prior and positive mass under another.
    """
    ps = _as_prior_set(prior_set)
    fast = _lemma4_gamma_extremes(K, ps)
    if fast is not None:
        return fast
    Kf = _frac_matrix(K)
    n = len(Kf)
    worst: Fraction | float = Fraction(1)
    for col in _columns(Kf):
        low, high = _column_extremes(ps, n, col)
        if high <= 0:
            continue
        if low <= 0:
            return math.inf, 0.0
        worst = max(worst, high / low)
    return float_or_inf(worst), float(1 / worst)


def _lemma4_gamma_extremes(K, prior_set) -> tuple[float, float] | None:
    """:func:`gamma_extremes` for an exact kernel with int64 numerators and 𝒫 = Q_X(c) (min_mass, the
    simplex, the uniform point prior), from three exact integer aggregates per column (Lemma 4 of the
    Dobrushin paper and its mirror image: max_{P∈Q_X(c)} P·k = c Σ_x k_x + (1 − Nc) max_x k_x), or None."""
    from mechdesign.certify.exact import ExactKernel
    from mechdesign.privacy.priors import rules

    if not isinstance(K, ExactKernel) or isinstance(prior_set, list):
        return None
    ints = K.int64()
    if ints is None or ints.ndim != 2 or ints.size == 0:
        return None
    maxima, minima, sums = K.column_aggregates()  # cached on the kernel: the exact check computed them
    if minima.min() < 0:
        return None
    n = ints.shape[0]
    c = rules(prior_set, n).equivalent_c()
    if c is None:
        return None
    c = Fraction(c)
    p, rest = c.numerator, c.denominator - n * c.numerator  # c·q and (1 − Nc)·q, q = c.denominator
    worst = Fraction(1)
    for s, top, bottom in zip(sums.tolist(), maxima.tolist(), minima.tolist()):
        high, low = p * s + rest * top, p * s + rest * bottom  # q·max_P P·A(:,y), q·min_P P·A(:,y)
        if high <= 0:
            continue
        if low <= 0:
            return math.inf, 0.0
        if high * worst.denominator > worst.numerator * low:
            worst = Fraction(high, low)
    return float_or_inf(worst), float(1 / worst)


def gamma_max(K, prior_set) -> float:
    """Γ_max of K over a prior set; see :func:`gamma_extremes`."""
    return gamma_extremes(K, prior_set)[0]


def gamma_min(K, prior_set) -> float:
    """Γ_min of K over a prior set (= 1/Γ_max); see :func:`gamma_extremes`."""
    return gamma_extremes(K, prior_set)[1]


def confusion_graph(K) -> np.ndarray:
    """Adjacency matrix (N × N, bool) of the confusion graph of K: x ~ x' iff some output y
    has K_x(y) > 0 and K_x'(y) > 0 (f_α paper eqs. 16–17). The diagonal is True."""
    support = _float_matrix(K) > 0
    s = support.astype(np.float64)  # 0/1 entries: the counts (≤ M < 2^53) are exact in BLAS float64
    return (s @ s.T) > 0


def disjoint_support_pairs(K) -> list[tuple[int, int]]:
    """Pairs x < x' whose rows have disjoint supports (f_α paper eq. 11; Dobrushin paper eq. 6):
    the missing edges of the confusion graph."""
    adj = confusion_graph(K)
    rows, cols = np.nonzero(np.triu(~adj, 1))  # row-major: the pairs (i, j), i < j, in lexicographic order
    return list(zip(rows.tolist(), cols.tolist()))


def has_disjoint_supports(K) -> bool:
    """True when two rows have disjoint supports (the confusion graph is incomplete). Then
    η_α(K, all priors) = 1 for every α (f_α paper Proposition 3) and η_f(K) = 1 for every
    twice-differentiable f (Dobrushin paper, proof of Theorem 2)."""
    return bool(disjoint_support_pairs(K))


def zeros_per_column(K) -> int:
    """The largest number of zero entries in a column of K that is not all zero (compare
    Lemma 1 of the Dobrushin paper; an all-zero column is an output that never occurs)."""
    from mechdesign.certify.exact import ExactKernel

    ints = K.int64() if isinstance(K, ExactKernel) else None
    if ints is not None and ints.ndim == 2:  # an exact kernel: K_xy = 0 exactly when its numerator is 0
        aggregates = K.column_aggregates()
        if aggregates is not None:
            # a column whose smallest numerator is positive has no zero: only the live columns with a zero are
            # counted (none, for kernels with every entry positive: no pass over the kernel at all)
            peaks, lows = aggregates[0], aggregates[1]
            counted = np.flatnonzero((peaks > 0) & (lows <= 0))
            if counted.size == 0:
                return 0
            part = ints if 4 * counted.size > ints.shape[1] else ints[:, counted]
            zeros = ints.shape[0] - np.count_nonzero(part, axis=0)
            return int(zeros[counted].max() if part is ints else zeros.max())
        live = ints.max(axis=0) > 0
        zeros = ints.shape[0] - np.count_nonzero(ints, axis=0)
    else:
        Kf = _float_matrix(K)
        live = Kf.max(axis=0) > 0
        zeros = Kf.shape[0] - np.count_nonzero(Kf, axis=0)  # NaN counts as non-zero, as NaN == 0 is False
    return int(zeros[live].max()) if live.any() else 0


# ------------------------------------------------------------------ divergences
def _pq(p, q) -> tuple[np.ndarray, np.ndarray]:
    p, q = np.asarray(p, float), np.asarray(q, float)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(f"p and q must be vectors of the same length, found shapes {p.shape} and {q.shape}")
    if (p < 0).any() or (q < 0).any():
        raise ValueError("distributions must have non-negative entries")
    return p, q


def total_variation(p, q) -> float:
    """TV(P‖Q) = ½ Σ |P − Q| (f(t) = ½|t − 1|; Dobrushin paper §II-A)."""
    p, q = _pq(p, q)
    return float(0.5 * np.abs(p - q).sum())


def kl_divergence(p, q) -> float:
    """D(P‖Q) = Σ P log P/Q, nats (f(t) = t log t); ``inf`` unless P ≪ Q."""
    p, q = _pq(p, q)
    m = p > 0
    if (q[m] == 0).any():
        return math.inf
    return float(np.sum(p[m] * (np.log(p[m]) - np.log(q[m]))))  # no overflow of p/q (q = 5e-324)


def hellinger_squared(p, q) -> float:
    """H²(P‖Q) = Σ (√P − √Q)², the f-divergence of f(t) = (1 − √t)² (Dobrushin paper §II-A;
    no factor ½). Range [0, 2]."""
    p, q = _pq(p, q)
    return float(np.sum((np.sqrt(p) - np.sqrt(q)) ** 2))


def chi_squared(p, q) -> float:
    """χ²(P‖Q) = Σ (P − Q)²/Q (f(t) = (t − 1)²); ``inf`` unless P ≪ Q."""
    p, q = _pq(p, q)
    m = q > 0
    if (p[~m] > 0).any():
        return math.inf
    return float(np.sum((p[m] - q[m]) ** 2 / q[m]))


def f_divergence(p, q, f: Callable[[float], float]) -> float:
    """D_f(P‖Q) = Σ_y Q(y) f(P(y)/Q(y)) for a convex f with f(1) = 0 (Dobrushin paper §II-A).

    Domain: P ≪ Q (outputs with Q(y) = 0 must have P(y) = 0); raises ValueError otherwise.
    """
    p, q = _pq(p, q)
    m = q > 0
    if (p[~m] > 0).any():
        raise ValueError("f_divergence needs P << Q (P(y) = 0 wherever Q(y) = 0)")
    return float(sum(qi * f(pi / qi) for pi, qi in zip(p[m], q[m])))


def _power_sum(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    """Σ P^α Q^(1−α) over the support of P (inf when α > 1 and P is not ≪ Q)."""
    m = p > 0
    if alpha > 1 and (q[m] == 0).any():
        return math.inf
    m &= q > 0
    return float(np.sum(p[m] ** alpha * q[m] ** (1 - alpha)))


def f_alpha_divergence(p, q, alpha: float) -> float:
    """D_{f_α}(P‖Q) with f_α(x) = 1 − x^α (α < 1), x log x (α = 1), x^α − 1 (α > 1) (f_α paper eq. 3).

    Domain: α > 0. ``inf`` for α > 1 unless P ≪ Q.
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, found {alpha!r}")
    p, q = _pq(p, q)
    if alpha == 1:
        return kl_divergence(p, q)
    s = _power_sum(p, q, alpha)
    return max(0.0, 1.0 - s if alpha < 1 else s - 1.0)  # ≥ 0; clip rounding below 0


def renyi_divergence(p, q, alpha: float) -> float:
    """D_α(P‖Q) = 1/(α − 1) log Σ P^α Q^(1−α), nats (f_α paper eq. 4: = log(D_{f_α} + 1)/(α − 1)).

    Domain: α ≥ 0, including the limits α = 0 (−log Q(supp P)), α = 1 (KL) and α = ∞
    (log max P/Q, f_α paper eq. 1).
    """
    p, q = _pq(p, q)
    if alpha == math.inf:
        m = p > 0
        if (q[m] == 0).any():
            return math.inf
        return float(np.log(np.max(p[m] / q[m])))
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, found {alpha!r}")
    if alpha == 1:
        return kl_divergence(p, q)
    if alpha == 0:
        mass = float(q[p > 0].sum())
        return math.inf if mass == 0 else -math.log(mass)
    s = _power_sum(p, q, alpha)
    if s == math.inf:
        return math.inf
    if s == 0:
        return math.inf  # α < 1 and disjoint supports
    return math.log(s) / (alpha - 1)


def hockey_stick_divergence(p, q, gamma: float) -> float:
    """E_γ(P‖Q) = ½ Σ |P − γQ| − ½|1 − γ| (f_α paper eq. 5; E_1 = TV). Domain: γ > 0."""
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, found {gamma!r}")
    p, q = _pq(p, q)
    return float(0.5 * np.abs(p - gamma * q).sum() - 0.5 * abs(1 - gamma))


# ------------------------------------------------------------------- disclosure
def min_entropy(prior) -> float:
    """H_∞(P) = −log max_x P(x), nats (disclosure paper, Definition of min-entropy)."""
    return -_log(max(_frac_vector(prior)))


def disclosure_threshold(prior) -> float:
    """log 1/(1 − p_min): (ε, P_X)-PML with ε below this implies finite leakage capacity,
    so no attribute of X is disclosed; at or above it some mechanism discloses one
    (disclosure paper, Proposition 7). Domain: a prior with N ≥ 2 (p_min < 1)."""
    p = _frac_vector(prior)
    p_min = min(p)
    if p_min >= 1:
        raise ValueError("disclosure_threshold needs a prior on at least 2 symbols")
    return -_log(1 - p_min)


def singling_out_threshold(prior) -> float:
    """H_∞(P_X): (ε, P_X)-PML with ε < H_∞(P_X) never singles out the value of X
    (disclosure paper, Corollary 8)."""
    return min_entropy(prior)


def posterior_min_entropies(K, prior) -> np.ndarray:
    """H_∞(P_{X|Y=y}) for every output y (NaN where P_Y(y) = 0). K singles out X when the
    smallest is 0 (disclosure paper, Definition of singling out)."""
    Kf = _frac_matrix(K)
    p = _frac_vector(prior, len(Kf))
    out = []
    for col in _columns(Kf):
        mass = _dot(p, col)
        out.append(math.nan if mass == 0 else -_log(max(pi * k for pi, k in zip(p, col)) / mass))
    return np.array(out)


# ------------------------------------------------- probabilistic PML, envelopes
def _delta(delta) -> Fraction:
    d = _fraction(delta)
    if not 0 < d < 1:
        raise ValueError(f"delta must lie in (0, 1), found {float(d):g}")
    return d


def _leakage_law(K, prior) -> list[tuple[Fraction, Fraction]]:
    """The law of the leakage random variable: (exp ℓ(y), P_Y(y)) for outputs with P_Y(y) > 0."""
    Kf = _frac_matrix(K)
    ratios, py = _pml_ratios(Kf, _frac_vector(prior, len(Kf)))
    return [(r, m) for r, m in zip(ratios, py) if r is not None]


def pml_tail_probability(K, prior, epsilon: float) -> float:
    """P_Y{ℓ(X→Y) > ε}: the failure probability of probabilistic PML (envelopes paper, Definition 5)."""
    return float(sum((m for r, m in _leakage_law(K, prior) if _log(r) > epsilon), Fraction(0)))


def is_probabilistic_pml(K, prior, epsilon: float, delta) -> bool:
    """True when P_{XY} is (ε, δ)-probabilistic PML: P_Y{ℓ(Y) > ε} ≤ δ (envelopes paper,
    Definition 5; not closed under post-processing, Example 2). Exact in δ and P_Y."""
    d = _delta(delta)
    return sum((m for r, m in _leakage_law(K, prior) if _log(r) > epsilon), Fraction(0)) <= d


def leakage_quantile(K, prior, delta) -> float:
    """ε_Y(δ) = inf{t ≥ 0 : P{ℓ(Y) ≤ t} ≥ 1 − δ} = min_{A: P_Y(A) ≥ 1−δ} max_{y∈A} ℓ(y)
    (envelopes paper eqs. 9–10): the left-continuous quantile of the leakage, without
    post-processing. Domain: δ ∈ (0, 1). Exact comparisons of probabilities."""
    d = _delta(delta)
    total = Fraction(0)
    for r, m in sorted(_leakage_law(K, prior), key=lambda t: t[0]):
        total += m
        if total >= 1 - d:
            return _log(r)
    raise AssertionError("the leakage law has total mass 1")  # pragma: no cover


def leakage_upper_quantile(K, prior, delta) -> float:
    """ε̄_Y(δ) = sup{t ≥ 0 : P{ℓ(Y) ≤ t} ≤ 1 − δ} = max_{A: P_Y(A) ≥ δ} min_{y∈A} ℓ(y)
    (envelopes paper §IV, below Theorem 2's preamble): the right-continuous quantile,
    without post-processing; a lower bound on the envelope ε_c(δ). Domain: δ ∈ (0, 1)."""
    d = _delta(delta)
    total = Fraction(0)
    for r, m in sorted(_leakage_law(K, prior), key=lambda t: t[0], reverse=True):
        total += m
        if total >= d:
            return _log(r)
    raise AssertionError("the leakage law has total mass 1")  # pragma: no cover


def event_leakage(K, prior, event) -> float:
    """ℓ(X→E) = log max_x P_{Y|X=x}(E) / P_Y(E), nats: the PML of the outcome Z = 1 of
    Z = 1_E(Y) (envelopes paper, eq. 20 and Appendix A).

    ``event`` is a set (``set``/``frozenset``) of output indices, or a sequence of M
    weights w ∈ [0, 1] (a randomised indicator: P(Z = 1 | Y = y) = w_y).
    Domain: P_Y(E) > 0.
    """
    Kf = _frac_matrix(K)
    p = _frac_vector(prior, len(Kf))
    m = len(Kf[0])
    if isinstance(event, (set, frozenset)):
        idx = set(int(y) for y in event)
        if not idx <= set(range(m)):
            raise ValueError(f"event has outputs outside 0..{m - 1}")
        w = [Fraction(int(y in idx)) for y in range(m)]
    else:
        w = [_fraction(v) for v in event]
        if len(w) != m:
            raise ValueError(f"event weights: expected {m} entries (one per output), found {len(w)}")
        if any(not 0 <= v <= 1 for v in w):
            raise ValueError("event weights must lie in [0, 1]")
    support = [x for x, px in enumerate(p) if px > 0]
    rows = [_dot(w, Kf[x]) for x in range(len(Kf))]
    mass = _dot(p, rows)
    if mass == 0:
        raise ValueError("event_leakage needs P_Y(E) > 0")
    return _log(max(rows[x] for x in support) / mass)


def binary_envelope(K, prior, delta) -> float:
    """ε_b(δ) by Algorithm 1 of the envelopes paper: for each x, the largest
    P_{Y|X=x}(E)/P_Y(E) over (randomised) events E with P_Y(E) = δ, filled greedily in
    decreasing information density s_x(y) = K_x(y)/P_Y(y) with randomisation at the
    boundary output (eq. 23); ε_b = log max_x of that.

    It is the largest leakage of a binary post-processing outcome of probability ≥ δ
    (eq. 22; equal to eq. 13 for δ ≤ ½), hence a lower bound on the envelope ε_c(δ).
    Domain: δ ∈ (0, 1); exact arithmetic.
    """
    d = _delta(delta)
    Kf = _frac_matrix(K)
    p = _frac_vector(prior, len(Kf))
    cols = _columns(Kf)
    py = [_dot(p, col) for col in cols]
    outs = [y for y in range(len(cols)) if py[y] > 0]
    best = Fraction(0)
    for x, px in enumerate(p):
        if px == 0:
            continue
        order = sorted(outs, key=lambda y: Kf[x][y] / py[y], reverse=True)
        acc_p, acc_k = Fraction(0), Fraction(0)
        for y in order:
            if acc_p + py[y] >= d:
                zeta = (d - acc_p) / py[y]
                acc_k += zeta * Kf[x][y]
                break
            acc_p += py[y]
            acc_k += Kf[x][y]
        best = max(best, acc_k / d)
    return _log(best)
