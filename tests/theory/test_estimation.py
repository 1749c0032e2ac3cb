"""The MLE's asymptotic error U = tr J⁻¹ − ‖P‖² against independent references."""

import math

import numpy as np
import pytest

from mechdesign.theory.accuracy import inversion_accuracy
from mechdesign.theory.estimation import fisher_information, mle_covariance, mle_error


def _krr(k, eps):
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    q = 1 / (math.exp(eps) + k - 1)
    return np.full((k, k), q) + (p - q) * np.eye(k), p, q


@pytest.mark.parametrize("k,eps", [(3, 0.5), (5, 1.0), (10, 2.0), (56, 1.0)])
def test_krr_matches_wang_et_al_variance(k, eps):
    # Wang, Blocki, Li, Jha (USENIX Security 2017), Var of the GRR estimate of a frequency f_x from n reports:
    # [q(1−q)/(p−q)² + f_x(1−p−q)/(p−q)]/n, plus the sampling variance f_x(1−f_x)/n of drawing X from P.
    K, p, q = _krr(k, eps)
    P = np.random.default_rng(k).dirichlet(np.ones(k))
    wang = k * q * (1 - q) / (p - q) ** 2 + (1 - p - q) / (p - q) + 1 - P @ P
    assert mle_error(K, P) == pytest.approx(wang, rel=1e-9)


def test_square_kernel_equals_inversion_error():
    rng = np.random.default_rng(3)
    K = rng.random((4, 4)) + np.eye(4)
    K /= K.sum(axis=1, keepdims=True)
    P = rng.dirichlet(np.ones(4))
    n = 1000
    assert mle_error(K, P) / n == pytest.approx(inversion_accuracy(K, P, n).expected_squared_error, rel=1e-9)


def test_identity_of_fisher_information_and_rank():
    rng = np.random.default_rng(5)
    K = rng.random((5, 8))
    K[:, 2] = 0.0  # a column nobody reaches is skipped
    K /= K.sum(axis=1, keepdims=True)
    P = rng.dirichlet(np.ones(5))
    J = fisher_information(K, P)
    assert np.allclose(J @ P, 1.0)
    C = mle_covariance(K, P)
    assert np.allclose(C @ np.ones(5), 0.0, atol=1e-10)  # the estimate stays on the simplex
    # rank-deficient design: two identical rows cannot be told apart
    K2 = K.copy()
    K2[1] = K2[0]
    assert mle_error(K2, P) == math.inf
    assert mle_error(np.ones((3, 1)), [0.2, 0.3, 0.5]) == math.inf


def test_textbook_closed_forms_against_explicit_kernels():
    import itertools

    from mechdesign.theory.estimation import krr_error, subset_selection_error

    for n, eps in [(5, 0.7), (8, 2.0)]:
        P = np.random.default_rng(n).dirichlet(np.ones(n))
        K, _, _ = _krr(n, eps)
        assert krr_error(n, eps, P) == pytest.approx(mle_error(K, P), rel=1e-10)
        for k in (1, 2, n - 1):
            subsets = list(itertools.combinations(range(n), k))
            S = np.array([[math.exp(eps) if x in s else 1.0 for s in subsets] for x in range(n)])
            S /= S.sum(axis=1, keepdims=True)
            uniform = np.full(n, 1 / n)
            assert subset_selection_error(n, eps, k) == pytest.approx(mle_error(S, uniform), rel=1e-10)
            assert subset_selection_error(n, eps, k, P) == pytest.approx(mle_error(S, P), rel=1e-10)
