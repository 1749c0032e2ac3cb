"""The inversion accuracy past N = 200, where (Kᵀ)⁺ comes from the Cholesky factor of K Kᵀ (theory/accuracy.py),
against the k-RR textbook variance (Wang, Blocki, Li, Jha, USENIX Security 2017: Var of the generalised randomised
response estimate, plus the sampling variance f(1 − f)/n of drawing X from a uniform prior, law of total variance)
and against the rank test of an SVD."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.theory.accuracy import inversion_accuracy, inversion_matrix, kernel_rank


def krr(k: int, e: float) -> np.ndarray:
    K = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(K, e / (e + k - 1))
    return K


@pytest.mark.parametrize("k, e", [(250, 3.0), (400, 20.0)])
def test_krr_accuracy_past_n_200_is_the_textbook_variance(k, e):
    n = 1000
    p, q, f = e / (e + k - 1), 1 / (e + k - 1), 1.0 / k
    var = q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q)) + f * (1 - f) / n
    acc = inversion_accuracy(krr(k, e), np.ones(k), n)
    assert acc.expected_squared_error == pytest.approx(k * var, rel=1e-9)
    assert acc.standard_deviations == pytest.approx(np.full(k, np.sqrt(var)), rel=1e-9)


def test_inversion_matrix_past_n_200_is_the_pseudo_inverse_with_more_outputs_than_inputs():
    rng = np.random.default_rng(3)
    K = rng.dirichlet(np.ones(300), size=230)  # 230 × 300, full row rank
    np.testing.assert_allclose(inversion_matrix(K), np.linalg.pinv(K.T), rtol=0, atol=1e-9)


def test_a_rank_deficient_kernel_past_n_200_is_refused_with_its_rank():
    K = krr(240, 3.0)
    K[7] = K[8]  # two equal rows: rank 239 (numpy's SVD rank says the same)
    assert np.linalg.matrix_rank(K) == 239 and kernel_rank(K) == 239
    with pytest.raises(ValueError, match="rank 239 < N = 240"):
        inversion_matrix(K)
