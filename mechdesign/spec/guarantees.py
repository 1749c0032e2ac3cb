"""The privacy guarantee as a list of constraints (issue 16, items 1 and 2).

A spec may state its guarantee as ``privacy:``, a list of constraints that must all hold::

    privacy:
      - {epsilon: 1.0, prior_set: {kind: min_mass, c: 0.02}}   # (ε,𝒫)-PML
      - {epsilon: 3.0, prior_set: {kind: simplex}}             # ε-LDP as a backstop
      - {epsilon: 0.5, metric: {kind: absolute}}               # ε·d-privacy, d(x,x') = |x − x'|

The single ``epsilon`` + ``prior_set`` form is shorthand for a list of one (ε,𝒫)-PML entry.

A metric constraint is *not* a prior set: metric (d-)privacy (Chatzikokolakis et al., "Broadening the scope
of differential privacy using metrics", 2013) asks K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) for every x, x', y, which
is not a sup over priors of PML. It is modelled as its own constraint kind, compiled and checked by
:mod:`mechdesign.privacy.metric`.

Distances are exact: ``absolute`` is |x − x'| on symbol indices, ``discrete`` is 1[x ≠ x'] (ε-LDP), ``matrix``
an N × N matrix of exact rationals (``0.1`` means 1/10), and ``grid`` the Euclidean distance between the
points of a rows × cols grid with the given spacing (symbol i is the point (i // cols, i mod cols)):
spacing·√(Δr² + Δc²), irrational in general, so every use of it in a certificate goes through the rigorous
interval bounds of :mod:`mechdesign.spec.expr`.

This module is imported by :mod:`mechdesign.spec.models` once the shared field types are defined.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator

from mechdesign.spec.models import EpsilonField, PriorSet, Rational, _Model

__all__ = ["AbsoluteMetric", "DiscreteMetric", "MatrixMetric", "GridMetric", "Metric",
           "PriorSetGuarantee", "MetricGuarantee", "Guarantee", "metric_diameter_text"]


class AbsoluteMetric(_Model):
    """d(x, x') = |x − x'| on symbol indices (a path graph with unit edges)."""

    kind: Literal["absolute"]


class DiscreteMetric(_Model):
    """d(x, x') = 1 for x ≠ x': metric privacy with this d is ε-LDP."""

    kind: Literal["discrete"]


class MatrixMetric(_Model):
    """d given as an N × N matrix of exact rationals: d(x, x) = 0, d(x, x') ≥ 0 (symmetry is not required:
    the constraint K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) is read with the ordered pair)."""

    kind: Literal["matrix"]
    d: list[list[Rational]] = Field(min_length=2)

    @field_validator("d")
    @classmethod
    def _square_zero_diagonal(cls, d: list[list[Fraction]]) -> list[list[Fraction]]:
        n = len(d)
        for i, row in enumerate(d):
            if len(row) != n:
                raise ValueError(f"must be square: row {i} has {len(row)} entries, expected {n}")
            if row[i] != 0:
                raise ValueError(f"d[{i}][{i}] must be 0, found {float(row[i]):g}")
            for j, v in enumerate(row):
                if v < 0:
                    raise ValueError(f"d[{i}][{j}] must be >= 0, found {float(v):g}")
        return d


class GridMetric(_Model):
    """Euclidean distance between points of a rows × cols grid (geo-indistinguishability):
    symbol i is the point (i // cols, i mod cols) · spacing."""

    kind: Literal["grid"]
    shape: tuple[Annotated[int, Field(ge=1)], Annotated[int, Field(ge=1)]]
    """[rows, cols]; rows · cols must equal N."""
    spacing: Rational = Fraction(1)
    """The distance between neighbouring grid points (> 0)."""

    @field_validator("spacing")
    @classmethod
    def _positive(cls, s: Fraction) -> Fraction:
        if s <= 0:
            raise ValueError(f"must be > 0, found {float(s):g}")
        return s


Metric = Annotated[Union[AbsoluteMetric, DiscreteMetric, MatrixMetric, GridMetric], Field(discriminator="kind")]


class PriorSetGuarantee(_Model):
    """(ε,𝒫)-PML: sup_{P∈𝒫} max_y ℓ(X→y) ≤ ε."""

    epsilon: EpsilonField
    prior_set: PriorSet


class MetricGuarantee(_Model):
    """ε·d-privacy: K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y) for all x, x', y."""

    epsilon: EpsilonField
    metric: Metric


def _guarantee_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "metric_guarantee" if "metric" in value else "prior_set_guarantee"
    return "metric_guarantee" if isinstance(value, MetricGuarantee) else "prior_set_guarantee"


Guarantee = Annotated[Union[Annotated[PriorSetGuarantee, Tag("prior_set_guarantee")], Annotated[MetricGuarantee, Tag("metric_guarantee")]],
                      Discriminator(_guarantee_tag)]


def metric_diameter_text(metric, n: int) -> str:
    """max_{x,x'} d(x, x') as an exact expression (a rational, or spacing·sqrt(k) for a grid)."""
    if isinstance(metric, AbsoluteMetric):
        return str(n - 1)
    if isinstance(metric, DiscreteMetric):
        return "1"
    if isinstance(metric, MatrixMetric):
        return str(max(max(row) for row in metric.d))
    rows, cols = metric.shape
    return f"({metric.spacing})*sqrt({(rows - 1) ** 2 + (cols - 1) ** 2})"
