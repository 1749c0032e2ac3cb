"""Command-line options for structured mechanisms (``--mechanism FAMILY`` or ``--mechanism-file FILE``),
shared by ``privatize`` and ``estimate``.

``--mechanism krr|subset_selection|unary_encoding|local_hashing|hadamard_response --epsilon E
--alphabet labels.txt [--prior-c c] [--d D | --d D1,D2 --weights W1,W2] [--symmetric] [--g G] [--seeds K]``
builds the mechanism of :mod:`mechdesign.mechanisms`; ``--save-mechanism FILE`` (privatize) writes its JSON
(with the certificate, and local hashing's seed pool), which ``--mechanism-file FILE`` reads back. The
alphabet file holds one label per line (blank lines skipped), in the order that gives each symbol its index.
"""

from __future__ import annotations

from pathlib import Path

from mechdesign.spec.errors import InputError

__all__ = ["add_structured_arguments", "structured_from_args", "read_alphabet", "structured_reports"]

RICH_TABLE_ROWS = 200
"""Up to this many symbols the estimate is a rich table; beyond, plain aligned lines."""


FAMILY_NAMES = ("hadamard_response", "krr", "local_hashing", "subset_selection", "unary_encoding")
"""The keys of :data:`mechdesign.mechanisms.FAMILIES` (listed here so that building the parser imports nothing heavy)."""


def add_structured_arguments(p, group) -> None:
    group.add_argument("--mechanism", choices=FAMILY_NAMES, help="a structured mechanism (never written as a matrix)")
    group.add_argument("--mechanism-file", help="a structured mechanism saved by privatize --save-mechanism")
    p.add_argument("--epsilon", help="for --mechanism: epsilon in nats (a number or an expression such as log(3))")
    p.add_argument("--alphabet", help="for --mechanism: file with one input label per line")
    p.add_argument("--prior-c", help="for --mechanism: (epsilon, Q_X(c))-PML with this c (default 0: epsilon-LDP)")
    p.add_argument("--d", help="subset_selection: subset size, or two sizes D1,D2 of a mixture (default: best size)")
    p.add_argument("--weights", help="subset_selection: weights W1,W2 of a two-size mixture (rationals summing to 1)")
    p.add_argument("--symmetric", action="store_true", help="unary_encoding: symmetric rates (basic RAPPOR), not OUE")
    p.add_argument("--g", help="local_hashing: number of hash values (default round(e^eps) + 1)")
    p.add_argument("--seeds", help="local_hashing: size of a seed pool (default: a fresh seed per report)")


def read_alphabet(path: str | None) -> list[str]:
    if path is None:
        raise InputError("--alphabet: required with --mechanism (a file with one label per line)")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"--alphabet: file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--alphabet: cannot read {path}: {exc}") from None
    from mechdesign.release.input_files import check_label

    labels = []
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            check_label(line, f"--alphabet: {path}: line {i}")
            labels.append(line)
    return labels


def _ints(text: str | None, option: str):
    if text is None:
        return None
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise InputError(f"{option}: expected integers separated by commas, found {text!r}") from None
    return values if len(values) > 1 else values[0]


def structured_from_args(args):
    """The structured mechanism the options name, or None when neither --mechanism nor --mechanism-file is given."""
    from mechdesign.mechanisms import build, load

    if getattr(args, "mechanism_file", None):
        return load(args.mechanism_file)
    family = getattr(args, "mechanism", None)
    if family is None:
        for opt in ("epsilon", "alphabet", "prior_c", "d", "weights", "g", "seeds"):
            if getattr(args, opt, None) is not None:
                raise InputError(f"--{opt.replace('_', '-')}: only with --mechanism")
        return None
    if args.epsilon is None:
        raise InputError("--epsilon: required with --mechanism")
    labels = read_alphabet(args.alphabet)
    options = {}
    if family == "subset_selection":
        options["d"] = _ints(args.d, "--d")
        options["weights"] = None if args.weights is None else [w.strip() for w in args.weights.split(",")]
    elif args.d is not None or args.weights is not None:
        raise InputError(f"--d/--weights: options of subset_selection, not {family}")
    if family == "unary_encoding":
        options["optimized"] = not args.symmetric
    elif args.symmetric:
        raise InputError(f"--symmetric: an option of unary_encoding, not {family}")
    if family == "local_hashing":
        options["g"] = _ints(args.g, "--g")
        options["seeds"] = _ints(args.seeds, "--seeds")
        if getattr(args, "seed", None) is not None and options["seeds"] is not None:
            import numpy as np

            options["rng"] = np.random.default_rng([args.seed, 1])  # the pool's own stream, not the reports'
    elif args.g is not None or args.seeds is not None:
        raise InputError(f"--g/--seeds: options of local_hashing, not {family}")
    return build(family, labels, args.epsilon, args.prior_c, **options)


def structured_report_blocks(mech, path, column: str, block_bytes: int = 1 << 22):
    """The released column's reports, parsed and checked block by block (streamed with pyarrow): yields
    :class:`~mechdesign.mechanisms.base.Reports`; a malformed or impossible report raises InputError naming its
    row, and a column without records says so."""
    from mechdesign.release.estimate import csv_column_blocks

    path = Path(path)
    n = 0
    for col in csv_column_blocks(path, column, block_bytes):
        cells = col.to_pylist()
        try:
            reports = mech.parse_reports(cells, first_row=n + 1)
        except InputError as exc:
            raise InputError(f"{path}: {exc} in column {column!r}") from None
        n += len(cells)
        yield reports
    if n == 0:
        raise InputError(f"{path}: empty input: no records below the header")


def structured_support_counts(mech, path: str, column: str, block_bytes: int = 1 << 22):
    """(support counts C, number of reports n) of a released column (:func:`structured_report_blocks`). Local
    hashing keeps the (seed, value) pairs and decodes once (its cost is per distinct seed)."""
    import numpy as np

    from mechdesign.mechanisms.base import Reports

    counts = np.zeros(mech.n_symbols, dtype=np.int64)
    seeds, values = [], []
    n = 0
    for reports in structured_report_blocks(mech, path, column, block_bytes):
        if reports.seeds is not None:
            seeds.append(reports.seeds)
            values.append(reports.values)
        else:
            counts += mech.support_counts(reports)
        n += reports.n
    if seeds:
        counts = mech.support_counts(Reports(n=n, seeds=np.concatenate(seeds), values=np.concatenate(values)))
    return counts, n


def structured_reports(mech, path: str, column: str, block_bytes: int = 1 << 22):
    """Every report of a released column as one :class:`~mechdesign.mechanisms.base.Reports` (for the MLE, whose
    likelihood needs the reports themselves, not only their support counts)."""
    import numpy as np

    from mechdesign.mechanisms.base import Reports

    blocks = list(structured_report_blocks(mech, path, column, block_bytes))
    n = sum(b.n for b in blocks)
    if blocks[0].seeds is not None or blocks[0].values is not None:
        cat = lambda name: (
            None if getattr(blocks[0], name) is None else np.concatenate([getattr(b, name) for b in blocks])
        )
        return Reports(n=n, values=cat("values"), seeds=cat("seeds"))
    offsets, base = [np.zeros(1, dtype=np.int64)], 0
    for b in blocks:
        offsets.append(b.offsets[1:] + base)
        base += int(b.offsets[-1])
    return Reports(n=n, offsets=np.concatenate(offsets), positions=np.concatenate([b.positions for b in blocks]))


def render_structured(result, mech) -> str:
    """The estimate table for a structured mechanism (as ``estimate`` prints it for a kernel)."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    con = Console(file=buf, width=120, force_terminal=False, color_system=None, highlight=False)
    cert = mech.certificate()
    con.print(
        f"mechdesign estimate: {result.method}, {mech.family}{_summary(mech)}, N = {mech.n_symbols} "
        f"secrets, n = {result.n} reports"
    )
    con.print(
        f"privacy: worst PML ratio {float(cert.worst_ratio):.10g} <= e^eps (eps = {mech.epsilon.text}, c = {mech.c})"
    )
    level = f"{100 * result.confidence:g}%" + (" simultaneous (Bonferroni)" if result.simultaneous else "")
    if mech.n_symbols > RICH_TABLE_ROWS:  # a plain aligned table: rich lays out 10^5 rows in minutes
        width = max(5, max(len(lab) for lab in result.labels))
        lines = [
            f"estimate of P_X, {level} intervals",
            f"{'label':<{width}}  {'estimate':>10}  {'std error':>10}  {'lower':>10}  {'upper':>10}",
        ]
        for lab, e, s_, lo, hi in zip(
            result.labels,
            result.estimate.tolist(),
            result.standard_error.tolist(),
            result.lower.tolist(),
            result.upper.tolist(),
        ):
            lines.append(f"{lab:<{width}}  {e:>10.6f}  {s_:>10.6f}  {lo:>10.6f}  {hi:>10.6f}")
        buf.write("\n".join(lines) + "\n")
        con.print(f"uncertainty: {result.uncertainty}")
        for warning in result.warnings:
            con.print(f"warning: {warning}")
        return buf.getvalue()
    table = Table(title=f"estimate of P_X, {level} intervals")
    for col in ("label", "estimate", "standard error", "lower", "upper"):
        table.add_column(col, justify="left" if col == "label" else "right")
    for i, lab in enumerate(result.labels):
        table.add_row(
            lab,
            f"{result.estimate[i]:.6f}",
            f"{result.standard_error[i]:.6f}",
            f"{result.lower[i]:.6f}",
            f"{result.upper[i]:.6f}",
        )
    con.print(table)
    con.print(f"uncertainty: {result.uncertainty}")
    for warning in result.warnings:
        con.print(f"warning: {warning}")
    return buf.getvalue()


def _summary(mech) -> str:
    text = mech.parameters_summary()
    return f" ({text})" if text else ""
