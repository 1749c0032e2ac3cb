"""The affine dual start and the sparse ray LP of mutual-information column generation (N = 200).

Expected values come from outside the engine: the extreme rays of the (ε, Q_X(c))-PML column cone by brute-force
vertex enumeration and the ray LP by scipy.optimize.linprog (tests/engines/test_mi_colgen_scale.py, which writes the PML
constraints and μ out), and the Lagrangian bound B(λ) = Σλ + N·max(0, max_r (μ(r) − λ·r)/(1·r)) over those rays
(weak duality of the ray LP, docs/explanation/mathematics.md, section 'Objectives').
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog
from test_mi_colgen_scale import CASES, cone_vertices, independent_optimum, mi_column, mi_spec

import mechdesign.engines.ray_pool as ray_pool
import mechdesign.engines.sublinear as sublinear
from mechdesign.objectives.mi_dual_start import affine_dual_start
from mechdesign.engines.ray_pool import PooledRayLP, _base_and_deviation
from mechdesign.engines.sublinear import _pricer, column_utility, design_column_generation
from mechdesign.privacy.ray_families import cyclic, families, start_rays


@pytest.mark.parametrize("n, eps, seed", CASES)
def test_affine_start_bound_is_a_true_bound_at_an_affine_dual(n, eps, seed):
    s, P = mi_spec(n, eps, seed)
    fams = families(s)
    R0 = start_rays(s, fams)
    rays, mu, bound, lam = affine_dual_start(P, R0, column_utility(s), _pricer(s, fams), 1e-7, 30.0)
    # λ is a + b·P: the least-squares line through (P, λ) meets every point
    coef, *_ = np.linalg.lstsq(np.column_stack([np.ones(n), P]), lam, rcond=None)
    assert np.allclose(lam, coef[0] + coef[1] * P, atol=1e-12)
    # the bound is at least the Lagrangian bound at λ over all extreme rays (brute force), hence ≥ the optimum
    V = cone_vertices(n, eps, 1 / (2 * n))
    mu_v = np.array([mi_column(P, v) for v in V])
    g = float(np.max((mu_v - V @ lam) / V.sum(axis=1)))
    assert bound >= lam.sum() + n * max(g, 0.0) - 1e-12
    assert bound >= independent_optimum(P, eps, 1 / (2 * n)) - 1e-12
    # its rays are rays of the cone: each is a nonnegative multiple of a brute-force vertex
    for r in rays:
        v = r / r.sum()
        assert np.min(np.abs(V - v).max(axis=1)) < 1e-9


@pytest.mark.parametrize("n, eps, seed", [(5, 1.0, 2), (4, 2.0, 5)])
def test_column_generation_without_affine_start_meets_the_same_optimum(monkeypatch, n, eps, seed):
    # both starts reach the independent optimum (scipy over the brute-force rays) within their certified gap
    s, P = mi_spec(n, eps, seed)
    expected = independent_optimum(P, eps, 1 / (2 * n))
    for starts in (dict(sublinear.DUAL_STARTS), {}):
        monkeypatch.setattr(sublinear, "DUAL_STARTS", starts)
        cg = design_column_generation(s)
        assert cg.value <= expected + 1e-12 <= cg.bound + 2e-12
        assert cg.bound - cg.value <= 1e-6 * expected


def test_sparse_column_form_rebuilds_every_ray_exactly():
    rng = np.random.default_rng(3)
    n = 9
    R = np.vstack(
        [
            np.where(rng.random((20, n)) < 0.3, 1.0, 0.37),  # two-level, few items at 1
            np.where(rng.random((20, n)) < 0.8, 1.0, 0.37),  # two-level, most items at 1
            np.where(rng.random((20, n)) < 0.7, 1.0, 0.0),  # 1_A
        ]
    )
    R[40:, 0] = 0.25  # 1_A + w e_j, j = 0
    starts, index, value = _base_and_deviation(R)
    ends = np.r_[starts[1:], len(value)]
    for i, r in enumerate(R):
        col = np.zeros(n + 1)
        col[index[starts[i] : ends[i]]] = value[starts[i] : ends[i]]
        base = col[n]
        assert np.array_equal(base + col[:n], r)  # b·1 + d = r, bit for bit
        assert ends[i] - starts[i] <= n // 2 + 2  # at most half the entries differ from the base, plus j and b


@pytest.mark.parametrize("seed", [0, 1])
def test_pooled_ray_lp_in_sparse_form_meets_the_dense_ray_lp(seed):
    # the ray LP max Σθμ(r) s.t. Σθ r = 1 over random rays of the families, by scipy on the dense form
    s, P = mi_spec(7, 1.0, seed)
    fams = families(s)
    mu_fn = column_utility(s)
    rng = np.random.default_rng(seed)
    R = [start_rays(s, fams)]
    for kind, size, level in fams:
        for _ in range(15):
            A = rng.permutation(7)[:size]
            r = np.full(7, level if kind == "two" else 0.0)
            r[A] = 1.0
            if kind == "zero":
                r[rng.choice(np.setdiff1d(np.arange(7), A))] = level
            R.append(r[None, :])
    R = np.unique(np.vstack(R), axis=0)
    mu = mu_fn(R)
    ref = linprog(-mu, A_eq=R.T, b_eq=np.ones(7), bounds=(0, None), method="highs")
    assert ref.status == 0
    lp = PooledRayLP(7)
    lp.add(R, mu)
    theta, lam, value = lp.solve(30.0)
    assert value == pytest.approx(-ref.fun, rel=1e-10)
    assert np.allclose(R.T @ theta, 1.0, atol=1e-9)  # primal feasible in the dense form
    assert lam.sum() == pytest.approx(value, rel=1e-9)  # strong duality
    assert np.all(R @ lam >= mu - 1e-9)  # dual feasible: λ·r ≥ μ(r) for every ray of the LP


def test_restore_returns_only_the_best_pooled_rays(monkeypatch):
    monkeypatch.setattr(ray_pool, "RESTORE_PER_ROW", 2)
    n = 4
    lp = PooledRayLP(n)
    rng = np.random.default_rng(0)
    R = rng.random((30, n)) + 0.1
    mu = rng.random(30)
    lp._pool_append(R, mu)
    lam = np.zeros(n)  # every pooled ray improves (μ > 0 = λ·r)
    assert lp.restore_from_pool(lam, 0.0) == 2 * n
    red = mu / R.sum(axis=1)
    best = {R[i].tobytes() for i in np.argsort(-red)[: 2 * n]}
    assert {r.tobytes() for r in lp.R} == best


def test_cyclic_rows_are_the_rolls_of_the_pattern():
    p = np.array([0.3, 1.0, 1.0, 0.0, 0.7])
    assert np.array_equal(cyclic(5, p), np.array([np.roll(p, k) for k in range(5)]))
