"""Exact check and repair of every constraint of a spec's ``privacy`` list.

The primary (ε,𝒫)-PML constraint is checked by :func:`mechdesign.certify.exact.check_pml` as before; here
each constraint of ``privacy`` gets its own exact check — a prior set by the same check_pml against its own
rational E ≤ e^ε, a metric by :func:`mechdesign.privacy.metric.check_metric` over every pair — and a
report: its leakage (the smallest ε for which it would hold), whether it holds exactly, and whether it
binds (leakage within 1e-6 relative of its ε).

Repair: every constraint is convex in K and a constant kernel satisfies it with leakage 0, so mixing
K' = (1−w)K + w·1qᵀ (q the mean row) never increases any constraint's ratio; the smallest weight that
restores a violated constraint is estimated per violation (for a ratio constraint a ≤ L·b with
v = a − L·b > 0: w ≥ v / (v + q_y (L − 1))), raised and re-gridded until every constraint, the primary one
included, passes exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.certify.saturation import ratio_cap
from mechdesign.certify.exact import ExactKernel, PMLCheck, check_pml, to_grid
from mechdesign.lp.rounding import float_or_inf
from mechdesign.privacy.metric import check_metric, metric_distances
from mechdesign.spec.models import DiscreteMetric, MetricGuarantee, PriorSetGuarantee
from mechdesign.spec.models import Spec

__all__ = [
    "GuaranteeReport",
    "SideConstraintReport",
    "check_guarantees",
    "enforce_guarantees",
    "private_under_spec",
    "certified_private",
    "metric_envelope",
    "BINDING_TOLERANCE",
]

BINDING_TOLERANCE = 1e-6
"""A constraint binds when its leakage is ≥ ε − BINDING_TOLERANCE·max(1, ε)."""


@dataclass(frozen=True)
class GuaranteeReport:
    constraint: str
    """What is guaranteed, e.g. '(eps, min_mass c=1/50)-PML' or 'eps*d-privacy, d = absolute'."""
    epsilon: float
    epsilon_text: str
    leakage: float
    """The smallest ε for which this constraint holds for the emitted kernel (nats; floats, for reading)."""
    feasible: bool
    """Checked exactly against a rational lower bound of e^ε (or of e^{ε d} for every pair)."""
    binding: bool

    def to_json(self) -> dict:
        leak = self.leakage if math.isfinite(self.leakage) else "inf"
        return {
            "constraint": self.constraint,
            "epsilon": self.epsilon,
            "epsilon_text": self.epsilon_text,
            "leakage": leak,
            "feasible": self.feasible,
            "binding": self.binding,
        }


@dataclass(frozen=True)
class SideConstraintReport:
    """The verdict on one constraint a spec states besides privacy (a loss cap ``objective.max_loss``, a
    vulnerability cap ``objective.max_vulnerability``), checked exactly on the emitted kernel."""

    field: str
    """Where the spec states it, e.g. ``objective.max_loss``."""
    constraint: str
    """What is required, e.g. 'expected loss <= max_loss'."""
    value: Fraction
    """The constrained quantity of the emitted kernel, exactly."""
    limit: Fraction
    """The limit as written (exactly)."""
    feasible: bool
    """value ≤ limit, exactly."""
    repair: str = ""
    """How the kernel was repaired for it ('' when the solver's kernel met it): the kernel mixed in and its weight."""

    @property
    def binding(self) -> bool:
        """Within BINDING_TOLERANCE·max(1, |limit|) of the limit (exactly: a limit of 1e400 is a valid cap)."""
        return self.feasible and self.limit - self.value <= Fraction(BINDING_TOLERANCE) * max(1, abs(self.limit))

    def to_json(self) -> dict:
        return {
            "field": self.field,
            "constraint": self.constraint,
            "value": float_or_inf(self.value),
            "limit": float_or_inf(self.limit),
            "value_exact": str(self.value),
            "limit_exact": str(self.limit),
            "feasible": self.feasible,
            "binding": self.binding,
            "repair": self.repair,
        }


def _describe(g) -> str:
    if isinstance(g, MetricGuarantee):
        return f"eps*d-privacy, d = {g.metric.kind}"
    fields = {k: v for k, v in g.prior_set.model_dump(mode="json").items() if k != "kind"}
    extra = "" if not fields else " " + ", ".join(f"{k}={v}" for k, v in fields.items() if not isinstance(v, list))
    return f"(eps, {g.prior_set.kind}{extra})-PML"


def _check_one(kernel: ExactKernel, g) -> tuple[bool, float]:
    if isinstance(g, MetricGuarantee):
        c = check_metric(kernel.numerators, g)
        return c.feasible, c.leakage
    # saturated like the primary check (certify/saturation.py): no finite ratio of this kernel exceeds the cap
    c = check_pml(kernel, g.prior_set, g.epsilon.exp_lower_bound(cap=ratio_cap(g.prior_set, kernel.denominator)))
    return c.feasible, c.leakage


def check_guarantees(kernel: ExactKernel, spec: Spec, primary: PMLCheck | None = None) -> list[GuaranteeReport]:
    """One report per constraint of ``privacy`` (in its order), or one for the epsilon + prior_set form.

    ``primary``: for the epsilon + prior_set form, the check this function would make, when the caller has made
    it (``check_pml(kernel, spec.prior_set, E)`` with E = ``spec.epsilon.exp_lower_bound(cap=ratio_cap(
    spec.prior_set, kernel.denominator))``, the certify stage's own check on the grid 2^−52): it is reported
    as it is, without a second exact check and a second bound of e^ε."""
    entries = (
        spec.privacy
        if spec.privacy is not None
        else [PriorSetGuarantee(epsilon=spec.epsilon, prior_set=spec.prior_set)]
    )
    reports = []
    for g in entries:
        if spec.privacy is None and primary is not None:
            feasible, leak = primary.feasible, primary.leakage
        else:
            feasible, leak = _check_one(kernel, g)
        eps = g.epsilon.value
        reports.append(
            GuaranteeReport(
                constraint=_describe(g),
                epsilon=eps,
                epsilon_text=g.epsilon.text,
                leakage=leak,
                feasible=feasible and kernel.is_stochastic(),
                binding=leak >= eps - BINDING_TOLERANCE * max(1.0, eps),
            )
        )
    return reports


def _float_weight(K: np.ndarray, q: np.ndarray, g, n: int) -> float:
    """The mixing weight (floats) that restores constraint g, from its violations (module docstring)."""
    if isinstance(g, MetricGuarantee):
        E = np.exp(np.minimum(metric_distances(g.metric, n).times(g.epsilon.value), 700.0))  # N × N
        w = 0.0
        for x in range(n):
            v = K[x][None, :] - E[x][:, None] * K  # v[z, y] = K_x(y) − L K_z(y)
            den = v + q[None, :] * (E[x][:, None] - 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(v > 0, np.where(den > 0, v / den, 1.0), 0.0)
            w = max(w, float(r.max(initial=0.0)))
        return w
    return 0.0  # a prior set: found by the widening loop below


def enforce_guarantees(kernel: ExactKernel, spec: Spec, bound_e: Fraction, bits: int) -> tuple[ExactKernel, Fraction]:
    """Mix the kernel with its mean-row constant kernel by the smallest weight (estimated, then widened)
    after which every extra constraint and the primary (ε,𝒫)-PML constraint hold exactly."""
    extras = spec.extra_guarantees
    if not extras or all(_check_one(kernel, g)[0] for g in extras):
        return kernel, Fraction(0)
    n, m = kernel.shape
    K = kernel.to_float()
    q = K.mean(axis=0)
    need = max(_float_weight(K, q, g, n) for g in extras)
    extra = 2.0**-50
    for _ in range(60):
        w = min(1.0, need * (1 + extra) + extra)
        if w >= 1.0:
            break
        cand = to_grid((1 - w) * K + w * q[None, :], bits)
        if check_pml(cand, spec.prior_set, bound_e).feasible and all(_check_one(cand, g)[0] for g in extras):
            return cand, Fraction(w)
        extra *= 4
    row = to_grid(q[None, :], bits)
    constant = ExactKernel(np.array([list(row.numerators[0])] * n, dtype=object), row.denominator)
    return constant, Fraction(1)


def private_under_spec(kernel: ExactKernel, spec: Spec, bound_e: Fraction) -> bool:
    """Whether ``kernel`` passes every privacy constraint of the spec exactly: the primary (ε,𝒫)-PML against
    ``bound_e`` ≤ e^ε and each further constraint of ``privacy`` (the checks of :func:`check_guarantees`)."""
    return (
        kernel.is_stochastic()
        and check_pml(kernel, spec.prior_set, bound_e).feasible
        and all(_check_one(kernel, g)[0] for g in spec.extra_guarantees)
    )


def certified_private(K: np.ndarray, spec: Spec, bound_e: Fraction, bits: int) -> ExactKernel:
    """The float kernel ``K`` on the grid 2^−bits, repaired (mixing with the constant kernel) until every privacy
    constraint of the spec holds exactly: the path of the certify stage, for a kernel a side constraint's repair
    mixes in (:mod:`mechdesign.objectives.vulnerability`)."""
    from mechdesign.certify.exact import repair

    if spec.extra_guarantees:
        K = metric_envelope(K, spec)
    exact, _, _ = repair(to_grid(K, bits), spec.prior_set, bound_e, bits=bits)
    exact, _ = enforce_guarantees(exact, spec, bound_e, bits)
    return exact


def metric_envelope(K: np.ndarray, spec: Spec) -> np.ndarray:
    """Before the exact check: lift every column of the solver's kernel to its ε·d-private envelope,
    c_z = max_x e^{−ε d(x,z)} K_x(y) ≥ K_z(y), then divide each row by its sum.

    The solver's tolerance is absolute (~1e−9), so entries near e^{−ε·max d} can break the ratio constraints
    by any factor; the envelope satisfies c_z' ≥ e^{−ε d(z,z')} c_z for every z, z' (triangle inequality:
    e^{−ε d(x,z')} ≥ e^{−ε d(x,z)} e^{−ε d(z,z')}), and the row normalisation moves ratios only by the
    relative change of the row sums (~1e−9), which the exact repair then removes with a tiny weight.
    Floats only: the exact check and repair downstream decide. Applied for every metric constraint in turn
    (not for discrete, whose LDP rows have no tiny entries)."""
    n = K.shape[0]
    out = np.clip(np.asarray(K, float), 0.0, None)
    for g in spec.extra_guarantees:
        if not isinstance(g, MetricGuarantee) or isinstance(g.metric, DiscreteMetric):
            continue
        E = np.exp(-metric_distances(g.metric, n).times(g.epsilon.value))  # E[x, z] = e^{−ε d(x,z)}
        env = np.empty_like(out)
        for z in range(n):
            env[z] = (E[:, z][:, None] * out).max(axis=0)
        out = env / env.sum(axis=1, keepdims=True)
    return out
