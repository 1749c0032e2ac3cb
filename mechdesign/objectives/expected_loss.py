"""Expected loss: minimise Σ_x P(x) Σ_y L(x,y) K_xy over the (ε,𝒫)-PML kernels, under a given prior or the
worst prior of 𝒫 (an epigraph variable). A kernel LP (:func:`compile_expected_loss`)."""
from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from mechdesign.lp.program import LPBuilder
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.compile import CompiledProblem, add_pml_kernel, solve_kernel_lps
from mechdesign.objectives.worst_case_outputs import solve_worst_case_outputs
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.privacy.priors import constrain_min_expectation, min_expectation, rules
from mechdesign.spec.models import Spec

__all__ = ["ExpectedLoss", "compile_expected_loss", "loss_matrix", "objective_prior"]


def loss_matrix(spec: Spec) -> np.ndarray:
    """The N × M loss matrix L of an expected-loss objective (indices x, y from 0)."""
    obj = spec.objective
    n, m = spec.n, spec.m
    if isinstance(obj.loss, list):
        return np.asarray(obj.loss, dtype=float)
    x = np.arange(n)[:, None]
    y = np.arange(m)[None, :]
    if obj.loss == "hamming":
        return (x != y).astype(float)
    if obj.loss == "absolute":
        return np.abs(x - y).astype(float)
    return ((x - y) ** 2).astype(float)


def objective_prior(spec: Spec) -> np.ndarray | None:
    """The prior an expected loss is averaged under, or None for worst case over 𝒫."""
    obj = spec.objective
    n = spec.n
    if obj.prior == "worst_case":
        point = rules(spec.prior_set, n).point_prior()
        return None if point is None else np.array([float(p) for p in point])
    if obj.prior == "uniform":
        return np.full(n, 1.0 / n)
    return np.array([float(p) for p in obj.prior])


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
    if prior is not None:
        lp = b.build((K, prior[:, None] * L), sense=1)
    else:
        lmax = float(L.max(initial=0.0))
        lmin = float(min(L.min(initial=0.0), 0.0))
        r = b.variables("r", (n,), lower=lmin, upper=lmax)
        tau = b.variables("tau", (1,), lower=lmin, upper=lmax)
        b.rows(np.hstack([r[:, None], K]), np.hstack([-np.ones((n, 1)), L]), 0.0, 0.0)
        constrain_min_expectation(b, spec.prior_set, n, r[:, None], -1.0, [(tau, -1.0)], tag="risk",
                                  k_range=(-lmax, -lmin))
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
        compiled = self.compile()
        if objective_prior(self.spec) is None:   # worst case over Q_X(c): outputs generated with the epigraph rows
            outcome = solve_worst_case_outputs(self.spec, compiled, time.perf_counter() - t0)
            if outcome is not None:
                return outcome
        return solve_kernel_lps(self.spec, compiled, time.perf_counter() - t0)

    def value(self, K):
        spec = self.spec
        row_loss = (K * loss_matrix(spec)).sum(axis=1)
        prior = objective_prior(spec)
        if prior is not None:
            return float(prior @ row_loss)
        low, _ = min_expectation(spec.prior_set, spec.n, [-Fraction(float(v)) for v in row_loss])
        return float(-low)
