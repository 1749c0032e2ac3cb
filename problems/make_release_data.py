"""Make a CSV of secrets to release: ``python problems/make_release_data.py SPEC [--rows R] [--seed S] [-o data.csv]``.

Column ``secret`` holds the spec's labels drawn i.i.d. from the fixed distribution P(x_i) ∝ 1/(i + 1)
(a Zipf law over the alphabet in its order), column ``id`` the row number. The true distribution is
printed to stderr, so the output of ``mechdesign estimate`` can be compared with it (docs/tutorials/release-and-estimate.md).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from mechdesign import load_spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="YAML spec whose alphabet labels the secrets")
    ap.add_argument("--rows", type=int, default=100_000, help="number of records (default 100000)")
    ap.add_argument("--seed", type=int, default=2026, help="seed (default 2026)")
    ap.add_argument("-o", "--output", default="data.csv", help="output CSV (default data.csv)")
    args = ap.parse_args(argv)
    labels = load_spec(args.spec).labels
    weights = 1.0 / np.arange(1, len(labels) + 1)
    prior = weights / weights.sum()
    x = np.random.default_rng(args.seed).choice(len(labels), size=args.rows, p=prior)
    names = np.array(labels, dtype=object)[x]
    with open(args.output, "w", encoding="utf-8", newline="") as fh:
        fh.write("id,secret\n")
        fh.writelines(f"{i},{v}\n" for i, v in enumerate(names))
    print(
        f"wrote {args.output}: {args.rows} rows; true P_X: "
        + ", ".join(f"{lab} {p:.4f}" for lab, p in zip(labels, prior)),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
