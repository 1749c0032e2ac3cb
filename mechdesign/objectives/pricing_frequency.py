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
relaxing does not help, and the search is over the sets. The search decides whether some set has F/(1·r) > h,
h = max(prune, best value found) (Dinkelbach 1967): multiplied by Pᵀr > 0 the question is about the quadratic

    Q_h(y) = ‖c + δ W y‖² − (λ·r₀ + h·(1·r) + δ λ·y)(s₀ + δ Pᵀy) = const + Σ_i l_i y_i + Σ_{i<j} C_ij y_i y_j,
    C_ij = δ² (2 (W²)_ij − λ_i P_j − λ_j P_i)   (y_i² = y_i),

over y ∈ {0,1}^F with |y| = k. On that slice Σ_{i<j} (α_i + α_j) y_i y_j = (k − 1) Σ_i α_i y_i, so the additive
part of C (α by least squares: C_ij ≈ α_i + α_j) moves into the linear coefficients and only the residual
E_ij = C_ij − α_i − α_j stays as pairs (near the optimum it is small: N = 50, C ∈ [−0.86, −0.57], |E| ≤ 0.024).
A node fixes a set I of items in and some out; k' more are chosen among the free items F. The pairs among the
chosen items are bounded by the Gilmore–Lawler argument (Gilmore 1962; Lawler 1963): each chosen i adds at most
half the sum of its k' − 1 largest E_ij, j ∈ F ∖ {i}, so

    Q_h ≤ const(I) + sum of the k' largest (l_i + (k − 1) α_i + Σ_{j∈I} E_ij + ½ top_{k'−1}(E_i·))     (node bound)

— one partial sort per row — and the same on the items left out when k' > |F|/2 (y = 1 − y'). A node whose bound
is ≤ 0 holds no set above h; a node left open certifies h + bound/((1·r)·s_lo), s_lo the least Pᵀr over the
node. The bound is exact when the node holds a single set; nodes with at most :data:`ENUMERATE_MAX` sets are
evaluated set by set. Branching fixes the item of the bound's maximising set whose partner bound overestimates
most, in (searched first) and out. When the node limit or the deadline stops a family, the bounds of the nodes
left open are used: the certificate stays valid, only looser.

**Rounding.** :func:`family_allowance` covers the evaluation of F at a set: entries of r lie in [0, 1], so every
quantity is a sum of terms of total magnitude at most 16‖|W| 1‖²/s_min + Σ|λ| (s_min the least Pᵀr over the
family), computed with at most 2N + 10 roundings each, and the family's levels (m_q, w) are within a few ulps of
their exact values; it adds 64(N + 2)u·(16‖|W|1‖²/s_min + Σ|λ|)/(1·r) (u = 2⁻⁵³). The node bounds of Q_h add
:func:`_quadratic_allowance`, 64(N + 2)u times the sum of the magnitudes of every term Q_h is built from (W, W²,
λ, α, E and h's terms), over (1·r)·s_min: a bound of Q_h is a sum of such terms.
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
        self.w_mag = float(np.sum((np.abs(W) @ np.ones(len(P))) ** 2))
        """‖|W| 1‖², which bounds the numerator's terms of every family (the rounding allowances)."""


def _values(ctx: _Context, fam: FrequencyFamily, sets: np.ndarray) -> np.ndarray:
    """F(x) of each row of ``sets`` (indicators over all N), not divided by 1·r."""
    R = fam.r0[None, :] + fam.delta * sets
    return np.sum((R @ ctx.W) ** 2, axis=1) / (R @ ctx.P) - R @ ctx.lam


@dataclass
class _FamilyQuadratic:
    """The family's reduced value as a quadratic in the indicator y of A over the free items (module doc):
    Q_h(y) = const0 − h·norm·s0 + Σ_i (lin_i − h·norm·δ·Pf_i) y_i + Σ_{i<j} E_ij y_i y_j  for |y| = size,
    with the additive part of the pair coefficients moved into ``lin``."""

    fam: FrequencyFamily
    const0: float
    lin: np.ndarray
    Pf: np.ndarray
    E: np.ndarray
    s0: float
    mag: float
    """Sum of the magnitudes of every term Q_h is built from (for the rounding allowance), h's terms excluded."""


def _family_quadratic(ctx: _Context, fam: FrequencyFamily) -> _FamilyQuadratic:
    W, W2, P, lam, d = ctx.W, ctx.W2, ctx.P, ctx.lam, fam.delta
    f = fam.free
    c = W @ fam.r0
    Wc = W @ c
    s0 = float(P @ fam.r0)
    L0 = float(lam @ fam.r0)
    Pf, lf = P[f], lam[f]
    lin = 2 * d * Wc[f] + d * d * np.diag(W2)[f] - L0 * d * Pf - d * s0 * lf - d * d * lf * Pf
    C = d * d * (2 * W2[np.ix_(f, f)] - np.outer(lf, Pf) - np.outer(Pf, lf))
    np.fill_diagonal(C, 0.0)
    nf = len(f)
    alpha = np.zeros(nf)
    if nf > 2:  # least squares C_ij ≈ α_i + α_j over i ≠ j (normal equations in closed form)
        S = C.sum(axis=1)
        alpha = (S - S.sum() / (2 * nf - 2)) / (nf - 2)
    E = C - alpha[:, None] - alpha[None, :]
    np.fill_diagonal(E, 0.0)
    mag = (
        16.0 * ctx.w_mag
        + 4.0 * float(np.abs(lam).sum())
        + float(np.abs(lin).sum())
        + float(np.abs(C).sum())
        + fam.size * float(np.abs(alpha).sum())
        + float(np.abs(E).sum())
    )
    return _FamilyQuadratic(fam, float(c @ c) - L0 * s0, lin + (fam.size - 1) * alpha, Pf, E, s0, mag)


def _quadratic_allowance(qd: _FamilyQuadratic, h: float, s_min: float) -> float:
    """Rounding of any Q_h bound, on the F/(1·r) scale: 64(N + 2)u·(mag + 4|h|·norm)/(norm·s_min)."""
    n = len(qd.fam.r0)
    return 64 * (n + 2) * U * (qd.mag + 4 * abs(h) * qd.fam.norm) / (qd.fam.norm * s_min)


def _top_sum(v: np.ndarray, k: int) -> np.ndarray:
    """Per row of v, the sum of its k largest entries (0 when k = 0)."""
    if k <= 0:
        return np.zeros(len(v))
    return -np.partition(-v, k - 1, axis=1)[:, :k].sum(axis=1)


def _top(coef: np.ndarray, k: int) -> np.ndarray:
    return np.argpartition(-coef, k - 1)[:k] if 0 < k < len(coef) else np.arange(len(coef))[:k]


def _node_bound(qd: _FamilyQuadratic, h: float, inside: np.ndarray, free: np.ndarray):
    """(upper bound of Q_h over the node, the bound's maximising set as positions in ``free``, the Gilmore–Lawler
    partner bound per free item). ``inside`` and ``free`` are positions among the family's free items.

    Gilmore–Lawler on the pairs of the k chosen items: Σ_{i<j} E_ij y_i y_j ≤ ½ Σ_i y_i (sum of the k − 1 largest
    E_ij, j ∈ free ∖ {i}); and the same on the nf − k items left out (y = 1 − y': Σ_{i<j} E_ij y_i y_j =
    S − Σ_i y'_i R_i + Σ_{i<j} E_ij y'_i y'_j, R_i = Σ_{j≠i} E_ij, S = ½ Σ_i R_i); the smaller is returned."""
    E = qd.E
    k = qd.fam.size - len(inside)
    lin = qd.lin - h * qd.fam.norm * qd.fam.delta * qd.Pf
    const = qd.const0 - h * qd.fam.norm * qd.s0
    if len(inside):
        const += float(lin[inside].sum()) + 0.5 * float(E[np.ix_(inside, inside)].sum())
        coef = lin[free] + E[np.ix_(free, inside)].sum(axis=1)
    else:
        coef = lin[free].copy()
    Es = E[np.ix_(free, free)]
    Eneg = Es.copy()
    np.fill_diagonal(Eneg, -np.inf)
    g = 0.5 * _top_sum(Eneg, k - 1)
    v = coef + g
    top = _top(v, k)
    ub = const + float(v[top].sum())
    nf = len(free)
    kc = nf - k
    if 0 < kc < k:
        R = Es.sum(axis=1)
        vc = 0.5 * _top_sum(Eneg, kc - 1) - coef - R
        out = _top(vc, kc)
        ub_c = const + float(coef.sum()) + 0.5 * float(R.sum()) + float(vc[out].sum())
        if ub_c < ub:
            keep = np.ones(nf, bool)
            keep[out] = False
            return ub_c, np.flatnonzero(keep), g, Es
    return ub, top, g, Es


def _enumerate(ctx, fam, inside, free, k):
    """Every set of the node: (indicator rows over all N, their F values). ``inside`` and ``free`` are items."""
    combos = np.array(list(combinations(range(len(free)), k)), int).reshape(-1, k) if k else np.zeros((1, 0), int)
    X = np.zeros((len(combos), len(ctx.P)))
    if len(inside):
        X[:, inside] = 1.0
    if k:
        X[np.arange(len(combos))[:, None], free[combos]] = 1.0
    return X, _values(ctx, fam, X)


def _s_low(qd: _FamilyQuadratic, inside: np.ndarray, free: np.ndarray, k: int) -> float:
    """The least Pᵀr over the node's sets (rounded down)."""
    Pf = qd.Pf
    s = qd.s0 + qd.fam.delta * (
        float(Pf[inside].sum()) + (float(np.partition(Pf[free], k - 1)[:k].sum()) if k else 0.0)
    )
    return max(s * (1 - 4 * len(qd.fam.r0) * U), 1e-300)


def price_family(
    ctx: _Context,
    fam: FrequencyFamily,
    prune: float,
    node_limit: int = NODE_LIMIT,
    keep: int = 5,
    deadline: float = math.inf,
    root_bound: float = math.inf,
    qd: _FamilyQuadratic | None = None,
):
    """Branch and bound for max over the family of F(x)/(1·r) (module docstring), rounding allowance included.

    The search decides, node by node, whether some set has F/(1·r) > h, h = max(prune, best value found): with
    Q_h(y) = F·Pᵀr − h·(1·r)·Pᵀr (a quadratic in y), a node whose bound of Q_h is ≤ 0 holds no such set; a node
    left open certifies h + max(0, bound)/((1·r)·s_lo), s_lo the least Pᵀr over the node.

    Returns (sets, values, certified, nodes, finished): up to ``keep`` best sets found (indicator rows) with
    value > prune, and ``certified`` ≥ the family's maximum: max(prune, best value, bounds of the nodes left open
    when the node limit or the deadline stopped the search) plus the rounding allowance."""
    n = len(ctx.P)
    norm = fam.norm
    qd = qd if qd is not None else _family_quadratic(ctx, fam)
    free_items = np.asarray(fam.free, int)
    nf_all = len(free_items)
    best = -math.inf
    pool: dict = {}
    s_min = _s_low(qd, np.zeros(0, int), np.arange(nf_all), fam.size)

    def offer(X, vals):
        nonlocal best
        if len(vals) == 0:
            return
        vals = vals / norm
        best = max(best, float(vals.max()))
        for t in np.flatnonzero(vals > prune):
            key = X[t].tobytes()
            if key not in pool:
                pool[key] = (float(vals[t]), X[t].copy())
        if len(pool) > 4 * keep:
            for kk in sorted(pool, key=lambda z: pool[z][0])[: len(pool) - 2 * keep]:
                del pool[kk]

    def cut():
        return max(prune, best)

    stack = [(root_bound, [], [])]  # (bound inherited from the parent, positions in, positions out)
    open_cert = -math.inf
    h_max = 0.0
    nodes = 0
    finished = True
    while stack:
        parent_cert, inside_l, out_l = stack.pop()
        if parent_cert <= cut():
            continue
        if nodes >= node_limit or (nodes % 16 == 0 and time.perf_counter() > deadline):
            stack.append((parent_cert, inside_l, out_l))
            open_cert = max(s[0] for s in stack)
            finished = False
            break
        nodes += 1
        inside = np.array(inside_l, int)
        mask = np.ones(nf_all, bool)
        mask[inside_l] = False
        mask[out_l] = False
        free = np.flatnonzero(mask)
        k = fam.size - len(inside_l)
        if k < 0 or k > len(free):
            continue
        if math.comb(len(free), k) <= ENUMERATE_MAX:
            X, vals = _enumerate(ctx, fam, free_items[inside], free_items[free], k)
            offer(X, vals)
            continue
        if best == -math.inf:  # a first set, so that h is finite: the largest linear coefficients
            lin0 = qd.lin[free]
            X = np.zeros((1, n))
            X[0, free_items[inside]] = 1.0
            X[0, free_items[free[_top(lin0, k)]]] = 1.0
            offer(X, _values(ctx, fam, X))
        h = cut()
        h_max = max(h_max, abs(h))
        ub, top, g, Es = _node_bound(qd, h, inside, free)
        X = np.zeros((1, n))
        X[0, free_items[inside]] = 1.0
        X[0, free_items[free[top]]] = 1.0
        offer(X, _values(ctx, fam, X))  # the bound's maximising set is a set of the node
        if ub <= 0.0:
            continue
        node_cert = h + ub / (norm * _s_low(qd, inside, free, k))
        if node_cert <= cut():
            continue
        # branching item: the top set's item whose partner bound overestimates most
        over = g[top] - 0.5 * (Es[np.ix_(top, top)].sum(axis=1))
        item = int(free[top[int(np.argmax(over))]])
        stack += [(node_cert, inside_l, out_l + [item]), (node_cert, inside_l + [item], out_l)]
    cert = max(open_cert, best, prune)
    cert += _quadratic_allowance(qd, max(h_max, abs(cert) if math.isfinite(cert) else 0.0), s_min)
    ranked = sorted(pool.values(), key=lambda z: -z[0])[:keep]
    sets = np.array([z[1] for z in ranked]).reshape(-1, n)
    vals = np.array([z[0] for z in ranked])
    return sets, vals, cert, nodes, finished


def family_root_bound(ctx: _Context, fam: FrequencyFamily, prune: float, qd: _FamilyQuadratic) -> float:
    """An upper bound on max F/(1·r) over the family from its root node alone (rounding allowance excluded)."""
    free = np.arange(len(fam.free))
    k = fam.size
    if math.comb(len(free), k) <= ENUMERATE_MAX:
        _, vals = _enumerate(ctx, fam, np.zeros(0, int), fam.free, k)
        return float(vals.max()) / fam.norm
    lin0 = qd.lin
    X = np.zeros((1, len(ctx.P)))
    X[0, fam.free[_top(lin0, k)]] = 1.0
    h = max(prune, float(_values(ctx, fam, X)[0]) / fam.norm)
    ub = _node_bound(qd, h, np.zeros(0, int), free)[0]
    return h + max(ub, 0.0) / (fam.norm * _s_low(qd, np.zeros(0, int), free, k))


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
    quads = [_family_quadratic(ctx, fam) for fam in fams]
    roots = [family_root_bound(ctx, fam, prune, qd) for fam, qd in zip(fams, quads)]
    order = np.argsort(roots)[::-1]
    cert = -math.inf
    rays, values, nodes, left = [], [], 0, 0
    found = -math.inf
    for f in order:
        fam = fams[f]
        allow = family_allowance(fam, ctx.W, ctx.P, ctx.lam)
        cut = max(prune, share * found)
        if roots[f] <= cut or (enough is not None and sum(len(v) for v in values) >= enough):
            s_min = _s_low(quads[f], np.zeros(0, int), np.arange(len(fam.free)), fam.size)
            cert = max(cert, roots[f] + allow + _quadratic_allowance(quads[f], roots[f], s_min))
            continue
        sets, vals, c, nd, done = price_family(ctx, fam, cut, node_limit, keep, deadline, roots[f], quads[f])
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
