"""The interface every prior set implements, and the LP pieces they share.

Everything (ε,𝒫)-PML needs from a prior set 𝒫 is the map k ↦ min_{P∈𝒫} P·k, the smallest probability
of an output an adversary can believe in. For fixed output y the PML denominator Σ_x P(x) K_x(y) is
linear in P, so

    K is (ε,𝒫)-PML  ⇔  max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y)   for every y.

A :class:`PriorSetRules` supplies that map twice — as LP rows (``lp_rows``, lifted, O(N) nonzeros per
column) and exactly in rationals for the certificate (``min_expectation``) — plus what other stages ask
of a prior set: its vertices, symmetry, the equivalent Q_X(c) when there is one, and the extreme rays of
the cone of private columns when their form is known. One module per kind implements it;
:mod:`mechdesign.privacy.registry` maps ``kind`` to the module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any, ClassVar, Sequence

import numpy as np

from mechdesign.lp.program import LPBuilder

__all__ = ["PriorSetRules", "Terms", "column_rows", "dual_multipliers"]

# A batch of affine expressions: a list of (variable index array, coefficient array) terms that
# broadcast to the batch shape. k is (N, J): one column of N entries per batch item j.
Terms = list[tuple[np.ndarray, np.ndarray]]


class PriorSetRules(ABC):
    """One kind of prior set, bound to a validated spec model and the alphabet size N."""

    kind: ClassVar[str]

    def __init__(self, model: Any, n: int) -> None:
        self.model = model
        self.n = n

    # ------------------------------------------------------------------ LP side
    @abstractmethod
    def lp_rows(
        self, b: LPBuilder, k_idx: np.ndarray, k_coef: float, w: Terms, tag: str, k_range: tuple[float, float]
    ) -> dict:
        """Add rows enforcing  w_j ≤ min_{P∈𝒫} Σ_x P(x) k_coef·x[k_idx[x, j]]  for every column j
        (see :func:`mechdesign.privacy.priors.constrain_min_expectation`). Returns where the rows went
        for solvers that exploit the structure, or ``{}``."""

    # ------------------------------------------------------------------ exact side
    @abstractmethod
    def min_expectation(self, k: list) -> tuple[Fraction, list[Fraction]]:
        """min_{P∈𝒫} Σ_x P(x) k[x] exactly (Fractions or ints), and a prior attaining it."""

    def column_minima(self, nums: np.ndarray) -> list[tuple[Fraction, list[Fraction] | None]]:
        """min_P P·K(:,y) for every column of an integer (object) matrix, exactly."""
        return [self.min_expectation([int(v) for v in nums[:, y]]) for y in range(nums.shape[1])]

    # ------------------------------------------------------------------ structure
    def vertices(self) -> list[list[Fraction]] | None:
        """The vertices of 𝒫 when they are cheap to list, else None (then ``polytope_rows``)."""
        return None

    def polytope_rows(self) -> list[list[float]]:
        """Inequalities b + a·P ≥ 0 (cdd's H-form rows [b, a...]) that cut 𝒫 out of the simplex, for
        listing its vertices with cdd when ``vertices`` is None."""
        raise NotImplementedError(f"{self.kind}: vertices are listed directly")

    @abstractmethod
    def contains_uniform(self) -> bool:
        """True when the uniform prior is in 𝒫 (False also when unknown without an LP)."""

    @abstractmethod
    def is_permutation_invariant(self) -> bool:
        """True when π(𝒫) = 𝒫 for every permutation π of the symbols."""

    def equivalent_c(self) -> Fraction | None:
        """c with 𝒫 = Q_X(c) (Dobrushin paper, Definition 1), when there is one."""
        return None

    def point_prior(self) -> list[Fraction] | None:
        """The prior P when 𝒫 = {P} (ε-PML for one prior), else None."""
        return None

    # ------------------------------------------------------------------ Dobrushin pair bounds
    def pair_mass_shifts(self) -> tuple[list[Fraction], dict[tuple[int, int], Fraction]]:
        """Mass κ_ab that 𝒫 can move from symbol b to symbol a, with witnesses P, Q ∈ 𝒫, Q − P = κ_ab(e_a − e_b)
        (the Dobrushin pair bounds of :mod:`mechdesign.engines.dobrushin_shift`, which prove each kind's
        formula): per-symbol values k with κ_ab = min(k_a, k_b), and the pairs (a < b) where κ_ab is smaller.
        The default κ = 0 (P = Q) holds for every prior set."""
        return [Fraction(0)] * self.n, {}

    def shift_witness_priors(self) -> list[list[Fraction]] | None:
        """Priors of 𝒫 whose differences are tried as approximate mass shifts (a hull's vertices), or None."""
        return None

    def heaviest_masses(self) -> np.ndarray:
        """Per symbol, max_{P∈𝒫} P(x) or a float proxy for it (only orders the Dobrushin pair LPs)."""
        return np.zeros(self.n)

    def ray_family_c(self) -> float | None:
        """c when the extreme rays of C(ε,𝒫) fall in the two-level families of Q_X(c) used by column
        generation (:mod:`mechdesign.privacy.ray_families`); None otherwise."""
        return None

    # ------------------------------------------------------------------ extreme rays
    def structured_ray_count(self) -> int | None:
        """An upper bound on the number of extreme rays listed from their known form, or None when
        they are not known in closed form (then cdd enumerates them)."""
        return None

    def structured_rays(self, epsilon: float) -> np.ndarray:
        """The extreme rays of C(ε,𝒫) from their known form (rows, not normalised)."""
        raise ValueError(f"no structured rays for prior set kind {self.kind!r}")


def column_rows(b: LPBuilder, w: Terms, J: int, blocks: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
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


def dual_multipliers(b: LPBuilder, n: int, k_idx: np.ndarray, k_coef: float, tag: str, k_range: tuple[float, float]):
    """The multipliers shared by the dualised prior sets (box, ℓ1-ball): μ_j, α_xj, β_xj ≥ 0 with
    μ_j + α_xj − β_xj − k_xj ≤ 0 (the dual constraint for P_x ≥ 0). An optimal dual has μ in the
    range of k and α, β at most its span, so they are bounded by twice that (any feasible multipliers
    give a valid lower bound, so bounds only make the constraint stricter). Returns (μ, α, β, span)."""
    J = k_idx.shape[1]
    lo, hi = k_range
    span = hi - lo
    mu = b.variables(f"mu_{tag}", (J,), lower=lo - span, upper=hi + span)
    alpha = b.variables(f"alpha_{tag}", (n, J), lower=0.0, upper=2 * span)
    beta = b.variables(f"beta_{tag}", (n, J), lower=0.0, upper=2 * span)
    b.rows(
        np.stack([np.broadcast_to(mu, (n, J)), alpha, beta, k_idx], -1).reshape(n * J, 4),
        np.array([1.0, 1.0, -1.0, -k_coef]),
        -np.inf,
        0.0,
    )
    return mu, alpha, beta, span


def masses_up(values) -> np.ndarray:
    """Prior masses (Fractions) as floats rounded *up*.

    The LP row  w_j ≤ Σ_x v̂_x k_xj  then is a relaxation of the true row (v̂ ≥ v, k ≥ 0), so the LP's
    bound is a bound for the problem as written, and Σ_x v̂_x ≥ 1 keeps the constant
    column k = q·1, w_j = e^−ε q, exactly feasible. Rounded to nearest, Σ v̂ could be 1 − 1e−16, and at
    ε = 0 the row t ≤ (Σ v̂) t forced t = 0: the LP was infeasible in exact arithmetic (item 2, seen for
    masses of 1e−9). The exact certificate is against the true masses either way.
    """
    from mechdesign.lp.rounding import float_up

    return np.array([float_up(Fraction(v)) for v in values])


def dot(prior: Sequence[Fraction], k: Sequence) -> Fraction:
    return sum((p * v for p, v in zip(prior, k)), Fraction(0))
