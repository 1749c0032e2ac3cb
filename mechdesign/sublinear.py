"""Sublinear utilities: maximise U(K) = Σ_y μ(K(:,y)) over (ε,𝒫)-PML kernels.

μ is convex and positively homogeneous (DESIGN.md §2, "Sublinear utilities"):

* mutual information under a prior P:  μ(k) = Σ_x P(x) k_x log(k_x / P·k);
* f-divergence between the output laws of P0 and P1:  μ(k) = (P1·k) f(P0·k / P1·k);
* Bayes vulnerability under P:  μ(k) = max_x P(x) k_x.

Every feasible column lies in the cone C(ε,𝒫) (see :mod:`mechdesign.extremes`),
and splitting a column into extreme rays never lowers U, so the optimum is the
*extreme-ray LP* (Kairouz, Oh, Viswanath; Grosse et al.)

    maximise  Σ_r θ_r μ(r)   s.t.  Σ_r θ_r r = 1 (N rows),  θ ≥ 0,          (P)

whose dual is  minimise Σ_x λ_x  s.t.  λ·r ≥ μ(r) for every ray r.  A basic
solution uses at most N rays: output size N suffices.

**Upper bound (certificate).** For any λ let g = max over rays r of
(μ(r) − λ·r)/(1·r) (the maximum of the convex function μ − λ·k over the
polytope C ∩ {1·k = 1} is at a vertex, i.e. a normalised ray). Then
μ(k) − λ·k ≤ g·(1·k) on C, and summing over the columns of any feasible kernel
(Σ_y 1·K(:,y) = N) gives  U(K) ≤ Σ_x λ_x + N·max(g, 0).

**Exact method** (:func:`design_exact`): all rays listed (:func:`extremes.extreme_rays`),
(P) solved once, g computed over all of them. Used while the list is at most
:data:`EXACT_MAX_RAYS` long: N ≤ 13 for min_mass/simplex (at most 2^N + N·2^(N−1)
rays), N ≤ 14 for a point prior (N·2^(N−1)); each runs in under a second here.
N ≤ 8 for hull/box/l1_ball (cdd's double description, whose time explodes past that).

**Scalable method** (:func:`design_column_generation`), mutual information over
min_mass and simplex: (P) over a growing set of rays. Every ray of those cones
belongs to a family indexed by a set A: two-level r = m_q + (1 − m_q)1_A with
|A| = q, or r = 1_A + w e_j with |A| = a, j ∉ A. On a family μ(r) − λ·r is
F(P(A)) − β λ(A) + const with F concave (MI = Σ P_x r_x log r_x − s log s,
s = P·r, and the first term is linear in 1_A), so pricing is a
concave-over-subsets problem. Candidates: the vertices of the lower hull of
{(P(A), λ(A))}, which are the top-q sets of s·P_x − λ_x over all s (O(N²)
orderings). Certified bound: relax 1_A to a ∈ [0,1]^N with Σa = q; the relaxed
points are still in C, the formula over-estimates μ there (x log x is convex),
and its maximum is found on the edges of that lower hull (a 1-D concave
maximisation per edge). For a uniform P the relaxation is exact (P(A) = q/N
is fixed in a family) and the gap closes to ~1e-14 at N = 50. For a non-uniform
P the pricing problem is NP-hard in general (it contains subset sum) and the
relaxation leaves a certified gap of about 0.2–0.5 % relative at N = 20–50 (measured),
so such designs are reported as ``suboptimal`` with that gap. Other objectives
and prior sets past the exact threshold are refused with a clear error.
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Callable

import numpy as np

from .errors import InputError
from .extremes import count_structured_rays, extreme_rays
from .lp import LPBuilder
from .solve import Status, solve_lp
from .spec import AlphaF, Spec

__all__ = ["column_utility", "kernel_utility", "design_sublinear", "design_exact", "design_column_generation",
           "RayDesign", "EXACT_MAX_RAYS", "ray_lp", "corollary1_bound"]

EXACT_MAX_RAYS = 120_000
"""Largest number of listed rays for the exact method (above: column generation, when available)."""
CG_MAX_ITERATIONS = 200
CG_TIME_LIMIT = 60.0
"""Seconds of column generation when solver.time_limit is unset (the bound stays valid when it stops early)."""


# ------------------------------------------------------------------ utilities μ
def _prior(spec: Spec, value) -> np.ndarray:
    if isinstance(value, str):  # "uniform"
        return np.full(spec.n, 1.0 / spec.n)
    return np.array([float(p) for p in value])


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x log y with 0 log(anything) = 0."""
    out = np.zeros(np.broadcast(x, y).shape)
    x, y = np.broadcast_arrays(x, y)
    pos = x > 0
    out[pos] = x[pos] * np.log(y[pos])
    return out


def _perspective(f, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b f(a/b), with the limits at b = 0 (a·f'(∞)) and a = b = 0 (0)."""
    spec_f = f
    out = np.zeros(np.broadcast(a, b).shape)
    a, b = np.broadcast_arrays(a, b)
    pos = b > 0
    ap, bp = a[pos], b[pos]
    if spec_f == "kl":
        out[pos] = _xlogy(ap, np.where(ap > 0, ap / bp, 1.0))
        slope = math.inf
    elif spec_f == "tv":
        out[pos] = 0.5 * np.abs(ap - bp)
        slope = 0.5
    elif spec_f == "hellinger":
        out[pos] = (np.sqrt(ap) - np.sqrt(bp)) ** 2
        slope = 1.0
    elif spec_f == "chi2":
        out[pos] = (ap - bp) ** 2 / bp
        slope = math.inf
    else:
        alpha = spec_f.alpha
        if alpha == 1:
            return _perspective("kl", a, b)
        if alpha < 1:
            out[pos] = bp - ap ** alpha * bp ** (1 - alpha)
            slope = 0.0
        else:
            out[pos] = ap ** alpha * bp ** (1 - alpha) - bp
            slope = math.inf
    zero_b = ~pos & (a > 0)
    if zero_b.any():
        out[zero_b] = a[zero_b] * slope if math.isfinite(slope) else math.inf
    return out


def column_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ as a vectorised function: rows of R (shape (r, N)) → μ of each row."""
    obj = spec.objective
    if obj.kind == "mutual_information":
        P = _prior(spec, obj.prior)

        def mi(R):
            R = np.atleast_2d(R)
            s = R @ P
            w = R * P[None, :]
            ratio = np.where(w > 0, R / np.where(s > 0, s, 1.0)[:, None], 1.0)
            return _xlogy(w, ratio).sum(axis=1)
        return mi
    if obj.kind == "f_divergence":
        P0, P1 = (np.array([float(p) for p in pr]) for pr in obj.priors)
        f = obj.f

        def fdiv(R):
            R = np.atleast_2d(R)
            return _perspective(f, R @ P0, R @ P1)
        return fdiv
    if obj.kind == "bayes_vulnerability":
        P = _prior(spec, obj.prior)
        return lambda R: (np.atleast_2d(R) * P[None, :]).max(axis=1)
    raise ValueError(f"{obj.kind} is not a sublinear objective")


def kernel_utility(spec: Spec, K: np.ndarray) -> float:
    """U(K) = Σ_y μ(K(:,y))."""
    return float(column_utility(spec)(np.asarray(K, float).T).sum())


# ------------------------------------------------------------------ the ray LP
class RayDesign:
    """The solution of (P): rays, weights θ, dual λ and the certified upper bound."""

    def __init__(self, rays, theta, lam, value, bound, method, iterations=1, seconds=0.0, lp_size=(0, 0, 0)):
        self.rays, self.theta, self.lam = rays, theta, lam
        self.value, self.bound, self.method = value, bound, method
        self.iterations, self.seconds, self.lp_size = iterations, seconds, lp_size


def ray_lp(R: np.ndarray, mu: np.ndarray, options):
    """Solve (P) over the rows of R: returns (θ, λ, objective, LPSolution).

    θ has no upper bound (an upper bound would let the solver return row duals
    that are not dual feasible); λ is the dual of Σθ r = 1 in the maximisation
    sense, λ·r ≥ μ(r) on the listed rays at optimum.
    """
    r, n = R.shape
    b = LPBuilder()
    theta = b.variables("theta", (r,), lower=0.0)  # no upper bound: the duals must satisfy λ·r ≥ μ(r)
    b.rows(np.broadcast_to(theta, (n, r)), R.T, 1.0, 1.0)
    lp = b.build((theta, mu), sense=-1)
    sol = solve_lp(lp, options)
    if sol.x is None or sol.row_dual is None or sol.status is not Status.OPTIMAL:
        return None, None, None, sol, lp
    lam = -np.asarray(sol.row_dual, float)
    return np.asarray(sol.x, float), lam, sol.objective, sol, lp


def _pricing_bound(lam: np.ndarray, g: float, n: int) -> float:
    return float(lam.sum() + n * max(g, 0.0))


def design_exact(spec: Spec, R: np.ndarray | None = None) -> RayDesign:
    """(P) over all extreme rays; the bound Σλ + N·max(g, 0) with g over all rays."""
    t0 = time.perf_counter()
    if R is None:
        R = extreme_rays(spec.prior_set, spec.n, spec.epsilon.value)
    mu = column_utility(spec)(R)
    if not np.all(np.isfinite(mu)):
        raise InputError("objective: the utility is infinite on a feasible column (check the priors' supports)")
    theta, lam, value, sol, lp = ray_lp(R, mu, spec.solver)
    if theta is None:
        return RayDesign(R, None, None, None, None, "exact", seconds=time.perf_counter() - t0)
    g = float(np.max((mu - R @ lam) / R.sum(axis=1)))
    return RayDesign(R, theta, lam, value, _pricing_bound(lam, g, spec.n), "exact (all extreme rays)",
                     seconds=time.perf_counter() - t0, lp_size=(lp.num_rows, lp.num_cols, lp.A.nnz))


# ------------------------------------------------------------------ column generation (MI)
def _families(spec: Spec):
    """Ray families of the min_mass/simplex cone: (kind, size, level) with kind 'two' (r = m + (1−m)1_A,
    |A| = size, m = level) or 'zero' (r = 1_A + w e_j, |A| = size, w = level)."""
    n, eps = spec.n, spec.epsilon.value
    ps = spec.prior_set
    c = 0.0 if ps.kind == "simplex" else float(ps.c)
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


def _orderings(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Orderings of the indices by decreasing s·u − v, one per cell of s ∈ R (plus s = ±∞)."""
    du = u[:, None] - u[None, :]
    dv = v[:, None] - v[None, :]
    iu = np.triu_indices(len(u), 1)
    mask = np.abs(du[iu]) > 1e-15
    s = np.unique(dv[iu][mask] / du[iu][mask])
    if s.size:
        mids = np.concatenate([[s[0] - 1.0 - abs(s[0])], (s[:-1] + s[1:]) / 2, [s[-1] + 1.0 + abs(s[-1])]])
    else:
        mids = np.array([0.0])
    scores = mids[:, None] * u[None, :] - v[None, :]
    big = 1e6 * (1 + np.abs(v).max())
    extra = np.vstack([big * u - v, -big * u - v])  # s = ±∞ with ties broken by −v
    scores = np.vstack([scores, extra])
    return np.unique(np.argsort(-scores, axis=1, kind="stable"), axis=0)


def _golden_max(fun, lo: np.ndarray, hi: np.ndarray, iters: int = 80) -> np.ndarray:
    """Vectorised golden-section maximisation of concave 1-D functions on [lo, hi]."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo.copy(), hi.copy()
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = fun(x1), fun(x2)
    for _ in range(iters):
        left = f1 >= f2
        b = np.where(left, x2, b)
        a = np.where(left, a, x1)
        nx1, nx2 = b - g * (b - a), a + g * (b - a)
        x1, x2 = np.where(left, nx1, x2), np.where(left, x1, nx2)
        f1n, f2n = fun(x1), fun(x2)
        f1, f2 = np.where(left, f1n, f2), np.where(left, f1, f2n)
    return np.maximum(np.maximum(fun(lo), fun(hi)), np.maximum(f1, f2))


def _price_family(P, lam, kind, size, level, j=None):
    """Candidate sets (rows of 0/1 over the free indices) and the relaxed upper bound of
    (μ(r) − λ·r)/(1·r) over the family. ``j`` is the w-index of a 'zero' family."""
    n = len(P)
    free = np.arange(n) if j is None else np.delete(np.arange(n), j)
    u, v = P[free], lam[free]
    if kind == "two":
        m = level
        beta = 1 - m
        norm = size + (n - size) * m

        def F(U, V):
            s = m + beta * U
            return (1 - U) * m * math.log(m) - s * np.log(s) - beta * V - m * lam.sum()
    else:
        w = level
        norm = size + w
        Pj, lj = P[j], lam[j]

        def F(U, V):
            s = U + w * Pj
            pj = Pj * w * math.log(w) if w > 0 else 0.0
            return pj - np.where(s > 0, s * np.log(np.where(s > 0, s, 1.0)), 0.0) - V - w * lj
    orders = _orderings(u, v)
    top = orders[:, :size]
    Us, Vs = u[top].sum(axis=1), v[top].sum(axis=1)
    vals = F(Us, Vs)
    # lower hull of {(U, V)}: vertices sorted by U; relax along its edges
    order = np.lexsort((Vs, Us))
    Us_s, Vs_s = Us[order], Vs[order]
    hull = []
    for i in range(len(Us_s)):
        p = (Us_s[i], Vs_s[i])
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        if hull and abs(hull[-1][0] - p[0]) < 1e-15:
            continue
        hull.append(p)
    H = np.array(hull)
    relaxed = float(vals.max())
    if len(H) >= 2:
        x1, y1, x2, y2 = H[:-1, 0], H[:-1, 1], H[1:, 0], H[1:, 1]
        slope = (y2 - y1) / (x2 - x1)
        best = _golden_max(lambda U: F(U, y1 + slope * (U - x1)), x1, x2)
        relaxed = max(relaxed, float(best.max()))
    # improve the best few candidates by single swaps (x in A, x' not in A)
    extra_sets, extra_vals = [], []
    if 0 < size < len(free):
        for i in np.argsort(-vals)[:3]:
            inside = np.zeros(len(free), bool)
            inside[top[i]] = True
            cur = float(vals[i])
            for _ in range(4 * len(free)):
                ins, outs = np.flatnonzero(inside), np.flatnonzero(~inside)
                U = u[inside].sum() - u[ins][:, None] + u[outs][None, :]
                V = v[inside].sum() - v[ins][:, None] + v[outs][None, :]
                cand = F(U, V)
                k = np.unravel_index(np.argmax(cand), cand.shape)
                if cand[k] <= cur + 1e-15:
                    break
                cur = float(cand[k])
                inside[ins[k[0]]], inside[outs[k[1]]] = False, True
            if cur > vals[i]:
                extra_sets.append(np.flatnonzero(inside))
                extra_vals.append(cur)
    sets = np.zeros((len(top) + len(extra_sets), n))
    np.put_along_axis(sets[:len(top)], free[top], 1.0, axis=1)
    for i, idx in enumerate(extra_sets):
        sets[len(top) + i, free[idx]] = 1.0
    vals = np.concatenate([vals, extra_vals])
    relaxed = max(relaxed, float(vals.max()))
    return sets, vals / norm, relaxed / norm


def _family_rays(sets: np.ndarray, kind: str, level: float, j=None) -> np.ndarray:
    if kind == "two":
        return level + (1 - level) * sets
    R = sets.copy()
    R[:, j] = level
    return R / R.max(axis=1, keepdims=True)


def _cyclic(n: int, pattern: np.ndarray) -> np.ndarray:
    return np.array([np.roll(pattern, s) for s in range(n)])


def design_column_generation(spec: Spec, tol: float = 1e-9) -> RayDesign:
    """(P) by column generation for mutual information over min_mass / simplex (module docstring)."""
    t0 = time.perf_counter()
    n = spec.n
    P = _prior(spec, spec.objective.prior)
    mu_fn = column_utility(spec)
    fams = _families(spec)
    if spec.epsilon.value == 0 or not fams:
        return design_exact(spec, np.ones((1, n)) if spec.epsilon.value == 0 else np.eye(n))
    start = []
    for kind, size, level in fams:
        pat = np.zeros(n)
        if kind == "two":
            pat[:] = level
            pat[:size] = 1.0
        else:
            pat[:size] = 1.0
            pat[size] = level
        start.append(_cyclic(n, pat / pat.max()))
    R = np.unique(np.vstack(start), axis=0)
    it = 0
    best_bound = math.inf
    while True:
        it += 1
        mu = mu_fn(R)
        theta, lam, value, sol, lp = ray_lp(R, mu, spec.solver)
        if theta is None:
            return RayDesign(R, None, None, None, None, "column generation", it, time.perf_counter() - t0)
        new, g_relax, g_exact = [], -math.inf, -math.inf
        for kind, size, level in fams:
            for j in ([None] if kind == "two" else range(n)):
                sets, vals, relaxed = _price_family(P, lam, kind, size, level, j)
                g_relax = max(g_relax, relaxed)
                g_exact = max(g_exact, float(vals.max()))
                good = np.argsort(-vals)[:5]
                good = good[vals[good] > tol]
                if good.size:
                    new.append(_family_rays(sets[good], kind, level, j))
        bound = _pricing_bound(lam, g_relax, n)
        best_bound = min(best_bound, bound)
        out_of_time = time.perf_counter() - t0 > (spec.solver.time_limit or CG_TIME_LIMIT)
        if not new or best_bound - value <= tol * max(1.0, abs(value)) or it >= CG_MAX_ITERATIONS or out_of_time:
            break
        before = len(R)
        R = np.unique(np.vstack([R] + new), axis=0)
        if len(R) == before:
            break
    return RayDesign(R, theta, lam, value, best_bound, "column generation (relaxation-certified pricing)", it,
                     time.perf_counter() - t0, (lp.num_rows, lp.num_cols, lp.A.nnz))


def choose_method(spec: Spec) -> str:
    """'exact' or 'column_generation' (see the module docstring for the thresholds)."""
    count = count_structured_rays(spec.prior_set, spec.n)
    if count is not None and count <= EXACT_MAX_RAYS:
        return "exact"
    if count is None:
        return "exact"  # cdd path; extreme_rays raises a clear error past CDD_MAX_N
    if spec.objective.kind == "mutual_information" and spec.prior_set.kind in ("min_mass", "simplex"):
        return "column_generation"
    raise InputError(f"objective: {spec.objective.kind} over a {spec.prior_set.kind} prior set is designed by "
                     f"listing all extreme rays, which is limited to about {EXACT_MAX_RAYS} rays "
                     f"(N = {spec.n} needs ~{count}); column generation covers mutual_information over "
                     "min_mass and simplex")


# ------------------------------------------------------------------ kernel from rays
def rays_to_kernel(rd: RayDesign, mu_fn, m: int | None) -> tuple[np.ndarray, np.ndarray]:
    """K(:, y) = θ_y r_y over the rays with θ > 0; with fixed M below that count, merge the pair
    of columns whose merge loses the least utility (post-processing keeps (ε,𝒫)-PML)."""
    used = np.flatnonzero(rd.theta > 1e-12)
    K = (rd.rays[used] * rd.theta[used, None]).T
    rays = rd.rays[used]
    if m is not None:
        while K.shape[1] > m:
            cols = K.T
            base = mu_fn(cols)
            best = None
            for a in range(len(cols)):
                merged = cols[a][None, :] + cols[a + 1:]
                loss = base[a] + base[a + 1:] - mu_fn(merged)
                if len(loss):
                    i = int(np.argmin(loss))
                    if best is None or loss[i] < best[0]:
                        best = (loss[i], a, a + 1 + i)
            _, a, b = best
            K[:, a] += K[:, b]
            K = np.delete(K, b, axis=1)
        if K.shape[1] < m:
            K = np.hstack([K, np.zeros((K.shape[0], m - K.shape[1]))])
    K = np.clip(K, 0.0, None)
    K = K / K.sum(axis=1, keepdims=True)
    return K, rays


# ------------------------------------------------------------------ bounds for the report
def corollary1_bound(spec: Spec) -> float | None:
    """Dobrushin paper, Corollary 1: D(K∘P0 ‖ K∘P1) ≤ Ξ(ε,c) log((1 − Nc)e^ε + 1) TV(P0, P1),
    for (ε,c)-PML K and P0, P1 ∈ Q_X(c), c > 0. None when it does not apply."""
    from . import bounds

    obj, ps, n = spec.objective, spec.prior_set, spec.n
    if obj.kind != "f_divergence" or obj.f != "kl" or ps.kind != "min_mass" or ps.c == 0:
        return None
    if any(p < ps.c for pr in obj.priors for p in pr):
        return None
    eps, c = spec.epsilon.value, float(ps.c)
    delta = float(sum(abs(a - b) for a, b in zip(*obj.priors)) / 2)
    return bounds.xi(eps, c, n) * math.log1p((1 - n * c) * math.exp(eps)) * delta


# ------------------------------------------------------------------ pipeline
def design_sublinear(spec: Spec):
    """The design pipeline for sublinear objectives: rays → (P) → kernel → exact certificate.

    Returns a :class:`mechdesign.design.DesignResult` whose ``rays`` are the
    extreme rays used by the optimum (normalised to max entry 1).
    """
    from .certify import repair, to_grid
    from .design import Certificate, ClosedForm, DesignResult, GAP_TOLERANCE, SolveReport

    t0 = time.perf_counter()
    method = choose_method(spec)
    rd = design_exact(spec) if method == "exact" else design_column_generation(spec)
    t1 = time.perf_counter()
    mu_fn = column_utility(spec)
    kernel = exact = cert = objective = rays = None
    status = Status.SOLVER_ERROR
    if rd.theta is not None:
        m = None if spec.output_size == "auto" else spec.output_size
        K, rays = rays_to_kernel(rd, mu_fn, m)
        bound_e = spec.epsilon.exp_lower_bound()
        exact, weight, check = repair(to_grid(K), spec.prior_set, bound_e)
        kernel = exact.to_float()
        objective = kernel_utility(spec, kernel)
        gap = max(rd.bound - objective, 0.0)
        cf = corollary1_bound(spec)
        closed = None if cf is None else ClosedForm(
            name="Corollary 1 (Dobrushin paper): Xi(eps,c) log((1-Nc)e^eps + 1) TV(P0,P1), an upper bound",
            value=cf, difference=objective - cf)
        cert = Certificate(feasible=check.feasible, leakage=check.leakage, exp_epsilon_lower_bound=bound_e,
                           worst_ratio=check.worst_ratio if isinstance(check.worst_ratio, Fraction) else None,
                           dual_bound=rd.bound, gap=gap, repair_weight=weight, lp_objective=rd.value,
                           closed_form=closed)
        ok = check.feasible and gap <= GAP_TOLERANCE * max(1.0, abs(objective))
        status = Status.OPTIMAL if ok else Status.SUBOPTIMAL
    t2 = time.perf_counter()
    rows, cols, nnz = rd.lp_size
    report = SolveReport(solver="HiGHS", backend="highs", method=rd.method, seconds=rd.seconds,
                         compile_seconds=0.0, certify_seconds=t2 - t1, total_seconds=t2 - t0,
                         iterations=rd.iterations, lps=rd.iterations, rows=rows, columns=cols, nonzeros=int(nnz),
                         message=f"{len(rd.rays)} rays considered")
    return DesignResult(status=status, objective=objective, kernel=kernel, exact_kernel=exact,
                        epsilon=spec.epsilon.value, certificate=cert, solve=report, spec=spec, rays=rays)
