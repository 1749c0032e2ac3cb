"""The rigorous Lagrangian bound (mechdesign/cone/lagrangian_bound.py) against an independent lifted LP.

Expected values come from scipy.optimize.linprog on the lifted (ε,Q_X(c))-PML kernel LP written out here
from docs/explanation/mathematics.md, section 'Linear constraints' (Lemma 4 of the Dobrushin paper): variables K (N×M), t (column maxima), u (column minima);
rows Σ_y K_xy = 1, K_xy ≤ t_y, u_y ≤ K_xy, e^{−ε} t_y ≤ c Σ_x K_xy + (1 − Nc) u_y. Not built by mechdesign.
By weak duality the bound is below that optimum for every π; at the LP's own row-sum multipliers (scipy's
``eqlin.marginals``) strong duality makes it tight.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.cone.lagrangian_bound import lagrangian_bound, pricing_c


def direct_lp(C: np.ndarray, c: float, eps: float) -> float:
    n, m = C.shape
    nk = n * m
    K = lambda x, y: x * m + y  # noqa: E731
    t = lambda y: nk + y  # noqa: E731
    u = lambda y: nk + m + y  # noqa: E731
    nv = nk + 2 * m
    eq_r, eq_c = [], []
    for x in range(n):
        for y in range(m):
            eq_r.append(x)
            eq_c.append(K(x, y))
    A_eq = sp.csr_matrix((np.ones(len(eq_r)), (eq_r, eq_c)), shape=(n, nv))
    rows, cols, vals, r = [], [], [], 0
    for y in range(m):
        for x in range(n):
            rows += [r, r]
            cols += [K(x, y), t(y)]
            vals += [1.0, -1.0]
            r += 1
            rows += [r, r]
            cols += [u(y), K(x, y)]
            vals += [1.0, -1.0]
            r += 1
        rows += [r] + [r] * n + [r]
        cols += [t(y)] + [K(x, y) for x in range(n)] + [u(y)]
        vals += [np.exp(-eps)] + [-c] * n + [-(1 - n * c)]
        r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    cost = np.concatenate([C.ravel(), np.zeros(2 * m)])
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(n), bounds=(0, 1), method="highs")
    assert res.status == 0
    return float(res.fun), np.asarray(res.eqlin.marginals, float)


def losses(n, m):
    x, y = np.arange(n)[:, None], np.arange(m)[None, :]
    return {"absolute": np.abs(x - y) * 1.0, "squared": (x - y) ** 2 * 1.0, "hamming": (x != y) * 1.0}


@pytest.mark.parametrize("n,m", [(5, 3), (6, 6), (4, 7)])
@pytest.mark.parametrize("eps", [1e-3, 1.0, 5.0])
@pytest.mark.parametrize("c_num", [0, 1])  # c = 0 (LDP) and c = 1/(2N)
@pytest.mark.parametrize("loss", ["absolute", "squared", "hamming"])
def test_lagrangian_bound_is_below_the_direct_lp_and_tight_at_its_duals(n, m, eps, c_num, loss):
    rng = np.random.default_rng(n * 100 + m)
    prior = rng.dirichlet(np.ones(n))
    C = prior[:, None] * losses(n, m)[loss]
    c = Fraction(c_num, 2 * n)
    expected, pi_star = direct_lp(C, float(c), eps)
    E = np.nextafter(np.exp(-eps), 0.0)
    at_optimum = lagrangian_bound(C, pi_star, pricing_c(c), E)
    assert at_optimum <= expected + 1e-12  # a true lower bound
    assert at_optimum == pytest.approx(expected, abs=1e-7)  # strong duality: tight at the optimal multipliers
    for _ in range(5):  # weak duality: any π gives a lower bound
        pi = pi_star + rng.normal(scale=0.1 * (1.0 + np.abs(pi_star).max()), size=n)
        assert lagrangian_bound(C, pi, pricing_c(c), E) <= expected + 1e-12


@pytest.mark.parametrize("c", [Fraction(0), Fraction(1, 3), Fraction(1, 10), Fraction(1, 2000), Fraction(1, 4)])
def test_pricing_c_is_the_smallest_float_not_below_c(c):
    f = pricing_c(c)
    assert Fraction(f) >= c
    assert Fraction(math.nextafter(f, -math.inf)) < c or f == 0.0
