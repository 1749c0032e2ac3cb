"""Exact, vectorised random draws for the structured mechanisms: integers only, never a float compared
with a float probability.

Every probability a structured sampler uses is a rational a/b; a draw is a uniform integer U in
[0, b) and the event is U < a, so P(event) = a/b exactly. Uniform integers come from

* ``rng=None`` (default): the operating system's cryptographic source (:func:`os.urandom`, the source
  of :class:`secrets.SystemRandom`), in bulk: the top k = bitlength(b − 1) bits of random 64-bit words,
  values ≥ b rejected and redrawn (exact, no modulo bias);
* an ``int`` seed or a :class:`numpy.random.Generator`: numpy's bounded integers (Lemire's method with
  rejection, exact), for reproducible runs.

Bernoulli(a / 2^32) bits (unary encoding) compare uniform 32-bit words with a.
"""

from __future__ import annotations

import os
import random
import secrets

import numpy as np

__all__ = ["resolve_rng", "uniform_below", "uniform_below_rows", "uniform_words32", "bernoulli"]

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


def uniform_words32(rng, size: int) -> np.ndarray:
    """``size`` independent uniform 32-bit words (uint32)."""
    if isinstance(rng, np.random.Generator):
        return rng.bit_generator.random_raw((size + 1) // 2).view(np.uint32)[:size]  # raw 64-bit outputs, halved
    return np.frombuffer(os.urandom(4 * size), dtype=np.uint32)


def bernoulli(rng, numerator: int, denominator: int, size: int) -> np.ndarray:
    """``size`` independent Bernoulli(numerator / denominator) draws (bool), exactly."""
    if numerator <= 0:
        return np.zeros(size, dtype=bool)
    if numerator >= denominator:
        return np.ones(size, dtype=bool)
    return uniform_below(rng, denominator, size) < numerator
