"""``mechdesign estimate (--kernel FILE | --spec SPEC) (--input released.csv --column NAME | --counts FILE)
[--method mle|inversion|projected] [--confidence 0.95] [--bootstrap B] [--simultaneous] [--json] [-o estimates.csv]``.

Decodes released data: counts the outputs of one column of a CSV that ``privatize`` wrote (streamed,
:func:`mechdesign.release.estimate.count_csv_column`), or reads pre-aggregated (label, count) rows, and
estimates P_X (:func:`mechdesign.release.estimate.estimate_distribution`). The mechanism and its labels
are read exactly as ``privatize`` reads them (:func:`mechdesign.release.privatize.load_mechanism`); with
both ``--kernel`` and ``--spec``, the kernel file is used with the spec's labels, after checking that
they agree on N and M. Every input is checked before anything is written: bad input exits 2 with one line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mechdesign.release.atomic_write import write_text_atomically
from mechdesign.spec.errors import InputError

__all__ = ["register"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "estimate",
        help="estimate the distribution of the secret from released outputs",
        description="Estimate P_X from the outputs of a mechanism (a privatized CSV column, or counts).",
    )
    from mechdesign.release.structured_cli import add_structured_arguments

    p.add_argument("--kernel", help="kernel file (.csv, .json, .npy), as given to privatize")
    add_structured_arguments(p, p.add_mutually_exclusive_group())
    p.add_argument("--spec", help="YAML spec: the spec's labels (and, without --kernel, its designed kernel)")
    p.add_argument("--labels", help="comma-separated input labels for --kernel (default 0..N-1)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", help="released CSV file with a header row (as privatize writes it)")
    src.add_argument("--counts", help="CSV of pre-aggregated (label, count) rows, optional header")
    p.add_argument("--column", help="name of the released column in --input")
    p.add_argument(
        "--method",
        default=None,
        choices=["mle", "inversion", "projected", "unbiased"],
        help="mle (EM, default for kernels), inversion (least squares), projected (inversion mapped to the simplex); "
        "structured mechanisms: unbiased (default), projected, or mle (every family but local_hashing with a "
        "fresh seed per report)",
    )
    p.add_argument(
        "--projection",
        default="euclidean",
        choices=["euclidean", "clip"],
        help="for --method projected: Euclidean projection (default) or clip-and-renormalise",
    )
    p.add_argument("--confidence", default="0.95", help="confidence level of the intervals, in (0, 1); default 0.95")
    p.add_argument(
        "--simultaneous",
        action="store_true",
        help="a band covering all symbols at once (Bonferroni) instead of pointwise intervals",
    )
    p.add_argument(
        "--bootstrap",
        default=None,
        help="parametric bootstrap resamples for mle/projected (0: no intervals); default 200. Structured "
        "mechanisms with --method mle: B resamples, or 0 for asymptotic intervals (default: 200 when the "
        "reports are small enough, asymptotic otherwise)",
    )
    p.add_argument("--seed", default="0", help="seed of the bootstrap (default 0)")
    p.add_argument("--tol", default="1e-10", help="EM stops when (L* - L)/n <= tol (certified); default 1e-10")
    p.add_argument("--max-iter", default="100000", help="EM iteration limit; default 100000")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the estimates to FILE (CSV: label,estimate,standard_error,lower,upper,identified; "
        "JSON if FILE ends in .json)",
    )
    p.set_defaults(func=_cmd_estimate)


def _number(text: str, option: str, kind=float, rule: str = ""):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise InputError(f"{option}: not {'an integer' if kind is int else 'a number'}: {text!r}") from None
    return value


def _options(args) -> dict:
    import math

    confidence = _number(args.confidence, "--confidence")
    if not (math.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"--confidence: must lie in (0, 1), found {args.confidence}")
    bootstrap = 200 if args.bootstrap is None else _number(args.bootstrap, "--bootstrap", int)
    if bootstrap < 0:
        raise InputError(f"--bootstrap: must be an integer >= 0, found {args.bootstrap}")
    tol = _number(args.tol, "--tol")
    if not (math.isfinite(tol) and tol > 0):
        raise InputError(f"--tol: must be a number > 0, found {args.tol}")
    max_iter = _number(args.max_iter, "--max-iter", int)
    if max_iter < 1:
        raise InputError(f"--max-iter: must be an integer >= 1, found {args.max_iter}")
    seed = _number(args.seed, "--seed", int)
    if seed < 0:
        raise InputError(f"--seed: must be an integer >= 0, found {args.seed}")
    return dict(
        method=args.method or "mle",
        confidence=confidence,
        bootstrap=bootstrap,
        simultaneous=args.simultaneous,
        projection=args.projection,
        seed=seed,
        tol=tol,
        max_iter=max_iter,
    )


def load_estimate_mechanism(spec: str | None, kernel: str | None, labels=None):
    """The mechanism whose outputs are decoded: as privatize loads it, or a kernel file checked against a spec."""
    from mechdesign.release.mechanism import Mechanism
    from mechdesign.release.privatize import _NotCertified, load_mechanism

    if spec is None and kernel is None:
        raise InputError("estimate: give the mechanism with --kernel FILE or --spec SPEC")
    if spec is not None and kernel is not None:
        from mechdesign.objectives.registry import objective_rules
        from mechdesign.release.kernel_io import read_kernel
        from mechdesign.spec.models import load_spec

        loaded = load_spec(Path(spec))
        exact = read_kernel(kernel)  # int64 numerators when every row sums to exactly 1
        n, m = exact.shape
        if (n, m) != (loaded.n, loaded.m):
            raise InputError(
                f"--kernel/--spec: disagree: {kernel} is {n} x {m} but {spec} has "
                f"N = {loaded.n} secrets and M = {loaded.m} outputs"
            )
        if labels is not None:
            raise InputError("--labels: not allowed with --spec (the labels are the spec's alphabet)")
        outputs = loaded.labels if objective_rules(loaded).outputs_estimate_x and m == n else None
        return Mechanism.from_kernel(exact, loaded.labels, outputs)
    if labels is not None and spec is not None:
        raise InputError("--labels: not allowed with --spec (the labels are the spec's alphabet)")
    try:
        return load_mechanism(spec, kernel, labels)
    except _NotCertified as exc:
        raise InputError(f"--spec: {exc}") from None


def _render(result, mech) -> str:
    from io import StringIO

    import numpy as np

    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    con = Console(file=buf, width=120, force_terminal=False, color_system=None, highlight=False)
    n, m = mech.shape
    level = f"{100 * result.confidence:g}%" + (" simultaneous (Bonferroni)" if result.simultaneous else "")
    con.print(f"mechdesign estimate: {result.method}, N = {n} secrets, M = {m} outputs, n = {result.n} reports")
    table = Table(title=f"estimate of P_X, {level} intervals")
    identified = result.is_identified()
    columns = ["label", "estimate", "standard error", "lower", "upper"] + ([] if identified.all() else ["note"])
    for col in columns:
        table.add_column(col, justify="left" if col in ("label", "note") else "right")

    def fmt(arr, i):
        return "-" if arr is None or not np.isfinite(arr[i]) else f"{arr[i]:.6f}"

    for i, lab in enumerate(result.labels):
        row = [
            lab,
            f"{result.estimate[i]:.6f}",
            fmt(result.standard_error, i),
            fmt(result.lower, i),
            fmt(result.upper, i),
        ]
        if not identified.all():
            row.append("" if identified[i] else "not identified")
        table.add_row(*row)
    con.print(table)
    d = result.diagnostics
    con.print(f"uncertainty: {result.uncertainty}")
    if "loglik" in d:
        con.print(
            f"log-likelihood {d['loglik']:.12g}, {d['iterations']} EM maps + {d['newton_iterations']} Newton "
            f"steps, certified gap "
            f"(L* - L)/n <= {d['gap']:.3g} (tol {d['tolerance']:g}, {'converged' if d['converged'] else 'NOT converged'})"
        )
    if "residual" in d:
        con.print(
            f"||K^T p - q_hat|| = {d['residual']:.3g}"
            + (f", moved {d['moved']:.3g} by the projection" if "moved" in d else "")
        )
    con.print(f"rank of K: {d['rank']}")
    if not identified.all():
        con.print(
            "not identified: the reports fit every value of that mass in the range of the maximisers equally "
            "well (the point estimate is one of them); its interval is that range widened by sampling "
            "uncertainty (docs/how-to/release-and-estimate.md)"
        )
    return buf.getvalue()  # warnings go to standard error, once (_cmd_estimate)


def _cmd_estimate(args) -> int:
    import warnings

    from mechdesign.release.estimate import count_csv_column, estimate_distribution, read_counts_csv

    structured = _structured(args)
    if structured is not None:
        return _estimate_structured(args, structured)
    if args.method == "unbiased":
        raise InputError("--method unbiased: for structured mechanisms; a kernel's unbiased estimator is inversion")
    options = _options(args)
    if args.input is not None and not args.column:
        raise InputError("--column: required with --input (the name of the released column)")
    if args.counts is not None and args.column:
        raise InputError("--column: not used with --counts (the file holds label,count rows)")
    labels = None if args.labels is None else [v.strip() for v in args.labels.split(",")]
    mech = load_estimate_mechanism(args.spec, args.kernel, labels)
    if args.input is not None:
        counts = count_csv_column(args.input, args.column, mech.output_labels)
    else:
        counts = read_counts_csv(args.counts, mech.output_labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings are in result.warnings and printed below
        result = estimate_distribution(mech.kernel.to_float(), counts, mech.labels, mech.output_labels, **options)
    if args.output:
        if args.output.lower().endswith(".json"):
            text = json.dumps(result.to_json(), indent=2) + "\n"
        else:
            text = result.to_frame().to_csv(index=False)
        write_text_atomically(text, args.output, prefix=".estimate-")
    if args.json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(_render(result, mech))
    for w in result.warnings:
        print(f"mechdesign: warning: {w}", file=sys.stderr)
    return 0


def _structured(args):
    from mechdesign.release.structured_cli import structured_from_args

    mech = structured_from_args(args)
    if mech is not None and (args.kernel or args.spec or args.labels):
        raise InputError("--mechanism: not with --kernel, --spec or --labels")
    return mech


def _estimate_structured(args, mech) -> int:
    """Decode a structured mechanism's released column on its support counts."""
    import math

    from mechdesign.release.structured_cli import render_structured, structured_reports, structured_support_counts

    method = {None: "unbiased", "inversion": "unbiased"}.get(args.method, args.method)
    if args.counts is not None:
        raise InputError("--counts: not available for structured mechanisms; give the released column with --input")
    if not args.column:
        raise InputError("--column: required with --input (the name of the released column)")
    confidence = _number(args.confidence, "--confidence")
    if not (math.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"--confidence: must lie in (0, 1), found {args.confidence}")
    if method == "mle" and mech.has_report_likelihood():
        intervals, bootstrap = _structured_intervals(args)
        reports = structured_reports(mech, args.input, args.column)
        result = mech.estimate(reports, "mle", confidence, args.simultaneous, intervals, bootstrap, seed=_seed(args))
    else:
        counts, n = structured_support_counts(mech, args.input, args.column)
        result = mech.estimate_from_counts(counts, n, method, confidence, args.simultaneous)
    if args.output:
        text = (
            json.dumps(result.to_json(), indent=2) + "\n"
            if args.output.lower().endswith(".json")
            else result.to_frame().to_csv(index=False)
        )
        write_text_atomically(text, args.output, prefix=".estimate-")
    if args.json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(render_structured(result, mech))
    return 0


def _structured_intervals(args) -> tuple[str, int]:
    """(intervals, B) of a structured MLE: no --bootstrap → auto with B = 200; 0 → asymptotic; B ≥ 2 → bootstrap."""
    if args.bootstrap is None:
        return "auto", 200
    b = _number(args.bootstrap, "--bootstrap", int)
    if b < 0 or b == 1:
        raise InputError(f"--bootstrap: must be 0 (asymptotic intervals) or an integer >= 2, found {args.bootstrap}")
    return ("asymptotic", 0) if b == 0 else ("bootstrap", b)


def _seed(args) -> int:
    seed = _number(args.seed, "--seed", int)
    if seed < 0:
        raise InputError(f"--seed: must be an integer >= 0, found {args.seed}")
    return seed
