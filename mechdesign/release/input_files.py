"""The rules for kernel and data files, each checked before anything large is allocated.

One rule per question, applied by every command that reads the file (``verify``, ``analyze``, ``privatize``,
``estimate``) and by the Python readers behind them; a breach is an
:class:`~mechdesign.spec.errors.InputError` (exit 2) whose one line names the file and states the rule
(docs/reference/input-rules.md lists them):

* **Size of a kernel.** N ≤ :data:`~mechdesign.spec.input_rules.MAX_N` rows, M ≤
  :data:`~mechdesign.spec.input_rules.MAX_M` columns, N·M ≤ :data:`~mechdesign.spec.input_rules.MAX_NM`
  entries: the limits of a spec, so every kernel a spec can produce can be read back. A ``.npy`` file is
  judged by its header (shape and dtype) before its data is read, so a 100-byte file claiming a
  10^5 × 10^5 array is refused at once instead of allocating 74.5 GiB; a file whose data is shorter than its
  header claims is refused too. A kernel file is at most :data:`MAX_KERNEL_FILE_BYTES` (``stat``, before it
  is read).
* **Numbers of a ``.npy`` kernel.** Real numbers only: float (16 to 64 bits, and long double), signed or
  unsigned integers. A complex array is refused (its imaginary parts would be dropped), and so are booleans,
  strings, records and objects.
* **Nesting of a JSON kernel.** A list of rows of numbers or ``"p/q"`` strings, or an object holding one;
  anything deeper than Python's parser can follow (a 100,000-deep ``[[[…]]]``) is refused with that rule, and
  any nesting beyond rows of entries by the entry check ("expected a number, found list").
* **Fields of a CSV file.** At most :data:`CSV_FIELD_LIMIT` characters per field (the csv module's limit);
  a longer field, or any other malformed CSV, is refused naming the file and the line.
* **Labels.** A label is matched exactly as written. A label with white space at either end (``" a"``) is
  refused wherever it appears: a spec's alphabet, a JSON kernel's ``labels``, a data column, a counts file.
  (In a comma-separated command-line list such as ``--labels a,b`` the spaces around the commas separate
  the items and are not part of them.)
* **Counts files.** Exactly two fields per row, ``label,count``, with an optional header row; a row with more
  fields is refused (its extra fields would otherwise be ignored silently).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Iterable

from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import MAX_M, MAX_N, MAX_NM

__all__ = [
    "MAX_KERNEL_FILE_BYTES",
    "CSV_FIELD_LIMIT",
    "check_kernel_file",
    "check_kernel_shape",
    "csv_rows",
    "check_label",
    "json_loads_bounded",
]

MAX_KERNEL_FILE_BYTES = 1 << 30
"""Largest kernel file (1 GiB): N·M = 10^7 entries of ``p/q`` on the 2^-52 grid take about 35 bytes each in CSV
(350 MB); a ``solve --json`` file holds them twice (exact strings and floats)."""

CSV_FIELD_LIMIT = csv.field_size_limit()
"""Longest field of a CSV file (characters): the csv module's limit, 131,072."""

_REAL_KINDS = "fiu"


def check_kernel_shape(n: int, m: int, source: str) -> None:
    """N ≤ MAX_N, M ≤ MAX_M, N·M ≤ MAX_NM, each ≥ 1, or an InputError naming ``source``."""
    if n < 1 or m < 1:
        raise InputError(f"{source}: a kernel needs at least one row and one column, found {n} x {m}")
    if n > MAX_N or m > MAX_M or n * m > MAX_NM:
        raise InputError(
            f"{source}: a {n} x {m} kernel is beyond the limits N <= {MAX_N}, M <= {MAX_M}, "
            f"N·M <= {MAX_NM} (those of a spec)"
        )


def _npy_header(path: Path) -> tuple[tuple, "numpy.dtype", int]:  # noqa: F821
    """(shape, dtype, data offset) from a ``.npy`` header, reading only the header."""
    import numpy as np  # here, not at the top: the command-line parsers import this module

    fmt = np.lib.format
    try:
        with open(path, "rb") as fh:
            version = fmt.read_magic(fh)
            if version == (1, 0):
                shape, _, dtype = fmt.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, _, dtype = fmt.read_array_header_2_0(fh)
            else:
                raise InputError(f"{path}: .npy format version {version[0]}.{version[1]} is not read (use 1.0 or 2.0)")
            return tuple(shape), np.dtype(dtype), fh.tell()
    except (ValueError, SyntaxError, TypeError, EOFError) as exc:  # numpy's messages for a malformed header
        raise InputError(
            f"{path}: not a .npy array ({str(exc).splitlines()[0] if str(exc) else 'bad header'})"
        ) from None


def check_kernel_file(path: str | Path) -> None:
    """The checks of the module docstring that need no parsing: size of the file, and for ``.npy`` the header's
    dtype and shape and the length of its data. A missing file is left to the caller's message."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
    except OSError:
        return
    if size > MAX_KERNEL_FILE_BYTES:
        raise InputError(f"{path}: a kernel file is at most {MAX_KERNEL_FILE_BYTES} bytes (1 GiB), found {size}")
    if path.suffix.lower() != ".npy":
        return
    shape, dtype, offset = _npy_header(path)
    if dtype.hasobject or dtype.names is not None or dtype.kind not in _REAL_KINDS:
        raise InputError(
            f"{path}: a .npy kernel holds real numbers (float or integer dtype), found dtype {dtype}"
            + (" (imaginary parts are not probabilities)" if dtype.kind == "c" else "")
        )
    if len(shape) != 2:
        raise InputError(f"{path}: a .npy kernel is a 2-D array (rows x outputs), found shape {shape}")
    check_kernel_shape(int(shape[0]), int(shape[1]), str(path))
    needed = int(shape[0]) * int(shape[1]) * dtype.itemsize
    if size - offset < needed:
        raise InputError(
            f"{path}: truncated .npy file: its header claims a {shape[0]} x {shape[1]} array of {dtype} "
            f"({needed} bytes of data), the file holds {size - offset}"
        )


def json_loads_bounded(text: str | bytes, source: str):
    """``json.loads``; a document nested deeper than the parser can follow is an InputError naming ``source``."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(
            f"{source}: JSON nested too deeply to read; a kernel file is a list of rows of entries, "
            "or an object holding one"
        ) from None


def csv_rows(lines: Iterable[str], source: str, delimiter: str = ",") -> list[list[str]]:
    """``list(csv.reader(lines))``, a malformed CSV (a field longer than :data:`CSV_FIELD_LIMIT` characters, an
    unterminated quote) being an InputError naming ``source`` and the line."""
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        return list(reader)
    except csv.Error as exc:
        rule = str(exc)
        if "field larger than field limit" in rule:
            rule = f"a field is longer than {CSV_FIELD_LIMIT} characters (the csv module's limit)"
        raise InputError(f"{source}: malformed CSV at line {reader.line_num}: {rule}") from None


def check_label(label: str, where: str) -> None:
    """A label must not have white space at either end (labels are matched exactly as written)."""
    if label != label.strip():
        raise InputError(
            f"{where}: label {label!r} has white space at an end; labels are matched exactly as written, "
            "so remove the spaces (in the file or in the spec)"
        )
