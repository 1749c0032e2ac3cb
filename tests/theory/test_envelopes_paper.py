"""Envelopes paper (*Information Leakage Envelopes*): privacy profile (eqs. 3–4), Definition 3 with
Example 1, ψ₁/ψ₂ and Theorem 1 (printed values 13/180, 2/27, 0.05, 13/90), δ_c(ε) of eq. (8), the
four-level prior, the k-RR (ε, δ)-LDP curve of Figure 2, and Figure 1's quantiles (printed log(10/9), log 4).

Expected values: the paper's printed numbers, closed forms derived in comments, and brute force over
all events E ⊆ Y (eq. 3's max form) written here.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from mechdesign.theory import bounds, measures
from mechdesign.theory import envelopes as e

U4 = [Fraction(1, 4)] * 4


def _brute_profile(K, eps):
    K = np.asarray(K, float)
    n, m = K.shape
    best = 0.0
    for x, xp in itertools.permutations(range(n), 2):
        for r in range(m + 1):
            for E in itertools.combinations(range(m), r):
                E = list(E)
                best = max(best, K[x, E].sum() - math.exp(eps) * K[xp, E].sum())
    return best


def test_privacy_profile_is_the_max_over_events_and_bounds_failure_probability():
    rng = np.random.default_rng(0)
    for _ in range(30):
        K = rng.dirichlet(np.ones(4), size=3)
        for eps in (0.1, 0.5, 1.0):
            d = e.privacy_profile(K, eps)
            assert d == pytest.approx(_brute_profile(K, eps), abs=1e-12)
            assert d <= e.dp_failure_probability(K, eps) + 1e-12  # "δ merely lower bounds" (§II-B)
            # eq. (4): (ε, δ*)-DP gives the tail bound at kε
            for k in (2, 3):
                assert e.dp_failure_probability(K, k * eps) <= e.adp_tail_bound(d, eps, k) + 1e-12


def test_example1_probabilistic_dp_not_closed_under_post_processing():
    eps, delta = 1.0, 0.05
    K = e.example1_kernel(eps, delta)
    assert e.is_probabilistic_dp(K, eps, delta)  # bad sets {1} and {4} have probability δ (printed)
    Z = K @ e.example1_post_processing()
    # printed: P_{Z|X=0}(⊥) = δ + e^ε/(1+e^ε)(1−δ) > e^ε P_{Z|X=1}(⊥), so the guarantee fails
    assert Z[0, 0] == pytest.approx(delta + math.exp(eps) / (1 + math.exp(eps)) * (1 - delta), rel=1e-12)
    assert not e.is_probabilistic_dp(Z, eps, delta)


def _z_kernel():
    K = np.array(e.example2_kernel(), dtype=object)
    return (K.dot(np.array(e.example2_post_processing(), dtype=object))).tolist()


def test_theorem1_i_printed_values_psi1_increases():
    eps = math.log(10 / 9)
    assert e.psi1(e.example2_kernel(), U4, eps) == pytest.approx(13 / 180, rel=1e-12)  # printed
    assert e.psi1(_z_kernel(), U4, eps) == pytest.approx(2 / 27, rel=1e-12)  # printed
    assert 13 / 180 < 2 / 27


def test_psi2_printed_values_and_failure_probability():
    K = e.example2_kernel()
    assert e.psi2(K, U4, math.log(3)) == pytest.approx(0.05, rel=1e-12)  # printed
    assert e.psi2(K, U4, math.log(10 / 9)) == pytest.approx(13 / 90, rel=1e-12)  # printed
    assert measures.pml_tail_probability(K, U4, math.log(10 / 9)) == pytest.approx(0.1)  # printed
    assert measures.pml_tail_probability(K, U4, math.log(3)) == pytest.approx(0.1)


def test_theorem1_ii_psi2_never_increases_under_post_processing():
    rng = np.random.default_rng(1)
    for _ in range(40):
        K = rng.dirichlet(np.ones(4), size=3)
        p = rng.dirichlet(np.ones(3))
        W = rng.dirichlet(np.ones(3), size=4)
        for eps in (0.05, 0.3, 0.8):
            assert e.psi2(K @ W, p, eps) <= e.psi2(K, p, eps) + 1e-12


def test_delta_c_bounds_example2():
    K = e.example2_kernel()
    lo, up = e.delta_c_bounds(K, U4, math.log(10 / 9))
    # Z = h(Y) of Example 2 is equiprobable with leakage log(6/5) > log(10/9): δ_c ≥ 1/2 (printed values)
    assert lo >= 0.5 and up == 1.0
    lo, up = e.delta_c_bounds(K, U4, 1.0)  # log(10/9) < 1 < log 4: bad set of probability 0.1
    assert 0.1 <= lo <= up <= math.exp(math.log(1.4) - 1.0) + 1e-12  # ℒ = log(0.2 + 0.2 + 0.5 + 0.5)
    assert e.delta_c_bounds(K, U4, math.log(4)) == (0.0, 0.0)


def test_figure1_quantiles_printed():
    # Example 3: ε_Y(0.1) = log(10/9), ε̄_Y(0.1) = log 4 (printed)
    K = e.example2_kernel()
    assert measures.leakage_quantile(K, U4, "0.1") == pytest.approx(math.log(10 / 9), rel=1e-12)
    assert measures.leakage_upper_quantile(K, U4, "0.1") == pytest.approx(math.log(4), rel=1e-12)
    vals, cdf = e.leakage_cdf(K, U4)
    assert np.allclose(vals, [math.log(10 / 9), math.log(4)]) and np.allclose(cdf, [0.9, 1.0])


def test_four_level_prior():
    p = e.four_level_prior(12, 0.1)
    assert p.sum() == pytest.approx(1.0, rel=1e-15)
    assert np.allclose(p[:3], 0.7 / 12) and np.allclose(p[-3:], 1.3 / 12)  # m_0 = 1 − 3ρ, m_3 = 1 + 3ρ


def test_krr_ldp_curve_closed_form():
    k, eps_r = 5, 1.0
    for d in (0.01, 0.1, 0.3):
        eps = e.krr_ldp_epsilon(k, eps_r, d)
        assert _brute_profile(bounds.krr_kernel(k, eps_r), eps) == pytest.approx(d, abs=1e-12) or eps == 0.0
    assert e.krr_ldp_epsilon(k, eps_r, 1e-12) == pytest.approx(eps_r, abs=1e-9)  # δ → 0: ε_r-LDP


@pytest.mark.parametrize("k, prior", [(3, [1 / 3] * 3), (5, [0.1, 0.1, 0.2, 0.3, 0.3]), (12, "four"), (20, "four")])
def test_figure2_panels_lower_below_upper(k, prior):
    if prior == "four":
        prior = e.four_level_prior(k, 0.1)
    d = e.figure2_curves(k, prior, 1.0, np.linspace(0.01, 0.95, 15))
    assert np.all(d["lower"] <= d["upper"] + 1e-12)
    # Theorem 5(i): exact for δ ≤ q_1 = min P_Y
    q1 = min(np.asarray(prior) @ bounds.krr_kernel(k, 1.0))
    assert d["upper"][0] == pytest.approx(d["lower"][0]) if 0.01 <= q1 else True
