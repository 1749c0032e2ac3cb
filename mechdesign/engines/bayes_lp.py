"""Engine ``bayes-lp``: Bayes vulnerability with a fixed M < N past the exact ray threshold. Its auto (M ≥ N) optimum
is the exact LP max Σ_x P(x) K_xx (:func:`design_bayes_lp`, any N: the uncompiled kernel LP over Q_X(c) or the
simplex, else the compiled LP); the used columns of that kernel are the rays, and a fixed M below them goes to the
fixed-output methods (:mod:`mechdesign.engines.fixed_outputs`; first the MIP with one binary per output,
:func:`_fixed_bayes_mip`)."""

from __future__ import annotations

import time

import numpy as np

from mechdesign.engines.base import EngineBase
from mechdesign.engines.fixed_outputs import FixedDesign, _utility, bayes_mip
from mechdesign.engines.kernel_lp import kernel_lp_outcome, solve_kernel_lp, uncompiled_reason
from mechdesign.lp.incumbent import design_problem
from mechdesign.lp.program import dual_bound
from mechdesign.engines.output_generation import solve_kernel_lp_compiled
from mechdesign.lp.solve import Status
from mechdesign.objectives.bayes_vulnerability import BayesVulnerability, bayes_prior, compile_bayes_vulnerability
from mechdesign.objectives.compile import exp_minus_epsilon_down
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.objectives.rays import RayDesign
from mechdesign.privacy.registry import rules
from mechdesign.spec.models import Spec

__all__ = ["BayesLP", "design_bayes_lp"]


def _bayes_uncompiled(spec: Spec) -> PlanOutcome | None:
    """max Σ_x P(x) K_xx over Q_X(c) or the simplex as min Σ C K with C = −diag(P), never compiled whole
    (:func:`mechdesign.engines.kernel_lp.solve_kernel_lp`; under a uniform P one ray per output closes the gap at
    once). None when the compiled LP's path applies (other prior sets or guarantees, a method or back end asked
    for, or a program short of its bound)."""
    if uncompiled_reason(spec) is not None:
        return None
    res = solve_kernel_lp(
        -np.diag(bayes_prior(spec)),
        rules(spec.prior_set, spec.n).equivalent_c(),
        exp_minus_epsilon_down(spec),
        time_limit=spec.solver.time_limit,
        verbose=bool(spec.solver.verbose),
        user_sense=-1,  # bounds offered as upper bounds
    )
    if res.status != "optimal":
        return None
    outcome = kernel_lp_outcome(res, -1)
    outcome.method = f"{BayesVulnerability.kernel_lp_label} ({outcome.method})"
    return outcome


def _ray_design(K, value, bound, method, t0, lp_size, iterations=1) -> RayDesign:
    """A kernel of the LP max Σ_x P(x) K_xx as a RayDesign: its used columns, normalised, are the rays."""
    K = np.clip(K, 0.0, None)
    used = K.max(axis=0) > 1e-12
    scale = K[:, used].max(axis=0)
    return RayDesign(
        K[:, used].T / scale[:, None],
        scale,
        None,
        value,
        bound,
        method,
        iterations=iterations,
        seconds=time.perf_counter() - t0,
        lp_size=lp_size,
    )


def design_bayes_lp(spec: Spec) -> RayDesign:
    """The auto (M ≥ N) Bayes-vulnerability optimum as the exact LP max Σ_x P(x) K_xx
    (:func:`mechdesign.objectives.compile.compile_bayes_vulnerability`), as a RayDesign: its used columns,
    normalised, are the rays and the weak-duality bound of the LP is the bound. Any N; used past
    the exact threshold when a fixed M < N then goes to :mod:`mechdesign.engines.fixed_outputs`."""
    t0 = time.perf_counter()
    direct = _bayes_uncompiled(spec)
    if direct is not None:
        return _ray_design(
            direct.kernel,
            direct.value,
            direct.bound,
            direct.method,
            t0,
            (direct.rows, direct.columns, 0),
            iterations=direct.iterations,
        )
    compiled = compile_bayes_vulnerability(spec)
    lp = compiled.lps[0]
    with design_problem(lp):  # its bound holds for every M: offered for Ctrl-C (lp/incumbent.py)
        sol = solve_kernel_lp_compiled(lp, spec.solver, layout=compiled.layout)
    if sol.x is None or sol.row_dual is None or sol.status is not Status.OPTIMAL:
        return RayDesign(
            np.zeros((0, spec.n)), None, None, None, None, "Bayes vulnerability LP", seconds=time.perf_counter() - t0
        )
    return _ray_design(
        np.asarray(sol.x, float)[compiled.kernel],
        sol.objective,
        dual_bound(lp, sol.row_dual),
        "Bayes vulnerability as the LP max sum_x P(x) K_xx",
        t0,
        (lp.num_rows, lp.num_cols, lp.A.nnz),
    )


def _fixed_bayes_mip(spec, m, greedy, greedy_val, mu_fn, cap, auto_bound) -> FixedDesign | None:
    """Fixed M ≤ N: the MIP of :func:`mechdesign.engines.fixed_outputs.bayes_mip` (one binary per output)."""
    if m > spec.n:
        return None
    K, value, bound, sol = bayes_mip(spec, m)
    if K is not None:
        v = _utility(mu_fn, K)
        if v >= greedy_val or bound is not None:
            use, use_v = (K, v) if v >= greedy_val else (greedy, greedy_val)
            exact = sol.status is Status.OPTIMAL
            return FixedDesign(
                use,
                use_v,
                cap(bound) if bound is not None else auto_bound,
                f"Bayes vulnerability MIP ({sol.message}, {sol.seconds:.2f} s)",
                exact,
            )
    return None


class BayesLP(EngineBase):
    name = "bayes-lp"
    solves = "Bayes vulnerability with M < N: the LP max Σ P(x) K_xx, its columns as rays, then the fixed-output MIP"

    def applies(self, problem) -> str | None:
        if problem.rules.kernel_lp_reason() is None:
            return "output_size M >= N (the kernel LP engines solve it)"
        return None

    def run(self, problem, budget):
        from mechdesign.engines.sublinear import solve_sublinear

        from mechdesign.engines.fixed_outputs import FixedHooks

        return solve_sublinear(problem.spec, design_bayes_lp, FixedHooks(before_enumeration=_fixed_bayes_mip))

    def hands_over(self, outcome):
        return None
