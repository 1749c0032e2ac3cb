"""A prior set written back in the spec's own notation (issue 12, item 10): ``simplex``,
``min_mass:1/20``, ``point:1/5,3/10,1/2``, else the YAML flow mapping ``{kind: box, lower: [...], ...}``."""

from __future__ import annotations

__all__ = ["prior_set_notation"]


def prior_set_notation(prior_set) -> str:
    data = prior_set.model_dump(mode="json")
    kind = data.pop("kind")
    if kind == "simplex" and not data:
        return "simplex"
    if kind == "min_mass" and set(data) == {"c"}:
        return f"min_mass:{data['c']}"
    if kind == "point" and set(data) == {"prior"}:
        return "point:" + ",".join(str(p) for p in data["prior"])

    def flow(v):
        if isinstance(v, list):
            return "[" + ", ".join(flow(x) for x in v) + "]"
        return str(v)

    return "{kind: " + kind + "".join(f", {k}: {flow(v)}" for k, v in data.items()) + "}"
