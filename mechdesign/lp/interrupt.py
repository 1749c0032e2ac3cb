"""Ctrl-C while HiGHS runs (issue 12, item 4).

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

__all__ = ["run_interruptible", "WAIT_SLICE_SECONDS"]

WAIT_SLICE_SECONDS = 0.05


def run_interruptible(h):
    """``h.run()``, but Ctrl-C stops HiGHS and raises KeyboardInterrupt. Returns the HighsStatus."""
    if not h.HandleUserInterrupt:
        h.HandleUserInterrupt = True  # subscribes the simplex/IPM/MIP interrupt callbacks once per Highs
    thread = h.startSolve()
    try:
        while True:
            done, status = h.wait(WAIT_SLICE_SECONDS)
            if done:
                return status
    except KeyboardInterrupt:
        h.cancelSolve()
        try:
            while not h.wait(WAIT_SLICE_SECONDS)[0]:
                pass
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting, the daemon thread dies with the process
            pass
        thread.join(timeout=0)
        raise
