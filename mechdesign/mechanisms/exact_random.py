"""Exact, vectorised random draws for the structured mechanisms: integers only, never a float compared
with a float probability.

Every probability a structured sampler uses is a rational a/b; a draw is a uniform integer U in
[0, b) and the event is U < a, so P(event) = a/b exactly. Uniform integers come from

* ``rng=None`` (default): the operating system's cryptographic source (:func:`os.urandom`, the source
  of :class:`secrets.SystemRandom`), in bulk: the top k = bitlength(b − 1) bits of random 64-bit words,
  values ≥ b rejected and redrawn (exact, no modulo bias);
* an ``int`` seed or a :class:`numpy.random.Generator`: numpy's bounded integers (Lemire's method with
  rejection, exact), for reproducible runs.

Bernoulli(a / 2^w) bits (unary encoding, w = 32) compare a uniform w-bit word U with a lazily, one random
byte at a time from the most significant (:func:`dyadic_below`): U < a is decided by the first byte where U
and a differ, so a draw reads one byte unless its first byte ties with a's (probability 1/256), and the
event is exactly U < a for a uniform U, probability a / 2^w.
"""

from __future__ import annotations

import os
import random
import secrets

import numpy as np

__all__ = [
    "resolve_rng",
    "uniform_below",
    "uniform_below_rows",
    "random_bytes",
    "dyadic_below",
    "bernoulli",
]

_INT63 = 1 << 63


class _Cryptographic:
    """Marker for the default source: os.urandom in bulk."""

    def __repr__(self) -> str:
        return "cryptographic (os.urandom)"


def resolve_rng(rng=None):
    """None → the cryptographic source; an int → ``numpy.random.default_rng(seed)``; a Generator as is."""
    if rng is None or isinstance(rng, (_Cryptographic, secrets.SystemRandom)):
        return _Cryptographic()
    if isinstance(rng, bool):
        raise TypeError("rng must be None, an int seed or a numpy Generator")
    if isinstance(rng, (int, np.integer)):
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, random.Random):
        return np.random.default_rng(rng.getrandbits(128))
    raise TypeError(f"rng must be None, an int seed or a numpy Generator, found {type(rng).__name__}")


def uniform_below(rng, bound: int, size: int) -> np.ndarray:
    """``size`` independent uniform integers in [0, bound) (int64), exactly; 1 ≤ bound ≤ 2^63."""
    bound = int(bound)
    if not 1 <= bound <= _INT63:
        raise ValueError(f"bound must lie in [1, 2^63], found {bound}")
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, bound, size=size, dtype=np.int64)
    k = (bound - 1).bit_length()
    out = np.empty(size, dtype=np.int64)
    if k == 0:
        out[:] = 0
        return out
    todo = np.arange(size)
    while todo.size:
        words = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
        vals = words >> np.uint64(64 - k)
        ok = vals < np.uint64(bound)
        out[todo[ok]] = vals[ok].astype(np.int64)
        todo = todo[~ok]
    return out


def uniform_below_rows(rng, bounds, size: int) -> np.ndarray:
    """A (len(bounds), size) int64 array: row i holds ``size`` independent uniform integers in [0, bounds[i]),
    exactly, every bound in [1, 2^62] (same sources as :func:`uniform_below`: numpy's bounded integers with
    rejection for a Generator; otherwise the top bitlength(b − 1) bits of cryptographic words of 16, 32 or 64
    bits (the narrowest that holds every bound), values ≥ b redrawn). One bulk draw instead of one call per row."""
    bounds = [int(v) for v in bounds]
    if any(not 1 <= v <= 1 << 62 for v in bounds):
        raise ValueError("bounds must lie in [1, 2^62]")
    col = np.array(bounds, dtype=np.int64)[:, None]
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, np.broadcast_to(col, (len(bounds), size)), dtype=np.int64)
    top = max(bounds, default=1)
    word = 16 if top <= 1 << 16 else 32 if top <= 1 << 32 else 64  # the narrowest word holding every bound's bits
    kind = {16: np.uint16, 32: np.uint32, 64: np.uint64}[word]
    # shift = word − bitlength(b − 1), capped at word − 1 (a bound of 1: the value is 0, set below)
    shift = np.array([min(word - 1, word - (v - 1).bit_length()) for v in bounds], dtype=np.uint64)[:, None]
    limit = col.astype(np.uint64)
    words = np.frombuffer(os.urandom(word // 8 * len(bounds) * size), dtype=kind).reshape(len(bounds), size)
    vals = np.where(col == 1, kind(0), words >> shift.astype(kind))  # first round on the whole array, per row
    ok = vals < limit
    out = np.where(ok, vals, 0).astype(np.int64)
    todo = np.flatnonzero(~ok.ravel())  # rejected entries (a bound of 1 never rejects: 0 < 1), redrawn
    flat_out = out.reshape(-1)
    row_of = todo // max(size, 1)
    while todo.size:
        words = np.frombuffer(os.urandom(word // 8 * todo.size), dtype=kind).astype(np.uint64)
        vals = words >> shift[row_of, 0]
        ok = vals < limit[row_of, 0]
        flat_out[todo[ok]] = vals[ok].astype(np.int64)
        todo, row_of = todo[~ok], row_of[~ok]
    return out


def random_bytes(rng, size: int) -> np.ndarray:
    """``size`` independent uniform bytes (uint8)."""
    if isinstance(rng, np.random.Generator):
        return rng.bit_generator.random_raw((size + 7) // 8).view(np.uint8)[:size]  # raw 64-bit outputs, split
    return np.frombuffer(os.urandom(size), dtype=np.uint8)


def dyadic_below(rng, numerator: int, bits: int, size: int) -> np.ndarray:
    """``size`` independent Bernoulli(numerator / 2^bits) draws (bool), exactly, for ``bits`` a multiple of 8.

    Each draw is the event U < numerator for a uniform ``bits``-bit word U, compared lazily from the most
    significant byte: the first byte B of U decides when B ≠ a's first byte (B < it: true; B > it: false);
    on a tie the next byte of U is drawn and compared with a's next byte, and so on; U = a is false. The
    bytes of U never read do not change the outcome, so the event is exactly U < a: probability a / 2^bits,
    at a cost of 1 + 1/256 + ... bytes per draw instead of a whole word."""
    numerator = int(numerator)
    if bits % 8 or bits <= 0:
        raise ValueError(f"bits must be a positive multiple of 8, found {bits}")
    if numerator <= 0:
        return np.zeros(size, dtype=bool)
    if numerator >= 1 << bits:
        return np.ones(size, dtype=bool)
    digits = numerator.to_bytes(bits // 8, "big")
    first = random_bytes(rng, size)
    out = first < digits[0]
    tied = np.flatnonzero(first == digits[0])
    for digit in digits[1:]:
        if not tied.size:
            break
        nxt = random_bytes(rng, tied.size)
        out[tied[nxt < digit]] = True
        tied = tied[nxt == digit]
    return out


def bernoulli(rng, numerator: int, denominator: int, size: int) -> np.ndarray:
    """``size`` independent Bernoulli(numerator / denominator) draws (bool), exactly."""
    if numerator <= 0:
        return np.zeros(size, dtype=bool)
    if numerator >= denominator:
        return np.ones(size, dtype=bool)
    return uniform_below(rng, denominator, size) < numerator
