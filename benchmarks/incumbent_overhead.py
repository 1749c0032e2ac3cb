"""What holding the best kernel and bound for Ctrl-C costs (:mod:`mechdesign.lp.incumbent`).

Usage:
    python benchmarks/incumbent_overhead.py --baseline DIR [--repeat 3] [--out benchmarks/results/incumbent_overhead.md]

Each design runs with ``design(spec)`` in a fresh subprocess whose PYTHONPATH is either ``--baseline`` (a
checkout without the incumbent, e.g. ``git worktree add --detach /work/wt-interrupt-base 9ea45fe``) or this
checkout, alternating base/new ``--repeat`` times so that load drifts hit both alike; the median wall time
of ``design`` (import excluded) is reported with the ratio new/base. The cases are the programs that offer
kernels and bounds every round: output generation, column generation, output generation with side rows,
lazy pair LPs, a MIP.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

CHILD = r"""
import json, sys, time
spec = json.loads(sys.argv[1])
from mechdesign import design
t0 = time.perf_counter()
r = design(spec)
print(json.dumps({"seconds": time.perf_counter() - t0, "status": r.status.value, "objective": r.objective}))
"""

WEIGHTS = [17, 15, 16, 11, 16, 7, 9, 15, 3, 6, 3, 9, 19, 3, 8, 8, 18, 4, 10, 5, 1, 15, 2, 6]
CASES = {
    "expected loss, Hamming, N = M = 300 (output generation, ~20 rounds)": {
        "alphabet": 300,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.001},
        "objective": {"kind": "expected_loss", "loss": "hamming"},
    },
    "mutual information, N = 20, P ∝ 1..20 (column generation)": {
        "alphabet": 20,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.01},
        "objective": {"kind": "mutual_information", "prior": [f"{i + 1}/210" for i in range(20)]},
    },
    "expected loss, worst-case prior, N = 60 (output generation with side rows)": {
        "alphabet": 60,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": 0.005},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
    },
    "Dobrushin, box prior set, N = 40 (lazy pair LPs)": {
        "alphabet": 40,
        "epsilon": 0.5,
        "prior_set": {"kind": "box", "lower": [f"{1 + i % 3}/200" for i in range(40)], "upper": [0.5] * 40},
        "objective": {"kind": "dobrushin"},
    },
    "Bayes vulnerability, N = 24, M = 5 (MIP)": {
        "alphabet": 24,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": "1/240"},
        "objective": {"kind": "bayes_vulnerability", "prior": [f"{w}/{sum(WEIGHTS)}" for w in WEIGHTS]},
        "output_size": 5,
    },
}


def run(tree: Path, spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "incumbent_overhead.md")
    args = ap.parse_args()
    rows = []
    for name, spec in CASES.items():
        times = {"base": [], "new": []}
        objectives = {}
        for _ in range(args.repeat):
            for label, tree in (("base", args.baseline), ("new", TREE)):
                r = run(tree, spec)
                times[label].append(r["seconds"])
                objectives[label] = (r["status"], r["objective"])
        base, new = statistics.median(times["base"]), statistics.median(times["new"])
        rows.append((name, base, new, new / base, objectives["base"], objectives["new"]))
        print(f"{name}: base {base:.3f} s, new {new:.3f} s, ratio {new / base:.3f}", flush=True)
    load = os.getloadavg()
    lines = [
        "# Cost of holding the best kernel and bound for Ctrl-C",
        "",
        f"`python benchmarks/incumbent_overhead.py --baseline {args.baseline} --repeat {args.repeat}`; median "
        f"wall time of `design` (import excluded), base and new alternating; 2 shared cores, load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end (other jobs running: ratios within ±10 % are noise).",
        "",
        "| case | base (s) | new (s) | new / base | status, objective (base) | status, objective (new) |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for name, base, new, ratio, ob, on in rows:
        lines.append(
            f"| {name} | {base:.3f} | {new:.3f} | {ratio:.3f} | {ob[0]}, {ob[1]:.10g} | {on[0]}, {on[1]:.10g} |"
        )
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
