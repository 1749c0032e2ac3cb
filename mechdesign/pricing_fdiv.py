"""Exact pricing for f-divergence column generation (see :mod:`mechdesign.sublinear`).

The utility of a column k is μ(k) = G(P0·k, P1·k) with G(a, b) = b f(a/b), the perspective of the
convex f: convex and positively homogeneous in (a, b). On a ray family of the min_mass / simplex cone
(:mod:`mechdesign.ray_families`) a ray is r = base + γ 1_A with |A| fixed, so its reduced value is

    Φ(A)/norm,   Φ(A) = G(a0 + γ P0(A), b0 + γ P1(A)) − l0 − γ λ(A),

a CONVEX function of three additive set functions (unlike mutual information, whose reduced
value is concave in P(A): :mod:`mechdesign.pricing_mi`). This makes the pricing polynomial:

**Supporting lines.** For every likelihood ratio u > 0, G(a, b) ≥ f'(u) a + (f(u) − u f'(u)) b,
with equality at u = a/b. Hence, with the item scores s_x(u) = f'(u) P0_x + (f(u) − u f'(u)) P1_x − λ_x,

    max_{|A|=q} Φ(A) = sup_u [ c(u) + γ · (sum of the q largest s_x(u)) ],

and the maximum is attained by ANY top-q set at u* = the ratio of an optimal ray (a top-q set B at
u* has Φ(B) ≥ its supporting line at u* = the right side at u* = Φ(A*)). The top-q sets change only
where two scores cross; for a pair (x, y) the difference h(u) = s_x(u) − s_y(u) has
h'(u) = f''(u)(Δ0 − u Δ1), so it is monotone on each side of u = Δ0/Δ1 and has at most two roots,
found by bisection in log u. Between consecutive crossings the sorted order is constant (and a set
top-q on an open interval stays top-q at its end points), so one sort per interval lists, for every
family at once, a set containing an optimum: N(N−1) roots at most, O(N³ log N) work per round, exact
up to floating-point rounding. Only ratios in [min P0/P1, max P0/P1] matter (every ray's ratio lies
there); they are clamped to [1e-200, 1e200]. For tv (f' jumps at 1) the kink u = 1 is added.
"""
from __future__ import annotations

import math

import numpy as np

from .ray_families import family_rays, indicator

__all__ = ["FDivPricer", "f_derivatives", "item_scores", "crossing_ratios"]

U_MIN, U_MAX = 1e-200, 1e200
BISECTION_STEPS = 200
MAX_NEW_PER_FAMILY = 2


def f_derivatives(f):
    """(f, f', kinks) for a spec's f: vectorised callables on u > 0 and the points where f' jumps."""
    if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
        return (lambda u: u * np.log(u)), (lambda u: np.log(u) + 1.0), []
    if f == "tv":
        return (lambda u: 0.5 * np.abs(u - 1.0)), (lambda u: 0.5 * np.sign(u - 1.0)), [1.0]
    if f == "hellinger":
        return (lambda u: (np.sqrt(u) - 1.0) ** 2), (lambda u: 1.0 - 1.0 / np.sqrt(u)), []
    if f == "chi2":
        return (lambda u: (u - 1.0) ** 2), (lambda u: 2.0 * (u - 1.0)), []
    a = float(f.alpha)
    if a < 1:
        return (lambda u: 1.0 - u ** a), (lambda u: -a * u ** (a - 1.0)), []
    return (lambda u: u ** a - 1.0), (lambda u: a * u ** (a - 1.0)), []


def item_scores(f, u: np.ndarray, P0, P1, lam) -> np.ndarray:
    """s_x(u) = f'(u) P0_x + (f(u) − u f'(u)) P1_x − λ_x for every u (rows) and item x (columns)."""
    fu, dfu, _ = f_derivatives(f)
    u = np.asarray(u, float)[:, None]
    d = dfu(u)
    return d * P0[None, :] + (fu(u) - u * d) * P1[None, :] - lam[None, :]


def _pair_difference(f, u, d0, d1, dl):
    fu, dfu, _ = f_derivatives(f)
    with np.errstate(over="ignore", invalid="ignore"):
        d = dfu(u)
        return d * d0 + (fu(u) - u * d) * d1 - dl


def crossing_ratios(f, P0, P1, lam, lo: float, hi: float) -> np.ndarray:
    """Every u in (lo, hi) where two item scores cross (up to bisection accuracy).

    For each pair the difference is monotone on (lo, u0) and (u0, hi), u0 = Δ0/Δ1 clipped to
    [lo, hi]; a sign change on a piece is bracketed and bisected in log u.
    """
    i, j = np.triu_indices(len(P0), 1)
    d0, d1, dl = P0[i] - P0[j], P1[i] - P1[j], lam[i] - lam[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        u0 = np.where(d1 != 0, d0 / d1, hi)
    u0 = np.clip(np.nan_to_num(u0, nan=hi, posinf=hi, neginf=lo), lo, hi)
    roots = []
    for a_end, b_end in ((np.full_like(u0, lo), u0), (u0, np.full_like(u0, hi))):
        ha = _pair_difference(f, a_end, d0, d1, dl)
        hb = _pair_difference(f, b_end, d0, d1, dl)
        live = np.isfinite(ha) & np.isfinite(hb) & (np.sign(ha) * np.sign(hb) < 0) & (b_end > a_end)
        if not live.any():
            continue
        la, lb = np.log(a_end[live]), np.log(b_end[live])
        sa = np.sign(ha[live])
        args = d0[live], d1[live], dl[live]
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (la + lb)
            hm = _pair_difference(f, np.exp(mid), *args)
            same = np.sign(hm) == sa
            la = np.where(same, mid, la)
            lb = np.where(same, lb, mid)
            if np.all(lb - la < 1e-13):
                break
        roots.append(np.exp(0.5 * (la + lb)))
    return np.concatenate(roots) if roots else np.zeros(0)


class FDivPricer:
    """One pricing round of f-divergence column generation: exact by the ratio sweep (module docstring)."""

    method = "exact pricing by a likelihood-ratio sweep"

    def __init__(self, spec, fams):
        from .sublinear import _perspective

        obj = spec.objective
        self.f = obj.f
        self.P0, self.P1 = (np.array([float(p) for p in pr]) for pr in obj.priors)
        self.G = lambda a, b: _perspective(self.f, a, b)
        self.fams, self.n = fams, spec.n
        pos = self.P1 > 0
        ratios = self.P0[pos] / self.P1[pos]
        self.lo = max(float(ratios.min()) if pos.any() else U_MIN, U_MIN)
        self.hi = U_MAX if (~pos & (self.P0 > 0)).any() else min(float(ratios.max()), U_MAX)
        self.hi = max(self.hi, self.lo)

    def sample_ratios(self, lam: np.ndarray) -> np.ndarray:
        """One ratio inside every interval between consecutive crossings (and the crossings, kinks, ends)."""
        _, _, kinks = f_derivatives(self.f)
        pts = np.concatenate([[self.lo, self.hi], crossing_ratios(self.f, self.P0, self.P1, lam, self.lo, self.hi),
                              [k for k in kinks if self.lo < k < self.hi]])
        pts = np.unique(pts)
        mids = np.exp(0.5 * (np.log(pts[:-1]) + np.log(pts[1:]))) if len(pts) > 1 else np.zeros(0)   # no overflow
        return np.unique(np.concatenate([pts, mids]))

    def price(self, lam: np.ndarray, floor: float, out_of_time: bool = False):
        """(new rays as a list of arrays, certified g, note): g is the exact max reduced value."""
        n, P0, P1 = self.n, self.P0, self.P1
        u = self.sample_ratios(lam)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = item_scores(self.f, u, P0, P1, lam)
        if not np.all(np.isfinite(scores)):   # overflow (extreme ratios): no exactness claim, no bound
            keep = np.all(np.isfinite(scores), axis=1)
            u, scores, g_floor = u[keep], scores[keep], math.inf
        else:
            g_floor = -math.inf
        order = np.argsort(-scores, axis=1, kind="stable")   # (T, n)
        c0, c1, cl = (np.cumsum(v[order], axis=1) for v in (P0, P1, lam))                 # prefix sums
        g_cert, new = -math.inf, []
        pos_j = np.argsort(order, axis=1)   # pos_j[t, x]: rank of item x at ratio t
        for kind, size, level in self.fams:
            if kind == "two":
                m, gamma = level, 1.0 - level
                a = m + gamma * c0[:, size - 1]
                b = m + gamma * c1[:, size - 1]
                val = (self.G(a, b) - m * lam.sum() - gamma * cl[:, size - 1]) / (size + (n - size) * m)
                g_cert = max(g_cert, float(val.max()))
                new += self._best(val, lambda t: order[t, :size], kind, level, None, floor)
                continue
            w = level
            for j in range(n):
                if size == 0:
                    X0 = X1 = V = np.zeros(len(u))
                else:
                    after = pos_j[:, j] >= size             # j not among the first `size`: they are the set
                    k = size - 1
                    X0 = np.where(after, c0[:, k], c0[:, size] - P0[j])
                    X1 = np.where(after, c1[:, k], c1[:, size] - P1[j])
                    V = np.where(after, cl[:, k], cl[:, size] - lam[j])
                a, b = w * P0[j] + X0, w * P1[j] + X1
                val = (self.G(a, b) - w * lam[j] - V) / (size + w)
                g_cert = max(g_cert, float(val.max()))

                def set_of(t, j=j):
                    row = order[t, :size + 1]
                    return row[row != j][:size]
                new += self._best(val, set_of, kind, level, j, floor)
        if g_floor == math.inf:
            return new, math.inf, "scores overflowed at extreme likelihood ratios: no finite bound"
        return new, g_cert, ""

    def _best(self, val, set_of, kind, level, j, floor):
        """The rays of the (up to MAX_NEW_PER_FAMILY) best distinct sets with reduced value > floor."""
        out, seen = [], set()
        for t in np.argsort(-val):
            if val[t] <= floor or len(out) >= MAX_NEW_PER_FAMILY:
                break
            key = tuple(sorted(set_of(t).tolist()))
            if key in seen:
                continue
            seen.add(key)
            out.append(np.array(key, int))
        if not out:
            return []
        return [family_rays(indicator(out, self.n), kind, level, j)]
