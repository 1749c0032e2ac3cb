"""Column generation solves the lifted kernel LP to the same optimum, and its multipliers
certify that optimum through the lifted LP's own dual bound.

References, independent of the LP mechdesign builds: the lifted (ε,Q_X(c))-PML kernel LP written out here from
Lemma 4 of the Dobrushin paper (variables K, t ≥ column maxima, u ≤ column minima; rows Σ_y K_xy = 1,
K_xy ≤ t_y, u_y ≤ K_xy, e^{−ε} t_y ≤ c Σ_x K_xy + (1 − Nc) u_y) and solved by scipy.optimize.linprog; its
kernel, mixed with the uniform constant kernel until Lemma 4 holds exactly in Fractions (against a rational
below e^ε), is a private kernel whose exact loss is at least the optimum: the dual bound must not exceed it.
"""

from fractions import Fraction as F

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.engines.output_generation import solve_output_generation
from mechdesign.objectives.registry import compile_problem
from mechdesign.lp.program import dual_bound
from mechdesign.spec.models import load_spec


def _independent_lp(C: np.ndarray, c: float, eps: float) -> tuple[float, np.ndarray]:
    n, m = C.shape
    nk, nv = n * m, n * m + 2 * m
    A_eq = sp.csr_matrix((np.ones(nk), (np.repeat(np.arange(n), m), np.arange(nk))), shape=(n, nv))
    rows, cols, vals, r = [], [], [], 0
    for y in range(m):
        for x in range(n):
            rows += [r, r, r + 1, r + 1]
            cols += [x * m + y, nk + y, nk + m + y, x * m + y]
            vals += [1.0, -1.0, 1.0, -1.0]
            r += 2
        rows += [r] * (n + 2)
        cols += [nk + y] + [x * m + y for x in range(n)] + [nk + m + y]
        vals += [np.exp(-eps)] + [-c] * n + [-(1 - n * c)]
        r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    cost = np.concatenate([C.ravel(), np.zeros(2 * m)])
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(n), bounds=(0, 1), method="highs")
    assert res.status == 0
    return float(res.fun), res.x[:nk].reshape(n, m)


def _exp_lower(t: F) -> F:
    """A rational ≤ e^t (t ≥ 0): the Taylor sum to t^60/60!."""
    term, total = F(1), F(0)
    for k in range(61):
        total += term
        term = term * t / (k + 1)
    return total


def _exactly_private_loss(K: np.ndarray, C: np.ndarray, c: F, eps: F) -> F:
    """The exact loss Σ C K' of K' = (1 − w)K + w·(uniform rows), the smallest w of 0, 1e-14, 1e-13, ..., 1 for
    which K' (rows normalised exactly) satisfies Lemma 4 in Fractions: max_x K'_x(y) ≤ E (c Σ_x K'_x(y) +
    (1 − Nc) min_x K'_x(y)) with E ≤ e^ε."""
    n, m = K.shape
    E = _exp_lower(eps)
    rows = []
    for x in range(n):
        r = [F(max(float(v), 0.0)) for v in K[x]]
        s = sum(r)
        rows.append([v / s for v in r])
    for w in [F(0)] + [F(1, 10**k) for k in range(14, -1, -1)]:
        Kp = [[(1 - w) * v + w / m for v in row] for row in rows]
        cols = [[Kp[x][y] for x in range(n)] for y in range(m)]
        if all(max(col) <= E * (c * sum(col) + (1 - n * c) * min(col)) for col in cols):
            return sum(F(float(C[x, y])) * Kp[x][y] for x in range(n) for y in range(m))
    raise AssertionError("the uniform kernel is private: unreachable")


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
    L = np.asarray(loss, float) if isinstance(loss, list) else _named_loss(loss, n)
    C = L / n  # uniform prior
    c = F(str(c_frac / n)) if c_frac else F(0)  # the float c_frac/n as the spec reads it (its decimal)
    ref, K_ref = _independent_lp(C, float(c), eps)
    res = solve_output_generation(lp, compiled.layout)
    assert res.status == "optimal"
    assert lp.user_objective(res.x) == pytest.approx(ref, abs=1e-9)
    bound = dual_bound(lp, res.row_dual)
    achieved = _exactly_private_loss(K_ref, C, c, F(str(eps)))  # an exactly private kernel: ≥ the optimum
    assert F(bound) <= achieved  # a bound on the optimum: never above what a private kernel achieves
    assert bound >= float(achieved) - 1e-7  # and tight
    ax = lp.A @ res.x
    assert np.all(ax <= lp.row_upper + 1e-9) and np.all(ax >= lp.row_lower - 1e-9)
    assert np.all(res.x >= lp.col_lower - 1e-12) and np.all(res.x <= lp.col_upper + 1e-12)


def _named_loss(loss: str, n: int) -> np.ndarray:
    x, y = np.arange(n)[:, None], np.arange(n)[None, :]
    return {"absolute": np.abs(x - y), "squared": (x - y) ** 2, "hamming": x != y}[loss].astype(float)
