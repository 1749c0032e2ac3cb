"""Output generation for a kernel LP with *side constraints*: the (ε,Q_X(c))-PML kernel rows of
:func:`mechdesign.objectives.compile.add_pml_kernel` plus any rows and variables that do not belong to
one output (the worst-case prior's epigraph τ, the row losses r, their rows).

The full LP (compiled, so that every bound is checked on it) is

    minimise cᵀx   s.t.  the per-output rows  (K(:,y), t_y, u_y) ∈ 𝒦 for every y,
                         the side rows        (row sums Σ_y K_xy = 1; r_x = Σ_y L_xy K_xy;
                                               τ ≥ max_{P∈Q_X(c)} P·r; ...),

and an output that is not used (K(:,y) = 0, t_y = u_y = 0) satisfies its own rows. The restricted LP
keeps every side row and column and only the outputs Y'. With its multipliers y_side of the side rows,
the reduced cost of K_xy *through the side rows* is W_xy = c_{K_xy} − (A_sideᵀ y_side)_{K_xy}
(for the worst-case prior, W = σ_x L_xy − π_x: σ are the multipliers of the worst-case vertices), and
every output is priced exactly by :func:`mechdesign.lp.colgen.price`: p_y = min_{k∈𝒦} W(:,y)·k.
Outputs with p_y < 0 join Y' (the most negative first). Row multipliers of the whole LP are y_side on
the side rows and, per output, :func:`mechdesign.lp.colgen.full_row_dual` (which makes every K's
reduced cost 0); :func:`mechdesign.lp.program.dual_bound` turns them into a bound on the full LP, valid
whatever the restricted solves' accuracy. The loop stops when that bound meets the restricted value.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechdesign.lp.threads import highs_threads
from mechdesign.lp.colgen import KernelLayout, full_row_dual, price
from mechdesign.lp.program import LinearProgram, dual_bound
from mechdesign.lp.highs import new_highs, set_seconds_left
from mechdesign.lp.incumbent import offer_lp
from mechdesign.lp.interrupt import run_interruptible

__all__ = ["solve_side_output_generation", "SideResult"]


@dataclass(frozen=True)
class SideResult:
    x: np.ndarray | None
    row_dual: np.ndarray | None
    value: float
    bound: float
    rounds: int
    iterations: int
    outputs: int
    seconds: float
    status: str


def solve_side_output_generation(
    lp: LinearProgram,
    layout: KernelLayout,
    *,
    time_limit: float | None = None,
    tolerance: float = 1e-9,
    initial: int = 2,
    per_round: int = 32,
    max_rounds: int = 500,
    threads: int | None = None,
) -> SideResult:
    """Solve ``lp`` (a kernel LP with side rows, module doc) by generating outputs."""
    import highspy

    from mechdesign.lp.solve import _highs_model

    start = time.perf_counter()
    n, m = layout.K.shape
    A = lp.A.tocsr()
    out_cols = np.zeros(lp.num_cols, bool)
    out_cols[layout.K.ravel()] = True
    out_cols[layout.t] = True
    if layout.u is not None:
        out_cols[layout.u] = True
    out_rows = np.zeros(lp.num_rows, bool)
    out_rows[layout.rows_t.ravel()] = True
    out_rows[layout.rows_low.ravel()] = True
    if layout.rows_pml is not None:
        out_rows[layout.rows_pml] = True
    side_cols, side_rows = np.flatnonzero(~out_cols), np.flatnonzero(~out_rows)
    A_side_K = A[side_rows][:, layout.K.ravel()].tocsc()  # side rows × K (row sums, r rows)
    cK = lp.c[layout.K]
    E, c = layout.scale, layout.c

    def columns_of(ys):
        cols = [layout.K[:, ys].ravel(), layout.t[ys]]
        if layout.u is not None:
            cols.append(layout.u[ys])
        return np.concatenate(cols)

    def rows_of(ys):
        rows = [layout.rows_t[:, ys].ravel(), layout.rows_low[:, ys].ravel()]
        if layout.rows_pml is not None:
            rows.append(layout.rows_pml[ys])
        return np.concatenate(rows)

    chosen = np.unique(np.linspace(0, m - 1, min(initial, m)).round().astype(int))
    rounds = iterations = 0
    status, value, best = "optimal", math.inf, (-math.inf, None)
    x_full = None
    while True:
        cols = np.concatenate([side_cols, columns_of(chosen)])
        rows = np.concatenate([side_rows, rows_of(chosen)])
        sub = LinearProgram(
            c=lp.c[cols],
            A=A[rows][:, cols],
            row_lower=lp.row_lower[rows],
            row_upper=lp.row_upper[rows],
            col_lower=lp.col_lower[cols],
            col_upper=lp.col_upper[cols],
            offset=lp.offset,
            sense=lp.sense,
        )
        h = new_highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "ipm")  # the epigraph rows make simplex slow (9 s at N = 100)
        h.setOptionValue("threads", threads or highs_threads())  # one count per process (lp/threads.py)
        h.setOptionValue("primal_feasibility_tolerance", 1e-9)
        h.setOptionValue("dual_feasibility_tolerance", 1e-9)
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - start)
            if left <= 0:
                status = "time_limit"
                break
            set_seconds_left(h, left)
        h.passModel(_highs_model(sub))
        run_interruptible(h)
        rounds += 1
        iterations += max(int(h.getInfo().simplex_iteration_count), 0)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            status = "time_limit" if "Time" in h.modelStatusToString(h.getModelStatus()) else "solver_error"
            break
        sol = h.getSolution()
        xs, ys_dual = np.asarray(sol.col_value, float), np.asarray(sol.row_dual, float)
        x_full = np.zeros(lp.num_cols)
        x_full[cols] = xs
        value = lp.user_objective(x_full)
        y_side = ys_dual[: side_rows.size]
        W = cK - (A_side_K.T @ y_side).reshape(n, m)
        pi = np.zeros(n)  # W already holds the row-sum duals
        y_full = full_row_dual(layout, lp.num_rows, W, pi)
        y_full[side_rows] = y_side
        bound = dual_bound(lp, y_full)
        offer_lp(lp, x_full, bound=bound, source=f"output generation (side rows), round {rounds}", feasible=True)
        if lp.sense * bound > lp.sense * best[0] or best[1] is None:
            best = (bound, y_full)
        scale = max(1.0, abs(value))
        if abs(value - best[0]) <= tolerance * scale:
            break
        p = price(W, c, E).value
        p[chosen] = 0.0
        candidates = np.flatnonzero(p < -1e-12 * scale)
        if candidates.size == 0 or rounds >= max_rounds:
            status = "optimal" if candidates.size == 0 else "iteration_limit"
            break
        take = candidates[np.argsort(p[candidates])][:per_round]
        chosen = np.union1d(chosen, take)
    return SideResult(
        x=x_full,
        row_dual=best[1],
        value=value,
        bound=best[0],
        rounds=rounds,
        iterations=iterations,
        outputs=int(chosen.size),
        seconds=time.perf_counter() - start,
        status=status,
    )
