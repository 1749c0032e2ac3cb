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
from dataclasses import dataclass
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
    the method gives up (status 'limit'). The phases: standard form (:func:`_standard_variables`,
    :func:`_standard_rows`), the tableau (:class:`_Tableau`), phase 1 (feasibility), artificials driven out,
    phase 2 (optimality), then x and the row multipliers of the original rows."""
    variables = _standard_variables(lp)
    rows = _standard_rows(lp, variables)
    tableau = _Tableau(rows, variables.ncols, deadline)
    cost, const_obj = _standard_costs(lp, variables, tableau.width)
    # phase 1: minimise the sum of artificials
    phase1 = [Fraction(0)] * tableau.width
    for i in range(tableau.m):
        phase1[tableau.art0 + i] = Fraction(1)
    status, _ = tableau.run(phase1, tableau.art0 + tableau.m)
    if status == "limit":
        return ExactLPResult("limit", pivots=tableau.pivots)
    if tableau.infeasibility() > 0:
        return ExactLPResult("infeasible", pivots=tableau.pivots)
    tableau.drive_out_artificials()
    # phase 2 (artificials may not enter; a redundant row keeps its artificial at 0)
    status, d = tableau.run(cost, tableau.art0)
    if status != "optimal":
        return ExactLPResult(status, pivots=tableau.pivots)
    z = tableau.basic_solution()
    x = variables.original(z, lp.num_cols)
    # duals of the standard-form rows: y_std_i = −d[art_i] (cost of artificials is 0 in phase 2)
    y = [Fraction(0)] * lp.num_rows
    for i, (_, _, _, r) in enumerate(rows):
        if r is None:
            continue
        y[r] += -d[tableau.art0 + i] * tableau.flip[i]
    objective = const_obj + sum((cost[k] * z[k] for k in range(tableau.total) if cost[k]), Fraction(0))
    return ExactLPResult("optimal", x=x, y=y, objective=lp.sense * objective, pivots=tableau.pivots)


@dataclass
class _Variables:
    """x_j = shift_j + sign_j·z_j (− z_{neg_col[j]} when x_j is free); ``ub_rows``: (j, u_j − l_j) for the columns
    with both bounds finite; ``ncols``: standard-form columns before the slacks."""

    shift: list
    sign: list
    neg_col: dict
    ub_rows: list
    ncols: int

    def original(self, z: list, n: int) -> list:
        x = []
        for j in range(n):
            v = self.shift[j] + self.sign[j] * z[j]
            if j in self.neg_col:
                v -= z[self.neg_col[j]]
            x.append(v)
        return x


def _standard_variables(lp: LinearProgram) -> _Variables:
    """The substitution of every column by non-negative standard-form columns (module docstring)."""
    F = Fraction
    n = lp.num_cols
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
    return _Variables(shift, sign, neg_col, ub_rows, ncols)


def _standard_rows(lp: LinearProgram, variables: _Variables) -> list:
    """The rows in the standard-form columns, as (coefficients dict, kind '=', '<=' or '>=', rhs, original row or
    None for a column's upper bound); a ranged row gives two."""
    F = Fraction
    A = lp.A.tocsr()
    shift, sign, neg_col = variables.shift, variables.sign, variables.neg_col
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
    for j, width in variables.ub_rows:
        rows.append(({j: F(1)}, "<=", width, None))
    return rows


def _standard_costs(lp: LinearProgram, variables: _Variables, width: int) -> tuple[list, Fraction]:
    """The standard-form cost row (minimisation) and the constant the substitution adds to the objective."""
    F = Fraction
    cost = [F(0)] * width
    const_obj = F(float(lp.offset))
    for j in range(lp.num_cols):
        cj = F(float(lp.c[j]))
        const_obj += cj * variables.shift[j]
        cost[j] = cj * variables.sign[j]
        if j in variables.neg_col:
            cost[variables.neg_col[j]] = -cj
    return cost, const_obj


class _Tableau:
    """The dense tableau [B | slacks | artificials | b] with b ≥ 0 (rows flipped where b < 0) and its basis, started
    at the artificials; pivots by Bland's rule."""

    def __init__(self, rows: list, ncols: int, deadline: float | None):
        F = Fraction
        self.deadline = deadline
        self.m = m = len(rows)
        slack_of = {}
        total = ncols
        for i, (_, kind, _, _) in enumerate(rows):
            if kind != "=":
                slack_of[i] = total
                total += 1
        self.total = total
        self.art0 = art0 = total
        self.width = width = total + m + 1  # + artificials + rhs
        self.T = T = [[F(0)] * width for _ in range(m)]
        self.flip = []
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
            self.flip.append(s)
            row[art0 + i] = F(1)
        self.basis = [art0 + i for i in range(m)]
        self.pivots = 0

    def run(self, obj: list, allowed_limit: int) -> tuple[str, list]:
        """Minimise ``obj`` from the current basis, entering only columns below ``allowed_limit``; the status and
        the final reduced-cost row."""
        T, basis, width, m = self.T, self.basis, self.width, self.m
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
            if self.deadline is not None and time.perf_counter() > self.deadline or self.pivots > EXACT_MAX_PIVOTS:
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
            self._pivot(leave, enter, d)

    def _pivot(self, leave: int, enter: int, d: list) -> None:
        T, width = self.T, self.width
        self.pivots += 1
        prow = T[leave]
        p = prow[enter]
        if p != 1:
            prow[:] = [v / p for v in prow]
        nzk = [k for k in range(width) if prow[k]]
        for i in range(self.m):
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
        self.basis[leave] = enter

    def infeasibility(self) -> Fraction:
        """The sum of the artificials still basic (0 when the LP is feasible, after phase 1)."""
        return sum((self.T[i][-1] for i in range(self.m) if self.basis[i] >= self.art0), Fraction(0))

    def drive_out_artificials(self) -> None:
        """Pivot each basic artificial out on a nonzero structural entry of its row (degenerate rows)."""
        T, m, art0 = self.T, self.m, self.art0
        for i in range(m):
            if self.basis[i] >= art0:
                k = next((k for k in range(art0) if T[i][k] != 0), None)
                if k is not None:
                    prow = T[i]
                    p = prow[k]
                    prow[:] = [v / p for v in prow]
                    for r in range(m):
                        if r != i and T[r][k]:
                            f = T[r][k]
                            T[r] = [a - f * b for a, b in zip(T[r], prow)]
                    self.basis[i] = k

    def basic_solution(self) -> list:
        """The standard-form point of the current basis (artificials excluded)."""
        z = [Fraction(0)] * self.total
        for i, bcol in enumerate(self.basis):
            if bcol < self.total:
                z[bcol] = self.T[i][-1]
        return z
