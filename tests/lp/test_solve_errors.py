"""solve.py back ends turn solver failures into statuses, never tracebacks."""

import cvxpy as cp

from mechdesign.objectives.registry import compile_problem
from mechdesign.lp.solve import Status, _solve_cvxpy, solve_lp
from mechdesign.spec.models import Spec


def test_cvxpy_invalid_solution_is_a_status(monkeypatch):
    """cvxpy raises ValueError('Cannot unpack invalid solution') when HiGHS ends without a point
    (seen in a fallback re-solve at the time limit); the back end must report it as a status."""
    spec = Spec.model_validate(
        {
            "alphabet": 4,
            "epsilon": 1.0,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
            "solver": {"backend": "cvxpy"},
        }
    )
    lp = compile_problem(spec).lps[0]

    def broken(self, *args, **kwargs):
        raise ValueError("Cannot unpack invalid solution: Solution(status=UNKNOWN)")

    monkeypatch.setattr(cp.Problem, "solve", broken)
    sol = _solve_cvxpy(lp, spec.solver, None)
    assert sol.status is Status.SOLVER_ERROR and sol.x is None
    assert "invalid solution" in sol.message
    # and solve_lp's fallback ladder then answers with HiGHS directly
    assert solve_lp(lp, spec.solver).status is Status.OPTIMAL
