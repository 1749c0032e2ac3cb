"""Sublinear objectives with a fixed output size M smaller than the optimum needs.

**The problem.** Maximise U(K) = Σ_y μ(K(:,y)) (μ convex, positively homogeneous: mutual
information, f-divergences, Bayes vulnerability; :mod:`mechdesign.engines.sublinear`) over

    𝒦_M = {K ∈ R^{N×M} : K ≥ 0, K·1 = 1, K(:,y) ∈ C(ε,𝒫) for every y},

C the (ε,𝒫)-PML column cone (:func:`mechdesign.privacy.extremes.cone_inequalities`). With
``output_size: auto`` the extreme-ray LP gives the optimum with at most N columns (one per
ray). When the spec fixes M below the number of rays that optimum uses, a kernel with M
columns must be found some other way. Facts used:

* The auto optimum's certified bound is an upper bound for every M (a kernel with M columns
  is a kernel with ``auto`` outputs).
* 𝒦_M is a polytope and U is convex on it, so max U is attained at a vertex of 𝒦_M.
* M = 1: 𝒦_1 is the single kernel K = 1 (one column of ones, which lies in every cone C),
  so the optimum is μ(1), exactly.

**Methods** (:func:`design_fixed_outputs`, in this order):

1. *Bayes vulnerability, any N: a mixed-integer LP* (:func:`bayes_mip`). Give output y the
   guess g(y) = argmax_x P(x)K(x,y); merging outputs with the same guess is post-processing and
   keeps V, so some optimal kernel has distinct guesses, and placing the column guessing x at
   position x (zero columns elsewhere) shows

       max V over 𝒦_M = max Σ_x P(x) K(x,x)  over (ε,𝒫)-PML K with N columns, at most M nonzero

   (the M ≥ N case is the LP of :func:`mechdesign.objectives.compile.compile_bayes_vulnerability`). The MIP
   has one binary s_y per column: t_y ≤ s_y (t_y ≥ max_x K(x,y) is the column-maximum variable of
   :func:`mechdesign.objectives.compile.add_pml_kernel`, whose lifted (ε,𝒫)-PML rows serve every prior set
   kind) and Σ_y s_y ≤ M. The guess of each column is fixed by its position, so there is no
   column-permutation symmetry. The (at most M) used columns are kept afterwards.
   HiGHS solves it with relative gap 1e-9; the certificate's upper bound is min(HiGHS's MIP dual
   bound, the auto bound). At the time limit (solver.time_limit, else :data:`MIP_TIME_LIMIT` s)
   the incumbent is used and the status is ``suboptimal`` when the gap is open.
   Measured here (2 cores, ``python -m mechdesign.engines.fixed_outputs``; Dirichlet priors, ε = 1;
   min_mass, simplex, point, hull): every case closed at the root node (one case 21 nodes):
   N = 20, M = 10 in ≤ 0.3 s; N = 50, M = 5 or 25 in ≤ 3.7 s; N = 100, M = 10 or 50 in 1–18 s.
   The assignment formulation (binary z_{x,y} "output y guesses x", w ≤ K, w ≤ z,
   Σ_x z_{x,y} = 1, Σ_y z_{x,y} ≤ 1, guesses in increasing order) gives the same optima but
   its relaxation is weak: N = 10, M = 5 took 3.6 s and N = 16, M = 8 hit 30 s with a 30% gap;
   tests/engines/test_fixed_outputs.py keeps it as an independent reference. (Its big-M variant
   u_y ≤ P(x)K(x,y) + P(x)(1 − z_{x,y}) is not valid: when z_{x,y} = 0 the row must not bind,
   which needs a constant ≥ max_x' P(x'), not P(x).)

2. *Tiny N·M, any objective: vertex enumeration of 𝒦_M* (:func:`enumerate_vertices`) with
   pycddlib, in dimension d = N(M − 1) (the last column is 1 − the others), after removing
   redundant rows of the cone's H-representation (cdd's canonicalisation). U is evaluated at
   every vertex and the best is exact (up to cdd's floating point). cdd's double description in floats can drop
   vertices without raising (min_mass c = 0.0759, N = 4, M = 3, ε = 2.578125: 155 of 691), so a listing is used
   only when every listed point satisfies the rows and its best point is a maximum of each of 40 random linear
   objectives (optimality conditions at that point, else HiGHS's LP maximum;
   :func:`mechdesign.privacy.extremes.listing_is_complete`); otherwise the rows scaled to unit norm are listed
   again, and then the methods below take over. Column-order constraints
   would be valid for the maximum (they keep a permuted copy of every kernel) but they add
   vertices: measured, they made cdd slower (N = 4, M = 4: 0.2 s → 31 s), so none are used.
   Threshold :data:`ENUM_MAX_DIM` = 8 on d and :data:`ENUM_MAX_ROWS` = 100 on the cone's rows
   before canonicalisation. Measured (2 cores, min over ε ∈ {0.5, 2} of every kind: simplex,
   min_mass, point, hull, box, l1_ball): every case with d ≤ 8 and ≤ 100 rows took ≤ 0.5 s
   (worst: box N = 4, M = 3, 1953 vertices, 0.47 s; hull N = 8, M = 2, 0.47 s; min_mass N = 8,
   M = 2, 0.36 s); d = 10 took up to 5.8 s (min_mass N = 10, M = 2) and d = 12 6–47 s
   (N = 6, M = 3), and box/l1_ball at N = 7 have > 200 cone rows and took 2–7 s even at M = 2.

3. *f-divergences past that: tangent/secant MIPs*
   (:func:`mechdesign.engines.fdiv_lines.design_tangent_secant_fixed`): the tangent and secant LPs of
   :mod:`mechdesign.engines.fdiv_lines` with one binary per line allowing its output (at most M used);
   the secant MIP's dual bound bounds the M-output optimum, the tangent MIP's kernel is the design,
   the grid is refined at the ratios used. Agrees with method 2 on 40 cases N ≤ 8, M ≤ 3 (tests).

4. *Otherwise: a certified bracket.* The greedy merge of the auto optimum's columns
   (:func:`mechdesign.engines.sublinear.rays_to_kernel`), improved by successive linearisation
   (:func:`linearisation_ascent`): at K, g_y = ∇μ(K(:,y)) gives the linear minorant
   L(K') = Σ_y g_y·K'(:,y) with L(K) = U(K) (Euler's identity for positively homogeneous μ,
   and L ≤ U by convexity); the LP max L over 𝒦_M gives a vertex K' with U(K') ≥ U(K).
   Kernels are accepted only when U (recomputed) improves, so this is a heuristic that never
   loses. It also starts from :data:`ASCENT_STARTS` random vertices of 𝒦_M. The bound is the
   auto optimum's certified bound; status ``suboptimal`` when the gap exceeds the tolerance.
   Measured at N = 6, M = 3, ε = 1 (six MI/KL cases; exact values by enumeration, 6–10 s):
   greedy alone reached the optimum in 3, the ascent in 5; one MI case stays at 0.1362 vs the
   optimum 0.1418 (auto bound 0.1427), found only after ~400 random starts. Each design took
   ≤ 0.25 s.

**Limits.** This module is reached from :func:`mechdesign.engines.sublinear.design_sublinear` after the
auto design, so a spec whose auto design is refused (mutual information over point/hull/box/l1
prior sets past the listed-ray threshold) is refused too; Bayes vulnerability's auto design is the
LP :func:`mechdesign.engines.sublinear.design_bayes_lp` at any N, so method 1 runs at any N (tested at N = 30
against the closed form (1 + Ξ)/N). Method 2's value is exact up to cdd's floating point (the bound
adds a 1e-9 relative slack); method 3 is a heuristic with the auto bound, which can be loose.

Whatever the method, the kernel leaves through :func:`mechdesign.design.certify_design`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from mechdesign.engines.output_generation import solve_kernel_lp_compiled
from mechdesign.objectives.compile import add_pml_kernel, add_pml_kernel_with_layout
from mechdesign.privacy.extremes import checked_vertices, cone_inequalities
from mechdesign.lp.incumbent import design_problem
from mechdesign.lp.program import LPBuilder
from mechdesign.lp.solve import Status, solve_lp
from mechdesign.spec.models import Spec
from mechdesign.objectives.rays import column_utility, compact_columns, normalise_rows

__all__ = [
    "FixedDesign",
    "FixedHooks",
    "design_fixed_outputs",
    "bayes_mip",
    "enumerate_vertices",
    "enumeration_applies",
    "ListingError",
    "linearisation_ascent",
    "ENUM_MAX_DIM",
    "ENUM_MAX_ROWS",
    "MIP_TIME_LIMIT",
]

ENUM_MAX_DIM = 8
"""Largest N·(M − 1) for vertex enumeration of 𝒦_M (module docstring: measured ≤ 0.5 s)."""
ENUM_MAX_ROWS = 100
"""Largest number of rows of :func:`cone_inequalities` (N + N·vertices of 𝒫) for enumeration."""
MIP_TIME_LIMIT = 30.0
"""Seconds for the Bayes vulnerability MIP when solver.time_limit is unset."""
ASCENT_ROUNDS = 20
"""Largest number of linearisation LPs from one start."""
ASCENT_STARTS = 20
"""Random vertices of 𝒦_M (LPs with random objectives) the ascent also starts from."""
VALUE_SLACK = 1e-9
"""Relative slack added to an enumerated maximum used as an upper bound (cdd works in floats)."""


@dataclass
class FixedDesign:
    """A kernel with M columns, its utility before certification, and an upper bound on max over 𝒦_M."""

    kernel: np.ndarray
    value: float
    bound: float | None
    method: str
    exact: bool


@dataclass(frozen=True)
class FixedHooks:
    """An objective's own methods for a fixed output size, tried before / after vertex enumeration.
    Each is called as hook(spec, m, greedy, greedy_value, mu_fn, cap, auto_bound) and returns a
    :class:`FixedDesign` or None (then the next method is tried). ``cap`` clips a bound to the
    auto optimum's bound."""

    before_enumeration: Callable | None = None
    after_enumeration: Callable | None = None


def _utility(mu_fn, K: np.ndarray) -> float:
    return float(mu_fn(np.asarray(K, float).T).sum())


def columns_as_rays(K: np.ndarray) -> np.ndarray:
    """The columns of K scaled to max entry 1 (zero columns stay zero), one row per output."""
    cols = np.asarray(K, float).T.copy()
    top = cols.max(axis=1, keepdims=True)
    return np.divide(cols, top, out=np.zeros_like(cols), where=top > 0)


# ------------------------------------------------------------------ Bayes vulnerability: MIP
def _objective_prior(spec: Spec) -> np.ndarray:
    prior = spec.objective.prior
    if isinstance(prior, str):
        return np.full(spec.n, 1.0 / spec.n)
    return np.array([float(p) for p in prior])


def bayes_mip(spec: Spec, m: int, time_limit: float | None = None):
    """max V(K) over 𝒦_M as a MIP (module docstring, method 1), for 1 ≤ M ≤ N.

    Returns (K or None, value of the MIP incumbent or None, upper bound or None, LPSolution).
    """
    n = spec.n
    if not 1 <= m <= n:
        raise ValueError("bayes_mip needs 1 <= M <= N")
    P = _objective_prior(spec)
    b = LPBuilder()
    K = add_pml_kernel(b, spec, n)  # column y guesses symbol y
    s = b.variables("s", (n,), lower=0.0, upper=1.0, integer=True)  # column y may be nonzero
    t = b.blocks["t"]  # t_y ≥ max_x K(x,y)
    b.rows(np.stack([t, s], -1), np.array([1.0, -1.0]), -np.inf, 0.0)  # t_y ≤ s_y
    b.rows(s[None, :], np.ones((1, n)), -np.inf, float(m))  # at most M outputs used
    lp = b.build((np.diag(K), P), sense=-1)
    options = spec.solver
    limit = time_limit if time_limit is not None else (options.time_limit or MIP_TIME_LIMIT)
    with design_problem(lp):  # the MIP is the M-output design: its incumbent and dual bound serve Ctrl-C
        sol = solve_lp(lp, options, time_limit=limit)
    kernel = None if sol.x is None else normalise_rows(sol.x[K])
    if kernel is not None:
        kernel = normalise_rows(compact_columns(kernel, m))
    return kernel, sol.objective, sol.mip_dual_bound, sol


# ------------------------------------------------------------------ tiny N·M: vertex enumeration
def _cone_rows(spec: Spec) -> np.ndarray:
    return np.unique(np.round(cone_inequalities(spec.prior_set, spec.n, spec.epsilon.value), 15), axis=0)


def enumeration_applies(spec: Spec, m: int) -> bool:
    """True when 𝒦_M is small enough to list its vertices (thresholds in the module docstring)."""
    if m < 2 or spec.n * (m - 1) > ENUM_MAX_DIM:
        return False
    try:
        return len(_cone_rows(spec)) <= ENUM_MAX_ROWS
    except Exception:  # e.g. cdd missing or too many prior vertices: not tiny
        return False


class ListingError(RuntimeError):
    """cdd's floating-point listing of the vertices of 𝒦_M failed or did not pass :func:`mechdesign.privacy.extremes.listing_is_complete`."""


def enumerate_vertices(spec: Spec, m: int) -> np.ndarray:
    """The vertices of 𝒦_M as an array of shape (V, N, M), by cdd (floating point), checked
    (:func:`mechdesign.privacy.extremes.checked_vertices`: cdd on the rows and on the rows scaled to unit ∞-norm,
    a listing kept only when it passes :func:`~mechdesign.privacy.extremes.listing_is_complete`); when no listing
    passes, :class:`ListingError`."""
    from mechdesign.privacy.extremes import _require_cdd

    cdd = _require_cdd()
    n = spec.n
    G = _cone_rows(spec)
    mat = cdd.matrix_from_array(np.hstack([np.zeros((len(G), 1)), G]).tolist(), rep_type=cdd.RepType.INEQUALITY)
    cdd.matrix_canonicalize(mat)
    G = np.array(mat.array, float)[:, 1:]
    if m == 1:
        return np.ones((1, n, 1))
    d = n * (m - 1)
    h = len(G)
    rows = np.zeros(((m) * h, d + 1))
    for y in range(m - 1):  # G K(:,y) ≥ 0
        rows[y * h : (y + 1) * h, 1 + y * n : 1 + (y + 1) * n] = G
    last = rows[(m - 1) * h :]  # G (1 − Σ_{y<M} K(:,y)) ≥ 0
    last[:, 0] = G.sum(axis=1)
    for y in range(m - 1):
        last[:, 1 + y * n : 1 + (y + 1) * n] = -G
    V = checked_vertices(rows)
    if V is None:
        raise ListingError(
            f"cdd's floating-point listing of the {n}-by-{m} kernels' vertices failed its check (N(M-1) = {d})"
        )
    first = np.transpose(V.reshape(-1, m - 1, n), (0, 2, 1))  # (V, N, M − 1)
    K = np.concatenate([first, 1.0 - first.sum(axis=2, keepdims=True)], axis=2)
    return np.clip(K, 0.0, 1.0)


def best_vertex(spec: Spec, m: int, mu_fn) -> tuple[np.ndarray, float]:
    """The vertex of 𝒦_M with the largest U, and U there."""
    Ks = enumerate_vertices(spec, m)
    values = mu_fn(np.transpose(Ks, (0, 2, 1)).reshape(-1, spec.n)).reshape(len(Ks), m).sum(axis=1)
    i = int(np.argmax(values))
    return Ks[i], float(values[i])


# ------------------------------------------------------------------ heuristic: linearisation
def _gradients(mu_fn, cols: np.ndarray, h: float = 1e-7) -> np.ndarray:
    """Forward-difference gradients of μ at each row of ``cols`` (stays inside k ≥ 0)."""
    r, n = cols.shape
    base = mu_fn(cols)
    bumped = np.repeat(cols, n, axis=0) + h * np.tile(np.eye(n), (r, 1))
    grad = (mu_fn(bumped).reshape(r, n) - base[:, None]) / h
    return np.where(np.isfinite(grad), grad, 0.0)


def linearisation_ascent(
    spec: Spec, K: np.ndarray, mu_fn, deadline: float, starts: int = 0
) -> tuple[np.ndarray, float]:
    """Successive linearisation from K and from ``starts`` random vertices of 𝒦_M (module
    docstring, method 3); returns the best kernel met, never worse than K."""
    m = K.shape[1]
    b = LPBuilder()
    Kidx, layout = add_pml_kernel_with_layout(b, spec, m)
    options = spec.solver.model_copy(update={"time_limit": None})
    best, best_val = _ascend(spec, b, Kidx, options, K, mu_fn, deadline, layout)
    rng = np.random.default_rng(0)
    for _ in range(starts):
        if time.perf_counter() > deadline:
            break
        sol = solve_kernel_lp_compiled(
            b.build((Kidx, rng.normal(size=(spec.n, m))), sense=-1),
            options,
            time_limit=max(deadline - time.perf_counter(), 1e-3),
            layout=layout,
        )
        if sol.x is None or sol.status is not Status.OPTIMAL:
            continue
        cand, val = _ascend(spec, b, Kidx, options, normalise_rows(sol.x[Kidx]), mu_fn, deadline, layout)
        if val > best_val:
            best, best_val = cand, val
    return best, best_val


def _ascend(spec, b, Kidx, options, K, mu_fn, deadline, layout=None):
    best, best_val = K, _utility(mu_fn, K)
    for _ in range(ASCENT_ROUNDS):
        if time.perf_counter() > deadline:
            break
        grad = _gradients(mu_fn, best.T)  # (M, N)
        lp = b.build((Kidx, grad.T), sense=-1)
        sol = solve_kernel_lp_compiled(lp, options, time_limit=max(deadline - time.perf_counter(), 1e-3), layout=layout)
        if sol.x is None or sol.status is not Status.OPTIMAL:
            break
        cand = normalise_rows(sol.x[Kidx])
        val = _utility(mu_fn, cand)
        if not val > best_val + 1e-12 * max(1.0, abs(best_val)):
            break
        best, best_val = cand, val
    return best, best_val


# ------------------------------------------------------------------ entry point
def design_fixed_outputs(spec: Spec, rd, m: int, greedy: np.ndarray, hooks: FixedHooks | None = None) -> FixedDesign:
    """The best kernel with M columns that the affordable method finds (module docstring).

    ``rd`` is the auto design (:class:`mechdesign.engines.sublinear.RayDesign`, whose ``bound`` is valid
    for every M) and ``greedy`` its greedy merge to M columns. The returned bound is an upper
    bound on max U over 𝒦_M (None only when the auto design has none).
    """

    hooks = hooks or FixedHooks()
    mu_fn = column_utility(spec)
    n = spec.n
    auto_bound = rd.bound
    cap = lambda v: v if auto_bound is None else min(v, auto_bound)
    greedy_val = _utility(mu_fn, greedy)

    if m == 1:  # 𝒦_1 = {1}
        K = np.ones((n, 1))
        v = _utility(mu_fn, K)
        return FixedDesign(K, v, v, "M = 1: the only kernel is the all-ones column", True)

    found = hooks.before_enumeration and hooks.before_enumeration(spec, m, greedy, greedy_val, mu_fn, cap, auto_bound)
    if found is not None:
        return found

    if enumeration_applies(spec, m):
        try:
            K, v = best_vertex(spec, m, mu_fn)
        except Exception:  # cdd's numerical trouble (ListingError among them): fall through to the bracket
            K = None
        if K is not None and np.isfinite(v):
            if v < greedy_val:  # cannot happen in exact arithmetic; keep the better kernel
                K, v = greedy, greedy_val
            bound = v + VALUE_SLACK * max(1.0, abs(v))
            if auto_bound is not None and auto_bound < v:
                # the auto design's bound sits below a value this enumeration achieves: it is off (float ray
                # enumeration next to 1e-9 prior masses), so only the enumeration's own bound is reported
                return FixedDesign(
                    K,
                    v,
                    bound,
                    f"vertex enumeration of the M-output kernels (N(M-1) = "
                    f"{n * (m - 1)} <= {ENUM_MAX_DIM}; the auto bound was below it and is dropped)",
                    True,
                )
            return FixedDesign(
                K,
                v,
                cap(bound),
                f"vertex enumeration of the M-output kernels (N(M-1) = {n * (m - 1)} <= {ENUM_MAX_DIM})",
                True,
            )

    found = hooks.after_enumeration and hooks.after_enumeration(spec, m, greedy, greedy_val, mu_fn, cap, auto_bound)
    if found is not None:
        return found

    budget = spec.solver.time_limit or 10.0
    K, v = linearisation_ascent(spec, greedy, mu_fn, time.perf_counter() + budget, starts=ASCENT_STARTS)
    return FixedDesign(
        K,
        v,
        auto_bound,
        "greedy merge of the auto optimum + successive linearisation (heuristic; bound of the auto optimum)",
        False,
    )


def _timings() -> None:  # pragma: no cover - the measurements quoted in the module docstring
    from mechdesign.spec.models import spec_from_dict

    rng = np.random.default_rng(0)
    for n, m in [(8, 4), (12, 6), (20, 10), (30, 15), (50, 5), (50, 25), (100, 10), (100, 50)]:
        P = rng.dirichlet(np.ones(n)).round(6)
        P[-1] = 1 - P[:-1].sum()
        Q = rng.dirichlet(np.ones(n)).round(6)
        Q[-1] = 1 - Q[:-1].sum()
        for ps in (
            {"kind": "min_mass", "c": 0.5 / n},
            {"kind": "simplex"},
            {"kind": "point", "prior": Q.tolist()},
            {"kind": "hull", "priors": [Q.tolist(), [1 / n] * n]},
        ):
            spec = spec_from_dict(
                {
                    "alphabet": n,
                    "epsilon": 1.0,
                    "prior_set": ps,
                    "objective": {"kind": "bayes_vulnerability", "prior": P.tolist()},
                }
            )
            t = time.perf_counter()
            K, value, bound, sol = bayes_mip(spec, m)
            print(
                f"N={n} M={m} {ps['kind']}: {sol.status.value} value={value} bound={bound} "
                f"{time.perf_counter() - t:.2f} s ({sol.message})",
                flush=True,
            )


if __name__ == "__main__":  # pragma: no cover
    _timings()
