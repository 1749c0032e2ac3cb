"""Coupling rows of the worst-case restricted LP premultiplied by difference matrices.

Output generation with the worst-case prior's epigraph (:func:`mechdesign.engines.output_generation.generate_outputs`) couples
every output through 2N rows: the row sums Σ_y K_xy = 1 and the epigraph rows Σ_y G_xy K_xy ≤ τ. An output
enters at a two- or three-level ray of 𝒦 (:func:`mechdesign.cone.pricing.price`), so its block of the simplex basis
puts a dense N-vector into each group of coupling rows, and the factorisation of the basis (after every model
change, HiGHS factors it anew) fills in a dense kernel of about 2N × 2N: 1–3 s at N = 1000 and 5–20 s at N = 3000
(docs/explanation/performance-notes.md, section "Output generation").

An equality system A z = b has the same solutions as T A z = T b for any invertible T. With the forward
difference D ((Dv)_0 = v_0, (Dv)_h = v_h − v_{h−1}; lower bidiagonal, invertible):

- the row sums become D R K = D 1: a ray that is constant on runs of x has a sparse image (one entry per run
  boundary), and u_y, which adds the same amount to every K_xy, one entry;
- the epigraph rows, written as equalities with slacks (E K − τ 1 + s = 0, s ≥ 0), become
  D^k (E K − τ 1 + s) = 0, where k is the order that makes the loss columns sparsest: a loss that is a polynomial
  of degree k − 1 in x on runs (|x − y|: k = 2; (x − y)²: k = 3) times a ray that is constant on runs is again
  sparse after k differences.

The feasible set and the optimum are unchanged. Multipliers map back by the transpose: π = Dᵀ π_D for the row
sums and μ = (D^k)ᵀ μ_D for the epigraph rows; the bound a design reports is evaluated from those on the original
LP (:func:`mechdesign.engines.worst_case.worst_case_bound`), so it is a true bound whatever the transformed LP's
accuracy, and the reported value is computed from the kernel itself.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["difference_matrix", "sparsest_difference_order"]

MAX_ORDER = 3


def difference_matrix(n: int, k: int) -> sparse.csr_matrix:
    """D^k for the n × n forward difference D of the module doc (k = 0: the identity)."""
    D = sparse.eye(n, format="csr") - sparse.eye(n, k=-1, format="csr")
    T = sparse.eye(n, format="csr")
    for _ in range(k):
        T = (D @ T).tocsr()
    T.eliminate_zeros()
    return T


def sparsest_difference_order(columns: np.ndarray, max_order: int = MAX_ORDER) -> int:
    """The k ≤ ``max_order`` for which D^k ``columns`` has the fewest nonzero entries (exact zeros; ties: the
    smaller k). ``columns`` (n × j) are sample loss columns of the coupling rows."""
    n = columns.shape[0]
    best_k, best_nnz = 0, np.count_nonzero(columns)
    V = columns
    for k in range(1, max_order + 1):
        V = np.vstack([V[:1], np.diff(V, axis=0)]) if n else V
        nnz = np.count_nonzero(V)
        if nnz < best_nnz:
            best_k, best_nnz = k, nnz
    return best_k
