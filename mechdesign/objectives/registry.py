"""The one place that maps an objective's ``kind`` to its implementation.

Adding an objective: its pydantic model in :mod:`mechdesign.spec.models` (in the ``Objective`` union), one
module here implementing :class:`mechdesign.objectives.base.ObjectiveRules`, and one line below.
"""

from __future__ import annotations

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.bayes_vulnerability import BayesVulnerability
from mechdesign.objectives.dobrushin import Dobrushin
from mechdesign.objectives.expected_loss import ExpectedLoss
from mechdesign.objectives.f_divergence import FDivergence
from mechdesign.objectives.frequency_estimation import FrequencyEstimation
from mechdesign.objectives.mutual_information import MutualInformation
from mechdesign.objectives.vulnerability import MinVulnerability
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.spec.models import Spec

__all__ = ["OBJECTIVE_RULES", "objective_rules", "compile_problem"]

OBJECTIVE_RULES: dict[str, type[ObjectiveRules]] = {
    cls.kind: cls
    for cls in (
        ExpectedLoss,
        Dobrushin,
        BayesVulnerability,
        MutualInformation,
        FDivergence,
        MinVulnerability,
        FrequencyEstimation,
    )
}


def objective_rules(spec: Spec) -> ObjectiveRules:
    """The implementation of ``spec.objective`` bound to the spec."""
    return OBJECTIVE_RULES[spec.objective.kind](spec)


def compile_problem(spec: Spec) -> CompiledProblem:
    """The kernel LP(s) of an objective that is linear in K (a clear error for the others)."""
    return objective_rules(spec).compile()
