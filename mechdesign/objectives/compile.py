"""Compile a spec into linear programs over the kernel K (N × M).

Every LP here shares the (ε,𝒫)-PML feasible set, written in lifted form
(DESIGN.md §2, Lemma 4 of the Dobrushin paper generalised to any prior set):

    K_xy ∈ [0, 1],   Σ_y K_xy = 1                         (row-stochastic)
    t_y ≥ K_xy                      for all x, y           (t_y ≥ column maximum)
    e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y)  for all y            (see priors.constrain_min_expectation)

The PML row is scaled by e^{−ε} (not multiplied by e^ε) so that coefficients
stay ≤ 1 for every ε; for ε ≳ 20 HiGHS drops coefficients below 1e−9, which
only relaxes the LP: the exact certificate then catches and repairs it.
Objectives are registered by ``kind`` in :data:`OBJECTIVES`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mechdesign.lp.colgen import KernelLayout
from mechdesign.lp.program import LinearProgram, LPBuilder
from mechdesign.privacy.priors import constrain_min_expectation, is_permutation_invariant
from mechdesign.spec.models import Spec

__all__ = ["CompiledProblem", "compile_problem", "add_pml_kernel", "loss_matrix", "objective_prior"]


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


def add_pml_kernel(b: LPBuilder, spec: Spec, m: int) -> np.ndarray:
    """Add the kernel K (N × M) and its (ε,𝒫)-PML constraints; return K's indices.

        Σ_y K_xy = 1,  0 ≤ K_xy ≤ 1,
        K_xy − t_y ≤ 0,
        e^{−ε} t_y ≤ min_{P∈𝒫} P·K(:,y).

    O(NM) rows with O(1) nonzeros each for the min_mass and simplex sets
    (plus V·M rows of N nonzeros for a hull of V priors).

    For min_mass and simplex, ``b.structure`` records the layout of these rows
    (:class:`~mechdesign.lp.colgen.KernelLayout`) so that the solver can run
    column generation when nothing else is added to the LP.
    """
    n = spec.n
    K = b.variables("K", (n, m), lower=0.0, upper=1.0)
    t = b.variables("t", (m,), lower=0.0, upper=1.0)
    rows_sum = b.rows(K, np.ones((n, m)), 1.0, 1.0)
    rows_t = b.rows(np.stack([K, np.broadcast_to(t, (n, m))], -1).reshape(-1, 2), np.array([1.0, -1.0]),
                    -np.inf, 0.0)
    scale = math.exp(-spec.epsilon.value)
    where = constrain_min_expectation(b, spec.prior_set, n, K, 1.0, [(t, scale)], tag="pml", k_range=(0.0, 1.0))
    if spec.prior_set.kind in ("simplex", "min_mass") and "low" in where:
        c = float(spec.prior_set.c) if spec.prior_set.kind == "min_mass" else 0.0
        b.structure = KernelLayout(K=K, t=t, rows_sum=rows_sum, rows_t=rows_t.reshape(n, m), rows_low=where["low"],
                                   c=c, scale=scale, u=where.get("u"), rows_pml=where.get("column"))
    return K


# ----------------------------------------------------------------- losses
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
        if spec.prior_set.kind == "point":
            return np.array([float(p) for p in spec.prior_set.prior])
        return None
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


def compile_dobrushin(spec: Spec) -> CompiledProblem:
    """Maximise the Dobrushin coefficient η_TV(K) = max_{x≠x'} TV(K_x, K_x') (eq. 2).

    Lemma 3 (Dobrushin paper): binary outputs suffice, and TV between two rows of
    a binary kernel [p, 1−p] is |p_a − p_b|. So

        η_TV(ε,𝒫) = max over pairs {a, b} of  max p_a − p_b
                     s.t. [p, 1−p] is (ε,𝒫)-PML      (one LP per pair).

    Swapping the two outputs maps feasible kernels to feasible kernels and
    p_a − p_b to p_b − p_a, so unordered pairs suffice: N(N−1)/2 LPs. When 𝒫 is
    invariant under permutations of X every pair has the same value and one LP
    (pair {0, 1}) is solved.
    """
    n = spec.n
    b = LPBuilder()
    K = add_pml_kernel(b, spec, 2)
    if is_permutation_invariant(spec.prior_set, n):
        pairs = [(0, 1)]
        note = "prior set invariant under permutations: one LP (pair 0, 1)"
    else:
        pairs = [(a, c) for a in range(n) for c in range(a + 1, n)]
        note = f"{len(pairs)} pair LPs"
    lps = [b.build((np.array([K[a, 0], K[c, 0]]), np.array([1.0, -1.0])), sense=-1) for a, c in pairs]
    return CompiledProblem(lps=lps, kernel=K, labels=[f"{a},{c}" for a, c in pairs], note=note)


def compile_bayes_vulnerability(spec: Spec) -> CompiledProblem:
    """Maximise Bayes vulnerability V(K) = Σ_y max_x P(x) K_x(y) with M ≥ N outputs, as one LP.

    Give each output y the guess g(y) = argmax_x P(x) K_x(y). Merging the outputs with the
    same guess is post-processing (it keeps (ε,𝒫)-PML) and keeps V, so some optimal kernel has
    N outputs, output x guessing symbol x, and then V(K) ≥ Σ_x P(x) K_xx with equality at the
    optimum. Conversely any kernel's V equals Σ_x P(x) K'_xx for its merged kernel K'. Hence

        max V(K) = max Σ_x P(x) K_xx   over (ε,𝒫)-PML kernels with M = N columns,

    an LP (the complement of the Hamming-loss design under P), solved on the first N outputs;
    outputs beyond N stay unused. The emitted kernel's V is evaluated directly.
    """
    n = spec.n
    prior = np.full(n, 1.0 / n) if spec.objective.prior == "uniform" else \
        np.array([float(p) for p in spec.objective.prior])
    b = LPBuilder()
    K = add_pml_kernel(b, spec, n)
    lp = b.build((np.diag(K), prior), sense=-1)
    return CompiledProblem(lps=[lp], kernel=K, note="Bayes vulnerability as the LP max sum_x P(x) K_xx")


COMPILERS = {"expected_loss": compile_expected_loss, "dobrushin": compile_dobrushin,
             "bayes_vulnerability": compile_bayes_vulnerability}


def compile_problem(spec: Spec) -> CompiledProblem:
    """Dispatch on ``spec.objective.kind``."""
    return COMPILERS[spec.objective.kind](spec)
