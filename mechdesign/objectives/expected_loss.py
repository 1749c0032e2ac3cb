"""Expected loss: minimise Σ_x P(x) Σ_y L(x,y) K_xy over the (ε,𝒫)-PML kernels, under a given prior or the
worst prior of 𝒫 (an epigraph variable). A kernel LP (:func:`compile_expected_loss`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.lp.rounding import float_down
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.compile import (
    CompiledProblem,
    add_pml_kernel_with_layout,
    exact_objective_prior,
    loss_matrix,
    loss_rows,
    objective_prior,
)
from mechdesign.certify.guarantees import SideConstraintReport
from mechdesign.objectives.vulnerability import add_vulnerability, enforce_cap, gain_and_prior, posterior_vulnerability
from mechdesign.objectives.exact_values import exact_hamming_loss, exact_hamming_no_privacy_bound
from mechdesign.privacy.priors import constrain_min_expectation, min_expectation
from mechdesign.spec.models import Spec

__all__ = [
    "ExpectedLoss",
    "compile_expected_loss",
    "loss_matrix",
    "objective_prior",
    "row_losses",
    "loss_rows",
    "cheapest_row_losses",
]


def compile_expected_loss(spec: Spec) -> CompiledProblem:
    """Minimise expected loss over (ε,𝒫)-PML kernels.

    Under a prior P:
        minimise  Σ_x P(x) Σ_y L(x,y) K_xy   over the PML kernel set.
    Worst case over 𝒫 (epigraph τ, loss per row r_x):
        minimise  τ  s.t.  r_x = Σ_y L(x,y) K_xy,  τ ≥ max_{P∈𝒫} P·r
    where the last line is −τ ≤ min_{P∈𝒫} P·(−r), compiled like a PML column.
    """
    n, m = spec.n, spec.m
    L = loss_matrix(spec)
    b = LPBuilder()
    K, layout = add_pml_kernel_with_layout(b, spec, m)
    prior = objective_prior(spec)
    cap = spec.objective.max_vulnerability
    if cap is not None:  # V_g(K) ≤ b: v_y ≥ Σ_x G(w,x)P(x)K_xy, Σ_y v_y ≤ b (objectives.vulnerability)
        gain, prior_exact = gain_and_prior(spec, cap)
        v = add_vulnerability(b, K, gain, prior_exact)
        b.rows(v[None, :], np.ones((1, len(v))), -np.inf, float_down(Fraction(cap.at_most)))
    if prior is not None:
        lp = b.build((K, prior[:, None] * L), sense=1)
    else:
        lmax = float(L.max(initial=0.0))
        lmin = float(min(L.min(initial=0.0), 0.0))
        r = b.variables("r", (n,), lower=lmin, upper=lmax)
        tau = b.variables("tau", (1,), lower=lmin, upper=lmax)
        b.rows(np.hstack([r[:, None], K]), np.hstack([-np.ones((n, 1)), L]), 0.0, 0.0)
        constrain_min_expectation(
            b, spec.prior_set, n, r[:, None], -1.0, [(tau, -1.0)], tag="risk", k_range=(-lmax, -lmin)
        )
        lp = b.build((tau, np.ones(1)), sense=1)
    return CompiledProblem(lps=[lp], kernel=K, layout=layout)


class ExpectedLoss(ObjectiveRules):
    kind = "expected_loss"
    sense = 1
    outputs_estimate_x = True

    def compile(self) -> CompiledProblem:
        return compile_expected_loss(self.spec)

    def kernel_lp_reason(self):
        return None

    def kernel_cost_reason(self):
        if self.spec.objective.max_vulnerability is not None:
            return "objective.max_vulnerability adds the vulnerability rows"
        if objective_prior(self.spec) is None:
            return "objective.prior is worst_case (the epigraph over the prior set's vertices)"
        return None

    plain_kernel_lp_reason = kernel_cost_reason

    def kernel_cost(self):
        """C = P(x) L(x,y) under the objective's prior."""
        return objective_prior(self.spec)[:, None] * loss_matrix(self.spec)

    def worst_case_loss_reason(self):
        if self.spec.objective.max_vulnerability is not None:
            return "objective.max_vulnerability adds the vulnerability rows"
        if objective_prior(self.spec) is not None:
            return "objective.prior is a given prior, not worst_case"
        return None

    def enforce(self, kernel, private):
        cap = self.spec.objective.max_vulnerability
        if cap is None:
            return kernel, Fraction(0)
        return enforce_cap(
            kernel, self.spec, cap, Fraction(cap.at_most), self.spec.solver.denominator_bits, private=private
        )

    def side_constraints(self, kernel) -> list[SideConstraintReport]:
        """The vulnerability cap V_g(K) ≤ at_most, exactly, when the spec states one."""
        cap = self.spec.objective.max_vulnerability
        if cap is None:
            return []
        gain, prior = gain_and_prior(self.spec, cap)
        value, limit = posterior_vulnerability(kernel, gain, prior), Fraction(cap.at_most)
        return [
            SideConstraintReport(
                field="objective.max_vulnerability",
                constraint=f"posterior {'Bayes' if cap.gain == 'bayes' else 'g-'}vulnerability <= at_most",
                value=value,
                limit=limit,
                feasible=value <= limit,
            )
        ]

    def loss(self) -> np.ndarray:
        """The N × M loss matrix, built once per objective (read-only)."""
        L = self.__dict__.get("_loss")
        if L is None:
            L = loss_matrix(self.spec)
            L.flags.writeable = False
            self._loss = L
        return L

    def _loss_rows(self, start: int, stop: int) -> np.ndarray:
        if isinstance(self.spec.objective.loss, list):
            return self.loss()[start:stop]
        return loss_rows(self.spec, start, stop)

    def unconstrained_bound(self):
        """The loss of the best kernel without privacy (each row on its cheapest output), a lower bound:
        Σ_x P(x) min_y L(x,y) under a prior, max_{P∈𝒫} of it for the worst case. The row losses
        min_y L(x,y) (:func:`cheapest_row_losses`) are those of the 0/1 kernel on each row's cheapest
        output (its row sum of K·L adds zeros to that one entry), so the bound is the same double as
        :meth:`value` of that kernel. The Hamming loss's bound Σ_x P(x) 1[x ≥ M] is exact and rounded once, as
        :meth:`exact_value` rounds the emitted kernel's loss (rounding is monotone: it stays at or below it)."""
        spec = self.spec
        if spec.objective.loss == "hamming":  # exact, rounded as exact_value rounds the kernel's loss
            bound = exact_hamming_no_privacy_bound(spec.n, spec.m, exact_objective_prior(spec), spec.prior_set)
            if bound is not None:
                return bound
        mins = self.loss().min(axis=1) if isinstance(spec.objective.loss, list) else cheapest_row_losses(spec)
        return self._value_of_row_losses(mins)

    def value(self, K):
        return self._value_of_row_losses(row_losses(K, self._loss_rows, self.spec.m))

    def entry_sensitivity(self) -> float:
        """Σ_x P(x) Σ_y |L(x,y)| (the loss is linear in K), or its largest value over 𝒫 for the worst case."""
        n, block = self.spec.n, 1024
        sums = np.concatenate([np.abs(self._loss_rows(i, min(i + block, n))).sum(axis=1) for i in range(0, n, block)])
        return self._value_of_row_losses(sums)

    def exact_value(self, kernel):
        """The Hamming loss from the exact kernel's diagonal, correctly rounded, under the spec's exact prior (or
        the worst prior of 𝒫) (:func:`mechdesign.objectives.exact_values.exact_hamming_loss`); None for the other
        losses (a pass over K·L)."""
        spec = self.spec
        if spec.objective.loss != "hamming" or kernel.shape[1] != spec.m:
            return None
        return exact_hamming_loss(kernel, exact_objective_prior(spec), spec.prior_set)

    def _value_of_row_losses(self, row_loss: np.ndarray) -> float:
        spec = self.spec
        prior = objective_prior(spec)
        if prior is not None:
            return float(prior @ row_loss)
        low, _ = min_expectation(spec.prior_set, spec.n, [-Fraction(float(v)) for v in row_loss])
        return float(-low)


ROW_BLOCK_ENTRIES = 1 << 16
"""Entries of K per block of rows in :func:`row_losses` (a block's product stays in cache)."""


def cheapest_row_losses(spec: Spec) -> np.ndarray:
    """min_y L(x,y) for every row x, as :func:`loss_matrix` ``.min(axis=1)``. A named loss in closed form:
    0 on rows x < M (output y = x), and past the last output y = M − 1 the distance d = x − M + 1:
    1 (Hamming), d (absolute), d² (squared), all integers, hence exact doubles."""
    obj = spec.objective
    if isinstance(obj.loss, list):
        return loss_matrix(spec).min(axis=1)
    d = np.maximum(np.arange(spec.n) - (spec.m - 1), 0)
    if obj.loss == "hamming":
        return (d > 0).astype(float)
    if obj.loss == "absolute":
        return d.astype(float)
    return (d**2).astype(float)


def row_losses(K: np.ndarray, loss_rows_of, m: int) -> np.ndarray:
    """r_x = Σ_y K_xy L(x,y) for every row x, in blocks of rows (``loss_rows_of(start, stop)`` gives the
    rows of L): no N × M temporary and no whole L. Each row is the pairwise sum of the same M products as
    ``(K * L).sum(axis=1)`` computes (a row's sum does not depend on the other rows), hence the same doubles."""
    K = np.asarray(K, float)
    n = K.shape[0]
    if K.ndim != 2 or K.shape[1] != m:
        return (K * loss_rows_of(0, n)).sum(axis=1)  # broadcasting (or its error) as before
    step = max(1, ROW_BLOCK_ENTRIES // max(m, 1))
    out = np.empty(n)
    buf = np.empty((min(step, n), m))
    for a in range(0, n, step):
        b = min(a + step, n)
        np.multiply(K[a:b], loss_rows_of(a, b), out=buf[: b - a]).sum(axis=1, out=out[a:b])
    return out
