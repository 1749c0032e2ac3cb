"""The certify stage's in-place and float-arithmetic passes.

* the 2^−52 rounding computed as (1 + x) − 1 in doubles after ``np.clip`` (NaN rows clipped again as
  ``_clip_unit`` does), optionally written over the solver's own array;
* the one-pass mix computed from the rounding's floats (⌊w A⌋ as the floor of the double product, the exact integer
  floor where that product is an integer), its floats written over the array it reads;
* :func:`mechdesign.certify.stage.certify_on_fine_grid` with ``overwrite=True`` and ``certify_design`` with
  ``overwrite_kernel=True``: the same kernels as without, and nobody reads a half-written array.

Independent references, written here from the definitions with Python integers and Fractions:

* the 2^−52 rounding: each entry clipped to [0, 1] (NaN → 0), rounded to the nearest multiple of 2^−52 (half to
  even), the row's first largest entry absorbing the remainder (the definition in :func:`mechdesign.certify.exact.to_grid`);
* the one-pass mix (module docstring of :mod:`mechdesign.certify.grid_repair`): for w = W / 2^P, ⌊w A_xy⌋ taken out,
  h_y put in, each row's shortfall R_x = Σ_y ⌊w A_xy⌋ − Σ_y h_y as ±1 on its first |R_x| columns with s_y > 0;
* privacy: tests/helpers/exact_oracle.py (no mechdesign import), for ε = log E written as text, so e^ε = E exactly.

Kernels: random ones, kernels exactly on the (ε, Q_X(c))-PML boundary (two-level circulants, Remark 2 of the
Dobrushin paper), kernels pushed just outside it (the repair has to mix), entries at half-unit ties, negative zeros,
NaN, ±inf and entries above 1.
"""

from __future__ import annotations

import os
import signal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign.certify.exact as exact
import mechdesign.certify.fused as fused
import mechdesign.certify.stage as stage
from mechdesign.certify.exact import repair, to_grid
from mechdesign.certify.stage import certify_on_fine_grid
from test_certify_fused import (
    make_the_mix_fail_after_writing,
    oracle_private,
    prior_set,
    same_aggregates,
    two_level_kernel,
)

D = 1 << 52
E = Fraction(27182818, 10**7)


def reference_rounding(K) -> list[list[int]] | None:
    """to_grid's definition at 52 bits in Fractions: clip (NaN → 0), round half to even, first largest absorbs."""
    out = []
    for row in K:
        nums = []
        for v in row:
            v = 0.0 if v != v else min(max(float(v), 0.0), 1.0)
            nums.append(round(Fraction(v) * D))  # Fraction.__round__: half to even
        nums[nums.index(max(nums))] += D - sum(nums)
        if min(nums) < 0:
            return None  # far from stochastic: not the blocked path
        out.append(nums)
    return out


specials = st.sampled_from(
    [0.0, -0.0, 1.0, -1e-300, 1e-300, -1e-17, 0.5 * 2.0**-52, 1.5 * 2.0**-52, 2.5 * 2.0**-52, 2.0, float("nan")]
    + [float("inf"), float("-inf"), 1 / 3, 0.1]
)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9), st.integers(1, 7), st.data())
def test_rounding_by_one_plus_x_is_to_grid_and_writes_plus_zero(n, m, data):
    """Against the Fraction rounding; the float kernel's zeros are +0.0 (−0.0 entries and tiny negatives
    included), and the same written over the input array itself (overwrite)."""
    values = st.floats(0, 1, allow_nan=False) | specials
    K = np.array(data.draw(st.lists(values, min_size=n * m, max_size=n * m))).reshape(n, m)
    finite = np.where(np.isfinite(K), K, 0.0)
    K[:, 0] += 1 - finite.sum(axis=1)  # mostly near stochastic (a NaN or inf row stays as it is)
    want = reference_rounding(K)
    old = exact.ROW_BLOCK_ENTRIES
    exact.ROW_BLOCK_ENTRIES = 8  # blocks of a few rows
    try:
        floats = np.full((n, m), 7.0)
        got = exact._to_fine_grid_by_rows(K, floats)
        mine = K.copy()
        got_in_place = exact._to_fine_grid_by_rows(mine, mine)
    finally:
        exact.ROW_BLOCK_ENTRIES = old
    if got is None:
        assert got_in_place is None
        # a row far from stochastic: the rows written over before it hold their own rounding, so to_grid (the
        # caller's fallback) of the written-over array is to_grid of the original
        assert np.array_equal(to_grid(mine).int64(), to_grid(K).int64())
        return
    assert want is not None and got.int64().tolist() == want
    assert same_aggregates(got.column_aggregates(), want)
    assert [[Fraction(float(v)) for v in row] for row in floats] == [[Fraction(v, D) for v in row] for row in want]
    assert not np.signbit(floats).any()  # +0.0, as the old path (integers times 2^−52) wrote them
    assert got_in_place.int64().tolist() == want and mine.tobytes() == floats.tobytes()
    again = exact._to_fine_grid_by_rows(mine)  # the rounding of the rounding is itself
    assert again.int64().tolist() == want


# ----------------------------------------------------------------------------------------- the mix from floats
def reference_mix(ints: list[list[int]], W: int, P: int, h: list[int], live: list[bool]) -> list[list[int]]:
    """A'' for w = W / 2^P and the given h, in Python integers (grid_repair's docstring)."""
    order = [y for y, alive in enumerate(live) if alive]
    out = []
    for row in ints:
        f = [(W * v) >> P for v in row]  # ⌊W A / 2^P⌋
        new = [v - fv + hv for v, fv, hv in zip(row, f, h)]
        short = sum(f) - sum(h)
        for y in order[: abs(short)]:
            new[y] += 1 if short > 0 else -1
        out.append(new)
    return out


def entry_below_an_integer(W: int, P: int, k: int) -> int:
    """An A ≤ D / 4 with W A / 2^P just below an integer, by less than half an ulp of the double product: the
    product of the doubles A / D and W D / 2^P then rounds up onto that integer (the floor of the double is one
    too many, the case the mix takes from the exact integer floor)."""
    for j in range(k, max(0, k - 100_000), -1):
        A = (j << P) // W  # W A / 2^P = j − (j 2^P mod W) / 2^P
        product = float(Fraction(A, D)) * (W * 2.0 ** (52 - P))
        if (W * A) % (1 << P) and product == float(j):
            return A
    raise AssertionError("no entry found")


def kernel_with_products_at_integers(rng, n: int, m: int, W: int, P: int) -> list[list[int]]:
    """Rows on the grid 2^−52 whose first entry has W A / 2^P just below an integer (:func:`entry_below_an_integer`)
    and, where P ≤ 48, whose second entry has it an integer exactly (A a multiple of 2^P)."""
    rows = []
    k = max(1, ((D >> 2) * W) >> P)
    for x in range(n):
        row = [int(v) for v in rng.integers(0, D // (2 * m), size=m)]
        row[0] = entry_below_an_integer(W, P, k - 37 * x)
        if P <= 48:
            row[1] = (1 << P) * int(rng.integers(1, max(2, (D >> 3) >> P)))
        row[-1] = 0
        row[-1] = D - sum(row)
        assert row[-1] >= 0
        rows.append(row)
    return rows


@pytest.mark.parametrize("same_array", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_mix_from_floats_follows_its_definition(seed, same_array):
    """Random kernels and kernels whose products W A / 2^P are integers or just below one, in blocks of a few
    rows: the integers, the floats and the aggregates of A'' are the reference's, and the int64 path agrees."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 12)), int(rng.integers(3, 9))
    P = int(rng.integers(40, 49)) if seed % 4 < 2 else int(rng.integers(60, 86))
    W = int(rng.integers(1 << 30, 1 << 31))
    ints = kernel_with_products_at_integers(rng, n, m, W, P)
    if seed % 2 == 0:  # random kernels too, with products anywhere
        ints = [[int(v) for v in r] for r in rng.multinomial(D, rng.dirichlet(np.ones(m)), size=n)]
    s = [sum(col) for col in zip(*ints)]
    live = [v > 0 for v in s]
    h = [(W * v) // (n << P) for v in s]  # ⌊w s_y / N⌋, as the mixing plan has it
    want = reference_mix(ints, W, P, h, live)
    if any(v < 0 for row in want for v in row):
        pytest.skip("a correction below zero: the caller declines such a mix")
    A = np.array(ints, dtype=np.int64)
    source = A / float(D)
    out = source if same_array else np.full((n, m), np.nan)
    old = fused.ROW_BLOCK_ENTRIES
    fused.ROW_BLOCK_ENTRIES = 8
    try:
        aggregates = fused.mix_rows_from_floats(A, source, D, W, P, np.array(h, dtype=np.int64), np.array(live), out)
        B = np.array(ints, dtype=np.int64)
        int_path = fused.mix_rows_in_place(B, D, W, P, np.array(h, dtype=np.int64), np.array(live))
    finally:
        fused.ROW_BLOCK_ENTRIES = old
    assert aggregates is not None and A.tolist() == want
    assert same_aggregates(aggregates, want)
    assert [[Fraction(float(v)) for v in row] for row in out] == [[Fraction(v, D) for v in row] for row in want]
    assert B.tolist() == want and same_aggregates(int_path, want)


def rows_sharing_their_shortfall(rng, n: int, m: int, W: int, P: int, zero_column: bool) -> list[list[int]]:
    """Rows that are permutations of one of two rows (the first half of the rows of one, the rest of the other), as
    in k-RR: within each half every row has the same Σ_y ⌊W A_xy / 2^P⌋ and so the same shortfall R_x. The row
    with one large entry is rotated (a circulant); with ``zero_column`` the first column is 0 in every row (not
    live: the corrections skip it)."""
    width = m - 1 if zero_column else m
    halves = []
    for _ in range(2):
        base = [int(v) for v in rng.integers(0, D // (2 * width), size=width)]
        base[0] += D - sum(base)  # one large entry (the diagonal of k-RR)
        halves.append(base)
    rows = []
    for x in range(n):
        base = halves[0] if x < n // 2 else halves[1]
        shift = x % width
        row = base[-shift:] + base[:-shift] if shift else list(base)
        rows.append(([0] if zero_column else []) + row)
    return rows


@pytest.mark.parametrize("zero_column", [False, True])
@pytest.mark.parametrize("block", [8, 40, 1 << 16])
@pytest.mark.parametrize("seed", range(4))
def test_mix_from_floats_of_rows_sharing_their_shortfall_follows_its_definition(seed, block, zero_column):
    """Kernels whose rows share their shortfall R_x within a block (k-RR-like: the whole kernel, or each half of
    it), where the mix adds each row's ±1 corrections with h in one row vector: the integers, floats and
    aggregates are the reference's (Python integers), in blocks that hold one half, both halves or a few rows."""
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(6, 14)), int(rng.integers(5, 12))
    P = int(rng.integers(55, 70))
    W = int(rng.integers(1 << 30, 1 << 31))
    ints = rows_sharing_their_shortfall(rng, n, m, W, P, zero_column)
    s = [sum(col) for col in zip(*ints)]
    live = [v > 0 for v in s]
    h = [(W * v) // (n << P) for v in s]
    shortfalls = [sum((W * v) >> P for v in row) - sum(h) for row in ints]
    assert len(set(shortfalls[: n // 2])) == 1 and len(set(shortfalls[n // 2 :])) == 1  # what the case is about
    want = reference_mix(ints, W, P, h, live)
    if any(v < 0 for row in want for v in row):
        pytest.skip("a correction below zero: the caller declines such a mix")
    A = np.array(ints, dtype=np.int64)
    out = A / float(D)
    old = fused.ROW_BLOCK_ENTRIES
    fused.ROW_BLOCK_ENTRIES = block
    try:
        aggregates = fused.mix_rows_from_floats(A, out, D, W, P, np.array(h, dtype=np.int64), np.array(live), out)
    finally:
        fused.ROW_BLOCK_ENTRIES = old
    assert aggregates is not None and A.tolist() == want
    assert same_aggregates(aggregates, want)
    assert [[Fraction(float(v)) for v in row] for row in out] == [[Fraction(v, D) for v in row] for row in want]


# ----------------------------------------------------------------------------------------- the stage, overwriting K
CASES = [(Fraction(1, 520), 0.0), (Fraction(1, 520), 1e-12), (Fraction(0), 1e-9), (Fraction(0), -1e-3)]


@pytest.mark.parametrize(("c", "push"), CASES)
def test_overwriting_stage_emits_the_same_kernel_and_leaves_its_floats_in_k(c, push):
    """260 × 260 kernels on the boundary, pushed out of it (the repair mixes) and inside it: with overwrite the
    stage emits the kernel, weight and check of the copying stage and of repair(to_grid(K)); its floats are K
    itself, K holds the emitted kernel, and rounding K again gives that kernel (what a later reader of K sees)."""
    n = 260
    K = two_level_kernel(n, float(c), float(E), seed=3, parts=1)
    if push > 0:
        K = (1 - push) * K + push * np.eye(n)
    elif push < 0:
        K = (1 + push) * K - push / n
    ps = prior_set(c)
    copying = certify_on_fine_grid(K.copy(), ps, E, 52)
    mine = K.copy()
    got = certify_on_fine_grid(mine, ps, E, 52, overwrite=True)
    old_kernel, old_weight, _ = repair(to_grid(K), ps, E, bits=52)
    for result in (got, copying):
        assert np.array_equal(result.kernel.int64(), old_kernel.int64()) and result.weight == old_weight
    assert got.check.worst_ratio == copying.check.worst_ratio and got.check.feasible
    assert got.floats is mine and mine.tobytes() == copying.floats.tobytes()
    assert np.array_equal(to_grid(mine).int64(), got.kernel.int64())
    assert oracle_private(got.kernel.int64().tolist(), D, c, E)
    if push > 0:
        assert got.weight > 0


def test_overwriting_stage_keeps_k_where_the_mix_declines():
    """The kernel of test_certify_fused where the in-place mix declines (a −1 could meet a 0): K holds its own
    rounding (the repair of exact.py decides from the intact 2^−52 kernel), same kernel as the copying stage."""
    n = 300
    K = two_level_kernel(n, 0.0, float(E), seed=5, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    K[:, 1] += K[:, 2] - 2.0**-52
    K[:, 2] = 2.0**-52
    ps = prior_set(Fraction(0))
    mine = K.copy()
    got = certify_on_fine_grid(mine, ps, E, 52, overwrite=True)
    copying = certify_on_fine_grid(K.copy(), ps, E, 52)
    assert got.weight > 0 and np.array_equal(got.kernel.int64(), copying.kernel.int64())
    assert np.array_equal(to_grid(mine).int64(), to_grid(K).int64())  # K holds its rounding, not the mix
    assert got.floats is not mine and got.floats.tolist() == (got.kernel.int64() / float(D)).tolist()


def test_overwriting_stage_after_a_failed_mix_emits_a_checked_kernel(monkeypatch):
    """A failed block check after the mix wrote over K (simulated; (★) rules it out): the stage repairs what K
    holds then, and the kernel it emits passes the exact check and the oracle."""
    make_the_mix_fail_after_writing(monkeypatch)
    n = 260
    K = two_level_kernel(n, 0.0, float(E), seed=1, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    ps = prior_set(Fraction(0))
    mixed = certify_on_fine_grid(K.copy(), ps, E, 52)  # the weight of the mix that went over K
    got = certify_on_fine_grid(K, ps, E, 52, overwrite=True)
    assert got.check.feasible and got.weight >= mixed.weight > 0  # the mix over K counts in the weight reported
    assert oracle_private(got.kernel.int64().tolist(), got.kernel.denominator, Fraction(0), E)
    assert got.floats.tolist() == (got.kernel.int64() / float(got.kernel.denominator)).tolist()


def test_ctrl_c_during_the_in_place_mix_waits_until_k_is_whole(monkeypatch):
    """A SIGINT sent while the mix writes over K is raised when the pass has ended: K then holds the whole mixed
    kernel (the emitted one, as an uninterrupted stage gives it), never half of it."""
    n = 260
    K = two_level_kernel(n, 0.0, float(E), seed=1, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    ps = prior_set(Fraction(0))
    whole = certify_on_fine_grid(K.copy(), ps, E, 52, overwrite=True)  # the uninterrupted stage
    assert whole.weight > 0
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = fused.mix_rows_from_floats
    seen = []

    def interrupted_midway(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # delivered at once to the main thread's handler
        seen.append("sent")
        return real(*args, **kwargs)

    monkeypatch.setattr(fused, "mix_rows_from_floats", interrupted_midway)
    mine = K.copy()
    try:
        with pytest.raises(KeyboardInterrupt):
            certify_on_fine_grid(mine, ps, E, 52, overwrite=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == ["sent"]
    assert mine.tobytes() == whole.floats.tobytes()  # the whole mixed kernel
    assert np.array_equal(to_grid(mine).int64(), whole.kernel.int64())


def test_ctrl_c_is_not_held_without_overwrite():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with stage._ctrl_c_held(False):
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(10**6):  # the interrupt is raised inside the block, not after it
                    pass
                pytest.fail("KeyboardInterrupt not raised inside the block")
    finally:
        signal.signal(signal.SIGINT, previous)


def test_design_gives_its_solver_array_away_and_reports_the_same_numbers():
    """design() at N = M = 260 (past SEARCH_ALSO_BELOW, the fused stage): the certify stage that writes over the
    solver's array gives the kernel, float kernel, objective and certificate of the copying stage run on a copy of
    the same LP outcome."""
    from mechdesign.design import certify_design
    from mechdesign.engines.base import Problem
    from mechdesign.engines.routing import run_route
    from mechdesign.spec.models import load_spec

    spec = load_spec(
        {
            "alphabet": 260,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": "1/520"},
            "objective": {"kind": "bayes_vulnerability", "prior": "uniform"},
            "output_size": 260,
        }
    )
    outcome, _ = run_route(Problem.of(spec))
    K = np.array(outcome.kernel)
    common = {"lp_objective": outcome.value, "dual": outcome.bound, "sense": outcome.sense}
    copying = certify_design(spec, K.copy(), **common)
    given_away = certify_design(spec, K, **common, overwrite_kernel=True)
    assert np.array_equal(copying[0].int64(), given_away[0].int64())
    assert copying[1].tobytes() == given_away[1].tobytes() and copying[2] == given_away[2]
    a, b = copying[3], given_away[3]
    assert (a.feasible, a.worst_ratio, a.dual_bound, a.gap, a.repair_weight) == (
        b.feasible,
        b.worst_ratio,
        b.dual_bound,
        b.gap,
        b.repair_weight,
    )
    assert given_away[1] is K or np.array_equal(to_grid(K).int64(), given_away[0].int64())


def test_overwrite_leaves_a_view_of_someone_elses_buffer_alone():
    """A kernel that is a view into a larger buffer (not an array of its own) is copied as before: the buffer keeps
    its values, and the kernel is the one the copying stage emits."""
    n = 260
    K = two_level_kernel(n, 1 / 520, float(E), seed=3, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    buffer = np.concatenate([K.ravel(), [0.5]])
    view = buffer[:-1].reshape(n, n)
    assert not view.flags.owndata and view.flags.c_contiguous
    before = buffer.copy()
    got = certify_on_fine_grid(view, prior_set(Fraction(1, 520)), E, 52, overwrite=True)
    copying = certify_on_fine_grid(K.copy(), prior_set(Fraction(1, 520)), E, 52)
    assert buffer.tobytes() == before.tobytes()
    assert np.array_equal(got.kernel.int64(), copying.kernel.int64()) and got.weight == copying.weight
