"""A rigorous lower bound on the kernel LP over Q_X(c) or the simplex from row multipliers alone.

The kernel LP (docs/explanation/mathematics.md, section 'Linear constraints'; Lemma 4 of the Dobrushin paper; c = 0 is ε-LDP)

    minimise Σ_xy C_xy K_xy   s.t.  Σ_y K_xy = 1 (x),   K(:,y) ∈ cone(𝒦) (y),
    𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k},

couples its columns only through the N row sums.

**Bound without the full LP.** For any π, by weak duality of the Lagrangian relaxation of the row
sums (every column of a feasible K lies in cone(𝒦) ∩ [0,1]^N = 𝒦),

    optimum ≥ Σ_x π_x + Σ_y min(0, min_{r∈𝒦} (C(:,y) − π)·r),

computed column by column in O(NM) (each p_y = min_{r∈𝒦} (C(:,y) − π)·r from one sort,
:func:`mechdesign.cone.pricing.price`). It is made rigorous (:func:`lagrangian_bound`): 𝒦 is taken with a
lower bound of e^{−ε} and an upper bound of c (:func:`pricing_c`; both enlarge 𝒦, so the bound holds for
the ε and c as written), each p_y is lowered by an a-posteriori bound on its floating-point error (Higham's
γ_n for the prefix sums of the sort, :func:`_pricing_error`), and the sums over x and y are ``math.fsum``
(correctly rounded) then lowered by one more relative ulp.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mechdesign.cone.pricing import price

__all__ = ["UNIT_ROUNDOFF", "lagrangian_bound", "pricing_c"]

UNIT_ROUNDOFF = 2.0**-53
PRICE_CHUNK_ENTRIES = 1 << 21
"""Outputs are priced in blocks of about this many kernel entries (bounds the memory of one sort)."""


def pricing_c(c: Fraction | float) -> float:
    """A float ≥ c (c ≤ 1/N as a rational): a larger c only enlarges 𝒦, so bounds stay valid."""
    f = float(c)
    if Fraction(f) < Fraction(c):
        f = math.nextafter(f, math.inf)
    return f


def _price_blocks(C: np.ndarray, pi: np.ndarray, c: float, E: float):
    """Yield (first output, Priced) over blocks of outputs at multipliers π."""
    n, m = C.shape
    step = max(1, PRICE_CHUNK_ENTRIES // max(n, 1))
    for j0 in range(0, m, step):
        yield j0, price(C[:, j0 : j0 + step] - pi[:, None], c, E)


def _pricing_error(n: int, abs_cost: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """An upper bound on |computed p_y − min_{r∈𝒦} (C(:,y) − π)·r| for every y (floating point).

    Each entry of w = C(:,y) − π carries an error ≤ u|w_x|; a candidate's value (prefix sums of the
    sorted w, a level times the rest) is computed with error ≤ γ_{N+4} Σ|w| (Higham, Thm 3.1 and 4.1;
    entries of r in [0,1]); the level u_q itself is within a few u of its exact value. The sort on the
    computed w chooses the exact minimiser for the computed w, whose value differs from the true one
    by ≤ u Σ|w|. Doubling the total of these covers every term.
    """
    gamma = (n + 8) * UNIT_ROUNDOFF / (1.0 - (n + 8) * UNIT_ROUNDOFF)
    return 2.0 * (gamma + 4 * UNIT_ROUNDOFF) * (abs_cost + np.abs(pi).sum()) * (1.0 + 1e-12)


def lagrangian_bound(C: np.ndarray, pi: np.ndarray, c: float, E: float, values: np.ndarray | None = None) -> float:
    """A rigorous lower bound on min Σ C_xy K_xy over kernels with columns in cone(𝒦(E, c)):

        Σ_x π_x + Σ_y min(0, p_y − err_y),   p_y = min_{r∈𝒦} (C(:,y) − π)·r  (computed),

    with err_y of :func:`_pricing_error`, both sums by ``math.fsum`` and the total lowered by 2 ulps.
    ``E`` must be ≤ e^{−ε} and ``c`` ≥ the spec's c (then 𝒦(E, c) contains the true 𝒦 and the
    bound holds for the problem as written). ``values``: p_y already computed at this π.
    """
    if values is None:
        values = np.concatenate([pr.value for _, pr in _price_blocks(C, pi, c, E)])
    err = _pricing_error(C.shape[0], np.abs(C).sum(axis=0), pi)
    total = math.fsum(pi.tolist()) + math.fsum(np.minimum(0.0, values - err).tolist())
    return total - 2.0 * UNIT_ROUNDOFF * abs(total) - 1e-300
