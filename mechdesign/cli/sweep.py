"""``mechdesign sweep SPEC --vary PATH=VALUES ...`` and ``mechdesign plot RESULTS``.

SPEC is a spec YAML (the base; ``--vary`` gives the axes) or a sweep YAML::

    base: {alphabet: 10, prior_set: {kind: min_mass, c: 0}, objective: {kind: dobrushin}}
    #  or base: spec.yaml (a path relative to this file)
    axes:
      epsilon: 0.05:5:40            # a:b:n, log:a:b:n, or a list
      prior_set.c: [0, 0.005, 0.01]
    zip: [[epsilon, solver.time_limit]]   # optional: axes that advance together

``--vary`` adds axes (or replaces one of the file's). Results go to ``--out`` (default
``<spec name>-sweep/``): ``results.csv``, ``results.parquet``, ``sweep.json``, with ``--plot``
the figures; finished designs are kept in ``--store`` (default ``<out>/store``) and a re-run
skips them. Exit status 0 when every point is optimal and certified, 1 otherwise, 2 for bad
input (a bad point is named before anything runs), 130 when interrupted (finished points are
kept: run the same command again to resume).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import read_yaml_file

__all__ = ["register", "read_sweep_file"]

EXIT_INTERRUPTED = 130


def read_sweep_file(path: Path) -> tuple[dict, dict, list]:
    """(base, axes, zip groups) from a spec or sweep YAML."""
    data = read_yaml_file(path, f"SPEC {path}")  # the spec file's YAML rules and limits (no aliases)
    if not isinstance(data, dict):
        raise InputError(f"SPEC: {path} must hold a mapping, found {type(data).__name__}")
    if "axes" not in data and "base" not in data:
        return data, {}, []
    unknown = set(data) - {"base", "axes", "zip"}
    if unknown:
        raise InputError(f"SPEC: {sorted(unknown)[0]}: unknown key of a sweep file (expected base, axes, zip)")
    base = data.get("base")
    if isinstance(base, str):
        base_path = path.parent / base
        base = read_yaml_file(base_path, f"base {base_path}")
    if not isinstance(base, dict):
        raise InputError(f"base: must be a spec mapping or a path to a spec YAML, found {type(base).__name__}")
    axes = data.get("axes") or {}
    if not isinstance(axes, dict):
        raise InputError(f"axes: must map spec paths to values, found {type(axes).__name__}")
    groups = data.get("zip") or []
    if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
        raise InputError("zip: must be a list of lists of axis paths, e.g. [[epsilon, solver.time_limit]]")
    return base, axes, groups


def _cmd_sweep(args) -> int:
    from mechdesign.sweeps.api import plan_sweep, run_plan
    from mechdesign.sweeps.axes import make_axes, parse_vary
    from mechdesign.sweeps.table import write_table

    spec_path = Path(args.spec)
    base, file_axes, groups = read_sweep_file(spec_path)
    axes = {a.path: list(a.values) for a in make_axes(file_axes)}
    for text in args.vary or []:
        a = parse_vary(text)
        axes[a.path] = list(a.values)
    for text in args.zip or []:
        groups.append([p.strip() for p in text.split(",") if p.strip()])
    if args.serial and args.scheduler:
        raise InputError("--serial: cannot be combined with --scheduler")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers: must be >= 1, found {args.workers}")
    plan = plan_sweep(base, axes, groups)
    if args.plot:  # matplotlib (the bench extra) is checked before any design runs, not after the sweep
        from mechdesign.sweeps.plot import _pyplot

        _pyplot()
    out = Path(args.out) if args.out else Path(f"{spec_path.stem}-sweep")
    store = Path(args.store) if args.store else out / "store"
    try:
        df = run_plan(
            plan,
            store=store,
            serial=args.serial,
            scheduler=args.scheduler,
            workers=args.workers,
            retry_failed=args.retry_failed,
            progress=None if not args.quiet else False,
        )
    except KeyboardInterrupt:
        print(
            f"mechdesign: interrupted; finished points are kept in {store}: run the same command to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    write_table(df, out, meta={"spec": str(spec_path), "zip": groups, "store": str(store)})
    made = []
    if args.plot:
        from mechdesign.sweeps.plot import plot_all

        made = plot_all(df, out)
    ok = int(df["certified"].sum())
    print(
        f"{len(df)} points: {ok} optimal and certified, {len(df) - ok} not; designed {df.attrs['computed']}, "
        f"{len(plan.unique_tasks()) - df.attrs['computed']} from the store ({store}); {df.attrs['seconds']:.1f} s. "
        f"Results in {out}/results.csv, results.parquet"
        + (f"; figures {', '.join(p.name for p in made)}" if made else ""),
        file=sys.stderr,
    )
    return 0 if ok == len(df) else 1


def _cmd_plot(args) -> int:
    from mechdesign.sweeps.plot import plot_all
    from mechdesign.sweeps.table import read_table

    src = Path(args.results)
    df = read_table(src)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    made = plot_all(df, out)
    print("wrote " + ", ".join(str(p) for p in made), file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="design many points (vary eps, c, N, ...) into one table, on Dask",
        description="Run a sweep of designs: the base spec with each --vary axis varied "
        "(Cartesian product; --zip makes axes advance together).",
    )
    p.add_argument("spec", help="a spec YAML (the base) or a sweep YAML with base, axes, zip")
    p.add_argument(
        "--vary",
        action="append",
        metavar="PATH=VALUES",
        help="an axis: a dotted spec path and values a:b:n, log:a:b:n, v1,v2,... or a YAML list "
        "(e.g. epsilon=0.05:5:40, prior_set.c=0,0.005,0.01, alphabet=10,20,50)",
    )
    p.add_argument(
        "--zip",
        action="append",
        metavar="PATH,PATH",
        help="axes that advance together (equal lengths) instead of the product",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--serial", action="store_true", help="run in this process, one design after another")
    mode.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="an existing dask.distributed scheduler, e.g. tcp://host:8786 "
        "(default: $DASK_SCHEDULER_ADDRESS, else a local cluster)",
    )
    p.add_argument("--workers", type=int, metavar="N", help="worker processes of the local cluster (default: cores)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: <spec name>-sweep)")
    p.add_argument("--store", metavar="DIR", help="results store (default: <out>/store)")
    p.add_argument("--retry-failed", action="store_true", help="design again the stored points that are not optimal")
    p.add_argument(
        "--plot",
        action="store_true",
        help="also draw utility_vs_epsilon, error_vs_epsilon (when the designs identify P) and time_vs_size (PNG, SVG)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

    p = subparsers.add_parser("plot", help="draw the figures of a sweep's results (utility vs eps, time vs N)")
    p.add_argument("results", help="a sweep output folder, or its results.parquet / results.csv")
    p.add_argument("--out", metavar="DIR", help="folder for the PNG and SVG files (default: beside the results)")
    p.set_defaults(func=_cmd_plot)
