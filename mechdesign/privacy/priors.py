"""Prior sets 𝒫 as the other stages see them: linear constraints for the LP and exact worst-case priors.

Everything (ε,𝒫)-PML needs from a prior set is the map k ↦ min_{P∈𝒫} P·k (the smallest output
probability an adversary can believe in). For fixed output y the PML denominator Σ_x P(x) K_x(y) is
linear in P, so

    K is (ε,𝒫)-PML  ⇔  max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y)   for every y.

Each kind (one module each: ``simplex``, ``min_mass``, ``point``, ``hull``, ``box``, ``l1_ball``) supplies
that map twice, as lifted LP rows and exactly in rationals; the functions here look the kind up in
:mod:`mechdesign.privacy.registry` and delegate.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.privacy.base import Terms
from mechdesign.privacy.registry import rules
from mechdesign.spec.models import PriorSet

__all__ = [
    "constrain_min_expectation",
    "min_expectation",
    "is_permutation_invariant",
    "vertices",
    "contains_uniform",
    "rules",
]


def constrain_min_expectation(
    b: LPBuilder,
    prior_set: PriorSet,
    n: int,
    k_idx: np.ndarray,
    k_coef: float,
    w: Terms,
    tag: str,
    k_range: tuple[float, float] = (0.0, 1.0),
) -> dict:
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
    * box, l1_ball:   LP duality (modules :mod:`~mechdesign.privacy.box`, :mod:`~mechdesign.privacy.l1_ball`).

    Returns where the rows went, for solvers that exploit the structure
    (:mod:`mechdesign.engines.output_generation`): for simplex ``{"low": (N, J) row ids}``, for
    min_mass ``{"u": u's indices, "low": (N, J) ids of u_j − k_xj ≤ 0,
    "column": (J,) ids}``; ``{}`` for the other kinds.
    """
    return rules(prior_set, n).lp_rows(b, k_idx, k_coef, w, tag, k_range)


def min_expectation(prior_set: PriorSet, n: int, column: Sequence[Fraction]) -> tuple[Fraction, list[Fraction]]:
    """min_{P∈𝒫} Σ_x P(x) column[x], exactly, and a prior attaining it.

    Entries may be Fractions or Python ints (a common denominator factored out).
    """
    return rules(prior_set, n).min_expectation(list(column))


def vertices(prior_set: PriorSet, n: int) -> list[list[Fraction]] | None:
    """The vertices of 𝒫 when they are cheap to list (point, hull, simplex, min_mass), else None."""
    return rules(prior_set, n).vertices()


def contains_uniform(prior_set: PriorSet, n: int) -> bool:
    return rules(prior_set, n).contains_uniform()


def is_permutation_invariant(prior_set: PriorSet, n: int) -> bool:
    """True when π(𝒫) = 𝒫 for every permutation π of the symbols."""
    return rules(prior_set, n).is_permutation_invariant()
