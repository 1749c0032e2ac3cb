"""A third lower bound for frequency estimation over the simplex / min_mass ray families: the structured dual of
:mod:`mechdesign.objectives.frequency_additive_dual` with its head block replaced by one rank-one term over every
symbol ("the rank-one dual").

For any S ⪰ 0 and λ (module doc of frequency_additive_dual; Boyd and Vandenberghe, Convex Optimization §7.5)

    OPT ≥ 2 tr S^{1/2} − ‖P‖² − Σ_x λ_x − N·max(0, h),   h = max over every extreme ray r of ρ(r),
    ρ(r) = (rᵀ S r/(Pᵀ r) − λ·r)/(1·r).

Here S is taken of the form

    S(D, u, λ, w; v) = ½ (diag(D) + u 1ᵀ + 1 uᵀ + λ Pᵀ + P λᵀ) − w v vᵀ,     w > 0, v a direction,

so that ρ(r)·(1·r)·(Pᵀr) = ½ D·(r∘r) + (1·r)(u·r) − w (v·r)². Why: at N = 50 (ε-LDP, Dirichlet(1) prior) the
head block of the structured dual is, to 4e-4 of its largest entry, −a aᵀ with a falling in P, and a head of h
symbols truncates a to them; the rank-one term keeps a on every symbol.

**For a fixed direction the program is concave.** Every cut ½ D·(r∘r) + (1·r)(u·r) − w (v·r)² ≤ 0 is linear in
x = (D, u, λ, w), and the objective is concave in x (tr S^{1/2} is concave, S affine in x): the barrier cutting
planes of the structured dual solve it over its 3N + 1 numbers (:func:`_fixed_direction`).

**Pricing** (:class:`_Family`). On a family (r = r₀ + δ·1_A, |A| = k, 1·r fixed) q = v·r = β + γ·y is affine in
the indicator y of A, and −q² ≤ t² − 2tq for every t (equality at t = q). For each t the numerator is then affine
in y, so Dinkelbach's method maximises the ratio exactly by sorting; the result h(t) bounds the family's largest
ρ·(1·r) from above for every t. h is convex in t (a maximum over y of convex quadratics in t, each over a positive
denominator), and golden section over [min q, max q] finds its least value. The relaxation is tight only when q
varies little among a family's best sets, so the part of v in the span of 1 and P, which S absorbs (u and λ take it
up), still matters: at N = 50, v fitted to the best design's J⁻² gives 175.95128 as fitted and 175.94910 when
projected orthogonal to 1 and P.

**Moving the direction** (:func:`rank_one_dual_bound`). The program in a = √w·v free is not concave (each cut
holds −(a·r)², a concave function, below an affine one), so the direction moves by local steps between solves of
the fixed-direction program: Newton steps of the same barrier in (D, u, λ, a) on the cuts met so far, each entry of
a moving at most :data:`DIRECTION_STEP` times the largest, then v = a/‖a‖, w = ‖a‖². Every fixed-direction solve
gives a valid bound; the best is kept. At N = 50 (ε-LDP, ε = 1, Dirichlet(1) seed 0, one core) from v = √P this
gives 175.951699 after 27 s (a prototype with the same steps: 175.95021 after 8 s, 175.951765 after 50 s), where the
head of 16 reaches 175.95143 in 15 s and 175.951439 converged; the optimum is at most 175.951854.

**Rounding** (:func:`certified_bound`): as in the structured dual, with the rank-one term's magnitudes w|v_i||v_j|
in the entrywise error of S and w(t² + 2|t|(Σ|v_i r0_i| + Σ|γ|)) in the size of a family's terms.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechdesign.objectives.frequency_additive_dual import (
    LOOSE_TOL,
    MU_FACTOR,
    MU_START,
    NEIGHBOURS,
    U,
    _family_terms,
    _ray,
    barrier_path,
    daleckii_krein,
    gram,
    lagrangian_bound,
    nearly_active,
    recentred,
    strictly_feasible,
)

__all__ = ["RankOneDual", "certified_bound", "price_rank_one", "rank_one_dual_bound"]

CUTS_PER_PARAMETER = 8
"""Cuts kept from one round to the next (the most nearly active), per parameter."""
GOLDEN_STEPS = 28
"""Golden-section steps over t per family (the interval shrinks by 0.618 per step)."""
DIRECTION_STEP = 0.075
"""Largest move of an entry of a per Newton step of the direction, as a share of a's largest entry (N = 50: 0.006
of 0.08 reaches 175.95171 from √P in 25 s, 0.002 only 175.95150 in 41 s)."""
FIRST_SOLVE = 6.0
"""Seconds of the first fixed-direction solve at N = 50, times (N/50)² past it (N = 50, 27 s from √P: 175.951699
with 6 s and moves of 3 s, 175.951657 when the first solve runs to the end; N = 200, 57 s: 728.29 with the whole time
on the first solve, −6464.8 when moves begin after 8 s)."""
STEP_SECONDS = 3.0
"""Seconds per move of the direction and per fixed-direction solve after it at N = 50, times (N/50)² past it."""


@dataclass
class RankOneDual:
    bound: float
    """A rigorous lower bound on the optimum over every ray of the families (−inf when none was found)."""
    params: np.ndarray | None
    """(D, u, λ, w) of the best bound."""
    direction: np.ndarray | None
    """v of the best bound."""
    rounds: int
    cuts: int
    steps: int
    """Moves of the direction."""


def _s_matrix(x: np.ndarray, P: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = len(P)
    D, u, lam, w = x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n]
    return 0.5 * (np.diag(D) + np.add.outer(u, u) + np.outer(lam, P) + np.outer(P, lam)) - w * np.outer(v, v)


def _cut_rows(C: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row per ray r: the coefficients of ½ D·(r∘r) + (1·r)(u·r) − w (v·r)² in (D, u, λ, w)."""
    nr = C.sum(axis=1)
    return np.hstack([0.5 * C * C, nr[:, None] * C, np.zeros_like(C), -((C @ v) ** 2)[:, None]])


class _Family:
    """One family's numerator A0 + a·y − w (β + γ·y)² and denominator s0 + p·y at x (y the indicator over its free
    items)."""

    def __init__(self, fam, x: np.ndarray, P: np.ndarray, v: np.ndarray):
        n = len(P)
        self.fam, self.k = fam, fam.size
        self.A0, self.a, self.s0, self.p, self.mag = _family_terms(fam, x[:n], x[n : 2 * n], P)
        self.w = float(x[3 * n])
        self.beta = float(v @ fam.r0)
        self.beta_size = float(np.abs(v) @ np.abs(fam.r0))  # bounds the rounding of β
        self.gam = fam.delta * v[fam.free]

    def _linear(self, t: float):
        return self.A0 + self.w * t * t - 2 * self.w * t * self.beta, self.a - 2 * self.w * t * self.gam

    def _top(self, c: np.ndarray) -> np.ndarray:
        k = self.k
        return np.argpartition(-c, k - 1)[:k] if 0 < k < len(c) else np.arange(min(k, len(c)))

    def exact(self, y: np.ndarray) -> float:
        """ρ·(1·r) of the set at positions y."""
        q = self.beta + float(self.gam[y].sum())
        return (self.A0 + float(self.a[y].sum()) - self.w * q * q) / (self.s0 + float(self.p[y].sum()))

    def certified(self, h: float, t: float) -> float:
        """An upper bound on the family's largest ρ covering every rounding (as price_additive of the structured
        dual, the rank-one term's magnitudes added to the size of the terms)."""
        n, k = len(self.fam.r0), self.k
        c0, c = self._linear(t)
        y = self._top(c - h * self.p)
        v = c0 - h * self.s0 + float((c - h * self.p)[y].sum())
        mag = self.mag + self.w * (t * t + 2 * abs(t) * (self.beta_size + float(np.abs(self.gam).sum())))
        allow = 16 * (n + 8) * U * (mag + abs(h) * (self.s0 + float(np.abs(self.p).sum())) + abs(c0) + abs(h * self.s0))
        s_min = self.s0 + float(np.partition(self.p, k - 1)[:k].sum()) if k else self.s0
        s_min = max(s_min * (1 - 8 * n * U), 1e-300)
        norm = self.fam.norm
        return (h + max(0.0, v + allow) / s_min * (1 + 8 * U)) / norm * (1 + 4 * U) + 4 * U * abs(h / norm)


class _Stacked:
    """Every family's terms of :class:`_Family` side by side, padded to the longest list of free items, so that
    the golden section over t and Dinkelbach's steps run for all families at once (one family at a time, the
    pricing spent most of its time in numpy's per-call overhead: N = 50 ε-LDP, 49 families, 0.09 s a round against
    0.022 s)."""

    def __init__(self, Fs: list[_Family]):
        L = max(len(F.a) for F in Fs)
        self.Fs = Fs
        self.k = np.array([F.k for F in Fs])
        self.A0 = np.array([F.A0 for F in Fs])
        self.s0 = np.array([F.s0 for F in Fs])
        self.beta = np.array([F.beta for F in Fs])
        self.w = np.array([F.w for F in Fs])
        self.valid = np.zeros((len(Fs), L), bool)
        self.a, self.p, self.gam = (np.zeros((len(Fs), L)) for _ in range(3))
        for i, F in enumerate(Fs):
            m = len(F.a)
            self.valid[i, :m] = True
            self.a[i, :m], self.p[i, :m], self.gam[i, :m] = F.a, F.p, F.gam
        self.rows = np.arange(len(Fs))[:, None]

    def _sums(self, key: np.ndarray, c: np.ndarray):
        """The top k of ``key`` per family (its chosen set, a mask) and the sums of c and p over it."""
        order = np.argsort(-np.where(self.valid, key, -np.inf), axis=1, kind="stable")
        rank = np.empty_like(order)
        rank[self.rows, order] = np.arange(order.shape[1])[None, :]
        mask = rank < self.k[:, None]
        return mask, (c * mask).sum(axis=1), (self.p * mask).sum(axis=1)

    def at(self, t: np.ndarray):
        """Per family at its own t: h(t) = max over the family of (numerator with −q² replaced by t² − 2tq) /
        denominator, by Dinkelbach's method (each step the top k of c − h·p), and its maximising set (a mask)."""
        c0 = self.A0 + self.w * t * t - 2 * self.w * t * self.beta
        c = self.a - 2 * (self.w * t)[:, None] * self.gam
        y, cs, ps = self._sums(c, c)
        h = (c0 + cs) / (self.s0 + ps)
        live = np.ones(len(h), bool)
        for _ in range(200):
            key = c - h[:, None] * self.p
            y2, cs2, ps2 = self._sums(key, c)
            h2 = (c0 + cs2) / (self.s0 + ps2)
            up = live & (c0 - h * self.s0 + (key * y2).sum(axis=1) > 0) & (h2 > h)
            if not up.any():
                break
            h, y = np.where(up, h2, h), np.where(up[:, None], y2, y)
            live = up
        return h, y

    def exact(self, y: np.ndarray) -> np.ndarray:
        q = self.beta + (self.gam * y).sum(axis=1)
        return (self.A0 + (self.a * y).sum(axis=1) - self.w * q * q) / (self.s0 + (self.p * y).sum(axis=1))

    def price(self):
        """Per family (h, t, y): the least h(t) found by golden section over [min q, max q] (h is convex in t), its t,
        and the positions of the set of largest exact ρ met."""
        g = np.sort(np.where(self.valid, self.gam, np.inf), axis=1)
        gd = np.sort(np.where(self.valid, self.gam, -np.inf), axis=1)[:, ::-1]
        take = np.arange(g.shape[1])[None, :] < self.k[:, None]
        lo = self.beta + np.where(take, g, 0.0).sum(axis=1)
        hi = self.beta + np.where(take, gd, 0.0).sum(axis=1)
        phi = (math.sqrt(5) - 1) / 2
        t1, t2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        (f1, y1), (f2, y2) = self.at(t1), self.at(t2)
        best_y, best_e = y1, self.exact(y1)
        e2 = self.exact(y2)
        best_y, best_e = np.where((e2 > best_e)[:, None], y2, best_y), np.maximum(best_e, e2)
        for _ in range(GOLDEN_STEPS):
            left = f1 < f2
            hi = np.where(left, t2, hi)
            lo = np.where(left, lo, t1)
            t_new = np.where(left, hi - phi * (hi - lo), lo + phi * (hi - lo))
            f_new, y_new = self.at(t_new)
            t1, f1, y1, t2, f2, y2 = (
                np.where(left, t_new, t2),
                np.where(left, f_new, f2),
                np.where(left[:, None], y_new, y2),
                np.where(left, t1, t_new),
                np.where(left, f1, f_new),
                np.where(left[:, None], y1, y_new),
            )
            e = self.exact(y_new)
            best_y, best_e = np.where((e > best_e)[:, None], y_new, best_y), np.maximum(best_e, e)
        first = f1 < f2
        t, h = np.where(first, t1, t2), np.where(first, f1, f2)
        return [(float(h[i]), float(t[i]), np.flatnonzero(best_y[i])) for i in range(len(self.Fs))]


def _priced(fams, x: np.ndarray, P: np.ndarray, v: np.ndarray) -> list:
    """Per family at x = (D, u, λ, w) and direction v: (its _Family, h, t, y) of :meth:`_Stacked.price`, all
    families priced at once."""
    Fs = [_Family(fam, x, P, v) for fam in fams]
    return [(F, *res) for F, res in zip(Fs, _Stacked(Fs).price())]


def price_rank_one(fams, x: np.ndarray, P: np.ndarray, v: np.ndarray, rigorous: bool = False, priced=None):
    """Per family: (an upper bound on its largest ρ at x = (D, u, λ, w) and direction v, the ray of largest exact ρ
    met), the bound covering every rounding with ``rigorous``; ``priced`` the list of :func:`_priced` at this x,
    when the caller has it."""
    return [
        (F.certified(h, t) if rigorous else h / F.fam.norm, _ray(F.fam, y))
        for F, h, t, y in (_priced(fams, x, P, v) if priced is None else priced)
    ]


def certified_bound(x: np.ndarray, P: np.ndarray, fams, v: np.ndarray, priced=None) -> tuple[float, np.ndarray]:
    """The bound of the module docstring at x = (D, u, λ, w) and direction v, every rounding covered: (bound, x used;
    D raised when S needed it to be positive definite); ``priced`` the list of :func:`_priced` at x, used when D is
    not raised."""
    n = len(P)
    x = np.array(x, float)
    given = x.copy()
    if not x[3 * n] >= 0:
        return -math.inf, x

    def matrices(z):
        D, u, lam, w = z[:n], z[n : 2 * n], z[2 * n : 3 * n], z[3 * n]
        T = 0.5 * (np.diag(np.abs(D)) + np.add.outer(np.abs(u), np.abs(u)) + 2 * np.outer(np.abs(lam), P))
        return _s_matrix(z, P, v), T + w * np.outer(np.abs(v), np.abs(v))

    def price(z):
        reuse = priced if priced is not None and np.array_equal(z, given) else None
        return max(value for value, _ in price_rank_one(fams, z, P, v, rigorous=True, priced=reuse))

    return lagrangian_bound(x, P, matrices, price, entry_error=8.0)  # S's entries sum six terms: 8u per unit of T


def _pieces(x, P, v, mu, A):
    """φ = 2 tr S^{1/2} − Σλ + μ (Σ log slack + log det S + log w) and the eigen-decomposition of S; None outside."""
    n = len(P)
    if not x[3 * n] > 0:
        return None
    ev, V = np.linalg.eigh(_s_matrix(x, P, v))
    s = -(A @ x)
    if ev[0] <= 0 or s.min() <= 0:
        return None
    rs = np.sqrt(ev)
    logs = float(np.log(s).sum()) + float(np.log(ev).sum()) + math.log(x[3 * n])
    return 2 * rs.sum() - x[2 * n : 3 * n].sum() + mu * logs, ev, V, rs, s


def _hessian_terms(V, rs, ev, mu, P, last):
    """Gradient (trace part) and Hessian of 2 tr S^{1/2} + μ log det S in (D, u, λ, then the block ``last``)
    (:func:`mechdesign.objectives.frequency_additive_dual.daleckii_krein`)."""
    n = len(rs)
    F = -1.0 / (rs[:, None] * rs[None, :] * (rs[:, None] + rs[None, :])) - mu / (ev[:, None] * ev[None, :])
    every = np.arange(n)
    blocks = [("pairs", every, every, 0.5), ("sym", V.T @ np.ones(n), 1.0), ("sym", V.T @ P, 1.0), last]
    return daleckii_krein(V, 1 / rs + mu / ev, F, blocks)


def _newton_fixed(x, P, v, mu, A, pieces):
    n = len(P)
    _, ev, V, rs, s = pieces
    al = V.T @ v
    g, H = _hessian_terms(V, rs, ev, mu, P, ("rows", -np.outer(al, al)[None]))
    g[2 * n : 3 * n] -= 1.0
    cols = np.r_[0 : 2 * n, 3 * n]  # the cuts do not involve λ
    As = A[:, cols] / s[:, None]
    g[cols] -= mu * As.sum(axis=0)
    H[np.ix_(cols, cols)] -= gram(As.T, mu)
    w = x[3 * n]
    g[3 * n] += mu / w
    H[3 * n, 3 * n] -= mu / w**2
    return g, H


def _maximise_fixed(P, v, A, x, mu, deadline, rel_tol):
    """The barrier path of the fixed-direction program from x (strictly feasible) down to m·μ ≤ rel_tol·|φ|."""
    n = len(P)

    def keep_w_positive(z, dz):
        return 0.99 * z[3 * n] / -dz[3 * n] if dz[3 * n] < 0 else 1.0

    return barrier_path(
        lambda z, mu_: _pieces(z, P, v, mu_, A),
        lambda z, mu_, pieces: _newton_fixed(z, P, v, mu_, A, pieces),
        A,
        x,
        mu,
        A.shape[0] + n + 1,
        deadline,
        rel_tol,
        step_limit=keep_w_positive,
    )


def _strictly_feasible(x: np.ndarray, C: np.ndarray, P: np.ndarray, value) -> np.ndarray:
    """The structured dual's shift into the cuts' interior; ``value`` gives the cuts' numerators at x."""
    return strictly_feasible(x, value(x), C.sum(axis=1) * (C @ P), P)


def _swaps(F: _Family, y: np.ndarray, top: int) -> list[np.ndarray]:
    """Rays one swap from the set y with the largest positive exact ρ."""
    inn = np.asarray(y)
    out = np.setdiff1d(np.arange(len(F.a)), inn)
    if len(out) == 0 or len(inn) == 0:
        return []
    q = F.beta + F.gam[inn].sum()
    num = F.A0 + F.a[inn].sum() + F.a[out][None, :] - F.a[inn][:, None]
    den = F.s0 + F.p[inn].sum() + F.p[out][None, :] - F.p[inn][:, None]
    val = (num - F.w * (q + F.gam[out][None, :] - F.gam[inn][:, None]) ** 2) / den
    rays = []
    for flat in np.argsort(-val, axis=None)[:top]:
        if val.flat[flat] <= 0:
            break
        i, j = divmod(int(flat), len(out))
        rays.append(_ray(F.fam, np.r_[np.delete(inn, i), out[j]]))
    return rays


def _fixed_direction(fams, P, v, C, x, deadline, mu=MU_START):
    """Cutting planes on the fixed-direction program from the cuts C and the point x, the barrier starting at ``mu``:
    (best certified bound, its x, the last x, the cuts, rounds)."""
    n = len(P)
    x0 = np.r_[np.full(n, 2.0), np.zeros(2 * n), min(x[3 * n], 0.5)]  # S = I − w v vᵀ, positive definite
    best, best_x, rounds, loose = -math.inf, None, 0, True
    while time.perf_counter() < deadline:
        rounds += 1
        A = _cut_rows(C, v)
        x = _strictly_feasible(recentred(x, x0, lambda z: _s_matrix(z, P, v)), C, P, lambda z, A=A: A @ z)
        x = _maximise_fixed(P, v, A, x, mu, deadline, LOOSE_TOL if loose else 1e-11)
        mu = MU_START
        # one pricing per round: it gives both the certified bound and the new cuts
        priced = _priced(fams, x, P, v)
        bound, x_used = certified_bound(x, P, fams, v, priced=priced)
        if bound > best:
            best, best_x = bound, x_used
        fresh = []
        for F, _, _, y in priced:
            if F.exact(y) / F.fam.norm > 1e-13:
                fresh += [_ray(F.fam, y), *_swaps(F, y, NEIGHBOURS)]
        if not fresh:
            if not loose:
                break
            loose = False
            continue
        C = nearly_active(C, _cut_rows(C, v) @ x, P, CUTS_PER_PARAMETER * len(x))
        C = np.unique(np.vstack([C, np.array(fresh)]), axis=0)
    return best, best_x, x, C, rounds


def _free_values(C, z, P):
    n = len(P)
    return 0.5 * (C * C) @ z[:n] + C.sum(axis=1) * (C @ z[n : 2 * n]) - (C @ z[3 * n :]) ** 2


def _newton_free(z, P, mu, C, pieces):
    """Gradient and Hessian of the barrier in (D, u, λ, a), S = ½(…) − a aᵀ (the cuts' curvature in a left out:
    the Hessian is then more negative, the step still ascends)."""
    n = len(P)
    _, ev, V, rs, s = pieces
    a = z[3 * n :]
    al = V.T @ a
    # ∂S/∂a_k = −(e_k aᵀ + a e_kᵀ): in the eigenbasis −2·½(v_k αᵀ + α v_kᵀ), α = Vᵀa
    g, H = _hessian_terms(V, rs, ev, mu, P, ("sym", al, -2.0))
    g[2 * n : 3 * n] -= 1.0
    nr = C.sum(axis=1)
    G = np.hstack([0.5 * C * C, nr[:, None] * C, np.zeros_like(C), -2 * (C @ a)[:, None] * C]) / s[:, None]
    g -= mu * G.sum(axis=0)
    H[3 * n :, 3 * n :] -= 2 * (V * (1 / rs + mu / ev)) @ V.T  # −a aᵀ is not linear in a
    H -= gram(G.T, mu)
    return g, H


def _free_pieces(z, P, mu, C):
    n = len(P)
    a = z[3 * n :]
    S = 0.5 * (np.diag(z[:n]) + np.add.outer(z[n : 2 * n], z[n : 2 * n]))
    S += 0.5 * (np.outer(z[2 * n : 3 * n], P) + np.outer(P, z[2 * n : 3 * n])) - np.outer(a, a)
    ev, V = np.linalg.eigh(S)
    s = -_free_values(C, z, P)
    if ev[0] <= 0 or s.min() <= 0:
        return None
    rs = np.sqrt(ev)
    return 2 * rs.sum() - z[2 * n : 3 * n].sum() + mu * (float(np.log(s).sum()) + float(np.log(ev).sum())), ev, V, rs, s


def _move_direction(P, C, x, v, deadline):
    """Newton steps of the barrier in (D, u, λ, a) from a = √w·v on the cuts C, each entry of a moving at most
    DIRECTION_STEP times a's largest entry from where it started: the new (x, v)."""
    n = len(P)
    a0 = math.sqrt(x[3 * n]) * v
    z = np.r_[x[: 3 * n], a0]
    z = _strictly_feasible(z, C, P, lambda q: _free_values(C, q, P))
    reach = DIRECTION_STEP * float(np.abs(a0).max())
    mu, m = MU_START, len(C) + n
    for _ in range(400):
        pieces = _free_pieces(z, P, mu, C)
        if pieces is None or time.perf_counter() > deadline:
            break
        g, H = _newton_free(z, P, mu, C, pieces)
        try:
            dz = np.linalg.solve(H, -g)
        except np.linalg.LinAlgError:
            dz = np.linalg.lstsq(H, -g, rcond=None)[0]
        da = dz[3 * n :]
        room = np.where(da > 0, reach + a0 - z[3 * n :], np.where(da < 0, z[3 * n :] - a0 + reach, np.inf))
        limit = float(np.min(np.where(da != 0, room / np.maximum(np.abs(da), 1e-300), np.inf)))
        dz *= max(0.0, min(1.0, limit))
        dec = float(g @ dz)
        if dec <= 0:
            break
        step, moved = 1.0, False
        while step > 1e-14:
            new = _free_pieces(z + step * dz, P, mu, C)
            if new is not None and new[0] >= pieces[0] + 1e-4 * step * dec:
                z, moved = z + step * dz, True
                break
            step /= 2
        if dec < 1e-3 * mu * m or not moved:
            if m * mu < LOOSE_TOL * abs(pieces[0]):
                break
            mu *= MU_FACTOR
    a = z[3 * n :]
    w = float(a @ a)
    if not w > 0:
        return x, v
    return np.r_[z[: 3 * n], w], a / math.sqrt(w)


def rank_one_dual_bound(fams, P: np.ndarray, cuts: np.ndarray, deadline: float, direction=None) -> RankOneDual:
    """The rank-one dual (module doc) from the rays ``cuts``, until ``deadline`` (time.perf_counter()): a first
    fixed-direction solve of :data:`FIRST_SOLVE` seconds (scaled with N) from ``direction`` (default √P), then moves
    of the direction, each followed by :data:`STEP_SECONDS` (scaled) of the fixed-direction solve; the best certified
    bound."""
    n = len(P)
    v = np.sqrt(P) if direction is None else np.asarray(direction, float)
    v = v / np.linalg.norm(v)
    x = np.r_[np.full(n, 2.0), np.zeros(2 * n), 1e-6]
    C = np.unique(np.asarray(cuts, float), axis=0)
    scale = max(1.0, (n / 50) ** 2)  # the Newton system's cost grows about as N⁴, its steps needed more slowly
    first = min(deadline, time.perf_counter() + FIRST_SOLVE * scale)
    bound, bx, x, C, r = _fixed_direction(fams, P, v, C, x, first, 1.0)
    best, x_best, v_best, rounds = bound, bx, v, r
    steps = 0
    while time.perf_counter() + STEP_SECONDS * scale / 3 < deadline:
        steps += 1
        x, v = _move_direction(P, C, x, v, min(deadline, time.perf_counter() + STEP_SECONDS * scale))
        bound, bx, x, C, r = _fixed_direction(
            fams, P, v, C, x, min(deadline, time.perf_counter() + STEP_SECONDS * scale)
        )
        rounds += r
        if bound > best:
            best, x_best, v_best = bound, bx, v
    return RankOneDual(best, x_best, v_best, rounds, len(C), steps)


def child_main(path: str) -> int:
    """Entry point of a second process (``python -m mechdesign.objectives.frequency_rank_one_dual PATH``): reads
    (families, P, cuts, deadline) pickled at PATH by the engine, runs :func:`rank_one_dual_bound` until the deadline
    (wall clock, time.time()) and writes its RankOneDual's fields, pickled as a dict, to stdout. It ignores SIGINT (the engine stops it)
    and uses one BLAS thread, numpy's and scipy's alike (:func:`mechdesign.lp.threads.single_threaded_blas`: a BLAS
    loaded after a plain thread limit would run a pool of threads beside the engine's process)."""
    import dataclasses
    import pickle
    import signal
    import sys

    from mechdesign.lp.threads import single_threaded_blas

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(path, "rb") as f:
        fams, P, cuts, deadline = pickle.load(f)
    with single_threaded_blas():
        result = rank_one_dual_bound(fams, P, cuts, time.perf_counter() + (deadline - time.time()))
    # a dict (this module runs as __main__ here, so its classes would not unpickle under their own name)
    sys.stdout.buffer.write(pickle.dumps(dataclasses.asdict(result)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(child_main(sys.argv[1]))
