"""Weights on a pool of candidate rays for frequency estimation, from the Lagrangian dual restricted to them ("the
pool's dual").

The structured dual (:mod:`mechdesign.objectives.frequency_additive_dual`) gives a rigorous bound, and the rays it
ties are candidates for the optimum's support (complementary slackness). Past N ≈ 32 it is a restriction of the
dual (N = 50, ε-LDP: 175.951439 against an optimum near 175.95183), so a design fitted to its information matrix
S^{-1/2} on those rays is a few 1e-6 above the optimum, and finding the fit itself is slow (least squares over
20,000 columns). Here the dual of the A-optimal design program (A) (Boyd and Vandenberghe, Convex Optimization
§7.5) is solved with S free, over the pool's rays only:

    (D_pool)  maximise  2 tr S^{1/2} − Σ_x λ_x   s.t.  c_r(S, λ) = b_rᵀ S b_r − λ·r ≤ 0  for every r in the pool,

b_r = r/√(Pᵀr): N(N + 1)/2 + N numbers (1,325 at N = 50) and one linear cut per ray. Its value is the optimum of
(A) restricted to the pool; it is not a bound on (A) (a ray off the pool may violate a cut), and nothing here is
reported as one: the weights only choose the rays over which the engine then solves (A) exactly
(:func:`mechdesign.engines.a_optimal.barrier`), and the design's value is computed from them.

**The barrier method** (Boyd and Vandenberghe §11.3). For μ > 0 minimise

    F_μ(S, λ) = −2 tr S^{1/2} + Σλ − μ Σ_r log(−c_r(S, λ)).

At its minimiser, θ_r = μ/(−c_r) > 0 satisfies Σ_r θ_r b_r b_rᵀ = S^{-1/2} and Σ_r θ_r r = 1 (stationarity in
S and λ): θ is a feasible design over the pool with J(θ) = S^{-1/2}, so tr J(θ)⁻¹ = tr S^{1/2}, and since
Σλ = Σ_r θ_r λ·r = tr(S J) + mμ = tr S^{1/2} + mμ, its value exceeds the dual's by exactly m·μ (m rays). μ falls
by :data:`MU_CUT` from ``gap_start`` to ``gap_end`` (as m·μ relative to the dual's value), each after Newton steps
until the decrement is below :data:`CENTRED` times m·μ, the last until it is below :data:`FINAL_CENTRED` times N·μ.

**The Newton step** is taken in S's eigenbasis, S = V diag(σ) Vᵀ, where the Hessian of −2 tr S^{1/2} is
diagonal (Daleckii and Krein: the divided difference of x ↦ x^{-1/2}, i.e. 1/(√σ_i √σ_j (√σ_i + √σ_j)) on the
entry (i, j) of VᵀΔS V), and each cut's gradient is (vech of (Vᵀb_r)(Vᵀb_r)ᵀ, −r). The cuts' part of the Hessian,
Σ_r (μ/c_r²) g_r g_rᵀ, is summed over the ``keep`` cuts with the largest μ/c_r² only (N = 50: 2,000 of 16,000
cuts, 0.05 s against 0.8 s; the matrix stays positive definite, so the step is still a descent direction). The
step stops at 0.99 of the way to the nearest cut (the cuts are linear in (S, λ)) and backtracks on F_μ itself, so
every iterate is strictly feasible and S positive definite.

**Start.** The structured dual's (S, λ) with λ raised by the largest ρ(r) = c_r/(1·r) over the pool plus
:data:`START_SLACK` (λ + t1 lowers every c_r by t(1·r)): strictly feasible.

Measured at N = 50 (ε-LDP, ε = 1, Dirichlet(1) seed 0, the 15,786 rays tied by the head-16 structured dual, one
BLAS thread as in the engine): 7.3 s from m·μ = 1e-3 to 1e-5 (dual 175.9508 → about 175.95183), the row sums of the
weights returned within 1.3e-5 of 1; the restricted program over the 1,530 rays of largest θ then gives 175.951834
in 1.0 s, the pool's optimum (175.9518341, over 2,000 rays), where the least-squares fit's support gave 175.9527
in 25 s.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.objectives.frequency_additive_dual import _Head, _padded, _s_matrix

__all__ = ["pool_dual_weights", "KEEP_PER_PAIR", "KEEP_LEAST"]

KEEP_PER_PAIR = 1.6
"""Cuts in the Newton system's Hessian, per entry of S's upper triangle (N = 50: 2,040), and at least
:data:`KEEP_LEAST`."""
KEEP_LEAST = 2000
"""The least number of cuts in the Hessian (all of them when the pool is smaller): with few, the Newton steps
converge only linearly (N = 8, min_mass, 57 of 209 cuts: the row sums fell by about 3 per step near the centre)."""
GAP_START = 5e-6
"""m·μ at the start, relative to the dual's value (N = 50: 1e-3 absolute)."""
GAP_END = 5e-8
"""m·μ at the end, relative to the dual's value (N = 50: 1e-5; at 1e-4 the rays of largest θ give 175.951848,
at 1e-5 175.951834 over 1,500 rays)."""
MU_CUT = 0.1
"""μ's decrease once a centre is reached."""
CENTRED = 0.3
"""A centre on the way: Newton decrement below this share of m·μ (loose: the iterate is only steered towards the
central path, N = 50: 35 Newton steps where a decrement below N·μ takes 49, and the same rays are chosen)."""
FINAL_CENTRED = 1e-3
"""The last centre: Newton decrement below this times N·μ, so that the weights returned are close to a feasible
design (N = 8, every ray: row sums within 1e-5 of 1, against 1.5e-3 with 1e-2; the Newton steps converge
quadratically there)."""
START_SLACK = 1e-7
"""Added to λ beyond the largest ρ over the pool at the start."""
MAX_STEPS = 200


def pool_dual_weights(
    pool: np.ndarray,
    P: np.ndarray,
    x: np.ndarray,
    head,
    deadline: float,
    keep: int | None = None,
    gap_start: float = GAP_START,
    gap_end: float = GAP_END,
) -> np.ndarray | None:
    """θ ≥ 0 on the rows of ``pool`` from the barrier method on (D_pool) (module doc), started from the structured
    dual's parameters ``x`` (with ``head``): θ_r = μ/(−c_r) at the last iterate, whose row sums Σ_r θ_r r are 1 up
    to its distance from the central point. Stops at ``gap_end`` or at ``deadline`` (time.perf_counter(); the
    iterate then reached). None when the structured dual's S is not positive definite."""
    import scipy.linalg as sl

    n = len(P)
    hd = _Head(head, n)
    x = _padded(np.asarray(x, float), hd)
    S = _s_matrix(x, P, hd)
    if np.linalg.eigvalsh(S)[0] <= 0:
        return None
    lam = x[2 * n : 3 * n].copy()
    R = np.asarray(pool, float)
    m = len(R)
    B = R / np.sqrt(R @ P)[:, None]
    iu = np.triu_indices(n)
    T = len(iu[0])
    root2 = np.where(iu[0] != iu[1], math.sqrt(2.0), 1.0)  # vech with ⟨vech A, vech B⟩ = tr AB
    starts = np.r_[0, np.cumsum(np.arange(n, 0, -1))]
    keep = min(m, max(int(KEEP_PER_PAIR * T), KEEP_LEAST) if keep is None else keep)

    def cuts(S, lam):
        return np.sum((B @ S) * B, axis=1) - R @ lam

    c = cuts(S, lam)
    lam += max(0.0, float(np.max(c / R.sum(axis=1)))) + START_SLACK
    c = cuts(S, lam)
    value = 2 * float(np.sqrt(np.linalg.eigvalsh(S)).sum()) - float(lam.sum())
    mu = gap_start * abs(value) / m
    for _ in range(MAX_STEPS):
        if time.perf_counter() > deadline:
            break
        sig, V = np.linalg.eigh(S)
        if sig[0] <= 0:
            break
        rs = np.sqrt(sig)
        theta = mu / -c
        Bv = B @ V
        M = (Bv.T * theta) @ Bv
        grad = np.r_[(M - np.diag(1 / rs))[iu] * root2, 1.0 - R.T @ theta]
        weight = mu / c**2
        sel = np.argpartition(-weight, keep - 1)[:keep] if keep < m else np.arange(m)
        sq = np.sqrt(weight[sel])
        G = np.empty((len(sel), T + n))
        X = Bv[sel]
        for i in range(n):  # vech of each (Vᵀb)(Vᵀb)ᵀ, row by row of the upper triangle
            G[:, starts[i] : starts[i + 1]] = X[:, i : i + 1] * X[:, i:]
        G[:, :T] *= root2 * sq[:, None]
        G[:, T:] = -R[sel] * sq[:, None]
        H = G.T @ G
        H[np.arange(T), np.arange(T)] += 1 / (rs[iu[0]] * rs[iu[1]] * (rs[iu[0]] + rs[iu[1]]))
        try:
            step = -sl.cho_solve(sl.cho_factor(H, lower=True, check_finite=False), grad, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            break
        decrement = float(-grad @ step)
        dS = np.zeros((n, n))
        dS[iu] = step[:T] / root2
        dS = V @ (dS + np.triu(dS, 1).T) @ V.T
        dl = step[T:]
        dc = cuts(dS, dl)
        rising = dc > 0
        a = min(1.0, 0.99 * float(np.min(-c[rising] / dc[rising]))) if rising.any() else 1.0
        f0 = -2 * float(rs.sum()) + float(lam.sum()) - mu * float(np.log(-c).sum())
        while a > 1e-12:
            ev = np.linalg.eigvalsh(S + a * dS)
            if ev[0] > 0:
                f1 = (
                    -2 * float(np.sqrt(ev).sum())
                    + float((lam + a * dl).sum())
                    - mu * float(np.log(-(c + a * dc)).sum())
                )
                if f1 <= f0 - 1e-4 * a * decrement:
                    break
            a /= 2
        if a <= 1e-12:
            break
        S, lam = S + a * dS, lam + a * dl
        c = cuts(S, lam)
        if np.max(c) >= 0:  # rounding at a cut's edge: stop at the last strictly feasible point
            S, lam = S - a * dS, lam - a * dl
            c = cuts(S, lam)
            break
        value = 2 * float(np.sqrt(np.linalg.eigvalsh(S)).sum()) - float(lam.sum())
        last = mu * m <= gap_end * abs(value)
        if decrement < (FINAL_CENTRED * n if last else CENTRED * m) * mu:
            if last:
                break
            mu *= MU_CUT
    return mu / -c
