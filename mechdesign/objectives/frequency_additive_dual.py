"""A second lower bound for frequency estimation over the simplex / min_mass ray families: the Lagrangian dual
restricted to multipliers whose pricing is exact by sorting.

The bound of :mod:`mechdesign.engines.a_optimal` (Lagrangian dual of the A-optimal design program; Boyd and
Vandenberghe, Convex Optimization §7.5), written with S = W² ⪰ 0, is for ANY such S and any λ

    OPT ≥ 2 tr S^{1/2} − ‖P‖² − Σ_x λ_x − N·max(0, h),   h = max over every extreme ray r of ρ(r),
    ρ(r) = (rᵀ S r/(Pᵀ r) − λ·r)/(1·r).

Pricing a general S is a quadratic 0/1 program (:mod:`mechdesign.objectives.pricing_frequency`). Here S is taken
of the form

    S(D, u, λ) = ½ (diag(D) + u 1ᵀ + 1 uᵀ + λ Pᵀ + P λᵀ),

for which rᵀ S r = ½ D·(r∘r) + (1·r)(u·r) + (λ·r)(Pᵀ r), so that

    ρ(r) = (½ D·(r∘r) + (1·r)(u·r)) / ((1·r)(Pᵀ r)).

On a ray family (r = r₀ + δ·1_A, |A| = k, 1·r fixed; :mod:`mechdesign.privacy.ray_families`) r∘r and u·r are
affine in the indicator of A, so ρ is a ratio of two affine functions of a k-subset: its maximum is found exactly
by Dinkelbach's method (Dinkelbach 1967), each step a sort. The restricted dual

    maximise  2 tr S(D, u, λ)^{1/2} − Σ λ   s.t.  ½ D·(r∘r) + (1·r)(u·r) ≤ 0 for every ray r

(h ≤ 0 costs nothing: (u + cP, λ − c1) leaves S unchanged and lowers every ρ by c) is a concave maximisation over
3N numbers, solved over a growing list of rays (cutting planes: Kelley 1960) by a log-barrier Newton method
(Boyd and Vandenberghe §11.3; the Hessian of tr S^{1/2} by the Daleckii–Krein formula). Every (D, u, λ) it
visits gives a valid bound; :func:`certified_bound` evaluates it with every rounding error bounded. It is a
restriction of the dual: at some priors its best value is the optimum (N = 16, Dirichlet(1) seed 0, ε = 1: equal
to 12 digits), at others it is below it (N = 24: 1.7e-4 relative below).

**Rounding** (:func:`certified_bound`). The entries of S computed in floating point are within 4u·T_ij of the
exact ones (T the matrix of the absolute values of the terms, u = 2⁻⁵³), and LAPACK's symmetric eigenvalues within
16·N·u·‖S‖_F of the computed matrix's: by Weyl's inequality every eigenvalue of the exact S is at least the computed
one minus η = 4u‖T‖_F + 16Nu‖S‖_F. When the least computed eigenvalue is below 2η, D is raised until it is about
4η (the exact S is then positive definite). Then tr S^{1/2} ≥ Σ √max(0, μ_i − η)·(1 − 4u). For the pricing, with the
family's h from Dinkelbach, v = max over k-subsets of the numerator minus h·(1·r)·Pᵀr is a top-k sum of affine
coefficients: its computed value is within 16(N + 4)u times the sum of the magnitudes of every term, so ρ ≤ h +
max(0, v + that)/((1·r)·s_min) on the family, s_min the least Pᵀr over it. The family levels (m_q, w) are
within a few ulps of their exact values; the same allowance covers them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechdesign.objectives.pricing_frequency import _top

__all__ = ["AdditiveDual", "additive_dual_bound", "certified_bound", "price_additive"]

U = 2.0**-53
NEIGHBOURS = 4
"""Rays one swap away from a family's best that join the cuts with it (fewer rounds)."""
MAX_N = 100
"""Largest N the bound is computed for: the Newton system's Hessian costs 9N⁴ operations (N = 50: 0.03 s)."""


@dataclass
class AdditiveDual:
    bound: float
    """A rigorous lower bound on the optimum over every ray of the families (−inf when none was found)."""
    params: np.ndarray | None
    """(D, u, λ) of the best bound."""
    rounds: int
    cuts: int


def _s_matrix(x: np.ndarray, P: np.ndarray) -> np.ndarray:
    n = len(P)
    D, u, lam = x[:n], x[n : 2 * n], x[2 * n :]
    return 0.5 * (np.diag(D) + np.add.outer(u, u) + np.outer(lam, P) + np.outer(P, lam))


def _family_terms(fam, D: np.ndarray, u: np.ndarray, P: np.ndarray):
    """The numerator A0 + a·y and denominator s0 + p·y of ρ·(1·r) on the family (y the indicator over its free
    items), and the magnitude of their terms."""
    r0, d, free, norm = fam.r0, fam.delta, fam.free, fam.norm
    lin_sq = 2 * r0[free] * d + d * d  # r∘r = r0∘r0 + (2 r0 δ + δ²)·y
    A0 = 0.5 * float(D @ (r0 * r0)) + norm * float(u @ r0)
    a = 0.5 * D[free] * lin_sq + norm * d * u[free]
    s0 = float(P @ r0)
    p = d * P[free]
    mag = (
        0.5 * float(np.abs(D) @ (r0 * r0))
        + norm * float(np.abs(u) @ r0)
        + float(np.sum(0.5 * np.abs(D[free]) * lin_sq + norm * d * np.abs(u[free])))
    )
    return A0, a, s0, p, mag


def _ray(fam, y: np.ndarray) -> np.ndarray:
    """The family's ray for the set at positions ``y`` among its free items (FrequencyFamily.rays)."""
    X = np.zeros((1, len(fam.r0)))
    X[0, fam.free[y]] = 1.0
    return fam.rays(X)[0]


def _family_maxima(fams, D: np.ndarray, u: np.ndarray, P: np.ndarray):
    """Per family: (family, its terms (A0, a, s0, p, mag) of :func:`_family_terms`, h = max over its sets of
    (A0 + a·y)/(s0 + p·y) in floating point, the maximising set's positions y) by Dinkelbach's method."""
    for fam in fams:
        A0, a, s0, p, mag = _family_terms(fam, D, u, P)
        k = fam.size
        y = _top(a / (s0 / max(k, 1) + p), k)
        h = (A0 + float(a[y].sum())) / (s0 + float(p[y].sum()))
        for _ in range(200):
            y2 = _top(a - h * p, k)
            v = A0 + float(a[y2].sum()) - h * (s0 + float(p[y2].sum()))
            if v <= 0:
                break
            h_new = (A0 + float(a[y2].sum())) / (s0 + float(p[y2].sum()))
            if h_new <= h:
                break
            h, y = h_new, y2
        yield fam, (A0, a, s0, p, mag), h, y


def _neighbours(fam, a: np.ndarray, p: np.ndarray, h: float, chosen: np.ndarray, extra: int) -> list[np.ndarray]:
    """Rays one swap away from the family's best set ``chosen`` (its least item out, one of the next best in, by
    a − h·p)."""
    if len(chosen) in (0, len(fam.free)):
        return []
    c = a - h * p
    weakest = chosen[int(np.argmin(c[chosen]))]
    outside = np.setdiff1d(np.arange(len(fam.free)), chosen)
    return [_ray(fam, np.r_[chosen[chosen != weakest], j]) for j in outside[np.argsort(-c[outside])[:extra]]]


def price_additive(fams, D: np.ndarray, u: np.ndarray, P: np.ndarray, rigorous: bool = False):
    """max ρ over each family (Dinkelbach + sort): a list of (value, ray) per family, value the maximum computed
    in floating point, or with ``rigorous`` an upper bound on it that covers every rounding (module doc)."""
    n = len(P)
    out = []
    for fam, (A0, a, s0, p, mag), h, y in _family_maxima(fams, D, u, P):
        k, norm = fam.size, fam.norm
        value = h / norm
        if rigorous:
            c = a - h * p
            top = _top(c, k)
            v = A0 - h * s0 + float(c[top].sum())
            allow = 16 * (n + 4) * U * (mag + abs(h) * (s0 + float(np.abs(p).sum())) + abs(A0) + abs(h * s0))
            s_min = s0 + float(np.partition(p, k - 1)[:k].sum()) if k else s0
            s_min = max(s_min * (1 - 8 * n * U), 1e-300)
            value = (h + max(0.0, v + allow) / s_min * (1 + 8 * U)) / norm * (1 + 4 * U) + 4 * U * abs(h / norm)
        out.append((value, _ray(fam, y)))
    return out


def certified_bound(x: np.ndarray, P: np.ndarray, fams) -> tuple[float, np.ndarray]:
    """The bound of the module docstring at (D, u, λ) = x, every rounding covered: (bound, x used; D raised when
    S needed it to be positive definite)."""
    n = len(P)
    x = np.array(x, float)
    for _ in range(3):
        D, u, lam = x[:n], x[n : 2 * n], x[2 * n :]
        S = _s_matrix(x, P)
        T = 0.5 * (np.diag(np.abs(D)) + np.add.outer(np.abs(u), np.abs(u)) + 2 * np.outer(np.abs(lam), P))
        eta = 4 * U * float(np.linalg.norm(T)) + 16 * n * U * float(np.linalg.norm(S))
        mu = np.linalg.eigvalsh(S)
        if mu[0] > 2 * eta:
            break
        x[:n] += 2 * (4 * eta - mu[0]) + 1e-300  # S rises by half of it: its least eigenvalue to about 4η
    else:
        return -math.inf, x
    root = float(np.sqrt(np.maximum(mu - eta, 0.0)).sum()) * (1 - 4 * U) * (1 - 2 * n * U)
    h = max(v for v, _ in price_additive(fams, D, u, P, rigorous=True))
    pp = float(P @ P) * (1 + 2 * n * U)
    lam_sum = float(lam.sum()) + 2 * n * U * float(np.abs(lam).sum())
    tail = pp + lam_sum + n * max(0.0, h)
    bound = 2 * root - tail
    return bound - 8 * U * (2 * root + abs(pp) + abs(lam_sum) + n * abs(h)), x


def _cut_rows(C: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Row per ray r: the coefficients of ½ D·(r∘r) + (1·r)(u·r) in (D, u, λ)."""
    nr = C.sum(axis=1)
    return np.hstack([0.5 * C * C, nr[:, None] * C, np.zeros_like(C)])


def _barrier_pieces(x, P, mu, A):
    n = len(P)
    ev, V = np.linalg.eigh(_s_matrix(x, P))
    s = -(A @ x)
    if ev[0] <= 0 or s.min() <= 0:
        return None
    rs = np.sqrt(ev)
    phi = 2 * rs.sum() - x[2 * n :].sum() + mu * float(np.log(s).sum()) + mu * float(np.log(ev).sum())
    return phi, ev, V, rs, s


def _newton_system(P, mu, A, pieces):
    """Gradient and Hessian of φ = 2 tr S^{1/2} − Σλ + μ Σ log(slack) + μ log det S in (D, u, λ): in the eigenbasis
    of S (S = V diag(ev) Vᵀ) the basis matrices ∂S/∂x_k are B_k = Vᵀ (∂S/∂x_k) V, the gradient is Σ_i f'(ev_i)
    (B_k)_ii and the Hessian Σ_ij f'^{[1]}(ev_i, ev_j) (B_k)_ij (B_l)_ij (Daleckii–Krein), f = 2√· + μ log."""
    n = len(P)
    _, ev, V, rs, s = pieces
    w = V.T @ np.ones(n)
    p = V.T @ P
    Bd = 0.5 * np.einsum("ia,ib->iab", V, V)
    Bu = 0.5 * (np.einsum("ia,b->iab", V, w) + np.einsum("a,ib->iab", w, V))
    Bl = 0.5 * (np.einsum("ia,b->iab", V, p) + np.einsum("a,ib->iab", p, V))
    B = np.concatenate([Bd, Bu, Bl]).reshape(3 * n, -1)
    diag = np.arange(n) * (n + 1)
    g = B[:, diag] @ (1 / rs + mu / ev)
    g[2 * n :] -= 1.0
    As = A / s[:, None]
    g -= mu * As.sum(axis=0)
    dd = -1.0 / (rs[:, None] * rs[None, :] * (rs[:, None] + rs[None, :])) - mu / (ev[:, None] * ev[None, :])
    H = (B * dd.reshape(-1)) @ B.T - mu * (As.T @ As)
    return g, H


def _maximise(P, A, x, mu, deadline, rel_tol=1e-11, max_steps=400):
    """The barrier path from x (strictly feasible) down to m·μ ≤ rel_tol·|φ|."""
    m = A.shape[0] + len(P)
    for _ in range(max_steps):
        pieces = _barrier_pieces(x, P, mu, A)
        if pieces is None or time.perf_counter() > deadline:
            return x
        g, H = _newton_system(P, mu, A, pieces)
        try:
            dx = np.linalg.solve(H, -g)
        except np.linalg.LinAlgError:
            dx = np.linalg.lstsq(H, -g, rcond=None)[0]
        dec = float(g @ dx)
        step, moved = 1.0, False
        while step > 1e-14:
            new = _barrier_pieces(x + step * dx, P, mu, A)
            if new is not None and new[0] >= pieces[0] + 1e-4 * step * dec:
                x, moved = x + step * dx, True
                break
            step /= 2
        if dec < 1e-3 * mu * m or not moved:
            if m * mu < rel_tol * abs(pieces[0]) or time.perf_counter() > deadline:
                return x
            mu *= 0.2
    return x


def _strictly_feasible(x: np.ndarray, A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """x moved along (u + cP, λ − c1) (S unchanged, every ρ lowered by c) until every cut holds strictly."""
    n = len(P)
    nr_s = A[:, n : 2 * n] @ P  # (1·r)(Pᵀr) per row
    worst = float(np.max((A @ x) / nr_s))
    if worst > -1e-9:
        c = worst + 1e-6 * (abs(worst) + 1.0)
        x = x.copy()
        x[n : 2 * n] -= c * P
        x[2 * n :] += c
    return x


def additive_dual_bound(fams, P: np.ndarray, cuts: np.ndarray, deadline: float, start=None) -> AdditiveDual:
    """Cutting planes on the restricted dual (module doc) from the rays ``cuts`` until no family has a ray with
    ρ > 0 or the deadline; the best certified bound met."""
    n = len(P)
    x = np.concatenate([np.full(n, 2.0), np.zeros(2 * n)]) if start is None else np.array(start, float)
    if np.linalg.eigvalsh(_s_matrix(x, P))[0] <= 0:
        x = np.concatenate([np.full(n, 2.0), np.zeros(2 * n)])
    C = np.array(cuts, float)
    best, best_x, rounds = -math.inf, None, 0
    mu = 1.0
    while time.perf_counter() < deadline:
        rounds += 1
        A = _cut_rows(C, P)
        x = _strictly_feasible(x, A, P)
        x = _maximise(P, A, x, mu, deadline)
        mu = 1e-3
        bound, x_used = certified_bound(x, P, fams)
        if bound > best:
            best, best_x = bound, x_used
        fresh = []
        for fam, (_, a, _, p, _), h, y in _family_maxima(fams, x[:n], x[n : 2 * n], P):
            if h / fam.norm > 1e-13:
                fresh += [_ray(fam, y), *_neighbours(fam, a, p, h, y, NEIGHBOURS)]
        if not fresh:
            break
        C = np.vstack([C, np.array(fresh)])
    return AdditiveDual(best, best_x, rounds, len(C))
