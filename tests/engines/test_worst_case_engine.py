"""The worst-case-prior kernel LP without compiling it (mechdesign.engines.worst_case) against an independent LP.

Expected values: ``reference_worst_case`` of tests/engines/test_kernel_engine.py, the LP of docs/explanation/mathematics.md, section 'Linear constraints' with every vertex
constraint written out and no lifting (linprog): minimise τ over kernels K and τ subject to Σ_y K_xy = 1,
K_xy ≤ e^ε v·K(:,y) for every x, y and vertex v of Q_X(c) (v_j = c·1 + (1 − Nc)e_j; the simplex: e_j), and
v·r ≤ τ for every vertex v, r_x = Σ_y L_xy K_xy. The engine writes none of this: it uses the closed form
c Σ r + (1 − Nc) max r of the worst prior, the a/u/d lifting of the cone and its Lagrangian bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from test_kernel_engine import reference_worst_case

from mechdesign import design
from mechdesign.engines.worst_case import solve_worst_case_kernel_lp, worst_case_bound, worst_case_value


def reference(L: np.ndarray, c: float, eps: float) -> float:
    """reference_worst_case keeps τ ≥ 0 (linprog's default bounds): for a loss with negative entries, solve it for
    L − min L ≥ 0 and add min L back (every row of K and every prior sums to 1, so each r_x, and so the worst
    case, shifts by exactly that constant)."""
    shift = min(float(L.min()), 0.0)
    return reference_worst_case(L - shift, c, eps) + shift


def losses(kind: str, n: int, m: int, rng) -> np.ndarray:
    x, y = np.arange(n)[:, None], np.arange(m)[None, :] * (n - 1) / max(m - 1, 1)
    return {
        "absolute": np.abs(x - y),
        "squared": (x - y) ** 2,
        "hamming": (x != np.arange(m)[None, :]) * 1.0,
        "random": rng.random((n, m)),
        "signed": rng.normal(size=(n, m)),  # negative losses (gains): τ's term of the bound must cover them
    }[kind]


CASES = [
    (seed, kind, n, m, c_of_n)
    for seed, (kind, n, m, c_of_n) in enumerate(
        [
            ("absolute", 7, 7, "1/(2N)"),
            ("absolute", 9, 5, "0"),
            ("squared", 6, 6, "1/(3N)"),
            ("hamming", 8, 8, "1/(2N)"),
            ("hamming", 6, 6, "0"),
            ("hamming", 5, 9, "1/(4N)"),
            ("random", 7, 4, "1/(2N)"),
            ("random", 5, 8, "0"),
            ("signed", 6, 6, "1/(2N)"),
            ("signed", 5, 7, "0"),
            ("absolute", 6, 6, "1/N"),  # Q_X(1/N) = {uniform}: τ has cost 0
            ("absolute", 12, 12, "1/(2N)"),
        ]
    )
]


@pytest.mark.parametrize("seed,kind,n,m,c_text", CASES)
@pytest.mark.parametrize("eps", [0.4, 1.0, 2.5])
def test_engine_reaches_the_vertex_lp_with_a_true_bound(seed, kind, n, m, c_text, eps):
    rng = np.random.default_rng(seed)
    L = losses(kind, n, m, rng)
    c = {"0": Fraction(0), "1/N": Fraction(1, n), "1/(2N)": Fraction(1, 2 * n), "1/(3N)": Fraction(1, 3 * n)}.get(
        c_text, Fraction(1, 4 * n)
    )
    E = math.exp(-eps) * (1 - 1e-15)  # a float ≤ e^{−ε}
    res = solve_worst_case_kernel_lp(L, c, E)
    ref = reference(L, float(c), eps)
    assert res.status == "optimal"
    scale = max(1.0, abs(ref))
    assert res.value == pytest.approx(ref, abs=1e-7 * scale)
    assert res.bound <= ref + 1e-12 * scale  # a true lower bound on the minimum
    assert res.value - res.bound <= 1e-7 * scale
    K = res.kernel
    assert np.all(K >= -1e-12) and np.allclose(K.sum(axis=1), 1.0, atol=1e-9)
    # its worst case, from the vertices (not the engine's closed form), is the value reported
    V = np.full((n, n), float(c))
    np.fill_diagonal(V, 1.0 - (n - 1) * float(c))
    assert max(V @ (K * L).sum(axis=1)) == pytest.approx(res.value, abs=1e-9 * scale)
    # every column is (ε, Q_X(c))-PML: K_xy ≤ e^ε v·K(:,y) for every vertex v (up to the LP's tolerance)
    assert np.all(K.max(axis=0) <= math.exp(eps) * (V @ K).min(axis=0) + 1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_any_multipliers_give_a_lower_bound(seed):
    """worst_case_bound at random π and random μ ≥ 0 with Σμ ≤ 1 − Nc (strictly below too) never exceeds the optimum."""
    rng = np.random.default_rng(100 + seed)
    n, m = 6, 6
    kind = ["absolute", "signed", "random"][seed % 3]
    L = losses(kind, n, m, rng)
    c = Fraction(1, 2 * n) if seed % 2 else Fraction(0)
    ref = reference(L, float(c), 1.0)
    a = float(1 - n * c)
    E = math.exp(-1.0) * (1 - 1e-15)
    for _ in range(20):
        mu = rng.random(n) * rng.random(n)
        mu *= a * rng.uniform(0.2, 0.999) / mu.sum()
        pi = rng.normal(scale=float(np.abs(L).max()), size=n) * 0.1
        assert worst_case_bound(L, c, pi, mu, E) <= ref + 1e-12


def test_multipliers_that_sum_past_the_free_mass_are_refused():
    n = 4
    L = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) * 1.0
    c = Fraction(1, 8)  # 1 − Nc = 1/2
    with pytest.raises(ValueError, match="1 − Nc"):
        worst_case_bound(L, c, np.zeros(n), np.full(n, 0.13), 0.3)
    with pytest.raises(ValueError, match="≥ 0"):
        worst_case_bound(L, c, np.zeros(n), np.array([0.2, -0.1, 0.1, 0.1]), 0.3)


def test_worst_case_value_is_the_worst_vertex():
    rng = np.random.default_rng(7)
    n, m = 5, 3
    K = rng.random((n, m))
    K /= K.sum(axis=1, keepdims=True)
    L = rng.random((n, m))
    c = 0.05
    V = np.full((n, n), c)
    np.fill_diagonal(V, 1.0 - (n - 1) * c)
    assert worst_case_value(K, L, c) == pytest.approx(max(V @ (K * L).sum(axis=1)), rel=1e-14)


@pytest.mark.parametrize("loss", ["absolute", "hamming"])
@pytest.mark.parametrize("prior_set,c", [({"kind": "min_mass", "c": "1/30"}, 1 / 30), ({"kind": "simplex"}, 0.0)])
def test_design_routes_the_worst_case_through_the_engine_and_certifies_it(loss, prior_set, c):
    n = 15
    spec = {
        "alphabet": n,
        "epsilon": 1,
        "prior_set": prior_set,
        "objective": {"kind": "expected_loss", "loss": loss, "prior": "worst_case"},
    }
    r = design(spec)
    assert r.is_ok, (r.status, r.solve.message)
    assert r.solve.method in (
        "output generation (worst case)",
        "ray master (uniform prior)",
        "interval-partition master (worst case, ε-LDP)",  # ε-LDP with |x − y|
    )
    x, y = np.arange(n)[:, None], np.arange(n)[None, :]
    L = np.abs(x - y) * 1.0 if loss == "absolute" else (x != y) * 1.0
    ref = reference(L, c, 1.0)
    assert r.objective == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert r.certificate.dual_bound <= ref + 1e-9
