"""JSON text of large results (spec/json_values.py): kernel rows on one line, and json_safe's row fast path.

Expected values come from the standard library: ``json.loads`` of our text must equal ``json.loads`` of
``json.dumps`` of the same data, and json_safe must report exactly the paths a plain walk would.
"""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from mechdesign.spec.json_values import dumps_indented, json_safe

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=30,
)


@given(values)
def test_indented_text_parses_to_the_same_data(v):
    assert json.loads(dumps_indented(v)) == json.loads(json.dumps(v))


def test_rows_of_scalars_are_one_line_and_nesting_is_indented():
    text = dumps_indented({"kernel": [[0.5, 0.5], [1, 0]], "status": "optimal"})
    assert text.splitlines() == [
        "{",
        '  "kernel": [',
        "    [0.5, 0.5],",
        "    [1, 0]",
        "  ],",
        '  "status": "optimal"',
        "}",
    ]


def paths_by_plain_walk(v, path=""):
    """Every +inf / "inf" leaf's path, written independently of json_safe."""
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in paths_by_plain_walk(x, f"{path}.{k}" if path else str(k))]
    if isinstance(v, list):
        return [p for i, x in enumerate(v) for p in paths_by_plain_walk(x, f"{path}[{i}]")]
    if (isinstance(v, float) and v == math.inf) or v == "inf":
        return [path]
    return []


def test_rows_with_an_infinity_still_name_it():
    data = {
        "kernel": [[0.5, 0.5], [0.25, math.inf]],
        "kernel_exact": [["1/2", "1/2"], ["inf", "3/4"]],
        "bounds": [1, 2, 3],
        "mixed": [1, "inf", 2.0],
    }
    out = json_safe(data)
    assert sorted(out["infinite"]) == sorted(paths_by_plain_walk(data))
    assert out["kernel"][1] == [0.25, None] and out["kernel_exact"][1] == [None, "3/4"]
    assert out["bounds"] == [1, 2, 3] and out["mixed"] == [1, None, 2.0]
