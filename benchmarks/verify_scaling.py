"""``mechdesign solve -o`` and ``mechdesign verify`` per kernel file kind, old code beside new, at N = M = 1000, 3000.

Usage:
    python benchmarks/verify_scaling.py run   --base /work/wt-bigverify-base [--sizes 1000,3000] [--label new] [--only base]
    python benchmarks/verify_scaling.py table [--out benchmarks/results/verify_scaling.md]

Spec (brief bigverify): ``alphabet: N``, ``epsilon: 1``, ``prior_set: {kind: min_mass, c: 1/(2N)}``,
``objective: {kind: expected_loss, loss: hamming, prior: uniform}``, ``output_size: N``. For each N and each
tree (``--base``: a baseline checkout, ``git worktree add --detach /work/wt-bigverify-base main``; new: this
checkout), one after the other per step:

1. ``mechdesign solve S.yaml -o k.{csv,npy,json}``: wall seconds and peak RSS of the process
   (``/usr/bin/time -f "%e %M"``);
2. ``mechdesign verify k.{csv,npy,json} --spec S.yaml`` on the file that tree wrote: the same, and its exit status
   and a hash of its report (the two trees must print the same report).

Each command runs once in a fresh process with PYTHONPATH set to the tree (the interpreter's start-up, ~1 s of
imports, is included, as a user sees it). Lines go to ``benchmarks/results/verify_scaling.jsonl`` with the load
average at the start; ``table`` writes the markdown.
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

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
JSONL = RESULTS / "verify_scaling.jsonl"
KINDS = ("csv", "npy", "json")

SPEC = """alphabet: {n}
epsilon: 1
prior_set: {{kind: min_mass, c: 1/{two_n}}}
objective: {{kind: expected_loss, loss: hamming, prior: uniform}}
output_size: {n}
"""


def _timed(argv: list[str], tree: Path, cwd: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.NamedTemporaryFile("r", suffix=".time") as clock:
        load = os.getloadavg()[0]
        proc = subprocess.run(
            ["/usr/bin/time", "-o", clock.name, "-f", "%e %M", sys.executable, "-m", "mechdesign.cli", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
        )
        seconds, kb = clock.read().split()[-2:]
    return {
        "seconds": float(seconds),
        "peak_mb": int(kb) / 1024,
        "exit": proc.returncode,
        "report_sha": hashlib.sha256(proc.stdout.replace(str(cwd).encode(), b"")).hexdigest()[:12],
        "load": round(load, 2),
    }


def run(args) -> None:
    trees = {"base": Path(args.base).resolve(), args.label: HERE.parent}
    if args.only:
        trees = {args.only: trees[args.only]}
    with JSONL.open("a") as log:
        for n in [int(v) for v in args.sizes.split(",")]:
            with tempfile.TemporaryDirectory(prefix=f"verify{n}-") as tmp:
                work = Path(tmp)
                (work / "S.yaml").write_text(SPEC.format(n=n, two_n=2 * n))
                for kind in args.kinds.split(","):
                    for label, tree in trees.items():
                        out = work / label
                        out.mkdir(exist_ok=True)
                        for step, argv in (
                            ("solve", ["solve", "../S.yaml", "-q", "-o", f"k.{kind}"]),
                            ("verify", ["verify", f"k.{kind}", "--spec", "../S.yaml"]),
                        ):
                            row = {"n": n, "kind": kind, "step": step, "tree": label, **_timed(argv, tree, out)}
                            print(json.dumps(row), flush=True)
                            log.write(json.dumps(row) + "\n")
                            log.flush()
                        (out / f"k.{kind}").unlink()


def table(args) -> None:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    latest: dict[tuple, dict] = {}
    for r in rows:
        latest[r["n"], r["kind"], r["step"], r["tree"]] = r
    labels = sorted({r["tree"] for r in rows} - {"base"})
    lines = [
        "| N | file | command | base s | base MB | "
        + " | ".join(f"{lab} s | {lab} MB | ratio" for lab in labels)
        + " | exit (base / new) | same report | load |",
        "| --- | --- | --- | --- | --- | " + " | ".join("--- | --- | ---" for _ in labels) + " | --- | --- | --- |",
    ]
    for n in sorted({r["n"] for r in rows}):
        for kind in KINDS:
            for step in ("solve", "verify"):
                base = latest.get((n, kind, step, "base"))
                if base is None:
                    continue
                cells = [str(n), kind, f"`{step}`", f"{base['seconds']:.2f}", f"{base['peak_mb']:.0f}"]
                exits, same, loads = [str(base["exit"])], [], [str(base["load"])]
                for lab in labels:
                    new = latest.get((n, kind, step, lab))
                    if new is None:
                        cells += ["–", "–", "–"]
                        continue
                    cells += [
                        f"{new['seconds']:.2f}",
                        f"{new['peak_mb']:.0f}",
                        f"{base['seconds'] / new['seconds']:.1f}×",
                    ]
                    exits.append(str(new["exit"]))
                    same.append("yes" if new["report_sha"] == base["report_sha"] else "no")
                    loads.append(str(new["load"]))
                cells += [" / ".join(exits), " / ".join(same) or "–", " / ".join(loads)]
                lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("--base", required=True)
    p.add_argument("--sizes", default="1000,3000")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--label", default="new")
    p.add_argument("--only", help="run one tree only (its label: base or the --label)")
    p.set_defaults(func=run)
    p = sub.add_parser("table")
    p.add_argument("--out")
    p.set_defaults(func=table)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
