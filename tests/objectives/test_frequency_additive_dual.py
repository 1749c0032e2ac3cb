"""The structured dual bound of frequency estimation (mechdesign.objectives.frequency_additive_dual: additive
multipliers plus a free block on a few head symbols), the design fitted to it, and the barrier method of the
restricted program (mechdesign.engines.a_optimal.barrier), against independent references.

References: every extreme ray of the simplex / min_mass cone, written out in tests/helpers/frequency_rays.py (from
the Dobrushin paper's Remark 2 and Lemma 1); the A-optimal optimum over them from an independent cvxpy program
(tr J⁻¹ = Σ_x matrix_frac(e_x, J), as in tests/engines/test_a_optimal_paths.py); and the Lagrangian bound
OPT ≥ 2 tr S^{1/2} − ‖P‖² − Σλ − N·max(0, max_r (rᵀSr/(Pᵀr) − λ·r)/(1·r)) (Boyd and Vandenberghe §7.5), evaluated
here ray by ray with S built entry by entry from (D, u, λ) and the head block Z.
"""

import functools
import math
import time

import numpy as np
import pytest

from helpers.finite_differences import central_gradient_and_hessian
from helpers.frequency_rays import all_rays, independent_design
from helpers.specs import spec

from mechdesign import load_spec
from mechdesign.engines import a_optimal as ao
from mechdesign.objectives import frequency_additive_dual as fad
from mechdesign.objectives.frequency_additive_dual import (
    additive_dual_bound,
    certified_bound,
    fitted_design,
    is_tied,
    price_additive,
    recentred,
    tied_rays,
)
from mechdesign.objectives.pricing_frequency import frequency_families
from mechdesign.privacy.ray_families import families, start_rays


def _spec(n, c, P):
    prior_set = {"kind": "min_mass", "c": c} if c > 0 else "simplex"
    return load_spec(spec(n, 1.0, prior_set, {"kind": "frequency_estimation", "prior": P.tolist()}))


def _s_entrywise(D, u, lam, P, head=(), z=()):
    """S = ½(diag D + u1ᵀ + 1uᵀ + λPᵀ + Pλᵀ) plus z on the head's pairs (i < j in the head's sorted order)."""
    n = len(P)
    S = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = 0.5 * ((D[i] if i == j else 0.0) + u[i] + u[j] + lam[i] * P[j] + lam[j] * P[i])
    head = sorted(head)
    pairs = [(head[a], head[b]) for a in range(len(head)) for b in range(a + 1, len(head))]
    for (i, j), v in zip(pairs, z):
        S[i, j] += v
        S[j, i] += v
    return S


def _case(n, c, seed):
    """Dirichlet(1) prior from ``seed``, its spec and families, every ray and the independent optimum over them."""
    P, R, opt, _ = _reference(n, c, seed)
    spec = _spec(n, c, P)
    return P.copy(), spec, frequency_families(families(spec), n), R.copy(), opt


@functools.lru_cache(maxsize=None)
def _reference(n, c, seed):
    """(prior, every ray, the independent optimum over them, its weights), computed once per case: the cvxpy program
    at N = 9 takes seconds, and several tests share a case."""
    P = np.random.default_rng(seed).dirichlet(np.ones(n))
    R = all_rays(n, 1.0, c)
    opt, theta = independent_design(R, P)
    return P, R, opt, theta


def _dual(spec, fams, P, head):
    # the deadline only guards against a hang: the cutting planes stop when no ray has a positive reduced value
    return additive_dual_bound(fams, P, start_rays(spec, families(spec)), time.perf_counter() + 600, head=head)


def _reduced_brute(R, S, lam, P):
    G = np.einsum("ri,ij,rj->r", R, S, R) / (R @ P)
    return (G - R @ lam) / R.sum(axis=1)


@pytest.mark.parametrize("n,c,seed", [(8, 0.0, 1), (9, 1 / 18, 2), (10, 1 / 20, 3)])
@pytest.mark.parametrize("h", [0, 3])
def test_pricing_by_sorting_equals_brute_force_over_every_ray(n, c, seed, h):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    spec = _spec(n, c, P)
    fams = frequency_families(families(spec), n)
    D, u, lam = rng.normal(size=n) + 3, rng.normal(size=n), rng.normal(size=n)
    head = rng.choice(n, h, replace=False)
    z = rng.normal(size=h * (h - 1) // 2)
    x = np.r_[D, u, lam, z]
    R = all_rays(n, 1.0, c)
    brute = _reduced_brute(R, _s_entrywise(D, u, lam, P, head, z), lam, P)
    found = price_additive(fams, x, P, head)
    best = max(v for v, _ in found)
    assert best == pytest.approx(brute.max(), rel=1e-12, abs=1e-12)
    # the ray returned with the best value is a ray of the cone with that value
    r_best = max(found, key=lambda z: z[0])[1]
    assert np.min(np.abs(R - r_best).sum(axis=1)) < 1e-12
    rigorous = max(v for v, _ in price_additive(fams, x, P, head, rigorous=True))
    assert brute.max() <= rigorous <= brute.max() + 1e-9 * (1 + abs(brute.max()))


@pytest.mark.parametrize("n,c,seed", [(7, 0.0, 4), (8, 1 / 16, 5), (8, 0.0, 6)])
@pytest.mark.parametrize("h", [0, 3])
def test_certified_bound_is_the_lagrangian_bound_and_below_the_optimum(n, c, seed, h):
    P, spec, fams, R, opt = _case(n, c, seed)
    rng = np.random.default_rng(seed + 100)
    head = np.argsort(-P)[:h]
    res = _dual(spec, fams, P, head)
    assert math.isfinite(res.bound)
    assert res.bound <= opt + 1e-7 * opt  # the optimum from an interior point, to its tolerance
    # the bound recomputed from its multipliers by the definition (S entry by entry, every ray)
    D, u, lam, z = res.params[:n], res.params[n : 2 * n], res.params[2 * n : 3 * n], res.params[3 * n :]
    S = _s_entrywise(D, u, lam, P, head, z)
    mu = np.linalg.eigvalsh(S)
    assert mu.min() > 0
    h_max = _reduced_brute(R, S, lam, P).max()
    direct = 2 * np.sqrt(mu).sum() - P @ P - lam.sum() - n * max(0.0, h_max)
    assert res.bound <= direct
    assert res.bound == pytest.approx(direct, rel=1e-10)
    # and an arbitrary point's bound too (valid for any multipliers)
    x = np.r_[rng.uniform(1, 3, n), rng.normal(size=n), rng.normal(size=n), 0.1 * rng.normal(size=h * (h - 1) // 2)]
    b, x_used = certified_bound(x, P, fams, head)
    S = _s_entrywise(x_used[:n], x_used[n : 2 * n], x_used[2 * n : 3 * n], P, head, x_used[3 * n :])
    h_max = _reduced_brute(R, S, x_used[2 * n : 3 * n], P).max()
    lam_used = x_used[2 * n : 3 * n]
    assert b <= 2 * np.sqrt(np.linalg.eigvalsh(S)).sum() - P @ P - lam_used.sum() - n * max(0.0, h_max)
    assert b <= opt + 1e-7 * opt


@pytest.mark.parametrize("n,c,seed", [(9, 0.0, 7), (9, 1 / 18, 8)])
def test_the_design_fitted_on_tied_rays_is_the_independent_optimum(n, c, seed):
    """The structured dual (head of 3) is exact at these priors; the design fitted to its information on the rays it
    ties, then solved over its support, is feasible and reaches the optimum of an independent cvxpy program over
    every ray; every tied ray is a ray of the cone."""
    from mechdesign.engines.frequency_column_generation import _master

    P, spec, fams, R_all, opt = _case(n, c, seed)
    head = np.argsort(-P)[:3]
    res = _dual(spec, fams, P, head)
    assert opt - res.bound <= 1e-7 * opt
    pool = tied_rays(fams, P, res.params, head, per=30)
    assert all(np.min(np.abs(R_all - r).sum(axis=1)) < 1e-12 for r in pool)
    R, theta = fitted_design(pool, P, res.params, head)
    assert np.all(theta > 0) and np.abs(R.T @ theta - 1).max() <= 1e-6
    theta = _master(R, theta / (R.T @ theta).max(), P)
    assert np.abs(R.T @ theta - 1).max() <= 1e-9 and np.all(theta >= 0)
    J = sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, theta))
    value = float(np.trace(np.linalg.inv(J)) - P @ P)
    assert value == pytest.approx(opt, rel=1e-7)


@pytest.mark.parametrize("n,c,seed", [(9, 0.0, 7), (9, 1 / 18, 8)])
def test_the_independent_optimum_uses_only_rays_the_dual_ties(n, c, seed):
    """Complementary slackness, checked against an independent cvxpy design over every ray: where the structured
    dual is exact, every ray the optimum weighs is one is_tied accepts; is_tied agrees with the reduced value
    computed entry by entry, and rejects the rays whose reduced value is clearly negative."""
    P, spec, fams, R, opt = _case(n, c, seed)
    theta = _reference(n, c, seed)[3]
    head = np.argsort(-P)[:3]
    res = _dual(spec, fams, P, head)
    assert opt - res.bound <= 1e-7 * opt
    weighed = theta > 1e-4 * theta.max()
    tied = is_tied(R, res.params, P, head)
    assert weighed.any() and np.all(tied[weighed])
    x = np.asarray(res.params)
    D, u, lam, z = x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n :]
    rho = _reduced_brute(R, _s_entrywise(D, u, lam, P, head, z), lam, P) * R.sum(axis=1)
    size = float(np.abs(rho).max())
    assert np.all(tied[rho < -1e-6 * size] == False)  # noqa: E712
    assert np.all(tied[rho > -1e-13 * size])


def test_the_additive_dual_closes_the_gap_at_n_16_dirichlet():
    """N = 16, Dirichlet(1) seed 0, ε = 1, ε-LDP: the additive dual's bound meets the design of column generation
    (whose own certificate closes there, to 1e-7) within that tolerance: the restricted dual is exact at this prior
    (measured: equal to 12 digits)."""
    from mechdesign.engines.frequency_column_generation import solve_frequency_column_generation

    n = 16
    P = np.random.default_rng(0).dirichlet(np.ones(n))
    spec = _spec(n, 0.0, P)
    # the time limit only guards against a hang: column generation stops when its own gap is below 1e-7
    design = solve_frequency_column_generation(spec, P, time_limit=600)
    assert design.value - design.bound <= 1e-7 * design.value
    fams = frequency_families(families(spec), n)
    res = additive_dual_bound(fams, P, start_rays(spec, families(spec)), time.perf_counter() + 600)
    assert res.bound <= design.value
    assert design.value - res.bound <= 2e-7 * design.value


@pytest.mark.parametrize("n,c", [(6, 0.0), (7, 1 / 14)])
def test_barrier_reaches_the_independent_optimum(n, c):
    rng = np.random.default_rng(n)
    P = rng.dirichlet(np.ones(n))
    R = all_rays(n, 1.0, c)
    start = np.linalg.lstsq(R.T, np.ones(n), rcond=None)[0]  # infeasible for θ ≥ 0 in general: the start is moved in
    theta = ao.barrier(R, np.abs(start) + 1e-3, P)
    assert theta is not None and np.all(theta > 0)
    assert np.abs(R.T @ theta - 1).max() <= 1e-9
    J = sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, theta))
    value = float(np.trace(np.linalg.inv(J)) - P @ P)
    assert value == pytest.approx(independent_design(R, P)[0], rel=1e-7)


def test_an_indefinite_s_is_raised_until_positive_definite_and_the_bound_stays_valid():
    n, c = 8, 1 / 16
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(n))
    spec = _spec(n, c, P)
    fams = frequency_families(families(spec), n)
    x = np.r_[np.full(n, -0.5), rng.normal(size=n), rng.normal(size=n)]  # no head: x = (D, u, λ)
    assert np.linalg.eigvalsh(_s_entrywise(x[:n], x[n : 2 * n], x[2 * n :], P)).min() < 0
    b, x_used = certified_bound(x, P, fams)
    assert math.isfinite(b)
    S = _s_entrywise(x_used[:n], x_used[n : 2 * n], x_used[2 * n :], P)
    assert np.linalg.eigvalsh(S).min() > 0
    assert np.array_equal(x_used[n:], x[n:])  # only D moved
    R = all_rays(n, 1.0, c)
    h = _reduced_brute(R, S, x_used[2 * n :], P).max()
    assert b <= 2 * np.sqrt(np.linalg.eigvalsh(S)).sum() - P @ P - x_used[2 * n :].sum() - n * max(0.0, h)
    assert b <= independent_design(R, P)[0] * (1 + 1e-7)


@pytest.mark.parametrize("n,c,seed", [(9, 0.0, 7), (9, 1 / 18, 8)])
def test_the_least_squares_fit_on_a_working_set_is_the_fit_over_the_whole_pool(n, c, seed):
    """fitted_design_working_set with a working set far smaller than the pool (5 rays a round) ends at the
    least-squares fit over the whole pool: the optimality conditions of non-negative least squares (Lawson and
    Hanson, Theorem 23.4: θ ≥ 0, Aᵀ(b − Aθ) ≤ 0 on every ray, = 0 where θ > 0), checked here on the matrix built
    entry by entry from the pool. Where the structured dual is exact the fit is exact too, and the design solved over
    its support reaches the optimum of an independent cvxpy program over every ray."""
    from mechdesign.engines.frequency_column_generation import _master
    from mechdesign.objectives.frequency_additive_dual import fitted_design_working_set

    P, spec, fams, R_all, opt = _case(n, c, seed)
    head = np.argsort(-P)[:3]
    res = _dual(spec, fams, P, head)
    assert opt - res.bound <= 1e-7 * opt
    pool = tied_rays(fams, P, res.params, head, per=30)
    x = np.asarray(res.params)
    S = _s_entrywise(x[:n], x[n : 2 * n], x[2 * n : 3 * n], P, head, x[3 * n :])
    ev, V = np.linalg.eigh(S)
    J_target = V @ np.diag(ev**-0.5) @ V.T
    scale = np.abs(J_target).max()
    rows, rhs = [], []
    for i in range(n):
        for j in range(i, n):
            w = 1.0 if i == j else math.sqrt(2.0)
            rows.append([w * r[i] * r[j] / (r @ P) for r in pool])
            rhs.append(w * J_target[i, j])
    for i in range(n):
        rows.append([scale * r[i] for r in pool])
        rhs.append(scale)
    A, b = np.array(rows), np.array(rhs)
    R, theta = fitted_design_working_set(
        pool, P, res.params, head, time.perf_counter() + 600, batch=5, rounds=500, stall=2.0
    )
    assert len(R) < len(pool) and np.all(theta > 0)
    full = np.zeros(len(pool))
    for r, t in zip(R, theta):
        full[np.flatnonzero(np.abs(pool - r).sum(axis=1) == 0)[0]] = t
    grad = A.T @ (b - A @ full)
    tol = 1e-9 * np.linalg.norm(b) * np.abs(A).max()
    assert np.all(grad <= tol) and np.all(np.abs(grad[full > 0]) <= tol)
    assert np.linalg.norm(A @ full - b) <= 1e-7 * np.linalg.norm(b)
    theta = _master(R, theta / (R.T @ theta).max(), P)
    assert np.abs(R.T @ theta - 1).max() <= 1e-9 and np.all(theta >= 0)
    J = sum(t * np.outer(r, r) / (r @ P) for r, t in zip(R, theta))
    assert float(np.trace(np.linalg.inv(J)) - P @ P) == pytest.approx(opt, rel=1e-7)


def test_a_nearly_singular_start_moves_a_tenth_of_the_way_back_and_a_regular_one_stays():
    """S is linear in x, so moving x a share t toward x0 gives S = (1 − t)S(x) + t S(x0): with S(x) singular and
    positive semidefinite and S(x0) = I, the smallest eigenvalue becomes t exactly (derived here, entry by entry)."""
    n = 7
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(n))
    x0 = np.r_[np.full(n, 2.0), np.zeros(2 * n)]  # S(x0) = I
    d = rng.normal(size=3 * n)

    def S_of(x):
        return _s_entrywise(x[:n], x[n : 2 * n], x[2 * n :], P)

    low = np.linalg.eigvalsh(S_of(d) - np.eye(n)).min()  # S(d) − S(x0) = S(d − x0)
    assert low < 0
    x = x0 + (d - x0) / -low  # S(x) = I + S(d − x0)/|low|: smallest eigenvalue 0
    assert abs(np.linalg.eigvalsh(S_of(x)).min()) < 1e-12
    moved = recentred(x, x0, S_of)
    assert np.allclose(moved, x + fad.RECENTRE * (x0 - x), rtol=0, atol=1e-15)
    assert np.linalg.eigvalsh(S_of(moved)).min() == pytest.approx(fad.RECENTRE, rel=1e-9)
    regular = x0 + 0.5 * (x - x0)  # smallest eigenvalue 1/2
    assert recentred(regular, x0, S_of) is regular


@pytest.mark.parametrize("n,c,seed", [(8, 1 / 16, 5), (8, 0.0, 6)])
def test_recentring_every_round_changes_the_path_not_the_bound(n, c, seed, monkeypatch):
    """The restricted dual is concave: moving each round's start back toward S = I (as a nearly singular start
    is) leaves the bound the same, and below the independent optimum."""
    P, spec, fams, R, opt = _case(n, c, seed)
    plain = _dual(spec, fams, P, ())
    monkeypatch.setattr(fad, "SINGULAR", 2.0)  # every start counts as nearly singular
    moved = _dual(spec, fams, P, ())
    assert moved.bound <= opt + 1e-7 * opt
    assert moved.bound == pytest.approx(plain.bound, rel=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_closed_form_newton_system_is_the_second_derivative_of_the_barrier(seed):
    """The structured dual's Newton system (the Daleckii–Krein Hessian in closed form per block) against central
    finite differences of the barrier function itself: φ(x) = 2 Σ √ev(S(x)) − Σλ + μ Σ log(−A x) + μ Σ log ev(S(x)),
    with S built entry by entry from (D, u, λ, Z) and its eigenvalues from numpy."""
    n, h, mu = 7, 3, 0.05
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    head = np.argsort(-P)[:h]
    pairs = [(int(i), int(j)) for a, i in enumerate(sorted(head)) for j in sorted(head)[a + 1 :]]
    m = 3 * n + len(pairs)
    x = np.r_[2 + rng.random(n), 0.1 * rng.standard_normal(2 * n), 0.1 * rng.standard_normal(len(pairs))]
    A = -rng.random((12, m))
    A[:, 2 * n : 3 * n] = 0.0  # the cuts do not involve λ

    def phi(z):
        D, u, lam, zz = z[:n], z[n : 2 * n], z[2 * n : 3 * n], z[3 * n :]
        S = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                S[i, j] = 0.5 * ((D[i] if i == j else 0.0) + u[i] + u[j] + lam[i] * P[j] + P[i] * lam[j])
        for k, (i, j) in enumerate(pairs):
            S[i, j] += zz[k]
            S[j, i] += zz[k]
        ev = np.linalg.eigvalsh(S)
        return 2 * np.sqrt(ev).sum() - lam.sum() + mu * np.log(-(A @ z)).sum() + mu * np.log(ev).sum()

    hd = fad._Head(head, n)
    pieces = fad._barrier_pieces(x, P, mu, A, hd)
    assert pieces is not None and pieces[0] == pytest.approx(phi(x), rel=1e-12)
    g, H = fad._newton_system(P, mu, A, pieces, hd)
    g_fd, H_fd = central_gradient_and_hessian(phi, x)
    scale = np.abs(H_fd).max()
    assert np.abs(g - g_fd).max() <= 1e-6 * np.abs(g_fd).max()
    assert np.abs(H - H_fd).max() <= 1e-4 * scale
    assert np.abs(H - H.T).max() <= 1e-12 * scale
