"""``mechdesign privatize``, ``estimate`` and ``analyze`` at N = M = 300, 1000, 3000, old code beside new.

Usage:
    python benchmarks/tools_scaling.py run   --base /work/wt-bigtools-base [--sizes 300,1000,3000] [--timeout 600]
    python benchmarks/tools_scaling.py table [--out benchmarks/results/tools_scaling.md]

Inputs (brief bigtools), made once per N in a scratch directory by this checkout: the spec ``alphabet: N``,
``epsilon: 1``, ``prior_set: {kind: min_mass, c: 1/(2N)}``, ``objective: {kind: expected_loss, loss: hamming,
prior: uniform}``, ``output_size: N``, solved to ``k.npy``; a CSV of 100,000 rows ``id,answer`` with answers
uniform in 0..N−1 (numpy seed 0). For each tree (``--base``: a baseline checkout, ``git worktree add --detach
/work/wt-bigtools-base bigverify``; new: this checkout), each command runs once in a fresh process with
PYTHONPATH set to the tree (start-up imports included, as a user sees them):

1. ``mechdesign privatize --kernel k.npy --input data.csv --column answer --seed 1 -o out.csv``;
2. ``mechdesign estimate --kernel k.npy --input out.csv --column answer --json -o est.json`` (on the new tree's
   released CSV, so both trees decode the same data);
3. ``mechdesign analyze k.npy --prior-set min_mass:1/(2N) --epsilon 1 --json -o an.json``.

Wall seconds and peak RSS (``/usr/bin/time -f "%e %M"``), exit status, and a hash of the output file (privatize
and analyze must write the same bytes; estimate's numbers are compared in the table: largest absolute
difference of the estimate and the interval ends). A command over ``--timeout`` seconds is stopped and
recorded as such. Lines go to ``benchmarks/results/tools_scaling.jsonl`` with the load average at the start.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
JSONL = RESULTS / "tools_scaling.jsonl"

SPEC = """alphabet: {n}
epsilon: 1
prior_set: {{kind: min_mass, c: 1/{two_n}}}
objective: {{kind: expected_loss, loss: hamming, prior: uniform}}
output_size: {n}
"""


def _run(tree: Path, args: list[str], cwd: Path, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "mechdesign.cli", *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timeout": timeout, "status": None}
    seconds, kib = proc.stderr.strip().splitlines()[-1].split()
    return {"seconds": float(seconds), "peak_mib": int(kib) / 1024, "status": proc.returncode}


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else None


def _inputs(n: int, work: Path, timeout: float) -> None:
    (work / "S.yaml").write_text(SPEC.format(n=n, two_n=2 * n))
    solved = _run(ROOT, ["solve", "S.yaml", "-o", "k.npy"], work, timeout)
    if solved["status"] != 0:
        raise SystemExit(f"solve failed at N = {n}: {solved}")
    answers = np.random.default_rng(0).integers(0, n, 100_000)
    (work / "data.csv").write_text("id,answer\n" + "".join(f"{i},{a}\n" for i, a in enumerate(answers.tolist())))


def run(args) -> None:
    RESULTS.mkdir(exist_ok=True)
    trees = {"base": Path(args.base).resolve(), "new": ROOT}
    for n in [int(v) for v in args.sizes.split(",")]:
        work = Path(tempfile.mkdtemp(prefix=f"tools{n}-"))
        _inputs(n, work, args.timeout)
        for label in ("new", "base"):  # new first: its released CSV is the estimate input of both
            if args.only and label != args.only:
                continue
            tree = trees[label]
            d = work / label
            d.mkdir()
            load = os.getloadavg()[0]
            steps = {
                "privatize": [
                    "privatize",
                    "--kernel",
                    "../k.npy",
                    "--input",
                    "../data.csv",
                    "--column",
                    "answer",
                    "--seed",
                    "1",
                    "-o",
                    "out.csv",
                ],
                "estimate": [
                    "estimate",
                    "--kernel",
                    "../k.npy",
                    "--input",
                    "../new/out.csv",
                    "--column",
                    "answer",
                    "--json",
                    "-o",
                    "est.json",
                ],
                "analyze": [
                    "analyze",
                    "../k.npy",
                    "--prior-set",
                    f"min_mass:1/{2 * n}",
                    "--epsilon",
                    "1",
                    "--json",
                    "-o",
                    "an.json",
                ],
            }
            outputs = {"privatize": "out.csv", "estimate": "est.json", "analyze": "an.json"}
            for step, argv in steps.items():
                if label in args.skip.split(",") and f"{step}{n}" in args.skip_steps.split(","):
                    res = {"seconds": None, "skipped": True, "status": None}
                else:
                    res = _run(tree, argv, d, args.timeout)
                row = {"n": n, "tree": label, "step": step, "load": load, **res, "sha": _digest(d / outputs[step])}
                if step == "estimate" and (d / "est.json").exists():
                    est = json.loads((d / "est.json").read_text())
                    row["estimate"] = {k: est[k] for k in ("estimate", "lower", "upper", "standard_error")}
                print(json.dumps({k: v for k, v in row.items() if k != "estimate"}), flush=True)
                with JSONL.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")


def table(args) -> None:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    last = {}
    for r in rows:
        last[(r["n"], r["step"], r["tree"])] = r
    lines = [
        "| N | command | base s (MiB) | new s (MiB) | ratio | load (base / new) | same output |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, step in sorted(
        {(k[0], k[1]) for k in last}, key=lambda k: (k[0], ["privatize", "estimate", "analyze"].index(k[1]))
    ):
        b, w = last.get((n, step, "base")), last.get((n, step, "new"))

        def cell(r):
            if r is None or r.get("skipped"):
                return "not run"
            if r["seconds"] is None:
                return f"> {r['timeout']:g} (stopped)"
            return f"{r['seconds']:.1f} ({r['peak_mib']:.0f})"

        ratio = f"{b['seconds'] / w['seconds']:.1f}x" if b and w and b.get("seconds") and w.get("seconds") else "-"
        same = "-"
        if b and w and b.get("sha") and w.get("sha"):
            if step == "estimate" and "estimate" in b and "estimate" in w:
                diffs = {
                    k: float(np.abs(np.array(b["estimate"][k]) - np.array(w["estimate"][k])).max())
                    for k in ("estimate", "lower", "upper", "standard_error")
                }
                same = ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
            else:
                same = "identical bytes" if b["sha"] == w["sha"] else "DIFFERENT"
        loads = " / ".join(f"{r['load']:.1f}" if r else "-" for r in (b, w))
        lines.append(f"| {n} | {step} | {cell(b)} | {cell(w)} | {ratio} | {loads} | {same} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--base", required=True)
    r.add_argument("--sizes", default="300,1000,3000")
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("--only", choices=["base", "new"])
    r.add_argument("--skip", default="", help="trees whose --skip-steps are not run, e.g. base")
    r.add_argument("--skip-steps", default="", help="step+N not run on the --skip trees, e.g. estimate3000")
    t = sub.add_parser("table")
    t.add_argument("--out")
    a = ap.parse_args()
    run(a) if a.cmd == "run" else table(a)


if __name__ == "__main__":
    main()
