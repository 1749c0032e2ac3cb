"""``design(spec)``: the whole pipeline, spec → compile → solve → certify → result.

Each stage is a module with one job; this one only chains them and times them.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from mechdesign.theory import bounds

from mechdesign.certify.exact import ExactKernel, check_pml, repair, to_grid
from mechdesign.certify.guarantees import check_guarantees, enforce_guarantees, metric_envelope
from mechdesign.lp.solve import Status
from mechdesign.objectives.plan import ClosedForm
from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.models import Spec, load_spec

__all__ = ["design", "DesignResult", "Certificate", "ClosedForm", "SolveReport", "GAP_TOLERANCE"]

GAP_TOLERANCE = 1e-6
"""Relative optimality gap (|objective − dual bound| / max(1, |objective|)) above which a
private kernel is reported as ``suboptimal`` rather than ``optimal``."""


@dataclass(frozen=True)
class Certificate:
    feasible: bool
    """The emitted kernel passed the exact (ε,𝒫)-PML and row-stochastic check."""
    leakage: float
    """sup_{P∈𝒫} max_y ℓ(X→y) of the emitted kernel, nats."""
    exp_epsilon_lower_bound: Fraction
    """The rational E ≤ e^ε the exact check used."""
    worst_ratio: Fraction | None
    """max_y max_x K_x(y) / min_P P·K(:,y), exactly (≤ E when feasible)."""
    dual_bound: float | None
    """Bound on the optimum recomputed from the solver's multipliers (weak duality)."""
    gap: float | None
    """|objective − dual_bound|: how far the emitted kernel can be from optimal."""
    repair_weight: Fraction
    """Weight w of the constant kernel mixed in by the repair (0: none needed)."""
    lp_objective: float | None
    """The objective of the LP solution before rounding and repair."""
    closed_form: ClosedForm | None = None
    rounding_cost: float | None = None
    """Utility lost by rounding to the exact grid and repairing: sense·(objective − lp_objective)
    (> 0 worse than the LP solution; ≤ 1e−9 relative at the default 52-bit grid)."""
    bounds: list = field(default_factory=list)
    """Closed forms of the papers that apply to the emitted kernel (:func:`mechdesign.theory.bounds.applicable_bounds`)."""
    guarantees: list = field(default_factory=list)
    """One :class:`~mechdesign.certify.guarantees.GuaranteeReport` per privacy constraint (the spec's
    ``privacy`` list, or its epsilon + prior_set): leakage, exact feasibility, whether it binds.
    ``feasible`` above requires every one of them."""


@dataclass(frozen=True)
class SolveReport:
    solver: str
    backend: str
    method: str
    seconds: float
    """Time in the LP solver."""
    compile_seconds: float
    certify_seconds: float
    total_seconds: float
    iterations: int
    lps: int
    rows: int
    columns: int
    nonzeros: int
    message: str = ""


@dataclass(frozen=True)
class DesignResult:
    """The outcome of :func:`design`; ``to_json()`` is the CLI's ``--json`` object."""

    status: Status
    objective: float | None
    kernel: np.ndarray | None
    exact_kernel: ExactKernel | None
    epsilon: float
    certificate: Certificate | None
    solve: SolveReport
    spec: Spec = field(repr=False)
    rays: np.ndarray | None = None
    """Sublinear objectives: the extreme rays (max entry 1) used by the optimum, one per output."""

    @property
    def is_ok(self) -> bool:
        """Optimal and certified: exit status 0."""
        return self.status is Status.OPTIMAL and self.certificate is not None and self.certificate.feasible

    def to_json(self) -> dict[str, Any]:
        cert = self.certificate
        return {
            "status": self.status.value,
            "objective": _num(self.objective),
            "objective_kind": self.spec.objective.kind,
            "kernel": None if self.kernel is None else self.kernel.tolist(),
            "kernel_exact": None if self.exact_kernel is None else self.exact_kernel.strings(),
            "labels": self.spec.labels,
            "epsilon": self.epsilon,
            "epsilon_text": self.spec.epsilon.text,
            **({} if self.rays is None else {"rays": self.rays.tolist()}),
            "certificate": None if cert is None else {
                "feasible": cert.feasible,
                "leakage": _num(cert.leakage),
                "exp_epsilon_lower_bound": str(cert.exp_epsilon_lower_bound),
                "worst_ratio": None if cert.worst_ratio is None else str(cert.worst_ratio),
                "dual_bound": _num(cert.dual_bound),
                "gap": _num(cert.gap),
                "repair_weight": float(cert.repair_weight),
                "lp_objective": _num(cert.lp_objective),
                "rounding_cost": _num(cert.rounding_cost),
                "closed_form": None if cert.closed_form is None else {
                    "name": cert.closed_form.name, "value": cert.closed_form.value,
                    "difference": cert.closed_form.difference},
                "bounds": list(cert.bounds),
                "guarantees": [g.to_json() for g in cert.guarantees],
                "binding": [i for i, g in enumerate(cert.guarantees) if g.binding],
            },
            "solve": {
                "solver": self.solve.solver, "backend": self.solve.backend, "method": self.solve.method,
                "seconds": self.solve.seconds, "compile_seconds": self.solve.compile_seconds,
                "certify_seconds": self.solve.certify_seconds, "total_seconds": self.solve.total_seconds,
                "iterations": self.solve.iterations, "lps": self.solve.lps, "rows": self.solve.rows,
                "columns": self.solve.columns, "nonzeros": self.solve.nonzeros, "message": self.solve.message,
            },
        }


def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else None)


# ------------------------------------------------------------ objective values
def objective_value(spec: Spec, K: np.ndarray) -> float:
    """The utility of a kernel, as the objective defines it (for the emitted kernel)."""
    return objective_rules(spec).value(K)


def closed_form(spec: Spec, objective: float) -> ClosedForm | None:
    """The paper's closed form for this problem, when one applies."""
    return objective_rules(spec).closed_form(objective)


# ------------------------------------------------------------------- pipeline
def certify_design(spec: Spec, K: np.ndarray, *, lp_objective: float | None, dual: float | None, sense: int):
    """The certify stage shared by every design path: exact grid, exact check (repair if needed),
    the emitted kernel's own objective, gap to the dual bound, closed forms and bounds.

    Returns (exact kernel, float kernel, objective, certificate, ok); ``ok`` means private and
    the gap within GAP_TOLERANCE·max(1, |objective|). On a coarse grid (solver.denominator_bits
    < 52) the utility lost by rounding is deliberate, so the LP solution's gap is judged instead.
    """
    bound_e = spec.epsilon.exp_lower_bound()
    rules = objective_rules(spec)
    if spec.extra_guarantees:   # metric constraints: lift tiny entries to the envelope (certify/guarantees.py)
        K = metric_envelope(K, spec)
    exact, weight, check = repair(to_grid(K), spec.prior_set, bound_e, bits=spec.solver.denominator_bits)
    exact, side_weight = rules.enforce(exact)   # the objective's own constraints (e.g. a vulnerability cap)
    if side_weight:
        weight = 1 - (1 - weight) * (1 - side_weight)
        check = check_pml(exact, spec.prior_set, bound_e)
    exact, extra_weight = enforce_guarantees(exact, spec, bound_e, spec.solver.denominator_bits)
    if extra_weight:   # the other constraints of privacy (metric, further prior sets), issue 16
        weight = 1 - (1 - weight) * (1 - extra_weight)
        check = check_pml(exact, spec.prior_set, bound_e)
    guarantees = check_guarantees(exact, spec)
    side_failure = rules.side_check(exact)
    kernel = exact.to_float()
    objective = objective_value(spec, kernel)
    gap = None if dual is None else abs(objective - dual)
    cert = Certificate(
        feasible=check.feasible and all(g.feasible for g in guarantees), leakage=check.leakage, exp_epsilon_lower_bound=bound_e,
        worst_ratio=check.worst_ratio if isinstance(check.worst_ratio, Fraction) else None,
        dual_bound=dual, gap=gap, repair_weight=weight, lp_objective=lp_objective,
        closed_form=closed_form(spec, objective),
        bounds=bounds.applicable_bounds(spec, exact),
        rounding_cost=None if lp_objective is None else sense * (objective - lp_objective),
        guarantees=guarantees,
    )
    judged = gap if spec.solver.denominator_bits == 52 or gap is None or lp_objective is None \
        else abs(lp_objective - dual)
    ok = cert.feasible and side_failure is None and judged is not None \
        and judged <= GAP_TOLERANCE * max(1.0, abs(objective))
    return exact, kernel, objective, cert, ok


def design(source: Any) -> DesignResult:
    """Design an optimal (ε,𝒫)-PML mechanism and certify it: spec → program → solve → certify.

    ``source`` is a :class:`Spec`, a dict, a path to a YAML file or YAML text.
    Raises :class:`~mechdesign.spec.errors.SpecError` on a bad spec; solver trouble is
    reported in ``result.status``, never as an empty kernel.
    """
    t0 = time.perf_counter()
    spec = load_spec(source)
    outcome = objective_rules(spec).solve()
    t2 = time.perf_counter()

    status = outcome.status
    kernel = exact = cert = objective = None
    if outcome.kernel is not None:
        exact, kernel, objective, cert, ok = certify_design(
            spec, outcome.kernel, lp_objective=outcome.value, dual=outcome.bound if status is Status.OPTIMAL else None,
            sense=outcome.sense)
        if status is Status.OPTIMAL and not ok:
            status = Status.SUBOPTIMAL
    t3 = time.perf_counter()

    report = SolveReport(
        solver="HiGHS", backend=outcome.backend, method=outcome.method, seconds=outcome.seconds,
        compile_seconds=outcome.compile_seconds, certify_seconds=t3 - t2, total_seconds=t3 - t0,
        iterations=outcome.iterations, lps=outcome.lps, rows=outcome.rows, columns=outcome.columns,
        nonzeros=outcome.nonzeros, message=outcome.message,
    )
    return DesignResult(status=status, objective=objective, kernel=kernel, exact_kernel=exact,
                        epsilon=spec.epsilon.value, certificate=cert, solve=report, spec=spec, rays=outcome.rays)
