"""𝒫 = {P}: ε-PML for one prior (Saeidian et al.). min_P P·k = P·k; LP row w_j − Σ_x P(x) k_xj ≤ 0.

Extreme rays: C ∩ {e^ε P·k = 1} = {0 ≤ k ≤ 1, P·k = e^−ε} is a box cut by a hyperplane, whose vertices
have at most one fractional entry: k = 1_A + w e_j with w = (e^−ε − P(A))/P_j ∈ [0, 1]. The envelopes
paper's Theorem 4 mechanism is made of such rays (A = X ∖ {j}).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mechdesign.privacy.base import PriorSetRules, column_rows, dot, masses_up
from mechdesign.privacy.cone_rays import point_rays


class PointRules(PriorSetRules):
    kind = "point"

    def lp_rows(self, b, k_idx, k_coef, w, tag, k_range):
        prior = masses_up(self.model.prior)[:, None]
        column_rows(b, w, k_idx.shape[1], [(k_idx, -k_coef * prior)])
        return {}

    def min_expectation(self, k):
        return dot(self.model.prior, k), list(self.model.prior)

    def column_minima(self, nums):
        prior = list(self.model.prior)
        den = 1
        for p in prior:
            den = den * p.denominator // math.gcd(den, p.denominator)
        pint = np.array([int(p * den) for p in prior], dtype=object)
        return [(Fraction(int(d), den), prior) for d in pint.dot(nums)]

    def vertices(self):
        return [list(self.model.prior)]

    def contains_uniform(self):
        return list(self.model.prior) == [Fraction(1, self.n)] * self.n

    def is_permutation_invariant(self):
        return len(set(self.model.prior)) == 1

    def equivalent_c(self):
        return Fraction(1, self.n) if len(set(self.model.prior)) == 1 else None

    def heaviest_masses(self):
        return np.array([float(v) for v in self.model.prior])

    def point_prior(self):
        return list(self.model.prior)

    def structured_ray_count(self):
        return self.n * 2 ** (self.n - 1)

    def structured_rays(self, epsilon):
        return point_rays(self.n, epsilon, np.array([float(p) for p in self.model.prior]))
