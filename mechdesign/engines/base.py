"""The interface every engine implements, and what the route hands between engines.

An *engine* is one way of solving a design: the compiled kernel LP with its fallback ladder, output generation,
the uncompiled kernel LP, the extreme-ray LP, column generation, ... (the table is in
docs/explanation/engines.md). Each one answers two questions, in the shape of dp_accounting's
``PrivacyAccountant.supports(event)`` and cvxpy's ``Solver.accepts``/``solve``:

* ``applies(problem)``: None when the engine can solve the problem, else the reason it cannot, in words. It
  reads the spec only: no LP is built, nothing is solved.
* ``run(problem, budget)``: a :class:`~mechdesign.objectives.plan.PlanOutcome` whose ``status`` is always a
  :class:`~mechdesign.lp.solve.Status` (the one vocabulary, mapped once from HiGHS's model statuses in
  :mod:`mechdesign.lp.solve`).

The route (:mod:`mechdesign.engines.routing`) runs the engines that apply in order; an engine whose outcome
falls short of its bound *hands over* to the next one (:meth:`Engine.hands_over` says why), and every
attempt is recorded (:class:`Attempt`) in the design's result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from mechdesign.lp.solve import Status
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.compile import CompiledProblem
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.models import Spec

__all__ = ["Engine", "EngineBase", "Problem", "Budget", "Attempt", "no_kernel", "kernel_lp_rules"]


@dataclass
class Problem:
    """A design problem as the engines see it: the validated spec and its objective, built once.

    ``compiled()`` builds the objective's kernel LP(s) on first use and shares them between the engines of a
    route (the side-row output generation, output generation and the compiled LP read the same LP).
    ``carried`` holds what an engine that handed over leaves to the next (by engine name)."""

    spec: Spec
    rules: ObjectiveRules
    carried: dict[str, Any] = field(default_factory=dict)
    _compiled: CompiledProblem | None = field(default=None, repr=False)
    compile_seconds: float = 0.0

    @classmethod
    def of(cls, spec: Spec) -> "Problem":
        from mechdesign.objectives.registry import objective_rules

        return cls(spec, objective_rules(spec))

    def compiled(self) -> CompiledProblem:
        if self._compiled is None:
            t0 = time.perf_counter()
            self._compiled = self.rules.compile()
            self.compile_seconds = time.perf_counter() - t0
        return self._compiled

    def take_compile_seconds(self) -> float:
        """The seconds :meth:`compiled` took, to the first engine that reports them (0 afterwards: one compile is
        counted once in a design's times)."""
        seconds, self.compile_seconds = self.compile_seconds, 0.0
        return seconds


@dataclass(frozen=True)
class Budget:
    """The solver's time budget of a design (``solver.time_limit``), shared by the engines of its route."""

    time_limit: float | None
    started: float = field(default_factory=time.perf_counter)

    def remaining(self) -> float | None:
        """Seconds left (at least 1 ms, so that a solver stops at once rather than run unlimited), or None."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - (time.perf_counter() - self.started), 1e-3)


@dataclass(frozen=True)
class Attempt:
    """One engine's run on the route: its name, the status it ended with, its seconds and why the route stopped
    there or went on (``reason``)."""

    engine: str
    status: Status
    seconds: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "status": self.status.value, "seconds": self.seconds, "reason": self.reason}


@runtime_checkable
class Engine(Protocol):
    """One way of solving a design (module doc)."""

    name: str
    solves: str
    """What it solves, one line (the engine table of docs/explanation/engines.md)."""

    def applies(self, problem: Problem) -> str | None: ...

    def run(self, problem: Problem, budget: Budget) -> PlanOutcome: ...

    def hands_over(self, outcome: PlanOutcome) -> str | None: ...


class EngineBase:
    """Defaults shared by the engines: an outcome hands over to the next engine unless it is optimal, or the budget
    is spent (time limit) or the user interrupted."""

    name: ClassVar[str]
    solves: ClassVar[str]
    stops_on: ClassVar[tuple[Status, ...]] = (Status.OPTIMAL, Status.TIME_LIMIT, Status.INTERRUPTED)

    def hands_over(self, outcome: PlanOutcome) -> str | None:
        """None when the route stops at ``outcome``; else why the next engine is tried."""
        if outcome.status in self.stops_on:
            return None
        return f"stopped short of its bound ({outcome.status.value}{': ' + outcome.message if outcome.message else ''})"

    def __repr__(self) -> str:
        return f"<engine {self.name}>"


def no_kernel(sense: int, method: str, message: str, status: Status = Status.UNKNOWN, seconds: float = 0.0):
    """The outcome of an engine that ran and found no kernel it stands by (the route then hands over)."""
    return PlanOutcome(
        status=status, kernel=None, value=None, bound=None, sense=sense, method=method, seconds=seconds, message=message
    )


def kernel_lp_rules(problem: Problem) -> str | None:
    """None when the objective is designed by kernel LP(s) (it has ``compile``), else why not."""
    if problem.rules.kernel_lp_reason() is not None:
        return problem.rules.kernel_lp_reason()
    return None
