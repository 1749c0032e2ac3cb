"""A prior set written back in the spec's own notation: ``simplex``,
``min_mass:1/20``, ``point:1/5,3/10,1/2``, else the YAML flow mapping ``{kind: box, lower: [...], ...}``."""

from __future__ import annotations

from fractions import Fraction

from mechdesign.spec.input_rules import shown_number

__all__ = ["prior_set_notation", "output_labels", "OUTPUT_PREFIX"]


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


OUTPUT_PREFIX = "y"


def output_labels(input_labels, m: int, estimates_inputs: bool = False) -> tuple[str, ...]:
    """The labels of a mechanism's M outputs, one convention everywhere (``privatize``, ``estimate``,
    reports, notebook displays).

    * An output that estimates the secret (an expected-loss design with M = N: output y is the guess
      "x = y") carries the input label it guesses, as randomized response releases a value of the alphabet.
    * Any other output is ``y0``, ``y1``, …, ``y{M−1}``: a name, not a value of the alphabet and not an
      input's index. Should an input label already be of that form, the prefix grows (``y_0``, ``y__0``, …)
      until no output label is also an input label.
    """
    inputs = [str(v) for v in input_labels]
    if estimates_inputs and m == len(inputs):
        return tuple(inputs)
    taken = set(inputs)
    prefix = OUTPUT_PREFIX
    while True:
        labels = tuple(f"{prefix}{y}" for y in range(m))
        if not taken.intersection(labels):
            return labels
        prefix += "_"
