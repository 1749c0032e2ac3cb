"""A-optimal frequency estimation at the uniform prior over a permutation-invariant prior set: the class reduction.

Setting: P uniform, 𝒫 = simplex (ε-LDP) or Q_X(c) (min_mass), no other privacy constraint. The cone C(ε,𝒫) and U
are then invariant under permuting the symbols, and U is convex in the ray weights θ (:mod:`mechdesign.engines.a_optimal`), so
averaging an optimal θ over all N! permutations gives an optimal θ̄ that is constant on each orbit ("class") of
rays. Every extreme ray belongs to a family of :func:`mechdesign.privacy.ray_families.families` (two levels, or
{0, w, 1}), and the rays of one family are the permutations of one pattern r: a class.

Spreading a mass t evenly over the orbit of r (S1 = Σ_x r_x, S2 = Σ_x r_x²): the rows receive t·S1/N each, and
the average of r rᵀ over the orbit is (S2/N − o) I + o 11ᵀ with o = (S1² − S2)/(N(N − 1)); with Pᵀr = S1/N,

    J = Σ_c t_c (N/S1_c) [(S2_c/N − o_c) I + o_c 11ᵀ] = a I + b 11ᵀ,   a = Σ_c t_c (N S2_c − S1_c²)/(S1_c (N − 1)),

and the rows sum to 1 iff Σ_c t_c S1_c/N = 1. Since J 1 = N·1 (J P = 1), a + N b = N, and

    U = tr J⁻¹ − 1/N = (N − 1)/a + 1/N − 1/N = (N − 1)/a.

Maximising a, linear in t under one linear constraint, puts all the mass on the best class:

    U* = min_c (N − 1)² S1_c² / (N (N S2_c − S1_c²)).

For ε-LDP the classes are subset selection with every subset size q (Ye and Barg 2018; Wang et al. 2016), so the
optimum is subset selection at its best size; for q = 1 this is k-RR.

**An explicit kernel.** The uniform orbit has C(N, q) columns. A much smaller design with the same J: any set of
columns in which every symbol carries the same mass and Σ_y K(:,y)K(:,y)ᵀ/(Pᵀ K(:,y)) is a I + b 11ᵀ with the
same a. The cyclic shifts of a pattern r give equal masses; their Σ r rᵀ is circulant with off-diagonal entries
the cyclic autocorrelation ac_r(d) = Σ_x r_x r_{x+d}. Weights w_D ≥ 0 on the cyclic orbits of several
permutations D of the pattern make the off-diagonal constant iff Σ_D w_D ac_D(d) is the same for d = 1..⌊N/2⌋:
a small LP (HiGHS), which the uniform average over all permutations satisfies, so it is feasible over a rich
enough pool of random permutations; a basic solution uses at most ⌊N/2⌋ orbits, i.e. at most N⌊N/2⌋ columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SymmetricOptimum", "symmetric_optimum", "class_patterns", "balanced_cyclic_kernel", "class_value"]


@dataclass
class SymmetricOptimum:
    value: float
    """U* (the optimum, up to the rounding stated in ``bound``)."""
    bound: float
    """A lower bound on U*: value minus the rounding of the closed form."""
    pattern: np.ndarray
    """The best class's pattern (max entry 1)."""
    description: str
    """The best class in words (e.g. 'two levels: 15 of 56 symbols at 1, the rest at 0.3679')."""


def class_patterns(families, n: int) -> list[tuple[np.ndarray, str]]:
    """One pattern per ray family (kind, size, level) of the min_mass/simplex cone, with a description."""
    out = []
    for kind, size, level in families:
        r = np.zeros(n)
        if kind == "two":
            r[:] = level
            r[:size] = 1.0
            text = f"two levels: {size} of {n} symbols at 1, the others at {level:.6g}"
        else:
            r[:size] = 1.0
            r[size] = level
            r = r / r.max()
            text = f"{size} symbols at 1, one at {level:.6g}, the others at 0"
        out.append((r, text))
    return out


def class_value(r: np.ndarray) -> float:
    """U of the uniform orbit of pattern r at the uniform prior: (N − 1)² S1² / (N (N S2 − S1²)) (∞ when constant)."""
    n = len(r)
    s1, s2 = math.fsum(r), math.fsum(r * r)
    den = n * (n * s2 - s1 * s1)
    return math.inf if den <= 0 else (n - 1) ** 2 * s1 * s1 / den


def _class_moments(kind: str, size: int, level: float, n: int) -> tuple[float, float]:
    """(S1, N·S2 − S1²) of a family's pattern without building it: two levels (q = size ones, the rest at m):
    S1 = q + (N − q)m and N S2 − S1² = q(N − q)(1 − m)² exactly; {0, w, 1} (a = size ones, one w, zeros), max 1:
    S1 = a + w, N S2 − S1² = N(a + w²) − (a + w)²."""
    if kind == "two":
        q, m = size, level
        return q + (n - q) * m, q * (n - q) * (1 - m) ** 2
    a, w = size, level
    if a == 0:  # the ray w·e_j, normalised: e_j
        return 1.0, n - 1.0
    return a + w, n * (a + w * w) - (a + w) ** 2


def symmetric_optimum(families, n: int) -> SymmetricOptimum:
    """U* over every class (module docstring) and the best class; O(1) per class."""
    best = None
    for fam in families:
        s1, spread = _class_moments(*fam, n)
        v = math.inf if spread <= 0 else (n - 1) ** 2 * s1 * s1 / (n * spread)
        if best is None or v < best[0]:
            best = (v, fam)
    if best is None:
        return SymmetricOptimum(math.inf, math.inf, np.ones(n), "no non-constant ray (ε = 0)")
    v, fam = best
    ((r, text),) = class_patterns([fam], n)
    # a handful of roundings of relative size u = 2^-53 each, with N·u covering the sums
    bound = v * (1 - 16 * 2.0**-53 * n) if math.isfinite(v) else v
    return SymmetricOptimum(v, bound, r, text)


def _autocorrelation(D: np.ndarray) -> np.ndarray:
    """ac(d) = Σ_x D_x D_{x+d mod N} for every row and d = 1..⌊N/2⌋ (by FFT)."""
    n = D.shape[1]
    F = np.fft.rfft(D, axis=1)
    ac = np.fft.irfft(F * np.conj(F), n=n, axis=1)
    return ac[:, 1 : n // 2 + 1]


def balanced_cyclic_kernel(pattern: np.ndarray, max_columns: int, seed: int = 0) -> np.ndarray | None:
    """An N × M kernel made of cyclic orbits of permutations of ``pattern`` whose information matrix at the
    uniform prior is that of the uniform orbit (module docstring), M ≤ max_columns; None when none is found."""
    from scipy.optimize import linprog

    n = len(pattern)
    if n * 1 > max_columns:
        return None
    s1 = math.fsum(pattern)
    rng = np.random.default_rng(seed)
    base = [pattern.copy()]
    for pool in (2 * n, 8 * n, 32 * n):
        while len(base) < pool:
            base.append(rng.permutation(pattern))
        D = np.array(base)
        ac = _autocorrelation(D)
        # Σ w = 1, Σ_D w_D (ac_D(d) − ac_D(1)) = 0 for d ≥ 2
        A = np.vstack([np.ones(len(D)), (ac[:, 1:] - ac[:, :1]).T]) if ac.shape[1] > 1 else np.ones((1, len(D)))
        b = np.zeros(A.shape[0])
        b[0] = 1.0
        res = linprog(np.zeros(len(D)), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
        if res.status != 0 or res.x is None:
            continue
        w = np.clip(res.x, 0.0, None)
        used = np.flatnonzero(w > 1e-12)
        if len(used) * n > max_columns:
            return None
        idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n  # column s of a block: the pattern rolled by s
        blocks = [D[u][idx] * (w[u] / w[used].sum() / s1) for u in used]
        K = np.hstack(blocks)
        return K / K.sum(axis=1, keepdims=True)
    return None
