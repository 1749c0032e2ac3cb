"""Precision at the ends of the documented domains: each function within 1e-12 relative of mpmath at 50 digits.

References (mpmath, 50 significant digits, the float inputs taken exactly):
- disclosure paper, Proposition 7 + Theorem 6 and Corollary 8: −log(1 − c) and −log(1 − (N − 1)c) over Q_X(c);
- envelopes paper, Theorem 4: the PML-extremal kernel's diagonal 1 − e^ε(1 − P(i)), near ε = −log(1 − min P);
- f_α paper, Theorem 6 (eq. 23): R_α(u, v) = (u^α − 1)/(u − 1) − (1 − v^α)/(1 − v), near α = 1;
- envelopes paper, Theorem 5 and Figure 2: log(α/q_1), log(kα/δ) and the (ε, δ)-LDP curve log((α − δ)/β) of
  k-RR, α = e^{ε_r}/(e^{ε_r} + k − 1), β = 1/(e^{ε_r} + k − 1), at ε_r = 1e-10;
- disclosure paper, Example 3.3: −log(1 − Σ_{k≤m} C(n,k) p^k (1 − p)^{n−k}) when it is ~1e-11;
- Dobrushin paper, Corollaries 1–2: Ξ(ε, c) log((1 − Nc)e^ε + 1) and Ξ(ε, c)(2 − 4/(√((1 − Nc)e^ε + 1) + 1))
  at 1 − Nc = 1e-6.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from mechdesign.spec.models import MinMass
from mechdesign.theory import bounds, disclosure, envelopes

REL = 1e-12


def mp(x) -> mpmath.mpf:
    """A float or Fraction, exactly, in mpmath."""
    q = Fraction(x)
    return mpmath.mpf(q.numerator) / q.denominator


def rel_error(value: float, reference) -> float:
    return float(abs(mpmath.mpf(value) - reference) / abs(reference))


@pytest.fixture(autouse=True)
def _fifty_digits():
    with mpmath.workdps(50):
        yield


# ------------------------------------------------------------------ disclosure thresholds
@pytest.mark.parametrize("c", [1e-15, 1e-9, 1e-4, 0.1, 0.25])
def test_disclosure_threshold_for_min_mass(c):
    value = disclosure.disclosure_threshold_for_set(MinMass(kind="min_mass", c=c), 4)
    assert rel_error(value, -mpmath.log1p(-mp(Fraction(str(c))))) <= REL


@pytest.mark.parametrize("c", [1e-15, 1e-9, 1e-4, 0.1])
def test_singling_out_threshold_for_min_mass(c):
    n = 4
    value = disclosure.singling_out_threshold_for_set(MinMass(kind="min_mass", c=c), n)
    assert rel_error(value, -mpmath.log1p(-(n - 1) * mp(Fraction(str(c))))) <= REL


# ------------------------------------------------------------------ Theorem 4: PML-extremal kernel
@pytest.mark.parametrize("closeness", [1e-12, 1e-9, 1e-6, 0.5])
def test_pml_extremal_diagonal_near_its_threshold(closeness):
    prior = [0.1, 0.2, 0.3, 0.4]
    eps = (1 - closeness) * -math.log1p(-0.1)
    K = bounds.pml_extremal_kernel(prior, eps)
    for i, p in enumerate(prior):
        assert rel_error(K[i, i], 1 - mpmath.exp(mp(eps)) * (1 - mp(p))) <= REL
        j = (i + 1) % len(prior)
        assert rel_error(K[i, j], mpmath.exp(mp(eps)) * mp(prior[j])) <= REL


# ------------------------------------------------------------------ R_α near α = 1
@pytest.mark.parametrize("alpha", [1 + 1e-12, 1 + 1e-9, 1 + 1e-6, 1.5, 3.0])
@pytest.mark.parametrize("u, v", [(2.0, 0.5), (1.01, 0.99), (1.5, 0.0), (10.0, 0.9), (1.0, 0.5)])
def test_r_alpha(alpha, u, v):
    a, U, V = mp(alpha), mp(u), mp(v)
    up = a if u == 1 else (U**a - 1) / (U - 1)
    low = a if v == 1 else (1 - V**a) / (1 - V)
    assert rel_error(bounds.r_alpha(u, v, alpha), up - low) <= REL


# ------------------------------------------------------------------ k-RR at ε_r = 1e-10
def _krr_ab(k, eps_r):
    e = mpmath.exp(mp(eps_r))
    return e / (e + k - 1), 1 / (e + k - 1)


@pytest.mark.parametrize("eps_r", [1e-10, 1e-6, 1.0])
@pytest.mark.parametrize("delta", [1e-3, 0.2, 0.9])
def test_krr_envelope_upper_bound(eps_r, delta):
    prior = [0.1, 0.2, 0.3, 0.4]
    k = len(prior)
    a, b = _krr_ab(k, eps_r)
    q1 = b + (a - b) * mp(0.1)
    top = mpmath.log(a / q1)
    ref = top if mp(delta) <= q1 else min(mpmath.log(k * a / mp(delta)), top)
    assert rel_error(bounds.krr_envelope_upper_bound(prior, eps_r, delta), ref) <= REL


@pytest.mark.parametrize("eps_r", [1e-10, 1e-6, 1.0])
@pytest.mark.parametrize("share", [0.0, 0.1, 0.5, 0.9])
def test_krr_ldp_epsilon(eps_r, share):
    k = 4
    a, b = _krr_ab(k, eps_r)
    delta = float(share * (a - b))
    ref = mpmath.log((a - mp(delta)) / b)
    assert rel_error(envelopes.krr_ldp_epsilon(k, eps_r, delta), ref) <= REL


# ------------------------------------------------------------------ Example 3.3 (count query)
@pytest.mark.parametrize("n, m, p", [(60, 0, 0.35), (40, 2, 0.5), (100, 10, 0.5), (30, 20, 0.5), (10, 5, 0.3)])
def test_count_query_leakage(n, m, p):
    P = mp(p)
    cdf = mpmath.fsum(mpmath.binomial(n, k) * P**k * (1 - P) ** (n - k) for k in range(m + 1))
    assert rel_error(disclosure.count_query_leakage(n, m, p), -mpmath.log1p(-cdf)) <= REL


# ------------------------------------------------------------------ Corollaries 1–2 at 1 − Nc = 1e-6
def _xi(eps, c, n):
    e = mpmath.exp(mp(eps))
    return min((e - 1) / (e * (1 - n * mp(c)) + 1), mpmath.mpf(1))


@pytest.mark.parametrize("gap", [1e-6, 1e-3, 0.5])
@pytest.mark.parametrize("eps", [1e-3, 1.0, 30.0])
def test_corollaries_1_and_2(gap, eps):
    n = 3
    c = (1 - gap) / n
    g = (1 - n * mp(c)) * mpmath.exp(mp(eps)) + 1
    kl = _xi(eps, c, n) * mpmath.log(g) * mp(0.3)
    hel = _xi(eps, c, n) * (2 - 4 / (mpmath.sqrt(g) + 1)) * mp(0.3)
    assert rel_error(bounds.corollary1_kl_bound(eps, c, n, 0.3), kl) <= REL
    assert rel_error(bounds.corollary2_hellinger_bound(eps, c, n, 0.3), hel) <= REL
    assert rel_error(bounds.xi(eps, c, n), _xi(eps, c, n)) <= REL
