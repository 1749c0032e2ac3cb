"""Sweeps: many designs (ε, c, N, prior sets, …) as one tidy table, on every core or a Dask cluster.

``axes`` (points from a base spec), ``store`` (finished designs keyed by spec hash), ``run``
(serial or Dask execution), ``table`` (DataFrame, CSV, Parquet), ``plot`` (trade-off and timing
figures), ``api`` (:func:`sweep`). pandas and dask are imported only when a sweep runs.
"""

from mechdesign.sweeps.api import plan_sweep, sweep

__all__ = ["sweep", "plan_sweep"]
