"""The pool's dual (mechdesign.objectives.frequency_pool_dual): weights on a pool of rays from the barrier method on
the Lagrangian dual of the A-optimal design program restricted to the pool.

References: every extreme ray of the simplex / min_mass cone and the A-optimal optimum over any set of them from an
independent cvxpy program (tests/helpers/frequency_rays.py). The weights are checked as a design (its row sums and
its value tr J(θ)⁻¹ − ‖P‖², computed here from the rays) and through the use the engine makes of them: the
restricted program over the rays of largest weight reaches the optimum over the whole pool.
"""

import time

import numpy as np
import pytest

from helpers.frequency_rays import all_rays, independent_design
from helpers.specs import spec

from mechdesign import load_spec
from mechdesign.engines.frequency_column_generation import _master
from mechdesign.objectives.frequency_additive_dual import additive_dual_bound
from mechdesign.objectives.frequency_pool_dual import pool_dual_weights
from mechdesign.objectives.pricing_frequency import frequency_families
from mechdesign.privacy.ray_families import families, start_rays


def _start(n, c, seed):
    """Prior, spec's start rays and the additive dual's parameters (an empty head): the start of the pool's dual."""
    P = np.random.default_rng(seed).dirichlet(np.ones(n))
    prior_set = {"kind": "min_mass", "c": c} if c > 0 else "simplex"
    s = load_spec(spec(n, 1.0, prior_set, {"kind": "frequency_estimation", "prior": P.tolist()}))
    fams = frequency_families(families(s), n)
    starts = start_rays(s, families(s))
    # the deadline only guards against a hang: the cutting planes stop when no ray has a positive reduced value
    dual = additive_dual_bound(fams, P, starts, time.perf_counter() + 600)
    return P, starts, np.asarray(dual.params, float)


def _value(R, theta, P):
    J = sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, theta))
    return float(np.trace(np.linalg.inv(J)) - P @ P)


@pytest.mark.parametrize("n,c,seed,share", [(8, 0.0, 1, 1.0), (9, 0.0, 2, 0.3), (8, 1 / 16, 3, 0.5)])
def test_the_pool_dual_weights_a_design_near_the_pools_optimum(n, c, seed, share):
    """Over every ray (share 1) or a random share of them with the start rays (so that the pool holds a feasible
    design), from the additive dual's point with D raised by 10 % (a start off the pool's optimum): the weights are
    a design within 1e-3 of feasibility whose value is within 1e-3 of the pool's optimum (independent cvxpy program
    over the pool), the restricted program over its 1.2·N(N+1)/2 heaviest rays reaches that optimum to 1e-7, and the
    pool's optimum is never below the optimum over every ray."""
    P, starts, x = _start(n, c, seed)
    x[:n] *= 1.1
    R_all = all_rays(n, 1.0, c)
    rng = np.random.default_rng(seed)
    pool = R_all if share == 1.0 else np.unique(np.vstack([R_all[rng.random(len(R_all)) < share], starts]), axis=0)
    opt_all, _ = independent_design(R_all, P)
    opt_pool, _ = independent_design(pool, P)
    assert opt_pool >= opt_all * (1 - 1e-7)
    theta = pool_dual_weights(pool, P, x, None, time.perf_counter() + 600)
    assert theta is not None and np.all(np.isfinite(theta)) and np.all(theta > 0)
    assert np.abs(pool.T @ theta - 1).max() <= 1e-3
    assert abs(_value(pool, theta, P) - opt_pool) <= 1e-3 * opt_pool
    top = np.argsort(-theta)[: int(np.ceil(1.2 * n * (n + 1) / 2))]
    R = pool[top]
    w = _master(R, theta[top] / (R.T @ theta[top]).max(), P)
    assert np.abs(R.T @ w - 1).max() <= 1e-9 and np.all(w >= 0)
    assert _value(R, w, P) == pytest.approx(opt_pool, rel=1e-7)


def test_the_pool_dual_stops_at_its_deadline_with_weights_and_refuses_a_start_that_is_not_positive_definite():
    """A deadline already past returns the start's weights μ/(−c_r) (positive, finite); a start whose S has a
    negative eigenvalue (D = −1 on every symbol, u = λ = 0: S = −½ I) returns None."""
    n = 7
    P, starts, x = _start(n, 0.0, 4)
    pool = all_rays(n, 1.0, 0.0)
    theta = pool_dual_weights(pool, P, x, None, time.perf_counter() - 1.0)
    assert theta is not None and np.all(np.isfinite(theta)) and np.all(theta > 0)
    bad = np.r_[-np.ones(n), np.zeros(2 * n)]
    assert pool_dual_weights(pool, P, bad, None, time.perf_counter() + 60) is None
