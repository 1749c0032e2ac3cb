"""Sublinear objectives (mutual information, f-divergences, Bayes vulnerability): mechdesign.engines.sublinear."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from helpers.specs import spec
from mechdesign import bounds, design
from mechdesign.certify.exact import check_pml
from mechdesign.spec.models import SpecError, spec_from_dict
from mechdesign.engines.sublinear import design_column_generation, design_exact


def assert_certified(r):
    assert r.certificate.feasible
    assert check_pml(r.exact_kernel, r.spec.prior_set, r.spec.epsilon.exp_lower_bound()).feasible
    assert r.exact_kernel.is_stochastic()


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_binary_ldp_mi_is_randomized_response(eps):
    r = design(spec(2, eps, {"kind": "simplex"}, {"kind": "mutual_information"}))
    assert r.is_ok
    a = math.exp(eps) / (1 + math.exp(eps))
    K = r.kernel[np.argsort(-r.kernel[:, 0])] if r.kernel[0, 0] >= r.kernel[0, 1] else r.kernel[:, ::-1]
    assert np.allclose(K, [[a, 1 - a], [1 - a, a]], atol=1e-9)
    assert_certified(r)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 5), seed=st.integers(0, 10_000), frac=st.floats(0.05, 0.95))
def test_point_prior_mi_is_theorem4_mechanism(n, seed, frac):
    rng = np.random.default_rng(seed)
    P = [Fraction(int(v)) for v in rng.integers(1, 20, n)]
    P = [p / sum(P) for p in P]
    pmin = float(min(P))
    eps = frac * (-math.log(1 - pmin))  # high-privacy regime of the envelopes paper, Theorem 4
    r = design(
        spec(
            n,
            eps,
            {"kind": "point", "prior": [str(p) for p in P]},
            {"kind": "mutual_information", "prior": [str(p) for p in P]},
        )
    )
    assert r.is_ok
    e = math.exp(eps)
    Pf = [float(p) for p in P]
    T = np.array([[1 - e * (1 - Pf[i]) if i == j else e * Pf[j] for j in range(n)] for i in range(n)])
    # columns come in ray order: match each column of T to one of K
    K = r.kernel
    assert K.shape == (n, n)
    for j in range(n):
        assert np.abs(K - T[:, [j]]).max(axis=0).min() < 1e-9
    assert abs(r.objective - r.certificate.dual_bound) < 1e-9
    assert_certified(r)


def test_example3_kl_below_corollary1():
    d = 0.1
    P0 = [0.25 - d, 0.25 + d, 0.25, 0.25]
    P1 = [0.25 + d, 0.25 - d, 0.25, 0.25]
    for eps, c in [(1.0, 0.1), (0.5, 0.05), (2.0, 0.12)]:
        r = design(spec(4, eps, {"kind": "min_mass", "c": c}, {"kind": "f_divergence", "f": "kl", "priors": [P0, P1]}))
        assert r.is_ok
        # Corollary 1 with TV(P0, P1) = 2d (the two priors differ by d in two coordinates; the
        # paper's Example 3 writes the parameter gap delta = d in place of TV)
        bound = bounds.xi(eps, c, 4) * math.log((1 - 4 * c) * math.exp(eps) + 1) * 2 * d
        assert r.objective <= bound + 1e-12
        cf = r.certificate.closed_form
        assert cf is not None and abs(cf.value - bound) < 1e-12 and "Corollary 1" in cf.name
        data = r.to_json()
        assert data["certificate"]["closed_form"]["value"] == pytest.approx(bound)
        assert data["objective"] <= data["certificate"]["closed_form"]["value"]
        assert len(data["rays"]) == len(data["kernel"][0])
        assert_certified(r)


@pytest.mark.parametrize("f", ["kl", "tv", "hellinger", "chi2", {"alpha": 0.5}, {"alpha": 2}])
def test_f_divergences_certified(f):
    P0 = [0.1, 0.2, 0.3, 0.4]
    P1 = [0.4, 0.3, 0.2, 0.1]
    r = design(spec(4, 1.0, {"kind": "min_mass", "c": 0.05}, {"kind": "f_divergence", "f": f, "priors": [P0, P1]}))
    assert r.is_ok and r.objective > 0
    assert_certified(r)


def test_bayes_vulnerability_and_other_prior_sets():
    for ps in [
        {"kind": "simplex"},
        {"kind": "min_mass", "c": 0.05},
        {"kind": "hull", "priors": [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2]]},
        {"kind": "box", "lower": [0.1, 0.1, 0.1], "upper": [0.6, 0.6, 0.6]},
        {"kind": "l1_ball", "center": [0.3, 0.3, 0.4], "radius": 0.2},
    ]:
        r = design(spec(3, 1.0, ps, {"kind": "bayes_vulnerability", "prior": [0.2, 0.3, 0.5]}))
        assert r.is_ok, ps
        assert 0.5 <= r.objective <= 1.0
        assert_certified(r)
    # LDP bound: V <= e^eps max P ... and V of the LDP optimum at N = 2 is e^eps/(1+e^eps)
    r = design(spec(2, 1.0, {"kind": "simplex"}, {"kind": "bayes_vulnerability"}))
    assert r.objective == pytest.approx(math.exp(1) / (1 + math.exp(1)), abs=1e-9)


def test_fixed_output_size_merges_columns_and_keeps_bound():
    base = spec(
        5, 1.0, {"kind": "min_mass", "c": 0.02}, {"kind": "mutual_information", "prior": [0.1, 0.2, 0.2, 0.2, 0.3]}
    )
    full = design(base)
    two = design({**base, "output_size": 2})
    assert two.kernel.shape == (5, 2)
    assert two.objective <= full.objective + 1e-12
    # a valid bound, never looser than auto's (here exact: vertex enumeration, mechdesign.engines.fixed_outputs)
    assert two.objective - 1e-9 <= two.certificate.dual_bound <= full.certificate.dual_bound + 1e-12
    assert_certified(two)
    wide = design({**base, "output_size": 9})
    assert wide.kernel.shape == (5, 9) and wide.objective == pytest.approx(full.objective)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(3, 7), c_num=st.integers(0, 8), eps=st.floats(0.2, 2.5), seed=st.integers(0, 1000))
def test_column_generation_agrees_with_exact(n, c_num, eps, seed):
    rng = np.random.default_rng(seed)
    P = rng.integers(1, 10, n).astype(float)
    P = (P / P.sum()).round(6)
    P[-1] = 1 - P[:-1].sum()
    c = Fraction(c_num, 10 * n)
    s = spec_from_dict(
        spec(n, eps, {"kind": "min_mass", "c": str(c)}, {"kind": "mutual_information", "prior": P.tolist()})
    )
    ex, cg = design_exact(s), design_column_generation(s)
    assert cg.value <= ex.value + 1e-9  # a feasible kernel never beats the optimum
    assert cg.bound >= ex.value - 1e-9  # the certified bound is an upper bound
    # For a non-uniform prior the pricing is a relaxation (subset-sum-like): the heuristic columns
    # may stop short of the optimum, and what is promised is the certified bracket above. Measured
    # over 140 random cases: value within 3.3e-4 relative (hypothesis once found 1.2e-3), while the
    # relaxation's bound was up to 35% above the optimum; design() uses the exact method up to
    # N = 13 and reports the gap (status suboptimal) beyond.
    assert cg.value >= ex.value * (1 - 1e-2)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(3, 8),
    c_num=st.integers(0, 9),
    eps=st.floats(0.2, 3.0),
    seed=st.integers(0, 1000),
    dirichlet=st.booleans(),
)
# hypothesis 6.80's derandomized draw in the lowest-versions run: the quick pricing pass met a ray
# already in the LP (reduced value 1e-10, above the floor but within HiGHS's dual tolerance) and the loop
# stopped on its relaxation bound, 6.6e-4 above the optimum; c_num = 3 at ε = 0.2031 failed the same way
@example(n=8, c_num=1, eps=0.2031250000000003, seed=88, dirichlet=False)
@example(n=8, c_num=3, eps=0.2031, seed=88, dirichlet=False)
def test_column_generation_nonuniform_prior_is_exact(n, c_num, eps, seed, dirichlet):
    # exact pricing (branch and bound over the items of each ray family): column generation reaches
    # the optimum of the extreme-ray LP and certifies it (value and bound both within 1e-6 relative)
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n)) + 0.01 if dirichlet else rng.integers(1, 10, n).astype(float)
    P = (P / P.sum()).round(6)
    P[-1] = 1 - P[:-1].sum()
    c = Fraction(c_num, 10 * n)
    s = spec_from_dict(
        spec(n, eps, {"kind": "min_mass", "c": str(c)}, {"kind": "mutual_information", "prior": P.tolist()})
    )
    ex, cg = design_exact(s), design_column_generation(s)
    assert cg.value <= ex.value + 1e-9
    assert cg.value >= ex.value * (1 - 1e-6)
    assert ex.value - 1e-9 <= cg.bound <= ex.value * (1 + 1e-6) + 1e-12


def test_column_generation_nonuniform_prior_n50_gap():
    n = 50
    P = np.random.default_rng(0).dirichlet(np.full(n, 2.0)).round(8)
    P[-1] = 1 - P[:-1].sum()
    r = design(spec(n, 3.0, {"kind": "min_mass", "c": 0.9 / n}, {"kind": "mutual_information", "prior": P.tolist()}))
    assert "column generation" in r.solve.method
    assert r.status.value == "optimal"
    assert r.certificate.gap <= 1e-6 * r.objective
    assert_certified(r)


def test_column_generation_uniform_prior_n50_gap():
    r = design(spec(50, 1.0, {"kind": "min_mass", "c": 0.01}, {"kind": "mutual_information"}))
    assert r.status.value == "optimal"
    assert r.certificate.gap <= 1e-6 * r.objective
    assert "column generation" in r.solve.method
    assert_certified(r)
    exact = design(spec(12, 1.0, {"kind": "min_mass", "c": 0.01}, {"kind": "mutual_information"}))
    cg = design_column_generation(
        spec_from_dict(spec(12, 1.0, {"kind": "min_mass", "c": 0.01}, {"kind": "mutual_information"}))
    )
    assert cg.value == pytest.approx(exact.objective, rel=1e-9)


def test_spec_validation():
    with pytest.raises(SpecError, match="objective.prior"):
        spec_from_dict(spec(3, 1, {"kind": "simplex"}, {"kind": "mutual_information", "prior": [0.5, 0.5]}))
    with pytest.raises(SpecError, match="objective.priors"):
        spec_from_dict(spec(3, 1, {"kind": "simplex"}, {"kind": "f_divergence", "priors": [[0.5, 0.5], [0.5, 0.5]]}))
    with pytest.raises(SpecError, match="objective.f"):
        spec_from_dict(
            spec(2, 1, {"kind": "simplex"}, {"kind": "f_divergence", "f": "js", "priors": [[0.5, 0.5], [0.5, 0.5]]})
        )
    with pytest.raises(SpecError, match="absolutely continuous"):
        spec_from_dict(spec(2, 1, {"kind": "simplex"}, {"kind": "f_divergence", "priors": [[0.5, 0.5], [1, 0]]}))
    with pytest.raises(SpecError, match="unknown key"):
        spec_from_dict(spec(2, 1, {"kind": "simplex"}, {"kind": "bayes_vulnerability", "foo": 1}))
    assert spec_from_dict(spec(4, 1, {"kind": "simplex"}, {"kind": "mutual_information"})).m == 4


def test_too_large_for_exact_is_a_clear_error():
    from mechdesign.spec.errors import InputError

    # mutual information under a point prior past the exact threshold (16·2^15 rays) has no scalable method
    with pytest.raises(InputError, match=r"mutual_information over a point prior set .* \(N = 16 needs"):
        design(spec(16, 1.0, {"kind": "point", "prior": [1 / 16] * 16}, {"kind": "mutual_information"}))


@pytest.mark.parametrize("eps", [0, 30, 800])
@pytest.mark.parametrize(
    "ps",
    [
        {"kind": "simplex"},
        {"kind": "min_mass", "c": 0.1},
        {"kind": "min_mass", "c": "1/3"},
        {"kind": "point", "prior": [0.2, 0.3, 0.5]},
        {"kind": "hull", "priors": [[0.2, 0.3, 0.5], [0.3, 0.3, 0.4]]},
    ],
)
def test_extreme_epsilons(eps, ps):
    r = design(spec(3, eps, ps, {"kind": "mutual_information"}))
    assert r.is_ok
    assert r.objective == pytest.approx(0.0 if eps == 0 else math.log(3), abs=1e-9)
    assert_certified(r)
