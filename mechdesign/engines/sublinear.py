"""Sublinear utilities: maximise U(K) = Σ_y μ(K(:,y)) over (ε,𝒫)-PML kernels.

μ is convex and positively homogeneous (docs/explanation/mathematics.md, section 'Objectives'):

* mutual information under a prior P:  μ(k) = Σ_x P(x) k_x log(k_x / P·k);
* f-divergence between the output laws of P0 and P1:  μ(k) = (P1·k) f(P0·k / P1·k);
* Bayes vulnerability under P:  μ(k) = max_x P(x) k_x.

Every feasible column lies in the cone C(ε,𝒫) (see :mod:`mechdesign.privacy.extremes`),
and splitting a column into extreme rays never lowers U, so the optimum is the
*extreme-ray LP* (Kairouz, Oh, Viswanath; Grosse et al.)

    maximise  Σ_r θ_r μ(r)   s.t.  Σ_r θ_r r = 1 (N rows),  θ ≥ 0,          (P)

whose dual is  minimise Σ_x λ_x  s.t.  λ·r ≥ μ(r) for every ray r.  A basic
solution uses at most N rays: output size N suffices.

**Upper bound (certificate).** For any λ let g = max over rays r of
(μ(r) − λ·r)/(1·r) (the maximum of the convex function μ − λ·k over the
polytope C ∩ {1·k = 1} is at a vertex, i.e. a normalised ray). Then
μ(k) − λ·k ≤ g·(1·k) on C, and summing over the columns of any feasible kernel
(Σ_y 1·K(:,y) = N) gives  U(K) ≤ Σ_x λ_x + N·max(g, 0).  In doubles, g is computed from μ̂(r) + E(r), where
E(r) bounds the absolute error of the computed utility (:func:`mechdesign.objectives.rays.utility_rounding`: μ
cancels near P0·r = P1·r or r ∝ 1, so the error is not proportional to |μ|), plus the rounding of r·λ, the sums
and Σλ; column generation adds the uniform per-mass bound of E (:class:`RoundedPricer`). At ε = 0 exactly the
only ray is 1, where μ = 0 exactly (:func:`_epsilon_is_zero`).

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
concave-over-subsets problem, solved by branch and bound (:func:`price_family`):
nodes fix items in or out of A; a node's bound is the Lagrangian relaxation of
U = P(A) (for every slope s: sup_X[F − βs X] + β·(top-k of s·P_x − λ_x)), which equals
the maximum over the convex hull of the node and is valid at every s evaluated;
branching splits the hull edge holding the relaxed optimum; items with equal
(P_x, λ_x) are interchangeable ("out" drops the whole class). Each round prices
the hull vertices of every family's root at once first (vectorised over slopes:
:mod:`mechdesign.objectives.pricing_mi_slopes`), with one-swap neighbours where they do not
improve; only when that gives fewer than N new rays are the families searched, in order of
their root bound, for rays above max(floor, ½·best so far),
with floor = tol·|value|/N, so the certificate is g ≤ max(best, cut, open nodes' bounds).
Past :data:`PRICE_NODE_LIMIT` nodes a family keeps the bounds of its open nodes
(the relaxation at worst): the bound stays valid, only looser. For a uniform P the
root relaxation is already exact. For a non-uniform P the pricing is NP-hard in
general (subset sum). The ray LP is kept live in HiGHS (columns added, warm
started; past 50·N columns the nonbasic ones of least reduced value wait in a pool,
:mod:`mechdesign.engines.ray_pool`) and pricing is at Wentges-smoothed duals (:data:`CG_SMOOTHING`). For mutual
information the column generation starts from the best dual of the form λ = a + b·P (2-row aggregated cutting
planes, :mod:`mechdesign.objectives.mi_dual_start`: the optimal duals of a Dirichlet prior are nearly affine in P):
its rays and one family's cyclic shifts are the first LP, its λ and its certified bound the first centre. Measured
at N = 50 (benchmarks/mi_colgen_n50.py, results/mi_colgen_n50.md) the gap closes
to 1e-7 relative in 2–40 s for Dirichlet priors, but priors with small integer weights
(many ties) can stop at 1e-6–1e-4 when the branch and bound cannot finish: the gap is
then reported (``suboptimal``).

**Other objectives past the exact threshold** (the engines after ``ray-lp`` on the route, :mod:`mechdesign.engines.routing`): f-divergences by tangent/secant
LPs over likelihood ratios, any prior set (:mod:`mechdesign.engines.fdiv_lines`); Bayes vulnerability by the
exact LP max Σ_x P(x) K_xx (:func:`design_bayes_lp`); mutual information over point, hull, box and
l1_ball prior sets is refused with a clear error. A fixed output size below the rays used goes to
:mod:`mechdesign.engines.fixed_outputs`.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from mechdesign.spec import expr
from mechdesign.spec.errors import InputError
from mechdesign.privacy.extremes import CDD_MAX_N, count_structured_rays, extreme_rays, prior_vertices
from mechdesign.privacy.ray_families import families, start_rays
from mechdesign.lp.solve import Status
from mechdesign.spec.models import Spec
from mechdesign.objectives.mi_dual_start import affine_dual_start
from mechdesign.engines.fixed_outputs import FixedHooks, columns_as_rays, design_fixed_outputs
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.lp.incumbent import offer
from mechdesign.lp.progress import report
from mechdesign.engines.ray_pool import PooledRayLP
from mechdesign.objectives.rays import (  # noqa: F401  (re-exported: the ray engine's public names)
    CG_TIME_LIMIT,
    RayDesign,
    column_utility,
    kernel_utility,
    normalise_rows,
    compact_columns,
    ray_lp,
    rays_to_kernel,
    rounding_per_mass,
    utility_rounding,
    _prior,
    _perspective,
    _xlogy,
)

__all__ = [
    "column_utility",
    "kernel_utility",
    "solve_sublinear",
    "choose_method",
    "design_exact",
    "design_column_generation",
    "RayDesign",
    "EXACT_MAX_RAYS",
    "ray_lp",
]

EXACT_MAX_RAYS = 120_000
"""Largest number of listed rays for the exact method (above: column generation, when available)."""
CG_MAX_ITERATIONS = 1000
CG_SMOOTHING = 0.8
"""Wentges dual smoothing: each round prices at CG_SMOOTHING·(duals of the best bound) + (1 − CG_SMOOTHING)·(LP duals);
when no ray found there improves the LP by more than the floor, it prices at the LP duals too. 0.8 since the affine
start gives a good first centre (N = 100: 128 rounds instead of 146 at 0.5; 0.95: 126 rounds but slower ones; without
the affine start 0.8 was worse than 0.5: 165 rounds instead of 150)."""
AFFINE_START_SHARE = 0.25
"""Share of the time limit the dual start (:data:`DUAL_STARTS`) may take at most (0.3 s at N = 100, 2 s at N = 200)."""


def ray_epsilon(spec: Spec) -> float:
    """ε nudged up by 3e−16·max(1, ε) (about 3 ulps of e^−ε) for listing rays: the cone C(ε',𝒫) then contains C(ε,𝒫) despite
    the rounding of e^−ε (an ulp of 1 − 1e−9 is 1e−7 of the budget at ε = 1e−9), so the bound from its
    rays bounds the problem as written (without the nudge the Dobrushin LDP value at ε = 1e−9 is missed
    by 3e−8 relative); the kernel built from them is repaired by a weight of that order."""
    eps = spec.epsilon.value
    return eps + 3e-16 * max(1.0, eps)


def _epsilon_is_zero(spec: Spec) -> bool:
    """ε is exactly 0 as written (not a positive ε that rounds to 0.0). When 𝒫 holds a prior P > 0
    (:func:`_has_full_support_prior`), C(0,𝒫) is then the ray 1 alone (max_x k_x ≤ P·k forces equal entries), where
    μ = 0 exactly;
    the nudged ε of :func:`ray_epsilon` would list rays 1 − O(u) instead, whose utilities next to a large slope of
    μ (f_α, α = 100) are O(100u) and would loosen the bound by as much."""
    return spec.epsilon.value == 0 and expr.enclose(spec.epsilon.text)[1] == 0


def _has_full_support_prior(spec: Spec) -> bool:
    """𝒫 holds a prior with every mass > 0: always for point, min_mass and simplex; for the other sets the mean of
    its vertices (a member, 𝒫 being convex) is tested."""
    if count_structured_rays(spec.prior_set, spec.n) is not None:
        return True
    return bool(np.all(prior_vertices(spec.prior_set, spec.n).mean(axis=0) > 0))


def _pricing_bound(lam: np.ndarray, g: float, n: int) -> float:
    return float(lam.sum() + n * max(g, 0.0))


def design_exact(spec: Spec, R: np.ndarray | None = None) -> RayDesign:
    """(P) over all extreme rays; the bound Σλ + N·max(g, 0) with g over all rays."""
    t0 = time.perf_counter()
    if R is None:
        R = (
            np.ones((1, spec.n))
            if _epsilon_is_zero(spec) and _has_full_support_prior(spec)
            else extreme_rays(spec.prior_set, spec.n, ray_epsilon(spec))
        )
    mu = column_utility(spec)(R)
    if not np.all(np.isfinite(mu)):
        raise InputError(
            "objective: the utility is infinite on a feasible column, or beyond the floating-point "
            "range (about 1e308): check the priors' supports, or lower alpha or epsilon"
        )
    theta, lam, value, sol, lp = ray_lp(R, mu, spec.solver)
    if theta is None:
        return RayDesign(R, None, None, None, None, "exact", seconds=time.perf_counter() - t0)
    sums = R.sum(axis=1)
    # floating-point rounding, stated explicitly (u = 2^−53): E(r) ≥ |μ̂(r) − μ(r)| is the absolute error of the
    # computed utility (objectives/rays.py::utility_rounding: μ cancels, so it is not proportional to |μ|);
    # r·λ, the subtraction, the sums and the division add at most 8(N + 2)u·(|μ̂(r)| + |r|·|λ|)/(1·r)
    g = float(np.max((mu - R @ lam + utility_rounding(spec)(R)) / sums))
    rounding = 8 * (spec.n + 2) * 2.0**-53 * float(np.max((np.abs(mu) + R @ np.abs(lam)) / sums))
    bound = _pricing_bound(lam, g, spec.n) + spec.n * rounding + 4 * spec.n * 2.0**-53 * float(np.abs(lam).sum())
    return RayDesign(
        R,
        theta,
        lam,
        value,
        bound,
        "exact (all extreme rays)",
        seconds=time.perf_counter() - t0,
        lp_size=(lp.num_rows, lp.num_cols, lp.A.nnz),
    )


# ------------------------------------------------------------------ column generation
class RoundedPricer:
    """A pricer whose certified g also covers floating-point rounding, so that Σλ + N·max(g, 0) is a true bound.

    The wrapped pricer certifies g ≥ max over all rays of (μ̂(r) − λ·r)/(1·r) with μ̂ and λ·r as doubles. The exact
    (μ(r) − λ·r)/(1·r) differs by at most E(r)/(1·r) ≤ :func:`rounding_per_mass` (the absolute error of μ̂,
    objectives/rays.py) plus 8(N + 2)u·(1 + 2/e + max|λ|) for λ·r and the pricer's own sums (entries of mass 1
    are ≤ 1 and Σ P_x r_x|log(r_x/s)| ≤ 2/e). Returned: g' = max(g + that, 0) + 4u·Σ|λ|/N, so that
    Σλ + N·g' also covers the rounding of Σλ (u = 2^−53)."""

    def __init__(self, pricer, spec: Spec):
        self.pricer, self.n = pricer, spec.n
        self.per_mass = rounding_per_mass(spec)
        self.method = pricer.method

    def price(self, lam: np.ndarray, floor: float, out_of_time: bool, known: set | None = None):
        new, g, note = self.pricer.price(lam, floor, out_of_time, known)
        u, n, mag = 2.0**-53, self.n, float(np.abs(lam).max(initial=0.0))
        g = max(g + self.per_mass + 8 * (n + 2) * u * (1 + 2 / math.e + mag), 0.0)
        return new, g + 4 * u * float(np.abs(lam).sum()) / n, note


def _mi_pricer(spec: Spec, fams):
    from mechdesign.objectives.pricing_mi import MIPricer

    return RoundedPricer(MIPricer(_prior(spec, spec.objective.prior), fams), spec)


PRICERS: dict[str, Callable] = {"mutual_information": _mi_pricer}
"""The exact pricing oracle of each objective that has one, by kind (used by column generation)."""


def _mi_dual_start(spec: Spec, R, mu_fn, pricer, tol: float, seconds: float):
    return affine_dual_start(_prior(spec, spec.objective.prior), R, mu_fn, pricer, tol, seconds)


DUAL_STARTS: dict[str, Callable] = {"mutual_information": _mi_dual_start}
"""By objective kind: the start of column generation from a good dual (rays, utilities, certified bound, λ), run
before it when the backend is HiGHS; mutual information starts from the best λ = a + b·P of the prior P
(:func:`mechdesign.objectives.mi_dual_start.affine_dual_start`): its rays join the LP, its λ is the first centre."""


def _pricer(spec: Spec, fams):
    """The pricing oracle of the objective (None when there is none)."""
    make = PRICERS.get(spec.objective.kind)
    return None if make is None else make(spec, fams)


def _best_family(fams, mu_fn, start_rays, spec) -> int:
    """The family whose cyclic shifts have the largest total utility per unit of mass (Σ μ(r) / Σ 1·r)."""
    score = []
    for i in range(len(fams)):
        S = start_rays(spec, fams, [i], distinct=False)
        score.append(float(mu_fn(S).sum() / S.sum()))
    return int(np.argmax(score))


def design_column_generation(spec: Spec, tol: float = 1e-7) -> RayDesign:
    """(P) by column generation over the min_mass / simplex ray families (module docstring).

    Each round solves (P) over the rays found so far, giving λ; the pricer returns new rays and a
    certified g ≥ max over ALL rays of (μ(r) − λ·r)/(1·r), so Σλ + N·max(g, 0) bounds the optimum
    (the smallest bound over the rounds is kept). Stops when the gap is ≤ tol relative, when no
    ray improves, or at the time limit (solver.time_limit, else :data:`CG_TIME_LIMIT` s).
    """
    t0 = time.perf_counter()
    n = spec.n
    mu_fn = column_utility(spec)
    fams = families(spec)
    limit = spec.solver.time_limit or CG_TIME_LIMIT
    if spec.epsilon.value == 0 or not fams:
        return design_exact(spec, np.ones((1, n)) if spec.epsilon.value == 0 else np.eye(n))
    pricer = _pricer(spec, fams)
    # center: the duals of the best bound so far (pricing is at a point between them and the LP's)
    R, best_bound, center = _starting_rays(spec, fams, mu_fn, pricer, tol, limit)
    mu = mu_fn(R)
    seen = {r.tobytes() for r in R}
    live = PooledRayLP(n) if spec.solver.backend == "highs" else None
    if live is not None:  # the live model holds the active rays; pruned ones wait in its pool
        live.add(R, mu)
        seen = live.active
    it = 0
    note = ""
    alpha = CG_SMOOTHING
    while True:
        it += 1
        res = live.solve(max(limit - (time.perf_counter() - t0), 1.0)) if live is not None else None
        if res is None:  # no live model, or it failed: (P) from scratch
            theta, lam, value, sol, lp = ray_lp(R, mu, spec.solver)
        else:
            theta, lam, value = res
        if theta is None:
            return RayDesign(R, None, None, None, None, "column generation", it, time.perf_counter() - t0)
        floor = tol * max(abs(value), 1e-6) / n  # N·floor: the gap left when no ray prices above it
        out_of_time = time.perf_counter() - t0 > limit
        points = [lam] if center is None or alpha == 0 else [alpha * center + (1 - alpha) * lam, lam]
        fresh, best_bound, center, note = _price_round(
            pricer, points, lam, value, (best_bound, center), floor, out_of_time, seen, mu_fn, tol, n
        )
        report(phase="column generation", round=it, gap=max(best_bound - value, 0.0), detail=f"{len(R)} rays")
        used = theta > 1e-12  # the master's kernel is feasible, its bound valid: held for Ctrl-C (lp/incumbent.py)
        offer((R[used] * theta[used, None]).T, best_bound, source=f"column generation, round {it}", stream=live)
        if not fresh or best_bound - value <= tol * max(abs(value), 1e-9) or it >= CG_MAX_ITERATIONS or out_of_time:
            break
        Rn = np.array(list({r.tobytes(): r for r in fresh}.values()))  # distinct (np.unique(axis=0): 8 % at N = 200)
        mun = mu_fn(Rn)
        if live is not None:
            live.take(Rn, mun)
            live.restore_from_pool(lam, floor)  # pooled rays that improve at the LP's duals
            live.prune(lam)
            R, mu = live.R, live.mu
            continue
        seen.update(r.tobytes() for r in Rn)
        R, mu = np.vstack([R, Rn]), np.concatenate([mu, mun])
    method = f"column generation ({pricer.method})" + (f"; {note}" if note else "")
    return RayDesign(
        R, theta, lam, value, best_bound, method, it, time.perf_counter() - t0, (n, len(R), int(np.count_nonzero(R)))
    )


def _starting_rays(spec: Spec, fams, mu_fn, pricer, tol: float, limit: float):
    """The first rays of column generation, and the best bound and its duals when a dual start ran (else ∞, None):
    the families' start rays, or after the objective's dual start (cutting planes over λ = a + b·P,
    objectives/mi_dual_start.py) its rays with one family's cyclic shifts (feasible), not all families' shifts."""
    R = start_rays(spec, fams)
    best_bound, center = math.inf, None
    dual_start = DUAL_STARTS.get(spec.objective.kind) if spec.solver.backend == "highs" else None
    if dual_start is not None:
        Rw, _, best_bound, center = dual_start(spec, R, mu_fn, pricer, tol, AFFINE_START_SHARE * limit)
        if len(Rw):
            cover = start_rays(spec, fams, [_best_family(fams, mu_fn, start_rays, spec)])
            in_cover = {c.tobytes() for c in cover}
            R = np.vstack([cover, Rw[[r.tobytes() not in in_cover for r in Rw]]])
    return R, best_bound, center


def _price_round(pricer, points, lam, value, best, floor, out_of_time, seen, mu_fn, tol, n):
    """Price at each point (the smoothed duals, then the LP's): the new rays not seen yet, the best bound and its
    duals (``best`` updated), and the pricer's note. Stops at the first point whose rays improve the LP, or when
    the bound meets the value or time is out."""
    best_bound, center = best
    fresh, note = [], ""
    for lam_p in points:
        new, g_cert, note = pricer.price(lam_p, floor, out_of_time, seen)
        b = _pricing_bound(lam_p, g_cert, n)
        if b < best_bound:
            best_bound, center = b, lam_p
        if best_bound - value <= tol * max(abs(value), 1e-9) or out_of_time:
            break
        Rn = np.vstack(new) if new else np.zeros((0, n))
        fresh = [r for r in Rn if r.tobytes() not in seen]
        if fresh:
            Rn = np.array(fresh)
            if np.any(mu_fn(Rn) - Rn @ lam > floor * Rn.sum(axis=1)):
                break  # some ray improves the LP (else: a misprice, price at the LP's duals)
    return fresh, best_bound, center, note


def choose_method(spec: Spec, scalable: str | None = None) -> str:
    """'exact' while all extreme rays can be listed (module docstring), else the objective's own method
    past that threshold (``scalable``, e.g. 'tangent_secant' for f-divergences, 'bayes_lp' for Bayes
    vulnerability, 'column_generation' for mutual information over min_mass / simplex); anything else is
    refused with a clear error."""
    count = count_structured_rays(spec.prior_set, spec.n)
    if (count is not None and count <= EXACT_MAX_RAYS) or (count is None and spec.n <= CDD_MAX_N):
        return "exact"
    if scalable is not None:
        return scalable
    if count is None:
        return "exact"  # cdd path: extreme_rays raises a clear error past CDD_MAX_N
    raise InputError(
        f"objective: {spec.objective.kind} over a {spec.prior_set.kind} prior set is designed by "
        f"listing all extreme rays, which is limited to about {EXACT_MAX_RAYS} rays "
        f"(N = {spec.n} needs ~{count}); past that, f_divergence is designed by tangent/secant "
        "LPs and mutual_information by column generation over min_mass and simplex"
    )


# ------------------------------------------------------------------ pipeline
def solve_sublinear(
    spec: Spec, design: Callable[[Spec], RayDesign] | None = None, fixed_hooks: FixedHooks | None = None
) -> PlanOutcome:
    """The program for sublinear objectives: rays → (P) → kernel (certified by ``design``).

    ``design`` is the engine's method (default :func:`design_exact`, every extreme ray listed; column generation,
    tangent/secant LPs or the Bayes LP past that); ``fixed_hooks`` the objective's own methods for a fixed output
    size below the rays used (:mod:`mechdesign.engines.fixed_outputs`).
    The outcome's ``rays`` are the extreme rays used by the optimum (normalised to max entry 1).
    """
    rd = (design or design_exact)(spec)
    K = rays = value = bound = None
    if rd.theta is not None:
        m = None if spec.output_size == "auto" else spec.output_size
        K, rays = rays_to_kernel(rd, column_utility(spec), m)
        value, bound = rd.value, rd.bound
        offer(K, bound, source=rd.method)  # the auto bound holds for every M (fixed_outputs.py)
        if m is not None and m < int(np.count_nonzero(rd.theta > 1e-12)):  # fewer outputs than rays used
            fixed = design_fixed_outputs(spec, rd, m, K, fixed_hooks or FixedHooks())
            K, rays, value, bound = fixed.kernel, columns_as_rays(fixed.kernel), fixed.value, fixed.bound
            rd.method = f"{rd.method}; output_size {m}: {fixed.method}"
    rows, cols, nnz = rd.lp_size
    return PlanOutcome(
        status=Status.OPTIMAL if K is not None else Status.SOLVER_ERROR,
        kernel=K,
        value=value,
        bound=bound,
        sense=-1,
        method=rd.method,
        seconds=rd.seconds,
        iterations=rd.iterations,
        lps=rd.iterations,
        rows=rows,
        columns=cols,
        nonzeros=int(nnz),
        message=f"{len(rd.rays)} rays considered",
        rays=rays,
    )
