"""Exact samplers of the set-valued mechanisms.

* The lazy byte-wise Bernoulli draw (``dyadic_below``, unary encoding's bits) is exactly the event U < a for a
  uniform word U: pointwise against the full-word comparison over every 16-bit byte string, and in frequency
  (binomial z-scores) for 32-bit thresholds whose tie branch decides 1/256 of the draws.
* Marks corrected to the size (``subsets_around``, subset selection for d ≥ N/10) give uniform subsets around
  x, whatever the marking rate (chi-square over every subset, including rates 0 and 1 where the whole set
  comes from the correction), and subset selection's reports on both of its paths (marks; Floyd's algorithm)
  have the frequencies of Ye and Barg's kernel: a d-subset S has probability p_in / C(N−1, d−1) if x ∈ S
  and (1 − p_in) / C(N−1, d) otherwise, p_in = d R / (d R + N − d)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from mechdesign.mechanisms import exact_random
from mechdesign.mechanisms import subset_selection
from mechdesign.mechanisms.exact_random import dyadic_below, resolve_rng
from mechdesign.mechanisms.set_reports import subsets_around


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


def _subset_counts(sets: np.ndarray, m: int) -> dict[tuple[int, ...], int]:
    keys, counts = np.unique(sets, axis=0, return_counts=True)
    return {tuple(int(v) for v in key): int(c) for key, c in zip(keys, counts)}


@pytest.mark.parametrize("source", [11, None])
@pytest.mark.parametrize("m,k,rate", [(7, 3, None), (7, 3, 0), (7, 3, 256), (8, 6, None), (6, 1, 200), (9, 4, 17)])
def test_marks_corrected_to_the_size_are_uniform_around_x(source, m, k, rate):
    """Rows alternate x and include; every row must hold x exactly when include, have k sorted distinct
    entries, and the other k − include entries must be uniform over the (k − include)-subsets of the m − 1
    others (chi-square per (x, include) group; small blocks: several batches)."""
    rng = resolve_rng(source)
    n = 24_000
    x = np.arange(n) % m
    include = (np.arange(n) // m) % 2 == 0
    sets = subsets_around(rng, m, x, include, k, block_bytes=64 * m, mark_rate=rate)
    assert sets.shape == (n, k) and np.all(np.diff(sets, axis=1) > 0) and sets.min() >= 0 and sets.max() < m
    assert np.array_equal((sets == x[:, None]).any(axis=1), include)
    for x0 in (0, m - 1):
        for inc in (True, False):
            rows = (x == x0) & (include == inc)
            others = [s for s in itertools.combinations([v for v in range(m) if v != x0], k - inc)]
            counts = _subset_counts(sets[rows], m)
            observed = [counts.get(tuple(sorted(set(s) | ({x0} if inc else set()))), 0) for s in others]
            assert sum(observed) == rows.sum()
            if len(others) > 1:
                assert chisquare(observed).pvalue > 1e-4, (m, k, rate, x0, inc)


@pytest.mark.parametrize("n_symbols,d", [(12, 5), (30, 2)])  # 10 d >= N: marks; 10 d < N: Floyd's algorithm
def test_subset_selection_reports_have_the_kernel_frequencies(n_symbols, d):
    mech = subset_selection(n_symbols, "1", d=d)
    r = mech.ratios[0]
    p_in = d * r / (d * r + n_symbols - d)
    draws = 60_000
    for x in (0, 7):
        reports = mech.privatize_indices(np.full(draws, x), rng=100 + x)
        sets = reports.positions.reshape(draws, d)
        counts = _subset_counts(sets, n_symbols)
        subsets = list(itertools.combinations(range(n_symbols), d))
        expected = np.array(
            [
                float(p_in / math.comb(n_symbols - 1, d - 1) if x in s else (1 - p_in) / math.comb(n_symbols - 1, d))
                for s in subsets
            ]
        )
        assert abs(expected.sum() - 1) < 1e-12
        observed = np.array([counts.get(s, 0) for s in subsets])
        assert observed.sum() == draws
        if len(subsets) > 200:  # many cells: pool them by whether they hold x (and check each cell's mean)
            holds = np.array([x in s for s in subsets])
            pooled = [observed[holds].sum(), observed[~holds].sum()]
            assert chisquare(pooled, draws * np.array([expected[holds].sum(), expected[~holds].sum()])).pvalue > 1e-4
            assert chisquare(observed[holds]).pvalue > 1e-4 and chisquare(observed[~holds]).pvalue > 1e-4
        else:
            assert chisquare(observed, draws * expected).pvalue > 1e-4, (n_symbols, d, x)
