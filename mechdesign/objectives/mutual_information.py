"""Mutual information I(X;Y) under a prior P, maximised over (ε,𝒫)-PML kernels: a sublinear utility
(Σ_y of a convex, positively homogeneous μ), so the optimum is the LP over the extreme rays of the cone of
private columns (:mod:`mechdesign.engines.sublinear`); past the exact threshold, column generation over
the two-level ray families of Q_X(c) and the simplex (:func:`~mechdesign.engines.sublinear.design_column_generation`). Engines: ``ray-lp``, ``column-generation``.
"""

from __future__ import annotations

import numpy as np

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.rays import kernel_utility

__all__ = ["MutualInformation"]


class MutualInformation(ObjectiveRules):
    kind = "mutual_information"
    sense = -1

    def value(self, K: np.ndarray) -> float:
        return kernel_utility(self.spec, K)
