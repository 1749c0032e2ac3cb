"""Results of the disclosure paper: Saeidian, Cervia, Oechtering, Skoglund, *Rethinking Disclosure
Prevention with Pointwise Maximal Leakage* (``../shared/papers/rethinking-disclosure-prevention-pml.txt``).

What is here (section numbers of the paper):

* §2.3 conditional PML (Definition of conditional PML): :func:`conditional_pml`.
* §3.2 disclosure (Definition 3.2), Theorem 3 (ubiquity: disclosure depends only on supports),
  Theorem 4 (no attribute U with H∞(P_U) > ε is disclosed under (ε, P_X)-PML), Proposition 5 (a
  disclosed U drags a lower-entropy W with it), Theorem 6 (finite leakage capacity: no disclosure,
  and H∞(Q_V | Y = y) ≥ log(1 + q_min/(1 − q_min) e^{−C})).
* §3.3 how to pick ε: Proposition 7 / Corollary 8 thresholds (point priors in
  :mod:`mechdesign.theory.measures`), here for a *set* of priors, and :func:`epsilon_for_requirement`.
  Example 3.3 (count query answered deterministically) and its Figure 1.
* §4 database privacy: Definition 4 (differential privacy), Theorems 9 and 11 (DP and free-lunch
  privacy as PML constraints), Proposition 12 (Laplace mechanism for a counting query, prior-aware).

Attributes U of X are given by their kernel P_{U|X} (an N × |U| row-stochastic matrix); a
deterministic attribute by a list of labels f(x). Probabilities are compared exactly (Fractions,
floats read as the decimal they print as, as in :mod:`mechdesign.theory.measures`); results are nats.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
import numpy as np

from mechdesign.privacy.priors import is_permutation_invariant, min_expectation
from mechdesign.theory import measures
from mechdesign.theory.measures import _columns, _dot, _frac_matrix, _frac_vector, _log

__all__ = [
    "conditional_pml",
    "attribute_kernel",
    "attribute_min_entropy",
    "attribute_posteriors",
    "discloses",
    "disclosed_attributes_are_low_entropy",
    "proposition5_attribute",
    "theorem6_min_entropy_bound",
    "theorem6_min_entropy_bound_for_set",
    "prior_set_mass_range",
    "disclosure_threshold_for_set",
    "singling_out_threshold_for_set",
    "EpsilonChoice",
    "epsilon_for_requirement",
    "count_query_leakage",
    "count_query_leakage_bound",
    "count_query_no_leakage_bound",
    "example33_gender_threshold",
    "binary_kl",
    "database_index",
    "dp_epsilon",
    "free_lunch_epsilon",
    "entry_pml",
    "conditional_entry_pml",
    "theorem9_sup_conditional_pml",
    "theorem10_correlated_laplace_leakage",
    "theorem10_construction",
    "laplace_count_entry_leakage_bound",
    "laplace_count_entry_leakage_bound_simplified",
]


# ------------------------------------------------------------------ conditional PML
def conditional_pml(kernel_xz, prior_xz) -> np.ndarray:
    """ℓ(X → y | z) = D∞(P_{X|Y=y,Z=z} ‖ P_{X|Z=z}) = log max_{x: p(x|z)>0} p(y|x,z) / p(y|z)
    (disclosure paper §2.3, Definition of conditional PML, after Saeidian et al. 2023b, Def. 3).

    ``kernel_xz[x][z][y]`` = P(Y = y | X = x, Z = z) (an |X| × |Z| × M array), ``prior_xz[x][z]`` the
    joint law of (X, Z). Returns an |Z| × M array, NaN where p(z) = 0 or p(y | z) = 0. Exact in the
    ratios (Fractions), logged at the end.
    """
    K = np.asarray(kernel_xz, dtype=object)
    P = np.asarray(prior_xz, dtype=object)
    if K.ndim != 3 or P.shape != K.shape[:2]:
        raise ValueError(f"kernel_xz must be |X| x |Z| x M and prior_xz |X| x |Z|, found {K.shape} and {P.shape}")
    nx, nz, m = K.shape
    Pf = [[measures._fraction(P[x, z]) for z in range(nz)] for x in range(nx)]
    if any(v < 0 for row in Pf for v in row) or abs(sum(sum(r) for r in Pf) - 1) > Fraction(1, 10**9):
        raise ValueError("prior_xz must be a joint distribution (entries >= 0 summing to 1)")
    out = np.full((nz, m), math.nan)
    for z in range(nz):
        pz = sum(Pf[x][z] for x in range(nx))
        if pz == 0:
            continue
        support = [x for x in range(nx) if Pf[x][z] > 0]
        for y in range(m):
            k = [measures._fraction(K[x, z, y]) for x in range(nx)]
            py = sum(Pf[x][z] * k[x] for x in support) / pz
            if py > 0:
                out[z, y] = _log(max(k[x] for x in support) / py)
    return out


# ------------------------------------------------------------------ attributes and disclosure
def attribute_kernel(attribute, n: int) -> list[list[Fraction]]:
    """P_{U|X} as exact rows: a matrix (N × |U|, row-stochastic) or a list of N labels f(x)
    (the deterministic attribute U = f(X))."""
    if len(attribute) != n:
        raise ValueError(f"attribute has {len(attribute)} rows, X has {n} values")
    first = attribute[0]
    if isinstance(first, (list, tuple, np.ndarray)):
        rows = _frac_matrix(attribute)
        if any(sum(r) != 1 for r in rows):
            raise ValueError("attribute kernel P_{U|X} rows must sum to 1")
        return rows
    labels = sorted(set(attribute), key=str)
    index = {u: i for i, u in enumerate(labels)}
    return [[Fraction(int(index[a] == j)) for j in range(len(labels))] for a in attribute]


def attribute_min_entropy(prior, attribute) -> float:
    """H∞(P_U) = −log max_u P_U(u), P_U = P_{U|X} ∘ P_X (disclosure paper §3.1)."""
    p = _frac_vector(prior)
    A = attribute_kernel(attribute, len(p))
    return -_log(max(_dot(p, col) for col in _columns(A)))


def attribute_posteriors(K, prior, attribute) -> list[list[Fraction] | None]:
    """Q_{U|Y=y}(u) = Σ_x P_{U|X}(u|x) K_x(y) Q(x) / Q_Y(y) for every output y (None where Q_Y(y) = 0):
    the adversary Q's posterior on the attribute (Markov chain U − X − Y)."""
    Kf = _frac_matrix(K)
    q = _frac_vector(prior, len(Kf), "adversary prior")
    A = attribute_kernel(attribute, len(Kf))
    out = []
    for col in _columns(Kf):
        qy = _dot(q, col)
        if qy == 0:
            out.append(None)
            continue
        out.append([sum(A[x][u] * col[x] * q[x] for x in range(len(q))) / qy for u in range(len(A[0]))])
    return out


def discloses(K, attribute, adversary=None) -> bool:
    """Definition 3.2 (disclosure paper): K discloses U to adversary Q_X when
    inf_y H∞(Q_{U|Y=y}) = 0, i.e. (finite Y) some output of positive probability makes the
    posterior of U a point mass. By Theorem 3 (ubiquity) the answer is the same for every adversary
    with full support; ``adversary`` defaults to the uniform prior. Exact."""
    n = len(_frac_matrix(K))
    q = [Fraction(1, n)] * n if adversary is None else adversary
    return any(post is not None and max(post) == 1 for post in attribute_posteriors(K, q, attribute))


def disclosed_attributes_are_low_entropy(K, prior, epsilon: float, attribute) -> bool:
    """Theorem 4 (disclosure paper) as a check: if K is (ε, P_X)-PML and H∞(P_U) > ε, K does not
    disclose U. Returns True when the implication holds for this K, prior and U (it always should;
    the function exists so that tests and ``analyze`` can exercise the theorem on concrete cases)."""
    pml_ok = float(np.nanmax(measures.pml(K, prior))) <= epsilon
    if not pml_ok or attribute_min_entropy(prior, attribute) <= epsilon:
        return True
    return not discloses(K, attribute)


def proposition5_attribute(prior, attribute, disclosed_value: int, lam: Fraction | None = None) -> list[list[Fraction]]:
    """Proposition 5 (disclosure paper, proof in Appendix A.3): from a disclosed attribute U (value
    u₁ = ``disclosed_value`` has posterior 1 at some y), the attribute W with P_{W|U=u₁} = δ_{u₁} and
    P_{W|U=i} = λ δ_{u₁} + (1 − λ) δ_i (i ≠ u₁) has H∞(P_W) < H∞(P_U) whenever
    λ > (max_u P_U(u) − P_U(u₁))/(1 − P_U(u₁)), and is disclosed at the same y. Returns P_{W|X} =
    P_{W|U} ∘ P_{U|X} (N × |U|); λ defaults to the midpoint between that bound and 1."""
    p = _frac_vector(prior)
    A = attribute_kernel(attribute, len(p))
    k = len(A[0])
    pu = [_dot(p, col) for col in _columns(A)]
    if not 0 <= disclosed_value < k:
        raise ValueError(f"disclosed_value must index U's alphabet 0..{k - 1}, found {disclosed_value}")
    u1 = disclosed_value
    if pu[u1] == 1:
        raise ValueError("U is constant under P_X (P_U(u1) = 1): nothing of lower entropy exists")
    low = (max(pu) - pu[u1]) / (1 - pu[u1])
    lam = (low + 1) / 2 if lam is None else Fraction(lam)
    if not low < lam < 1:
        raise ValueError(f"lambda must lie in ({float(low):g}, 1), found {float(lam):g}")
    W_given_U = [
        [Fraction(int(w == u1)) if i == u1 else (lam if w == u1 else (1 - lam) * (w == i)) for w in range(k)]
        for i in range(k)
    ]
    return [[sum(A[x][i] * W_given_U[i][w] for i in range(k)) for w in range(k)] for x in range(len(p))]


def theorem6_min_entropy_bound(capacity: float, q_min: float) -> float:
    """Theorem 6 (disclosure paper): if C(P_{Y|X}) < ∞, every non-constant deterministic V = f(X)
    keeps, for adversary Q_X and every output y,

        H∞(Q_{V|Y=y}) ≥ log(1 + q_min/(1 − q_min) · e^{−C}),   q_min = min_x Q_X(x).

    Equality when X is binary, V = X and y is the output with K_0(y)/K_1(y) = e^C, Q(0) = 1 − q_min
    (proof in Appendix A.4). Domain: C ≥ 0 (∞ gives 0), 0 ≤ q_min ≤ 1/2."""
    if not (capacity >= 0 and 0 <= q_min <= 0.5):
        raise ValueError(f"need C >= 0 and q_min in [0, 1/2], found {capacity!r}, {q_min!r}")
    if capacity == math.inf or q_min == 0:
        return 0.0
    return math.log1p(q_min / (1 - q_min) * math.exp(-capacity))


# ------------------------------------------------------------------ prior sets
def prior_set_mass_range(prior_set, n: int) -> tuple[Fraction, Fraction]:
    """(min_{P∈𝒫} min_x P(x), max_{P∈𝒫} max_x P(x)) exactly, from the prior set's exact
    min_{P∈𝒫} P·k with k = ±e_x. For Q_X(c): (c, 1 − (N − 1)c); all priors: (0, 1). When π(𝒫) = 𝒫 for
    every permutation π (min_mass, the simplex, the uniform point prior) every symbol gives the same pair, so
    symbol 0 alone is evaluated (each evaluation is O(N): the loop was O(N²), 5 s at N = 3000)."""
    lows, highs = [], []
    symbols = range(1) if is_permutation_invariant(prior_set, n) else range(n)
    for x in symbols:
        e = [int(i == x) for i in range(n)]
        lows.append(Fraction(min_expectation(prior_set, n, e)[0]))
        highs.append(-Fraction(min_expectation(prior_set, n, [-v for v in e])[0]))
    return min(lows), max(highs)


def minus_log(r: Fraction) -> float:
    """−log r for a rational 0 < r ≤ 1, to a double's precision also next to 1: log1p of r − 1, which is exact
    as a rational (−log(1 − 1e-15) is 1e-15, where log(num) − log(den) gives 0)."""
    if r > Fraction(1, 2):
        return 0.0 - math.log1p(float(r - 1))
    return -_log(r)


def disclosure_threshold_for_set(prior_set, n: int) -> float:
    """inf_{P∈𝒫} log 1/(1 − p_min(P)) = −log(1 − min_{P∈𝒫} min_x P(x)): an (ε, 𝒫)-PML mechanism with
    ε below this is (ε, P)-PML with ε < log 1/(1 − p_min(P)) for the true P, so its leakage capacity is
    finite (Proposition 7) and it discloses no attribute at all (Theorem 6). Q_X(c): log 1/(1 − c);
    all priors: 0 (no guarantee from this route)."""
    low, _ = prior_set_mass_range(prior_set, n)
    return minus_log(1 - low) if low > 0 else 0.0


def singling_out_threshold_for_set(prior_set, n: int) -> float:
    """inf_{P∈𝒫} H∞(P) = −log max_{P∈𝒫} max_x P(x): below it no P ∈ 𝒫 lets the mechanism single out
    X (Corollary 8 for each P). Q_X(c): −log(1 − (N − 1)c); all priors: 0."""
    _, high = prior_set_mass_range(prior_set, n)
    return minus_log(high)  # 0.0, not -0.0, when some prior is a point mass


def theorem6_min_entropy_bound_for_set(K, prior_set) -> float:
    """Theorem 6 for every adversary in a prior set: min over Q ∈ 𝒫 of the bound, i.e. q_min =
    min_{Q∈𝒫} min_x Q(x) and C = C(K) (the leakage capacity over all priors, = LDP(K))."""
    n = len(_frac_matrix(K))
    low, _ = prior_set_mass_range(prior_set, n)
    return theorem6_min_entropy_bound(measures.ldp(K), float(min(low, Fraction(1, 2))))


@dataclass(frozen=True)
class EpsilonChoice:
    """The ε a requirement allows: ``epsilon`` (nats), ``strict`` (True: the requirement holds for every
    ε < epsilon but not proved at epsilon itself), the ``theorem`` that justifies it and a sentence."""

    epsilon: float
    strict: bool
    theorem: str
    explanation: str

    def to_json(self) -> dict:
        return {
            "epsilon": self.epsilon,
            "strict": self.strict,
            "theorem": self.theorem,
            "explanation": self.explanation,
        }


def epsilon_for_requirement(
    prior_set,
    n: int,
    protect_min_entropy: float | None = None,
    no_disclosure: bool = False,
    no_singling_out: bool = False,
) -> EpsilonChoice:
    """The largest ε for which the disclosure paper's theorems guarantee a requirement for an
    (ε, 𝒫)-PML mechanism, whichever P ∈ 𝒫 is the true prior (every such mechanism is (ε, P)-PML):

    * ``protect_min_entropy = h``: no attribute U with H∞(P_U) > h is disclosed, to any adversary.
      Theorem 4 gives it at ε = h (attained); Proposition 7 with Theorem 6 gives *no* disclosure at
      all for ε < t = −log(1 − min_{P∈𝒫} min_x P(x)). So ε* = max(h, t), strict when t > h.
    * ``no_disclosure``: no attribute disclosed: ε < t (Proposition 7 + Theorem 6; strict).
    * ``no_singling_out``: X is never singled out: ε < min_{P∈𝒫} H∞(P) (Corollary 8; strict).

    Several requirements: the smallest ε. Tightness is the paper's only where it says so (the converse
    of Proposition 7 for a single prior); for a set the value is what the theorems guarantee.
    """
    t_dis = disclosure_threshold_for_set(prior_set, n)
    choices: list[EpsilonChoice] = []
    if protect_min_entropy is not None:
        h = float(protect_min_entropy)
        if not (h >= 0 and math.isfinite(h)):
            raise ValueError(f"protect_min_entropy must be finite and >= 0, found {protect_min_entropy!r}")
        if t_dis > h:
            choices.append(
                EpsilonChoice(
                    t_dis,
                    True,
                    "Proposition 7 + Theorem 6 (disclosure paper)",
                    f"for eps < -log(1 - min mass) = {t_dis:.6g} the leakage capacity is finite, "
                    f"so no attribute at all is disclosed (stronger than protecting H_inf > {h:g})",
                )
            )
        else:
            choices.append(
                EpsilonChoice(
                    h,
                    False,
                    "Theorem 4 (disclosure paper)",
                    f"(eps, P_X)-PML with eps = {h:g} discloses no attribute U with "
                    f"H_inf(P_U) > eps, to any adversary, for every P_X in the prior set",
                )
            )
    if no_disclosure:
        choices.append(
            EpsilonChoice(
                t_dis,
                True,
                "Proposition 7 + Theorem 6 (disclosure paper)",
                f"eps < -log(1 - min_P min_x P(x)) = {t_dis:.6g}: finite leakage capacity, no attribute disclosed",
            )
        )
    if no_singling_out:
        t_so = singling_out_threshold_for_set(prior_set, n)
        choices.append(
            EpsilonChoice(
                t_so,
                True,
                "Corollary 8 (disclosure paper)",
                f"eps < min_P H_inf(P) = -log max_P max_x P(x) = {t_so:.6g}: X is never singled out",
            )
        )
    if not choices:
        raise ValueError("give at least one requirement (protect_min_entropy, no_disclosure, no_singling_out)")
    return min(choices, key=lambda ch: (ch.epsilon, not ch.strict))


# ------------------------------------------------------------------ Example 3.3 (count query)
def binary_kl(q: float, r: float) -> float:
    """D_KL(q ‖ r) between Bernoulli(q) and Bernoulli(r), nats (0 log 0 = 0)."""
    if not (0 <= q <= 1 and 0 < r < 1):
        raise ValueError(f"need q in [0, 1] and r in (0, 1), found {q!r}, {r!r}")
    out = 0.0 if q == 0 else q * math.log(q / r)
    return out + (0.0 if q == 1 else (1 - q) * math.log((1 - q) / (1 - r)))


def count_query_leakage(n: int, m: int, p: float) -> float:
    """Example 3.3 (disclosure paper): answering "more than m of n (i.i.d., each with probability p)?"
    deterministically with y = 1 leaks ℓ(X → 1) = −log(1 − Σ_{k≤m} C(n,k) p^k (1 − p)^{n−k}), exactly."""
    if not (isinstance(n, int) and n >= 1 and 0 <= m < n and 0 < p < 1):
        raise ValueError(f"need n >= 1, 0 <= m < n, p in (0, 1), found {n!r}, {m!r}, {p!r}")
    from scipy.stats import binom

    tail = float(binom.sf(m, n, p))
    if tail > 0.5:  # −log(1 − cdf) = −log1p(−cdf): a leakage of 1e-11 keeps its digits
        return 0.0 - math.log1p(-float(binom.cdf(m, n, p)))
    return -math.log(tail)


def count_query_leakage_bound(n: int, m: int, p: float) -> float:
    """Example 3.3's Chernoff bound (Hagerup and Rüb): for m/n ≤ p,
    ℓ(X → 1) ≤ −log(1 − exp(−n D_KL(m/n ‖ p))). Plotted in the paper's Figure 1. Domain: m/n < p
    (at m/n = p the bound is +∞)."""
    if not (isinstance(n, int) and n >= 1 and 0 <= m and 0 < p < 1 and m / n <= p):
        raise ValueError(f"need n >= 1, 0 <= m/n <= p, p in (0, 1), found {n!r}, {m!r}, {p!r}")
    e = math.exp(-n * binary_kl(m / n, p))
    return math.inf if e >= 1 else -math.log1p(-e)


def count_query_no_leakage_bound(n: int, m: int, p: float) -> float:
    """Example 3.3, the negative answer: for (m + 1)/n ≥ p,
    ℓ(X → 0) ≤ −log(1 − exp(−n D_KL(1 − (m + 1)/n ‖ 1 − p)))."""
    if not (isinstance(n, int) and n >= 1 and 0 <= m < n and 0 < p < 1 and (m + 1) / n >= p):
        raise ValueError(f"need (m + 1)/n >= p, found n={n!r}, m={m!r}, p={p!r}")
    e = math.exp(-n * binary_kl(1 - (m + 1) / n, 1 - p))
    return math.inf if e >= 1 else -math.log1p(-e)


def example33_gender_threshold(p_low: float = 0.3, p_high: float = 0.7) -> float:
    """min_{p∈[p_low, p_high]} H∞(Bernoulli(p)) = −log max(p_high, 1 − p_low): by Theorem 4 no
    individual's attribute S_i is disclosed while ℓ(X → 1) stays below it (0.36 in Example 3.3)."""
    return -math.log(max(p_high, 1 - p_low))


# ------------------------------------------------------------------ §4 database privacy
def database_index(d: int, n: int) -> list[tuple[int, ...]]:
    """The databases x = (d_1, …, d_n) ∈ 𝒟^n, 𝒟 = {0..d−1}, in the row order used below (lexicographic)."""
    return list(itertools.product(range(d), repeat=n))


def _db_kernel(K, d: int, n: int) -> np.ndarray:
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != d**n:
        raise ValueError(f"a database mechanism has d^n = {d**n} rows, found shape {K.shape}")
    return K


def dp_epsilon(K, d: int, n: int) -> float:
    """ε of (pure, bounded) differential privacy, Definition 4 of the disclosure paper:
    max over y, entries i, values d_i ≠ d_i' and the rest d_{−i} of log K(y | d_i, d_{−i}) / K(y | d_i', d_{−i}).
    Rows of K are the databases in :func:`database_index` order. ∞ when a neighbour pair splits a support."""
    K = _db_kernel(K, d, n)
    dbs = database_index(d, n)
    pos = {x: r for r, x in enumerate(dbs)}
    worst = 0.0
    for r, x in enumerate(dbs):
        for i in range(n):
            for v in range(d):
                if v == x[i]:
                    continue
                r2 = pos[x[:i] + (v,) + x[i + 1 :]]
                a, b = K[r], K[r2]
                if ((a > 0) & (b == 0)).any():
                    return math.inf
                m = a > 0
                if m.any():
                    worst = max(worst, float(np.max(np.log(a[m] / b[m]))))
    return worst


def free_lunch_epsilon(K) -> float:
    """ε of free-lunch privacy (Kifer and Machanavajjhala, Def. 2.3; disclosure paper §4): max over y and
    all pairs of databases of log K(y|x)/K(y|x'), the leakage capacity C(K) = LDP(K). Theorem 11: it
    equals sup over all (or all product) priors of max_y ℓ(X → y)."""
    return measures.ldp(K)


def entry_pml(K, prior, d: int, n: int, i: int) -> np.ndarray:
    """ℓ(D_i → y) = log max_{v} p(y | D_i = v) / p(y) for every y (NaN where p(y) = 0), for a prior on
    the databases (length d^n, any correlation). Floats."""
    K = _db_kernel(K, d, n)
    p = np.asarray(prior, dtype=float)
    dbs = database_index(d, n)
    py = p @ K
    cond = []
    for v in range(d):
        rows = [r for r, x in enumerate(dbs) if x[i] == v]
        w = p[rows]
        if w.sum() > 0:
            cond.append(w @ K[rows] / w.sum())
    top = np.max(np.array(cond), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(py > 0, np.log(top / py), np.nan)


def conditional_entry_pml(K, prior, d: int, n: int, i: int) -> np.ndarray:
    """ℓ(D_i → y | d_{−i}) (conditional PML with X = D_i, Z = D_{−i}) as an array indexed by
    (d_{−i} in lexicographic order, y). Floats; uses :func:`conditional_pml`'s definition."""
    K = _db_kernel(K, d, n)
    p = np.asarray(prior, dtype=float)
    dbs = database_index(d, n)
    rest = list(itertools.product(range(d), repeat=n - 1))
    pos = {x: r for r, x in enumerate(dbs)}
    out = np.full((len(rest), K.shape[1]), np.nan)
    for z, r_ in enumerate(rest):
        rows = [pos[r_[:i] + (v,) + r_[i:]] for v in range(d)]
        w = p[rows]
        if w.sum() <= 0:
            continue
        w = w / w.sum()
        py = w @ K[rows]
        top = np.max(K[[r for r, wv in zip(rows, w) if wv > 0]], axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[z] = np.where(py > 0, np.log(top / py), np.nan)
    return out


def theorem9_sup_conditional_pml(K, d: int, n: int) -> float:
    """sup over full-support priors (product or not) of max_{i, d_{−i}, y} ℓ(D_i → y | d_{−i}) =
    max_{i, d_{−i}, y} log max_v K(y|v, d_{−i}) / min_v K(y|v, d_{−i}) (Theorem 9 (1)–(2), proof in
    Appendix B.1: conditioned on d_{−i}, ℓ is PML of the row block, whose supremum over priors is its
    LDP, Theorem 2). Equals :func:`dp_epsilon` by Theorem 9."""
    K = _db_kernel(K, d, n)
    dbs = database_index(d, n)
    pos = {x: r for r, x in enumerate(dbs)}
    worst = 0.0
    for i in range(n):
        for r_ in itertools.product(range(d), repeat=n - 1):
            block = K[[pos[r_[:i] + (v,) + r_[i:]] for v in range(d)]]
            worst = max(worst, measures.ldp(block))
    return worst


def theorem10_correlated_laplace_leakage(n: int, epsilon: float, p: float, eta: float) -> float:
    """ℓ(D_1 → y) for y ≥ 1 under a *correlated* database, for the ε-DP Laplace count mechanism
    Y ~ Lap(S/n, b), S = Σ f(d_i), b = 1/(nε) (sensitivity 1/n, so ε-DP).

    Prior (full support): with probability 1 − η all n binary entries are equal (all ones w.p. p), with
    probability η they are i.i.d. uniform. For y ≥ 1 every mean S/n ≤ y, so p(y | ·) ∝ E[e^{εS} | ·] and

        ℓ(D_1 → y) = log max_d E[e^{εS} | D_1 = d] / E[e^{εS}],

    with E[e^{εS} | D_1 = 1] = (p(1−η) e^{nε} + (η/2) e^ε ((1 + e^ε)/2)^{n−1}) / (p(1−η) + η/2) and likewise for
    d = 0. As η → 0 and n → ∞ it tends to log 1/min(p, 1 − p) = ε_max(D_1): a construction for Theorem 10
    (Saeidian et al. 2024, Thm. 3) of the disclosure paper. Domain: n ≥ 1, ε > 0, p, η ∈ (0, 1)."""
    if not (isinstance(n, int) and n >= 1 and epsilon > 0 and 0 < p < 1 and 0 < eta < 1):
        raise ValueError(f"need n >= 1, eps > 0, p and eta in (0, 1), found {n!r}, {epsilon!r}, {p!r}, {eta!r}")
    # work in logs: log E[e^{eps S} | ...] terms, scaled by e^{-n eps}
    half = math.log((1 + math.exp(epsilon)) / 2)
    mix = epsilon + (n - 1) * half - n * epsilon  # log of e^eps ((1+e^eps)/2)^{n-1} e^{-n eps}
    mix0 = (n - 1) * half - n * epsilon  # D_1 = 0: ((1+e^eps)/2)^{n-1} e^{-n eps}
    all1, all0 = p * (1 - eta), (1 - p) * (1 - eta)
    e1 = (all1 + eta / 2 * math.exp(mix)) / (all1 + eta / 2)
    e0 = (all0 * math.exp(-n * epsilon) + eta / 2 * math.exp(mix0)) / (all0 + eta / 2)
    total = all1 + eta / 2 * math.exp(mix) + all0 * math.exp(-n * epsilon) + eta / 2 * math.exp(mix0)
    return math.log(max(e1, e0) / total)


def theorem10_construction(epsilon: float, delta: float, p: float = 0.5, eta: float = 1e-12) -> tuple[int, float]:
    """Theorem 10 (disclosure paper): for ε, δ > 0 find a database size n for which the ε-DP Laplace count
    mechanism of :func:`theorem10_correlated_laplace_leakage` leaks ℓ(D_1 → y) > ε_max(D_1) − δ about one
    entry, ε_max(D_1) = log 1/min_d p_{D_1}(d). Returns (n, leakage); n is doubled from 1 until it holds."""
    if not (epsilon > 0 and delta > 0):
        raise ValueError(f"need eps > 0 and delta > 0, found {epsilon!r}, {delta!r}")
    q1 = p * (1 - eta) + eta / 2
    eps_max = -math.log(min(q1, 1 - q1))
    n = 1
    while n < 2**40:
        v = theorem10_correlated_laplace_leakage(n, epsilon, p, eta)
        if v > eps_max - delta:
            return n, v
        n *= 2
    raise ValueError("no n found (eta too large for this delta)")


def laplace_count_entry_leakage_bound(n: int, b: float, c: float) -> float:
    """Proposition 12 (disclosure paper): the Laplace mechanism Y ~ Lap((f(d_1) + … + f(d_n))/n, b) on
    an i.i.d. database whose entries satisfy f with probability p ∈ (c, 1 − c) leaks about each entry

        sup_{P_X ∈ 𝒫_c^f} sup_y ℓ(D_i → y) ≤ 1/(nb) − log((1 − c) + c e^{1/(nb)}),

    which is 1/(nb) (the DP parameter) at c = 0 and ≈ half of it as c → 1/2. The bound is the value
    at y ≥ 1 in the limit p → c (there p(y | D_i = 1)/p(y | D_i = 0) = e^{1/(nb)} exactly), so it is
    the supremum. Domain: n ≥ 1, b > 0, 0 ≤ c < 1/2."""
    if not (isinstance(n, int) and n >= 1 and b > 0 and 0 <= c < 0.5):
        raise ValueError(f"need n >= 1, b > 0 and c in [0, 1/2), found {n!r}, {b!r}, {c!r}")
    t = 1 / (n * b)
    # t − log(1 − c + c e^t) = t − log1p(c expm1(t))
    return t - math.log1p(c * math.expm1(t))


def laplace_count_entry_leakage_bound_simplified(n: int, b: float, c: float) -> float:
    """The simplified form of Proposition 12 for large nb: (1 − c)/(nb) + c²/(2 n² b²) (from e^x ≥ 1 + x and
    log(1 + x) ≥ x − x²/2), an upper bound on :func:`laplace_count_entry_leakage_bound`."""
    if not (isinstance(n, int) and n >= 1 and b > 0 and 0 <= c < 0.5):
        raise ValueError(f"need n >= 1, b > 0 and c in [0, 1/2), found {n!r}, {b!r}, {c!r}")
    t = 1 / (n * b)
    return (1 - c) * t + c * c * t * t / 2
