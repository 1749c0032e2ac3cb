"""Reading a spec as exactly what it says, within stated size limits.

**Numbers mean their text.** PyYAML turns an unquoted ``2.30258509299404568401799145468436420760``
into the nearest double, which can lie *above* the decimal written (here above ln 10). The loader
here keeps the scalar's text: a YAML float becomes a :class:`DecimalText`, a ``float`` subclass (so
code that wants a float still gets one) whose ``text`` is the characters in the file, and the
spec's exact fields (ε, c, prior masses, box bounds, radii) are parsed from that text to exact
rationals. Numbers handed over from Python as ``float`` (or NumPy floating scalars) mean the
shortest decimal that reads back as the same double (``repr``): ``0.05`` is 1/20, as a user typing
it means, not the binary neighbour 0.05000000000000000277…; pass a string or a ``Fraction`` to say
anything else exactly.

**Plain YAML only.** Mappings, sequences, strings, integers, decimals, booleans and null.
Explicit tags (``!!set``, ``!!python/…``, ``!!binary``, ``!!float``), timestamps, anchors and
aliases are refused, and so is a key that appears twice in one mapping (named, with its line).

**Limits, checked before any heavy work** (each message states the limit):

* the spec file is at most :data:`MAX_SPEC_BYTES` (8 MiB), checked with ``stat`` before the file is
  read, so a 50 MB file of comments is refused at once. The documented scale N = M = 3000 uses a
  named loss (hamming, absolute, squared) and needs a few hundred bytes; 8 MiB still holds an
  explicit 1000 × 1000 loss matrix with 6 characters per entry (``0.125,``). YAML parsing costs
  about 1.5 s and 55 MB per MiB of numbers here (PyYAML with libyaml: a 16 MB matrix took 25 s and
  0.9 GB), so 8 MiB bounds a spec's parse at about 12 s; a larger matrix is data, to be passed from
  Python as an array (``design({... "loss": np.array(...)})``), where no YAML is parsed.
* nesting depth at most :data:`MAX_DEPTH` (32): a spec is 4 levels deep (spec → objective →
  priors → list), so 32 is generous; it is counted on the parser's event stream, before a node
  tree is built, so a 5,000-deep document gives a message, never a RecursionError.
* N ≤ :data:`MAX_N`, M ≤ :data:`MAX_M`, N·M ≤ :data:`MAX_NM` (see ``Spec``): 10^7 admits the
  project's scale target N = M = 3000 (9·10^6 kernel entries) with a margin, and bounds
  the LP (one variable per kernel entry) at about 10^7 columns, a few GB at most.
"""

from __future__ import annotations

import math
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from mechdesign.spec.errors import InputError

__all__ = [
    "DecimalText",
    "MAX_SPEC_BYTES",
    "MAX_DEPTH",
    "MAX_N",
    "MAX_M",
    "MAX_NM",
    "SpecInputError",
    "load_yaml_text",
    "read_yaml_input",
    "read_yaml_file",
    "read_spec_file",
    "plain_python",
    "exact_number_text",
    "shown_number",
]

MAX_SPEC_BYTES = 8 * 1024 * 1024
"""Largest spec file accepted (bytes)."""
MAX_DEPTH = 32
"""Deepest nesting of mappings and sequences accepted in a spec."""
MAX_N = 10_000
"""Largest alphabet N (the documented target is N = 3000)."""
MAX_M = 10_000
"""Largest output size M."""
MAX_NM = 10_000_000
"""Largest N·M (kernel entries, one LP variable each); admits N = M = 3000."""


class SpecInputError(ValueError):
    """The spec text or data breaks a rule of this module; ``field`` names where."""

    def __init__(self, field: str, rule: str):
        self.field, self.rule = field, rule
        super().__init__(f"{field}: {rule}")


class DecimalText(float):
    """A decimal read from YAML: a float whose ``text`` is exactly what the file says."""

    text: str

    def __new__(cls, text: str, value: float):
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __reduce__(self):  # copy, deepcopy and pickle keep the text (``--set`` copies the spec it edits)
        return (DecimalText, (self.text, float(self)))

    def exact(self) -> Fraction:
        """The exact rational the text denotes (raises ValueError for .inf / .nan)."""
        return _decimal_fraction(self.text)


_DECIMAL = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _decimal_fraction(text: str) -> Fraction:
    """The exact value of a YAML 1.1 float scalar (decimal or sexagesimal, underscores allowed)."""
    t = text.replace("_", "").strip()
    if ":" in t:  # YAML 1.1 base-60 float, e.g. 190:20:30.15
        sign = -1 if t.startswith("-") else 1
        parts = t.lstrip("+-").split(":")
        value = Fraction(0)
        for part in parts:
            value = value * 60 + Fraction(part)
        return sign * value
    if not _DECIMAL.match(t):
        raise ValueError(f"not a finite decimal: {text!r}")
    return Fraction(t)


def exact_number_text(value: Any) -> str | None:
    """The decimal text a number stands for (see the module docstring), or None if it is not a number.

    DecimalText: its own text; float and NumPy floating scalars: ``repr`` of the double; integers:
    their digits.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, DecimalText):
        return value.text
    if isinstance(value, float):  # includes np.float64, whose repr is 'np.float64(…)' under NumPy 2
        return float.__repr__(float(value))
    if isinstance(value, int):
        return str(int(value))
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return None
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, np.floating):  # float32, longdouble: the shortest decimal at their precision
        return str(value)
    return None


def shown_number(value: Fraction | int) -> str:
    """An exact rational as a message shows it, never a double's rounding of it: a message that says
    "must be <= 1/4, found 0.25" for c = 0.2500000001, or overflows on c = 1e400, misleads.

    The decimal of at most 17 significant digits that *is* the value (0.2500000001, 1e+400, 123456.789), else
    ``p/q`` when that is at most 25 characters (1/3), else ``about`` and 17 significant digits."""
    from decimal import Decimal, localcontext

    q = Fraction(value)
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 17, 10**9, -(10**9)
        d = Decimal(q.numerator) / Decimal(q.denominator)
    if Fraction(d) == q:
        d = d.normalize()
        text = format(d, "g")
        return str(int(d)) if "e+" in text and d.adjusted() < 16 else text
    text = f"{q.numerator}/{q.denominator}"
    return text if len(text) <= 25 else f"about {format(d.normalize(), 'g')}"


# --------------------------------------------------------------------------- Python data
_PLAIN_SCALARS = frozenset({int, float, str, bool, type(None), DecimalText, Fraction})


def plain_python(value: Any, where: str = "spec", depth: int = 0) -> Any:
    """Turn NumPy scalars and arrays (and tuples) into plain ints, floats and lists, checking depth.

    ``epsilon=np.float64(1.0)``, priors as ``np.array`` and ``np.int64`` sizes then validate like
    the Python values they hold.
    """
    if depth > MAX_DEPTH:
        raise SpecInputError(where, f"nested deeper than {MAX_DEPTH} levels (limit {MAX_DEPTH})")
    if isinstance(value, dict):
        return {k: plain_python(v, f"{where}.{k}" if where != "spec" else str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(type(v) in _PLAIN_SCALARS for v in value):  # fast path: a row of plain numbers
            return list(value)
        return [plain_python(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return value
    if isinstance(value, np.ndarray):
        if value.ndim > MAX_DEPTH:
            raise SpecInputError(where, f"nested deeper than {MAX_DEPTH} levels (limit {MAX_DEPTH})")
        if value.dtype.kind in "UO" and value.ndim:  # labels (np.array(["a", "b"])) or mixed objects: as a list
            return plain_python(value.tolist(), where, depth)
        if value.dtype.kind not in "biuf":
            raise SpecInputError(where, f"array of dtype {value.dtype}: expected real numbers or text")
        return value.tolist() if value.ndim else plain_python(value.item(), where, depth)  # Python numbers
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating) and not isinstance(value, float):
        # float32, longdouble: their shortest decimal at their own precision (str), as typed
        return DecimalText(str(value), float(value))
    return value


# --------------------------------------------------------------------------- YAML
_PLAIN_TAGS = {"tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "str", "seq", "map")}


class _ExactLoader(yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader):
    """SafeLoader that keeps float text, refuses duplicate keys and non-plain types."""


def _construct_float(loader, node):
    text = node.value
    try:
        value = float(text)  # a plain decimal (fast path); .inf, .nan and base 60 go through PyYAML
    except ValueError:
        value = yaml.SafeLoader.construct_yaml_float(loader, node)
    return DecimalText(text, value) if math.isfinite(value) else value


def _construct_mapping(loader, node):
    seen: dict = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise SpecInputError("spec", f"a mapping key must be a plain scalar (line {key_node.start_mark.line + 1})")
        key = loader.construct_object(key_node)
        if key in seen:
            raise SpecInputError(
                str(key),
                f"duplicate key {key!r} at line {key_node.start_mark.line + 1} "
                f"(first at line {seen[key] + 1}); each key may appear once",
            )
        seen[key] = key_node.start_mark.line
    loader.flatten_mapping(node)
    data: dict = {}
    yield data
    data.update(loader.construct_mapping(node))


def _refuse(loader, node):
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    raise SpecInputError(
        "spec",
        f"YAML type {tag} at line {node.start_mark.line + 1} is not accepted "
        "(only mappings, lists, strings, numbers, booleans and null; quote the value)",
    )


_ExactLoader.yaml_constructors = {
    "tag:yaml.org,2002:null": yaml.SafeLoader.construct_yaml_null,
    "tag:yaml.org,2002:bool": yaml.SafeLoader.construct_yaml_bool,
    "tag:yaml.org,2002:int": yaml.SafeLoader.construct_yaml_int,
    "tag:yaml.org,2002:float": _construct_float,
    "tag:yaml.org,2002:str": yaml.SafeLoader.construct_yaml_str,
    "tag:yaml.org,2002:seq": yaml.SafeLoader.construct_yaml_seq,
    "tag:yaml.org,2002:map": _construct_mapping,
    None: _refuse,
}
_ExactLoader.yaml_multi_constructors = {}


def _check_events(text: str) -> None:
    """One pass over the parser's events: depth, explicit tags, anchors and aliases (no node tree yet)."""
    try:
        _check_parsed_events(text)
    except yaml.YAMLError as exc:
        # libyaml 0.2.6 (PyYAML ≥ 6.0.4) stops at 1000 nested levels in its scanner, which reads a flow
        # collection's openings ahead of the events counted below: the same rule, said the same way
        if "maximum nesting depth" not in str(exc):
            raise
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else "?"
        raise SpecInputError(
            "spec", f"nested deeper than {MAX_DEPTH} levels at line {line} (limit {MAX_DEPTH})"
        ) from None


def _check_parsed_events(text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_ExactLoader):
        line = event.start_mark.line + 1 if event.start_mark else "?"
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise SpecInputError("spec", f"YAML anchors and aliases (&, *) are not accepted (line {line})")
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise SpecInputError(
                    "spec", f"nested deeper than {MAX_DEPTH} levels at line {line} (limit {MAX_DEPTH})"
                )
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in ("!",) and not _implicit(event):
            if tag not in _PLAIN_TAGS or tag.endswith(("float", "int", "bool", "null")):
                shown = tag.replace("tag:yaml.org,2002:", "!!")
                raise SpecInputError(
                    "spec",
                    f"explicit YAML tag {shown} at line {line} is not accepted "
                    "(only plain mappings, lists, strings, numbers, booleans and null)",
                )


def _implicit(event) -> bool:
    implicit = getattr(event, "implicit", True)
    if isinstance(implicit, tuple):  # scalars: (plain, quoted)
        return any(implicit)
    return bool(implicit)


def load_yaml_text(text: str) -> Any:
    """Parse spec YAML under the rules above; raise :class:`SpecInputError` or ``yaml.YAMLError``."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SPEC_BYTES:
        raise SpecInputError(
            "spec",
            f"YAML text is {len(text.encode('utf-8', 'surrogatepass'))} bytes; "
            f"the limit is {MAX_SPEC_BYTES} bytes (8 MiB)",
        )
    _check_events(text)
    return yaml.load(text, Loader=_ExactLoader)  # noqa: S506 - _ExactLoader is a SafeLoader


def read_spec_file(path: Path) -> str:
    """The text of a spec file, refused by size (``stat``) before it is read."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise SpecInputError("spec", f"file not found: {path}") from None
    except OSError as exc:
        raise SpecInputError("spec", f"cannot read {path}: {exc}") from None
    if size > MAX_SPEC_BYTES:
        raise SpecInputError("spec", f"file {path} is {size} bytes; the limit is {MAX_SPEC_BYTES} bytes (8 MiB)")
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecInputError("spec", f"cannot read {path}: {exc}") from None


def read_yaml_input(text: str, where: str) -> Any:
    """Every YAML text the program reads besides a spec file (a sweep file, ``--set`` and ``--vary`` values,
    ``--prior-set`` mappings, a sweep's base given as text) goes through :func:`load_yaml_text`, with the same
    rules and limits as a spec file: no anchors or aliases (a 329-character alias bomb would otherwise expand
    to gigabytes), no explicit tags, no duplicate keys, depth at most :data:`MAX_DEPTH`, at most
    :data:`MAX_SPEC_BYTES`. A breach is an :class:`~mechdesign.spec.errors.InputError` whose one line starts
    with ``where`` (the option or file) and states the rule."""
    try:
        return load_yaml_text(text)
    except SpecInputError as exc:
        rule = exc.rule if exc.field == "spec" else f"{exc.field}: {exc.rule}"
        raise InputError(f"{where}: {rule}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{where}: malformed YAML{at}: {problem}") from None


def read_yaml_file(path: Path, where: str) -> Any:
    """:func:`read_yaml_input` of a file's text, the file refused by size (``stat``) before it is read;
    ``where`` names the file in every message (``"SPEC sweep.yaml"``)."""
    try:
        text = read_spec_file(Path(path))
    except SpecInputError as exc:
        raise InputError(f"{where}: {exc.rule}") from None
    return read_yaml_input(text, where)
