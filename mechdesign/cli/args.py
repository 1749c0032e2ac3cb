"""Parsing of command-line options shared by several sub-commands."""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from mechdesign.spec.errors import InputError, SpecError
from mechdesign.spec.input_rules import read_yaml_input
from mechdesign.spec.models import Epsilon, PriorSet, _to_epsilon

__all__ = ["parse_prior_set", "parse_epsilon", "parse_report_count"]

_PRIOR_SET = TypeAdapter(PriorSet)


def parse_prior_set(text: str, n: int | None = None):
    """A prior set from ``--prior-set``: ``simplex``, ``min_mass:0.05`` (c), ``point:0.2,0.3,0.5``,
    or a YAML/JSON mapping such as ``'{kind: box, lower: [...], upper: [...]}'``.

    With ``n`` given, the sizes are checked against N (and c ≤ 1/N).
    """
    text = text.strip()
    if text.startswith("{"):
        data = read_yaml_input(text, "--prior-set")  # decimals keep their text (exact), plain types only
    elif ":" in text:
        kind, _, rest = text.partition(":")
        kind = kind.strip()
        values = [v for v in rest.replace(" ", "").split(",") if v]
        if kind == "min_mass":
            if len(values) != 1:
                raise InputError("--prior-set: min_mass takes one value c, as in min_mass:0.05")
            data = {"kind": kind, "c": values[0]}
        elif kind == "point":
            data = {"kind": kind, "prior": values}
        else:
            raise InputError(f"--prior-set: use the mapping form for kind {kind!r}, e.g. '{{kind: {kind}, ...}}'")
    else:
        data = {"kind": text}
    try:
        ps = _PRIOR_SET.validate_python(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(
            str(p) for p in err["loc"] if p not in {"min_mass", "simplex", "point", "hull", "box", "l1_ball"}
        )
        raise InputError(f"--prior-set{'.' + loc if loc else ''}: {err['msg'].removeprefix('Value error, ')}") from None
    if n is not None:
        _check_size(ps, n)
    return ps


def _check_size(ps, n: int) -> None:
    from mechdesign.spec.models import spec_from_dict

    try:
        spec_from_dict(
            {"alphabet": n, "epsilon": 0, "prior_set": ps.model_dump(mode="json"), "objective": {"kind": "dobrushin"}}
        )
    except SpecError as exc:
        raise InputError(
            "--prior-set: " + "; ".join(f"{f.removeprefix('prior_set.')}: {r}" for f, r in exc.pairs)
        ) from None


def parse_epsilon(text: str) -> Epsilon:
    """ε from ``--epsilon`` (a number or an expression such as log(3))."""
    try:
        return _to_epsilon(text)
    except ValueError as exc:
        raise InputError(f"--epsilon: {exc}") from None


def parse_report_count(text: str) -> int:
    """The number of reports n from ``--n`` (the inversion accuracy of ``solve`` and ``analyze``)."""
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"--n: must be an integer >= 1 (number of reports), found {text!r}") from None
    if value < 1:
        raise InputError(f"--n: must be an integer >= 1 (number of reports), found {text}")
    return value
