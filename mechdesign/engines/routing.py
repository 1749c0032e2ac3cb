"""The one place that says which engines solve a design, and in which order.

``ROUTES[objective kind]`` lists the engines to try, best first; :func:`plan` keeps those that apply to a spec
(each engine's ``applies``, which reads the spec and builds nothing) and says why the others do not;
:func:`run_route` runs them in order until one stops the route (:meth:`~mechdesign.engines.base.EngineBase.hands_over`)
and records every attempt. ``solver.engine`` forces one engine. After the certification
:func:`mechdesign.design.design` may run the two :data:`FALLBACKS` (the exact re-solve of a small design, the
constant kernel), recorded the same way; the exact re-solve (:class:`ExactSimplex`) is the route itself again with
every kernel LP solved by the rational simplex, so it lives here. The engine table is in docs/explanation/engines.md.

Adding an engine: one module under :mod:`mechdesign.engines` with a class implementing
:class:`~mechdesign.engines.base.Engine`, one line in :data:`ENGINES` and its name in the routes it serves; the
reference problems of the tests then run it on every problem it applies to.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from mechdesign.engines.base import Attempt, Budget, Engine, EngineBase, Problem
from mechdesign.engines.bayes_lp import BayesLP
from mechdesign.engines.column_generation import ColumnGeneration
from mechdesign.engines.compiled_lp import CompiledLP
from mechdesign.engines.constant_kernel import ConstantKernel
from mechdesign.engines.dobrushin_pairs import DobrushinPairs
from mechdesign.engines.frequency_column_generation import FrequencyColumnGeneration
from mechdesign.engines.frequency_estimation import FrequencyAOptimalRays, FrequencySymmetricClasses
from mechdesign.engines.kernel_lp import UncompiledKernelLP
from mechdesign.engines.output_generation import OutputGeneration
from mechdesign.engines.ray_lp import RayLP
from mechdesign.engines.tangent_secant import TangentSecant
from mechdesign.engines.worst_case import IntervalPartitions, WorstCaseKernelLP
from mechdesign.engines.worst_case_outputs import SideOutputGeneration
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.errors import InputError
from mechdesign.spec.models import Spec

__all__ = [
    "ExactSimplex",
    "EXACT_FALLBACK_MAX_N",
    "ENGINES",
    "ROUTES",
    "FALLBACKS",
    "RoutePlan",
    "plan",
    "plan_problem",
    "run_route",
    "engine",
]

EXACT_FALLBACK_MAX_N = 12
"""A design with N ≤ this that is not certified optimal in floating point is re-solved by this engine."""


class ExactSimplex(EngineBase):
    name = "exact-simplex"
    solves = "the route again with every kernel LP solved by the exact rational simplex (small designs, N <= 12)"

    def applies(self, problem: Problem) -> str | None:
        spec = problem.spec
        if spec.n > EXACT_FALLBACK_MAX_N:
            return f"N = {spec.n} > {EXACT_FALLBACK_MAX_N}"
        if spec.solver.method == "exact":
            return "solver.method is exact already"
        if spec.solver.denominator_bits != 52:
            return "solver.denominator_bits is not 52"
        return None

    def run(self, problem: Problem, budget: Budget):
        spec = problem.spec
        exact_spec = spec.model_copy(
            update={"solver": spec.solver.model_copy(update={"method": "exact", "engine": None})}
        )
        outcome, attempts = run_route(Problem(exact_spec, problem.rules), budget)
        outcome.method = outcome.method if outcome.method else "exact"
        problem.carried[self.name] = attempts
        return outcome

    def hands_over(self, outcome):
        return None


ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        UncompiledKernelLP(),
        IntervalPartitions(),
        WorstCaseKernelLP(),
        SideOutputGeneration(),
        OutputGeneration(),
        DobrushinPairs(),
        CompiledLP(),
        RayLP(),
        ColumnGeneration(),
        TangentSecant(),
        BayesLP(),
        FrequencySymmetricClasses(),
        FrequencyAOptimalRays(),
        FrequencyColumnGeneration(),
        ExactSimplex(),
        ConstantKernel(),
    )
}
"""Every engine, by name."""

ROUTES: dict[str, tuple[str, ...]] = {
    "expected_loss": (
        "uncompiled-kernel-lp",
        "interval-partitions",
        "worst-case-kernel-lp",
        "side-output-generation",
        "output-generation",
        "compiled-lp",
    ),
    "dobrushin": ("dobrushin-pairs", "output-generation", "compiled-lp"),
    "bayes_vulnerability": ("uncompiled-kernel-lp", "output-generation", "compiled-lp", "ray-lp", "bayes-lp"),
    "min_vulnerability": ("compiled-lp",),
    "mutual_information": ("ray-lp", "column-generation"),
    "f_divergence": ("ray-lp", "tangent-secant"),
    "frequency_estimation": (
        "frequency-symmetric-classes",
        "frequency-a-optimal-rays",
        "frequency-column-generation",
    ),
}
"""For each objective kind, the engines to try in order (the first that applies runs first)."""

FALLBACKS: tuple[str, ...] = ("exact-simplex", "constant-kernel")
"""Run by :func:`mechdesign.design.design` after the certification: the exact re-solve of a small design not
certified optimal, then the constant kernel when no kernel passed the exact privacy check."""


def engine(name: str) -> Engine:
    """The engine called ``name`` (an input error naming ``solver.engine`` for an unknown name)."""
    if name not in ENGINES:
        raise InputError(f"solver.engine: must be one of {', '.join(sorted(ENGINES))}, found {name}")
    return ENGINES[name]


@dataclass(frozen=True)
class RoutePlan:
    """The route of one spec: the engines that will be tried, in order, and why the others on the route will not."""

    kind: str
    route: tuple[str, ...]
    """The objective's route (or the one forced engine)."""
    engines: tuple[Engine, ...]
    """The engines of ``route`` that apply, in order."""
    skipped: dict[str, str]
    """Engine name → why it does not apply."""
    forced: str | None = None

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.engines]

    def to_json(self) -> dict:
        return {
            "objective_kind": self.kind,
            "forced": self.forced,
            "route": [
                {"engine": name, "applies": name not in self.skipped, "reason": self.skipped.get(name)}
                for name in self.route
            ],
            "fallbacks": list(FALLBACKS),
        }

    def text(self) -> str:
        """The route as the command line prints it (``mechdesign solve SPEC --plan``)."""
        head = f"route for objective {self.kind}" + (f" (solver.engine forces {self.forced})" if self.forced else "")
        lines = [head + ":"]
        first = True
        for name in self.route:
            if name in self.skipped:
                lines.append(f"  -  {name}: does not apply: {self.skipped[name]}")
            else:
                lines.append(f"  {'>' if first else '+'}  {name}: {ENGINES[name].solves}")
                first = False
        lines.append(f"  then, after the exact certification if needed: {', '.join(FALLBACKS)}")
        return "\n".join(lines)


def plan_problem(problem: Problem) -> RoutePlan:
    """The route of ``problem`` (:func:`plan`)."""
    spec = problem.spec
    kind = spec.objective.kind
    forced = spec.solver.engine
    route = (forced,) if forced is not None else ROUTES[kind]
    engines, skipped = [], {}
    for name in route:
        reason = engine(name).applies(problem)
        if name not in ROUTES[kind] + FALLBACKS:
            reason = f"it is not on the route of objective {kind} ({', '.join(ROUTES[kind])})"
        if reason is None:
            engines.append(ENGINES[name])
        else:
            skipped[name] = reason
    if forced is not None and skipped:
        raise InputError(f"solver.engine: {forced} does not apply to this design: {skipped[forced]}")
    if not engines:
        why = "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
        raise InputError(f"objective: no engine can design this spec: {why}")
    return RoutePlan(kind=kind, route=route, engines=tuple(engines), skipped=skipped, forced=forced)


def plan(spec: Spec) -> RoutePlan:
    """The engines that apply to ``spec``, in the order they will be tried, and why the others on its route do
    not (nothing is built or solved). Raises :class:`~mechdesign.spec.errors.InputError` when ``solver.engine``
    names an unknown engine or one that does not apply, or when no engine applies."""
    return plan_problem(Problem.of(spec))


def run_route(problem: Problem, budget: Budget | None = None) -> tuple[PlanOutcome, list[Attempt]]:
    """Run the engines of the route in order until one stops it; the outcome (``outcome.engine`` names the engine)
    and every attempt."""
    route = plan_problem(problem)
    budget = Budget(problem.spec.solver.time_limit) if budget is None else budget
    attempts: list[Attempt] = []
    outcome = None
    for i, unit in enumerate(route.engines):
        t0 = time.perf_counter()
        outcome = unit.run(problem, budget)
        outcome.engine = unit.name
        seconds = time.perf_counter() - t0
        last = i == len(route.engines) - 1
        handed = unit.hands_over(outcome)
        if handed is None or last:
            why = f"its outcome is the route's ({outcome.status.value})"
            if handed is not None:
                why += f"; it {handed}, and no engine follows it on the route"
            attempts.append(Attempt(unit.name, outcome.status, seconds, why))
            break
        attempts.append(Attempt(unit.name, outcome.status, seconds, f"{handed}: handed over"))
    return outcome, attempts
