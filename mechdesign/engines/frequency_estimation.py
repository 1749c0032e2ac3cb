"""Engines of ``frequency_estimation`` (minimise U = tr J⁻¹ − ‖P‖², :mod:`mechdesign.objectives.frequency_estimation`).

* ``frequency-symmetric-classes``: uniform P over simplex or min_mass, no other privacy constraint: the class
  reduction (:mod:`mechdesign.objectives.frequency_symmetric`) gives U* in closed form for any N (the bound) and a
  balanced cyclic kernel attaining it where it fits the output limits (N·M ≤ 10⁷, M ≤ 10⁴); otherwise, with
  ``output_size: auto`` and a best class of two-level rays (q symbols at 1, the others at m_q), the structured
  optimum: subset selection of size d = q (Ye and Barg 2018; under Q_X(c) its ratio is R_q = 1/m_q, Remark 2 of
  the Dobrushin paper), whose uniform orbit *is* that class, with its exact closed-form certificate
  (:func:`structured_optimum`); else a clear message with the optimum and its class.
* ``frequency-a-optimal-rays``: every extreme ray listed (structured for simplex/min_mass/point up to N = 12, cdd up
  to N = 8 for hull/box/l1_ball and for ``privacy`` lists, whose cone is the intersection of the constraints'
  cones), solved by column generation over the list (:mod:`mechdesign.engines.a_optimal`).
* ``frequency-column-generation`` (:mod:`mechdesign.engines.frequency_column_generation`): one non-uniform prior
  over simplex or min_mass past N = 12, column generation over the ray families with certified pricing.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.engines.base import EngineBase
from mechdesign.lp.solve import Status
from mechdesign.objectives.frequency_estimation import EXACT_MAX_N, estimation_priors, symmetric_case
from mechdesign.objectives.plan import PlanOutcome
from mechdesign.spec.errors import InputError, SolveFailure
from mechdesign.spec.models import MAX_M, MAX_NM, Spec

__all__ = ["FrequencySymmetricClasses", "FrequencyAOptimalRays", "frequency_rays", "solve_frequency"]


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
    from mechdesign.engines.sublinear import ray_epsilon
    from mechdesign.privacy.extremes import CDD_MAX_N, checked_cone_rays, cone_inequalities, extreme_rays, unique_rows
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
    blocks = [cone_inequalities(spec.prior_set, n, ray_epsilon(spec))] if not spec.primary_is_implied else []
    for g in spec.extra_guarantees:
        if isinstance(g, MetricGuarantee):
            blocks.append(_metric_rows(g, n))
        else:
            blocks.append(cone_inequalities(g.prior_set, n, g.epsilon.value + 3e-16 * max(1.0, g.epsilon.value)))
    blocks.append(np.eye(n))
    G = unique_rows(np.vstack(blocks), 14)
    # cdd's floating-point listing, checked on the section Σk = 1 (optimality conditions or LP maxima of random
    # directions): a dropped ray would leave the design's bound below the optimum
    R = checked_cone_rays(G)
    if R is not None:
        return unique_rows(R / R.max(axis=1, keepdims=True))
    raise SolveFailure(
        "privacy: the extreme rays of the privacy list's intersection cone could not be listed reliably in floating "
        "point (cdd's double description failed its check); a shorter privacy list or other numbers may avoid it"
    )


def solve_frequency(spec: Spec) -> PlanOutcome:
    """The frequency-estimation design of ``spec``: the symmetric classes when they apply, else every ray listed."""
    t0 = time.perf_counter()
    if spec.epsilon.value == 0 and not spec.extra_guarantees:
        return _outcome(spec, np.ones((spec.n, 1)), math.inf, None, "ε = 0: only constant kernels", t0)
    if symmetric_case(spec):
        return _symmetric(spec, t0)
    return _exact(spec, t0)


def _outcome(spec, K, value, bound, method, t0, status=Status.OPTIMAL, message="", columns=0) -> PlanOutcome:
    if K is not None and spec.output_size != "auto" and K.shape[1] > spec.output_size:
        raise InputError(
            f"output_size: the frequency-estimation design uses {K.shape[1]} outputs, more than "
            f"output_size = {spec.output_size}; use output_size: auto"
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


def _symmetric(spec: Spec, t0) -> PlanOutcome:
    from mechdesign.objectives.frequency_symmetric import balanced_cyclic_kernel, symmetric_optimum
    from mechdesign.privacy.ray_families import families

    n = spec.n
    opt = symmetric_optimum(families(spec), n)
    limit = MAX_M if spec.output_size == "auto" else spec.output_size
    limit = min(limit, MAX_NM // n)
    K = balanced_cyclic_kernel(opt.pattern, limit)
    structure = f"optimum U* = {opt.value:.10g}: all the mass on one class of rays ({opt.description})"
    if K is None and spec.output_size == "auto":
        mech = structured_optimum(spec, opt)
        if mech is not None:
            out = _outcome(
                spec,
                None,
                mech.accuracy(1)["mse"],
                opt.bound,
                "symmetric classes (uniform prior), structured optimum: subset selection",
                t0,
                message=structure + f"; subset selection d = {mech.sizes[0]} (no explicit kernel fits)",
            )
            out.mechanism = mech
            return out
    if K is None:  # the value and the structure, without a kernel (a kernel that identifies P needs M ≥ N)
        raise InputError(
            f"output_size: no explicit frequency-estimation kernel fits N*M <= {MAX_NM} and M <= {limit} "
            f"at N = {n}; the {structure} (mechdesign epsilon --rmse works at this N)"
        )
    return _outcome(
        spec,
        K,
        opt.value,
        opt.bound,
        "symmetric classes (uniform prior), balanced cyclic kernel",
        t0,
        message=structure,
    )


def structured_optimum(spec: Spec, opt):
    """Subset selection whose uniform orbit is the symmetric optimum's class, or None when that class is not
    two-level (the {0, w, 1} rays of Q_X(c) at large c).

    The best class of two-level rays r = m + (1 − m)1_A, |A| = q, spread uniformly over its C(N, q) permutations,
    is exactly subset selection of size d = q with high/low ratio R = 1/m (each d-subset S a column ∝ r with A = S);
    :mod:`mechdesign.mechanisms.subset_selection` takes the largest rational R ≤ R_q (R_q = 1/m_q from the same
    rational E ≤ e^ε), so its levels are the class's to 40 bits. Checked here: same size, same ratio (relative 1e−9),
    and its U at the uniform prior (its closed-form total variance of one report, which at the uniform prior is
    (N − 1)/a of the class reduction) no smaller than the bound and within the design's gap tolerance of U*."""
    from mechdesign.mechanisms.subset_selection import SubsetSelection

    kind, size, level = opt.family
    if kind != "two" or level <= 0:
        return None
    mech = SubsetSelection(spec.labels, spec.epsilon.text, prior_set=spec.prior_set, d=size)
    ratio = float(mech.ratios[0])
    if abs(ratio * level - 1) > 1e-9:
        raise RuntimeError(f"subset selection d = {size}: ratio {ratio} is not the class's 1/m = {1 / level}")
    u = mech.accuracy(1)["mse"]
    if not (u >= opt.bound and u - opt.bound <= 1e-6 * u):
        raise RuntimeError(f"subset selection d = {size}: U = {u!r} is not the symmetric optimum {opt.value!r}")
    return mech


def _exact(spec: Spec, t0) -> PlanOutcome:
    from mechdesign.engines.a_optimal import reduce_support, solve_a_optimal

    R = frequency_rays(spec)
    priors = estimation_priors(spec)
    limit = spec.solver.time_limit or 60.0
    d = solve_a_optimal(R, priors, spec.solver, time_limit=limit)
    if d.theta is None or not math.isfinite(d.value):
        return _outcome(spec, None, None, d.bound, "A-optimal design over all extreme rays", t0, Status.SOLVER_ERROR)
    theta = reduce_support(R, d.theta, priors[0]) if len(priors) == 1 else d.theta
    used = np.flatnonzero(theta > 1e-9 * theta.max())
    K = (R[used] * theta[used, None]).T
    K = K / K.sum(axis=1, keepdims=True)
    return _outcome(
        spec,
        K,
        d.value,
        d.bound,
        "A-optimal design over all extreme rays (column generation, Clarabel)",
        t0,
        message=f"{d.rays_considered} rays listed, {d.iterations} rounds",
        columns=len(R),
    )


class FrequencySymmetricClasses(EngineBase):
    name = "frequency-symmetric-classes"
    solves = "frequency estimation at a uniform prior over simplex or min_mass: the class reduction, any N"

    def applies(self, problem) -> str | None:
        if not symmetric_case(problem.spec):
            return "needs one uniform prior, a simplex or min_mass prior set and no privacy list"
        return None

    def run(self, problem, budget):
        return solve_frequency(problem.spec)

    def hands_over(self, outcome):
        return None


class FrequencyAOptimalRays(EngineBase):
    name = "frequency-a-optimal-rays"
    solves = "frequency estimation over every extreme ray listed: A-optimal design by column generation (Clarabel)"

    def applies(self, problem) -> str | None:
        from mechdesign.privacy.extremes import CDD_MAX_N
        from mechdesign.privacy.priors import rules

        spec = problem.spec
        if spec.extra_guarantees or rules(spec.prior_set, spec.n).structured_ray_count() is None:
            if spec.n > CDD_MAX_N:
                return f"the rays of this cone are listed by vertex enumeration, limited to N <= {CDD_MAX_N}"
        elif spec.n > EXACT_MAX_N:
            return (
                f"every extreme ray is listed up to N = {EXACT_MAX_N} (found N = {spec.n}); past that a simplex or "
                f"min_mass prior set with one prior is designed by frequency-column-generation"
            )
        return None

    def run(self, problem, budget):
        return solve_frequency(problem.spec)

    def hands_over(self, outcome):
        return None
