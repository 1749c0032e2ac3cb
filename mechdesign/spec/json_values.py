"""JSON without the strings "inf" / "-inf".

JSON has no infinity. Every command's JSON writes an infinite number as ``null`` and lists where it
did so in one explicit field, ``"infinite": ["path.to.field", ...]`` (+∞; −∞ and NaN, which do not
occur in practice, go to ``"minus_infinite"`` and ``"not_a_number"`` when present), so a reader can
tell "infinite" from "not computed" (also ``null``) without parsing strings.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["json_safe", "dumps_indented"]

_INFINITE_TEXT = ("inf", "-inf")


def _plain_row(v: list | tuple) -> bool:
    """True for a list of finite numbers, or of strings none of which is "inf"/"-inf" (a kernel row): nothing in
    it needs a path, so the walk below copies it whole (an N = M = 3000 design's JSON: 18M entries, whose path
    strings alone took 39 s)."""
    if all(type(x) is float or type(x) is int for x in v):
        return all(map(math.isfinite, v))
    if all(type(x) is str for x in v):
        return not any(t in v for t in _INFINITE_TEXT)
    return False


def dumps_indented(data: Any, indent: int = 2) -> str:
    """``json.dumps(data, indent=indent)``, except that a list of scalars is written on one line (a kernel row:
    an N = M = 3000 kernel in Python's indenting encoder took 47 s and 625 MB, one number per line)."""

    def scalar(x):
        return x is None or isinstance(x, (str, int, float, bool))

    def fmt(v, depth: int) -> str:
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = [f"{inner}{json.dumps(str(k))}: {fmt(x, depth + 1)}" for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, (list, tuple)):
            if all(scalar(x) for x in v):
                return json.dumps(list(v))
            return "[\n" + ",\n".join(inner + fmt(x, depth + 1) for x in v) + "\n" + pad + "]"
        return json.dumps(v)

    return fmt(data, 0)


def json_safe(data: dict, skip: tuple[str, ...] = ("labels",)) -> dict:
    """A copy of ``data`` with infinite floats and "inf"/"-inf" strings replaced by null, and an
    ``"infinite"`` field listing the paths (``a.b[2]``) of the +∞ values replaced.
    Top-level keys in ``skip`` (user labels, which may well be the text "inf") are left alone."""
    found: dict[str, str] = {}

    def walk(v: Any, path: str):
        if isinstance(v, dict):
            return {
                k: x if not path and k in skip else walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()
            }
        if isinstance(v, (list, tuple)):
            if _plain_row(v):
                return list(v)
            return [walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, float) and not math.isfinite(v):
            found[path] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            return None
        if isinstance(v, str) and v in ("inf", "-inf"):
            found[path] = v
            return None
        return v

    out = walk(data, "")
    out["infinite"] = [p for p, v in found.items() if v == "inf"]
    for name, tag in (("minus_infinite", "-inf"), ("not_a_number", "nan")):
        if any(v == tag for v in found.values()):
            out[name] = [p for p, v in found.items() if v == tag]
    return out
