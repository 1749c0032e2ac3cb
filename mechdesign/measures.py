"""Quantities of a given kernel K (rows K_x, N × M)."""
from __future__ import annotations

import numpy as np

__all__ = ["dobrushin"]


def dobrushin(K) -> float:
    """η_TV(K) = max_{x, x'} TV(K_x, K_x') = max ½ Σ_y |K_x(y) − K_x'(y)| (Dobrushin paper, eq. 2)."""
    K = np.asarray(K, float)
    n = K.shape[0]
    best = 0.0
    for x in range(n - 1):
        best = max(best, float(0.5 * np.abs(K[x + 1:] - K[x]).sum(axis=1).max()))
    return best
