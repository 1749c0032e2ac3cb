"""``design(spec)``: the whole pipeline, spec → route → engines → certify → result.

Each stage is a module with one job; this one only chains them and times them: the route of the spec
(:func:`mechdesign.engines.routing.plan`), its engines run in order (:func:`mechdesign.engines.routing.run_route`),
the certify stage, then the fallbacks (the exact re-solve, the constant kernel); every engine run is recorded in
``result.solve.attempts``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from mechdesign.theory import bounds

from mechdesign.certify.exact import GRID, GRID_BITS, ExactKernel, check_pml
from mechdesign.certify.stage import certify_kernel
from mechdesign.certify.guarantees import check_guarantees, enforce_guarantees, metric_envelope, private_under_spec
from mechdesign.certify.saturation import ratio_cap
from mechdesign.lp.solve import Status
from mechdesign.objectives.plan import ClosedForm
from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.models import Spec, load_spec

__all__ = ["design", "DesignResult", "DesignInterrupted", "Certificate", "ClosedForm", "SolveReport", "GAP_TOLERANCE"]

GAP_TOLERANCE = 1e-6
"""Relative optimality gap (|objective − dual bound| / max(|objective|, |dual bound|)) above which a
private kernel is reported as ``suboptimal`` rather than ``optimal``. Relative to the values themselves,
not to max(1, ·): an optimum of 5e−10 (the Dobrushin coefficient at ε = 1e−9) must be met to 1e−6 of
itself."""
GAP_ABSOLUTE_FLOOR = 1e-15
"""Gaps below this count as closed whatever the values (double rounding of unit-scale sums; an
objective of 0 against a bound of 1.5e−16 from the ray LP's stated rounding, N·u·Σ|λ|). Dobrushin at
ε = 1e−9 (optimum ≈ 5e−10) is judged to 2e−6 of itself by this rule; the exact fallback in fact
reaches 3e−7 of Ξ(ε,c) (tests/design/test_robust.py checks 1e−6 against Ξ directly)."""


EXACT_FALLBACK_REPAIR = Fraction(1, 10**6)
"""A repair weight above this also triggers the exact fallback: the LP's point broke the PML rows by
HiGHS's tolerance, which for ε = 1e−9 or masses of 1e−9 is the whole privacy budget (a degenerate box
of 1e−9 masses needs w ≈ 0.7)."""


GRID_FLOOR_STEPS = 4
"""Grid steps per entry in the grid floor (:func:`grid_floor`)."""


def grid_floor(entry_sensitivity: float | None) -> float:
    """The grid floor: GRID_FLOOR_STEPS · 2^−52 · S, S the utility's entry sensitivity (|U(K) − U(K')| ≤
    S · max_{x,y} |K_xy − K'_xy|, :meth:`~mechdesign.objectives.base.ObjectiveRules.entry_sensitivity`); 0 when
    S is not known.

    Every emitted kernel lives on the grid 2^−52 (its entries are exact doubles), and an optimum the reals only
    approach as entries go to 0 (an expected loss at ε = 3e9: the off-diagonal entries e^−ε, far below a step)
    cannot be met there: an entry that must be positive is at least one step, and the rounding to the grid and
    the exact repair's margin put one or two steps on such entries (measured: 1 or 2 at N = 3–9, for LDP and
    ε·|x − x'| metric privacy at ε ≥ 50). A gap below what moving every entry by GRID_FLOOR_STEPS = 4 steps can
    change is within what the grid can represent, so it counts as closed. On a coarser grid asked for
    (``denominator_bits`` < 52) the utility lost by its rounding still counts: the floor is that of 2^−52."""
    return 0.0 if entry_sensitivity is None else GRID_FLOOR_STEPS * 2.0**-GRID_BITS * float(entry_sensitivity)


def gap_closed(gap: float | None, objective: float, bound: float | None, floor: float = 0.0) -> bool:
    """The optimality rule: gap ≤ GAP_TOLERANCE·max(|objective|, |bound|), or gap ≤ GAP_ABSOLUTE_FLOOR, or
    gap ≤ ``floor``, the grid floor of the utility (:func:`grid_floor`: a gap within what the grid 2^−52 can
    represent is closed)."""
    if gap is None or bound is None or not math.isfinite(gap):
        return False
    return gap <= max(GAP_TOLERANCE * max(abs(objective), abs(bound)), GAP_ABSOLUTE_FLOOR, floor)


@dataclass(frozen=True)
class Certificate:
    feasible: bool
    """Every constraint the spec states holds exactly on the emitted kernel: :attr:`private` and every verdict of
    :attr:`side_constraints`."""
    private: bool
    """The emitted kernel passed the exact (ε,𝒫)-PML and row-stochastic check, and every constraint of
    ``privacy`` (:attr:`guarantees`)."""
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
    """Weight w mixed in by the repairs, all together (0: none needed): of the constant kernel for privacy and a
    vulnerability cap, of the least-loss private kernel for a loss cap (each side constraint's verdict names its
    own repair)."""
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
    grid_floor: float | None = None
    """When the gap was closed only by the grid floor (:func:`grid_floor`): that floor; None otherwise."""
    side_constraints: list = field(default_factory=list)
    """One :class:`~mechdesign.certify.guarantees.SideConstraintReport` per other constraint the spec states (a
    loss cap ``max_loss``, a vulnerability cap ``max_vulnerability``): its exact value on the emitted kernel, the
    limit, whether it holds. ``feasible`` above requires every one of them."""

    def __repr__(self) -> str:
        from mechdesign.display import certificate_repr

        return certificate_repr(self)

    def _repr_html_(self) -> str:
        from mechdesign.display import certificate_html

        return certificate_html(self)


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
    engine: str = ""
    """The engine that produced the kernel (:mod:`mechdesign.engines.routing`)."""
    attempts: tuple = ()
    """Every engine run, in order: :class:`~mechdesign.engines.base.Attempt` (engine, status, seconds, why the route
    went on or stopped there); the last one produced the kernel."""


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
    epsilon_requirement: Any = None
    """When the spec gave ``epsilon: {protect: ...}``: the
    :class:`~mechdesign.theory.epsilon_requirement.EpsilonResolution` (requirement, theorem, the ε enforced)."""
    interrupted_after: float | None = None
    """Status ``interrupted``: seconds from the start of the design to the Ctrl-C (None otherwise)."""
    mechanism: Any = None
    """A structured mechanism (:mod:`mechdesign.mechanisms`, e.g. subset selection) when the optimum has no explicit
    kernel within the output limits (``kernel`` is then None): the frequency-estimation optimum at a uniform prior
    for large N. The certificate is its family's exact closed-form check; ``mechanism.save(path)`` writes the file
    ``mechdesign privatize --mechanism-file`` reads."""

    @property
    def is_ok(self) -> bool:
        """Optimal and certified: exit status 0."""
        return self.status is Status.OPTIMAL and self.certificate is not None and self.certificate.feasible

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--json`` object (a dict); infinite values are null, listed in ``"infinite"``."""
        from mechdesign.spec.json_values import json_safe

        cert = self.certificate
        return json_safe(
            {
                "status": self.status.value,
                "objective": _num(self.objective),
                "objective_kind": self.spec.objective.kind,
                "kernel": None if self.kernel is None else self.kernel.tolist(),
                "kernel_exact": None if self.exact_kernel is None else self.exact_kernel.strings(),
                "labels": self.spec.labels,
                "epsilon": self.epsilon,
                "epsilon_text": self.spec.epsilon.text,
                **({} if self.rays is None else {"rays": self.rays.tolist()}),
                **(
                    {}
                    if self.epsilon_requirement is None
                    else {"epsilon_requirement": self.epsilon_requirement.to_json()}
                ),
                "certificate": None
                if cert is None
                else {
                    "feasible": cert.feasible,
                    "private": cert.private,
                    "leakage": _num(cert.leakage),
                    "exp_epsilon_lower_bound": str(cert.exp_epsilon_lower_bound),
                    "worst_ratio": None if cert.worst_ratio is None else str(cert.worst_ratio),
                    "dual_bound": _num(cert.dual_bound),
                    "gap": _num(cert.gap),
                    "repair_weight": float(cert.repair_weight),
                    "lp_objective": _num(cert.lp_objective),
                    "rounding_cost": _num(cert.rounding_cost),
                    "closed_form": None
                    if cert.closed_form is None
                    else {
                        "name": cert.closed_form.name,
                        "value": cert.closed_form.value,
                        "difference": cert.closed_form.difference,
                    },
                    "bounds": list(cert.bounds),
                    "guarantees": [g.to_json() for g in cert.guarantees],
                    "binding": [i for i, g in enumerate(cert.guarantees) if g.binding],
                    "side_constraints": [c.to_json() for c in cert.side_constraints],
                    "grid_floor": cert.grid_floor,
                },
                "solve": {
                    "solver": self.solve.solver,
                    "backend": self.solve.backend,
                    "method": self.solve.method,
                    "seconds": self.solve.seconds,
                    "compile_seconds": self.solve.compile_seconds,
                    "certify_seconds": self.solve.certify_seconds,
                    "total_seconds": self.solve.total_seconds,
                    "iterations": self.solve.iterations,
                    "lps": self.solve.lps,
                    "rows": self.solve.rows,
                    "columns": self.solve.columns,
                    "nonzeros": self.solve.nonzeros,
                    "message": self.solve.message,
                    "engine": self.solve.engine,
                    "attempts": [a.to_json() for a in self.solve.attempts],
                },
                **({} if self.interrupted_after is None else {"interrupted_after": self.interrupted_after}),
                **({} if self.mechanism is None else {"mechanism": self.mechanism.to_json()}),
                **self._estimation_json(),
            }
        )

    def _estimation_json(self) -> dict:
        """The objective's textbook comparison (frequency_estimation: the designed U beside k-RR's and the best
        subset selection's at the same ε)."""
        comparison = objective_rules(self.spec).textbook_comparison()
        if comparison is None:
            return {}
        return {"estimation": {"U": self.objective, **comparison}}

    def dumps(self, indent: int | None = 2) -> str:
        """:meth:`to_json` as a JSON string (what ``mechdesign solve --json`` prints; each kernel row on one line)."""
        import json

        from mechdesign.spec.json_values import dumps_indented

        return json.dumps(self.to_json()) if indent is None else dumps_indented(self.to_json(), indent)

    def __repr__(self) -> str:
        from mechdesign.display import result_repr

        return result_repr(self)

    def _repr_html_(self) -> str:
        from mechdesign.display import result_html

        return result_html(self)


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


def _emitted_value(rules, exact, kernel: np.ndarray, check) -> float:
    """The objective of the emitted kernel: exactly and correctly rounded from the exact kernel where the objective
    needs no pass for it (``rules.exact_value``: the Hamming loss from the diagonal, the uniform Bayes vulnerability
    from the exact column maxima) and the exact check proved every row sums to 1 (``check.stochastic``), else the
    objective's float value of ``kernel`` (the same kernel as floats)."""
    value = rules.exact_value(exact) if check.stochastic else None
    return rules.value(kernel) if value is None else value


def _other_constraints_enforced(staged, spec: Spec, rules, bound_e: Fraction):
    """(exact, weight, check, float kernel, objective, side weight) of the certify stage's kernel once the spec's
    other constraints hold exactly: further privacy constraints (metric, further prior sets,
    certify/guarantees.py), then the objective's own stated constraints (a loss cap, a vulnerability cap,
    objectives/vulnerability.py), each restored by a mix that keeps every privacy constraint and checked again."""
    exact, weight, check, kernel, objective = (
        staged.kernel,
        staged.weight,
        staged.check,
        staged.floats,
        staged.objective,
    )
    exact, extra_weight = enforce_guarantees(exact, spec, bound_e, spec.solver.denominator_bits)
    if extra_weight:  # the other constraints of privacy (metric, further prior sets)
        weight = 1 - (1 - weight) * (1 - extra_weight)
        check = check_pml(exact, spec.prior_set, bound_e)
    # the objective's own stated constraints, restored exactly by mixes that keep every privacy constraint: each
    # candidate must pass them all exactly
    exact, side_weight = rules.enforce(exact, lambda k: private_under_spec(k, spec, bound_e))
    if side_weight:
        weight = 1 - (1 - weight) * (1 - side_weight)
        check = check_pml(exact, spec.prior_set, bound_e)
    if side_weight or extra_weight:
        kernel = exact.to_float()
        objective = _emitted_value(rules, exact, kernel, check)
    return exact, weight, check, kernel, objective, side_weight


def _true_dual_bound(rules, dual: float | None, objective: float, sense: int) -> float | None:
    """The program's bound, tightened by the bound over all kernels (no privacy), or None when it lies on the
    wrong side of what the emitted private kernel achieves (then it is false: no certified optimum)."""
    if dual is not None:
        # the bound over all kernels (no privacy) is a bound too; keep the tighter (an optimum of 0 loss is then
        # certified exactly instead of by a dual bound carrying its rounding slack)
        try:
            free = rules.unconstrained_bound()
        except Exception:  # noqa: BLE001 - a utility that cannot take the identity kernel: no such bound
            free = None
        if free is not None and math.isfinite(free):
            dual = max(dual, free) if sense > 0 else min(dual, free)
    return _bound_or_none(dual, objective, sense)


def _bound_or_none(dual: float | None, objective: float, sense: int) -> float | None:
    """``dual``, or None when it lies on the wrong side of what the emitted mechanism achieves (then it is false)."""
    if dual is not None and sense * (dual - objective) > 1e-12 * max(1.0, abs(objective)):
        return None
    return dual


# ------------------------------------------------------------------- pipeline
def certify_design(
    spec: Spec,
    K: np.ndarray,
    *,
    lp_objective: float | None,
    dual: float | None,
    sense: int,
    overwrite_kernel: bool = False,
):
    """The certify stage shared by every design path: exact grid, exact check (repair if needed),
    the emitted kernel's own objective, gap to the dual bound, closed forms and bounds.

    Returns (exact kernel, float kernel, objective, certificate, ok); ``ok`` means private and
    the emitted kernel's gap closed (:func:`gap_closed`), on every grid (on a coarse grid the utility
    lost by rounding counts). When the repair snapped the kernel to a coarser grid (a few ulps of
    utility, which matter for optima of 1e−9), the repair without snapping is tried too and the
    better kernel kept (:func:`mechdesign.certify.stage.certify_kernel`).

    ``overwrite_kernel``: ``K`` is the caller's to give away (the solver's fresh array): the 2^−52 rounding may
    write its floats over it (:func:`mechdesign.certify.stage.certify_kernel`), and the returned float
    kernel may be ``K`` itself. ``K`` then holds, row by row, its rounding (which rounds to the same exact kernel)
    or, when the repair mixed in one pass, the whole mixed kernel (Ctrl-C is held back while it is written).
    """
    # E ≤ e^ε from the text as written; capped where no kernel on the 2^-52 grid can tell e^ε from ∞
    bound_e = spec.epsilon.exp_lower_bound(cap=ratio_cap(spec.prior_set, GRID))
    rules = objective_rules(spec)  # one objective for the whole stage: its values share what it builds once
    bits = spec.solver.denominator_bits
    if spec.extra_guarantees:  # metric constraints: lift tiny entries to the envelope (certify/guarantees.py)
        K = metric_envelope(K, spec)
    # to the grid, exact check, repair, check again (certify/stage.py)
    staged = certify_kernel(
        K,
        spec.prior_set,
        bound_e,
        bits,
        value=lambda exact, floats, check: _emitted_value(rules, exact, floats, check),
        sense=sense,
        overwrite=overwrite_kernel,
    )
    exact, weight, check, kernel, objective, side_weight = _other_constraints_enforced(staged, spec, rules, bound_e)
    # on the grid 2^−52 the bound E of `check` is the one check_guarantees would derive again: its check is reused
    guarantees = check_guarantees(exact, spec, primary=check if exact.denominator == GRID else None)
    # one exact verdict per other stated constraint, on the kernel emitted
    sides = rules.side_constraints(exact)
    if side_weight:
        how = f"mixed with {rules.side_repair_kernel}, weight {float(side_weight):.3g}"
        sides = [replace(c, repair=how) for c in sides]
    dual = _true_dual_bound(rules, dual, objective, sense)
    gap = None if dual is None else abs(objective - dual)
    private = check.feasible and all(g.feasible for g in guarantees)
    cert = Certificate(
        feasible=private and all(c.feasible for c in sides),
        private=private,
        leakage=check.leakage,
        exp_epsilon_lower_bound=bound_e,
        worst_ratio=check.worst_ratio if isinstance(check.worst_ratio, Fraction) else None,
        dual_bound=dual,
        gap=gap,
        repair_weight=weight,
        lp_objective=lp_objective,
        closed_form=rules.closed_form(objective),
        bounds=bounds.applicable_bounds(spec, exact),
        rounding_cost=None if lp_objective is None else sense * (objective - lp_objective),
        guarantees=guarantees,
        side_constraints=sides,
    )
    # The gap rule is about the emitted kernel, on every grid: on a coarse grid (denominator_bits < 52)
    # the utility lost by rounding counts, so such a kernel is `suboptimal` unless rounding cost is within
    # the tolerance, so `optimal (certified)` always means a closed gap.
    ok = cert.feasible and gap_closed(gap, objective, dual)
    if cert.feasible and not ok and gap is not None:  # at the grid's floor (an optimum of 0 approached off-grid)
        floor = grid_floor(rules.entry_sensitivity())
        if gap_closed(gap, objective, dual, floor):
            ok, cert = True, replace(cert, grid_floor=floor)
    return exact, kernel, objective, cert, ok


def _certified(spec: Spec, outcome):
    """(status, float kernel, exact kernel, certificate, objective) of a program's outcome: the kernel
    padded to the M columns the spec asks for (zero columns keep the certificate),
    certified; ``optimal`` only when the gap is closed; never ``infeasible`` or ``unbounded`` with a kernel."""
    from mechdesign.objectives.fallback import pad_columns

    status = outcome.status
    if outcome.kernel is None:
        return status, None, None, None, None
    K = outcome.kernel
    if spec.output_size != "auto":
        K = pad_columns(K, spec.m)
    exact, kernel, objective, cert, ok = certify_design(
        spec,
        K,
        lp_objective=outcome.value,
        # a program's bound is a bound whatever its status (PlanOutcome.bound): at a time limit it is the
        # certified gap the user gets with the best kernel found
        dual=outcome.bound
        if status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT, Status.SUBOPTIMAL)
        else None,
        sense=outcome.sense,
        # the program's own array (PlanOutcome.kernel), read by nobody after this but the incumbent
        # (lp/incumbent.py) on a Ctrl-C during the certification: it then reads rows of K or of their rounding (the
        # same exact kernel) or the whole mixed kernel, never a half-mixed one (certify/stage.py)
        overwrite_kernel=True,
    )
    if status is Status.OPTIMAL and not ok:
        status = Status.SUBOPTIMAL
    elif status in (Status.INFEASIBLE, Status.UNBOUNDED):
        status = Status.SUBOPTIMAL if cert.feasible else status
    return status, kernel, exact, cert, objective


def _better(new, old, sense: int) -> bool:
    """Whether a re-solve's certified result beats the first: optimal beats anything, then a feasible
    kernel with a better objective."""
    n_status, _, _, n_cert, n_obj = new
    o_status, _, _, o_cert, o_obj = old
    if n_cert is None or not n_cert.feasible:
        return False
    if o_cert is None or not o_cert.feasible:
        return True
    if (n_status is Status.OPTIMAL) != (o_status is Status.OPTIMAL):
        return n_status is Status.OPTIMAL
    return sense * n_obj < sense * o_obj


def _constant_fallback(problem, status: Status):
    """The last resort: the best constant kernel, zero leakage, certified like any
    other, with the bound over all kernels (engine ``constant-kernel``). Status
    ``suboptimal`` (a certified kernel and a true gap), or the program's own status when it was
    interrupted or ran out of time; never ``infeasible``."""
    from mechdesign.engines.routing import ENGINES

    spec = problem.spec
    fallback = ENGINES["constant-kernel"].run(problem, None)
    K, bound = fallback.kernel, fallback.bound
    exact, kernel, objective, cert, ok = certify_design(spec, K, lp_objective=None, dual=bound, sense=fallback.sense)
    keep = status in (Status.INTERRUPTED, Status.TIME_LIMIT, Status.ITERATION_LIMIT)
    new_status = status if keep else Status.OPTIMAL if ok else Status.SUBOPTIMAL
    return new_status, kernel, exact, cert, objective


class DesignInterrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) during :func:`design`, carrying what the design had found.

    ``result`` is a :class:`DesignResult` with status ``interrupted``: the best feasible kernel found
    before the interrupt, certified by the same certify stage as any design (exact privacy check,
    rounding and repair, gap to the best valid bound found so far), or no kernel (``result.kernel``
    is None) when none had been found or when the certification itself was interrupted.
    ``str(exc)`` is the one line the command line prints. A subclass of KeyboardInterrupt, so code
    that stops on Ctrl-C (notebooks, loops, sweeps) still stops.
    """

    def __init__(self, result: DesignResult, certification_interrupted: bool = False):
        super().__init__(result, certification_interrupted)
        self.result = result
        self.certification_interrupted = certification_interrupted

    def __str__(self) -> str:
        r = self.result
        head = f"interrupted after {r.interrupted_after or 0.0:.1f} s: "
        if r.kernel is None or r.certificate is None:
            if self.certification_interrupted:
                return head + "a kernel was found, but its exact certification was interrupted too; none reported"
            return head + "no kernel found yet"
        cert = r.certificate
        if not cert.feasible:
            return head + "the best kernel so far FAILED the exact privacy check"
        gap = "no bound yet" if cert.gap is None else f"gap {cert.gap:.3g}"
        return head + f"best certified kernel so far, objective {r.objective:.10g}, {gap}"


def _interrupted_result(
    spec: Spec, incumbent, t0: float, stopped: float, epsilon_requirement=None
) -> tuple[DesignResult, bool]:
    """The design's answer after Ctrl-C: the incumbent's best kernel through :func:`certify_design`
    against its best bound, status ``interrupted``. A second Ctrl-C during this certification gives up
    at once (no kernel). Returns the result and whether the certification was interrupted."""
    t2 = time.perf_counter()
    kernel = exact = cert = objective = best = None
    given_up = False
    try:
        best = incumbent.best_kernel()  # the objective of each pending candidate, then the best one certified
        if best is not None:
            bound = incumbent.settled_bound()
            exact, kernel, objective, cert, _ = certify_design(
                spec, best.kernel, lp_objective=best.value, dual=bound, sense=incumbent.sense
            )
    except KeyboardInterrupt:
        kernel = exact = cert = objective = None
        given_up = True
    t3 = time.perf_counter()
    found = "no kernel found yet" if best is None else f"best kernel from {best.source or 'the program'}"
    report = SolveReport(
        solver="HiGHS",
        backend=spec.solver.backend,
        method="interrupted",
        seconds=stopped,
        compile_seconds=0.0,
        certify_seconds=t3 - t2,
        total_seconds=t3 - t0,
        iterations=0,
        lps=0,
        rows=0,
        columns=0,
        nonzeros=0,
        message=f"interrupted after {stopped:.1f} s; {found}" + ("; certification interrupted" if given_up else ""),
    )
    result = DesignResult(
        status=Status.INTERRUPTED,
        objective=objective,
        kernel=kernel,
        exact_kernel=exact,
        epsilon=spec.epsilon.value,
        certificate=cert,
        solve=report,
        spec=spec,
        interrupted_after=stopped,
        epsilon_requirement=epsilon_requirement,
    )
    return result, given_up


def design(source: Any) -> DesignResult:
    """Design an optimal (ε,𝒫)-PML mechanism and certify it: spec → program → solve → certify.

    ``source`` is a :class:`Spec`, a dict, a path to a YAML file or YAML text.
    A spec whose ``epsilon`` is a requirement ``{protect: ...}`` is first resolved to the largest ε the
    disclosure paper guarantees it for (:mod:`mechdesign.theory.epsilon_requirement`; ``result.epsilon_requirement``).
    Raises :class:`~mechdesign.spec.errors.SpecError` on a bad spec; solver trouble is
    reported in ``result.status``, never as an empty kernel.

    **Ctrl-C** (KeyboardInterrupt): HiGHS stops at once
    (:mod:`mechdesign.lp.interrupt`), and the best feasible kernel the program had found
    (:mod:`mechdesign.lp.incumbent`: each round of output or column generation, a MIP's incumbent,
    the greedy fixed-output kernel, ...) is certified like any design, against the best valid bound
    found so far. ``design`` then *raises* :class:`DesignInterrupted`, a KeyboardInterrupt whose
    ``result`` is that :class:`DesignResult` (status ``interrupted``; ``result.kernel`` None when no
    kernel had been found). It re-raises rather than returns because Ctrl-C means "stop": a loop
    ``for eps in ...: design(...)``, a notebook cell or a sweep must stop too, not carry on with a
    half-finished point mistaken for a finished one; the work done is not lost, it is ``exc.result``.
    A second Ctrl-C during that certification gives up at once (no kernel in the result).
    """
    from mechdesign.lp.incumbent import Incumbent, collecting

    from mechdesign.theory.epsilon_requirement import resolve_spec

    t0 = time.perf_counter()
    spec = load_spec(source)
    accuracy = None
    if spec.epsilon_requirement is not None and spec.epsilon_requirement.accuracy is not None:
        # epsilon: {accuracy: ...} → ε_hi of a certified bracket (engines/accuracy_epsilon.py)
        from mechdesign.engines.accuracy_epsilon import resolve_accuracy

        original = spec
        spec, accuracy = resolve_accuracy(spec)
        epsilon_requirement = accuracy
    else:
        spec, epsilon_requirement = resolve_spec(spec)  # epsilon: {protect: ...} → an exact number
    rules = objective_rules(spec)
    incumbent = Incumbent(rules.sense, rules.value, spec.m)
    try:
        with collecting(incumbent):
            result = _design(spec, t0, incumbent, epsilon_requirement)
            if accuracy is not None:
                result = _meet_accuracy(original, result, accuracy, t0, incumbent)
            return result
    except DesignInterrupted:
        raise
    except KeyboardInterrupt as exc:
        stopped = time.perf_counter() - t0
        result, given_up = _interrupted_result(spec, incumbent, t0, stopped, epsilon_requirement)
        raise DesignInterrupted(result, given_up) from exc


def _meet_accuracy(original: Spec, result: DesignResult, accuracy, t0: float, incumbent) -> DesignResult:
    """The certified kernel at ε_hi is checked on its own accuracy; when its rounding misses the target, ε_hi is
    raised by the bracket's width and the design redone (at most 4 times)."""
    from mechdesign.engines.accuracy_epsilon import accuracy_target, bump, meets_target
    from mechdesign.objectives.frequency_estimation import estimation_priors

    acc = original.epsilon_requirement.accuracy
    kind, target = accuracy_target(acc)
    spec = result.spec
    for _ in range(4):
        if result.kernel is not None and meets_target(kind, target, result.kernel, estimation_priors(spec)):
            return result
        spec = bump(original, accuracy, acc.width)
        result = _design(spec, t0, incumbent, accuracy)
    accuracy.note = (accuracy.note + "; " if accuracy.note else "") + "the certified kernel at eps_hi misses the target"
    return result


def _structured_result(spec: Spec, outcome, attempts, t0: float, t2: float, epsilon_requirement) -> DesignResult:
    """The result of an engine that returned a structured mechanism instead of a kernel: its exact certificate
    (the family's closed-form worst ratio against a rational E ≤ e^ε, :mod:`mechdesign.mechanisms.two_level`), its
    value (the engine's, from the mechanism's closed-form accuracy) against the engine's bound; ``optimal`` when
    private and the gap is closed (:func:`gap_closed`)."""
    mech = outcome.mechanism
    check = mech.certificate()
    value = outcome.value
    dual = _bound_or_none(outcome.bound, value, outcome.sense)
    gap = None if dual is None else abs(value - dual)
    cert = Certificate(
        feasible=check.feasible,
        private=check.feasible,
        leakage=check.leakage,
        exp_epsilon_lower_bound=check.bound,
        worst_ratio=check.worst_ratio,
        dual_bound=dual,
        gap=gap,
        repair_weight=Fraction(0),
        lp_objective=value,
    )
    ok = check.feasible and gap_closed(gap, value, dual)
    status = Status.OPTIMAL if ok and outcome.status is Status.OPTIMAL else Status.SUBOPTIMAL
    t3 = time.perf_counter()
    report = SolveReport(
        solver="closed form",
        backend=outcome.backend,
        method=outcome.method,
        seconds=outcome.seconds,
        compile_seconds=0.0,
        certify_seconds=t3 - t2,
        total_seconds=t3 - t0,
        iterations=0,
        lps=0,
        rows=0,
        columns=0,
        nonzeros=0,
        message=outcome.message,
        engine=outcome.engine,
        attempts=tuple(attempts),
    )
    return DesignResult(
        status=status,
        objective=value,
        kernel=None,
        exact_kernel=None,
        epsilon=spec.epsilon.value,
        certificate=cert,
        solve=report,
        spec=spec,
        epsilon_requirement=epsilon_requirement,
        mechanism=mech,
    )


def _design(spec: Spec, t0: float, incumbent, epsilon_requirement=None) -> DesignResult:
    from mechdesign.engines.base import Attempt, Budget, Problem
    from mechdesign.engines.routing import ENGINES, run_route
    from mechdesign.lp.progress import report

    problem = Problem.of(spec)
    report(phase=f"solving {spec.objective.kind}, N = {spec.n}, M = {spec.m}")
    outcome, attempts = run_route(problem, Budget(spec.solver.time_limit))
    # held for Ctrl-C during the certification and the exact re-solve below (lp/incumbent.py)
    incumbent.offer(outcome.kernel, outcome.bound if outcome.status is Status.OPTIMAL else None, source=outcome.method)
    report(phase="certifying (exact arithmetic)", round=None, gap=None, detail="")
    t2 = time.perf_counter()
    if outcome.mechanism is not None:
        return _structured_result(spec, outcome, attempts, t0, t2, epsilon_requirement)
    status, kernel, exact, cert, objective = _certified(spec, outcome)
    needs_exact = status is not Status.OPTIMAL or (cert is not None and cert.repair_weight > EXACT_FALLBACK_REPAIR)
    resolve = ENGINES["exact-simplex"]
    forced = spec.solver.engine is not None  # solver.engine: that engine's kernel, no re-solve by another
    if needs_exact and not forced and status is not Status.INTERRUPTED and resolve.applies(problem) is None:
        # small problem not certified optimal in floating point: the exact rational simplex
        began = time.perf_counter()
        try:
            second = resolve.run(problem, Budget(spec.solver.time_limit))
        except Exception as exc:  # noqa: BLE001 - the fallback must never make things worse
            second, why = None, f"failed ({type(exc).__name__}); the first kernel kept"
        if second is not None:
            retried = _certified(spec, second)
            if _better(retried, (status, kernel, exact, cert, objective), outcome.sense):
                outcome = second
                outcome.engine = resolve.name
                status, kernel, exact, cert, objective = retried
                why = "its certified result beats the first: kept"
            else:
                why = "its certified result is not better: the first kernel kept"
        inner = problem.carried.get(resolve.name, [])
        if inner:  # the engines the re-solve's route ran, with the exact method
            why += " (ran " + ", ".join(f"{a.engine}: {a.status.value}" for a in inner) + ")"
        status_second = Status.SOLVER_ERROR if second is None else second.status
        attempts.append(Attempt(resolve.name, status_second, time.perf_counter() - began, why))
    if kernel is None or cert is None or not cert.feasible:
        began = time.perf_counter()
        status, kernel, exact, cert, objective = _constant_fallback(problem, status)
        outcome.engine = "constant-kernel"
        attempts.append(
            Attempt("constant-kernel", status, time.perf_counter() - began, "no kernel passed the exact privacy check")
        )
    t3 = time.perf_counter()

    # the engines that handed over spent solver time too (their wall time, which includes no certification)
    handed_over = sum(a.seconds for a in attempts[:-1] if a.engine not in ("exact-simplex", "constant-kernel"))
    report = SolveReport(
        solver="HiGHS",
        backend=outcome.backend,
        method=outcome.method,
        seconds=outcome.seconds + handed_over,
        compile_seconds=outcome.compile_seconds,
        certify_seconds=t3 - t2,
        total_seconds=t3 - t0,
        iterations=outcome.iterations,
        lps=outcome.lps,
        rows=outcome.rows,
        columns=outcome.columns,
        nonzeros=outcome.nonzeros,
        message=outcome.message,
        engine=outcome.engine,
        attempts=tuple(attempts),
    )
    return DesignResult(
        status=status,
        objective=objective,
        kernel=kernel,
        exact_kernel=exact,
        epsilon=spec.epsilon.value,
        certificate=cert,
        solve=report,
        spec=spec,
        rays=outcome.rays,
        epsilon_requirement=epsilon_requirement,
    )
