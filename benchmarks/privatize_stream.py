"""``mechdesign privatize`` streams: peak memory against the number of records, explicit kernel (k-RR, N = 6)
and a structured mechanism (k-RR, N = 6), each command in its own process.

    python benchmarks/privatize_stream.py [--sizes 1000000,10000000] [--out benchmarks/results/privatize_stream.md]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from structured_scale import ROOT, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        labels = ["a", "b", "c", "d", "e", "f"]
        (folder / "labels.txt").write_text("\n".join(labels) + "\n")
        e = 3  # k-RR at eps = log 3: K_x(x) = 3/8, else 1/8
        (folder / "krr.csv").write_text(
            "\n".join(",".join("3/8" if i == j else "1/8" for j in range(6)) for i in range(6)) + "\n"
        )
        for n in (int(v) for v in a.sizes.split(",")):
            data = folder / "data.csv"
            rng = np.random.default_rng(0)
            with open(data, "w") as fh:
                fh.write("id,answer\n")
                for start in range(0, n, 1_000_000):
                    x = rng.integers(0, 6, size=min(1_000_000, n - start))
                    fh.writelines(f"{start + i},{labels[v]}\n" for i, v in enumerate(x.tolist()))
            out = folder / "out.csv"
            common = ["--input", str(data), "--column", "answer", "--seed", "1", "-o", str(out)]
            t, mem, _ = run(["privatize", "--kernel", str(folder / "krr.csv"), "--labels", ",".join(labels), *common])
            rows.append(("explicit kernel (k-RR, N = 6)", n, t, mem))
            print(rows[-1], flush=True)
            t, mem, _ = run(
                [
                    "privatize",
                    "--mechanism",
                    "krr",
                    "--epsilon",
                    f"log({e})",
                    "--alphabet",
                    str(folder / "labels.txt"),
                    *common,
                ]
            )
            rows.append(("structured k-RR (N = 6)", n, t, mem))
            print(rows[-1], flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    lines = [
        "# privatize streams: memory against the number of records",
        "",
        f"`python benchmarks/privatize_stream.py --sizes {a.sizes}` at commit {commit}, 2 shared cores; rows are read, "
        "sampled and written in blocks of 65,536 (`--block-rows`).",
        "",
        "| mechanism | records | seconds | peak MiB |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {m} | {n:,} | {t:.1f} | {mem:.0f} |" for m, n, t, mem in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
