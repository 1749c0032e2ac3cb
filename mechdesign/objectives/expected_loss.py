"""Expected loss: minimise Σ_x P(x) Σ_y L(x,y) K_xy over the (ε,𝒫)-PML kernels, under a given prior or the
worst prior of 𝒫 (an epigraph variable). A kernel LP (:func:`compile_expected_loss`)."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.compile import (
    CompiledProblem,
    add_pml_kernel,
    loss_matrix,
    objective_prior,
    solve_kernel_lps,
    solve_uncompiled,
    uncompiled_kernel_c,
)
from mechdesign.objectives.vulnerability import add_vulnerability, enforce_cap, gain_and_prior
from mechdesign.objectives.worst_case_outputs import solve_worst_case_outputs
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.privacy.priors import constrain_min_expectation, min_expectation
from mechdesign.spec.models import Spec

__all__ = ["ExpectedLoss", "compile_expected_loss", "loss_matrix", "objective_prior"]


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
    K = add_pml_kernel(b, spec, m)
    prior = objective_prior(spec)
    cap = spec.objective.max_vulnerability
    if cap is not None:  # V_g(K) ≤ b: v_y ≥ Σ_x G(w,x)P(x)K_xy, Σ_y v_y ≤ b (objectives.vulnerability)
        gain, prior_exact = gain_and_prior(spec, cap)
        v = add_vulnerability(b, K, gain, prior_exact)
        b.rows(v[None, :], np.ones((1, len(v))), -np.inf, float(cap.at_most))
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
    return CompiledProblem(lps=[lp], kernel=K)


class ExpectedLoss(ObjectiveRules):
    kind = "expected_loss"
    sense = 1
    outputs_estimate_x = True

    def compile(self) -> CompiledProblem:
        return compile_expected_loss(self.spec)

    def solve(self) -> PlanOutcome:
        t0 = time.perf_counter()
        direct = self._solve_uncompiled()
        if direct is not None:
            return direct
        compiled = self.compile()
        if objective_prior(self.spec) is None:  # worst case over Q_X(c): outputs generated with the epigraph rows
            outcome = solve_worst_case_outputs(self.spec, compiled, time.perf_counter() - t0)
            if outcome is not None:
                return outcome
        return solve_kernel_lps(self.spec, compiled, time.perf_counter() - t0)

    def _solve_uncompiled(self) -> PlanOutcome | None:
        """Under a given prior over Q_X(c) or the simplex with nothing else in the LP: the kernel LP
        min Σ P(x) L(x,y) K_xy by :func:`mechdesign.lp.kernel_engine.solve_kernel_lp`, never compiled whole.
        None when another path applies (a vulnerability cap, further guarantees, a worst-case prior, a
        back end or method asked for, or a program that stopped short of its bound, which the compiled LP
        then solves)."""
        spec = self.spec
        prior = objective_prior(spec)
        c = uncompiled_kernel_c(spec)
        if c is None or spec.objective.max_vulnerability is not None:
            return None
        if prior is None:  # the worst prior of Q_X(c): lp/worst_case_engine.py
            return solve_uncompiled(spec, loss_matrix(spec), c, +1, worst_case=True)
        t0 = time.perf_counter()
        C = prior[:, None] * loss_matrix(spec)
        return solve_uncompiled(spec, C, c, +1, compile_seconds=time.perf_counter() - t0)

    def enforce(self, kernel):
        cap = self.spec.objective.max_vulnerability
        if cap is None:
            return kernel, Fraction(0)
        return enforce_cap(kernel, self.spec, cap, Fraction(cap.at_most), self.spec.solver.denominator_bits)

    def unconstrained_bound(self):
        """The loss of the best kernel without privacy (each row on its cheapest output), a lower bound."""
        L = loss_matrix(self.spec)
        K = np.zeros_like(L)
        K[np.arange(self.spec.n), np.argmin(L, axis=1)] = 1.0
        return float(self.value(K))

    def value(self, K):
        spec = self.spec
        row_loss = (K * loss_matrix(spec)).sum(axis=1)
        prior = objective_prior(spec)
        if prior is not None:
            return float(prior @ row_loss)
        low, _ = min_expectation(spec.prior_set, spec.n, [-Fraction(float(v)) for v in row_loss])
        return float(-low)
