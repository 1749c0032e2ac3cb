"""Sweep scaling (issue 15): a 400-point Dobrushin + expected-loss sweep, serial against a local Dask cluster.

    python benchmarks/sweep_scaling.py [--workers 2] [--repeats 2] [--out benchmarks/results]

Points: objective ∈ {dobrushin, expected_loss (|x − y|, uniform prior)} × ε ∈ log:0.05:5:25 ×
c ∈ {0, 0.005, 0.01, 0.02} × N ∈ {20, 50} (Q_X(c); c = 0 is LDP; M = 2 and M = N) = 400 designs.
Each mode runs the same sweep into a fresh store (so every point is designed and written):

* serial: ``mechdesign.sweep(..., serial=True)`` in a child process with one HiGHS thread
  (the same per-design setting as the workers), and once with the default two threads;
* cluster: ``mechdesign.sweep(..., workers=W)`` on a LocalCluster of W single-threaded processes;
  the cluster's start-up is timed apart from the sweep.

Per-task overhead = (W × cluster sweep time − Σ design time inside the tasks) / tasks: the time a
worker slot spends per task outside ``design`` (scheduling, transfer, the driver's store write,
idle slots). Modes are interleaved and repeated; the best of the repeats is the headline, all are listed.
Writes ``sweep_scaling.md`` and the sweep's figures (``sweep_utility_vs_epsilon.png``, ``sweep_time_vs_size.png``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BASE = {"alphabet": 20, "epsilon": 1, "prior_set": {"kind": "min_mass", "c": 0}, "objective": {"kind": "dobrushin"}}
AXES = {
    "objective": [{"kind": "dobrushin"}, {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"}],
    "epsilon": "log:0.05:5:25",
    "prior_set.c": [0, 0.005, 0.01, 0.02],
    "alphabet": [20, 50],
}

CHILD = """
import json, sys, tempfile, time
import mechdesign
base, axes, mode, workers = json.loads(sys.argv[1])
if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as store:
        t0 = time.perf_counter()
        if mode == "serial":
            df = mechdesign.sweep(base, axes, serial=True, store=store, progress=False)
            startup = 0.0
        else:
            from dask.distributed import Client
            from mechdesign.sweeps.run import local_cluster
            cluster = local_cluster(workers)
            with cluster, Client(cluster) as client:
                client.wait_for_workers(workers)
                startup = time.perf_counter() - t0
                t0 = time.perf_counter()
                df = mechdesign.sweep(base, axes, scheduler=cluster.scheduler_address, store=store, progress=False)
        wall = time.perf_counter() - t0
        print(json.dumps({"wall": wall, "startup": startup, "task_seconds": float(df["seconds"].sum()),
                          "design_seconds": float(df["design_seconds"].sum()), "points": len(df),
                          "certified": int(df["certified"].sum()), "workers": len(set(df["worker"]))}))
        if len(sys.argv) > 2:
            df.to_parquet(sys.argv[2])
"""


def run_child(mode: str, workers: int, threads: int | None, table: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MECHDESIGN_HIGHS_THREADS", None)
    if threads is not None:
        env["MECHDESIGN_HIGHS_THREADS"] = str(threads)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(CHILD)
        script = fh.name
    try:
        args = [sys.executable, script, json.dumps([BASE, AXES, mode, workers])] + ([table] if table else [])
        out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, timeout=3600)
    finally:
        os.unlink(script)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spin(n: int) -> float:
    import time as _t

    t = _t.perf_counter()
    x = 0
    for i in range(n):
        x += i * i
    return _t.perf_counter() - t


def available_parallelism(workers: int, n: int = 6_000_000) -> float:
    """How many cores this machine gives us right now: W × (time of one CPU-bound loop alone) /
    (wall time of W copies at once, in W processes). W on an idle W-core machine; less when shared."""
    import multiprocessing as mp
    import time as _t

    ctx = mp.get_context("spawn")
    with ctx.Pool(workers) as pool:
        pool.map(_spin, [1000] * workers)  # start-up out of the timing
        alone = min(pool.apply(_spin, (n,)) for _ in range(2))
        t = _t.perf_counter()
        pool.map(_spin, [n] * workers)
        together = _t.perf_counter() - t
    return workers * alone / together


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    runs = {"serial, 1 HiGHS thread": [], "serial, 2 HiGHS threads": [], f"cluster, {args.workers} workers": []}
    table = str(out / "sweep_scaling_table.parquet")
    parallelism = []
    for rep in range(args.repeats):
        parallelism.append(available_parallelism(args.workers))
        runs["serial, 1 HiGHS thread"].append(run_child("serial", 1, 1))
        runs[f"cluster, {args.workers} workers"].append(
            run_child("cluster", args.workers, None, table if rep == 0 else None)
        )
        runs["serial, 2 HiGHS threads"].append(run_child("serial", 1, None))
        print(f"repeat {rep + 1}: " + "; ".join(f"{k} {v[-1]['wall']:.1f} s" for k, v in runs.items()), file=sys.stderr)
    load_after = os.getloadavg()

    serial = min(r["wall"] for r in runs["serial, 1 HiGHS thread"])
    serial2 = min(r["wall"] for r in runs["serial, 2 HiGHS threads"])
    cl = min(runs[f"cluster, {args.workers} workers"], key=lambda r: r["wall"])
    overhead = (args.workers * cl["wall"] - cl["task_seconds"]) / cl["points"]
    serial_overhead = min((r["wall"] - r["task_seconds"]) / r["points"] for r in runs["serial, 1 HiGHS thread"])

    import pandas as pd

    from mechdesign.sweeps.plot import time_vs_size, utility_vs_epsilon

    df = pd.read_parquet(table)
    df.attrs["axes"] = list(AXES)
    figs = utility_vs_epsilon(df, out, stem="sweep_utility_vs_epsilon") + time_vs_size(
        df, out, stem="sweep_time_vs_size"
    )
    for p in figs:
        if p.suffix == ".svg":
            p.unlink()  # the PNGs are committed; the SVGs are a --plot output, not needed here
    os.unlink(table)

    lines = [
        "# Sweep scaling: serial against a local Dask cluster",
        "",
        f"Command: `python benchmarks/sweep_scaling.py --workers {args.workers} --repeats {args.repeats}`; "
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}.",
        "",
        "400 designs: objective ∈ {dobrushin, expected loss (|x − y|, uniform prior)} × ε ∈ log:0.05:5:25 × "
        "c ∈ {0, 0.005, 0.01, 0.02} (Q_X(c), c = 0 LDP) × N ∈ {20, 50}; every point designed and written to a "
        "fresh store in each run. Certified optimal: "
        + ", ".join(f"{k} {r['certified']}/{r['points']}" for k, v in runs.items() for r in v[:1])
        + ".",
        "",
        "| mode | wall s (each repeat) | best wall s | Σ task s | speed-up vs serial (1 thread) |",
        "|---|---|---|---|---|",
    ]
    for k, v in runs.items():
        best = min(v, key=lambda r: r["wall"])
        walls = ", ".join(f"{r['wall']:.1f}" for r in v)
        lines.append(
            f"| {k} | {walls} | {best['wall']:.1f} | {best['task_seconds']:.1f} | {serial / best['wall']:.2f}× |"
        )
    lines += [
        "",
        f"- Speed-up of the {args.workers}-worker cluster over serial (one HiGHS thread, the workers' setting): "
        f"**{serial / cl['wall']:.2f}×** (best of {args.repeats}); over serial with HiGHS's default 2 threads: "
        f"{serial2 / cl['wall']:.2f}×. Cluster start-up (not in the sweep time): "
        f"{min(r['startup'] for r in runs[f'cluster, {args.workers} workers']):.1f} s.",
        f"- Per-task overhead on the cluster: (W × wall − Σ task time) / tasks = **{overhead * 1000:.1f} ms** "
        f"(W = {args.workers}); serial, per design outside `design`: {serial_overhead * 1000:.1f} ms. "
        f"Mean task: {cl['task_seconds'] / cl['points'] * 1000:.0f} ms.",
        f"- Worker utilisation of that cluster run: Σ task time / (W × wall) = "
        f"{cl['task_seconds'] / (args.workers * cl['wall']):.0%} (the share of the W worker slots spent inside "
        f"`design`); mean task there {cl['task_seconds'] / cl['points'] * 1000:.0f} ms against "
        f"{min(runs['serial, 1 HiGHS thread'], key=lambda r: r['wall'])['task_seconds'] / cl['points'] * 1000:.0f} ms "
        f"serially: on shared cores a design runs slower when two run at once.",
        f"- Cores actually available (W × time of a CPU-bound loop alone / wall time of W copies at once, "
        f"measured before each repeat): {', '.join(f'{p:.2f}' for p in parallelism)} of {args.workers}. "
        f"This is the ceiling of any {args.workers}-process speed-up in that window.",
        f"- Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; after: "
        f"{', '.join(f'{x:.2f}' for x in load_after)}. The machine (2 cores) is shared with other engineers "
        "running their own jobs, so absolute times and the speed-up vary from run to run; a load average "
        "above ~1 means the two workers did not have two free cores.",
        "",
        "Figures of the cluster run's table: [utility vs ε](sweep_utility_vs_epsilon.png), "
        "[time vs N](sweep_time_vs_size.png).",
    ]
    (out / "sweep_scaling.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
