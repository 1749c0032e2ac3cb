"""An exact (rational) simplex method for small linear programs: the fallback when HiGHS's floating-point
tolerances are of the size of the problem's own numbers.

Examples: a prior mass 1e−9 next to masses ~1; ε = 1e−9, where every PML coefficient is 1 − O(1e−9) and
the optimum (Ξ(ε,c) ≈ ε/(2 − Nc) for the Dobrushin coefficient) is below HiGHS's feasibility tolerance.
Every float in the LP is an exact rational, so the LP *as stored* is solved exactly:

    minimise cᵀx + offset  s.t.  row_lower ≤ A x ≤ row_upper,  col_lower ≤ x ≤ col_upper

is brought to standard form  min c'ᵀz  s.t.  B z = b, z ≥ 0,  b ≥ 0  (x = col_lower + x' with x' ≥ 0, or
x = col_upper − x' when only the upper bound is finite, or x = x⁺ − x⁻ when free; a finite upper bound
on x' becomes a row x' + s = u − l; a ranged row gets a slack on each finite side) and solved by the
two-phase tableau simplex with Bland's rule (no cycling) in :class:`fractions.Fraction`. The row
multipliers y of the original rows (c = Aᵀy + z convention of :mod:`mechdesign.lp.solve`) are read off
the final tableau (y = c_Bᵀ B⁻¹, from the columns of the phase-1 artificials), so
:func:`mechdesign.lp.program.dual_bound` recomputes a bound that is the exact optimum up to the final
conversion to floats.

The tableau is dense: the method is for LPs with at most :data:`EXACT_MAX_CELLS` tableau entries.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LinearProgram

__all__ = ["solve_exact", "exact_applies", "EXACT_MAX_CELLS", "ExactLPResult"]

EXACT_MAX_CELLS = 30_000
"""Largest (rows + 1) × (columns + 1) of the standard-form tableau solved exactly."""
EXACT_MAX_PIVOTS = 20_000


class ExactLPResult:
    """status ('optimal', 'infeasible', 'unbounded', 'limit'), x (Fractions), y (row multipliers,
    Fractions), objective (Fraction, user's sense), pivots."""

    def __init__(self, status, x=None, y=None, objective=None, pivots=0):
        self.status, self.x, self.y, self.objective, self.pivots = status, x, y, objective, pivots


def _standard_form_size(lp: LinearProgram) -> tuple[int, int]:
    lo, up = lp.col_lower, lp.col_upper
    cols = lp.num_cols + int(np.sum(~np.isfinite(lo) & ~np.isfinite(up)))
    bounded = int(np.sum(np.isfinite(lo) & np.isfinite(up)))
    ranged = int(np.sum(np.isfinite(lp.row_lower) & np.isfinite(lp.row_upper) & (lp.row_lower != lp.row_upper)))
    rows = lp.num_rows + ranged + bounded
    slacks = bounded + int(np.sum(np.isfinite(lp.row_lower) != np.isfinite(lp.row_upper))) + 2 * ranged
    return rows, cols + slacks + rows  # + artificials


def exact_applies(lp: LinearProgram) -> bool:
    """True when ``lp`` is a plain LP small enough for :func:`solve_exact`."""
    if lp.integrality is not None:
        return False
    rows, cols = _standard_form_size(lp)
    return (rows + 1) * (cols + 1) <= EXACT_MAX_CELLS


def solve_exact(lp: LinearProgram, deadline: float | None = None) -> ExactLPResult:
    """Solve ``lp`` exactly (module docstring). ``deadline``: a time.perf_counter() value after which
    the method gives up (status 'limit')."""
    F = Fraction
    n = lp.num_cols
    A = lp.A.tocsr()
    # ---- variables: x_j = shift_j + sign_j * z_j  (and − z_neg_j when free)
    shift, sign, neg_col, ub_rows = [], [], {}, []
    ncols = n
    for j in range(n):
        lo, up = lp.col_lower[j], lp.col_upper[j]
        if np.isfinite(lo):
            shift.append(F(float(lo)))
            sign.append(1)
            if np.isfinite(up):
                ub_rows.append((j, F(float(up)) - F(float(lo))))
        elif np.isfinite(up):
            shift.append(F(float(up)))
            sign.append(-1)
        else:
            shift.append(F(0))
            sign.append(1)
            neg_col[j] = ncols
            ncols += 1
    # ---- rows as (coefficients dict, kind, rhs, original row, factor)
    rows = []
    for r in range(lp.num_rows):
        start, end = A.indptr[r], A.indptr[r + 1]
        coef = {}
        const = F(0)
        for j, v in zip(A.indices[start:end], A.data[start:end]):
            v = F(float(v))
            const += v * shift[j]
            coef[int(j)] = coef.get(int(j), F(0)) + v * sign[j]
            if j in neg_col:
                coef[neg_col[j]] = -v
        lo, up = lp.row_lower[r], lp.row_upper[r]
        if np.isfinite(lo) and np.isfinite(up) and lo == up:
            rows.append((coef, "=", F(float(lo)) - const, r))
            continue
        if np.isfinite(up):
            rows.append((coef, "<=", F(float(up)) - const, r))
        if np.isfinite(lo):
            rows.append((coef, ">=", F(float(lo)) - const, r))
    for j, width in ub_rows:
        rows.append(({j: F(1)}, "<=", width, None))
    # slacks
    m = len(rows)
    slack_of = {}
    total = ncols
    for i, (_, kind, _, _) in enumerate(rows):
        if kind != "=":
            slack_of[i] = total
            total += 1
    art0 = total
    width = total + m + 1  # + artificials + rhs
    T = [[F(0)] * width for _ in range(m)]
    flip = []
    for i, (coef, kind, rhs, _) in enumerate(rows):
        row = T[i]
        for j, v in coef.items():
            row[j] = v
        if kind == "<=":
            row[slack_of[i]] = F(1)
        elif kind == ">=":
            row[slack_of[i]] = F(-1)
        row[-1] = rhs
        s = -1 if rhs < 0 else 1
        if s < 0:
            for k in range(width):
                row[k] = -row[k]
        flip.append(s)
        row[art0 + i] = F(1)
    basis = [art0 + i for i in range(m)]
    # costs (minimisation, standard form)
    cost = [F(0)] * width
    const_obj = F(float(lp.offset))
    for j in range(n):
        cj = F(float(lp.c[j]))
        const_obj += cj * shift[j]
        cost[j] = cj * sign[j]
        if j in neg_col:
            cost[neg_col[j]] = -cj
    pivots = 0

    def run(obj, allowed_limit):
        nonlocal pivots
        # reduced-cost row: d_k = obj_k − Σ_i obj_{B_i} T[i][k]
        d = list(obj)
        for i, bcol in enumerate(basis):
            cb = obj[bcol]
            if cb:
                Ti = T[i]
                for k in range(width):
                    if Ti[k]:
                        d[k] -= cb * Ti[k]
        while True:
            if deadline is not None and time.perf_counter() > deadline or pivots > EXACT_MAX_PIVOTS:
                return "limit", d
            enter = next((k for k in range(allowed_limit) if d[k] < 0), None)
            if enter is None:
                return "optimal", d
            best, leave = None, None
            for i in range(m):
                a = T[i][enter]
                if a > 0:
                    ratio = T[i][-1] / a
                    if best is None or ratio < best or (ratio == best and basis[i] < basis[leave]):
                        best, leave = ratio, i
            if leave is None:
                return "unbounded", d
            pivots += 1
            prow = T[leave]
            p = prow[enter]
            if p != 1:
                prow[:] = [v / p for v in prow]
            nzk = [k for k in range(width) if prow[k]]
            for i in range(m):
                if i != leave:
                    f = T[i][enter]
                    if f:
                        Ti = T[i]
                        for k in nzk:
                            Ti[k] -= f * prow[k]
            f = d[enter]
            if f:
                for k in nzk:
                    d[k] -= f * prow[k]
            basis[leave] = enter

    # phase 1: minimise the sum of artificials
    phase1 = [F(0)] * width
    for i in range(m):
        phase1[art0 + i] = F(1)
    status, d = run(phase1, art0 + m)
    if status == "limit":
        return ExactLPResult("limit", pivots=pivots)
    infeas = sum((T[i][-1] for i in range(m) if basis[i] >= art0), F(0))
    if infeas > 0:
        return ExactLPResult("infeasible", pivots=pivots)
    # drive artificials out of the basis where possible (degenerate rows)
    for i in range(m):
        if basis[i] >= art0:
            k = next((k for k in range(art0) if T[i][k] != 0), None)
            if k is not None:
                prow = T[i]
                p = prow[k]
                prow[:] = [v / p for v in prow]
                for r in range(m):
                    if r != i and T[r][k]:
                        f = T[r][k]
                        T[r] = [a - f * b for a, b in zip(T[r], prow)]
                basis[i] = k
    # phase 2 (artificials may not enter; a redundant row keeps its artificial at 0)
    status, d = run(cost, art0)
    if status != "optimal":
        return ExactLPResult(status, pivots=pivots)
    z = [F(0)] * total
    for i, bcol in enumerate(basis):
        if bcol < total:
            z[bcol] = T[i][-1]
    x = []
    for j in range(n):
        v = shift[j] + sign[j] * z[j]
        if j in neg_col:
            v -= z[neg_col[j]]
        x.append(v)
    # duals of the standard-form rows: y_std_i = −d[art_i] (cost of artificials is 0 in phase 2)
    y = [F(0)] * lp.num_rows
    for i, (_, _, _, r) in enumerate(rows):
        if r is None:
            continue
        y[r] += -d[art0 + i] * flip[i]
    objective = const_obj + sum((cost[k] * z[k] for k in range(total) if cost[k]), F(0))
    return ExactLPResult("optimal", x=x, y=y, objective=lp.sense * objective, pivots=pivots)
