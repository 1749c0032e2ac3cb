"""Axes of a sweep: parsing ``--vary PATH=VALUES`` and expanding a base spec into points.

An axis is a dotted path into the spec (``epsilon``, ``prior_set.c``, ``objective.prior``,
``solver.time_limit``; an integer segment indexes a list, as in ``objective.priors.0``) and a
list of values. Values are written as

* ``a:b:n``      n values from a to b, evenly spaced (both ends included);
* ``log:a:b:n``  n values from a to b, evenly spaced in log (a, b > 0);
* ``v1,v2,...``  a list; each item is read as YAML (numbers, ``log(2)``, ``uniform``, ...);
* ``[...]``      a YAML list, for values that are mappings or lists
  (``prior_set=[{kind: simplex}, {kind: min_mass, c: 0.01}]``).

Range values are rounded to 12 significant digits (so ``0:1:11`` gives 0.3, not
0.30000000000000004), and are integers when both ends are integers and every value is whole.
Axes combine as a Cartesian product, except the groups named in ``zip``: the axes of a
group have equal lengths and advance together (one product factor per group).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import yaml

from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import read_yaml_input

__all__ = ["Axis", "Point", "parse_values", "parse_vary", "expand_points", "apply_path"]

_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|\d+))*$")


@dataclass(frozen=True)
class Axis:
    path: str
    """Dotted spec path, e.g. ``prior_set.c``."""
    values: tuple
    """The values, in order."""


@dataclass(frozen=True)
class Point:
    index: int
    """Position in the sweep (0-based, product order: the last axis varies fastest)."""
    values: dict
    """Axis path → value at this point."""
    spec: dict
    """The base spec with the values applied (not yet validated)."""

    def label(self) -> str:
        return f"point {self.index} (" + ", ".join(f"{k}={_short(v)}" for k, v in self.values.items()) + ")"


def _short(v: Any) -> str:
    if isinstance(v, (dict, list)):
        text = yaml.safe_dump(_dumpable(v), default_flow_style=True, width=10_000).strip()
    else:
        text = str(v)
    return text.removesuffix("\n...").strip()


def _dumpable(v: Any) -> Any:
    """``v`` with each decimal read from YAML (a ``float`` subclass that keeps its text) as a plain float."""
    if isinstance(v, dict):
        return {k: _dumpable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_dumpable(x) for x in v]
    return float(v) if isinstance(v, float) else v


MAX_POINTS = 100_000
"""Most points a sweep may have: each is a spec held in memory and a row of the results (a range of 10^9 values
would otherwise be built before anything runs)."""


def _number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{what}: expected a number, found {text!r}") from None
    if not math.isfinite(v):
        raise InputError(f"{what}: expected a finite number, found {text!r}")
    return v


def _count(text: str, what: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise InputError(f"{what}: the number of values must be an integer >= 1, found {text!r}") from None
    if n < 1:
        raise InputError(f"{what}: the number of values must be an integer >= 1, found {n}")
    if n > MAX_POINTS:
        raise InputError(f"{what}: the number of values must be at most {MAX_POINTS} (a sweep's points), found {n}")
    return n


def _tidy(values: list[float], whole_ends: bool) -> list:
    out = [float(f"{v:.12g}") for v in values]
    if whole_ends and all(v == int(v) for v in out):
        return [int(v) for v in out]
    return out


def parse_values(text: str, what: str = "--vary") -> list:
    """The list of values an axis text stands for (see the module docstring)."""
    text = text.strip()
    if not text:
        raise InputError(f"{what}: no values given")
    if text.startswith("["):
        values = read_yaml_input(text, what)  # the spec file's YAML rules and limits (no aliases)
        if not isinstance(values, list) or not values:
            raise InputError(f"{what}: expected a non-empty YAML list, found {text!r}")
        return values
    parts = text.split(":")
    if parts[0] == "log":
        if len(parts) != 4:
            raise InputError(f"{what}: a log range is log:a:b:n, found {text!r}")
        a, b = _number(parts[1], what), _number(parts[2], what)
        n = _count(parts[3], what)
        if a <= 0 or b <= 0:
            raise InputError(f"{what}: a log range needs a > 0 and b > 0, found {text!r}")
        if n == 1:
            return _tidy([a], False)
        step = (math.log(b) - math.log(a)) / (n - 1)
        return _tidy([math.exp(math.log(a) + i * step) for i in range(n - 1)] + [b], False)
    if len(parts) == 3 and "," not in text:
        a, b = _number(parts[0], what), _number(parts[1], what)
        n = _count(parts[2], what)
        whole = (
            re.fullmatch(r"-?\d+", parts[0].strip()) is not None
            and re.fullmatch(r"-?\d+", parts[1].strip()) is not None
        )
        if n == 1:
            return _tidy([a], whole)
        return _tidy([a + (b - a) * i / (n - 1) for i in range(n - 1)] + [b], whole)
    if len(parts) > 1 and "," not in text and "(" not in text:
        raise InputError(f"{what}: a range is a:b:n or log:a:b:n, found {text!r}")
    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise InputError(f"{what}: empty item in the list {text!r}")
        values.append(_scalar(item, what))
    return values


def _scalar(item: str, what: str) -> Any:
    """A list item: an integer, a float (``1e-3`` too, which YAML 1.1 reads as text), or YAML."""
    if re.fullmatch(r"[-+]?\d+", item):
        return int(item)
    try:
        v = float(item)
        if math.isfinite(v):
            return v
    except ValueError:
        pass
    return read_yaml_input(item, what)


def parse_vary(text: str) -> Axis:
    """``PATH=VALUES`` from ``--vary`` as an :class:`Axis`."""
    path, sep, values = text.partition("=")
    path = path.strip()
    if not sep:
        raise InputError(f"--vary: expected PATH=VALUES such as epsilon=0.05:5:40, found {text!r}")
    check_path(path, "--vary")
    return Axis(path, tuple(parse_values(values, f"--vary {path}")))


def check_path(path: str, what: str) -> None:
    if not _PATH.match(path):
        raise InputError(f"{what}: the path must be dotted names such as prior_set.c, found {path!r}")


def apply_path(spec: dict, path: str, value: Any) -> None:
    """Set ``spec[a][b]... = value`` for ``path = 'a.b...'`` in place (missing mappings are created)."""
    keys = path.split(".")
    node: Any = spec
    for i, key in enumerate(keys[:-1]):
        nxt = keys[i + 1]
        if isinstance(node, list):
            node = node[_index(node, key, path)]
            continue
        if not isinstance(node, dict):
            raise InputError(f"{path}: {'.'.join(keys[:i]) or 'spec'} is not a mapping")
        if key not in node or node[key] is None:
            node[key] = [] if nxt.isdigit() else {}
        node = node[key]
    last = keys[-1]
    if isinstance(node, list):
        node[_index(node, last, path)] = copy.deepcopy(value)
    elif isinstance(node, dict):
        node[last] = copy.deepcopy(value)
    else:
        raise InputError(f"{path}: {'.'.join(keys[:-1])} is not a mapping (found {node!r})")


def _index(node: list, key: str, path: str) -> int:
    if not key.isdigit() or int(key) >= len(node):
        raise InputError(f"{path}: index {key} is outside a list of {len(node)} items")
    return int(key)


def make_axes(axes: Mapping[str, Any] | Iterable[Axis]) -> list[Axis]:
    """Axes from a mapping path → list of values (or a range text such as ``'log:1e-3:10:30'``)."""
    if isinstance(axes, Mapping):
        out = []
        for path, values in axes.items():
            check_path(str(path), "axes")
            if isinstance(values, str):
                values = parse_values(values, f"axes.{path}")
            else:
                try:
                    values = list(values)
                except TypeError:
                    values = [values]
                values = [v.item() if hasattr(v, "item") and not isinstance(v, (list, dict)) else v for v in values]
            if not values:
                raise InputError(f"axes.{path}: no values given")
            out.append(Axis(str(path), tuple(values)))
        return out
    return list(axes)


def _zip_group_of(axes: Sequence[Axis], zip_groups: Sequence[Sequence[str]]) -> dict[str, int]:
    """The zip group (index into ``zip_groups``) of each zipped axis; InputError when an axis is given twice,
    a group has fewer than two axes, names an unknown axis, shares an axis with another group, or zips
    axes of different lengths."""
    paths = [a.path for a in axes]
    if len(set(paths)) != len(paths):
        dup = next(p for p in paths if paths.count(p) > 1)
        raise InputError(f"--vary: the axis {dup} is given twice")
    by_path = {a.path: a for a in axes}
    grouped: dict[str, int] = {}
    for g, group in enumerate(zip_groups):
        if len(group) < 2:
            raise InputError(f"--zip: a group needs at least two axes, found {list(group)}")
        for p in group:
            if p not in by_path:
                raise InputError(f"--zip: {p} is not an axis (axes: {', '.join(paths) or 'none'})")
            if p in grouped:
                raise InputError(f"--zip: the axis {p} is in two groups")
            grouped[p] = g
        lengths = {p: len(by_path[p].values) for p in group}
        if len(set(lengths.values())) != 1:
            raise InputError(
                "--zip: zipped axes need equal lengths, found " + ", ".join(f"{p}: {n}" for p, n in lengths.items())
            )
    return grouped


def _sweep_factors(
    axes: Sequence[Axis], zip_groups: Sequence[Sequence[str]], grouped: dict[str, int]
) -> list[list[dict]]:
    """The factors of the product, each a list of {path: value} parts: one per axis, or one per zip group
    (its axes advance together), in the order the axes were given; a group sits where its first axis is.
    InputError when the product has more than MAX_POINTS points."""
    by_path = {a.path: a for a in axes}
    factors: list[list[dict]] = []
    seen_groups: set[int] = set()
    for a in axes:
        if a.path in grouped:
            g = grouped[a.path]
            if g in seen_groups:
                continue
            seen_groups.add(g)
            group = zip_groups[g]
            factors.append([{p: by_path[p].values[i] for p in group} for i in range(len(a.values))])
        else:
            factors.append([{a.path: v} for v in a.values])
    total = math.prod(len(f) for f in factors)
    if total > MAX_POINTS:
        raise InputError(
            f"--vary: a sweep has at most {MAX_POINTS} points, found {total} ("
            + " x ".join(str(len(f)) for f in factors)
            + ")"
        )
    return factors


def expand_points(base: dict, axes: Sequence[Axis], zip_groups: Sequence[Sequence[str]] = ()) -> list[Point]:
    """Every point of the sweep: the product over factors, a factor being one axis or one zip group."""
    paths = [a.path for a in axes]
    grouped = _zip_group_of(axes, zip_groups)
    factors = _sweep_factors(axes, zip_groups, grouped)
    points = []
    for index, combo in enumerate(itertools.product(*factors)):
        values: dict = {}
        for part in combo:
            values.update(part)
        values = {p: values[p] for p in paths}
        spec = copy.deepcopy(base)
        point = Point(index, values, spec)
        try:
            for p, v in values.items():
                apply_path(spec, p, v)
        except InputError as exc:
            raise InputError(f"{point.label()}: {exc}") from None
        points.append(point)
    return points
