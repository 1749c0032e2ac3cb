"""𝒫 = {P : lower ≤ P ≤ upper, Σ_x P(x) = 1}, by LP duality (docs/explanation/mathematics.md, section 'Linear constraints'):

    min P·k = max μ + l·α − u·β   over α, β ≥ 0 with μ + α_x − β_x ≤ k_x,

so w_j ≤ min P·k_j is enforced by  μ_j + α_xj − β_xj − k_xj ≤ 0  and  w_j − μ_j − l·α_j + u·β_j ≤ 0.
Exactly: start at the lower bounds and pour the remaining mass into the smallest k first (greedy).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.lp.rounding import float_down, float_up

from mechdesign.privacy.base import PriorSetRules, column_rows, dot, dual_multipliers


class BoxRules(PriorSetRules):
    kind = "box"

    @property
    def upper(self) -> list[Fraction]:
        """The upper bounds as written, capped at 1: no prior mass exceeds 1, so the box is the same set, and
        a bound such as 1e400 stays a finite double."""
        return [min(Fraction(v), Fraction(1)) for v in self.model.upper]

    def lp_rows(self, b, k_idx, k_coef, w, tag, k_range):
        mu, alpha, beta, _ = dual_multipliers(b, self.n, k_idx, k_coef, tag, k_range)
        # the box widened outwards to floats (lower rounded down, upper up): it contains the true box, so
        # min over it is ≤ the true min and the rows stay safe; rounded to nearest instead, a degenerate box
        # (lower = upper, e.g. masses of 1e−9) can have Σ lower > 1 or Σ upper < 1 in floats, an empty
        # box whose dual is unbounded: the PML rows went slack and the repair needed w ≈ 0.7
        lo = np.array([float_down(Fraction(v)) for v in self.model.lower])[:, None]
        up = np.array([float_up(Fraction(v)) for v in self.upper])[:, None]
        column_rows(b, w, k_idx.shape[1], [(mu[None, :], -1.0), (alpha, -lo), (beta, up)])
        return {}

    def min_expectation(self, k):
        lower, upper = self.model.lower, self.upper
        prior = list(lower)
        left = 1 - sum(prior)
        for i in sorted(range(self.n), key=lambda i: k[i]):
            take = min(left, upper[i] - lower[i])
            prior[i] += take
            left -= take
            if left == 0:
                break
        return dot(prior, k), prior

    def polytope_rows(self):
        rows = []
        for x in range(self.n):
            lo, hi = float(self.model.lower[x]), float(self.upper[x])
            e = [0.0] * self.n
            e[x] = 1.0
            rows.append([-lo] + e)
            rows.append([hi] + [-v for v in e])
        return rows

    def contains_uniform(self):
        u = 1 / self.n
        return all(lo <= u <= hi for lo, hi in zip(self.model.lower, self.upper))

    def pair_mass_shifts(self):
        """κ_ab = min(upper_a − lower_a, upper_b − lower_b, 1 − Σ lower, Σ upper − 1) (witness: engines/dobrushin_shift.py)."""
        lower, upper = list(self.model.lower), list(self.upper)
        common = min(1 - sum(lower, Fraction(0)), sum(upper, Fraction(0)) - 1)
        return [max(Fraction(0), min(hi - lo, common)) for lo, hi in zip(lower, upper)], {}

    def heaviest_masses(self):
        return np.array([float(v) for v in self.upper])

    def is_permutation_invariant(self):
        return len(set(self.model.lower)) == 1 and len(set(self.upper)) == 1
