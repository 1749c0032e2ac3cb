"""Kernels and privacy checks shared by the certify-stage and cone-lift tests.

* :func:`prior_set`: the spec's prior set Q_X(c) (the simplex when c = 0);
* :func:`oracle_private`: the independent exact oracle (:mod:`helpers.exact_oracle`, no mechdesign import) on a
  grid kernel ints / den, with e^ε = bound exactly (ε written as log(bound));
* :func:`two_level_kernel`: kernels whose columns lie on the (ε, Q_X(c))-PML boundary (Remark 2 of the Dobrushin
  paper: two levels, the Lemma 4 constraint tight).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from helpers.exact_oracle import check_kernel
from mechdesign.spec.models import load_spec


def prior_set(c: Fraction):
    kind = {"kind": "min_mass", "c": str(c)} if c > 0 else {"kind": "simplex"}
    return load_spec({"alphabet": 2, "epsilon": 1, "prior_set": kind, "objective": {"kind": "dobrushin"}}).prior_set


def oracle_private(ints, den: int, c: Fraction, bound: Fraction) -> bool:
    """The exact oracle (helpers/exact_oracle.py) on the kernel ints / den, with e^ε = bound exactly."""
    rows = [[Fraction(int(v), den) for v in row] for row in ints]
    eps = "0" if bound == 1 else f"log({bound.numerator}/{bound.denominator})"
    kind = {"kind": "min_mass", "c": str(c)} if c > 0 else {"kind": "simplex"}
    raw = {"alphabet": len(rows), "epsilon": eps, "prior_set": kind, "objective": {"kind": "dobrushin"}}
    return check_kernel(rows, raw).private


def two_level_kernel(n: int, c: float, E: float, seed: int, parts: int) -> np.ndarray:
    """A mixture of ``parts`` circulants of two-level rays (q entries 1, the rest m, the Lemma 4 constraint tight:
    1 = E (c (q + (n − q) m) + (1 − nc) m)), rows normalised: every column on the PML boundary in real
    arithmetic when parts = 1 (rounding to 2^−52 breaks some by a unit), near it otherwise."""
    rng = np.random.default_rng(seed)
    K = np.zeros((n, n))
    for theta in rng.dirichlet(np.ones(parts)):
        q = int(rng.integers(1, n if c == 0 else min(n, int(1 / (E * c)))))  # levels ≥ 0: E c q ≤ 1
        low = (1 / E - c * q) / (c * (n - q) + 1 - n * c)
        v = np.r_[np.ones(q), np.full(n - q, low)]
        shift = int(rng.integers(0, n))
        C = np.array([[v[(x + y + shift) % n] for y in range(n)] for x in range(n)])
        K += theta * C / v.sum()
    return K
