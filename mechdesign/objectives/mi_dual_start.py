"""A starting point for mutual-information column generation: the best dual of the form λ = a·1 + b·P (fewer rounds at N = 200).

The column generation of :func:`mechdesign.engines.sublinear.design_column_generation` minimises, in effect, the
convex function B(λ) = Σ_x λ_x + N·max(g(λ), 0), g(λ) = max over rays r of (μ(r) − λ·r)/(1·r), by cutting planes
(each round's restricted LP over the rays S found so far gives λ). From the constant-kernel-like start its duals wander
for a hundred rounds at N = 100 and stay put for ~15 rounds at N = 200 (the restricted LP is degenerate), while the
optimal duals of a Dirichlet-prior design are almost affine in the prior: at N = 100 the least-squares line
λ_x ≈ a − b·P(x) misses them by 2 % of max |λ| (a cubic by as much: the rest is not smooth in P).

So before the column generation, the same cutting planes run in the 2-dimensional space λ = Φη, Φ = [1, P] (N × 2):
the *aggregated* restricted LP

    maximise Σ_{r ∈ S} θ_r μ(r)   s.t.  Σ_{r ∈ S} θ_r Φᵀr = Φᵀ1 (2 rows),  θ ≥ 0,

has the dual  min_η 1ᵀΦη  s.t.  (Φη)·r ≥ μ(r) (r ∈ S), whose solution η gives λ = Φη; pricing at λ adds the rays
that cut it off. Two rows instead of N: each LP is solved in milliseconds and a handful of rounds reach the minimum
of B over the line (relative distance to the optimum at N = 100: 7e-5 after 5 rounds, 0.25 s). Its rays and its best
λ (as the stabilisation centre, Wentges) start the column generation.

Every bound here is a true bound: B(λ) is evaluated with the pricer's certified g (the root Lagrangian relaxation
of every ray family, :func:`mechdesign.objectives.pricing_mi_slopes.root_pass`, an upper bound of the exact value),
whatever λ is; the aggregated LP's value is *not* a bound and is used only to stop.
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.lp.highs import configured_highs, set_seconds_left
from mechdesign.lp.interrupt import run_interruptible

__all__ = ["affine_dual_start", "AFFINE_START_ROUNDS"]

AFFINE_START_ROUNDS = 30
"""Rounds of the aggregated (2-row) cutting planes at most (5 at N = 100 and N = 200 with the benchmark's prior)."""


def affine_dual_start(P: np.ndarray, R: np.ndarray, mu_fn, pricer, tol: float, seconds: float):
    """Cutting planes over duals λ = a·1 + b·P (module docstring), from the rays R (whose full restricted LP is
    feasible, so the aggregated one is too).

    Returns (rays, mu, bound, lam): the rays the pricing found (not in R), their utilities, the smallest
    B(λ) = Σλ + N·max(g, 0) met (a true upper bound of the optimum) and its λ; bound is +∞ and lam None
    when no LP was solved.
    """
    import highspy

    t0 = time.perf_counter()
    n = len(P)
    Phi = np.column_stack([np.ones(n), np.asarray(P, float)])
    k = Phi.shape[1]
    h = configured_highs("dual_start")
    rhs = Phi.sum(axis=0)
    h.addRows(k, rhs, rhs, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))

    def add(Rn, mun):
        r = len(mun)
        h.addCols(
            r,
            -np.asarray(mun, float),
            np.zeros(r),
            np.full(r, highspy.kHighsInf),
            r * k,
            np.arange(0, r * k, k, dtype=np.int32),
            np.tile(np.arange(k, dtype=np.int32), r),
            np.ascontiguousarray(Rn @ Phi).ravel(),
        )

    add(R, mu_fn(R))
    seen = {x.tobytes() for x in R}
    found_R, found_mu = [], []
    best, best_lam = np.inf, None
    for _ in range(AFFINE_START_ROUNDS):
        left = seconds - (time.perf_counter() - t0)
        if left <= 0:
            break
        set_seconds_left(h, left)
        run_interruptible(h)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        sol = h.getSolution()
        if not sol.dual_valid:
            break
        value = -float(h.getInfo().objective_function_value)
        lam = Phi @ -np.asarray(sol.row_dual, float)
        floor = tol * max(abs(value), 1e-6) / n
        # the quick pass only (out_of_time=True): every family's root relaxation bound, a valid g
        new, g_cert, _ = pricer.price(lam, floor, True, seen)
        b = float(lam.sum() + n * max(g_cert, 0.0))
        if b < best:
            best, best_lam = b, lam
        fresh = [r for Rn in new for r in Rn if r.tobytes() not in seen]
        if not fresh or best - value <= tol * max(abs(value), 1e-9):
            break
        Rn = np.unique(np.array(fresh), axis=0)
        mun = mu_fn(Rn)
        seen.update(x.tobytes() for x in Rn)
        found_R.append(Rn)
        found_mu.append(mun)
        add(Rn, mun)
    if not found_R:
        return np.zeros((0, n)), np.zeros(0), best, best_lam
    return np.vstack(found_R), np.concatenate(found_mu), best, best_lam
