"""Certified pricing of frequency estimation (mechdesign.objectives.pricing_frequency) against brute force.

Reference: every extreme ray of the simplex / min_mass cone, written out in tests/helpers/frequency_rays.py from
the Dobrushin paper's Remark 2 (two-level rays m_q + (1 − m_q)1_A, m_q = (1 − e^ε c q)/(e^ε (1 − c q)), for
e^ε c q < 1) and, for min_mass, the rays 1_A + w e_j with |A| = a = ⌈t⌉ − 1, w = t − a, t = e^−ε/c (Lemma 1: zeros); the count is checked against the
project's own ray list, and the reduced value max_r (‖W r‖²/(Pᵀr) − λ·r)/(1·r) is computed ray by ray.
"""

import math

import numpy as np
import pytest

from helpers.frequency_rays import all_rays

from mechdesign import load_spec
from mechdesign.objectives.pricing_frequency import frequency_families, price_all
from mechdesign.privacy.extremes import extreme_rays
from mechdesign.privacy.ray_families import families


def brute_h(R, W, P, lam):
    G = np.sum((R @ W) ** 2, axis=1) / (R @ P)
    return float(np.max((G - R @ lam) / R.sum(axis=1)))


def case(n, c, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    prior_set = {"kind": "min_mass", "c": c} if c > 0 else "simplex"
    spec = load_spec(
        {
            "alphabet": n,
            "epsilon": 1.0,
            "prior_set": prior_set,
            "objective": {"kind": "frequency_estimation", "prior": P.tolist()},
        }
    )
    A = rng.normal(size=(n, n))
    W = (A + A.T) / 2 + 2 * np.eye(n)
    lam = rng.normal(size=n)
    return spec, P, W, lam


@pytest.mark.parametrize("n,c,seed", [(8, 0.0, 1), (9, 1 / 18, 2), (10, 1 / 20, 3), (10, 0.0, 4)])
def test_pricing_maximum_equals_brute_force(n, c, seed):
    spec, P, W, lam = case(n, c, seed)
    R = all_rays(n, 1.0, c)
    assert len(R) == len(extreme_rays(spec.prior_set, n, 1.0))  # the families are every ray
    h = brute_h(R, W, P, lam)
    res = price_all(W, P, lam, frequency_families(families(spec), n), prune=-math.inf)
    assert res.open_families == 0
    assert res.certified >= h
    assert res.certified <= h + 1e-9 * (1 + abs(h))
    assert res.values.max() == pytest.approx(h, rel=1e-12, abs=1e-12)
    # the returned rays are rays of the cone, with the reduced values reported
    assert brute_h(res.rays[:1], W, P, lam) == pytest.approx(res.values[0], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n,c,seed", [(10, 1 / 20, 5), (10, 0.0, 6)])
def test_node_limit_one_still_bounds_from_above(n, c, seed):
    spec, P, W, lam = case(n, c, seed)
    h = brute_h(all_rays(n, 1.0, c), W, P, lam)
    res = price_all(W, P, lam, frequency_families(families(spec), n), prune=-math.inf, node_limit=1)
    assert res.certified >= h
    stopped = price_all(W, P, lam, frequency_families(families(spec), n), prune=-math.inf, deadline=0.0)
    assert stopped.certified >= h


def test_prune_level_is_a_valid_certificate():
    """Searching only above a cut certifies max(cut, best), still ≥ the true maximum."""
    spec, P, W, lam = case(10, 1 / 20, 7)
    h = brute_h(all_rays(10, 1.0, 1 / 20), W, P, lam)
    res = price_all(W, P, lam, frequency_families(families(spec), 10), prune=h + 1.0)
    assert len(res.rays) == 0
    assert res.certified >= h + 1.0


def test_a_node_with_nothing_left_to_choose_is_its_one_set():
    """k = 0 (every item of the set fixed in): the node is a single set, evaluated exactly."""
    from mechdesign.objectives.pricing_frequency import _Context, _enumerate

    spec, P, W, lam = case(8, 0.0, 8)
    fam = frequency_families(families(spec), 8)[2]  # q = 3
    X, vals = _enumerate(_Context(W, P, lam), fam, [0, 1, 2], np.arange(3, 8), 0)
    r = np.where(np.arange(8) < 3, 1.0, fam.level)
    assert X.shape == (1, 8) and X[0, :3].sum() == 3 and X[0, 3:].sum() == 0
    assert vals[0] == pytest.approx(float(np.sum((r @ W) ** 2) / (r @ P) - r @ lam), rel=1e-12)
