"""𝒫 = Q_X(c) = {P : P(x) ≥ c for every x}, 0 ≤ c ≤ 1/N: (ε,c)-PML (Dobrushin paper, Definition 1).

Vertices v_x = c·1 + (1 − Nc)e_x, so min_P P·k = c Σ_x k_x + (1 − Nc) min_x k_x (Lemma 4). Lifted LP rows
with one auxiliary u_j per column:

    u_j − k_xj ≤ 0  (N rows),     w_j − c Σ_x k_xj − (1 − Nc) u_j ≤ 0.

c = 0 is the simplex (LDP) and uses its rows; c = 1/N is the uniform point prior. Extreme rays: two
levels (Remark 2) or levels {0, w, 1} (Lemma 1), see :mod:`mechdesign.privacy.extremes`.
"""

from __future__ import annotations

import numpy as np

from mechdesign.privacy.base import PriorSetRules, column_rows, masses_up
from mechdesign.privacy.cone_rays import min_mass_rays, point_rays, simplex_rays
from mechdesign.privacy.simplex import lemma4_column_minima, simplex_lp_rows


class MinMassRules(PriorSetRules):
    kind = "min_mass"

    def lp_rows(self, b, k_idx, k_coef, w, tag, k_range):
        n, J = self.n, k_idx.shape[1]
        if self.model.c == 0:
            return simplex_lp_rows(b, n, k_idx, k_coef, w)
        u = b.variables(f"u_{tag}", (J,), lower=k_range[0], upper=k_range[1])
        low = b.rows(
            np.stack([np.broadcast_to(u, (n, J)), k_idx], -1).reshape(n * J, 2), np.array([1.0, -k_coef]), -np.inf, 0.0
        )  # u_j − k_coef·k_xj ≤ 0
        c_up, rest_up = masses_up([self.model.c, 1 - n * self.model.c])  # a relaxation (privacy.base)
        column = column_rows(b, w, J, [(k_idx, -c_up * k_coef), (u[None, :], -rest_up)])
        return {"u": u, "low": low.reshape(n, J), "column": column}

    def min_expectation(self, k):
        n, c = self.n, self.model.c
        j = min(range(n), key=lambda i: k[i])
        prior = [c] * n  # the vertex c·1 + (1 − Nc)e_j
        prior[j] = c + (1 - n * c)
        return c * sum(k) + (1 - n * c) * k[j], prior

    def column_minima(self, nums):
        return lemma4_column_minima(nums, self.model.c)

    def vertices(self):
        n, c = self.n, self.model.c
        top = c + (1 - n * c)
        return [[top if i == j else c for i in range(n)] for j in range(n)]

    def contains_uniform(self):
        return True

    def is_permutation_invariant(self):
        return True

    def equivalent_c(self):
        return self.model.c

    def ray_family_c(self):
        return float(self.model.c)

    def structured_ray_count(self):
        return 2**self.n + self.n * 2 ** (self.n - 1)

    def structured_rays(self, epsilon):
        n, c = self.n, self.model.c
        if c * n == 1:
            return point_rays(n, epsilon, np.full(n, 1.0 / n))
        if c == 0:
            return simplex_rays(n, epsilon)
        return min_mass_rays(n, epsilon, float(c))
