"""Large ε: the point past which e^ε behaves as ∞ for every kernel the check can meet.

The exact check (:func:`mechdesign.certify.exact.check_pml`) compares, for every output y with a
non-zero column, the ratio

    r_y = max_x K_x(y) / min_{P∈𝒫} P·K(:,y)

with a rational E ≤ e^ε. Write the kernel as K = A / D with integer numerators A (D = 2^k on the
emitted grid, k ≤ 52; any D for a kernel read by ``verify``).

**Claim.** Let L be the least common multiple of the denominators of every rational in the
prior-set model (c, prior masses, box bounds, centre, radius; L = 1 for the simplex). Then every
*finite* ratio satisfies r_y ≤ 2·L·D.

**Proof.** The numerator max_x A_x(y)/D is at most 1. The minimum min_P P·A(:,y) is attained at a
prior P* whose masses all lie on the lattice (1/(2L))·ℤ — for every kind the exact minimiser
(:meth:`~mechdesign.privacy.base.PriorSetRules.min_expectation`) is built from the model's numbers
by sums, differences and halving: simplex e_x; Q_X(c) c·1 + (1 − Nc)·e_x; a point prior or a listed
hull vertex itself; a box vertex l + (partial sums of u − l); an ℓ1-ball prior centre ± pieces of
r/2. So P*·A(:,y), a combination of such masses with integer coefficients, lies in (1/(2L))·ℤ; if
it is positive (the ratio is finite) it is ≥ 1/(2L), and min_P P·K(:,y) ≥ 1/(2L·D). Hence
r_y ≤ 1 / (1/(2L·D)) = 2·L·D. ∎

**Consequence.** For any E ≥ cap := 2·L·D the check's verdict is that of E = ∞: a column passes
iff its minimum is positive (only the zero pattern matters). So whenever e^ε ≥ cap, the certificate
uses E = cap — a true rational lower bound of e^ε that never needs the (possibly 10^13-digit) e^ε
itself, and loses nothing. On the emitted grid D ≤ 2^52, so for Q_X(c) with c = 1/20, say,
cap = 2·20·2^52 ≈ 1.8·10^17: every ε ≥ 40 nats is, for the certificate, the ε = ∞ problem.

The LP side agrees: its constraint e^{−ε}·K_x(y) ≤ min_P P·K(:,y) has e^{−ε} below any solver
tolerance long before that (e^{−40} ≈ 4·10^{−18}), so the LP solves the ε = ∞ problem up to its
tolerances, and the repair step (mixing with the constant kernel, which makes every column
positive where any prior sees it) closes the remaining zero-pattern gap exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

__all__ = ["prior_set_lattice", "ratio_cap"]


def _denominators(value: Any, out: list[int]) -> None:
    if isinstance(value, Fraction):
        out.append(value.denominator)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _denominators(v, out)
    elif hasattr(type(value), "model_fields"):
        for name in type(value).model_fields:
            _denominators(getattr(value, name), out)


def prior_set_lattice(prior_set) -> int:
    """L: the lcm of the denominators of every rational in the prior-set model (1 if there are none)."""
    dens: list[int] = []
    _denominators(prior_set, dens)
    L = 1
    for d in dens:
        L = L * d // math.gcd(L, d)
    return L


def ratio_cap(prior_set, denominator: int) -> Fraction:
    """cap = 2·L·D: no finite PML ratio of a kernel with common denominator D exceeds it (module docstring)."""
    return Fraction(2 * prior_set_lattice(prior_set) * int(denominator))
