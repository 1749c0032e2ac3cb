"""Read and write kernels: CSV, JSON and ``.npy``, exactly.

* CSV: one row of K per line, entries as decimals (``0.25``), fractions
  (``1/4``) or floats; blank lines and lines starting with ``#`` are skipped.
* JSON: a list of rows, or an object with ``kernel_exact`` (rows of "p/q"
  strings, preferred) or ``kernel`` (rows of numbers), as ``mechdesign solve
  --json`` writes it. Strings are read as exact fractions.
* ``.npy``: a 2-D float array; every float is read as the rational it is.

:func:`read_kernel` returns an :class:`~mechdesign.certify.exact.ExactKernel` and
checks shape and finiteness and (unless ``stochastic=False``) the rule of
:func:`normalised_rows`: entries >= 0, every row summing to 1 within 1e-9 and
divided by its exact sum when it is not exactly 1, raising
:class:`~mechdesign.spec.errors.InputError` with the row and rule otherwise.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np

from mechdesign.certify.exact import ExactKernel, grid_bits
from mechdesign.release.input_files import check_kernel_file, check_kernel_shape, csv_rows, json_loads_bounded
from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import shown_number

__all__ = [
    "read_kernel",
    "read_kernel_normalised",
    "normalised_rows",
    "write_kernel",
    "parse_entry",
    "ROW_SUM_TOLERANCE",
]

ROW_SUM_TOLERANCE = Fraction(1, 10**9)
"""Rows whose exact sum lies within this of 1 are float round-off (``np.savetxt`` of [1/3, 2/3]
sums to 1 − 2^−54 exactly) and are divided by their exact sums by :func:`read_kernel_normalised`."""


def parse_entry(value, where: str) -> Fraction:
    """An exact fraction from an int, a Fraction, a float (its exact binary value) or a string."""
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{where}: expected a number, found a boolean")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, np.integer):
        return Fraction(int(value))
    if isinstance(value, np.floating):
        value = float(value)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not np.isfinite(value):
            raise InputError(f"{where}: entries must be finite, found {value}")
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise InputError(f"{where}: not a number or fraction p/q: {value!r}") from None
    raise InputError(f"{where}: expected a number, found {type(value).__name__}")


def _from_rows(rows, source: str, stochastic: bool) -> ExactKernel:
    """The kernel of ``rows`` exactly; with ``stochastic``, under the rule of :func:`normalised_rows`."""
    exact = _exact_rows(rows, source)
    if stochastic:
        exact, _ = normalised_rows(exact, source)
    return ExactKernel.from_fractions(exact)


def _exact_rows(rows, source: str) -> list[list[Fraction]]:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise InputError(f"{source}: a kernel must be a non-empty list of rows")
    widths = {len(r) for r in rows}
    if len(widths) != 1 or 0 in widths:
        raise InputError(f"{source}: ragged kernel: rows have lengths {sorted(widths)}")
    check_kernel_shape(len(rows), len(rows[0]), source)
    return [[parse_entry(v, f"{source}: row {i}, column {j}") for j, v in enumerate(r)] for i, r in enumerate(rows)]


def normalised_rows(exact: list[list[Fraction]], source: str) -> tuple[list[list[Fraction]], list[int]]:
    """The one rule for a kernel given as numbers, wherever it is given (``verify``, ``analyze``, ``privatize``,
    ``estimate``, :meth:`mechdesign.release.mechanism.Mechanism.from_kernel`): a row with a negative entry, or
    whose exact sum differs from 1 by more than :data:`ROW_SUM_TOLERANCE` (1e-9), makes the kernel invalid
    (InputError naming the row, exit 2); a row whose exact sum s ≠ 1 lies within 1e-9 of 1 (k-RR written in
    doubles misses 1 by an ulp) is replaced by row / s, exactly, and every verdict and every sample is about
    this normalised kernel. Returns (rows, indices of the rows that were normalised)."""
    normalised = []
    for i, r in enumerate(exact):
        for j, v in enumerate(r):
            if v < 0:
                raise InputError(
                    f"{source}: row {i}, column {j}: entries must be >= 0, found {shown_number(v)} (invalid kernel)"
                )
        s = sum(r, Fraction(0))
        if s != 1:
            if abs(s - 1) > ROW_SUM_TOLERANCE:
                raise InputError(
                    f"{source}: row {i} sums to {shown_number(s)}, more than 1e-9 from 1 "
                    "(invalid kernel: rows must be probability distributions)"
                )
            exact[i] = [v / s for v in r]
            normalised.append(i)
    return exact, normalised


def read_kernel(path: str | Path, stochastic: bool = True) -> ExactKernel:
    """Read a kernel file (CSV, JSON or .npy by extension) exactly.

    With ``stochastic``, a float ``.npy`` or JSON array, or a CSV of ``p/q`` entries, whose rows sum to exactly 1
    is read as int64 numerators on the same common denominator
    (:func:`mechdesign.release.kernel_arrays.read_normalised_fast`: the *equal* kernel, no Fraction per entry;
    N = 1000: about 10 s of ``estimate``); anything else (a row summing to 1 only within rounding, a negative
    entry, a missing file, a format outside the fast grammars) is read entry by entry here, with these checks
    and messages. The file rules of :mod:`mechdesign.release.input_files` (size, a ``.npy`` header's shape and
    dtype) are checked first."""
    check_kernel_file(path)
    if stochastic:
        from mechdesign.release.kernel_arrays import read_normalised_fast

        try:
            fast = read_normalised_fast(Path(path))
        except (InputError, OSError, ValueError):
            fast = None  # the entry-by-entry path words its own message for a bad file
        if fast is not None and not fast[1]:  # no row needed normalising: every row sums to exactly 1
            return fast[0]
    rows, source = _read_rows(path)
    return _from_rows(rows, source, stochastic)


def read_kernel_normalised(path: str | Path) -> tuple[ExactKernel, list[int]]:
    """Read a kernel exactly for the verifier and the analyser.

    Rule: a row with a negative entry, or whose exact sum differs from 1 by more than
    :data:`ROW_SUM_TOLERANCE` (1e-9), makes the kernel invalid (InputError naming the row,
    exit 2). A row whose exact sum s ≠ 1 lies within 1e-9 of 1 (floats written by
    ``np.savetxt`` and the like) is replaced by row / s, exactly; every verdict is then about
    this normalised kernel. Returns (kernel, indices of the rows that were normalised).
    """
    from mechdesign.release.kernel_arrays import read_normalised_fast

    check_kernel_file(path)  # size, and a .npy header's shape and dtype, before anything is read
    fast = read_normalised_fast(Path(path))  # int64 numerators, no Fraction per entry; None: read as Fractions
    if fast is not None:
        return fast
    rows, source = _read_rows(path)
    exact, normalised = normalised_rows(_exact_rows(rows, source), source)
    return ExactKernel.from_fractions(exact), normalised


def _read_rows(path: str | Path) -> tuple[list, str]:
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            try:
                arr = np.load(path, allow_pickle=False)
            except ValueError as exc:
                raise InputError(f"{path}: not a numeric .npy array ({exc})") from None
            if arr.ndim != 2 or arr.dtype.kind not in "fiu":  # check_kernel_file has refused these already
                raise InputError(f"{path}: expected a 2-D real array, found shape {arr.shape} dtype {arr.dtype}")
            rows = [[float(v) for v in row] for row in arr]
        elif suffix == ".json":
            try:
                data = json_loads_bounded(path.read_text(encoding="utf-8"), str(path))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
            if isinstance(data, dict):
                rows = data.get("kernel_exact") or data.get("kernel")
                if rows is None:
                    raise InputError(f"{path}: JSON object has no 'kernel_exact' or 'kernel' key")
            else:
                rows = data
        elif suffix in (".csv", ".txt", ".tsv"):
            text = path.read_text(encoding="utf-8")
            delimiter = "\t" if suffix == ".tsv" else ","
            lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
            rows = [[v.strip() for v in r] for r in csv_rows(lines, str(path), delimiter)]
        else:
            raise InputError(f"{path}: unknown kernel format {suffix!r} (use .csv, .json or .npy)")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    return rows, str(path)


def write_kernel(kernel: ExactKernel, path: str | Path) -> None:
    """Write a kernel losslessly: CSV and JSON carry exact "p/q" strings, .npy floats
    (lossless when the entries are doubles, as design() emits them)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        floats = kernel.to_float()
        ints = kernel.int64() if grid_bits(kernel) is not None else None
        if ints is not None and (not ints.size or max(int(ints.max()), -int(ints.min())) <= 1 << 53):
            # A / 2^k with k <= 52 and |A| <= 2^53: every entry is a double and to_float is exact
            np.save(path, floats)
            return
        back = ExactKernel.from_fractions([[Fraction(float(v)) for v in row] for row in floats])
        if not all(
            Fraction(int(a), back.denominator) == Fraction(int(b), kernel.denominator)
            for a, b in zip(back.numerators.ravel(), kernel.numerators.ravel())
        ):
            raise InputError(f"{path}: kernel entries are not all doubles; use .csv or .json for an exact copy")
        np.save(path, floats)
    elif suffix in (".json", ".csv", ".txt"):
        from mechdesign.release.kernel_text import write_csv, write_json

        with open(path, "w", encoding="utf-8") as out:  # a block of rows at a time (kernel_text.py)
            (write_json if suffix == ".json" else write_csv)(kernel, out)
    else:
        raise InputError(f"{path}: unknown kernel format {suffix!r} (use .csv, .json or .npy)")
