"""The rounding allowances that keep a reported bound on the safe side, each against an exact reference with no
tolerance on the unsafe side.

1. The Lagrangian bound (mechdesign/cone/lagrangian_bound.py) is ≤ the exact Lagrangian dual function
       L(π) = Σ_x π_x + Σ_y min(0, min_{r∈𝒦} (C(:,y) − π)·r),
       𝒦 = {k ∈ [0,1]^N : E·k_a ≤ c Σ_x k_x + (1 − Nc) k_b for all a, b}
   (Lemma 4 of the Dobrushin paper, scaled by E ≤ e^−ε), evaluated in Fractions over the vertices of 𝒦, which
   are enumerated here by brute force (every N active constraints, solved exactly), at adversarial multipliers:
   large entries of alternating sign whose sum cancels, so the pricing's rounding is far above the total.
2. The e^−ε handed to the LP's PML rows (mechdesign.objectives.compile.exp_minus_epsilon_down) is ≤ e^−ε,
   against mpmath at 256 bits.
3. The floating-point weak-duality bound of mechdesign.lp.program.dual_bound (the path above
   EXACT_BOUND_MAX_NONZEROS nonzeros, run here on small LPs by setting the threshold to 0) is on the safe side
   of the bound written from its definition in Fractions.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp

from mechdesign.cone.lagrangian_bound import lagrangian_bound


# ------------------------------------------------------------------ 1. the Lagrangian bound
def _vertices(n: int, c: F, E: F) -> list[list[F]]:
    """Every vertex of 𝒦(E, c) ⊂ [0,1]^N: the feasible solutions of N linearly independent active constraints."""
    rows = []  # (a, b) with a·k ≤ b
    for x in range(n):
        rows.append(([F(-1) if i == x else F(0) for i in range(n)], F(0)))
        rows.append(([F(1) if i == x else F(0) for i in range(n)], F(1)))
    for a in range(n):
        for b in range(n):
            coef = [-c for _ in range(n)]
            coef[a] += E
            coef[b] -= 1 - n * c
            rows.append((coef, F(0)))
    found = set()
    for active in itertools.combinations(range(len(rows)), n):
        M = [list(rows[i][0]) + [rows[i][1]] for i in active]
        # Gauss–Jordan elimination in Fractions
        ok = True
        for col in range(n):
            piv = next((r for r in range(col, n) if M[r][col] != 0), None)
            if piv is None:
                ok = False
                break
            M[col], M[piv] = M[piv], M[col]
            for r in range(n):
                if r != col and M[r][col] != 0:
                    f = M[r][col] / M[col][col]
                    M[r] = [a - f * b for a, b in zip(M[r], M[col])]
        if not ok:
            continue
        k = tuple(M[i][n] / M[i][i] for i in range(n))
        if all(sum(a * v for a, v in zip(coef, k)) <= rhs for coef, rhs in rows):
            found.add(k)
    return [list(v) for v in found]


def _exact_lagrangian(C: np.ndarray, pi: np.ndarray, vertices) -> F:
    n, m = C.shape
    pq = [F(float(v)) for v in pi]
    total = sum(pq, F(0))
    for y in range(m):
        w = [F(float(C[x, y])) - pq[x] for x in range(n)]
        total += min(F(0), min(sum(a * b for a, b in zip(w, v)) for v in vertices))
    return total


@pytest.mark.parametrize("n, c, eps", [(3, F(0), 1.0), (3, F(1, 6), 0.5), (3, F(1, 4), 2.0), (4, F(1, 10), 1.0)])
def test_lagrangian_bound_is_below_the_exact_dual_function_at_adversarial_multipliers(n, c, eps):
    m = 4
    rng = np.random.default_rng(n * 1000 + int(eps * 10))
    C = rng.random((n, m)) * np.abs(np.subtract.outer(np.arange(n), np.arange(m)))
    E = math.nextafter(math.exp(-eps), 0.0)
    vertices = _vertices(n, c, F(E))
    assert [F(0)] * n in vertices
    signs = np.array([(-1) ** x for x in range(n)], float)
    cases = []
    for scale in (1.0, 1e6, 1e12):
        for _ in range(6):
            pi = scale * signs * (1 + rng.integers(0, 3, n)) + rng.normal(size=n)
            pi[-1] -= pi.sum()  # Σ π cancels: the total is small next to the pricing's rounding
            cases.append(pi)
    cases.append(np.zeros(n))
    for pi in cases:
        bound = lagrangian_bound(C, pi, float(c), E)
        assert F(bound) <= _exact_lagrangian(C, pi, vertices)


# ------------------------------------------------------------------ 2. e^−ε rounded down
@pytest.mark.parametrize(
    "text",
    ["1e-9", "0.1", "1", "log(3)", "50", "1e-300", "0.7", "2.5", "log(10/3)", "3*log(2)", "13.7", "33", "49.99"]
    + [f"{k}/7" for k in range(1, 15)],
)
def test_exp_minus_epsilon_handed_to_the_lp_is_at_most_e_to_minus_epsilon(text):
    from mechdesign.objectives.compile import exp_minus_epsilon_down
    from mechdesign.spec.models import load_spec

    spec = load_spec(
        {"alphabet": 2, "epsilon": text, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
    )
    value = exp_minus_epsilon_down(spec)
    with mpmath.workprec(256):
        exact = mpmath.exp(-_eps(text))
        assert mpmath.mpf(value) <= exact
        assert mpmath.mpf(value) >= exact * (1 - mpmath.mpf(2) ** -50)  # and within a few ulps of it


def _eps(text: str):
    """ε of the test texts, in mpmath at the working precision (log(a/b), k*log(2), decimals, k/7)."""
    if text.startswith("log("):
        num, _, den = text[4:-1].partition("/")
        return mpmath.log(mpmath.mpf(num) / mpmath.mpf(den or 1))
    if "*log(" in text:
        k, _, rest = text.partition("*log(")
        return mpmath.mpf(k) * mpmath.log(mpmath.mpf(rest[:-1]))
    if "/" in text:
        num, _, den = text.partition("/")
        return mpmath.mpf(num) / mpmath.mpf(den)
    return mpmath.mpf(text)


# ------------------------------------------------------------------ 3. the float dual-bound path
def _exact_bound(lp, y) -> F:
    """min cᵀx + offset ≥ offset + Σ_r y_r (row_lower if y_r > 0 else row_upper) + Σ_j z_j (col_lower if z_j > 0
    else col_upper), z = c − Aᵀy: weak duality, every float an exact rational (finite bounds only here)."""
    y = [F(float(v)) for v in y]
    A = lp.A.toarray()
    total = F(float(lp.offset))
    for r, v in enumerate(y):
        if v:
            total += v * F(float(lp.row_lower[r] if v > 0 else lp.row_upper[r]))
    for j in range(lp.num_cols):
        z = F(float(lp.c[j])) - sum((y[i] * F(float(A[i, j])) for i in range(A.shape[0])), F(0))
        if z:
            total += z * F(float(lp.col_lower[j] if z > 0 else lp.col_upper[j]))
    return total


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("sense", [1, -1])
def test_float_dual_bound_path_is_on_the_safe_side_of_the_exact_bound(seed, sense, monkeypatch):
    from mechdesign.lp import program
    from mechdesign.lp.program import LinearProgram, dual_bound

    monkeypatch.setattr(program, "EXACT_BOUND_MAX_NONZEROS", 0)  # the path of LPs above 50,000 nonzeros
    rng = np.random.default_rng(seed)
    rows, cols = 6, 8
    # entries of every magnitude and sign (1/3, 0.1, 1e8 next to 1): the float sums round
    pool = np.array([1 / 3, 0.1, -0.7, 1e8, -1e8 + 1, 2.0 / 7, 1e-3, -5.5])
    A = rng.choice(pool, size=(rows, cols)) * (rng.random((rows, cols)) < 0.7)
    row_lower = rng.choice(pool, size=rows)
    lp = LinearProgram(
        c=sense * rng.choice(pool, size=cols),
        A=sp.csr_matrix(A),
        row_lower=row_lower,
        row_upper=row_lower + rng.choice([0.0, 1.0, 1 / 3], size=rows),
        col_lower=rng.choice([0.0, -1.0, 1 / 3], size=cols),
        col_upper=np.full(cols, 1e4 + 1 / 7),
        offset=rng.choice(pool),
        sense=sense,
    )
    y = rng.choice(pool, size=rows) * rng.choice([1.0, 1e-9, 3.0], size=rows)
    bound = dual_bound(lp, y)
    exact = _exact_bound(lp, y)  # of min cᵀx + offset, in the LP's internal (minimising) sense
    if sense > 0:
        assert F(bound) <= exact
    else:
        assert F(bound) >= -exact
