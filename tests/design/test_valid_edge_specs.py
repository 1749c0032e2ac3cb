"""Valid specs at the ends of their ranges are designed, not crashed on: ε = 1000 with an interior-point solve
(e^−ε is 0 in doubles) and ``epsilon: {protect: ...}`` over Q_X(c) with c = 1e-400 (a mass below the doubles).

Reference values: at ε = 1000 the identity kernel satisfies Lemma 4 of the Dobrushin paper for Q_X(97/400)
(1 ≤ e^1000 · 97/400), so the uniform-prior Bayes vulnerability optimum is 1. The thresholds of the disclosure
paper (Proposition 7 + Theorem 6: −log(1 − c); Corollary 8: −log(1 − (N − 1)c)) are recomputed here with mpmath
at 4000 bits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from mechdesign import design


def test_bayes_vulnerability_at_epsilon_1000_by_interior_point_is_designed():
    result = design(
        {
            "alphabet": 4,
            "epsilon": 1000,
            "prior_set": {"kind": "min_mass", "c": "97/400"},
            "objective": {"kind": "bayes_vulnerability"},
            "solver": {"method": "ipm"},
        }
    )
    assert result.certificate.feasible
    assert result.status.value == "optimal"
    assert abs(result.objective - 1.0) <= 1e-6


def test_polish_kernel_with_exp_minus_epsilon_zero_keeps_the_kernel():
    """The interior-point polish with the PML row's scale e^−ε = 0 (ε > 745): no row binds, the kernel is kept."""
    from types import SimpleNamespace

    from mechdesign.lp.solve import polish_kernel

    n = 3
    K = np.arange(n * n).reshape(n, n)  # where the kernel LP keeps K, t (the fields polish_kernel reads)
    layout = SimpleNamespace(K=K, t=np.arange(n * n, n * n + n), u=None, c=0.1, scale=0.0)
    x = np.zeros(n * n + n)
    x[K] = np.eye(n)
    out = polish_kernel(None, layout, x)
    assert out is not None and np.array_equal(out[K], np.eye(n))


def _minus_log_one_minus(q: Fraction) -> mpmath.mpf:
    with mpmath.workprec(4000):
        return -mpmath.log1p(-mpmath.mpf(q.numerator) / q.denominator)


@pytest.mark.parametrize("n", [2, 5])
@pytest.mark.parametrize(
    "protect, threshold_mass",
    [
        ({"no_disclosure": True}, lambda n, c: c),
        ({"no_singling_out": True}, lambda n, c: (n - 1) * c),
        ({"no_disclosure": True, "no_singling_out": True}, lambda n, c: c),
    ],
)
def test_protect_over_min_mass_1e400_resolves_below_the_papers_threshold(n, protect, threshold_mass):
    c = Fraction(1, 10**400)
    result = design(
        {
            "alphabet": n,
            "epsilon": {"protect": protect},
            "prior_set": {"kind": "min_mass", "c": "1e-400"},
            "objective": {"kind": "dobrushin"},
        }
    )
    eps = Fraction(result.to_json()["epsilon_text"])
    threshold = _minus_log_one_minus(threshold_mass(n, c))
    with mpmath.workprec(4000):
        eps_mp = mpmath.mpf(eps.numerator) / eps.denominator
        assert eps_mp < threshold  # strictly below: the guarantee holds at the ε enforced
        assert eps_mp > threshold * (1 - mpmath.mpf(10) ** -15)  # and is the 16-digit decimal just below it
    assert result.certificate.feasible


def test_min_entropy_over_min_mass_1e400_is_theorem_4():
    result = design(
        {
            "alphabet": 3,
            "epsilon": {"protect": {"min_entropy": "0.5"}},
            "prior_set": {"kind": "min_mass", "c": "1e-400"},
            "objective": {"kind": "dobrushin"},
        }
    )
    assert result.to_json()["epsilon_text"] == "0.5" and result.certificate.feasible
