"""Frequency estimation: minimise U(K) = tr J(K,P)⁻¹ − ‖P‖², n times the MLE's asymptotic mean squared error.

U is the constrained Cramér–Rao bound that the MLE of P attains (:mod:`mechdesign.theory.estimation`); over the
(ε,𝒫)-PML kernels it is the A-optimal design program over the extreme rays of the private column cone
(:mod:`mechdesign.objectives.a_optimal`, with its rigorous Lagrangian lower bound). Methods, in order:

* **symmetric** — uniform P (one prior), 𝒫 = simplex or min_mass, no other privacy constraint: the class
  reduction of :mod:`mechdesign.objectives.frequency_symmetric` gives U* in closed form for any N (the bound), and
  a balanced cyclic kernel attaining it where it fits the output limits (N·M ≤ 10⁷, M ≤ 10⁴);
* **exact** — all extreme rays listed (structured for simplex/min_mass/point up to N = 12, cdd up to N = 8 for
  hull/box/l1_ball and for ``privacy`` lists, whose cone is the intersection of the constraints' cones), solved by
  column generation over the list with cvxpy + Clarabel;
* otherwise a clear error naming the limit.

The emitted kernel is certified by the common stage (exact privacy check, repair) and its U recomputed from it.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.lp.solve import Status
from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.errors import InputError
from mechdesign.spec.models import MAX_M, MAX_NM, Spec

__all__ = ["FrequencyEstimation", "estimation_priors", "EXACT_MAX_N", "frequency_rays", "textbook_comparison"]

EXACT_MAX_N = 12
"""Largest N designed over all listed rays for simplex, min_mass and point (cdd prior sets: N ≤ 8)."""


def estimation_priors(spec: Spec) -> list[np.ndarray]:
    """The distributions whose worst U is minimised: ``priors``, else ``prior`` (uniform by default)."""
    obj = spec.objective
    if obj.priors is not None:
        return [np.array([float(v) for v in p]) for p in obj.priors]
    if isinstance(obj.prior, str):
        return [np.full(spec.n, 1.0 / spec.n)]
    return [np.array([float(v) for v in obj.prior])]


def _symmetric_case(spec: Spec) -> bool:
    from mechdesign.privacy.registry import rules

    obj = spec.objective
    return (
        obj.priors is None
        and isinstance(obj.prior, str)
        and not spec.extra_guarantees
        and rules(spec.prior_set, spec.n).ray_family_c() is not None
    )


def _metric_rows(guarantee, n: int) -> np.ndarray:
    """Rows g with g·k ≥ 0 ⇔ k_x ≤ e^{ε d(x,x')} k_{x'} for every ordered pair (ε·d-privacy of one column)."""
    from mechdesign.privacy.metric import metric_distances

    D = metric_distances(guarantee.metric, n).times(guarantee.epsilon.value)
    rows = []
    for x in range(n):
        for z in range(n):
            if x != z and math.isfinite(D[x, z]):
                g = np.zeros(n)
                g[z] = 1.0
                g[x] = -math.exp(-D[x, z])
                rows.append(g)
    return np.array(rows).reshape(-1, n)


def frequency_rays(spec: Spec) -> np.ndarray:
    """Every extreme ray of the spec's single-column cone (max entry 1): the prior set's own list, or for a
    ``privacy`` list the rays of the intersection of every constraint's cone (cdd, N ≤ 8)."""
    from mechdesign.objectives.sublinear import ray_epsilon
    from mechdesign.privacy.extremes import CDD_MAX_N, cone_inequalities, extreme_rays, unique_rows
    from mechdesign.spec.models import MetricGuarantee

    n = spec.n
    if spec.epsilon.value == 0 and not spec.extra_guarantees:
        return np.ones((1, n))
    if not spec.extra_guarantees:
        from mechdesign.privacy.priors import rules

        if rules(spec.prior_set, n).structured_ray_count() is not None and n > EXACT_MAX_N:
            raise InputError(
                f"alphabet: frequency_estimation lists every extreme ray up to N = {EXACT_MAX_N} for a non-uniform "
                f"prior (found N = {n}); at a uniform prior over simplex or min_mass any N is solved"
            )
        return extreme_rays(spec.prior_set, n, ray_epsilon(spec))
    if n > CDD_MAX_N:
        raise InputError(
            f"privacy: frequency_estimation under several privacy constraints enumerates the rays of their "
            f"intersection cone with cdd, limited to N <= {CDD_MAX_N}, found N = {n}"
        )
    import cdd

    blocks = [cone_inequalities(spec.prior_set, n, ray_epsilon(spec))] if not spec.primary_is_implied else []
    for g in spec.extra_guarantees:
        if isinstance(g, MetricGuarantee):
            blocks.append(_metric_rows(g, n))
        else:
            blocks.append(cone_inequalities(g.prior_set, n, g.epsilon.value + 3e-16 * max(1.0, g.epsilon.value)))
    blocks.append(np.eye(n))
    G = unique_rows(np.vstack(blocks), 14)
    mat = cdd.matrix_from_array(np.hstack([np.zeros((len(G), 1)), G]).tolist(), rep_type=cdd.RepType.INEQUALITY)
    gen = cdd.copy_generators(cdd.polyhedron_from_matrix(mat))
    R = np.array([row[1:] for row in gen.array if abs(row[0]) < 1e-12]).reshape(-1, n)
    R = np.clip(R, 0.0, None)
    R = R[R.max(axis=1) > 0]
    return unique_rows(R / R.max(axis=1, keepdims=True))


class FrequencyEstimation(ObjectiveRules):
    kind = "frequency_estimation"
    sense = 1

    def value(self, K: np.ndarray) -> float:
        from mechdesign.theory.estimation import mle_error

        return max(mle_error(K, P) for P in estimation_priors(self.spec))

    def textbook_comparison(self) -> dict | None:
        """U of k-RR and of the best subset selection at the same ε (:func:`textbook_comparison`)."""
        return textbook_comparison(self.spec)

    def unconstrained_bound(self) -> float | None:
        """U of the identity kernel, 1 − ‖P‖² (the worst over the priors): every kernel is the identity followed by
        post-processing, which can only lower the Fisher information in the Loewner order (data processing for
        Fisher information, Zamir 1998), so U(K) ≥ U(I) for every kernel, private or not."""
        return max(1.0 - float(P @ P) for P in estimation_priors(self.spec))

    def solve(self) -> PlanOutcome:
        spec = self.spec
        t0 = time.perf_counter()
        if spec.epsilon.value == 0 and not spec.extra_guarantees:
            return self._outcome(np.ones((spec.n, 1)), math.inf, None, "ε = 0: only constant kernels", t0)
        if _symmetric_case(spec):
            return self._symmetric(t0)
        return self._exact(t0)

    def _outcome(self, K, value, bound, method, t0, status=Status.OPTIMAL, message="", columns=0) -> PlanOutcome:
        if K is not None and self.spec.output_size != "auto" and K.shape[1] > self.spec.output_size:
            raise InputError(
                f"output_size: the frequency-estimation design uses {K.shape[1]} outputs, more than "
                f"output_size = {self.spec.output_size}; use output_size: auto"
            )
        return PlanOutcome(
            status=status,
            kernel=K,
            value=value,
            bound=bound,
            sense=1,
            method=method,
            backend="clarabel",
            seconds=time.perf_counter() - t0,
            columns=columns,
            message=message,
        )

    def _symmetric(self, t0) -> PlanOutcome:
        from mechdesign.objectives.frequency_symmetric import balanced_cyclic_kernel, symmetric_optimum
        from mechdesign.privacy.ray_families import families

        spec, n = self.spec, self.spec.n
        opt = symmetric_optimum(families(spec), n)
        limit = MAX_M if spec.output_size == "auto" else spec.output_size
        limit = min(limit, MAX_NM // n)
        K = balanced_cyclic_kernel(opt.pattern, limit)
        structure = f"optimum U* = {opt.value:.10g}: all the mass on one class of rays ({opt.description})"
        if K is None:  # the value and the structure, without a kernel (a kernel that identifies P needs M ≥ N)
            raise InputError(
                f"output_size: no explicit frequency-estimation kernel fits N*M <= {MAX_NM} and M <= {limit} "
                f"at N = {n}; the {structure} (mechdesign epsilon --rmse works at this N)"
            )
        return self._outcome(
            K, opt.value, opt.bound, "symmetric classes (uniform prior), balanced cyclic kernel", t0, message=structure
        )

    def _exact(self, t0) -> PlanOutcome:
        from mechdesign.objectives.a_optimal import reduce_support, solve_a_optimal

        spec = self.spec
        R = frequency_rays(spec)
        priors = estimation_priors(spec)
        limit = spec.solver.time_limit or 60.0
        d = solve_a_optimal(R, priors, spec.solver, time_limit=limit)
        if d.theta is None or not math.isfinite(d.value):
            return self._outcome(None, None, d.bound, "A-optimal design over all extreme rays", t0, Status.SOLVER_ERROR)
        theta = reduce_support(R, d.theta, priors[0]) if len(priors) == 1 else d.theta
        used = np.flatnonzero(theta > 1e-9 * theta.max())
        K = (R[used] * theta[used, None]).T
        K = K / K.sum(axis=1, keepdims=True)
        return self._outcome(
            K,
            d.value,
            d.bound,
            "A-optimal design over all extreme rays (column generation, Clarabel)",
            t0,
            message=f"{d.rays_considered} rays listed, {d.iterations} rounds",
            columns=len(R),
        )


def textbook_comparison(spec: Spec) -> dict:
    """U of k-RR and of subset selection at its best size at the spec's ε (both ε-LDP, so private for every prior
    set), worst over the objective's priors: the designed U is never above them when the prior set is the simplex
    (they are feasible for the program) and lower still under Q_X(c). Subset selection in closed form at the
    uniform prior, by listing its outputs otherwise (N ≤ 16), else None."""
    from mechdesign.theory.estimation import best_subset_selection_error, krr_error

    n, eps = spec.n, spec.epsilon.value
    priors = estimation_priors(spec)
    uniform = spec.objective.priors is None and isinstance(spec.objective.prior, str)
    out: dict = {"k_rr": max(krr_error(n, eps, P) for P in priors)}
    if uniform:
        u, k = best_subset_selection_error(n, eps)
        out["subset_selection"] = {"U": u, "k": k}
    elif n <= 16:
        best = None
        for k in range(1, n):
            from mechdesign.theory.estimation import subset_selection_error

            u = max(subset_selection_error(n, eps, k, P) for P in priors)
            if best is None or u < best[0]:
                best = (u, k)
        out["subset_selection"] = {"U": best[0], "k": best[1]}
    else:
        out["subset_selection"] = None
    return out
