"""Engine ``tangent-secant``: an f-divergence past the exact ray threshold, any prior set, by tangent and secant
LPs over likelihood ratios (:func:`mechdesign.engines.fdiv_lines.design_tangent_secant`): the tangent LP's kernel
is a design, the secant LP's value a bound; a fixed output size below the rays used by the tangent/secant MIPs."""

from __future__ import annotations

from mechdesign.engines.base import EngineBase
from mechdesign.engines.fdiv_lines import design_tangent_secant
from mechdesign.engines.ray_lp import fixed_hooks
from mechdesign.engines.sublinear import solve_sublinear

__all__ = ["TangentSecant"]


class TangentSecant(EngineBase):
    name = "tangent-secant"
    solves = (
        "an f-divergence at any N and prior set: tangent LPs (kernels) and secant LPs (bounds) over likelihood ratios"
    )

    def applies(self, problem) -> str | None:
        return None  # any N and prior set (on the f_divergence route only)

    def run(self, problem, budget):
        return solve_sublinear(problem.spec, design_tangent_secant, fixed_hooks(problem.spec.objective.kind))

    def hands_over(self, outcome):
        return None
