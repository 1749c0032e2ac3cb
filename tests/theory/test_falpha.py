"""f_α paper (Grosse et al., *Bounds on the Privacy Amplification of Arbitrary Channels via the Contraction
of f_α-Divergence*): η_α of a kernel (eqs. 8–10) with Proposition 3, Remark 7, Remark 9's tight bound
ψ_α(p*, t) (eqs. 63–67), and Example 12 / Figure 2.

Expected values: closed forms printed in the paper (Remark 9's equality cases, eqs. 61–62), mpmath
minimisation of eq. 65 written here, and the data-processing inequality.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from mechdesign.theory import bounds as b
from mechdesign.theory import falpha as f
from mechdesign.theory import measures


# ------------------------------------------------------------------ η_α (eqs. 8–10), Proposition 3
def test_eta_alpha_proposition3_and_dpi():
    Q = f.example12_channel_q(4)  # eq. (19)'s Q is 2-singular: disjoint supports
    P = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]]) / 3  # eq. (19)'s P: complete graph
    assert f.eta_alpha(Q, 2.0) == 1.0
    # Proposition 3's mechanism: priors on the two blocks, concentrated → ratio → 1 (independent check)
    ratios = []
    for eta in (1e-3, 1e-6, 1e-9, 1e-12):
        P1 = np.array([1 - 3 * eta, eta, eta, eta])
        P2 = np.array([eta, eta, 1 - 3 * eta, eta])
        ratios.append(f.contraction_ratio_alpha(Q, P1, P2, 2.0))
    assert all(a < b_ for a, b_ in zip(ratios, ratios[1:])) and 0.97 < ratios[-1] <= 1
    low = f.eta_alpha(P, 2.0, restarts=5)
    assert 0 < low <= 1
    # DPI: every ratio on a finite prior set is <= 1
    rng = np.random.default_rng(0)
    priors = [rng.dirichlet(np.ones(4)) for _ in range(8)]
    for alpha in (1.5, 2.0, 5.0):
        assert 0 < f.eta_alpha(P, alpha, priors) <= 1 + 1e-12


def test_eta_alpha_at_is_the_max_ratio_over_the_set():
    rng = np.random.default_rng(1)
    K = rng.dirichlet(np.ones(3), size=3)
    P = rng.dirichlet(np.ones(3))
    priors = [rng.dirichlet(np.ones(3)) for _ in range(5)]
    ratios = []
    for Q in priors:  # definition (9) written out with scipy-free sums
        num = math.log(np.sum((P @ K) ** 2 / (Q @ K)))  # D_2 = log Σ p²/q
        den = math.log(np.sum(P**2 / Q))
        ratios.append(num / den)
    assert f.eta_alpha_at(K, P, priors, 2.0) == pytest.approx(max(ratios), rel=1e-12)


# ------------------------------------------------------------------ Remark 7
def test_remark7_limit_is_log_gamma_max():
    P, Q = np.array([0.2, 0.5, 0.3]), np.array([0.4, 0.4, 0.2])
    gmax = max(np.max(P / Q), np.max(Q / P))
    gmin = 1 / gmax
    tv = measures.total_variation(P, Q)
    for alpha in (1.5, 2, 4, 10):  # eq. (35) bounds D_α(Q‖P)
        assert measures.renyi_divergence(Q, P, alpha) <= f.renyi_bound_theorem6(tv, gmax, gmin, alpha) + 1e-12
    # eqs. (36)-(37): → log Γ_max (the bound converges like O(log(Δ)/α))
    assert f.renyi_bound_theorem6(tv, gmax, gmin, 1e6) == pytest.approx(math.log(gmax), rel=1e-4)


# ------------------------------------------------------------------ Remark 9 (eqs. 63–67)
def _tight_ref(t, alpha):
    """min_p ψ_α(p, t) in mpmath: golden-section search on the convex ψ (eq. 67), 50 digits."""
    mp.mp.dps = 50
    t, a = mp.mpf(t), mp.mpf(alpha)
    psi = lambda p: p**a / (p + t) ** (a - 1) + (1 - p) ** a / (1 - p - t) ** (a - 1) - 1
    lo, hi = mp.mpf(0), 1 - t - mp.mpf(10) ** -40
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(250):
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if psi(x1) < psi(x2):
            hi = x2
        else:
            lo = x1
    return min(psi((lo + hi) / 2), psi(mp.mpf(0)))


@pytest.mark.parametrize("t, alpha", [(0.05, 4.0), (0.1, 4.0), (0.2, 4.0), (0.1, 1.5), (0.3, 3.0), (0.02, 10.0)])
def test_tight_pinsker_matches_mpmath_minimisation(t, alpha):
    assert f.tight_pinsker_f_alpha(t, alpha) == pytest.approx(float(_tight_ref(t, alpha)), rel=1e-9)
    assert f.tight_pinsker_f_alpha(t, alpha) >= b.g_alpha(t, alpha) * (1 - 1e-12)  # Theorem 8


@pytest.mark.parametrize("alpha", [1.5, 3.0, 4.0, 8.0])
def test_remark9_equality_for_t_at_least_one_over_alpha(alpha):
    # Remark 9: P = [0, 1], Q = [t, 1 - t] realises g_α(t) = (1 - t)^{1-α} - 1 for t >= 1/α
    for t in (1 / alpha, 0.5 * (1 / alpha + 1), 0.95):
        assert f.psi_alpha_minimiser(t, alpha) == 0.0
        assert f.tight_pinsker_f_alpha(t, alpha) == pytest.approx((1 - t) ** (1 - alpha) - 1, rel=1e-12)
        assert f.binary_f_alpha(0.0, t, alpha) == pytest.approx(b.g_alpha(t, alpha), rel=1e-12)


def test_remark9_alpha2_is_tight_everywhere():
    # at α = 2, g_2(t) = 4t² for t < 1/2 is the χ²–TV joint-range bound, attained (Remark 9)
    for t in (0.01, 0.1, 0.25, 0.45):
        assert f.tight_pinsker_f_alpha(t, 2.0) == pytest.approx(4 * t * t, rel=1e-9)


def test_binary_f_alpha_is_the_f_alpha_divergence():
    for p, q, a in ((0.3, 0.6, 2.5), (0.9, 0.2, 4.0)):
        assert f.binary_f_alpha(p, q, a) == pytest.approx(
            measures.f_alpha_divergence([p, 1 - p], [q, 1 - q], a), rel=1e-12
        )


# ------------------------------------------------------------------ Example 12 / Figure 2
PANELS = [(5, math.log(2), "P"), (5, math.log(6), "P"), (20, math.log(10), "P"), (100, math.log(10), "Q")]


@pytest.mark.parametrize("n, eps, channel", PANELS)
def test_example12_gamma_and_bound_dominates_the_composition(n, eps, channel):
    alphas = [1.5, 2.0, 4.0, 10.0, 30.0]
    d = f.example12_curves(n, eps, channel, alphas)
    # eqs. (61)-(62), printed
    expected = (math.exp(eps) + 1) / 2 if channel == "P" else (n + 2 * math.exp(eps) - 2) / n
    assert d["gamma_max"] == pytest.approx(expected, rel=1e-12)
    assert d["gamma_min"] == pytest.approx(1 / expected, rel=1e-12)
    # φ is an upper bound on the true RLDP of the composition; the mechanism's RLDP is one too (DPI)
    assert np.all(d["composition"] <= d["bound"] + 1e-12)
    assert np.all(d["composition"] <= d["mechanism"] + 1e-12)
    # the mechanism's RLDP of randomized response at α (closed form): D_α between rows w ≠ w'
    a = 2.0
    ee, m = math.exp(eps), n + math.exp(eps) - 1
    p_hi, p_lo = ee / m, 1 / m
    closed = math.log(p_hi**a * p_lo ** (1 - a) + p_lo**a * p_hi ** (1 - a) + (n - 2) * p_lo) / (a - 1)
    assert d["mechanism"][1] == pytest.approx(closed, rel=1e-12)
