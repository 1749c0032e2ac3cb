"""Compile a spec into linear programs over the kernel K (N × M).

Every LP here shares the (ε,𝒫)-PML feasible set, written in lifted form
(docs/explanation/mathematics.md, section 'Linear constraints': Lemma 4 of the Dobrushin paper generalised to any prior set):

    K_xy ∈ [0, 1],   Σ_y K_xy = 1                         (row-stochastic)
    t_y ≥ K_xy                      for all x, y           (t_y ≥ column maximum)
    e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y)  for all y            (see priors.constrain_min_expectation)

The PML row is scaled by e^{−ε} (not multiplied by e^ε) so that coefficients
stay ≤ 1 for every ε; for ε ≳ 20 HiGHS drops coefficients below 1e−9, which
only relaxes the LP: the exact certificate then catches and repairs it.
Each objective that is linear in K builds its LP on :func:`add_pml_kernel` in its own module
(:mod:`~mechdesign.objectives.expected_loss`, :mod:`~mechdesign.objectives.dobrushin`,
:mod:`~mechdesign.objectives.bayes_vulnerability`); the engines of :mod:`mechdesign.engines` solve them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass, field

import numpy as np

from mechdesign.cone.layout import KernelLayout
from mechdesign.lp.program import LinearProgram, LPBuilder
from mechdesign.privacy.constraints import add_guarantee_rows
from mechdesign.privacy.priors import constrain_min_expectation, rules
from mechdesign.spec.models import Spec

__all__ = [
    "CompiledProblem",
    "add_pml_kernel",
    "add_pml_kernel_with_layout",
    "exp_minus_epsilon_down",
    "loss_matrix",
    "loss_rows",
    "objective_prior",
    "exact_objective_prior",
]


@dataclass(frozen=True)
class CompiledProblem:
    """One or more LPs whose best solution is the design.

    ``lps`` are solved independently (Dobrushin: one LP per pair of symbols);
    ``kernel`` holds the variable indices of K in each LP (the same layout).
    """

    lps: list[LinearProgram]
    kernel: np.ndarray
    labels: list[str] = field(default_factory=list)
    note: str = ""
    bound_lps: list[LinearProgram] | None = None
    """The LPs of the problem as the user stated it, when ``lps`` tightens a right-hand side to leave
    room for the solver's tolerance: the dual bound is computed on these (the same multipliers stay
    dual feasible, only the right-hand sides differ), so it bounds the stated problem."""
    layout: KernelLayout | None = None
    """Where the (ε,Q_X(c))-PML rows of ``lps`` sit (:func:`add_pml_kernel_with_layout`), for the engines that
    solve the kernel LP without its whole matrix; None for other prior sets."""


def add_pml_kernel(b: LPBuilder, spec: Spec, m: int) -> np.ndarray:
    """:func:`add_pml_kernel_with_layout` without the layout: K's indices."""
    return add_pml_kernel_with_layout(b, spec, m)[0]


def add_pml_kernel_with_layout(b: LPBuilder, spec: Spec, m: int) -> tuple[np.ndarray, KernelLayout | None]:
    """Add the kernel K (N × M) and its (ε,𝒫)-PML constraints; return K's indices.

        Σ_y K_xy = 1,  0 ≤ K_xy ≤ 1,
        K_xy − t_y ≤ 0,
        e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y).

    O(NM) rows with O(1) nonzeros each for the min_mass and simplex sets
    (plus V·M rows of N nonzeros for a hull of V priors).

    With a ``privacy`` list, the rows of every other constraint follow (privacy/constraints.py): another
    prior set's rows on the same t, or metric rows along the metric's graph (privacy/metric.py).

    Returns K's indices and, for min_mass and simplex, the layout of these rows
    (:class:`~mechdesign.cone.layout.KernelLayout`), with which output generation solves the LP when nothing
    else is added to it (:mod:`mechdesign.engines.output_generation`); None for other prior sets.
    """
    n = spec.n
    K = b.variables("K", (n, m), lower=0.0, upper=1.0)
    t = b.variables("t", (m,), lower=0.0, upper=1.0)
    rows_sum = b.rows(K, np.ones((n, m)), 1.0, 1.0)
    rows_t = b.rows(np.stack([K, np.broadcast_to(t, (n, m))], -1).reshape(-1, 2), np.array([1.0, -1.0]), -np.inf, 0.0)
    scale = exp_minus_epsilon_down(spec)
    # with metric constraints only, the primary (eps*max d)-LDP is implied by them: no rows (spec/models.py)
    where = (
        {}
        if spec.primary_is_implied
        else constrain_min_expectation(b, spec.prior_set, n, K, 1.0, [(t, scale)], tag="pml", k_range=(0.0, 1.0))
    )
    layout = None
    if "low" in where:  # simplex or Q_X(c): output generation knows their rows
        c = float(rules(spec.prior_set, n).equivalent_c())
        layout = KernelLayout(
            K=K,
            t=t,
            rows_sum=rows_sum,
            rows_t=rows_t.reshape(n, m),
            rows_low=where["low"],
            c=c,
            scale=scale,
            u=where.get("u"),
            rows_pml=where.get("column"),
        )
    # the other constraints of privacy; added after the layout, whose row count then no longer
    # matches the LP, so output generation (which prices only the layout's rows) is not used
    for i, guarantee in enumerate(spec.extra_guarantees):
        add_guarantee_rows(b, guarantee, K, t, tag=f"privacy{i}")
    return K, layout


# ----------------------------------------------------------------- losses
def loss_matrix(spec: Spec) -> np.ndarray:
    """The N × M loss matrix L of an expected-loss objective (indices x, y from 0)."""
    return loss_rows(spec, 0, spec.n)


def loss_rows(spec: Spec, start: int, stop: int) -> np.ndarray:
    """Rows start, ..., stop − 1 of :func:`loss_matrix` (a named loss: by its formula, without the other rows)."""
    obj = spec.objective
    if isinstance(obj.loss, list):
        return np.asarray(obj.loss[start:stop], dtype=float)
    x = np.arange(start, stop)[:, None]
    y = np.arange(spec.m)[None, :]
    if obj.loss == "hamming":
        return (x != y).astype(float)
    if obj.loss == "absolute":
        return np.abs(x - y).astype(float)
    return ((x - y) ** 2).astype(float)


def exact_objective_prior(spec: Spec) -> list[Fraction] | str | None:
    """The prior an expected loss is averaged under, exactly: the spec's masses, ``"uniform"``, the point prior of
    𝒫 for worst_case over a single prior, or None for the worst prior of 𝒫."""
    obj = spec.objective
    if obj.prior == "worst_case":
        point = rules(spec.prior_set, spec.n).point_prior()
        return None if point is None else [Fraction(p) for p in point]
    return obj.prior


def objective_prior(spec: Spec) -> np.ndarray | None:
    """The prior an expected loss is averaged under (:func:`exact_objective_prior` in doubles), or None for worst
    case over 𝒫."""
    prior = exact_objective_prior(spec)
    if prior is None:
        return None
    if prior == "uniform":
        return np.full(spec.n, 1.0 / spec.n)
    return np.array([float(p) for p in prior])


def exp_minus_epsilon_down(spec: Spec) -> float:
    """A float ≤ e^−ε for the ε as written: 1/U rounded down, U ≥ e^ε a rigorous rational bound.

    With it the PML rows e^−ε t_y ≤ min_P P·K(:,y) are a relaxation of the true ones, so the LP's
    bound bounds the problem as written: math.exp(−1e−9) can exceed e^−ε by an ulp,
    which at ε = 1e−9 is 1e−7 of the privacy budget 1 − e^−ε, and the bound fell below Ξ(ε,c).
    The exact certificate repairs the tiny excess this allows. Past ε = 50 the float is used as is
    (rounded down by an ulp): there the budget is the whole of [0, 1].
    """
    from fractions import Fraction

    from mechdesign.lp.rounding import float_down
    from mechdesign.spec import expr

    eps = spec.epsilon.value
    if eps <= 50:  # the text was validated and its e^ε is finite here: the bound exists
        return float_down(1 / Fraction(expr.exp_upper_bound(spec.epsilon.text)))
    return math.nextafter(math.exp(-eps), 0.0)
