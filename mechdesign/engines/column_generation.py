"""Engine ``column-generation``: mutual information over min_mass or the simplex past the exact ray threshold, by
column generation over the two-level ray families (:func:`mechdesign.engines.sublinear.design_column_generation`,
pricing :mod:`mechdesign.objectives.pricing_mi`, dual start :mod:`mechdesign.objectives.mi_dual_start`)."""

from __future__ import annotations

from mechdesign.engines.base import EngineBase
from mechdesign.engines.ray_lp import fixed_hooks
from mechdesign.engines.sublinear import design_column_generation, solve_sublinear
from mechdesign.privacy.registry import rules

__all__ = ["ColumnGeneration"]


class ColumnGeneration(EngineBase):
    name = "column-generation"
    solves = "mutual information over min_mass or the simplex: column generation over the two-level ray families"

    def applies(self, problem) -> str | None:
        spec = problem.spec
        if rules(spec.prior_set, spec.n).ray_family_c() is None:
            return f"the prior set {spec.prior_set.kind} has no ray families (only min_mass and the simplex)"
        return None

    def run(self, problem, budget):
        return solve_sublinear(problem.spec, design_column_generation, fixed_hooks(problem.spec.objective.kind))

    def hands_over(self, outcome):
        return None
