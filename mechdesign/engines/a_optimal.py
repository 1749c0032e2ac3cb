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

**Solving (A)** over listed rays: column generation. The first restricted program over a working set S is an SDP
solved by Clarabel, called directly (:func:`_restricted_clarabel`: tr J⁻¹ = min{tr X : [[X, I], [I, J]] ⪰ 0};
through cvxpy's ``tr_inv`` when that fails); its θ is taken to a vertex of its optimal face with the same J
(:func:`reduce_support`) and finished by the active-set Newton method :func:`_newton` (the interior point is accurate
to about the square root of its tolerance; Newton restores full accuracy, so that the bound closes to ~1e−12). Each
later round starts Newton from the last θ with the new rays at 0 (one prior: Clarabel only when Newton does not
reach the optimality conditions on S). G_r is priced over *all* listed rays against the restricted multipliers λ_S,
and the rays with the largest reduced value G_r − λ_S·r join S. The floating-point value of the bound at λ_S,
value − N·max(0, h_S) at a restricted optimum, says when the bound can close: only then (or in the last round) is
the LP above solved over all rays with HiGHS for the rigorous bound (:func:`dual_bound`, whose rounding
allowances hold for any W, w and λ, so that how θ was found costs the certificate nothing). A working set of O(N²)
rays suffices (Carathéodory: J determines the row sums, and J lives in a space of dimension N(N+1)/2), and the
emitted kernel is reduced to at most N(N+1)/2 columns by a basic solution of Σ φ_r M_r = J(θ) (the same J, hence
the same U).
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


def _reraise_unless_solver_failure(exc: BaseException) -> None:
    """Re-raise Ctrl-C and exits; anything else a conic solver raises is its numerical failure, which the caller
    answers with a fallback. Clarabel is Rust: a failed eigen-decomposition of a PSD cone's step (seen with
    clarabel 0.5.0, the lowest version declared) surfaces as pyo3's ``PanicException``, a ``BaseException`` that
    ``except Exception`` does not catch."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise exc


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
    """Solve (A) over the rows of R: (θ, multipliers w of the priors) or None. Clarabel directly
    (:func:`_restricted_clarabel`); when it fails, the same program through cvxpy (Clarabel, then SCS)."""
    sol = _restricted_clarabel(R, priors)
    return sol if sol is not None else _restricted_cvxpy(R, priors)


def _svec_index(i, j):
    """Position of entry (i, j), i ≤ j, in Clarabel's packed triangle (upper triangle, column by column)."""
    return j * (j + 1) // 2 + i


def _restricted_clarabel(R: np.ndarray, priors: list[np.ndarray]):
    """Solve (A) over the rows of R with Clarabel called directly (no modelling layer): (θ, w) or None.

    tr J⁻¹ = min{tr X : [[X, I], [I, J]] ⪰ 0} (Schur complement; Boyd and Vandenberghe §7.5), so over
    x = (θ, X_1, …, X_k[, t]) the program is the SDP

        minimise tr X (one prior) or t (several: tr X_i − ‖P_i‖² ≤ t, whose multipliers are w)
        s.t.  Rᵀθ = 1,  θ ≥ 0,  [[X_i, I], [I, J_i(θ)]] ⪰ 0,  J_i(θ) = Σ_r θ_r r rᵀ / (P_iᵀ r),

    one PSD cone of order 2N per prior, in Clarabel's form A x + s = b, s ∈ K (a PSD cone's s is the upper
    triangle of the matrix column by column, off-diagonal entries times √2)."""
    import warnings

    import clarabel
    from scipy.sparse import coo_matrix, csc_matrix

    m, n = R.shape
    k = len(priors)
    nx = n * (n + 1) // 2
    nvar = m + k * nx + (1 if k > 1 else 0)
    iu, ju = np.triu_indices(n)  # X's variables: X_ij, i ≤ j (row-major over the upper triangle)
    scale = np.where(iu == ju, 1.0, math.sqrt(2.0))
    rows, cols, vals = [], [], []
    b = []
    # zero cone: Rᵀθ = 1
    r0 = 0
    ri, ci = np.nonzero(R.T)
    rows.append(ri)
    cols.append(ci)
    vals.append(R.T[ri, ci])
    b.append(np.ones(n))
    r0 += n
    # nonnegative cone: θ ≥ 0 (−θ + s = 0), then t − (tr X_i − ‖P_i‖²) ≥ 0
    rows.append(r0 + np.arange(m))
    cols.append(np.arange(m))
    vals.append(-np.ones(m))
    b.append(np.zeros(m))
    r0 += m
    diag = np.flatnonzero(iu == ju)
    if k > 1:
        for i, P in enumerate(priors):
            rows.append(np.full(n + 1, r0 + i))
            cols.append(np.r_[m + i * nx + diag, nvar - 1])
            vals.append(np.r_[np.ones(n), -1.0])
            b.append([float(P @ P)])
        r0 += k
    # PSD cones: s = svec([[X, I], [I, J(θ)]]) = b − A x
    sz = 2 * n
    big_x = _svec_index(iu, ju)  # X block: entry (i, j)
    big_j = _svec_index(n + iu, n + ju)  # J block: entry (n + i, n + j)
    eye = _svec_index(np.arange(n), n + np.arange(n))  # the identity block, entries (i, n + i)
    for i, P in enumerate(priors):
        rows.append(r0 + big_x)
        cols.append(m + i * nx + np.arange(nx))
        vals.append(-scale)
        B = R / np.sqrt(R @ P)[:, None]
        Jcoef = (B[:, iu] * B[:, ju]) * scale  # m × nx: the packed J(e_r), scaled
        jr, jc = np.nonzero(Jcoef.T)
        rows.append(r0 + big_j[jr])
        cols.append(jc)
        vals.append(-Jcoef.T[jr, jc])
        bb = np.zeros(sz * (sz + 1) // 2)
        bb[eye] = math.sqrt(2.0)
        b.append(bb)
        r0 += len(bb)
    A = csc_matrix(coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r0, nvar)))
    q = np.zeros(nvar)
    if k > 1:
        q[-1] = 1.0
    else:
        q[m + diag] = 1.0
    cones = [clarabel.ZeroConeT(n), clarabel.NonnegativeConeT(m + (k if k > 1 else 0))]
    cones += [clarabel.PSDTriangleConeT(sz)] * k
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    settings.max_iter = 200
    settings.direct_solve_method = "qdldl"  # 2–3 times faster here than the multi-threaded default (faer)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = clarabel.DefaultSolver(csc_matrix((nvar, nvar)), q, A, np.concatenate(b), cones, settings).solve()
    except BaseException as exc:  # noqa: BLE001 - a numerical failure of the solver: the caller falls back
        _reraise_unless_solver_failure(exc)
        return None
    x = np.asarray(sol.x, float)
    if str(sol.status) not in ("Solved", "AlmostSolved") or not np.all(np.isfinite(x[:m])):
        return None
    th = np.clip(x[:m], 0.0, None)
    if k > 1:
        z = np.asarray(sol.z, float)[n + m : n + m + k]
        w = np.clip(z, 0.0, None)
        if not np.isfinite(w).all() or w.sum() <= 0:
            w = np.ones(k)
    else:
        w = np.ones(1)
    return th, w


def _restricted_cvxpy(R: np.ndarray, priors: list[np.ndarray]):
    """Solve (A) over the rows of R with cvxpy (``tr_inv``) + Clarabel, else SCS: (θ, multipliers w) or None."""
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
    except BaseException as exc:  # noqa: BLE001 - a numerical failure of the solver: try SCS's answer, else none
        _reraise_unless_solver_failure(exc)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem.solve(solver="SCS", eps=1e-9, max_iters=200000)
        except BaseException as exc2:  # noqa: BLE001
            _reraise_unless_solver_failure(exc2)
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


@dataclass
class _NewtonResult:
    theta: np.ndarray
    """The weights reached (the input θ when nothing helped)."""
    lam: np.ndarray | None
    """Multipliers λ of Σ θ_r r = 1 at θ (λ·r = G_r = ‖W b_r‖² on the support), None without a Newton system."""
    optimal: bool
    """Whether θ satisfies the optimality conditions of the program over every row of R, to relative 1e−9."""


def _newton(R: np.ndarray, theta: np.ndarray, P: np.ndarray, steps: int) -> _NewtonResult:
    """A primal active-set Newton method for min f(θ) = tr J(θ)⁻¹ s.t. Σ θ_r r = 1, θ ≥ 0 over the rows r of R,
    from θ (feasible up to rounding; weights below 1e−7 of the largest start at 0).

    On the free set F (the positive weights, and rays just added at 0): gradient g_r = −‖W b_r‖² = −G_r, Hessian
    H = 2 (B W Bᵀ) ∘ (B W² Bᵀ) with b_r = r/√(Pᵀr), W = J⁻¹, and the Newton step d with multipliers λ from the KKT
    system [[H, Aᵀ], [A, 0]] (d, λ) = (−g, 1 − Aθ) (A = the rays of F as columns). H is singular when |F| exceeds
    N(N+1)/2, but dᵀHd = 2 tr(W Δ W Δ W) vanishes only where Δ = Σ d_r b_r b_rᵀ = 0, where gᵀd = −tr(W Δ W) = 0 too,
    so the system is consistent and least squares gives a step. A free ray at 0 with d_r < 0 leaves F; a step that
    would make a weight negative stops at the first one (ratio test), which leaves F; a weight below 1e−6 of the
    largest that stops the step at once just leaves F (then, and at the start, the least-norm correction on F restores
    Σ θ_r r = 1); a step that does not lower f is halved. Steps below 1e−6 of the largest weight (where f moves by little more than its rounding) are
    taken whole while they shrink. When the steps make no more progress on F, the rays outside F with a reduced value
    (G_r − λ·r)/(1·r) above 1e−11·U/N (the KKT conditions ask G_r ≤ λ·r; :func:`dual_bound`) join F at 0, up to N at a
    time, largest first. ``optimal``: at the end Aθ = 1 to 1e−12 and the gap of the bound of :func:`dual_bound` at
    W = J(θ)⁻¹ and the least-squares λ over the support, −Σ θ_r (G_r − λ·r) + N·max(0, max_r (G_r − λ·r)/(1·r)) in
    floating point, is at most 1e−10·U over every row of R. θ is returned unchanged when the end point is
    infeasible or worse than a feasible θ."""
    from scipy.linalg import lstsq

    m, n = R.shape
    B_all = R / np.sqrt(R @ P)[:, None]
    sums = R.sum(axis=1)
    top = theta.max()
    free = theta > 1e-7 * top
    th = np.where(free, theta, 0.0)

    def feasible(t, fr):
        """t on F moved by the least-norm correction onto Σ θ_r r = 1 when that keeps it positive (dropping weights
        breaks the rows by up to their size; a line search on f would reject the step that restores them, which
        lowers the mass and so raises f)."""
        act = np.flatnonzero(fr)
        A = R[act].T
        c = np.linalg.lstsq(A, 1.0 - A @ t[act], rcond=None)[0]
        if np.all(t[act] + c > 0):
            t = t.copy()
            t[act] += c
        return t

    th = feasible(th, free)

    def value(t, fr):
        B = B_all[fr]
        J = (B.T * t[fr]) @ B
        try:
            return float(np.trace(np.linalg.inv(J)))
        except np.linalg.LinAlgError:
            return math.inf

    f0 = value(theta, theta > 0)
    f = value(th, free)
    lam = None
    W = None
    just_added: np.ndarray | None = None
    last_small: float | None = None
    for _ in range(steps):
        act = np.flatnonzero(free)
        B, A, t = B_all[act], R[act].T, th[act]
        try:
            W = np.linalg.inv((B.T * t) @ B)
        except np.linalg.LinAlgError:
            break
        W = (W + W.T) / 2
        BW = B @ W
        g = -np.sum(BW * BW, axis=1)
        H = 2 * (BW @ B.T) * (BW @ BW.T)
        KKT = np.block([[H, A.T], [A, np.zeros((n, n))]])
        sol = lstsq(KKT, np.concatenate([-g, 1.0 - A @ t]), cond=1e-14, lapack_driver="gelsy", check_finite=False)[0]
        d, lam = sol[: len(act)], sol[len(act) :]
        leave = (t <= 0) & (d < 0)  # rays at 0 that the step would make negative
        if leave.any():
            free[act[leave]] = False
            if just_added is not None and not free[just_added].any():
                break  # every ray just added left again: stop rather than cycle
            continue
        just_added = None
        neg = d < 0
        ratios = np.where(neg, -t / np.where(neg, d, -1.0), np.inf)
        block = int(np.argmin(ratios))
        alpha = min(1.0, float(ratios[block]))
        size = float(np.max(np.abs(d)))
        if alpha < 1e-3 and t[block] <= 1e-6 * t.max():
            # a weight next to 0 stops the step at once: it leaves F (the next step restores Σ θ_r r = 1)
            th[act[block]] = 0.0
            free[act[block]] = False
            th = feasible(th, free)
            f = value(th, free)
            continue
        if alpha == 1.0 and size <= 1e-6 * t.max():
            # next to the optimum on F, where f changes by little more than its rounding: the full step, while the
            # steps shrink (quadratic convergence), with no comparison of f
            th[act] = t + d
            f = value(th, free)
            converged = size <= 1e-13 * t.max() or (last_small is not None and size > 0.1 * last_small)
            last_small = size
        else:
            last_small = None
            converged = True  # unless a step lowers f
            step = alpha
            while step > 1e-8:
                cand = th.copy()
                cand[act] = t + step * d
                cand_free = free.copy()
                if step == alpha and alpha < 1.0:
                    cand[act[block]] = 0.0
                    cand_free[act[block]] = False
                if np.all(cand[cand_free] > 0):
                    fc = value(cand, cand_free)
                    if fc <= f:
                        th, f, free, converged = cand, fc, cand_free, False
                        break
                step /= 2
        if not converged:
            continue
        # the steps make no progress on F: price the rays outside it at this θ
        W, lam = _newton_multipliers(B_all, R, th, free)
        if W is None:
            break
        G = np.sum((B_all @ W) ** 2, axis=1)
        reduced = np.where(free, -math.inf, (G - R @ lam) / sums)
        enter = np.flatnonzero(reduced > 1e-11 * (f - P @ P) / n)  # what they could add to the gap below
        if len(enter) == 0:
            break
        just_added = enter[np.argsort(-reduced[enter], kind="stable")[:n]]
        free[just_added] = True
    out = np.where(free, th, 0.0)
    worse = np.abs(R.T @ theta - 1).max() <= 1e-12 and not value(out, out > 0) <= f0  # than a feasible start
    if np.abs(R.T @ out - 1).max() > 1e-12 or worse:
        return _NewtonResult(theta, None, False)
    W, lam = _newton_multipliers(B_all, R, out, out > 0)
    if W is None:
        return _NewtonResult(out, None, False)
    G = np.sum((B_all @ W) ** 2, axis=1)
    reduced = G - R @ lam
    # value − (the bound of :func:`dual_bound` at these W, λ) = −Σ θ_r (G_r − λ·r) + N·max(0, h) when Aθ = 1
    gap = -float(out @ reduced) + n * max(0.0, float(np.max(reduced / sums)))
    optimal = np.abs(R.T @ out - 1).max() <= 1e-12 and gap <= 1e-10 * (value(out, out > 0) - P @ P)
    return _NewtonResult(out, lam, bool(optimal))


def _newton_multipliers(B_all, R, theta, free):
    """W = J(θ)⁻¹ and the least-squares multipliers λ of G_r = λ·r over the free rays (None, None when J is
    singular)."""
    act = np.flatnonzero(free)
    B = B_all[act]
    try:
        W = np.linalg.inv((B.T * theta[act]) @ B)
    except np.linalg.LinAlgError:
        return None, None
    W = (W + W.T) / 2
    G = np.sum((B @ W) ** 2, axis=1)
    lam = np.linalg.lstsq(R[act], G, rcond=None)[0]
    return W, lam


BARRIER_MU_START = 1e-4
"""The barrier parameter at the start, times tr J⁻¹/m (the warm start is close to the restricted optimum: a larger
start spends its first Newton steps walking away from it)."""
BARRIER_CUT_CENTRED = 0.1
"""The barrier parameter's decrease once the Newton decrement shows a central point."""
BARRIER_CUT_NEAR = 0.3
"""Its decrease after a nearly full step with a small decrement (N = 50, 1,712 rays: 39 Newton steps and 2.3 s with
these three constants, against 62 steps and 3.8 s with a start of 1e-2 and decreases of 5 and 2; values within
2e-10 relative)."""
BARRIER_FLOOR = 1e-3
"""The start's weights are raised to at least this share of the largest (the infeasible-start Newton step restores
the rows). The rays a round adds enter with tiny weights, and from 1e-6 of the largest each Newton step could only
about double them: at N = 50 (min_mass, 2,150 rays, the restricted solve of a column-generation round) the first
14 steps went to that, with full steps and a slowly falling decrement. With 1e-3: 28 steps against 34, 4.9 s against
6.0 s on one core (1,850 rays: 3.8 s against 5.4 s), the same value to 1e-12 relative."""


def barrier(
    R: np.ndarray,
    theta: np.ndarray,
    P: np.ndarray,
    tol: float = 1e-9,
    max_iter: int = 200,
    deadline: float = math.inf,
    mu_start: float = BARRIER_MU_START,
) -> np.ndarray | None:
    """A primal log-barrier interior-point method for the restricted program over the rows r of R (Boyd and
    Vandenberghe, Convex Optimization §11.3, with the infeasible-start Newton step of §10.3):

        minimise  tr J(θ)⁻¹ − μ Σ_r log θ_r   s.t.  Σ_r θ_r r = 1,   J(θ) = Σ_r θ_r b_r b_rᵀ,  b_r = r/√(Pᵀr),

    for μ decreasing to 0. The Newton system [[H + μΘ⁻², R], [Rᵀ, 0]] (d, ν) = (−g + μ/θ, 1 − Rᵀθ) (g and H the
    gradient and Hessian of :func:`_newton`) has a positive definite block, so one Cholesky factorisation and an
    N × N Schur complement solve it; steps stop at 0.99 of the way to the boundary and, once Σ θ_r r = 1 holds,
    backtrack on the barrier function. μ starts at ``mu_start``·tr J⁻¹/m, falls by 10 once the Newton decrement
    shows a central point and by 3 after a nearly full step with a small decrement (:data:`BARRIER_CUT_CENTRED`,
    :data:`BARRIER_CUT_NEAR`), and the method stops at either when m·μ ≤ ``tol``·tr J⁻¹ (m·μ is the duality gap of
    the barrier's central point; the value is exact for the θ returned, only its optimality is to ``tol``). Unlike the
    active-set method, the weights that tend to 0 leave together, so at N = 50 with 1,300 rays it needs about 40
    steps (1.3 s) where :func:`_newton` needs over 100 (17 s). Returns θ > 0 (Σ θ_r r = 1 to rounding), or None
    when J is singular at the start or a factorisation fails; at ``deadline`` (time.perf_counter()) it returns the
    point reached (feasible once a full step has been taken)."""
    from scipy.linalg import cho_factor, cho_solve

    m, _ = R.shape
    B = R / np.sqrt(R @ P)[:, None]
    th = np.maximum(np.asarray(theta, float), BARRIER_FLOOR * float(np.max(theta)))

    def trace_inverse(t):
        try:
            L = np.linalg.cholesky((B.T * t) @ B)
        except np.linalg.LinAlgError:
            return math.inf
        Li = np.linalg.inv(L)
        return float(np.sum(Li * Li))

    f = trace_inverse(th)
    if not math.isfinite(f):
        return None
    mu = mu_start * f / m
    for _ in range(max_iter):
        if time.perf_counter() > deadline:
            break
        try:
            W = np.linalg.inv((B.T * th) @ B)
        except np.linalg.LinAlgError:
            return None
        W = (W + W.T) / 2
        BW = B @ W
        grad = -np.sum(BW * BW, axis=1) - mu / th
        K = 2 * (BW @ B.T) * (BW @ BW.T)
        K[np.diag_indices(m)] += mu / th**2
        rho = 1.0 - R.T @ th
        try:
            cf = cho_factor(K, lower=True, check_finite=False)
            X = cho_solve(cf, R, check_finite=False)
            y = cho_solve(cf, grad, check_finite=False)
            nu = -np.linalg.solve(R.T @ X, R.T @ y + rho)
        except (np.linalg.LinAlgError, ValueError):
            return None
        d = -y - X @ nu
        neg = d < 0
        a = min(1.0, 0.99 * float(np.min(-th[neg] / d[neg]))) if neg.any() else 1.0
        feasible = float(np.abs(rho).max()) <= 1e-10
        decrement = float(-grad @ d)
        phi = f - mu * float(np.sum(np.log(th)))
        while True:
            cand = th + a * d
            fc = trace_inverse(cand)
            if a < 1e-12:
                break
            if math.isfinite(fc) and (
                not feasible or fc - mu * float(np.sum(np.log(cand))) <= phi - 1e-4 * a * decrement
            ):
                break
            a /= 2
        if not math.isfinite(fc):
            return None
        th, f = cand, fc
        if feasible and decrement < 1e-3 * mu * m:
            if m * mu <= tol * f:
                break
            mu *= BARRIER_CUT_CENTRED
        elif feasible and a >= 0.5 and decrement < 0.1 * mu * m:
            if m * mu <= tol * f:
                break
            mu *= BARRIER_CUT_NEAR
    return th


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
    """(A) over the listed rays R by column generation (module docstring), to relative gap ``tol``. BLAS runs on one
    thread (:func:`mechdesign.lp.threads.single_threaded_blas`): the Newton steps factor small dense matrices."""
    from mechdesign.lp.threads import single_threaded_blas

    with single_threaded_blas():
        return _column_generation(R, priors, lp_options, tol, time_limit)


def _column_generation(R, priors, lp_options, tol, time_limit) -> AOptimalDesign:
    from mechdesign.objectives.rays import ray_lp

    t0 = time.perf_counter()
    n = R.shape[1]
    sums = R.sum(axis=1)
    S = _start_set(R, priors[0])
    best = AOptimalDesign(R, None, None, None)
    best_bound = -math.inf
    batch = max(n * (n + 1) // 2, 2 * n)
    it = 0
    theta = None
    while True:
        it += 1
        sol = None
        lam_S = None
        if len(priors) == 1 and theta is not None:  # warm start: the last θ, the new rays at 0
            newton = _newton(R[S], theta[S], priors[0], steps=200)
            if newton.optimal:
                sol, lam_S = (newton.theta, np.ones(1)), newton.lam
        if sol is None:
            sol = _restricted(R[S], priors)
            if sol is None:
                break
            if len(priors) == 1:  # the interior point's θ to full accuracy, from a vertex of its face (same J)
                newton = _newton(R[S], reduce_support(R[S], sol[0], priors[0]), priors[0], steps=200)
                sol, lam_S = (newton.theta, sol[1]), newton.lam if newton.optimal else None
        th_S, w = sol
        w = w / w.sum()
        theta = np.zeros(len(R))
        theta[S] = th_S
        vals = _values(R, theta, priors)
        value = float(vals.max())
        if best.value is None or value < best.value:
            best.theta, best.value = theta, value
        Ws = [_fisher_inverse(R, theta, P) for P in priors]
        if any(W is None for W in Ws):
            break
        # price: reduced value of every listed ray against the restricted program's multipliers (Newton's, else the
        # LP dual over S)
        G = sum(wi * np.sum((R @ W) ** 2, axis=1) / (R @ P) for wi, P, W in zip(w, priors, Ws))
        if lam_S is None:
            _, lam_S, _, _, _ = ray_lp(R[S], G[S], lp_options)
            if lam_S is None:
                break
        reduced = (G - R @ lam_S) / sums
        # the bound these multipliers give (module docstring, in floating point): the rigorous bound's LP over all
        # rays is solved when it should close the gap, or in the last round
        head = sum(wi * (2 * np.trace(W) - P @ P) for wi, P, W in zip(w, priors, Ws))
        estimate = head - lam_S.sum() - n * max(0.0, float(reduced.max()))
        reduced[S[th_S > 0]] = -math.inf  # rays that left the support may come back
        cand = np.flatnonzero(reduced > 1e-12 * max(1.0, float(np.abs(G).max())))
        last = len(cand) == 0 or time.perf_counter() - t0 > time_limit or it >= 50
        detail: dict = {}
        if last or best.value - estimate <= tol / 2 * max(abs(best.value), 1e-12):
            best_bound = max(best_bound, dual_bound(R, priors, Ws, w, lp_options, detail))
            if last or best.value - best_bound <= tol * max(abs(best.value), 1e-12):
                break
        cand = cand[np.argsort(-reduced[cand], kind="stable")[:batch]]
        if "lam" in detail:  # and the rays the LP over all rays prefers (a Frank–Wolfe direction)
            full = (detail["G"] - R @ detail["lam"]) / sums
            extra = np.union1d(np.flatnonzero(detail["theta"] > 0), np.argsort(-full, kind="stable")[:n])
            cand = np.union1d(cand, extra)
        keep = S[th_S > 1e-7 * max(th_S.max(), 1e-300)]
        S = np.union1d(keep, cand)
    best.bound = best_bound if math.isfinite(best_bound) else None
    best.iterations = it
    best.seconds = time.perf_counter() - t0
    best.rays_considered = len(R)
    return best


def reduce_support(R: np.ndarray, theta: np.ndarray, P: np.ndarray, time_limit: float | None = None) -> np.ndarray:
    """Weights φ with the same J(φ) = J(θ) (hence the same rows and U) on at most N(N+1)/2 rays: a basic solution
    of {φ ≥ 0 : Σ φ_r M_r = J(θ)} on θ's support, by HiGHS's simplex (Carathéodory). θ itself when that fails,
    changes J by more than 1e−9 relative, or does not end within ``time_limit`` seconds (the dense simplex is slow
    past N ≈ 40: N = 48, 2,500 rays, 45 s)."""
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
    options = {} if time_limit is None else {"time_limit": max(float(time_limit), 0.1)}
    res = linprog(np.zeros(len(used)), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds", options=options)
    if res.status != 0 or res.x is None:
        return theta
    phi = np.zeros_like(theta)
    phi[used] = np.clip(res.x, 0.0, None)
    if np.abs(A @ phi[used] - b).max() > 1e-9 * np.abs(b).max():
        return theta
    return phi
