"""The emitted kernel's objective without a pass over it: the Hamming loss from the exact
kernel's diagonal, the uniform Bayes vulnerability from the exact column maxima, their no-privacy bounds, and
Lemma 1's zero count from the exact column minima.

Independent references, written here from the definitions: Σ_x P(x) Σ_y K_xy 1[x ≠ y] and Σ_y max_x P(x) K_xy over
every entry in Fractions (not the diagonal or maxima shortcuts), the worst prior of Q_X(c) as the largest expectation
over its vertices c·1 + (1 − Nc) e_j (Dobrushin paper, Lemma 4), and zero counts by hand. ``float(Fraction)`` is
the correctly rounded value (Python's int / int), which each fast value must equal bit for bit.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import design
from mechdesign.certify.exact import GridKernel, to_grid
from mechdesign.certify.stage import certify_on_fine_grid
from mechdesign.objectives.exact_values import (
    exact_hamming_loss,
    exact_hamming_no_privacy_bound,
    exact_uniform_bayes_vulnerability,
)
from mechdesign.spec.models import load_spec
from mechdesign.theory import measures

SETTINGS = settings(max_examples=40, deadline=None)


def _kernel(rng, n, m, zeros=0.3, padded=0):
    """A row-stochastic N × (M + padded) float kernel, the last ``padded`` columns zero (outputs never used)."""
    K = rng.random((n, m))
    K[rng.random((n, m)) < zeros] = 0.0
    K[:, 0] += 1e-3
    K /= K.sum(axis=1, keepdims=True)
    return np.hstack([K, np.zeros((n, padded))])


def _random_prior(rng, n):
    w = [int(v) for v in rng.integers(1, 1000, size=n)]
    return [F(v, sum(w)) for v in w]


def _entries(kernel):
    return [[F(int(v), kernel.denominator) for v in row] for row in kernel.numerators]


def _hamming_brute(kernel, prior):
    """Σ_x P(x) Σ_y K_xy 1[x ≠ y], every entry in Fractions."""
    return sum(
        p * sum(v for y, v in enumerate(row) if y != x) for x, (p, row) in enumerate(zip(prior, _entries(kernel)))
    )


def _min_mass_vertices(n, c):
    return [[c + (1 - n * c) * (x == j) for x in range(n)] for j in range(n)]


# ------------------------------------------------------------------ Hamming loss
@SETTINGS
@given(
    n=st.integers(2, 14),
    m=st.integers(1, 18),
    padded=st.integers(0, 3),
    prior=st.sampled_from(["uniform", "random", "worst_min_mass", "worst_simplex"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_hamming_loss_is_the_exact_loss_correctly_rounded(n, m, padded, prior, seed):
    rng = np.random.default_rng(seed)
    exact = to_grid(_kernel(rng, n, m, padded=padded))  # on the grid 2^-52, rows summing to 1 exactly
    if prior == "uniform":
        want = _hamming_brute(exact, [F(1, n)] * n)
        got = exact_hamming_loss(exact, "uniform")
    elif prior == "random":
        P = _random_prior(rng, n)
        want = _hamming_brute(exact, P)
        got = exact_hamming_loss(exact, P)
    elif prior == "worst_min_mass":  # the largest expectation over the vertices of Q_X(c)
        c = F(1, 2 * n)
        want = max(_hamming_brute(exact, v) for v in _min_mass_vertices(n, c))
        got = exact_hamming_loss(exact, None, load_spec(_spec(n, n, c=c)).prior_set)
    else:  # the simplex: its vertices are the point masses, the worst row's loss
        want = max(_hamming_brute(exact, [F(int(x == j)) for x in range(n)]) for j in range(n))
        got = exact_hamming_loss(exact, None, load_spec(_spec(n, n, c=0)).prior_set)
    assert got == float(want)


def test_hamming_loss_of_a_hand_kernel():
    # K = [[1/2, 1/4, 1/4], [0, 1, 0]] (N = 2, M = 3), P = (1/3, 2/3): loss = 1/3 · 1/2 + 2/3 · 0 = 1/6
    D = 1 << 52
    kernel = GridKernel(np.array([[D // 2, D // 4, D // 4], [0, D, 0]], dtype=np.int64), D, stochastic=True)
    assert exact_hamming_loss(kernel, [F(1, 3), F(2, 3)]) == float(F(1, 6))
    # M < N: K = [[1/2], [1], [1]] has rows 1 and 2 past the last output, each losing 1: uniform loss (1/2 + 2) / 3
    kernel = GridKernel(np.array([[D], [D], [D]], dtype=np.int64), D, stochastic=True)
    assert exact_hamming_loss(kernel, "uniform") == float(F(2, 3))


@pytest.mark.parametrize("n,m", [(2, 1), (4, 4), (5, 3), (3, 7)])
@pytest.mark.parametrize("prior", ["uniform", "random", "worst"])
def test_hamming_no_privacy_bound_is_the_best_kernel_loss(n, m, prior):
    # the best kernel without privacy puts row x on output x: rows x >= M lose 1 (brute force over the 0/1 kernels
    # would give the same; written here from the loss's definition)
    rng = np.random.default_rng(n * m)
    losses = [F(int(x >= m)) for x in range(n)]
    if prior == "uniform":
        want, got = sum(losses) / n, exact_hamming_no_privacy_bound(n, m, "uniform", None)
    elif prior == "random":
        P = _random_prior(rng, n)
        want, got = sum(p * r for p, r in zip(P, losses)), exact_hamming_no_privacy_bound(n, m, P, None)
    else:
        c = F(1, 2 * n)
        want = max(sum(p * r for p, r in zip(v, losses)) for v in _min_mass_vertices(n, c))
        got = exact_hamming_no_privacy_bound(n, m, None, load_spec(_spec(n, n, c=c)).prior_set)
    assert got == float(want)


# ------------------------------------------------------------------ Bayes vulnerability, uniform prior
@SETTINGS
@given(n=st.integers(1, 14), m=st.integers(1, 18), padded=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
def test_uniform_bayes_vulnerability_is_exact_correctly_rounded(n, m, padded, seed):
    rng = np.random.default_rng(seed)
    exact = to_grid(_kernel(rng, n, m, padded=padded))
    assert exact_uniform_bayes_vulnerability(exact) is None or exact.known_column_aggregates() is not None
    exact.column_aggregates()  # as the exact check computes (or the fused rounding folds) them
    rows = _entries(exact)
    want = sum(max(F(1, n) * rows[x][y] for x in range(n)) for y in range(m + padded))
    assert exact_uniform_bayes_vulnerability(exact) == float(want)


def test_uniform_bayes_vulnerability_needs_known_maxima():
    D = 1 << 52
    kernel = GridKernel(np.array([[D // 2, D // 2], [D // 4, 3 * D // 4]], dtype=np.int64), D, stochastic=True)
    assert exact_uniform_bayes_vulnerability(kernel) is None  # no aggregates held: no pass for them
    kernel.column_aggregates()
    assert exact_uniform_bayes_vulnerability(kernel) == float(F(1, 2) * (F(1, 2) + F(3, 4)))


def test_fused_rounding_holds_the_maxima():
    # a kernel above the fused stage's size: its rounding folds the aggregates, so the value needs no pass
    rng = np.random.default_rng(7)
    n = 300
    K = _kernel(rng, n, n, zeros=0.0)
    out = certify_on_fine_grid(K, load_spec(_spec(n, n, c=F(1, 2 * n))).prior_set, F(1000), 52)
    assert out is not None and out.kernel.known_column_aggregates() is not None
    A = out.kernel.int64()
    want = F(sum(int(A[:, y].max()) for y in range(n)), n * out.kernel.denominator)
    assert exact_uniform_bayes_vulnerability(out.kernel) == float(want)


# ------------------------------------------------------------------ Lemma 1's zero count
def test_zeros_per_column_by_hand():
    D = 1 << 52
    # column 0: no zero; column 1: two zeros; column 2: one zero; column 3: all zero (an output never used)
    A = np.array([[D // 2, D // 2, 0, 0], [D // 2, 0, D // 2, 0], [D // 4, 0, 3 * D // 4, 0]], dtype=np.int64)
    kernel = GridKernel(A, D, stochastic=True)
    kernel.column_aggregates()
    assert measures.zeros_per_column(kernel) == 2
    # every entry positive: no zeros (read from the minima alone)
    B = np.array([[D // 2, D // 2], [D // 4, 3 * D // 4]], dtype=np.int64)
    kernel = GridKernel(B, D, stochastic=True)
    kernel.column_aggregates()
    assert measures.zeros_per_column(kernel) == 0
    # many columns, one of them with three zeros (counted over that column only): rows 0-2 move column 17's mass
    # to column 18
    C = np.full((4, 64), D // 64, dtype=np.int64)
    C[:3, 17] = 0
    C[:3, 18] = 2 * (D // 64)
    kernel = GridKernel(C, D)
    assert measures.zeros_per_column(kernel) == 3


# ------------------------------------------------------------------ designs report the exact objective, rounded
def _spec(n, m, kind="expected_loss", prior="uniform", c=None, prior_kind=None):
    if c is None:
        c = F(1, 2 * n)
    prior_set = {"kind": "simplex"} if c == 0 else {"kind": "min_mass", "c": str(c)}
    objective = {"kind": kind, "prior": prior}
    if kind == "expected_loss":
        objective["loss"] = "hamming"
    return {"alphabet": n, "epsilon": 1, "prior_set": prior_set, "objective": objective, "output_size": m}


@pytest.mark.parametrize(
    "n,m,kind,prior",
    [
        (12, 12, "expected_loss", "uniform"),
        (12, 15, "expected_loss", "random"),  # padded zero columns
        (12, 9, "expected_loss", "uniform"),  # M < N: rows past the last output
        (12, 12, "expected_loss", "worst_case"),
        (12, 14, "bayes_vulnerability", "uniform"),
        (260, 260, "expected_loss", "uniform"),  # the fused stage (N·M > 2^16)
        (260, 260, "bayes_vulnerability", "uniform"),
    ],
)
def test_design_reports_the_exact_objective_rounded(n, m, kind, prior):
    rng = np.random.default_rng(n + m)
    P = _random_prior(rng, n) if prior == "random" else None
    spec = _spec(n, m, kind, [str(p) for p in P] if P else prior)
    r = design(spec)
    assert r.certificate.feasible and r.status.value == "optimal"
    A, den = r.exact_kernel.int64(), r.exact_kernel.denominator
    assert A.shape == (n, m)
    if kind == "bayes_vulnerability":  # Σ_y max_x A_xy / (N D), Python integers
        want = F(sum(max(int(A[x, y]) for x in range(n)) for y in range(m)), n * den)
    else:
        off = [F(sum(int(A[x, y]) for y in range(m) if y != x), den) for x in range(n)]  # Σ_{y ≠ x} K_xy
        if prior == "worst_case":
            want = max(sum(p * o for p, o in zip(v, off)) for v in _min_mass_vertices(n, F(1, 2 * n)))
        else:
            want = sum(p * o for p, o in zip(P or [F(1, n)] * n, off))
    assert r.objective == float(want)
    # the dual bound stays on its side of the reported value
    assert r.certificate.dual_bound is not None
    if kind == "bayes_vulnerability":
        assert r.certificate.dual_bound >= r.objective
    else:
        assert r.certificate.dual_bound <= r.objective
