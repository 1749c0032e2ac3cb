"""The lazy byte-wise Bernoulli draw (``dyadic_below``, unary encoding's bits) is exactly the event U < a for a
uniform word U: pointwise against the full-word comparison over every 16-bit byte string, and in frequency
(binomial z-scores) for 32-bit thresholds whose tie branch decides 1/256 of the draws."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.mechanisms import exact_random
from mechdesign.mechanisms.exact_random import dyadic_below, resolve_rng


@pytest.mark.parametrize("a", [1, 0x00FF, 0x0100, 0x4D80, 0x4DFF, 0x8000, 0xFFFF])
def test_lazy_comparison_equals_the_full_word_comparison_on_every_byte_string(a, monkeypatch):
    """Every (B0, B1) of two uniform bytes: the draw reads B0, and B1 only on a tie; its outcome must be
    B0·256 + B1 < a (the big-endian 16-bit word against a). Served by a fake source: the first request gets
    B0 = 0..255 (one draw each), any later request the constant B1. Then #{(B0, B1): true} = a exactly,
    i.e. probability a / 2^16."""
    true_pairs = 0
    for b1 in range(256):
        calls = []

        def fake(rng, size, b1=b1, calls=calls):
            calls.append(size)
            if len(calls) == 1:
                return np.arange(256, dtype=np.uint8)
            return np.full(size, b1, dtype=np.uint8)

        monkeypatch.setattr(exact_random, "random_bytes", fake)
        got = dyadic_below(None, a, 16, 256)
        words = np.arange(256) * 256 + b1
        assert np.array_equal(got, words < a), (a, b1)
        assert sum(calls[1:]) <= 1  # only the one tied first byte (a >> 8) reads a second byte
        true_pairs += int(got.sum())
    assert true_pairs == a


@pytest.mark.parametrize("source", [5, None])
def test_lazy_comparison_frequencies_at_32_bit_thresholds(source):
    """a = t·2^24 and a = t·2^24 + 2^24 − 1 share their top byte t: the first has probability t/256, the second
    (t + 1)/256 − 2^-32, a difference decided only by the tie branch. Each count of n draws must be within 5
    binomial standard deviations of n·a/2^32 (the probabilities are a/2^32 by definition of U < a)."""
    rng = resolve_rng(source)
    n = 4_000_000
    for a in (77 << 24, (77 << 24) + (1 << 24) - 1, 1155094610, (1 << 31) - 1):
        p = a / 2**32
        count = int(dyadic_below(rng, a, 32, n).sum())
        z = (count - n * p) / np.sqrt(n * p * (1 - p))
        assert abs(z) < 5, (a, z)
    assert not dyadic_below(rng, 0, 32, 100).any() and dyadic_below(rng, 1 << 32, 32, 100).all()
    with pytest.raises(ValueError, match="multiple of 8"):
        dyadic_below(rng, 3, 12, 10)
