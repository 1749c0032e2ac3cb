"""k-ary randomized response (Warner 1965; Kairouz, Oh, Viswanath 2016), the kernel many tests start from: e/(e + k − 1)
on the diagonal, 1/(e + k − 1) elsewhere; e-LDP exactly (its largest ratio in a column is e)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def krr(k: int, e: float) -> np.ndarray:
    """k-ary randomized response in floats (Warner 1965; Kairouz, Oh, Viswanath 2016): e/(e + k − 1) on the
    diagonal, 1/(e + k − 1) elsewhere, written as (1 + (e − 1) I) / (e + k − 1)."""
    return (np.full((k, k), 1.0) + (e - 1) * np.eye(k)) / (e + k - 1)


def krr_exact(n: int, e) -> list[list[Fraction]]:
    """k-ary randomized response with ratio exactly e (an int or a Fraction): K_x(x) = e/(e + n − 1), else
    1/(e + n − 1), as Fractions."""
    e = Fraction(e)
    return [[e / (e + n - 1) if x == y else 1 / (e + n - 1) for y in range(n)] for x in range(n)]
