"""Dobrushin paper additions (Grosse, Saeidian, Oechtering, Skoglund, *Dobrushin Coefficients of Private
Mechanisms Beyond Local Differential Privacy*): the comparison bound of Figure 1(a), the kernel at which
Proposition 2 is attained, and Example 3 as printed. The paper's own closed forms are in
:mod:`mechdesign.theory.bounds`.
"""

from __future__ import annotations

import math

from mechdesign.theory.bounds import _check_eps_c_n, _log_g, xi

__all__ = [
    "reverse_pinsker_kl",
    "asoodeh_zhang_kl_bound",
    "proposition2_extremal_kernel",
    "example3_minimax_lower_bound_as_printed",
]


def reverse_pinsker_kl(tv: float, q_min: float) -> float:
    """D(P‖Q) ≤ log(1 + 2 TV(P, Q)²/Q_min) on a finite alphabet with Q_min = min_y Q(y) > 0: the reverse
    Pinsker inequality the Dobrushin paper cites as [37, Theorem 28] (Sason and Verdú). Derivation used
    here: D ≤ log(1 + χ²) (Jensen) and χ² = Σ (P − Q)²/Q ≤ Σ (P − Q)²/Q_min ≤ 2 TV²/Q_min (a zero-sum vector
    of ℓ1 norm 2 TV has squared ℓ2 norm at most 2 TV²). Domain: 0 ≤ tv ≤ 1, q_min > 0."""
    if not (0 <= tv <= 1 and q_min > 0):
        raise ValueError(f"need tv in [0, 1] and q_min > 0, found {tv!r}, {q_min!r}")
    return math.log1p(2 * tv * tv / q_min)


def asoodeh_zhang_kl_bound(epsilon: float, c: float, tv: float) -> float:
    """The comparison curve of the Dobrushin paper's Figure 1(a) after Asoodeh and Zhang [7]: for an
    ε-LDP K, η_KL(K) ≤ ((e^ε − 1)/(e^ε + 1))² = tanh²(ε/2), then reverse Pinsker with Q_min = c
    (:func:`reverse_pinsker_kl`; the priors lie in Q_X(c)):

        D(K∘P ‖ K∘Q) ≤ tanh²(ε/2) · log(1 + 2 TV(P, Q)²/c).

    In Figure 1(a) ε = log 15 (K1 is log(15)-LDP) and c = 0.05. Domain: ε ≥ 0, c > 0, 0 ≤ tv ≤ 1."""
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, found {epsilon!r}")
    return math.tanh(epsilon / 2) ** 2 * reverse_pinsker_kl(tv, c)


def proposition2_extremal_kernel(c: float, n: int) -> tuple[float, list[list[float]]]:
    """A kernel at which Proposition 2 holds with equality: ε = −log((N − 1)c) and K = [k, 1 − k] with
    k = (0, M, …, M), M = 1 − (N − 2)c/(1 − c). Then k meets Lemma 4 with equality and min_x k_x = 0, the
    two slack steps of the proof (Appendix E), so Γ_max(K) = (1 − c)/((N − 1)c) = (1 − Nc)e^ε + 1.
    For N = 2 it is the swap kernel at ε = −log c. Domain: N ≥ 2, 0 < c < 1/N. Returns (ε, K)."""
    _check_eps_c_n(0.0, c, n)
    if not 0 < c < 1 / n:
        raise ValueError(f"need 0 < c < 1/N, found {c!r}")
    eps = -math.log((n - 1) * c)
    big = 1 - (n - 2) * c / (1 - c)
    return eps, [[0.0, 1.0]] + [[big, 1 - big] for _ in range(n - 1)]


def example3_minimax_lower_bound_as_printed(epsilon: float, c: float, delta: float, n_samples: int) -> float:
    """Example 3 as the paper prints it: R* ≥ ½ exp(−n Ξ(ε, c) log((1 − 4c)e^ε + 1) δ).

    The paper's own Le Cam step gives something smaller, which is what
    :func:`mechdesign.theory.bounds.example3_minimax_lower_bound` returns: (i) TV(P_θ0, P_θ1) =
    ½(2δ + 2δ) = 2δ, not δ, so Corollary 1 gives D ≤ Ξ log(·)·2δ per sample; (ii) Le Cam's two-point
    method R* ≥ (l/2)(1 − TV) with Bretagnolle–Huber 1 − TV ≥ ½ e^{−D} gives the factor l/4 (l = δ the
    separation), not ½. The printed value is therefore not implied by the derivation (it is larger);
    the rate n = Ω(1/(Ξ δ)) is unaffected. Domain: as the code's version."""
    if not (isinstance(n_samples, int) and n_samples >= 0 and 0 < delta < 0.25):
        raise ValueError(f"need n >= 0 and delta in (0, 1/4), found {n_samples!r}, {delta!r}")
    _check_eps_c_n(epsilon, c, 4)
    return 0.5 * math.exp(-n_samples * xi(epsilon, c, 4) * _log_g(epsilon, c, 4) * delta)
