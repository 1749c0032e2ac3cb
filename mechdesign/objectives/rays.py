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


def mutual_information_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ(k) = Σ_x P(x) k_x log(k_x / P·k): I(X;Y) = Σ_y μ(K(:,y)) under the objective's prior P."""
    P = _prior(spec, spec.objective.prior)

    def mi(R):
        R = np.atleast_2d(R)
        s = R @ P
        w = R * P[None, :]
        ratio = np.where(w > 0, R / np.where(s > 0, s, 1.0)[:, None], 1.0)
        return _xlogy(w, ratio).sum(axis=1)

    return mi


def f_divergence_utility(spec: Spec) -> Callable[[np.ndarray], np.ndarray]:
    """μ(k) = (P1·k) f((P0·k)/(P1·k)), the perspective of f: D_f(K∘P0 ‖ K∘P1) = Σ_y μ(K(:,y))."""
    P0, P1 = (np.array([float(p) for p in pr]) for pr in spec.objective.priors)
    f = spec.objective.f

    def fdiv(R):
        R = np.atleast_2d(R)
        return _perspective(f, R @ P0, R @ P1)

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
