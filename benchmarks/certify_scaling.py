"""The certify stage alone, old code beside new, at N = M = 200 … 3000 (it must be linear in NM and ≤ 10 % of a design).

Usage:
    python benchmarks/certify_scaling.py run   [--base /work/wt-cert-base] [--sizes 200,500,1000,2000,3000]
    python benchmarks/certify_scaling.py design [--base ...]      # certify share of design() on expected-loss specs
    python benchmarks/certify_scaling.py table [--out benchmarks/results/certify_scaling.md]
    python benchmarks/certify_scaling.py share [--base-label certbase] [--new-label new]

``run`` times :func:`mechdesign.design.certify_design` (exact grid, exact check, repair, objective, bounds,
guarantees) on dense private kernels, each case in a fresh subprocess whose PYTHONPATH is the tree being
measured (``--base``: a baseline checkout, ``git worktree add --detach /work/wt-cert-base main``; new: this
checkout). The kernel is built in the child before the clock starts, from a seed, so both trees certify
the same floats. Two kernels per (prior set, N), for min_mass c = 1/(2N) and the simplex, ε = 1, M = N,
expected |x − y| loss:

* ``mixture``: K = Σ_k θ_k C_k, four matrices C_k(x, y) = v_k[(σ_k(x) + τ_k(y)) mod N] whose columns are
  permutations of a two-level extreme ray v_k of the (ε,𝒫)-PML cone (Remark 2 of the Dobrushin paper;
  levels 1 and m with the column constraint tight) and whose rows sum to 1: dense and private, with
  columns near the boundary;
* ``tight``: one such C (every column exactly on the boundary in real arithmetic), so rounding to the
  2^−52 grid breaks some columns by an ulp and the repair has to mix.

Recorded per case: seconds in certify_design (median of ``--repeat``), peak RSS of the child (includes
the interpreter, numpy and the kernel itself), the repair weight, and a hash of the exact kernel emitted
(the two trees must agree: the new code changes the cost, not the result). Results go to
``benchmarks/results/certify_scaling.jsonl``; ``table`` writes the markdown. ``share`` prints the certify
share of whole designs measured by ``benchmarks/scaling_families.py run`` (base label beside new label).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
JSONL = RESULTS / "certify_scaling.jsonl"

CHILD = r"""
import hashlib, json, resource, sys, time
import numpy as np
kind, n, variant, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
from mechdesign.spec.models import load_spec
from mechdesign.design import certify_design

def kernel(n, c, eps, parts, seed):
    rng = np.random.default_rng(seed)
    E = np.exp(eps)
    K = np.zeros((n, n))
    theta = rng.dirichlet(np.ones(parts))
    for k in range(parts):
        q = int(rng.integers(1, n))
        # two-level ray: q entries 1, n - q entries m, with 1 = E (c (q + (n - q) m) + (1 - n c) m)
        m = (1 / E - c * q) / (c * (n - q) + 1 - n * c) if c > 0 else 1 / E
        v = np.r_[np.ones(q), np.full(n - q, max(m, 0.0))]
        v /= v.sum()
        s, t = rng.permutation(n), rng.permutation(n)
        K += theta[k] * v[(s[:, None] + t[None, :]) % n]
    return K

c = 1 / (2 * n) if kind == "min_mass" else 0.0
prior_set = {"kind": "min_mass", "c": f"1/{2 * n}"} if kind == "min_mass" else {"kind": "simplex"}
spec = load_spec({"alphabet": n, "epsilon": 1, "prior_set": prior_set, "output_size": n,
                  "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"}})
K = kernel(n, c, 1.0, 4 if variant == "mixture" else 1, seed=n)
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    exact, _, objective, cert, ok = certify_design(spec, K, lp_objective=None, dual=None, sense=1)
    times.append(time.perf_counter() - t0)
ints = exact.int64() if hasattr(exact, "int64") else None
nums = ints if ints is not None else np.array(exact.numerators, dtype=np.int64)
print(json.dumps({
    "seconds": sorted(times)[len(times) // 2], "runs": times, "feasible": cert.feasible,
    "repair_weight": float(cert.repair_weight), "denominator": exact.denominator,
    "kernel_sha": hashlib.sha256(np.ascontiguousarray(nums).tobytes()).hexdigest()[:16],
    "worst_ratio": str(cert.worst_ratio), "objective": objective,
    "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
}))
"""

DESIGN_CHILD = r"""
import json, resource, sys, time
spec = json.loads(sys.argv[1])
from mechdesign import design
t0 = time.perf_counter()
r = design(spec)
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "certify_seconds": r.solve.certify_seconds, "status": r.status.value,
                  "feasible": r.certificate.feasible, "objective": r.objective,
                  "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))
"""

DESIGN_CASES = [
    ("el_abs_uniform", [200, 500, 1000]),
    ("el_abs_ldp", [200, 500, 1000]),
    ("el_hamming_uniform", [200, 500]),
]


def _child(code: str, args: list[str], tree: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1")
    try:  # cwd=tree: ``python -c`` puts the working directory ahead of PYTHONPATH on sys.path
        out = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=tree
        )
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load() -> float:
    return os.getloadavg()[0]


def _append(rec: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    with open(JSONL, "a") as f:
        f.write(json.dumps(rec) + "\n")


def _trees(args) -> dict[str, str]:
    """{record label: tree}: ``--labels`` picks base and/or new; ``--base-label``/``--new-label`` name them in
    the JSON lines (a later session's pair, e.g. ``main2``/``certshare``, sits beside the first one)."""
    trees = {"base": str(Path(args.base).resolve()), "new": str(HERE.parent)}
    names = {"base": args.base_label, "new": args.new_label}
    return {names[k]: v for k, v in trees.items() if k in args.labels.split(",")}


def cmd_run(args) -> None:
    trees = _trees(args)
    for kind in args.kinds.split(","):
        for variant in args.variants.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                for label, tree in trees.items():
                    repeat = args.repeat if n <= 1000 else 1
                    rec = _child(CHILD, [kind, str(n), variant, str(repeat)], tree, args.timeout)
                    rec.update(stage="certify", label=label, kind=kind, variant=variant, n=n, load=_load())
                    rec["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    _append(rec)
                    print(
                        f"{label:9s} {kind:8s} {variant:7s} N={n:5d} {rec.get('seconds', float('nan')):8.3f} s "
                        f"{rec.get('maxrss_mib', 0):7.0f} MiB w={rec.get('repair_weight')} "
                        f"sha={rec.get('kernel_sha')} {rec.get('error', '')}",
                        flush=True,
                    )


def cmd_design(args) -> None:
    sys.path.insert(0, str(HERE))
    from scaling_families import FAMILIES

    trees = _trees(args)
    for family, sizes in DESIGN_CASES:
        make = FAMILIES[family][0]
        for n in sizes:
            for label, tree in trees.items():
                rec = _child(DESIGN_CHILD, [json.dumps(make(n))], tree, args.timeout)
                rec.update(stage="design", label=label, family=family, n=n, load=_load())
                rec["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                _append(rec)
                print(
                    f"{label:4s} {family:20s} N={n:5d} total {rec.get('seconds', float('nan')):8.2f} s "
                    f"certify {rec.get('certify_seconds', float('nan')):7.3f} s {rec.get('error', '')}",
                    flush=True,
                )


def _latest(records: list[dict], **key) -> dict | None:
    found = [r for r in records if all(r.get(k) == v for k, v in key.items())]
    return found[-1] if found else None


def _s(v) -> str:
    return "–" if v is None else f"{v:.3f}"


PAIRS = [
    ("main2", "certshare", "the one-pass repair (commit 14c382c) against main e300129"),
]
"""(base label, new label, what the pair compares): one set of tables each, in this order."""


def _certify_tables(records: list[dict], base_label: str, new_label: str, title: str) -> list[str]:
    lines = []
    mine = [r for r in records if r.get("stage") == "certify" and r.get("label") in (base_label, new_label)]
    for kind, variant in sorted({(r["kind"], r["variant"]) for r in mine}):
        lines += [
            f"## certify_design, {kind}, {variant} kernel: {title}",
            "",
            f"base = `{base_label}`, new = `{new_label}`.",
            "",
            "| N = M | base s | new s | ratio | base MiB | new MiB | base s/Mentry | new s/Mentry"
            " | repair w | same | load |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |",
        ]
        sizes = sorted({r["n"] for r in mine if r.get("kind") == kind and r.get("variant") == variant})
        for n in sizes:
            b = _latest(mine, label=base_label, kind=kind, variant=variant, n=n) or {}
            w = _latest(mine, label=new_label, kind=kind, variant=variant, n=n) or {}
            bs, ns = b.get("seconds"), w.get("seconds")
            mentries = n * n / 1e6
            ratio = f"{bs / ns:.1f}×" if bs and ns else b.get("error", "–")
            same = "yes" if b.get("kernel_sha") and b.get("kernel_sha") == w.get("kernel_sha") else "no"
            weights = f"{b.get('repair_weight', float('nan')):.2g} / {w.get('repair_weight', float('nan')):.2g}"
            lines.append(
                f"| {n} | {_s(bs)} | {_s(ns)} | {ratio} | {b.get('maxrss_mib', 0):.0f} | {w.get('maxrss_mib', 0):.0f}"
                f" | {_s(bs and bs / mentries)} | {_s(ns and ns / mentries)} | {weights}"
                f" | {same} | {w.get('load', 0):.1f} |"
            )
        lines.append("")
    return lines


SHARE_FAMILIES = [
    "el_hamming_uniform",
    "bayes_uniform",
    "el_hamming_ldp",
    "el_abs_uniform",
    "el_sq_uniform",
    "el_abs_dirichlet",
    "el_sq_dirichlet",
    "el_hamming_dirichlet",
    "el_abs_ldp",
    "el_sq_ldp",
    "el_abs_dirichlet_ldp",
]
"""The expected-loss and Bayes families whose certify share the certshare session measured (not the worst case)."""


def _family_records(label: str) -> dict:
    """The last record of each (family, N) in ``scaling_families_<label>.jsonl``."""
    path = RESULTS / f"scaling_families_{label}.jsonl"
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[(r["family"], r["n"])] = r
    return out


def share_table(base_label: str = "certbase", new_label: str = "new") -> list[str]:
    """Markdown rows: the certify share of design() per family and N, base beside new, from the JSON lines of
    ``benchmarks/scaling_families.py run`` (``certify_seconds`` and ``seconds``, medians of the same runs)."""
    base, new = _family_records(base_label), _family_records(new_label)
    lines = [
        "| family | N | base total s | base certify s | base share | new total s | new certify s | new share |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cells(r):
        if not r or not r.get("seconds") or r.get("certify_seconds") is None:
            return ["–", "–", "–"]
        return [
            f"{r['seconds']:.2f}",
            f"{r['certify_seconds']:.3f}",
            f"{100 * r['certify_seconds'] / r['seconds']:.1f} %",
        ]

    for family in SHARE_FAMILIES:
        for n in (500, 1000, 2000, 3000):
            b, w = base.get((family, n)), new.get((family, n))
            if not b or not w or w.get("tree") != str(HERE.parent):
                continue  # only the rows this tree re-ran beside a base run
            lines.append("| " + " | ".join([family, str(n), *cells(b), *cells(w)]) + " |")
    return lines


def cmd_share(args) -> None:
    print("\n".join(share_table(args.base_label, args.new_label)))


def cmd_table(args) -> None:
    records = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    lines = [
        "# Certify stage: old vs new",
        "",
        "Written by `python benchmarks/certify_scaling.py table` from `certify_scaling.jsonl`;",
        "measured with `python benchmarks/certify_scaling.py run` and `... design` (one subprocess per case,",
        "base = `main` at the branch point in `/work/wt-cert-base`, new = this branch). Seconds are the wall",
        "time of `certify_design` (median of 3 runs up to N = 1000, one run above); peak RSS is the child's",
        "(interpreter, numpy and the float kernel included). s/Mentry = seconds per million kernel entries",
        "(N·M): flat when the cost is linear in NM. `same` = the two trees emitted the identical exact kernel",
        "(hash of the numerators). The machine has 2 cores shared with other jobs: load = 1-minute load average.",
        "repair w = the repair weight of base / new (0: the kernel passed as rounded, or snapped to a coarser grid).",
        "",
    ]
    for base_label, new_label, title in PAIRS:
        lines += _certify_tables(records, base_label, new_label, title)
    design = [r for r in records if r.get("stage") == "design"]
    if design:
        lines += [
            "## Certify share of design() (expected-loss families of `benchmarks/scaling_families.py`)",
            "",
            "| family | N | base total s | base certify s | base share | new total s | new certify s | new share |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for family, sizes in DESIGN_CASES:
            for n in sizes:
                b = _latest(design, label="base", family=family, n=n) or {}
                w = _latest(design, label="new", family=family, n=n) or {}
                if not b and not w:
                    continue

                def share(r):
                    if not r.get("seconds"):
                        return "–"
                    return f"{100 * r['certify_seconds'] / r['seconds']:.1f} %"

                lines.append(
                    f"| {family} | {n} | {_s(b.get('seconds'))} | {_s(b.get('certify_seconds'))} | {share(b)}"
                    f" | {_s(w.get('seconds'))} | {_s(w.get('certify_seconds'))} | {share(w)} |"
                )
        lines.append("")
    Path(args.out).write_text("\n".join(lines))
    print(f"wrote {args.out}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--base", default="/work/wt-cert-base")
    r.add_argument("--sizes", default="200,500,1000,2000,3000")
    r.add_argument("--kinds", default="min_mass,simplex")
    r.add_argument("--variants", default="mixture,tight")
    r.add_argument("--repeat", type=int, default=3)
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("--labels", default="base,new", help="which trees to run: base, new or both")
    d = sub.add_parser("design")
    d.add_argument("--base", default="/work/wt-cert-base")
    d.add_argument("--timeout", type=float, default=900)
    d.add_argument("--labels", default="base,new")
    for q in (r, d):
        q.add_argument("--base-label", default="base", help="label of the base tree's records")
        q.add_argument("--new-label", default="new", help="label of this tree's records")
    t = sub.add_parser("table")
    t.add_argument("--out", default=str(RESULTS / "certify_scaling.md"))
    sh = sub.add_parser("share", help="certify share of design() from scaling_families JSON lines (markdown)")
    sh.add_argument("--base-label", default="certbase")
    sh.add_argument("--new-label", default="new")
    args = p.parse_args()
    {"run": cmd_run, "design": cmd_design, "table": cmd_table, "share": cmd_share}[args.cmd](args)


if __name__ == "__main__":
    main()
