"""Dobrushin paper: equality cases of Proposition 2 and Corollaries 1–2, Remark 2 at odd N, the Figure 1(a)
comparison bound, and Example 3 as printed versus its own Le Cam step.

Expected values are closed forms derived in the comments (no values from our own code), mpmath, or
the paper's printed formulas.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from mechdesign.spec.models import MinMass
from mechdesign.theory import bounds as b
from mechdesign.theory import dobrushin as dp
from mechdesign.theory import measures


def _swap_case(c):
    # N = 2, eps = -log c, K = swap, P = (c, 1 - c), Q = (1 - c, c): KP = (1 - c, c), KQ = (c, 1 - c),
    # likelihood ratios G = (1 - c)/c and 1/G, TV(P, Q) = 1 - 2c, Xi(-log c, c) = 1.
    return -math.log(c), np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([c, 1 - c]), np.array([1 - c, c])


@pytest.mark.parametrize("c", [0.05, 0.1, 0.3])
def test_corollary1_equality_for_the_swap_kernel(c):
    eps, K, P, Q = _swap_case(c)
    tv = 1 - 2 * c
    kl = measures.kl_divergence(P @ K, Q @ K)
    # closed form: D = (1 - 2c) log((1 - c)/c)
    assert kl == pytest.approx((1 - 2 * c) * math.log((1 - c) / c), rel=1e-12)
    assert b.corollary1_kl_bound(eps, c, 2, tv) == pytest.approx(kl, rel=1e-12)


@pytest.mark.parametrize("c", [0.05, 0.1, 0.3])
def test_corollary2_equality_for_the_swap_kernel(c):
    eps, K, P, Q = _swap_case(c)
    h2 = measures.hellinger_squared(P @ K, Q @ K)
    # closed form: H² = 2(√(1-c) − √c)²
    assert h2 == pytest.approx(2 * (math.sqrt(1 - c) - math.sqrt(c)) ** 2, rel=1e-12)
    assert b.corollary2_hellinger_bound(eps, c, 2, 1 - 2 * c) == pytest.approx(h2, rel=1e-12)


@pytest.mark.parametrize("n, c", [(2, 0.1), (3, 0.1), (5, 0.05), (10, 0.02)])
def test_proposition2_equality(n, c):
    eps, K = dp.proposition2_extremal_kernel(c, n)
    ps = MinMass(kind="min_mass", c=c)
    # K is (eps, c)-PML (exact leakage capacity over Q_X(c)) ...
    assert measures.leakage_capacity(K, ps) <= eps + 1e-12
    # ... and Γ_max = (1 - c)/((N - 1)c), derived in the docstring, equals the bound (1 - Nc)e^eps + 1
    gmax, gmin = measures.gamma_extremes(K, ps)
    assert gmax == pytest.approx((1 - c) / ((n - 1) * c), rel=1e-12)
    g, ginv = b.proposition2_gamma_bounds(eps, c, n)
    assert gmax == pytest.approx(g, rel=1e-12) and gmin == pytest.approx(ginv, rel=1e-12)


def test_remark2_odd_n_no_two_level_column_yet_lp_reaches_xi():
    n, c, eps = 3, 0.2, 1.1
    assert eps < math.log(2 / (n * c))  # Theorem 3 regime
    for q in (1, 2):  # e^eps c max(q, N - q) = 1.20 > 1 for both
        with pytest.raises(ValueError, match="Remark 2"):
            b.remark2_column(eps, c, n, q)
    from mechdesign.design import design

    r = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "min_mass", "c": c},
            "objective": {"kind": "dobrushin"},
            "output_size": 2,
        }
    )
    expected = (math.exp(eps) - 1) / (math.exp(eps) * (1 - n * c) + 1)  # Theorem 1, Ξ(1.1, 0.2) = 0.91030
    assert r.is_ok and r.objective == pytest.approx(expected, abs=1e-9)
    levels = np.unique(np.round(np.asarray(r.kernel)[:, 0], 9))
    assert len(levels) == 3


def test_asoodeh_zhang_comparison_bound_figure1a():
    # tanh²(log(15)/2) = (14/16)², log(1 + 2·0.5²/0.05) = log 11 (closed forms)
    assert dp.asoodeh_zhang_kl_bound(math.log(15), 0.05, 0.5) == pytest.approx((14 / 16) ** 2 * math.log(11), rel=1e-12)
    # it bounds D(K1 P ‖ K1 Q) for sampled P, Q in Q_X(0.05) (K1 of Example 2 is log(15)-LDP)
    rng = np.random.default_rng(0)
    K1 = np.array([[15 / 16, 1 / 16]] * 5 + [[1 / 16, 15 / 16]] * 5)
    for _ in range(300):
        P, Q = (0.05 + 0.5 * rng.dirichlet(np.ones(10) * 0.3) for _ in range(2))
        tv = 0.5 * np.abs(P - Q).sum()
        assert measures.kl_divergence(P @ K1, Q @ K1) <= dp.asoodeh_zhang_kl_bound(math.log(15), 0.05, tv) + 1e-12


def test_reverse_pinsker_kl_holds():
    rng = np.random.default_rng(1)
    for _ in range(300):
        P, Q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        assert measures.kl_divergence(P, Q) <= dp.reverse_pinsker_kl(0.5 * np.abs(P - Q).sum(), Q.min()) + 1e-12


def test_example3_printed_value_and_le_cam_step():
    """Example 3, ε = 1, c = 0.1, δ = 0.1, n = 50. Printed: R* ≥ ½ exp(−n Ξ log((1 − 4c)e^ε + 1) δ).
    The paper's own steps: TV(P_θ0, P_θ1) = 2δ (the vectors differ by ±δ in two places), Corollary 1,
    tensorisation, Le Cam R* ≥ (δ/2)(1 − TV) and Bretagnolle–Huber 1 − TV ≥ ½e^{−D}: (δ/4) exp(−n Ξ log(·) 2δ).
    Both recomputed here in mpmath from the printed formulas; the code returns the second."""
    mp.mp.dps = 30
    eps, c, delta, n = 1, mp.mpf("0.1"), mp.mpf("0.1"), 50
    Xi = (mp.e**eps - 1) / (mp.e**eps * (1 - 4 * c) + 1)
    L = mp.log((1 - 4 * c) * mp.e**eps + 1)
    printed = mp.mpf(1) / 2 * mp.exp(-n * Xi * L * delta)
    le_cam = delta / 4 * mp.exp(-n * Xi * L * 2 * delta)
    assert dp.example3_minimax_lower_bound_as_printed(1.0, 0.1, 0.1, 50) == pytest.approx(float(printed), rel=1e-12)
    assert b.example3_minimax_lower_bound(1.0, 0.1, 0.1, 50) == pytest.approx(float(le_cam), rel=1e-12)
    assert float(printed) > float(le_cam)  # the printed constant is not implied by the derivation
    # TV(P_θ0, P_θ1) = 2δ, the step the printed formula misses
    P0 = np.array([0.25 - 0.1, 0.25 + 0.1, 0.25, 0.25])
    P1 = np.array([0.25 + 0.1, 0.25 - 0.1, 0.25, 0.25])
    assert measures.total_variation(P0, P1) == pytest.approx(0.2, rel=1e-12)
