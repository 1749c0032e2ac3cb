"""f-divergence column generation (mechdesign.pricing_fdiv): exact pricing by the likelihood-ratio sweep.

References are independent of the sweep: the brute-force maximum of the reduced value over every
extreme ray listed by mechdesign.extremes (structured lists, themselves checked against cdd in
test_extremes.py), and the exact ray LP over all of them (sublinear.design_exact).
"""
import numpy as np
import pytest

from mechdesign.extremes import extreme_rays
from mechdesign.pricing_fdiv import FDivPricer
from mechdesign.ray_families import families
from mechdesign.spec import Spec
from mechdesign.sublinear import column_utility, design_column_generation, design_exact

F_KINDS = ["kl", "tv", "hellinger", "chi2", {"alpha": 0.5}, {"alpha": 2.5}]


def _dist(rng, n, zeros=False):
    p = rng.dirichlet(np.ones(n))
    p = np.round(p * 1000).astype(int)
    p[p == 0] = 0 if zeros else 1
    p[int(np.argmax(p))] += 1000 - p.sum()
    return [f"{x}/1000" for x in p]


def _spec(n, eps, prior_set, f, P0, P1, **extra):
    return Spec.model_validate({"alphabet": n, "epsilon": eps, "prior_set": prior_set,
                                "objective": {"kind": "f_divergence", "f": f, "priors": [P0, P1]}, **extra})


@pytest.mark.parametrize("f", F_KINDS, ids=str)
def test_pricing_equals_brute_force_over_all_rays(f):
    """g returned by the sweep = max over ALL extreme rays of (μ(r) − λ·r)/(1·r), for random λ."""
    rng = np.random.default_rng(F_KINDS.index(f))
    checked = 0
    for trial in range(12):
        n = int(rng.integers(3, 10))
        prior_set = ({"kind": "simplex"} if trial % 3 == 0
                     else {"kind": "min_mass", "c": f"{int(rng.integers(0, 8))}/{10 * n}"})
        eps = float(rng.choice([0.3, 1.0, 2.0]))
        zeros = isinstance(f, str) and f in ("tv", "hellinger")   # P1 may miss symbols for bounded f'(∞)
        spec = _spec(n, eps, prior_set, f, _dist(rng, n), _dist(rng, n, zeros))
        fams = families(spec)
        if not fams:   # e^ε c ≥ 1: the cone is the orthant, nothing to price
            continue
        R = extreme_rays(spec.prior_set, n, eps)
        mu = column_utility(spec)
        lam = rng.normal(size=n) * 0.3
        brute = float(np.max((mu(R) - R @ lam) / R.sum(axis=1)))
        new, g, _ = FDivPricer(spec, fams).price(lam, -np.inf)
        assert g == pytest.approx(brute, rel=1e-9, abs=1e-12)
        Rn = np.vstack(new)   # the rays it returns are extreme rays with the values it claims
        assert float(np.max((mu(Rn) - Rn @ lam) / Rn.sum(axis=1))) == pytest.approx(brute, rel=1e-9, abs=1e-12)
        listed = {tuple(np.round(r, 12)) for r in R}
        assert all(tuple(np.round(r, 12)) in listed for r in Rn)
        checked += 1
    assert checked >= 6


@pytest.mark.parametrize("f", F_KINDS, ids=str)
def test_column_generation_matches_exact_ray_lp(f):
    """Column generation reaches the optimum of the LP over all listed rays (N = 10), with a valid bound."""
    rng = np.random.default_rng(7 + len(str(f)))
    for prior_set in ({"kind": "simplex"}, {"kind": "min_mass", "c": "1/40"}):
        spec = _spec(10, float(rng.choice([0.5, 1.0, 2.0])), prior_set, f, _dist(rng, 10), _dist(rng, 10))
        cg, ex = design_column_generation(spec), design_exact(spec)
        assert cg.value == pytest.approx(ex.value, rel=1e-7, abs=1e-10)
        assert cg.bound >= ex.value - 1e-12 and ex.bound >= ex.value - 1e-12
        assert cg.bound - cg.value <= 1e-7 * max(1.0, cg.value)
