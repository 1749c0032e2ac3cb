"""Status at the emitted grid's floor: an optimum the reals only approach as entries go to 0 (an LDP expected
loss at ε = 3e9, |x − x'| metric privacy at ε ≥ 50) cannot be met on the grid 2^−52, where every entry that must
be positive is at least one step; a gap within GRID_FLOOR_STEPS steps per entry is ``optimal``
(mechdesign.design.grid_floor), a wider one is not.

Reference: the entry sensitivity of an expected loss is S = Σ_x P(x) Σ_y |L(x, y)| (the loss is linear in K),
written here from the definition; the bound 0 is the loss of the identity kernel (no privacy).
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from mechdesign import design
from mechdesign.design import GRID_FLOOR_STEPS, gap_closed, grid_floor

STEP = 2.0**-52


def _absolute_sensitivity(n: int) -> float:
    return float(sum(F(1, n) * abs(x - y) for x in range(n) for y in range(n)))


@pytest.mark.parametrize(
    "spec",
    [
        {"alphabet": 4, "epsilon": "3e9", "prior_set": {"kind": "simplex"}},
        {"alphabet": 3, "privacy": [{"epsilon": 50, "metric": {"kind": "absolute"}}]},
        {"alphabet": 5, "privacy": [{"epsilon": 80, "metric": {"kind": "absolute"}}]},
    ],
)
def test_an_optimum_of_zero_met_within_the_grid_is_optimal(spec):
    n = spec["alphabet"]
    result = design({**spec, "objective": {"kind": "expected_loss", "loss": "absolute"}})
    cert = result.certificate
    assert cert.feasible and result.is_ok and result.status.value == "optimal"
    assert cert.dual_bound is not None and 0 <= cert.dual_bound <= result.objective
    assert 0 < result.objective <= GRID_FLOOR_STEPS * STEP * _absolute_sensitivity(n)
    assert cert.grid_floor == pytest.approx(GRID_FLOOR_STEPS * STEP * _absolute_sensitivity(n), rel=1e-12)
    K = result.exact_kernel.fractions()
    assert all(v > 0 for row in K for v in row)  # a finite ε keeps every entry positive (one step at least)


def test_a_gap_beyond_the_grid_floor_is_not_closed():
    floor = grid_floor(5.0)  # N = 4, uniform prior, absolute loss: S = 5
    assert floor == 4 * 5 * STEP
    assert gap_closed(floor, floor, 0.0, floor)
    assert not gap_closed(1.01 * floor, 1.01 * floor, 0.0, floor)
    assert not gap_closed(2 * floor, 2 * floor, 0.0)  # without the floor: the relative rule and 1e-15 only
    assert grid_floor(None) == 0.0
