"""``mechdesign solve -o`` and ``mechdesign verify`` per kernel file kind, old code beside new, at N = M = 1000, 3000.

Usage:
    python benchmarks/verify_scaling.py run   --base /work/wt-bigverify-base [--sizes 1000,3000] [--label new] [--only base]
    python benchmarks/verify_scaling.py writers --base /work/wt-bigverify-base [--sizes 1000,3000]
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


WRITER_CHILD = r"""
import json, sys, time
from pathlib import Path
from mechdesign.design import design
from mechdesign.spec.models import load_spec
from mechdesign.cli.report import design_accuracy
kind, spec, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
result = design(load_spec(spec))
accuracy = design_accuracy(result, 10000)
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM (the peak RSS) to the current RSS: the peak below is the writer's
start = time.perf_counter()
if kind == "solve-json":  # what `solve --json -o r.json` writes
    try:
        from mechdesign.release.kernel_text import write_result_json
        with open(out, "w") as f:
            write_result_json(result, {"inversion_accuracy": accuracy}, f)
    except ImportError:  # the base tree: the whole object through dumps_indented
        from mechdesign.spec.json_values import dumps_indented
        out.write_text(dumps_indented({**result.to_json(), "inversion_accuracy": accuracy}) + "\n")
else:
    from mechdesign.release.kernel_io import write_kernel
    write_kernel(result.exact_kernel, out)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss_before_mb": before, "peak_during_mb": status("VmHWM")}))
"""


def writers(args) -> None:
    """The writers alone: one design per child, then the clock around writing it (``-o k.csv``, ``k.npy``,
    ``write_kernel(.json)`` and what ``solve --json`` writes), so the design's own variance stays out."""
    trees = {"base": Path(args.base).resolve(), args.label: HERE.parent}
    with JSONL.open("a") as log:
        for n in [int(v) for v in args.sizes.split(",")]:
            with tempfile.TemporaryDirectory(prefix=f"writers{n}-") as tmp:
                work = Path(tmp)
                (work / "S.yaml").write_text(SPEC.format(n=n, two_n=2 * n))
                for kind in ("csv", "npy", "json", "solve-json"):
                    for label, tree in trees.items():
                        target = work / ("r.json" if kind == "solve-json" else f"k.{kind}")
                        load = os.getloadavg()[0]
                        proc = subprocess.run(
                            [sys.executable, "-c", WRITER_CHILD, kind, str(work / "S.yaml"), str(target)],
                            env=dict(os.environ, PYTHONPATH=str(tree)),
                            cwd=work,  # not this checkout: python -c puts the working directory first on sys.path
                            capture_output=True,
                            text=True,
                            check=True,
                        )
                        timing = json.loads(proc.stdout.strip().splitlines()[-1])
                        size = target.stat().st_size / 2**20
                        target.unlink()
                        row = {"n": n, "kind": kind, "step": "write", "tree": label, **timing, "mb": size, "load": load}
                        print(json.dumps(row), flush=True)
                        log.write(json.dumps(row) + "\n")
                        log.flush()


def table(args) -> None:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    written = [r for r in rows if r["step"] == "write"]
    rows = [r for r in rows if r["step"] != "write"]
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
    if written:
        last = {(r["n"], r["kind"], r["tree"]): r for r in written}
        lines += [
            "",
            "Writers alone (seconds around the write; RSS of the process before it → its peak during it, from"
            " /proc/self/status after resetting VmHWM; file size):",
            "",
            "| N | writer | base s | base MB | new s | new MB | ratio | file MB (base / new) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for n, kind in dict.fromkeys((r["n"], r["kind"]) for r in written):
            b, w = last.get((n, kind, "base")), last.get((n, kind, labels[0] if labels else "new"))
            if b is None or w is None:
                continue
            name = (
                "solve --json" if kind == "solve-json" else f"-o k.{kind}" if kind != "json" else "write_kernel(.json)"
            )
            lines.append(
                f"| {n} | `{name}` | {b['seconds']:.2f} | {b['rss_before_mb']:.0f} → {b['peak_during_mb']:.0f} | "
                f"{w['seconds']:.2f} | {w['rss_before_mb']:.0f} → {w['peak_during_mb']:.0f} | "
                f"{b['seconds'] / w['seconds']:.1f}× | {b['mb']:.0f} / {w['mb']:.0f} |"
            )
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
    p = sub.add_parser("writers")
    p.add_argument("--base", required=True)
    p.add_argument("--sizes", default="1000,3000")
    p.add_argument("--label", default="new")
    p.set_defaults(func=writers)
    p = sub.add_parser("table")
    p.add_argument("--out")
    p.set_defaults(func=table)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
