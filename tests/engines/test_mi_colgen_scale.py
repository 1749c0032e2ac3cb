"""Mutual-information column generation with a Dirichlet prior against an independent optimum.

The expected value is computed here without mechdesign: the extreme rays of the single-column cone of
(ε, Q_X(c))-PML (docs/explanation/mathematics.md, section 'Linear constraints', Lemma 4 written pairwise: k_x ≤ e^ε (c Σk + (1 − Nc) k_x'') for all x, x'', k ≥ 0)
are the vertices of its cross-section Σk = 1, found by brute force (every choice of N − 1 active
inequalities, solved with numpy and kept when feasible); the ray LP max Σ θ_r μ(r) s.t. Σ θ_r r = 1, θ ≥ 0
(Kairouz–Oh–Viswanath's staircase LP, generalised to PML) is then solved with scipy.optimize.linprog, with
μ(k) = Σ_x P(x) k_x log(k_x / P·k) written out below.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

import mechdesign.engines.ray_pool as ray_pool
import mechdesign.engines.sublinear as sublinear
from mechdesign.engines.sublinear import design_column_generation
from mechdesign.spec.models import spec_from_dict


def cone_vertices(n: int, eps: float, c: float) -> np.ndarray:
    """Vertices of {k ≥ 0, Σk = 1, k_x ≤ e^ε (c Σk + (1 − Nc) k_x'') for all x ≠ x''}, by brute force."""
    e = math.exp(eps)
    rows = [-np.eye(n)[x] for x in range(n)]  # -k_x <= 0
    for x, x2 in itertools.permutations(range(n), 2):
        a = np.eye(n)[x] - e * (c * np.ones(n) + (1 - n * c) * np.eye(n)[x2])
        rows.append(a)
    A = np.array(rows)
    verts = []
    for active in itertools.combinations(range(len(A)), n - 1):
        M = np.vstack([A[list(active)], np.ones(n)])
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        k = np.linalg.solve(M, np.r_[np.zeros(n - 1), 1.0])
        if np.all(A @ k <= 1e-11):
            k = np.clip(k, 0, None)
            if not any(np.allclose(k, v, atol=1e-10) for v in verts):
                verts.append(k)
    return np.array(verts)


def mi_column(P: np.ndarray, k: np.ndarray) -> float:
    s = float(P @ k)
    return float(sum(P[x] * k[x] * math.log(k[x] / s) for x in range(len(P)) if k[x] > 0))


def independent_optimum(P: np.ndarray, eps: float, c: float) -> float:
    V = cone_vertices(len(P), eps, c)
    mu = np.array([mi_column(P, v) for v in V])
    res = linprog(-mu, A_eq=V.T, b_eq=np.ones(len(P)), bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


def dirichlet_prior(n: int, seed: int) -> list[str]:
    """Dirichlet(1), floored at 1e-3 (as benchmarks/scaling_families.py), as exact decimal strings."""
    p = np.random.default_rng(seed).dirichlet(np.ones(n)) + 1e-3
    p = np.round(p / p.sum(), 12)
    p[-1] = 1.0 - p[:-1].sum()
    return [repr(float(v)) for v in p]


CASES = [(3, 1.0, 0), (4, 1.0, 1), (5, 1.0, 2), (5, 0.4, 3), (4, 2.0, 5), (5, 2.0, 4)]


def mi_spec(n, eps, seed):
    prior = dirichlet_prior(n, seed)
    s = spec_from_dict(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "min_mass", "c": f"1/{2 * n}"},
            "objective": {"kind": "mutual_information", "prior": prior},
            "output_size": n,
        }
    )
    return s, np.array([float(Fraction(p)) for p in prior])


@pytest.mark.parametrize("n, eps, seed", CASES)
def test_column_generation_dirichlet_meets_the_independent_optimum(n, eps, seed):
    s, P = mi_spec(n, eps, seed)
    expected = independent_optimum(P, eps, 1 / (2 * n))
    cg = design_column_generation(s)
    assert cg.value == pytest.approx(expected, rel=1e-6)
    assert cg.value <= expected + 1e-12  # a feasible kernel never beats the optimum
    assert expected - 1e-12 <= cg.bound <= expected * (1 + 1e-6)  # a true bound, and tight


@pytest.mark.parametrize("n, eps, seed", CASES[2:4])
def test_pruned_ray_pool_keeps_the_optimum_and_a_true_bound(monkeypatch, n, eps, seed):
    # a cap of 4 columns per row forces pruning to the pool and restores every few rounds
    monkeypatch.setattr(ray_pool, "ACTIVE_CAP_PER_ROW", 4)
    # from the constant-kernel-like start only: the affine dual start reaches these optima before the cap binds
    monkeypatch.setattr(sublinear, "DUAL_STARTS", {})
    pruned = []
    prune = ray_pool.PooledRayLP.prune

    def counting_prune(self, lam):
        prune(self, lam)
        pruned.append(self.pruned)

    monkeypatch.setattr(ray_pool.PooledRayLP, "prune", counting_prune)
    s, P = mi_spec(n, eps, seed)
    expected = independent_optimum(P, eps, 1 / (2 * n))
    cg = design_column_generation(s)
    assert cg.value <= expected + 1e-12
    assert cg.bound >= expected - 1e-12
    assert cg.value == pytest.approx(expected, rel=1e-6)
    assert pruned and pruned[-1] > 0  # rays did go to the pool
