"""f-divergences D_f(K∘P0 ‖ K∘P1) between the output laws of two priors (hypothesis testing, Dobrushin paper
Example 3), maximised over (ε,𝒫)-PML kernels: a sublinear utility, so the extreme-ray LP while the rays can be
listed, and past that tangent/secant LPs (:mod:`mechdesign.engines.fdiv_lines`). Closed form: Corollary 1
of the Dobrushin paper bounds the KL divergence for Q_X(c).
"""

from __future__ import annotations


import numpy as np

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.plan import ClosedForm
from mechdesign.objectives.rays import kernel_utility
from mechdesign.privacy.registry import rules
from mechdesign.spec.models import Spec
from mechdesign.theory import bounds

__all__ = ["FDivergence", "corollary1_bound"]


def corollary1_bound(spec: Spec) -> float | None:
    """Dobrushin paper, Corollary 1: D(K∘P0 ‖ K∘P1) ≤ Ξ(ε,c) log((1 − Nc)e^ε + 1) TV(P0, P1),
    for (ε,c)-PML K and P0, P1 ∈ Q_X(c), c > 0. None when it does not apply."""
    obj, ps, n = spec.objective, spec.prior_set, spec.n
    if obj.f != "kl":
        return None
    c = rules(ps, n).equivalent_c()
    if c is None or c == 0 or any(p < c for pr in obj.priors for p in pr):  # Q_X(c), c > 0 (incl. a uniform point)
        return None
    eps, c = spec.epsilon.value, float(c)
    delta = float(sum(abs(a - b) for a, b in zip(*obj.priors)) / 2)
    return bounds.corollary1_kl_bound(eps, c, n, min(delta, 1.0))  # log-space: no overflow at large eps


class FDivergence(ObjectiveRules):
    kind = "f_divergence"
    sense = -1

    def value(self, K: np.ndarray) -> float:
        return kernel_utility(self.spec, K)

    def closed_form(self, value):
        bound = corollary1_bound(self.spec)
        return (
            None
            if bound is None
            else ClosedForm(
                name="Corollary 1 (Dobrushin paper): Xi(eps,c) log((1-Nc)e^eps + 1) TV(P0,P1), an upper bound",
                value=bound,
                difference=value - bound,
            )
        )
