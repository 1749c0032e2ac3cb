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

from mechdesign.theory import measures
from mechdesign.certify.exact import ExactKernel, repair, to_grid
from mechdesign.objectives.compile import CompiledProblem, compile_problem, loss_matrix, objective_prior
from mechdesign.lp.program import dual_bound
from mechdesign.privacy.priors import min_expectation
from mechdesign.lp.solve import LPSolution, Status, solve_lp
from mechdesign.spec.models import SUBLINEAR_KINDS, Spec, load_spec
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.objectives.sublinear import corollary1_bound, kernel_utility, solve_sublinear

__all__ = ["design", "DesignResult", "Certificate", "ClosedForm", "SolveReport", "GAP_TOLERANCE"]

GAP_TOLERANCE = 1e-6
"""Relative optimality gap (|objective − dual bound| / max(1, |objective|)) above which a
private kernel is reported as ``suboptimal`` rather than ``optimal``."""


@dataclass(frozen=True)
class ClosedForm:
    name: str
    value: float
    difference: float
    """objective − value."""


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
    kind = spec.objective.kind
    if kind == "dobrushin":
        return measures.dobrushin(K)
    if kind in SUBLINEAR_KINDS:
        return kernel_utility(spec, K)
    L = loss_matrix(spec)
    prior = objective_prior(spec)
    row_loss = (K * L).sum(axis=1)
    if prior is not None:
        return float(prior @ row_loss)
    low, _ = min_expectation(spec.prior_set, spec.n, [-Fraction(float(v)) for v in row_loss])
    return float(-low)


def closed_form(spec: Spec, objective: float) -> ClosedForm | None:
    """The paper's closed form for this problem, when one applies."""
    if spec.objective.kind in SUBLINEAR_KINDS:
        bound = corollary1_bound(spec)
        return None if bound is None else ClosedForm(
            name="Corollary 1 (Dobrushin paper): Xi(eps,c) log((1-Nc)e^eps + 1) TV(P0,P1), an upper bound",
            value=bound, difference=objective - bound)
    if spec.objective.kind != "dobrushin":
        return None
    ps, n, eps = spec.prior_set, spec.n, spec.epsilon.value
    c = None
    if ps.kind == "simplex" or (ps.kind == "min_mass" and ps.c == 0):
        name, value = "eq. (4), LDP (Kairouz et al.): (e^eps - 1)/(e^eps + 1)", bounds.ldp_dobrushin(eps)
    elif ps.kind == "min_mass" or (ps.kind == "point" and len(set(ps.prior)) == 1):
        c = ps.c if ps.kind == "min_mass" else Fraction(1, n)
        value = bounds.xi(eps, float(c), n)
        if c * n == 1:
            name = "Remark 1 (c = 1/N): min{e^eps - 1, 1}"
        elif eps >= math.log(2 / (n * float(c))):
            name = "Theorem 2 (eps >= log(2/(Nc))): 1"
        else:
            name = "Theorem 1: Xi(eps, c) = (e^eps - 1)/(e^eps (1 - Nc) + 1)"
    else:
        return None
    return ClosedForm(name=name, value=value, difference=objective - value)


# ------------------------------------------------------------------- pipeline
def certify_design(spec: Spec, K: np.ndarray, *, lp_objective: float | None, dual: float | None, sense: int):
    """The certify stage shared by every design path: exact grid, exact check (repair if needed),
    the emitted kernel's own objective, gap to the dual bound, closed forms and bounds.

    Returns (exact kernel, float kernel, objective, certificate, ok); ``ok`` means private and
    the gap within GAP_TOLERANCE·max(1, |objective|). On a coarse grid (solver.denominator_bits
    < 52) the utility lost by rounding is deliberate, so the LP solution's gap is judged instead.
    """
    bound_e = spec.epsilon.exp_lower_bound()
    exact, weight, check = repair(to_grid(K), spec.prior_set, bound_e, bits=spec.solver.denominator_bits)
    kernel = exact.to_float()
    objective = objective_value(spec, kernel)
    gap = None if dual is None else abs(objective - dual)
    cert = Certificate(
        feasible=check.feasible, leakage=check.leakage, exp_epsilon_lower_bound=bound_e,
        worst_ratio=check.worst_ratio if isinstance(check.worst_ratio, Fraction) else None,
        dual_bound=dual, gap=gap, repair_weight=weight, lp_objective=lp_objective,
        closed_form=closed_form(spec, objective),
        bounds=bounds.applicable_bounds(spec, exact),
        rounding_cost=None if lp_objective is None else sense * (objective - lp_objective),
    )
    judged = gap if spec.solver.denominator_bits == 52 or gap is None or lp_objective is None \
        else abs(lp_objective - dual)
    ok = check.feasible and judged is not None and judged <= GAP_TOLERANCE * max(1.0, abs(objective))
    return exact, kernel, objective, cert, ok


def _pick(compiled: CompiledProblem, solutions: list[LPSolution]) -> int:
    best, best_val = 0, None
    sense = compiled.lps[0].sense
    for i, s in enumerate(solutions):
        if s.objective is None:
            continue
        if best_val is None or sense * s.objective < sense * best_val:
            best, best_val = i, s.objective
    return best


def _emit_kernel(spec: Spec, compiled: CompiledProblem, x: np.ndarray) -> np.ndarray:
    K = x[compiled.kernel]
    if K.shape[1] < spec.m:  # dobrushin with M > 2: the binary extremal kernel, other outputs unused
        K = np.hstack([K, np.zeros((K.shape[0], spec.m - K.shape[1]))])
    return K


def solve_kernel_lps(spec: Spec) -> PlanOutcome:
    """The program for objectives that are linear in K (expected loss, Dobrushin pairs, Bayes
    vulnerability with M ≥ N): compile the kernel LP(s), solve each, keep the best; the bound is
    recomputed from the solver's row multipliers by weak duality (:func:`mechdesign.lp.program.dual_bound`)."""
    t0 = time.perf_counter()
    compiled = compile_problem(spec)
    compile_seconds = time.perf_counter() - t0
    solutions = []
    budget = spec.solver.time_limit
    t1 = time.perf_counter()
    for lp in compiled.lps:
        remaining = None if budget is None else max(budget - (time.perf_counter() - t1), 1e-3)
        solutions.append(solve_lp(lp, spec.solver, time_limit=remaining))
        if solutions[-1].status in (Status.TIME_LIMIT, Status.SOLVER_ERROR, Status.INTERRUPTED):
            break
    statuses = [s.status for s in solutions]
    status = Status.OPTIMAL if len(solutions) == len(compiled.lps) and all(s.is_ok for s in statuses) else \
        next(s for s in statuses if not s.is_ok) if any(not s.is_ok for s in statuses) else Status.UNKNOWN
    i = _pick(compiled, solutions)
    chosen, lp = solutions[i], compiled.lps[i]
    dual = None
    if status is Status.OPTIMAL and all(s.row_dual is not None for s in solutions):
        duals = [dual_bound(l, s.row_dual) for l, s in zip(compiled.lps, solutions)]
        dual = max(duals) if lp.sense < 0 else duals[0]
    return PlanOutcome(
        status=status, kernel=None if chosen.x is None else _emit_kernel(spec, compiled, chosen.x),
        value=chosen.objective, bound=dual, sense=lp.sense, method=chosen.method, backend=chosen.backend,
        seconds=sum(s.seconds for s in solutions), iterations=sum(s.iterations for s in solutions),
        lps=len(solutions), rows=lp.num_rows, columns=lp.num_cols, nonzeros=int(lp.A.nnz),
        message=chosen.message, compile_seconds=compile_seconds)


def design(source: Any) -> DesignResult:
    """Design an optimal (ε,𝒫)-PML mechanism and certify it: spec → program → solve → certify.

    ``source`` is a :class:`Spec`, a dict, a path to a YAML file or YAML text.
    Raises :class:`~mechdesign.spec.errors.SpecError` on a bad spec; solver trouble is
    reported in ``result.status``, never as an empty kernel.
    """
    t0 = time.perf_counter()
    spec = load_spec(source)
    bayes_as_lp = spec.objective.kind == "bayes_vulnerability" and spec.m >= spec.n  # compile.py: exact LP
    if spec.objective.kind in SUBLINEAR_KINDS and not bayes_as_lp:  # extreme-ray LP / column generation
        outcome = solve_sublinear(spec)
    else:
        outcome = solve_kernel_lps(spec)
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
