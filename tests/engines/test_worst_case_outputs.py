"""Worst-case-prior expected loss by output generation with the epigraph rows kept, both engines: the uncompiled
one (mechdesign.engines.worst_case, what a plain Q_X(c) or simplex spec runs) and the side-row one on the
compiled LP (mechdesign.engines.side_outputs, what runs when ``privacy`` lists further guarantees: here the same
guarantee twice, so the optimum is the same), against an independent LP written here with scipy.optimize.linprog.

Expected values: the LP of docs/explanation/mathematics.md, section 'Linear constraints' written with the vertices of the prior set, no lifting:
minimise τ over kernels K (N × M) and τ subject to
    Σ_y K_xy = 1,  0 ≤ K ≤ 1,
    K_xy ≤ e^ε v·K(:,y)            for every x, y and vertex v       ((ε,𝒫)-PML, vertex form),
    Σ_x v(x) Σ_y L(x,y) K_xy ≤ τ  for every vertex v                 (τ ≥ max_{P∈𝒫} P·r),
with the vertices of Q_X(c) v_j = c·1 + (1 − Nc)e_j (Lemma 4 of the Dobrushin paper) and of the simplex e_j.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign import design


def loss(kind, n):
    x, y = np.arange(n)[:, None], np.arange(n)[None, :]
    return {"hamming": (x != y) * 1.0, "absolute": np.abs(x - y) * 1.0, "squared": (x - y) ** 2 * 1.0}[kind]


def worst_case_by_vertices(n, eps, c, L):
    m = L.shape[1]
    V = c * np.ones((n, n)) + (1 - n * c) * np.eye(n)  # row j: vertex v_j
    E = math.exp(eps)
    nv = n * m + 1  # K row-major, then τ
    A_ub, b_ub = [], []
    for y in range(m):
        for x in range(n):
            for v in V:
                row = np.zeros(nv)
                row[np.arange(n) * m + y] -= E * v
                row[x * m + y] += 1.0
                A_ub.append(row)
                b_ub.append(0.0)
    for v in V:
        row = np.zeros(nv)
        row[: n * m] = (v[:, None] * L).ravel()
        row[-1] = -1.0
        A_ub.append(row)
        b_ub.append(0.0)
    A_eq = np.zeros((n, nv))
    for x in range(n):
        A_eq[x, x * m : (x + 1) * m] = 1.0
    cost = np.zeros(nv)
    cost[-1] = 1.0
    res = linprog(
        cost,
        A_ub=np.array(A_ub),
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=np.ones(n),
        bounds=[(0, 1)] * (n * m) + [(None, None)],
        method="highs",
    )
    assert res.status == 0
    return res.fun


CASES = [
    (n, eps, c, kind)
    for n, eps, c in [
        (4, 1.0, Fraction(1, 8)),
        (6, 0.5, Fraction(1, 12)),
        (8, 1.0, Fraction(1, 40)),
        (5, 0.7, Fraction(0)),
        (7, 2.0, Fraction(1, 7)),
    ]
    for kind in ("hamming", "absolute", "squared")
]


@pytest.mark.parametrize("engine", ["uncompiled", "side rows"])
@pytest.mark.parametrize("n,eps,c,kind", CASES)
def test_worst_case_output_generation_reaches_the_vertex_lp(n, eps, c, kind, engine):
    prior_set = {"kind": "simplex"} if c == 0 else {"kind": "min_mass", "c": str(c)}
    spec = {
        "alphabet": n,
        "objective": {"kind": "expected_loss", "loss": kind, "prior": "worst_case"},
        "output_size": n,
    }
    if engine == "uncompiled":
        spec |= {"epsilon": eps, "prior_set": prior_set}
    else:
        spec["privacy"] = [{"epsilon": eps, "prior_set": prior_set}] * 2
    result = design(spec)
    expected = worst_case_by_vertices(n, eps, float(c), loss(kind, n))
    if engine == "uncompiled":  # the engine ran, not the fallback
        assert result.solve.method in (
            "output generation (worst case)",
            "ray master (uniform prior)",
            "interval-partition master (worst case, ε-LDP)",  # ε-LDP with |x − y|
        )
    else:
        assert "output-generation" in result.solve.method
        assert result.certificate.lp_objective == pytest.approx(expected, rel=1e-8, abs=1e-9)
    assert result.is_ok, (result.status, result.solve.message)
    assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-9)
    assert result.certificate.dual_bound <= expected + 1e-9  # a true lower bound on the minimum


def test_a_spent_time_limit_is_reported_not_certified_optimal():
    spec = {
        "alphabet": 300,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": "1/600"},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
        "output_size": 300,
        "solver": {"time_limit": 0.01},
    }
    result = design(spec)
    assert result.status.value != "optimal"
    assert not result.is_ok
