"""The certify stage's passes over row blocks on the process's threads.

:func:`mechdesign.certify.parallel_rows.map_row_blocks` runs a pass's blocks of rows on as many threads as HiGHS
gets (2 by default): the same results in block order, a worker's exception raised in the caller, Ctrl-C in the
caller waiting for the other threads' blocks, no pool with one thread or below the size threshold. The passes that
use it (the 2^−52 rounding, the snapping probe's columns, the one-pass mixes, the whole fused stage) give on two
threads the integers, aggregates and floats of the definitions, and the same bits as on one thread.

Independent references (the helpers of tests/certify/test_certify_fused.py and tests/certify/test_certify_inplace.py, written from
the definitions with Python integers and Fractions): the 2^−52 rounding (clip, round half to even, the first largest
entry absorbs the remainder), the one-pass mix of grid_repair.py's docstring, the coarse rounding of a row, Python
column maxima/minima/sums, and privacy by tests/helpers/exact_oracle.py.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign.certify.exact as exact
import mechdesign.certify.fused as fused
import mechdesign.certify.parallel_rows as parallel_rows
from mechdesign.certify.exact import to_grid
from mechdesign.certify.parallel_rows import map_row_blocks
from mechdesign.certify.stage import certify_on_fine_grid
from test_certify_fused import (
    kernels_to_mix,
    oracle_private,
    prior_set,
    reference_coarse,
    reference_mix,
    same_aggregates,
    two_level_kernel,
)
from test_certify_inplace import reference_rounding

D = 1 << 52
E = Fraction(27182818, 10**7)


def use_threads(monkeypatch, threads: int) -> None:
    """Every pass on ``threads`` threads, whatever its size (the size threshold set to 0) and whatever else the
    machine runs (as many idle cores as threads)."""
    monkeypatch.setattr(parallel_rows, "highs_threads", lambda: threads)
    monkeypatch.setattr(parallel_rows, "PARALLEL_FROM_ENTRIES", 0)
    monkeypatch.setattr(parallel_rows, "_idle_cores", lambda: threads)


def set_blocks(monkeypatch, entries: int) -> None:
    """Blocks of rows of about ``entries`` entries in every pass."""
    monkeypatch.setattr(exact, "ROW_BLOCK_ENTRIES", entries)
    monkeypatch.setattr(fused, "ROW_BLOCK_ENTRIES", entries)
    monkeypatch.setattr(fused, "PROBE_BLOCK_ENTRIES", entries)


HANG_GUARD_SECONDS = 120
"""How long a thread of a test waits for the other one (a barrier, an event) before the test fails: a guard
against a hang, never reached when the code works, whatever the machine's load."""


def main_thread_in(function_name: str) -> bool:
    """Whether the main thread is now inside a call of the function named ``function_name`` (its current stack)."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None:
        if frame.f_code.co_name == function_name:
            return True
        frame = frame.f_back
    return False


def blocks_of(n: int, rows: int) -> list[slice]:
    return [slice(lo, min(n, lo + rows)) for lo in range(0, n, rows)]


class NoPool:
    def __init__(self, *args, **kwargs):
        raise AssertionError("a thread pool was started")


# ----------------------------------------------------------------------------------------- the helper itself
def test_results_come_in_block_order_and_both_threads_work(monkeypatch):
    """The first two blocks meet at a barrier, so they run at the same time on two threads; every later block
    sleeps a little so that the threads finish out of order. The results are the plain loop's, in block order."""
    use_threads(monkeypatch, 2)
    meet = threading.Barrier(2, timeout=HANG_GUARD_SECONDS)
    seen = {}
    rng = np.random.default_rng(0)
    pauses = rng.uniform(0, 2e-3, size=23)

    def work(rows: slice, scratch):
        seen[rows.start] = threading.get_ident()
        if rows.start < 2:
            meet.wait()  # both threads are in a block now
        time.sleep(pauses[rows.start])
        scratch.append(rows.start)  # each thread its own scratch
        return rows.start * 10

    scratches = []

    def make():
        scratches.append([])
        return scratches[-1]

    got = map_row_blocks(work, blocks_of(23, 1), entries=23, scratch=make)
    assert got == [10 * i for i in range(23)]
    assert len(set(seen.values())) == 2 and len(scratches) == 2
    assert sorted(sum(scratches, [])) == list(range(23))  # every block once


@pytest.mark.parametrize("threads", [1, 2])
def test_a_stopping_result_ends_the_list_and_every_block_before_it_ran(monkeypatch, threads):
    use_threads(monkeypatch, threads)
    ran = set()

    def work(rows: slice, scratch):
        ran.add(rows.start)
        return rows.start != 7

    got = map_row_blocks(work, blocks_of(40, 1), entries=40, stop=lambda ok: not ok)
    assert got == [True] * 7 + [False]
    assert set(range(8)) <= ran
    if threads == 1:
        assert ran == set(range(8))


def test_a_workers_exception_is_raised_in_the_caller_after_every_block_has_ended(monkeypatch):
    use_threads(monkeypatch, 2)
    meet = threading.Barrier(2, timeout=HANG_GUARD_SECONDS)
    active = []
    lock = threading.Lock()

    def work(rows: slice, scratch):
        with lock:
            active.append(rows.start)
        try:
            if rows.start < 2:
                meet.wait()
            if threading.current_thread() is not threading.main_thread():
                raise ValueError("a worker's block failed")
            time.sleep(0.05)
        finally:
            with lock:
                active.remove(rows.start)

    with pytest.raises(ValueError, match="a worker's block failed"):
        map_row_blocks(work, blocks_of(50, 1), entries=50)
    assert active == []  # nothing runs after the call


def test_ctrl_c_in_the_caller_waits_for_the_other_threads_block(monkeypatch):
    """KeyboardInterrupt in the calling thread's block: it propagates only once the worker's block has ended (the
    worker would otherwise write into the caller's arrays after the call), and no further block starts."""
    use_threads(monkeypatch, 2)
    meet = threading.Barrier(2, timeout=HANG_GUARD_SECONDS)
    finished, started = [], []

    def work(rows: slice, scratch):
        started.append(rows.start)
        if rows.start < 2:
            meet.wait()
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
        # the worker's block ends only once the caller waits for it (with the interrupt in hand, no new block
        # handed out): a sleep instead would let a slow caller see the block end first, on a busy machine
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while not main_thread_in("_wait_through_ctrl_c") and time.monotonic() < deadline:
            time.sleep(0.001)
        finished.append(rows.start)

    with pytest.raises(KeyboardInterrupt):
        map_row_blocks(work, blocks_of(30, 1), entries=30)
    assert len(finished) == 1 and sorted(started) == [0, 1]


def test_one_thread_or_a_small_pass_runs_no_pool(monkeypatch):
    monkeypatch.setattr(parallel_rows, "ThreadPoolExecutor", NoPool)
    threads = set()

    def work(rows: slice, scratch):
        threads.add(threading.get_ident())
        return rows.start

    use_threads(monkeypatch, 1)  # highs_threads() == 1 (sweep workers)
    assert map_row_blocks(work, blocks_of(9, 2), entries=10**9) == [0, 2, 4, 6, 8]
    monkeypatch.setattr(parallel_rows, "highs_threads", lambda: 2)
    monkeypatch.setattr(parallel_rows, "PARALLEL_FROM_ENTRIES", 1000)
    assert map_row_blocks(work, blocks_of(9, 2), entries=999) == [0, 2, 4, 6, 8]  # below the threshold
    monkeypatch.setattr(parallel_rows, "PARALLEL_FROM_ENTRIES", 0)
    monkeypatch.setattr(parallel_rows, "_idle_cores", lambda: 0)  # every other core busy: the caller's thread only
    assert map_row_blocks(work, blocks_of(9, 2), entries=10**9) == [0, 2, 4, 6, 8]
    assert threads == {threading.get_ident()}
    # and a whole certify stage on one thread: no pool either
    use_threads(monkeypatch, 1)
    K = two_level_kernel(260, 0.0, float(E), seed=1, parts=1)
    got = certify_on_fine_grid((1 - 1e-12) * K + 1e-12 * np.eye(260), prior_set(Fraction(0)), E, 52)
    assert got.weight > 0 and got.check.feasible


# ----------------------------------------------------------------------------------------- the passes on two threads
@settings(max_examples=80, deadline=None)
@given(st.integers(2, 11), st.integers(1, 7), st.integers(1, 4), st.data())
def test_threaded_rounding_is_the_definition(n, m, rows_per_block, data):
    """Blocks of 1–4 rows (an uneven last block where they do not divide N) on two threads: the integers, column
    aggregates and floats of the 2^−52 rounding's definition, written to a fresh array and over K itself."""
    values = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, -0.0, 1.0, 1e-300, 0.5 * 2.0**-52, 1 / 3])
    K = np.array(data.draw(st.lists(values, min_size=n * m, max_size=n * m))).reshape(n, m)
    K[:, 0] += 1 - K.sum(axis=1)
    want = reference_rounding(K)
    with pytest.MonkeyPatch.context() as mp:
        use_threads(mp, 2)
        set_blocks(mp, rows_per_block * m)
        floats = np.full((n, m), 7.0)
        got = exact._to_fine_grid_by_rows(K, floats)
        mine = K.copy()
        in_place = exact._to_fine_grid_by_rows(mine, mine)
    if want is None:  # a row far from stochastic: None, and K rounds as it did (rows hold their own rounding)
        assert got is None and in_place is None
        assert np.array_equal(to_grid(mine).int64(), to_grid(K).int64())
        return
    assert got.int64().tolist() == want and in_place.int64().tolist() == want
    assert same_aggregates(got.column_aggregates(), want) and same_aggregates(in_place.column_aggregates(), want)
    assert [[Fraction(float(v)) for v in row] for row in floats] == [[Fraction(v, D) for v in row] for row in want]
    assert mine.tobytes() == floats.tobytes()


@settings(max_examples=100, deadline=None)
@given(kernels_to_mix(), st.integers(1, 3), st.booleans())
def test_threaded_mixes_are_the_definition(case, rows_per_block, from_floats):
    """Random columns, columns exactly on the (ε, Q_X(c))-PML boundary and one unit over it (kernels_to_mix of
    tests/certify/test_certify_fused.py), mixed in blocks of 1–3 rows on two threads, from the integers or from the
    rounding's floats: A'' of the definition, its aggregates and floats, private by the oracle."""
    ints, c, E_case = case
    n, m = len(ints), len(ints[0])
    A = np.array(ints, dtype=np.int64)
    source = A / float(D)
    floats = source if from_floats else np.full((n, m), np.nan)
    with pytest.MonkeyPatch.context() as mp:
        use_threads(mp, 2)
        set_blocks(mp, rows_per_block * m)
        out = fused.mix_on_grid_in_place(
            A, D, c, E_case, exact.column_aggregates(A), floats, source=source if from_floats else None
        )
    if out is None:
        assert A.tolist() == ints
        return
    w, aggregates = out
    want = reference_mix(ints, w)
    assert aggregates is not None and A.tolist() == want and same_aggregates(aggregates, want)
    assert [[Fraction(float(v)) for v in row] for row in floats] == [[Fraction(v, D) for v in row] for row in want]
    assert oracle_private(want, D, c, E_case)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(2, 9), st.integers(1, 3), st.data())
def test_threaded_probe_columns_are_the_coarse_rounding(n, m, rows_per_block, data):
    rows = []
    for _ in range(n):
        cuts = sorted(data.draw(st.lists(st.integers(0, D), min_size=m - 1, max_size=m - 1)))
        rows.append([b - a for a, b in zip([0] + cuts, cuts + [D])])
    A = np.array(rows, dtype=np.int64)
    ys = sorted(set(data.draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=m))))
    with pytest.MonkeyPatch.context() as mp:
        use_threads(mp, 2)
        set_blocks(mp, rows_per_block * m)
        got = fused.coarse_probe_columns(A, 52, [4, 8, 12], ys)
    for d in (4, 8, 12):
        want = reference_coarse(rows, d)
        assert got[d].tolist() == [[row[y] for y in ys] for row in want]


CASES = [(Fraction(1, 520), 0.0, 1), (Fraction(1, 520), 1e-12, 3), (Fraction(0), 1e-9, 4), (Fraction(0), -1e-3, 2)]


@pytest.mark.parametrize(("c", "push", "seed"), CASES)
def test_threaded_stage_gives_the_bits_of_one_thread(monkeypatch, c, push, seed):
    """260 × 260 kernels on the PML boundary, just outside it (the repair mixes) and inside it, in blocks of 7
    rows (37 blocks and a last block of 1 row) on two threads and on one, written over K: the same exact kernel,
    weight, check and floats, and the kernel is private by the oracle."""
    n = 260
    K = two_level_kernel(n, float(c), float(E), seed=seed, parts=1)
    if push > 0:
        K = (1 - push) * K + push * np.eye(n)
    elif push < 0:
        K = (1 + push) * K - push / n
    ps = prior_set(c)
    set_blocks(monkeypatch, 7 * n)
    results = {}
    for threads in (1, 2):
        use_threads(monkeypatch, threads)
        mine = K.copy()
        results[threads] = certify_on_fine_grid(mine, ps, E, 52, overwrite=True), mine
    (one, k_one), (two, k_two) = results[1], results[2]
    assert one.kernel.int64().tobytes() == two.kernel.int64().tobytes() and one.weight == two.weight
    assert one.check.worst_ratio == two.check.worst_ratio and one.check.feasible and two.check.feasible
    assert one.floats.tobytes() == two.floats.tobytes() and k_one.tobytes() == k_two.tobytes()
    assert same_aggregates(two.kernel.column_aggregates(), one.kernel.int64().tolist())
    assert oracle_private(two.kernel.int64().tolist(), two.kernel.denominator, c, E)
    if push > 0:
        assert two.weight > 0


def test_ctrl_c_during_the_threaded_in_place_mix_waits_until_k_is_whole(monkeypatch):
    """SIGINT sent from a worker thread's block of the mix written over K: raised after the pass, K then holds
    the whole mixed kernel (as the uninterrupted stage leaves it)."""
    n = 260
    K = two_level_kernel(n, 0.0, float(E), seed=1, parts=1)
    K = (1 - 1e-12) * K + 1e-12 * np.eye(n)
    ps = prior_set(Fraction(0))
    use_threads(monkeypatch, 2)
    set_blocks(monkeypatch, 5 * n)
    whole = certify_on_fine_grid(K.copy(), ps, E, 52, overwrite=True)
    assert whole.weight > 0
    real = fused.rows_stochastic
    sent = []
    worker_in = threading.Event()

    def interrupted_in_a_worker(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            worker_in.wait(timeout=HANG_GUARD_SECONDS)  # the worker gets a block of the pass too
        elif not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)  # handled by the main thread
            worker_in.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(fused, "rows_stochastic", interrupted_in_a_worker)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mine = K.copy()
    try:
        with pytest.raises(KeyboardInterrupt):
            certify_on_fine_grid(mine, ps, E, 52, overwrite=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent == [True]
    assert mine.tobytes() == whole.floats.tobytes()
    assert np.array_equal(to_grid(mine).int64(), whole.kernel.int64())


def test_ctrl_c_during_the_threaded_rounding_leaves_k_rounding_to_the_same_kernel(monkeypatch):
    """KeyboardInterrupt in the calling thread during the rounding written over K (not held: K then holds rows
    or their rounding): when it propagates no thread writes any more, and K rounds to the kernel it rounded to."""
    n = 260
    K = two_level_kernel(n, 1 / 520, float(E), seed=3, parts=1)
    use_threads(monkeypatch, 2)
    set_blocks(monkeypatch, 3 * n)
    real = fused.ColumnAggregator.add
    calls = []
    worker_block = threading.Event()
    main_block = threading.Event()

    def interrupted(self, *args, **kwargs):
        calls.append(threading.current_thread() is threading.main_thread())
        if not calls[-1]:
            worker_block.set()
            # the worker waits in its first block until the calling thread is in one: otherwise, on a busy machine,
            # the worker could round every block before the calling thread takes any (then nothing is interrupted)
            main_block.wait(timeout=HANG_GUARD_SECONDS)
        else:
            main_block.set()
            if worker_block.wait(timeout=HANG_GUARD_SECONDS):  # the worker is in a block (its first, or a later one)
                raise KeyboardInterrupt  # in the calling thread's block, before it is written
        return real(self, *args, **kwargs)

    monkeypatch.setattr(fused.ColumnAggregator, "add", interrupted)
    mine = K.copy()
    with pytest.raises(KeyboardInterrupt):
        exact._to_fine_grid_by_rows(mine, mine)
    monkeypatch.setattr(fused.ColumnAggregator, "add", real)
    settled = mine.copy()
    time.sleep(0.05)
    assert mine.tobytes() == settled.tobytes()  # nobody writes after the call
    assert calls.count(True) == 1 and calls.count(False) >= 1
    assert np.array_equal(to_grid(mine).int64(), to_grid(K).int64())


# ----------------------------------------------------------------------------------------- the stage's second check
@pytest.mark.parametrize("push", [0.0, 1e-12, -1e-3])
def test_certificate_reports_the_guarantee_that_a_fresh_check_gives(push):
    """certify_design reports the epsilon + prior_set guarantee from its own exact check on the grid 2^−52 (no
    second check, no second bound of e^ε): the same report as check_guarantees checking the emitted kernel
    afresh, for a kernel on the PML boundary at ε = 1, one pushed out of it (repaired) and one inside it."""
    from mechdesign.certify.guarantees import check_guarantees
    from mechdesign.design import certify_design
    from mechdesign.spec.models import load_spec

    n = 260
    spec = load_spec(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": f"1/{2 * n}"},
            "objective": {"kind": "bayes_vulnerability", "prior": "uniform"},
            "output_size": n,
        }
    )
    K = two_level_kernel(n, 1 / (2 * n), float(np.e), seed=2, parts=1)
    if push > 0:
        K = (1 - push) * K + push * np.eye(n)
    elif push < 0:
        K = (1 + push) * K - push / n
    exact_kernel, _, _, cert, _ = certify_design(spec, K, lp_objective=None, dual=None, sense=-1)
    fresh = check_guarantees(exact_kernel, spec)
    assert cert.guarantees == fresh and len(fresh) == 1
    assert cert.feasible and fresh[0].feasible
    assert cert.repair_weight > 0 if push > 0 else push == 0 or cert.repair_weight == 0
