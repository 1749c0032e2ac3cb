"""Vertices of a small polytope {x ∈ R^d : G x ≥ h} without pycddlib.

The base install has no C extension for vertex enumeration (pycddlib-standalone compiles from
source where no wheel exists), yet ``mechdesign extremes`` on a small spec is a documented
feature. For small problems the vertices are found by brute force: every vertex is the unique
solution of d linearly independent active rows, so solve G_S x = h_S for every d-subset S of the
(de-duplicated) rows and keep the solutions that satisfy all rows (tolerance 1e-9). The work is
C(rows, d) small solves; :data:`MAX_SUBSETS` bounds it, past which the caller asks for the
``cdd`` extra.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

__all__ = ["polytope_vertices", "MAX_SUBSETS"]

MAX_SUBSETS = 200_000
TOL = 1e-9


def polytope_vertices(G: np.ndarray, h: np.ndarray) -> np.ndarray | None:
    """The vertices of {x : G x ≥ h} (rows unique to 1e-10), or None when C(rows, d) > MAX_SUBSETS."""
    G = np.asarray(G, float)
    h = np.asarray(h, float)
    scale = np.maximum(np.abs(G).max(axis=1), np.abs(h))
    keep = scale > 0
    A = np.hstack([G[keep] / scale[keep, None], h[keep, None] / scale[keep, None]])
    _, idx = np.unique(np.round(A, 10), axis=0, return_index=True)
    A = A[np.sort(idx)]
    G, h = A[:, :-1], A[:, -1]
    rows, d = G.shape
    if comb(rows, d) > MAX_SUBSETS:
        return None
    found = []
    for S in combinations(range(rows), d):
        GS = G[list(S)]
        if abs(np.linalg.det(GS)) < 1e-12:
            continue
        x = np.linalg.solve(GS, h[list(S)])
        if np.all(G @ x >= h - TOL):
            found.append(x)
    if not found:
        return np.zeros((0, d))
    V = np.array(found)
    _, idx = np.unique(np.round(V, 10), axis=0, return_index=True)
    return V[np.sort(idx)]
