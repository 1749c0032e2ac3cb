"""Frequency estimation by column generation with certified pricing (frequency-column-generation).

References: the listed-rays path (every extreme ray enumerated, mechdesign.engines.a_optimal) at N = 10, and the
exact privacy check of design() past N = 12.
"""

import numpy as np
import pytest

from mechdesign import design, load_spec
from mechdesign.engines.a_optimal import solve_a_optimal
from mechdesign.engines.frequency_column_generation import solve_frequency_column_generation
from mechdesign.engines.frequency_estimation import frequency_rays
from mechdesign.engines.routing import plan
from mechdesign.spec.models import SolverOptions


def spec(n, prior, prior_set, **solver):
    return {
        "alphabet": n,
        "epsilon": 1.0,
        "prior_set": prior_set,
        "objective": {"kind": "frequency_estimation", "prior": [float(p) for p in prior]},
        **({"solver": solver} if solver else {}),
    }


@pytest.mark.parametrize("prior_set", ["simplex", {"kind": "min_mass", "c": 0.05}])
def test_bound_is_below_the_listed_rays_optimum_and_the_gap_closes(prior_set):
    n = 10
    P = np.random.default_rng(0).dirichlet(np.ones(n))
    s = load_spec(spec(n, P, prior_set))
    exact = solve_a_optimal(frequency_rays(s), [P], SolverOptions())
    d = solve_frequency_column_generation(s, P, time_limit=60.0)
    assert d.bound <= exact.value * (1 + 1e-12)
    assert d.value >= exact.bound * (1 - 1e-12)
    assert d.value - d.bound <= 1e-6 * d.value


def test_a_node_limit_of_one_still_gives_a_lower_bound():
    n = 10
    P = np.random.default_rng(1).dirichlet(np.ones(n))
    s = load_spec(spec(n, P, {"kind": "min_mass", "c": 0.05}))
    exact = solve_a_optimal(frequency_rays(s), [P], SolverOptions())
    d = solve_frequency_column_generation(s, P, time_limit=10.0, node_limit=1, max_rounds=3)
    assert d.bound is not None
    assert d.bound <= exact.value * (1 + 1e-12)


def test_non_uniform_prior_past_the_listed_rays_is_designed_with_a_true_bound():
    n = 20
    P = np.random.default_rng(0).dirichlet(np.ones(n))
    s = spec(n, P, {"kind": "min_mass", "c": 1 / (2 * n)}, time_limit=6)
    assert plan(load_spec(s)).names == ["frequency-column-generation"]
    r = design(s)
    assert r.solve.engine == "frequency-column-generation"
    assert r.certificate.feasible
    assert r.status.value in ("optimal", "suboptimal")
    if r.certificate.dual_bound is not None:
        assert r.certificate.dual_bound <= r.objective
    # the identity's U bounds every kernel from below (data processing for Fisher information)
    assert r.objective >= 1 - float(P @ P)


def test_a_priors_list_past_twelve_is_refused_clearly():
    n = 14
    P = np.random.default_rng(0).dirichlet(np.ones(n)).tolist()
    s = spec(n, P, "simplex")
    s["objective"] = {"kind": "frequency_estimation", "priors": [P, P[::-1]]}
    with pytest.raises(Exception, match="priors list"):
        plan(load_spec(s))
