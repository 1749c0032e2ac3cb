"""The Dobrushin coefficient η_TV(K) = max_{x≠x'} TV(K_x, K_x') (Dobrushin paper, eq. 2), maximised by one LP per
pair of symbols over binary kernels (Lemma 3), or one LP when 𝒫 is permutation invariant
(:func:`compile_dobrushin`). Closed forms: Theorem 1 (Ξ(ε,c)), Theorem 2 (η = 1), Remark 1 (c = 1/N) and the
LDP limit (Kairouz et al., eq. 4)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.lp.rounding import log_of_rational
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.compile import CompiledProblem, add_pml_kernel_with_layout
from mechdesign.objectives.plan import ClosedForm
from mechdesign.privacy.priors import is_permutation_invariant, rules
from mechdesign.spec.models import Spec
from mechdesign.theory import bounds, measures

__all__ = ["Dobrushin", "compile_dobrushin"]


def compile_dobrushin(spec: Spec) -> CompiledProblem:
    """Maximise the Dobrushin coefficient η_TV(K) = max_{x≠x'} TV(K_x, K_x') (eq. 2).

    Lemma 3 (Dobrushin paper): binary outputs suffice, and TV between two rows of
    a binary kernel [p, 1−p] is |p_a − p_b|. So

        η_TV(ε,𝒫) = max over pairs {a, b} of  max p_a − p_b
                     s.t. [p, 1−p] is (ε,𝒫)-PML      (one LP per pair).

    Swapping the two outputs maps feasible kernels to feasible kernels and
    p_a − p_b to p_b − p_a, so unordered pairs suffice: N(N−1)/2 LPs. When 𝒫 is
    invariant under permutations of X every pair has the same value and one LP
    (pair {0, 1}) is solved.
    """
    n = spec.n
    b = LPBuilder()
    K, layout = add_pml_kernel_with_layout(b, spec, 2)
    if is_permutation_invariant(spec.prior_set, n) and not spec.extra_guarantees:
        pairs = [(0, 1)]
        note = "prior set invariant under permutations: one LP (pair 0, 1)"
    else:
        pairs = [(a, c) for a in range(n) for c in range(a + 1, n)]
        note = f"{len(pairs)} pair LPs"
    lps = [b.build((np.array([K[a, 0], K[c, 0]]), np.array([1.0, -1.0])), sense=-1) for a, c in pairs]
    return CompiledProblem(lps=lps, kernel=K, labels=[f"{a},{c}" for a, c in pairs], note=note, layout=layout)


class Dobrushin(ObjectiveRules):
    kind = "dobrushin"
    sense = -1

    def compile(self) -> CompiledProblem:
        return compile_dobrushin(self.spec)

    def kernel_lp_reason(self):
        return None

    def plain_kernel_lp_reason(self):
        return None  # each pair LP max p_a − p_b is on K alone

    def value(self, K):
        return measures.dobrushin(K)

    def entry_sensitivity(self) -> float:
        """M: TV(K_x, K_x') = ½ Σ_y |K_x(y) − K_x'(y)| moves by at most ½ · M · 2 steps."""
        return float(self.spec.m)

    def closed_form(self, value):
        spec = self.spec
        n, eps = spec.n, spec.epsilon.value
        c = rules(spec.prior_set, n).equivalent_c()
        if c is None:
            return None
        if c == 0:
            name, bound = "eq. (4), LDP (Kairouz et al.): (e^eps - 1)/(e^eps + 1)", bounds.ldp_dobrushin(eps)
        else:
            bound = bounds.xi(eps, float(c), n)
            if c * n == 1:
                name = "Remark 1 (c = 1/N): min{e^eps - 1, 1}"
            elif eps >= log_of_rational(Fraction(2, n) / c):  # log(2/(Nc)), c = 1e-400 too
                name = "Theorem 2 (eps >= log(2/(Nc))): 1"
            else:
                name = "Theorem 1: Xi(eps, c) = (e^eps - 1)/(e^eps (1 - Nc) + 1)"
        return ClosedForm(name=name, value=bound, difference=value - bound)
