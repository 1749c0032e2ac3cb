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
from typing import Callable, ClassVar

import numpy as np

from mechdesign.certify.exact import ExactKernel
from mechdesign.certify.guarantees import SideConstraintReport
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

    def entry_sensitivity(self) -> float | None:
        """S with |U(K) − U(K')| ≤ S · max_{x,y} |K_xy − K'_xy| for every two kernels (N × M): how much the
        utility can move when every entry moves by one step of the grid; the certify stage's grid floor
        (:func:`mechdesign.design.grid_floor`). None when no such constant is known (utilities with a log)."""
        return None

    def textbook_comparison(self) -> dict | None:
        """Values of textbook mechanisms at the same ε that the report prints beside the design (None: none)."""
        return None

    def closed_form(self, value: float) -> ClosedForm | None:
        """The paper's closed form for this problem, when one applies."""
        return None

    side_repair_kernel: ClassVar[str] = "the constant kernel"
    """What :meth:`enforce` mixes in to restore a side constraint (named in the certificate)."""

    def enforce(self, kernel: ExactKernel, private: Callable[[ExactKernel], bool]) -> tuple[ExactKernel, Fraction]:
        """Restore the objective's own side constraints (a vulnerability cap, a loss cap) on the exact kernel,
        exactly, by mixing in a kernel that meets them and every privacy constraint (the constant kernel, the
        least-loss private kernel): privacy is convex in K, so the mix keeps it, and each candidate on the grid
        must also pass ``private`` (every privacy constraint of the spec, exactly). Returns the kernel and the
        weight mixed in (0: nothing to restore; the kernel unchanged when no mix restores it, and then
        :meth:`side_constraints` says which constraint fails)."""
        return kernel, Fraction(0)

    def side_constraints(self, kernel: ExactKernel) -> list[SideConstraintReport]:
        """One exact verdict per side constraint the spec states for this objective (none by default)."""
        return []

    def compile(self) -> CompiledProblem:
        """The kernel LP(s) when the objective is linear in K (``solve --write-lp`` writes the first)."""
        raise InputError(
            f"objective: {self.kind} is not designed by one kernel LP (it is solved by "
            "extreme-ray LPs or column generation); --write-lp applies to expected_loss, "
            "dobrushin and bayes_vulnerability with M >= N"
        )
