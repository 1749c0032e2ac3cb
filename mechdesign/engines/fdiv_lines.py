"""f-divergences at large N: tangent and secant linear programs (see :mod:`mechdesign.engines.sublinear`).

The utility of a column k is μ(k) = G(P0·k, P1·k), G(a, b) = b f(a/b), and every column's likelihood
ratio a/b lies in [u_min, u_max] = [min_x P0_x/P1_x, max_x P0_x/P1_x]. On a grid
u_min = u_0 < u_1 < … < u_T = u_max (u_max = ∞ adds a tail piece) two families of lines bracket G:

* tangents  ℓ_i(a, b) = f'(u_i) a + (f(u_i) − u_i f'(u_i)) b  ≤ G(a, b)  (equality at a/b = u_i);
* secants   s_i(a, b) = σ_i a + (f(u_i) − σ_i u_i) b,  σ_i = (f(u_{i+1}) − f(u_i))/(u_{i+1} − u_i):
  the linear interpolant of the convex f on the grid is ≥ f and equals max_i of its pieces, so
  G(a, b) ≤ max_i s_i(a, b) whenever a/b ∈ [u_min, u_max] (tail: slope f'(∞) from u_T).

Replacing G by either max of lines turns the design into a LINEAR program over kernels with one output
per line (outputs with the same line merge: the objective is then linear):

    (L)  maximise Σ_i ℓ_i·K(:, i)   over (ε,𝒫)-PML kernels   — its kernel has utility ≥ its value;
    (S)  maximise Σ_i s_i·K(:, i)   over (ε,𝒫)-PML kernels   — its value bounds the optimum above.

Each round solves both (compile.add_pml_kernel; output generation prices the outputs exactly for
min_mass and simplex, :mod:`mechdesign.engines.output_generation`); the columns of (L)'s kernel join a pool of rays whose
ray LP (P) gives the design (utility computed from μ; a basic solution uses at most N rays); the upper
bound is weak duality on (S) (:func:`mechdesign.lp.program.dual_bound`, valid for any multipliers). The grid
is refined at the ratios of the columns that (S) and (L) use (the secant error there shrinks
quadratically), until the gap is ≤ tol relative to the value (1e-12 absolute at least) or the time
limit.

**Rounding** (:func:`secant_allowance`). (S)'s gains are floats: f̂ = f(u_i) evaluated in floating point, the
slopes σ̃_i and intercepts c̃_i computed from them and the gains fl(P0_x σ̃_i + P1_x c̃_i), so a secant can pass
slightly *below* f where in exact arithmetic it touches it. With u = 2⁻⁵³ and F(u_i) a bound on |f̂(u_i) − f(u_i)|
(16u times the size of f's terms at u_i: a transcendental function of numpy is taken to be within 8 ulps), the
line ℓ_i(v) = σ̃_i v + c̃_i is within e_j = 4u(|σ̃_i u_i| + |f̂_i| + |f̂_{i+1} − f̂_i|) + F(u_j) of f at both ends of
its interval (c̃_i and σ̃_i(u_{i+1} − u_i) carry three roundings each), so by convexity ℓ_i ≥ f − E_i on it,
E_i = max(e_i, e_{i+1}) (the tail: f ≤ f(u_T) + f'(∞)(v − u_T), E = 4u(|f'(∞) u_T| + |f̂_T|) + F(u_T)). A column
k with a = P0·k, b = P1·k, a/b in interval i then has G(a, b) ≤ Σ_x k_x ĝ_{x,i} + E_i b + 3.01u(|σ̃_i| a + |c̃_i| b)
(each gain two roundings, and the priors' floats each within u of the spec's exact masses; a column whose exact
ratio falls just outside the float grid's range, by at most 3u of it, adds (|σ̃| + |f'|)·8u·u_0 to E at that end),
and summing over a kernel's columns (Σa = ΣP0, Σb = ΣP1; a column of interval i has a ≤ u_{i+1} b, and b ≤ a/u_i)
every kernel's U is at most (S)'s value plus

    A = max_{u_i < 1} w_i·ΣP1 + max_{u_i ≥ 1} (w_i/u_i)·ΣP0,   w_i = E_i + 3.01u(|σ̃_i| u_{i+1} + |c̃_i|)

(and the tail piece's share), which is added to each bound from (S). A test evaluates G exactly (mpmath) on
columns at the grid's ratios, where the exact secant touches f and only the rounding is left: the float lines fall
below G on hundreds of them, by up to 5 % (tv) to 17 % (f_α, α = 2.5) of the column's allowance.

Works for every prior set that compile.py supports, at any N the kernel LP reaches.

Measured (2 cores, shared): N = 50, 54 random cases (six f, three prior sets, ε ∈ {0.25, 1, 3}) all
reach gap ≤ 1e-7 relative to the value, the slowest in 1.6 s (benchmarks/fdiv_n50.py; 3.7 s in an older
record); N = 100 KL cases in 16–30 s. Tried first and dropped:
column generation over rays with an exact (polynomial) pricing by a likelihood-ratio sweep — exact, but
the master LP tails off (gap 1e-1 after 30 s at N = 50), and the exact pricing did not improve the
secant bound here while tripling the time.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext

import numpy as np

from mechdesign.engines.fixed_outputs import FixedDesign
from mechdesign.engines.output_generation import solve_kernel_lp_compiled
from mechdesign.objectives.compile import add_pml_kernel_with_layout
from mechdesign.lp.incumbent import design_problem, offer
from mechdesign.lp.program import LPBuilder, dual_bound
from mechdesign.lp.solve import Status, solve_lp
from mechdesign.spec.models import Spec
from mechdesign.objectives.rays import (
    CG_TIME_LIMIT,
    RayDesign,
    column_utility,
    compact_columns,
    normalise_rows,
    ray_lp,
)

__all__ = [
    "design_tangent_secant",
    "f_derivatives",
    "f_at_zero",
    "tangent_gains",
    "secant_gains",
    "secant_pieces",
    "secant_allowance",
    "START_RATIOS",
]

START_RATIOS = 64
"""Grid points of the first round (geometric over the ratio range, plus u = 1)."""
U = 2.0**-53
"""The unit roundoff of doubles (the secants' rounding allowance, :func:`secant_allowance`)."""
MAX_ROUNDS = 60


def f_derivatives(f):
    """(f, f') for a spec's f, vectorised on u > 0 (tv: f' is the sign, its kink u = 1 is a grid point)."""
    if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
        return (lambda u: u * np.log(u)), (lambda u: np.log(u) + 1.0)
    if f == "tv":
        return (lambda u: 0.5 * np.abs(u - 1.0)), (lambda u: 0.5 * np.sign(u - 1.0))
    if f == "hellinger":
        return (lambda u: (np.sqrt(u) - 1.0) ** 2), (lambda u: 1.0 - 1.0 / np.sqrt(u))
    if f == "chi2":
        return (lambda u: (u - 1.0) ** 2), (lambda u: 2.0 * (u - 1.0))
    a = float(f.alpha)
    if a < 1:
        return (lambda u: 1.0 - u**a), (lambda u: -a * u ** (a - 1.0))
    return (lambda u: u**a - 1.0), (lambda u: a * u ** (a - 1.0))


def f_at_zero(f) -> float:
    """f(0) = lim_{u→0} f(u) (finite for every f offered: kl 0, tv 1/2, hellinger 1, chi2 1, f_α ±1)."""
    if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
        return 0.0
    if f == "tv":
        return 0.5
    if f in ("hellinger", "chi2"):
        return 1.0
    return 1.0 if f.alpha < 1 else -1.0


def f_slope_at_infinity(f) -> float:
    """f'(∞) (finite only for tv 1/2, hellinger 1, f_α with α < 1: 0)."""
    if f == "tv":
        return 0.5
    if f == "hellinger":
        return 1.0
    if not isinstance(f, str) and f.alpha < 1:
        return 0.0
    return math.inf


def _f(f, u: np.ndarray) -> np.ndarray:
    fu, _ = f_derivatives(f)
    u = np.asarray(u, float)
    out = np.full(u.shape, f_at_zero(f))
    pos = u > 0
    out[pos] = fu(u[pos])
    return out


def tangent_gains(f, u: np.ndarray, P0: np.ndarray, P1: np.ndarray) -> np.ndarray:
    """N × T gains of (L): column i is f'(u_i) P0 + (f(u_i) − u_i f'(u_i)) P1 (u_i > 0)."""
    fu, dfu = f_derivatives(f)
    d = dfu(u)
    return np.outer(P0, d) + np.outer(P1, fu(u) - u * d)


def secant_gains(f, grid: np.ndarray, tail: bool, P0: np.ndarray, P1: np.ndarray) -> np.ndarray:
    """N × (T or T + 1) gains of (S): one column per grid interval (and the tail to ∞)."""
    slope, icpt, _ = secant_pieces(f, grid, tail)
    return np.outer(P0, slope) + np.outer(P1, icpt)


def f_term_size(f, u: np.ndarray) -> np.ndarray:
    """The size of f's terms at u (≥ |f(u)|): 16u times it bounds |f̂(u) − f(u)| (module docstring)."""
    u = np.asarray(u, float)
    if f == "kl" or (not isinstance(f, str) and f.alpha == 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(u > 0, np.abs(u * np.log(np.where(u > 0, u, 1.0))), 0.0) + 1e-300
    if f == "tv":
        return 1.0 + u
    if f == "hellinger":
        return (1.0 + np.sqrt(u)) ** 2
    if f == "chi2":
        return (1.0 + u) ** 2
    return 1.0 + u ** float(f.alpha)


def secant_pieces(f, grid: np.ndarray, tail: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(σ̃, c̃, E) per line of (S) as :func:`secant_gains` computes them: slopes, intercepts, and E_i with
    ℓ_i(v) = σ̃_i v + c̃_i ≥ f(v) − E_i on the line's interval (module docstring, **Rounding**)."""
    fv = _f(f, grid)
    slope = np.diff(fv) / np.diff(grid)
    icpt = fv[:-1] - slope * grid[:-1]
    F = 16 * U * f_term_size(f, grid)
    ends = 4 * U * (np.abs(slope * grid[:-1]) + np.abs(fv[:-1]) + np.abs(np.diff(fv)))
    E = ends + np.maximum(F[:-1], F[1:])
    # a column's exact ratio lies within 3u (relative) of the float range [u_0, u_T] of the priors' float ratios, so
    # possibly just outside it, where the end secant, extended, is below the convex f by at most
    # (|σ̃| + |f'|)·(distance): 8u·u_0 below the first point, and above the last one when there is no tail piece
    _, df = f_derivatives(f)
    if grid[0] > 0:
        E[0] += 8 * U * grid[0] * (abs(slope[0]) + abs(float(df(np.array(grid[0])))))
    if not tail:
        E[-1] += 8 * U * grid[-1] * (abs(slope[-1]) + abs(float(df(np.array(grid[-1])))))
    if tail:
        s_inf = f_slope_at_infinity(f)
        slope = np.append(slope, s_inf)
        icpt = np.append(icpt, fv[-1] - s_inf * grid[-1])
        E = np.append(E, 4 * U * (abs(s_inf * grid[-1]) + abs(fv[-1])) + F[-1])
    return slope, icpt, E


def secant_allowance(f, grid: np.ndarray, tail: bool, P0: np.ndarray, P1: np.ndarray) -> float:
    """A ≥ 0 with U(K) ≤ (S)'s value + A for every kernel K (module docstring, **Rounding**): the rounding of
    (S)'s gains, added to each bound taken from (S). A column in interval i (a/b ≤ u_{i+1}) is allowed b·w_i,
    w_i = E_i + 3.01u(|σ̃_i| u_{i+1} + |c̃_i|), which is at most a·w_i/u_i when u_i ≥ 1 (b ≤ a/u_i); so a kernel is
    allowed max over u_i < 1 of w_i·ΣP1 plus max over u_i ≥ 1 of (w_i/u_i)·ΣP0 (the lines far out, whose gains are
    large, count per unit of a, of which those columns hold little), and the tail piece
    (E + 3.01u|c̃|)/u_T + 3.01u|f'(∞)| per unit of a."""
    slope, icpt, E = secant_pieces(f, grid, tail)
    a, b = float(np.sum(P0)), float(np.sum(P1))
    T = len(grid) - 1
    w = E[:T] + 3.01 * U * (np.abs(slope[:T]) * grid[1:] + np.abs(icpt[:T]))
    left = grid[:-1]
    far = left >= 1.0
    A = (float(w[~far].max()) if (~far).any() else 0.0) * b
    A += (float((w[far] / left[far]).max()) if far.any() else 0.0) * a
    if tail:
        A += ((E[T] + 3.01 * U * abs(icpt[T])) / grid[-1] + 3.01 * U * abs(slope[T])) * a
    return A * (1 + 16 * U) if math.isfinite(A) else math.inf


def _ratios(R: np.ndarray, P0: np.ndarray, P1: np.ndarray) -> np.ndarray:
    a, b = R @ P0, R @ P1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)


def _refine(grid: np.ndarray, new: np.ndarray, hi: float) -> np.ndarray:
    """grid ∪ new (finite, in range, not within 1e-13 relative of a grid point)."""
    new = new[np.isfinite(new) & (new > grid[0]) & (new < hi)]
    if not len(new):
        return grid
    g = np.sort(np.concatenate([grid, np.unique(new)]))
    keep = np.ones(len(g), bool)
    keep[1:] = np.diff(g) > 1e-13 * np.maximum(np.abs(g[1:]), 1e-300)
    return g[keep]


def _start_grid(P0: np.ndarray, P1: np.ndarray):
    """The first grid (geometric over the ratio range, with u = 1), whether a tail piece to ∞ is
    needed (P1 misses a symbol P0 has) and the largest ratio a column can have."""
    pos = P1 > 0
    ratios = P0[pos] / P1[pos]
    lo = float(ratios.min())
    tail = bool(np.any(~pos & (P0 > 0)))  # a column may have ratio ∞ (P1·k = 0 < P0·k)
    hi = math.inf if tail else float(ratios.max())
    top = float(ratios.max()) if not tail else max(float(ratios.max()), 1.0) * 2
    inner = np.geomspace(max(lo, top * 1e-12), top, START_RATIOS) if top > max(lo, 1e-300) else np.array([top])
    grid = np.unique(np.concatenate([[lo, top], inner, [1.0] if lo < 1.0 < top else []]))
    grid = grid[(grid >= lo) & (grid <= top)]
    if len(grid) < 2:  # every symbol has the same ratio (P0 = P1): any interval containing it will do
        grid = np.array([grid[0], 2.0 * grid[0] + 1.0])
    return grid, tail, hi


def _kernel_lp(spec: Spec, gains: np.ndarray, m: int | None = None):
    """(L) or (S): maximise Σ_i gains(:, i)·K(:, i) over PML kernels with one output per line. With ``m``,
    at most M outputs may be used (a MIP): binary s_i ≥ t_i (t_i ≥ the column's maximum,
    compile.add_pml_kernel), Σ s_i ≤ M. A kernel with M columns merges its columns that share a
    line (post-processing, the objective is linear on them), so the restriction is exact."""
    b = LPBuilder()
    K, layout = add_pml_kernel_with_layout(b, spec, gains.shape[1])
    if m is not None:
        T = gains.shape[1]
        s = b.variables("s", (T,), lower=0.0, upper=1.0, integer=True)
        b.rows(np.stack([b.blocks["t"], s], -1), np.array([1.0, -1.0]), -np.inf, 0.0)
        b.rows(s[None, :], np.ones((1, T)), -np.inf, float(m))
    return b.build((K, gains), sense=-1), K, layout


def _used_columns(Kx: np.ndarray) -> np.ndarray:
    """The nonzero columns of the kernel Kx, scaled to max entry 1, one row each."""
    Kx = np.clip(np.asarray(Kx, float), 0.0, None)
    cols = Kx[:, Kx.max(axis=0) > 1e-12].T
    return cols / cols.max(axis=1, keepdims=True)


def design_tangent_secant(spec: Spec, tol: float = 1e-7):
    """The f-divergence design by tangent and secant LPs (module docstring); returns a RayDesign."""

    t0 = time.perf_counter()
    limit = spec.solver.time_limit or CG_TIME_LIMIT
    n, obj = spec.n, spec.objective
    P0, P1 = (np.array([float(p) for p in pr]) for pr in obj.priors)
    mu_fn = column_utility(spec)
    grid, tail, hi = _start_grid(P0, P1)
    pool = np.zeros((0, n))
    best_bound, rounds, theta, lam, value, rlp = math.inf, 0, None, None, None, None

    def remaining() -> float:
        return max(limit - (time.perf_counter() - t0), 1.0)

    while True:
        rounds += 1
        tangents = grid[grid > 0]
        lp_l, K_l, layout = _kernel_lp(spec, tangent_gains(obj.f, tangents, P0, P1))
        sol_l = solve_kernel_lp_compiled(lp_l, spec.solver, time_limit=remaining(), layout=layout)
        lp_s, K_s, layout = _kernel_lp(spec, secant_gains(obj.f, grid, tail, P0, P1))
        with design_problem(lp_s):  # (S)'s value bounds the design: its bound serves Ctrl-C (lp/incumbent.py)
            sol_s = solve_kernel_lp_compiled(lp_s, spec.solver, time_limit=remaining(), layout=layout)
        if sol_l.x is None or sol_l.status is not Status.OPTIMAL:
            break
        cols = {
            name: _used_columns(np.asarray(sol.x, float)[K])
            for name, sol, K in (("l", sol_l, K_l), ("s", sol_s, K_s))
            if sol.x is not None
        }
        if sol_s.row_dual is not None:  # (S)'s bound, plus the rounding of its gains
            best_bound = min(best_bound, dual_bound(lp_s, sol_s.row_dual) + secant_allowance(obj.f, grid, tail, P0, P1))
        pool = np.unique(np.vstack([pool, cols["l"]]), axis=0)
        th, lm, val, _, rl = ray_lp(pool, mu_fn(pool), spec.solver)
        if th is None:
            break
        theta, lam, value, rlp = th, lm, val, rl
        used = theta > 1e-12
        offer((pool[used] * theta[used, None]).T, source=f"tangent/secant LPs, round {rounds}", stream="ray LP")
        if (
            best_bound - value <= max(tol * abs(value), 1e-12)
            or time.perf_counter() - t0 > limit
            or rounds >= MAX_ROUNDS
        ):
            break
        grown = _refine(grid, np.concatenate([_ratios(c, P0, P1) for c in cols.values()]), hi)
        if len(grown) == len(grid):
            break
        grid = grown
    if theta is None:
        return RayDesign(pool, None, None, None, None, "tangent/secant LPs", rounds, time.perf_counter() - t0)
    return RayDesign(
        pool,
        theta,
        lam,
        value,
        best_bound,
        f"tangent/secant LPs over {len(grid)} likelihood ratios",
        rounds,
        time.perf_counter() - t0,
        (rlp.num_rows, rlp.num_cols, rlp.A.nnz),
    )


# ------------------------------------------------------------------ a fixed number of outputs M
def design_tangent_secant_fixed(spec: Spec, m: int, tol: float = 1e-7, time_limit: float = 30.0):
    """max U over kernels with M outputs, for an f-divergence: the tangent and secant programs with
    at most M outputs used (mixed-integer LPs, :func:`_kernel_lp` with ``m``), refined like
    :func:`design_tangent_secant`. The secant MIP's dual bound bounds the M-output optimum above
    (each column of an optimal kernel lies under the secant of its ratio's interval); the tangent
    MIP's kernel is the design. Returns (kernel N × M or None, its utility, upper bound or None,
    rounds, seconds)."""

    t0 = time.perf_counter()
    obj = spec.objective
    P0, P1 = (np.array([float(p) for p in pr]) for pr in obj.priors)
    mu_fn = column_utility(spec)
    grid, tail, hi = _start_grid(P0, P1)
    best_K, best_v, bound, rounds = None, -math.inf, math.inf, 0
    history: list[tuple[float, float]] = []
    while time.perf_counter() - t0 < time_limit:
        rounds += 1
        remaining = max(time_limit - (time.perf_counter() - t0), 1.0)
        cols = []
        for secant, gains in (
            (False, tangent_gains(obj.f, grid[grid > 0], P0, P1)),
            (True, secant_gains(obj.f, grid, tail, P0, P1)),
        ):
            lp, K, _ = _kernel_lp(spec, gains, m)  # a MIP: solve_lp
            with design_problem(lp) if secant else nullcontext():  # the secant MIP bounds the M-output design
                sol = solve_lp(lp, spec.solver, time_limit=remaining)
            if sol.x is None:
                continue
            Kx = normalise_rows(compact_columns(np.clip(np.asarray(sol.x, float)[K], 0.0, None), m))
            v = float(mu_fn(Kx.T).sum())
            if v > best_v:
                best_K, best_v = Kx, v
            cols.append(_used_columns(Kx))
            if secant and sol.mip_dual_bound is not None and sol.status in (Status.OPTIMAL, Status.TIME_LIMIT):
                bound = min(bound, sol.mip_dual_bound + secant_allowance(obj.f, grid, tail, P0, P1))
        if best_K is None or bound - best_v <= max(tol * abs(best_v), 1e-12):
            break
        history.append((bound, best_v))
        if (
            len(history) >= 2
            and history[-2][0] - history[-1][0] <= 1e-3 * (bound - best_v)
            and history[-1][1] - history[-2][1] <= 1e-3 * (bound - best_v)
        ):
            break  # neither side moved by 1e-3 of the gap: what is left is the MIP tolerances' slack
        grown = _refine(grid, np.concatenate([_ratios(c, P0, P1) for c in cols]) if cols else np.zeros(0), hi)
        if len(grown) == len(grid):
            break
        grid = grown
    return best_K, best_v, (bound if math.isfinite(bound) else None), rounds, time.perf_counter() - t0


def _fixed_tangent_secant(spec, m, greedy, greedy_val, mu_fn, cap, auto_bound) -> FixedDesign | None:
    """Fixed M past vertex enumeration: tangent/secant MIPs with at most M outputs (a design and a bound)."""
    K, v, bound, rounds, sec = design_tangent_secant_fixed(spec, m, time_limit=spec.solver.time_limit or 30.0)
    if K is not None and v >= greedy_val:
        bound = cap(bound) if bound is not None else auto_bound
        return FixedDesign(
            K,
            v,
            bound,
            f"tangent/secant MIPs with at most {m} outputs ({rounds} rounds, {sec:.2f} s)",
            bound is not None and bound - v <= 1e-7 * max(1.0, abs(v)),
        )
    return None
