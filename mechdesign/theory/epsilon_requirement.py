"""ε chosen from a privacy requirement, as a rigorous exact number: the spec form
``epsilon: {protect: {...}}`` and the value ``mechdesign epsilon`` prints.

Disclosure paper (Saeidian, Cervia, Oechtering, Skoglund, *Rethinking Disclosure Prevention with PML*,
``../shared/papers/rethinking-disclosure-prevention-pml.txt``), §3.2–3.3. An (ε, 𝒫)-PML mechanism is
(ε, P)-PML for the true prior P ∈ 𝒫, so a requirement holds whichever P ∈ 𝒫 is the truth when, with
p_lo = min_{P∈𝒫} min_x P(x) and p_hi = max_{P∈𝒫} max_x P(x) (exact, :func:`prior_set_mass_range`):

* ``min_entropy: h`` — no attribute U of X with H∞(P_U) > h is disclosed, to any adversary: ε ≤ h
  (Theorem 4; attained, so ε = h exactly, the text the user wrote); and below t = −log(1 − p_lo) the
  leakage capacity is finite and nothing at all is disclosed (Proposition 7 + Theorem 6), so when t > h
  the largest guaranteed ε is just below t.
* ``no_disclosure: true`` — no attribute disclosed: ε < t = −log(1 − p_lo) (Proposition 7 + Theorem 6).
* ``no_singling_out: true`` — X never singled out: ε < min_{P∈𝒫} H∞(P) = −log p_hi (Corollary 8).

Several requirements: the smallest ε. The strict thresholds are irrational (log of a rational ≠ 1), so
the ε enforced is the largest decimal with :data:`DIGITS` significant digits that is *provably* below
the threshold (mpmath interval arithmetic with outward rounding, :func:`mechdesign.spec.expr.enclose`):
the guarantee then holds at the ε the certificate checks, not only in the limit. That decimal becomes
the spec's ε text, which the pipeline reads as the exact rational it writes.

Refused (one line naming the field): h at or above −log p_lo, where every kernel is (h, 𝒫)-PML, so
the requirement protects nothing; no_disclosure or no_singling_out when the threshold is 0 (a prior
with a zero mass, or a point mass, in the set: only ε = 0, a constant kernel, would do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from mechdesign.spec import expr
from mechdesign.spec.errors import SpecError
from mechdesign.theory.disclosure import minus_log as float_minus_log, prior_set_mass_range

__all__ = ["DIGITS", "EpsilonResolution", "resolve_requirement", "resolve_spec", "decimal_strictly_below"]

DIGITS = 16
"""Significant digits of a resolved ε below a strict threshold (it is at most 10^-15 relative below it)."""

FIELD = "epsilon.protect"


@dataclass(frozen=True)
class EpsilonResolution:
    """The ε a requirement resolved to, and why."""

    requirement: dict
    """The requirement as written (``{"min_entropy": "2.0"}``, ``{"no_disclosure": True}``, …)."""
    epsilon_text: str
    """The ε enforced: an exact decimal (or h's own text). The guarantee holds at this value."""
    theorem: str
    """The result of the disclosure paper that justifies it."""
    explanation: str
    threshold: float | None
    """The strict threshold t (ε < t guarantees the requirement) when the choice came from one, else None."""

    @property
    def epsilon(self) -> float:
        return expr.evaluate(self.epsilon_text)

    def to_json(self) -> dict:
        return {
            "requirement": dict(self.requirement),
            "epsilon": self.epsilon,
            "epsilon_text": self.epsilon_text,
            "theorem": self.theorem,
            "explanation": self.explanation,
            "threshold": self.threshold,
        }


def _fraction(x: mpmath.mpf) -> Fraction:
    """The exact value of ``x`` (read from the number itself: ``mpmath.mpf(x)`` would first round it to the global
    53-bit context, to nearest, which can move an interval's lower end above the value it bounds)."""
    man, exp = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x)).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def decimal_strictly_below(threshold_text: str, digits: int = DIGITS) -> str:
    """The largest decimal with ``digits`` significant digits that is provably < the value of
    ``threshold_text`` (an expression; its value must be > 0). Rigorous: from the lower end lo of an
    outward-rounded enclosure, d = ⌊lo·10^k⌋/10^k, lowered by one unit when d = lo (so d < lo ≤ t or d < t)."""
    lo, _ = expr.enclose(threshold_text)
    return _decimal_below(lo, threshold_text, digits)


def _decimal_below(lo: mpmath.mpf, what: str, digits: int = DIGITS) -> str:
    """:func:`decimal_strictly_below` from the lower end ``lo`` of an enclosure of the threshold ``what``."""
    if not lo > 0:
        raise ValueError(f"threshold {what} is not provably > 0")
    q = _fraction(lo)
    e10 = math.floor((q.numerator.bit_length() - q.denominator.bit_length()) * math.log10(2))  # ≈ log10 q
    while Fraction(10) ** (e10 + 1) <= q:
        e10 += 1
    while Fraction(10) ** e10 > q:
        e10 -= 1
    k = digits - 1 - e10  # 10^-k is the unit of the last significant digit
    unit = Fraction(1, 10**k) if k >= 0 else Fraction(10 ** (-k))
    n = q // unit
    if n * unit == q:
        n -= 1
    d = n * unit
    if d <= 0:
        raise ValueError(f"threshold {what} is too small for {digits} digits")
    return _decimal_text(d)


def _minus_log_enclosure(r: Fraction) -> tuple[mpmath.mpf, mpmath.mpf]:
    """A rigorous enclosure (lo, hi) of −log r for a rational 0 < r < 1 (mpmath interval arithmetic, outward
    rounding), at a working precision that resolves r next to 1: −log(1 − 10^−400) is about 10^−400, which a
    160-bit interval (and a 200-character expression of 1 − 10^−400) cannot carry."""
    gap = 1 - r  # −log r ≈ gap when r is near 1: 128 bits beyond the position of gap's leading bit
    bits = 128 + max(0, gap.denominator.bit_length() - gap.numerator.bit_length())
    iv = mpmath.iv
    old = iv.prec
    iv.prec = bits
    try:
        value = -iv.log(iv.mpf(r.numerator) / iv.mpf(r.denominator))
    finally:
        iv.prec = old
    lo, hi = value._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _short_text(q: Fraction) -> str:
    """q as a short exact text for messages: an integer, a decimal (scientific when long), 1 - (its distance to
    1) when that is shorter, or p/q."""
    if q.denominator == 1:
        return str(q.numerator)
    if q > Fraction(1, 2) and len(str(q)) > 40:
        return f"1 - {_short_text(1 - q)}"
    den = q.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    return _decimal_text(q) if den == 1 else f"{q.numerator}/{q.denominator}"


def _decimal_text(d: Fraction) -> str:
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        value = Decimal(d.numerator) / Decimal(d.denominator)
        text = format(value, "f")
        if len(text) > 40:  # 10^-400: 0.000…1 would be 400 characters (an expression is at most 200)
            text = format(value.normalize(), "e").replace("E", "e")
    assert Fraction(text) == d, (text, d)
    return text


def _ratio_text(q: Fraction, bare: bool = False) -> str:
    if q.denominator == 1:
        return str(q.numerator)
    return f"{q.numerator}/{q.denominator}" if bare else f"({q.numerator}/{q.denominator})"


def _provably_greater(a, b) -> bool:
    """value(a) > value(b), decided rigorously (False when the enclosures overlap); each is an expression's text
    or an enclosure (lo, hi) already made (:func:`_minus_log_enclosure`)."""
    a_lo, _ = expr.enclose(a) if isinstance(a, str) else a
    _, b_hi = expr.enclose(b) if isinstance(b, str) else b
    return a_lo > b_hi


def _strict_choice(written, text, enclosure, value, theorem, what) -> EpsilonResolution:
    """The largest DIGITS-digit decimal ε provably below the threshold ``text`` (enclosed by ``enclosure``)."""
    eps = _decimal_below(enclosure[0], text)
    shown = f"{value:.17g}" if value > 0 else mpmath.nstr(enclosure[0], 17)  # below the doubles: 1e-400
    return EpsilonResolution(
        written,
        eps,
        theorem,
        f"eps < {text} = {shown} guarantees {what}; enforced: the largest {DIGITS}-digit decimal "
        f"provably below it, {eps}",
        value,
    )


def _min_entropy_choice(protect, written, low, disclosure_text, disclosure_value) -> EpsilonResolution:
    """ε for ``min_entropy: h``: h itself (Theorem 4), or the no-disclosure threshold when that is provably
    larger (stronger); SpecError when h is at or above the vacuous level −log(min mass)."""
    h = protect.min_entropy.text
    if low > 0:
        vacuous_text = f"-log({_ratio_text(low, bare=True)})"
        vacuous = _minus_log_enclosure(low) if low < 1 else (mpmath.mpf(0), mpmath.mpf(0))
        if not _provably_greater(vacuous, h):
            if _provably_greater(h, vacuous) or h.strip() == vacuous_text:
                raise SpecError(
                    [
                        (
                            f"{FIELD}.min_entropy",
                            f"must be below -log(min over the prior set of min_x P(x)) = "
                            f"{float_minus_log(low):.6g} nats, found {h}: at or above it every "
                            "mechanism is (h, P)-PML, so the requirement protects nothing",
                        )
                    ]
                )
    theorem4 = EpsilonResolution(
        written,
        h,
        "Theorem 4 (disclosure paper)",
        f"(eps, P_X)-PML with eps = {h} discloses no attribute U with H_inf(P_U) > {h} nats, "
        "to any adversary, for every P_X in the prior set",
        None,
    )
    if disclosure_text is None:
        return theorem4
    stronger = _strict_choice(
        written,
        disclosure_text,
        _minus_log_enclosure(1 - low),
        disclosure_value,
        "Proposition 7 + Theorem 6 (disclosure paper)",
        f"finite leakage capacity, so no attribute at all is disclosed (stronger than protecting H_inf > {h})",
    )
    return stronger if _provably_greater(stronger.epsilon_text, h) else theorem4


def _no_disclosure_choice(written, low, disclosure_text, disclosure_value) -> EpsilonResolution:
    """ε for ``no_disclosure``: below −log(1 − min mass) (Proposition 7 + Theorem 6); SpecError when the
    prior set has a prior with a zero mass."""
    if disclosure_text is None:
        raise SpecError(
            [
                (
                    f"{FIELD}.no_disclosure",
                    "the prior set contains a prior with a zero mass (min over the set of min_x P(x) = 0), "
                    "so only eps = 0 (a constant kernel) is guaranteed to disclose nothing "
                    "(Proposition 7 + Theorem 6); restrict the prior set, e.g. {kind: min_mass, c: C}",
                )
            ]
        )
    return _strict_choice(
        written,
        disclosure_text,
        _minus_log_enclosure(1 - low),
        disclosure_value,
        "Proposition 7 + Theorem 6 (disclosure paper)",
        "finite leakage capacity, so no attribute of X is disclosed",
    )


def _no_singling_out_choice(written, high) -> EpsilonResolution:
    """ε for ``no_singling_out``: below −log(max mass) (Corollary 8); SpecError when the prior set has a
    point mass."""
    if high >= 1:
        raise SpecError(
            [
                (
                    f"{FIELD}.no_singling_out",
                    "the prior set contains a point mass (max over the set of max_x P(x) = 1), so only "
                    "eps = 0 is guaranteed never to single out X (Corollary 8); restrict the prior set",
                )
            ]
        )
    return _strict_choice(
        written,
        f"-log({_short_text(high)})",
        _minus_log_enclosure(high),
        float_minus_log(high),
        "Corollary 8 (disclosure paper)",
        "H_inf(P_X) > eps for every P_X in the prior set, so X is never singled out",
    )


def resolve_requirement(protect, prior_set, n: int) -> EpsilonResolution:
    """The largest ε guaranteeing ``protect`` (a :class:`~mechdesign.spec.models.ProtectRequirement`) for
    every prior of ``prior_set`` over N symbols; raises :class:`SpecError` naming the field when the
    requirement protects nothing or no ε > 0 meets it."""
    low, high = prior_set_mass_range(prior_set, n)
    written = protect.as_written()
    # thresholds enclosed from the exact masses (at the precision they need: c = 1e-400 is a valid min mass),
    # written for the messages only
    disclosure_text = f"-log(1 - {_short_text(low)})" if low > 0 else None
    disclosure_value = float_minus_log(1 - low) if low > 0 else 0.0
    choices: list[EpsilonResolution] = []
    if protect.min_entropy is not None:
        choices.append(_min_entropy_choice(protect, written, low, disclosure_text, disclosure_value))
    if protect.no_disclosure:
        choices.append(_no_disclosure_choice(written, low, disclosure_text, disclosure_value))
    if protect.no_singling_out:
        choices.append(_no_singling_out_choice(written, high))
    best = choices[0]
    for ch in choices[1:]:
        if _provably_greater(best.epsilon_text, ch.epsilon_text):
            best = ch
    return best  # several requirements: the smallest ε binds, the others hold a fortiori


def resolve_spec(spec):
    """(spec with ε a number, resolution or None): a spec whose ``epsilon`` is ``{protect: ...}`` becomes the
    same spec with ``epsilon`` the resolved exact decimal (or h's text); any other spec is returned as is."""
    req = spec.epsilon_requirement
    if req is None:
        return spec, None
    if req.protect is None:
        raise SpecError(
            [
                (
                    "epsilon.accuracy",
                    "is resolved by a design (mechdesign solve, or mechdesign epsilon --rmse R --n N SPEC); "
                    "give epsilon as a number here",
                )
            ]
        )
    resolution = resolve_requirement(req.protect, spec.prior_set, spec.n)
    from mechdesign.spec.models import spec_from_dict

    data = spec.to_dict()
    data["epsilon"] = resolution.epsilon_text
    return spec_from_dict(data), resolution
