"""The inverse of Remark 9's tight Pinsker bound for f_α-divergences (f_α paper), and the Figure 2 bound built
on it. Reference values: Remark 9 says Theorem 8's g_α is tight at α = 2, so there the inverse must equal
g_α⁻¹ (Remark 10); elsewhere the tight bound is ≥ g_α, so its inverse is ≤ g_α⁻¹. The value ψ*_α(t) at the
inverse is recomputed here by brute force over binary pairs (p, p + t) with the f_α-divergence written out
(eq. 64), independently of the code's minimiser."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.theory import bounds, falpha


def _psi_star_brute(t: float, alpha: float) -> float:
    p = np.linspace(0.0, 1.0 - t, 20001)
    q = p + t
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p**alpha / q ** (alpha - 1), 0.0)
        b = np.where(1 - p > 0, (1 - p) ** alpha / (1 - q) ** (alpha - 1), 0.0)
    return float(np.nanmin(a + b - 1))


@pytest.mark.parametrize("s", [1e-4, 0.05, 0.3, 1.0, 5.0])
def test_equal_to_theorem8_inverse_at_alpha_2(s):
    assert falpha.tight_pinsker_inverse(s, 2.0) == pytest.approx(bounds.g_alpha_inverse(s, 2.0), rel=1e-9)


@pytest.mark.parametrize("alpha", [1.3, 1.8, 2.5, 4.0, 10.0])
@pytest.mark.parametrize("s", [0.01, 0.2, 1.5])
def test_tighter_than_theorem8_and_inverse_of_the_joint_range_boundary(alpha, s):
    t = falpha.tight_pinsker_inverse(s, alpha)
    assert t <= bounds.g_alpha_inverse(s, alpha) + 1e-12
    assert _psi_star_brute(t, alpha) == pytest.approx(s, rel=2e-3)


def test_figure2_bound_steps_at_alpha_2_and_the_tight_one_does_not():
    alphas = np.array([2.0 - 1e-6, 2.0])
    d = falpha.example12_curves(5, math.log(2), "P", alphas)
    step = d["bound"][0] - d["bound"][1]
    assert step > 0.03  # Theorem 8's g_α changes form at α = 2: the standard Pinsker bound below it
    assert abs(d["bound_tight_pinsker"][0] - d["bound_tight_pinsker"][1]) < 1e-4
    # both are upper bounds on the composition's true RLDP, the tight one the smaller
    assert np.all(d["bound_tight_pinsker"] <= d["bound"] + 1e-12)
    assert np.all(d["composition"] <= d["bound_tight_pinsker"] + 1e-12)
