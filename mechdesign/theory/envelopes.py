"""Envelopes paper additions (*Information Leakage Envelopes*): the privacy profile (eqs. 3–4), probabilistic
DP (Definition 3) and Example 1, ψ₁/ψ₂ and Theorem 1, δ_c(ε) of eq. (8) (bounds), Example 2's mechanism,
the four-level prior, the (ε, δ)-LDP curve of k-RR (Figure 2) and the data of Figures 1–2. The PML
envelope bounds themselves (Theorems 3–5, Algorithm 1) are in :mod:`mechdesign.theory.bounds` and
:mod:`mechdesign.theory.measures`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from mechdesign.theory import bounds, measures

__all__ = [
    "privacy_profile",
    "dp_failure_probability",
    "adp_tail_bound",
    "is_probabilistic_dp",
    "example1_kernel",
    "example1_post_processing",
    "example2_kernel",
    "example2_post_processing",
    "psi1",
    "psi2",
    "delta_c_bounds",
    "four_level_prior",
    "krr_privacy_profile",
    "krr_ldp_epsilon",
    "leakage_cdf",
    "figure2_curves",
]


def _k(K) -> np.ndarray:
    return np.asarray(K, dtype=float)


def privacy_profile(K, epsilon: float) -> float:
    """δ*(ε, P_{Y|X}) = max_{x,x'} max_E (P_{Y|X=x}(E) − e^ε P_{Y|X=x'}(E)) = max_{x,x'} Σ_y (K_x(y) − e^ε K_x'(y))⁺
    (envelopes paper §II-B and eq. 3; the smallest δ for which K is (ε, δ)-LDP). Domain: ε ≥ 0."""
    K = _k(K)
    ee = math.exp(epsilon)
    n = K.shape[0]
    return max(float(np.clip(K[x] - ee * K[xp], 0, None).sum()) for x in range(n) for xp in range(n) if x != xp)


def dp_failure_probability(K, epsilon: float) -> float:
    """max_{x,x'} P_{Y|X=x}{L_{x,x'}(Y) > ε}, the worst-case failure probability of ε-DP (≥ δ*(ε), §II-B).
    Floats; a loss equal to ε within a relative 1e−12 counts as a tie (not a failure)."""
    K = _k(K)
    n = K.shape[0]
    best = 0.0
    for x in range(n):
        for xp in range(n):
            if x == xp:
                continue
            bad = K[x] > math.exp(epsilon) * K[xp] * (1 + 1e-12)  # L_{x,x'}(y) > ε, ties (to 1e−12) not counted
            best = max(best, float(K[x][bad].sum()))
    return best


def adp_tail_bound(delta: float, epsilon: float, k: float) -> float:
    """Eq. (4): (ε, δ)-DP implies max_{x,x'} P_{Y|X=x}{L_{x,x'}(Y) > kε} ≤ δ/(1 − e^{−(k−1)ε}). Domain: k > 1, ε > 0."""
    if not (k > 1 and epsilon > 0):
        raise ValueError(f"need k > 1 and epsilon > 0, found {k!r}, {epsilon!r}")
    return delta / -math.expm1(-(k - 1) * epsilon)


def is_probabilistic_dp(K, epsilon: float, delta: float) -> bool:
    """Definition 3 (probabilistic DP): P_{Y|X=x}{L_{x,x'}(Y) > ε} ≤ δ for all x, x'."""
    return dp_failure_probability(K, epsilon) <= delta


def example1_kernel(epsilon: float, delta: float) -> np.ndarray:
    """Example 1 (envelopes paper): binary input, four outputs; (ε, δ)-probabilistic DP with bad sets {1}, {4}."""
    a, b = math.exp(epsilon) / (1 + math.exp(epsilon)), 1 / (1 + math.exp(epsilon))
    return np.array([[delta, a * (1 - delta), b * (1 - delta), 0.0], [0.0, b * (1 - delta), a * (1 - delta), delta]])


def example1_post_processing() -> np.ndarray:
    """Example 1's Z = h(Y) merging outputs 1 and 2 into ⊥ (outputs of Z: ⊥, 3, 4)."""
    return np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])


def example2_kernel() -> list[list[Fraction]]:
    """Eq. (7) (Example 2, uniform X on [4]): outcomes 1, 2 leak log 4, outcomes 3, 4 leak log(10/9)."""
    F = Fraction
    return [
        [F(0), F(0), F(1, 2), F(1, 2)],
        [F(0), F(0), F(1, 2), F(1, 2)],
        [F(0), F(1, 5), F(2, 5), F(2, 5)],
        [F(1, 5), F(0), F(2, 5), F(2, 5)],
    ]


def example2_post_processing() -> list[list[int]]:
    """Example 2's Z = h(Y): {1, 3} → 1, {2, 4} → 2."""
    return [[1, 0], [0, 1], [1, 0], [0, 1]]


def _posterior_parts(K, prior):
    Kf = measures._frac_matrix(K)
    p = measures._frac_vector(prior, len(Kf))
    cols = measures._columns(Kf)
    py = [measures._dot(p, c) for c in cols]
    return Kf, p, cols, py


def psi1(K, prior, epsilon: float) -> float:
    """ψ₁(ε, P_XY) = E_{Y∼P_Y}[max{0, 1 − e^ε/e^{ℓ(Y)}}] (envelopes paper §III); not post-processing safe
    (Theorem 1(i)). Exact sums, returned as a float."""
    ee = math.exp(epsilon)
    total = 0.0
    for r, m in measures._leakage_law(K, prior):
        if measures._log(r) > epsilon:
            total += float(m) * (1 - ee / float(r))
    return total


def psi2(K, prior, epsilon: float) -> float:
    """ψ₂(ε, P_XY) = max_x E_{Y∼P_{Y|X=x}}[max{0, 1 − e^ε/e^{i(x;Y)}}] = max_x max_E (P_{Y|X=x}(E) − e^ε P_Y(E))
    (§III); closed under post-processing (Theorem 1(ii))."""
    Kf, p, cols, py = _posterior_parts(K, prior)
    ee = math.exp(epsilon)
    best = 0.0
    for x in range(len(Kf)):
        if p[x] == 0:
            continue
        best = max(best, sum(max(0.0, float(Kf[x][y]) - ee * float(py[y])) for y in range(len(cols))))
    return best


def delta_c_bounds(K, prior, epsilon: float) -> tuple[float, float]:
    """Bounds on δ_c(ε) = sup_{Z: X−Y−Z} P{ℓ(Z) > ε} (eq. 8):

    lower = max{P_Y{ℓ(Y) > ε} (Z = Y), sup{P(E) : ℓ(X → E) > ε} over randomised events E (binary Z,
    the events of Algorithm 1)}; upper = min{e^{ℒ(X→Y) − ε}, 1} (Markov's inequality and the DPI for
    maximal leakage, steps 12a–12b of Theorem 3's proof), and 0 when ε ≥ max_y ℓ(y) (post-processing
    inequality). The binary part is found by bisection on δ of Algorithm 1's ε_b(δ) (non-increasing)."""
    top = float(np.nanmax(measures.pml(K, prior)))
    if epsilon >= top:
        return 0.0, 0.0
    upper = min(1.0, math.exp(measures.max_leakage(K) - epsilon))
    lower = measures.pml_tail_probability(K, prior, epsilon)
    lo, hi = 0.0, 1.0
    if measures.binary_envelope(K, prior, Fraction(1, 10**12)) > epsilon:
        lo = 1e-12
        for _ in range(60):
            mid = (lo + hi) / 2
            if measures.binary_envelope(K, prior, Fraction(mid)) > epsilon:
                lo = mid
            else:
                hi = mid
    return max(lower, lo), upper


def four_level_prior(k: int, rho: float) -> np.ndarray:
    """The four-level prior of §V-B: k divisible by 4, blocks of k/4 symbols with masses m_r/k,
    m = (1 − 3ρ, 1 − ρ, 1 + ρ, 1 + 3ρ). Domain: ρ ∈ (0, 1/3)."""
    if not (isinstance(k, int) and k >= 4 and k % 4 == 0 and 0 < rho < 1 / 3):
        raise ValueError(f"need k divisible by 4 and rho in (0, 1/3), found {k!r}, {rho!r}")
    m = [1 - 3 * rho, 1 - rho, 1 + rho, 1 + 3 * rho]
    return np.repeat(np.array(m) / k, k // 4)


def krr_privacy_profile(k: int, eps_r: float, epsilon: float) -> float:
    """δ*(ε) of k-RR: max(0, α − e^ε β) with α = e^{ε_r}/(e^{ε_r} + k − 1), β = 1/(e^{ε_r} + k − 1)
    (the event {x} is the worst in eq. 3)."""
    ee = math.exp(eps_r)
    a, b = ee / (ee + k - 1), 1 / (ee + k - 1)
    return max(0.0, a - math.exp(epsilon) * b)


def krr_ldp_epsilon(k: int, eps_r: float, delta: float) -> float:
    """The (ε, δ)-LDP curve of k-RR in Figure 2: the smallest ε ≥ 0 with δ*(ε) ≤ δ, i.e.
    log((α − δ)/β) = ε_r + log(1 − δ/α) for δ < α − β, else 0."""
    # (α − δ)/β − 1 = expm1(ε_r)(1 − δ) − kδ and α − β = expm1(ε_r)/(k + expm1(ε_r)): log1p of it, without
    # the cancellation of log((α − δ)/β) at small ε_r (8e-8 relative lost at ε_r = 1e-10 otherwise)
    g = math.expm1(eps_r)
    return math.log1p(g * (1 - delta) - k * delta) if delta < g / (k + g) else 0.0


def leakage_cdf(K, prior) -> tuple[np.ndarray, np.ndarray]:
    """The CDF C_Y(t) = P{ℓ(Y) ≤ t} of the leakage random variable as steps: (sorted distinct values, cumulative mass)."""
    law = {}
    for r, m in measures._leakage_law(K, prior):
        v = measures._log(r)
        law[v] = law.get(v, 0.0) + float(m)
    vals = np.array(sorted(law))
    return vals, np.cumsum([law[v] for v in vals])


def figure2_curves(k: int, prior: Sequence[float], eps_r: float, deltas: Sequence[float]) -> dict[str, np.ndarray]:
    """One panel of the envelopes paper's Figure 2 (k-RR): upper bound on ε_c(δ) (Theorem 5(i)–(ii)), lower
    bound (Theorem 5(iii) where its condition holds, and always the generic max{ε̄_Y(δ), ε_b(δ)} of §IV-B),
    and the (ε, δ)-LDP curve of k-RR."""
    K = bounds.krr_kernel(k, eps_r)
    prior = [float(v) for v in prior]
    up, low, ldp = [], [], []
    for d in deltas:
        up.append(bounds.krr_envelope_upper_bound(prior, eps_r, d))
        generic = max(
            measures.leakage_upper_quantile(K, prior, Fraction(d)), measures.binary_envelope(K, prior, Fraction(d))
        )
        try:
            generic = max(generic, bounds.krr_envelope_lower_bound(prior, eps_r, d))
        except ValueError:
            pass
        low.append(generic)
        ldp.append(krr_ldp_epsilon(k, eps_r, d))
    return {"delta": np.asarray(deltas, float), "upper": np.array(up), "lower": np.array(low), "ldp": np.array(ldp)}
