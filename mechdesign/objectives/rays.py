"""The extreme-ray engine shared by the sublinear objectives (mutual information, f-divergences,
Bayes vulnerability): the column utilities μ, the ray LP (P) and turning its solution into a kernel.

A sublinear utility U(K) = Σ_y μ(K(:,y)) with μ convex and positively homogeneous is maximised over the
(ε,𝒫)-PML kernels by the LP over the extreme rays r of the cone of private columns (Kairouz, Oh and
Viswanath's staircase LP for LDP; Grosse et al. for PML):

    (P)  max Σ_r θ_r μ(r)   s.t.  Σ_r θ_r r = 1 (N rows),  θ ≥ 0,

with dual  min Σ_x λ_x  s.t.  λ·r ≥ μ(r) for every ray. K(:, y) = θ_y r_y over the rays used.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.lp.solve import Status, solve_lp
from mechdesign.spec.models import Spec

__all__ = [
    "CG_TIME_LIMIT",
    "RayDesign",
    "column_utility",
    "utility_rounding",
    "rounding_per_mass",
    "kernel_utility",
    "bayes_kernel_utility",
    "ray_lp",
    "rays_to_kernel",
    "normalise_rows",
    "compact_columns",
]

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
        # a^α b^(1−α) in log space: for α = 100 and entries ~1e−5 the factors under- and overflow
        # separately (0·inf) although the product is finite
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            power = ap**alpha * bp ** (1 - alpha)
            bad = ~np.isfinite(power) | ((power == 0) & (ap > 0))
            power[bad] = np.exp(alpha * np.log(ap[bad]) + (1 - alpha) * np.log(bp[bad]))
        if alpha < 1:
            out[pos] = bp - power
            slope = 0.0
        else:
            out[pos] = power - bp
            slope = math.inf
    zero_b = ~pos & (a > 0)
    if zero_b.any():
        out[zero_b] = a[zero_b] * slope if math.isfinite(slope) else math.inf
    return out


def _constant_rows(R: np.ndarray) -> np.ndarray:
    """Rows c·1: there μ = 0 exactly for mutual information and every f-divergence offered (P·(c1) = c for every
    exact prior, log 1 = 0, f(1) = 0), whereas the doubles would give a few ulps of the wrong sign."""
    return R.max(axis=1) == R.min(axis=1)


def mutual_information_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ(k) = Σ_x P(x) k_x log(k_x / P·k): I(X;Y) = Σ_y μ(K(:,y)) under the objective's prior P."""
    P = _prior(spec, spec.objective.prior)

    def mi(R):
        R = np.atleast_2d(R)
        s = R @ P
        w = R * P[None, :]
        ratio = np.where(w > 0, R / np.where(s > 0, s, 1.0)[:, None], 1.0)
        return np.where(_constant_rows(R), 0.0, _xlogy(w, ratio).sum(axis=1))

    return mi


def f_divergence_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ(k) = (P1·k) f((P0·k)/(P1·k)), the perspective of f: D_f(K∘P0 ‖ K∘P1) = Σ_y μ(K(:,y))."""
    P0, P1 = (np.array([float(p) for p in pr]) for pr in spec.objective.priors)
    f = spec.objective.f

    def fdiv(R):
        R = np.atleast_2d(R)
        return np.where(_constant_rows(R), 0.0, _perspective(f, R @ P0, R @ P1))

    return fdiv


def bayes_vulnerability_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ(k) = max_x P(x) k_x: V(K) = Σ_y μ(K(:,y))."""
    P = _prior(spec, spec.objective.prior)
    return lambda R: (np.atleast_2d(R) * P[None, :]).max(axis=1)


COLUMN_UTILITIES: dict[str, Callable[[Spec], Callable[[np.ndarray], np.ndarray]]] = {
    "mutual_information": mutual_information_utility,
    "f_divergence": f_divergence_utility,
    "bayes_vulnerability": bayes_vulnerability_utility,
}
"""μ of each sublinear objective, by kind: the engine evaluates it on candidate rays."""


# ------------------------------------------------------------------ rounding of μ
UNIT_ROUNDOFF = 2.0**-53
"""u: the relative rounding of one correctly rounded double operation."""
ROUNDING_SAFETY = 1.25
"""Factor on every evaluated error bound below: it covers the second-order terms the first-order analyses drop
(products of two γ's, below 1e-14 of the bound at N ≤ 1000) and the rounding of the bound's own arithmetic (a few
ulps of a sum of positive terms)."""
LIBM_ULPS = 4.0
"""Relative error of numpy's log, exp, pow and sqrt in units of u = 2^−53 (glibc's are within 1 ulp ≤ 2u;
4u is a margin)."""


def _gamma(k: int) -> float:
    """γ_k = k u/(1 − k u): the relative error of a sum of k nonnegative rounded products (Higham, Accuracy and
    Stability of Numerical Algorithms, Lemma 3.1 and eq. 3.5)."""
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


def _f_slopes(f):
    """(f', h) with h(t) = f(t) − t f'(t), the partial derivatives of the perspective G(a, b) = b f(a/b):
    ∂G/∂a = f'(a/b), ∂G/∂b = h(a/b). f' is nondecreasing (f convex) and h' = −t f'' ≤ 0, so over an interval of
    ratios both reach their largest magnitude at an end (tv: f' is the subgradient sign, |f'| = |h| = ½)."""
    if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
        return (lambda t: np.log(t) + 1.0), (lambda t: -t)
    if f == "tv":
        return (lambda t: np.full_like(t, 0.5)), (lambda t: np.full_like(t, 0.5))
    if f == "hellinger":
        return (lambda t: 1.0 - 1.0 / np.sqrt(t)), (lambda t: 1.0 - np.sqrt(t))
    if f == "chi2":
        return (lambda t: 2.0 * (t - 1.0)), (lambda t: 1.0 - t * t)
    alpha = float(f.alpha)
    if alpha < 1:
        return (lambda t: -alpha * t ** (alpha - 1.0)), (lambda t: 1.0 - (1.0 - alpha) * t**alpha)
    return (lambda t: alpha * t ** (alpha - 1.0)), (lambda t: (1.0 - alpha) * t**alpha - 1.0)


def f_divergence_rounding(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """E(r) ≥ |μ̂(r) − μ(r)| for the f-divergence column utility: μ̂ as :func:`f_divergence_utility` computes it in
    doubles, μ(r) = G(P0·r, P1·r) exactly, with the spec's exact priors and the ray r as stored.

    An absolute bound: μ = b f(a/b) cancels (a^α b^(1−α) − b at a ≈ b, a log(a/b), (√a − √b)², …), so its error
    is not proportional to |μ|. Derivation, for r ≥ 0 with N entries, a = P0·r, b = P1·r, â, b̂ their doubles:

    1. Inputs. Each prior mass is rounded once (relative u) and a·b is a sum of N nonnegative rounded products,
       so |â − a| ≤ δa = γ_(N+2)·â/(1 − γ_(N+2)) (γ_k = ku/(1 − ku)), likewise δb; â = 0 means every product is 0,
       so a = 0 exactly.
    2. Propagation. G is differentiable in (a, b) for b > 0 with ∂G/∂a = f'(t), ∂G/∂b = h(t) = f(t) − t f'(t),
       t = a/b. By the mean value theorem on the box [â ± δa] × [b̂ ± δb], whose ratios lie in
       [t_lo, t_hi] = [(â − δa)/(b̂ + δb), (â + δa)/(b̂ − δb)]:
       |G(a, b) − G(â, b̂)| ≤ max(|f'(t_lo)|, |f'(t_hi)|)·δa + max(|h(t_lo)|, |h(t_hi)|)·δb,
       the maxima at the ends because f' and h are monotone (:func:`_f_slopes`). For f_α, α = 100, at â ≈ b̂:
       ≈ 100(δa + δb), the error that made the computed μ of the all-ones ray −3.3e−14 instead of 0.
    3. Evaluation of G(â, b̂) in doubles, each operation relative u, log/exp/pow/sqrt within LIBM_ULPS·u relative:
       kl â log(â/b̂): ≤ (LIBM_ULPS + 2)u·â(|log(â/b̂)| + 1); tv ½|â − b̂|: u|â − b̂|;
       hellinger d² with d = √â − √b̂: d̂ is within Δ = LIBM_ULPS u(√â + √b̂) + u|d̂| of d, so d̂² rounded is within
       2|d̂|Δ + Δ² + u d̂² (small where â ≈ b̂); chi2 (â − b̂)²/b̂: ≤ 5u·|μ̂|;
       f_α: T = â^α b̂^(1−α) (or its log-space form exp(α log â + (1−α) log b̂)) has relative error at most
       ρ = (3 + 2 LIBM_ULPS)u + 2 LIBM_ULPS u·(α|log â| + |1 − α||log b̂|), and T − b̂: ≤ ρ T + u(T + b̂).
    4. b̂ = 0 (P1 misses the ray's support): μ̂ = â·f'(∞) (finite slopes only; ∞ is refused earlier), error
       ≤ f'(∞)(δa + u â).

    E is the sum of 2 and 3 (or 4), times :data:`ROUNDING_SAFETY`; 0 on a ray c·1, where μ̂ = 0 = μ is exact
    (:func:`_constant_rows`). At N = 4 and unit-scale values E is about
    1e−15 times the slopes: the bound stays tight where μ does not cancel against large slopes."""
    P0, P1 = (np.array([float(p) for p in pr]) for pr in spec.objective.priors)
    f = spec.objective.f
    slope, h = _f_slopes(f)
    u = UNIT_ROUNDOFF
    n = spec.n

    def err(R):
        R = np.atleast_2d(R)
        a, b = R @ P0, R @ P1
        rel = _gamma(n + 2) / (1.0 - _gamma(n + 2))
        da, db = rel * a, rel * b
        out = np.zeros(len(a))
        pos = b > 0
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            ap, bp, dap, dbp = a[pos], b[pos], da[pos], db[pos]
            t_lo = np.maximum(ap - dap, 0.0) / (bp + dbp) * (1 - 4 * u)
            t_hi = (ap + dap) / (bp - dbp) * (1 + 4 * u)
            # the a-derivative matters only where a can move (â > 0); at â = 0, t_lo = 0 may be a pole of f'
            fa = np.where(dap > 0, np.maximum(np.abs(slope(np.where(dap > 0, t_lo, 1.0))), np.abs(slope(t_hi))), 0.0)
            hb = np.maximum(np.abs(h(t_lo)), np.abs(h(t_hi)))
            prop = np.where(dap > 0, fa * dap, 0.0) + hb * dbp
            L = LIBM_ULPS
            if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
                q = np.where(ap > 0, ap / bp, 1.0)
                ev = (L + 2) * u * ap * (np.abs(np.log(q)) + 1.0)
            elif f == "tv":
                ev = u * np.abs(ap - bp)
            elif f == "hellinger":
                d = np.abs(np.sqrt(ap) - np.sqrt(bp))
                dd = L * u * (np.sqrt(ap) + np.sqrt(bp)) + u * d
                ev = 2 * d * dd + dd * dd + u * d * d
            elif f == "chi2":
                ev = 5 * u * (ap - bp) ** 2 / bp
            else:
                alpha = float(f.alpha)
                la = np.where(ap > 0, np.abs(np.log(np.where(ap > 0, ap, 1.0))), 0.0)
                T = np.where(ap > 0, np.exp(alpha * np.log(np.where(ap > 0, ap, 1.0)) + (1 - alpha) * np.log(bp)), 0.0)
                rho = (3 + 2 * L) * u + 2 * L * u * (alpha * la + abs(1 - alpha) * np.abs(np.log(bp)))
                ev = rho * T * (1 + 1e-6) + u * (T + bp)
            out[pos] = prop + ev
        zero_b = ~pos & (a > 0)
        if zero_b.any():
            s_inf = {"tv": 0.5, "hellinger": 1.0}.get(f, 0.0) if isinstance(f, str) else 0.0
            out[zero_b] = s_inf * (da[zero_b] + u * a[zero_b])
        out = ROUNDING_SAFETY * out
        return np.where(_constant_rows(R), 0.0, np.where(np.isnan(out), np.inf, out))

    return err


def mutual_information_rounding(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """E(r) ≥ |μ̂(r) − μ(r)| for μ(r) = Σ_x w_x log(r_x/s), w_x = P(x) r_x, s = P·r (exact prior, r as stored).

    The terms cancel (their sum is 0 on r = 1), so the bound is absolute. ŝ has relative error γ_(N+1) (prior
    rounding u, each product u, the sum γ_(N−1)); the quotient r_x/ŝ then γ_(N+2), so log(r_x/ŝ) is within
    γ_(N+2)(1 + γ_(N+2)) + LIBM_ULPS·u·|L_x| of log(r_x/s), L_x = log(r_x/ŝ) (this shift of every log by the error
    of ŝ is the cancelling part: it adds s·γ_(N+2) however small μ is); ŵ_x = P̂_x r_x is within γ_2 of w_x, the
    product ŵ_x L_x rounds by u and the N-term sum by γ_(N−1) of Σ|w_x L_x|. Hence, to first order,
    E ≤ Σ_x w_x(γ_(N+2) + (γ_(N+2) + LIBM_ULPS u)|L_x|), times :data:`ROUNDING_SAFETY` (0 on a ray c·1, where
    μ̂ = 0 = μ exactly). Per unit of mass (r of entries ≤ 1 and mass 1: s ≤ 1 and Σ w_x|L_x| ≤
    Σ P_x r_x|log r_x| + s|log s| ≤ 2/e) it is at most ROUNDING_SAFETY·(2γ_(N+2) + LIBM_ULPS u)·(1 + 2/e):
    :func:`rounding_per_mass`."""
    P = _prior(spec, spec.objective.prior)
    n = spec.n

    def err(R):
        R = np.atleast_2d(R)
        s = R @ P
        w = R * P[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(w > 0, R / np.where(s > 0, s, 1.0)[:, None], 1.0)
            L = np.abs(np.log(ratio))
        terms = w * (_gamma(n + 2) + (_gamma(n + 2) + LIBM_ULPS * UNIT_ROUNDOFF) * L)
        return np.where(_constant_rows(R), 0.0, ROUNDING_SAFETY * terms.sum(axis=1))

    return err


def bayes_vulnerability_rounding(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """E(r) ≥ |μ̂(r) − μ(r)| for μ(r) = max_x P(x) r_x: one rounded prior mass and one product, 2u·μ̂, times
    :data:`ROUNDING_SAFETY`."""
    mu = bayes_vulnerability_utility(spec)
    return lambda R: ROUNDING_SAFETY * 2 * UNIT_ROUNDOFF * (1 + 2 * UNIT_ROUNDOFF) * np.abs(mu(R))


UTILITY_ROUNDING: dict[str, Callable[[Spec], Callable[[np.ndarray], np.ndarray]]] = {
    "mutual_information": mutual_information_rounding,
    "f_divergence": f_divergence_rounding,
    "bayes_vulnerability": bayes_vulnerability_rounding,
}
"""By kind: E(r) ≥ |μ̂(r) − μ(r)|, the absolute floating-point error of the computed column utility of each ray
(exact priors, ray as stored); every bound formed from μ values adds it."""


def utility_rounding(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """E as a vectorised function: rows of R → an upper bound on the absolute error of μ̂ on each row."""
    return UTILITY_ROUNDING[spec.objective.kind](spec)


ROUNDING_PER_MASS: dict[str, Callable[[int], float]] = {
    "mutual_information": lambda n: (
        ROUNDING_SAFETY * (2 * _gamma(n + 2) + LIBM_ULPS * UNIT_ROUNDOFF) * (1 + 2 / math.e)
    ),
    "bayes_vulnerability": lambda n: ROUNDING_SAFETY * 2 * UNIT_ROUNDOFF * (1 + 2 * UNIT_ROUNDOFF),
}
"""By kind, N → sup over rays r of E(r)/(1·r), where a uniform bound is known: for r ≥ 0 of mass 1, μ_MI's error is
≤ ROUNDING_SAFETY·(2γ_(N+2) + LIBM_ULPS u)·(1 + 2/e) (:func:`mutual_information_rounding`), and μ_Bayes ≤ 1."""


def rounding_per_mass(spec: Spec) -> float | None:
    """sup over rays r of E(r)/(1·r) (:data:`ROUNDING_PER_MASS`): used by pricing, which bounds rays it does not
    list. None where no uniform bound is known (f-divergences: their slopes are unbounded)."""
    per_mass = ROUNDING_PER_MASS.get(spec.objective.kind)
    return None if per_mass is None else per_mass(spec.n)


def column_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ as a vectorised function: rows of R (shape (r, N)) → μ of each row."""
    try:
        return COLUMN_UTILITIES[spec.objective.kind](spec)
    except KeyError:
        raise ValueError(f"{spec.objective.kind} is not a sublinear objective") from None


def kernel_utility(spec: Spec, K: np.ndarray) -> float:
    """U(K) = Σ_y μ(K(:,y))."""
    return float(column_utility(spec)(np.asarray(K, float).T).sum())


BLOCK_ENTRIES = 1 << 16
"""Entries of K per block of rows in the O(NM) passes over a kernel (a block stays in cache)."""


def bayes_kernel_utility(K: np.ndarray, P: np.ndarray) -> float:
    """V(K) = Σ_y max_x P(x) K_xy, one pass over K as stored: rows in blocks, a running maximum per column.

    Equal bit for bit to Σ_y μ(K(:,y)) of :func:`bayes_vulnerability_utility` on K transposed: each product
    P(x) K_xy is the same double, a maximum is exact whatever the order, and the M column maxima are
    summed by the same pairwise sum of one contiguous vector. O(NM) time, O(M) memory beyond K."""
    K = np.asarray(K, float)
    P = np.asarray(P, float)
    n, m = K.shape
    step = max(1, BLOCK_ENTRIES // max(m, 1))
    buf = np.empty((min(step, n), m))
    best = np.multiply(K[:1], P[:1, None]).max(axis=0)
    for a in range(0, n, step):
        b = min(a + step, n)
        block = np.multiply(K[a:b], P[a:b, None], out=buf[: b - a])
        np.maximum(best, block.max(axis=0), out=best)
    return float(best.sum())


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
    if options.method == "auto":  # N rows, many columns: simplex (interior point is far slower here)
        options = options.model_copy(update={"method": "simplex"})
    sol = solve_lp(lp, options)
    if sol.x is None or sol.row_dual is None or sol.status is not Status.OPTIMAL:
        return None, None, None, sol, lp
    lam = -np.asarray(sol.row_dual, float)
    return np.asarray(sol.x, float), lam, sol.objective, sol, lp


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
                merged = cols[a][None, :] + cols[a + 1 :]
                loss = base[a] + base[a + 1 :] - mu_fn(merged)
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


# ------------------------------------------------------------------ fixed output sizes
def normalise_rows(K: np.ndarray) -> np.ndarray:
    K = np.clip(np.asarray(K, float), 0.0, None)
    return K / K.sum(axis=1, keepdims=True)


def compact_columns(K: np.ndarray, m: int) -> np.ndarray:
    """The M columns of an N-column kernel with at most M nonzero columns (the largest M kept;
    any residue of the solver in the others is merged into the first kept one: post-processing)."""
    order = np.argsort(-K.sum(axis=0), kind="stable")
    keep, rest = order[:m], order[m:]
    out = K[:, np.sort(keep)].copy()
    out[:, 0] += K[:, rest].sum(axis=1)
    return out
