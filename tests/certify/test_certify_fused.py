"""The certify stage's fused, blocked passes: column aggregates folded block of rows by block of rows,
the 2^−52 rounding that also writes them and the float kernel, the integer mix written over the kernel, the probe
columns of the snapping grids in one pass, and :func:`mechdesign.certify.stage.certify_on_fine_grid`.

Independent references, written here from the definitions with Python integers and Fractions:

* column aggregates: Python ``max``, ``min`` and ``sum`` of each column;
* the 2^−52 rounding: each row clipped to [0, 1], rounded to the nearest multiple of 2^−52 (half to even), its first
  largest entry absorbing the remainder (the definition in :func:`mechdesign.certify.exact.to_grid`);
* the one-pass mix (module docstring of :mod:`mechdesign.certify.grid_repair`): for the weight w returned, the
  kernel A'' is ⌊w A_xy⌋ taken out, h_y = ⌊w s_y / N⌋ put in, and each row's shortfall R_x as ±1 on its first
  |R_x| columns with s_y > 0; w meets (★) w ((E − 1) s_y / N + u_y) ≥ u_y + 2(1 + E) for every column with
  u_y + 2(1 + E) > 0, u_y = a_y − E (c s_y + (1 − Nc) b_y), and is at most the largest such lower bound,
  rounded up by a relative 2^−30 (plus 2^−85);
* the coarse rounding of a row: ⌊A / 2^d⌋, then +1 to its (2^(52−d) − Σ⌊·⌋) largest remainders, ties to the lower
  column index;
* privacy: tests/helpers/exact_oracle.py (no mechdesign import), for ε = log E written as text, so e^ε = E exactly.

Kernels: random ones, columns exactly on the (ε, Q_X(c))-PML boundary (Remark 2 of the Dobrushin paper: two
levels, the constraint tight), columns one unit of 2^−52 over it, kernels the repair has to mix, and rows whose
remainders tie across most of the row.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign.certify.exact as exact
import mechdesign.certify.fused as fused
from helpers.kernels import oracle_private, prior_set, two_level_kernel
from mechdesign.certify.exact import GridKernel, check_pml, repair, to_grid
from mechdesign.certify.fused import (
    ColumnAggregator,
    coarse_probe_columns,
    mix_on_grid_in_place,
    rows_stochastic,
)
from mechdesign.certify.stage import certify_on_fine_grid
from mechdesign.spec.models import load_spec

D = 1 << 52


def python_aggregates(ints) -> tuple[list[int], list[int], list[int]]:
    cols = list(zip(*[[int(v) for v in row] for row in ints]))
    return [max(col) for col in cols], [min(col) for col in cols], [sum(col) for col in cols]


def same_aggregates(got, ints) -> bool:
    maxima, minima, sums = python_aggregates(ints)
    return got[0].tolist() == maxima and got[1].tolist() == minima and list(got[2]) == sums


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows, so that every pass folds many blocks."""
    monkeypatch.setattr(exact, "ROW_BLOCK_ENTRIES", 8)
    monkeypatch.setattr(fused, "ROW_BLOCK_ENTRIES", 8)
    monkeypatch.setattr(fused, "PROBE_BLOCK_ENTRIES", 8)


# ----------------------------------------------------------------------------------------- column aggregates
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.data())
def test_column_aggregates_folded_by_blocks_are_the_python_ones(n, m, data):
    values = st.integers(0, D) | st.sampled_from([0, 1, D, D - 1])
    rows = data.draw(st.lists(st.lists(values, min_size=m, max_size=m), min_size=n, max_size=n))
    ints = np.array(rows, dtype=np.int64)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n), max_size=4)) + [n]))
    aggregates = ColumnAggregator(m)
    lo = 0
    for hi in cuts:
        aggregates.add(ints[lo:hi])
        lo = hi
    assert same_aggregates(aggregates.result(), rows)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 30), st.booleans(), st.data())
def test_column_classes_group_the_columns_with_equal_aggregates(m, big_sums, data):
    """Columns drawn from a few (max, min, sum) triples, the sums past int64 too (two limbs): the classes are
    those of a dict keyed by the Python triple, numbered by their first column, ``first`` the first column of
    each, ``inverse`` every column's class."""
    from mechdesign.certify.grid_arith import column_classes

    sums_pool = st.integers(-(1 << 70), 1 << 70) if big_sums else st.integers(0, 1 << 62)
    pool = data.draw(
        st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 3), sums_pool), min_size=1, max_size=4, unique=True)
    )
    triples = [pool[data.draw(st.integers(0, len(pool) - 1))] for _ in range(m)]
    aggregates = (
        np.array([t[0] for t in triples], dtype=np.int64),
        np.array([t[1] for t in triples], dtype=np.int64),
        np.array([t[2] for t in triples] or [], dtype=object),
    )
    first, inverse = column_classes(aggregates)
    members: dict = {}
    for y, t in enumerate(triples):
        members.setdefault(t, []).append(y)
    want_first = sorted(ys[0] for ys in members.values())
    assert first.tolist() == want_first
    assert inverse.tolist() == [want_first.index(members[t][0]) for t in triples]


def test_column_sums_of_a_tall_kernel_pass_int64_exactly():
    """5000 rows of entries near 2^52 in blocks of 700 rows: sums past 2^63, against Python integers."""
    ints = np.random.default_rng(1).integers(D - 1000, D + 1, size=(5000, 3), dtype=np.int64)
    aggregates = ColumnAggregator(3)
    for lo in range(0, 5000, 700):
        aggregates.add(ints[lo : lo + 700])
    got = aggregates.result()
    assert max(got[2]) > 1 << 63
    assert same_aggregates(got, ints.tolist())


def test_rows_stochastic_is_exact_past_uint64():
    """4097 entries of 2^52 sum to 2^64 + 2^52, which wraps to 2^52 in 64 bits: not a row of the kernel."""
    wide = np.full((1, 4097), D, dtype=np.int64)
    assert sum(int(v) for v in wide[0]) != D
    assert not rows_stochastic(wide, D)
    row = np.zeros((2, 4100), dtype=np.int64)
    row[0, :4] = D // 4
    row[1, -1] = D
    assert rows_stochastic(row, D)
    row[1, 0] = 1
    assert not rows_stochastic(row, D)
    assert not rows_stochastic(np.array([[D + 1, -1]], dtype=np.int64), D)  # sums to D, entries out of range


# ----------------------------------------------------------------------------------------- the 2^-52 rounding
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(1, 6), st.data())
def test_fine_grid_rounding_writes_its_aggregates_and_floats(n, m, data):
    floats = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 1.0, 1e-300, 0.1, 1 / 3])
    K = np.array(data.draw(st.lists(floats, min_size=n * m, max_size=n * m))).reshape(n, m)
    K[:, 0] += 1 - K.sum(axis=1)  # near stochastic: the blocked path applies
    K = np.clip(K, 0, 1)
    want = []
    for x in range(n):
        nums = [round(Fraction(float(v)) * D) for v in K[x]]
        nums[nums.index(max(nums))] += D - sum(nums)
        want.append(nums)
    if min(map(min, want)) < 0:
        return  # a row far from stochastic: to_grid renormalises it (not this path)
    old = exact.ROW_BLOCK_ENTRIES
    exact.ROW_BLOCK_ENTRIES = 8
    try:
        out = np.full((n, m), np.nan)
        got = exact._to_fine_grid_by_rows(K, out)
    finally:
        exact.ROW_BLOCK_ENTRIES = old
    assert got.int64().tolist() == want
    assert same_aggregates(got.column_aggregates(), want)
    assert [[Fraction(float(v)) for v in row] for row in out] == [[Fraction(v, D) for v in row] for row in want]


# ----------------------------------------------------------------------------------------- the in-place mix
def reference_mix(ints: list[list[int]], w: Fraction) -> list[list[int]]:
    """A'' of grid_repair's docstring for the weight w, in Python integers."""
    n, m = len(ints), len(ints[0])
    s = [sum(ints[x][y] for x in range(n)) for y in range(m)]
    h = [(w * s[y] / n).__floor__() for y in range(m)]
    live = [y for y in range(m) if s[y] > 0]
    out = []
    for row in ints:
        f = [(w * v).__floor__() for v in row]
        new = [v - fv + hv for v, fv, hv in zip(row, f, h)]
        short = sum(f) - sum(h)
        for y in live[: abs(short)]:
            new[y] += 1 if short > 0 else -1
        out.append(new)
    return out


def star_bounds(ints, c: Fraction, E: Fraction) -> tuple[Fraction, bool]:
    """(largest lower bound (★) puts on w over the columns it constrains, whether some column also caps w)."""
    n = len(ints)
    need, capped = Fraction(0), False
    for col in zip(*ints):
        if max(col) == 0:
            continue
        s = sum(col)
        u = max(col) - E * (c * s + (1 - n * c) * min(col))
        alpha, beta = (E - 1) * Fraction(s, n) + u, u + 2 * (1 + E)
        if beta > 0:
            need = max(need, beta / alpha) if alpha > 0 else Fraction(2)
        elif alpha < beta:
            capped = True
    return need, capped


@st.composite
def kernels_to_mix(draw):
    """(ints on 2^−52, c, E): random columns, columns exactly tight for E (two levels: Remark 2), one unit over."""
    n = draw(st.integers(2, 7))
    m = draw(st.integers(2, 7))
    c = draw(st.sampled_from([Fraction(0), Fraction(1, 2 * n), Fraction(1, 4 * n)]))
    E = draw(st.sampled_from([Fraction(27182818, 10**7), Fraction(3), Fraction(3, 2)]))
    cols = []
    for _ in range(m - 1):
        how = draw(st.sampled_from(["random", "tight", "over", "zero"]))
        if how == "random":
            cols.append([draw(st.integers(0, D // m)) for _ in range(n)])
        elif how == "zero":
            cols.append([0] * n)
        else:  # q entries at the top level t, the rest at t / E', E' ≥ E chosen so the column is tight for E
            q = draw(st.integers(1, n - 1))
            top = draw(st.integers(D // (4 * m), D // m))
            # max = E (c (q top + (n − q) low) + (1 − Nc) low)  ⇒  low = top (1 − E c q) / (E (c (n − q) + 1 − Nc))
            low = Fraction(top) * (1 - E * c * q) / (E * (c * (n - q) + 1 - n * c))
            low_int = int(low)  # floor: the column sits at or over the boundary by under a unit
            col = [top] * q + [max(0, low_int)] * (n - q)
            if how == "over":
                col[0] += 1
            cols.append(col)
    ints = [[col[x] for col in cols] + [0] for x in range(n)]
    for row in ints:
        row[-1] = D - sum(row)
    return ints, c, E


def mix_in_blocks(ints, c, E, block):
    """:func:`mix_on_grid_in_place` of ``ints`` with row blocks of ``block`` entries: (A, floats, result)."""
    n, m = len(ints), len(ints[0])
    A = np.array(ints, dtype=np.int64)
    floats = np.full((n, m), np.nan)
    old = fused.ROW_BLOCK_ENTRIES
    fused.ROW_BLOCK_ENTRIES = block
    try:
        out = mix_on_grid_in_place(A, D, c, E, exact.column_aggregates(A), floats)
    finally:
        fused.ROW_BLOCK_ENTRIES = old
    return A, floats, out


@settings(max_examples=200, deadline=None)
@given(kernels_to_mix(), st.sampled_from([8, 1 << 16]))
def test_in_place_mix_follows_its_definition(case, block):
    ints, c, E = case
    A, floats, out = mix_in_blocks(ints, c, E, block)
    need, capped = star_bounds(ints, c, E)
    if out is None:  # declined: the kernel is untouched (the caller repairs as before)
        assert A.tolist() == ints
        return
    w, aggregates = out
    assert aggregates is not None  # every block passed its check
    assert not capped and 0 < need <= w <= need * (1 + Fraction(1, 1 << 30)) + Fraction(1, 1 << 85) and w < 1
    want = reference_mix(ints, w)
    assert A.tolist() == want
    assert all(v >= 0 for row in want for v in row) and all(sum(row) == D for row in want)
    assert same_aggregates(aggregates, want)
    assert [[Fraction(float(v)) for v in row] for row in floats] == [[Fraction(v, D) for v in row] for row in want]
    assert oracle_private(want, D, c, E)


@st.composite
def rr_kernels(draw):
    """(ints on 2^−52, c, E): k-RR, D − (N − 1) o on the diagonal and o elsewhere with the Lemma-4 ratio of each
    column within a few units of 2^−52 of E (over or under it), all columns equal up to order (one class of
    column aggregates), and optionally a zero column in front."""
    n = draw(st.integers(2, 9))
    c = draw(st.sampled_from([Fraction(0), Fraction(1, 2 * n)]))
    E = draw(st.sampled_from([Fraction(27182818, 10**7), Fraction(3), Fraction(3, 2)]))
    # diagonal t = E (c (t + (n − 1) o) + (1 − Nc) o) with t + (n − 1) o = D: o = D (1 − E c) / (E (1 − c) + n − 1)
    o = int(D * (1 - E * c) / (E * (1 - c) + n - 1)) + draw(st.integers(-40, 40))
    t = D - (n - 1) * o
    ints = [[t if x == y else o for y in range(n)] for x in range(n)]
    if draw(st.booleans()):
        ints = [[0] + row for row in ints]
    return ints, c, E


@settings(max_examples=150, deadline=None)
@given(rr_kernels(), st.sampled_from([8, 1 << 16]))
def test_in_place_mix_of_k_rr_follows_its_definition(case, block):
    """k-RR kernels (every column the same aggregates: the weight, h and the check computed once for the class):
    the weight meets (★) and the kernel is the reference mix, private by the oracle; the check's worst output is
    the first live column."""
    ints, c, E = case
    m = len(ints[0])
    A, floats, out = mix_in_blocks(ints, c, E, block)
    need, capped = star_bounds(ints, c, E)
    check = check_pml(GridKernel(np.array(ints, dtype=np.int64), D), prior_set(c), E)
    live = [y for y in range(m) if any(row[y] for row in ints)]
    assert check.worst_output == live[0] and check.worst_ratio == max(r for r in reference_ratios(ints, c) if r)
    if out is None:  # declined: nothing to mix (the kernel passes) or no weight below 1 meets (★)
        assert A.tolist() == ints and (need == 0 or capped or need >= 1 or check.feasible)
        return
    w, aggregates = out
    assert aggregates is not None
    assert not capped and 0 < need <= w <= need * (1 + Fraction(1, 1 << 30)) + Fraction(1, 1 << 85) and w < 1
    want = reference_mix(ints, w)
    assert A.tolist() == want and same_aggregates(aggregates, want)
    assert [[Fraction(float(v)) for v in row] for row in floats] == [[Fraction(v, D) for v in row] for row in want]
    assert oracle_private(want, D, c, E)


# ----------------------------------------------------------------------------------------- probe columns
def reference_coarse(ints, d: int) -> list[list[int]]:
    out = []
    for row in ints:
        floor = [v >> d for v in row]
        rem = [v - (f << d) for v, f in zip(row, floor)]
        deficit = (D >> d) - sum(floor)
        for y in sorted(range(len(row)), key=lambda j: (-rem[j], j))[:deficit]:
            floor[y] += 1
        out.append(floor)
    return out


def draw_rows_on_the_grid(n, m, ties, data):
    """n rows of m integers summing to D: random, or (``ties``) with remainders tied across most of the row (few
    distinct low bits)."""
    if ties:
        high = data.draw(st.lists(st.integers(0, (D >> 16) // m), min_size=n * m, max_size=n * m))
        low = data.draw(st.lists(st.integers(0, 2), min_size=n * m, max_size=n * m))
        values = [(h << 16) + v for h, v in zip(high, low)]
    else:
        values = data.draw(st.lists(st.integers(0, D // m), min_size=n * m, max_size=n * m))
    ints = [values[x * m : (x + 1) * m] for x in range(n)]
    for row in ints:
        row[-1] += D - sum(row)
    return ints


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 9), st.booleans(), st.data())
def test_probe_columns_of_every_grid_follow_the_definition(n, m, ties, data):
    """Random rows, and rows whose remainders tie across most of the row (few distinct low bits)."""
    ints = draw_rows_on_the_grid(n, m, ties, data)
    ys = data.draw(st.lists(st.integers(0, m - 1), max_size=8))
    drops = data.draw(st.lists(st.sampled_from([1, 4, 8, 12, 16]), min_size=1, max_size=3, unique=True))
    block = data.draw(st.sampled_from([1, 8, 1 << 18]))
    old = fused.PROBE_BLOCK_ENTRIES
    fused.PROBE_BLOCK_ENTRIES = block
    try:
        got = coarse_probe_columns(np.array(ints, dtype=np.int64), 52, drops, ys)
    finally:
        fused.PROBE_BLOCK_ENTRIES = old
    for d in drops:
        want = reference_coarse(ints, d)
        assert got[d].tolist() == [[row[y] for y in ys] for row in want]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 9), st.booleans(), st.data())
def test_one_coarse_column_over_every_row_follows_the_definition(n, m, ties, data):
    """coarse_column (the rank of each entry in its row's rounding order, no sort) is the reference rounding's
    column: random rows and rows whose remainders tie across most of the row, every drop, small blocks too."""
    ints = draw_rows_on_the_grid(n, m, ties, data)
    y = data.draw(st.integers(0, m - 1))
    d = data.draw(st.sampled_from([1, 4, 8, 12, 16]))
    old = fused.PROBE_BLOCK_ENTRIES
    fused.PROBE_BLOCK_ENTRIES = data.draw(st.sampled_from([1, 8, 1 << 18]))
    try:
        got = fused.coarse_column(np.array(ints, dtype=np.int64), d, y)
    finally:
        fused.PROBE_BLOCK_ENTRIES = old
    assert got.tolist() == [row[y] for row in reference_coarse(ints, d)]


def reference_fails(columns, n: int, c: Fraction, E: Fraction) -> bool:
    """Some column breaks max ≤ E (c Σ + (1 − Nc) min) (Lemma 4), an unbounded ratio included; zero columns pass."""
    for col in zip(*columns):
        if max(col) == 0:
            continue
        low = c * sum(col) + (1 - n * c) * min(col)
        if low <= 0 or max(col) > E * low:
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(kernels_to_mix(), st.sampled_from([1, 4, 8, 12]), st.data())
def test_staged_probe_verdict_is_the_exact_one(case, d, data):
    """coarse_probe_fails decides from bounds on the rows not yet rounded: its verdict is that of the exact
    rounded columns (reference rounding, Lemma 4 in Fractions), and when it finds no failure it returns them."""
    ints, c, E = case
    n, m = len(ints), len(ints[0])
    ys = data.draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=6))
    want = [[row[y] for y in ys] for row in reference_coarse(ints, d)]
    fails, columns = fused.coarse_probe_fails(np.array(ints, dtype=np.int64), 52, d, ys, c, E)
    assert fails == reference_fails(want, n, c, E)
    if not fails:
        assert columns.tolist() == want


@pytest.mark.parametrize("c", [Fraction(1, 400), Fraction(0)])
def test_staged_probe_of_a_symmetric_kernel_on_the_boundary(c):
    """200 × 200, every row one level on the diagonal and another elsewhere (k-RR, Lemma-4 tight for E, the
    off-diagonal remainders all tied): the staged verdict on the grids 2^−48, 2^−44, 2^−40 is the exact one."""
    n = 200
    E = Fraction(27182818, 10**7)
    e = float(E)
    off = (1 - e * float(c)) / (e * (1 - n * float(c)) + n - 1)  # diagonal = E (c + (1 − Nc) off): tight
    K = np.full((n, n), off)
    np.fill_diagonal(K, 1 - (n - 1) * off)
    ints = to_grid(K).int64()
    ys = list(range(0, n, 7))
    for d in (4, 8, 12):
        want = [[row[y] for y in ys] for row in reference_coarse(ints.tolist(), d)]
        fails, columns = fused.coarse_probe_fails(ints, 52, d, ys, c, E)
        assert fails == reference_fails(want, n, c, E)
        if not fails:
            assert columns.tolist() == want
        again, columns_again = fused.coarse_probe_fails(ints, 52, d, ys, c, E, entries=ints[:, ys])  # shared gather
        assert again == fails and (columns_again is None) == (columns is None)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 6), st.integers(1, 24), st.sampled_from([Fraction(0), Fraction(1, 13)]), st.data())
def test_tightest_columns_are_the_largest_ratios_in_column_order(n, m, c, data):
    """Columns drawn from a few columns (so that many share their aggregates), zero columns and unbounded ones
    among them: the probe columns are the unbounded column the check names, then the columns with the largest
    Lemma-4 ratios (Fractions, written out here), the first columns first among equal ratios (every finite one in
    column order when there are at most ``count``)."""
    pool = data.draw(st.lists(st.lists(st.integers(0, 50), min_size=n, max_size=n), min_size=1, max_size=4))
    cols = [pool[data.draw(st.integers(0, len(pool) - 1))] for _ in range(m)]
    ints = np.array(cols, dtype=np.int64).T.copy()
    kernel = GridKernel(ints, D)
    check = check_pml(kernel, prior_set(c), Fraction(3))
    count = data.draw(st.integers(1, m + 1))
    got = exact._tightest_columns(check, count, kernel, c)
    ratios = reference_ratios(ints.tolist(), c)
    unbounded = [y for y in range(m) if ratios[y] is None and max(cols[y]) > 0]
    finite = [y for y in range(m) if ratios[y] is not None]
    if len(finite) > count:  # more than asked for: the largest ratios (else every one, in column order)
        finite = sorted(finite, key=lambda y: (-ratios[y], y))
    assert got == (unbounded[:1] + finite)[:count]


# ----------------------------------------------------------------------------------------- the exact check
@settings(max_examples=100, deadline=None)
@given(kernels_to_mix(), st.booleans())
def test_worst_column_of_the_check_is_the_first_largest_ratio(case, symmetric):
    """Many columns with one ratio (a symmetric kernel: every column a permutation of one column) or random
    ones: the check's worst output is the first column with the largest exact ratio."""
    ints, c, E = case
    n = len(ints)
    if symmetric:  # a circulant: every column the same multiset of entries
        first = [row[0] for row in ints]
        ints = [[first[(x - y) % n] for y in range(n)] for x in range(n)]
    ratios = []
    for col in zip(*ints):
        low = c * sum(col) + (1 - n * c) * min(col)
        ratios.append(None if max(col) == 0 or low == 0 else Fraction(max(col)) / low)
    finite = [r for r in ratios if r is not None]
    if not finite or len(finite) < sum(max(col) > 0 for col in zip(*ints)):
        return  # an unbounded column: decided before the ratios
    check = check_pml(GridKernel(np.array(ints, dtype=np.int64), D), prior_set(c), E)
    assert check.worst_ratio == max(finite)
    assert check.worst_output == ratios.index(max(finite))


def reference_ratios(ints, c: Fraction) -> list:
    """max / (c Σ + (1 − Nc) min) per column as Fractions; None for a zero column and an unbounded one."""
    n = len(ints)
    out = []
    for col in zip(*ints):
        low = c * sum(col) + (1 - n * c) * min(col)
        out.append(None if max(col) == 0 or low <= 0 else Fraction(max(col)) / low)
    return out


@settings(max_examples=100, deadline=None)
@given(kernels_to_mix(), st.booleans(), st.data())
def test_check_ratios_and_worst_column_against_fractions(case, negative, data):
    """The check's ratios (made when read) are the Lemma-4 ratios, its worst column the first largest one (the
    first unbounded one when a column is unbounded); with a negative entry too (not stochastic: the floats that
    pick the candidates are then the exact ratios'), and its verdict is the oracle's when the kernel is stochastic."""
    import pickle

    ints, c, E = case
    n, m = len(ints), len(ints[0])
    if negative:
        x, y = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, m - 1))
        ints[x][y] = -data.draw(st.integers(1, D))
    check = check_pml(GridKernel(np.array(ints, dtype=np.int64), D), prior_set(c), E)
    want = reference_ratios(ints, c)
    assert check.ratios == want and list(check.ratios) == want and len(check.ratios) == m
    assert [check.ratios[y] for y in range(-m, m)] == want + want and check.ratios[1:] == want[1:]
    assert pickle.loads(pickle.dumps(check.ratios)) == want
    live = [y for y in range(m) if max(col[y] for col in ints) > 0]
    unbounded = [y for y in live if want[y] is None]
    if unbounded:
        assert check.worst_output == unbounded[0] and check.worst_ratio == float("inf") and not check.feasible
    elif live:
        top = max(want[y] for y in live)
        assert check.worst_output == want.index(top) and check.worst_ratio == top
    if not negative:
        assert check.feasible == oracle_private(ints, D, c, E)


# ----------------------------------------------------------------------------------------- the whole stage


@pytest.mark.parametrize("c", [Fraction(1, 520), Fraction(0)])
@pytest.mark.parametrize(
    ("parts", "push", "seed"), [(1, 0.0, 1), (3, 0.0, 3), (1, 1e-12, 1), (1, 1e-9, 4), (2, -1e-3, 2)]
)
def test_stage_emits_the_repair_of_the_grid_kernel_and_it_is_private(c, parts, push, seed):
    """260 × 260 kernels (past SEARCH_ALSO_BELOW): on the boundary, near it, pushed out of it by mixing in the
    identity by 1e−12 or 1e−9 (the repair has to mix), and inside it (mixed with the uniform kernel by 1e−3:
    passes as it is). The stage's kernel is private by the oracle, its floats are its exact values, and it is
    the kernel and weight of repair(to_grid(K)) (the path it replaces)."""
    n = 260
    E = Fraction(27182818, 10**7)
    K = two_level_kernel(n, float(c), float(E), seed=seed, parts=parts)
    if push > 0:  # toward the identity (leakage N under Q_X(c), E' > E): every column over the boundary
        K = (1 - push) * K + push * np.eye(n)
    elif push < 0:
        K = (1 + push) * K - push / n
    ps = prior_set(c)
    got = certify_on_fine_grid(K, ps, E, 52)
    assert got is not None and got.check.feasible
    old_kernel, old_weight, old_check = repair(to_grid(K), ps, E, bits=52)
    assert np.array_equal(got.kernel.int64(), old_kernel.int64()) and got.weight == old_weight
    assert got.check.worst_ratio == old_check.worst_ratio and got.check.worst_output == old_check.worst_output
    if push > 0:
        assert got.weight > 0
    ints = got.kernel.int64()
    assert got.floats.tolist() == (ints / float(got.kernel.denominator)).tolist()
    assert all(Fraction(float(got.floats[x, y])) == Fraction(int(ints[x, y]), D) for x in (0, n - 1) for y in range(n))
    assert oracle_private(ints.tolist(), got.kernel.denominator, c, E)
    if push < 0:
        assert got.weight == 0 and got.gridded is got.kernel
    if got.weight > 0:
        assert got.gridded is None  # written over by the mix


def test_stage_snaps_a_vertex_a_few_ulps_off_and_keeps_the_grid_kernel():
    """Remark 2 of the Dobrushin paper at ε = log 7 over the simplex: [[7/8, 1/8], [1/8, 7/8]] is exactly tight;
    the solver's 7/8 + 3·2^−52 snaps back (weight 0), with 40 000 further zero outputs (past SEARCH_ALSO_BELOW).
    The 2^−52 kernel stays intact for the repair without snapping that the certify stage compares it with."""
    m = 40_000
    K = np.zeros((2, m))
    off = 0.875 + 3 * 2.0**-52
    K[0, :2] = [off, 1 - off]
    K[1, :2] = [1 - off, off]
    ps = prior_set(Fraction(0))
    got = certify_on_fine_grid(K, ps, Fraction(7), 52)
    assert got.weight == 0 and got.check.feasible and got.kernel.denominator < D
    assert got.kernel.fractions()[0][:2] == [Fraction(7, 8), Fraction(1, 8)]
    assert got.gridded is not None and np.array_equal(got.gridded.int64(), to_grid(K).int64())
    assert got.floats[0, :2].tolist() == [0.875, 0.125]


def test_stage_falls_back_where_the_in_place_mix_declines():
    """A passing column of 2^12 units of 2^−52 in every row beside columns the repair has to mix: there
    ⌊w s_y / N⌋ = 0, a −1 of the row corrections could meet an entry 0, so the in-place mix declines and the
    repair of exact.py decides: same kernel and weight as repair(to_grid(K)), the 2^−52 kernel intact, the
    result private by the oracle. (One unit per row, as this test first had, is now merged into the heaviest
    column as noise, merge_noise_columns, and the in-place mix no longer declines.)"""
    n = 300
    E = Fraction(27182818, 10**7)
    K = two_level_kernel(n, 0.0, float(E), seed=5, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)  # every column over the boundary: the repair mixes
    K[:, 1] += K[:, 2] - 2.0**-40
    K[:, 2] = 2.0**-40
    ps = prior_set(Fraction(0))
    got = certify_on_fine_grid(K, ps, E, 52)
    assert got.weight > 0 and got.gridded is not None  # mixed, but not over the 2^-52 kernel
    assert got.gridded.int64()[:, 2].tolist() == [1 << 12] * n
    old_kernel, old_weight, _ = repair(to_grid(K), ps, E, bits=52)
    assert np.array_equal(got.kernel.int64(), old_kernel.int64()) and got.weight == old_weight
    assert oracle_private(got.kernel.int64().tolist(), got.kernel.denominator, Fraction(0), E)
    assert got.floats.tolist() == (got.kernel.int64() / float(got.kernel.denominator)).tolist()


def make_the_mix_fail_after_writing(monkeypatch):
    """The certify stage's in-place mix writes as usual, then reports a failed block check (simulated: (★) of
    grid_repair.py rules a real one out)."""
    import mechdesign.certify.stage as stage

    real = stage.mix_on_grid_in_place

    def written_then_failed(*args, **kwargs):
        out = real(*args, **kwargs)
        return None if out is None else (out[0], None)

    monkeypatch.setattr(stage, "mix_on_grid_in_place", written_then_failed)


def test_stage_starts_again_from_the_floats_when_the_mixed_kernel_fails_its_block_check(monkeypatch):
    """The in-place mix reports a failed block check after writing (simulated here): the integers are partly
    mixed, so the stage rounds K again and repairs as exact.py does (same kernel and weight as before)."""
    make_the_mix_fail_after_writing(monkeypatch)
    n = 260
    E = Fraction(27182818, 10**7)
    K = two_level_kernel(n, 0.0, float(E), seed=1, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    ps = prior_set(Fraction(0))
    got = certify_on_fine_grid(K, ps, E, 52)
    old_kernel, old_weight, _ = repair(to_grid(K), ps, E, bits=52)
    assert got.weight == old_weight > 0 and np.array_equal(got.kernel.int64(), old_kernel.int64())
    assert got.check.feasible and got.gridded is None


def test_stage_does_not_apply_to_small_kernels_coarse_grids_or_other_prior_sets():
    K = np.full((200, 200), 1 / 200)
    ps = prior_set(Fraction(0))
    assert certify_on_fine_grid(K[:100, :100], ps, Fraction(3), 52) is None  # 10 000 entries: repair also searches
    assert certify_on_fine_grid(K, ps, Fraction(3), 40) is None
    point = load_spec(
        {
            "alphabet": 2,
            "epsilon": 1,
            "prior_set": {"kind": "point", "prior": [0.3, 0.7]},
            "objective": {"kind": "dobrushin"},
        }
    ).prior_set
    assert certify_on_fine_grid(np.full((2, 40_000), 1 / 40_000), point, Fraction(3), 52) is None


def test_lemma4_worst_with_a_denominator_of_c_past_the_float_range():
    # c = 1/10^400 is a valid min_mass spec (c ≤ 1/N); its Lemma-4 lows c_q·min_P P·A(:,y) do not fit in a
    # float, so the largest ratio is decided in integers. Reference: each column's ratio written out from
    # Lemma 4 of the Dobrushin paper, max_x A_xy / (c Σ_x A_xy + (1 − Nc) min_x A_xy), in Fractions.
    from mechdesign.certify.lemma4 import lemma4_worst

    c = Fraction(1, 10**400)
    A = np.array([[6, 1, 1], [2, 3, 3], [2, 2, 4]], dtype=np.int64)
    n = A.shape[0]
    ratios = [Fraction(int(col.max())) / (c * int(col.sum()) + (1 - n * c) * int(col.min())) for col in A.T]
    y, ratio = lemma4_worst((A.max(axis=0), A.min(axis=0), A.sum(axis=0)), c, n)
    assert ratio == max(ratios) and y == ratios.index(max(ratios))


def test_a_design_with_c_one_over_ten_to_the_400_is_certified_as_ldp():
    # Q_X(c) tends to the simplex as c → 0 (docs/explanation/mathematics.md, section 'Linear constraints'): at c = 10^−400 the certified optimum is the ε-LDP one
    from mechdesign import design

    base = {"alphabet": 3, "epsilon": 1, "objective": {"kind": "expected_loss", "loss": "hamming", "prior": "uniform"}}
    tiny = design({**base, "prior_set": {"kind": "min_mass", "c": "1/1" + "0" * 400}})
    ldp = design({**base, "prior_set": {"kind": "simplex"}})
    assert tiny.is_ok and tiny.certificate.feasible
    assert tiny.objective == pytest.approx(ldp.objective, rel=1e-12)
