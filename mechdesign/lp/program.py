"""A sparse linear program in HiGHS form, and a small vectorised builder.

    minimise  cᵀx + offset   subject to   row_lower ≤ A x ≤ row_upper,
                                           col_lower ≤ x ≤ col_upper.

Maximisation problems are stored negated (``sense = -1``): the objective the
user sees is ``sense * (cᵀx + offset)``. Rows are added in batches: one call
adds R rows that each have the same number of terms, given as (R, k) arrays
of variable indices and coefficients, so building an LP with millions of
nonzeros never loops in Python.

:func:`dual_bound` turns *any* vector of row multipliers into a valid bound
on the optimum (weak duality with finite variable bounds), so the certificate
does not trust the solver's own claim of optimality.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["LinearProgram", "LPBuilder", "dual_bound"]


@dataclass(frozen=True)
class LinearProgram:
    """minimise cᵀx + offset s.t. row_lower ≤ A x ≤ row_upper, col_lower ≤ x ≤ col_upper."""

    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    offset: float = 0.0
    sense: int = 1
    blocks: dict[str, np.ndarray] = field(default_factory=dict)
    """Named variable blocks: name -> array of variable indices (with the block's shape)."""
    integrality: np.ndarray | None = None
    """Optional 0/1 array over the columns: 1 marks an integer variable (a MIP; no row duals then)."""

    @property
    def num_cols(self) -> int:
        return self.c.size

    @property
    def num_rows(self) -> int:
        return self.A.shape[0]

    def user_objective(self, x: np.ndarray) -> float:
        """The objective in the user's sense (maximised problems are un-negated)."""
        return self.sense * (float(self.c @ x) + self.offset)


class LPBuilder:
    """Accumulates variables and rows of a :class:`LinearProgram`."""

    def __init__(self) -> None:
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._ncols = 0
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._rlo: list[np.ndarray] = []
        self._rup: list[np.ndarray] = []
        self._nrows = 0
        self.blocks: dict[str, np.ndarray] = {}
        self._integer: list[np.ndarray] = []

    def variables(self, name: str, shape, lower=0.0, upper=np.inf, integer: bool = False) -> np.ndarray:
        """Add a block of variables with the given shape and bounds; return their indices.
        ``integer=True`` makes them integer variables (the program becomes a MIP)."""
        size = int(np.prod(shape)) if np.ndim(shape) else int(shape)
        idx = np.arange(self._ncols, self._ncols + size).reshape(shape)
        self._ncols += size
        self._lower.append(np.broadcast_to(np.asarray(lower, float), (size,)).copy())
        self._upper.append(np.broadcast_to(np.asarray(upper, float), (size,)).copy())
        self.blocks[name] = idx
        if integer:
            self._integer.append(idx.ravel())
        return idx

    def rows(self, cols, coefs, lower=-np.inf, upper=np.inf) -> np.ndarray:
        """Add R rows ``lower ≤ Σ_k coefs[r, k] x[cols[r, k]] ≤ upper``.

        ``cols`` and ``coefs`` broadcast to a common (R, k) shape; bounds to (R,).
        Returns the row indices.
        """
        cols = np.asarray(cols)
        coefs = np.asarray(coefs, float)
        cols, coefs = np.broadcast_arrays(cols, coefs)
        if cols.ndim == 1:
            cols, coefs = cols[:, None], coefs[:, None]
        nrows, k = cols.shape
        row_ids = np.arange(self._nrows, self._nrows + nrows)
        self._rows.append(np.repeat(row_ids, k))
        self._cols.append(cols.ravel().astype(np.int64))
        self._vals.append(coefs.ravel().astype(float))
        self._rlo.append(np.broadcast_to(np.asarray(lower, float), (nrows,)).copy())
        self._rup.append(np.broadcast_to(np.asarray(upper, float), (nrows,)).copy())
        self._nrows += nrows
        return row_ids

    def build(
        self, objective: dict[int, float] | tuple[np.ndarray, np.ndarray], *, sense: int = 1, offset: float = 0.0
    ) -> LinearProgram:
        """Finish the LP. ``objective`` is (indices, coefficients) in the user's sense;
        ``sense = -1`` means maximise."""
        idx, coef = objective
        c = np.zeros(self._ncols)
        np.add.at(c, np.asarray(idx, np.int64).ravel(), np.asarray(coef, float).ravel())
        if self._rows:
            rows = np.concatenate(self._rows)
            cols = np.concatenate(self._cols)
            vals = np.concatenate(self._vals)
            keep = vals != 0
            A = sp.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(self._nrows, self._ncols))
            A.sum_duplicates()
            rlo, rup = np.concatenate(self._rlo), np.concatenate(self._rup)
        else:
            A = sp.csr_matrix((0, self._ncols))
            rlo = rup = np.zeros(0)
        return LinearProgram(
            c=sense * c,
            A=A,
            row_lower=rlo,
            row_upper=rup,
            col_lower=np.concatenate(self._lower) if self._lower else np.zeros(0),
            col_upper=np.concatenate(self._upper) if self._upper else np.zeros(0),
            offset=sense * offset,
            sense=sense,
            blocks=dict(self.blocks),
            integrality=self._integrality(),
        )

    def _integrality(self) -> np.ndarray | None:
        if not self._integer:
            return None
        out = np.zeros(self._ncols, dtype=np.int8)
        out[np.concatenate(self._integer)] = 1
        return out


EXACT_BOUND_MAX_NONZEROS = 50_000
"""Up to this many nonzeros :func:`dual_bound` is evaluated in exact rational arithmetic."""


def dual_bound(lp: LinearProgram, row_dual: np.ndarray) -> float:
    """A bound on the optimum valid for *any* row multipliers y (weak duality).

    For x feasible, cᵀx = yᵀ(Ax) + zᵀx with z = c − Aᵀy, and each term is at
    least its minimum over the row box [row_lower, row_upper] and the column
    box [col_lower, col_upper]. Multipliers that point at an infinite bound are
    set to 0 (still valid). The result is a lower bound of min cᵀx + offset,
    returned in the user's sense (an upper bound when maximising). A relative
    1e-12 of the magnitudes summed is subtracted to cover rounding.
    Returns ±inf when a needed column bound is infinite.

    Up to :data:`EXACT_BOUND_MAX_NONZEROS` nonzeros the whole computation is exact (every float is a
    rational; :func:`_exact_dual_bound`) and the result is rounded outwards: no slack is needed, and
    a bound on an optimum of 1e−9 (ε = 1e−9) keeps its relative accuracy.
    """
    if isinstance(row_dual, np.ndarray) and row_dual.dtype == object:  # exact multipliers (Fractions)
        y = row_dual.copy()
        for r, v in enumerate(y):
            if (v > 0 and not np.isfinite(lp.row_lower[r])) or (v < 0 and not np.isfinite(lp.row_upper[r])):
                y[r] = 0
        return _exact_dual_bound(lp, y)
    y = np.asarray(row_dual, float).copy()
    y[(y > 0) & ~np.isfinite(lp.row_lower)] = 0.0
    y[(y < 0) & ~np.isfinite(lp.row_upper)] = 0.0
    y[~np.isfinite(y)] = 0.0
    if lp.A.nnz <= EXACT_BOUND_MAX_NONZEROS:
        return _dyadic_dual_bound(lp, y)
    row_terms = np.where(
        y > 0,
        y * np.where(np.isfinite(lp.row_lower), lp.row_lower, 0.0),
        y * np.where(np.isfinite(lp.row_upper), lp.row_upper, 0.0),
    )
    z = lp.c - lp.A.T @ y
    if np.any((z > 0) & ~np.isfinite(lp.col_lower)) or np.any((z < 0) & ~np.isfinite(lp.col_upper)):
        return -lp.sense * np.inf
    col_terms = np.where(
        z > 0,
        z * np.where(np.isfinite(lp.col_lower), lp.col_lower, 0.0),
        z * np.where(np.isfinite(lp.col_upper), lp.col_upper, 0.0),
    )
    total = float(np.sum(row_terms) + np.sum(col_terms)) + lp.offset
    slack = 1e-12 * float(np.sum(np.abs(row_terms)) + np.sum(np.abs(col_terms)) + abs(lp.offset)) + 1e-300
    return lp.sense * (total - slack)


def _dyadic(values: np.ndarray) -> tuple[list[int], int]:
    """Finite doubles as integers over one power of two: values[i] = ints[i] / 2^scale, exactly.

    Every double is m·2^e with an integer m, |m| < 2^53 (``np.frexp``: v = f·2^k, f·2^53 an integer);
    scale = max(0, max −e), so each m·2^(e + scale) is an integer (a Python int, of any size)."""
    values = np.asarray(values, float)
    if values.size == 0:
        return [], 0
    frac, expo = np.frexp(values)
    mant = (frac * 2.0**53).astype(np.int64).tolist()  # exact: f has at most 53 significant bits
    expo = (expo.astype(np.int64) - 53).tolist()
    scale = max(0, -min(e for e, m in zip(expo, mant) if m) if any(mant) else 0)
    return [m << (e + scale) if m else 0 for m, e in zip(mant, expo)], scale


def _dyadic_dual_bound(lp: LinearProgram, y: np.ndarray) -> float:
    """:func:`_exact_dual_bound` for float multipliers, in integer arithmetic: every float in the LP is a
    dyadic rational m·2^e, so the bound  offset + Σ_r y_r b_r + Σ_j z_j d_j,  z = c − Aᵀy (b_r, d_j the
    row and column bounds the signs pick, as in :func:`dual_bound`), is an integer over a power of two,
    computed exactly with Python ints (no Fraction, no gcd) and rounded outwards once."""
    from fractions import Fraction as F

    from mechdesign.lp.rounding import float_down

    y = np.asarray(y, float)
    Y, sy = _dyadic(y)
    active = np.flatnonzero(y)
    picked = np.where(y[active] > 0, lp.row_lower[active], lp.row_upper[active])
    B, sb = _dyadic(picked)
    A = lp.A.tocsc()
    data, sa = _dyadic(A.data)
    C, sc = _dyadic(lp.c)
    s_z = max(sc, sy + sa)  # z_j · 2^s_z is an integer
    z_ints = []
    indices, indptr = A.indices.tolist(), A.indptr.tolist()
    up_c, up_ya = s_z - sc, s_z - sy - sa
    for j in range(lp.num_cols):
        acc = 0
        for k in range(indptr[j], indptr[j + 1]):
            yi = Y[indices[k]]
            if yi:
                acc += yi * data[k]
        z_ints.append((C[j] << up_c) - (acc << up_ya))
    z = np.array([(v > 0) - (v < 0) for v in z_ints], dtype=np.int64)
    if np.any((z > 0) & ~np.isfinite(lp.col_lower)) or np.any((z < 0) & ~np.isfinite(lp.col_upper)):
        return -lp.sense * np.inf
    cols = np.flatnonzero(z)
    D, sd = _dyadic(np.where(z[cols] > 0, lp.col_lower[cols], lp.col_upper[cols]))
    O, so = _dyadic(np.array([float(lp.offset)]))
    scale = max(s_z + sd, sy + sb, so)
    total = O[0] << (scale - so)
    rows = sum(Y[r] * b for r, b in zip(active.tolist(), B))
    total += rows << (scale - sy - sb)
    col_sum = sum(z_ints[j] * d for j, d in zip(cols.tolist(), D))
    total += col_sum << (scale - s_z - sd)
    exact = F(total, 1 << scale)
    return float_down(exact) if lp.sense > 0 else -float_down(exact) if exact else 0.0


def _exact_dual_bound(lp: LinearProgram, y: np.ndarray) -> float:
    """:func:`dual_bound` in rational arithmetic, rounded outwards to a float (see there)."""
    from fractions import Fraction as F

    from mechdesign.lp.rounding import float_down

    A = lp.A.tocsc()
    yq = [(v if isinstance(v, F) else F(float(v))) if v else 0 for v in y]
    total = F(float(lp.offset))
    for r, v in enumerate(yq):
        if v:
            total += v * F(float(lp.row_lower[r] if v > 0 else lp.row_upper[r]))
    for j in range(lp.num_cols):
        z = F(float(lp.c[j]))
        for i, a in zip(A.indices[A.indptr[j] : A.indptr[j + 1]], A.data[A.indptr[j] : A.indptr[j + 1]]):
            if yq[i]:
                z -= yq[i] * F(float(a))
        if z > 0:
            if not np.isfinite(lp.col_lower[j]):
                return -lp.sense * np.inf
            total += z * F(float(lp.col_lower[j]))
        elif z < 0:
            if not np.isfinite(lp.col_upper[j]):
                return -lp.sense * np.inf
            total += z * F(float(lp.col_upper[j]))
    return float_down(total) if lp.sense > 0 else -float_down(total) if total else 0.0
