"""Prior sets 𝒫: linear constraints for the LP and exact worst-case priors.

Everything (ε,𝒫)-PML needs from a prior set is the map k ↦ min_{P∈𝒫} P·k
(the smallest output probability an adversary can believe in). For fixed
output y the PML denominator Σ_x P(x) K_x(y) is linear in P, so

    K is (ε,𝒫)-PML  ⇔  max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y)   for every y.

Each kind below supplies that map twice:

* ``constrain_min_expectation`` adds LP rows that force w_j ≤ min_P P·k_j for
  a batch of columns j, in *lifted* form (O(N) nonzeros per column), and
* ``min_expectation`` evaluates min_P P·k exactly in rational arithmetic for
  the certificate, and returns the minimising prior.

One registry maps ``kind`` to its implementation; adding a prior set means
adding one class here.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.spec.models import Box, Hull, L1Ball, MinMass, Point, PriorSet

__all__ = ["constrain_min_expectation", "min_expectation", "is_permutation_invariant", "vertices",
           "contains_uniform"]

# A batch of affine expressions: a list of (variable index array, coefficient array) terms that
# broadcast to the batch shape. k is (N, J): one column of N entries per batch item j.
Terms = list[tuple[np.ndarray, np.ndarray]]


def _column_rows(b: LPBuilder, w: Terms, J: int, blocks: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Add one row per column j:  Σ_w coef·x[idx]_j + Σ_blocks Σ_r coef[r, j]·x[idx[r, j]] ≤ 0.

    Each block is an (idx, coef) pair broadcasting to (R, J). Returns the J row indices.
    """
    cols = [np.broadcast_to(idx, (J,))[None, :] for idx, _ in w]
    coefs = [np.broadcast_to(np.asarray(c, float), (J,))[None, :] for _, c in w]
    for idx, coef in blocks:
        idx = np.atleast_2d(idx)
        idx, coef = np.broadcast_arrays(idx, np.asarray(coef, float))
        cols.append(np.broadcast_to(idx, (idx.shape[0], J)))
        coefs.append(np.broadcast_to(coef, (idx.shape[0], J)))
    return b.rows(np.vstack(cols).T, np.vstack(coefs).T, -np.inf, 0.0)


# ----------------------------------------------------------------- LP side
def constrain_min_expectation(b: LPBuilder, prior_set: PriorSet, n: int, k_idx: np.ndarray,
                              k_coef: float, w: Terms, tag: str, k_range: tuple[float, float] = (0.0, 1.0)) -> dict:
    """Add rows enforcing  w_j ≤ min_{P∈𝒫} Σ_x P(x) k_coef·x[k_idx[x, j]]  for every column j.

    ``k_idx`` is an (N, J) array of variable indices, ``w`` a list of terms
    broadcasting to (J,), and ``k_range`` an interval that holds every
    k_coef·x[k_idx] (it bounds the auxiliary variables, so that every variable
    of the LP is bounded and :func:`mechdesign.lp.program.dual_bound` is finite;
    bounds on auxiliaries only tighten the constraint, so they never admit a
    non-private kernel). The rows per kind (lifted, no N² terms):

    * point P:        w_j − Σ_x P(x) k_xj ≤ 0
    * hull {v_1..v_V}: w_j − Σ_x v_i(x) k_xj ≤ 0                       (V rows per column)
    * simplex:        w_j − k_xj ≤ 0                                  (N rows per column)
    * min_mass Q_X(c): u_j ≤ k_xj  (N rows),  w_j − c Σ_x k_xj − (1−Nc) u_j ≤ 0
      (Lemma 4 of the Dobrushin paper, vertices v_x = c·1 + (1−Nc)e_x)
    * box, l1_ball:   LP duality, see :func:`_dual_rows`.

    Returns where the rows went, for solvers that exploit the structure
    (:mod:`mechdesign.lp.colgen`): for simplex ``{"low": (N, J) row ids}``, for
    min_mass ``{"u": u's indices, "low": (N, J) ids of u_j − k_xj ≤ 0,
    "column": (J,) ids}``; ``{}`` for the other kinds.
    """
    J = k_idx.shape[1]
    kind = prior_set.kind
    if kind == "point":
        prior = np.array([float(p) for p in prior_set.prior])[:, None]
        _column_rows(b, w, J, [(k_idx, -k_coef * prior)])
    elif kind == "hull":
        for v in prior_set.priors:
            _column_rows(b, w, J, [(k_idx, -k_coef * np.array([float(p) for p in v])[:, None])])
    elif kind == "simplex" or (kind == "min_mass" and prior_set.c == 0):
        # w_j − k_xj ≤ 0 for every (x, j): N rows per column
        w_cols = [np.broadcast_to(idx, (n, J)) for idx, _ in w]
        w_coefs = [np.broadcast_to(np.asarray(c, float), (n, J)) for _, c in w]
        cols = np.stack(w_cols + [k_idx], axis=-1).reshape(n * J, -1)
        coefs = np.stack(w_coefs + [np.full((n, J), -k_coef)], axis=-1).reshape(n * J, -1)
        return {"low": b.rows(cols, coefs, -np.inf, 0.0).reshape(n, J)}
    elif kind == "min_mass":
        c = float(prior_set.c)
        u = b.variables(f"u_{tag}", (J,), lower=k_range[0], upper=k_range[1])
        # u_j − k_coef·k_xj ≤ 0
        low = b.rows(np.stack([np.broadcast_to(u, (n, J)), k_idx], -1).reshape(n * J, 2),
                     np.array([1.0, -k_coef]), -np.inf, 0.0)
        column = _column_rows(b, w, J, [(k_idx, -c * k_coef), (u[None, :], -(1 - n * c))])
        return {"u": u, "low": low.reshape(n, J), "column": column}
    elif kind in ("box", "l1_ball"):
        _dual_rows(b, prior_set, n, k_idx, k_coef, w, tag, k_range)
    else:  # pragma: no cover - the spec admits no other kind
        raise ValueError(f"unknown prior set kind {kind!r}")
    return {}


def _dual_rows(b: LPBuilder, ps, n: int, k_idx: np.ndarray, k_coef: float, w: Terms, tag: str,
               k_range: tuple[float, float]) -> None:
    """Box and ℓ1-ball by LP duality (DESIGN.md §2, "dualise").

    Box {l ≤ P ≤ u, 1·P = 1}: min P·k = max μ + l·α − u·β over α, β ≥ 0 with
    μ + α_x − β_x ≤ k_x. So w_j ≤ min P·k_j is enforced by
        μ_j + α_xj − β_xj − k_xj ≤ 0,   w_j − μ_j − l·α_j + u·β_j ≤ 0.

    ℓ1-ball ∩ simplex {P ≥ 0, 1·P = 1, ‖P − c‖₁ ≤ r}: with s ≥ |P − c|,
    min P·k = max μ + c·(α − β) − rρ over α, β, ρ ≥ 0 with
    μ + α_x − β_x ≤ k_x (for P_x ≥ 0) and α_x + β_x ≤ ρ (for s_x free).

    An optimal dual has μ in the range of k and α, β, ρ at most its span, so
    the multipliers are bounded by twice that (any feasible multipliers give a
    valid lower bound, so bounds can only make the constraint stricter).
    """
    J = k_idx.shape[1]
    lo, hi = k_range
    span = hi - lo
    mu = b.variables(f"mu_{tag}", (J,), lower=lo - span, upper=hi + span)
    alpha = b.variables(f"alpha_{tag}", (n, J), lower=0.0, upper=2 * span)
    beta = b.variables(f"beta_{tag}", (n, J), lower=0.0, upper=2 * span)
    b.rows(np.stack([np.broadcast_to(mu, (n, J)), alpha, beta, k_idx], -1).reshape(n * J, 4),
           np.array([1.0, 1.0, -1.0, -k_coef]), -np.inf, 0.0)
    if ps.kind == "box":
        lo = np.array([float(v) for v in ps.lower])[:, None]
        up = np.array([float(v) for v in ps.upper])[:, None]
        _column_rows(b, w, J, [(mu[None, :], -1.0), (alpha, -lo), (beta, up)])
    else:
        center = np.array([float(v) for v in ps.center])[:, None]
        rho = b.variables(f"rho_{tag}", (J,), lower=0.0, upper=4 * span)
        b.rows(np.stack([alpha, beta, np.broadcast_to(rho, (n, J))], -1).reshape(n * J, 3),
               np.array([1.0, 1.0, -1.0]), -np.inf, 0.0)
        _column_rows(b, w, J, [(mu[None, :], -1.0), (alpha, -center), (beta, center),
                               (rho[None, :], float(ps.radius))])


# ----------------------------------------------------------- exact side
def min_expectation(prior_set: PriorSet, n: int, column: Sequence[Fraction]) -> tuple[Fraction, list[Fraction]]:
    """min_{P∈𝒫} Σ_x P(x) column[x], exactly, and a prior attaining it.

    Entries may be Fractions or Python ints (a common denominator factored out).
    """
    return _EXACT[prior_set.kind](prior_set, n, list(column))


def _exact_point(ps: Point, n, k):
    return sum((p * v for p, v in zip(ps.prior, k)), Fraction(0)), list(ps.prior)


def _exact_hull(ps: Hull, n, k):
    best = None
    for v in ps.priors:
        val = sum((p * x for p, x in zip(v, k)), Fraction(0))
        if best is None or val < best[0]:
            best = (val, list(v))
    return best


def _exact_simplex(ps, n, k):
    j = min(range(n), key=lambda i: k[i])
    return Fraction(k[j]), [Fraction(int(i == j)) for i in range(n)]


def _exact_min_mass(ps: MinMass, n, k):
    c = ps.c
    j = min(range(n), key=lambda i: k[i])
    prior = [c + (1 - n * c) * (i == j) for i in range(n)]
    return c * sum(k) + (1 - n * c) * k[j], prior


def _exact_box(ps: Box, n, k):
    """Greedy: start at the lower bounds, pour the remaining mass into the smallest k first."""
    prior = list(ps.lower)
    left = 1 - sum(prior)
    for i in sorted(range(n), key=lambda i: k[i]):
        take = min(left, ps.upper[i] - ps.lower[i])
        prior[i] += take
        left -= take
        if left == 0:
            break
    return sum((p * v for p, v in zip(prior, k)), Fraction(0)), prior


def _exact_l1_ball(ps: L1Ball, n, k):
    """Greedy: move up to r/2 of mass from the largest-k symbols to the smallest-k symbol.

    Each unit of mass moved from x to x* changes P·k by k_x* − k_x ≤ 0 and costs 2
    units of ℓ1 distance, so moving from the largest k first is optimal.
    """
    prior = list(ps.center)
    j = min(range(n), key=lambda i: k[i])
    budget = ps.radius / 2
    for i in sorted(range(n), key=lambda i: k[i], reverse=True):
        if budget <= 0 or k[i] <= k[j]:
            break
        move = min(budget, prior[i])
        prior[i] -= move
        prior[j] += move
        budget -= move
    return sum((p * v for p, v in zip(prior, k)), Fraction(0)), prior


_EXACT: dict[str, Callable] = {
    "point": _exact_point, "hull": _exact_hull, "simplex": _exact_simplex,
    "min_mass": _exact_min_mass, "box": _exact_box, "l1_ball": _exact_l1_ball,
}


# ------------------------------------------------------------ structure
def vertices(prior_set: PriorSet, n: int) -> list[list[Fraction]] | None:
    """The vertices of 𝒫 when they are cheap to list (point, hull, simplex, min_mass), else None."""
    kind = prior_set.kind
    if kind == "point":
        return [list(prior_set.prior)]
    if kind == "hull":
        return [list(v) for v in prior_set.priors]
    if kind == "simplex":
        return [[Fraction(int(i == j)) for i in range(n)] for j in range(n)]
    if kind == "min_mass":
        c = prior_set.c
        return [[c + (1 - n * c) * (i == j) for i in range(n)] for j in range(n)]
    return None


def contains_uniform(prior_set: PriorSet, n: int) -> bool:
    u = [Fraction(1, n)] * n
    kind = prior_set.kind
    if kind in ("simplex", "min_mass"):
        return True
    if kind == "point":
        return list(prior_set.prior) == u
    if kind == "box":
        return all(lo <= u[0] <= hi for lo, hi in zip(prior_set.lower, prior_set.upper))
    if kind == "l1_ball":
        return sum(abs(a - b) for a, b in zip(prior_set.center, u)) <= prior_set.radius
    return False  # hull: membership needs an LP; not needed by callers


def is_permutation_invariant(prior_set: PriorSet, n: int) -> bool:
    """True when π(𝒫) = 𝒫 for every permutation π of the symbols.

    The symmetric group is generated by the transposition (0 1) and the cycle
    (0 1 … N−1), so invariance under those two suffices.
    """
    kind = prior_set.kind
    if kind in ("simplex", "min_mass"):
        return True
    if kind == "point":
        return len(set(prior_set.prior)) == 1
    if kind == "box":
        return len(set(prior_set.lower)) == 1 and len(set(prior_set.upper)) == 1
    if kind == "l1_ball":
        return len(set(prior_set.center)) == 1
    if kind == "hull":
        pts = {tuple(v) for v in prior_set.priors}
        swap = lambda v: (v[1], v[0]) + v[2:]
        cycle = lambda v: v[1:] + v[:1]
        return all(swap(v) in pts and cycle(v) in pts for v in pts)
    return False
