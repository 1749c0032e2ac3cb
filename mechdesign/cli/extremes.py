"""``mechdesign extremes SPEC``: extremal binary mechanisms and extreme rays of the PML cone (small N).

Lists the vertices p of the binary (ε,𝒫)-PML kernels [p, 1 − p] (cdd, N ≤ 8),
or with ``--rays`` the extreme rays of the column cone C(ε,𝒫) (max entry 1),
which the sublinear designs combine (:mod:`mechdesign.privacy.extremes`). Only the
spec's alphabet, epsilon and prior_set are used.
"""

from __future__ import annotations

import json


def _cmd_extremes(args) -> int:
    from mechdesign.cli.main import EXIT_OK, _write
    from mechdesign.privacy.extremes import binary_extremes, extreme_rays
    from mechdesign.spec.models import load_spec
    from pathlib import Path

    from mechdesign.theory.epsilon_requirement import resolve_spec

    spec, _ = resolve_spec(load_spec(Path(args.spec)))  # epsilon: {protect: ...} → the eps design() enforces
    n, eps = spec.n, spec.epsilon.value
    if args.rays:
        P = extreme_rays(spec.prior_set, n, eps)
        what = "extreme rays of the (eps,P)-PML column cone (max entry 1)"
    else:
        P = binary_extremes(spec.prior_set, n, eps)
        what = "extremal binary (eps,P)-PML mechanisms [p, 1 - p] (first column p)"
    if args.json:
        _write(
            json.dumps(
                {
                    "kind": "rays" if args.rays else "binary",
                    "epsilon": eps,
                    "labels": spec.labels,
                    "vectors": P.tolist(),
                },
                indent=2,
            )
            + "\n",
            args.output,
        )
        return EXIT_OK
    lines = [
        f"{len(P)} {what}; N = {n}, eps = {spec.epsilon.text}, prior set {spec.prior_set.kind}",
        "  " + "  ".join(f"{lab:>10}" for lab in spec.labels) + ("" if args.rays else "  eta_TV"),
    ]
    for p in P:
        tail = "" if args.rays else f"  {p.max() - p.min():.6f}"
        lines.append("  " + "  ".join(f"{v:10.6f}" for v in p) + tail)
    _write("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("extremes", help="list the extremal binary mechanisms (or cone rays) of a spec's privacy set")
    p.add_argument("spec", help="path to a YAML spec (alphabet, epsilon and prior_set are used)")
    p.add_argument("--rays", action="store_true", help="list the extreme rays of the column cone instead")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE")
    p.set_defaults(func=_cmd_extremes)
