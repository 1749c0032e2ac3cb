"""Start-up time of the command line, a baseline checkout beside this one.

    git worktree add --detach /tmp/startup-base f8d3c6b     # the main before lazy imports
    python benchmarks/startup.py --base /tmp/startup-base [--repeat 15] [--out benchmarks/results/startup.md]

Each command runs in a fresh process with ``PYTHONPATH`` set to one checkout, the two checkouts alternating run by
run, so both see the same machine load. Wall time of the whole process (interpreter start, imports, work, exit),
measured around ``subprocess.run``, and its CPU time (user + system, from ``getrusage``), which a loaded machine
stretches much less than the wall time; the table gives medians, the fastest wall time, and the ratio of the
medians. Commands: the bare interpreter (the floor), ``import mechdesign``, ``mechdesign --help`` and
``mechdesign solve problems/theorem1_n10.yaml`` (the console script of the environment, which imports from
``PYTHONPATH`` first). The 1-minute load average at the start and end is recorded: on a shared machine the
absolute seconds move with it, the ratios much less.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[tuple[str, list[str]]]:
    script = shutil.which("mechdesign") or ""
    cli = [script] if script else [sys.executable, "-m", "mechdesign"]
    return [
        ("python -c pass (the interpreter alone)", [sys.executable, "-c", "pass"]),
        ("python -c 'import mechdesign'", [sys.executable, "-c", "import mechdesign"]),
        ("mechdesign --help", [*cli, "--help"]),
        ("mechdesign solve problems/theorem1_n10.yaml", [*cli, "solve", "problems/theorem1_n10.yaml"]),
    ]


def _run(cmd: list[str], tree: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one run of ``cmd`` with ``PYTHONPATH=tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} in {tree} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _commit(tree: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
    return out.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the baseline checkout (a git worktree)")
    ap.add_argument("--new", default=str(ROOT), help="the checkout measured against it (default: this one)")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--out", default=None, help="write the markdown table here")
    args = ap.parse_args(argv)
    trees = {"base": Path(args.base).resolve(), "new": Path(args.new).resolve()}
    commands = _commands()
    times = {(name, label): [] for name, _ in commands for label in trees}
    load_before = os.getloadavg()
    for _name, cmd in commands:  # one warm-up each (bytecode caches, page cache)
        for tree in trees.values():
            _run(cmd, tree)
    for rep in range(args.repeat):
        for name, cmd in commands:
            order = ("base", "new") if rep % 2 == 0 else ("new", "base")
            for label in order:
                times[(name, label)].append(_run(cmd, trees[label]))
    load_after = os.getloadavg()

    lines = [
        "# Start-up time of the command line",
        "",
        f"Command: `python benchmarks/startup.py --base {args.base} --repeat {args.repeat}` "
        f"(base = commit {_commit(trees['base'])}, new = commit {_commit(trees['new'])}); "
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load average "
        f"(1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after. Seconds of wall time per process, "
        f"{args.repeat} runs each, base and new alternating.",
        "",
        "| command | base wall s (median / fastest) | new wall s (median / fastest) | new / base wall "
        "| base CPU s | new CPU s | new / base CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, _ in commands:
        bw, nw = ([w for w, _ in times[(name, k)]] for k in ("base", "new"))
        bc, nc = (statistics.median([c for _, c in times[(name, k)]]) for k in ("base", "new"))
        lines.append(
            f"| {name} | {statistics.median(bw):.3f} / {min(bw):.3f} | {statistics.median(nw):.3f} / {min(nw):.3f} | "
            f"{statistics.median(nw) / statistics.median(bw):.2f} | {bc:.3f} | {nc:.3f} | {nc / bc:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
