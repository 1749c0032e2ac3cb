"""The exact weak-duality bound of :func:`mechdesign.lp.program.dual_bound` in integer (dyadic) arithmetic.

Expected values: the bound written from its definition with plain Fractions in this file. For row
multipliers y and x feasible, cᵀx = yᵀ(Ax) + zᵀx with z = c − Aᵀy, so

    min cᵀx + offset ≥ offset + Σ_r y_r·(row_lower_r if y_r > 0 else row_upper_r)
                              + Σ_j z_j·(col_lower_j if z_j > 0 else col_upper_j)

(every float an exact rational; the result rounded down to a float, or up for a maximised LP).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.lp.program import LinearProgram, dual_bound


def reference_bound(lp: LinearProgram, y) -> float:
    y = [Fraction(float(v)) for v in y]
    for r, v in enumerate(y):  # a multiplier pointing at an infinite row bound is dropped (still valid)
        if (v > 0 and not math.isfinite(lp.row_lower[r])) or (v < 0 and not math.isfinite(lp.row_upper[r])):
            y[r] = Fraction(0)
    A = lp.A.toarray()
    total = Fraction(float(lp.offset))
    for r, v in enumerate(y):
        if v:
            total += v * Fraction(float(lp.row_lower[r] if v > 0 else lp.row_upper[r]))
    for j in range(lp.num_cols):
        z = Fraction(float(lp.c[j])) - sum((y[i] * Fraction(float(A[i, j])) for i in range(A.shape[0])), Fraction(0))
        if z > 0:
            if not math.isfinite(lp.col_lower[j]):
                return -lp.sense * math.inf
            total += z * Fraction(float(lp.col_lower[j]))
        elif z < 0:
            if not math.isfinite(lp.col_upper[j]):
                return -lp.sense * math.inf
            total += z * Fraction(float(lp.col_upper[j]))
    # round outwards: the largest float ≤ total (a lower bound of the min), negated for a maximised LP
    f = float(total)
    if Fraction(f) > total:
        f = math.nextafter(f, -math.inf)
    if lp.sense > 0:
        return f
    g = float(-total)  # the user's bound is −min: the smallest float ≥ −total
    if Fraction(g) < -total:
        g = math.nextafter(g, math.inf)
    return g if total else 0.0


numbers = st.sampled_from([0.0, 1.0, -1.0, 0.5, 1 / 3, 1e-300, 5e-324, -2.5e-17, 1e12, 0.1, math.e])


@settings(max_examples=200)
@given(st.integers(1, 4), st.integers(1, 5), st.data())
def test_dyadic_bound_equals_the_fraction_bound(rows, cols, data):
    draw = data.draw
    A = np.array(draw(st.lists(numbers, min_size=rows * cols, max_size=rows * cols))).reshape(rows, cols)
    lower = np.array(draw(st.lists(numbers | st.just(-math.inf), min_size=rows, max_size=rows)))
    gaps = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 1e-9, math.inf]), min_size=rows, max_size=rows)))
    with np.errstate(invalid="ignore"):  # −inf + inf, replaced by inf
        upper = np.where(np.isneginf(lower), np.inf, lower + gaps)
    col_lower = np.array(draw(st.lists(st.sampled_from([0.0, -1.0, 1e-20, -math.inf]), min_size=cols, max_size=cols)))
    col_gaps = np.array(draw(st.lists(st.sampled_from([1.0, 0.25, math.inf]), min_size=cols, max_size=cols)))
    with np.errstate(invalid="ignore"):
        col_upper = np.where(np.isneginf(col_lower), np.inf, col_lower + col_gaps)
    lp = LinearProgram(
        c=np.array(draw(st.lists(numbers, min_size=cols, max_size=cols))),
        A=sp.csr_matrix(A),
        row_lower=lower,
        row_upper=upper,
        col_lower=col_lower,
        col_upper=col_upper,
        offset=draw(numbers),
        sense=draw(st.sampled_from([1, -1])),
    )
    y = np.array(draw(st.lists(numbers, min_size=rows, max_size=rows)))
    assert dual_bound(lp, y) == reference_bound(lp, y)
