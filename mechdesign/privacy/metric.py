"""Metric (d-)privacy: LP rows along the edges of the metric's graph and an exact check of every pair.

ε·d-privacy (Chatzikokolakis, Andrés, Bordenabe, Palamidessi, "Broadening the scope of differential
privacy using metrics", PETS 2013; geo-indistinguishability on a grid: Andrés et al., CCS 2013) asks

    K_x(y) ≤ e^{ε d(x,x')} K_{x'}(y)        for all x, x', y.

**Reduction to edges** (as in libqif's ``d_privacy``). Let E be the ordered pairs (x, x'), x ≠ x', for which
no third symbol z has d(x,z) > 0, d(z,x') > 0 and d(x,z) + d(z,x') ≤ d(x,x'). Claim: the constraints of
the pairs in E imply those of all pairs. Proof, by strong induction on the value d(x,x') (finitely many
values): if (x,x') ∉ E pick such a z; both d(x,z) and d(z,x') are positive with sum ≤ d(x,x'), so each is
< d(x,x'), and by induction K_x(y) ≤ e^{ε d(x,z)} K_z(y) ≤ e^{ε (d(x,z) + d(z,x'))} K_{x'}(y) ≤ e^{ε d(x,x')} K_{x'}(y). ∎
When d is the shortest-path metric of a weighted graph G, every pair that is not an edge of G has an
intermediate z on a shortest path, so E ⊆ edges of G: the LP has 2|E|·M rows, following the graph, not N²M.

* ``absolute`` (|x − x'|, the path 0–1–…–(N−1)): E = the N − 1 neighbouring pairs (both directions).
* ``grid`` (Euclidean, spacing s): a pair p, q of grid points is in E iff gcd(|Δr|, |Δc|) = 1. If the gcd
  g > 1, z = p + (q − p)/g is a grid point on the segment, so d(p,z) + d(z,q) = d(p,q) exactly; if g = 1
  no grid point lies strictly inside the segment, and equality in the Euclidean triangle inequality holds
  only on the segment, so no z qualifies. (About 6/π² of all pairs: the Euclidean metric is not a graph
  metric of a sparse graph.)
* ``matrix``: E computed exactly from the rational entries (O(N³) integer comparisons).
* ``discrete`` (ε-LDP): no pair is implied by others (1 + 1 > 1); the constraint is written in the lifted
  LDP form instead, t_y ≥ K_x(y), e^{−ε} t_y ≤ K_{x'}(y): O(NM) rows (privacy/simplex.py).

Each row is scaled by e^{−ε d}: e^{−ε d} K_x(y) − K_{x'}(y) ≤ 0, so coefficients stay ≤ 1.

**Exact check.** Every ordered pair (not only E) and every y, in rationals: K_x(y) ≤ L(x,x') K_{x'}(y) with
L(x,x') ≤ e^{ε d(x,x')} a rigorous rational lower bound from :func:`mechdesign.spec.expr.exp_lower_bound`
on the expression (ε)·(d), d written exactly (a rational, or s·sqrt(k) on a grid, bounded by interval
arithmetic). A pair whose exact ratio max_y K_x(y)/K_{x'}(y) is ≤ 1 passes without a bound (e^{ε d} ≥ 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.spec import expr
from mechdesign.spec.models import (
    AbsoluteMetric,
    DiscreteMetric,
    GridMetric,
    MatrixMetric,
    MetricGuarantee,
    rational_expression_text,
)

__all__ = ["MetricDistances", "metric_distances", "graph_edges", "add_metric_rows", "MetricCheck", "check_metric"]


@dataclass(frozen=True)
class MetricDistances:
    """d as exact data: d(x, x') = scale(x,x') · sqrt(radicand(x,x')) with ``scale`` a Fraction and
    ``radicand`` a positive integer (1 unless the metric is a grid)."""

    scale: list[list[Fraction]]
    radicand: list[list[int]]

    def value(self, x: int, z: int) -> float:
        """d(x, z) as a double (inf beyond the double range, e.g. a distance written 1e400)."""
        try:
            s = float(self.scale[x][z])
        except OverflowError:
            return math.inf
        return s * math.sqrt(self.radicand[x][z])

    def text(self, x: int, z: int) -> str:
        s, k = rational_expression_text(self.scale[x][z]), self.radicand[x][z]
        return f"({s})" if k == 1 else f"({s})*sqrt({k})"

    def floats(self) -> np.ndarray:
        n = len(self.scale)
        return np.array([[self.value(x, z) for z in range(n)] for x in range(n)])

    def times(self, eps: float, pairs: list[tuple[int, int]] | None = None) -> np.ndarray:
        """ε·d(x, z) in doubles with 0·∞ = 0 (ε = 0 allows no change at any distance) and no warnings: N × N, or
        one per pair of ``pairs``."""
        D = self.floats() if pairs is None else np.array([self.value(x, z) for x, z in pairs])
        with np.errstate(over="ignore", invalid="ignore"):
            out = eps * D
        out[(D == 0) | (eps == 0)] = 0.0
        return out


def metric_distances(metric, n: int) -> MetricDistances:
    """The exact N × N distances of a metric model."""
    one = [[1] * n for _ in range(n)]
    if isinstance(metric, AbsoluteMetric):
        return MetricDistances([[Fraction(abs(x - z)) for z in range(n)] for x in range(n)], one)
    if isinstance(metric, DiscreteMetric):
        return MetricDistances([[Fraction(int(x != z)) for z in range(n)] for x in range(n)], one)
    if isinstance(metric, MatrixMetric):
        return MetricDistances([[Fraction(v) for v in row] for row in metric.d], one)
    _, cols = metric.shape
    scale, radicand = [], []
    for x in range(n):
        srow, krow = [], []
        for z in range(n):
            dr, dc = x // cols - z // cols, x % cols - z % cols
            k = dr * dr + dc * dc
            root = math.isqrt(k)
            if root * root == k:  # a rational distance: keep it rational
                srow.append(metric.spacing * root)
                krow.append(1)
            else:
                srow.append(Fraction(metric.spacing))
                krow.append(k)
        scale.append(srow)
        radicand.append(krow)
    return MetricDistances(scale, radicand)


def graph_edges(metric, n: int) -> list[tuple[int, int]]:
    """The ordered pairs E whose constraints imply all the others (module docstring, with proof)."""
    if isinstance(metric, AbsoluteMetric):
        return [(i, i + 1) for i in range(n - 1)] + [(i + 1, i) for i in range(n - 1)]
    if isinstance(metric, GridMetric):
        cols = metric.shape[1]
        return [
            (p, q)
            for p in range(n)
            for q in range(n)
            if p != q and math.gcd(abs(p // cols - q // cols), abs(p % cols - q % cols)) == 1
        ]
    d = metric_distances(metric, n).scale
    den = 1
    for row in d:
        for v in row:
            den = den * v.denominator // math.gcd(den, v.denominator)
    D = np.array([[int(v * den) for v in row] for row in d], dtype=object)
    if D.max() < (1 << 60):
        D = D.astype(np.int64)
    positive = D > 0
    edges = []
    for x in range(n):
        # via[z, x'] = d(x,z) + d(z,x') where both legs are positive, else "too long"
        via = np.where(positive[x][:, None] & positive, D[x][:, None] + D, -1)
        via[x, :] = -1
        for xp in range(n):
            if xp == x:
                continue
            col = via[:, xp].copy()
            col[xp] = -1
            ok = col >= 0
            if not np.any(ok & (col <= D[x, xp])):
                edges.append((x, xp))
    return edges


def add_metric_rows(b: LPBuilder, K: np.ndarray, guarantee: MetricGuarantee) -> np.ndarray:
    """Rows e^{−ε d(x,x')} K_x(y) − K_{x'}(y) ≤ 0 for every (x, x') ∈ E and every y; return the row ids.

    (The discrete metric is compiled by the caller in the lifted LDP form instead; see the module docstring.)"""
    n, m = K.shape
    edges = graph_edges(guarantee.metric, n)
    dist = metric_distances(guarantee.metric, n)
    eps = guarantee.epsilon.value
    if not edges:
        return np.zeros(0, dtype=np.int64)
    src = np.array([e[0] for e in edges])
    dst = np.array([e[1] for e in edges])
    scale = np.exp(-dist.times(eps, edges))  # the edges only: |E| is 2(N − 1) for |x − y|
    cols = np.stack([K[src], K[dst]], axis=-1).reshape(-1, 2)  # (|E|·M, 2)
    coefs = np.stack([np.repeat(scale, m), -np.ones(len(edges) * m)], axis=-1)
    return b.rows(cols, coefs, -np.inf, 0.0)


@dataclass(frozen=True)
class MetricCheck:
    feasible: bool
    """Every pair and output satisfied K_x(y) ≤ L(x,x') K_{x'}(y) exactly, L ≤ e^{ε d(x,x')}."""
    leakage: float
    """The smallest ε' with K ε'·d-private: max over pairs with d > 0 of log(max_y K_x(y)/K_{x'}(y)) / d(x,x')
    (inf when a pair at distance 0 differs, or K_{x'}(y) = 0 < K_x(y)); floats, for the report."""
    worst_pair: tuple[int, int] | None
    """The pair attaining ``leakage``."""
    violation: tuple[int, int, int] | None
    """A failing (x, x', y), when not feasible."""


@lru_cache(maxsize=100_000)
def _exp_lower(eps_text: str, d_text: str, cap: Fraction) -> Fraction:
    """A rational ≤ e^{ε d}, saturated at ``cap``: the kernel's entries are integers ≤ cap − 1 over a common
    denominator, so no finite ratio K_x(y)/K_x'(y) exceeds cap − 1 and any bound ≥ cap decides as ∞ would."""
    return expr.exp_lower_bound(f"({eps_text})*{d_text}", cap=cap)


def check_metric(numerators: np.ndarray, guarantee: MetricGuarantee) -> MetricCheck:
    """Exact check of ε·d-privacy of the kernel numerators/denominator (the denominator cancels) over every
    ordered pair and output, against rational lower bounds of e^{ε d} (module docstring)."""
    nums = np.asarray(numerators, dtype=object)
    n, m = nums.shape
    cap = Fraction(int(nums.max(initial=0)) + 1)
    dist = metric_distances(guarantee.metric, n)
    eps_text = guarantee.epsilon.text
    feasible, violation = True, None
    F = np.array([[float(int(v)) for v in row] for row in nums])
    D = dist.floats()
    leak, worst = 0.0, None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a distance of 5e-324: leakage inf
        for x in range(n):
            # float leakage for the report: max_y log(K_x(y)/K_z(y)) / d(x,z), over y with K_x(y) > 0
            logs = np.where(F[x][None, :] > 0, np.log(F[x][None, :]) - np.log(F), -np.inf).max(axis=1)
            per = np.where(logs <= 0, 0.0, np.where(D[x] > 0, logs / D[x], np.inf))
            per[x] = 0.0
            z = int(np.argmax(per))
            if per[z] > leak:
                leak, worst = float(per[z]), (x, z)
    for x in range(n):
        row = nums[x]
        for z in range(n):
            if z == x:
                continue
            other = nums[z]
            above = row > other
            if not above.any():  # ratio <= 1 <= e^{eps d}
                continue
            if dist.scale[x][z] == 0:
                ok, y_bad = False, int(np.argmax(above))
            else:
                bound = _exp_lower(eps_text, dist.text(x, z), cap)
                bad = row * bound.denominator > other * bound.numerator
                ok = not bad.any()
                y_bad = None if ok else int(np.argmax(bad))
            if not ok and feasible:
                feasible, violation = False, (x, z, y_bad)
    return MetricCheck(feasible=feasible, leakage=leak, worst_pair=worst, violation=violation)
