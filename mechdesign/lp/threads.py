"""How many threads each HiGHS solve of this process uses.

HiGHS runs one global task scheduler per process: once a solve has started it with some thread
count, a later ``Highs`` object asking for another count returns ``kNotset`` without solving
(observed with highspy 1.15: threads 2, then 1, in one process). So the count is fixed per
process, on first use, from the environment variable ``MECHDESIGN_HIGHS_THREADS`` (default 2);
later changes of the variable are ignored. Sweeps run one design per worker process with
``MECHDESIGN_HIGHS_THREADS=1`` so that the processes, not HiGHS, share the cores.
"""

from __future__ import annotations

import os

__all__ = ["highs_threads", "HIGHS_THREADS_ENV", "DEFAULT_HIGHS_THREADS"]

HIGHS_THREADS_ENV = "MECHDESIGN_HIGHS_THREADS"
DEFAULT_HIGHS_THREADS = 2

_fixed: int | None = None


def highs_threads() -> int:
    """The thread count of every HiGHS solve in this process (read once, then fixed)."""
    global _fixed
    if _fixed is None:
        text = os.environ.get(HIGHS_THREADS_ENV, "").strip()
        try:
            _fixed = max(1, int(text)) if text else DEFAULT_HIGHS_THREADS
        except ValueError:
            _fixed = DEFAULT_HIGHS_THREADS
    return _fixed
