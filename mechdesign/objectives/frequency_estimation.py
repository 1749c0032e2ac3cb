"""Frequency estimation: minimise U(K) = tr J(K,P)⁻¹ − ‖P‖², n times the MLE's asymptotic mean squared error.

U is the constrained Cramér–Rao bound that the MLE of P attains (:mod:`mechdesign.theory.estimation`); over the
(ε,𝒫)-PML kernels it is the A-optimal design program over the extreme rays of the private column cone. Engines
(:mod:`mechdesign.engines.frequency_estimation`): ``frequency-symmetric-classes`` (uniform P over simplex or
min_mass: the class reduction of :mod:`mechdesign.objectives.frequency_symmetric`, any N) and
``frequency-a-optimal-rays`` (every extreme ray listed, :mod:`mechdesign.engines.a_optimal`, with its rigorous
Lagrangian lower bound), then past N = 12 for one non-uniform prior over simplex or min_mass
``frequency-column-generation`` (:mod:`mechdesign.engines.frequency_column_generation`, certified pricing by
:mod:`mechdesign.objectives.pricing_frequency`). The emitted kernel is certified by the common stage and its U recomputed from it.
"""

from __future__ import annotations

import numpy as np

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.spec.models import Spec

__all__ = ["FrequencyEstimation", "estimation_priors", "EXACT_MAX_N", "symmetric_case", "textbook_comparison"]

EXACT_MAX_N = 12
"""Largest N designed over all listed rays for simplex, min_mass and point (cdd prior sets: N ≤ 8)."""


def estimation_priors(spec: Spec) -> list[np.ndarray]:
    """The distributions whose worst U is minimised: ``priors``, else ``prior`` (uniform by default)."""
    obj = spec.objective
    if obj.priors is not None:
        return [np.array([float(v) for v in p]) for p in obj.priors]
    if isinstance(obj.prior, str):
        return [np.full(spec.n, 1.0 / spec.n)]
    return [np.array([float(v) for v in obj.prior])]


def symmetric_case(spec: Spec) -> bool:
    """Uniform P (one prior), a prior set with ray families (simplex, min_mass), no other privacy constraint: the
    class reduction of :mod:`mechdesign.objectives.frequency_symmetric` solves it."""
    from mechdesign.privacy.registry import rules

    obj = spec.objective
    return (
        obj.priors is None
        and isinstance(obj.prior, str)
        and not spec.extra_guarantees
        and rules(spec.prior_set, spec.n).ray_family_c() is not None
    )


class FrequencyEstimation(ObjectiveRules):
    kind = "frequency_estimation"
    sense = 1

    def value(self, K: np.ndarray) -> float:
        from mechdesign.theory.estimation import mle_error

        return max(mle_error(K, P) for P in estimation_priors(self.spec))

    def textbook_comparison(self) -> dict | None:
        """U of k-RR and of the best subset selection at the same ε (:func:`textbook_comparison`)."""
        return textbook_comparison(self.spec)

    def unconstrained_bound(self) -> float | None:
        """U of the identity kernel, 1 − ‖P‖² (the worst over the priors): every kernel is the identity followed by
        post-processing, which can only lower the Fisher information in the Loewner order (data processing for
        Fisher information, Zamir 1998), so U(K) ≥ U(I) for every kernel, private or not."""
        return max(1.0 - float(P @ P) for P in estimation_priors(self.spec))


def textbook_comparison(spec: Spec) -> dict:
    """U of k-RR and of subset selection at its best size at the spec's ε (both ε-LDP, so private for every prior
    set), worst over the objective's priors: the designed U is never above them when the prior set is the simplex
    (they are feasible for the program) and lower still under Q_X(c). Subset selection in closed form at the
    uniform prior, by listing its outputs otherwise (N ≤ 16), else None."""
    from mechdesign.theory.estimation import best_subset_selection_error, krr_error

    n, eps = spec.n, spec.epsilon.value
    priors = estimation_priors(spec)
    uniform = spec.objective.priors is None and isinstance(spec.objective.prior, str)
    out: dict = {"k_rr": max(krr_error(n, eps, P) for P in priors)}
    if uniform:
        u, k = best_subset_selection_error(n, eps)
        out["subset_selection"] = {"U": u, "k": k}
    elif n <= 16:
        best = None
        for k in range(1, n):
            from mechdesign.theory.estimation import subset_selection_error

            u = max(subset_selection_error(n, eps, k, P) for P in priors)
            if best is None or u < best[0]:
                best = (u, k)
        out["subset_selection"] = {"U": best[0], "k": best[1]}
    else:
        out["subset_selection"] = None
    return out
