"""frequency_estimation: the targets of the design (time, value, certified bound and gap).

Usage:  python benchmarks/frequency_estimation.py [--quick] [--exact-only] [--out FILE]

* exact (all extreme rays listed): Dirichlet(1) prior (seed 0), simplex and min_mass c = 1/(2N), N = 6..12, full
  pipeline ``design`` (solve + exact certification); ``--exact-only``: this table alone, with the load average
  before and after it (the machine may be shared);
* symmetric (uniform prior): the optimum's value alone for N up to 10,000 (the class reduction), and the full
  design with its explicit balanced cyclic kernel for N = 56 and 100;
* ε from accuracy: ``epsilon: {accuracy: {rmse, n}}`` at N = 56, uniform prior, ε-LDP (bisection + final design).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np

from mechdesign import design


def _dirichlet(n, seed=0):
    P = np.random.default_rng(seed).dirichlet(np.ones(n)).round(8)
    P = np.maximum(P, 1e-8)
    P[-1] = 1 - P[:-1].sum()
    return [f"{v:.8f}" for v in P]


def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def exact_rows(quick):
    ns = (6, 8) if quick else (6, 8, 10, 12)
    out = [
        "| N | prior set | ε | seconds | status | U | dual bound | rel. gap |",
        "| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for n in ns:
        for name, ps in (("simplex", "simplex"), ("min_mass c=1/(2N)", {"kind": "min_mass", "c": f"1/{2 * n}"})):
            for eps in (1.0,) if n < 12 or quick else (0.5, 1.0, 2.0):
                spec = {
                    "alphabet": n,
                    "epsilon": eps,
                    "prior_set": ps,
                    "objective": {"kind": "frequency_estimation", "prior": _dirichlet(n)},
                }
                t = time.perf_counter()
                r = design(spec)
                s = time.perf_counter() - t
                c = r.certificate
                gap = (r.objective - c.dual_bound) / r.objective
                out.append(
                    _row(
                        [
                            n,
                            name,
                            eps,
                            f"{s:.2f}",
                            r.status.value,
                            f"{r.objective:.10g}",
                            f"{c.dual_bound:.10g}",
                            f"{gap:.2e}",
                        ]
                    )
                )
                print(out[-1], flush=True)
    return out


def symmetric_rows(quick):
    from mechdesign.objectives.frequency_symmetric import symmetric_optimum
    from mechdesign.privacy.ray_families import families
    from mechdesign.spec.models import spec_from_dict

    out = [
        "| N | prior set | ε | seconds (value only) | U* | best class |",
        "| ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for n in (10, 100, 1000, 10000):
        for name, ps in (("simplex", "simplex"), ("min_mass c=1/(2N)", {"kind": "min_mass", "c": f"1/{2 * n}"})):
            spec = spec_from_dict(
                {"alphabet": n, "epsilon": 1, "prior_set": ps, "objective": {"kind": "frequency_estimation"}}
            )
            t = time.perf_counter()
            opt = symmetric_optimum(families(spec), n)
            s = time.perf_counter() - t
            out.append(_row([n, name, 1, f"{s:.4f}", f"{opt.value:.10g}", opt.description]))
            print(out[-1], flush=True)
    out += [
        "",
        "| N | prior set | ε | seconds (full design) | status | outputs M | U | dual bound | rel. gap |",
        "| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for n in (56,) if quick else (56, 100):
        for name, ps in (("simplex", "simplex"), ("min_mass c=1/(2N)", {"kind": "min_mass", "c": f"1/{2 * n}"})):
            for eps in (0.5, 1, 2, 4):
                spec = {"alphabet": n, "epsilon": eps, "prior_set": ps, "objective": {"kind": "frequency_estimation"}}
                t = time.perf_counter()
                r = design(spec)
                s = time.perf_counter() - t
                c = r.certificate
                gap = (r.objective - c.dual_bound) / r.objective
                out.append(
                    _row(
                        [
                            n,
                            name,
                            eps,
                            f"{s:.2f}",
                            r.status.value,
                            r.kernel.shape[1],
                            f"{r.objective:.10g}",
                            f"{c.dual_bound:.10g}",
                            f"{gap:.2e}",
                        ]
                    )
                )
                print(out[-1], flush=True)
    return out


def accuracy_rows():
    out = [
        "| N | prior set | rmse | n | seconds | ε_lo | ε_hi | width | U at ε_hi | status |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for rmse in (0.05, 0.02, 0.01):
        spec = {
            "alphabet": 56,
            "epsilon": {"accuracy": {"rmse": rmse, "n": 100000}},
            "prior_set": "simplex",
            "objective": {"kind": "frequency_estimation"},
        }
        t = time.perf_counter()
        r = design(spec)
        s = time.perf_counter() - t
        q = r.epsilon_requirement
        out.append(
            _row(
                [
                    56,
                    "simplex",
                    rmse,
                    100000,
                    f"{s:.2f}",
                    f"{q.epsilon_low:.12g}",
                    q.epsilon_text,
                    f"{q.epsilon - q.epsilon_low:.2e}",
                    f"{r.objective:.8g}",
                    r.status.value,
                ]
            )
        )
        print(out[-1], flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--exact-only", action="store_true", help="only the exact table (all extreme rays listed)")
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    flags = (" --quick" if args.quick else "") + (" --exact-only" if args.exact_only else "")
    load_before = os.getloadavg()
    exact = exact_rows(args.quick)
    load_after = os.getloadavg()
    lines = [
        "# frequency_estimation: exact, symmetric and ε-from-accuracy targets",
        "",
        f"Command: `python benchmarks/frequency_estimation.py{flags}`, commit {commit}, "
        "2 cores shared with other jobs (times are wall clock, noisy). rel. gap = (U − dual bound)/U, the bound being "
        "the rigorous Lagrangian bound of mechdesign/engines/a_optimal.py (symmetric: the closed form minus its "
        "rounding).",
        "",
        "## Exact: all extreme rays listed, Dirichlet(1) prior (seed 0), full design with certification",
        "",
        f"Load average (1, 5, 15 min) before the table: {', '.join(f'{v:.2f}' for v in load_before)}; after it: "
        f"{', '.join(f'{v:.2f}' for v in load_after)}.",
        "",
        *exact,
        "",
    ]
    if not args.exact_only:
        lines += [
            "## Symmetric: uniform prior, any N",
            "",
            *symmetric_rows(args.quick),
            "",
            "## ε from accuracy: N = 56, uniform prior, ε-LDP, n = 100,000 (bisection to width ≤ 1e-6, then the "
            "design)",
            "",
            *accuracy_rows(),
            "",
        ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
