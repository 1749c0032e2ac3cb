"""Relative accuracy of the f_α paper's closed forms near 0 and 1.

Expected values: an independent recomputation of the printed formulas in mpmath at 50 digits
(f_α paper Theorem 6 eq. 23 for R_α, Theorem 8 eq. 39 for g_α, Remark 10 eq. 41 for g_α⁻¹),
written here from the formulas, not from the code. Required: relative error ≤ 1e-12.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from mechdesign.theory.bounds import g_alpha, g_alpha_inverse, r_alpha

mp.mp.dps = 50
RTOL = 1e-12


def _r_ref(u, v, alpha):
    u, v, a = mp.mpf(u), mp.mpf(v), mp.mpf(alpha)
    up = a if u == 1 else (u**a - 1) / (u - 1)
    low = a if v == 1 else (1 - v**a) / (1 - v)
    return up - low


def _g_ref(t, alpha):
    t, a = mp.mpf(t), mp.mpf(alpha)
    if t < 1 / a:
        return mp.exp(2 * (a - 1) * t * t) - 1 if a < 2 else (4 * t * t + 1) ** (a - 1) - 1
    return (1 - t) ** (1 - a) - 1


def _g_inv_ref(s, alpha):
    """sup{t : g_α(t) ≤ s}, by bisection on the mpmath g_α (g_α is increasing): independent of
    the closed form of Remark 10."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    for _ in range(180):
        mid = (lo + hi) / 2
        if _g_ref(mid, alpha) <= s:
            lo = mid
        else:
            hi = mid
    return lo


def _rel(x, ref):
    return float(abs((mp.mpf(x) - ref) / ref))


@pytest.mark.parametrize(
    "u, v, alpha",
    [
        (1 + 1e-6, 1 - 1e-6, 2.0),  # both terms → α: R_α = h(u) − h(v) cancels
        (1.5, 0.999999, 3.0),  # v → 1 (the "p → 1" case: 1 − v^α cancelled before)
        (1.0, 1 - 1e-9, 1.5),
        (1 + 1e-12, 1 - 2e-12, 7.5),
        (1.04, 0.96, 1.001),  # α → 1 and a = b (even terms of the series vanish)
        (1.01, 0.999, 50.0),
        (3.0, 1 - 1e-7, 2.0),
        (2.0, 0.5, 4.0),
        (1.2, 0.3, 2.5),
        (1 + 1e-9, 0.5, 3.0),  # u → 1 alone
        (1 + 1e-7, 0.2, 1.5),
        (1.3, 1 - 1e-12, 12.0),  # v → 1 alone, large α
    ],
)
def test_r_alpha_relative_accuracy(u, v, alpha):
    assert _rel(r_alpha(u, v, alpha), _r_ref(u, v, alpha)) <= RTOL


@pytest.mark.parametrize(
    "t, alpha",
    [
        (1e-9, 3.0),  # the issue: returned 0, true value 8e-18
        (1e-9, 1.5),
        (1e-5, 2.0),
        (0.1, 3.0),
        (0.3, 1.2),
        (0.5, 3.0),
        (0.9, 3.0),
        (1 - 1e-9, 1.5),
        (1e-7, 1.0001),
    ],
)
def test_g_alpha_relative_accuracy(t, alpha):
    assert _rel(g_alpha(t, alpha), _g_ref(t, alpha)) <= RTOL


def test_g_alpha_near_zero_value_from_the_issue():
    # (4t² + 1)^{α−1} − 1 = 2·4t² + O(t⁴) at α = 3: 8e-18 at t = 1e-9 (closed form)
    assert g_alpha(1e-9, 3) == pytest.approx(8e-18, rel=1e-12)


@pytest.mark.parametrize(
    "s, alpha",
    [
        (1e-12, 3.0),  # the issue: off by 4e-5 relative
        (1e-12, 1.5),
        (1e-15, 2.0),
        (0.01, 3.0),
        (5.0, 3.0),
        (1e6, 2.5),
        (1e-9, 10.0),
    ],
)
def test_g_alpha_inverse_relative_accuracy(s, alpha):
    assert _rel(g_alpha_inverse(s, alpha), _g_inv_ref(mp.mpf(s), alpha)) <= RTOL
