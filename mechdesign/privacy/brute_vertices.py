"""Vertex enumeration by trying every set of tight constraints: the fallback when cdd's floating-point
double description gives up ("Numerical inconsistency is found. Use the GMP exact arithmetic", seen for
an ℓ1-ball of radius 1e−6; the GMP build of pycddlib is not installed).

A vertex of {x : E x = e, A x + b ≥ 0} in R^n is the solution of E x = e together with n − rank(E)
linearly independent tight rows A_S x + b_S = 0, and is feasible. So every subset S of that size is
tried (batched in numpy: one n × n solve per subset), the feasible solutions kept and deduplicated.
This is exponential in n and used only while the number of subsets is at most :data:`MAX_SUBSETS`, counted after
dropping the rows that no vertex can make tight (one HiGHS LP per row, only when the full count is over).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["brute_force_vertices", "MAX_SUBSETS"]

MAX_SUBSETS = 300_000


def brute_force_vertices(A: np.ndarray, b: np.ndarray, E: np.ndarray, e: np.ndarray, tol: float = 1e-11) -> np.ndarray:
    """The vertices of {x : E x = e, A x + b ≥ 0} (rows of the result); raises ValueError when there
    are more than MAX_SUBSETS subsets to try."""
    A, b, E, e = (np.asarray(v, float) for v in (A, b, E, e))
    n = A.shape[1]
    k = n - E.shape[0]
    rows = np.arange(len(A))
    if k >= 0 and math.comb(len(A), k) > MAX_SUBSETS:
        rows = _rows_that_can_be_tight(A, b, E, e)
    if k < 0 or math.comb(len(rows), k) > MAX_SUBSETS:
        raise ValueError(f"too many constraint subsets to enumerate ({len(rows)} choose {k})")
    subsets = rows[np.array(list(itertools.combinations(range(len(rows)), k)), dtype=np.int64).reshape(-1, k)]
    M = np.concatenate([np.broadcast_to(E, (len(subsets),) + E.shape), A[subsets]], axis=1)
    rhs = np.concatenate([np.broadcast_to(e, (len(subsets), len(e))), -b[subsets]], axis=1)
    scale = np.abs(M).max(axis=(1, 2))
    with np.errstate(all="ignore"):
        regular = np.abs(np.linalg.det(M / scale[:, None, None])) > 1e-12
    if not regular.any():
        return np.zeros((0, n))
    X = np.linalg.solve(M[regular], rhs[regular][..., None])[..., 0]
    slack = X @ A.T + b
    room = tol * (1.0 + np.abs(X) @ np.abs(A).T + np.abs(b))
    ok = np.all(slack >= -room, axis=1) & np.all(np.isfinite(X), axis=1)
    V = X[ok]
    if len(V) == 0:
        return V
    _, idx = np.unique(np.round(V, 10), axis=0, return_index=True)
    return V[np.sort(idx)]


def _rows_that_can_be_tight(A: np.ndarray, b: np.ndarray, E: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Indices of the rows that are not strictly redundant: row i is dropped when min{A_i x + b_i : E x = e,
    A_j x + b_j ≥ 0 (j ≠ i)} (HiGHS) exceeds 1e−9 of the row's scale, so it is slack at every point of the
    polytope and no vertex makes it tight (an ℓ1-ball with masses of 1e−9 lists 65 rows of which 35 can be
    tight at N = 5). A row whose LP fails is kept: keeping a row never loses a vertex."""
    from scipy.optimize import linprog

    keep = []
    for i in range(len(A)):
        others = np.delete(np.arange(len(A)), i)
        res = linprog(
            A[i],
            A_ub=-A[others],
            b_ub=b[others],
            A_eq=E,
            b_eq=e,
            bounds=[(None, None)] * A.shape[1],
            method="highs",
        )
        scale = 1.0 + float(np.abs(A[i]).sum() + abs(b[i]))
        if res.status != 0 or res.fun + b[i] <= 1e-9 * scale:
            keep.append(i)
    return np.array(keep, dtype=np.int64)
