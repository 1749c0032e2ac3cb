"""Show that two checkouts of mechdesign give the same ``solve --json`` output, apart from timing fields.

Used for changes that must not change behaviour (a pure move of modules): every spec in
``problems/`` plus specs covering every prior set × objective are solved by both checkouts, each in
its own interpreter with PYTHONPATH pointing at it, and the JSON objects are compared field by field.

    git worktree add /tmp/base <old commit>
    python benchmarks/json_equivalence.py --base /tmp/base --new . --out /tmp/json_equivalence.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

TIMING = {"seconds", "compile_seconds", "certify_seconds", "total_seconds"}

PRIOR_SETS = {
    "min_mass": {"kind": "min_mass", "c": "1/20"},
    "simplex": {"kind": "simplex"},
    "point": {"kind": "point", "prior": ["1/10", "2/10", "3/10", "4/10"]},
    "hull": {"kind": "hull", "priors": [["1/4"] * 4, ["1/10", "2/10", "3/10", "4/10"]]},
    "box": {"kind": "box", "lower": ["1/10"] * 4, "upper": ["1/2"] * 4},
    "l1_ball": {"kind": "l1_ball", "center": ["1/4"] * 4, "radius": "1/5"},
}
OBJECTIVES = {
    "dobrushin": {"kind": "dobrushin"},
    "expected_loss": {"kind": "expected_loss", "loss": "absolute"},
    "worst_case_loss": {"kind": "expected_loss", "loss": "hamming", "prior": "worst_case"},
    "mutual_information": {"kind": "mutual_information", "prior": ["1/10", "2/10", "3/10", "4/10"]},
    "f_divergence": {
        "kind": "f_divergence",
        "f": "kl",
        "priors": [["1/10", "2/10", "3/10", "4/10"], ["1/4", "1/4", "1/4", "1/4"]],
    },
    "bayes_vulnerability": {"kind": "bayes_vulnerability"},
}


def extra_specs() -> dict[str, dict]:
    out = {}
    for pname, ps in PRIOR_SETS.items():
        for oname, obj in OBJECTIVES.items():
            out[f"{pname}-{oname}"] = {"alphabet": 4, "epsilon": 1, "prior_set": ps, "objective": obj}
    return out


def solve(repo: Path, spec: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo.resolve()), CI="true")
    proc = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        timeout=600,
    )
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip(), "returncode": proc.returncode}
    return json.loads(proc.stdout)


def strip(obj):
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    if isinstance(obj, str):  # durations quoted inside messages, e.g. "MIP (Optimal, 5 nodes, 0.04 s)"
        return re.sub(r"\d+(\.\d+)? s\b", "<t> s", obj)
    return obj


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--new", type=Path, default=Path("."))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    specs = {p.stem: p.resolve() for p in sorted(Path("problems").glob("*.yaml"))}
    tmp = Path(tempfile.mkdtemp())
    for name, data in extra_specs().items():
        path = tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        specs[name] = path
    rows, same = [], 0
    for name, path in specs.items():
        a, b = strip(solve(args.base, path)), strip(solve(args.new, path))
        ok = a == b
        same += ok
        diff = "" if ok else ", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))
        rows.append(
            f"| {name} | {a.get('status', a.get('error', '?'))} | {'identical' if ok else 'DIFFERS: ' + diff} |"
        )
        print(rows[-1], flush=True)
    text = (
        f"# solve --json: {args.base} vs {args.new}\n\nTiming fields ({', '.join(sorted(TIMING))}) and durations quoted in messages removed; "
        f"everything else compared exactly.\n\n**{same} of {len(specs)} identical.**\n\n"
        "| spec | status | comparison |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n"
    )
    if args.out:
        args.out.write_text(text)
    return 0 if same == len(specs) else 1


if __name__ == "__main__":
    sys.exit(main())
