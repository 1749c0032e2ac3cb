"""The root pass of mutual-information pricing, vectorised over slopes and ray families (what makes N = 100 tractable).

Every family of :class:`~mechdesign.objectives.pricing_mi.MIFamily` asks for

    max over sets A of the free items, |A| = k, of  F(A) = C + D·U − h(α + γ·U) − β·V,   U = P(A), V = λ(A),

and :func:`~mechdesign.objectives.pricing_mi.node_bound` bounds it at the root by the Lagrangian relaxation of
U = P(A): for EVERY slope s,

    max F ≤ L(s) = sup_X [φ(X) − βsX] + β·(sum of the k largest s·P_x − λ_x over the free items),   φ(X) = C + DX − h(α + γX).

The top-k sets of one slope s are prefixes of ONE order, that of s·P_x − λ_x over all N items: a 'two' family of
size q takes the first q; a 'zero' family (j excluded, size a) the first a, or the first a + 1 without j when j is
among them. So one sort per slope serves all ~2N families, and the prefix sums of P, λ and s·P − λ along it give
U, V and the top-k sum of every family at once. :func:`root_pass` evaluates every family at a set of slopes that
starts at each family's bracket (the slopes whose maximiser X*(s) is the largest and the smallest U of its sets)
and is refined by the Newton step of ``node_bound`` (the slope s' with X*(s') = U of the current top-k set, from the
best slope so far) and bisection of the bracket, for a few rounds, all families at once in numpy.

It returns, per family, the smallest L met (a valid upper bound whatever slopes were tried: no rounding allowance
beyond the one of ``node_bound``, which the column generation's floor absorbs) and the best distinct sets met (the
hull vertices of the root, the sets the quick pass of the branch and bound found, without its Python loop).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FamilyArrays", "root_pass", "ROOT_ROUNDS"]

ROOT_ROUNDS = 6
"""Refinement rounds of the slopes (each: one sort per new slope, all families evaluated at every slope)."""

_HASH_SEED = 0x5EED


class FamilyArrays:
    """The families of one pricing round as arrays (index f): C, D, α, γ, β, norm, size k, excluded item j (−1
    for 'two')."""

    def __init__(self, fams, n: int):
        self.fams = fams
        self.n = n
        self.C = np.array([f.C for f in fams], float)
        self.D = np.array([f.D for f in fams], float)
        self.alpha = np.array([f.alpha for f in fams], float)
        self.gamma = np.array([f.gamma for f in fams], float)
        self.beta = np.array([f.beta for f in fams], float)
        self.norm = np.array([f.norm for f in fams], float)
        self.k = np.array([f.k for f in fams], int)
        self.j = np.array([-1 if f.j is None else f.j for f in fams], int)

    def s_root(self, X):
        """Per family (broadcast): the slope whose maximiser of φ(X') − βsX' is X' = X."""
        sh = np.maximum(self.alpha + self.gamma * X, 1e-300)
        return (self.D - self.gamma * (np.log(sh) + 1.0)) / self.beta

    def conj(self, s):
        """sup_X φ(X) − βsX per family (rows) and slope (columns); +∞ where exp overflows (still a bound)."""
        b, g = self.beta[:, None], self.gamma[:, None]
        t = (self.D[:, None] - b * s) / g - 1.0
        over = t > 700.0
        t = np.minimum(t, 700.0)
        sh = np.exp(t)
        X = (sh - self.alpha[:, None]) / g
        out = self.C[:, None] + (self.D[:, None] - b * s) * X - sh * t
        return np.where(over, np.inf, out)

    def value(self, U, V):
        """F at set sums U, V (arrays shaped like the family axis first)."""
        a, g = self.alpha[:, None], self.gamma[:, None]
        s = a + g * U
        h = np.where(s > 0, s * np.log(np.where(s > 0, s, 1.0)), 0.0)
        return self.C[:, None] + self.D[:, None] * U - h - self.beta[:, None] * V


def _prefix(P, lam, z, s):
    """For each slope: the order of s·P − λ (decreasing), its inverse, and prefix sums (leading 0) of P, λ,
    s·P − λ and of the set hashes z (int64, wrapping: a set's hash does not depend on the order of its items)."""
    sc = s[:, None] * P[None, :] - lam[None, :]
    order = np.argsort(-sc, axis=1, kind="stable")
    m, n = order.shape
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(n)[None, :].repeat(m, 0), axis=1)

    def cum(a):
        out = np.zeros((m, n + 1), a.dtype)
        np.cumsum(a, axis=1, out=out[:, 1:])
        return out

    return (
        order,
        pos,
        cum(P[order]),
        cum(lam[order]),
        cum(np.take_along_axis(sc, order, axis=1)),
        cum(z[order]),
    )


def _family_sums(fa: FamilyArrays, P, lam, z, s):
    """U, V, top-k sum, set hash and prefix length of every family (rows) at every slope (columns); for a 'zero'
    family whose j lies in the prefix, the prefix is one longer and j is taken out."""
    order, pos, cU, cV, cT, cH = _prefix(P, lam, z, s)
    k = fa.k[None, :].repeat(len(s), 0)  # slopes × families
    zero = fa.j >= 0
    jj = np.where(zero, fa.j, 0)
    inside = zero[None, :] & (pos[:, jj] < k)
    L = k + inside
    rows = np.arange(len(s))[:, None]
    U, V, T, H = cU[rows, L], cV[rows, L], cT[rows, L], cH[rows, L]
    sc_j = s[:, None] * P[jj][None, :] - lam[jj][None, :]
    U = np.where(inside, U - P[jj][None, :], U)
    V = np.where(inside, V - lam[jj][None, :], V)
    T = np.where(inside, T - sc_j, T)
    H = np.where(inside, H - z[jj][None, :], H)
    return order, U.T, V.T, T.T, H.T, L.T, inside.T


def root_pass(
    fa: FamilyArrays, P: np.ndarray, lam: np.ndarray, prune: np.ndarray, keep: int, rounds: int = ROOT_ROUNDS
):
    """Root Lagrangian bounds and hull-vertex sets of every family (module docstring).

    ``prune`` is per family the value of F (not divided by the norm) a set must exceed to be returned.
    Returns (bound, best, sets): per family the smallest L met (≥ max F over the family), the largest F met,
    and a list of up to ``keep`` index arrays (items of the full alphabet) of distinct sets with F > prune,
    best first.
    """
    n, nf = len(P), len(fa.k)
    z = np.random.default_rng(_HASH_SEED).integers(-(2**62), 2**62, n, dtype=np.int64)
    s_a, s_b = _root_brackets(fa, P)
    slopes = np.concatenate([s_a, s_b])
    fam_idx = np.arange(nf)
    best_L = np.full(nf, np.inf)
    bestF = np.full(nf, -np.inf)
    lo_s, hi_s = np.minimum(s_a, s_b), np.maximum(s_a, s_b)
    lo_U, hi_U = np.full(nf, np.nan), np.full(nf, np.nan)
    lo_V, hi_V = np.full(nf, np.nan), np.full(nf, np.nan)
    best_at = np.zeros((nf, 4), int)  # (round, slope index, prefix length, j taken out) of the best set met
    orders, cand = [], []  # cand: (F, hash, family, round, slope index, prefix length, j taken out)
    for rnd in range(rounds + 1):
        slopes = np.unique(slopes[np.isfinite(slopes)])
        if len(slopes) == 0:
            break
        order, U, V, T, H, Lp, inside = _family_sums(fa, P, lam, z, slopes)
        orders.append(order)
        S = slopes[None, :]
        Lval = fa.conj(S) + fa.beta[:, None] * T
        F = fa.value(U, V)
        iF = np.argmax(F, axis=1)
        Fmax = F[fam_idx, iF]
        up = Fmax > bestF
        best_at[up] = np.column_stack([np.full(nf, rnd), iF, Lp[fam_idx, iF], inside[fam_idx, iF]])[up]
        bestF = np.maximum(bestF, Fmax)
        best_L = np.minimum(best_L, Lval.min(axis=1))
        # the bracket shrinks by the sign of L'(s) = β(U(s) − X*(s)) at the slopes inside it
        t = (fa.D[:, None] - fa.beta[:, None] * S) / fa.gamma[:, None] - 1.0
        Xs = (np.exp(np.minimum(t, 700.0)) - fa.alpha[:, None]) / fa.gamma[:, None]
        inb = (S >= lo_s[:, None]) & (S <= hi_s[:, None])
        neg = inb & (U <= Xs)
        pos_ = inb & (U >= Xs)
        il = np.argmax(np.where(neg, S, -np.inf), axis=1)
        ih = np.argmin(np.where(pos_, S, np.inf), axis=1)
        hasl, hash_ = neg.any(axis=1), pos_.any(axis=1)
        lo_s = np.where(hasl, slopes[il], lo_s)
        lo_U = np.where(hasl, U[fam_idx, il], lo_U)
        lo_V = np.where(hasl, V[fam_idx, il], lo_V)
        hi_s = np.where(hash_, slopes[ih], hi_s)
        hi_U = np.where(hash_, U[fam_idx, ih], hi_U)
        hi_V = np.where(hash_, V[fam_idx, ih], hi_V)
        above = F > prune[:, None]
        if above.any():
            ff, ss = np.nonzero(above)
            cand.append((F[ff, ss], H[ff, ss], ff, np.full(len(ff), rnd), ss, Lp[ff, ss], inside[ff, ss]))
        if rnd == rounds:
            break
        # Newton steps from both ends of the bracket (as node_bound), and its midpoint
        tA = fa.s_root(np.where(np.isnan(lo_U), 0.0, lo_U))
        tB = fa.s_root(np.where(np.isnan(hi_U), 0.0, hi_U))
        open_ = hi_s > lo_s
        ok_a = open_ & ~np.isnan(lo_U) & (tA > lo_s) & (tA < hi_s)
        ok_b = open_ & ~np.isnan(hi_U) & (tB > lo_s) & (tB < hi_s)
        # the slope where the top-k sums of the two end sets cross (s·U − V equal): the kink of L between them
        dU = hi_U - lo_U
        with np.errstate(invalid="ignore", divide="ignore"):
            kink = (hi_V - lo_V) / dU
        mid = np.where((dU > 0) & (kink > lo_s) & (kink < hi_s), kink, 0.5 * (lo_s + hi_s))
        slopes = np.concatenate([tA[ok_a], tB[ok_b], mid[open_]])
    best_sets = [_set_at(fa, orders, f, *best_at[f]) for f in range(nf)]
    return best_L, bestF, _kept_sets(fa, orders, cand, keep), best_sets


def _root_brackets(fa: FamilyArrays, P: np.ndarray):
    """(s_a, s_b): the bracket of each family's slope, X*(s_a) = the largest U of its sets, X*(s_b) = the
    smallest."""
    n = len(P)
    Ps = np.sort(P)
    cs = np.concatenate([[0.0], np.cumsum(Ps)])
    cl = np.concatenate([[0.0], np.cumsum(Ps[::-1])])
    zero = fa.j >= 0
    Pj = np.where(zero, P[np.where(zero, fa.j, 0)], 0.0)
    rank = np.searchsorted(Ps, Pj)  # items below P_j: j is among the k largest when n − rank ≤ k (ties: still a bound)
    kk = np.minimum(fa.k, n)
    hi = np.where(zero & (n - rank <= kk), cl[np.minimum(kk + 1, n)] - Pj, cl[kk])
    lo = np.where(zero & (rank < kk), cs[np.minimum(kk + 1, n)] - Pj, cs[kk])
    hi, lo = np.maximum(hi, lo), np.minimum(hi, lo)
    return fa.s_root(hi), fa.s_root(lo)


def _set_at(fa: FamilyArrays, orders, f: int, r, i, ln, ins) -> np.ndarray:
    """The set of family f met in round r at slope index i: the first ``ln`` items of that slope's order,
    without j when ``ins`` (j taken out), sorted."""
    items = orders[r][i, :ln]
    return np.sort(items[items != fa.j[f]] if ins else items)


def _kept_sets(fa: FamilyArrays, orders, cand, keep: int) -> list[list[np.ndarray]]:
    """Per family, up to ``keep`` distinct sets (by hash) of the candidates ``cand``, best first."""
    sets = [[] for _ in range(len(fa.k))]
    if cand:
        Fv, Hv, fv, Rv, Sv, Lv, Iv = (np.concatenate([c[i] for c in cand]) for i in range(7))
        srt = np.lexsort((-Fv, Hv, fv))  # by family, then hash, best value first
        first = np.ones(len(srt), bool)
        first[1:] = (fv[srt][1:] != fv[srt][:-1]) | (Hv[srt][1:] != Hv[srt][:-1])
        srt = srt[first]
        srt = srt[np.lexsort((-Fv[srt], fv[srt]))]
        fs = fv[srt]
        start = np.searchsorted(fs, fs, side="left")  # the first position of each family's run
        srt = srt[np.arange(len(srt)) - start < keep]
        for t in srt:
            f = int(fv[t])
            items = orders[Rv[t]][Sv[t], : Lv[t]]
            if Iv[t]:
                items = items[items != fa.j[f]]
            sets[f].append(np.sort(items))
    return sets


def swap_pass(fa: FamilyArrays, P: np.ndarray, lam: np.ndarray, best_sets, prune: np.ndarray, keep: int, which):
    """Sets one swap away from each family's best set (one item out, one free item in) with F > prune: up to
    ``keep`` per family, best first (lists of index arrays). A heuristic: the sets need not be hull vertices, which
    the root pass cannot reach; the branch and bound finds such sets too, at a Python loop per node."""
    n = len(P)
    out = []
    for f, A in enumerate(best_sets):
        k = len(A)
        if not which[f]:
            out.append([])
            continue
        free = np.ones(n, bool)
        free[A] = False
        if fa.j[f] >= 0:
            free[fa.j[f]] = False
        B = np.flatnonzero(free)
        if k == 0 or len(B) == 0:
            out.append([])
            continue
        U = P[A].sum() + (P[B][None, :] - P[A][:, None])
        V = lam[A].sum() + (lam[B][None, :] - lam[A][:, None])
        s = fa.alpha[f] + fa.gamma[f] * U
        h = np.where(s > 0, s * np.log(np.where(s > 0, s, 1.0)), 0.0)
        F = fa.C[f] + fa.D[f] * U - h - fa.beta[f] * V
        flat = F.ravel()
        m = min(keep, flat.size)
        top = np.argpartition(-flat, m - 1)[:m]
        top = top[np.argsort(-flat[top])]
        top = top[flat[top] > prune[f]]
        res = []
        for t in top:
            i, o = divmod(int(t), len(B))
            S = A.copy()
            S[i] = B[o]
            res.append(np.sort(S))
        out.append(res)
    return out
