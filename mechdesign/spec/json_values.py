"""JSON without the strings "inf" / "-inf" (issue 12, item 10).

JSON has no infinity. Every command's JSON writes an infinite number as ``null`` and lists where it
did so in one explicit field, ``"infinite": ["path.to.field", ...]`` (+∞; −∞ and NaN, which do not
occur in practice, go to ``"minus_infinite"`` and ``"not_a_number"`` when present), so a reader can
tell "infinite" from "not computed" (also ``null``) without parsing strings.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_safe"]


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
