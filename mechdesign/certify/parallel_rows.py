"""Map a function over blocks of rows on the process's threads, results in block order.

The certify stage's passes over the N × M kernel (the 2^−52 rounding, the snapping test's probe columns, the
one-pass mix: :mod:`mechdesign.certify.exact`, :mod:`mechdesign.certify.fused`) already work block of rows by
block of rows, and each block's work depends on that block alone: what is combined across blocks (the exact
column maxima, minima and sums) is folded afterwards, by the caller, in block order, from integers. numpy's
element-wise kernels, sorts and reductions release the GIL, and when certification runs the LP is finished, so
the cores HiGHS used are idle: :func:`map_row_blocks` runs the blocks on as many threads as the process gives
HiGHS (:func:`mechdesign.lp.threads.highs_threads`: 2 by default, 1 in sweep workers, where the processes share
the cores), the calling thread being one of them. The results are the same objects in the same order as a plain
loop, so every pass gives the same bits on 1 and on 2 threads.

Small passes stay on the calling thread (:data:`PARALLEL_FROM_ENTRIES`): a pool's start-up (about 0.1 ms) and
the hand-over of a few blocks cost more than a second core saves there. And a pass runs on no more threads than
the machine has cores idle when it starts (:func:`_idle_cores`): a thread that shares its core with another job
only adds waiting. Both limits come from measurements on a 2-core machine: below 2^20 entries two threads were
no faster even when the second core was idle, and with another job holding a core two threads were 10–13 %
slower from N = 1000 on (docs/explanation/performance-notes.md, section "The certify stage").
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from mechdesign.lp.threads import highs_threads

__all__ = ["PARALLEL_FROM_ENTRIES", "block_threads", "map_row_blocks"]

PARALLEL_FROM_ENTRIES = 1 << 20
"""Passes over fewer entries than this (N·M; N = 1024 for a square kernel) run on the calling thread: below it two
threads were slower or no faster even on a quiet machine (docs/explanation/performance-notes.md)."""


def block_threads(entries: int, blocks: int) -> int:
    """How many threads a pass over ``entries`` entries in ``blocks`` blocks of rows runs on: from
    :data:`PARALLEL_FROM_ENTRIES` entries on, the process's HiGHS thread count, but no more than there are blocks
    and than the cores left idle by the threads running elsewhere on the machine now (:func:`_idle_cores`); else 1.
    A thread that shares a core with another job only waits for it: on 2 cores with one busy, two threads made the
    stage 10–13 % slower from N = 1000 on (measurements in the module docstring)."""
    if entries < PARALLEL_FROM_ENTRIES or blocks < 2:
        return 1
    threads = min(highs_threads(), blocks)
    if threads > 1:
        idle = _idle_cores()
        if idle is not None:
            threads = min(threads, 1 + idle)
    return max(1, threads)


def _idle_cores() -> int | None:
    """The cores of this process's CPU set that no other runnable thread of the machine needs now (the
    running-thread count of ``/proc/loadavg``, which includes the caller), or None where that file is missing."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return max(0, cores - running)


def map_row_blocks(
    work: Callable[[slice, Any], Any],
    blocks: Sequence[slice],
    entries: int,
    scratch: Callable[[], Any] | None = None,
    stop: Callable[[Any], bool] | None = None,
) -> list:
    """``[work(rows, buffers) for rows in blocks]``, on :func:`block_threads` threads (the calling thread one of
    them), results in block order.

    ``scratch``: makes one thread's scratch buffers (``buffers``; each thread gets its own, reused from block to
    block), or None (``buffers`` is None). ``stop``: a result that ends the pass (a block that failed its check):
    the blocks not yet started are skipped, and the list ends with the first such result in block order (the
    blocks are started in order, so every block before it has run, as in a plain loop that breaks there; a block
    after it may have run too, on another thread, which the caller's pass must allow).

    The calling thread returns (or raises) only once every block it handed out has ended: an exception in a
    worker ends the pass and is raised here, and an exception in the calling thread, Ctrl-C included, waits for
    the blocks the other threads are working on before it propagates (a second Ctrl-C meanwhile is raised after
    them), so no thread still writes into the caller's arrays after the call.
    """
    blocks = list(blocks)
    threads = block_threads(entries, len(blocks))
    if threads == 1:
        buffers = None if scratch is None else scratch()
        results = []
        for rows in blocks:
            results.append(work(rows, buffers))
            if stop is not None and stop(results[-1]):
                break
        return results

    results: list = [None] * len(blocks)
    ended = [len(blocks)]  # the first block whose result stopped the pass (block order)
    order = itertools.count()  # next(): atomic under the GIL, so each block is handed out once, in order
    halt = threading.Event()
    lock = threading.Lock()

    def run() -> None:
        buffers = None if scratch is None else scratch()
        try:
            while not halt.is_set():
                i = next(order)
                if i >= len(blocks) or i > ended[0]:
                    return
                results[i] = work(blocks[i], buffers)
                if stop is not None and stop(results[i]):
                    with lock:
                        ended[0] = min(ended[0], i)
        except BaseException:
            halt.set()  # the other threads start no new block
            raise

    with ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="certify-rows") as pool:
        others = [pool.submit(run) for _ in range(threads - 1)]
        try:
            run()
        finally:
            interrupted = _wait_through_ctrl_c(others)
        for future in others:
            future.result()  # a worker's exception, raised here
    if interrupted:
        raise KeyboardInterrupt
    return results[: ended[0] + 1]


def _wait_through_ctrl_c(futures) -> bool:
    """Wait until every future has ended, even through Ctrl-C; whether a Ctrl-C came meanwhile."""
    interrupted = False
    while True:
        try:
            wait(futures)
            return interrupted
        except KeyboardInterrupt:
            interrupted = True
