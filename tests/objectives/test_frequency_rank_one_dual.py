"""The rank-one dual bound of frequency estimation (mechdesign.objectives.frequency_rank_one_dual:
S = ½(diag D + u1ᵀ + 1uᵀ + λPᵀ + Pλᵀ) − w v vᵀ), against independent references.

References: every extreme ray of the simplex / min_mass cone (tests/helpers/frequency_rays.py, from the Dobrushin
paper's Remark 2 and Lemma 1); the reduced value ρ(r) = (rᵀSr/(Pᵀr) − λ·r)/(1·r) computed ray by ray with S built
entry by entry; the Lagrangian bound OPT ≥ 2 tr S^{1/2} − ‖P‖² − Σλ − N·max(0, max_r ρ(r)) (Boyd and Vandenberghe
§7.5); and the A-optimal optimum over every ray from an independent cvxpy program (tests/helpers/frequency_rays.py).
"""

import time

import numpy as np
import pytest

from helpers.finite_differences import central_gradient_and_hessian
from helpers.frequency_rays import all_rays, independent_design
from helpers.specs import spec

from mechdesign import load_spec
from mechdesign.objectives.frequency_rank_one_dual import certified_bound, price_rank_one, rank_one_dual_bound
from mechdesign.objectives.pricing_frequency import frequency_families
from mechdesign.privacy.ray_families import families, start_rays


def _spec(n, c, P):
    prior_set = {"kind": "min_mass", "c": c} if c > 0 else "simplex"
    return load_spec(spec(n, 1.0, prior_set, {"kind": "frequency_estimation", "prior": P.tolist()}))


def _s_entrywise(D, u, lam, w, v, P):
    n = len(P)
    S = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = 0.5 * ((D[i] if i == j else 0.0) + u[i] + u[j] + lam[i] * P[j] + lam[j] * P[i]) - w * v[i] * v[j]
    return S


def _rho(R, S, lam, P):
    return (np.einsum("ri,ij,rj->r", R, S, R) / (R @ P) - R @ lam) / R.sum(axis=1)


@pytest.mark.parametrize("n,c,seed", [(8, 0.0, 1), (9, 1 / 18, 2), (10, 0.0, 3), (10, 1 / 20, 4)])
def test_pricing_bounds_every_ray_and_returns_a_ray_of_the_cone(n, c, seed):
    """The per-family value is an upper bound on ρ over every ray of the family (the relaxation −q² ≤ t² − 2tq), the
    rigorous one too, and the ray returned is a ray of the cone whose ρ is at most that bound."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    spec = _spec(n, c, P)
    fams = frequency_families(families(spec), n)
    D, u, lam = rng.normal(size=n) + 3, rng.normal(size=n), rng.normal(size=n)
    w, v = abs(rng.normal()) + 0.5, rng.normal(size=n)
    x = np.r_[D, u, lam, w]
    R = all_rays(n, 1.0, c)
    rho = _rho(R, _s_entrywise(D, u, lam, w, v, P), lam, P)
    found = price_rank_one(fams, x, P, v)
    rigorous = price_rank_one(fams, x, P, v, rigorous=True)
    best = max(value for value, _ in found)
    assert rho.max() <= best + 1e-12 * (1 + abs(best))
    assert rho.max() <= max(value for value, _ in rigorous)
    for (value, ray), (upper, _) in zip(found, rigorous):
        i = int(np.argmin(np.abs(R - ray).sum(axis=1)))
        assert np.abs(R[i] - ray).sum() < 1e-12
        assert rho[i] <= upper
        assert value <= upper
    # the relaxation is tight where w = 0 (then it is the additive dual's exact pricing)
    exact = price_rank_one(fams, np.r_[D, u, lam, 0.0], P, v)
    rho0 = _rho(R, _s_entrywise(D, u, lam, 0.0, v, P), lam, P)
    assert max(value for value, _ in exact) == pytest.approx(rho0.max(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n,c,seed", [(7, 0.0, 4), (8, 1 / 16, 5), (8, 0.0, 6)])
def test_rank_one_dual_bound_is_below_the_optimum_and_the_lagrangian_bound(n, c, seed):
    """The bound found (a direction moved from √P) is finite, at most the Lagrangian bound recomputed from its
    multipliers by the definition (S entry by entry, every ray), and at most the optimum of an independent program;
    an arbitrary point's certified bound is also at most both."""
    P = np.random.default_rng(seed).dirichlet(np.ones(n))
    spec = _spec(n, c, P)
    fams = frequency_families(families(spec), n)
    R = all_rays(n, 1.0, c)
    opt, _ = independent_design(R, P)
    # the deadline only bounds the time: every bound met is valid whenever it stops
    res = rank_one_dual_bound(fams, P, start_rays(spec, families(spec)), time.perf_counter() + 2.0)
    assert np.isfinite(res.bound) and res.bound <= opt * (1 + 1e-7)  # the optimum to its solver's tolerance
    x, v = res.params, res.direction
    S = _s_entrywise(x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n], v, P)
    lam = x[2 * n : 3 * n]
    direct = 2 * np.sqrt(np.linalg.eigvalsh(S)).sum() - P @ P - lam.sum() - n * max(0.0, _rho(R, S, lam, P).max())
    assert res.bound <= direct
    rng = np.random.default_rng(seed + 100)
    x = np.r_[rng.uniform(1, 3, n), rng.normal(size=n), rng.normal(size=n), rng.uniform(0, 0.5)]
    v = rng.normal(size=n)
    b, x_used = certified_bound(x, P, fams, v)
    S = _s_entrywise(x_used[:n], x_used[n : 2 * n], x_used[2 * n : 3 * n], x_used[3 * n], v, P)
    lam = x_used[2 * n : 3 * n]
    direct = 2 * np.sqrt(np.linalg.eigvalsh(S)).sum() - P @ P - lam.sum() - n * max(0.0, _rho(R, S, lam, P).max())
    assert b <= direct and b <= opt * (1 + 1e-7)


def test_a_negative_weight_gives_no_bound():
    """w < 0 makes the rank-one term convex in the ray, where the relaxation does not hold: no bound."""
    n = 6
    P = np.full(n, 1 / n)
    spec = _spec(n, 0.0, P)
    fams = frequency_families(families(spec), n)
    b, _ = certified_bound(np.r_[np.full(n, 2.0), np.zeros(2 * n), -0.1], P, fams, np.ones(n))
    assert b == -np.inf


@pytest.mark.parametrize("n,c,seed", [(8, 1 / 16, 5), (8, 0.0, 6)])
def test_recentring_every_round_changes_the_path_not_the_fixed_direction_bound(n, c, seed, monkeypatch):
    """With the direction fixed the program is concave: moving each round's start back toward S = I (as a nearly
    singular start is) ends at the same bound, below the independent optimum."""
    from mechdesign.objectives import frequency_additive_dual as fad
    from mechdesign.objectives.frequency_rank_one_dual import _fixed_direction

    P = np.random.default_rng(seed).dirichlet(np.ones(n))
    spec = _spec(n, c, P)
    fams = frequency_families(families(spec), n)
    opt, _ = independent_design(all_rays(n, 1.0, c), P)
    v = np.sqrt(P) / np.linalg.norm(np.sqrt(P))
    C = start_rays(spec, families(spec))
    x = np.r_[np.full(n, 2.0), np.zeros(2 * n), 1e-6]
    # the deadline only guards against a hang: the rounds stop when no ray has a positive reduced value
    plain = _fixed_direction(fams, P, v, C, x, time.perf_counter() + 120)[0]
    monkeypatch.setattr(fad, "SINGULAR", 2.0)  # every start counts as nearly singular
    moved = _fixed_direction(fams, P, v, C, x, time.perf_counter() + 120)[0]
    assert moved <= opt * (1 + 1e-7)
    assert moved == pytest.approx(plain, rel=1e-8)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_fixed_direction_newton_system_is_the_second_derivative_of_its_barrier(seed):
    """The rank-one dual's Newton system at a fixed direction v against central finite differences of its barrier
    φ(x) = 2 Σ √ev(S) − Σλ + μ (Σ log(−A x) + Σ log ev(S) + log w), S = ½(diag D + u1ᵀ + 1uᵀ + λPᵀ + Pλᵀ) − w vvᵀ
    built entry by entry, eigenvalues from numpy."""
    from mechdesign.objectives import frequency_rank_one_dual as r1

    n, mu = 6, 0.05
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    v = rng.standard_normal(n) / 3
    m = 3 * n + 1
    x = np.r_[2 + rng.random(n), 0.1 * rng.standard_normal(2 * n), 0.3]
    A = -rng.random((10, m))
    A[:, 2 * n : 3 * n] = 0.0  # the cuts do not involve λ

    def phi(z):
        D, u, lam, w = z[:n], z[n : 2 * n], z[2 * n : 3 * n], z[3 * n]
        S = np.array(
            [
                [
                    0.5 * ((D[i] if i == j else 0.0) + u[i] + u[j] + lam[i] * P[j] + P[i] * lam[j]) - w * v[i] * v[j]
                    for j in range(n)
                ]
                for i in range(n)
            ]
        )
        ev = np.linalg.eigvalsh(S)
        return 2 * np.sqrt(ev).sum() - lam.sum() + mu * (np.log(-(A @ z)).sum() + np.log(ev).sum() + np.log(w))

    pieces = r1._pieces(x, P, v, mu, A)
    assert pieces is not None and pieces[0] == pytest.approx(phi(x), rel=1e-12)
    g, H = r1._newton_fixed(x, P, v, mu, A, pieces)
    g_fd, H_fd = central_gradient_and_hessian(phi, x)
    assert np.abs(g - g_fd).max() <= 1e-6 * np.abs(g_fd).max()
    assert np.abs(H - H_fd).max() <= 1e-4 * np.abs(H_fd).max()
