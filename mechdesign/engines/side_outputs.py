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
every output is priced exactly by :func:`mechdesign.cone.pricing.price`: p_y = min_{k∈𝒦} W(:,y)·k.
Outputs with p_y < 0 join Y' (the most negative first). Row multipliers of the whole LP are y_side on
the side rows and, per output, :func:`mechdesign.cone.pricing.full_row_dual` (which makes every K's
reduced cost 0); :func:`mechdesign.lp.program.dual_bound` turns them into a bound on the full LP, valid
whatever the restricted solves' accuracy. The loop stops when that bound meets the restricted value.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechdesign.engines.output_generation import GROW_EVERY, KernelLayout, distinct_rays, full_row_dual, price, stalled
from mechdesign.lp.program import LinearProgram, dual_bound
from mechdesign.lp.highs import new_warm_simplex, set_seconds_left
from mechdesign.lp.incumbent import offer_lp
from mechdesign.lp.interrupt import run_interruptible
from mechdesign.lp.solve import stopped_status

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
    per_round: int = 1,
    max_rounds: int = 500,
    threads: int | None = None,
) -> SideResult:
    """Solve ``lp`` (a kernel LP with side rows, module doc) by generating outputs."""
    import highspy

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
    model = _SideModel(lp, layout, A, threads)
    h, block_cols, block_rows = model.h, model.block_cols, model.block_rows
    model.add_rows(side_rows)
    model.add_cols(side_cols)
    chosen = np.unique(np.linspace(0, m - 1, min(initial, m)).round().astype(int))
    model.add_outputs(chosen)
    rounds = iterations = 0
    status, value, best = "optimal", math.inf, (-math.inf, None)
    x_full = None
    gaps: list[float] = []  # |value − bound| after each round that did not close (colgen.stalled)
    while True:
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - start)
            if left <= 0:
                status = "time_limit"
                break
            set_seconds_left(h, left)
        run_interruptible(h)
        rounds += 1
        iterations += max(int(h.getInfo().simplex_iteration_count), 0)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            status = stopped_status(h)
            break
        sol = h.getSolution()
        xs, ys_dual = np.asarray(sol.col_value, float), np.asarray(sol.row_dual, float)
        x_full = np.zeros(lp.num_cols)
        x_full[np.asarray(model.model_cols)] = xs
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
        gaps.append(abs(value - best[0]))
        if stalled(gaps, scale):
            break
        priced = price(W, c, E)
        p = priced.value
        p[chosen] = 0.0
        candidates = np.flatnonzero(p < -1e-12 * scale)
        if candidates.size == 0 or rounds >= max_rounds:
            status = "optimal" if candidates.size == 0 else "iteration_limit"
            break
        take = distinct_rays(candidates[np.argsort(p[candidates])], priced, per_round * (1 + rounds // GROW_EVERY))
        chosen = np.union1d(chosen, take)
        model.add_outputs(take)
        _seat_compiled(h, take, priced, block_cols, block_rows, n, layout.u is not None)
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


class _SideModel:
    """One live HiGHS model of the restricted LP: the side rows and columns, then each output's block (its K, t, u
    columns with their entries in the side rows, then its own rows), seated at its priced ray (:func:`_seat_compiled`).
    ``model_rows``/``model_cols``: the compiled row/column id of each model row/column."""

    def __init__(self, lp: LinearProgram, layout: KernelLayout, A, threads: int | None):
        self.lp, self.layout, self.A, self.A_csc = lp, layout, A, A.tocsc()
        self.h = h = new_warm_simplex(False, threads, 1e-9)
        # no bound perturbation: with it, a re-solve after outputs join lost primal feasibility in its cleanup
        # (1811 infeasibilities, 9 s for 703 pivots at N = 300); without it the worst case at N = 300 takes 2.2 s
        # instead of 19.7 s, N = 500 7 s instead of 184 s
        h.setOptionValue("primal_simplex_bound_perturbation_multiplier", 0.0)
        self.model_rows: list[int] = []
        self.model_cols: list[int] = []
        self.row_pos = np.full(lp.num_rows, -1)
        self.block_cols: dict[int, int] = {}
        self.block_rows: dict[int, int] = {}

    def columns_of(self, ys):
        layout = self.layout
        cols = [layout.K[:, ys].ravel(), layout.t[ys]]
        if layout.u is not None:
            cols.append(layout.u[ys])
        return np.concatenate(cols)

    def rows_of(self, ys):
        layout = self.layout
        rows = [layout.rows_t[:, ys].ravel(), layout.rows_low[:, ys].ravel()]
        if layout.rows_pml is not None:
            rows.append(layout.rows_pml[ys])
        return np.concatenate(rows)

    def add_rows(self, ids):
        import highspy

        lp, h, model_rows, model_cols = self.lp, self.h, self.model_rows, self.model_cols
        lo = np.where(np.isfinite(lp.row_lower[ids]), lp.row_lower[ids], -highspy.kHighsInf)
        up = np.where(np.isfinite(lp.row_upper[ids]), lp.row_upper[ids], highspy.kHighsInf)
        self.row_pos[ids] = len(model_rows) + np.arange(ids.size)
        model_rows.extend(ids.tolist())
        # entries on the columns already in the model
        sub = self.A[ids][:, model_cols].tocsr() if model_cols else None
        if sub is None or sub.nnz == 0:
            h.addRows(ids.size, lo, up, 0, np.zeros(ids.size, np.int32), np.zeros(0, np.int32), np.zeros(0))
        else:
            h.addRows(
                ids.size, lo, up, sub.nnz, sub.indptr[:-1].astype(np.int32), sub.indices.astype(np.int32), sub.data
            )

    def add_cols(self, ids):
        import highspy

        lp, row_pos = self.lp, self.row_pos
        sub = self.A_csc[:, ids].tocoo()
        keep = row_pos[sub.row] >= 0  # entries in rows already in the model
        rr, cc, vv = row_pos[sub.row[keep]], sub.col[keep], sub.data[keep]
        order_ = np.lexsort((rr, cc))
        rr, cc, vv = rr[order_], cc[order_], vv[order_]
        starts = np.searchsorted(cc, np.arange(ids.size)).astype(np.int32)
        lo = np.where(np.isfinite(lp.col_lower[ids]), lp.col_lower[ids], -highspy.kHighsInf)
        up = np.where(np.isfinite(lp.col_upper[ids]), lp.col_upper[ids], highspy.kHighsInf)
        self.h.addCols(ids.size, lp.c[ids], lo, up, rr.size, starts, rr.astype(np.int32), vv)
        self.model_cols.extend(ids.tolist())

    def add_outputs(self, ys):
        for y in ys.tolist():
            self.block_cols[y] = len(self.model_cols)
            self.add_cols(self.columns_of(np.array([y])))
            self.block_rows[y] = len(self.model_rows)
            self.add_rows(self.rows_of(np.array([y])))


def _seat_compiled(h, ys, priced, block_cols: dict, block_rows: dict, n: int, has_u: bool) -> None:
    """:func:`mechdesign.engines.output_generation._seat_rays` for the compiled rows of one output: columns K(:,y), t_y
    (then u_y), rows K_xy − t_y ≤ 0 (N), then the low rows (N: u_y − K_xy ≤ 0, or e^{−ε} t_y − K_xy ≤ 0 for
    the simplex), then (Q_X(c)) the PML row e^{−ε} t_y − c Σ K − (1 − Nc) u_y ≤ 0.

    t_y stays nonbasic at 0, so the block is at 0 and d t_y > 0 moves along the ray. The ones S of the
    ray: K basic with its t-row tight; a two-level ray: every K basic, the others' low rows tight, and u
    basic with the PML row tight (the simplex: no u, no PML row); zero-one: the others' K at 0, every low
    row and the PML row slack; three-level: as zero-one plus the fractional K basic with the PML row
    tight. Each case has 2N (+1) basic variables for the 2N (+1) new rows, block triangular below the
    old basis.
    """
    import highspy

    if ys.size == 0:
        return
    basis = h.getBasis()
    cs, rs = basis.col_status, basis.row_status
    B, L, U = highspy.HighsBasisStatus.kBasic, highspy.HighsBasisStatus.kLower, highspy.HighsBasisStatus.kUpper
    orders = priced.order_of(ys)
    for i, y in enumerate(ys.tolist()):
        c0, r0 = block_cols[y], block_rows[y]
        q = int(priced.q[y])
        ones = orders[:q, i].tolist()
        in_s = np.zeros(n, bool)
        in_s[ones] = True
        two = q < n and priced.base[y] > 0
        three = q < n and priced.frac[y] != priced.base[y]
        width = n + 1 + int(has_u)
        cs[c0 : c0 + width] = [L] * width
        rs[r0 : r0 + 2 * n + int(has_u)] = [B] * (2 * n + int(has_u))
        for x in range(n):
            if in_s[x]:
                cs[c0 + x] = B
                rs[r0 + x] = U  # K_xy − t_y ≤ 0 tight
            elif two:
                cs[c0 + x] = B
                rs[r0 + n + x] = U  # low row tight: K_xy at the low level
        if three:
            cs[c0 + int(orders[q, i])] = B
            rs[r0 + 2 * n] = U
        elif two and has_u:
            cs[c0 + n + 1] = B  # u_y
            rs[r0 + 2 * n] = U
    basis.col_status, basis.row_status = cs, rs
    h.setBasis(basis)
