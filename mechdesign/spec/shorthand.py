"""The prior-set shorthand of the command line, accepted everywhere a prior set is.

``"simplex"``, ``"min_mass:0.05"`` and ``"point:0.2,0.3,0.5"`` expand to the mappings
``{kind: simplex}``, ``{kind: min_mass, c: "0.05"}`` and ``{kind: point, prior: ["0.2", "0.3", "0.5"]}``
(numbers kept as text, so they mean exactly what is written). Anything else passes through unchanged,
to be validated (and reported) by the prior-set models.
"""

from __future__ import annotations

from typing import Any

__all__ = ["expand_prior_set_shorthand"]


def expand_prior_set_shorthand(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    kind, sep, rest = value.strip().partition(":")
    kind = kind.strip()
    values = [v.strip() for v in rest.split(",") if v.strip()]
    if not sep:
        return {"kind": kind}
    if kind == "min_mass" and len(values) == 1:
        return {"kind": kind, "c": values[0]}
    if kind == "point":
        return {"kind": kind, "prior": values}
    return value
