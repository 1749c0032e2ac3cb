"""Measures of a kernel (mechdesign.theory.measures): the papers' printed examples and brute-force checks."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from mechdesign import bounds as b
from mechdesign import measures as m
from mechdesign.spec.models import Box, MinMass, Point, Simplex

SETTINGS = settings(max_examples=40, deadline=None)

# Dobrushin paper, Example 2 (K1 with the printed 1/15 read as 1/16, so rows sum to 1).
K1 = [[F(15, 16), F(1, 16)]] * 5 + [[F(1, 16), F(15, 16)]] * 5
T = F(1, 3)
K2 = [[T, T, T, 0, 0], [0, T, T, T, 0], [0, 0, T, T, T], [T, 0, 0, T, T], [T, T, 0, 0, T]]
# Envelopes paper, Example 2 (eq. 7), uniform prior on 4 symbols.
E2 = [["0", "0", "0.5", "0.5"], ["0", "0", "0.5", "0.5"], ["0", "0.2", "0.4", "0.4"], ["0.2", "0", "0.4", "0.4"]]
U4 = [F(1, 4)] * 4


def test_dobrushin_example2_k1():
    # Dobrushin paper Example 2: K1 is (log 10/3, 0.05)-PML (tight) and log 15-LDP.
    assert m.leakage_capacity(K1, MinMass(kind="min_mass", c="0.05")) == pytest.approx(math.log(10 / 3), rel=1e-14)
    assert m.ldp(K1) == pytest.approx(math.log(15), rel=1e-14)
    assert m.dobrushin(np.array(K1, float)) == pytest.approx(0.875)


def test_dobrushin_example2_k2():
    # Dobrushin paper Example 2: K2 is (log 10/3, 0.1)-PML and satisfies no finite LDP guarantee.
    assert m.leakage_capacity(K2, MinMass(kind="min_mass", c="0.1")) == pytest.approx(math.log(10 / 3), rel=1e-14)
    assert m.ldp(K2) == math.inf
    assert m.zeros_per_column(np.array(K2, float)) == 2


def test_envelopes_example2_and_3():
    # Envelopes paper Example 2: PML log 4, log 4, log 10/9, log 10/9; (log 10/9, 0.1)-probabilistic PML.
    assert m.pml(E2, U4) == pytest.approx([math.log(4)] * 2 + [math.log(10 / 9)] * 2, rel=1e-14)
    assert m.pml_tail_probability(E2, U4, math.log(10 / 9) + 1e-12) == pytest.approx(0.1)
    assert m.is_probabilistic_pml(E2, U4, math.log(10 / 9) + 1e-12, "0.1")
    assert not m.is_probabilistic_pml(E2, U4, math.log(10 / 9) + 1e-12, "0.09")
    # the post-processing Z = h(Y) (outputs {1,3} -> 1, {2,4} -> 2) has leakage log 6/5 on both outcomes
    H = [[1, 0], [0, 1], [1, 0], [0, 1]]
    KZ = (np.array([[float(F(v)) for v in r] for r in E2]) @ np.array(H)).tolist()
    assert m.pml(KZ, U4) == pytest.approx([math.log(6 / 5)] * 2, rel=1e-12)
    # Example 3: eps_Y(0.1) = log 10/9 while eps-bar_Y(0.1) = log 4
    assert m.leakage_quantile(E2, U4, "0.1") == pytest.approx(math.log(10 / 9), rel=1e-14)
    assert m.leakage_upper_quantile(E2, U4, "0.1") == pytest.approx(math.log(4), rel=1e-14)
    # ... and the envelope is log 4 for delta <= 0.1 (lower bound = Theorem 3 upper bound)
    for delta in ("0.1", "0.05", "0.01"):
        low, up = b.envelope_bounds(E2, U4, delta)
        assert low == pytest.approx(math.log(4)) and up == pytest.approx(math.log(4))


def test_envelopes_examples_4_and_5_event_leakage():
    # Envelopes paper Examples 4 and 5 (outputs 1, 2, 3 are indices 0, 1, 2 here).
    K = [["0.9", "0", "0.1"], ["0", "0.9", "0.1"]]
    P = ["0.5", "0.5"]
    assert m.event_leakage(K, P, {0}) == pytest.approx(math.log(2))
    assert m.event_leakage(K, P, {1}) == pytest.approx(math.log(2))
    assert m.event_leakage(K, P, {0, 1}) == pytest.approx(0.0, abs=1e-15)
    assert m.event_leakage(K, P, {2}) == pytest.approx(0.0, abs=1e-15)
    assert m.event_leakage(K, P, {0, 2}) == pytest.approx(math.log(1 / 0.55))


def test_f_alpha_example5_confusion_graphs():
    # f_alpha paper Example 5: Proposition 3 applies to the 2-singular Q, not to the 3-singular P.
    P = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]]) / 3
    Q = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]) / 2
    assert m.confusion_graph(P).all() and not m.has_disjoint_supports(P)
    assert m.has_disjoint_supports(Q)
    assert m.disjoint_support_pairs(Q) == [(0, 2), (0, 3), (1, 2), (1, 3)]


def _rr(n, eps):
    K = np.full((n, n), 1.0)
    np.fill_diagonal(K, math.exp(eps))
    return K / (n + math.exp(eps) - 1)


@pytest.mark.parametrize("n", [5, 12])
@pytest.mark.parametrize("eps", [math.log(2), math.log(10)])
def test_f_alpha_example12_gammas(n, eps):
    # f_alpha paper Example 12, eqs. 61-62: Gamma over the rows of n-ary randomized response.
    rows = _rr(n, eps).tolist()
    P = np.zeros((n, n))
    for i in range(n):
        P[i, i] = P[i, (i - 1) % n] = 0.5  # P(y_j | x_i) = 1/2 for i = j and i = j + 1 mod N
    gmax, gmin = m.gamma_extremes(P, rows)
    assert gmax == pytest.approx((math.exp(eps) + 1) / 2, rel=1e-12) and gmin == pytest.approx(1 / gmax)
    h = n // 2 if n % 2 == 0 else None
    if h:
        Q = np.zeros((n, n))
        Q[:h, :h] = Q[h:, h:] = 2 / n
        assert m.gamma_max(Q, rows) == pytest.approx((n + 2 * math.exp(eps) - 2) / n, rel=1e-12)


def test_pml_extremes_and_disclosure():
    p = ["0.1", "0.2", "0.7"]
    assert m.min_entropy(p) == pytest.approx(-math.log(0.7))
    assert m.singling_out_threshold(p) == pytest.approx(-math.log(0.7))
    assert m.disclosure_threshold(p) == pytest.approx(math.log(1 / 0.9))
    # the identity kernel singles out X: every posterior is a point mass
    assert np.nanmin(m.posterior_min_entropies(np.eye(3), p)) == 0
    assert m.max_leakage(np.eye(3)) == pytest.approx(math.log(3))


# ------------------------------------------------------------- strategies
@st.composite
def kernels(draw, n_min=2, n_max=4, m_min=2, m_max=4, zeros=True):
    n = draw(st.integers(n_min, n_max))
    mm = draw(st.integers(m_min, m_max))
    lo = 0 if zeros else 1
    rows = []
    for _ in range(n):
        w = draw(st.lists(st.integers(lo, 6), min_size=mm, max_size=mm).filter(lambda r: sum(r) > 0))
        rows.append([F(v, sum(w)) for v in w])
    return rows


@st.composite
def priors(draw, n):
    w = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    return [F(v, sum(w)) for v in w]


def _grid(n, step):
    """All priors on n symbols with masses on the grid 1/step."""
    for c in itertools.product(range(step + 1), repeat=n - 1):
        if sum(c) <= step:
            yield [F(v, step) for v in c] + [F(step - sum(c), step)]


@SETTINGS
@given(kernels(n_max=3), st.sampled_from([0, 1, 2, 3]))
def test_leakage_capacity_min_mass_equals_grid_supremum(K, c20):
    # brute force: sup over the priors of Q_X(c) on a 1/60 grid (which contains Q_X(c)'s vertices)
    n = len(K)
    c = F(c20, 60)
    ps = MinMass(kind="min_mass", c=c)
    best = -math.inf
    for p in _grid(n, 60):
        if min(p) >= c and min(p) > 0:
            best = max(best, float(np.nanmax(m.pml(K, p))))
    cap = m.leakage_capacity(K, ps)
    if c == 0:  # no grid prior has a zero mass: the grid only approaches the supremum
        assert cap >= best - 1e-12
        assert cap == m.ldp(K)
    else:
        assert cap == pytest.approx(best, rel=1e-12, abs=1e-12)


@SETTINGS
@given(kernels(n_min=3, n_max=3, zeros=False), st.integers(1, 4), st.integers(8, 12))
def test_leakage_capacity_box_equals_grid_supremum(K, lo, hi):
    # box with bounds on the 1/20 grid (lower > 0: full support): its vertices lie on the grid, so the grid sup is the sup
    ps = Box(kind="box", lower=[F(lo, 20)] * 3, upper=[F(hi, 20)] * 3)
    best = max(float(np.nanmax(m.pml(K, p))) for p in _grid(3, 20) if all(F(lo, 20) <= v <= F(hi, 20) for v in p))
    assert m.leakage_capacity(K, ps) == pytest.approx(best, rel=1e-12)
    gmax = m.gamma_max(K, ps)
    grid = [p for p in _grid(3, 20) if all(F(lo, 20) <= v <= F(hi, 20) for v in p)]
    out = np.array([[float(x) for x in p] for p in grid]) @ np.array(K, float)
    assert gmax == pytest.approx(float((out.max(axis=0) / out.min(axis=0)).max()), rel=1e-12)


@SETTINGS
@given(kernels(n_max=4, m_max=5), st.data())
def test_quantiles_and_binary_envelope_match_brute_force(K, data):
    n, mm = len(K), len(K[0])
    p = data.draw(priors(n))
    delta = F(data.draw(st.integers(1, 19)), 20)
    ell = m.pml(K, p)
    py = np.array([float(v) for v in np.array(p, dtype=object) @ np.array(K, dtype=object)])
    subsets = [s for r in range(1, mm + 1) for s in itertools.combinations(range(mm), r) if all(py[y] > 0 for y in s)]
    mass = lambda s: sum(F(0) + sum((p[x] * K[x][y] for x in range(n)), F(0)) for y in s)
    # eq. 10: eps_Y = min over A with P(A) >= 1 - delta of max ell; eps-bar_Y = max over P(A) >= delta of min ell
    lower = min(max(ell[y] for y in s) for s in subsets if mass(s) >= 1 - delta)
    upper = max(min(ell[y] for y in s) for s in subsets if mass(s) >= delta)
    assert m.leakage_quantile(K, p, delta) == pytest.approx(lower, abs=1e-12)
    assert m.leakage_upper_quantile(K, p, delta) == pytest.approx(upper, abs=1e-12)
    # Algorithm 1 vs all deterministic binary post-processings with P(E) >= delta (Lemma 1(iv): never above)
    eb = m.binary_envelope(K, p, delta)
    for s in subsets:
        if mass(s) >= delta:
            assert m.event_leakage(K, p, set(s)) <= eb + 1e-12
    # ... and vs an LP over randomised events w in [0,1]^M with P_Y . w = delta (scipy, independent)
    best = 0.0
    for x in range(n):
        if p[x] == 0:
            continue
        res = optimize.linprog(
            -np.array([float(v) for v in K[x]]),
            A_eq=py[None, :],
            b_eq=[float(delta)],
            bounds=[(0, 1)] * mm,
            method="highs",
        )
        best = max(best, -res.fun / float(delta))
    assert eb == pytest.approx(math.log(best), abs=1e-9)


@st.composite
def distributions(draw, size, positive=False):
    w = draw(st.lists(st.integers(1 if positive else 0, 9), min_size=size, max_size=size).filter(lambda r: sum(r) > 0))
    return np.array(w, float) / sum(w)


@SETTINGS
@given(
    st.integers(2, 5).flatmap(lambda k: st.tuples(distributions(k), distributions(k, positive=True))),
    st.sampled_from([0.3, 0.5, 1.0, 1.5, 2.0, 3.5, 7.0]),
)
def test_divergences_against_mpmath_and_integral_representation(pq, alpha):
    p, q = pq
    mp = mpmath.mpf
    with mpmath.workdps(40):
        if alpha == 1:
            ref = sum(mp(a) * mpmath.log(mp(a) / mp(b)) for a, b in zip(p, q) if a > 0)
        else:
            ref = mpmath.log(sum(mp(a) ** alpha * mp(b) ** (1 - alpha) for a, b in zip(p, q) if a > 0)) / (alpha - 1)
    assert m.renyi_divergence(p, q, alpha) == pytest.approx(float(ref), rel=1e-9, abs=1e-12)
    # eq. 4: D_alpha = log(D_f_alpha + 1)/(alpha - 1) for alpha > 1
    if alpha > 1:
        assert m.renyi_divergence(p, q, alpha) == pytest.approx(
            math.log1p(m.f_alpha_divergence(p, q, alpha)) / (alpha - 1), rel=1e-9, abs=1e-12
        )
        # eq. 6: D_f = int_0^inf E_gamma f''(gamma) d gamma with f'' = alpha (alpha - 1) gamma^(alpha - 2)
        # E_gamma is piecewise linear in gamma with kinks at the ratios p/q and at 1 (the (1 - gamma)^+ term), so
        # the integrand is smooth between them: mpmath's quadrature over those pieces is accurate to ~1e-15
        # (scipy's quad over the whole range was off by 3e-6 relative at alpha ~ 7 in the random profile).
        # Past max p/q, E_gamma = 0.
        kinks = sorted({0.0, 1.0, *(p / q).tolist()})
        with mpmath.workdps(30):
            val = mpmath.quad(
                lambda g: m.hockey_stick_divergence(p, q, float(g)) * alpha * (alpha - 1) * g ** (alpha - 2),
                kinks,
            )
        assert float(val) == pytest.approx(m.f_alpha_divergence(p, q, alpha), rel=1e-9, abs=1e-12)
    assert m.hockey_stick_divergence(p, q, 1.0) == pytest.approx(m.total_variation(p, q))
    assert m.kl_divergence(p, q) == pytest.approx(m.f_divergence(p, q, lambda t: t * math.log(t) if t > 0 else 0.0))
    assert m.hellinger_squared(p, q) == pytest.approx(m.f_divergence(p, q, lambda t: (1 - math.sqrt(t)) ** 2))
    assert m.chi_squared(p, q) == pytest.approx(m.f_divergence(p, q, lambda t: (t - 1) ** 2))


@SETTINGS
@given(kernels(zeros=False))
def test_renyi_ldp_limits(K):
    Kf = np.array(K, float)
    assert m.renyi_ldp(Kf, math.inf) == pytest.approx(m.ldp(K), rel=1e-9, abs=1e-12)  # f_alpha paper eq. 1
    assert m.renyi_ldp(Kf, 2.0) <= m.renyi_ldp(Kf, 5.0) + 1e-12  # Renyi divergence grows with alpha
    assert m.ldp(K) == m.leakage_capacity(K, Simplex(kind="simplex"))  # Dobrushin paper Proposition 1


def test_errors_are_clear():
    with pytest.raises(ValueError, match="delta"):
        m.leakage_quantile(E2, U4, "1.5")
    with pytest.raises(ValueError, match="sum to 1"):
        m.pml(E2, ["0.5", "0.5", "0.5", "0.5"])
    with pytest.raises(ValueError, match="P_Y"):
        m.event_leakage(E2, U4, {0, 1} - {0, 1})
    with pytest.raises(ValueError, match="alpha"):
        m.f_alpha_divergence([0.5, 0.5], [0.5, 0.5], 0)
    assert m.leakage_capacity(K2, Point(kind="point", prior=["0.2"] * 5)) == pytest.approx(math.log(5 / 3))
