"""Frequency estimation at a non-uniform prior past N = 12: column generation with certified pricing.

Usage:  python benchmarks/frequency_colgen.py [--sizes 50,200] [--limits 30,60] [--out FILE]

Cases: prior Dirichlet(1) (numpy default_rng(0).dirichlet(np.ones(N))), prior sets simplex (ε-LDP) and
min_mass with c = 1/(2N), ε = 1. Each runs
:func:`mechdesign.engines.frequency_column_generation.solve_frequency_column_generation` (the engine's solve, no
kernel certification) with the time limit given for its N, and prints a markdown row: seconds, value U, certified
lower bound, relative gap (value − bound)/value, rounds, rays met, the last pricing round's note. The load average
of the machine is printed with the table (2 shared cores).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

from mechdesign.engines.frequency_column_generation import solve_frequency_column_generation
from mechdesign.spec.models import spec_from_dict


def case(n: int, prior_set: str):
    P = np.random.default_rng(0).dirichlet(np.ones(n))
    ps = {"kind": "min_mass", "c": 1 / (2 * n)} if prior_set == "min_mass" else "simplex"
    spec = spec_from_dict(
        {
            "alphabet": n,
            "epsilon": 1.0,
            "prior_set": ps,
            "objective": {"kind": "frequency_estimation", "prior": P.tolist()},
        }
    )
    return spec, P


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,200")
    ap.add_argument("--limits", default="30,60", help="time limit in seconds per size, in the order of --sizes")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--baseline",
        default=None,
        help="a source tree of mechdesign (e.g. a git worktree of an older commit) run on the same cases, each case "
        "right before the current code's, for a side-by-side column",
    )
    ap.add_argument("--one", nargs=3, metavar=("N", "PRIOR_SET", "LIMIT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        return _one(int(args.one[0]), args.one[1], float(args.one[2]))
    sizes = [int(s) for s in args.sizes.split(",")]
    limits = [float(s) for s in args.limits.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Frequency estimation by column generation with certified pricing",
        "",
        f"Command: `python benchmarks/frequency_colgen.py --sizes {args.sizes} --limits {args.limits}"
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + (f" --out {args.out}`" if args.out else "`"),
        f"Commit: {commit}. Prior Dirichlet(1) seed 0, ε = 1. Load average before the run: "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
        + " (2 shared cores).",
        "",
        "| N | prior set | time limit (s) | seconds | value U | certified bound | relative gap | rounds | rays met | last pricing |"
        + (" baseline: value U | baseline: relative gap |" if args.baseline else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if args.baseline else ""),
    ]
    if args.baseline:
        base_commit = subprocess.run(
            ["git", "-C", args.baseline, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        lines.insert(
            4, f"Baseline: the same cases with the code at {base_commit} ({args.baseline}), run just before each row."
        )
    print("\n".join(lines), flush=True)
    for n, limit in zip(sizes, limits):
        for prior_set in ("simplex", "min_mass"):
            base = _run_one(args.baseline, n, prior_set, limit) if args.baseline else None
            d = _run_one(None, n, prior_set, limit)
            name = "simplex" if prior_set == "simplex" else "min_mass c = 1/(2N)"
            bound = f"{d['bound']:.8g}" if d["bound"] is not None else "none"
            row = (
                f"| {n} | {name} | {limit:g} | {d['seconds']:.1f} | {d['value']:.8g} | {bound} | {d['gap']:.3g} | "
                f"{d['iterations']} | {d['rays']} | {d['message']} |"
            )
            if base is not None:
                row += f" {base['value']:.8g} | {base['gap']:.3g} |"
            print(row, flush=True)
            lines.append(row)
    lines += ["", "Load average after the run: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + "."]
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


def _one(n: int, prior_set: str, limit: float) -> int:
    """One case, printed as JSON (run in a subprocess, so that a baseline tree can be imported instead)."""
    import json

    spec, P = case(n, prior_set)
    t0 = time.perf_counter()
    d = solve_frequency_column_generation(spec, P, time_limit=limit)
    sec = time.perf_counter() - t0
    gap = (d.value - d.bound) / d.value if d.bound is not None and d.value else float("nan")
    print(
        json.dumps(
            {
                "value": d.value,
                "bound": d.bound,
                "gap": gap,
                "seconds": sec,
                "iterations": d.iterations,
                "rays": d.rays_considered,
                "message": d.message,
            }
        )
    )
    return 0


def _run_one(tree: str | None, n: int, prior_set: str, limit: float) -> dict:
    """:func:`_one` in a fresh interpreter, importing mechdesign from ``tree`` (default: this checkout)."""
    import json

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(tree) if tree else os.path.dirname(here)
    out = subprocess.run(
        [sys.executable, os.path.join(here, "frequency_colgen.py"), "--one", str(n), prior_set, str(limit)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
