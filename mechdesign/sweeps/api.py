"""``sweep(base, axes, ...)``: many designs, one tidy table, nothing recomputed.

    >>> import mechdesign
    >>> df = mechdesign.sweep({"alphabet": 10, "prior_set": {"kind": "min_mass", "c": 0.01},
    ...                        "objective": {"kind": "dobrushin"}},
    ...                       {"epsilon": "0.1:4:40", "prior_set.c": [0, 0.05, 0.1]})   # doctest: +SKIP

Steps: expand the points (:mod:`.axes`), validate every point with :func:`mechdesign.load_spec`
before anything runs (errors name the point), key each by the hash of its normalised spec
(:mod:`.store`), run the points the store does not hold yet (:mod:`.run`), writing each as it
finishes, and build one row per point from the store (:mod:`.table`). Points that normalise to
the same spec are designed once.
"""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from mechdesign.spec.errors import InputError, SpecError
from mechdesign.spec.input_rules import SpecInputError
from mechdesign.spec.models import Spec, load_spec
from mechdesign.sweeps.axes import Axis, Point, expand_points, make_axes
from mechdesign.sweeps.store import open_store, spec_key

__all__ = ["sweep", "plan_sweep", "DEFAULT_STORE", "SweepPlan"]

DEFAULT_STORE = "sweep-store"
"""Folder (in the working directory) of the Python API's store when none is given."""

MAX_LISTED_ERRORS = 3


class SweepPlan:
    """The validated points of a sweep: each point's normalised spec and store key."""

    def __init__(self, points: list[Point], axes: list[Axis], specs: list[dict], keys: list[str]):
        self.points, self.axes, self.specs, self.keys = points, axes, specs, keys

    @property
    def axis_paths(self) -> list[str]:
        return [a.path for a in self.axes]

    def unique_tasks(self) -> list[tuple[str, dict]]:
        seen, tasks = set(), []
        for key, spec in zip(self.keys, self.specs):
            if key not in seen:
                seen.add(key)
                tasks.append((key, spec))
        return tasks


def _base_dict(base: Any) -> dict:
    """The base spec as plain data (it may be incomplete: the axes can supply missing keys)."""
    from mechdesign.spec.input_rules import read_spec_file, read_yaml_input

    if isinstance(base, Spec):
        return base.to_dict()
    if isinstance(base, Mapping):
        return copy.deepcopy(dict(base))
    if isinstance(base, (str, Path)):
        text = str(base)
        if isinstance(base, Path) or ("\n" not in text and text.endswith((".yaml", ".yml"))):
            try:
                text = read_spec_file(Path(base))  # refused by size before it is read
            except SpecInputError as exc:
                raise InputError(f"spec: {exc.rule}") from None
        data = read_yaml_input(text, f"spec {base}" if text is not base else "spec")  # no aliases, depth limit
        if not isinstance(data, dict):
            raise InputError(f"spec: must be a mapping of keys to values, found {type(data).__name__}")
        return data
    raise InputError(f"base: expected a dict, a Spec or a YAML path, found {type(base).__name__}")


def plan_sweep(
    base: Any, axes: Mapping[str, Any] | Sequence[Axis] | None = None, zip: Sequence[Sequence[str]] = ()
) -> SweepPlan:
    """Expand and validate every point; raise one :class:`InputError` naming each bad point."""
    axes_list = make_axes(axes or {})
    points = expand_points(_base_dict(base), axes_list, [list(g) for g in zip])
    specs, keys, errors = [], [], []
    for point in points:
        try:
            normalised = load_spec(point.spec).to_dict()
        except SpecError as exc:
            errors.append(f"{point.label()}: {exc.message}")
            continue
        specs.append(normalised)
        keys.append(spec_key(normalised))
    if errors:
        more = len(errors) - MAX_LISTED_ERRORS
        listed = errors[:MAX_LISTED_ERRORS] + ([f"and {more} more bad points"] if more > 0 else [])
        raise InputError(f"{len(errors)} of {len(points)} points are not valid specs: " + "; ".join(listed))
    return SweepPlan(points, axes_list, specs, keys)


def _descriptors(spec: dict) -> dict:
    ps = spec.get("prior_set") or {}
    kind = ps.get("kind")
    c = None
    if kind == "simplex":
        c = 0.0
    elif kind == "min_mass":
        from fractions import Fraction

        c = float(Fraction(str(ps.get("c"))))
    alphabet = spec.get("alphabet")
    n = alphabet if isinstance(alphabet, int) else len(alphabet or [])
    objective = spec.get("objective") or {}
    return {
        "prior_set_kind": kind,
        "c": c,
        "N": n,
        "objective_kind": objective.get("kind"),
        "objective_detail": _objective_detail(objective),
    }


def _objective_detail(objective: dict) -> str | None:
    """What an objective is measured with, as short text (``loss=absolute, prior=uniform``): the
    objective's settings other than its kind, lists and matrices named by their shape only."""
    parts = []
    for k, v in objective.items():
        if k == "kind" or v is None:
            continue
        if isinstance(v, list):
            v = "given" if k in ("prior", "priors") else "matrix" if k == "loss" else f"[{len(v)} values]"
        elif isinstance(v, dict):
            v = ",".join(f"{a}={b}" for a, b in v.items())
        parts.append(f"{k}={v}")
    return ", ".join(parts) or None


def _row(point: Point, spec: dict, key: str, record: dict, cached: bool) -> dict:
    from mechdesign.sweeps.table import axis_column

    row = {axis_column(p): v for p, v in point.values.items()}
    row.update({"point": point.index, "key": key, **_descriptors(spec)})
    row.update(record.get("row") or {})
    row.update(
        {
            "status": record.get("status"),
            "message": record.get("message"),
            "seconds": record.get("seconds"),
            "peak_mib": record.get("peak_mib"),
            "worker": record.get("worker"),
            "finished_at": record.get("finished_at"),
            "cached": cached,
        }
    )
    return row


def _needs_run(record: dict | None, retry_failed: bool) -> bool:
    return record is None or (retry_failed and record.get("status") != "optimal")


class _Progress:
    """rich progress: points done / total, failures, ETA and the worker count; silent when not a TTY."""

    def __init__(self, total: int, enabled: bool | None):
        from rich.console import Console

        console = Console(stderr=True)
        self.enabled = console.is_terminal if enabled is None else enabled
        self.total, self.failures, self.workers = total, 0, 0
        if not self.enabled:
            self.bar = None
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failures {task.fields[failures]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[workers]}"),
            console=console,
            transient=False,
        )
        self.task = self.bar.add_task("sweep", total=total, failures=0, workers="")

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def done(self, failed: bool) -> None:
        self.failures += int(failed)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, failures=self.failures)

    def status(self, workers: int) -> None:
        self.workers = workers
        if self.bar is not None:
            self.bar.update(self.task, workers=f"{workers} worker{'s' if workers != 1 else ''}")


def sweep(
    base: Any,
    axes: Mapping[str, Any] | Sequence[Axis] | None = None,
    *,
    zip: Sequence[Sequence[str]] = (),
    store: str | os.PathLike | None = DEFAULT_STORE,
    serial: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
    on_record: Callable[[dict], None] | None = None,
    batch_size: int | None = None,
    isolate: bool = False,
    memory_limit: int | None = None,
):
    """Design every point of ``base`` × ``axes`` and return one row per point (a pandas DataFrame).

    ``base``: a spec dict, :class:`~mechdesign.Spec` or YAML path (keys an axis supplies may be missing).
    ``axes``: dotted spec path → list of values (or a range text ``'a:b:n'``, ``'log:a:b:n'``);
    the points are the Cartesian product, except that the axes of each group in ``zip`` advance together.
    ``store``: folder of finished designs (default ``./sweep-store``; ``None``: in memory only).
    Points already in the store are not designed again (``retry_failed``: designs the ones that are
    not ``optimal`` again).
    ``serial``: run in this process. Otherwise on Dask: ``scheduler`` (or ``DASK_SCHEDULER_ADDRESS``),
    else a local cluster of ``workers`` processes (default: one per core).
    ``progress``: show a progress bar (default: when stderr is a terminal).
    ``on_record``: called with each record as it is stored (used by tests).
    ``batch_size``: designs per Dask task (default: a few per task on a local cluster, whose workers
    write each design to the store as it finishes; one per task on an existing cluster).
    ``isolate``: each design in a fresh child process of this one, one after another, under an
    address-space cap of ``memory_limit`` bytes (its own peak memory; a design past the cap fails alone).

    Raises :class:`~mechdesign.InputError` naming every bad point before anything runs.
    """
    plan = plan_sweep(base, axes, zip)
    return run_plan(
        plan,
        store=store,
        serial=serial,
        scheduler=scheduler,
        workers=workers,
        retry_failed=retry_failed,
        progress=progress,
        on_record=on_record,
        batch_size=batch_size,
        isolate=isolate,
        memory_limit=memory_limit,
    )


def run_plan(
    plan: SweepPlan,
    *,
    store=DEFAULT_STORE,
    serial: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
    on_record: Callable[[dict], None] | None = None,
    batch_size: int | None = None,
    isolate: bool = False,
    memory_limit: int | None = None,
):
    from mechdesign.sweeps.run import SCHEDULER_ENV, run_dask, run_isolated, run_serial
    from mechdesign.sweeps.table import to_frame

    st = open_store(store)
    tasks = [(k, s) for k, s in plan.unique_tasks() if _needs_run(st.get(k), retry_failed)]
    computed: set[str] = set()
    started = time.perf_counter()
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    with _Progress(len(tasks), progress) as bar:

        def record_done(record: dict, kernel) -> None:
            if not record.pop("_stored", False):  # a worker that sees the store has written it already
                st.put(record, kernel)
            computed.add(record["key"])
            bar.done(record.get("status") != "optimal")
            if on_record is not None:
                on_record(record)

        if tasks:
            if isolate:
                run_isolated(tasks, record_done, bar.status, memory_limit=memory_limit)
            elif serial:
                run_serial(tasks, record_done, bar.status)
            else:
                root = str(st.root) if hasattr(st, "root") else None
                run_dask(
                    tasks,
                    record_done,
                    bar.status,
                    scheduler=scheduler,
                    workers=workers,
                    store_root=root,
                    batch_size=batch_size,
                )
    rows = []
    for point, spec, key in zip(plan.points, plan.specs, plan.keys):
        record = st.get(key)
        if record is None:  # pragma: no cover (every task hands back a record)
            raise RuntimeError(f"{point.label()}: no result in the store")
        rows.append(_row(point, spec, key, record, cached=key not in computed))
    df = to_frame(rows, plan.axis_paths)
    df.attrs.update(
        {
            "computed": len(computed),
            "seconds": time.perf_counter() - started,
            "store": str(getattr(st, "root", "memory")),
            "mode": "isolated" if isolate else "serial" if serial else (scheduler or "local cluster"),
        }
    )
    return df
