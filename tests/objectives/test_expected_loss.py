"""Expected-loss designs: the qif value, closed forms derived independently, duality, back ends."""

import math

import numpy as np
import pytest

from mechdesign import design
from mechdesign.objectives.registry import compile_problem
from mechdesign.lp.program import dual_bound
from mechdesign.lp.solve import solve_lp
from mechdesign.spec.models import SolverOptions, load_spec

LDP20 = {
    "alphabet": 20,
    "epsilon": 1,
    "prior_set": {"kind": "simplex"},
    "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"},
    "output_size": 20,
}


def test_ldp_absolute_loss_n20_matches_the_qif_lp():
    # value found by the qif library's LP (mechanism.d_privacy.min_loss_given_d)
    result = design(LDP20)
    assert result.is_ok
    assert result.objective == pytest.approx(4.2598602439, abs=1e-9)
    assert result.certificate.feasible
    K = result.kernel
    # independent check of ε-LDP in floats: every column's max/min ratio at most e
    used = K.max(axis=0) > 0
    assert used.sum() >= 2
    ratio = K[:, used].max(axis=0) / K[:, used].min(axis=0)
    assert np.all(ratio <= math.e * (1 + 1e-12))


@pytest.mark.parametrize("n,eps", [(3, 0.5), (6, 1.0), (8, 2.0)])
def test_hamming_ldp_optimum_is_k_rr(n, eps):
    """1 − e^ε/(e^ε + N − 1): derivation in problems/expected_loss_krr.yaml."""
    result = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
        }
    )
    assert result.objective == pytest.approx(1 - math.exp(eps) / (math.exp(eps) + n - 1), abs=1e-9)


def test_worst_case_over_simplex_is_the_worst_row():
    spec = {
        "alphabet": 5,
        "epsilon": 1,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
    }
    result = design(spec)
    L = np.abs(np.subtract.outer(np.arange(5), np.arange(5)))
    assert result.objective == pytest.approx((result.kernel * L).sum(axis=1).max(), abs=1e-12)
    # minimax is at least the Bayes risk under any prior, e.g. the uniform one
    bayes = design({**spec, "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"}})
    assert result.objective >= bayes.objective - 1e-9


def test_custom_loss_matrix_and_output_size():
    L = [[0, 1, 0.5], [1, 0, 0.5]]
    result = design(
        {
            "alphabet": 2,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": 0.2},
            "objective": {"kind": "expected_loss", "loss": L, "prior": [0.5, 0.5]},
        }
    )
    assert result.kernel.shape == (2, 3)
    assert result.is_ok
    # the "abstain" output (loss 1/2 for both) caps the risk at 1/2
    assert result.objective <= 0.5 + 1e-12


def test_dual_bound_is_valid_for_any_multipliers():
    spec = load_spec({**LDP20, "alphabet": 6, "output_size": 6})
    lp = compile_problem(spec).lps[0]
    sol = solve_lp(lp, SolverOptions())
    opt = sol.objective
    assert dual_bound(lp, sol.row_dual) == pytest.approx(opt, abs=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(20):  # weak duality: a random multiplier never certifies more than the optimum
        y = sol.row_dual + rng.normal(scale=0.5, size=sol.row_dual.size)
        assert dual_bound(lp, y) <= opt + 1e-9


def test_highs_and_cvxpy_back_ends_agree():
    spec = {**LDP20, "alphabet": 8, "output_size": 8, "prior_set": {"kind": "min_mass", "c": 0.05}}
    a = design(spec)
    b = design({**spec, "solver": {"backend": "cvxpy"}})
    assert a.objective == pytest.approx(b.objective, abs=1e-9)
    assert b.certificate.gap <= 1e-8 and b.is_ok


def test_simplex_and_interior_point_agree():
    spec = {**LDP20, "alphabet": 12, "output_size": 12, "prior_set": {"kind": "min_mass", "c": 0.02}}
    a = design({**spec, "solver": {"method": "simplex"}})
    b = design({**spec, "solver": {"method": "ipm"}})
    assert a.is_ok and b.is_ok
    assert a.objective == pytest.approx(b.objective, abs=1e-8)


def test_larger_prior_set_never_helps_utility():
    """Q_X(c) shrinks as c grows, so the optimal loss is non-increasing in c (c = 0 is LDP)."""
    values = []
    for c in [0.0, 0.05, 0.1, 0.125]:
        r = design(
            {
                "alphabet": 8,
                "epsilon": 0.7,
                "prior_set": {"kind": "min_mass", "c": c},
                "objective": {"kind": "expected_loss", "loss": "absolute"},
            }
        )
        values.append(r.objective)
    assert all(b <= a + 1e-9 for a, b in zip(values, values[1:]))
    assert values[-1] < values[0] - 1e-3
