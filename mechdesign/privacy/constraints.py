"""LP rows of the extra privacy constraints of a spec's ``privacy`` list (spec/models.py, "privacy constraints").

Each constraint is compiled by its own module and only needs the kernel K (N × M variable indices) and the
column maxima t_y ≥ K_x(y) that :func:`mechdesign.objectives.compile.add_pml_kernel` already holds:

* (ε,𝒫)-PML, 𝒫 a prior set:  e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y)   (the prior set's own lifted rows, privacy/*.py)
* ε·d-privacy, d discrete:  the same rows with 𝒫 = simplex (ε-LDP; O(NM) rows instead of N²M)
* ε·d-privacy, other d:  e^{−ε d(x,x')} K_x(y) − K_{x'}(y) ≤ 0 along the metric's graph (privacy/metric.py)

Every constraint is convex and holds for a constant kernel, so the repair by mixing with the constant kernel
(certify/guarantees.py) restores all of them at once.
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.privacy.metric import add_metric_rows
from mechdesign.privacy.priors import constrain_min_expectation
from mechdesign.spec.models import DiscreteMetric, MetricGuarantee
from mechdesign.spec.models import Simplex

__all__ = ["add_guarantee_rows"]


def add_guarantee_rows(b: LPBuilder, guarantee, K: np.ndarray, t: np.ndarray, tag: str) -> None:
    """Add the rows of one constraint of ``privacy`` to an LP whose kernel is K with column maxima t."""
    n = K.shape[0]
    scale = math.exp(-guarantee.epsilon.value)
    if isinstance(guarantee, MetricGuarantee):
        if isinstance(guarantee.metric, DiscreteMetric):
            constrain_min_expectation(b, Simplex(kind="simplex"), n, K, 1.0, [(t, scale)], tag=tag, k_range=(0.0, 1.0))
        else:
            add_metric_rows(b, K, guarantee)
        return
    constrain_min_expectation(b, guarantee.prior_set, n, K, 1.0, [(t, scale)], tag=tag, k_range=(0.0, 1.0))
