"""Ctrl-C while HiGHS runs.

``Highs.run()`` is one C++ call: a SIGINT only sets Python's flag, which is not looked at until
HiGHS returns (a minute or more on large problems). :func:`run_interruptible` runs the solve in
highspy's solver thread (``startSolve``), waits on it in short slices so that the main thread sees
KeyboardInterrupt at once, and then stops HiGHS through its interrupt callbacks (simplex, IPM
and MIP call them between iterations / nodes; highspy's ``HandleUserInterrupt`` subscribes
them and ``cancelSolve`` makes them fire). It waits for HiGHS to return (normally a few
milliseconds) and re-raises KeyboardInterrupt, so that callers can report the best certified
kernel they hold and the command line exits 130.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

__all__ = ["run_interruptible", "WAIT_SLICE_SECONDS"]

WAIT_SLICE_SECONDS = 0.05


@contextmanager
def _sigint_deferred():
    """SIGINT held back (not lost) for the duration: highspy's ``wait`` takes and releases a lock in Python
    code, and a KeyboardInterrupt raised between the two left it held (the next wait then failed with
    "release unlocked lock" and the process aborted at exit: −6 instead of 130). The pending
    signal is delivered when the block ends, so Ctrl-C still stops a solve within one wait slice."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:  # no POSIX signal masks (Windows): as before
        yield
        return
    old = block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        block(signal.SIG_SETMASK, old)


def _wait(h):
    with _sigint_deferred():
        return h.wait(WAIT_SLICE_SECONDS)


def run_interruptible(h):
    """``h.run()``, but Ctrl-C stops HiGHS and raises KeyboardInterrupt. Returns the HighsStatus."""
    if not h.HandleUserInterrupt:
        h.HandleUserInterrupt = True  # subscribes the simplex/IPM/MIP interrupt callbacks once per Highs
    thread = h.startSolve()
    try:
        while True:
            done, status = _wait(h)
            if done:
                return status
    except KeyboardInterrupt:
        h.cancelSolve()
        try:
            while not _wait(h)[0]:
                pass
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting, the daemon thread dies with the process
            pass
        thread.join(timeout=0)
        raise
