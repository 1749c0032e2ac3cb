"""A-optimal design over the extreme rays of the PML cone: the program behind ``frequency_estimation``.

Write every column of a private kernel as a nonnegative multiple of an extreme ray r of the single-column cone
C(ε,𝒫), K(:,y) = θ_y r_y (splitting a column into rays keeps the kernel private). The Fisher information of one
report about P (:mod:`mechdesign.theory.estimation`) is then linear in θ,

    J(θ) = Σ_r θ_r M_r,   M_r = r rᵀ / (Pᵀ r),

and the program is

    (A)  minimise  max_i tr J_i(θ)⁻¹ − ‖P_i‖²   s.t.  Σ_r θ_r r = 1 (N rows),  θ ≥ 0

(one prior P, or the worst of several P_i). tr J⁻¹ is convex on positive definite matrices (Kiefer 1974; Boyd
and Vandenberghe, Convex Optimization §7.5, A-optimal experiment design), so (A) is convex. Note Pᵀ r > 0 for
every ray when P > 0. J P = Σ θ_r r = 1, so the row constraint is implied by J.

**The dual (lower) bound.** For any symmetric W and any positive definite J,
(W − J⁻¹) J (W − J⁻¹) ⪰ 0 gives

    tr J⁻¹ ≥ 2 tr W − tr(W J W) = 2 tr W − Σ_r θ_r g_r(W),   g_r(W) = ‖W r‖² / (Pᵀ r).

For weights w_i ≥ 0 summing to 1, max_i U_i ≥ Σ_i w_i U_i, so for every feasible θ

    max_i U_i(θ) ≥ Σ_i w_i (2 tr W_i − ‖P_i‖²) − Σ_r θ_r G_r,    G_r = Σ_i w_i g_r(W_i),

and Σ_r θ_r G_r over the feasible θ is at most the value of the LP max{Σ θ_r G_r : Σ θ_r r = 1, θ ≥ 0}, which
by weak duality is at most Σ_x λ_x + N·max(0, h) for any λ, h = max_r (G_r − λ·r)/(1·r) (the sublinear
objectives' pricing bound, :mod:`mechdesign.objectives.sublinear`, with μ = G). Hence

    OPT ≥ Σ_i w_i (2 tr W_i − ‖P_i‖²) − Σ_x λ_x − N·max(0, h).

At the optimum, with W_i = J_i(θ*)⁻¹, w the optimal multipliers and λ the LP dual, this equals OPT (it is the
Lagrangian dual: tr(WJW) = tr J⁻¹ and the KKT conditions say G_r ≤ λ·r with equality on the support), so the
gap closes as the solve converges. The bound holds for *any* W, w and λ: floating-point errors in them cost
nothing; the rounding in evaluating the formula is bounded explicitly (:func:`dual_bound`).

**Solving (A)** over listed rays: column generation. The restricted program over a working set S is solved by
cvxpy with Clarabel (``tr_inv`` of an affine matrix, an SDP); then G_r is priced over *all* listed rays, the LP
above is solved over all of them with HiGHS (its value gives the bound), and the rays with the largest reduced
value G_r − λ_S·r join S. A working set of O(N²) rays suffices (Carathéodory: J determines the row sums, and J
lives in a space of dimension N(N+1)/2), and the emitted kernel is reduced to at most N(N+1)/2 columns by a
basic solution of Σ φ_r M_r = J(θ) (the same J, hence the same U).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["AOptimalDesign", "solve_a_optimal", "dual_bound", "information_matrices", "reduce_support"]

U = 2.0**-53
"""Unit roundoff of doubles."""


@dataclass
class AOptimalDesign:
    rays: np.ndarray
    """The rays of the design (rows, max entry 1)."""
    theta: np.ndarray | None
    """Their weights (K(:,y) = θ_y r_y), or None when the solve failed."""
    value: float | None
    """The program's value at θ: max_i tr J_i(θ)⁻¹ − ‖P_i‖²."""
    bound: float | None
    """A rigorous lower bound on the optimum over every ray listed (see the module docstring)."""
    iterations: int = 0
    seconds: float = 0.0
    rays_considered: int = 0
    message: str = ""


def information_matrices(R: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The N² × |R| matrix whose column r is vec(r rᵀ / Pᵀ r)."""
    B = R / np.sqrt(R @ P)[:, None]
    n = R.shape[1]
    return np.einsum("ri,rj->ijr", B, B).reshape(n * n, -1)


def _values(R, theta, priors):
    """tr J_i(θ)⁻¹ − ‖P_i‖² for each prior (∞ where J_i is singular)."""
    from mechdesign.theory.estimation import mle_error

    used = theta > 0
    K = (R[used] * theta[used, None]).T
    return np.array([mle_error(K, P) for P in priors])


def dual_bound(
    R: np.ndarray, priors: list[np.ndarray], Ws: list[np.ndarray], w: np.ndarray, lp_options, detail: dict | None = None
) -> float:
    """The lower bound Σ_i w_i(2 tr W_i − ‖P_i‖²) − Σλ − N·max(0, h) over the listed rays R (module docstring),
    minus an explicit bound on the floating-point error of evaluating it (−∞ when the LP fails).

    Rounding: every computed g_r = ‖W r‖²/(Pᵀr) is within 4(N + 2)u·‖|W| r‖²/(Pᵀ r) of its exact value (r ≥ 0),
    tr W within N u Σ|W_ii|, ‖P‖² within N u ‖P‖², and each term of h within 8(N + 2)u·(|G_r| + |r|·|λ|)/(1·r)
    (as in the sublinear objectives' exact method), u = 2⁻⁵³."""
    from mechdesign.objectives.rays import ray_lp

    n = R.shape[1]
    w = np.clip(np.asarray(w, float), 0.0, None)
    w = w / w.sum()
    G = np.zeros(len(R))
    G_err = np.zeros(len(R))
    head = 0.0
    head_err = 0.0
    for wi, P, W in zip(w, priors, Ws):
        if wi == 0:
            continue
        s = R @ P
        G += wi * np.sum((R @ W) ** 2, axis=1) / s
        G_err += wi * 4 * (n + 2) * U * np.sum((R @ np.abs(W)) ** 2, axis=1) / s
        head += wi * (2 * np.trace(W) - P @ P)
        head_err += wi * (2 * n * U * np.abs(np.diag(W)).sum() + n * U * (P @ P))
    G_up = G + G_err
    theta, lam, value, _, _ = ray_lp(R, G_up, lp_options)
    if lam is None:
        return -math.inf
    if detail is not None:  # the LP's answer, for choosing rays (column generation)
        detail["theta"], detail["lam"], detail["G"] = theta, lam, G_up
    sums = R.sum(axis=1)
    h = float(np.max((G_up - R @ lam) / sums))
    rounding = 8 * (n + 2) * U * float(np.max((np.abs(G_up) + R @ np.abs(lam)) / sums))
    top = float(lam.sum()) + n * max(h + rounding, 0.0) + 4 * n * U * float(np.abs(lam).sum())
    return head - head_err - top - 4 * U * (abs(head) + abs(top))


def _basis(R: np.ndarray, first: list[int]) -> list[int]:
    """N linearly independent rows of R: ``first`` (as far as independent), then the largest residual first."""
    n = R.shape[1]
    Rn = R / np.linalg.norm(R, axis=1, keepdims=True)
    Q = np.zeros((n, 0))
    chosen: list[int] = []
    for j in list(first) + [None] * n:
        if len(chosen) == n:
            break
        if j is None:
            res = np.linalg.norm(Rn - (Rn @ Q) @ Q.T, axis=1)
            j = int(np.argmax(res))
            if res[j] < 1e-9:
                break
        v = Rn[j] - Q @ (Q.T @ Rn[j])
        if np.linalg.norm(v) < 1e-9:
            continue
        chosen.append(j)
        Q = np.hstack([Q, (v / np.linalg.norm(v))[:, None]])
    return chosen


def _start_set(R: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Indices of a start on which the restricted program has a full-rank feasible point.

    B: N linearly independent rays (largest Fisher trace per unit of mass first). Every ray carries weight in some
    feasible θ (when ε > 0 the column 1 is inside the cone, so 1 − t·r is a combination of rays for small t), so an
    average of such θ carries weight on all of B at once: the LP max{t : Σ θ_r r = 1, θ ≥ 0, θ_b ≥ t (b ∈ B)}
    (HiGHS) has t > 0, and its support (B and at most N more rays) has a feasible θ with J ⪰ t Σ_B M_b ≻ 0."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, hstack

    n, k = R.shape[1], len(R)
    score = np.sum(R * R, axis=1) / (R @ P) / R.sum(axis=1)
    order = np.argsort(-score, kind="stable")
    B = _basis(R, order[: 4 * n].tolist())
    # variables (θ, t): maximise t
    A_eq = hstack([csr_matrix(R.T), csr_matrix((n, 1))]).tocsr()
    A_ub = csr_matrix(
        (
            np.r_[-np.ones(len(B)), np.ones(len(B))],
            (np.r_[np.arange(len(B)), np.arange(len(B))], np.r_[B, [k] * len(B)]),
        ),
        shape=(len(B), k + 1),
    )
    c = np.zeros(k + 1)
    c[-1] = -1.0
    res = linprog(
        c,
        A_ub=A_ub,
        b_ub=np.zeros(len(B)),
        A_eq=A_eq,
        b_eq=np.ones(n),
        bounds=[(0, None)] * k + [(0, 1)],
        method="highs",
    )
    idx = set(B) | set(order[: 2 * n].tolist())
    if res.x is not None:
        idx |= set(np.flatnonzero(res.x[:k] > 0).tolist())
    # one Frank–Wolfe step from a full-rank design: every ray at once when the rays' sum is a constant column (a
    # permutation-invariant cone: θ uniform is feasible), else the LP's θ; the rays of largest reduced value at
    # its W = J⁻¹ (and the LP's answer there) join the start
    total = R.sum(axis=0)
    if np.ptp(total) <= 1e-9 * total.max():
        theta0 = np.full(k, 1.0 / total[0])
    elif res.x is not None:
        theta0 = res.x[:k]
    else:
        return np.array(sorted(idx))
    W = _fisher_inverse(R, theta0, P)
    if W is not None:
        from mechdesign.objectives.rays import ray_lp
        from mechdesign.spec.models import SolverOptions

        G = np.sum((R @ W) ** 2, axis=1) / (R @ P)
        th_lp, lam, _, _, _ = ray_lp(R, G, SolverOptions())
        if lam is not None:
            reduced = (G - R @ lam) / R.sum(axis=1)
            idx |= set(np.argsort(-reduced, kind="stable")[: n * (n + 1) // 2].tolist())
            idx |= set(np.flatnonzero(th_lp > 0).tolist())
    return np.array(sorted(idx))


def _restricted(R: np.ndarray, priors: list[np.ndarray]):
    """Solve (A) over the rows of R with cvxpy + Clarabel: (θ, value, multipliers w of the priors) or None."""
    import cvxpy as cp

    n = R.shape[1]
    theta = cp.Variable(len(R), nonneg=True)
    rows = [R.T @ theta == 1]
    if len(priors) == 1:
        P = priors[0]
        J = cp.reshape(information_matrices(R, P) @ theta, (n, n), order="C")
        problem = cp.Problem(cp.Minimize(cp.tr_inv((J + J.T) / 2)), rows)
        caps = []
    else:
        t = cp.Variable()
        caps = []
        for P in priors:
            J = cp.reshape(information_matrices(R, P) @ theta, (n, n), order="C")
            caps.append(cp.tr_inv((J + J.T) / 2) - float(P @ P) <= t)
        problem = cp.Problem(cp.Minimize(t), rows + caps)
    import warnings

    try:
        with warnings.catch_warnings():  # "may be inaccurate": θ is used as it is, the bound holds for any θ
            warnings.simplefilter("ignore")
            problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=200)
    except Exception:  # noqa: BLE001 - a numerical failure of the solver: try SCS's answer, else none
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem.solve(solver="SCS", eps=1e-9, max_iters=200000)
        except Exception:  # noqa: BLE001
            return None
    if theta.value is None:
        return None
    th = np.clip(np.asarray(theta.value, float), 0.0, None)
    if caps:
        w = np.array([max(float(np.ravel(c.dual_value)[0]), 0.0) if c.dual_value is not None else 0.0 for c in caps])
        if w.sum() <= 0:
            w = np.ones(len(priors))
    else:
        w = np.ones(1)
    return th, w


def _polish(R: np.ndarray, theta: np.ndarray, P: np.ndarray, steps: int = 30) -> np.ndarray:
    """Newton steps with an active set on min tr J(θ)⁻¹ s.t. Σ θ_r r = 1, θ ≥ 0, over the support of θ (the interior
    point's θ is accurate to about the square root of its tolerance; Newton restores full accuracy, so that the
    bound closes to ~1e−12). Gradient −‖W b_r‖², Hessian 2 (B W Bᵀ) ∘ (B W² Bᵀ) with b_r = r/√(Pᵀr), W = J⁻¹; the
    KKT system is solved by least squares (J has fewer degrees of freedom than the support). A step that would
    make a weight negative stops at the first one (ratio test), which leaves the support; a step that does not
    lower the objective is halved. θ is returned unchanged when nothing helps."""
    from scipy.linalg import lstsq

    used = np.flatnonzero(theta > 1e-7 * theta.max())
    th = theta[used].copy()
    stalled = False
    B_all = R[used] / np.sqrt(R[used] @ P)[:, None]
    A_all = R[used].T
    active = np.ones(len(used), bool)

    def value(t, act):
        B = B_all[act]
        J = (B.T * t[act]) @ B
        try:
            return float(np.trace(np.linalg.inv(J)))
        except np.linalg.LinAlgError:
            return math.inf

    f = value(th, active)
    for _ in range(steps):
        act = np.flatnonzero(active)
        B, A, t = B_all[act], A_all[:, act], th[act]
        W = np.linalg.inv((B.T * t) @ B)
        BW = B @ W
        g = -np.sum(BW * BW, axis=1)
        H = 2 * (BW @ B.T) * (BW @ BW.T)
        r = A @ t - 1.0
        KKT = np.block([[H, A.T], [A, np.zeros((A.shape[0], A.shape[0]))]])
        d = lstsq(KKT, np.concatenate([-g, -r]), cond=1e-14, lapack_driver="gelsy", check_finite=False)[0][: len(act)]
        neg = d < 0
        ratios = np.where(neg, -t / np.where(neg, d, -1.0), np.inf)
        block = int(np.argmin(ratios))
        alpha = min(1.0, float(ratios[block]))
        moved = False
        step = alpha
        while step > 1e-8:
            cand = th.copy()
            cand[act] = t + step * d
            if step == alpha and alpha < 1.0:
                cand[act[block]] = 0.0
            cand_active = active.copy()
            if step == alpha and alpha < 1.0:
                cand_active[act[block]] = False
            if np.all(cand[cand_active] > 0):
                fc = value(cand, cand_active)
                if fc <= f:
                    stalled = f - fc <= 1e-15 * abs(f) and step == 1.0
                    th, f, active, moved = cand, fc, cand_active, True
                    break
            step /= 2
        if not moved or stalled or (alpha == 1.0 and np.max(np.abs(d)) <= 1e-15 * np.max(t)):
            break
    out = np.zeros_like(theta)
    out[used[active]] = th[active]
    ok = np.abs(R.T @ out - 1).max() < 1e-9 and value(th, active) <= value(theta[used], np.ones(len(used), bool))
    return out if ok else theta


def _fisher_inverse(R, theta, P) -> np.ndarray | None:
    from mechdesign.theory.estimation import fisher_information

    J = fisher_information((R * theta[:, None]).T, P)
    try:
        W = np.linalg.inv((J + J.T) / 2)
    except np.linalg.LinAlgError:
        return None
    return (W + W.T) / 2


def solve_a_optimal(
    R: np.ndarray, priors: list[np.ndarray], lp_options, tol: float = 2e-7, time_limit: float = 60.0
) -> AOptimalDesign:
    """(A) over the listed rays R by column generation (module docstring), to relative gap ``tol``."""
    from mechdesign.objectives.rays import ray_lp

    t0 = time.perf_counter()
    n = R.shape[1]
    S = _start_set(R, priors[0])
    best = AOptimalDesign(R, None, None, None)
    best_bound = -math.inf
    batch = max(n * (n + 1) // 2, 2 * n)
    it = 0
    while True:
        it += 1
        sol = _restricted(R[S], priors)
        if sol is None:
            break
        th_S, w = sol
        if len(priors) == 1:
            th_S = _polish(R[S], th_S, priors[0])
        theta = np.zeros(len(R))
        theta[S] = th_S
        vals = _values(R, theta, priors)
        value = float(vals.max())
        if best.value is None or value < best.value:
            best.theta, best.value = theta, value
        Ws = [_fisher_inverse(R, theta, P) for P in priors]
        if any(W is None for W in Ws):
            break
        detail: dict = {}
        bound = dual_bound(R, priors, Ws, w, lp_options, detail)
        best_bound = max(best_bound, bound)
        done = best.value - best_bound <= tol * max(abs(best.value), 1e-12)
        if done or time.perf_counter() - t0 > time_limit or it >= 50:
            break
        # price: reduced value of every listed ray against the restricted program's LP dual
        G = sum(wi * np.sum((R @ W) ** 2, axis=1) / (R @ P) for wi, P, W in zip(w / w.sum(), priors, Ws))
        _, lam_S, _, _, _ = ray_lp(R[S], G[S], lp_options)
        if lam_S is None:
            break
        reduced = (G - R @ lam_S) / R.sum(axis=1)
        reduced[S[th_S > 0]] = -math.inf  # rays that left the support may come back
        cand = np.flatnonzero(reduced > 1e-12 * max(1.0, float(np.abs(G).max())))
        if len(cand) == 0:
            break
        cand = cand[np.argsort(-reduced[cand], kind="stable")[:batch]]
        if "lam" in detail:  # and the rays the LP over all rays prefers (a Frank–Wolfe direction)
            full = (detail["G"] - R @ detail["lam"]) / R.sum(axis=1)
            extra = np.union1d(np.flatnonzero(detail["theta"] > 0), np.argsort(-full, kind="stable")[:n])
            cand = np.union1d(cand, extra)
        keep = S[th_S > 1e-7 * max(th_S.max(), 1e-300)]
        S = np.union1d(keep, cand)
    best.bound = best_bound if math.isfinite(best_bound) else None
    best.iterations = it
    best.seconds = time.perf_counter() - t0
    best.rays_considered = len(R)
    return best


def reduce_support(R: np.ndarray, theta: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Weights φ with the same J(φ) = J(θ) (hence the same rows and U) on at most N(N+1)/2 rays: a basic solution
    of {φ ≥ 0 : Σ φ_r M_r = J(θ)} on θ's support, by HiGHS's simplex (Carathéodory). θ itself when that fails or
    changes J by more than 1e−9 relative."""
    from scipy.optimize import linprog

    n = R.shape[1]
    used = np.flatnonzero(theta > 0)
    if len(used) <= n * (n + 1) // 2:
        return theta
    M = information_matrices(R[used], P)
    iu = np.triu_indices(n)
    flat = (iu[0] * n + iu[1]).astype(int)
    A = M[flat]
    b = A @ theta[used]
    res = linprog(np.zeros(len(used)), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
    if res.status != 0 or res.x is None:
        return theta
    phi = np.zeros_like(theta)
    phi[used] = np.clip(res.x, 0.0, None)
    if np.abs(A @ phi[used] - b).max() > 1e-9 * np.abs(b).max():
        return theta
    return phi
