"""cone/cone_lift.py: a solver's kernel columns lifted back into the (ε,Q_X(c))-PML cone before certification.

The regression (|x − y| worst case under ε-LDP at N = 3000): one output of mass 5e-5 broke its LDP row
by 0.4 % of its smallest entry (an absolute 4e-11, inside HiGHS's tolerance), the certificate's mix then needed
a weight of 3.8e-3 and the design was reported suboptimal at a floating-point gap of 1.2e-9. Expected values here
come from the definition of the PML row (Lemma 4 of the papers' Q_X(c) characterisation, docs/explanation/mathematics.md, section 'Linear constraints') and a
bisection written in the test, not from the module.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers.kernels import oracle_private, prior_set, two_level_kernel

from mechdesign.certify.stage import certify_on_fine_grid
from mechdesign.cone.cone_lift import NOISE, _least_level, lift_into_cone

E_EXACT = Fraction(27182818, 10**7)  # a rational below e: the bound the certificate checks against
E = 1.0 / 2.7182818  # the LP's e^{−ε}, about E_EXACT^{−1}


def pml_slack(K: np.ndarray, c: float, E: float) -> np.ndarray:
    """c Σ k + (1 − Nc) min k − e^{−ε} max k per column (≥ 0: the column's PML row holds)."""
    n = K.shape[0]
    return c * K.sum(axis=0) + (1 - n * c) * K.min(axis=0) - E * K.max(axis=0)


def bisection_level(col: np.ndarray, c: float, E: float) -> float:
    """The least ℓ with E max ≤ c Σ max(col, ℓ) + (1 − Nc) ℓ, by bisection on [min col, max col]."""
    n = col.size

    def holds(level):
        return c * np.maximum(col, level).sum() + (1 - n * c) * level >= E * col.max()

    lo, hi = float(col.min()), float(col.max())
    if holds(lo):
        return lo
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return hi


@pytest.mark.parametrize("c_of_n", [lambda n: 0.0, lambda n: 1 / (2 * n), lambda n: 1 / (5 * n)])
@pytest.mark.parametrize("seed", range(6))
def test_least_level_is_the_bisection_level(c_of_n, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    col = rng.random(n) ** 3  # spread entries: the level falls on different pieces
    c = c_of_n(n)
    assert _least_level(col, c, E) == pytest.approx(bisection_level(col, c, E), rel=1e-12, abs=1e-300)


def kernel_with_a_light_broken_column(n: int, c: float, seed: int) -> np.ndarray:
    """A private n × n kernel strictly inside the cone (two-level circulants mixed with the uniform kernel by 1e-3)
    and one more output of mass ~1e-8·n: a two-level ray on the boundary of the cone (q entries 1, the rest at
    the level that makes its PML row tight) with its low entries lowered by 0.4 %, scaled to entries ~1e-8."""
    base = 0.999 * two_level_kernel(n, c, 1 / E, seed=seed, parts=2) + 0.001 / n
    q = n // 3
    low = (E - c * q) / (c * (n - q) + 1 - n * c)  # E·1 = c (q + (n − q) low) + (1 − nc) low
    light = 1e-8 * np.r_[np.ones(q), np.full(n - q, low * (1 - 4e-3))] / low
    np.random.default_rng(seed).shuffle(light)
    return np.hstack([base * (1 - light)[:, None], light[:, None]])


def relative_violation(K: np.ndarray, c: float, E: float) -> np.ndarray:
    """max(0, −slack) / min k per column: how far the PML row fails, relative to the column's smallest entry."""
    return np.maximum(-pml_slack(K, c, E), 0.0) / K.min(axis=0)


@pytest.mark.parametrize("c_of_n", [lambda n: 0.0, lambda n: 1 / (2 * n)])
@pytest.mark.parametrize("seed", range(4))
def test_a_light_broken_column_is_lifted_and_nothing_else_moves_but_the_row_scale(c_of_n, seed):
    """The 0.4 % break of the light column is gone (≤ 1e-9 of its smallest entry after the row scaling), rows sum
    to 1, the other columns only moved by one factor per row, and the light column's entries only grew."""
    n = 60
    c = c_of_n(n)
    K = kernel_with_a_light_broken_column(n, c, seed)
    assert relative_violation(K, c, E)[-1] > 3e-3 and relative_violation(K, c, E)[:-1].max() == 0
    lifted = lift_into_cone(K, c, E)
    assert relative_violation(lifted, c, E).max() <= 1e-9
    assert np.allclose(lifted.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    scale = lifted[:, :-1] / K[:, :-1]
    assert np.allclose(scale, scale[:, :1], rtol=1e-13)
    assert np.all(lifted[:, -1] / scale[:, 0] >= K[:, -1] * (1 - 1e-13))


def test_kernels_inside_the_cone_come_back_unchanged():
    K = two_level_kernel(40, 0.0, 1 / E, seed=2, parts=3)  # (its E is e^ε)
    K = 0.999 * K + 0.001 / 40  # strictly inside
    assert np.array_equal(lift_into_cone(K, 0.0, E), K)


@pytest.mark.parametrize("c", [Fraction(0), Fraction(1, 520)])
def test_a_light_column_outside_the_cone_no_longer_needs_a_heavy_mix(c):
    """At N = 260 (the size of the certify stage's own tests): before the lift the certificate's mix needs a
    weight of ~1e-3 for the light column's 0.4 % break, after it below 1e-8, and the certified kernel is private
    by the exact oracle."""
    K = kernel_with_a_light_broken_column(260, float(c), seed=5)
    ps = prior_set(c)
    before = certify_on_fine_grid(K.copy(), ps, E_EXACT, 52)
    after = certify_on_fine_grid(lift_into_cone(K, float(c), E), ps, E_EXACT, 52)
    assert before.weight > 1e-4
    assert after.weight < 1e-8
    assert after.check.feasible and oracle_private(after.kernel.int64().tolist(), after.kernel.denominator, c, E_EXACT)


def test_noise_columns_are_left_to_the_certificate():
    """A broken column whose entries are all ≤ NOISE (1e-9) is not lifted (the certificate merges it into another
    output); nothing else is broken, so the kernel comes back unchanged."""
    n = 40
    base = 0.999 * two_level_kernel(n, 0.0, 1 / E, seed=4, parts=2) + 0.001 / n
    noise = np.zeros(n)
    noise[3] = 5e-10  # max/min infinite: broken
    K = np.hstack([base * (1 - noise)[:, None], noise[:, None]])
    assert pml_slack(K, 0.0, E)[-1] < 0 and NOISE >= 5e-10
    assert np.array_equal(lift_into_cone(K, 0.0, E), K)
