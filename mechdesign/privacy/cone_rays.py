"""The extreme rays of C(ε,𝒫) for the prior sets whose rays have a known form (derivations in
:mod:`mechdesign.privacy.extremes`): simplex (staircases), Q_X(c) (two levels, or {0, w, 1}) and a
point prior (a box cut by a hyperplane). Rows are rays, not yet normalised."""

from __future__ import annotations

import itertools
import math

import numpy as np

TOL = 1e-12


def _subsets(n: int) -> np.ndarray:
    """All 2^n indicator vectors as a (2^n, n) 0/1 array."""
    bits = np.arange(1 << n)[:, None] >> np.arange(n)[None, :] & 1
    return bits.astype(float)


def _sets_of_size(n: int, q: int) -> np.ndarray:
    combos = list(itertools.combinations(range(n), q))
    out = np.zeros((len(combos), n))
    for i, c in enumerate(combos):
        out[i, list(c)] = 1.0
    return out


def simplex_rays(n: int, eps: float) -> np.ndarray:
    if eps == 0:
        return np.ones((1, n))
    S = _subsets(n)[1:-1]
    return S + math.exp(-eps) * (1 - S)


def min_mass_rays(n: int, eps: float, c: float) -> np.ndarray:
    if eps == 0:
        return np.ones((1, n))
    if eps > 700 or math.exp(eps) * c >= 1 - TOL:  # e^eps c >= 1: the cone is the orthant
        return np.eye(n)
    e = math.exp(eps)
    out = []
    for q in range(1, n):
        if e * c * q < 1 - TOL:
            m = (1 - e * c * q) / (e * (1 - c * q))
            A = _sets_of_size(n, q)
            out.append(A + m * (1 - A))
    if c <= 0.0 or math.exp(-eps) / c > n:  # c below the doubles (1e-400 is 0.0): no three-level rays (a ≥ n)
        return np.vstack(out)
    t = math.exp(-eps) / c
    a = math.ceil(t - TOL) - 1
    w = t - a
    if 1 <= a and a + 1 <= n - 1:
        rows = []
        for j in range(n):
            rest = [x for x in range(n) if x != j]
            for A in itertools.combinations(rest, a):
                r = np.zeros(n)
                r[list(A)] = 1.0
                r[j] = min(w, 1.0)
                rows.append(r)
        out.append(np.array(rows))
    return np.vstack(out)


def point_rays(n: int, eps: float, prior: np.ndarray) -> np.ndarray:
    if eps == 0:
        return np.ones((1, n))
    target = math.exp(-eps)
    out = []
    S = _subsets(n - 1)
    for j in range(n):
        rest = [x for x in range(n) if x != j]
        A = np.zeros((len(S), n))
        A[:, rest] = S
        w = (target - A @ prior) / prior[j]
        ok = (w >= -TOL) & (w <= 1 + TOL)
        A = A[ok]
        A[:, j] = np.clip(w[ok], 0.0, 1.0)
        empty = A.sum(axis=1) == A[:, j]
        A[empty, j] = 1.0  # A = ∅: the ray w·e_j, i.e. e_j (w may underflow for large eps)
        out.append(A)
    return np.vstack(out)
