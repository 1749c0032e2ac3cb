"""The solve paths of the A-optimal design program (mechdesign/engines/a_optimal.py) against independent references.

(A): minimise max_i tr J_i(θ)⁻¹ − ‖P_i‖² over θ ≥ 0 with Σ_r θ_r r = 1, J_i(θ) = Σ_r θ_r r rᵀ/(P_iᵀ r), over the extreme
rays r of the single-column cone. Checked here: Clarabel called directly (one PSD cone [[X, I], [I, J]] per prior)
against the same program through cvxpy's ``tr_inv``, and both against an independent cvxpy program written in this
file with another formulation (tr J⁻¹ = Σ_x e_xᵀ J⁻¹ e_x, cvxpy's ``matrix_frac``); the active-set Newton method
(warm-started, adding rays itself) against that program; and the whole column generation's certified bound.
"""

import numpy as np
import pytest

from mechdesign.engines import a_optimal as ao
from mechdesign.engines.frequency_estimation import frequency_rays
from mechdesign.spec.models import SolverOptions, spec_from_dict


def _rays(n, eps, prior_set="simplex"):
    spec = spec_from_dict(
        {"alphabet": n, "epsilon": eps, "prior_set": prior_set, "objective": {"kind": "frequency_estimation"}}
    )
    return frequency_rays(spec)


def _prior(n, seed):
    P = np.random.default_rng(seed).dirichlet(np.ones(n))
    return P / P.sum()


def _u(R, theta, P):
    """tr J(θ)⁻¹ − ‖P‖², from the definition (a sum of outer products)."""
    J = sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, theta) if t > 0)
    return float(np.trace(np.linalg.inv(J)) - P @ P)


def _independent(R, priors):
    """(A) through cvxpy with tr J⁻¹ = Σ_x matrix_frac(e_x, J): the optimum (not the module's formulation)."""
    cp = pytest.importorskip("cvxpy")

    n = R.shape[1]
    theta = cp.Variable(len(R), nonneg=True)
    t = cp.Variable()
    cons = [R.T @ theta == 1]
    for P in priors:
        J = sum(theta[i] * (np.outer(r, r) / (r @ P)) for i, r in enumerate(R))
        J = (J + J.T) / 2
        cons.append(sum(cp.matrix_frac(np.eye(n)[x], J) for x in range(n)) - float(P @ P) <= t)
    prob = cp.Problem(cp.Minimize(t), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("n,eps,prior_set", [(5, 1.0, "simplex"), (6, 0.5, {"kind": "min_mass", "c": "1/12"})])
def test_direct_clarabel_equals_cvxpy_path_and_independent_program(n, eps, prior_set):
    R = _rays(n, eps, prior_set)
    P = _prior(n, n)
    direct, _ = ao._restricted_clarabel(R, [P])
    through_cvxpy, _ = ao._restricted_cvxpy(R, [P])
    assert np.abs(R.T @ direct - 1).max() < 1e-8
    u_direct, u_cvxpy = _u(R, direct, P), _u(R, through_cvxpy, P)
    assert u_direct == pytest.approx(u_cvxpy, rel=1e-7)  # two interior points, each to its tolerance
    reference = _independent(R, [P])
    assert u_direct == pytest.approx(reference, rel=1e-6)
    # polished by Newton, the two agree to 1e-9 and are optimal
    a = ao._newton(R, ao.reduce_support(R, direct, P), P, steps=200)
    b = ao._newton(R, ao.reduce_support(R, through_cvxpy, P), P, steps=200)
    assert a.optimal and b.optimal
    assert _u(R, a.theta, P) == pytest.approx(_u(R, b.theta, P), rel=1e-9)
    assert np.abs(R.T @ a.theta - 1).max() <= 1e-12  # feasible, where the interior point is so to 1e-8 only
    assert _u(R, a.theta, P) == pytest.approx(reference, rel=1e-6)


def test_direct_clarabel_several_priors_weights_and_value():
    n = 5
    R = _rays(n, 1.0)
    priors = [_prior(n, 1), _prior(n, 2), np.full(n, 1 / n)]
    direct, w_direct = ao._restricted_clarabel(R, priors)
    through_cvxpy, w_cvxpy = ao._restricted_cvxpy(R, priors)
    worst_direct = max(_u(R, direct, P) for P in priors)
    assert worst_direct == pytest.approx(max(_u(R, through_cvxpy, P) for P in priors), rel=1e-7)
    assert worst_direct == pytest.approx(_independent(R, priors), rel=1e-6)
    # the multipliers of the priors: the same distribution (they sum to 1 at the optimum: ∂/∂t of the Lagrangian)
    assert w_direct.sum() == pytest.approx(1.0, abs=1e-6)
    assert w_direct / w_direct.sum() == pytest.approx(w_cvxpy / w_cvxpy.sum(), abs=1e-4)


def test_newton_from_a_warm_start_reaches_the_optimum_over_all_rays():
    # from the optimum over a few rays, with every other ray at 0: Newton adds the rays it needs itself
    n = 6
    R = _rays(n, 1.0)
    P = _prior(n, 7)
    start = ao._start_set(R, P)
    theta_S, _ = ao._restricted_clarabel(R[start], [P])
    warm = np.zeros(len(R))
    warm[start] = ao.reduce_support(R[start], theta_S, P)
    result = ao._newton(R, warm, P, steps=400)
    assert result.optimal
    assert np.abs(R.T @ result.theta - 1).max() <= 1e-12
    assert np.all(result.theta >= 0)
    assert _u(R, result.theta, P) == pytest.approx(_independent(R, [P]), rel=1e-6)


@pytest.mark.parametrize("n,eps,prior_set", [(6, 1.0, "simplex"), (7, 2.0, {"kind": "min_mass", "c": "1/14"})])
def test_column_generation_certifies_the_independent_optimum(n, eps, prior_set):
    R = _rays(n, eps, prior_set)
    P = _prior(n, 3 * n)
    d = ao.solve_a_optimal(R, [P], SolverOptions())
    reference = _independent(R, [P])
    assert d.value == pytest.approx(_u(R, d.theta, P), rel=1e-12)
    assert d.value - d.bound <= 1e-9 * d.value
    assert d.bound <= reference * (1 + 1e-7)  # a lower bound on the optimum (the reference to its tolerance)
    assert d.value == pytest.approx(reference, rel=1e-6)


def test_newton_restores_the_rows_of_an_interior_point_before_its_line_search():
    # Clarabel's θ here breaks Σ θ_r r = 1 by ~1e-9 (more mass, a lower f than any feasible θ): a line search on f
    # from there rejected every step back to the rows, and the design ended 3e-6 short of its bound
    n = 7
    P = np.random.default_rng(2).dirichlet(np.ones(n) * 0.5).round(6)
    P[-1] = 1 - P[:-1].sum()
    R = _rays(n, 1.0)
    d = ao.solve_a_optimal(R, [P], SolverOptions())
    assert d.value - d.bound <= 1e-9 * d.value
    assert d.value == pytest.approx(_independent(R, [P]), rel=1e-6)


def test_a_panic_of_the_conic_solver_falls_back_and_the_design_is_still_certified(monkeypatch):
    """Clarabel is Rust: a failed eigen-decomposition in a PSD step (clarabel 0.5.0) surfaces as pyo3's
    PanicException, which derives from BaseException. The direct call and the cvxpy call must treat it as a
    solver failure and fall back (here to SCS, then the Newton rounds), not crash the design; Ctrl-C still
    propagates."""
    import clarabel

    class PanicException(BaseException):  # what pyo3 raises: not an Exception
        pass

    class Panics:
        def __init__(self, *args, **kwargs):
            pass

        def solve(self):
            raise PanicException("Eigval error: Eigen(1)")

    monkeypatch.setattr(clarabel, "DefaultSolver", Panics)
    n, eps = 6, 1.0
    R = _rays(n, eps, "simplex")
    P = _prior(n, 3 * n)
    assert ao._restricted_clarabel(R, [P]) is None
    d = ao.solve_a_optimal(R, [P], SolverOptions())
    assert d.theta is not None and d.value - d.bound <= 1e-6 * d.value
    assert d.value == pytest.approx(_independent_without_clarabel(R, P), rel=1e-5)

    class Interrupts(Panics):
        def solve(self):
            raise KeyboardInterrupt

    monkeypatch.setattr(clarabel, "DefaultSolver", Interrupts)
    with pytest.raises(KeyboardInterrupt):
        ao._restricted_clarabel(R, [P])


def _independent_without_clarabel(R, P) -> float:
    """The optimum of the A-optimal program over the rays R, by cvxpy with SCS (matrix_frac form, written here)."""
    import cvxpy as cp

    n = R.shape[1]
    theta = cp.Variable(len(R), nonneg=True)
    J = sum(theta[i] * (np.outer(r, r) / (r @ P)) for i, r in enumerate(R))
    J = (J + J.T) / 2
    prob = cp.Problem(cp.Minimize(sum(cp.matrix_frac(np.eye(n)[x], J) for x in range(n))), [R.T @ theta == 1])
    prob.solve(solver="SCS", eps=1e-9, max_iters=200000)
    return prob.value - float(P @ P)


@pytest.mark.parametrize("time_limit", [None, 1e-9])
def test_reduce_support_keeps_j_exactly_whether_or_not_its_program_ends_in_time(time_limit):
    """Weights on 120 random two-level rays (N = 8): the reduced weights are nonnegative and give the same Fisher
    information J = Σ φ_r r rᵀ/(Pᵀr), computed here term by term, to 1e-9, with no time limit (then on at most
    N(N+1)/2 = 36 rays, Carathéodory) and with one too short for its linear program to end (then θ itself, or a
    basic solution if it did end)."""
    rng = np.random.default_rng(11)
    n = 8
    P = rng.dirichlet(np.ones(n))
    R = np.where(rng.random((120, n)) < 0.4, 1.0, np.exp(-1.0))
    theta = rng.random(120)

    def fisher(w):
        return sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, w))

    phi = ao.reduce_support(R, theta, P, time_limit=time_limit)
    assert np.all(phi >= 0)
    assert np.abs(fisher(phi) - fisher(theta)).max() <= 1e-9 * np.abs(fisher(theta)).max()
    if time_limit is None:
        assert np.count_nonzero(phi) <= n * (n + 1) // 2
