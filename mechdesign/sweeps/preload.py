"""Dask worker preload of a local sweep cluster: import the design pipeline when the worker starts.

Without it each worker imports ``mechdesign.design`` (scipy, highspy, the objective registry) in its
first task, which the sweep's wall clock then pays; with it the import is part of the cluster's
start-up. Used as ``LocalCluster(preload=["mechdesign.sweeps.preload"])``.
"""

import mechdesign.design  # noqa: F401
