"""One BLAS thread for the estimators of :mod:`mechdesign.release.estimate`.

The MLE's Newton polish factors one small dense matrix per step (Cholesky of |S| × |S|, |S| ≤ N) and
EM multiplies thin batches; with OpenBLAS's default of one thread per core, every such call wakes and
synchronises the pool, and on a machine whose cores are busy a 300 × 300 Cholesky took 35–430 ms
instead of 1 ms (``mechdesign estimate`` at N = 300: 75 s, of which 42 s in 1,192 Choleskys; 3.8 s
single-threaded; benchmarks/tools_scaling.py). One thread also makes the bootstrap's sums independent
of the thread count. ``threadpoolctl`` limits the BLAS libraries loaded when the block starts, so
scipy.linalg (which brings its own OpenBLAS) is imported first; without threadpoolctl the block runs
unchanged.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["single_threaded_blas"]


@contextmanager
def single_threaded_blas():
    """Run the block (or, as ``@single_threaded_blas()``, each call of the function) with every loaded BLAS
    (numpy's and scipy's OpenBLAS) limited to one thread."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS so that the limit below covers it)
    import scipy.linalg.blas  # noqa: F401

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a declared dependency
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
