"""𝒫 = the whole simplex: ε-LDP (Dobrushin paper, Proposition 1).

min_P P·k = min_x k_x, attained at a unit vector e_x. LP rows: w_j − k_xj ≤ 0 for every (x, j), N rows
per column. Extreme rays of C(ε, simplex): the 2^N − 2 staircase vectors with levels {e^−ε, 1}
(Kairouz, Oh and Viswanath).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.privacy.base import PriorSetRules, Terms
from mechdesign.privacy.cone_rays import simplex_rays


def simplex_lp_rows(b: LPBuilder, n: int, k_idx: np.ndarray, k_coef: float, w: Terms) -> dict:
    """w_j − k_coef·k_xj ≤ 0 for every (x, j); returns ``{"low": (N, J) row ids}``."""
    J = k_idx.shape[1]
    w_cols = [np.broadcast_to(idx, (n, J)) for idx, _ in w]
    w_coefs = [np.broadcast_to(np.asarray(c, float), (n, J)) for _, c in w]
    cols = np.stack(w_cols + [k_idx], axis=-1).reshape(n * J, -1)
    coefs = np.stack(w_coefs + [np.full((n, J), -k_coef)], axis=-1).reshape(n * J, -1)
    return {"low": b.rows(cols, coefs, -np.inf, 0.0).reshape(n, J)}


def lemma4_column_minima(nums: np.ndarray, c: Fraction) -> list[tuple[Fraction, None]]:
    """min over Q_X(c) of P·k = c Σ_x k_x + (1 − Nc) min_x k_x (Lemma 4), for every column at once."""
    n, m = nums.shape
    mins = nums.min(axis=0)
    sums = nums.sum(axis=0)
    return [(c * int(sums[y]) + (1 - n * c) * int(mins[y]), None) for y in range(m)]


class SimplexRules(PriorSetRules):
    kind = "simplex"

    def lp_rows(self, b, k_idx, k_coef, w, tag, k_range):
        return simplex_lp_rows(b, self.n, k_idx, k_coef, w)

    def min_expectation(self, k):
        j = min(range(self.n), key=lambda i: k[i])
        return Fraction(k[j]), [Fraction(int(i == j)) for i in range(self.n)]

    def column_minima(self, nums):
        return lemma4_column_minima(nums, Fraction(0))

    def vertices(self):
        return [[Fraction(int(i == j)) for i in range(self.n)] for j in range(self.n)]

    def contains_uniform(self):
        return True

    def is_permutation_invariant(self):
        return True

    def equivalent_c(self):
        return Fraction(0)

    def ray_family_c(self):
        return 0.0

    def structured_ray_count(self):
        return 2**self.n + self.n * 2 ** (self.n - 1)

    def structured_rays(self, epsilon):
        return simplex_rays(self.n, epsilon)
