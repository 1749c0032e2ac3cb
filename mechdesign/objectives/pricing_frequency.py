"""Certified pricing for frequency estimation (A-optimal design) over the min_mass / simplex ray families.

The lower bound of :mod:`mechdesign.engines.a_optimal` (Lagrangian dual of the A-optimal design program; Boyd and
Vandenberghe, Convex Optimization §7.5) is, for ANY symmetric W and any λ,

    OPT ≥ 2 tr W − ‖P‖² − Σ_x λ_x − N·max(0, h),   h = max over every extreme ray r of (G_r − λ·r)/(1·r),
    G_r = ‖W r‖² / (Pᵀ r).

Listing every ray stops at N ≈ 12 (2^N rays). Here h is bounded from above over a whole family at once, by branch
and bound (the "pricing" problem of column generation; Desaulniers, Desrosiers and Solomon, Column Generation,
2005). Every ray of C(ε, Q_X(c)) (c = 0: ε-LDP) is r = r₀ + δ·x with x ∈ {0,1}^N the indicator of a set A of
fixed size k over the family's free items (:mod:`mechdesign.privacy.ray_families`):

* 'two'  (r = m + (1 − m)1_A, |A| = q):  r₀ = m·1, δ = 1 − m, every symbol free, 1·r = q + (N − q)m;
* 'zero' (r = 1_A + w e_j, |A| = a):      r₀ = w·e_j, δ = 1, the symbols x ≠ j free, 1·r = a + w.

On a family the reduced value is F(x)/(1·r) with

    F(x) = ‖c + δ W x‖² / (s₀ + δ Pᵀx) − λ·r₀ − δ λ·x,   c = W r₀,  s₀ = Pᵀ r₀,

a convex function of x (quadratic over linear), so its maximum over the relaxed polytope is at an integer point:
relaxing does not help, and the search is over the sets. A node fixes a set I of items in and some out; k more are
chosen among the free items F (y ∈ {0,1}^F, |y| = k). Writing c_I = c + δ W 1_I,

    ‖c_I + δ W_F y‖² = ‖c_I‖² + Σ_{i∈F} y_i (2δ (W c_I)_i + δ² (W²)_ii) + δ² Σ_{i≠j} y_i y_j (W²)_ij,

(y_i² = y_i). The off-diagonal part is bounded by the Gilmore–Lawler argument (Gilmore 1962; Lawler 1963): for a
chosen i the other k − 1 chosen items contribute at most the sum g_i of the k − 1 largest (W²)_ij, j ∈ F \\ {i}.
The numerator is then at most n₀ + ρ·y with ρ_i = 2δ(W c_I)_i + δ²((W²)_ii + g_i), n₀ = ‖c_I‖² ≥ 0 (valid at
every integer y; ρ·y + n₀ ≥ the true numerator ≥ 0), and the denominator at least s_lo = s₀ + δ Pᵀ1_I + δ·(sum of
the k smallest P over F), so

    F ≤ n₀/s_lo − λ·r₀ − δλ(I) + (sum of the k largest ρ_i/s_lo − δλ_i over F)        (node bound)

— one partial sort. The bound is exact when the node holds a single set; nodes with at most :data:`ENUMERATE_MAX`
sets are evaluated set by set. Branching fixes an item of the maximising top-k set in (searched first) and out:
the item whose Gilmore–Lawler overestimate is largest, or the free item of largest P when the denominator's
slack dominates. A node whose bound is ≤ the cut max(prune, incumbent) is dropped. When the node limit or the
deadline stops a family, the bounds of the nodes left open are used: the certificate stays valid, only looser.

**Rounding.** Entries of r lie in [0, 1], so in any node bound or evaluated value the numerator's terms add up
in absolute value to at most 16‖|W| 1‖² (‖c_I‖² ≤ ‖|W|1‖², Σ_i 2|(W c_I)_i| ≤ 2·1ᵀ|W||W|1, Σ_ij |(W²)_ij| ≤
1ᵀ|W|²1, each used a few times by the bound on the complement), the denominator is at least s_min (the least Pᵀr over the family) and the λ terms add up to at most
Σ|λ|: every quantity is a sum of such terms computed with at most 2N + 10 roundings each, and the family's levels
(m_q, w) are within a few ulps of their exact values. :func:`family_allowance` adds
64(N + 2)u·(16‖|W|1‖²/s_min + Σ|λ|)/(1·r) (u = 2⁻⁵³) to the family's certificate, which covers all of them with a
margin (the orders of :func:`mechdesign.engines.a_optimal.dual_bound`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

__all__ = [
    "FrequencyFamily",
    "frequency_families",
    "price_family",
    "price_all",
    "PricingResult",
    "family_allowance",
    "NODE_LIMIT",
    "ENUMERATE_MAX",
]

U = 2.0**-53
NODE_LIMIT = 200_000
"""Branch-and-bound nodes per family and pricing round; past it (or past the round's deadline) the open nodes' bounds
are used (valid, looser). At N = 20 (Dirichlet prior, min_mass c = 1/(2N)) a family needs up to ~9,000 nodes."""
ENUMERATE_MAX = 64
"""A node holding at most this many sets is evaluated set by set (exact)."""


@dataclass
class FrequencyFamily:
    """One ray family as a subset problem: rays r = r0 + delta·1_A over the free items, |A| = size."""

    kind: str
    size: int
    level: float
    j: int | None
    r0: np.ndarray
    delta: float
    free: np.ndarray
    norm: float
    """1·r, the same for every ray of the family."""

    def rays(self, sets: np.ndarray) -> np.ndarray:
        """The rays of the family for rows of ``sets`` (indicator vectors over all N symbols)."""
        if self.kind == "two":  # entries exactly 1.0 on A, as ray_families.family_rays writes them
            return np.where(sets > 0, 1.0, self.level)
        R = sets.astype(float).copy()
        R[:, self.j] = self.level
        return R


def frequency_families(fams, n: int) -> list[FrequencyFamily]:
    """The families of :func:`mechdesign.privacy.ray_families.families` as subset problems ('zero': one per j)."""
    out = []
    for kind, size, level in fams:
        if kind == "two":
            out.append(
                FrequencyFamily(
                    kind, size, level, None, np.full(n, level), 1.0 - level, np.arange(n), size + (n - size) * level
                )
            )
        else:
            for j in range(n):
                r0 = np.zeros(n)
                r0[j] = level
                out.append(FrequencyFamily(kind, size, level, j, r0, 1.0, np.delete(np.arange(n), j), size + level))
    return out


def family_allowance(fam: FrequencyFamily, W: np.ndarray, P: np.ndarray, lam: np.ndarray) -> float:
    """An upper bound on the floating-point error of any node bound or value computed for ``fam`` (module doc):
    64(N + 2)u·(16‖|W|1‖²/s_min + Σ|λ|)/(1·r), s_min = the least Pᵀr over the family."""
    n = len(P)
    Pf = np.sort(P[fam.free])
    s_min = float(P @ fam.r0) + fam.delta * float(Pf[: fam.size].sum())
    s_min = max(s_min * (1 - 4 * n * U), 1e-300)
    mag = float(np.sum((np.abs(W) @ np.ones(n)) ** 2))
    return 64 * (n + 2) * U * (16.0 * mag / s_min + float(np.abs(lam).sum())) / fam.norm


class _Context:
    """The round's data shared by every family: W, W², P, λ."""

    def __init__(self, W, P, lam):
        self.W, self.P, self.lam = W, P, lam
        self.W2 = W @ W
        self.W2 = (self.W2 + self.W2.T) / 2


def _values(ctx: _Context, fam: FrequencyFamily, sets: np.ndarray) -> np.ndarray:
    """F(x) of each row of ``sets`` (indicators over all N), not divided by 1·r."""
    R = fam.r0[None, :] + fam.delta * sets
    return np.sum((R @ ctx.W) ** 2, axis=1) / (R @ ctx.P) - R @ ctx.lam


@dataclass
class _Node:
    ub: float
    inside: list
    out: list


def _top_sum(v: np.ndarray, k: int) -> np.ndarray:
    """Per row of v, the sum of its k largest entries (0 when k = 0)."""
    if k <= 0:
        return np.zeros(len(v))
    return -np.partition(-v, k - 1, axis=1)[:, :k].sum(axis=1)


def _top(coef: np.ndarray, k: int) -> np.ndarray:
    return np.argpartition(-coef, k - 1)[:k] if 0 < k < len(coef) else np.arange(len(coef))[:k]


def _node_bound(ctx: _Context, fam: FrequencyFamily, inside: list, free: np.ndarray, k: int):
    """(upper bound of F over the node, the bound's maximising set as positions in ``free``, Gilmore–Lawler
    overestimate per free item, s_lo, Pᵀr of the fixed part).

    Two bounds, the smaller is returned: Gilmore–Lawler on the k chosen items (module doc), and the same on the
    nf − k items left out (y = 1 − y'; the numerator is then n₀ + L + S − Σ y'_i(ℓ_i + 2R_i) + Σ_{i≠j} y'_i y'_j M_ij
    with ℓ the linear coefficients, R_i = Σ_{j∈F∖{i}} M_ij, S = Σ_{i≠j∈F} M_ij, M = δ²W²), tighter when k > nf/2."""
    W, W2, P, lam, d = ctx.W, ctx.W2, ctx.P, ctx.lam, fam.delta
    c = W @ fam.r0
    if inside:
        c = c + d * W[:, inside].sum(axis=1)
    Wc = W @ c
    n0 = float(c @ c)
    s0 = float(P @ fam.r0) + d * float(P[inside].sum())
    Pf = P[free]
    nf = len(free)
    Mf = d * d * W2[np.ix_(free, free)]
    diag = np.diag(Mf).copy()
    np.fill_diagonal(Mf, 0.0)
    lin = 2 * d * Wc[free] + diag
    s_lo = s0 + d * float(np.partition(Pf, k - 1)[:k].sum()) if k > 0 else s0
    const = -float(lam @ fam.r0) - d * float(lam[inside].sum())
    Mneg = Mf.copy()
    np.fill_diagonal(Mneg, -np.inf)
    gl = _top_sum(Mneg, k - 1)  # the k − 1 largest off-diagonal entries of each row
    coef = (lin + gl) / s_lo - d * lam[free]
    top = _top(coef, k)
    ub = const + n0 / s_lo + float(coef[top].sum())
    kc = nf - k
    if 0 < kc < k:  # the complement: choose the nf − k items left out
        R = Mf.sum(axis=1)
        base = n0 + float(lin.sum()) + float(R.sum())
        gl_c = _top_sum(Mneg, kc - 1)
        coef_c = (gl_c - lin - 2 * R) / s_lo + d * lam[free]
        out = _top(coef_c, kc)
        ub_c = const + base / s_lo - d * float(lam[free].sum()) + float(coef_c[out].sum())
        if ub_c < ub:
            keep = np.ones(nf, bool)
            keep[out] = False
            return ub_c, np.flatnonzero(keep), gl, s_lo, s0
    return ub, top, gl, s_lo, s0


def _enumerate(ctx, fam, inside, free, k):
    """Every set of the node: (indicator rows over all N, their F values)."""
    combos = np.array(list(combinations(range(len(free)), k)), int).reshape(-1, k) if k else np.zeros((1, 0), int)
    X = np.zeros((len(combos), len(ctx.P)))
    if inside:
        X[:, inside] = 1.0
    if k:
        X[np.arange(len(combos))[:, None], free[combos]] = 1.0
    return X, _values(ctx, fam, X)


def price_family(
    ctx: _Context,
    fam: FrequencyFamily,
    prune: float,
    node_limit: int = NODE_LIMIT,
    keep: int = 5,
    deadline: float = math.inf,
    root_bound: float = math.inf,
):
    """Branch and bound for max over the family of F(x)/(1·r) (module docstring), without rounding allowance.

    Returns (sets, values, certified, nodes, finished): up to ``keep`` best sets found (indicator rows) with
    value > prune, and ``certified`` ≥ the family's maximum: max(prune, best value, bounds of the nodes left open
    when the node limit or the deadline stopped the search)."""
    n = len(ctx.P)
    norm = fam.norm
    cut0 = prune * norm
    best = -math.inf
    pool: dict = {}

    def offer(X, vals):
        nonlocal best
        if len(vals) == 0:
            return
        i = int(np.argmax(vals))
        best = max(best, float(vals[i]))
        for t in np.flatnonzero(vals > cut0):
            key = X[t].tobytes()
            if key not in pool:
                pool[key] = (float(vals[t]), X[t].copy())
        if len(pool) > 4 * keep:
            for kk in sorted(pool, key=lambda z: pool[z][0])[: len(pool) - 2 * keep]:
                del pool[kk]

    free_all = [int(x) for x in fam.free]
    stack = [(root_bound * norm, [], [])]  # the root's bound (F/(1·r) scale) bounds every node below it
    open_cert = -math.inf
    nodes = 0
    finished = True
    while stack:
        parent_ub, inside, out = stack.pop()
        if parent_ub <= max(cut0, best):
            continue
        if nodes >= node_limit or (nodes % 16 == 0 and time.perf_counter() > deadline):
            stack.append((parent_ub, inside, out))
            open_cert = max(s[0] for s in stack)
            finished = False
            break
        nodes += 1
        excluded = set(inside) | set(out)
        free = np.array([x for x in free_all if x not in excluded], int)
        k = fam.size - len(inside)
        if k < 0 or k > len(free):
            continue
        if math.comb(len(free), k) <= ENUMERATE_MAX:
            X, vals = _enumerate(ctx, fam, inside, free, k)
            offer(X, vals)
            continue
        ub, top, gl, s_lo, s_base = _node_bound(ctx, fam, inside, free, k)
        # the maximising set of the bound is a set of the node: evaluate it (incumbent, and a ray to return)
        X = np.zeros((1, n))
        X[0, inside] = 1.0
        X[0, free[top]] = 1.0
        top_value = float(_values(ctx, fam, X)[0])
        offer(X, np.array([top_value]))
        if ub <= max(cut0, best):
            continue
        # branching item: GL overestimate of the top set's items against their actual partners
        sub = ctx.W2[np.ix_(free[top], free[top])]
        actual = sub.sum(axis=1) - np.diag(sub)
        gl_gap = fam.delta**2 * (gl[top] - actual) / s_lo
        # denominator slack: the top set's numerator bound over s_lo against over its own denominator
        s_top = s_base + fam.delta * float(ctx.P[free[top]].sum())
        num_top = (
            ub
            + float(ctx.lam @ fam.r0)
            + fam.delta * float(ctx.lam[inside].sum())
            + fam.delta * float(ctx.lam[free[top]].sum())
        ) * s_lo
        den_gap = num_top * (1 / s_lo - 1 / s_top)
        if den_gap > 2 * float(gl_gap.max(initial=0.0)):
            item = int(free[int(np.argmax(ctx.P[free]))])
        else:
            item = int(free[top[int(np.argmax(gl_gap))]])
        # depth first: the child holding the top set (item in) is searched first
        in_top = item in set(free[top].tolist())
        child_in = (ub, inside + [item], out)
        child_out = (ub, inside, out + [item])
        stack += [child_out, child_in] if in_top else [child_in, child_out]
    cert = max(open_cert, best, cut0) / norm
    ranked = sorted(pool.values(), key=lambda z: -z[0])[:keep]
    sets = np.array([z[1] for z in ranked]).reshape(-1, n)
    vals = np.array([z[0] / norm for z in ranked])
    return sets, vals, cert, nodes, finished


@dataclass
class PricingResult:
    rays: np.ndarray
    """Rays found whose reduced value exceeds the prune level (best first per family)."""
    values: np.ndarray
    """Their reduced values (G_r − λ·r)/(1·r)."""
    certified: float
    """An upper bound on max over every ray of the family set of (G_r − λ·r)/(1·r), rounding included."""
    nodes: int = 0
    open_families: int = 0
    notes: list = field(default_factory=list)


def price_all(
    W: np.ndarray,
    P: np.ndarray,
    lam: np.ndarray,
    fams: list[FrequencyFamily],
    prune: float,
    node_limit: int = NODE_LIMIT,
    keep: int = 5,
    deadline: float = math.inf,
    share: float = 0.0,
    enough: int | None = None,
) -> PricingResult:
    """Price every family at (W, λ): rays above ``prune`` and a certified upper bound on h (module docstring).

    The families are searched in decreasing order of their root bound; a family whose root bound (plus its
    rounding allowance) is below the cut is not searched (its root bound is its certificate). With ``share`` > 0
    a family is searched only for rays above max(prune, share·best value found so far in the round), which keeps
    the certificate valid (max(best, cut, open nodes' bounds)) and saves the search far from the optimum. Once
    ``enough`` rays have been found, the families not searched yet keep their root bounds (valid, looser): the
    round returns its rays without certifying them all."""
    ctx = _Context(np.asarray(W, float), np.asarray(P, float), np.asarray(lam, float))
    roots = []
    for fam in fams:
        free = fam.free
        k = fam.size
        if math.comb(len(free), k) <= ENUMERATE_MAX:
            _, vals = _enumerate(ctx, fam, [], free, k)
            roots.append(float(vals.max()) / fam.norm)
        else:
            roots.append(_node_bound(ctx, fam, [], free, k)[0] / fam.norm)
    order = np.argsort(roots)[::-1]
    cert = -math.inf
    rays, values, nodes, left = [], [], 0, 0
    found = -math.inf
    for f in order:
        fam = fams[f]
        allow = family_allowance(fam, ctx.W, ctx.P, ctx.lam)
        cut = max(prune, share * found)
        if roots[f] <= cut or (enough is not None and sum(len(v) for v in values) >= enough):
            cert = max(cert, roots[f] + allow)
            continue
        sets, vals, c, nd, done = price_family(ctx, fam, cut, node_limit, keep, deadline, roots[f])
        if len(vals):
            found = max(found, float(vals.max()))
        nodes += nd
        left += not done
        cert = max(cert, c + allow)
        if len(sets):
            rays.append(fam.rays(sets))
            values.append(vals)
    R = np.vstack(rays) if rays else np.zeros((0, len(P)))
    V = np.concatenate(values) if values else np.zeros(0)
    return PricingResult(R, V, cert, nodes, left)
