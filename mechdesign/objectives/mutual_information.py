"""Mutual information I(X;Y) under a prior P, maximised over (ε,𝒫)-PML kernels: a sublinear utility
(Σ_y of a convex, positively homogeneous μ), so the optimum is the LP over the extreme rays of the cone of
private columns (:mod:`mechdesign.objectives.sublinear`); past the exact threshold, column generation over
the two-level ray families of Q_X(c) and the simplex (:func:`~mechdesign.objectives.sublinear.design_column_generation`).
"""

from __future__ import annotations

import numpy as np

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.objectives.rays import kernel_utility
from mechdesign.objectives.sublinear import design_column_generation, solve_sublinear
from mechdesign.privacy.registry import rules

__all__ = ["MutualInformation"]


class MutualInformation(ObjectiveRules):
    kind = "mutual_information"
    sense = -1

    def solve(self) -> PlanOutcome:
        spec = self.spec
        families = rules(spec.prior_set, spec.n).ray_family_c() is not None
        return solve_sublinear(spec, scalable=("column_generation", design_column_generation) if families else None)

    def value(self, K: np.ndarray) -> float:
        return kernel_utility(self.spec, K)
