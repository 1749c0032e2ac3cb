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

* ``--mechanism FAMILY --epsilon E --alphabet labels.txt`` (or ``--mechanism-file FILE``): a structured
  mechanism (:mod:`mechdesign.mechanisms`), whose reports are written in its documented format
  (:mod:`mechdesign.release.structured_cli`); with ``-o FILE.parquet`` the set-valued reports of subset
  selection and unary encoding are written in the binary format instead (a Parquet file, the released
  column a list of symbol indices per report: :mod:`mechdesign.mechanisms.set_reports`).

The file is streamed: rows are read, checked, sampled and written in blocks of ``--block-rows`` rows
into a temporary file, so memory stays bounded whatever the number of rows. An unknown label is an
error naming the row (exit 2), the temporary file is removed and no output file is created (with
stdout as the output, the temporary file is copied to stdout only once every row has passed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import csv
import sys
from pathlib import Path

from mechdesign.release.input_files import CSV_FIELD_LIMIT, check_label, json_loads_bounded
from mechdesign.spec.errors import InputError
from mechdesign.release.structured_cli import add_structured_arguments, structured_from_args

if TYPE_CHECKING:
    from mechdesign.release.mechanism import Mechanism

BLOCK_ROWS = 65_536

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
    add_structured_arguments(p, src)
    p.add_argument("--save-mechanism", metavar="FILE", help="with --mechanism: save the mechanism (JSON) for estimate")
    p.add_argument("--block-rows", type=int, default=BLOCK_ROWS, help=f"rows per block (default {BLOCK_ROWS})")
    p.add_argument("--input", required=True, help="input CSV file with a header row")
    p.add_argument("--column", required=True, help="name of the column to privatize")
    p.add_argument("--labels", help="comma-separated input labels for --kernel (default 0..N-1)")
    p.add_argument(
        "--seed", type=_seed, help="seed for reproducible output, an integer >= 0 (default: cryptographic randomness)"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the CSV to FILE (default: stdout); FILE.parquet: the binary format of set-valued reports",
    )
    p.set_defaults(func=_cmd_privatize)


def _cmd_privatize(args) -> int:
    labels = None if args.labels is None else [v.strip() for v in args.labels.split(",")]
    structured = structured_from_args(args)
    if structured is not None:
        if labels is not None:
            raise InputError("--labels: not used with a structured mechanism (its labels are --alphabet)")
        if args.block_rows < 1:
            raise InputError(f"--block-rows: must be an integer >= 1, found {args.block_rows}")
        if _binary_output(args.output) and not structured.set_valued:
            raise InputError(f"-o: {_BINARY_ONLY}, not {structured.family}; write a .csv")
        if args.save_mechanism:
            structured.save(args.save_mechanism)
        # a block holds at most ~2^23 report integers (set-valued reports: the mean set size per row)
        rows = max(256, min(args.block_rows, int((1 << 23) / max(1.0, structured.expected_report_size()))))
        return stream_privatize(
            structured_sampler(structured, args.input, args.column, args.seed),
            args.input,
            args.column,
            args.output,
            block_rows=rows,
        )
    if args.save_mechanism:
        raise InputError("--save-mechanism: only with --mechanism")
    if _binary_output(args.output):
        raise InputError(f"-o: {_BINARY_ONLY} (--mechanism); write a .csv")
    return run_privatize(
        spec=args.spec,
        kernel=args.kernel,
        input_path=args.input,
        column=args.column,
        seed=args.seed,
        output=args.output,
        labels=labels,
        block_rows=args.block_rows,
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


_BINARY_ONLY = "the .parquet report format holds the set-valued reports of subset_selection and unary_encoding"


def _binary_output(output) -> bool:
    """True for an output file that takes the binary report format (its name ends in .parquet)."""
    return bool(output) and Path(output).suffix.lower() == ".parquet"


def _open_csv(path: str, column: str):
    """(file handle, csv reader positioned after the header, header, column index, delimiter)."""
    p = Path(path)
    try:
        fh = open(p, encoding="utf-8-sig", newline="")  # a spreadsheet's byte-order mark is not part of the header
    except FileNotFoundError:
        raise InputError(f"--input: file not found: {path}") from None
    except OSError as exc:
        raise InputError(f"--input: cannot read {path}: {exc}") from None
    delimiter = "\t" if p.suffix.lower() == ".tsv" else ","
    reader = csv.reader(fh, delimiter=delimiter)
    try:
        header = next(reader, None)
    except (UnicodeDecodeError, csv.Error) as exc:
        fh.close()
        raise InputError(f"--input: cannot read {path}: {_csv_rule(exc)}") from None
    if header is None:
        fh.close()
        raise InputError(f"--input: {path} is empty (a header row is required)")
    if column not in header:
        fh.close()
        raise InputError(f"--column: no column {column!r} in {path} (columns: {', '.join(header)})")
    return fh, reader, header, header.index(column), delimiter


def explicit_sampler(mech: Mechanism, input_path: str, column: str, seed):
    """sample(values, first_row) -> released labels, for an explicit kernel (one random source for all blocks)."""
    from mechdesign.release.mechanism import resolve_rng

    rng = resolve_rng(seed)

    def sample(values: list[str], first_row: int) -> list[str]:
        for k, value in enumerate(values):
            if value not in mech._index:
                r = first_row + k
                check_label(value, f"{input_path}: row {r} (line {r + 1}), column {column!r}")
                raise InputError(
                    f"{input_path}: row {r} (line {r + 1}): unknown label {value!r} in column "
                    f"{column!r} (labels: {', '.join(mech.labels[:10])}{', ...' if len(mech.labels) > 10 else ''})"
                )
        return mech.privatize(values, rng=rng)

    return sample


def structured_sampler(mech, input_path: str, column: str, seed):
    """sample(values, first_row) -> report cells, for a structured mechanism."""
    from mechdesign.mechanisms.exact_random import resolve_rng as resolve

    rng = resolve(seed)

    def sample(values: list[str], first_row: int) -> list[str]:
        try:
            idx = mech.indices_of(values, first_row)
        except InputError as exc:
            raise InputError(f"{input_path}: {exc} in column {column!r}") from None
        return mech.format_reports(mech.privatize_indices(idx, rng))

    def sample_arrow(values: list[str], first_row: int):
        try:
            idx = mech.indices_of(values, first_row)
        except InputError as exc:
            raise InputError(f"{input_path}: {exc} in column {column!r}") from None
        return mech.reports_to_arrow(mech.privatize_indices(idx, rng))

    sample.arrow = sample_arrow  # the binary report format (a .parquet output), for set-valued families
    # reports of indices, seeds and values (digits, spaces, ':') never need CSV quoting; k-RR's are labels
    sample.plain_cells = mech.family != "krr"
    return sample


def stream_privatize(sample, input_path: str, column: str, output, out=None, block_rows: int = BLOCK_ROWS) -> int:
    """Read ``input_path`` in blocks of ``block_rows`` rows, replace ``column`` by ``sample(values, first_row)``
    and write the rows to a temporary file, renamed over ``output`` (or copied to stdout) at the end; on
    any error the temporary file is removed and nothing is written. Memory: one block. An output named
    ``*.parquet`` is a Parquet file (``sample.arrow`` gives the column, one row group per block; the other
    columns are strings)."""
    import os
    import shutil
    import tempfile

    fh, reader, header, col, delimiter = _open_csv(input_path, column)
    binary = _binary_output(output)
    plain = getattr(sample, "plain_cells", False)
    special = set(delimiter + '"\r\n')
    target_dir = Path(output).parent if output else None
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=".privatize-")
        blocks = _csv_blocks(reader, col, block_rows, input_path, column)
        if binary:
            os.close(fd)
            _write_parquet(tmp, blocks, sample.arrow, header, col, input_path)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as dest:
                writer = csv.writer(dest, delimiter=delimiter, lineterminator="\n")
                writer.writerow(header)
                for block, values, first in blocks:
                    released = sample(values, first)
                    for row, y in zip(block, released):
                        row[col] = y
                    if plain:  # csv.writer scans every character for quoting: 10x slower on long set reports
                        for row in block:
                            if len(row) > 1 and all(special.isdisjoint(v) for k, v in enumerate(row) if k != col):
                                dest.write(delimiter.join(row) + "\n")
                            else:
                                writer.writerow(row)
                    else:
                        writer.writerows(block)
        os.chmod(tmp, 0o644)
        if output:
            os.replace(tmp, output)
            tmp = None
        else:
            with open(tmp, encoding="utf-8", newline="") as src:
                shutil.copyfileobj(src, out or sys.stdout)
    except OSError as exc:
        raise InputError(f"-o: cannot write {output or 'the output'}: {exc.strerror or exc}") from None
    finally:
        fh.close()
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return 0


def _csv_blocks(reader, col: int, block_rows: int, input_path: str, column: str):
    """(rows, values of the column, number of the first row) per block of ``block_rows`` non-empty rows."""
    r = 0
    while True:
        block, values, first = [], [], r + 1
        try:
            for row in reader:
                r += 1
                if not row:
                    continue
                if col >= len(row):
                    raise InputError(f"{input_path}: row {r} (line {r + 1}) has no value in column {column!r}")
                block.append(row)
                values.append(row[col])
                if len(block) >= block_rows:
                    break
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"{input_path}: malformed CSV at line {reader.line_num}: {_csv_rule(exc)}") from None
        if not block:
            return
        yield block, values, first


def _parquet_options(header: list[str], col: int) -> dict:
    """The released column's indices delta-encoded (DELTA_BINARY_PACKED: a sorted set's gaps take a few bits
    each), uncompressed; the other columns pyarrow's defaults (dictionary encoding, snappy)."""
    name = header[col]
    return {
        "use_dictionary": [h for k, h in enumerate(header) if k != col],
        "column_encoding": {f"{name}.list.element": "DELTA_BINARY_PACKED"},
        "compression": {h: "none" if k == col else "snappy" for k, h in enumerate(header)},
    }


def _write_parquet(path: str, blocks, sample_arrow, header: list[str], col: int, input_path: str) -> None:
    """The rows as a Parquet file: the released column as ``sample_arrow`` gives it, every other column as
    strings; one row group per block. A row whose number of fields differs from the header's is an error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for block, values, first in blocks:
            for k, row in enumerate(block):
                if len(row) != len(header):
                    raise InputError(
                        f"{input_path}: row {first + k} has {len(row)} fields, the header {len(header)} "
                        "(a .parquet output needs one value per column)"
                    )
            released = sample_arrow(values, first)
            arrays = [
                released if k == col else pa.array([row[k] for row in block], pa.string()) for k in range(len(header))
            ]
            table = pa.Table.from_arrays(arrays, names=header)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, **_parquet_options(header, col))
            writer.write_table(table)
        if writer is None:  # no rows: the header's columns, empty
            released = sample_arrow([], 1)
            arrays = [released if k == col else pa.array([], pa.string()) for k in range(len(header))]
            pq.write_table(pa.Table.from_arrays(arrays, names=header), path, **_parquet_options(header, col))
    finally:
        if writer is not None:
            writer.close()


def run_privatize(
    spec=None,
    kernel=None,
    input_path: str = "",
    column: str = "",
    seed=None,
    output=None,
    labels=None,
    out=None,
    block_rows: int = BLOCK_ROWS,
) -> int:
    """Read, check, privatize and write in blocks; returns the exit status (nothing is written on error)."""
    _open_csv(input_path, column)[0].close()  # a missing file or column is reported before the design runs
    try:
        mech = load_mechanism(spec, kernel, labels)
    except _NotCertified as exc:
        print(f"mechdesign: {exc}; nothing written", file=sys.stderr)
        return 1
    return stream_privatize(
        explicit_sampler(mech, input_path, column, seed), input_path, column, output, out, block_rows
    )


def _csv_rule(exc: Exception) -> str:
    rule = str(exc)
    if "field larger than field limit" in rule:
        rule = f"a field is longer than {CSV_FIELD_LIMIT} characters (the csv module's limit)"
    return rule
