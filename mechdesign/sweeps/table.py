"""Tidy output: one row per point of the sweep, as a pandas DataFrame, CSV and Parquet.

Columns, in order: the axis paths (one column each, the value at the point; a mapping with a ``kind``
written as short text such as ``min_mass(c=0.05)``, other mappings and lists as compact JSON text; an axis named like a result column, such as ``objective``, is
called ``objective (axis)``), ``point`` (index in the sweep), ``key`` (the store key), then
``status``, ``certified`` (optimal and the exact check passed), ``objective``, ``objective_kind``,
``objective_detail`` (what the objective is measured with, e.g. ``loss=absolute, prior=uniform``),
``epsilon_value`` (ε in nats), ``N``, ``M``, ``prior_set_kind``, ``c`` (Q_X(c)'s c; 0 for all
priors, empty otherwise), the certificate (``feasible``, ``leakage``, ``dual_bound``, ``gap``,
``lp_objective``, ``repair_weight``, ``closed_form``, ``closed_form_value``,
``closed_form_difference``), the estimation errors per report at the reports' prior (the point prior,
else the objective's prior, else uniform): ``mle_error`` (U = n times the MLE's asymptotic E‖p̂ − P‖² for
records i.i.d. from P; empty when rank K < N, where it is infinite), ``mle_error_population`` (the same
for the frequencies of the collected population), ``inversion_error`` (n times the inversion estimator's
exact error; empty unless rank K = N), the timings (``seconds``: the task's wall clock; ``design_seconds``,
``solve_seconds``), ``iterations``, ``lps``, ``rounds``, ``method``, ``peak_mib`` (peak RSS of the
process during the design), ``worker``, ``message``, ``finished_at`` (a UTC datetime) and ``cached``
(True when the row was read from the store rather than computed by this run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

__all__ = ["to_frame", "write_table", "read_table", "axis_columns", "prior_set_label", "short_text", "RESULT_COLUMNS"]

RESULT_COLUMNS = [
    "point",
    "key",
    "status",
    "certified",
    "objective",
    "objective_kind",
    "objective_detail",
    "epsilon_value",
    "N",
    "M",
    "prior_set_kind",
    "c",
    "feasible",
    "leakage",
    "dual_bound",
    "gap",
    "lp_objective",
    "repair_weight",
    "closed_form",
    "closed_form_value",
    "closed_form_difference",
    "mle_error",
    "mle_error_population",
    "inversion_error",
    "seconds",
    "design_seconds",
    "solve_seconds",
    "iterations",
    "lps",
    "rounds",
    "method",
    "peak_mib",
    "worker",
    "message",
    "finished_at",
    "cached",
]


def axis_column(path: str) -> str:
    """The column of an axis: its path, or ``'<path> (axis)'`` when the path is a result column's name
    (``--vary objective=[...]`` must not hide the ``objective`` values)."""
    return f"{path} (axis)" if path in RESULT_COLUMNS else path


SHORT_LIST = 4
"""Lists longer than this are shown by their first entries and their length in :func:`prior_set_label`."""


def _short_value(v, cut: bool = True) -> str:
    if isinstance(v, list):
        if not cut:
            return "[" + ", ".join(_short_value(x, cut) for x in v) + "]"
        shown = [_short_value(x) for x in v[: SHORT_LIST - 1]] if len(v) > SHORT_LIST else [_short_value(x) for x in v]
        more = f", … ({len(v)} values)" if len(v) > SHORT_LIST else ""
        return "[" + ", ".join(shown) + more + "]"
    if isinstance(v, dict):
        return prior_set_label(v, cut) if isinstance(v.get("kind"), str) else json.dumps(v, separators=(",", ":"))
    if isinstance(v, float):
        return f"{v:.4g}" if cut else repr(v)
    return str(v)


def prior_set_label(prior_set, cut: bool = True) -> str:
    """A prior set as short text for tables and legends: ``min_mass(c=0.05)``, ``simplex``,
    ``point(prior=[0.2, 0.3, 0.5])``, ``box(lower=[…], upper=[…])`` (lists longer than
    :data:`SHORT_LIST` cut to their first entries and their length, unless ``cut`` is false).

    Accepts the spec's mapping, its JSON text (as a sweep table's axis column holds it), or a
    prior-set model (anything with ``model_dump``). Text that is not a prior set is returned as it is."""
    if hasattr(prior_set, "model_dump"):
        prior_set = prior_set.model_dump(mode="json")
    if isinstance(prior_set, str):
        text = prior_set.strip()
        if not text.startswith("{"):
            return prior_set
        try:
            prior_set = json.loads(text)
        except ValueError:
            return prior_set
    if not isinstance(prior_set, dict) or "kind" not in prior_set:
        return str(prior_set)
    rest = {k: v for k, v in prior_set.items() if k != "kind" and v is not None}
    if not rest:
        return str(prior_set["kind"])
    return f"{prior_set['kind']}(" + ", ".join(f"{k}={_short_value(v, cut)}" for k, v in rest.items()) + ")"


def short_text(v) -> str:
    """An axis value as a sweep table's cell: a mapping with a ``kind`` (a prior set, an objective) as
    :func:`prior_set_label` writes it with every list entry kept (``min_mass(c=0.05)``,
    ``expected_loss(loss=hamming)``), other mappings and lists as compact JSON."""
    if isinstance(v, dict) and isinstance(v.get("kind"), str):
        return prior_set_label(v, cut=False)
    return json.dumps(v, separators=(",", ":"))


def _cell(v):
    if isinstance(v, (dict, list)):
        return short_text(v)
    return v


def to_frame(rows: list[dict], axis_paths: Sequence[str]):
    """A DataFrame of the rows, axis columns first; axis columns of mixed types become text."""
    import pandas as pd

    axis_cols = [axis_column(p) for p in axis_paths]
    cols = axis_cols + RESULT_COLUMNS
    df = pd.DataFrame([{c: _cell(r.get(c)) for c in cols} for r in rows], columns=cols)
    for c in axis_cols:  # Parquet needs one type per column
        values = [v for v in df[c].tolist() if v is not None]
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if not numeric:
            df[c] = df[c].map(lambda v: None if v is None else str(v))
    for c in (
        "objective",
        "epsilon_value",
        "c",
        "leakage",
        "dual_bound",
        "gap",
        "lp_objective",
        "repair_weight",
        "closed_form_value",
        "closed_form_difference",
        "mle_error",
        "mle_error_population",
        "inversion_error",
        "seconds",
        "design_seconds",
        "solve_seconds",
        "peak_mib",
    ):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    df["finished_at"] = finished_at_times(df["finished_at"])
    for c in ("N", "M", "iterations", "lps", "rounds"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    for c in ("certified", "cached"):
        df[c] = df[c].astype(bool)
    df["feasible"] = df["feasible"].astype("boolean")
    for c in (
        "status",
        "objective_kind",
        "objective_detail",
        "prior_set_kind",
        "closed_form",
        "method",
        "worker",
        "message",
        "key",
    ):
        df[c] = df[c].astype("string")
    df.attrs["axes"] = axis_cols
    df.attrs["axis_paths"] = list(axis_paths)
    return df


def finished_at_times(column):
    """``finished_at`` as UTC datetimes (stored as Unix seconds; a CSV holds them as ISO text)."""
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(column):  # read back from Parquet
        return column if getattr(column.dtype, "tz", None) is not None else column.dt.tz_localize("UTC")
    numeric = pd.to_numeric(column, errors="coerce")
    if numeric.notna().sum() >= column.notna().sum():
        return pd.to_datetime(numeric, unit="s", utc=True)
    return pd.to_datetime(column, utc=True, errors="coerce", format="ISO8601")


def axis_columns(df, axis_paths: Sequence[str] | None = None) -> list[str]:
    """The table's axis columns, from its metadata: ``axis_paths`` (given, or ``df.attrs['axis_paths']``,
    each mapped by :func:`axis_column`), else ``df.attrs['axes']`` (the columns as :func:`to_frame`
    and :func:`read_table` record them). Never a result column: a plot grouped by one (e.g. by the
    ``objective`` values) would draw one line per design."""
    from mechdesign.spec.errors import InputError

    if axis_paths is None:
        axis_paths = df.attrs.get("axis_paths")
    if axis_paths is not None:
        cols = [axis_column(p) for p in axis_paths]
    elif "axes" in df.attrs:
        cols = list(df.attrs["axes"])
    else:
        raise InputError("plot: the table has no axis metadata (attrs 'axis_paths' or 'axes'); pass the axes")
    for c in cols:
        if c in RESULT_COLUMNS:
            raise InputError(f"plot: axis {c!r} is a result column's name; axis columns are {axis_column(c)!r}")
        if c not in df.columns:
            raise InputError(f"plot: axis column {c!r} is not in the table (columns: {', '.join(df.columns[:8])}, ...)")
    return cols


def write_table(df, out: str | Path, *, meta: dict | None = None) -> list[Path]:
    """Write ``results.csv``, ``results.parquet`` and ``sweep.json`` (axes and settings) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.csv", out / "results.parquet", out / "sweep.json"]
    df.to_csv(paths[0], index=False)
    df.to_parquet(paths[1], engine="pyarrow", index=False)
    info = {"axes": list(df.attrs.get("axes", [])), "axis_paths": list(df.attrs.get("axis_paths", [])), **(meta or {})}
    paths[2].write_text(json.dumps(info, indent=2, default=str) + "\n", encoding="utf-8")
    return paths


def read_table(path: str | Path):
    """A results table from a folder written by :func:`write_table`, a ``.parquet`` or a ``.csv`` file.

    The axes are read from ``sweep.json`` beside it, else taken as the columns before ``point``.
    """
    import pandas as pd

    from mechdesign.spec.errors import InputError

    path = Path(path)
    if path.is_dir():
        folder = path
        path = next((p for p in (folder / "results.parquet", folder / "results.csv") if p.exists()), None)
        if path is None:
            raise InputError(f"RESULTS: no results.parquet or results.csv in {folder}")
    if not path.exists():
        raise InputError(f"RESULTS: file not found: {path}")
    try:
        # pandas < 3 reads CSV floats with a fast parser that can miss the last bit; round_trip is exact
        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, **exact)
    except Exception as exc:
        raise InputError(f"RESULTS: cannot read {path}: {exc}") from None
    if "point" not in df.columns or "objective" not in df.columns:
        raise InputError(f"RESULTS: {path} is not a sweep table (no 'point' and 'objective' columns)")
    if "finished_at" in df.columns:
        df["finished_at"] = finished_at_times(df["finished_at"])
    meta = path.parent / "sweep.json"
    axes = paths = None
    if meta.exists():
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
            axes, paths = info.get("axes"), info.get("axis_paths")
        except ValueError:
            axes = None
    if not axes:  # to_frame writes the axis columns first, then 'point'
        axes = list(df.columns[: list(df.columns).index("point")])
    df.attrs["axes"] = [a for a in axes if a in df.columns]
    if paths and [axis_column(p) for p in paths] == df.attrs["axes"]:
        df.attrs["axis_paths"] = list(paths)
    return df
