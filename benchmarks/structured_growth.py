"""How the time of ``mechdesign privatize`` and ``mechdesign estimate`` (with intervals) grows with the number of
reports n and the alphabet size N, for structured mechanisms, through files, each command in its own process
(the runner and the input files of ``benchmarks/structured_scale.py``).

    python benchmarks/structured_growth.py [--out benchmarks/results/structured_growth.md]

Grid: k-RR and Hadamard response at N = 10^5 with n = 10^5, 3·10^5, 10^6 and at n = 10^6 with N = 10^3, 10^4;
subset selection (ε = 3) at N = 10^4 with n = 2·10^4, 5·10^4, 10^5. The table gives wall and CPU seconds and
the CPU seconds per 10^6 reports: constant along n when the work is linear in n.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from structured_scale import ROOT, run, write_inputs

GRID = [
    # family, N, n, epsilon
    *[("krr", 100_000, n, "1") for n in (100_000, 300_000, 1_000_000)],
    *[("krr", big_n, 1_000_000, "1") for big_n in (1_000, 10_000)],
    *[("hadamard_response", 100_000, n, "1") for n in (100_000, 300_000, 1_000_000)],
    *[("hadamard_response", big_n, 1_000_000, "1") for big_n in (1_000, 10_000)],
    *[("subset_selection", 10_000, n, "3") for n in (20_000, 50_000, 100_000)],
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="write the markdown table here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for family, n_symbols, n, eps in GRID:
            labels, data = write_inputs(folder, n_symbols, n)
            released, mech = folder / "rel.csv", folder / "mech.json"
            common = ["--epsilon", eps, "--alphabet", str(labels), "--input", str(data), "--column", "value"]
            t_priv, _, _ = run(
                ["privatize", "--mechanism", family, *common, "--seed", "1", "-o", str(released)]
                + ["--save-mechanism", str(mech)]
            )
            cpu_priv = run.cpu
            t_est, _, _ = run(
                [
                    "estimate",
                    "--mechanism-file",
                    str(mech),
                    "--input",
                    str(released),
                    "--column",
                    "value",
                    "-o",
                    str(folder / "est.csv"),
                ]
            )
            cpu_est = run.cpu
            rows.append((family, n_symbols, n, eps, t_priv, cpu_priv, t_est, cpu_est))
            print(rows[-1], flush=True)
            released.unlink()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    lines = [
        "# Structured mechanisms: growth of time with n and N",
        "",
        f"`python benchmarks/structured_growth.py --out benchmarks/results/structured_growth.md` at commit {commit}, "
        "2 cores (shared: wall times vary with the load; CPU seconds are user + system of the command's process).",
        "",
        "| family | N | n | ε | privatize s (wall / CPU) | estimate s (wall / CPU) | CPU s per 10^6 reports (privatize / estimate) |",
        "| --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for family, n_symbols, n, eps, tp, cp, te, ce in rows:
        per = 1e6 / n
        lines.append(
            f"| {family} | {n_symbols:,} | {n:,} | {eps} | {tp:.1f} / {cp:.1f} | {te:.1f} / {ce:.1f} | "
            f"{cp * per:.1f} / {ce * per:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
