"""Closed-form results of the papers, to certify designs against.

Dobrushin paper = Grosse, Saeidian, Oechtering, Skoglund, *Dobrushin
Coefficients of Private Mechanisms Beyond Local Differential Privacy*.
Each function states its domain and raises ``ValueError`` outside it.
"""
from __future__ import annotations

import math

__all__ = ["xi", "ldp_dobrushin", "remark2_column", "example1_kernel"]


def _check_eps_c_n(epsilon: float, c: float, n: int) -> None:
    if not (isinstance(n, int) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, found {n!r}")
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and >= 0, found {epsilon!r}")
    if not (0 <= c <= 1 / n + 1e-15):
        raise ValueError(f"c must lie in [0, 1/N] = [0, {1 / n:g}], found {c!r}")


def xi(epsilon: float, c: float, n: int) -> float:
    """Ξ(ε, c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1}: the largest Dobrushin coefficient
    of an (ε, c)-PML kernel (Dobrushin paper, Theorem 1; = 1 for ε ≥ log(2/(Nc)), Theorem 2).

    Domain: ε ≥ 0, 0 ≤ c ≤ 1/N, N ≥ 2. c = 0 gives the LDP value (e^ε − 1)/(e^ε + 1)
    (Kairouz et al., eq. 4); c = 1/N gives min{e^ε − 1, 1} (Remark 1).
    """
    _check_eps_c_n(epsilon, c, n)
    inv = math.exp(-epsilon)  # divide through by e^ε: no overflow for any ε
    return min((1.0 - inv) / ((1.0 - n * c) + inv), 1.0)


def ldp_dobrushin(epsilon: float) -> float:
    """(e^ε − 1)/(e^ε + 1): the largest Dobrushin coefficient of an ε-LDP kernel
    (Kairouz, Oh, Viswanath; eq. 4 of the Dobrushin paper). Domain: ε ≥ 0."""
    if not (epsilon >= 0):
        raise ValueError(f"epsilon must be >= 0, found {epsilon!r}")
    return math.tanh(epsilon / 2.0)


def remark2_column(epsilon: float, c: float, n: int, q: int) -> list[float]:
    """First column p of the Remark 2 extremal binary mechanism K* = [p, 1 − p]:
    q entries M = e^ε(1 − cq)/(1 + e^ε(1 − Nc)), then N − q entries m = (1 − e^ε c q)/(1 + e^ε(1 − Nc)).

    Domain: 1 ≤ q ≤ N − 1 and e^ε c q ≤ 1 (so that m ≥ 0; the regime of Theorem 3).
    """
    _check_eps_c_n(epsilon, c, n)
    if not (isinstance(q, int) and 1 <= q <= n - 1):
        raise ValueError(f"q must be an integer in [1, N-1], found {q!r}")
    ee = math.exp(epsilon)
    if ee * c * q > 1 + 1e-12:
        raise ValueError(f"Remark 2 needs e^eps * c * q <= 1, found {ee * c * q:g}")
    d = 1.0 + ee * (1.0 - n * c)
    big, small = ee * (1.0 - c * q) / d, (1.0 - ee * c * q) / d
    return [big] * q + [small] * (n - q)


def example1_kernel(epsilon: float, c: float) -> list[list[float]]:
    """Example 1 (N = 2) of the Dobrushin paper: the optimal binary (ε, c)-PML kernel
    [[e^ε(1−c), 1 − e^ε c], [1 − e^ε c, e^ε(1−c)]] / (e^ε(1 − 2c) + 1).

    Domain: 0 ≤ c ≤ 1/2 and e^ε c ≤ 1.
    """
    p = remark2_column(epsilon, c, 2, 1)
    return [[p[0], 1 - p[0]], [p[1], 1 - p[1]]]
