"""A prior set written back in the spec's own notation: ``simplex``,
``min_mass:1/20``, ``point:1/5,3/10,1/2``, else the YAML flow mapping ``{kind: box, lower: [...], ...}``."""

from __future__ import annotations

from fractions import Fraction

from mechdesign.spec.input_rules import shown_number

__all__ = ["prior_set_notation"]


def _number(v) -> str:
    """The serialised number as written back; a long one (a 401-digit upper bound 1e400) in short form."""
    text = str(v)
    return text if len(text) <= 25 else shown_number(Fraction(text))


def prior_set_notation(prior_set) -> str:
    data = prior_set.model_dump(mode="json")
    kind = data.pop("kind")
    if kind == "simplex" and not data:
        return "simplex"
    if kind == "min_mass" and set(data) == {"c"}:
        return f"min_mass:{_number(data['c'])}"
    if kind == "point" and set(data) == {"prior"}:
        return "point:" + ",".join(_number(p) for p in data["prior"])

    def flow(v):
        if isinstance(v, list):
            return "[" + ", ".join(flow(x) for x in v) + "]"
        return _number(v) if isinstance(v, (int, float)) or (isinstance(v, str) and v[:1].isdigit()) else str(v)

    return "{kind: " + kind + "".join(f", {k}: {flow(v)}" for k, v in data.items()) + "}"
