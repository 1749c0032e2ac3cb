"""The one place that makes HiGHS models (``highspy.Highs``), quiet.

HiGHS ≥ 1.16 prints a copyright banner on standard output the first time a process constructs a model,
before any option can be set; in ``mechdesign solve --json`` that line would precede the JSON object. The
first construction therefore runs with file descriptor 1 pointed at /dev/null (C's buffers flushed before
it is restored); later constructions print nothing, and every model starts with ``output_flag`` off
(``solver.verbose`` turns it back on where the caller wants HiGHS's log).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

__all__ = ["new_highs"]

_lock = threading.Lock()
_banner_silenced = False


def _first_construction_silently(highspy) -> None:
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable stdout (e.g. closed): nothing to protect
        highspy.Highs()
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            highspy.Highs()
            try:
                ctypes.CDLL(None).fflush(None)  # C stdio buffers go to /dev/null, not to the restored fd
            except (OSError, AttributeError):
                pass
        finally:
            os.dup2(saved, 1)
            os.close(devnull)
    finally:
        os.close(saved)


def new_highs():
    """A ``highspy.Highs`` with ``output_flag`` off; the process's first one is built silently."""
    global _banner_silenced
    import highspy

    if not _banner_silenced:
        with _lock:
            if not _banner_silenced:
                _first_construction_silently(highspy)
                _banner_silenced = True
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h
