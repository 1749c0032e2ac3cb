"""Disclosure paper (Saeidian, Cervia, Oechtering, Skoglund, *Rethinking Disclosure Prevention with PML*):
conditional PML, Definition 3.2 with Theorems 3–4 and Proposition 5, Theorem 6, the set-valued
thresholds, Example 3.3, Theorems 9 and 11, Proposition 12, and choosing ε from a requirement.

Expected values: printed numbers of the paper (0.36 in Example 3.3), closed forms derived in the
comments, brute-force recomputation from the definitions written here (posteriors, Laplace densities
by summation over the binomial), or scipy.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from mechdesign.spec.models import MinMass, Simplex
from mechdesign.theory import disclosure as d
from mechdesign.theory import measures


def _rand_kernel(rng, n, m, zeros=0.0):
    K = rng.random((n, m)) * (rng.random((n, m)) >= zeros)
    K[:, 0] += 1e-3
    return K / K.sum(axis=1, keepdims=True)


def _rand_prior(rng, n):
    p = rng.random(n) + 0.05
    return p / p.sum()


# ------------------------------------------------------------------ conditional PML
def test_conditional_pml_matches_the_definition_with_posteriors():
    # ℓ(X→y|z) = D∞(P_{X|Y=y,Z=z} ‖ P_{X|Z=z}) = log max_x P(x|y,z)/P(x|z), computed here from Bayes' rule
    rng = np.random.default_rng(1)
    nx, nz, m = 3, 2, 4
    Kxz = rng.random((nx, nz, m))
    Kxz /= Kxz.sum(axis=2, keepdims=True)
    P = rng.random((nx, nz))
    P /= P.sum()
    got = d.conditional_pml(Kxz, P)
    for z in range(nz):
        px_z = P[:, z] / P[:, z].sum()
        for y in range(m):
            joint = px_z * Kxz[:, z, y]
            post = joint / joint.sum()
            assert got[z, y] == pytest.approx(math.log(max(post / px_z)), rel=1e-12)


def test_conditional_pml_with_trivial_side_information_is_pml():
    rng = np.random.default_rng(2)
    K, p = _rand_kernel(rng, 4, 3), _rand_prior(rng, 4)
    got = d.conditional_pml(K[:, None, :], p[:, None])
    assert np.allclose(got[0], measures.pml(K, p), rtol=1e-12)


# ------------------------------------------------------------------ Definition 3.2, Theorems 3–4, Proposition 5
def _brute_discloses(K, q, labels):
    # posterior of U = f(X) at each y, from Bayes' rule, in Fractions
    Kf = [[Fraction(v).limit_denominator(10**12) for v in row] for row in K]
    n, m = len(Kf), len(Kf[0])
    for y in range(m):
        qy = sum(q[x] * Kf[x][y] for x in range(n))
        if qy == 0:
            continue
        for u in set(labels):
            if sum(q[x] * Kf[x][y] for x in range(n) if labels[x] == u) == qy:
                return True
    return False


def test_disclosure_definition_and_theorem3_ubiquity():
    # Theorem 3: disclosure to one full-support adversary implies it to all; checked against the
    # brute-force posterior for several adversaries.
    rng = np.random.default_rng(3)
    count = 0
    for _ in range(60):
        K = _rand_kernel(rng, 4, 3, zeros=0.5)
        K = np.array([[float(Fraction(v).limit_denominator(1000)) for v in row] for row in K])
        K = K / K.sum(axis=1, keepdims=True)
        labels = list(rng.integers(0, 2, 4))
        verdicts = {
            d.discloses(K, labels, adv)
            for adv in (
                [Fraction(1, 4)] * 4,
                [Fraction(1, 10)] * 3 + [Fraction(7, 10)],
                [Fraction(1, 2), Fraction(1, 6), Fraction(1, 6), Fraction(1, 6)],
            )
        }
        assert len(verdicts) == 1
        assert verdicts.pop() == _brute_discloses(K, [Fraction(1, 4)] * 4, labels)
        count += _brute_discloses(K, [Fraction(1, 4)] * 4, labels)
    assert 0 < count < 60  # both verdicts occur


def test_theorem4_no_high_entropy_attribute_is_disclosed():
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(200):
        n = 4
        K = _rand_kernel(rng, n, 3, zeros=0.4)
        p = _rand_prior(rng, n)
        eps = float(np.nanmax(measures.pml(K, p)))  # K is (eps, P)-PML at its own leakage
        for labels in itertools.product(range(3), repeat=n):
            h = d.attribute_min_entropy(p, list(labels))
            if d.discloses(K, list(labels)):
                assert h <= eps + 1e-12  # Theorem 4 (contrapositive)
                checked += 1
    assert checked > 50


def test_theorem4_is_sharp_for_the_deterministic_release():
    # Y = U = 1{X != x0} deterministically: PML of output "1" is log 1/(1 - p0) = H∞(P_U) when p0 < 1/2,
    # so U is disclosed exactly at eps = H∞(P_U) (closed form), not below.
    p = [Fraction(1, 5), Fraction(2, 5), Fraction(2, 5)]
    K = [[0, 1], [1, 0], [1, 0]]
    labels = [0, 1, 1]
    eps = float(np.nanmax(measures.pml(K, p)))
    assert eps == pytest.approx(math.log(5), rel=1e-12)  # output 0 (X = x0): log 1/p0
    assert d.discloses(K, labels)
    assert d.attribute_min_entropy(p, labels) == pytest.approx(-math.log(4 / 5), rel=1e-12)


def test_proposition5_lower_entropy_attribute_is_also_disclosed():
    rng = np.random.default_rng(5)
    found = 0
    for _ in range(100):
        K = _rand_kernel(rng, 5, 3, zeros=0.5)
        p = _rand_prior(rng, 5)
        labels = list(rng.integers(0, 3, 5))
        if len(set(labels)) < 2 or not d.discloses(K, labels):
            continue
        posts = d.attribute_posteriors(K, [Fraction(1, 5)] * 5, labels)
        u1 = next(post.index(1) for post in posts if post is not None and max(post) == 1)
        W = d.proposition5_attribute(p, labels, u1)
        assert d.attribute_min_entropy(p, W) < d.attribute_min_entropy(p, labels)
        assert d.discloses(K, W)
        found += 1
    assert found >= 5


# ------------------------------------------------------------------ Theorem 6
def test_theorem6_equality_case_binary():
    # X binary, V = X, K = [[a, 1-a], [b, 1-b]] with a > b, y = 0: e^C ≥ a/b; adversary Q = (1 - q, q)
    # with the likely symbol on the row of K_x(0) = a. Posterior of V = 0 at y = 0:
    # (1-q)a/((1-q)a + qb) = 1/(1 + q b/((1-q) a)), so H∞ = log(1 + q/(1-q) b/a), the bound with C = log a/b
    # (when a/b is the largest ratio, here a = 0.8, b = 0.2 vs 0.8/0.2 on the other column too).
    a, b, q = 0.8, 0.2, 0.3
    K = [[a, 1 - a], [b, 1 - b]]
    C = measures.ldp(K)
    assert C == pytest.approx(math.log(4), rel=1e-12)
    post = (1 - q) * a / ((1 - q) * a + q * b)
    assert d.theorem6_min_entropy_bound(C, q) == pytest.approx(-math.log(post), rel=1e-12)


def test_theorem6_bound_holds_for_every_deterministic_attribute():
    rng = np.random.default_rng(6)
    for _ in range(100):
        n = 4
        K = _rand_kernel(rng, n, 3)
        q = _rand_prior(rng, n)
        bound = d.theorem6_min_entropy_bound(measures.ldp(K), float(q.min()))
        for labels in itertools.product(range(2), repeat=n):
            if len(set(labels)) < 2:
                continue
            for y in range(3):
                post = [sum(q[x] * K[x, y] for x in range(n) if labels[x] == u) for u in (0, 1)]
                h = -math.log(max(post) / sum(post))
                assert h >= bound - 1e-12


# ------------------------------------------------------------------ set-valued thresholds
@pytest.mark.parametrize("n, c", [(3, 0.2), (5, 0.05), (10, 0.1), (4, 0.0)])
def test_thresholds_for_min_mass_sets_closed_forms(n, c):
    ps = MinMass(kind="min_mass", c=c) if c > 0 else Simplex(kind="simplex")
    # closed forms of the brief / derived: every P in Q_X(c) has p_min >= c and p_max <= 1 - (N-1)c
    assert d.disclosure_threshold_for_set(ps, n) == pytest.approx(-math.log(1 - c) if c > 0 else 0.0, abs=1e-15)
    assert d.singling_out_threshold_for_set(ps, n) == pytest.approx(-math.log(1 - (n - 1) * c), abs=1e-15)


def test_thresholds_for_a_point_prior_reduce_to_proposition7_and_corollary8():
    from mechdesign.spec.models import Point

    p = [Fraction(1, 10), Fraction(3, 10), Fraction(6, 10)]
    ps = Point(kind="point", prior=p)
    assert d.disclosure_threshold_for_set(ps, 3) == pytest.approx(math.log(1 / 0.9), rel=1e-12)  # log 1/(1 - p_min)
    assert d.singling_out_threshold_for_set(ps, 3) == pytest.approx(-math.log(0.6), rel=1e-12)  # H∞(P)


def test_below_the_set_threshold_designed_kernels_have_finite_capacity():
    # Proposition 7 for every P in Q_X(c): an (eps, c)-PML design with eps < log 1/(1 - c) has C < ∞.
    from mechdesign.design import design

    n, c = 4, 0.15
    eps = 0.99 * -math.log(1 - c)
    r = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "min_mass", "c": c},
            "objective": {"kind": "dobrushin"},
            "output_size": 2,
        }
    )
    assert measures.ldp(r.kernel) < math.inf


# ------------------------------------------------------------------ choosing ε
def test_epsilon_for_requirement():
    ps = MinMass(kind="min_mass", c=0.1)
    n = 5
    t = -math.log(0.9)  # log 1/(1 - c)
    ch = d.epsilon_for_requirement(ps, n, protect_min_entropy=0.05)  # h < t: Proposition 7 wins
    assert ch.strict and ch.epsilon == pytest.approx(t) and "Proposition 7" in ch.theorem
    ch = d.epsilon_for_requirement(ps, n, protect_min_entropy=0.5)  # h > t: Theorem 4 at eps = h
    assert not ch.strict and ch.epsilon == 0.5 and "Theorem 4" in ch.theorem
    ch = d.epsilon_for_requirement(ps, n, no_singling_out=True)
    assert ch.epsilon == pytest.approx(-math.log(1 - 4 * 0.1)) and "Corollary 8" in ch.theorem
    ch = d.epsilon_for_requirement(ps, n, protect_min_entropy=2.0, no_singling_out=True)
    assert ch.epsilon == pytest.approx(-math.log(0.6))  # the smaller of the two


# ------------------------------------------------------------------ Example 3.3 and Figure 1
def test_example33_printed_threshold():
    # "as long as ℓ(X → 1) < min_{p∈[0.3,0.7]} H∞(P_{S_i}) = 0.36" (printed)
    assert round(d.example33_gender_threshold(0.3, 0.7), 2) == 0.36


@pytest.mark.parametrize("n", [200, 500, 1000, 2000])
@pytest.mark.parametrize("p", [0.3, 0.5])
def test_example33_chernoff_bound_dominates_the_exact_leakage(n, p):
    for frac in (0.05, 0.1, 0.2, 0.25):
        m = int(frac * n)
        exact = -math.log(binom.sf(m, n, p))  # scipy, independent of the code's path
        assert d.count_query_leakage(n, m, p) == pytest.approx(exact, rel=1e-9)
        assert d.count_query_leakage_bound(n, m, p) >= exact * (1 - 1e-12)
    # Figure 1's message: at small m/n the leakage is orders of magnitude below 0.36
    assert d.count_query_leakage_bound(n, int(0.1 * n), p) < 0.36e-3


def test_example33_negative_answer_bound():
    n, m, p = 500, 450, 0.5
    exact = -math.log(binom.cdf(m, n, p))  # ℓ(X → 0) = log 1/P(count <= m)
    assert d.count_query_no_leakage_bound(n, m, p) >= exact


# ------------------------------------------------------------------ §4: Theorems 9, 11, Proposition 12
def _random_db_kernel(rng, dsize, n, m):
    K = rng.random((dsize**n, m)) + 0.05
    return K / K.sum(axis=1, keepdims=True)


def test_theorem9_dp_is_the_sup_of_conditional_pml():
    rng = np.random.default_rng(9)
    for _ in range(10):
        K = _random_db_kernel(rng, 2, 3, 3)
        eps = d.dp_epsilon(K, 2, 3)
        assert d.theorem9_sup_conditional_pml(K, 2, 3) == pytest.approx(eps, rel=1e-12)
        # (2): product priors never exceed eps, and concentrating entry i on the minimiser approaches it
        for _ in range(5):
            ps = [rng.random() * 0.9 + 0.05 for _ in range(3)]
            prior = np.array([np.prod([pi if v else 1 - pi for pi, v in zip(ps, x)]) for x in d.database_index(2, 3)])
            for i in range(3):
                assert np.nanmax(d.conditional_entry_pml(K, prior, 2, 3, i)) <= eps + 1e-12
    # a prior sequence from the proof: D_i concentrated on the value with the smaller K(y | ·, d_{-i})
    K = _random_db_kernel(np.random.default_rng(10), 2, 2, 2)
    eps = d.dp_epsilon(K, 2, 2)
    best = 0.0
    for i in range(2):
        for pv in (1e-6, 1 - 1e-6):
            ps = [0.5, 0.5]
            ps[i] = pv
            prior = np.array([np.prod([pi if v else 1 - pi for pi, v in zip(ps, x)]) for x in d.database_index(2, 2)])
            best = max(best, float(np.nanmax(d.conditional_entry_pml(K, prior, 2, 2, i))))
    assert best == pytest.approx(eps, rel=1e-4)


def test_theorem9_part3_entry_pml_under_product_priors():
    rng = np.random.default_rng(11)
    K = _random_db_kernel(rng, 2, 2, 3)
    eps = d.dp_epsilon(K, 2, 2)
    best = 0.0
    for p1 in (1e-7, 0.3, 1 - 1e-7):
        for p2 in (1e-7, 0.3, 1 - 1e-7):
            prior = np.array([(p1 if x[0] else 1 - p1) * (p2 if x[1] else 1 - p2) for x in d.database_index(2, 2)])
            for i in range(2):
                v = float(np.nanmax(d.entry_pml(K, prior, 2, 2, i)))
                assert v <= eps + 1e-9
                best = max(best, v)
    assert best == pytest.approx(eps, rel=1e-4)


def test_theorem11_free_lunch_is_the_leakage_capacity_and_the_sup_of_entry_pml():
    rng = np.random.default_rng(12)
    K = _random_db_kernel(rng, 2, 2, 3)
    eps = d.free_lunch_epsilon(K)
    assert eps == pytest.approx(measures.leakage_capacity(K, Simplex(kind="simplex")), rel=1e-12)  # (1), Theorem 2
    # (3): a correlated prior with mass 1 - eta on the minimising database and eta on the maximising one
    y, hi, lo = max(
        ((y, a, b) for y in range(3) for a in range(4) for b in range(4)), key=lambda t: K[t[1], t[0]] / K[t[2], t[0]]
    )
    dbs = d.database_index(2, 2)
    i = next(j for j in range(2) if dbs[hi][j] != dbs[lo][j])
    eta, tiny = 1e-5, 1e-9
    prior = np.full(4, tiny)
    prior[hi], prior[lo] = eta, 1 - eta - 2 * tiny
    v = float(d.entry_pml(K, prior / prior.sum(), 2, 2, i)[y])
    assert v <= eps + 1e-9 and v == pytest.approx(eps, rel=1e-3)


def _laplace_entry_pml(n, b, p, y):
    """ℓ(D_i → y) for the Laplace count mechanism, by summing the Laplace density over the binomial
    law of the other n − 1 entries (the definition of PML, written independently of the bound)."""
    k = np.arange(n)
    w = binom.pmf(k, n - 1, p)
    lap = lambda mu: np.exp(-np.abs(y - mu) / b) / (2 * b)
    p1 = float(np.sum(w * lap((k + 1) / n)))
    p0 = float(np.sum(w * lap(k / n)))
    return math.log(max(p0, p1) / (p * p1 + (1 - p) * p0))


@pytest.mark.parametrize("n, b, c", [(10, 0.1, 0.2), (20, 0.05, 0.4), (5, 1.0, 0.0)])
def test_proposition12_laplace_count_bound(n, b, c):
    bound = d.laplace_count_entry_leakage_bound(n, b, c)
    for p in (c + 1e-9, 0.5, 1 - c - 1e-9) if c > 0 else (1e-9, 0.5):
        for y in np.linspace(-1, 2, 31):
            assert _laplace_entry_pml(n, b, p, y) <= bound + 1e-12
    # attained for y >= 1 as p → c (derivation in the docstring), and 1/(nb) at c = 0 (printed remark)
    p = c + 1e-12 if c > 0 else 1e-12
    assert _laplace_entry_pml(n, b, p, 1.5) == pytest.approx(bound, rel=1e-6)
    if c == 0:
        assert bound == pytest.approx(1 / (n * b), rel=1e-12)
    assert d.laplace_count_entry_leakage_bound_simplified(n, b, c) >= bound


def test_proposition12_halves_the_dp_parameter_near_c_half():
    # "when c is close to 1/2, the privacy parameter is reduced by almost a factor of 1/2" (printed remark)
    n, b = 1000, 1.0  # nb large, as in the remark (1/(nb) = 1e-3)
    assert d.laplace_count_entry_leakage_bound(n, b, 0.4999) / (1 / (n * b)) == pytest.approx(0.5, abs=0.01)


def _laplace_db_pml_bruteforce(n, eps, p, eta, y):
    """ℓ(D_1 → y) by enumerating the 2^n databases and evaluating Laplace densities (definition of PML)."""
    b = 1 / (n * eps)
    dbs = d.database_index(2, n)
    prior = np.array([(1 - eta) * ((p if all(x) else 0) + ((1 - p) if not any(x) else 0)) + eta / 2**n for x in dbs])
    dens = np.array([math.exp(-abs(y - sum(x) / n) / b) / (2 * b) for x in dbs])
    py = prior @ dens
    cond = [
        sum(prior[r] * dens[r] for r, x in enumerate(dbs) if x[0] == v)
        / sum(prior[r] for r, x in enumerate(dbs) if x[0] == v)
        for v in (0, 1)
    ]
    return math.log(max(cond) / py)


@pytest.mark.parametrize("n, eps, p, eta", [(3, 0.5, 0.3, 0.01), (6, 0.2, 0.5, 0.1), (8, 1.0, 0.4, 1e-4)])
def test_theorem10_closed_form_matches_bruteforce(n, eps, p, eta):
    for y in (1.0, 1.7):
        assert d.theorem10_correlated_laplace_leakage(n, eps, p, eta) == pytest.approx(
            _laplace_db_pml_bruteforce(n, eps, p, eta, y), rel=1e-10
        )


@pytest.mark.parametrize("eps, delta", [(0.1, 0.05), (0.5, 0.01), (0.01, 0.1)])
def test_theorem10_correlated_data_leak_almost_eps_max(eps, delta):
    n, leak = d.theorem10_construction(eps, delta, p=0.5)
    # the mechanism is eps-DP: Laplace with scale b = 1/(n eps) on a query of sensitivity 1/n (Dwork et al.)
    assert leak > math.log(2) - delta - 1e-9  # eps_max(D_1) = log 2 for p = 1/2 (eta = 1e-12)
    assert leak > eps  # far above the DP parameter
