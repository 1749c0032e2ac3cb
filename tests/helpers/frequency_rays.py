"""Every extreme ray of the simplex / min_mass column cone, written out independently of mechdesign.

From the Dobrushin paper: Remark 2 (two-level rays m_q + (1 − m_q)1_A with m_q = (1 − e^ε c q)/(e^ε (1 − c q)),
for e^ε c q < 1) and, for min_mass (c > 0), Lemma 1 (rays with zeros: 1_A + w e_j with |A| = a = ⌈t⌉ − 1,
w = t − a, t = e^−ε/c). c = 0 is ε-LDP (the staircase levels {e^−ε, 1}).
"""

import itertools
import math

import numpy as np


def all_rays(n: int, eps: float, c: float) -> np.ndarray:
    """The rays as rows (max entry 1)."""
    e = math.exp(eps)
    rays = []
    for q in range(1, n):
        if e * c * q < 1:
            m = (1 - e * c * q) / (e * (1 - c * q))
            for A in itertools.combinations(range(n), q):
                r = np.full(n, m)
                r[list(A)] = 1.0
                rays.append(r)
    if c > 0:
        t = math.exp(-eps) / c
        a = math.ceil(t) - 1
        if 1 <= a <= n - 2:
            w = t - a
            for j in range(n):
                for A in itertools.combinations([x for x in range(n) if x != j], a):
                    r = np.zeros(n)
                    r[list(A)] = 1.0
                    r[j] = w
                    rays.append(r)
    return np.array(rays)
