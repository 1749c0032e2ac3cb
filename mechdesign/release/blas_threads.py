"""One BLAS thread for the estimators of :mod:`mechdesign.release.estimate`.

The MLE's Newton polish factors one small dense matrix per step (Cholesky of |S| × |S|, |S| ≤ N) and
EM multiplies thin batches; with OpenBLAS's default of one thread per core, every such call wakes and
synchronises the pool, and on a machine whose cores are busy a 300 × 300 Cholesky took 35–430 ms
instead of 1 ms (``mechdesign estimate`` at N = 300: 75 s, of which 42 s in 1,192 Choleskys; 3.8 s
single-threaded; benchmarks/tools_scaling.py). One thread also makes the bootstrap's sums independent
of the thread count. ``threadpoolctl`` limits the BLAS libraries loaded when the block starts, so
scipy.linalg (which brings its own OpenBLAS) is imported first; without threadpoolctl the block runs
unchanged. (Defined in :mod:`mechdesign.lp.threads`, where the engines use it too.)
"""

from __future__ import annotations

from mechdesign.lp.threads import single_threaded_blas

__all__ = ["single_threaded_blas"]
