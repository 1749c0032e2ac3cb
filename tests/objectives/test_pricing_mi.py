"""Mutual-information pricing (mechdesign.objectives.pricing_mi) and the column generation built on it.

The references here are independent of the code under test: reduced values are computed from
the rays themselves by a direct formula for mutual information, over every set of a family
(itertools) or over the full list of extreme rays (mechdesign.privacy.extremes); column generation is
compared with the LP over all extreme rays (design_exact).
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from mechdesign.privacy.extremes import extreme_rays
from mechdesign.objectives.pricing_mi import MIFamily, MIPricer, price_family
from mechdesign.privacy.ray_families import families
from mechdesign.spec.models import spec_from_dict
from mechdesign.engines.sublinear import design_column_generation, design_exact, ray_lp


def mi_of_ray(P, r):
    """μ(r) = Σ_x P_x r_x log(r_x / P·r), directly."""
    s = float(P @ r)
    return sum(p * x * math.log(x / s) for p, x in zip(P, r) if p > 0 and x > 0)


def reduced(P, lam, r):
    return (mi_of_ray(P, r) - float(lam @ r)) / float(r.sum())


def make_spec(n, eps, c, P):
    ps = {"kind": "simplex"} if c == 0 else {"kind": "min_mass", "c": str(c)}
    return spec_from_dict(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": ps,
            "objective": {"kind": "mutual_information", "prior": [float(p) for p in P]},
        }
    )


def prior(rng, n, kind):
    if kind == "dirichlet":
        P = rng.dirichlet(np.ones(n))
    elif kind == "integers":
        P = rng.integers(1, 6, n).astype(float)  # small integer weights: pricing is subset sum
    else:
        P = np.arange(1, n + 1, dtype=float)
    return P / P.sum()


def duals(rng, spec, P, how):
    """A dual vector to price at: LP duals over a random part of all rays (near-optimal and degenerate:
    many rays price near zero), the same perturbed, or λ ∝ P (ties everywhere)."""
    R = extreme_rays(spec.prior_set, spec.n, spec.epsilon.value)
    if how == "proportional":
        return P * rng.uniform(0.2, 2.0)
    keep = rng.random(len(R)) < 0.3
    keep[: spec.n] = True
    mu = np.array([mi_of_ray(P, r) for r in R[keep]])
    theta, lam, value, sol, lp = ray_lp(R[keep], mu, spec.solver)
    if theta is None:  # the random part may be infeasible: all rays then
        theta, lam, value, sol, lp = ray_lp(R, np.array([mi_of_ray(P, r) for r in R]), spec.solver)
    if how == "perturbed":
        lam = lam * (1 + 1e-3 * rng.standard_normal(len(lam)))
    return lam


CASES = [
    (n, eps, cnum, kind, how, seed)
    for seed, (n, eps, cnum, kind, how) in enumerate(
        [
            (8, 1.0, 2, "dirichlet", "lp"),
            (9, 0.5, 0, "integers", "lp"),
            (10, 2.0, 5, "linear", "perturbed"),
            (11, 0.7, 9, "dirichlet", "perturbed"),
            (12, 3.0, 2, "integers", "proportional"),
            (12, 1.0, 5, "dirichlet", "lp"),
            (13, 0.5, 9, "integers", "lp"),
            (14, 1.5, 0, "dirichlet", "lp"),
            (14, 0.5, 2, "linear", "lp"),
            (10, 0.3, 5, "integers", "perturbed"),
        ]
    )
]


@pytest.mark.parametrize("n,eps,cnum,kind,how,seed", CASES)
def test_family_pricing_is_certified_by_brute_force(n, eps, cnum, kind, how, seed):
    rng = np.random.default_rng(seed)
    P = prior(rng, n, kind)
    c = Fraction(cnum, 10 * n)
    spec = make_spec(n, eps, c, P)
    lam = duals(rng, spec, P, how)
    for kind_, size, level in families(spec):
        for j in [None] if kind_ == "two" else range(n):
            fam = MIFamily(P, lam, kind_, size, level, j)
            free = fam.free
            brute = -math.inf
            for A in itertools.combinations(free.tolist(), size):
                if kind_ == "two":
                    r = np.full(n, level)
                    r[list(A)] = 1.0
                else:
                    r = np.zeros(n)
                    r[list(A)] = 1.0
                    r[j] = level
                    r = r / r.max()
                brute = max(brute, reduced(P, lam, r))
            for floor in (-math.inf, 0.0, brute - 1e-9, brute + 1e-9):
                sets, vals, cert, root, nodes = price_family(fam, floor, 10**6)
                assert all(
                    len(A) == size and len(set(A.tolist())) == size and set(A.tolist()) <= set(free.tolist())
                    for A in sets
                )
                assert cert >= brute - 1e-12 * (1 + abs(brute)), (kind_, size, j, floor)
                assert root >= brute - 1e-12 * (1 + abs(brute))
                # exact: the search finishes, so the certificate is the best set (or the floor)
                assert cert <= max(brute, floor) + 1e-10
                if brute > floor + 1e-10:
                    assert len(vals) and vals.max() == pytest.approx(brute, abs=1e-10)
                    r = np.full(n, level) if kind_ == "two" else np.zeros(n)
                    r[sets[int(np.argmax(vals))]] = 1.0
                    if kind_ == "zero":
                        r[j] = level
                        r = r / r.max()
                    assert reduced(P, lam, r) == pytest.approx(vals.max(), abs=1e-10)
            # a small node limit keeps the certificate valid (looser)
            sets, vals, cert, root, nodes = price_family(fam, 0.0, 2)
            assert cert >= brute - 1e-12 * (1 + abs(brute))


@pytest.mark.parametrize("n,eps,cnum,kind,how,seed", CASES[:6])
def test_pricer_round_bounds_every_extreme_ray(n, eps, cnum, kind, how, seed):
    rng = np.random.default_rng(100 + seed)
    P = prior(rng, n, kind)
    spec = make_spec(n, eps, Fraction(cnum, 10 * n), P)
    lam = duals(rng, spec, P, how)
    R = extreme_rays(spec.prior_set, n, eps)
    g_true = max(reduced(P, lam, r) for r in R)
    listed = {tuple(np.round(r, 12)) for r in R}
    pricer = MIPricer(P, families(spec))
    for floor in (0.0, 1e-9, abs(g_true) / 2):
        for out_of_time in (False, True):
            new, g, note = pricer.price(lam, floor, out_of_time)
            assert g >= g_true - 1e-12 * (1 + abs(g_true))
            for r in new:
                for row in np.atleast_2d(r):
                    assert tuple(np.round(row, 12)) in listed  # an extreme ray of the cone
                    assert reduced(P, lam, row) > floor - 1e-12


@pytest.mark.parametrize(
    "n,eps,cnum,kind,seed",
    [
        (10, 0.5, 2, "dirichlet", 0),
        (11, 1.0, 5, "integers", 1),
        (12, 2.0, 9, "linear", 2),
        (12, 0.5, 0, "dirichlet", 3),
        (12, 1.0, 2, "integers", 4),
        (9, 3.0, 5, "dirichlet", 5),
    ],
)
def test_column_generation_matches_all_rays_lp(n, eps, cnum, kind, seed):
    rng = np.random.default_rng(seed)
    P = prior(rng, n, kind)
    spec = make_spec(n, eps, Fraction(cnum, 10 * n), P)
    ex, cg = design_exact(spec), design_column_generation(spec)
    assert ex.value is not None and cg.value is not None
    assert cg.value <= ex.value * (1 + 1e-9) + 1e-12  # a feasible solution never beats the optimum
    assert cg.bound >= ex.value * (1 - 1e-9) - 1e-12  # the certified bound bounds it
    assert cg.value >= ex.value * (1 - 1e-6)
    assert cg.bound <= ex.value * (1 + 1e-6)


def test_n50_dirichlet_prior_reaches_certified_gap():
    from mechdesign import design

    n = 50
    P = np.random.default_rng(0).dirichlet(np.ones(n))
    P = (P / P.sum()).round(10)
    P[-1] = 1 - P[:-1].sum()
    r = design(
        {
            "alphabet": n,
            "epsilon": 2.0,
            "prior_set": {"kind": "min_mass", "c": f"1/{5 * n}"},
            "objective": {"kind": "mutual_information", "prior": P.tolist()},
        }
    )
    assert "column generation" in r.solve.method
    assert r.status.value == "optimal"
    assert r.certificate.gap <= 1e-6 * r.objective
    assert r.solve.seconds < 30
