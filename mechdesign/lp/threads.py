"""How many threads each HiGHS solve of this process uses.

HiGHS runs one global task scheduler per process: once a solve has started it with some thread
count, a later ``Highs`` object asking for another count returns ``kNotset`` without solving
(observed with highspy 1.15: threads 2, then 1, in one process). So the count is fixed per
process, on first use, from the environment variable ``MECHDESIGN_HIGHS_THREADS`` (default 2);
later changes of the variable are ignored. Sweeps run one design per worker process with
``MECHDESIGN_HIGHS_THREADS=1`` so that the processes, not HiGHS, share the cores.

BLAS: :func:`single_threaded_blas` runs a block with numpy's and scipy's OpenBLAS on one thread, for code that
factors many small dense matrices (each call of a multi-threaded OpenBLAS wakes and synchronises its pool, which
on busy cores costs far more than the factorisation; mechdesign/release/blas_threads.py has the measurements).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

__all__ = ["highs_threads", "HIGHS_THREADS_ENV", "DEFAULT_HIGHS_THREADS", "single_threaded_blas"]

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


@contextmanager
def single_threaded_blas():
    """Run the block (or, as ``@single_threaded_blas()``, each call of the function) with every loaded BLAS
    (numpy's and scipy's OpenBLAS) limited to one thread. ``threadpoolctl`` limits the BLAS libraries loaded when
    the block starts, so scipy.linalg (which brings its own OpenBLAS) is imported first; without threadpoolctl the
    block runs unchanged."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS so that the limit below covers it)
    import scipy.linalg.blas  # noqa: F401

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a declared dependency
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
