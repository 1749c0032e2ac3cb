"""The Dobrushin coefficient over a prior set that is *not* permutation invariant, pair LPs solved lazily.

Lemma 3 of the Dobrushin paper (Grosse et al.): binary outputs suffice, so

    η_TV(ε,𝒫) = max over pairs {a, b} of  v(a, b),   v(a, b) = max p_a − p_b
                 s.t. [p, 1 − p] is (ε,𝒫)-PML (the lifted LP of
                 :func:`mechdesign.objectives.compile.add_pml_kernel` with M = 2).

(max_b v(a, b) = max p_a − min_x p_x maximises a convex function, so the pairs cannot be merged into
one LP per symbol.) Every pair LP has the *same* feasible set; only the objective changes. So one HiGHS
model is built once and kept: each pair changes two costs and re-solves from the previous optimal
basis (primal simplex; the old vertex stays feasible). Pairs are solved in branch-and-bound order:

* **A closed-form bound on every pair before any LP** (:mod:`mechdesign.engines.dobrushin_shift`):
  v(a, b) ≤ min{1, (e^ε − 1)/(1 + κ_ab e^ε)} when 𝒫 holds two priors that differ by mass κ_ab moved
  between a and b (for Q_X(c) it is Theorem 1's Ξ(ε,c)). Where a pair reaches it, one LP settles every pair.
* **A bound on every pair from every dual solution.** Written as minimisation (min p_b − p_a), weak
  duality (:func:`mechdesign.lp.program.dual_bound`) with row multipliers y gives, for *any*
  objective c', the lower bound  Σ_rows ρ_r(y) + Σ_j φ_j(c'_j − (Aᵀy)_j)  with φ_j(z) = min over
  the column box of z·x_j. For c' = e_{p_b} − e_{p_a} only two terms differ from c' = 0, so one y
  bounds all N² pairs at once:  U_y(a, b) = −(R + F + α_a + β_b) (+ a rounding slack), with
  α_a = φ(z_a − 1) − φ(z_a), β_b = φ(z_b + 1) − φ(z_b), z = −Aᵀy restricted to p. Every solved pair
  adds its y; a pair's bound is the least over the y's collected, and min(U(a, b), U(b, a), 1)
  (v is symmetric: swapping the two outputs maps feasible kernels to feasible kernels; TV ≤ 1).
* **Incumbent.** Each solution p gives the feasible value max p − min p ≥ v(a, b).
* **Order and stop.** The unsolved pair with the largest bound is solved next (ties: the pair of lightest
  symbols, :func:`~mechdesign.engines.dobrushin_shift.pair_order_score`); the loop stops when no
  unsolved pair's bound exceeds the incumbent (relative 1e-9): at once when the incumbent reaches 1.
  The bound handed to the certificate is the largest bound over *all* pairs, so it is a true upper
  bound on η_TV whatever the solver's accuracy.

**Symmetric symbols.** (Only without other guarantees in a ``privacy`` list, which need not be symmetric.)
Swapping two symbols whose entries agree in every per-symbol field of the prior
set (the prior of ``point``, each vertex of ``hull``, ``lower``/``upper`` of ``box``, the centre of
``l1_ball``) maps 𝒫 onto itself, hence feasible kernels onto feasible kernels; such swaps generate the
product of the symmetric groups of the classes of equal entries, and every pair {a, b} with a in class i
and b in class j has the same value. Only one pair per unordered pair of classes is open.

A pair LP that HiGHS does not finish as ``Optimal`` from the warm start is re-solved from scratch with
the fallback ladder of :func:`mechdesign.lp.solve.solve_lp`.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from mechdesign.lp.program import LinearProgram, LPBuilder
from mechdesign.engines.base import EngineBase
from mechdesign.engines.output_generation import solve_kernel_lp_compiled
from mechdesign.lp.solve import Status, highs_model
from mechdesign.objectives.compile import add_pml_kernel_with_layout
from mechdesign.engines.dobrushin_shift import next_pair, pair_order_score, pair_shift_bounds
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.models import Spec
from mechdesign.lp.highs import configured_highs, set_seconds_left
from mechdesign.lp.incumbent import offer
from mechdesign.lp.interrupt import run_interruptible

__all__ = ["solve_dobrushin_pairs", "PairBounds"]

STOP_TOLERANCE = 1e-9
"""Stop when every unsolved pair's bound is within STOP_TOLERANCE·max(1, |incumbent|) of the incumbent: in effect
absolute, as a Dobrushin coefficient is at most 1."""


def _box_min(z: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """φ(z) = min over lower ≤ x ≤ upper of z·x (finite bounds)."""
    return np.where(z > 0, z * lower, z * upper)


class PairBounds:
    """Upper bounds on v(a, b) for every ordered pair, from row multipliers of any pair LP (module doc).
    ``lp`` is the common LP with cost 0 on every column."""

    def __init__(self, lp: LinearProgram, p: np.ndarray):
        self.lp, self.p = lp, p
        n = p.size
        self.bound = np.ones((n, n))  # TV ≤ 1
        np.fill_diagonal(self.bound, -np.inf)
        others = np.ones(lp.num_cols, bool)
        others[p] = False
        self._others = others

    def add(self, row_dual: np.ndarray) -> bool:
        """Tighten every pair's bound with these multipliers; False when they bound nothing (an
        infinite column bound meets a nonzero reduced cost outside p)."""
        lp = self.lp
        y = np.asarray(row_dual, float).copy()
        y[(y > 0) & ~np.isfinite(lp.row_lower)] = 0.0
        y[(y < 0) & ~np.isfinite(lp.row_upper)] = 0.0
        rho = np.where(
            y > 0,
            y * np.where(np.isfinite(lp.row_lower), lp.row_lower, 0.0),
            y * np.where(np.isfinite(lp.row_upper), lp.row_upper, 0.0),
        )
        z = -(lp.A.T @ y)  # reduced costs at c = 0
        lo, up = lp.col_lower, lp.col_upper
        zo, lo_o, up_o = z[self._others], lo[self._others], up[self._others]
        if np.any((zo > 0) & ~np.isfinite(lo_o)) or np.any((zo < 0) & ~np.isfinite(up_o)):
            return False
        phi_o = np.where(
            zo > 0, zo * np.where(np.isfinite(lo_o), lo_o, 0.0), zo * np.where(np.isfinite(up_o), up_o, 0.0)
        )
        zp, lo_p, up_p = z[self.p], lo[self.p], up[self.p]
        phi_p = _box_min(zp, lo_p, up_p)
        alpha = _box_min(zp - 1.0, lo_p, up_p) - phi_p  # p_a gets cost −1 (maximise p_a)
        beta = _box_min(zp + 1.0, lo_p, up_p) - phi_p  # p_b gets cost +1
        base = float(rho.sum() + phi_o.sum() + phi_p.sum())
        slack = (
            1e-12
            * float(
                np.abs(rho).sum()
                + np.abs(phi_o).sum()
                + np.abs(phi_p).sum()
                + 4.0 * (1.0 + np.abs(zp).max(initial=0.0))
            )
            + 1e-300
        )
        upper = -(base + alpha[:, None] + beta[None, :]) + slack
        upper = np.minimum(upper, upper.T)  # v(a, b) = v(b, a)
        np.fill_diagonal(upper, -np.inf)
        np.minimum(self.bound, upper, out=self.bound)
        return True


def symbol_classes(prior_set, n: int) -> np.ndarray:
    """Class ids of the symbols: equal when every per-symbol entry of the prior set's fields agrees
    (module doc). Fields that are lists of N numbers give an entry per symbol; lists of such lists
    (hull vertices) give one entry per list; other fields are common to every symbol."""
    columns = []
    for value in prior_set.model_dump().values():
        if isinstance(value, list) and len(value) == n and not isinstance(value[0], list):
            columns.append(value)
        elif isinstance(value, list) and value and all(isinstance(v, list) and len(v) == n for v in value):
            columns.extend(value)
    keys = [tuple(col[x] for col in columns) for x in range(n)]
    ids: dict = {}
    return np.array([ids.setdefault(k, len(ids)) for k in keys])


def solve_dobrushin_pairs(spec: Spec, compile_seconds: float = 0.0) -> PlanOutcome:
    """max over pairs {a, b} of the pair LP max p_a − p_b, lazily (module doc); the best binary kernel
    [p, 1 − p] (padded with zero columns to M), its value max p − min p and a bound valid for all pairs."""
    import highspy

    t0 = time.perf_counter()
    n = spec.n
    b = LPBuilder()
    K, layout = add_pml_kernel_with_layout(b, spec, 2)
    p = K[:, 0]
    lp = b.build((p[:1], np.zeros(1)), sense=-1)  # costs set per pair below (minimise p_b − p_a)
    bounds = PairBounds(lp, p)
    np.minimum(bounds.bound, pair_shift_bounds(spec), out=bounds.bound)  # closed forms, no LP (dobrushin_shift.py)
    score = pair_order_score(spec.prior_set, n)  # among equal bounds, the pair likeliest to attain its bound first
    # primal simplex without presolve: the basis, and the previous vertex, stay between pairs
    h = configured_highs("warm_simplex", verbose=bool(spec.solver.verbose))
    h.passModel(highs_model(lp))
    compile_seconds += time.perf_counter() - t0

    start = time.perf_counter()
    budget = spec.solver.time_limit
    representative = _representative_pairs(spec, n)
    solved = ~representative
    incumbent, best_p = -np.inf, None
    lps = iterations = 0
    status, message, prev = Status.OPTIMAL, "", None
    while True:
        open_bound = np.where(solved, -np.inf, bounds.bound)
        flat = next_pair(open_bound, score)
        if open_bound.flat[flat] <= incumbent + STOP_TOLERANCE * max(1.0, abs(incumbent)):
            break
        if budget is not None and time.perf_counter() - start > budget:
            status, message = Status.TIME_LIMIT, "time limit"
            break
        a, c = divmod(flat, n)
        solved[a, c] = solved[c, a] = True
        if prev is not None:
            h.changeColsCost(2, np.array(prev, np.int32), np.zeros(2))
        prev = [int(p[a]), int(p[c])]
        h.changeColsCost(2, np.array(prev, np.int32), np.array([-1.0, 1.0]))
        if budget is not None:
            set_seconds_left(h, budget - (time.perf_counter() - start))
        run_interruptible(h)
        lps += 1
        iterations += max(int(h.getInfo().simplex_iteration_count), 0)
        x = y = None
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            sol = h.getSolution()
            x, y = np.asarray(sol.col_value, float), np.asarray(sol.row_dual, float)
        else:  # from scratch, with solve_lp's fallbacks
            left = None if budget is None else max(budget - (time.perf_counter() - start), 1e-3)
            one = _pair_from_scratch(lp, layout, prev, spec, left)
            iterations += one.iterations
            if one.status is not Status.OPTIMAL or one.row_dual is None:
                status, message = one.status, f"pair {a},{c}: {one.message}"
                x = one.x
            else:
                x, y = one.x, one.row_dual
            h.clearSolver()
        if x is not None:
            pv = np.clip(x[p], 0.0, 1.0)
            value = float(pv.max() - pv.min())
            if value > incumbent:
                incumbent, best_p = value, pv
        if y is None:
            break
        bounds.add(y)
        if best_p is not None:  # for Ctrl-C (lp/incumbent.py): every pair's bound holds at every step
            offer(
                np.stack([best_p, 1.0 - best_p], axis=1),
                float(bounds.bound[representative].max()),
                source=f"pair LPs, {lps} solved",
                stream="dobrushin pairs",  # the best pair so far: never worse than before
            )
    seconds = time.perf_counter() - start
    kernel = None
    if best_p is not None:
        kernel = np.zeros((n, max(spec.m, 2)))
        kernel[:, 0], kernel[:, 1] = best_p, 1.0 - best_p
    # every pair's bound holds at every step (as offered above): a time limit keeps it
    bound = float(bounds.bound[representative].max()) if status in (Status.OPTIMAL, Status.TIME_LIMIT) else None
    pairs = int(representative.sum()) // 2
    return PlanOutcome(
        status=status,
        kernel=kernel,
        value=None if best_p is None else incumbent,
        bound=bound,
        sense=-1,
        method="lazy pair LPs",
        seconds=seconds,
        compile_seconds=compile_seconds,
        iterations=iterations,
        lps=lps,
        rows=lp.num_rows,
        columns=lp.num_cols,
        nonzeros=int(lp.A.nnz),
        message=message
        or f"optimal: {lps} of {pairs} pair LPs (one per pair of symbol classes) solved, the others bounded by closed forms and duals",
    )


def _representative_pairs(spec: Spec, n: int) -> np.ndarray:
    """One pair per unordered pair of symbol classes (module doc), as a symmetric N × N mask. The other guarantees
    of a ``privacy`` list (a metric, another prior set) need not be symmetric under the swaps of the prior set's
    classes: with them, every symbol is its own class."""
    classes = np.arange(n) if spec.extra_guarantees else symbol_classes(spec.prior_set, n)
    first = {}
    second = {}
    for x, k in enumerate(classes):
        (second if k in first and k not in second else first).setdefault(int(k), x)
    representative = np.zeros((n, n), bool)
    for i, a in first.items():
        for j, c in first.items():
            if i < j:
                representative[a, c] = representative[c, a] = True
        if i in second:
            representative[a, second[i]] = representative[second[i], a] = True
    return representative


def _pair_from_scratch(lp: LinearProgram, layout, pair: list[int], spec: Spec, time_limit: float | None):
    """The pair LP min p_b − p_a (``pair`` = [p_a's column, p_b's column]) solved from scratch, with the fallback
    ladder, when the warm model did not finish it as optimal."""
    cost = np.zeros(lp.num_cols)
    cost[pair] = [-1.0, 1.0]
    return solve_kernel_lp_compiled(replace(lp, c=cost), spec.solver, time_limit=time_limit, layout=layout)


class DobrushinPairs(EngineBase):
    """Engine ``dobrushin-pairs``: the Dobrushin coefficient over a prior set that is not permutation invariant, the
    pair LPs solved lazily in one warm-started model (:func:`solve_dobrushin_pairs`)."""

    name = "dobrushin-pairs"
    solves = "the Dobrushin coefficient: N(N−1)/2 pair LPs solved lazily in one warm-started HiGHS model"

    def applies(self, problem) -> str | None:
        from mechdesign.privacy.priors import is_permutation_invariant

        spec = problem.spec
        if spec.solver.backend != "highs":
            return f"solver.backend is {spec.solver.backend}"
        if spec.solver.method == "exact":
            return "solver.method is exact (the compiled pair LPs by the rational simplex)"
        if is_permutation_invariant(spec.prior_set, spec.n):
            return "the prior set is permutation invariant (one pair LP is the whole design)"
        return None

    def run(self, problem, budget):
        return solve_dobrushin_pairs(problem.spec)

    def hands_over(self, outcome):
        return None
