"""𝒫 = {P in the simplex : ‖P − center‖₁ ≤ r}, by LP duality (docs/explanation/mathematics.md, section 'Linear constraints'): with s ≥ |P − c|,

    min P·k = max μ + c·(α − β) − rρ   over α, β, ρ ≥ 0 with μ + α_x − β_x ≤ k_x (P_x ≥ 0), α_x + β_x ≤ ρ.

Exactly: move up to r/2 of mass from the largest-k symbols to the smallest-k symbol (each unit moved
from x to x* changes P·k by k_x* − k_x ≤ 0 and costs 2 units of ℓ1 distance, so largest k first).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from mechdesign.lp.rounding import float_up

from mechdesign.privacy.base import PriorSetRules, column_rows, dot, dual_multipliers


class L1BallRules(PriorSetRules):
    kind = "l1_ball"

    @property
    def radius(self) -> Fraction:
        """The radius as written, capped at 2: no two distributions are farther apart in ℓ1, so the ball is
        the same set, and a radius such as 1e400 stays a finite double."""
        return min(Fraction(self.model.radius), Fraction(2))

    def lp_rows(self, b, k_idx, k_coef, w, tag, k_range):
        n, J = self.n, k_idx.shape[1]
        mu, alpha, beta, span = dual_multipliers(b, n, k_idx, k_coef, tag, k_range)
        center = np.array([float(v) for v in self.model.center])[:, None]
        # a ball around the float centre with the radius rounded up by the centre's rounding contains the
        # true ball: the LP's min is ≤ the true min, so the rows stay safe
        drift = sum((abs(Fraction(v) - Fraction(float(v))) for v in self.model.center), Fraction(0))
        radius = float_up(self.radius + drift)
        rho = b.variables(f"rho_{tag}", (J,), lower=0.0, upper=4 * span)
        b.rows(
            np.stack([alpha, beta, np.broadcast_to(rho, (n, J))], -1).reshape(n * J, 3),
            np.array([1.0, 1.0, -1.0]),
            -np.inf,
            0.0,
        )
        column_rows(b, w, J, [(mu[None, :], -1.0), (alpha, -center), (beta, center), (rho[None, :], radius)])
        return {}

    def min_expectation(self, k):
        n = self.n
        prior = list(self.model.center)
        j = min(range(n), key=lambda i: k[i])
        budget = self.radius / 2
        for i in sorted(range(n), key=lambda i: k[i], reverse=True):
            if budget <= 0 or k[i] <= k[j]:
                break
            move = min(budget, prior[i])
            prior[i] -= move
            prior[j] += move
            budget -= move
        return dot(prior, k), prior

    def polytope_rows(self):
        """Σ_x s_x (P_x − c_x) ≤ r for every sign vector s (2^N rows)."""
        center = np.array([float(v) for v in self.model.center])
        r = float(self.radius)
        rows = []
        for s in itertools.product((-1.0, 1.0), repeat=self.n):
            s = np.array(s)
            rows.append([r + float(s @ center)] + list(-s))
        return rows

    def pair_mass_shifts(self):
        """With m_x = min(c_x, r/2), μ = min(m_a, m_b): κ_ab = r/2 + μ when 1 − c_a − c_b ≥ r/2 − μ, else
        m_a + m_b (witnesses: engines/dobrushin_shift.py)."""
        center, half = list(self.model.center), self.radius / 2
        m = [min(c, half) for c in center]
        cf = np.array([float(c) for c in center])
        mf = np.array([float(v) for v in m])
        # the condition fails only for the heaviest symbols: screen in floats with a margin far above their
        # rounding, then decide every candidate exactly
        slack = 1.0 - cf[:, None] - cf[None, :] - float(half) + np.minimum(mf[:, None], mf[None, :])
        exceptions = {}
        for a, b in zip(*np.nonzero(np.triu(slack < 1e-9, 1))):
            a, b = int(a), int(b)
            if 1 - center[a] - center[b] < half - min(m[a], m[b]):
                exceptions[(a, b)] = m[a] + m[b]
        return [half + v for v in m], exceptions

    def heaviest_masses(self):
        return np.array([float(v) for v in self.model.center]) + float(self.radius) / 2

    def contains_uniform(self):
        u = Fraction(1, self.n)
        return sum(abs(a - u) for a in self.model.center) <= self.radius

    def is_permutation_invariant(self):
        return len(set(self.model.center)) == 1
