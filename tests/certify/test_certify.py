"""The exact certificate: rational lower bounds of e^ε, the exact (ε,𝒫)-PML check, and repair.

The checks here are written independently of mechdesign.certify.exact (plain Fractions, vertices of
each prior set enumerated by hand), so a bug there cannot hide behind itself.
"""

import math
from fractions import Fraction
from itertools import product

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import design
from mechdesign.certify.exact import ExactKernel, check_pml, repair, to_grid
from mechdesign.spec.expr import exp_lower_bound
from mechdesign.spec.models import Box, L1Ball, MinMass, Point, Simplex


def independent_leakage_ratio(K, vertices):
    """max over y and over the given prior vertices of max_x K_x(y) / Σ_x P(x) K_x(y)."""
    worst = Fraction(0)
    for y in range(len(K[0])):
        col = [row[y] for row in K]
        if max(col) == 0:
            continue
        for v in vertices:
            denom = sum(p * k for p, k in zip(v, col))
            if denom == 0:
                return math.inf
            worst = max(worst, max(col) / denom)
    return worst


EPSILONS = {  # text -> ε computed independently in mpmath
    "1": lambda: mpmath.mpf(1),
    "0.5": lambda: mpmath.mpf(1) / 2,
    "log(10/3)": lambda: mpmath.log(mpmath.mpf(10) / 3),
    "2*log(2) + sqrt(2)": lambda: 2 * mpmath.log(2) + mpmath.sqrt(2),
    "700": lambda: mpmath.mpf(700),
    "1e-12": lambda: mpmath.mpf(1) / 10**12,
}


@pytest.mark.parametrize("text", list(EPSILONS))
def test_exp_lower_bound_is_below_and_close_to_e_to_the_eps(text):
    with mpmath.workprec(400):
        true = mpmath.exp(EPSILONS[text]())
        bound = exp_lower_bound(text)
        as_mp = mpmath.mpf(bound.numerator) / bound.denominator
        assert as_mp <= true
        assert (true - as_mp) / true < mpmath.mpf(2) ** -140


def test_kernel_exceeding_epsilon_by_relative_1e_12_is_rejected():
    # Example 1 of the Dobrushin paper (ε = log 2, c = 1/5) is tight: ratio exactly 2 on both outputs.
    ps = MinMass(kind="min_mass", c=Fraction(1, 5))
    K = [[Fraction(8, 11), Fraction(3, 11)], [Fraction(3, 11), Fraction(8, 11)]]
    assert check_pml(ExactKernel.from_fractions(K), ps, Fraction(2)).feasible
    # push the top-left entry up so the leakage ratio grows by a relative 1e-12
    d = Fraction(1, 10**12) * Fraction(8, 11)
    bad = [[K[0][0] + d, K[0][1] - d], K[1]]
    ratio = independent_leakage_ratio(bad, [[Fraction(1, 5), Fraction(4, 5)], [Fraction(4, 5), Fraction(1, 5)]])
    assert 2 < ratio < 2 * (1 + Fraction(2, 10**12))
    check = check_pml(ExactKernel.from_fractions(bad), ps, Fraction(2))
    assert not check.feasible
    assert check.worst_ratio == ratio


def test_non_stochastic_kernel_is_rejected():
    K = ExactKernel.from_fractions([[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 2), Fraction(1, 3)]])
    check = check_pml(K, Simplex(kind="simplex"), Fraction(3))
    assert not check.stochastic and not check.feasible


def test_to_grid_gives_exact_doubles_with_rows_summing_to_one():
    rng = np.random.default_rng(1)
    K = rng.dirichlet(np.ones(7), size=5)
    K[0, 1] += K[0, 0]
    K[0, 0] = -1e-14  # solver noise around an exact zero
    K[1, 2] += K[1, 1]
    K[1, 1] = 1e-300
    exact = to_grid(K)
    assert exact.is_stochastic()
    F = exact.fractions()
    assert all(sum(row) == 1 for row in F)
    assert all(Fraction(float(v)) == v for row in F for v in row)
    assert np.abs(exact.to_float() - np.clip(K, 0, 1)).max() < 1e-15 * 8
    assert exact.numerators[0, 0] == 0 and exact.numerators[1, 1] == 0


PRIOR_SETS = [
    (Simplex(kind="simplex"), lambda n: [[Fraction(int(i == j)) for i in range(n)] for j in range(n)]),
    (
        MinMass(kind="min_mass", c=Fraction(1, 10)),
        lambda n: [[Fraction(1, 10) + (1 - Fraction(n, 10)) * (i == j) for i in range(n)] for j in range(n)],
    ),
    (
        Point(kind="point", prior=[Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]),
        lambda n: [[Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]],
    ),
]


def _box_vertices(lower, upper):
    """Vertices of {l ≤ P ≤ u, ΣP = 1} by brute force: all but one coordinate at a bound."""
    n = len(lower)
    out = []
    for free in range(n):
        for choice in product([0, 1], repeat=n - 1):
            p = [None] * n
            k = 0
            for i in range(n):
                if i == free:
                    continue
                p[i] = upper[i] if choice[k] else lower[i]
                k += 1
            p[free] = 1 - sum(v for v in p if v is not None)
            if lower[free] <= p[free] <= upper[free]:
                out.append(p)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=3, max_size=3).filter(
        lambda rows: all(sum(r) > 0 for r in rows)
    ),
    st.integers(0, 3),
)
def test_check_matches_brute_force_over_vertices(rows, which):
    K = [[Fraction(v, sum(r)) for v in r] for r in rows]
    lower, upper = [Fraction(1, 10), Fraction(1, 5), Fraction(0)], [Fraction(1, 2), Fraction(3, 5), Fraction(1)]
    cases = PRIOR_SETS + [(Box(kind="box", lower=lower, upper=upper), lambda n: _box_vertices(lower, upper))]
    ps, verts = cases[which]
    ratio = independent_leakage_ratio(K, verts(3))
    check = check_pml(ExactKernel.from_fractions(K), ps, Fraction(3))
    if ratio == math.inf:
        assert not check.feasible
    else:
        assert check.feasible == (ratio <= 3)
        assert check.worst_ratio == ratio


def test_l1_ball_worst_prior_matches_a_grid_search():
    center = [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]
    ps = L1Ball(kind="l1_ball", center=center, radius=Fraction(1, 2))
    K = [[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 5), Fraction(4, 5)], [Fraction(1, 10), Fraction(9, 10)]]
    check = check_pml(ExactKernel.from_fractions(K), ps, Fraction(100))
    # grid over the simplex with step 1/100, kept when within the ball
    best = Fraction(0)
    for a in range(101):
        for b in range(101 - a):
            P = [Fraction(a, 100), Fraction(b, 100), Fraction(100 - a - b, 100)]
            if sum(abs(p - q) for p, q in zip(P, center)) <= ps.radius:
                best = max(best, independent_leakage_ratio(K, [P]))
    assert best <= check.worst_ratio <= best * Fraction(101, 100)


def test_repair_makes_a_violating_kernel_private_by_mixing():
    ps = Simplex(kind="simplex")
    bound = exp_lower_bound("1")
    K = to_grid(np.array([[0.9, 0.1], [0.1, 0.9]]))  # ratio 9 > e
    fixed, w, check = repair(K, ps, bound)
    assert check.feasible and 0 < w < 1
    assert independent_leakage_ratio(fixed.fractions(), [[1, 0], [0, 1]]) <= bound
    # randomized response is the smallest mixture that is e-LDP: (1−w)·0.9 + w/2 = e/(1+e)
    assert float(w) == pytest.approx((0.9 - math.e / (1 + math.e)) / 0.4, rel=1e-9)


def test_epsilon_zero_repair_gives_the_constant_kernel():
    fixed, w, check = repair(to_grid(np.array([[0.7, 0.3], [0.2, 0.8]])), Simplex(kind="simplex"), Fraction(1))
    assert check.feasible and w == 1
    assert fixed.fractions()[0] == fixed.fractions()[1]


@pytest.mark.parametrize("kind", ["min_mass", "simplex", "point", "box", "l1_ball", "hull"])
def test_every_prior_set_kind_gives_a_certified_kernel(kind):
    n = 4
    prior_sets = {
        "min_mass": {"kind": "min_mass", "c": 0.1},
        "simplex": {"kind": "simplex"},
        "point": {"kind": "point", "prior": [0.1, 0.2, 0.3, 0.4]},
        "box": {"kind": "box", "lower": [0.1, 0.1, 0.05, 0.05], "upper": [0.5, 0.5, 0.6, 0.6]},
        "l1_ball": {"kind": "l1_ball", "center": [0.25] * 4, "radius": 0.3},
        "hull": {"kind": "hull", "priors": [[0.25] * 4, [0.4, 0.3, 0.2, 0.1], [0.1, 0.1, 0.1, 0.7]]},
    }
    for objective in [
        {"kind": "dobrushin"},
        {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
        {"kind": "expected_loss", "loss": "squared", "prior": "uniform"},
    ]:
        result = design({"alphabet": n, "epsilon": 0.9, "prior_set": prior_sets[kind], "objective": objective})
        assert result.is_ok, (kind, objective, result.status)
        assert result.certificate.leakage <= 0.9 + 1e-12
        assert result.certificate.gap <= 1e-7
        for backend in ["cvxpy"]:
            other = design(
                {
                    "alphabet": n,
                    "epsilon": 0.9,
                    "prior_set": prior_sets[kind],
                    "objective": objective,
                    "solver": {"backend": backend},
                }
            )
            assert other.objective == pytest.approx(result.objective, abs=1e-8)
