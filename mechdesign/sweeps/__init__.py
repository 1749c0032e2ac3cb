"""Sweeps: many designs (ε, c, N, prior sets, …) as one tidy table, on every core or a Dask cluster.

``axes`` (points from a base spec), ``store`` (finished designs keyed by spec hash), ``run``
(serial or Dask execution), ``table`` (DataFrame, CSV, Parquet), ``plot`` (trade-off and timing
figures), ``api`` (:func:`sweep`). pandas and dask are imported only when a sweep runs.
"""

from importlib import import_module

__all__ = ["sweep", "plan_sweep"]


def __getattr__(name: str):
    """``sweep`` and ``plan_sweep`` from :mod:`mechdesign.sweeps.api`, imported on first use."""
    if name not in __all__:
        raise AttributeError(f"module 'mechdesign.sweeps' has no attribute {name!r}")
    value = getattr(import_module("mechdesign.sweeps.api"), name)
    globals()[name] = value
    return value
