"""Large ε costs what ordinary ε costs: time and peak memory of one design, side by side.

Usage:  python benchmarks/large_epsilon.py [--n 5] [--out FILE]

Each case runs :func:`mechdesign.design` (LP, exact grid, exact certificate) in a fresh process and prints one
markdown row: ε as written, prior set, objective, status, certified, seconds, peak RSS (MB), and the ratio of
seconds to the baseline ε = 1 row of the same prior set and objective. Before the ratio cap
(mechdesign/certify/saturation.py) ε = 1e9 took 70 s and 1.4 GB and ε = 1e10 did not finish in 3.8 GB,
because e^ε was built as an exact rational with ε/ln 2 bits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

EPSILONS = ["1", "50", "745", "1e4", "1e9", "1e10", "exp(30)", "exp(700)", "pi**100", "1/1e999"]
PRIOR_SETS = [{"kind": "simplex"}, {"kind": "min_mass", "c": "1/20"}]
OBJECTIVES = [{"kind": "expected_loss"}, {"kind": "dobrushin"}, {"kind": "mutual_information"}]

CHILD = r"""
import json, resource, sys, time
from mechdesign import design
spec = json.loads(sys.argv[1])
t = time.perf_counter()
r = design(spec)
s = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"status": r.status.value, "certified": bool(r.certificate and r.certificate.feasible),
                  "seconds": s, "rss_mb": rss}))
"""


def run(spec: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {
            "status": "error: " + proc.stderr.strip().splitlines()[-1][:60],
            "certified": False,
            "seconds": float("nan"),
            "rss_mb": float("nan"),
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    lines = [
        "| eps | prior set | objective | status | certified | seconds | peak RSS MB | time / eps=1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ps in PRIOR_SETS:
        for obj in OBJECTIVES:
            base = None
            for eps in EPSILONS:
                r = run({"alphabet": args.n, "epsilon": eps, "prior_set": ps, "objective": obj})
                base = r["seconds"] if base is None else base
                row = (
                    f"| {eps} | {ps['kind']}{' c=' + ps['c'] if 'c' in ps else ''} | {obj['kind']} | {r['status']} "
                    f"| {r['certified']} | {r['seconds']:.3f} | {r['rss_mb']:.0f} | {r['seconds'] / base:.2f} |"
                )
                print(row, flush=True)
                lines.append(row)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
