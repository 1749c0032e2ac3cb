"""Structured mechanisms at scale: ``mechdesign privatize`` + ``mechdesign estimate`` (with intervals) through
files, each command in its own process (time includes reading and writing the files; peak memory is the
process's maximum resident set size).

    python benchmarks/structured_scale.py [--quick] [--only FAMILIES] [--epsilon EPS] [--format csv,parquet]
        [--baseline DIR] [--out benchmarks/results/structured_scale.md]

``--format`` lists the released file's formats to measure: ``csv`` (the text format, every family) and
``parquet`` (the binary format of set-valued reports: subset selection and unary encoding only); default csv.

``--baseline DIR`` (a checkout of an earlier commit, e.g. ``git archive COMMIT | tar -x -C DIR``) runs each
privatize command of the baseline too (always to a .csv: the format every commit has), alternating with this
tree's, and adds the baseline's time and the ratio to the table.

Cases (targets on 2 cores): k-RR and Hadamard response at N = 10^5, n = 10^6 (<= 30 s each command);
local hashing with a pool of 10^4 seeds at N = 10^5, n = 10^6 (<= 60 s); subset selection and unary
encoding at N = 10^4, n = 10^5 (<= 30 s; at ε = 3, reports of ~N/(e^3 + 1) = 474 symbols, and at ε = 1,
2,689 symbols); memory <= 4 GiB. ``--quick`` divides n by 10.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUNNER = (
    "import resource, sys\n"
    "from mechdesign.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "print('MAXRSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)

SET_VALUED = ("subset_selection", "unary_encoding")

CASES = [
    # family, N, n, epsilon, extra options, target seconds
    ("krr", 100_000, 1_000_000, "1", [], 30),
    ("hadamard_response", 100_000, 1_000_000, "1", [], 30),
    ("local_hashing", 100_000, 1_000_000, "1", ["--seeds", "10000"], 60),
    ("subset_selection", 10_000, 100_000, "3", [], 30),
    ("unary_encoding", 10_000, 100_000, "3", [], 30),
    # at eps = 1 a report holds ~N/(e + 1) = 2,689 symbols: a 1.3 GB released file at n = 10^5
    ("subset_selection", 10_000, 100_000, "1", [], 30),
    ("unary_encoding", 10_000, 100_000, "1", [], 30),
]


def write_inputs(folder: Path, n_symbols: int, n: int, seed: int = 0) -> tuple[Path, Path]:
    labels = folder / f"labels_{n_symbols}.txt"
    data = folder / f"data_{n_symbols}_{n}.csv"
    if not labels.exists():
        labels.write_text("\n".join(f"item{i}" for i in range(n_symbols)) + "\n")
    if not data.exists():
        rng = np.random.default_rng(seed)
        x = np.minimum(rng.zipf(1.3, size=n) - 1, n_symbols - 1)  # a heavy-tailed column
        names = np.array([f"item{i}" for i in range(n_symbols)], dtype=object)
        with open(data, "w") as fh:
            fh.write("id,value\n")
            fh.writelines(f"{i},{v}\n" for i, v in enumerate(names[x]))
    return labels, data


def child_cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], root: Path = ROOT) -> tuple[float, float, int]:
    """(wall seconds, peak MiB, exit status) of one command in its own process; its CPU seconds (user +
    system) are kept in ``run.cpu`` (wall time on shared cores depends on the load, CPU time much less)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    t0, c0 = time.perf_counter(), child_cpu_seconds()
    # run in ``root``: ``python -c`` puts the working directory first on sys.path, ahead of PYTHONPATH, so a
    # baseline run from another checkout would otherwise import this one's package
    proc = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, env=env, cwd=root)
    seconds = time.perf_counter() - t0
    run.cpu = child_cpu_seconds() - c0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    rss = next(int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("MAXRSS"))
    return seconds, rss / 1024, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="n / 10")
    ap.add_argument("--only", help="comma-separated families")
    ap.add_argument("--epsilon", help="only the cases at this epsilon (as written in CASES)")
    ap.add_argument("--format", default="csv", help="comma-separated released-file formats: csv, parquet")
    ap.add_argument("--baseline", help="a checkout of the code to compare privatize with, side by side")
    ap.add_argument("--out", help="write the markdown table here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for (family, n_symbols, n, eps, extra, target), fmt in itertools.product(CASES, a.format.split(",")):
            if a.only and family not in a.only.split(","):
                continue
            if a.epsilon and eps != a.epsilon:
                continue
            if fmt == "parquet" and family not in SET_VALUED:
                continue
            n = n // 10 if a.quick else n
            labels, data = write_inputs(folder, n_symbols, n)
            released, mech = folder / f"rel_{family}.{fmt}", folder / f"mech_{family}.json"
            common = ["--epsilon", eps, "--alphabet", str(labels)]
            privatize = ["privatize", "--mechanism", family, *common, *extra, "--input", str(data), "--column", "value"]
            privatize += ["--seed", "1", "--save-mechanism", str(mech)]
            baseline_out = ["-o", str(folder / f"base_{family}.csv")]
            t_base = (run(privatize + baseline_out, Path(a.baseline))[0], run.cpu) if a.baseline else None
            if a.baseline:
                (folder / f"base_{family}.csv").unlink()
            t_priv, mem_priv, _ = run(privatize + ["-o", str(released)])
            cpu_priv = run.cpu
            t_est, mem_est, _ = run(
                ["estimate", "--mechanism-file", str(mech), "--input", str(released), "--column", "value"]
                + ["-o", str(folder / "est.csv")]
            )
            cpu_est = run.cpu
            size = released.stat().st_size / 2**20
            rows.append(
                (
                    family,
                    n_symbols,
                    n,
                    eps,
                    " ".join(extra),
                    t_priv,
                    mem_priv,
                    t_est,
                    mem_est,
                    size,
                    target,
                    t_base,
                    cpu_priv,
                    fmt,
                    cpu_est,
                )
            )
            print(rows[-1], os.getloadavg(), flush=True)
            released.unlink()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    lines = [
        "# Structured mechanisms at scale",
        "",
        f"`python benchmarks/structured_scale.py{' --quick' if a.quick else ''}` at commit {commit}, 2 shared cores. "
        "Each command runs in its own process through files (times include reading and writing); "
        "memory is the process's peak resident set.",
        "",
        "| family | N | n | ε | options | format | privatize s | privatize CPU s | privatize MiB | estimate s | estimate CPU s | estimate MiB | released file MiB | target s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    if a.baseline:
        lines[-2] += " baseline privatize s (csv) | baseline CPU s | CPU ratio baseline / this |"
        lines[-1] += " --- | --- | --- |"
    for r in rows:
        lines.append(
            f"| {r[0]} | {r[1]:,} | {r[2]:,} | {r[3]} | {r[4] or '-'} | {r[13]} | {r[5]:.1f} | {r[12]:.1f} | {r[6]:.0f} | {r[7]:.1f} | {r[14]:.1f} | {r[8]:.0f} | {r[9]:.0f} | {r[10] or '-'} |"
            + (f" {r[11][0]:.1f} | {r[11][1]:.1f} | {r[11][1] / r[12]:.2f} |" if r[11] else "")
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
