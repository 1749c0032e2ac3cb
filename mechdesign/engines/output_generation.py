"""Column (and output) generation for kernel LPs whose only constraints are the (ε,𝒫)-PML ones.

The LP built by :func:`mechdesign.objectives.compile.add_pml_kernel` for 𝒫 = Q_X(c)
(c = 0: LDP) with an objective on K alone is

    minimise Σ_xy C_xy K_xy   s.t.  Σ_y K_xy = 1 (x),   K(:,y) ∈ 𝒦  (y),

where 𝒦 = {k ∈ [0,1]^N : e^{−ε} max k ≤ c Σ k + (1 − Nc) min k} (the t, u rows
of the lifted LP). Columns are coupled only by the N row sums, so the LP is a
*master* over points of 𝒦 (Dantzig–Wolfe):

    minimise Σ_j θ_j C(:,y_j)·r_j   s.t.  Σ_j θ_j r_j = 1,  θ ≥ 0,

with one column per generated point r_j of 𝒦 placed at output y_j. Given the
master's row duals π, the *pricing* problem of output y is
p_y = min_{r∈𝒦} (C(:,y) − π)·r, solved exactly by sorting w = C(:,y) − π: a
minimiser is a vertex of 𝒦 with max r = 1, whose entries at 1 are the q
smallest w and whose other entries are

    two-level:   u_q = (e^{−ε} − cq)/(1 − cq)      (cq ≤ e^{−ε}; Remark 2's m/M)
    zero-one:    0                                  (cq ≥ e^{−ε})
    three-level: f = (e^{−ε} − cq)/c on the next entry, 0 after   (cq < e^{−ε} < c(q+1)).

Lagrangian bound (valid for *any* π): optimum ≥ Σ_x π_x + Σ_y min(0, p_y).
The loop stops when the master value meets it. The solution handed back is
the full lifted LP's: x = (K, t = column maxima, u = column minima) and row
multipliers for *every* row of the lifted LP, built from π and, per column, a
multiplier λ_y of the PML row (LP duality of the pricing problem), so that
:func:`mechdesign.lp.program.dual_bound` re-derives the bound from the lifted LP itself
without trusting this module.

:func:`solve_output_generation` (what ``solve`` runs) keeps the lifted LP but
only for a few outputs, adding the output with the most negative p_y each
round: optimal kernels use few outputs, so this converges in a handful of
rounds. (Generating rays instead, a master with one column per ray, was tried:
exact as well, but it tails off over hundreds of rounds, 14–35 s at N = 100. A later ray master with
every output priced each round, Wentges smoothing and difference-transformed sparse rows was tried and
removed as well: it still tailed off, 28–108 rounds at N = 50. Its rigorous bound lives on in
:mod:`mechdesign.cone.lagrangian_bound`, its one-ray-per-output first round in
:func:`mechdesign.engines.kernel_lp.ray_probe`.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial

import highspy
import numpy as np
from scipy import sparse
from mechdesign.engines.base import EngineBase
from mechdesign.lp.incumbent import offer_lp
from mechdesign.lp.solve import Status, highs_status, stopped_status
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.progress import report

from mechdesign.lp.highs import new_warm_simplex, set_seconds_left
from mechdesign.cone.cone_lift import lift_into_cone
from mechdesign.cone.difference_rows import difference_matrix, sparsest_difference_order
from mechdesign.cone.mirror_fold import MirrorFold, reflection_invariant
from mechdesign.cone.layout import KernelLayout, layout_reason
from mechdesign.cone.pricing import Priced, full_row_dual, pml_multipliers, price, priced_rays  # noqa: F401 (re-exported)

__all__ = ["OutputGeneration", "KernelLayout", "price", "generate_outputs", "solve_output_generation", "full_row_dual"]

GROW_EVERY = 4
"""Round r adds up to 1 + r // GROW_EVERY outputs (mirrored: twice that), each with a different priced ray."""

LATE_GAP = 1e-3
LATE_OUTPUTS = 50
"""Once the gap is within LATE_GAP of the value, a round adds up to LATE_OUTPUTS outputs: the duals are then
near their optimum, so the outputs they price below zero belong to the optimum, and the worst-case prior's
optimum uses many (|x − y| at N = 1000: ~170 outputs; 37 → 24 rounds, 53 → 32 s at load 3.6; adding many
outputs *early* costs more: 16 a round from the start took 31 s at N = 500 instead of 4)."""


LATE_RAYS = True
"""With the epigraph and c > 0, outputs that join once the gap is within LATE_GAP enter as one ray column each
(its priced ray, no rows) instead of a block of N + 1 rows; an orbit that prices below zero again gets another
ray column, and after LATE_RAYS_MAX of them its block. The worst case with |x − y| at N = 1000: 3.6 → 2.3 s,
39k rows instead of 114k; at N = 3000: 116 → 69 s. Under LDP (c = 0, no cost but τ's) the rays tail off:
10 → 12–17 s at N = 1000, so c = 0 keeps blocks."""
LATE_RAYS_MAX = 8

DIFFERENCE_ROWS = True
DIFFERENCE_MIN_N = 2000
DIFFERENCE_MAX_ORDER = 2
"""With the epigraph, c > 0, N ≥ DIFFERENCE_MIN_N and a loss whose columns are sparsest after k ≤
DIFFERENCE_MAX_ORDER differences (|x − y|: k = 2), the coupling rows are premultiplied by difference matrices
(cone/difference_rows.py): the basis factorisation after each round gets cheaper. Measured (load ~2, late rays
on): |x − y| at N = 3000 74 → 56 s, but at N = 1000 2.9 → 3.1–3.5 s (more pivots, cheap factorisations
either way); squared loss (k = 3) at N = 3000 14.5 → 29 s and at N = 1000 1.7 → 2.2–2.9 s; under LDP (c = 0)
2.5–5× slower at N = 500."""


STALL_GAP = 1e-8
STALL_ROUNDS = 3
"""A loop whose gap is within STALL_GAP·max(1, |value|) but above ``tolerance`` and has not shrunk by 1 % in
STALL_ROUNDS rounds stops as optimal: the gap is then the floating-point floor of the restricted LP's duals, and
more outputs do not move it. Seen with |x − y| under ε-LDP, worst-case prior, N = 3000: from round 34 on the gap stayed
at 1.142e-6 on a value of 948 (1.2e-9 relative, just above the 1e-9 tolerance) while every round added the 4
outputs priced below −1e-12·value, 60 rounds and 260 outputs later still running. 1e-8 keeps the stop 10× inside
the rigorous tolerance its caller then checks (:data:`mechdesign.engines.kernel_lp.RIGOROUS_TOLERANCE`, 1e-7)."""


def stalled(gaps: list[float], scale: float) -> bool:
    """The :data:`STALL_GAP` rule on the gaps of the rounds so far (``scale`` = max(1, |value|))."""
    return len(gaps) > STALL_ROUNDS and gaps[-1] <= STALL_GAP * scale and gaps[-1] >= 0.99 * gaps[-1 - STALL_ROUNDS]


# ------------------------------------------------------------------- the loop
@dataclass(frozen=True)
class ColgenResult:
    x: np.ndarray
    row_dual: np.ndarray
    value: float
    bound: float
    rounds: int
    iterations: int
    columns: int
    seconds: float
    status: str


@dataclass(frozen=True)
class RestrictedOutputs:
    """The last restricted LP of :func:`generate_outputs`: its kernel columns and row-sum duals.

    The kernel (:attr:`outputs`, :attr:`columns`) is unfolded and lifted into the cone when first asked for:
    each round hands one of these to ``on_round``, whose kernel is used only when the round is the last one
    or a design is interrupted (:mod:`mechdesign.lp.incumbent` keeps kernels as callables)."""

    unfold: Callable[[], tuple[np.ndarray, np.ndarray]] = field(repr=False, compare=False)
    """Computes (outputs, columns) once, on first use of either."""
    pi: np.ndarray
    """Row-sum multipliers of the last restricted LP solved (with ``epigraph``: of the best bound met)."""
    value: float
    """Σ C K of the restricted solution (inf when none was solved)."""
    bound: float
    """The best Lagrangian bound Σπ + Σ min(0, p_y) met (floating point; not rigorous)."""
    rounds: int
    iterations: int
    rows: int
    cols: int
    seconds: float
    status: str
    """optimal | time_limit | iteration_limit | solver_error."""
    nonzeros: int = 0
    """Constraint-matrix nonzeros of the restricted LP."""
    mu: np.ndarray | None = None
    """With ``epigraph``: the multipliers μ ≥ 0 of the epigraph rows, scaled to Σμ = τ's cost."""

    @cached_property
    def _kernel_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.unfold()

    @property
    def outputs(self) -> np.ndarray:
        """The restricted output set Y' (sorted)."""
        return self._kernel_columns[0]

    @property
    def columns(self) -> np.ndarray:
        """N × |Y'|: K(:,y) for y in ``outputs``."""
        return self._kernel_columns[1]

    def kernel(self, m: int) -> np.ndarray:
        K = np.zeros((self.columns.shape[0], m))
        K[:, self.outputs] = self.columns
        return K


def generate_outputs(
    C: np.ndarray,
    c: float,
    E: float,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    initial: np.ndarray | int = 2,
    per_round: int = 1,
    max_rounds: int = 1000,
    threads: int | None = None,
    verbose: bool = False,
    on_round=None,
    epigraph: tuple[np.ndarray, float] | None = None,
) -> RestrictedOutputs:
    """Minimise Σ C_xy K_xy over (ε,Q_X(c))-PML kernels (c = 0: ε-LDP) by generating *outputs*.

    The restricted LP is the lifted LP with only the outputs Y' ⊆ {0..M−1}
    (an unused output is K(:,y) = 0, t_y = u_y = 0, which satisfies all its rows):

        minimise Σ_{x, y∈Y'} C_xy K_xy  s.t.  Σ_{y∈Y'} K_xy = 1,  K(:,y) ∈ 𝒦 (y ∈ Y'),

    written with K_xy = u_y + a_xy and t_y = u_y + d_y (a, u, d ∈ [0, 1]) so that
    u_y ≤ K_xy becomes the bound a_xy ≥ 0 and each output has N + 1 rows:

        a_xy − d_y ≤ 0,    e^{−ε} d_y − (1 − e^{−ε}) u_y − c Σ_x a_xy ≤ 0

    (the PML row e^{−ε} t ≤ c Σ K + (1 − Nc) u after substitution; for c = 0 it
    reads e^{−ε} t_y ≤ u_y ≤ min K, the LDP rows). ``E`` is e^{−ε} (a float ≤ it), ``c`` a float.

    With its row-sum duals π, every output is priced exactly (:func:`price`):
    p_y = min_{r∈𝒦} (C(:,y) − π)·r, and Σ_x π_x + Σ_y min(0, p_y) bounds the full
    optimum from below. Outputs with p_y < 0 join Y' (the most negative first,
    round r adds up to ``per_round``·(1 + r // :data:`GROW_EVERY`) outputs whose priced rays differ, and
    :data:`LATE_OUTPUTS` once the gap is within :data:`LATE_GAP`)
    until the bound meets the restricted value. **A new output enters at its priced ray** (:func:`_seat_rays`): its
    block of the basis is set to the two-/three-level ray pricing chose, so one pivot brings the ray
    in; left to HiGHS, the new block starts with every slack basic and primal simplex pivots its N
    entries in one by one (1,000–5,000 degenerate pivots per round at N = 1000; 7 with the seat).
    ``initial``: the first outputs (an array), or how many to spread evenly over 0..M−1.
    ``on_round(result)`` is called after each round with the current :class:`RestrictedOutputs`.

    ``epigraph = (G, a)`` adds a variable τ (free, cost a ≥ 0) and N rows Σ_y G_xy K_xy − τ ≤ 0 after the
    row sums: with C = c·L, G = L, a = 1 − Nc this is the expected loss under the worst prior of Q_X(c)
    (:mod:`mechdesign.engines.worst_case`). With the rows' multipliers μ ≥ 0 (Σμ = a at an optimum: τ's
    reduced cost), outputs are priced at W = C + μG − π, and the bound is the Lagrangian one at that W.

    The restricted LP is kept small three ways (:class:`_RestrictedLP`). The loop, round by round: solve the
    restricted LP, price every output (:meth:`_RestrictedLP.price`), stop when the gap closes, stalls or nothing
    prices below zero, else let the cheapest outputs join (:func:`_entering`).

    It stays one function: most of its length is this docstring, and the round loop's state (bound, duals,
    chosen outputs, gaps) is shared by every step of a round, whose parts already live in :class:`_RestrictedLP`,
    :func:`_entering` and :func:`_seat_rays`.
    """

    start = time.perf_counter()
    n, m = C.shape
    lp = _RestrictedLP(C, c, E, epigraph, verbose, threads)
    if isinstance(initial, (int, np.integer)):
        first = np.unique(np.linspace(0, m - 1, min(int(initial), m)).round().astype(int))
    else:
        first = np.unique(np.asarray(initial, dtype=int))
    chosen = lp.fold.orbits_of(first)  # orbits (outputs, without folding)
    lp.add_outputs(chosen)
    bound, value, rounds, iterations, status = -math.inf, math.inf, 0, 0, "optimal"
    pi, mu = np.zeros(n), None
    duals = (pi, mu)  # what the result reports; with ``epigraph``, the duals of the best bound met
    js, cols = chosen, np.zeros((n, chosen.size))
    gaps: list[float] = []  # value − bound after each round that did not close
    h, fold = lp.h, lp.fold
    while True:
        if time_limit is not None:
            set_seconds_left(h, time_limit - (time.perf_counter() - start))
        run_interruptible(h)
        rounds += 1
        iterations += max(int(h.getInfo().simplex_iteration_count), 0)
        if highs_status(h) is not Status.OPTIMAL:
            status = stopped_status(h)
            break
        sol = h.getSolution()
        row_dual = np.asarray(sol.row_dual, float)
        value = float(h.getInfo().objective_function_value)
        xs = np.asarray(sol.col_value, float)
        js, cols = lp.restricted_columns(xs)
        pi, mu, priced = lp.price(row_dual)
        p = priced.value
        lagrangian = float(pi.sum() + (fold.multiplicity * np.minimum(p, 0.0)).sum())
        if lp.G is None or lagrangian > bound:
            duals = (pi, mu)
        bound = max(bound, lagrangian)
        if on_round is not None:
            on_round(_result(fold, (c, E), js, cols, *duals, value, bound, rounds, iterations, h, start, status))
        scale = max(1.0, abs(value))
        _report_round(rounds, value, bound, int(fold.multiplicity[js].sum()), m, start, verbose)
        if value - bound <= tolerance * scale:
            break
        gaps.append(value - bound)
        if stalled(gaps, scale):
            break  # at the floating-point floor: the caller judges the rigorous bound
        p[chosen] = 0.0
        candidates = np.flatnonzero(p < -1e-12 * scale)
        if candidates.size == 0 or rounds >= max_rounds:
            status = "optimal" if candidates.size == 0 else "iteration_limit"
            break
        late = value - bound <= LATE_GAP * scale
        take, codes = _entering(lp, candidates, priced, per_round * (1 + rounds // GROW_EVERY), late, xs, row_dual)
        if take.size:
            chosen = np.union1d(chosen, take)
            lp.add_outputs(take)
            _seat_rays(h, take, priced, lp.offsets, lp.row_offsets, n, codes, lp.bounds)
    return _result(fold, (c, E), js, cols, *duals, value, bound, rounds, iterations, h, start, status)


def _report_round(rounds: int, value: float, bound: float, used: int, m: int, start: float, verbose: bool) -> None:
    """The live status line of a round (and a line on standard error when ``verbose``)."""
    report(phase="output generation", round=rounds, gap=max(value - bound, 0.0), detail=f"{used} of {m} outputs")
    if verbose:
        import sys

        print(
            f"output generation: round {rounds}, {used} of {m} outputs, restricted value "
            f"{value:.12g}, bound {bound:.12g}, {time.perf_counter() - start:.2f} s",
            file=sys.stderr,
        )


def _entering(lp: "_RestrictedLP", candidates, priced, how_many: int, late: bool, xs, row_dual):
    """The outputs that join the restricted LP with a block of their own, and the basis snapshot taken before the
    model grows (None when none joins). One output per round at first, later rounds more (optima that use many
    outputs, as at large ε, would otherwise take M/2 rounds), :data:`LATE_OUTPUTS` once ``late``, but only outputs
    whose priced rays differ (neighbouring outputs of an ordered loss price the same ray). Late, with the epigraph
    and c > 0 (:data:`LATE_RAYS`), new orbits join as one ray column each (no rows) and only an orbit whose ray
    column prices below zero again after :data:`LATE_RAYS_MAX` rays gets its block."""
    p = priced.value
    if late:
        how_many = max(how_many, LATE_OUTPUTS)
    if LATE_RAYS and lp.G is not None and lp.c > 0 and late:
        take = distinct_rays(candidates[np.argsort(p[candidates])], priced, candidates.size)
        rays_of = np.bincount([j for _, j, _ in lp.ray_columns], minlength=p.size)
        again, new = take[rays_of[take] >= LATE_RAYS_MAX], take[rays_of[take] < LATE_RAYS_MAX]
        codes = _basis_codes(lp.h, xs, row_dual, lp.bounds) if again.size else None  # before the model grows
        if new.size:
            lp.add_ray_columns(new, priced)
        return again, codes
    take = distinct_rays(candidates[np.argsort(p[candidates])], priced, how_many)
    return take, (_basis_codes(lp.h, xs, row_dual, lp.bounds) if take.size else None)


class _RestrictedLP:
    """The restricted LP of :func:`generate_outputs` in a warm HiGHS model: the coupling rows (row sums, and with
    the epigraph its rows, τ and slacks), then per joining orbit its block (N + 2 columns, N + 1 rows) or one ray
    column.

    Three ways to keep the restricted LP small (why and how much each saves:
    docs/explanation/performance-notes.md, section "Output generation"):

    - **Symmetric kernels.** When C (and G) are unchanged by the reflection x ↦ N−1−x, y ↦ M−1−y (|x − y|,
      squared, Hamming loss with N = M under a uniform or worst-case prior), the LP is solved over symmetric
      kernels (an optimum is symmetric): one block per mirror pair of outputs, one coupling row per mirror pair of
      rows (:mod:`mechdesign.cone.mirror_fold`). Its multipliers map back to the full LP's, every output is priced
      through its representative, and the kernel handed back is the full symmetric one.
    - **Late rays** (epigraph, c > 0, :data:`LATE_RAYS`): once the gap is within :data:`LATE_GAP`, a new output
      joins as one column θ ≥ 0 along its priced ray r (K(:,y) += θ r; no rows), and only an output that prices
      below zero again after :data:`LATE_RAYS_MAX` rays gets its block. Rays and blocks add up: both lie in the
      cone 𝒦, so the kernel stays private, and pricing is always over the whole cone, so the bound stays exact.
    - **Differenced coupling rows** (epigraph, c > 0, N ≥ :data:`DIFFERENCE_MIN_N`,
      :mod:`mechdesign.cone.difference_rows`): the row sums premultiplied by D, the epigraph rows (with slacks) by
      D^k; a ray constant on runs of x is then sparse in them, and so is the factorisation HiGHS redoes after
      every round.
    """

    def __init__(self, C, c: float, E: float, epigraph, verbose: bool, threads: int | None):
        n, m = C.shape
        self.n, self.c, self.E = n, c, E
        self.G, self.tau_cost = G, tau_cost = epigraph if epigraph is not None else (None, 0.0)
        # reflection-invariant costs: solve over symmetric kernels, half the outputs and rows (cone/mirror_fold.py)
        self.fold = fold = MirrorFold.reflection(n, m) if reflection_invariant(C, G) else MirrorFold.identity(n, m)
        self.nr = nr = fold.num_rows
        # with the epigraph, the coupling rows are premultiplied by difference matrices (cone/difference_rows.py):
        # T_sum = D on the row sums, T_epi = D^k on the epigraph rows (as equalities with slacks when k > 0);
        # only where it measured faster (DIFFERENCE_ROWS)
        k_epi = 0
        if DIFFERENCE_ROWS and G is not None and c > 0 and n >= DIFFERENCE_MIN_N:
            k_epi = sparsest_difference_order(fold.fold_rows(G[:, fold.reps[:: max(1, fold.reps.size // 8)]]))
            k_epi = k_epi if k_epi <= DIFFERENCE_MAX_ORDER else 0
        self.T_sum = difference_matrix(nr, 1) if k_epi else None
        self.T_epi = difference_matrix(nr, k_epi) if k_epi else None
        self.h = new_warm_simplex(verbose, threads, 1e-9)
        self.bounds = ModelBounds()  # every column's and row's bounds, for the basis snapshots (_basis_codes)
        self._coupling_rows(k_epi)
        self.offsets: dict[int, int] = {}  # orbit j -> its first restricted column (a_0y)
        self.row_offsets: dict[int, int] = {}  # orbit j -> its first row (a_0y − d_y ≤ 0); its PML row is N after
        self.width = n + 2  # a_0y .. a_{N-1}y, u_y, d_y
        self.C_reps = C if not fold.folded else np.ascontiguousarray(C[:, fold.reps])
        self.G_reps = G if (G is None or not fold.folded) else np.ascontiguousarray(G[:, fold.reps])
        self.ray_columns: list[tuple[int, int, np.ndarray]] = []  # (restricted column θ, orbit j, its ray r)

    def _coupling_rows(self, k_epi: int) -> None:
        h, bounds, fold, nr, T_sum, T_epi = self.h, self.bounds, self.fold, self.nr, self.T_sum, self.T_epi
        none = (0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        rhs = fold.rhs if T_sum is None else T_sum @ fold.rhs
        h.addRows(nr, rhs, rhs, *none)
        bounds.rows(rhs, rhs)
        if self.G is None:
            return
        # as in engines/side_outputs.py: with HiGHS's primal bound perturbation, a re-solve after outputs joined
        # lost primal feasibility in its clean-up (one round of 67 pivots took 10 s at N = 500)
        h.setOptionValue("primal_simplex_bound_perturbation_multiplier", 0.0)
        # the epigraph rows T_epi (Σ_y G_xy K_xy − rhs_h τ + s_h) = 0 (rows nr..2nr−1; k = 0: ≤ 0 without s),
        # then τ (column 0) and the slacks s_h (columns 1..nr)
        h.addRows(nr, np.full(nr, -np.inf) if k_epi == 0 else np.zeros(nr), np.zeros(nr), *none)
        bounds.rows(np.full(nr, -np.inf) if k_epi == 0 else np.zeros(nr), np.zeros(nr))
        tau = sparse.csc_matrix(-fold.rhs[:, None] if T_epi is None else T_epi @ -fold.rhs[:, None])
        tau.eliminate_zeros()
        h.addCols(
            1, np.array([self.tau_cost]), np.array([-np.inf]), np.array([np.inf]), tau.nnz,
            np.zeros(1, np.int32), (nr + tau.indices).astype(np.int32), tau.data,
        )  # fmt: skip
        bounds.cols(np.array([-np.inf]), np.array([np.inf]))
        if k_epi > 0:
            S = T_epi.tocsc()
            h.addCols(
                nr, np.zeros(nr), np.zeros(nr), np.full(nr, np.inf), S.nnz,
                S.indptr[:-1].astype(np.int32), (nr + S.indices).astype(np.int32), S.data,
            )  # fmt: skip
            bounds.cols(np.zeros(nr), np.full(nr, np.inf))

    def add_outputs(self, js):
        """Columns of the new orbits' outputs (entries in the coupling rows), then their rows: the basis stays valid."""
        h, bounds, n, width, c, E = self.h, self.bounds, self.n, self.width, self.c, self.E
        k, first, first_row = js.size, h.getNumCol(), h.getNumRow()
        Cy = self.C_reps[:, js] * self.fold.objective_weight[js][None, :]
        cost = np.vstack([Cy, Cy.sum(axis=0)[None, :], np.zeros((1, k))])  # (N+2, k)
        h.addCols(k * width, cost.T.ravel(), np.zeros(k * width), np.ones(k * width), *self._coupling_entries(js))
        bounds.cols(np.zeros(k * width), np.ones(k * width))
        rows_idx, rows_val = [], []
        for j, y in enumerate(js):
            a0 = first + j * width
            self.offsets[int(y)] = a0
            self.row_offsets[int(y)] = first_row + j * (n + 1)
            u, d = a0 + n, a0 + n + 1
            # a_xy − d_y ≤ 0  (K ≤ t)
            rows_idx.append(np.stack([np.arange(a0, a0 + n), np.full(n, d)], 1).ravel())
            rows_val.append(np.tile([1.0, -1.0], n))
            # e^{−ε} d_y − (1 − e^{−ε}) u_y − c Σ_x a_xy ≤ 0  (the PML row)
            rows_idx.append(np.concatenate([np.arange(a0, a0 + n), [u, d]]))
            rows_val.append(np.concatenate([np.full(n, -c), [-(1.0 - E), E]]))
        sizes = [v.size for v in rows_val]
        # row starts: N rows of 2 entries then one row of N + 2 entries, per output
        one = np.concatenate([np.arange(n) * 2, [2 * n]])
        rstarts = (np.arange(k)[:, None] * (3 * n + 2) + one[None, :]).ravel().astype(np.int32)
        h.addRows(
            k * (n + 1),
            np.full(k * (n + 1), -np.inf),
            np.zeros(k * (n + 1)),
            int(sum(sizes)),
            rstarts,
            np.concatenate(rows_idx).astype(np.int32),
            np.concatenate(rows_val),
        )
        bounds.rows(np.full(k * (n + 1), -np.inf), np.zeros(k * (n + 1)))

    def _coupling_entries(self, js):
        """CSC entries (count, starts, rows, values) of the new columns in the coupling rows: a_xy has γ_j in
        row sum row_of[x] and γ_j G_xy in epigraph row nr + row_of[x]; u_y (in every K_xy) the sums of those
        over x per row; d_y none."""
        fold, n, nr, width, G = self.fold, self.n, self.nr, self.width, self.G
        k, ys, gam = js.size, fold.reps[js], fold.gamma[js]
        x = np.arange(n)
        rows, cols, vals = [], [], []
        col0 = np.arange(k) * width
        rows.append(np.broadcast_to(fold.row_of[:, None], (n, k)))
        cols.append(x[:, None] + col0[None, :])
        vals.append(np.broadcast_to(gam[None, :], (n, k)))
        counts = np.bincount(fold.row_of, minlength=nr).astype(float)
        rows.append(np.broadcast_to(np.arange(nr)[:, None], (nr, k)))
        cols.append(np.broadcast_to(col0[None, :] + n, (nr, k)))
        vals.append(counts[:, None] * gam[None, :])
        if G is not None:
            Gy = G[:, ys] * gam[None, :]
            nz = Gy != 0
            rows.append(np.broadcast_to(nr + fold.row_of[:, None], (n, k))[nz])
            cols.append((x[:, None] + col0[None, :])[nz])
            vals.append(Gy[nz])
            Gf = fold.fold_rows(Gy)  # u_y's entry in folded epigraph row h: Σ over x with row_of[x] = h
            nzf = Gf != 0
            rows.append(np.broadcast_to(nr + np.arange(nr)[:, None], (nr, k))[nzf])
            cols.append(np.broadcast_to(col0[None, :] + n, (nr, k))[nzf])
            vals.append(Gf[nzf])
        A = sparse.csc_matrix(
            (np.concatenate([v.ravel() for v in vals]), (np.concatenate([r.ravel() for r in rows]),
             np.concatenate([q.ravel() for q in cols]))),
            shape=(2 * nr if G is not None else nr, k * width),
        )  # fmt: skip
        A.sum_duplicates()
        return self._transformed_entries(A)

    def _transformed_entries(self, A):
        """CSC entries (count, starts, rows, values) of columns A of the coupling rows, premultiplied by
        blockdiag(T_sum, T_epi) when the rows are differenced."""
        if self.T_sum is not None:
            A = sparse.block_diag([self.T_sum, self.T_epi], format="csr") @ A
        A = sparse.csc_matrix(A)
        A.eliminate_zeros()
        A.sort_indices()
        return A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data

    def add_ray_columns(self, js, priced):
        """One column θ ≥ 0 per orbit along its priced ray r: K(:, y_j) gains θ r (no rows)."""
        h, fold, G = self.h, self.fold, self.G
        k, first = js.size, h.getNumCol()
        R = priced_rays(priced, self.n, js)  # N × k
        gam = fold.gamma[js]
        cost = (self.C_reps[:, js] * R).sum(axis=0) * fold.objective_weight[js]
        parts = [fold.fold_rows(R) * gam[None, :]]
        if G is not None:
            parts.append(fold.fold_rows(G[:, fold.reps[js]] * R) * gam[None, :])
        h.addCols(
            k, cost, np.zeros(k), np.full(k, np.inf), *self._transformed_entries(sparse.csr_matrix(np.vstack(parts)))
        )
        self.bounds.cols(np.zeros(k), np.full(k, np.inf))
        self.ray_columns.extend((first + i, int(j), R[:, i]) for i, j in enumerate(js.tolist()))

    def restricted_columns(self, xs):
        """The orbits in the restricted LP and their kernel columns at the point ``xs``."""
        n = self.n
        js = np.array(sorted(set(self.offsets) | {j for _, j, _ in self.ray_columns}), dtype=int)
        pos = {int(j): i for i, j in enumerate(js)}
        cols = np.zeros((n, js.size))
        for j, a0 in self.offsets.items():
            cols[:, pos[j]] = xs[a0 + n] + xs[a0 : a0 + n]
        for col, j, r in self.ray_columns:
            cols[:, pos[j]] += xs[col] * r
        return js, cols

    def price(self, row_dual):
        """The row sums' multipliers π (and the epigraph's μ) of the full LP from the restricted LP's row duals, and
        every output priced at W = C − π (C + μG − π with the epigraph)."""
        fold, nr, T_sum, T_epi, c, E = self.fold, self.nr, self.T_sum, self.T_epi, self.c, self.E
        pi = fold.full_multipliers(row_dual[:nr] if T_sum is None else T_sum.T @ row_dual[:nr])
        if self.G is None:
            return pi, None, price(self.C_reps - pi[:, None], c, E)
        mu = epigraph_multipliers(
            fold.full_multipliers(-(row_dual[nr : 2 * nr] if T_epi is None else T_epi.T @ row_dual[nr : 2 * nr])),
            self.tau_cost,
        )
        W = mu[:, None] * self.G_reps  # C + μG − π in place (+ commutes: the same bits)
        W += self.C_reps
        W -= pi[:, None]
        return pi, mu, price(W, c, E)


def epigraph_multipliers(mu: np.ndarray, total: float) -> np.ndarray:
    """μ ≥ 0 with Σμ ≤ ``total`` (a float sum; within an ulp-sized margin below it): the epigraph rows'
    multipliers clipped at 0 and scaled to sum to ``total`` (uniform when all are 0). Any such μ gives a
    Lagrangian bound (:func:`mechdesign.engines.worst_case.worst_case_bound`)."""
    mu = np.maximum(np.nan_to_num(mu, nan=0.0), 0.0)
    s = math.fsum(mu.tolist())
    if total <= 0.0:
        return np.zeros_like(mu)
    if s <= 0.0:
        return np.full(mu.size, total / mu.size * (1.0 - 4.0 * mu.size * 2.0**-53))
    return mu * (total / s * (1.0 - 4.0 * mu.size * 2.0**-53))


def distinct_rays(order: np.ndarray, priced: Priced, limit: int) -> np.ndarray:
    """The first ``limit`` outputs of ``order`` whose priced rays (ones, fractional entry, level) differ."""
    seen, out = set(), []
    look = np.asarray(order[: 8 * limit])
    chunk = max(16, limit)  # the rays' entries are sorted for a chunk of candidates at a time (Priced.order_of)
    for i0 in range(0, look.size, chunk):
        ys = look[i0 : i0 + chunk]
        ords = priced.order_of(ys)
        for i, y in enumerate(ys.tolist()):
            q = int(priced.q[y])
            key = (q, float(priced.frac[y]), float(priced.base[y]), np.sort(ords[: q + 1, i]).tobytes())
            if key not in seen:
                seen.add(key)
                out.append(y)
                if len(out) >= limit:
                    return np.array(out, dtype=int)
    return np.array(out, dtype=int)


def _result(fold, cone, js, cols, pi, mu, value, bound, rounds, iterations, h, start, status) -> RestrictedOutputs:
    """The restricted LP's kernel (unfolded, its columns lifted into the cone ``cone`` = (c, E) where HiGHS's
    tolerance left them outside: cone/cone_lift.py; both when first asked for) and duals. ``cols`` is not
    changed afterwards (each round's :func:`generate_outputs` makes new ones)."""

    def unfold():
        ys, full = fold.full_columns(js, cols)
        return ys, lift_into_cone(full, *cone)

    return RestrictedOutputs(
        mu=mu,
        unfold=unfold,
        pi=pi,
        value=value,
        bound=bound,
        rounds=rounds,
        iterations=iterations,
        rows=int(h.getNumRow()),
        cols=int(h.getNumCol()),
        nonzeros=int(h.getNumNz()),
        seconds=time.perf_counter() - start,
        status=status,
    )


class ModelBounds:
    """The bounds of every column and row of a HiGHS model, recorded as they are added (numpy arrays)."""

    def __init__(self):
        self._cols: list[tuple[np.ndarray, np.ndarray]] = []
        self._rows: list[tuple[np.ndarray, np.ndarray]] = []

    def cols(self, lower, upper) -> None:
        self._cols.append((np.asarray(lower, float), np.asarray(upper, float)))

    def rows(self, lower, upper) -> None:
        self._rows.append((np.asarray(lower, float), np.asarray(upper, float)))

    @staticmethod
    def _joined(parts, k):
        if len(parts) > 1:
            parts[:] = [(np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts]))]
        return parts[0][k] if parts else np.zeros(0)

    @property
    def col_lower(self):
        return self._joined(self._cols, 0)

    @property
    def col_upper(self):
        return self._joined(self._cols, 1)

    @property
    def row_lower(self):
        return self._joined(self._rows, 0)

    @property
    def row_upper(self):
        return self._joined(self._rows, 1)


_LOWER, _BASIC, _UPPER, _ZERO = (int(s) for s in (
    highspy.HighsBasisStatus.kLower, highspy.HighsBasisStatus.kBasic, highspy.HighsBasisStatus.kUpper,
    highspy.HighsBasisStatus.kZero,
))  # fmt: skip
_STATUSES = np.empty(max(_LOWER, _BASIC, _UPPER, _ZERO) + 1, dtype=object)
for _s in (highspy.HighsBasisStatus.kLower, highspy.HighsBasisStatus.kBasic, highspy.HighsBasisStatus.kUpper,
           highspy.HighsBasisStatus.kZero):  # fmt: skip
    _STATUSES[int(_s)] = _s


def _basis_codes(h, col_value: np.ndarray, row_dual: np.ndarray, bounds: ModelBounds):
    """HiGHS's basis after a solve, as the integer codes of the statuses ``h.getBasis()`` reports (column and
    row arrays), or None where that cannot be told for sure; ``col_value``, ``row_dual`` are the solution.

    ``getBasis().col_status`` makes one Python object per status (0.1–0.25 s per list of 470,000 at N = 3000),
    while the basic variables come as one array (``getBasicVariables``). A nonbasic column sits at a bound,
    so its status is the bound its value equals (a free column: kZero at 0); a nonbasic row with one finite
    bound is at it; a nonbasic equality row is reported kUpper when its dual is > 0 and kLower otherwise
    (what HiGHS does; its status does not choose a value). Any other nonbasic variable (a column strictly
    between its bounds, a fixed column, a ranged row) makes this None, and the caller reads the basis.
    ``tests/engines/test_colgen_rounds.py`` checks these codes against ``getBasis`` over every round of small designs.
    """
    lo_c, up_c, lo_r, up_r = bounds.col_lower, bounds.col_upper, bounds.row_lower, bounds.row_upper
    if col_value.size != lo_c.size or row_dual.size != lo_r.size or h.getNumCol() != lo_c.size:
        return None
    if h.getNumRow() != lo_r.size:
        return None
    status, basic = h.getBasicVariables()
    basic = np.asarray(basic, dtype=np.int64)
    if status != highspy.HighsStatus.kOk or basic.size != lo_r.size:
        return None
    cs = np.full(lo_c.size, -1, dtype=np.int8)
    cs[(col_value == up_c) & (lo_c != up_c)] = _UPPER
    cs[(col_value == lo_c) & (lo_c != up_c)] = _LOWER
    cs[np.isneginf(lo_c) & np.isposinf(up_c) & (col_value == 0.0)] = _ZERO
    rs = np.full(lo_r.size, -1, dtype=np.int8)
    fixed = lo_r == up_r
    rs[fixed] = np.where(row_dual[fixed] > 0, _UPPER, _LOWER)
    rs[np.isneginf(lo_r) & np.isfinite(up_r)] = _UPPER
    rs[np.isfinite(lo_r) & np.isposinf(up_r)] = _LOWER
    rs[np.isneginf(lo_r) & np.isposinf(up_r)] = _ZERO
    cs[basic[basic >= 0]] = _BASIC
    rs[-1 - basic[basic < 0]] = _BASIC
    if np.any(cs < 0) or np.any(rs < 0):
        return None
    return cs, rs


def _seated_statuses(h, ys, priced: Priced, offsets: dict, row_offsets: dict, n: int, codes, bounds):
    """The column and row statuses (lists of HighsBasisStatus) that :func:`_seat_rays` gives HiGHS: from
    ``codes`` (:func:`_basis_codes` before the model grew; columns added since are nonbasic at the bound
    nearer 0, rows added since basic, as HiGHS appends them), or read from ``h.getBasis()`` when None."""
    orders = priced.order_of(ys)
    if codes is None:  # HiGHS's own statuses, after the model grew (its new columns and rows included)
        basis = h.getBasis()
        codes = (
            np.array([int(v) for v in basis.col_status], dtype=np.int8),
            np.array([int(v) for v in basis.row_status], dtype=np.int8),
        )
    cs0, rs0 = codes
    if bounds is None or bounds.col_lower.size == cs0.size:  # read after the model grew: nothing to append
        cs, rs = cs0.copy(), rs0.copy()
    else:
        lo, up = bounds.col_lower[cs0.size :], bounds.col_upper[cs0.size :]
        new = np.where(
            np.isfinite(lo) & (np.isposinf(up) | (np.abs(lo) <= np.abs(up))),
            _LOWER,
            np.where(np.isfinite(up), _UPPER, _ZERO),
        )
        cs = np.concatenate([cs0, new.astype(np.int8)])
        rs = np.concatenate([rs0, np.full(bounds.row_lower.size - rs0.size, _BASIC, dtype=np.int8)])
    for i, y in enumerate(ys.tolist()):
        a0, r0 = offsets[y], row_offsets[y]
        q = int(priced.q[y])
        cs[a0 : a0 + n + 2] = _LOWER
        rs[r0 : r0 + n + 1] = _BASIC
        ones = orders[:q, i]
        cs[a0 + ones] = _BASIC
        rs[r0 + ones] = _UPPER
        if q < n and priced.frac[y] != priced.base[y]:
            cs[a0 + int(orders[q, i])] = _BASIC
            rs[r0 + n] = _UPPER
        elif q < n and priced.base[y] > 0:
            cs[a0 + n] = _BASIC
            rs[r0 + n] = _UPPER
    return _STATUSES[cs].tolist(), _STATUSES[rs].tolist()


def _seat_rays(
    h, ys: np.ndarray, priced: Priced, offsets: dict, row_offsets: dict, n: int, codes=None, bounds=None
) -> None:
    """Make the new outputs ``ys`` (just added, all at 0) basic as the ray their pricing chose.

    Block of output y (columns a_0y..a_{N−1}y, u_y, d_y; rows a_xy − d_y ≤ 0 then the PML row):
    the ones of the ray (the q smallest entries of w = C(:,y) − π) get a_xy basic and their row
    nonbasic (tight); the other rows keep their slack basic and a_xy at 0; a two-level ray
    (level u_q > 0) makes u_y basic with the PML row tight, a three-level ray its fractional entry
    a_jy basic with the PML row tight, a zero-one ray leaves the PML slack basic; d_y stays at 0.
    That is N + 1 basic variables for N + 1 new rows, block triangular below the old basis (the new
    rows have a_xy or u_y on their diagonal), so the basis is nonsingular, the old duals π are
    unchanged and every value is still 0 (primal feasible). d_y entering moves K(:,y) along the ray.

    The rest of the basis is HiGHS's: ``codes`` (:func:`_basis_codes`, taken before the new outputs were
    added; ``bounds`` the model's :class:`ModelBounds`) when known, else read from ``h.getBasis()``.
    """
    if ys.size == 0:
        return
    basis = h.getBasis()
    basis.col_status, basis.row_status = _seated_statuses(h, ys, priced, offsets, row_offsets, n, codes, bounds)
    h.setBasis(basis)


def solve_output_generation(
    lp,
    layout: KernelLayout,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    initial: int = 2,
    per_round: int = 1,
    max_rounds: int = 1000,
    threads: int | None = None,
    verbose: bool = False,
) -> ColgenResult:
    """Solve the compiled lifted kernel LP ``lp`` by :func:`generate_outputs`.

    Each round's restricted solution is a feasible point of ``lp`` and is offered (Ctrl-C,
    :mod:`mechdesign.lp.incumbent`). The returned row multipliers are for the full lifted LP
    (:func:`full_row_dual`), so :func:`mechdesign.lp.program.dual_bound` re-derives the bound from
    ``lp`` itself without trusting this module.
    """
    n, m = layout.K.shape
    C = lp.c[layout.K]

    def kernel_x(ys, cols):
        """K(:,y), t_y, u_y of the restricted solution, written into a full-LP vector."""
        out = np.zeros(lp.num_cols)
        for j, y in enumerate(ys):
            col = cols[:, j]
            out[layout.K[:, y]] = col
            out[layout.t[y]] = col.max()
            if layout.u is not None:
                out[layout.u[y]] = col.min()
        return out

    def offer_round(res: RestrictedOutputs):
        lagrangian = res.bound
        offer_lp(
            lp,
            kernel_x(res.outputs, res.columns),
            row_dual=partial(full_row_dual, layout, lp.num_rows, C, res.pi.copy()),
            estimate=lp.sense * (lagrangian + lp.offset),
            source=f"output generation, round {res.rounds}",
            feasible=True,  # the restricted LP is optimal: its point satisfies every row of the full LP
        )

    res = generate_outputs(
        C,
        layout.c,
        layout.scale,
        time_limit=time_limit,
        tolerance=tolerance,
        initial=initial,
        per_round=per_round,
        max_rounds=max_rounds,
        threads=threads,
        verbose=verbose,
        on_round=offer_round,
    )
    x_full = kernel_x(res.outputs, res.columns)
    y_full = full_row_dual(layout, lp.num_rows, C, res.pi)
    return ColgenResult(
        x=x_full,
        row_dual=y_full,
        value=res.value + lp.offset,
        bound=res.bound + lp.offset,
        rounds=res.rounds,
        iterations=res.iterations,
        columns=int(res.outputs.size),
        seconds=res.seconds,
        status=res.status,
    )


# ------------------------------------------------------------------ the engine
def _lp_by_output_generation(lp, options, time_limit=None, layout=None):
    """One compiled kernel LP by :func:`solve_output_generation`, as an :class:`~mechdesign.lp.solve.LPSolution`
    (status ``optimal`` only when the generation reached its bound)."""
    from mechdesign.lp.solve import LPSolution, Status, plain_kernel_layout

    plain = plain_kernel_layout(lp, layout)
    if plain is None:
        return LPSolution(
            Status.UNKNOWN, None, None, None, 0.0, 0, "output-generation", "highs", "not the plain kernel LP"
        )
    res = solve_output_generation(lp, plain, time_limit=time_limit, verbose=bool(options.verbose))
    if res.status != "optimal":
        status = Status(res.status) if res.status in Status._value2member_map_ else Status.UNKNOWN
        return LPSolution(
            status, None, None, None, res.seconds, res.iterations, "output-generation", "highs", res.status
        )
    objective = lp.user_objective(res.x)
    offer_lp(lp, res.x, res.row_dual, estimate=objective, source="highs output-generation")  # as solve_lp offers
    return LPSolution(
        status=Status.OPTIMAL,
        x=res.x,
        row_dual=res.row_dual,
        objective=objective,
        seconds=res.seconds,
        iterations=res.iterations,
        method="output-generation",
        backend="highs",
        message=f"optimal: {res.rounds} rounds, {res.columns} of {plain.K.shape[1]} outputs",
    )


class OutputGeneration(EngineBase):
    """Engine ``output-generation``: the compiled plain kernel LP (the cone's rows and an objective on K alone) by
    :func:`solve_output_generation`: a restricted LP over the few outputs an optimum uses, every other output
    priced exactly, and multipliers for the whole lifted LP, from which the bound is recomputed."""

    name = "output-generation"
    solves = "the compiled plain kernel LP over min_mass or the simplex: restricted LP over few outputs, exact pricing"
    stops_on = (Status.OPTIMAL, Status.INTERRUPTED)  # short of its bound, even at a time limit: the whole LP

    def applies(self, problem) -> str | None:
        spec = problem.spec
        if spec.solver.method != "auto" or spec.solver.backend != "highs":
            return f"solver is {spec.solver.backend} {spec.solver.method} (this engine is HiGHS's automatic method)"
        if spec.extra_guarantees:
            return "privacy lists further guarantees (rows besides the cone's)"
        return layout_reason(spec) or problem.rules.plain_kernel_lp_reason()

    def run(self, problem, budget):
        from mechdesign.engines.compiled_lp import solve_kernel_lps

        compiled = problem.compiled()
        return solve_kernel_lps(
            problem.spec,
            compiled,
            problem.take_compile_seconds(),
            lp_solver=_lp_by_output_generation,
            time_limit=budget.remaining(),
        )


def solve_kernel_lp_compiled(lp, options, time_limit=None, layout=None):
    """One compiled kernel LP: by output generation when it is the plain kernel LP and the solver is HiGHS's
    automatic method, else (or when the generation stops short of its bound, with what is left of the time) by
    :func:`mechdesign.lp.solve.solve_lp` and its fallback ladder."""
    from mechdesign.lp.solve import plain_kernel_layout, solve_lp

    plain = plain_kernel_layout(lp, layout)
    limit = options.time_limit if time_limit is None else time_limit
    if plain is not None and options.method == "auto" and options.backend == "highs":
        began = time.perf_counter()
        solution = _lp_by_output_generation(lp, options, limit, plain)
        if solution.status is Status.OPTIMAL:
            return solution
        if limit is not None:
            limit = max(limit - (time.perf_counter() - began), 1e-3)
    return solve_lp(lp, options, time_limit=limit, layout=layout)
