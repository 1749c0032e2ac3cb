"""Column generation solves the lifted kernel LP to the same optimum, and its multipliers
certify that optimum through the lifted LP's own dual bound."""

import numpy as np
import pytest

from mechdesign.engines.output_generation import solve_output_generation
from mechdesign.objectives.registry import compile_problem
from mechdesign.lp.program import dual_bound
from mechdesign.lp.solve import solve_lp
from mechdesign.spec.models import SolverOptions, load_spec


@pytest.mark.parametrize(
    "n,c_frac,eps,loss",
    [
        (9, 0.5, 1.0, "absolute"),
        (9, 0.0, 1.0, "absolute"),
        (7, 1.0, 0.5, "squared"),
        (6, 0.9, 3.0, "hamming"),
        (8, 0.2, 0.1, "absolute"),
        (12, 0.5, 2.0, [[((x * 7 + y * 3) % 5) / 4 for y in range(12)] for x in range(12)]),
    ],
)
def test_output_generation_matches_simplex(n, c_frac, eps, loss):
    ps = {"kind": "min_mass", "c": c_frac / n} if c_frac else {"kind": "simplex"}
    spec = load_spec(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": ps,
            "objective": {"kind": "expected_loss", "loss": loss, "prior": "uniform"},
            "output_size": n,
        }
    )
    compiled = compile_problem(spec)
    lp = compiled.lps[0]
    ref = solve_lp(lp, SolverOptions(method="simplex"))  # the full LP by dual simplex: an independent solve
    res = solve_output_generation(lp, compiled.layout)
    assert res.status == "optimal"
    assert lp.user_objective(res.x) == pytest.approx(ref.objective, abs=1e-9)
    assert dual_bound(lp, res.row_dual) == pytest.approx(ref.objective, abs=1e-8)
    ax = lp.A @ res.x
    assert np.all(ax <= lp.row_upper + 1e-9) and np.all(ax >= lp.row_lower - 1e-9)
    assert np.all(res.x >= lp.col_lower - 1e-12) and np.all(res.x <= lp.col_upper + 1e-12)
