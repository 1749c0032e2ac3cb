"""Exact certificates: every kernel that leaves mechdesign passes through here.

1. :func:`to_grid` rounds the solver's floats to an exact rational kernel on
   the grid 2^−52 (clipping negatives, rows summing to exactly 1). Such numbers
   are all exact doubles, so the float kernel a user receives *is* the exact
   kernel that was checked.
2. :func:`check_pml` verifies (ε,𝒫)-PML exactly: for every output y,
       max_x K_x(y) ≤ E · min_{P∈𝒫} P·K(:,y),
   where E ≤ e^ε is a rational lower bound (interval arithmetic on the ε
   expression), so passing with E implies passing with e^ε.
3. :func:`repair` mixes a failing kernel with the constant kernel whose rows
   are the mean row q (zero leakage): K' = (1−w)K + w·1qᵀ. For one column the
   smallest weight is w = v / (v + q_y(E − 1)) with v = max_x K_x(y) − E·min_P P·K(:,y);
   the weight is raised a little, re-gridded and re-checked until it passes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .priors import min_expectation
from .spec import PriorSet

__all__ = ["ExactKernel", "PMLCheck", "to_grid", "check_pml", "repair", "GRID_BITS"]

GRID_BITS = 52
GRID = 1 << GRID_BITS


@dataclass(frozen=True)
class ExactKernel:
    """K = numerators / denominator, with numerators an (N, M) object array of Python ints."""

    numerators: np.ndarray
    denominator: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.numerators.shape

    def to_float(self) -> np.ndarray:
        if self.denominator == GRID:
            return self.numerators.astype(np.float64) / float(GRID)  # exact: entries are on the 2^-52 grid
        return np.array([[float(Fraction(int(v), self.denominator)) for v in row] for row in self.numerators])

    def fractions(self) -> list[list[Fraction]]:
        return [[Fraction(int(v), self.denominator) for v in row] for row in self.numerators]

    def strings(self) -> list[list[str]]:
        return [[str(q) for q in row] for row in self.fractions()]

    def is_stochastic(self) -> bool:
        return bool(np.all(self.numerators >= 0)) and all(int(s) == self.denominator for s in self.numerators.sum(axis=1))

    @classmethod
    def from_fractions(cls, rows) -> "ExactKernel":
        rows = [[Fraction(v) for v in row] for row in rows]
        den = 1
        for row in rows:
            for v in row:
                den = den * v.denominator // math.gcd(den, v.denominator)
        nums = np.array([[int(v * den) for v in row] for row in rows], dtype=object)
        return cls(nums, den)


def to_grid(K: np.ndarray) -> ExactKernel:
    """Round a float kernel to the 2^−52 grid with rows summing exactly to 1.

    Entries are clipped to [0, 1] and rounded to the nearest multiple of 2^−52;
    each row's largest entry then absorbs the rounding remainder.
    """
    K = np.clip(np.nan_to_num(np.asarray(K, float), nan=0.0), 0.0, 1.0)
    nums = np.rint(K * GRID).astype(np.int64)
    rows = nums.sum(axis=1, dtype=object)
    big = np.argmax(nums, axis=1)
    out = nums.astype(object)
    for x in range(out.shape[0]):
        out[x, big[x]] += GRID - int(rows[x])
        if out[x, big[x]] < 0:  # only for a row far from stochastic: renormalise instead
            row = K[x] / K[x].sum() if K[x].sum() > 0 else np.full(K.shape[1], 1.0 / K.shape[1])
            return to_grid(np.vstack([K[:x], row[None, :], K[x + 1:]]))
    return ExactKernel(out, GRID)


@dataclass(frozen=True)
class PMLCheck:
    """Result of the exact check. ``ratios[y]`` = max_x K_x(y) / min_P P·K(:,y) (None for a zero column)."""

    feasible: bool
    stochastic: bool
    bound: Fraction
    """The rational E ≤ e^ε checked against."""
    ratios: list[Fraction | None]
    worst_output: int | None
    worst_prior: list[Fraction] | None
    worst_ratio: Fraction | float | None

    @property
    def leakage(self) -> float:
        """sup_{P∈𝒫} max_y ℓ(X→y) in nats (0 for an empty kernel, inf if a ratio is unbounded)."""
        if self.worst_ratio is None:
            return 0.0
        if self.worst_ratio == math.inf:
            return math.inf
        q = Fraction(self.worst_ratio)
        return math.log(q.numerator) - math.log(q.denominator)


def _column_minima(prior_set: PriorSet, nums: np.ndarray) -> list[tuple[Fraction, list[Fraction] | None]]:
    """min_P P·K(:,y) (in units of the common denominator) for every column, exactly."""
    n, m = nums.shape
    kind = prior_set.kind
    if kind in ("simplex", "min_mass"):
        c = prior_set.c if kind == "min_mass" else Fraction(0)
        mins = nums.min(axis=0)
        sums = nums.sum(axis=0)
        return [(c * int(sums[y]) + (1 - n * c) * int(mins[y]), None) for y in range(m)]
    if kind == "point":
        prior = list(prior_set.prior)
        den = 1
        for p in prior:
            den = den * p.denominator // math.gcd(den, p.denominator)
        pint = np.array([int(p * den) for p in prior], dtype=object)
        dots = pint.dot(nums)
        return [(Fraction(int(d), den), prior) for d in dots]
    return [min_expectation(prior_set, n, [int(v) for v in nums[:, y]]) for y in range(m)]


def check_pml(kernel: ExactKernel, prior_set: PriorSet, bound: Fraction) -> PMLCheck:
    """Check exactly that ``kernel`` is row-stochastic and (ε,𝒫)-PML with e^ε replaced by ``bound``."""
    nums = kernel.numerators
    n, m = nums.shape
    stochastic = kernel.is_stochastic()
    maxima = nums.max(axis=0)
    minima = _column_minima(prior_set, nums)
    ratios: list[Fraction | None] = []
    worst = (None, None, None)
    feasible = stochastic
    for y in range(m):
        mx = int(maxima[y])
        if mx == 0:
            ratios.append(None)
            continue
        low, prior = minima[y]
        if low <= 0:
            ratio: Fraction | float = math.inf
            feasible = False
        else:
            ratio = Fraction(mx) / Fraction(low)
            if ratio > bound:
                feasible = False
        ratios.append(ratio if ratio != math.inf else None)
        if worst[2] is None or ratio > worst[2]:
            worst = (y, prior, ratio)
    y, prior, ratio = worst
    if y is not None and prior is None:
        prior = min_expectation(prior_set, n, [int(v) for v in nums[:, y]])[1]
    return PMLCheck(feasible=feasible, stochastic=stochastic, bound=bound, ratios=ratios,
                    worst_output=y, worst_prior=prior, worst_ratio=ratio)


def _mix(kernel: ExactKernel, q: list[Fraction], w: Fraction) -> np.ndarray:
    """(1−w)K + w·1qᵀ in floats (the result is re-gridded and checked exactly)."""
    wf = float(w)
    return (1 - wf) * kernel.to_float() + wf * np.array([float(v) for v in q])[None, :]


NOISE_LEVEL = 1e-9
"""Columns whose largest entry is below this (solver tolerance) are treated as rounding noise."""


def merge_noise_columns(kernel: ExactKernel, check: PMLCheck, bound: Fraction) -> ExactKernel:
    """Move violating columns whose entries are all below NOISE_LEVEL into the heaviest column.

    A solver leaves outputs with probabilities ~1e−14 that are pure noise; their ratio
    max/min can be huge, and mixing would then need a large weight. Merging an output
    into another is post-processing: the receiving column changes by at most the noise,
    which the mixing step then absorbs with a weight of the same order. Integer
    arithmetic on the grid keeps every row summing to exactly 1.
    """
    nums = kernel.numerators.copy()
    limit = int(NOISE_LEVEL * kernel.denominator)
    maxima = nums.max(axis=0)
    noisy = [y for y, r in enumerate(check.ratios)
             if 0 < int(maxima[y]) <= limit and (r is None or r > bound)]
    if not noisy:
        return kernel
    heaviest = int(np.argmax(nums.sum(axis=0)))
    for y in noisy:
        if y == heaviest:
            continue
        nums[:, heaviest] = nums[:, heaviest] + nums[:, y]
        nums[:, y] = 0
    return ExactKernel(nums, kernel.denominator)


def repair(kernel: ExactKernel, prior_set: PriorSet, bound: Fraction, max_rounds: int = 60) -> tuple[ExactKernel, Fraction, PMLCheck]:
    """Mix ``kernel`` with its mean-row constant kernel by the smallest weight that passes.

    Returns (repaired kernel, weight w, its check). w = 0 when the kernel already passes;
    w = 1 (the constant kernel, zero leakage) is the last resort and always passes.
    """
    check = check_pml(kernel, prior_set, bound)
    if check.feasible:
        return kernel, Fraction(0), check
    kernel = merge_noise_columns(kernel, check, bound)
    n, m = kernel.shape
    sums = kernel.numerators.sum(axis=0)
    q = [Fraction(int(s), n * kernel.denominator) for s in sums]
    minima = _column_minima(prior_set, kernel.numerators)
    maxima = kernel.numerators.max(axis=0)
    need = Fraction(0)
    for y in range(m):
        if maxima[y] == 0:
            continue
        v = Fraction(int(maxima[y]), kernel.denominator) - bound * Fraction(minima[y][0]) / kernel.denominator
        if v <= 0:
            continue
        if bound == 1:
            need = Fraction(1)
            break
        need = max(need, v / (v + q[y] * (bound - 1)))
    extra = Fraction(1, 1 << 50)
    for _ in range(max_rounds):
        w = min(Fraction(1), need * (1 + extra) + extra)
        if w >= 1:
            break
        candidate = to_grid(_mix(kernel, q, w))
        check = check_pml(candidate, prior_set, bound)
        if check.feasible:
            return candidate, w, check
        extra *= 4
    constant = to_grid(np.array([[float(v) for v in q]] * n))
    constant = ExactKernel(np.array([list(constant.numerators[0])] * n, dtype=object), constant.denominator)
    return constant, Fraction(1), check_pml(constant, prior_set, bound)
