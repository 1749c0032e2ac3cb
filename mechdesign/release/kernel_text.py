"""Kernel files written a block of rows at a time: CSV, JSON and the ``solve --json`` object at N in the thousands.

:meth:`mechdesign.certify.exact.ExactKernel.strings` makes the N·M "p/q" strings at once, and the writers held
them together with the floats and the whole text (``solve -o k.json`` at N = 3000: 24 s, 3.1 GB). Here the
rows are made and written a block at a time (:data:`ROWS_PER_BLOCK` entries), so only one block's strings and
the file are alive:

* :func:`write_csv`: the text of ``",".join(row)`` per line, as before;
* :func:`write_json`: ``{"kernel_exact": rows of "p/q", "kernel": rows of floats}``, one row per line (the
  same JSON value as before, which ``json.dumps(..., indent=1)`` wrote one number per line);
* :func:`write_result_json`: what ``dumps_indented(result.to_json() + extra)`` writes, byte for byte, with the
  two kernels streamed in place of placeholders.

Each entry's text is ``str(Fraction)`` of the exact entry (the reduced "p/q", "p" when q = 1), and each float
is written by ``json.dumps`` (``float.__repr__``, which reads back to the same double).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from mechdesign.certify.exact import ExactKernel, GridKernel

__all__ = [
    "ROWS_PER_BLOCK",
    "fraction_row_blocks",
    "fraction_line_blocks",
    "write_csv",
    "write_json",
    "write_result_json",
]

ROWS_PER_BLOCK = 1 << 18
"""Entries per block of rows: a block's strings are a few tens of MB at most."""


def fraction_row_blocks(kernel: ExactKernel) -> Iterator[list[list[str]]]:
    """The rows of :meth:`ExactKernel.strings`, a block of rows at a time (the same strings)."""
    n, m = kernel.shape
    step = max(1, ROWS_PER_BLOCK // max(m, 1))
    ints = kernel.int64()
    for lo in range(0, n, step):
        if ints is not None and ints.ndim == 2:
            part: ExactKernel = GridKernel(np.array(ints[lo : lo + step]), kernel.denominator)
        else:
            part = ExactKernel(kernel.numerators[lo : lo + step], kernel.denominator)
        yield part.strings()


def _float_row_blocks(floats: np.ndarray) -> Iterator[np.ndarray]:
    n, m = floats.shape
    step = max(1, ROWS_PER_BLOCK // max(m, 1))
    for lo in range(0, n, step):
        yield floats[lo : lo + step]


def fraction_line_blocks(kernel: ExactKernel, quoted: bool) -> Iterator[list[str]]:
    """Each row's text, a block of rows at a time: ``",".join(row)`` of the strings of
    :meth:`ExactKernel.strings` (``quoted``: ``json.dumps(row)``, '["p/q", "p/q"]').

    On a grid 2^−k (int64 numerators, a power-of-two denominator) a row is one ``%``-format of its reduced
    numerators and denominators ("%d/%d" per entry, reduced by the entry's lowest set bit as ``strings()``
    reduces it), and "/1" is then dropped where the denominator is 1: no string object per entry."""
    n, m = kernel.shape
    den = kernel.denominator
    ints = kernel.int64()
    if ints is None or ints.ndim != 2 or den & (den - 1) or not m:
        for rows in fraction_row_blocks(kernel):
            yield [json.dumps(row) if quoted else ",".join(row) for row in rows]
        return
    entry, sep = ('"%d/%d"', ", ") if quoted else ("%d/%d", ",")
    row_format = sep.join([entry] * m)
    if quoted:
        row_format = "[" + row_format + "]"
    whole = '/1"' if quoted else "/1,"  # a denominator 1 (its text ends at the quote or the comma)
    step = max(1, ROWS_PER_BLOCK // m)
    pairs = np.empty((min(step, n), 2 * m), dtype=np.int64)
    for lo in range(0, n, step):
        block = ints[lo : lo + step]
        common = np.where(block == 0, den, np.minimum(block & -block, den))  # gcd(A, 2^k), as strings() does
        part = pairs[: block.shape[0]]
        np.floor_divide(block, common, out=part[:, 0::2])
        np.floor_divide(den, common, out=part[:, 1::2])
        lines = []
        for row in part.tolist():
            line = (row_format % tuple(row)).replace(whole, whole[-1])
            if not quoted and line.endswith("/1"):
                line = line[:-2]
            lines.append(line)
        yield lines


def write_csv(kernel: ExactKernel, out: IO[str]) -> None:
    """One line per row, entries "p/q" separated by commas."""
    for lines in fraction_line_blocks(kernel, quoted=False):
        out.write("\n".join(lines) + "\n")


def _write_rows(out: IO[str], blocks, pad: str, close: str) -> None:
    """A JSON array of rows, one row per line after ``pad``, closed by ``close`` + "]": ``blocks`` of float rows
    (arrays) or of the rows' JSON text."""
    out.write("[\n")
    first = True
    for block in blocks:
        texts = _float_lines(block) if isinstance(block, np.ndarray) else block
        text = ",\n".join(pad + t for t in texts)
        out.write(text if first else ",\n" + text)
        first = False
    out.write("\n" + close + "]")


def _float_lines(block: np.ndarray) -> list[str]:
    """``json.dumps(row)`` of each row of a float block ('[0.5, 0.25]', each float as ``float.__repr__``).

    A kernel repeats few values (an optimal mechanism has a handful of levels per column), and the shortest
    repr of a double costs ~0.5 µs: each distinct value is written once and looked up per entry. Blocks with
    many distinct values, a −0.0 (``np.unique`` would merge it with 0.0) or a non-finite entry are encoded
    row by row."""
    if not block.size or not np.isfinite(block).all() or (np.signbit(block) & (block == 0)).any():
        return [json.dumps(row) for row in block.tolist()]
    distinct, at = np.unique(block, return_inverse=True)
    if distinct.size * 4 > block.size:
        return [json.dumps(row) for row in block.tolist()]
    texts = [repr(v) for v in distinct.tolist()]
    return ["[" + ", ".join(map(texts.__getitem__, row)) + "]" for row in at.reshape(block.shape).tolist()]


def write_json(kernel: ExactKernel, out: IO[str]) -> None:
    """``{"kernel_exact": [...], "kernel": [...]}`` with one row per line."""
    out.write('{\n "kernel_exact": ')
    _write_rows(out, fraction_line_blocks(kernel, quoted=True), "  ", " ")
    out.write(',\n "kernel": ')
    _write_rows(out, _float_row_blocks(kernel.to_float()), "  ", " ")
    out.write("\n}")


def write_result_json(result, extra: dict[str, Any], out: IO[str], indent: int = 2) -> None:
    """``dumps_indented({**result.to_json(), **extra}, indent) + "\\n"`` written to ``out``, with the kernel rows
    made a block at a time instead of two N·M lists (``result``: a :class:`mechdesign.design.DesignResult`)."""
    from mechdesign.spec.json_values import dumps_indented

    floats = None if result.kernel is None else np.asarray(result.kernel)
    if (floats is not None and (floats.ndim != 2 or not floats.shape[0] or not np.isfinite(floats).all())) or (
        result.exact_kernel is not None and not result.exact_kernel.shape[0]
    ):  # not a kernel this module streams as to_json() writes it: the whole object at once
        out.write(dumps_indented({**result.to_json(), **extra}, indent) + "\n")
        return
    bare = dataclasses.replace(result, kernel=None, exact_kernel=None).to_json()
    tag = "\x00mechdesign-kernel-rows\x00"
    streamed = {}
    if floats is not None:
        streamed["kernel"] = _float_row_blocks(floats)
    if result.exact_kernel is not None:
        streamed["kernel_exact"] = fraction_line_blocks(result.exact_kernel, quoted=True)
    for name in streamed:
        bare[name] = f"{tag}{name}"
    text = dumps_indented({**bare, **extra}, indent)
    pad, close = " " * (2 * indent), " " * indent  # the rows are values of the top-level object (depth 1)
    markers = sorted(streamed, key=lambda name: text.index(json.dumps(f"{tag}{name}")))
    for name in markers:
        before, text = text.split(json.dumps(f"{tag}{name}"), 1)
        out.write(before)
        _write_rows(out, streamed[name], pad, close)
    out.write(text + "\n")
