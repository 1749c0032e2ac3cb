"""Ray families of the min_mass / simplex column cone, as subsets (for column generation).

Every extreme ray of C(ε, Q_X(c)) (c = 0: ε-LDP) belongs to a family indexed by a set A
(:mod:`mechdesign.privacy.extremes` derives the list):

* 'two':  r = m + (1 − m)1_A with |A| = q, m = m_q = (1 − e^ε c q)/(e^ε (1 − c q)) (Remark 2 of the
  Dobrushin paper; c = 0 gives the staircase levels {e^−ε, 1});
* 'zero': r = 1_A + w e_j (normalised to max 1) with |A| = a, j ∉ A, t = e^−ε/c, a = ⌈t⌉ − 1, w = t − a.

Pricing a family is a problem over sets A of one size; these helpers turn sets into rays.
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign.privacy.registry import rules
from mechdesign.spec.models import Spec

__all__ = ["families", "family_rays", "indicator", "cyclic", "start_rays"]


def families(spec: Spec):
    """Ray families of the min_mass/simplex cone: (kind, size, level) with kind 'two' (r = m + (1−m)1_A,
    |A| = size, m = level) or 'zero' (r = 1_A + w e_j, |A| = size, w = level)."""
    n, eps = spec.n, spec.epsilon.value
    ps = spec.prior_set
    c = rules(ps, n).ray_family_c()
    e = math.exp(min(eps, 700.0))
    fams = []
    if c * n >= 1 - 1e-15:  # uniform point prior
        t = n * math.exp(-eps)
        a = math.ceil(t - 1e-12) - 1
        if 0 <= a <= n - 1:
            fams.append(("zero", a, min(t - a, 1.0)))
        return fams
    for q in range(1, n):
        if e * c * q < 1 - 1e-12:
            fams.append(("two", q, (1 - e * c * q) / (e * (1 - c * q))))
    if c > 0:
        t = math.exp(-eps) / c
        a = math.ceil(t - 1e-12) - 1
        if 1 <= a and a + 1 <= n - 1:
            fams.append(("zero", a, min(t - a, 1.0)))
    return fams


def family_rays(sets: np.ndarray, kind: str, level: float, j=None) -> np.ndarray:
    if kind == "two":  # entries exactly 1.0 on A (as in start_rays), so a ray found twice has the same bytes
        return np.where(sets > 0, 1.0, level)
    R = sets.copy()
    R[:, j] = level
    return R / R.max(axis=1, keepdims=True)


def indicator(sets, n: int) -> np.ndarray:
    S = np.zeros((len(sets), n))
    for i, idx in enumerate(sets):
        S[i, idx] = 1.0
    return S


def cyclic(n: int, pattern: np.ndarray) -> np.ndarray:
    """Row s is ``pattern`` rolled by s (np.roll(pattern, s)), all rows by one gather."""
    pattern = np.asarray(pattern)
    return pattern[(np.arange(n)[None, :] - np.arange(n)[:, None]) % n]


def start_rays(spec: Spec, fams, which=None, distinct: bool = True) -> np.ndarray:
    """The cyclic shifts of one ray per family (of the families indexed by ``which``, default all): a feasible,
    symmetric starting set (at most N per family; the shifts of one ray add up to a constant column); with
    ``distinct`` False, repeated rays are kept (N per family)."""
    n = spec.n
    start = []
    for kind, size, level in fams if which is None else [fams[i] for i in which]:
        pat = np.zeros(n)
        if kind == "two":
            pat[:] = level
            pat[:size] = 1.0
        else:
            pat[:size] = 1.0
            pat[size] = level
        start.append(cyclic(n, pat / pat.max()))
    return np.unique(np.vstack(start), axis=0) if distinct else np.vstack(start)
