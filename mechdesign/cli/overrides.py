"""``--set key.path=value``: quick what-ifs on a spec file without editing it.

``mechdesign solve SPEC --set epsilon=0.5 --set prior_set.c=0.01`` loads the YAML mapping, replaces
(or adds) the value at each dotted key path, and validates the result as usual, so a wrong key or
value gets the spec's own one-line message. A value is read as YAML (``[0.2, 0.8]``, ``{kind:
simplex}``, ``true``); a plain number is passed on as its text, so that ``0.1`` means exactly 1/10
(the spec parses decimal text to exact rationals), as it would in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import read_yaml_file, read_yaml_input
from mechdesign.sweeps.axes import apply_path

__all__ = ["apply_overrides", "load_with_overrides"]


def _value(text: str, path: str) -> Any:
    value = read_yaml_input(text, f"--set {path}")  # the spec file's YAML rules and limits (no aliases)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return text.strip()  # keep the number as written (exact decimal parsing downstream)
    return value


def apply_overrides(data: dict, assignments: list[str]) -> dict:
    """A copy of ``data`` with each ``key.path=value`` applied, in order."""
    import copy

    data = copy.deepcopy(data)
    for item in assignments:
        path, sep, text = item.partition("=")
        keys = [k.strip() for k in path.split(".")]
        if not sep or not all(keys):
            raise InputError(f"--set: expected key.path=value, found {item!r}")
        value = _value(text, ".".join(keys))
        try:  # the paths of sweep's --vary: dotted keys, an integer segment indexes a list (privacy.1.epsilon)
            apply_path(data, ".".join(keys), value)
        except InputError as exc:
            raise InputError(f"--set {exc}") from None
    return data


def load_with_overrides(path: str | Path, assignments: list[str]):
    """The spec in the YAML file at ``path`` with the ``--set`` assignments applied, validated."""
    from mechdesign.spec.models import load_spec, spec_from_dict

    if not assignments:
        return load_spec(Path(path))
    load_spec(Path(path))  # the file itself must be readable and well-formed YAML: same messages as without --set
    data = read_yaml_file(Path(path), f"spec {path}")
    return spec_from_dict(apply_overrides(data, assignments))
