"""Closed forms (mechdesign.theory.bounds): printed values, limits, domains, and that each bound holds."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from mechdesign import bounds as b
from mechdesign import design
from mechdesign import measures as m
from mechdesign.spec.models import MinMass, Point

SETTINGS = settings(max_examples=40, deadline=None)


def test_xi_limits_and_regimes():
    # eq. (4) at c = 0, Remark 1 at c = 1/N (e^eps - 1, capped at 1), Theorem 2 above log(2/(Nc))
    assert b.xi(1.0, 0.0, 5) == pytest.approx(math.tanh(0.5))
    assert b.xi(0.3, 0.25, 4) == pytest.approx(math.expm1(0.3))
    assert b.xi(math.log(2 / (4 * 0.1)), 0.1, 4) == 1.0
    assert "Theorem 2" in b.xi_regime(math.log(2 / (4 * 0.1)), 0.1, 4)
    assert "Theorem 3" in b.xi_regime(0.5, 0.1, 4)


@pytest.mark.parametrize("n,c,eps", [(2, 0.1, 0.7), (5, 0.05, 1.0), (6, 0.1, math.log(10 / 3))])
def test_remark2_kernels_attain_xi_and_are_tight(n, c, eps):
    # Dobrushin paper Remark 2 / Theorem 3: eta_TV(K_q) = Xi and K_q is (eps, c)-PML with equality
    for q in range(1, n):
        if math.exp(eps) * c * max(q, n - q) > 1 + 1e-12:  # outside Remark 2's domain (M > 1 or m < 0)
            with pytest.raises(ValueError, match="Remark 2"):
                b.remark2_kernel(eps, c, n, q)
            continue
        K = np.array(b.remark2_kernel(eps, c, n, q))
        assert m.dobrushin(K) == pytest.approx(b.xi(eps, c, n), rel=1e-12)
        assert m.leakage_capacity(K, MinMass(kind="min_mass", c=F(repr(c)))) == pytest.approx(eps, rel=1e-9)
    if n == 2:
        assert np.allclose(b.example1_kernel(eps, c), b.remark2_kernel(eps, c, 2, 1), rtol=0, atol=1e-15)


def test_lemma1_on_example2_kernels():
    # Dobrushin paper Example 2: K2 (N = 5, c = 0.1, log 10/3) has 2 zeros per column; Lemma 1 allows 2 (tie).
    assert b.lemma1_max_zeros(math.log(10 / 3), 0.1, 5) == 2
    assert b.lemma1_max_zeros(math.log(10 / 3) - 1e-3, 0.1, 5) == 1
    assert b.lemma1_max_zeros(1.0, 0.0, 5) == 0


# --------------------------------------------------------------- random kernels
@st.composite
def kernel_and_c(draw, zeros=True):
    n = draw(st.integers(2, 4))
    mm = draw(st.integers(2, 4))
    rows = [
        draw(st.lists(st.integers(0 if zeros else 1, 6), min_size=mm, max_size=mm).filter(lambda r: sum(r) > 0))
        for _ in range(n)
    ]
    K = [[F(v, sum(r)) for v in r] for r in rows]
    c = F(draw(st.integers(1, 20)), 20 * n)  # c in (0, 1/N]
    return K, c


def _random_pair(rng, n, c):
    """Two priors in Q_X(c)."""
    return [c + (1 - n * c) * rng.dirichlet(np.ones(n) * 0.5) for _ in range(2)]


@SETTINGS
@given(kernel_and_c(), st.integers(0, 2**31))
def test_dobrushin_paper_bounds_hold_at_the_kernels_own_epsilon(Kc, seed):
    K, c = Kc
    n = len(K)
    ps = MinMass(kind="min_mass", c=c)
    eps = m.leakage_capacity(K, ps)  # K is (eps, c)-PML for this eps and no smaller
    Kf = np.array(K, float)
    cf = float(c)
    assert m.dobrushin(Kf) <= b.xi(eps, cf, n) + 1e-12  # Theorem 1
    assert m.zeros_per_column(Kf) <= b.lemma1_max_zeros(eps, cf, n)  # Lemma 1
    gmax, gmin = m.gamma_extremes(K, ps)
    if eps <= -math.log(cf):
        up, low = b.proposition2_gamma_bounds(eps, cf, n)  # Proposition 2
        assert gmax <= up * (1 + 1e-12) and gmin >= low * (1 - 1e-12)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        P, Q = _random_pair(rng, n, cf)
        tv = m.total_variation(P, Q)
        PY, QY = P @ Kf, Q @ Kf
        assert m.kl_divergence(PY, QY) <= b.corollary1_kl_bound(eps, cf, n, tv) * (1 + 1e-9) + 1e-12
        assert m.hellinger_squared(PY, QY) <= b.corollary2_hellinger_bound(eps, cf, n, tv) * (1 + 1e-9) + 1e-12
        # eq. (8) with the kernel's own Gamma and eta, any f (here chi^2 and f_alpha with alpha = 3)
        for f in ("chi2", lambda t: t**3 - 1):
            val = m.chi_squared(PY, QY) if f == "chi2" else m.f_alpha_divergence(PY, QY, 3)
            assert val <= b.binette_bound(f, gmax, gmin, tv, m.dobrushin(Kf)) * (1 + 1e-9) + 1e-12


@SETTINGS
@given(kernel_and_c(zeros=False), st.integers(0, 2**31))
def test_duchi_bound_holds_for_ldp_kernels(Kc, seed):
    K, _ = Kc
    eps = m.ldp(K)
    Kf = np.array(K, float)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        P, Q = rng.dirichlet(np.ones(len(K)) * 0.5, size=2)
        assert m.kl_divergence(P @ Kf, Q @ Kf) <= b.duchi_kl_bound(eps, m.total_variation(P, Q)) * (1 + 1e-9) + 1e-12


def test_corollaries_on_kernels_designed_by_design():
    # Corollaries 1 and 2 on (eps, c)-PML kernels that design() emits (Dobrushin and expected-loss objectives)
    rng = np.random.default_rng(7)
    specs = [
        {
            "alphabet": 4,
            "epsilon": "log(3)",
            "prior_set": {"kind": "min_mass", "c": 0.1},
            "objective": {"kind": "dobrushin"},
        },
        {
            "alphabet": 3,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": 0.2},
            "objective": {
                "kind": "expected_loss",
                "loss": rng.random((3, 3)).round(3).tolist(),
                "prior": [0.2, 0.3, 0.5],
            },
            "output_size": 3,
        },
    ]
    for spec in specs:
        r = design(spec)
        assert r.certificate.feasible
        assert r.certificate.bounds and all(e["holds"] for e in r.certificate.bounds)
        n, c, eps = spec["alphabet"], spec["prior_set"]["c"], r.epsilon
        for _ in range(20):
            P, Q = _random_pair(rng, n, c)
            tv = m.total_variation(P, Q)
            assert m.kl_divergence(P @ r.kernel, Q @ r.kernel) <= b.corollary1_kl_bound(eps, c, n, tv) + 1e-12
            assert (
                m.hellinger_squared(P @ r.kernel, Q @ r.kernel) <= b.corollary2_hellinger_bound(eps, c, n, tv) + 1e-12
            )


def test_example3_minimax_and_sample_size():
    eps, c, delta = 1.0, 0.05, 0.1
    assert b.example3_minimax_lower_bound(eps, c, delta, 0, separation=1.0) == pytest.approx(0.25)
    n = b.example3_sample_size(eps, c, delta, 0.01, separation=1.0)
    assert b.example3_minimax_lower_bound(eps, c, delta, n, separation=1.0) <= 0.01
    assert b.example3_minimax_lower_bound(eps, c, delta, n - 1, separation=1.0) > 0.01
    # n = Omega(1/(Xi delta)): halving delta (about) doubles the sample size
    assert b.example3_sample_size(eps, c, delta / 2, 0.01, separation=1.0) == pytest.approx(2 * n, rel=0.01)
    assert b.example3_sample_size(0.0, c, delta, 0.01, separation=1.0) == math.inf


# ------------------------------------------------------------------ f_alpha paper
@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5).flatmap(lambda k: st.tuples(*[st.lists(st.integers(1, 9), min_size=k, max_size=k)] * 2)),
    st.sampled_from([1.2, 1.5, 2.0, 3.0, 6.0]),
)
def test_r_alpha_and_g_alpha_sandwich_f_alpha(pq, alpha):
    p = np.array(pq[0], float) / sum(pq[0])
    q = np.array(pq[1], float) / sum(pq[1])
    d = m.f_alpha_divergence(p, q, alpha)
    tv = m.total_variation(p, q)
    ratio = p / q
    assert d <= tv * b.r_alpha(ratio.max(), ratio.min(), alpha) * (1 + 1e-9) + 1e-12  # Theorem 6
    assert d >= b.g_alpha(tv, alpha) * (1 - 1e-9) - 1e-12  # Theorem 8
    assert tv <= b.g_alpha_inverse(d, alpha) * (1 + 1e-9) + 1e-12  # Remark 10


@pytest.mark.parametrize("alpha", [1.3, 2.0, 4.0])
def test_r_alpha_is_the_integral_34_and_g_alpha_is_tight(alpha):
    u, v = 3.0, 0.4
    # eq. 34 with Delta = 1: alpha(alpha-1) int g(gamma) gamma^(alpha-2), g the piecewise-linear tent
    tent = lambda g: (g - v) / (1 - v) if g <= 1 else (u - g) / (u - 1)
    val, _ = integrate.quad(lambda g: alpha * (alpha - 1) * tent(g) * g ** (alpha - 2), v, u, points=[1.0])
    assert b.r_alpha(u, v, alpha) == pytest.approx(val, rel=1e-9)
    # Remark 9: P = [0, 1], Q = [t, 1 - t] attains g_alpha(t) for t >= 1/alpha
    t = 0.5 * (1 / alpha + 1)
    assert b.g_alpha(t, alpha) == pytest.approx(m.f_alpha_divergence([0, 1], [t, 1 - t], alpha))


@pytest.mark.parametrize("alpha", [1.3, 1.9, 2.0, 3.5])
def test_g_alpha_inverse_is_the_generalised_inverse(alpha):
    ts = np.linspace(0, 1, 4001)[:-1]
    gs = np.array([b.g_alpha(t, alpha) for t in ts])
    for s in [0.0, 0.01, 0.1, 0.3, 0.6, 1.0, 5.0]:
        brute = ts[gs <= s].max()  # grid sup{t : g(t) <= s}
        assert brute - 1e-12 <= b.g_alpha_inverse(s, alpha) <= brute + 1 / 4000 + 1e-12


@SETTINGS
@given(st.integers(3, 5), st.floats(0.3, 2.5), st.sampled_from([1.5, 2.0, 4.0]), st.integers(0, 2**31))
def test_rldp_amplification_bound_holds(n, eps, alpha, seed):
    # f_alpha paper eqs. 53-57: RLDP of channel o mechanism <= phi(eps_f, alpha), mechanism = n-ary RR
    rng = np.random.default_rng(seed)
    mech = b.krr_kernel(n, eps)
    chan = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    chan[np.arange(n), rng.integers(0, n, n)] += 0.1
    chan /= chan.sum(axis=1, keepdims=True)
    eps_f = max(m.f_alpha_divergence(mech[i], mech[j], alpha) for i in range(n) for j in range(n) if i != j)
    gmax, gmin = m.gamma_extremes(chan, mech.tolist())
    phi = b.rldp_amplification_bound(eps_f, alpha, gmax, gmin, m.dobrushin(chan))
    assert m.renyi_ldp(mech @ chan, alpha) <= phi * (1 + 1e-9) + 1e-12


# ---------------------------------------------------------------- envelopes paper
@SETTINGS
@given(st.integers(2, 4), st.integers(0, 2**31), st.integers(1, 19))
def test_theorem3_upper_bound_dominates_post_processings(n, seed, d20):
    rng = np.random.default_rng(seed)
    K = rng.random((n, 4)) * (rng.random((n, 4)) < 0.7) + 1e-3
    K /= K.sum(axis=1, keepdims=True)
    prior = rng.dirichlet(np.ones(n)) * 0.9 + 0.1 / n
    prior = (prior / prior.sum()).tolist()
    delta = d20 / 20
    up = b.envelope_upper_bound(m.max_leakage(K), float(np.nanmax(m.pml(K, prior))), delta)
    low, up2 = b.envelope_bounds(K, prior, delta)
    assert low <= up + 1e-9 and up2 == pytest.approx(up)
    for _ in range(5):  # random post-processings Z with 3 outputs
        W = rng.random((4, 3))
        W /= W.sum(axis=1, keepdims=True)
        assert m.leakage_upper_quantile(K @ W, prior, delta) <= up + 1e-9


@pytest.mark.parametrize("prior", [[0.25] * 4, [0.1, 0.1, 0.2, 0.3, 0.3]])
def test_theorem4_pml_extremal_mechanism(prior):
    eps = 0.8 * -math.log(1 - min(prior))
    K = b.pml_extremal_kernel(prior, eps)
    assert np.allclose(K.sum(axis=1), 1) and (K >= 0).all()
    assert m.pml(K, prior) == pytest.approx([eps] * len(prior), rel=1e-9)  # every output leaks eps
    for delta in (0.01, 0.3, 0.9):  # Theorem 4: the envelope is eps for every delta
        low, up = b.envelope_bounds(K, prior, delta)
        assert low == pytest.approx(eps, rel=1e-9) and up == pytest.approx(eps, rel=1e-9)
        assert b.pml_extremal_envelope(prior, eps, delta) == eps
    with pytest.raises(ValueError, match="Theorem 4"):
        b.pml_extremal_kernel(prior, 1.01 * -math.log(1 - min(prior)))


def _krr_constructed_lower(prior, eps_r, delta):
    """eps-bar of the post-processings W and Z built in the proof of Theorem 5(iii) (prior sorted),
    computed directly with measures.leakage_upper_quantile: an independent check of h_delta(theta)."""
    p = np.sort(np.array(prior, float))
    k = p.size
    K = b.krr_kernel(k, eps_r)
    a, bb = K[0, 0], K[0, 1]
    q = bb + (a - bb) * p
    cum = np.cumsum(q)
    N = int(np.searchsorted(cum, delta)) + 1  # 1-based, cum[N-2] < delta <= cum[N-1]
    theta = (delta - cum[N - 2]) / q[N - 1]
    # W: outputs 1..N-1 kept, output N kept with probability theta, the rest lumped
    W = np.zeros((k, N + 1))
    for j in range(k):
        if j < N - 1:
            W[j, j] = 1
        elif j == N - 1:
            W[j, N - 1], W[j, N] = theta, 1 - theta
        else:
            W[j, N] = 1
    d_eval = delta * (1 - 1e-9)  # the event [N] has probability delta up to float rounding
    best = m.leakage_upper_quantile(K @ W, p.tolist(), d_eval)
    # Z: output N split with weights eta (first regime: scaled eta*, second: eta(tau))
    t1 = a * ((N - 2) * q[N - 2] - q[: N - 2].sum()) / (a * q[N - 1] - bb * q[N - 2])
    if theta <= t1:
        eta = a * (q[N - 2] - q[: N - 1]) / (a * q[N - 1] - bb * q[N - 2]) * theta / t1
    else:
        tau = ((N - 1) * a + theta * bb) / delta
        eta = np.clip((a - tau * q[: N - 1]) / (tau * q[N - 1] - bb), 0, None)
    if eta.sum() <= theta + 1e-9:
        Z = np.zeros((k, N))
        for j in range(k):
            if j < N - 1:
                Z[j, j] = 1
            elif j == N - 1:
                Z[j, : N - 1], Z[j, N - 1] = eta, max(0.0, 1 - eta.sum())
            else:
                Z[j, N - 1] = 1
        best = max(best, m.leakage_upper_quantile(K @ Z, p.tolist(), d_eval))
    return best


@pytest.mark.parametrize("prior", [[0.1, 0.1, 0.2, 0.3, 0.3], [0.2, 0.25, 0.25, 0.3]])
@pytest.mark.parametrize("eps_r", [0.5, 1.0])
def test_theorem5_krr_envelope_bounds(prior, eps_r):
    k = len(prior)
    K = b.krr_kernel(k, eps_r)
    q1 = (K[0, 1] + (K[0, 0] - K[0, 1]) * np.array(prior)).min()
    # (i): for delta <= q_1 the envelope is log(alpha/q_1), which eps-bar_Y already attains
    exact = b.krr_envelope_exact(prior, eps_r, 0.5 * q1)
    assert m.leakage_upper_quantile(K, prior, 0.5 * q1) == pytest.approx(exact)
    assert m.max_leakage(K) == pytest.approx(math.log(k * K[0, 0]))  # (ii): L = log(k alpha)
    for delta in np.linspace(q1 * 1.05, 0.95, 9):
        up = b.krr_envelope_upper_bound(prior, eps_r, delta)
        try:
            low = b.krr_envelope_lower_bound(prior, eps_r, delta)
        except ValueError:
            continue  # outside Theorem 5(iii)'s condition on the prior
        assert low <= up + 1e-12
        assert b.envelope_bounds(K, prior, delta)[1] >= low - 1e-12
        # the lower bound is attained by the explicit post-processings of the proof (W and Z)
        assert _krr_constructed_lower(prior, eps_r, delta) >= low - 1e-9


def test_domains_raise_clear_errors():
    with pytest.raises(ValueError, match="c must lie"):
        b.xi(1.0, 0.6, 2)
    with pytest.raises(ValueError, match="Proposition 2"):
        b.proposition2_gamma_bounds(3.0, 0.1, 4)
    with pytest.raises(ValueError, match="alpha"):
        b.g_alpha(0.1, 1.0)
    with pytest.raises(ValueError, match="delta"):
        b.envelope_upper_bound(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="Example 3"):
        b.example3_minimax_lower_bound(1.0, 0.1, 0.3, 10)
    with pytest.raises(ValueError, match="gamma"):
        b.binette_bound("kl", 0.5, 0.2, 0.1)
    with pytest.raises(ValueError, match="Remark 2"):
        b.remark2_column(3.0, 0.2, 4, 3)


def test_applicable_bounds_for_point_prior():
    prior = Point(kind="point", prior=["0.1", "0.2", "0.3", "0.4"])
    K = b.pml_extremal_kernel([0.1, 0.2, 0.3, 0.4], 0.05)
    names = [e["name"] for e in b.bounds_for(prior, 0.05, K)]
    assert any("Proposition 7" in s for s in names) and any("Corollary 8" in s for s in names)
    assert all(e["holds"] for e in b.bounds_for(prior, 0.05, K))
