"""The interface every objective implements, looked up by ``kind`` in :mod:`mechdesign.objectives.registry`.

An objective says what it is: the utility of a given kernel (``value``, evaluated on the emitted exact kernel),
its kernel LP when it is linear in K (``compile``, and the cost matrix of that LP, ``kernel_cost``), the closed
forms of the papers that certify it (``closed_form``) and its side constraints. It does not solve itself: the
engines of :mod:`mechdesign.engines` do, in the order of :mod:`mechdesign.engines.routing`; the ``*_reason``
methods below tell them, without building anything, which programs the objective has.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import ClassVar

import numpy as np

from mechdesign.certify.exact import ExactKernel
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.objectives.plan import ClosedForm
from mechdesign.spec.errors import InputError
from mechdesign.spec.models import Spec

__all__ = ["ObjectiveRules"]


class ObjectiveRules(ABC):
    """One objective, bound to a validated spec."""

    kind: ClassVar[str]
    sense: ClassVar[int]
    """+1 minimise, −1 maximise."""
    outputs_estimate_x: ClassVar[bool] = False
    """Output y is an estimate of symbol y (so with M = N the outputs carry the alphabet's labels)."""
    kernel_lp_label: ClassVar[str | None] = None
    """How the design's method names the kernel LP this objective is (None: the engine's own name)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    # ------------------------------------------------------------ which programs the objective has
    def kernel_lp_reason(self) -> str | None:
        """None when the objective is designed by the kernel LP(s) of :meth:`compile`, else why not."""
        return f"objective {self.kind} is not linear in K (it is designed over the extreme rays of the PML cone)"

    def plain_kernel_lp_reason(self) -> str | None:
        """None when each LP of :meth:`compile` is the plain kernel LP (the PML rows and an objective on K alone,
        what output generation solves), else why not."""
        return self.kernel_lp_reason() or f"objective {self.kind} adds rows to the kernel LP"

    def kernel_cost_reason(self) -> str | None:
        """None when the design is min Σ C_xy K_xy over the PML kernels for one cost matrix C (:meth:`kernel_cost`;
        maximised as −Σ C K when ``sense`` is −1), else why not."""
        return f"objective {self.kind} is not one cost matrix on K"

    def kernel_cost(self) -> np.ndarray:
        """The N × M cost C of :meth:`kernel_cost_reason`."""
        raise NotImplementedError(self.kernel_cost_reason())

    def worst_case_loss_reason(self) -> str | None:
        """None when the design is min max_{P∈𝒫} Σ P(x) L_xy K_xy (the expected loss under the worst prior), else why
        not."""
        return f"objective {self.kind} is not an expected loss under the worst prior"

    def infeasible_message(self) -> str | None:
        """The input error to report when the kernel LP is infeasible (a side constraint no private kernel meets), or
        None (then the design falls back on the constant kernel)."""
        return None

    @abstractmethod
    def value(self, K: np.ndarray) -> float:
        """The utility of a kernel (N × M floats), as the objective defines it."""

    def exact_value(self, kernel: ExactKernel) -> float | None:
        """The utility of the row-stochastic exact ``kernel``, computed exactly and correctly rounded, where it
        needs no pass over the N × M entries (:mod:`mechdesign.objectives.exact_values`); None otherwise, and then
        :meth:`value` of its floats is the utility. The caller guarantees that every row sums to 1 exactly."""
        return None

    def unconstrained_bound(self) -> float | None:
        """A bound on the optimum over all kernels, private or not (hence on the private optimum), used
        with the constant-kernel fallback of :func:`mechdesign.design.design`. Default for a maximised
        utility that satisfies the data-processing inequality (mutual information, f-divergences, Bayes
        vulnerability, the Dobrushin coefficient): its value at the identity kernel, which every kernel
        post-processes. None when there is no such bound."""
        if self.sense > 0:
            return None
        return float(self.value(np.eye(self.spec.n)))

    def closed_form(self, value: float) -> ClosedForm | None:
        """The paper's closed form for this problem, when one applies."""
        return None

    def enforce(self, kernel: ExactKernel) -> tuple[ExactKernel, Fraction]:
        """Restore the objective's own side constraints on the exact kernel (e.g. a vulnerability cap) by
        mixing with the constant kernel, which keeps (ε,𝒫)-PML; returns the kernel and the weight mixed in."""
        return kernel, Fraction(0)

    def side_check(self, kernel: ExactKernel) -> str | None:
        """A message when a side constraint of the objective fails on the exact kernel, else None."""
        return None

    def compile(self) -> CompiledProblem:
        """The kernel LP(s) when the objective is linear in K (``solve --write-lp`` writes the first)."""
        raise InputError(
            f"objective: {self.kind} is not designed by one kernel LP (it is solved by "
            "extreme-ray LPs or column generation); --write-lp applies to expected_loss, "
            "dobrushin and bayes_vulnerability with M >= N"
        )
