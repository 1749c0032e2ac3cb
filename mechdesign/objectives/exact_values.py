"""Objective values of an exact kernel, correctly rounded, without a pass over its N × M entries.

The certify stage reports the value of the kernel it emits. For two structured objectives that value is a function
of O(N + M) exact integers the stage already holds, so it is computed exactly (Python integers) and rounded once
(``int / int`` in Python is correctly rounded), instead of a float pass over the whole kernel whose products and
pairwise sums each round:

* **Hamming expected loss** ``Σ_x P(x) Σ_y K_xy 1[x ≠ y]``: on a row-stochastic kernel each row's loss is
  ``1 − K_xx`` (``x < M``) or ``1`` (a row past the last output), so the value needs the diagonal only:
  ``Σ_x P(x) (D − A_xx) / D`` for K = A / D. Under the worst prior of 𝒫 it is ``max_{P∈𝒫} Σ_x P(x) r_x``
  with those exact row losses (:func:`mechdesign.privacy.priors.min_expectation` of ``−r``, exact).
* **Bayes vulnerability under the uniform prior** ``Σ_y max_x K_xy / N``: the column maxima ``a_y`` of the
  numerators, which the exact check folded while the kernel was made
  (:class:`mechdesign.certify.fused.ColumnAggregator`): ``Σ_y a_y / (N D)``.

The no-privacy bounds of the same objectives (the value of the best kernel without privacy, which the certify stage
compares with the dual bound) are computed and rounded the same way: exact Σ_x P(x) 1[x ≥ M] for the Hamming loss,
1 for the uniform Bayes vulnerability. Rounding to nearest is monotone, so a bound at or below (above) the exact value
of every kernel stays at or below (above) every reported value.

The prior is the spec's exact one (Fractions, ``1/N`` for uniform), not its doubles: the value is the objective of
the problem as written, rounded once. Each function returns None where it does not apply (then the objective's
float :meth:`~mechdesign.objectives.base.ObjectiveRules.value` is used): numerators not in int64, a kernel whose
row sums are not known to be exact, a prior whose common denominator is huge.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mechdesign.certify.exact import ExactKernel
from mechdesign.privacy.priors import min_expectation
from mechdesign.spec.models import PriorSet

__all__ = [
    "PRIOR_DENOMINATOR_BITS",
    "exact_expectation",
    "exact_hamming_loss",
    "exact_hamming_no_privacy_bound",
    "exact_uniform_bayes_vulnerability",
    "prior_integers",
]

PRIOR_DENOMINATOR_BITS = 4096
"""A prior whose masses' common denominator has more bits than this is left to the float value (the integer sum
would cost more than the pass it replaces)."""


def prior_integers(prior: list[Fraction]) -> tuple[list[int], int] | None:
    """(q, L) with P(x) = q_x / L exactly, L the least common denominator; None when L has more than
    :data:`PRIOR_DENOMINATOR_BITS` bits."""
    common = 1
    for d in {p.denominator for p in prior}:
        common = math.lcm(common, d)
        if common.bit_length() > PRIOR_DENOMINATOR_BITS:
            return None
    return [p.numerator * (common // p.denominator) for p in prior], common


def _correctly_rounded(numerator: int, denominator: int) -> float:
    return numerator / denominator  # Python's int true division rounds once, to nearest (ties to even)


def exact_expectation(
    row_values: list[int], scale: int, prior: list[Fraction] | str | None, prior_set: PriorSet | None
) -> float | None:
    """Σ_x P(x) r_x / ``scale`` for the integers ``row_values`` r_x, exactly, correctly rounded; ``prior``: the
    masses P(x) as Fractions, ``"uniform"`` (P(x) = 1/N), or None for the largest expectation over the priors of
    ``prior_set`` (:func:`mechdesign.privacy.priors.min_expectation` of −r, exact). None when the prior's common
    denominator is too large (:func:`prior_integers`)."""
    n = len(row_values)
    if n == 0:
        return None
    if prior is None:
        if prior_set is None:
            return None
        low, _ = min_expectation(prior_set, n, [-r for r in row_values])  # min_P P·(−r) = −max_P P·r, exact
        value = -Fraction(low) / scale
        return _correctly_rounded(value.numerator, value.denominator)
    if isinstance(prior, str):
        if prior != "uniform":
            return None
        return _correctly_rounded(sum(row_values), n * scale)
    if len(prior) != n:
        return None
    scaled = prior_integers(prior)
    if scaled is None:
        return None
    q, common = scaled
    return _correctly_rounded(sum(a * b for a, b in zip(q, row_values)), common * scale)


def exact_hamming_loss(
    kernel: ExactKernel, prior: list[Fraction] | str | None, prior_set: PriorSet | None = None
) -> float | None:
    """Σ_x P(x) Σ_y K_xy 1[x ≠ y] of the row-stochastic exact ``kernel``, correctly rounded, from its diagonal.

    ``prior``: as :func:`exact_expectation` (Fractions, ``"uniform"``, or None for the worst prior of
    ``prior_set``). The caller guarantees that every row of ``kernel`` sums to 1 exactly (the exact check's
    ``stochastic``): a row's loss is then 1 − K_xx, or 1 for a row x ≥ M."""
    ints = kernel.int64()
    if ints is None or ints.ndim != 2:
        return None
    n, m = ints.shape
    den = int(kernel.denominator)
    k = min(n, m)
    diagonal = ints[np.arange(k), np.arange(k)].tolist()
    losses = [den - int(a) for a in diagonal] + [den] * (n - k)  # r_x · D, exact integers
    return exact_expectation(losses, den, prior, prior_set)


def exact_hamming_no_privacy_bound(n: int, m: int, prior: list[Fraction] | str | None, prior_set) -> float | None:
    """Σ_x P(x) min_y 1[x ≠ y] (or its largest value over 𝒫 when ``prior`` is None), correctly rounded: the
    Hamming loss of the best kernel without privacy (row x on output x, the rows x ≥ M lose 1). Rounded like
    :func:`exact_hamming_loss`, so it stays at or below every kernel's reported loss (rounding is monotone)."""
    return exact_expectation([0] * min(n, m) + [1] * max(n - m, 0), 1, prior, prior_set)


def exact_uniform_bayes_vulnerability(kernel: ExactKernel) -> float | None:
    """Σ_y max_x K_xy / N of the exact ``kernel`` (Bayes vulnerability under the uniform prior), correctly
    rounded, from the column maxima its exact check already holds; None when the kernel has none folded (a pass
    would cost what the float value costs)."""
    aggregates = kernel.known_column_aggregates()
    if aggregates is None:
        return None
    maxima = aggregates[0]
    n = kernel.shape[0]
    if n == 0:
        return None
    total = sum(int(a) for a in maxima.tolist())  # Python integers: exact at any M
    return _correctly_rounded(total, n * int(kernel.denominator))
