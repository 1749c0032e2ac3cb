"""ε and the prior set of a structured mechanism, read as the specs read them."""

from __future__ import annotations

from fractions import Fraction

from mechdesign.spec.errors import InputError

__all__ = ["epsilon_and_bound", "min_mass_of"]


def epsilon_and_bound(epsilon, cap: Fraction):
    """(Epsilon, E) with E = min(rational lower bound of e^ε, cap) (:func:`mechdesign.spec.expr.exp_lower_bound`)."""
    from pydantic import TypeAdapter, ValidationError

    from mechdesign.spec.models import EpsilonField

    try:
        eps = TypeAdapter(EpsilonField).validate_python(epsilon)
    except ValidationError as exc:
        raise InputError(f"epsilon: {exc.errors()[0]['msg']}") from None
    return eps, eps.exp_lower_bound(cap=cap)


def min_mass_of(prior_set, n: int) -> Fraction:
    """c with 𝒫 = Q_X(c): None or the simplex → 0 (ε-LDP); a number c or a prior set (min_mass, simplex,
    a uniform point prior) with an equivalent c. Other prior sets are refused: the structured families are
    permutation invariant and their certificate is Lemma 4's closed form for Q_X(c)."""
    from pydantic import TypeAdapter, ValidationError

    from mechdesign.privacy.registry import rules
    from mechdesign.spec.models import PriorSet

    if prior_set is None:
        return Fraction(0)
    if isinstance(prior_set, (int, float, Fraction, str)) and not isinstance(prior_set, bool):
        prior_set = {"kind": "min_mass", "c": prior_set}
    try:
        model = TypeAdapter(PriorSet).validate_python(prior_set)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"prior_set: {'.'.join(str(v) for v in err['loc'])}: {err['msg']}") from None
    try:
        c = rules(model, n).equivalent_c()
    except Exception as exc:  # a point prior of the wrong length, ...
        raise InputError(f"prior_set: {exc}") from None
    if c is None:
        raise InputError(
            "prior_set: structured mechanisms take Q_X(c) (min_mass, simplex or a uniform point prior), "
            f"found {model.kind}"
        )
    c = Fraction(c)
    if c > Fraction(1, n):
        raise InputError(f"prior_set.c: must be <= 1/N = 1/{n}, found {c}")
    return c
