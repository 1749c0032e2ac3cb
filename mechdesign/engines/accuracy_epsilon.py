"""ε from the accuracy asked: the smallest ε whose optimal frequency-estimation design meets a target.

With U*(ε) the optimum of the ``frequency_estimation`` program (n times the MLE's asymptotic mean squared
error, :mod:`mechdesign.objectives.frequency_estimation`), the target ``rmse: r`` for n reports asks
U*(ε) ≤ T = n r²; ``max_sd: s`` asks max_x C_xx ≤ T = n s² for the MLE's covariance C/n.

U*(ε) is non-increasing in ε (the cone of private columns grows with ε), so the answer is a bisection on ε,
each step reusing the design engine: the program returns an upper value V(ε) (a feasible design) and a
rigorous lower bound L(ε) ≤ U*(ε). The bracket [ε_lo, ε_hi] is certified:

* at ε_hi, V(ε_hi) ≤ T: the design meets the target (and the kernel emitted there is certified by the common
  stage and checked again on its own U by :func:`mechdesign.design.design`);
* at ε_lo, L(ε_lo) > T: no (ε_lo, 𝒫)-PML mechanism meets it, hence none at any ε ≤ ε_lo (monotonicity).

For ``max_sd`` the lower side uses max_x C_xx ≥ tr C/N = U/N ≥ L/N (at a uniform prior over simplex or min_mass
the optimal design is balanced, all C_xx equal, and this is tight). Steps are decimals with 12 significant
digits, so the ε written in the spec is exactly the ε evaluated. The bisection stops when ε_hi − ε_lo ≤ width,
or when neither side can be decided at the midpoint (V > T ≥ L: the design's own gap) — the bracket is then
wider, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.errors import SpecError
from mechdesign.spec.models import Spec, spec_from_dict

__all__ = ["AccuracyResolution", "resolve_accuracy", "accuracy_target", "meets_target", "FIELD"]

FIELD = "epsilon.accuracy"
EPSILON_CAP = 64.0
"""Largest ε tried: past it the target is refused (it is then close to the accuracy without privacy)."""


@dataclass
class AccuracyResolution:
    """The ε an accuracy requirement resolved to (the design then runs at ``epsilon_text`` = ε_hi)."""

    requirement: dict
    epsilon_text: str
    """ε_hi, an exact decimal: the design there meets the target."""
    epsilon_low: float
    """ε_lo: no mechanism meets the target at any ε ≤ ε_lo (0 when nothing better was proved)."""
    target: float
    """T = n r² (bound on U) or n s² (bound on max_x C_xx)."""
    achieved: float | None = None
    """The value of the design at ε_hi (U, or max_x C_xx), before certification."""
    steps: int = 0
    note: str = ""
    theorem: str = "bisection on the certified frequency-estimation optimum (non-increasing in eps)"
    threshold: float | None = None
    history: list = field(default_factory=list)

    @property
    def epsilon(self) -> float:
        return float(self.epsilon_text)

    @property
    def explanation(self) -> str:
        what = "sqrt(U/n)" if "rmse" in self.requirement else "max_x sd(p_hat_x)"
        return (
            f"at eps_hi = {self.epsilon_text} the optimal design has {what} <= the target; at eps_lo = "
            f"{self.epsilon_low:.12g} the rigorous lower bound proves no mechanism can (bracket width "
            f"{self.epsilon - self.epsilon_low:.3g} nats)" + (f"; {self.note}" if self.note else "")
        )

    def to_json(self) -> dict:
        return {
            "requirement": dict(self.requirement),
            "epsilon": self.epsilon,
            "epsilon_text": self.epsilon_text,
            "epsilon_low": self.epsilon_low,
            "target": self.target,
            "achieved": self.achieved,
            "steps": self.steps,
            "theorem": self.theorem,
            "explanation": self.explanation,
        }


def accuracy_target(acc) -> tuple[str, float]:
    """('rmse' or 'max_sd', T)."""
    if acc.rmse is not None:
        return "rmse", acc.n * acc.rmse**2
    return "max_sd", acc.n * acc.max_sd**2


def _measure(kind: str, K, priors) -> float:
    from mechdesign.theory.estimation import mle_covariance, mle_error

    if K is None:
        return math.inf
    if kind == "rmse":
        return max(mle_error(K, P) for P in priors)
    covariances = [mle_covariance(K, P) for P in priors]
    if any(C is None for C in covariances):  # P not identifiable
        return math.inf
    return max(float(np.max(np.diag(C))) for C in covariances)


def meets_target(kind: str, target: float, K, priors) -> bool:
    return _measure(kind, K, priors) <= target


def _at(spec: Spec, eps_text: str) -> Spec:
    data = spec.to_dict()
    data["epsilon"] = eps_text
    return spec_from_dict(data)


def _decimal(x: float) -> str:
    """x as a decimal with 12 significant digits (the ε evaluated is exactly that decimal)."""
    if x <= 0:
        return "0"
    text = format(round(Decimal(repr(x)), 12 - 1 - math.floor(math.log10(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _evaluate(spec: Spec, kind: str, eps_text: str, symmetric_only: bool):
    """(lower bound, upper value) of the target quantity at ε."""
    from mechdesign.engines.frequency_estimation import solve_frequency
    from mechdesign.objectives.frequency_estimation import estimation_priors, symmetric_case

    s = _at(spec, eps_text)
    n = s.n
    if symmetric_case(s):
        from mechdesign.objectives.frequency_symmetric import symmetric_optimum
        from mechdesign.privacy.ray_families import families

        opt = symmetric_optimum(families(s), n)
        # balanced optimum at the uniform prior: every C_xx = U/N
        scale = 1.0 if kind == "rmse" else 1.0 / n
        return opt.bound * scale, opt.value * scale
    outcome = solve_frequency(s)
    lower = -math.inf if outcome.bound is None else outcome.bound
    if kind == "max_sd":
        lower /= n
    return lower, _measure(kind, outcome.kernel, estimation_priors(s))


def resolve_accuracy(spec: Spec) -> tuple[Spec, AccuracyResolution]:
    """The spec at ε_hi and the certified bracket (module docstring); :class:`SpecError` naming the field when
    the objective is not frequency_estimation or no ε ≤ 64 meets the target."""
    from mechdesign.objectives.frequency_estimation import estimation_priors

    acc = spec.epsilon_requirement.accuracy
    from mechdesign.objectives.frequency_estimation import FrequencyEstimation

    if not isinstance(objective_rules(spec), FrequencyEstimation):
        raise SpecError(
            [(FIELD, f"needs objective kind frequency_estimation (the design it sizes), found {spec.objective.kind}")]
        )
    if spec.privacy is not None:
        raise SpecError([(FIELD, "is supported with epsilon + prior_set, not with a privacy list")])
    kind, target = accuracy_target(acc)
    written = {"n": acc.n, kind: acc.rmse if kind == "rmse" else acc.max_sd}
    priors = estimation_priors(_at(spec, "1"))
    free = max(1.0 - float(P @ P) for P in priors)  # U of the identity: no kernel, private or not, does better
    if kind == "rmse" and free > target:
        raise SpecError(
            [
                (
                    f"{FIELD}.rmse",
                    f"must be >= sqrt((1 - ||P||^2)/n) = {math.sqrt(free / acc.n):.6g}: not even the data "
                    "without privacy estimate P that well from n reports",
                )
            ]
        )
    lo, hi = 0.0, 1.0
    history = []
    steps = 0
    while True:
        steps += 1
        low_val, up_val = _evaluate(spec, kind, _decimal(hi), False)
        history.append((hi, low_val, up_val))
        if up_val <= target:
            break
        if low_val > target:
            lo = hi
        if hi >= EPSILON_CAP:
            raise SpecError(
                [(f"{FIELD}.{kind}", f"is not met by the optimal design at any eps <= {EPSILON_CAP:g} nats")]
            )
        hi = min(2 * hi, EPSILON_CAP)
    note = ""
    hi_text = _decimal(hi)
    while float(hi_text) - lo > acc.width:
        mid_text = _decimal((lo + float(hi_text)) / 2)
        if mid_text in (hi_text, _decimal(lo)):
            break
        steps += 1
        low_val, up_val = _evaluate(spec, kind, mid_text, False)
        history.append((float(mid_text), low_val, up_val))
        if up_val <= target:
            hi_text = mid_text
        elif low_val > target:
            lo = float(mid_text)
        else:
            note = (
                f"the design's gap at eps = {mid_text} leaves the target undecided there "
                f"(bound {low_val:.10g} <= target {target:.10g} < value {up_val:.10g})"
            )
            break
    achieved = next((u for e, _, u in reversed(history) if _decimal(e) == hi_text), None)
    resolution = AccuracyResolution(
        requirement=written,
        epsilon_text=hi_text,
        epsilon_low=lo,
        target=target,
        achieved=achieved,
        steps=steps,
        note=note,
        history=history,
    )
    return _at(spec, hi_text), resolution


def bump(spec: Spec, resolution: AccuracyResolution, width: float) -> Spec:
    """ε_hi raised by ``width`` (when the certified kernel at ε_hi misses the target by its rounding)."""
    resolution.epsilon_text = _decimal(float(resolution.epsilon_text) + width)
    return _at(spec, resolution.epsilon_text)
