"""Kernel files read exactly as int64 numerators on a common denominator, with no Python object per entry.

:func:`mechdesign.release.kernel_io.read_kernel_normalised` reads every entry as a :class:`fractions.Fraction`,
which is exact but costs ~10 µs and ~200 bytes per entry (110 s and 2.6 GB for a 3000 × 3000 kernel). Every
kernel mechdesign writes, and most a user brings, is simpler than that:

* a float64 array (``.npy``) is exactly a dyadic rational per entry:
  each finite double is m·2^e with an integer |m| < 2^53, so the whole array is A / 2^k with integers A when
  k ≥ max over the entries of (its binary digits after the point); with k ≤ 62 and |A| ≤ 2^62 the
  numerators are int64 (:func:`dyadic_numerators`);
* a CSV (or the ``kernel_exact`` strings of a JSON file) of ``p/q`` entries: the bytes are parsed into
  (p, q) int64 arrays by numpy (:func:`parse_fraction_text`), each fraction reduced by ``np.gcd``, and put on
  the common denominator D = lcm of the reduced denominators when D ≤ 2^62 and every p·(D/q) fits
  (:func:`common_denominator`); for a kernel mechdesign writes, D = 2^k is the largest denominator.

D is the denominator :meth:`mechdesign.certify.exact.ExactKernel.from_fractions` would choose (the lcm of
the reduced denominators), so the kernel read here is *equal* to the one the Fraction path builds (same
numerators, same denominator) and every downstream report is unchanged. Anything outside these grammars (a
decimal, a sign, a space, a comment line, a quoted comma, a subnormal, a denominator that would not fit, a JSON
file with only ``kernel`` floats) makes
:func:`read_normalised_fast` return None, and the caller reads the file the exact Fraction way as before.
A row that sums to 1 only within the tolerance also returns None: dividing by its exact sum makes a common
denominator far outside int64, which only the Fraction path can hold.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np

from mechdesign.certify.exact import GridKernel
from mechdesign.certify.grid_arith import INT64_ENTRY_LIMIT, exact_sums
from mechdesign.release.input_files import check_kernel_shape
from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import shown_number

__all__ = [
    "dyadic_numerators",
    "parse_fraction_text",
    "common_denominator",
    "read_normalised_fast",
]

_LIMIT_BITS = 62
"""Numerators and the common denominator stay ≤ 2^62 (:data:`mechdesign.certify.grid_arith.INT64_ENTRY_LIMIT`)."""

_MAX_DIGITS = 18
"""A run of at most 18 decimal digits is < 10^18 < 2^63: parsed exactly in int64."""

_ROWS_PER_BLOCK_ENTRIES = 1 << 18


def dyadic_numerators(floats: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(A, 2^k) with ``floats == A / 2^k`` exactly, A int64 and 2^k the lcm of the entries' reduced
    denominators, for a 2-D float64 array of finite entries; None when k > 62 or some |A| > 2^62.

    Each finite double is F = f·2^e with 1/2 ≤ |f| < 1 (``np.frexp``); m = f·2^53 is an integer, and F has
    53 − e − tz(m) binary digits after the point (tz: trailing zero bits of m), its reduced denominator being
    2 to that power (or 1 when it is ≤ 0)."""
    n, m = floats.shape
    step = max(1, _ROWS_PER_BLOCK_ENTRIES // max(m, 1))
    k = 0
    for lo in range(0, n, step):
        frac, exp = np.frexp(floats[lo : lo + step])
        mant = np.ldexp(frac, 53).astype(np.int64)  # exact: |frac| < 1, 53 bits
        nonzero = mant != 0
        if not nonzero.any():
            continue
        mant = mant[nonzero]
        lowest = mant & -mant  # the lowest set bit (two's complement: for either sign)
        tz = np.frexp(lowest.astype(np.float64))[1] - 1  # exact: a power of two ≤ 2^52
        digits = 53 - exp[nonzero].astype(np.int64) - tz
        k = max(k, int(digits.max()))
        if k > _LIMIT_BITS:
            return None
    largest = float(np.abs(floats).max()) if floats.size else 0.0
    if largest * 2.0**k > INT64_ENTRY_LIMIT:
        return None
    ints = np.ldexp(floats, k).astype(np.int64)  # exact: integers of magnitude ≤ 2^62, scaled by a power of two
    return ints, 1 << k


_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[ord("0") : ord("9") + 1] = True
_ALLOWED[ord("/")] = True
_ALLOWED[ord("\n")] = True


def parse_fraction_text(raw: bytes, delimiter: bytes = b",") -> tuple[np.ndarray, np.ndarray, tuple[int, int]] | None:
    """(p, q, (N, M)): the entries of a text kernel whose every field is ``digits`` or ``digits/digits`` (at most
    18 digits each), fields separated by ``delimiter``, rows by newlines, every row with the same number of fields,
    no blank or comment line, parsed as int64 numerators p and denominators q (1 for an integer), row-major.

    None for anything else (a decimal point, a sign, white space, quotes, a comment, a blank line, a ragged row,
    a longer number): the caller then reads the text the exact Fraction way, which also words any error. Within
    this grammar ``Fraction(field)`` is p/q exactly (q = 0 returns None: the Fraction path reports it)."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
        if b"\r" in raw:
            return None
    end = len(raw)  # the text up to its trailing newlines (no copy of a file of hundreds of MB)
    while end and raw[end - 1] == ord("\n"):
        end -= 1
    if not end or raw.startswith(b"\n") or raw.find(b"\n\n", 0, end) != -1:
        return None
    if end == len(raw):
        raw += b"\n"  # the last line's newline
    total = end + 1  # raw[:total] is whole lines, each ending in a newline
    sep = ord(delimiter)
    m = raw.count(delimiter, 0, raw.index(b"\n")) + 1
    n = raw.count(b"\n", 0, total)
    if 2 * n * m > total:
        return None  # each field takes a digit and a separator at least: a ragged file (and no huge allocation)
    allowed = _ALLOWED.copy()
    allowed[sep] = True
    p = np.empty(n * m, dtype=np.int64)
    q = np.empty(n * m, dtype=np.int64)
    at = 0
    chunk = 1 << 23
    lo = 0
    while lo < total:
        hi = raw.rfind(b"\n", lo, lo + chunk) + 1 if lo + chunk < total else total
        if hi <= lo:  # a single line longer than the chunk
            hi = raw.index(b"\n", lo) + 1
        parsed = _parse_lines(np.frombuffer(raw, dtype=np.uint8, count=hi - lo, offset=lo), sep, m, allowed)
        if parsed is None:
            return None
        num, den = parsed
        if at + num.size > p.size:
            return None
        p[at : at + num.size] = num
        q[at : at + den.size] = den
        at += num.size
        lo = hi
    if at != p.size or (q == 0).any():
        return None
    return p, q, (n, m)


def _parse_lines(b: np.ndarray, sep: int, m: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`parse_fraction_text` on whole lines ``b`` (ending in a newline).

    Works on the non-digit bytes only (a fifth of a kernel's text): in the grammar no two non-digits are
    adjacent and the text starts with a digit, so the digit runs are exactly the gaps between consecutive
    non-digits, and each run is a numerator unless the non-digit before it is a slash."""
    marks = np.flatnonzero((b - np.uint8(ord("0"))) >= 10)  # uint8 wrap-around: every byte but '0'..'9'
    c = b[marks]
    if not allowed[c].all() or marks[0] == 0 or (np.diff(marks) == 1).any():
        return None  # a byte outside the grammar, the text starting with a non-digit, an empty field, "/,", "//"
    slash = c == ord("/")
    if (slash[1:] & slash[:-1]).any():
        return None  # two slashes in one field
    starts = np.empty(marks.size, dtype=np.int64)  # run k lies between marks k - 1 and k
    starts[0] = 0
    starts[1:] = marks[:-1] + 1
    values = _digit_values(b, starts, marks - starts)
    if values is None:
        return None
    is_den = np.zeros(marks.size, dtype=bool)
    is_den[1:] = slash[:-1]
    is_num = ~is_den
    num = values[is_num]
    den = np.ones(num.size, dtype=np.int64)
    den[slash[is_num]] = values[is_den]  # a numerator followed by a slash takes the next run as its denominator
    # every row has m fields: the numerators up to each newline
    per_line = np.diff(np.cumsum(is_num)[c == ord("\n")], prepend=0)
    if not (per_line == m).all():
        return None
    return num, den


def _digit_values(b: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """The decimal numbers b[starts[i] : starts[i] + lengths[i]] (runs of 1 to 18 ASCII digits) as int64; None
    when a run is longer than 18 digits."""
    counts = np.bincount(lengths)
    if counts.size - 1 > _MAX_DIGITS:
        return None
    values = np.empty(starts.size, dtype=np.int64)
    for length in np.flatnonzero(counts).tolist():  # numbers of one length at a time: one gather per digit
        at = slice(None) if counts[length] == starts.size else np.flatnonzero(lengths == length)
        first = starts[at]
        acc = b[first].astype(np.int64)
        for j in range(1, length):
            acc *= 10
            acc += b[first + j]
        acc -= ord("0") * ((10**length - 1) // 9)  # the ASCII offset of every digit: 48 · 11…1
        values[at] = acc
    return values


def common_denominator(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(A, D) with p/q = A/D entrywise, D the lcm of the reduced denominators q / gcd(p, q) (the denominator
    ``ExactKernel.from_fractions`` chooses) and A int64; None when D > 2^62 or some |A| > 2^62. p, q: int64,
    q > 0. Works in place on ``p`` and ``q``."""
    g = np.gcd(p, q)  # gcd(0, q) = q: 0/q reduces to 0/1
    np.floor_divide(p, g, out=p)
    np.floor_divide(q, g, out=q)
    del g
    largest_q = int(q.max()) if q.size else 1
    if (q & (q - 1) == 0).all():  # powers of two: the lcm is the largest
        den = largest_q
    else:
        den = 1
        for v in np.unique(q).tolist():
            den = math.lcm(den, v)
            if den > INT64_ENTRY_LIMIT:
                return None
    if den > INT64_ENTRY_LIMIT:
        return None
    scale = den // q  # exact: q divides den
    if (np.abs(p) > INT64_ENTRY_LIMIT // scale).any():
        return None
    np.multiply(p, scale, out=p)
    return p, den


def read_normalised_fast(path: Path) -> tuple[GridKernel, list[int]] | None:
    """:func:`mechdesign.release.kernel_io.read_kernel_normalised` for the files this module reads without a
    Fraction per entry: the same kernel (equal numerators and denominator), the same rule and the same messages
    for a negative entry or a row sum more than 1e-9 from 1; None when the file is outside the grammars of the
    module docstring, or some row needs normalising (the caller then reads it the Fraction way)."""
    suffix = path.suffix.lower()
    if not path.is_file():
        return None
    if suffix == ".npy":
        ints = _npy_numerators(path)
    elif suffix == ".json":
        ints = _json_numerators(path)
    elif suffix in (".csv", ".txt", ".tsv"):
        parsed = parse_fraction_text(path.read_bytes(), b"\t" if suffix == ".tsv" else b",")
        ints = _on_common_denominator(parsed)
    else:
        return None
    if ints is None:
        return None
    check_kernel_shape(*ints[0].shape, str(path))
    return _checked(ints[0], ints[1], str(path))


def _on_common_denominator(parsed) -> tuple[np.ndarray, int] | None:
    if parsed is None:
        return None
    p, q, shape = parsed
    common = common_denominator(p, q)
    return None if common is None else (common[0].reshape(shape), common[1])


def _npy_numerators(path: Path) -> tuple[np.ndarray, int] | None:
    try:
        arr = np.load(path, allow_pickle=False, mmap_mode="r")
    except (ValueError, OSError):
        return None  # the Fraction path words the error
    if arr.ndim != 2 or arr.size == 0:
        return None
    if arr.dtype.kind == "f" and arr.dtype.itemsize <= 8:
        floats = np.asarray(arr, dtype=np.float64)  # exact: float16/32 widen exactly
    elif arr.dtype.kind in "iu" and arr.dtype.itemsize <= 4:
        floats = np.asarray(arr, dtype=np.float64)  # exact: |int| < 2^32
    else:
        return None  # int64, longdouble, complex: the Fraction path converts them as it always has
    if not np.isfinite(floats).all():
        return None  # the Fraction path names the first non-finite entry
    return dyadic_numerators(floats)


_KEY = {name: re.compile(rb'"' + name.encode() + rb'"\s*:\s*\[\s*\[') for name in ("kernel_exact", "kernel")}
_ROWS_END = re.compile(rb"\]\s*\]")
_JSON_SPACE = np.zeros(256, dtype=bool)
_JSON_SPACE[[ord(" "), ord("\t"), ord("\n"), ord("\r")]] = True
_JSON_CHUNK = 1 << 23
"""The cut arrays are checked and parsed in pieces of whole rows of about this many bytes (8 MB)."""


def _json_numerators(path: Path) -> tuple[np.ndarray, int] | None:
    """The ``kernel_exact`` rows of a JSON object as ``mechdesign solve --json`` or ``-o k.json`` write it,
    without ``json.loads`` of the N·M strings: the ``kernel_exact`` and ``kernel`` arrays are cut out of the
    text and the rest (a few kB) is parsed by ``json.loads`` with a unique placeholder in their place, which
    must come back as the top-level values of "kernel_exact" and "kernel" (so each cut was the object's own
    value, not text inside a string or a nested object). The ``kernel_exact`` text is checked to be valid JSON
    of rows of quoted ``p/q`` strings (no space inside a string) and parsed by :func:`parse_fraction_text`; the
    ``kernel`` floats, which the reader ignores when ``kernel_exact`` is there, are only checked to be valid
    JSON (``json.loads`` of a piece of rows at a time). Together: the file is valid JSON and its
    ``kernel_exact`` is what ``json.loads`` would return."""
    raw = path.read_bytes()
    spans = {}
    for name, pattern in _KEY.items():
        key = pattern.search(raw)
        if key is not None:
            spans[name] = _rows_span(raw, key)
    if "kernel_exact" not in spans or any(s is None for s in spans.values()):
        return None
    order = sorted(spans.items(), key=lambda kv: kv[1][0])
    if len(order) == 2 and order[0][1][1] > order[1][1][0]:
        return None  # overlapping cuts
    token = "mechdesign-cut"
    while token.encode() in raw:
        token += "x"
    placeholders = {name: f"{token}-{name}" for name in spans}
    pieces, last = [], 0
    for name, (lo, hi) in order:
        pieces += [raw[last:lo], json.dumps(placeholders[name]).encode()]
        last = hi
    pieces.append(raw[last:])
    try:
        data = json.loads(b"".join(pieces))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None  # the Fraction path words the error
    if not isinstance(data, dict) or any(data.get(name) != ph for name, ph in placeholders.items()):
        return None
    if "kernel" in spans and not _valid_json_rows(raw, *spans["kernel"]):
        return None
    nums, dens, width, rows = [], [], None, 0
    for lo, hi in _row_pieces(raw, *spans["kernel_exact"]):
        parsed = _exact_rows_text(np.frombuffer(raw, dtype=np.uint8, count=hi - lo, offset=lo))
        if parsed is None or width not in (None, parsed[2][1]):
            return None
        nums.append(parsed[0])
        dens.append(parsed[1])
        width = parsed[2][1]
        rows += parsed[2][0]
    del raw
    p, q = np.concatenate(nums), np.concatenate(dens)
    del nums, dens
    return _on_common_denominator((p, q, (rows, width)))


def _rows_span(raw: bytes, key: re.Match) -> tuple[int, int] | None:
    """[lo, hi) of the array of rows that follows ``"name": `` (from its '[' to its ']' when rows are lists of
    scalars: the first "]" followed by white space and "]" closes it; the placeholder test decides)."""
    lo = raw.index(b"[", key.start())
    end = _ROWS_END.search(raw, lo)
    return None if end is None else (lo, end.end())


def _row_pieces(raw: bytes, lo: int, hi: int):
    """The rows of the array ``raw[lo:hi]`` (``[row, row, ...]``) as pieces ``[row, ..., row]`` of about
    :data:`_JSON_CHUNK` bytes: each piece is cut just after a "]" and its leading comma is dropped, so each is
    an array of whole rows when every "]" closes a row (a cut elsewhere fails the checks of the piece)."""
    pos, inner_end = lo + 1, hi - 1
    first = True
    while pos < inner_end:
        cut = raw.find(b"]", pos + _JSON_CHUNK, inner_end)
        cut = inner_end if cut == -1 else cut + 1
        start = pos
        while start < cut and raw[start] in b" \t\r\n":
            start += 1
        if start == inner_end and not first:
            return  # white space after the last row
        if not first:
            if start >= cut or raw[start] != ord(","):
                yield start, start  # an empty piece: fails every check
                return
            start += 1
        first = False
        yield start - 1, cut + 1  # with the "[" before and the "]" after: lo - 1 and hi hold a byte each
        pos = cut


def _valid_json_rows(raw: bytes, lo: int, hi: int) -> bool:
    """True when ``raw[lo:hi]`` is a valid JSON array of rows of numbers (:func:`_number_rows_valid`, a piece of
    rows at a time; ``json.loads`` of the piece when it holds letters, as NaN or Infinity)."""
    if b'"' in raw[lo:hi]:
        return False  # no strings: every "]" closes a row, so the pieces are whole rows
    for a, b in _row_pieces(raw, lo, hi):
        valid = _number_rows_valid(np.frombuffer(raw, dtype=np.uint8, count=b - a, offset=a)[1:-1])
        if valid is None:
            try:
                json.loads(b"[" + raw[a + 1 : b - 1] + b"]")
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                return False
        elif not valid:
            return False
    return True


_NUMBER_ROWS_ALLOWED = _JSON_SPACE.copy()
for _c in b"0123456789.eE+-,[]":
    _NUMBER_ROWS_ALLOWED[_c] = True


def _number_rows_valid(b: np.ndarray) -> bool | None:
    """Is ``b`` exactly ``row, row, ...`` with rows ``[number, ...]`` of JSON numbers
    (``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``) and white space only between tokens? None when it holds
    other bytes (NaN, Infinity: the caller asks ``json.loads``).

    A token is a maximal run of the bytes ``0-9 . e E + -``. It is a JSON number exactly when: a "-" is at its
    start or right after the e, and "+" only right after the e, each followed by a digit; a "." lies between two
    digits; the e follows a digit and precedes a digit or a sign; a token holds at most one "." and one e, the
    "." before the e; and a "0" that starts the integer part is not followed by a digit. Everything is decided
    from the non-digit bytes (their positions tell where the digit runs are), a fifth of a kernel's text."""
    if b.size == 0:
        return None
    marks = np.flatnonzero((b - np.uint8(ord("0"))) >= 10)  # every byte but '0'..'9'
    c = b[marks]
    if not _NUMBER_ROWS_ALLOWED[c].all():
        return None
    k = marks.size
    if k == 0:
        return False
    gap_before = np.empty(k, dtype=bool)  # digits directly before mark i
    gap_before[0] = marks[0] > 0
    gap_before[1:] = np.diff(marks) > 1
    gap_after = np.empty(k, dtype=bool)  # digits directly after mark i
    gap_after[:-1] = gap_before[1:]
    gap_after[-1] = marks[-1] < b.size - 1
    dot, minus, plus = c == ord("."), c == ord("-"), c == ord("+")
    exp = (c == ord("e")) | (c == ord("E"))
    in_token = dot | exp | minus | plus
    structural = ~in_token  # , [ ] and white space
    prev_mark_token = np.zeros(k, dtype=bool)  # the byte before mark i is a token mark
    prev_mark_token[1:] = in_token[:-1] & ~gap_before[1:]
    exp_prev = np.zeros(k, dtype=bool)
    exp_prev[1:] = exp[:-1] & ~gap_before[1:]
    sign_next = np.zeros(k, dtype=bool)
    sign_next[:-1] = (minus[1:] | plus[1:]) & ~gap_after[:-1]
    start_minus = minus & ~gap_before & ~prev_mark_token
    if not (
        (~minus | ((start_minus | exp_prev) & gap_after)).all()
        and (~plus | (exp_prev & gap_after)).all()
        and (~dot | (gap_before & gap_after)).all()
        and (~exp | (gap_before & (gap_after | sign_next))).all()
    ):
        return False
    # a "0" that starts an integer part (after a structural byte or a leading "-") followed by another digit
    ends = np.empty(k, dtype=np.int64)  # where the digit run after mark i ends (exclusive)
    ends[:-1] = marks[1:]
    ends[-1] = b.size
    opens = np.flatnonzero((structural | start_minus) & gap_after)
    if ((b[marks[opens] + 1] == ord("0")) & (ends[opens] - marks[opens] > 2)).any():
        return False
    if marks[0] > 1 and b[0] == ord("0"):
        return False
    token_id = np.cumsum(structural)
    dots, exps = np.flatnonzero(dot), np.flatnonzero(exp)
    if (np.diff(token_id[dots]) == 0).any() or (np.diff(token_id[exps]) == 0).any():
        return False  # two "." or two e in one token
    after = np.searchsorted(dots, exps)  # the first "." after each e
    has = after < dots.size
    if (token_id[dots[after[has]]] == token_id[exps[has]]).any():
        return False  # a "." after the e of its token
    # structure: each token becomes one symbol "n" (at a leading "-", or after the structural byte before its
    # digits); white space is dropped; then "[n,n,...],[n,...]" exactly
    solid = structural & ~_JSON_SPACE[c]
    slots = np.zeros((k, 2), dtype=np.uint8)  # 0: empty
    slots[:, 0] = np.where(solid, c, 0)
    slots[start_minus, 0] = ord("n")
    slots[structural & gap_after, 1] = ord("n")
    symbols = slots.ravel()
    symbols = symbols[symbols != 0]
    if marks[0] > 0:
        symbols = np.concatenate(([np.uint8(ord("n"))], symbols))
    return _rows_of_symbols(symbols)  # "1 2" (white space between two tokens) gives "nn": not rows


def _rows_of_symbols(s: np.ndarray) -> bool:
    """``s`` is exactly ``[n,...,n],[n,...],...`` (one or more rows of one or more "n")."""
    if s.size < 3 or s[0] != ord("[") or s[-1] != ord("]"):
        return False
    inner = s[1:-1]
    close = np.flatnonzero(inner == ord("]"))
    opening = np.flatnonzero(inner == ord("["))
    if close.size != opening.size or (
        close.size
        and (
            not (close + 2 < inner.size).all()
            or not (inner[np.minimum(close + 1, inner.size - 1)] == ord(",")).all()
            or not (opening == close + 2).all()
        )
    ):
        return False
    keep = np.ones(inner.size, dtype=bool)
    keep[close + 1] = False
    keep[opening] = False
    rest = inner[keep]  # "n" at even places, "," or "]" (between rows) at odd ones
    return bool(
        rest.size % 2 == 1 and (rest[0::2] == ord("n")).all() and np.isin(rest[1::2], [ord(","), ord("]")]).all()
    )


_EXACT_MARKS_ALLOWED = _JSON_SPACE.copy()
for _c in b'/",[]':
    _EXACT_MARKS_ALLOWED[_c] = True


def _exact_rows_text(piece: np.ndarray):
    """(p, q, shape) from a byte piece ``?row, ..., row?`` (first and last byte ignored: they stand for "[" and
    "]") when it is exactly rows ``["p/q", ...]`` of quoted strings of digits with at most one slash (1 to 18
    digits each), with white space only between tokens (valid JSON), else None.

    Decided from the non-digit bytes ("marks") alone, as :func:`_parse_lines`: a mark is inside a string when an
    odd number of quotes precede it; inside a string only a "/" may stand, with digits on both sides, and an
    opening quote is followed, a closing quote preceded, by digits; digits occur nowhere else. Each string then
    becomes one symbol "n" and the symbols must form ``[n,...],[n,...]`` exactly."""
    b = piece[1:-1]
    if b.size == 0:
        return None
    marks = np.flatnonzero((b - np.uint8(ord("0"))) >= 10)
    c = b[marks]
    if marks.size < 4 or not _EXACT_MARKS_ALLOWED[c].all():
        return None
    k = marks.size
    gap_before = np.empty(k, dtype=bool)  # digits directly before mark i
    gap_before[0] = marks[0] > 0
    gap_before[1:] = np.diff(marks) > 1
    if gap_before[0] or marks[-1] != b.size - 1:
        return None  # digits before the first mark or after the last: outside any string
    gap_after = np.empty(k, dtype=bool)
    gap_after[:-1] = gap_before[1:]
    gap_after[-1] = False
    quote = c == ord('"')
    opening = quote & (np.cumsum(quote, dtype=np.uint8) & 1).astype(bool)  # odd count up to and incl. it
    closing = quote & ~opening
    inside = ~quote & (np.cumsum(quote, dtype=np.uint8) & 1).astype(bool)
    slash = c == ord("/")
    if not (
        np.array_equal(inside, slash)  # inside a string only "/", and every "/" inside one
        and np.array_equal(gap_before, closing | slash)  # digits end exactly at a "/" or a closing quote
        and np.array_equal(gap_after, opening | slash)  # and start exactly after an opening quote or a "/"
        and np.count_nonzero(quote) % 2 == 0  # every string closed
    ):
        return None
    if (slash[1:] & slash[:-1]).any():
        return None  # two slashes in one string
    # symbols: an opening quote is "n"; closing quotes, slashes and white space go
    keep = ~(closing | slash | _JSON_SPACE[c])
    symbols = np.where(opening, np.uint8(ord("n")), c)[keep]
    if not _rows_of_symbols(symbols):
        return None
    widths = np.diff(np.cumsum(symbols == ord("n"))[symbols == ord("]")], prepend=0)
    if not (widths == widths[0]).all():
        return None
    ends = np.flatnonzero(gap_before)  # the mark after each run of digits
    starts = marks[ends - 1] + 1
    values = _digit_values(b, starts, marks[ends] - starts)
    if values is None:
        return None
    is_den = closing[ends] & slash[ends - 1]  # a run between a "/" and the closing quote
    num = values[~is_den]
    den = np.ones(num.size, dtype=np.int64)
    den[slash[ends[~is_den]]] = values[is_den]
    if (den == 0).any():
        return None
    return num, den, (widths.size, int(widths[0]))


def _checked(ints: np.ndarray, den: int, source: str) -> tuple[GridKernel, list[int]] | None:
    """The rule of ``read_kernel_normalised`` on A / D: the first row (in order) with a negative entry or an
    exact sum more than 1e-9 from 1 is an InputError with the same message; a kernel whose rows all sum to
    exactly 1 is returned; None when some row sums to 1 only within 1e-9 (normalised by the Fraction path)."""
    negative_rows = (ints < 0).any(axis=1)
    largest = max(abs(int(ints.max())), abs(int(ints.min())))
    sums = exact_sums(ints, axis=1, largest=largest).tolist()
    tolerance = Fraction(1, 10**9)
    off = [i for i, s in enumerate(sums) if s != den]
    far = [i for i in off if abs(Fraction(sums[i], den) - 1) > tolerance]
    first_negative = int(np.argmax(negative_rows)) if negative_rows.any() else None
    candidates = [i for i in (first_negative, far[0] if far else None) if i is not None]
    if candidates:
        i = min(candidates)
        if negative_rows[i]:
            j = int(np.argmax(ints[i] < 0))
            raise InputError(
                f"{source}: row {i}, column {j}: entries must be >= 0, found "
                f"{shown_number(Fraction(int(ints[i, j]), den))} (invalid kernel)"
            )
        s = Fraction(sums[i], den)
        raise InputError(
            f"{source}: row {i} sums to {shown_number(s)}, more than 1e-9 from 1 "
            "(invalid kernel: rows must be probability distributions)"
        )
    if off:
        return None
    return GridKernel(ints, den, stochastic=True), []
