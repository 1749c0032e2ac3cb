"""f_α paper additions (Grosse, Saeidian, Oechtering, Skoglund, *Bounds on the Privacy Amplification of
Arbitrary Channels via the Contraction of f_α-Divergence*): the contraction coefficient η_α of a kernel
(eqs. 8–10), Remark 7 (the α → ∞ limit of Theorem 6), the tight Pinsker bound ψ_α(p*, t) of Remark 9
(eqs. 63–67), and the data of Example 12 / Figure 2. The closed forms R_α, g_α, g_α⁻¹ and φ are in
:mod:`mechdesign.theory.bounds`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from mechdesign.theory import bounds, measures

__all__ = [
    "contraction_ratio_alpha",
    "eta_alpha_at",
    "eta_alpha",
    "renyi_bound_theorem6",
    "binary_f_alpha",
    "psi_alpha",
    "psi_alpha_minimiser",
    "tight_pinsker_f_alpha",
    "randomized_response",
    "example12_channel_p",
    "example12_channel_q",
    "example12_curves",
]


def contraction_ratio_alpha(K, P, Q, alpha: float) -> float:
    """D_α(K∘P ‖ K∘Q) / D_α(P ‖ Q), the ratio inside eq. (9); NaN when D_α(P‖Q) = 0."""
    K = np.asarray(K, float)
    P, Q = np.asarray(P, float), np.asarray(Q, float)
    if np.array_equal(P, Q):
        return math.nan
    with np.errstate(over="ignore"):  # extreme priors of the local search: an infinite D_α is a valid value
        den = measures.renyi_divergence(P, Q, alpha)
        if den <= 0:  # rounding of Σ P^α Q^{1−α} − 1 when P ≈ Q
            return math.nan
        num = measures.renyi_divergence(P @ K, Q @ K, alpha)
    return num / den if math.isfinite(den) else (0.0 if math.isfinite(num) else math.nan)


def eta_alpha_at(K, P, priors: Sequence, alpha: float) -> float:
    """η_α(P_X, P_{Y|X}, 𝒫) = sup_{Q∈𝒫, D_α(P‖Q)≠0} D_α(K∘P‖K∘Q)/D_α(P‖Q) (f_α paper eqs. 8–9) for a finite
    prior set 𝒫 = ``priors`` (a list of distributions). 0 when every Q equals P."""
    vals = [contraction_ratio_alpha(K, P, Q, alpha) for Q in priors]
    vals = [v for v in vals if not math.isnan(v)]
    return max(vals, default=0.0)


def eta_alpha(K, alpha: float, priors: Sequence | None = None, restarts: int = 20, seed: int = 0) -> float:
    """η_α(P_{Y|X}, 𝒫) = sup_{P∈𝒫} η_α(P, P_{Y|X}, 𝒫) (f_α paper eq. 10).

    * ``priors`` given (a finite set 𝒫): the exact maximum over ordered pairs.
    * ``priors`` None (𝒫 = the simplex): 1 when two rows have disjoint supports (Proposition 3);
      otherwise a *lower bound* from local maximisation of the ratio over pairs of interior priors
      (softmax parametrisation, ``restarts`` random starts, scipy L-BFGS-B). The DPI gives ≤ 1.
    """
    K = np.asarray(K, float)
    if priors is not None:
        return max((eta_alpha_at(K, P, priors, alpha) for P in priors), default=0.0)
    if measures.has_disjoint_supports(K):
        return 1.0
    from scipy.optimize import minimize

    n = K.shape[0]
    rng = np.random.default_rng(seed)

    def soft(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    def neg(z):
        v = contraction_ratio_alpha(K, soft(z[:n]), soft(z[n:]), alpha)
        return 0.0 if math.isnan(v) else -v

    best = 0.0
    for _ in range(restarts):
        z0 = rng.normal(scale=2.0, size=2 * n)
        res = minimize(neg, z0, method="L-BFGS-B")
        best = max(best, -float(res.fun), -neg(z0))
    return min(best, 1.0)


def renyi_bound_theorem6(tv: float, gamma_max: float, gamma_min: float, alpha: float) -> float:
    """Eq. (35) of the f_α paper (Remark 7): D_α(Q‖P) ≤ 1/(α − 1) · log(Δ R_α(Γ_max, Γ_min) + 1), Δ = TV.
    As α → ∞ with Δ > 0 it tends to log Γ_max = D∞ (eqs. 36–37): Theorem 6 is asymptotically tight.
    Computed as log1p(Δ R_α)/(α − 1), finite for large α through log R_α when R_α overflows."""
    r = bounds.r_alpha(gamma_max, gamma_min, alpha)
    if r == math.inf:  # R_α ≈ u^α/(u − 1): log(Δ R_α) = α log u − log(u − 1) + log Δ
        if gamma_max == math.inf or tv == 0:
            return math.inf if tv > 0 else 0.0
        return (alpha * math.log(gamma_max) - math.log(gamma_max - 1) + math.log(tv)) / (alpha - 1)
    return math.log1p(tv * r) / (alpha - 1)


# ------------------------------------------------------------------ Remark 9: tight Pinsker bound
def binary_f_alpha(p: float, q: float, alpha: float) -> float:
    """d_{f_α}(p‖q) = p^α/q^{α−1} + (1 − p)^α/(1 − q)^{α−1} − 1 (eq. 64), the f_α-divergence of
    Bernoulli(p) from Bernoulli(q). Domain: α > 1, p, q ∈ [0, 1] (∞ when p > 0 = q or p < 1 = q)."""

    def term(a, b):
        if a == 0:
            return 0.0
        if b == 0:
            return math.inf
        return math.exp(alpha * math.log(a) - (alpha - 1) * math.log(b))

    return term(p, q) + term(1 - p, 1 - q) - 1


def psi_alpha(p: float, t: float, alpha: float) -> float:
    """ψ_α(p, t) = p^α/(p + t)^{α−1} + (1 − p)^α/(1 − p − t)^{α−1} − 1 (eq. 65) = d_{f_α}(p ‖ p + t)."""
    return binary_f_alpha(p, p + t, alpha)


def _dpsi(p: float, t: float, alpha: float) -> float:
    """∂ψ_α/∂p (eq. 66), written as α(p/(p+t))^{α−1} − (α−1)(p/(p+t))^α − α((1−p)/(1−p−t))^{α−1}
    + (α−1)((1−p)/(1−p−t))^α (the same expression, in the ratio form that does not overflow)."""
    a = p / (p + t)
    b = (1 - p) / (1 - p - t)
    return alpha * a ** (alpha - 1) - (alpha - 1) * a**alpha - alpha * b ** (alpha - 1) + (alpha - 1) * b**alpha


def psi_alpha_minimiser(t: float, alpha: float) -> float:
    """p* = argmin_{p∈[0, 1−t]} ψ_α(p, t), the root of ∂ψ_α/∂p = 0 (eq. 40/66) when it lies inside, else
    the endpoint (ψ_α is convex in p, eq. 67). For t ≥ 1/α the derivative is ≥ 0 (eq. 68), so p* = 0."""
    if not (alpha > 1 and 0 < t < 1):
        raise ValueError(f"need alpha > 1 and t in (0, 1), found {alpha!r}, {t!r}")
    from scipy.optimize import brentq

    lo, hi = 0.0, 1.0 - t
    eps = 1e-15
    if _dpsi(lo + eps, t, alpha) >= 0:
        return lo
    if _dpsi(hi - eps, t, alpha) <= 0:
        return hi
    return brentq(lambda p: _dpsi(p, t, alpha), lo + eps, hi - eps, xtol=1e-16, rtol=1e-15, maxiter=500)


def tight_pinsker_f_alpha(t: float, alpha: float) -> float:
    """The tight Pinsker bound of Remark 9: inf{D_{f_α}(P‖Q) : TV(P, Q) = t} = min_p ψ_α(p, t) = ψ_α(p*, t)
    (eqs. 63–65; binary pairs suffice by the joint range technique of Harremoës and Vajda). It is ≥ g_α(t)
    of Theorem 8, with equality for t ≥ 1/α and, at α = 2, for every t. Domain: α > 1, t ∈ [0, 1]."""
    if t == 0:
        return 0.0
    if t == 1:
        return math.inf
    p = psi_alpha_minimiser(t, alpha)
    return psi_alpha(p, t, alpha)


def tight_pinsker_inverse(s: float, alpha: float) -> float:
    """sup{t ∈ [0, 1] : ψ*_α(t) ≤ s} for the tight Pinsker bound ψ*_α = :func:`tight_pinsker_f_alpha`
    (Remark 9): if D_{f_α}(P‖Q) = s then TV(P, Q) ≤ this. Since ψ*_α ≥ g_α (Theorem 8) it is ≤
    :func:`mechdesign.theory.bounds.g_alpha_inverse` (equal at α = 2, where g_α is tight), and unlike
    g_α⁻¹ it is continuous in α: g_α changes form at α = 2 and jumps at t = 1/α. ψ*_α is increasing in t
    (the lower boundary of the joint range), so the inverse is (1 − t)^{1−α} − 1's in closed form past
    t = 1/α (where ψ*_α = g_α, eq. 68) and a root found by Brent's method below it.
    Domain: α > 1, s ≥ 0 (s = ∞ gives 1)."""
    if not (alpha > 1 and s >= 0):
        raise ValueError(f"need alpha > 1 and s >= 0, found {alpha!r}, {s!r}")
    if s == 0:
        return 0.0
    if s == math.inf:
        return 1.0
    t0 = 1 / alpha
    if s >= math.expm1((1 - alpha) * math.log1p(-t0)):  # ψ*_α(t) = (1 − t)^{1−α} − 1 for t ≥ 1/α (eq. 68)
        return -math.expm1(math.log1p(s) / (1 - alpha))
    from scipy.optimize import brentq

    return brentq(lambda t: tight_pinsker_f_alpha(t, alpha) - s, 1e-15, t0, xtol=1e-14, rtol=1e-13, maxiter=500)


# ------------------------------------------------------------------ Example 12 and Figure 2
def randomized_response(n: int, epsilon: float) -> np.ndarray:
    """The N × N randomized response P^{(N)}_{X|W} of eq. (58): e^ε/(N + e^ε − 1) on the diagonal."""
    ee = math.exp(epsilon)
    K = np.full((n, n), 1.0 / (n + ee - 1))
    np.fill_diagonal(K, ee / (n + ee - 1))
    return K


def example12_channel_p(n: int) -> np.ndarray:
    """P^{(N)}_{Y|X} of eq. (59): row i has ½ at y = i and at y = i − 1 (mod N)."""
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] = 0.5
        K[i, (i - 1) % n] += 0.5
    return K


def example12_channel_q(n: int) -> np.ndarray:
    """Q^{(N)}_{Y|X} of eq. (60) (N even): two diagonal blocks of size N/2 with entries 2/N."""
    if n % 2:
        raise ValueError(f"Q^(N) needs an even N, found {n}")
    K = np.zeros((n, n))
    h = n // 2
    K[:h, :h] = K[h:, h:] = 2.0 / n
    return K


def example12_curves(n: int, epsilon: float, channel: str, alphas: Sequence[float]) -> dict[str, np.ndarray]:
    """Figure 2 of the f_α paper, one panel: against α, the bound φ(ε_f, α) of eqs. 53–55 (η_TV = 1, Γ from
    eqs. 56–57 with the rows of P_{X|W} as priors), the same bound with Remark 9's tight Pinsker inverse in
    place of Theorem 8's g_α⁻¹ (``bound_tight_pinsker``: no step at α = 2), the RLDP of the mechanism P_{X|W} (max_{w,w'} D_α of
    its rows, the best bound known before) and the true RLDP of the composition P_{X|W} ∘ P_{Y|X}.
    ``channel`` is "P" (eq. 59) or "Q" (eq. 60)."""
    W = randomized_response(n, epsilon)
    C = example12_channel_p(n) if channel == "P" else example12_channel_q(n)
    comp = W @ C
    # eqs. 56–57: the priors are the rows of W, so Γ_max = max_y max_w (W C)(w, y) / min_w (W C)(w, y)
    live = comp.max(axis=0) > 0
    gmax = float(np.max(comp[:, live].max(axis=0) / comp[:, live].min(axis=0)))
    gmin = 1.0 / gmax
    bound, tight, mech, true = [], [], [], []
    for a in alphas:
        rldp = _renyi_ldp_positive(W, a)
        eps_f = bounds.renyi_to_f_alpha(rldp, a)
        bound.append(bounds.rldp_amplification_bound(eps_f, a, gmax, gmin, 1.0))
        # eq. 53 with TV ≤ ψ*⁻¹(ε_f) (Remark 9's tight Pinsker bound) in place of g_α⁻¹(ε_f): also a bound
        tight.append(math.log1p(bounds.r_alpha(gmax, gmin, a) * tight_pinsker_inverse(eps_f, a)) / (a - 1))
        mech.append(rldp)
        true.append(_renyi_ldp_positive(comp, a))
    return {
        "alpha": np.asarray(alphas, float),
        "bound": np.array(bound),
        "bound_tight_pinsker": np.array(tight),
        "mechanism": np.array(mech),
        "composition": np.array(true),
        "gamma_max": gmax,
        "gamma_min": gmin,
    }


def _renyi_ldp_positive(K: np.ndarray, alpha: float) -> float:
    """max_{x≠x'} D_α(K_x ‖ K_x') for a kernel with all entries > 0, vectorised:
    D_α = log(Σ_y K_x(y)^α K_x'(y)^{1−α})/(α − 1) (same as :func:`mechdesign.theory.measures.renyi_ldp`)."""
    if (K <= 0).any():
        return measures.renyi_ldp(K, alpha)
    logk = np.log(K)
    n = K.shape[0]
    best = -np.inf
    for x in range(n):  # row x against all rows at once (logsumexp for large α)
        expo = alpha * logk[x][None, :] + (1 - alpha) * logk
        m = expo.max(axis=1, keepdims=True)
        d = (m[:, 0] + np.log(np.exp(expo - m).sum(axis=1))) / (alpha - 1)
        d[x] = -np.inf
        best = max(best, float(d.max()))
    return best
