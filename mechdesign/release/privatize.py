"""``mechdesign privatize (--spec SPEC | --kernel FILE) --input data.csv --column NAME [--seed S] [-o out.csv]``.

Replaces every value of one CSV column by an output of the mechanism, drawn
exactly from the rational kernel row of that value (:class:`~mechdesign.release.mechanism.Mechanism`).
The other columns are copied unchanged.

* ``--spec``: the mechanism is designed (and exactly certified) from the spec; input
  labels are the spec's alphabet.
* ``--kernel``: a kernel file (CSV, JSON, .npy). Input labels are 0..N−1, or ``--labels``,
  or the ``labels`` of a JSON written by ``mechdesign solve --json``.
* Outputs are written as 0..M−1, except for an expected-loss design with M = N, whose
  output y is an estimate of symbol y and is written as its label.
* Randomness: the operating system's cryptographic source, or with ``--seed S`` a
  seeded generator (identical output for one seed).

Every row is read and checked before anything is drawn or written: an unknown label
is an error naming the row (exit 2) and no output file is created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import csv
import io
import sys
from pathlib import Path

from mechdesign.release.input_files import check_label, csv_rows, json_loads_bounded
from mechdesign.spec.errors import InputError
from mechdesign.release.atomic_write import write_text_atomically

if TYPE_CHECKING:
    from mechdesign.release.mechanism import Mechanism


__all__ = ["register", "run_privatize", "load_mechanism"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "privatize",
        help="privatize a column of a CSV file with an exact sampler",
        description="Replace a CSV column by mechanism outputs drawn exactly from the rational kernel.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--spec", help="YAML spec: design the mechanism, then sample from it")
    src.add_argument("--kernel", help="kernel file (.csv, .json, .npy)")
    p.add_argument("--input", required=True, help="input CSV file with a header row")
    p.add_argument("--column", required=True, help="name of the column to privatize")
    p.add_argument("--labels", help="comma-separated input labels for --kernel (default 0..N-1)")
    p.add_argument(
        "--seed", type=_seed, help="seed for reproducible output, an integer >= 0 (default: cryptographic randomness)"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the CSV to FILE (default: stdout)")
    p.set_defaults(func=_cmd_privatize)


def _cmd_privatize(args) -> int:
    labels = None if args.labels is None else [v.strip() for v in args.labels.split(",")]
    return run_privatize(
        spec=args.spec,
        kernel=args.kernel,
        input_path=args.input,
        column=args.column,
        seed=args.seed,
        output=args.output,
        labels=labels,
    )


def load_mechanism(spec: str | None = None, kernel: str | None = None, labels=None) -> Mechanism:
    """The mechanism of a spec (designed and certified) or of a kernel file."""
    from mechdesign.release.mechanism import Mechanism

    if spec is not None:
        from mechdesign.design import design

        result = design(Path(spec))
        if result.certificate is None or not result.certificate.feasible:
            raise _NotCertified(f"the design of {spec} produced no certified kernel (status {result.status.value})")
        return Mechanism.from_result(result)
    from mechdesign.release.kernel_io import read_kernel

    exact = read_kernel(kernel)  # int64 numerators when every row sums to exactly 1
    n, m = exact.shape
    outputs = None
    if labels is None and Path(kernel).suffix.lower() == ".json":
        try:
            data = json_loads_bounded(Path(kernel).read_text(encoding="utf-8"), kernel)
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("labels"), list) and len(data["labels"]) == n:
            labels = [str(v) for v in data["labels"]]
            for i, label in enumerate(labels):
                check_label(label, f"{kernel}: labels[{i}]")
            if data.get("objective_kind") == "expected_loss" and m == n:
                outputs = labels
    if labels is not None and len(labels) != n:
        raise InputError(f"--labels: needs {n} distinct labels (one per kernel row), found {len(labels)}")
    if labels is not None and len(set(labels)) != n:
        twice = next(v for i, v in enumerate(labels) if v in labels[:i])
        raise InputError(f"--labels: needs {n} distinct labels (one per kernel row), found {twice!r} twice")
    return Mechanism.from_kernel(exact, labels, outputs)


def _seed(text: str) -> int:
    """--seed: an integer >= 0 (numpy's generators take no negative seed)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, found {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, found {text}")
    return value


class _NotCertified(Exception):
    pass


def _read_csv(path: str, column: str) -> tuple[list[str], list[list[str]], int, str]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is not part of the header
    except FileNotFoundError:
        raise InputError(f"--input: file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--input: cannot read {path}: {exc}") from None
    delimiter = "\t" if p.suffix.lower() == ".tsv" else ","
    rows = csv_rows(io.StringIO(text, newline=""), path, delimiter)  # a field over the csv limit: one line
    if not rows:
        raise InputError(f"--input: {path} is empty (a header row is required)")
    header, body = rows[0], rows[1:]
    if column not in header:
        raise InputError(f"--column: no column {column!r} in {path} (columns: {', '.join(header)})")
    return header, body, header.index(column), delimiter


def run_privatize(
    spec=None, kernel=None, input_path: str = "", column: str = "", seed=None, output=None, labels=None, out=None
) -> int:
    """Read, check, privatize and write; returns the exit status (nothing is written on error)."""
    header, body, col, delimiter = _read_csv(input_path, column)
    try:
        mech = load_mechanism(spec, kernel, labels)
    except _NotCertified as exc:
        print(f"mechdesign: {exc}; nothing written", file=sys.stderr)
        return 1
    values = []
    for r, row in enumerate(body, start=1):
        if not row:
            continue
        if col >= len(row):
            raise InputError(f"{input_path}: row {r} (line {r + 1}) has no value in column {column!r}")
        value = row[col]
        if value not in mech._index:
            check_label(value, f"{input_path}: row {r} (line {r + 1}), column {column!r}")
            raise InputError(
                f"{input_path}: row {r} (line {r + 1}): unknown label {value!r} in column "
                f"{column!r} (labels: {', '.join(mech.labels[:10])}{', ...' if len(mech.labels) > 10 else ''})"
            )
        values.append(value)
    released = mech.privatize(values, rng=seed)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    k = 0
    for row in body:
        if not row:
            continue
        row = list(row)
        row[col] = released[k]
        k += 1
        writer.writerow(row)
    _write_atomically(buf.getvalue(), output, out)
    return 0


def _write_atomically(text: str, output, out) -> None:
    if not output:
        (out or sys.stdout).write(text)
        return
    write_text_atomically(text, output, prefix=".privatize-")
