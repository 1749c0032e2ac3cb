"""Privacy of two-level columns: the closed form behind every structured mechanism's certificate.

Every structured mechanism here (k-RR, subset selection, unary encoding, local hashing, Hadamard
response) has columns with two levels: in column y, q of the N entries sit at a high level H and the
other N − q at a low level L = H / R (R ≥ 1 the family's high/low ratio). Under (ε, Q_X(c))-PML
(Q_X(c): every prior with all masses ≥ c, 0 ≤ c ≤ 1/N; c = 0 is ε-LDP) Lemma 4 of Grosse, Saeidian,
Oechtering and Skoglund, *Dobrushin Coefficients of Private Mechanisms Beyond Local Differential
Privacy*, gives the worst prior's expectation of a column k as c Σ_x k_x + (1 − Nc) min_x k_x, so a
two-level column with 1 ≤ q ≤ N − 1 high entries has the PML ratio

    ρ(q) = H / (c (qH + (N − q)L) + (1 − Nc) L) = R / (1 + c q (R − 1)),

and a constant column (q = 0 or q = N) has ratio 1. The column is private iff ρ(q) ≤ e^ε, i.e.

    R ≤ R_q := E (1 − c q) / (1 − E c q)   when E c q < 1   (any R, even L = 0, when E c q ≥ 1),

with E ≤ e^ε. R_q grows with q, so a family whose columns have at least q_min high entries is
private iff R ≤ R_{q_min}; the certificate's worst ratio is ρ(q_min). This is Remark 2's extremal
binary mechanism of the same paper (M / m = e^ε (1 − cq) / (1 − e^ε cq)). With c = 0, R_q = E for
every q: ε-LDP bounds the ratio of the two levels by e^ε.

E is the project's rational lower bound of e^ε (interval arithmetic on the ε as written,
:func:`mechdesign.spec.expr.exp_lower_bound`), the same bound the kernel certificates use; the ratio a
sampler uses is a rational R ≤ R_{q_min} with a bounded number of bits (:func:`ratio_below`), so every
comparison is in integers and the ε as written holds exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "allowed_ratio",
    "column_ratio",
    "ratio_below",
    "TwoLevelCertificate",
    "RATIO_CAP",
]

RATIO_CAP = Fraction(2**40)
"""e^ε is capped here (a lower bound of e^ε stays one) and no family uses a larger ratio."""


def allowed_ratio(bound: Fraction, c: Fraction, q: int) -> Fraction | None:
    """R_q = E (1 − c q) / (1 − E c q): the largest high/low ratio of a private column with q high entries
    (module docstring); None when E c q ≥ 1 (every ratio is private, even a zero low level)."""
    den = 1 - bound * c * q
    if den <= 0:
        return None
    return bound * (1 - c * q) / den


def column_ratio(ratio: Fraction, c: Fraction, q: int, n: int) -> Fraction:
    """ρ(q) = R / (1 + c q (R − 1)): the PML ratio under Q_X(c) of a column with q of n entries at the high
    level and the rest at the low level (1 for a constant column, q = 0 or q = n)."""
    if q <= 0 or q >= n:
        return Fraction(1)
    return ratio / (1 + c * q * (ratio - 1))


def ratio_below(limit: Fraction | None, scale: int, significant_bits: int = 40) -> Fraction:
    """A rational R = r / 2^k ≤ ``limit`` (∞ when None) with r < 2^s, s = min(significant_bits, 60 −
    bitlength(scale)), so that scale · (numerator + denominator) < 2^62 (int64 sampler thresholds).
    R is the largest such dyadic rational below the limit, and at most 2^s − 1."""
    s = max(8, min(significant_bits, 60 - int(scale).bit_length()))
    top = Fraction((1 << s) - 1)
    if limit is None or limit >= top:
        return top
    if limit < 1:
        raise ValueError(f"a ratio limit below 1 is impossible (e^eps >= 1), found {limit}")
    k = max(0, s - math.ceil(limit).bit_length())
    return Fraction(math.floor(limit * (1 << k)), 1 << k)


@dataclass(frozen=True)
class TwoLevelCertificate:
    """Exact privacy of a structured mechanism (module docstring): every column is two-level with ratio
    ``ratio`` (per component for mixtures) and at least ``min_high`` high entries, so the worst PML ratio is
    ρ(min_high) = ``worst_ratio`` ≤ ``bound`` ≤ e^ε."""

    family: str
    parameters: dict[str, Any]
    epsilon: str
    c: Fraction
    bound: Fraction
    """E ≤ e^ε, the rational every ratio is compared with."""
    components: tuple[tuple[Fraction, int], ...]
    """(R, q_min) of each component: high/low ratio and fewest high entries in a non-constant column."""
    worst_ratio: Fraction
    obligation: str
    """The closed form checked, in words."""

    @property
    def feasible(self) -> bool:
        return self.worst_ratio <= self.bound

    @property
    def leakage(self) -> float:
        """log of the worst ratio: the (ε, Q_X(c))-PML leakage of the mechanism, in nats."""
        return math.log(self.worst_ratio.numerator) - math.log(self.worst_ratio.denominator)

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "parameters": self.parameters,
            "epsilon": self.epsilon,
            "prior_set": {"kind": "min_mass", "c": str(self.c)},
            "feasible": self.feasible,
            "bound": str(self.bound),
            "bound_float": float(self.bound),
            "ratios": [{"ratio": str(r), "min_high": q} for r, q in self.components],
            "worst_ratio": str(self.worst_ratio),
            "leakage": self.leakage,
            "obligation": self.obligation,
        }


def certify_two_level(family, parameters, epsilon, c, bound, n, components) -> TwoLevelCertificate:
    """The certificate of a mechanism whose components have (R, q_min) = ``components``: the worst ratio
    max ρ(q_min) over components, compared with E in exact integer arithmetic (Fractions)."""
    worst = max(column_ratio(r, c, q, n) for r, q in components)
    obligation = (
        "every column is two-level (q high entries at H, N - q at H/R); under Q_X(c) its PML ratio is "
        "R / (1 + c q (R - 1)) (Lemma 4 of the Dobrushin paper), largest at the fewest high entries q_min; "
        "checked: max over components of R / (1 + c q_min (R - 1)) <= E <= e^eps, in exact rationals"
    )
    return TwoLevelCertificate(
        family=family,
        parameters=parameters,
        epsilon=str(epsilon),
        c=Fraction(c),
        bound=bound,
        components=tuple((Fraction(r), int(q)) for r, q in components),
        worst_ratio=worst,
        obligation=obligation,
    )
