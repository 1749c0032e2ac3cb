"""The certify stage's quantities outside certify/: the objective's value at the
emitted kernel, the no-privacy bound and Lemma 1's zero count, each computed once in O(NM) without transposed or
fancy-indexed copies. Each fast path is checked against an independent computation written here: brute force in
exact Fractions over the kernel (or over every deterministic kernel for the no-privacy bound), and, bit for bit,
the dense numpy formulas the certify stage used before (so every number a design reports stays the same double),
except where the stage now reports the exact value rounded once (the Hamming loss and the uniform Bayes
vulnerability and their no-privacy bounds, tests/objectives/test_certify_exact_values.py): those equal float(Fraction).
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import design
from mechdesign.certify.exact import to_grid
from mechdesign.objectives.compile import loss_matrix
from mechdesign.objectives.expected_loss import cheapest_row_losses, loss_rows, row_losses
from mechdesign.objectives.rays import bayes_kernel_utility, kernel_utility
from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.models import load_spec
from mechdesign.theory import bounds, measures

SETTINGS = settings(max_examples=40, deadline=None)


def _kernel(rng, n, m, zeros=0.3):
    K = rng.random((n, m))
    K[rng.random((n, m)) < zeros] = 0.0
    K[:, 0] += 1e-3  # no empty row
    return K / K.sum(axis=1, keepdims=True)


def _prior(rng, n):
    p = rng.random(n) + 0.05
    return [repr(float(v)) for v in p / p.sum()]


def _el_spec(n, m, loss, prior, prior_set=None):
    return load_spec(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": prior_set or {"kind": "simplex"},
            "objective": {"kind": "expected_loss", "loss": loss, "prior": prior},
            "output_size": m,
        }
    )


def _exact_prior(spec):
    """The prior as the objective averages under it: the spec's (normalised) masses, as doubles, exactly."""
    pr = spec.objective.prior
    return [F(1 / spec.n)] * spec.n if pr == "uniform" else [F(float(p)) for p in pr]


def _float_prior(spec):
    return np.array([float(p) for p in _exact_prior(spec)])


# ------------------------------------------------------------------ Bayes vulnerability
@SETTINGS
@given(n=st.integers(1, 40), m=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_bayes_value_is_the_column_maxima_sum(n, m, seed):
    rng = np.random.default_rng(seed)
    K, P = _kernel(rng, n, m), rng.random(n)
    got = bayes_kernel_utility(K, P)
    # bit for bit: the dense formula on K transposed (the maxima are exact, their sum the same pairwise sum)
    assert got == float((K.T * P[None, :]).max(axis=1).sum())
    # brute force in Fractions over the float entries: sum_y max_x P(x) K_xy
    exact = sum(max(F(float(P[x])) * F(float(K[x, y])) for x in range(n)) for y in range(m))
    assert abs(F(got) - exact) <= F(m + n, 2**50) * max(exact, F(1))


def test_bayes_value_with_more_rows_than_a_block():
    rng = np.random.default_rng(3)
    K, P = _kernel(rng, 700, 200), rng.random(700)  # 140000 entries: three blocks of rows
    assert bayes_kernel_utility(K, P) == float((K.T * P[None, :]).max(axis=1).sum())


@pytest.mark.parametrize("n,m,prior", [(3, 3, "uniform"), (5, 2, "uniform"), (4, 6, "dirichlet"), (7, 7, "dirichlet")])
def test_bayes_no_privacy_bound_is_the_identity_kernel_value(n, m, prior):
    rng = np.random.default_rng(n * m)
    pr = _prior(rng, n) if prior == "dirichlet" else "uniform"
    spec = load_spec(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "bayes_vulnerability", "prior": pr},
            "output_size": m,
        }
    )
    rules = objective_rules(spec)
    got = rules.unconstrained_bound()
    P = _exact_prior(spec)
    # the bound over all kernels is V at the identity (data processing): the same double as its value there
    assert got == rules.value(np.eye(n))
    # V(identity) = sum_x P(x): brute force in Fractions over the identity kernel
    exact = sum(max(P[x] * (1 if x == y else 0) for x in range(n)) for y in range(n))
    assert abs(F(got) - exact) <= F(n, 2**52)
    # and no kernel beats it: every deterministic kernel with m outputs (brute force)
    Pf = np.array([float(p) for p in P])
    for guess in itertools.product(range(m), repeat=n) if m**n <= 5000 else []:
        D = np.zeros((n, m))
        D[np.arange(n), guess] = 1.0
        assert rules.value(D) <= got + 1e-15
    assert got == pytest.approx(float(Pf.sum()), rel=0, abs=0)
    # the objective's value is the ray engine's sum of column utilities mu (on K transposed), bit for bit
    K = _kernel(rng, n, m)
    assert rules.value(K) == kernel_utility(spec, K)


# ------------------------------------------------------------------ expected loss
@pytest.mark.parametrize("loss", ["hamming", "absolute", "squared"])
@pytest.mark.parametrize("n,m", [(1, 1), (3, 3), (5, 3), (3, 5), (40, 2000), (300, 7)])
def test_loss_rows_and_cheapest_rows_match_the_loss_matrix(loss, n, m):
    spec = _el_spec(max(n, 2), m, loss, "uniform")
    L = loss_matrix(spec)
    for a, b in [(0, spec.n), (0, 1), (1, spec.n), (spec.n - 1, spec.n)]:
        assert np.array_equal(loss_rows(spec, a, b), L[a:b])
    # brute force: min over the outputs of each row, from the loss's definition
    f = {"hamming": lambda x, y: float(x != y), "absolute": lambda x, y: float(abs(x - y))}.get(
        loss, lambda x, y: float((x - y) ** 2)
    )
    brute = [min(f(x, y) for y in range(m)) for x in range(spec.n)]
    assert cheapest_row_losses(spec).tolist() == brute


@SETTINGS
@given(
    n=st.integers(2, 30),
    m=st.integers(1, 400),
    loss=st.sampled_from(["hamming", "absolute", "squared", "custom"]),
    uniform=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_expected_loss_value_and_no_privacy_bound(n, m, loss, uniform, seed):
    rng = np.random.default_rng(seed)
    lo = rng.normal(size=(n, m)).round(3).tolist() if loss == "custom" else loss
    pr = "uniform" if uniform else _prior(rng, n)
    spec = _el_spec(n, m, lo, pr)
    rules = objective_rules(spec)
    K, L = _kernel(rng, n, m), loss_matrix(spec)
    P = _float_prior(spec)
    value = rules.value(K)
    # bit for bit: the dense formula the certify stage used (an N x M product summed row by row)
    assert value == float(P @ (K * L).sum(axis=1))
    # brute force in Fractions over the float entries
    Pe, exact_L = _exact_prior(spec), [[F(float(v)) for v in row] for row in L]
    exact = sum(Pe[x] * sum(F(float(K[x, y])) * exact_L[x][y] for y in range(m)) for x in range(n))
    scale = max(F(1), max(abs(v) for row in exact_L for v in row))
    assert abs(F(value) - exact) <= F(4 * (m + n), 2**52) * scale
    # the no-privacy bound: the loss of the 0/1 kernel on each row's cheapest output, the same double as before
    bound = rules.unconstrained_bound()
    D = np.zeros((n, m))
    D[np.arange(n), np.argmin(L, axis=1)] = 1.0
    # brute force: sum_x P(x) min_y L(x,y) in Fractions, no deterministic kernel below it
    best = sum(Pe[x] * min(exact_L[x]) for x in range(n))
    assert abs(F(bound) - best) <= F(4 * n, 2**52) * scale
    if loss == "hamming":  # exact under the spec's own prior, rounded once (objectives/exact_values.py)
        Ps = [F(1, n)] * n if uniform else list(spec.objective.prior)
        assert bound == float(sum(Ps[x] * min(exact_L[x]) for x in range(n)))
    else:
        assert bound == float(P @ (D * L).sum(axis=1))


def test_expected_loss_no_privacy_bound_is_the_best_deterministic_kernel():
    # every deterministic kernel of a small problem, exact: the minimum is the bound (Q_X(c) worst case too)
    rng = np.random.default_rng(11)
    n, m = 4, 3
    lo = rng.integers(-3, 6, size=(n, m)).tolist()
    for prior, pset in [(_prior(rng, n), None), ("worst_case", {"kind": "min_mass", "c": "1/10"})]:
        spec = _el_spec(n, m, lo, prior, pset)
        rules = objective_rules(spec)
        if prior == "worst_case":  # vertices of Q_X(c): c + (1 - Nc) e_x
            c = F(1, 10)
            priors = [[c + (1 - n * c) * (x == z) for x in range(n)] for z in range(n)]
        else:
            priors = [_exact_prior(spec)]
        losses = []
        for guess in itertools.product(range(m), repeat=n):
            rows = [F(lo[x][guess[x]]) for x in range(n)]
            losses.append(max(sum(p[x] * rows[x] for x in range(n)) for p in priors))
        assert rules.unconstrained_bound() == pytest.approx(float(min(losses)), rel=1e-15, abs=1e-15)


def test_row_losses_blocks_match_one_dense_product():
    rng = np.random.default_rng(5)
    K, L = _kernel(rng, 900, 150), rng.normal(size=(900, 150))  # 135000 entries: several blocks of rows
    assert np.array_equal(row_losses(K, lambda a, b: L[a:b], 150), (K * L).sum(axis=1))


# ------------------------------------------------------------------ Lemma 1's zero count on the exact kernel
@SETTINGS
@given(n=st.integers(1, 30), m=st.integers(1, 120), seed=st.integers(0, 2**32 - 1), empty=st.booleans())
def test_zeros_per_column_on_the_exact_kernel(n, m, seed, empty):
    rng = np.random.default_rng(seed)
    K = _kernel(rng, n, m, zeros=0.6)
    if empty and m > 1:
        K[:, -1] = 0.0  # an output that never occurs is not counted
        K /= K.sum(axis=1, keepdims=True)
    exact = to_grid(K)
    # brute force over the exact entries: the most zeros in a column with a non-zero entry
    cols = [[exact.numerators[x, y] for x in range(n)] for y in range(m)]
    brute = max([sum(v == 0 for v in col) for col in cols if any(v != 0 for v in col)], default=0)
    assert measures.zeros_per_column(exact) == brute
    assert measures.zeros_per_column(exact.to_float()) == brute


def test_bounds_for_an_exact_kernel_match_its_floats():
    rng = np.random.default_rng(2)
    K = _kernel(rng, 60, 60, zeros=0.5)  # 3600 entries > MAX_ENTRIES: only Lemma 1
    exact = to_grid(K)
    spec = _el_spec(60, 60, "hamming", "uniform", {"kind": "min_mass", "c": "1/120"})
    assert bounds.applicable_bounds(spec, exact) == bounds.applicable_bounds(spec, exact.to_float())
    assert bounds.applicable_bounds(spec, exact)  # Lemma 1 is listed


# ------------------------------------------------------------------ a design reports the values of its own kernel
@pytest.mark.parametrize("kind", ["expected_loss", "bayes_vulnerability"])
def test_design_reports_the_dense_formulas_values(kind):
    n = 30
    spec = {
        "alphabet": n,
        "epsilon": 1,
        "prior_set": {"kind": "min_mass", "c": f"1/{2 * n}"},
        "objective": {"kind": kind, "prior": "uniform"} | ({"loss": "absolute"} if kind == "expected_loss" else {}),
        "output_size": n,
    }
    r = design(spec)
    K, P = r.kernel, np.full(n, 1.0 / n)
    if kind == "expected_loss":
        i = np.arange(n)
        assert r.objective == float(P @ (K * np.abs(i[:, None] - i[None, :]).astype(float)).sum(axis=1))
    else:
        # exact from the exact kernel and rounded once (objectives/exact_values.py): within the
        # dense float formula's own rounding of it
        A = r.exact_kernel.numerators
        exact_v = F(sum(max(int(A[x, y]) for x in range(n)) for y in range(n)), n * r.exact_kernel.denominator)
        assert r.objective == float(exact_v)
        assert abs(r.objective - float((K.T * P[None, :]).max(axis=1).sum())) <= 1e-15 * r.objective
    assert r.certificate.feasible
