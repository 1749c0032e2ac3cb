"""Directed rounding of exact rationals to floats, for bounds that must stay on their side."""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["float_down", "float_up", "float_or_inf", "log_of_rational"]


def float_down(q: Fraction) -> float:
    """The largest float ≤ q (−inf below the float range)."""
    try:
        f = float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf
    if math.isfinite(f) and Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    return f


def float_up(q: Fraction) -> float:
    """The smallest float ≥ q."""
    return -float_down(-q)


def float_or_inf(q) -> float:
    """q to the nearest double, ±inf beyond the double range (a ratio of 2e323 from a prior mass of 5e-324)
    instead of OverflowError: for reports and float measures, never for a bound that must stay on its side."""
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def log_of_rational(q: Fraction) -> float:
    """log q for a rational q > 0, from its numerator and denominator (math.log takes integers of any size): no
    division, so no overflow or underflow for q = 1e-400 or 2e323."""
    q = Fraction(q)
    return math.log(q.numerator) - math.log(q.denominator)
