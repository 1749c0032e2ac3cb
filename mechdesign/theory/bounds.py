"""Closed-form results of the papers, to certify designs against.

Dobrushin paper = Grosse, Saeidian, Oechtering, Skoglund, *Dobrushin
Coefficients of Private Mechanisms Beyond Local Differential Privacy*;
f_α paper = same authors, *Bounds on the Privacy Amplification of Arbitrary
Channels via the Contraction of f_α-Divergence*; envelopes paper =
*Information Leakage Envelopes* (files in ``../shared/papers``).
Each function states its domain and raises ``ValueError`` outside it.
Where the extracted paper text is garbled or a printed constant disagrees
with its derivation, the docstring says which form is implemented and why.
"""

from __future__ import annotations

import math
import mpmath
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from mechdesign.lp.rounding import log_of_rational

from mechdesign.privacy.priors import rules, vertices
from mechdesign.theory import measures

__all__ = [
    # Dobrushin paper
    "xi",
    "xi_regime",
    "ldp_dobrushin",
    "remark2_column",
    "remark2_kernel",
    "example1_kernel",
    "lemma1_max_zeros",
    "proposition2_gamma_bounds",
    "binette_bound",
    "corollary1_kl_bound",
    "corollary2_hellinger_bound",
    "duchi_kl_bound",
    "le_cam_bretagnolle_huber",
    "example3_minimax_lower_bound",
    "example3_sample_size",
    # f_alpha paper
    "r_alpha",
    "g_alpha",
    "g_alpha_inverse",
    "renyi_to_f_alpha",
    "f_alpha_to_renyi",
    "rldp_amplification_bound",
    # envelopes paper
    "envelope_upper_bound",
    "envelope_bounds",
    "pml_extremal_kernel",
    "pml_extremal_envelope",
    "krr_kernel",
    "krr_envelope_exact",
    "krr_envelope_upper_bound",
    "krr_envelope_lower_bound",
    # certificates
    "applicable_bounds",
    "bounds_for",
]


def _check_eps_c_n(epsilon: float, c: float, n: int) -> None:
    if not (isinstance(n, int) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, found {n!r}")
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and >= 0, found {epsilon!r}")
    if not (0 <= c <= 1 / n + 1e-15):
        raise ValueError(f"c must lie in [0, 1/N] = [0, {1 / n:g}], found {c!r}")


def xi(epsilon: float, c: float, n: int) -> float:
    """Ξ(ε, c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1}: the largest Dobrushin coefficient
    of an (ε, c)-PML kernel (Dobrushin paper, Theorem 1; = 1 for ε ≥ log(2/(Nc)), Theorem 2).

    Domain: ε ≥ 0, 0 ≤ c ≤ 1/N, N ≥ 2. c = 0 gives the LDP value (e^ε − 1)/(e^ε + 1)
    (Kairouz et al., eq. 4); c = 1/N gives min{e^ε − 1, 1} (Remark 1).
    """
    _check_eps_c_n(epsilon, c, n)
    inv = math.exp(-epsilon)  # divide through by e^ε: no overflow for any ε
    den = max(0.0, _one_minus_nc(c, n)) + inv
    if den == 0.0:  # c = 1/N and e^-ε underflows: (e^ε − 1)/1 ≥ 1 (Remark 1), never 0/0
        return 1.0
    return min(-math.expm1(-epsilon) / den, 1.0)


def ldp_dobrushin(epsilon: float) -> float:
    """(e^ε − 1)/(e^ε + 1): the largest Dobrushin coefficient of an ε-LDP kernel
    (Kairouz, Oh, Viswanath; eq. 4 of the Dobrushin paper). Domain: ε ≥ 0."""
    if not (epsilon >= 0):
        raise ValueError(f"epsilon must be >= 0, found {epsilon!r}")
    return math.tanh(epsilon / 2.0)


def remark2_column(epsilon: float, c: float, n: int, q: int) -> list[float]:
    """First column p of the Remark 2 extremal binary mechanism K* = [p, 1 − p]:
    q entries M = e^ε(1 − cq)/(1 + e^ε(1 − Nc)), then N − q entries m = (1 − e^ε c q)/(1 + e^ε(1 − Nc)).

    Domain: 1 ≤ q ≤ N − 1, e^ε c q ≤ 1 (m ≥ 0) and e^ε c (N − q) ≤ 1 (M ≤ 1). For even N both hold
    for q = N/2 throughout the regime of Theorem 3 (ε < log(2/(Nc))). For odd N some q is valid only
    when ε ≤ log(2/((N + 1)c)): e.g. N = 3, c = 0.2, ε = 1.1 lies in the Theorem 3 regime but no q gives
    a valid two-level column; the Dobrushin LP still reaches Ξ(ε, c) there, with a three-level column.
    """
    _check_eps_c_n(epsilon, c, n)
    if not (isinstance(q, int) and 1 <= q <= n - 1):
        raise ValueError(f"q must be an integer in [1, N-1], found {q!r}")
    inv = math.exp(-epsilon)  # divide through by e^ε: no overflow at large ε (c = 0, LDP)
    if c * q > inv * (1 + 1e-12):
        raise ValueError(f"Remark 2 needs e^eps * c * q <= 1, found {c * q / inv if inv else math.inf:g}")
    if c * (n - q) > inv * (1 + 1e-12):  # M <= 1, i.e. 1 - M >= 0 in the second column
        raise ValueError(f"Remark 2 needs e^eps * c * (N - q) <= 1, found {c * (n - q) / inv if inv else math.inf:g}")
    d = inv + (1.0 - n * c)
    big = min(1.0, (1.0 - c * q) / d)  # clip rounding at the tie e^eps c q = 1 (m = 0, M = 1 - 0)
    small = max(0.0, (inv - c * q) / d)
    return [big] * q + [small] * (n - q)


def example1_kernel(epsilon: float, c: float) -> list[list[float]]:
    """Example 1 (N = 2) of the Dobrushin paper: the optimal binary (ε, c)-PML kernel
    [[e^ε(1−c), 1 − e^ε c], [1 − e^ε c, e^ε(1−c)]] / (e^ε(1 − 2c) + 1).

    Domain: 0 ≤ c ≤ 1/2 and e^ε c ≤ 1.
    """
    p = remark2_column(epsilon, c, 2, 1)
    return [[p[0], 1 - p[0]], [p[1], 1 - p[1]]]


def xi_regime(epsilon: float, c: float, n: int) -> str:
    """Which result gives Ξ(ε, c): eq. (4) (c = 0, LDP), Remark 1 (c = 1/N), Theorem 2
    (ε ≥ log(2/(Nc)): Ξ = 1) or Theorem 3 (otherwise). Same domain as :func:`xi`."""
    _check_eps_c_n(epsilon, c, n)
    if c == 0:
        return "eq. (4), LDP (Kairouz et al.): (e^eps - 1)/(e^eps + 1)"
    if abs(c * n - 1) <= 1e-15:
        return "Remark 1 (c = 1/N): min{e^eps - 1, 1}"
    if epsilon >= math.log(2 / (n * c)):
        return "Theorem 2 (eps >= log(2/(Nc))): 1"
    return "Theorem 3: Xi(eps, c) = (e^eps - 1)/(e^eps (1 - Nc) + 1)"


def remark2_kernel(epsilon: float, c: float, n: int, q: int) -> list[list[float]]:
    """The Remark 2 extremal binary kernel K* = [p, 1 − p] (N × 2), p from :func:`remark2_column`.
    Its Dobrushin coefficient is Ξ(ε, c) (Theorem 3). Same domain as :func:`remark2_column`."""
    return [[v, 1 - v] for v in remark2_column(epsilon, c, n, q)]


def lemma1_max_zeros(epsilon: float, c: float, n: int) -> int:
    """Lemma 1 (Dobrushin paper): an (ε, c)-PML kernel has at most l − 1 zeros in each column
    (that is not all zero) for every l with ε < −log((N − l)c). The smallest such l gives

        max zeros = ⌊N − e^{−ε}/c⌋, clipped to [0, N − 1]   (c = 0, LDP: 0).

    At exact ties (N − e^{−ε}/c an integer, e.g. Example 2) the floor is taken with a
    1e−9 allowance upward, which can only weaken the claim. Domain: as :func:`xi`.
    """
    _check_eps_c_n(epsilon, c, n)
    if c == 0:
        return 0
    x = n - math.exp(-epsilon) / c
    if x < 0:  # also −inf, e^{−ε}/c beyond the doubles (c = 5e-324): no zeros
        return 0
    return int(min(n - 1, max(0, math.floor(x + 1e-9))))


def proposition2_gamma_bounds(epsilon: float, c: float, n: int) -> tuple[float, float]:
    """Proposition 2 (Dobrushin paper): for K ∈ 𝓜(ε, c), Γ_max ≤ (1 − Nc)e^ε + 1 and
    Γ_min ≥ ((1 − Nc)e^ε + 1)^{−1}. Returns (upper bound on Γ_max, lower bound on Γ_min).

    Domain: 0 ≤ c ≤ 1/N, 0 ≤ ε ≤ −log c (as stated; c = 0 is the LDP limit, where the
    proof of Appendix E goes through unchanged).
    """
    _check_eps_c_n(epsilon, c, n)
    if c > 0 and epsilon > -math.log(c) + 1e-12:
        raise ValueError(f"Proposition 2 needs eps <= -log(c) = {-math.log(c):g}, found {epsilon:g}")
    log_g = _log_g(epsilon, c, n)  # log((1 − Nc)e^ε + 1) without overflow
    g = math.exp(log_g) if log_g < 709.0 else math.inf
    return g, math.exp(-log_g)


def _xlogx(t: float) -> float:
    return 0.0 if t == 0 else t * math.log(t)


F_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "kl": _xlogx,
    "tv": lambda t: 0.5 * abs(t - 1),
    "hellinger": lambda t: (1 - math.sqrt(t)) ** 2,
    "chi2": lambda t: (t - 1) ** 2,
}
"""Generators f of common f-divergences (Dobrushin paper §II-A): KL, TV, squared Hellinger (no ½), χ²."""


def binette_bound(
    f: Callable[[float], float] | str, gamma_max: float, gamma_min: float, tv: float, eta_tv: float = 1.0
) -> float:
    """Binette's reverse Pinsker inequality across a kernel, Dobrushin paper eq. (8):

        D_f(K∘P ‖ K∘Q) ≤ η_TV [ f(Γ_min)/(1 − Γ_min) + f(Γ_max)/(Γ_max − 1) ] · TV(P, Q),

    where Γ_min ≤ (K∘P)(y)/(K∘Q)(y) ≤ Γ_max for all y. With η_TV = 1 and tv = TV of the
    pair itself it is Binette's inequality (f_α paper Theorem 6 for f = f_α). ``f`` is a
    convex function with f(1) = 0 (defined at 0 when Γ_min = 0) or a name in
    :data:`F_FUNCTIONS`. Domain: 0 ≤ Γ_min ≤ 1 ≤ Γ_max ≤ ∞, 0 ≤ tv ≤ 1, 0 ≤ η_TV ≤ 1.
    Γ_max = 1 or Γ_min = 1 (equal output laws) gives 0; Γ_max = ∞ gives ∞.
    """
    fn = F_FUNCTIONS[f] if isinstance(f, str) else f
    if not (0 <= gamma_min <= 1 <= gamma_max):
        raise ValueError(f"need 0 <= gamma_min <= 1 <= gamma_max, found {gamma_min!r}, {gamma_max!r}")
    if not (0 <= tv <= 1 + 1e-12 and 0 <= eta_tv <= 1 + 1e-12):
        raise ValueError(f"tv and eta_tv must lie in [0, 1], found {tv!r}, {eta_tv!r}")
    tv, eta_tv = min(tv, 1.0), min(eta_tv, 1.0)
    if gamma_max == 1 or gamma_min == 1 or tv == 0 or eta_tv == 0:
        return 0.0
    if gamma_max == math.inf:
        return math.inf
    coef = fn(gamma_min) / (1 - gamma_min) + fn(gamma_max) / (gamma_max - 1)
    return eta_tv * coef * tv


def _one_minus_nc(c: float, n: int) -> float:
    """1 − Nc from the double c taken exactly, rounded once (1 − N·c in doubles loses 1e-10 of 1e-6)."""
    return float(1 - n * Fraction(c))


def _log_g(epsilon: float, c: float, n: int) -> float:
    """log((1 − Nc)e^ε + 1) without overflow."""
    a = _one_minus_nc(c, n)
    return float(np.logaddexp(math.log(a) + epsilon, 0.0)) if a > 0 else 0.0


def corollary1_kl_bound(epsilon: float, c: float, n: int, tv: float) -> float:
    """Corollary 1 (Dobrushin paper): for K (ε, c)-PML and P, Q ∈ Q_X(c) with TV(P, Q) ≤ tv,
    D(K∘P ‖ K∘Q) ≤ Ξ(ε, c) · log((1 − Nc)e^ε + 1) · tv.

    (Eq. (8) with f = t log t and Proposition 2: f(1/G)/(1 − 1/G) + f(G)/(G − 1) = log G.)
    Domain: 0 ≤ c ≤ 1/N (c = 0: LDP), ε ≥ 0, 0 ≤ tv ≤ 1.
    """
    _check_eps_c_n(epsilon, c, n)
    if not 0 <= tv <= 1:
        raise ValueError(f"tv must lie in [0, 1], found {tv!r}")
    return xi(epsilon, c, n) * _log_g(epsilon, c, n) * tv


def corollary2_hellinger_bound(epsilon: float, c: float, n: int, tv: float) -> float:
    """Corollary 2 (Dobrushin paper): for K (ε, c)-PML and P, Q ∈ Q_X(c) with TV(P, Q) ≤ tv,
    H²(K∘P ‖ K∘Q) ≤ Ξ(ε, c) · (2 − 4/(√((1 − Nc)e^ε + 1) + 1)) · tv, with H² = Σ(√p − √q)².

    Domain: 0 ≤ c ≤ 1/N (c = 0: LDP), ε ≥ 0, 0 ≤ tv ≤ 1.
    """
    _check_eps_c_n(epsilon, c, n)
    if not 0 <= tv <= 1:
        raise ValueError(f"tv must lie in [0, 1], found {tv!r}")
    half_log_g = 0.5 * _log_g(epsilon, c, n)
    if half_log_g >= 709.0:  # 4/(inf + 1) = 0: the factor is 2
        return xi(epsilon, c, n) * 2.0 * tv
    # 2 − 4/(√g + 1) = 2(√g − 1)/(√g + 1), with √g − 1 = expm1(½ log g): no cancellation as g → 1
    return xi(epsilon, c, n) * (2 * math.expm1(half_log_g) / (math.exp(half_log_g) + 1)) * tv


def duchi_kl_bound(epsilon: float, tv: float) -> float:
    """Duchi, Jordan, Wainwright (Dobrushin paper §I-C): for K ε-LDP,
    D(K∘P ‖ K∘Q) ≤ min{4, e^{2ε}} (e^ε − 1)² TV(P, Q)². Domain: ε ≥ 0, 0 ≤ tv ≤ 1."""
    if not (epsilon >= 0 and 0 <= tv <= 1):
        raise ValueError(f"need eps >= 0 and tv in [0, 1], found {epsilon!r}, {tv!r}")
    if epsilon > 350:  # (e^ε − 1)² beyond the doubles
        return math.inf if tv > 0 else 0.0
    return min(4.0, math.exp(2 * epsilon)) * math.expm1(epsilon) ** 2 * tv**2


def le_cam_bretagnolle_huber(kl: float, separation: float) -> float:
    """Minimax risk lower bound R* ≥ (l/2)(1 − TV) ≥ (l/4) e^{−D} from Le Cam's two-point
    method (Dobrushin paper §I, R* ≥ l(θ0, θ1)/2 [1 − TV]) and Bretagnolle–Huber
    (1 − TV(P, Q) ≥ ½ e^{−D(P‖Q)}). Domain: kl ≥ 0, separation l(θ0, θ1) ≥ 0."""
    if not (kl >= 0 and separation >= 0):
        raise ValueError(f"need kl >= 0 and separation >= 0, found {kl!r}, {separation!r}")
    return separation / 4 * math.exp(-kl)


def _example3_rate(epsilon: float, c: float, delta: float) -> float:
    if not 0 < delta < 0.25:
        raise ValueError(f"Example 3 needs delta in (0, 1/4), found {delta!r}")
    _check_eps_c_n(epsilon, c, 4)
    # D per sample <= Xi * log((1 - 4c)e^eps + 1) * TV(P_theta0, P_theta1), TV = 2 delta
    return xi(epsilon, c, 4) * _log_g(epsilon, c, 4) * 2 * delta


def example3_minimax_lower_bound(
    epsilon: float, c: float, delta: float, n_samples: int, separation: float | None = None
) -> float:
    """Example 3 (Dobrushin paper): with P_θ0 = [1/4 − δ, 1/4 + δ, 1/4, 1/4],
    P_θ1 = [1/4 + δ, 1/4 − δ, 1/4, 1/4] and n samples released through an (ε, c)-PML K,

        R* ≥ (l/4) exp(−n Ξ(ε, c) log((1 − 4c)e^ε + 1) · 2δ),

    by Corollary 1 (TV(P_θ0, P_θ1) = 2δ), tensorisation of KL, Le Cam and Bretagnolle–Huber
    (:func:`le_cam_bretagnolle_huber`). The paper prints ½ exp(−n Ξ log(·) δ); the
    constants here are the ones the derivation gives. ``separation`` = l(θ0, θ1)
    (default δ = θ1 − θ0). Domain: δ ∈ (0, 1/4), 0 ≤ c ≤ 1/4, ε ≥ 0, n ≥ 0.
    """
    if not (isinstance(n_samples, int) and n_samples >= 0):
        raise ValueError(f"n_samples must be an integer >= 0, found {n_samples!r}")
    rate = _example3_rate(epsilon, c, delta)
    return le_cam_bretagnolle_huber(n_samples * rate, delta if separation is None else separation)


def example3_sample_size(epsilon: float, c: float, delta: float, risk: float, separation: float | None = None) -> float:
    """The smallest n for which the Example 3 lower bound no longer excludes R* ≤ risk:
    n ≥ log(l/(4·risk)) / (2δ Ξ(ε, c) log((1 − 4c)e^ε + 1)), i.e. n = Ω(1/(Ξ δ)) up to logs.
    Returns ``inf`` at ε = 0 (no sample size helps). Domain: as
    :func:`example3_minimax_lower_bound`, risk > 0."""
    if not risk > 0:
        raise ValueError(f"risk must be > 0, found {risk!r}")
    rate = _example3_rate(epsilon, c, delta)
    need = math.log((delta if separation is None else separation) / (4 * risk))
    if need <= 0:
        return 0
    return math.inf if rate == 0 else math.ceil(need / rate)


# ------------------------------------------------------------------ f_alpha paper
def _check_alpha(alpha: float) -> None:
    if not (alpha > 1 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be finite and > 1, found {alpha!r}")


def r_alpha(u: float, v: float, alpha: float) -> float:
    """R_α(u, v) = (u^α − 1)/(u − 1) − (1 − v^α)/(1 − v) (f_α paper Theorem 6, eq. 23):
    D_{f_α}(P‖Q) ≤ TV(P, Q) R_α(Γ_max, Γ_min). Limits: α at u = 1 and at v = 1.
    Domain: α > 1, u ∈ [1, ∞], v ∈ [0, 1].

    Numerics: with h(x) = (x^α − 1)/(x − 1), R_α = h(u) − h(v) cancels as u, v → 1 (both terms
    → α). Near 1 (u − 1, 1 − v ≤ 0.05) it is summed as the binomial series
    h(1 + a) − h(1 − b) = Σ_{k≥1} C(α, k+1)(a^k − (−b)^k), with a^k − (−b)^k written without
    cancellation; elsewhere each term is expm1(α log x)/(x − 1), never 1 − v^α.
    """
    _check_alpha(alpha)
    if not (u >= 1 and 0 <= v <= 1):
        raise ValueError(f"need u >= 1 and v in [0, 1], found {u!r}, {v!r}")
    if u == math.inf:
        return math.inf
    a, b = u - 1.0, 1.0 - v  # exact in floats (Sterbenz) where the series is used
    if a <= 0.05 and b <= 0.05 and alpha <= 200:
        return _r_alpha_series(a, b, alpha)
    # h(x) − 1 = x·expm1((α − 1) log x)/(x − 1) (h(1) − 1 = α − 1, h(0) − 1 = 0): the two 1's of h(u) − h(v)
    # cancel exactly, which matters as α → 1 (R_α → 0; 2e-5 relative lost at α = 1 + 1e-12 otherwise)
    beta = alpha - 1.0
    try:
        up = beta if u == 1 else u * math.expm1(beta * math.log(u)) / a
    except OverflowError:
        return math.inf
    low = beta if v == 1 else (v * math.expm1(beta * math.log(v)) / (-b) if v > 0 else 0.0)
    return up - low


def _r_alpha_series(a: float, b: float, alpha: float) -> float:
    """Σ_{k≥1} C(α, k+1) (a^k − (−b)^k) for 0 ≤ a, b ≤ 0.05 (see :func:`r_alpha`).

    a^k − (−b)^k = (a + b)·S_k with S_k = Σ_{j=0}^{k−1} a^j (−b)^{k−1−j}, computed by the recursion
    S_1 = 1, S_{k+1} = a^k − b S_k. The k = 1 term C(α, 2)(a + b) dominates; rounding in the
    later S_k is of order 1e−16·max(a, b)^{k−1}, negligible beside it."""
    total = 0.0
    coef = alpha * (alpha - 1) / 2.0  # C(α, 2)
    s_k, a_pow = 1.0, 1.0  # S_1 = 1, a^0
    top = max(a, b)
    for k in range(1, 400):
        total += coef * s_k
        # |S_j| ≤ j top^{j−1} and |C(α, j+1)| decreases for j > α: stop when the bound is negligible
        if coef == 0 or (k > alpha + 2 and abs(coef) * (k + 1) * top**k <= 1e-18 * abs(total)):
            break
        a_pow *= a  # a^k
        s_k = a_pow - b * s_k  # S_{k+1} = a^k + (−b) S_k
        coef *= (alpha - k - 1) / (k + 2)  # C(α, k+2) = C(α, k+1)(α − k − 1)/(k + 2)
    return (a + b) * total


def g_alpha(t: float, alpha: float) -> float:
    """Pinsker's inequality for f_α (f_α paper Theorem 8, eq. 39): D_{f_α}(P‖Q) ≥ g_α(TV(P, Q)) with

        g_α(t) = e^{2(α−1)t²} − 1        if t < 1/α and α < 2,
                 (4t² + 1)^{α−1} − 1     if t < 1/α and α ≥ 2,
                 (1 − t)^{1−α} − 1       otherwise.

    Domain: α > 1, t ∈ [0, 1] (g_α(1) = ∞)."""
    _check_alpha(alpha)
    if not 0 <= t <= 1:
        raise ValueError(f"t must lie in [0, 1], found {t!r}")
    if t < 1 / alpha:  # expm1/log1p: no cancellation near t = 0 (g_α(1e−9, 3) = 8e−18, not 0)
        return math.expm1(2 * (alpha - 1) * t * t) if alpha < 2 else math.expm1((alpha - 1) * math.log1p(4 * t * t))
    if t == 1:
        return math.inf
    try:
        return math.expm1((1 - alpha) * math.log1p(-t))
    except OverflowError:
        return math.inf


def g_alpha_inverse(s: float, alpha: float) -> float:
    """The generalised inverse sup{t ∈ [0, 1] : g_α(t) ≤ s} of :func:`g_alpha` (f_α paper
    Remark 10, eq. 41): if D_{f_α}(P‖Q) = s then TV(P, Q) ≤ g_α⁻¹(s). Piecewise,

        √(log(s+1)/(2(α−1)))          α < 2,  s < h1(α) = e^{2(α−1)/α²} − 1,
        ½ √((s+1)^{1/(α−1)} − 1)      α ≥ 2,  s < h2(α) = (1 + 4/α²)^{α−1} − 1,
        max{1 − (s+1)^{1/(1−α)}, 1/α} otherwise.

    h1 here is g_α's left limit at 1/α, as the derivation requires; the extracted text
    prints h1(α) = 2 − 2/α, which is larger and would give a looser (still valid) value.
    Domain: α > 1, s ≥ 0 (s = ∞ gives 1).
    """
    _check_alpha(alpha)
    if not s >= 0:
        raise ValueError(f"s must be >= 0, found {s!r}")
    if s == math.inf:
        return 1.0
    t0 = 1 / alpha
    h = math.expm1(2 * (alpha - 1) * t0 * t0) if alpha < 2 else math.expm1((alpha - 1) * math.log1p(4 * t0 * t0))
    if s < h:  # expm1/log1p: (s + 1)^{1/(α−1)} − 1 cancels for small s
        if alpha < 2:
            return min(t0, math.sqrt(math.log1p(s) / (2 * (alpha - 1))))
        return min(t0, 0.5 * math.sqrt(math.expm1(math.log1p(s) / (alpha - 1))))
    return max(-math.expm1(math.log1p(s) / (1 - alpha)), t0)


def renyi_to_f_alpha(epsilon: float, alpha: float) -> float:
    """ε_f = e^{(α−1)ε} − 1: the f_α-divergence of a Rényi divergence ε (f_α paper eq. 4). Domain: α > 1, ε ≥ 0."""
    _check_alpha(alpha)
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, found {epsilon!r}")
    return math.expm1((alpha - 1) * epsilon)


def f_alpha_to_renyi(s: float, alpha: float) -> float:
    """D_α = log(s + 1)/(α − 1) from D_{f_α} = s (f_α paper eq. 4). Domain: α > 1, s ≥ 0."""
    _check_alpha(alpha)
    if not s >= 0:
        raise ValueError(f"s must be >= 0, found {s!r}")
    return math.log1p(s) / (alpha - 1)


def rldp_amplification_bound(
    eps_f: float, alpha: float, gamma_max: float, gamma_min: float, eta_tv: float = 1.0
) -> float:
    """φ(ε_f, α) = 1/(α − 1) · log(η_TV R_α(Γ_max, Γ_min) g_α⁻¹(ε_f) + 1) (f_α paper eqs. 53–55):
    an upper bound on the RLDP^(α) of P_{Y|X} ∘ P_{X|W}, where ε_f = max_{w,w'} D_{f_α}(P_{X|W=w}‖P_{X|W=w'})
    (:func:`renyi_to_f_alpha` of the mechanism's RLDP), Γ from eqs. 56–57 (the rows of P_{X|W} as
    priors, :func:`mechdesign.theory.measures.gamma_extremes`) and η_TV = η_TV(P_{Y|X}) (≤ 1).
    Domain: α > 1, ε_f ≥ 0, 0 ≤ Γ_min ≤ 1 ≤ Γ_max, 0 ≤ η_TV ≤ 1.
    """
    if not 0 <= eta_tv <= 1 + 1e-12:  # a Dobrushin coefficient computed in floats may exceed 1 by an ulp
        raise ValueError(f"eta_tv must lie in [0, 1], found {eta_tv!r}")
    eta_tv = min(eta_tv, 1.0)
    inner = eta_tv * r_alpha(gamma_max, gamma_min, alpha) * g_alpha_inverse(eps_f, alpha)
    return math.log1p(inner) / (alpha - 1)


# ---------------------------------------------------------------- envelopes paper
def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), found {delta!r}")


def envelope_upper_bound(max_leakage: float, epsilon: float, delta: float | Fraction) -> float:
    """Theorem 3 (envelopes paper): if P_{XY} is ε-PML, ε_c(δ) ≤ min{ℒ(X→Y) + log 1/δ, ε},
    with ℒ the maximal leakage (:func:`mechdesign.theory.measures.max_leakage`).
    Domain: δ ∈ (0, 1), ε ≥ 0, ℒ ≥ 0."""
    _check_delta(delta)
    if not (epsilon >= 0 and max_leakage >= 0):
        raise ValueError(f"need eps >= 0 and max_leakage >= 0, found {epsilon!r}, {max_leakage!r}")
    log_delta = math.log(delta) if isinstance(delta, float) else log_of_rational(delta)
    return min(max_leakage - log_delta, epsilon)


def _check_prior(prior: Sequence[float]) -> np.ndarray:
    p = np.asarray([float(v) for v in prior])
    if p.ndim != 1 or p.size < 2 or (p <= 0).any() or abs(p.sum() - 1) > 1e-9:
        raise ValueError("prior must have >= 2 positive masses summing to 1")
    return p


def pml_extremal_kernel(prior: Sequence[float], epsilon: float) -> np.ndarray:
    """The PML-extremal mechanism of the high-privacy regime (envelopes paper §V-A, Theorem 4;
    Grosse et al. [14]): K(j|i) = 1 − e^ε(1 − P(i)) if i = j, e^ε P(j) otherwise. Every output
    has ℓ(X→j) = ε and P_Y = P. Domain: P with full support, 0 ≤ ε < −log(1 − min P)."""
    p = _check_prior(prior)
    if not (0 <= epsilon < -math.log1p(-p.min())):
        raise ValueError(f"Theorem 4 needs 0 <= eps < -log(1 - min P) = {-math.log1p(-p.min()):g}, found {epsilon!r}")
    ee = math.exp(epsilon)
    K = np.tile(ee * p, (p.size, 1))
    # 1 − e^ε(1 − P(i)) cancels near the threshold (5e-3 relative at ε = (1 − 1e-12)·threshold in doubles):
    # evaluated at 320 bits from the doubles ε and P(i) taken exactly, then rounded once
    with mpmath.workprec(320):
        e = mpmath.exp(mpmath.mpf(epsilon))
        np.fill_diagonal(K, [float(1 - e * (1 - mpmath.mpf(float(v)))) for v in p])
    return K


def pml_extremal_envelope(prior: Sequence[float], epsilon: float, delta: float) -> float:
    """Theorem 4 (envelopes paper): the PML envelope of the PML-extremal mechanism is ε_c(δ) = ε
    for every δ ∈ (0, 1). Domain: as :func:`pml_extremal_kernel`, δ ∈ (0, 1)."""
    _check_delta(delta)
    pml_extremal_kernel(prior, epsilon)
    return float(epsilon)


def krr_kernel(k: int, eps_r: float) -> np.ndarray:
    """k-RR (envelopes paper eq. 14): e^{ε_r}/(e^{ε_r} + k − 1) on the diagonal, 1/(e^{ε_r} + k − 1)
    elsewhere; ε_r-LDP. Domain: k ≥ 2, ε_r ≥ 0."""
    if not (isinstance(k, int) and k >= 2 and eps_r >= 0):
        raise ValueError(f"need k >= 2 and eps_r >= 0, found {k!r}, {eps_r!r}")
    a, b = _krr_ab(k, eps_r)
    K = np.full((k, k), b)
    np.fill_diagonal(K, a)
    return K


def _krr_ab(k: int, eps_r: float) -> tuple[float, float]:
    ee = math.exp(eps_r)
    return ee / (ee + k - 1), 1 / (ee + k - 1)


def _log_alpha_over_q(eps_r: float, p: float) -> float:
    """log(α/q) for k-RR with q = β + (α − β)p: α/q = e^{ε_r}/(1 + p(e^{ε_r} − 1)), so
    log(α/q) = ε_r − log1p(p·expm1(ε_r)), without the cancellation of log(α/q) at small ε_r."""
    return eps_r - math.log1p(p * math.expm1(eps_r))


def _krr_setup(prior, eps_r: float, delta: float):
    p = np.sort(_check_prior(prior))
    _check_delta(delta)
    if not eps_r > 0:
        raise ValueError(f"Theorem 5 needs eps_r > 0, found {eps_r!r}")
    a, b = _krr_ab(p.size, eps_r)
    q = b + (a - b) * p
    return p, a, b, q


def krr_envelope_exact(prior: Sequence[float], eps_r: float, delta: float) -> float:
    """Theorem 5(i) (envelopes paper): for k-RR and δ ∈ (0, q_1], ε_c(δ) = log(α/q_1), where
    q_1 = min_j P_Y(j). Domain: ε_r > 0, prior with full support, 0 < δ ≤ q_1."""
    p, a, b, q = _krr_setup(prior, eps_r, delta)
    if delta > q[0] * (1 + 1e-12):
        raise ValueError(f"Theorem 5(i) needs delta <= q_1 = {q[0]:g}, found {delta!r}")
    return _log_alpha_over_q(eps_r, p[0])


def krr_envelope_upper_bound(prior: Sequence[float], eps_r: float, delta: float) -> float:
    """Theorem 5(i)–(ii) (envelopes paper): ε_c(δ) ≤ min{log(kα/δ), log(α/q_1)} for k-RR
    (= log(α/q_1), exact, when δ ≤ q_1). Domain: ε_r > 0, prior with full support, δ ∈ (0, 1)."""
    p, a, b, q = _krr_setup(prior, eps_r, delta)
    top = _log_alpha_over_q(eps_r, p[0])
    # log(kα/δ) = ε_r − log1p(expm1(ε_r)/k) − log δ (α = e^{ε_r}/(k + expm1(ε_r)))
    return top if delta <= q[0] else min(eps_r - math.log1p(math.expm1(eps_r) / p.size) - math.log(delta), top)


def krr_envelope_lower_bound(prior: Sequence[float], eps_r: float, delta: float) -> float:
    """Theorem 5(iii) (envelopes paper): ε_c(δ) ≥ h_δ(θ) for k-RR, where (priors sorted
    increasingly) N is the index with Σ_{j<N} q_j < δ ≤ Σ_{j≤N} q_j, θ = (δ − Σ_{j<N} q_j)/q_N and

        h_δ(θ) = log(α/q_{N−1})                 for θ ≤ θ_1,
                 log(((N − 1)α + θβ)/δ)          for θ_1 < θ ≤ θ_2,
                 log(α/q_N)                      for θ > θ_2,

    θ_1 = α((N−2)q_{N−1} − Σ_{j≤N−2} q_j)/(αq_N − βq_{N−1}),
    θ_2 = α((N−1)q_N − Σ_{j≤N−1} q_j)/(q_N(α − β)) (degenerate cases: empty regimes).
    For δ ≤ q_1 it returns the exact value of Theorem 5(i).
    Domain: ε_r > 0, prior with full support, δ ∈ (0, 1), and (for δ > q_1)
    p_N ≤ (α Σ_{j<N} p_j + β)/((N − 2)α + β).
    """
    p, a, b, q = _krr_setup(prior, eps_r, delta)
    if delta <= q[0]:
        return _log_alpha_over_q(eps_r, p[0])
    cum = np.cumsum(q)
    big_n = int(np.searchsorted(cum, delta, side="left")) + 1  # 1-based: cum[N-2] < delta <= cum[N-1]
    big_n = min(max(big_n, 2), p.size)
    below = float(cum[big_n - 2])
    qn, qn1 = q[big_n - 1], q[big_n - 2]
    if p[big_n - 1] > (a * p[: big_n - 1].sum() + b) / ((big_n - 2) * a + b) * (1 + 1e-12):
        raise ValueError(
            "Theorem 5(iii) needs p_N <= (alpha sum_{j<N} p_j + beta)/((N-2) alpha + beta) "
            f"for N = {big_n}; the prior violates it"
        )
    theta = (delta - below) / qn
    theta1 = a * ((big_n - 2) * qn1 - q[: big_n - 2].sum()) / (a * qn - b * qn1)
    theta2 = a * ((big_n - 1) * qn - q[: big_n - 1].sum()) / (qn * (a - b))
    if theta <= theta1:
        return _log_alpha_over_q(eps_r, p[big_n - 2])
    if theta <= theta2:
        return math.log(((big_n - 1) * a + theta * b) / delta)
    return _log_alpha_over_q(eps_r, p[big_n - 1])


# ------------------------------------------------------------------ certificates
def _json_num(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    v = float(v)
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")


def _entry(name: str, value, measured, holds: bool) -> dict:
    return {"name": name, "value": _json_num(value), "measured": _json_num(measured), "holds": bool(holds)}


def _equivalent_c(prior_set, n: int):
    """c with 𝒫 = Q_X(c), when there is one: simplex (c = 0), min_mass, uniform point (c = 1/N)."""
    return rules(prior_set, n).equivalent_c()


MAX_ENTRIES = 2_500
"""Kernels with more entries get only the cheap entries of :func:`bounds_for` (design() stays fast)."""


def _lemma1_entry(K, eps: float, cf: float, n: int) -> dict:
    """Lemma 1: the zeros per non-zero column against floor(N − e^−ε / c)."""
    zmax = lemma1_max_zeros(eps, cf, n)
    z = measures.zeros_per_column(K)
    return _entry("Lemma 1: zeros per (non-zero) column <= floor(N - e^-eps / c)", zmax, z, z <= zmax)


def _min_mass_bounds(prior_set, eps: float, c, kernel, K: np.ndarray, slack) -> list[dict]:
    """For 𝒫 = Q_X(c): Theorems 1–3 (η_TV ≤ Ξ), Lemma 1 and Proposition 2 (Γ_max) when c > 0."""
    n = K.shape[0]
    cf = float(c)
    bound = xi(eps, cf, n)
    eta = measures.dobrushin(K)
    out = [_entry(f"eta_TV <= Xi(eps, c): {xi_regime(eps, cf, n)}", bound, eta, eta <= slack(bound))]
    if c > 0:
        out.append(_lemma1_entry(K, eps, cf, n))
        if eps <= -log_of_rational(c):  # −log c, exact (c = 1e-400 is 0.0 as a double)
            g, _ = proposition2_gamma_bounds(eps, cf, n)
            # the exact kernel when given: its int64 numerators take the O(NM) integer path
            gm = measures.gamma_max(kernel if hasattr(kernel, "int64") else K, prior_set)
            out.append(_entry("Proposition 2: Gamma_max <= (1 - Nc) e^eps + 1", g, gm, gm <= slack(g)))
    return out


def _vertex_pair_bounds(prior_set, eps: float, c, K: np.ndarray, slack) -> list[dict]:
    """Corollaries 1–2 and, for LDP (c = 0), Duchi et al., measured as the largest ratio over pairs of
    vertices of Q_X(c) (N ≤ 40, c N < 1)."""
    n = K.shape[0]
    cf = float(c)
    verts = vertices(prior_set, n)
    if not (c * n < 1 and verts is not None and n <= 40):
        return []
    V = np.array([[float(v) for v in row] for row in verts])
    outs = V @ K
    tv_x = 1 - n * cf  # TV between two vertices of Q_X(c)
    kl_ratio = max(measures.kl_divergence(outs[i], outs[j]) for i in range(n) for j in range(n) if i != j) / tv_x
    hel_ratio = max(measures.hellinger_squared(outs[i], outs[j]) for i in range(n) for j in range(n) if i != j) / tv_x
    b1 = corollary1_kl_bound(eps, cf, n, 1.0)
    b2 = corollary2_hellinger_bound(eps, cf, n, 1.0)
    out = [
        _entry(
            "Corollary 1: D(KP||KQ)/TV(P,Q) <= Xi log((1-Nc)e^eps + 1) (vertex pairs)",
            b1,
            kl_ratio,
            kl_ratio <= slack(b1),
        ),
        _entry(
            "Corollary 2: H^2(KP||KQ)/TV(P,Q) <= Xi (2 - 4/(sqrt((1-Nc)e^eps+1) + 1)) (vertex pairs)",
            b2,
            hel_ratio,
            hel_ratio <= slack(b2),
        ),
    ]
    if c == 0:
        b3 = duchi_kl_bound(eps, 1.0)
        out.append(
            _entry(
                "Duchi et al.: D(KP||KQ)/TV(P,Q)^2 <= min{4, e^2eps}(e^eps - 1)^2 (vertex pairs)",
                b3,
                kl_ratio,
                kl_ratio <= slack(b3),
            )
        )
    return out


def _point_prior_bounds(prior, eps: float, K: np.ndarray, delta: str, slack) -> list[dict]:
    """For a point prior: the disclosure thresholds (Proposition 7, Corollary 8 of the disclosure paper;
    listed when ε is below them) and Theorem 3 of the envelopes paper at ``delta``."""
    out = []
    t7 = measures.disclosure_threshold(prior)
    if eps < t7:
        cap = measures.ldp(K)
        out.append(
            _entry(
                "Proposition 7 (disclosure): eps < log 1/(1 - p_min) => finite leakage capacity",
                t7,
                cap,
                cap < math.inf,
            )
        )
    t8 = measures.singling_out_threshold(prior)
    if eps < t8:
        h = float(np.nanmin(measures.posterior_min_entropies(K, prior)))
        out.append(
            _entry(
                "Corollary 8 (disclosure): eps < H_inf(P_X) => no singling out (min_y H_inf(P_X|Y=y) > 0)",
                t8,
                h,
                h > 0,
            )
        )
    lower, upper = envelope_bounds(K, prior, delta)
    d = str(delta).strip()
    out.append(
        _entry(
            f"Theorem 3 (envelopes): eps_c({d}) <= min{{L(X->Y) + log(1/{d}), eps}} (measured: lower bound)",
            upper,
            lower,
            lower <= slack(upper),
        )
    )
    return out


def bounds_for(
    prior_set, epsilon: float, kernel, tol: float = 1e-9, max_entries: int = MAX_ENTRIES, delta: str = "0.1"
) -> list[dict]:
    """The closed forms that apply to an (ε, 𝒫)-PML kernel, each as
    ``{"name", "value" (the bound), "measured" (the kernel's quantity), "holds"}``.

    For 𝒫 = Q_X(c) (simplex: c = 0; uniform point: c = 1/N): Theorems 1–3 (η_TV ≤ Ξ),
    Lemma 1 (zeros per column), Proposition 2 (Γ_max), Corollaries 1–2 and, for LDP,
    Duchi et al. (SDPI coefficients, measured as the largest ratio over pairs of vertices
    of 𝒫, N ≤ 40). For a point prior: the disclosure thresholds (Proposition 7,
    Corollary 8 of the disclosure paper; listed when ε is below them) and Theorem 3 of the
    envelopes paper at ``delta`` (default δ = 0.1). ``holds`` compares with a relative tolerance ``tol``.
    Kernels with more than ``max_entries`` entries get only Lemma 1 (the other checks need
    O(N²M) or exact rational work).
    """
    exact = getattr(kernel, "int64", None) is not None  # an exact kernel: Lemma 1 counts its zero numerators
    K = kernel if exact else measures._float_matrix(kernel)
    n, size = K.shape[0], math.prod(K.shape)
    eps = float(epsilon)
    c = _equivalent_c(prior_set, n)
    slack = lambda v: v * (1 + tol) + tol
    if size > max_entries:  # O(NM) only: no float copy of an exact kernel
        return [_lemma1_entry(K, eps, float(c), n)] if c is not None and c > 0 else []
    K = measures._float_matrix(kernel)
    out: list[dict] = []
    if c is not None:
        out += _min_mass_bounds(prior_set, eps, c, kernel, K, slack)
        out += _vertex_pair_bounds(prior_set, eps, c, K, slack)
    prior = rules(prior_set, n).point_prior()
    if prior is not None:
        out += _point_prior_bounds(prior, eps, K, delta, slack)
    return out


def applicable_bounds(spec, kernel) -> list[dict]:
    """:func:`bounds_for` for a design spec (its prior set and ε) and an emitted kernel.
    Never raises on a valid spec: a bound whose evaluation fails is left out."""
    try:
        return bounds_for(spec.prior_set, spec.epsilon.value, kernel)
    except (ValueError, ZeroDivisionError, OverflowError):
        return []


def envelope_bounds(K, prior, delta) -> tuple[float, float]:
    """(lower, upper) bounds on the PML envelope ε_c(δ) of P_{XY} = K × P:

    lower = max{ε̄_Y(δ), ε_b(δ)} (envelopes paper §IV-B), upper = min{ℒ(X→Y) + log 1/δ,
    max_y ℓ(X→y)} (Theorem 3). Domain: δ ∈ (0, 1).
    """
    lower = max(measures.leakage_upper_quantile(K, prior, delta), measures.binary_envelope(K, prior, delta))
    eps = float(np.nanmax(measures.pml(K, prior)))
    upper = envelope_upper_bound(measures.max_leakage(K), eps, measures._delta(delta))  # exact δ: 1e-400 too
    return lower, upper
