"""Numbered results that had no test of their own: Proposition 1 of the Dobrushin paper /
Theorem 2 of the disclosure paper (leakage capacity over all priors = LDP), Proposition 3 of the Dobrushin
paper (deterministic reveal of a subset), Corollary 11 of the f_α paper (SDPI for f_α), and Lemma 3 of the
Dobrushin paper (binary outputs suffice). Expected values: definitions evaluated by brute force here,
closed forms in comments, Theorem 1's Ξ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.spec.models import Simplex
from mechdesign.theory import bounds as b
from mechdesign.theory import measures as m


def test_capacity_over_all_priors_is_ldp_and_is_approached():
    # Proposition 1 (Dobrushin) = Theorem 2 (disclosure, after Issa et al.): sup_P max_y ℓ = LDP(K);
    # the prior putting mass 1 − η on the row with the smallest K_x(y) approaches it.
    rng = np.random.default_rng(0)
    for _ in range(20):
        K = rng.dirichlet(np.ones(3), size=4)
        ldp = max(math.log(K[:, y].max() / K[:, y].min()) for y in range(3))  # eq. (1), brute force
        assert m.leakage_capacity(K, Simplex(kind="simplex")) == pytest.approx(ldp, rel=1e-12)
        y = max(range(3), key=lambda j: K[:, j].max() / K[:, j].min())
        lo = int(np.argmin(K[:, y]))
        eta = 1e-9
        P = np.full(4, eta / 3)
        P[lo] = 1 - eta
        assert np.nanmax(m.pml(K, P)) == pytest.approx(ldp, rel=1e-6)
        assert np.nanmax(m.pml(K, P)) <= ldp + 1e-12


def test_dobrushin_proposition3_deterministic_reveal_needs_large_eps():
    # A kernel that reveals "X ∈ S" deterministically at y = 0 (K_x(0) = 0 off S) has ℓ(X → 0) ≥ −log P(S)
    # (Bayes: the posterior is supported on S), so ε < −log P(S) rules it out.
    rng = np.random.default_rng(1)
    for _ in range(50):
        P = rng.dirichlet(np.ones(5))
        S = rng.random(5) < 0.5
        if not S.any() or S.all():
            continue
        K = rng.dirichlet(np.ones(3), size=5)
        K[~S, 0] = 0
        K /= K.sum(axis=1, keepdims=True)
        assert m.pml(K, P)[0] >= -math.log(P[S].sum()) - 1e-12


def test_falpha_corollary11_sdpi():
    # D_fα(P_Y‖Q_Y) ≤ η_TV(K) R_α(Γ_max(Y), Γ_min(Y)) g_α⁻¹(D_fα(P_X‖Q_X)), Γ over the pair {P_X, Q_X}
    rng = np.random.default_rng(2)
    for _ in range(200):
        K = rng.dirichlet(np.ones(4), size=3)
        P, Q = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        alpha = float(rng.choice([1.5, 2.0, 3.0, 6.0]))
        gmax, gmin = m.gamma_extremes(K, [list(P), list(Q)])
        rhs = (
            m.dobrushin(K) * b.r_alpha(gmax, gmin, alpha) * b.g_alpha_inverse(m.f_alpha_divergence(P, Q, alpha), alpha)
        )
        assert m.f_alpha_divergence(P @ K, Q @ K, alpha) <= rhs * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("m_out", [3, 4])
def test_dobrushin_lemma3_more_outputs_do_not_help(m_out):
    # Lemma 3: binary outputs suffice; the LP with M = 3, 4 reaches the same Ξ(ε, c) (Theorem 1, closed form)
    from mechdesign.design import design

    n, c, eps = 4, 0.1, 0.8
    r = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "min_mass", "c": c},
            "objective": {"kind": "dobrushin"},
            "output_size": m_out,
        }
    )
    assert r.objective == pytest.approx((math.exp(eps) - 1) / (math.exp(eps) * (1 - n * c) + 1), abs=1e-9)
