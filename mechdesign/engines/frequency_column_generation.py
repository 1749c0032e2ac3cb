"""Frequency estimation at any N for a non-uniform prior over simplex or min_mass: column generation with
certified pricing.

The program is the A-optimal design (A) of :mod:`mechdesign.engines.a_optimal` (Kiefer 1974; Boyd and
Vandenberghe, Convex Optimization §7.5): with K(:,y) = θ_y r_y over the extreme rays r of C(ε, Q_X(c)),

    (A)  minimise  tr J(θ)⁻¹ − ‖P‖²   s.t.  Σ_r θ_r r = 1,  θ ≥ 0,   J(θ) = Σ_r θ_r r rᵀ/(Pᵀr).

Past N = 12 the 2^N rays are not listed. Column generation (Gilmore and Gomory 1961; Desaulniers, Desrosiers and
Solomon, Column Generation, 2005) solves (A) over a working set S of rays (:func:`_master`: Clarabel then the
active-set Newton method for N ≤ 16, the barrier method :func:`mechdesign.engines.a_optimal.barrier` past it), takes W = J(θ_S)⁻¹, G_r = ‖W r‖²/(Pᵀr) and the
duals λ of the ray LP max{Σ θ_r G_r : Σ θ_r r = 1, θ ≥ 0} over S, and prices every ray of every family at (W, λ)
by branch and bound (:mod:`mechdesign.objectives.pricing_frequency`). The pricing returns the rays of positive
reduced value (they join S) and a certified h ≥ max over ALL rays of (G_r − λ·r)/(1·r), so

    OPT ≥ 2 tr W − ‖P‖² − Σ_x λ_x − N·max(0, h)

(the Lagrangian bound of :mod:`mechdesign.engines.a_optimal`, valid for any symmetric W and any λ), minus an
explicit allowance for the rounding of its evaluation (as in :func:`mechdesign.engines.a_optimal.dual_bound`),
evaluated also at the scaled pair (tW, t²λ) with the best t (:func:`_bound`: while the pricing certificate is
loose, this keeps the bound far above the plain one). For 16 < N ≤ :data:`DUAL_MAX_N` column generation hands
over, at :data:`DUAL_START` of the time limit (or when pricing finds no new ray), to the structured dual
(:mod:`mechdesign.objectives.frequency_additive_dual`: additive multipliers plus a free block on the
:data:`HEAD_SIZE` most likely symbols, whose pricing is exact), from the rays met as cuts. The rays that dual
ties then feed the working set: for N ≤ :data:`FIT_MAX_N` a design fitted to the dual's information on them (a
linear program), under ε-LDP past it, with time enough (:func:`_ldp_fit`), after a dual with the larger head
:data:`LDP_HEAD_SIZE`, a least-squares fit on a working set (N < :data:`POOL_DUAL_FROM`) or the restricted program
over the rays weighted most by the pool's dual (:mod:`mechdesign.objectives.frequency_pool_dual`: the dual with S
free over the tied rays; N = 50, 30 s: relative gap 5e-7 to 1.5e-6 against 4e-5 with the least-squares fit), and
in each later round the pool's tied rays (random tail sets) of best reduced value. Beside all this
(:func:`_rank_one_beside`: ε-LDP past N = 32, min_mass past N = 50, up to :data:`RANK_ONE_MAX_N`) a second process
computes the rank-one dual (:mod:`mechdesign.objectives.frequency_rank_one_dual`: the head block replaced by one
rank-one term over every symbol) for the whole time limit, and the better bound is reported
(:class:`_RankOneInBackground`; ε-LDP, N = 50, 30 s: about 175.9516 where the head of 16 gives 175.9513; N = 200,
60 s: 725.4 where branch and bound gives 527.6). Once a round's decrease falls
below :data:`POOL_SLOW` of the one before, rounds "climb" instead (:func:`_swap_climb`): from the pool's best
rays and the design's support, steepest ascent of the reduced value by transpositions of two tail entries, kept
when the structured dual still ties the result (complementary slackness: the optimum's rays are among those); the
random tail sets give a design breadth early, the climbed ones the few rays it still lacks (N = 50 min_mass, 30 s:
the pool alone stalls at a relative gap of 1.7e-6, climbing reaches 5e-7). When neither finds a ray of positive
reduced value, branch and bound prices every ray again.
The best bound is reported; the search stops when the relative gap is below ``tol``, when pricing finds
no ray, or at the time limit (the gap is then reported, status suboptimal). The start is the cyclic shifts of the
families whose uniform spread has the smallest U (a feasible, full-rank design), or, when it is small enough, the
incumbent of :func:`_incumbent` (a stand-in for subset selection's uniform orbit; the result is never worse than it:
the best design met is returned). The emitted kernel is reduced to
at most N(N+1)/2 columns with the same J (:func:`mechdesign.engines.a_optimal.reduce_support`) when that linear
program ends within :data:`REDUCE_SHARE` of the time limit (else it keeps the design's support); the design is
certified private exactly afterwards, like every kernel.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.engines.base import EngineBase
from mechdesign.engines.a_optimal import (
    AOptimalDesign,
    _fisher_inverse,
    _newton,
    _restricted,
    _values,
    barrier,
    reduce_support,
)
from mechdesign.objectives.pricing_frequency import NODE_LIMIT, frequency_families, price_all

__all__ = ["solve_frequency_column_generation", "FREQUENCY_CG_TOL", "START_FAMILIES"]

U = 2.0**-53
FREQUENCY_CG_TOL = 1e-7
"""Relative gap at which column generation stops."""
START_FAMILIES = 2
"""The start is the cyclic shifts of this many families (those whose uniform spread has the smallest U)."""
RAYS_PER_ROUND_PER_N = 6
"""New rays per round at most, per symbol (the best reduced values): the restricted solve's cost grows as the
cube of the working set."""
RAYS_PER_FAMILY = 20
"""Rays of positive reduced value returned per family and round at most."""
PRICE_CUT_SHARE = 0.5
"""Far from the optimum (gap > 1000·tol), a family is searched only for rays above this share of the best reduced
value found so far in the round (the certificate stays valid; the bound of such a round is looser)."""
FAR_NODE_LIMIT = 2000
"""Node limit per family in the rounds far from the optimum (their bound matters less than their rays)."""
SDP_MAX_N = 16
"""Largest N whose restricted program is solved as an SDP (Clarabel) before the Newton polish."""
INNER_STEPS = 8
"""Frank–Wolfe steps (each followed by the Newton polish) per round at most, to close the restricted program's own
gap before pricing."""
POLISH_STEPS = 30
DUAL_START = 0.02
"""When N is past :data:`SDP_MAX_N`, column generation hands over to the structured dual
(:mod:`mechdesign.objectives.frequency_additive_dual`) at this share of the time limit (or earlier, when pricing
finds no new ray), in practice right after the first restricted solve: past N ≈ 24 branch and bound cannot finish
the families (the reduced values of very many sets tie at the optimum), so its bound stalls, while the structured
dual's pricing is exact; and the rounds after it, over the rays it ties, lower the design faster than branch and
bound's. The round that hands over does not price by branch and bound first (at N = 50 min_mass that pricing took
5.5 s of a 30 s limit and left the dual's bound unchanged, 87.356669). N = 24 is the same (relative gaps of about
1e-11)."""
DUAL_MAX_N = 100
"""Largest N given the structured dual (its Newton system costs about (3N + h²/2)² N² operations)."""
HEAD_SIZE = 10
"""Symbols (the most likely) given a free block in the structured dual: 2^HEAD_SIZE head subsets per family in its
pricing. N = 24 (Dirichlet(1), seed 0, ε = 1) needs 5 for the optimum; at N = 50 the ε-LDP bound rises with it (5:
175.94993, 10: 175.95098, 14: 175.95131, 16: 175.951439, 19: 175.951544, against designs down to 175.951808),
the min_mass one no longer past 10; past :data:`FIT_MAX_N` ε-LDP takes :data:`LDP_HEAD_SIZE` when time allows."""
DUAL_END = 0.85
"""The structured dual stops by this share of the time limit (the rest: column generation over its tied rays)."""
LDP_HEAD_SIZE = 16
"""The head when :func:`_ldp_fit` holds (ε-LDP, N from 33 to 50, time enough): the bound keeps rising with it
(N = 50, Dirichlet(1) seed 0, ε = 1: 175.95098 with 10, 175.951439 with 16, 175.951544 with 19 in 331 s), and a
head of 16 reaches 175.95139 in 10 s on 2 cores (converged: about a minute), 19 takes minutes."""
LDP_FIT_SECONDS = 25.0
"""Least time limit at N = 50, times (N/50)⁴ at smaller N (the structured dual's Newton system and pricing), for
:data:`LDP_HEAD_SIZE` and the design from its tied rays. Below a round number: a spec's ``time_limit: 30`` reaches
the engine a few milliseconds short (the budget's time left), and with 30 here ``mechdesign solve`` never took
this path at N = 50 (175.95481, a relative gap of 1.8e-5, where the engine given 30 s reaches 5e-7 to 9e-7; with
25 s: 9.8e-7 and 1.7e-6 in two runs). Measured with the least-squares fit: N = 44 in 20 s:
relative gap 1.8e-6 against 3.9e-6 with a head of 10; N = 34 in 7 s: 6e-9, where a head of 10 closes to 1.5e-11
in 4 s; N = 50, ε = 2, 30 s: 8.4e-4 against 0.12; but N = 40, ε = 2, seed 3, 15 s: 4.6e-3 against 7.9e-4, the
head of 16 having had 16 rounds)."""
LDP_FIT_MAX_N = 50
"""Largest N for :data:`LDP_HEAD_SIZE` and the design from its tied rays. At N = 64 (90 s) the head of 16 stalls:
started from the incumbent's rays as cuts, its barrier's Hessian reaches a condition number of 1e19, and the dual
stops after 7 rounds at a bound of 64.8, where a head of 10 gives 227.34 (N = 100, 60 s: one round, 151.7 against
360.002)."""
LDP_DUAL_END = 0.42
"""When :func:`_ldp_fit` holds, the share of the time limit by which the structured dual stops, leaving time for
the design from its tied rays and the rounds after it (N = 50, 30 s, the pool's dual: relative gap at most 1e-6 in
3 of 3 runs with 0.42, 6 of 9 with 0.45, 5 of 7 with 0.38, 1 of 3 with 0.3; with 0.85 nothing has time)."""
POOL_PER = 40
"""Tail sets drawn per tied head subset for the pool of tied rays."""
POOL_MAX = 20_000
"""Largest pool of tied rays (the least-squares fit and the pool's dual are given the same pool; N = 50 ε-LDP: about
3 tail sets per tied head subset. More is not better for the pool's dual: N = 50 with 40,000, 38,625 rays and 11 s
gave 175.95349 where 16,200 rays and 7 s gave 175.951856, the rays of largest weight being spread over more tied
ones)."""
POOL_RAYS_PER_ROUND_PER_N = 6
"""Tied rays (best reduced value) added per round after the structured dual, per symbol."""
POOL_SLOW = 0.3
"""Rounds over the pool give way to climbing ones when a round lowers the design by less than this share of what
the round before did (ε-LDP at N = 50, whose pool rounds keep lowering it at a steady rate, keeps them)."""
CLIMB_STEPS = 20
"""Most transpositions per ray in a climbing round."""
CLIMB_KEEP = 1e-6
"""In climbing rounds, rays whose weight is below this share of the largest leave the working set (the barrier
leaves unused rays at small positive weights; N = 50: 1,712 rays, 1,226 above 1e-6, the same value to 1e-9
relative, and its Newton system's cost grows with the cube of the count). Earlier rounds keep every ray above
1e-9 of the largest: pruning them there stalled the pool's rounds (N = 50 min_mass: 3.6e-6 against 2.0e-6)."""
FIT_MAX_N = 32
"""Largest N whose design is fitted to the structured dual by a linear program (over N(N+1)/2 + N rows); for larger
N, under ε-LDP, the design comes from a least-squares fit on a working set
(:func:`mechdesign.objectives.frequency_additive_dual.fitted_design_working_set`) or, from :data:`POOL_DUAL_FROM`,
from the pool's dual (:func:`_fitted`)."""
FIT_RESERVE = 0.25
"""Share of the time left after the structured dual that the least-squares fit leaves to the rounds after it."""
FIT_ROW_ERROR = 1e-3
"""Largest error in the row sums of the least-squares fit that the restricted program is started from (it meets them
to about 1e-5, the linear program's to 1e-6; the barrier method's infeasible start restores them exactly)."""
POOL_DUAL_FROM = 38
"""Least N whose design after the structured dual comes from the pool's dual rather than the least-squares fit.
Measured (ε-LDP, ε = 1, Dirichlet(1), relative gap at the time limit, least-squares fit → pool's dual): N = 34,
7 s: 3.3e-7 → 7.7e-5; N = 37, 10 s: 8.3e-7 → 5.7e-6; N = 40, 15 s: 2.3e-5 → 2.6e-6; N = 44, 20 s: 2.3e-5 →
4.9e-7; N = 46 (seed 1), 25 s: 9.8e-5 → 9.9e-7; N = 50, 30 s: 4.2e-5 → 6.0e-7. Below it the head of 16 leaves
few tail symbols and the structured dual is nearly exact (N = 34: 4e-7 below the design), so the fit to its
information is nearly exact too, while the pool's optimum is degenerate (thousands of tied rays share it) and the
rays of largest weight at its central point no longer hold a good design."""
POOL_RESERVE = 0.35
"""Share of the time left after the structured dual that the pool's dual leaves to the restricted program over the
rays it weights most and the rounds after it (N = 50: that program takes about 1–3 s of the 15 s left)."""
SUPPORT_PER_PAIR = 1.2
"""Rays (largest weights from the pool's dual) over which the restricted program is solved, per entry of J's upper
triangle (an optimum needs at most N(N + 1)/2 rays and uses about that many; N = 50: 1,530 rays, 175.951834 where
the pool's optimum is 175.9518341)."""
FIT_PER = 10
"""Tail sets drawn per tied head subset for the fit (N = 24, Dirichlet(1) seed 0: 10 give the optimum to 1e-11 in
2.5–4 s; 5 leave 3.7e-7 under ε-LDP)."""
FIT_POOL_MAX = 10_000
"""Largest pool the fit is given."""
LAST_SOLVE_SHARE = 0.5
"""No round starts when less time is left than this share of the last restricted solve's (the next one has more rays
and, cut by the time limit, seldom ends below the design already met). At N = 50 (min_mass, 30 s) the run ended at
30.4 to 30.9 s with a climb and a restricted solve begun at 29.5 s, cut, and no better; it now ends by the limit.
A solve given 5.6 s of its 7 s can still lower the design (ε-LDP: 175.9532 from 175.9546)."""
PRICE_SHARE = 0.5
"""Share of the remaining time one pricing round may take (the rest is left for the restricted solves)."""


def _start(fams, P: np.ndarray) -> np.ndarray:
    """Cyclic shifts of the :data:`START_FAMILIES` families whose shifts, spread uniformly, give the smallest U."""
    from mechdesign.privacy.ray_families import cyclic

    n = len(P)
    scored = []
    for fam in fams:
        if fam.kind == "zero" and fam.j != 0:
            continue
        pat = np.zeros(n)
        pat[: fam.size] = 1.0
        if fam.kind == "two":
            pat[fam.size :] = fam.level
        else:
            pat[fam.size] = fam.level
        R = cyclic(n, pat)
        theta = np.full(n, 1.0 / R.sum(axis=0)[0])
        u = float(_values(R, theta, [P])[0])
        scored.append((u if math.isfinite(u) else math.inf, R))
    scored.sort(key=lambda z: z[0])
    return np.unique(np.vstack([R for _, R in scored[:START_FAMILIES]]), axis=0)


INCUMBENT_PERMUTATIONS = 50
"""Most random permutations of the symmetric optimum's pattern whose cyclic orbits make the incumbent design when no
balanced cyclic kernel fits the output limits (:func:`_incumbent`)."""
NEWTON_START_MAX = 3200
"""Largest incumbent (rays) that also starts column generation; a larger one is kept as the incumbent only (the
barrier method's Newton system has one row per ray: 4 s for the 2,048 rays of N = 64, minutes for the 5,000 of
N = 100). Measured (Dirichlet(1) seed 0, ε = 1) against a limit of 1,500, under which column generation started
from the start families and did not get below the incumbent in the time: relative gaps N = 56 min_mass 30 s
2.6e-5 (was 1.8e-3), ε-LDP 6.2e-9 (1.8e-5); N = 64 min_mass 30 s 1.25e-4 (1.6e-3), ε-LDP 1.7e-5 (4.3e-4); N = 80
min_mass 45 s 2.3e-4 (1.5e-3), ε-LDP 9.6e-5 (4.0e-4). At N = 100 the first 15 to 32 of its 50 orbits, re-weighted,
give 190.45 to 180.62 against the incumbent's 179.60."""


def _incumbent(spec, P: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A feasible design close to the best textbook one at any prior: rays and weights (K(:,y) = θ_y r_y).

    The uniform orbit of the symmetric optimum's pattern (subset selection at the best size under ε-LDP) is the
    optimum at the uniform prior and stays good at others, but it has C(N, q) outputs. Two explicit stand-ins:
    the balanced cyclic kernel of :mod:`mechdesign.objectives.frequency_symmetric` (the orbit's J at the uniform
    prior exactly), or, when that does not fit the output limits, the cyclic orbits of m random permutations of
    the pattern with equal weights (each orbit's rows sum to the pattern's sum, so the rows of K sum to 1 exactly;
    the pairs are balanced on average). Measured at a Dirichlet(1) prior, ε = 1: N = 50 simplex, the balanced kernel
    U = 176.05 (k-RR 888); N = 200 simplex, 25 orbits U = 755 and min_mass c = 1/400 U = 376 (the uniform-prior
    optima are 729 and 365). Seeded (default_rng(0)): the same spec gives the same design."""
    from mechdesign.objectives.frequency_symmetric import balanced_cyclic_kernel, symmetric_optimum
    from mechdesign.privacy.ray_families import cyclic, families
    from mechdesign.spec.models import MAX_M, MAX_NM

    n = len(P)
    try:
        opt = symmetric_optimum(families(spec), n)
    except (ValueError, ArithmeticError):
        return None
    pattern = np.asarray(opt.pattern, float)
    if not np.isfinite(opt.value) or pattern.max() <= 0:
        return None
    limit = min(MAX_M, MAX_NM // n)
    K = balanced_cyclic_kernel(pattern, limit)
    if K is not None:
        theta = K.max(axis=0)
        return (K / theta).T, theta
    m = max(1, min(INCUMBENT_PERMUTATIONS, limit // n))
    rng = np.random.default_rng(0)
    R = np.vstack([cyclic(n, rng.permutation(pattern)) for _ in range(m)])
    return R, np.full(len(R), 1.0 / (m * float(pattern.sum())))


MASTER_TOL = 1e-8
"""The barrier method's relative duality gap for the restricted solves past :data:`SDP_MAX_N` (its last Newton
steps each gain little: at N = 50, 2,150 rays, 1e-8 ends 1.5 s sooner than 1e-9 with a value 2e-9 relative above;
the certified gap is between the best design and the duals' bounds, which do not depend on it)."""


def _master(R: np.ndarray, warm: np.ndarray, P: np.ndarray, deadline: float = math.inf) -> np.ndarray | None:
    """θ lowering tr J(θ)⁻¹ over the rays R from the feasible ``warm`` (Σ θ_r r = 1, θ ≥ 0).

    N ≤ :data:`SDP_MAX_N`: Clarabel (:func:`mechdesign.engines.a_optimal._restricted`), then the Newton polish.
    Larger N (the SDP grows as N³: 0.8 s for 200 rays at N = 20, over 100 s for 300 at N = 50): the barrier method
    :func:`mechdesign.engines.a_optimal.barrier` from ``warm`` (N = 50, 1,300 rays: 1.3 s), or, if it fails, the
    active-set Newton method of a_optimal (a Frank–Wolfe step toward the ray LP's solution gives every ray the LP
    uses weight; the round's inner Frank–Wolfe steps then close the restricted gap). Any feasible θ serves: the
    bound does not depend on it."""
    n = R.shape[1]
    if n <= SDP_MAX_N:
        sol = _restricted(R, [P])
        if sol is not None:
            return _polish(R, sol[0], P, steps=POLISH_STEPS)
    theta = barrier(R, warm, P, tol=MASTER_TOL, deadline=deadline)
    if theta is not None and np.abs(R.T @ theta - 1).max() <= 1e-9:
        return theta
    if time.perf_counter() > deadline:
        return None
    if np.abs(R.T @ warm - 1).max() > 1e-9:
        return None
    return _polish(R, warm, P, steps=POLISH_STEPS)


def _bound(W: np.ndarray, P: np.ndarray, lam: np.ndarray, h: float) -> float:
    """max over t ∈ {1, t*} of 2t·tr W − ‖P‖² − t²(Σλ + N·max(0, h)), minus the rounding of evaluating it (as in
    a_optimal.dual_bound).

    The bound at (tW, t²λ) for any t > 0: G_r scales by t², so h does too, and the bound of the module docstring
    becomes 2t·tr W − ‖P‖² − t²(Σλ + N·max(0, h)); t = 1 is the plain bound, t* = tr W/(Σλ + N·max(0, h)) its best
    scaling, which keeps the bound positive while the pricing certificate h is still loose."""
    n = len(P)
    tr = float(np.trace(W))
    tr_err = n * U * float(np.abs(np.diag(W)).sum())
    pp = float(P @ P)
    pp_err = n * U * pp
    top = float(lam.sum()) + n * max(h, 0.0)
    top_err = 4 * n * U * (float(np.abs(lam).sum()) + n * max(h, 0.0)) + 4 * U * abs(top)
    best = -math.inf
    for t in (1.0, tr / top if top > 0 and tr > 0 else 1.0):
        head = 2 * t * tr - pp
        tail = t * t * top
        err = 2 * t * tr_err + pp_err + t * t * top_err + 8 * U * (abs(head) + abs(tail) + 2 * t * abs(tr) + pp)
        best = max(best, head - tail - err)
    return best


def solve_frequency_column_generation(
    spec,
    P: np.ndarray,
    time_limit: float = 60.0,
    tol: float = FREQUENCY_CG_TOL,
    node_limit: int = NODE_LIMIT,
    max_rounds: int = 200,
) -> AOptimalDesign:
    """(A) at prior P over every ray of the spec's simplex / min_mass cone, by column generation (module doc).
    BLAS runs single-threaded: the solve is a sequence of small dense factorisations, which a thread pool on busy
    cores slows down by two orders of magnitude (measured: a 203 × 203 least-squares solve 0.65 s threaded on a
    loaded 2-core machine, 2 ms on one thread; the same reason as mechdesign.release.blas_threads)."""
    from mechdesign.lp.threads import single_threaded_blas

    with single_threaded_blas():
        return _column_generation(spec, P, time_limit, tol, node_limit, max_rounds)


def _polish(R: np.ndarray, theta: np.ndarray, P: np.ndarray, steps: int) -> np.ndarray:
    """The active-set Newton method of :func:`mechdesign.engines.a_optimal._newton` from θ: its weights."""
    return _newton(R, theta, P, steps).theta


def _trace_inverse(B: np.ndarray, theta: np.ndarray) -> float:
    try:
        return float(np.trace(np.linalg.inv((B.T * theta) @ B)))
    except np.linalg.LinAlgError:
        return math.inf


def _toward(R: np.ndarray, theta: np.ndarray, vertex: np.ndarray, P: np.ndarray) -> np.ndarray:
    """A Frank–Wolfe step: (1 − t)θ + t·vertex with t ∈ [0, 1] minimising tr J⁻¹ (golden section), where vertex
    is the ray LP's solution at G(W) (the minimiser of the linearised objective over the feasible set). The point
    stays feasible; every ray of the vertex gets weight, so the Newton polish can keep it."""
    B = R / np.sqrt(R @ P)[:, None]
    f = lambda t: _trace_inverse(B, (1 - t) * theta + t * vertex)
    a, b = 0.0, 1.0
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(30):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(x2)
    t = x1 if f1 <= f2 else x2
    t = max(t, 1e-3)  # a little weight on every ray of the vertex, so that the polish can use it
    return (1 - t) * theta + t * vertex


RANK_ONE_STARTUP = 2.0
"""Seconds the second process is given to start (a fresh interpreter importing numpy and mechdesign) and to send its
result: it stops this long before the time limit."""


RANK_ONE_MAX_N = 200
"""Largest N given the rank-one dual (its Newton system holds (3N + 1) × N² numbers, 190 MB at N = 200, and one
step takes seconds there; N = 200, 55 s alone: bounds 726.745 (ε-LDP) and 361.528 (min_mass) where branch and bound
gives 527.57 and 71.09)."""
RANK_ONE_MIN_MASS_FROM = 50
"""Under min_mass the rank-one dual runs past this N. Up to it the structured dual's bound is the better one and
the design needs its core (N = 50, 30 s: 87.356669, the optimum to 7e-7). Past it the better bound is kept: at
N = 64 and 80 the structured dual's (113.008821 and 142.4638 in 30 and 45 s, once a nearly singular start is moved,
:func:`mechdesign.objectives.frequency_additive_dual.recentred`), at N = 100 the rank-one dual's (179.397 in 60 s,
where the structured dual's Newton system allows three rounds and 165.19)."""
RANK_ONE_WAIT = 0.5
"""Least wait for the second process's result (it stops :data:`RANK_ONE_STARTUP` before the time limit)."""


class _RankOneInBackground:
    """The rank-one dual's bound computed in a second process from the start rays until the time limit: a fresh
    interpreter (``python -m mechdesign.objectives.frequency_rank_one_dual``, so the caller's main module is never
    run again, and no fork beside the solvers' threads) reading its input from a temporary file and writing its
    result to its stdout; :meth:`result` collects it, :meth:`stop` ends the process and removes the file. When the
    process cannot start, the design has the structured dual's bound alone."""

    def __init__(self, spec, fams, P: np.ndarray, deadline: float):
        import os
        import pickle
        import subprocess
        import sys
        import tempfile

        from mechdesign.privacy.ray_families import families, start_rays

        self.proc, self.path = None, None
        wall = time.time() + (deadline - time.perf_counter()) - RANK_ONE_STARTUP
        try:
            fd, self.path = tempfile.mkstemp(prefix="mechdesign-rank-one-", suffix=".pickle")
            with os.fdopen(fd, "wb") as f:
                pickle.dump((fams, P, start_rays(spec, families(spec)), wall), f)
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mechdesign.objectives.frequency_rank_one_dual", self.path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError, subprocess.SubprocessError):  # no process to be had: no second bound
            self.stop()

    def result(self, deadline: float):
        """The child's RankOneDual once it ends, waiting until ``deadline`` (time.perf_counter()) or at least
        :data:`RANK_ONE_WAIT`; else None."""
        import pickle
        import subprocess

        from mechdesign.objectives.frequency_rank_one_dual import RankOneDual

        if self.proc is None:
            return None
        try:
            # at least RANK_ONE_WAIT: a result already written needs a moment to be read
            out, _ = self.proc.communicate(timeout=max(RANK_ONE_WAIT, deadline - time.perf_counter()))
            return RankOneDual(**pickle.loads(out)) if self.proc.returncode == 0 and out else None
        except (subprocess.TimeoutExpired, pickle.UnpicklingError, EOFError, OSError, TypeError):
            return None

    def stop(self) -> None:
        import os

        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.communicate()
        if self.path is not None and os.path.exists(self.path):
            os.remove(self.path)
        self.proc = self.path = None


def _rank_one_beside(fams, n: int) -> bool:
    """Whether the rank-one dual runs in a second process beside the design: under ε-LDP for
    :data:`FIT_MAX_N` < N ≤ :data:`RANK_ONE_MAX_N`, under min_mass for :data:`RANK_ONE_MIN_MASS_FROM` < N ≤
    RANK_ONE_MAX_N."""
    ldp = not any(f.kind == "zero" for f in fams)
    return (FIT_MAX_N if ldp else RANK_ONE_MIN_MASS_FROM) < n <= RANK_ONE_MAX_N


def _ldp_fit(fams, n: int, time_limit: float) -> bool:
    """Whether the design after the structured dual starts from the design read off its tied rays (:func:`_fitted`:
    the least-squares fit or the pool's dual), with the larger head :data:`LDP_HEAD_SIZE`: for :data:`FIT_MAX_N` <
    N ≤ :data:`LDP_FIT_MAX_N`, when no ray of the cone has a zero entry (ε-LDP) and the time limit is at least
    :data:`LDP_FIT_SECONDS`·(N/50)⁴. Measured at N = 50 (Dirichlet(1) seed 0, ε = 1, 30 s): ε-LDP reached a relative
    gap of 5–8e-6 this way with the least-squares fit (5e-7 to 1.5e-6 with the pool's dual) against 1.9e-5 with the
    pool's rounds from column generation's working set; under min_mass (c = 1/(2N)) the fit is worse than those
    rounds (87.356904 in 20 s against 87.356716 in 30 s) and a head past 10 does not raise the bound."""
    enough = time_limit >= LDP_FIT_SECONDS * (n / 50) ** 4
    return FIT_MAX_N < n <= LDP_FIT_MAX_N and enough and not any(f.kind == "zero" for f in fams)


def _structured_dual(spec, fams, P, rays, deadline: float, head_size: int):
    """The bound of :mod:`mechdesign.objectives.frequency_additive_dual` (additive multipliers plus a free block on
    the ``head_size`` most likely symbols) from the start rays and ``rays`` as cuts: (bound, note for the design's
    message, the dual's parameters, the head)."""
    from mechdesign.objectives.frequency_additive_dual import additive_dual_bound
    from mechdesign.privacy.ray_families import families, start_rays

    head = np.argsort(-P, kind="stable")[: min(head_size, len(P))]
    dual = additive_dual_bound(fams, P, np.vstack([start_rays(spec, families(spec)), rays]), deadline, head=head)
    note = f"; bound from the structured dual ({dual.rounds} rounds, {dual.cuts} cuts)"
    return dual.bound, note, dual.params, head


def _fitted(fams, P, x, head, deadline: float, pool: np.ndarray, design_rays: np.ndarray):
    """The design from the structured dual's tied rays ``pool`` (the rays the rounds after it use), solved over its
    support by the restricted program: (rays, θ, value) or None.

    - N ≤ :data:`FIT_MAX_N`: fitted to the structured dual's information by a linear program
      (:func:`mechdesign.objectives.frequency_additive_dual.fitted_design`);
    - up to :data:`POOL_DUAL_FROM`: fitted in least squares on a working set of the pool
      (:func:`~mechdesign.objectives.frequency_additive_dual.fitted_design_working_set`);
    - from it: the :data:`SUPPORT_PER_PAIR`·N(N+1)/2 rays of the pool and of the design so far (``design_rays``:
      with them the pool holds a feasible design, else its program can be infeasible and its dual unbounded; at
      N = 34 the tied rays alone left the dual's value rising past 1,700, the optimum being 116.85) with the largest
      weights from the pool's dual (:func:`mechdesign.objectives.frequency_pool_dual.pool_dual_weights`)."""
    from mechdesign.objectives.frequency_additive_dual import fitted_design, fitted_design_working_set, tied_rays
    from mechdesign.objectives.frequency_pool_dual import pool_dual_weights

    n = len(P)
    if n <= FIT_MAX_N:
        # the linear program takes its own, smaller draw (FIT_PER tail sets per tied head subset)
        drawn = tied_rays(fams, P, x, head, per=FIT_PER, limit=FIT_POOL_MAX)
        fit = fitted_design(drawn, P, x, head, time_limit=deadline - time.perf_counter())
        row_error = 1e-6
    elif n < POOL_DUAL_FROM:
        # the restricted program over the fit's support and a round after it need the rest of the time
        fit = fitted_design_working_set(pool, P, x, head, deadline - FIT_RESERVE * (deadline - time.perf_counter()))
        row_error = FIT_ROW_ERROR
    else:
        pool = np.unique(np.vstack([pool, design_rays]), axis=0)
        weights = pool_dual_weights(pool, P, x, head, deadline - POOL_RESERVE * (deadline - time.perf_counter()))
        fit, row_error = None, math.inf  # the restricted program's infeasible start restores the rows
        if weights is not None and np.all(np.isfinite(weights)):
            top = np.argsort(-weights, kind="stable")[: math.ceil(SUPPORT_PER_PAIR * n * (n + 1) / 2)]
            fit = pool[top], weights[top]
    if fit is None:
        return None
    R, theta = fit
    if np.abs(R.T @ theta - 1).max() > row_error:
        return None
    theta = _master(R, theta / float((R.T @ theta).max()), P, deadline=deadline)
    if theta is None:
        return None
    value = float(_values(R, theta, [P])[0])
    return (R, theta, value) if math.isfinite(value) else None


def _reduced_values(X: np.ndarray, W: np.ndarray, lam: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Per row r of X, the reduced value at (W, λ) per unit of 1·r: (‖W r‖²/(Pᵀr) − λ·r)/(1·r)."""
    return (np.sum((X @ W) ** 2, axis=1) / (X @ P) - X @ lam) / X.sum(axis=1)


def _swap_climb(
    R: np.ndarray, W: np.ndarray, lam: np.ndarray, P: np.ndarray, steps: int, movable, deadline: float = math.inf
) -> np.ndarray:
    """Each ray of R moved by up to ``steps`` transpositions of two ``movable`` entries, each the one that raises
    the reduced value g(r) = (rᵀ W² r/(Pᵀ r) − λ·r)/(1·r) most (steepest ascent; the prior sets are permutation
    invariant, so a transposed ray is a ray of the same cone). For a transposition of entries i and j, with
    d = r_j − r_i, rᵀSr gains 2d((Sr)_i − (Sr)_j) + d²(S_ii + S_jj − 2S_ij), Pᵀr gains d(P_i − P_j) and λ·r
    gains d(λ_i − λ_j)."""
    S = W @ W
    R = np.array(R, float)
    mv = np.flatnonzero(np.asarray(movable, bool))  # only these entries move: the arrays below are over them
    k = len(mv)
    dS = np.diag(S)[mv]
    quad = dS[:, None] + dS[None, :] - 2 * S[np.ix_(mv, mv)]
    dP = P[mv, None] - P[None, mv]
    dl = lam[mv, None] - lam[None, mv]
    out = R
    live = np.arange(len(R))
    for _ in range(steps):
        if len(live) == 0 or time.perf_counter() > deadline or k < 2:
            break
        R = out[live]
        nr = R.sum(axis=1)
        Sr = R @ S
        q = np.sum(R * Sr, axis=1)
        p = R @ P
        lr = R @ lam
        g = (q / p - lr) / nr
        Rm, Srm = R[:, mv], Sr[:, mv]
        d = Rm[:, None, :] - Rm[:, :, None]  # d[m, i, j] = r_j − r_i over the movable entries
        num = Srm[:, :, None] - Srm[:, None, :]  # the new rᵀSr, in place: q + 2d((Sr)_i − (Sr)_j) + d²·quad
        num *= 2
        num += d * quad
        num *= d
        num += q[:, None, None]
        den = d * dP  # the new Pᵀr
        den += p[:, None, None]
        num /= den
        den = d * dl  # the new λ·r
        den += lr[:, None, None]
        num -= den
        flat = num.reshape(len(R), -1)
        best = np.argmax(flat, axis=1)
        up = flat[np.arange(len(R)), best] / nr > g + 1e-12 * np.abs(g)
        idx = np.flatnonzero(up)
        i, j = np.divmod(best[idx], k)
        i, j = mv[i], mv[j]
        ri, rj = R[idx, i].copy(), R[idx, j].copy()
        R[idx, i], R[idx, j] = rj, ri
        out[live[idx]] = R[idx]
        live = live[idx]
    return out


def _lp_options(spec, deadline: float):
    """The spec's LP options with a wall-clock limit that ends by ``deadline`` (at least 0.5 s; a stricter limit of
    the spec's own is kept): the ray LP over thousands of rays at N = 200 can take minutes (measured: 75 s)."""
    left = max(deadline - time.perf_counter(), 0.5)
    limit = left if spec.solver.time_limit is None else min(spec.solver.time_limit, left)
    return spec.solver.model_copy(update={"time_limit": limit})


def _column_generation(spec, P, time_limit, tol, node_limit, max_rounds) -> AOptimalDesign:
    from mechdesign.privacy.ray_families import families

    t0 = time.perf_counter()
    n = len(P)
    fams = frequency_families(families(spec), n)
    ldp_fit = _ldp_fit(fams, n, time_limit)
    background = _RankOneInBackground(spec, fams, P, t0 + time_limit) if _rank_one_beside(fams, n) else None
    try:
        return _rounds(spec, P, time_limit, tol, node_limit, max_rounds, t0, fams, ldp_fit, background)
    finally:
        if background is not None:
            background.stop()


def _rounds(spec, P, time_limit, tol, node_limit, max_rounds, t0, fams, ldp_fit, background) -> AOptimalDesign:
    """The rounds of :func:`_column_generation` (module doc) from t0; ``background`` the rank-one dual's process or
    None."""
    from mechdesign.objectives.rays import ray_lp

    n = len(P)
    # past the SDP's reach, column generation hands over to the structured dual at this time
    dual_start = time_limit * DUAL_START
    R = _start(fams, P)
    theta = np.full(len(R), 1.0 / float(R.sum(axis=0).max()))  # the shifts' sum is constant: feasible
    theta = theta * (1.0 / (R.T @ theta)).min()
    best = AOptimalDesign(R, None, None, None)
    incumbent = _incumbent(spec, P)
    if incumbent is not None and np.abs(incumbent[0].T @ incumbent[1] - 1).max() <= 1e-9:
        R_inc, th_inc = incumbent
        value = float(_values(R_inc, th_inc, [P])[0])
        if math.isfinite(value):
            best.rays, best.theta, best.value = R_inc, th_inc, value
            if len(R_inc) <= NEWTON_START_MAX:  # small enough to start from: the master refines its weights
                R, theta = R_inc, th_inc
    seen = {r.tobytes() for r in R}
    best_bound = -math.inf
    it = 0
    notes, dual_note = "", ""
    found_last = None
    dual_left = SDP_MAX_N < n <= DUAL_MAX_N
    pool = tail = tied = None  # after the structured dual: its tied rays, the symbols off its head, its tie test
    pool_values = []  # the design's value at each round over the pool
    climbing = False
    solved = None  # (R, θ) of the last restricted solve: an unchanged working set is not solved again
    last_solve = 0.0  # its seconds
    while True:
        it += 1
        if solved is None or solved[0] is not R or solved[1] is not theta:
            started = time.perf_counter()
            theta = _master(R, theta, P, deadline=t0 + time_limit)
            if theta is None:
                break
            solved = (R, theta)
            last_solve = time.perf_counter() - started
        for inner in range(INNER_STEPS + 1):
            value = float(_values(R, theta, [P])[0])
            if best.value is None or value < best.value:
                best.rays, best.theta, best.value = R, theta, value
            W = _fisher_inverse(R, theta, P)
            if W is None:
                break
            G = np.sum((R @ W) ** 2, axis=1) / (R @ P)
            th_lp, lam, _, _, _ = ray_lp(R, G, _lp_options(spec, t0 + time_limit))
            if lam is None:
                break
            # the restricted program's own gap (its Lagrangian bound over R): close it before pricing
            own = value - (2 * float(np.trace(W)) - float(P @ P) - float(lam.sum()))
            target = max(tol * abs(value), 0.1 * min(best.value - best_bound, 0.1 * abs(value)))
            if inner == INNER_STEPS or own <= target or time.perf_counter() - t0 > time_limit:
                break
            theta = _polish(R, _toward(R, theta, th_lp, P), P, steps=POLISH_STEPS)
        if W is None or lam is None:
            break
        if t0 + time_limit - time.perf_counter() < LAST_SOLVE_SHARE * last_solve:
            break  # the next restricted solve, over more rays, would be cut far from its end
        current = {r.tobytes() for r in R}
        if pool is not None:
            # after the structured dual: its tied rays of best reduced value at this round's (W, λ) join the
            # working set (branch and bound's bound no longer matters, and its rays are what the pool offers);
            # a ray that left the working set does not come back from the pool
            gain = _reduced_values(pool, W, lam, P)
            floor = 0.25 * tol * max(abs(value), 1e-12) / n
            order = np.argsort(-gain, kind="stable")
            order = order[gain[order] > floor]
            fresh, top = [], []
            for i in order:
                if pool[i].tobytes() not in seen:
                    fresh.append(pool[i])
                    top.append(i)
                    if len(fresh) >= POOL_RAYS_PER_ROUND_PER_N * n:
                        break
            top = np.array(top, int)
            pool_values.append(value)
            v = pool_values
            slow = len(v) >= 3 and v[-2] - v[-1] < POOL_SLOW * (v[-3] - v[-2])
            if (climbing or slow or not fresh) and time.perf_counter() - t0 < time_limit:
                # climbing: the pool's best rays and the support, moved uphill among the rays the dual ties
                climbing = True
                starts = np.vstack([pool[top], R[theta > CLIMB_KEEP * theta.max()]])
                climbed = _swap_climb(starts, W, lam, P, CLIMB_STEPS, tail, t0 + time_limit)
                climbed = np.unique(climbed[tied(climbed)], axis=0)
                gain = _reduced_values(climbed, W, lam, P)
                fresh = [
                    climbed[i]
                    for i in np.argsort(-gain, kind="stable")
                    if gain[i] > floor and climbed[i].tobytes() not in current
                ][: POOL_RAYS_PER_ROUND_PER_N * n]
            if not fresh:
                pool = None  # neither finds a ray: back to pricing every ray by branch and bound
        # the round that hands over to the structured dual does not price by branch and bound first: the dual's
        # bound supersedes that round's, and the rays after it come from the dual's ties
        hand_over = dual_left and time.perf_counter() - t0 > dual_start
        if hand_over:
            fresh = []
        if pool is None and not hand_over:
            # far from the optimum while the last round still found rays of large reduced value (not while the
            # bound is loose: the bound of a round with a node limit stays loose, and would keep the limit for ever)
            far = found_last is None or n * found_last > 1e3 * tol * abs(best.value)
            share = PRICE_CUT_SHARE if far else 0.0
            # far from the optimum, a round stops searching once it has the rays it will add (its bound is looser)
            enough = RAYS_PER_ROUND_PER_N * n if share > 0 else None
            floor = 0.25 * tol * max(abs(value), 1e-12) / n
            left = time_limit - (time.perf_counter() - t0)
            deadline = time.perf_counter() + max(PRICE_SHARE * left, 0.5)
            limit_nodes = min(node_limit, FAR_NODE_LIMIT) if far else node_limit
            priced = price_all(
                W,
                P,
                lam,
                fams,
                floor,
                limit_nodes,
                keep=RAYS_PER_FAMILY,
                deadline=deadline,
                share=share,
                enough=enough,
            )
            bound = _bound(W, P, lam, priced.certified)
            best_bound = max(best_bound, bound)
            notes = f"{priced.nodes} nodes" + (
                f", {priced.open_families} families left open" if priced.open_families else ""
            )
            if best.value - best_bound <= tol * max(abs(best.value), 1e-12):
                break
            fresh = [r for r in priced.rays if r.tobytes() not in current]
            found_last = float(priced.values.max()) if len(priced.values) else 0.0
        if dual_left and (not fresh or time.perf_counter() - t0 > dual_start):
            # the structured dual's bound, from the rays met as cuts; then the rays it ties become candidates
            dual_left = False
            end, size = (LDP_DUAL_END, LDP_HEAD_SIZE) if ldp_fit else (DUAL_END, HEAD_SIZE)
            bound, dual_note, x, head = _structured_dual(spec, fams, P, best.rays, t0 + time_limit * end, size)
            best_bound = max(best_bound, bound)
            if x is not None:
                from functools import partial

                from mechdesign.objectives.frequency_additive_dual import is_tied, tied_rays

                # the candidates for the optimum's support (fewer tail sets per tied head subset when many tie)
                pool = tied_rays(fams, P, x, head, per=POOL_PER, limit=POOL_MAX)
                tail = np.ones(n, bool)
                tail[head] = False
                tied = partial(is_tied, x=x, P=P, head=head)
                if n <= FIT_MAX_N or ldp_fit:
                    fitted = _fitted(fams, P, x, head, t0 + time_limit, pool, best.rays)
                    if fitted is not None and fitted[2] < best.value:
                        best.rays, best.theta, best.value = fitted
                        R, theta = fitted[0], fitted[1]
                        solved = (R, theta)  # _fitted solved the restricted program over its support
                        fresh = []
            if best.value - best_bound <= tol * max(abs(best.value), 1e-12):
                break
            if not fresh:
                continue
        if not fresh or time.perf_counter() - t0 > time_limit or it >= max_rounds:
            break
        keep = theta > (CLIMB_KEEP if climbing else 1e-9) * theta.max()
        Rn = np.array(fresh)
        gain = _reduced_values(Rn, W, lam, P)
        Rn = Rn[np.argsort(-gain, kind="stable")[: RAYS_PER_ROUND_PER_N * n]]
        seen.update(r.tobytes() for r in Rn)
        R = np.vstack([R[keep], Rn])
        theta = np.r_[theta[keep], np.zeros(len(Rn))]
        # the Frank–Wolfe vertex over the grown set at the current W: the new rays enter with weight
        G = np.sum((R @ W) ** 2, axis=1) / (R @ P)
        th_lp, _, _, _, _ = ray_lp(R, G, _lp_options(spec, t0 + time_limit))
        if th_lp is not None:
            theta = _toward(R, theta, th_lp, P)
    if dual_left and best.value is not None and best.value - best_bound > tol * max(abs(best.value), 1e-12):
        bound, dual_note, _, _ = _structured_dual(
            spec, fams, P, best.rays, t0 + max(time_limit, dual_start + 1.0), HEAD_SIZE
        )
        best_bound = max(best_bound, bound)
    if background is not None and best.value is not None and best.value - best_bound > tol * abs(best.value):
        second = background.result(t0 + time_limit)
        if second is not None and second.bound > best_bound:
            best_bound = second.bound
            dual_note += (
                f"; bound from the rank-one dual ({second.rounds} rounds, {second.steps} moves of its direction)"
            )
    best.bound = best_bound if math.isfinite(best_bound) else None
    best.iterations = it
    best.seconds = time.perf_counter() - t0
    best.rays_considered = len(seen)
    best.message = (notes + dual_note).removeprefix("; ")  # no pricing round before the dual: no nodes to name
    return best


REDUCE_SHARE = 0.25
"""Share of the time limit (at least 1 s) given to reducing the design's support to N(N+1)/2 columns; past it the
kernel keeps the design's support (the same J, more outputs). Without the limit, N = 48 (Dirichlet(1) seed 7,
ε-LDP) with a 10 s limit took 100 s, 90 of them in that reduction (HiGHS's dual simplex on 1,176 dense rows)."""


def reduced_kernel(d: AOptimalDesign, P: np.ndarray, time_limit: float | None = None) -> np.ndarray:
    """The kernel of the design on at most N(N+1)/2 columns (same J) when the reduction ends within ``time_limit``
    seconds, else on the design's support; rows normalised."""
    theta = reduce_support(d.rays, d.theta, P, time_limit=time_limit)
    used = np.flatnonzero(theta > 1e-9 * theta.max())
    K = (d.rays[used] * theta[used, None]).T
    return K / K.sum(axis=1, keepdims=True)


def applies_reason(spec) -> str | None:
    """None when this engine designs ``spec``: frequency estimation, one prior, simplex or min_mass (not the uniform
    point), no privacy list, N above the listed-rays limit; else why not."""
    from mechdesign.objectives.frequency_estimation import EXACT_MAX_N
    from mechdesign.privacy.registry import rules

    c = rules(spec.prior_set, spec.n).ray_family_c()
    if spec.extra_guarantees:
        return "needs no privacy list (its cone's rays are not a known family)"
    if c is None or c * spec.n >= 1 - 1e-15:
        return "needs a simplex or min_mass prior set (whose rays are the two-level and zero families)"
    if spec.n <= EXACT_MAX_N:
        return f"N = {spec.n} <= {EXACT_MAX_N}: every ray is listed instead"
    if spec.objective.priors is not None:
        return "prices one prior; a priors list is designed up to N = 12 only"
    if spec.epsilon.value == 0:
        return "ε = 0 (only constant kernels) is designed by the listed-rays engine"
    return None


def solve_spec(spec, time_limit: float | None = None):
    """The engine's outcome for ``spec``: the design, its bound, and the kernel on at most N(N+1)/2 columns."""
    from mechdesign.engines.frequency_estimation import _outcome
    from mechdesign.lp.solve import Status
    from mechdesign.objectives.frequency_estimation import estimation_priors
    from mechdesign.spec.models import MAX_M, MAX_NM

    t0 = time.perf_counter()
    P = estimation_priors(spec)[0]
    limit = time_limit or spec.solver.time_limit or 60.0
    d = solve_frequency_column_generation(spec, P, time_limit=limit)
    method = "A-optimal design by column generation with certified branch-and-bound pricing (Newton, HiGHS)"
    message = f"{d.iterations} rounds, {d.rays_considered} rays met; last pricing: {d.message}"
    if d.theta is None or d.value is None or not math.isfinite(d.value):
        return _outcome(spec, None, None, d.bound, method, t0, Status.SOLVER_ERROR, message=message)
    K = reduced_kernel(d, P, time_limit=max(REDUCE_SHARE * limit, 1.0))
    if K.shape[1] > min(MAX_M, MAX_NM // spec.n):
        return _outcome(
            spec,
            None,
            None,
            d.bound,
            method,
            t0,
            Status.SOLVER_ERROR,
            message=message + f"; the design uses {K.shape[1]} outputs, above the output limits",
        )
    gap_ok = d.bound is not None and d.value - d.bound <= FREQUENCY_CG_TOL * max(abs(d.value), 1e-12)
    status = Status.OPTIMAL if gap_ok else Status.SUBOPTIMAL
    return _outcome(spec, K, d.value, d.bound, method, t0, status, message=message, columns=d.rays_considered)


class FrequencyColumnGeneration(EngineBase):
    """The engine ``frequency-column-generation`` (:func:`solve_spec`)."""

    name = "frequency-column-generation"
    solves = (
        "frequency estimation at a non-uniform prior over simplex or min_mass past N = 12: column generation "
        "with certified branch-and-bound pricing"
    )

    def applies(self, problem) -> str | None:
        return applies_reason(problem.spec)

    def run(self, problem, budget):
        return solve_spec(problem.spec, budget.remaining())

    def hands_over(self, outcome):
        return None
