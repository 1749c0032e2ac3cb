"""Tests of the independent exact checker in tests/helpers/exact_oracle.py (the fuzz tests rely on it).

Expected values come from hand derivations written here (k-RR ratios, the two tight constraints of a
binary mechanism solved exactly), from the papers (Remark 2 and Theorem 1 of the Dobrushin paper),
and from independent libraries (mpmath for digits of logarithms, scipy for LPs and relative entropy).
"""

import random
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.special import rel_entr

from helpers.exact_oracle import PriorSetOracle, WrittenEpsilon, check_kernel, exact_number, utility
from helpers.krr import krr_exact
from helpers.specs import spec


def _digits(value: str, places: int, up: bool) -> str:
    """ln-type constant truncated (up=False) or rounded up (up=True) to ``places`` decimals, from mpmath."""
    with mpmath.workdps(places + 20):
        x = mpmath.mpf(mpmath.mpmathify(value)) if not callable(value) else value()
        scaled = int(mpmath.floor(x * mpmath.mpf(10) ** places)) + (1 if up else 0)
    s = str(scaled).rjust(places + 1, "0")
    return s[:-places] + "." + s[-places:]


def _ln(r):
    return lambda: mpmath.log(r)


# ------------------------------------------------------------------------------ numbers as written
def test_numbers_mean_their_text():
    assert exact_number(0.1) == F(1, 10)
    assert exact_number("1e-9") == F(1, 10**9)
    assert exact_number("1/3") == F(1, 3)
    assert exact_number(" 2/6 ") == F(1, 3)
    text = "2.30258509299404568401799145468436420760"
    assert exact_number(text) == F(230258509299404568401799145468436420760, 10**38)
    with pytest.raises(ValueError):
        exact_number("log(3)")
    with pytest.raises(TypeError):
        exact_number(True)


# ------------------------------------------------------------------------------ the ε of the text
@pytest.mark.parametrize("n", [2, 3, 5])
def test_krr_is_private_exactly_at_log3_and_not_just_below(n):
    K = krr_exact(n, F(3))  # worst ratio over the simplex: (3/(n+2)) / (1/(n+2)) = 3
    simplex = {"kind": "simplex"}
    assert check_kernel(K, spec(n, "log(3)", simplex)).private
    below30, above30 = _digits(_ln(3), 30, up=False), _digits(_ln(3), 30, up=True)
    assert not check_kernel(K, spec(n, below30, simplex)).private
    assert check_kernel(K, spec(n, above30, simplex)).private
    # the two doubles around ln 3 = 1.09861228866810969139...: their decimal reprs lie on either side
    assert check_kernel(K, spec(n, 1.0986122886681098, simplex)).private
    assert not check_kernel(K, spec(n, 1.0986122886681096, simplex)).private
    verdict = check_kernel(K, spec(n, below30, simplex))
    assert verdict.stochastic and verdict.worst_ratio == 3


def test_issue10_decimal_just_below_ln10_is_not_private():
    # "2.30258509299404568401799145468436420760" is just below ln 10, so a kernel with
    # ratio exactly 10 violates it although its double rounding is ≥ ln 10
    text = "2.30258509299404568401799145468436420760"
    assert text == _digits(_ln(10), 38, up=False)
    K = krr_exact(5, F(10))
    assert not check_kernel(K, spec(5, text, {"kind": "simplex"})).private
    assert check_kernel(K, spec(5, "log(10)", {"kind": "simplex"})).private
    assert check_kernel(K, spec(5, "2*log(2)+log(5/2)", {"kind": "simplex"})).private


def test_irrational_exponentials_are_separated_from_nearby_rationals():
    # e^(π/4) = 2.19328005073801545655976965927873822...
    eps = WrittenEpsilon("pi/4")
    assert eps.exp_rational is None
    assert eps.exp_at_least(F("2.193280050738015456559769659278"))
    assert not eps.exp_at_least(F("2.193280050738015456559769659279"))
    # e^(sqrt 2) = 4.11325037878292751717...; 2**0.5 is the same number written differently
    for text in ("sqrt(2)", "2**0.5", "2**(1/2)"):
        assert WrittenEpsilon(text).exp_at_least(F("4.1132503787829275171"))
        assert not WrittenEpsilon(text).exp_at_least(F("4.1132503787829275172"))


def test_large_epsilon_only_the_zero_pattern_matters():
    identity = [[F(1), F(0)], [F(0), F(1)]]
    # over the simplex the prior e_1 gives output 0 probability 0 while row 0 gives it 1: never private
    for eps in ("1e10", "exp(20)", 700, 10**10):
        verdict = check_kernel(identity, spec(2, eps, {"kind": "simplex"}))
        assert not verdict.private and verdict.unbounded_output == 0
    # for the point prior (1/2, 1/2) the ratio is 2: private from ε = log 2 on
    point = {"kind": "point", "prior": ["1/2", "1/2"]}
    for eps in ("1e10", "exp(20)", 700, "log(2)", "0.6931471805599453094172321214582"):
        assert check_kernel(identity, spec(2, eps, point)).private
    for eps in (0, "1e-9", "0.6931471805599453094172321214581"):
        assert not check_kernel(identity, spec(2, eps, point)).private


def test_tiny_entry_beside_a_zero():
    tiny = F(1, 10**300)
    K = [[F(1, 2), F(1, 2) - tiny, tiny], [F(1, 2), F(1, 2), F(0)]]
    # simplex and min_mass with c = 0: the prior e_2 sees output 2 with probability 0 → unbounded ratio
    for ps in ({"kind": "simplex"}, {"kind": "min_mass", "c": 0}):
        verdict = check_kernel(K, spec(2, "1e10", ps))
        assert not verdict.private and verdict.unbounded_output == 2
    # point prior (1/2, 1/2): output 2 has ratio tiny / (tiny/2) = 2
    point = {"kind": "point", "prior": [0.5, 0.5]}
    assert check_kernel(K, spec(2, "log(2)", point)).private
    assert not check_kernel(K, spec(2, 0.69, point)).private
    # Q_X(1/4), N = 2: min P·k = c·tiny + (1 − 2c)·0 = tiny/4, ratio 4 (Lemma 4)
    q = {"kind": "min_mass", "c": "1/4"}
    assert check_kernel(K, spec(2, "2*log(2)", q)).private
    assert not check_kernel(K, spec(2, _digits(_ln(4), 30, up=False), q)).private


def test_rows_must_be_exactly_stochastic_and_nonnegative():
    almost = [[F(1, 2), F(1, 2) - F(1, 2**60)], [F(1, 2), F(1, 2)]]
    verdict = check_kernel(almost, spec(2, 5, {"kind": "simplex"}))
    assert not verdict.stochastic and not verdict.private and "row 0" in verdict.reason
    negative = [[F(3, 2), F(-1, 2)], [F(1, 2), F(1, 2)]]
    assert not check_kernel(negative, spec(2, 5, {"kind": "simplex"})).stochastic
    assert check_kernel([["1/2", "1/2"], ["1/3", "2/3"]], spec(2, "log(3/2)", {"kind": "simplex"})).private


ALL_PRIOR_SETS = [
    {"kind": "simplex"},
    {"kind": "min_mass", "c": 0},
    {"kind": "min_mass", "c": "1/3"},
    {"kind": "min_mass", "c": "1/1000000000"},
    {"kind": "point", "prior": ["1/1000000000", "1/1000000000", "999999998/1000000000"]},
    {"kind": "hull", "priors": [[1, 0, 0], [0, "1/2", "1/2"]]},
    {"kind": "box", "lower": ["1/1000000000"] * 3, "upper": ["1/1000000000", "1/1000000000", 1]},
    {"kind": "box", "lower": [0, 0, 0], "upper": [1, 1, 1]},
    {"kind": "l1_ball", "center": ["1/3", "1/3", "1/3"], "radius": 2},
]


@pytest.mark.parametrize("prior_set", ALL_PRIOR_SETS)
def test_constant_kernel_is_private_at_zero(prior_set):
    K = [[F(1, 5), F(4, 5)]] * 3
    assert check_kernel(K, spec(3, 0, prior_set)).private
    # and a kernel whose rows differ at all is not 0-PML for any of these sets
    K2 = [[F(1, 5), F(4, 5)], [F(1, 5), F(4, 5)], [F(1, 5) + F(1, 10**12), F(4, 5) - F(1, 10**12)]]
    assert not check_kernel(K2, spec(3, 0, prior_set)).private


@pytest.mark.parametrize("q", [1, 2, 3])
def test_remark2_binary_mechanism_is_tight_for_min_mass(q):
    """Q_X(c), N = 4, c = 1/10, e^ε = 2: the binary mechanism with q rows at a and N − q rows at b whose two
    Lemma 4 constraints are both tight. Solved here as a 2×2 linear system; it must be Remark 2's (M, m),
    have Dobrushin coefficient Ξ(ε,c) (Theorem 1), be private at log 2 and not just below."""
    n, c, E = 4, F(1, 10), F(2)
    # column 0 (q entries a ≥ N − q entries b): a = E(c(q a + (n−q) b) + (1 − n c) b)
    # column 1 (1 − b ≥ 1 − a):                1 − b = E(c(q(1−a) + (n−q)(1−b)) + (1 − n c)(1 − a))
    # as a linear system in (a, b), the constants of column 1 moved to the right (c n + 1 − n c = 1):
    A = [[1 - E * c * q, -E * (c * (n - q) + 1 - n * c)], [E * (c * q + 1 - n * c), -1 + E * c * (n - q)]]
    rhs = [F(0), E - 1]
    det = A[0][0] * A[1][1] - A[0][1] * A[1][0]
    a = (rhs[0] * A[1][1] - A[0][1] * rhs[1]) / det
    b = (A[0][0] * rhs[1] - rhs[0] * A[1][0]) / det
    # Remark 2 (Dobrushin paper): m = (1 − e^ε c q)/(1 + e^ε(1 − Nc)), M = e^ε(1 − c q)/(1 + e^ε(1 − Nc))
    assert b == (1 - E * c * q) / (1 + E * (1 - n * c))
    assert a == E * (1 - c * q) / (1 + E * (1 - n * c))
    K = [[a, 1 - a]] * q + [[b, 1 - b]] * (n - q)
    ps = {"kind": "min_mass", "c": 0.1}
    assert check_kernel(K, spec(n, "log(2)", ps)).private
    assert not check_kernel(K, spec(n, _digits(_ln(2), 30, up=False), ps)).private
    assert check_kernel(K, spec(n, _digits(_ln(2), 30, up=True), ps)).private
    assert utility(K, spec(n, "log(2)", ps)) == (E - 1) / (E * (1 - n * c) + 1)  # Theorem 1: Ξ(ε, c)


# ------------------------------------------------------------------------------ prior-set minimisers
def _random_sets(rng: random.Random, n: int):
    def dist(zeros=False):
        w = [rng.randint(0 if zeros else 1, 9) for _ in range(n)]
        if sum(w) == 0:
            w[0] = 1
        return [F(v, sum(w)) for v in w]

    p0 = dist(zeros=True)
    lower = [v * F(rng.randint(0, 4), 4) for v in p0]
    upper = [min(F(1), v + F(rng.randint(0, 3), 7)) for v in p0]
    if sum(upper) < 1:
        upper = [F(1)] * n
    yield {"kind": "box", "lower": [str(v) for v in lower], "upper": [str(v) for v in upper]}
    yield {
        "kind": "l1_ball",
        "center": [str(v) for v in dist(zeros=True)],
        "radius": str(F(rng.randint(0, 12), rng.choice([4, 5, 100]))),
    }


def _linprog_min(ps: PriorSetOracle, k):
    """min P·k over the set written as plain inequalities, by scipy (HiGHS): an independent solver."""
    n = ps.n
    k = np.array([float(v) for v in k])
    if ps.kind == "box":
        res = linprog(
            k, A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(float(lo), float(hi)) for lo, hi in zip(ps.lower, ps.upper)]
        )
    else:  # variables (P, s) with s ≥ |P − center|, Σ s ≤ r
        c = np.array([float(v) for v in ps.center])
        eye = np.eye(n)
        A_ub = np.vstack(
            [np.hstack([eye, -eye]), np.hstack([-eye, -eye]), np.hstack([np.zeros(n), np.ones(n)])[None, :]]
        )
        b_ub = np.concatenate([c, -c, [float(ps.radius)]])
        res = linprog(
            np.concatenate([k, np.zeros(n)]),
            A_ub=A_ub,
            b_ub=b_ub,
            A_eq=np.hstack([np.ones(n), np.zeros(n)])[None, :],
            b_eq=[1.0],
            bounds=[(0, None)] * (2 * n),
        )
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("seed", range(30))
def test_box_and_l1_minimisers_agree_with_vertices_and_scipy(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 5)
    for raw in _random_sets(rng, n):
        ps = PriorSetOracle(raw, n)
        candidates = ps.vertex_candidates()
        assert candidates and all(ps.contains(p) for p in candidates)
        for _ in range(5):
            k = [F(rng.randint(0, 20), 20) for _ in range(n)]
            value, prior = ps.minimise(k)
            assert ps.contains(prior) and sum(p * v for p, v in zip(prior, k)) == value
            assert value == min(sum(p * v for p, v in zip(c, k)) for c in candidates)
            assert abs(float(value) - _linprog_min(ps, k)) <= 1e-9


def test_l1_ball_vertices_of_a_known_case():
    # centre (1/2, 1/2, 0), r = 1/2: the minimum of P_2 is 0 (at the centre); the minimum of −P_2 moves
    # r/2 = 1/4 onto symbol 2 from the dearest symbol: P = (1/4, 1/2, 1/4) or (1/2, 1/4, 1/4)
    ps = PriorSetOracle({"kind": "l1_ball", "center": ["1/2", "1/2", 0], "radius": "1/2"}, 3)
    assert ps.minimise([0, 0, 1])[0] == 0
    value, prior = ps.minimise([0, 0, -1])
    assert value == F(-1, 4) and prior[2] == F(1, 4)
    value, prior = ps.minimise([2, 1, 0])  # take 1/4 from symbol 0 (k = 2) and give it to symbol 2
    assert prior == [F(1, 4), F(1, 2), F(1, 4)] and value == F(1)


# ------------------------------------------------------------------------------ utilities
def test_utilities_of_identity_and_constant_kernels():
    n = 3
    identity = [[F(int(x == y)) for y in range(n)] for x in range(n)]
    constant = [[F(1, 3), F(2, 3), F(0)]] * n
    s = spec(n, 1, {"kind": "simplex"})
    assert utility(identity, s) == 1 and utility(constant, s) == 0
    s["objective"] = {"kind": "expected_loss", "loss": "absolute"}
    assert utility(identity, s) == 0
    assert utility(constant, s) == F(1, 3) * sum(F(1, 3) * abs(x - 0) + F(2, 3) * abs(x - 1) for x in range(n))
    s["objective"] = {"kind": "bayes_vulnerability", "prior": ["1/2", "1/4", "1/4"]}
    assert utility(identity, s) == 1 and utility(constant, s) == F(1, 2)
    s["objective"] = {"kind": "mutual_information"}
    with mpmath.workdps(60):
        assert abs(utility(identity, s) - mpmath.log(3)) < 1e-50 and utility(constant, s) == 0
    P0, P1 = [0.5, 0.25, 0.25], [0.2, 0.3, 0.5]
    for f, expected in [
        ("kl", rel_entr(P0, P1).sum()),
        ("tv", 0.5 * np.abs(np.subtract(P0, P1)).sum()),
        ("hellinger", ((np.sqrt(P0) - np.sqrt(P1)) ** 2).sum()),
        ("chi2", ((np.subtract(P0, P1)) ** 2 / P1).sum()),
        ({"alpha": 2}, (np.square(P0) / P1).sum() - 1),
        ({"alpha": 0.5}, 1 - np.sqrt(np.multiply(P0, P1)).sum()),
    ]:
        s["objective"] = {"kind": "f_divergence", "f": f, "priors": [P0, P1]}
        assert abs(float(utility(identity, s)) - expected) < 1e-14
        assert abs(utility(constant, s)) < 1e-50


def test_worst_case_expected_loss_uses_the_set_maximum():
    # hamming with N = 3, M = 2: symbol 2 has no matching output, so its row loses 1 whatever it reports
    K = [[F(1), F(0)], [F(0), F(1)], [F(1, 2), F(1, 2)]]  # row losses (0, 0, 1)
    s = spec(3, 1, {"kind": "min_mass", "c": "1/10"}, {"kind": "expected_loss", "prior": "worst_case"})
    assert utility(K, s) == F(1, 10) + (1 - F(3, 10))  # the prior vertex c·1 + (1 − 3c) e_2 puts 0.8 on it
    s["objective"]["loss"] = [[0, 1], [1, 0], [0.5, 0.25]]  # row losses (0, 0, 3/8)
    assert utility(K, s) == F(3, 8) * F(8, 10)
