"""The MLE's asymptotic error U = tr J⁻¹ − ‖P‖² (mechdesign.theory.estimation) against independent references.

* k-ary randomized response: the textbook variance of its frequency estimate, Wang, Blocki, Li, Jha
  (USENIX Security 2017, generalized randomized response), for a fixed population, plus P(1 − P) for
  records drawn i.i.d. from P (the law of total variance).
* A square invertible kernel: U is n times the inversion estimator's exact error.
* Kernels with more outputs than secrets: a Monte Carlo of the MLE itself (EM), for both estimands.
  Tolerance: |mean − U| ≤ 4 standard errors of the mean (a false alarm ≈ 6e-5 per check); seeds fixed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.krr import krr
from mechdesign import design
from mechdesign.measures import inversion_accuracy, mle_covariance, mle_error
from mechdesign.release.estimate import em_mle
from mechdesign.theory.estimation import mle_accuracy_summary


@pytest.mark.parametrize("k,eps", [(2, 1.0), (5, math.log(3)), (8, 2.5)])
def test_krr_error_is_the_textbook_variance(k, eps):
    e = math.exp(eps)
    prior = np.random.default_rng(k).dirichlet(np.ones(k))
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    # Wang et al.: n Var(p_hat_x) = q(1-q)/(p-q)^2 + f_x(1-p-q)/(p-q) for a fixed population f
    population = q * (1 - q) / (p - q) ** 2 + prior * (1 - p - q) / (p - q)
    C = mle_covariance(krr(k, e), prior, "population")
    np.testing.assert_allclose(np.diag(C), population, rtol=1e-10)
    assert mle_error(krr(k, e), prior, "population") == pytest.approx(population.sum(), rel=1e-10)
    records = population + prior * (1 - prior)
    assert mle_error(krr(k, e), prior) == pytest.approx(records.sum(), rel=1e-10)
    s = mle_accuracy_summary(krr(k, e), prior, 1000)
    np.testing.assert_allclose(s["records"]["standard_deviations"], np.sqrt(records / 1000), rtol=1e-9)
    assert s["records"]["rmse"] == pytest.approx(math.sqrt(records.sum() / 1000), rel=1e-9)


def test_square_invertible_kernel_error_equals_the_inversion_estimators():
    result = design(
        {
            "alphabet": 4,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": 0.1},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
        }
    )
    K = np.asarray(result.kernel, dtype=float)
    assert K.shape == (4, 4) and np.linalg.matrix_rank(K) == 4
    prior = [0.1, 0.2, 0.3, 0.4]
    assert mle_error(K, prior) == pytest.approx(inversion_accuracy(K, prior, 1).per_report, rel=1e-9)


def test_a_kernel_of_rank_below_n_has_infinite_error():
    K = np.array([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]])
    assert mle_error(K, [0.2, 0.3, 0.5]) == math.inf and mle_covariance(K, [0.2, 0.3, 0.5]) is None
    s = mle_accuracy_summary(K, [0.2, 0.3, 0.5], 100)
    assert not s["identifiable"] and s["records"]["expected_squared_error"] is None and "rank 2" in s["error"]


@pytest.mark.parametrize("seed", [0, 1])
def test_monte_carlo_of_the_mle_matches_u_for_both_estimands(seed):
    rng = np.random.default_rng(seed)
    n_sym, m, n, reps = 3, 6, 20_000, 400
    K = rng.dirichlet(np.ones(m), size=n_sym)  # M > N: the MLE is not the inversion estimate
    prior = np.array([0.2, 0.3, 0.5])
    # records i.i.d. from P: counts ~ Multinomial(n, K^T P)
    C = rng.multinomial(n, K.T @ prior, size=reps)
    fit = em_mle(K, C)
    assert fit.converged.all()
    err = n * ((fit.p - prior) ** 2).sum(axis=1)
    se = err.std(ddof=1) / math.sqrt(reps)
    assert abs(err.mean() - mle_error(K, prior)) <= 4 * se, (err.mean(), mle_error(K, prior), se)
    # the collected population's frequencies f = P exactly: each record's output drawn from its row
    counts_x = (n * prior).astype(int)
    C_pop = sum(rng.multinomial(counts_x[x], K[x], size=reps) for x in range(n_sym))
    fit_pop = em_mle(K, C_pop)
    err_pop = n * ((fit_pop.p - prior) ** 2).sum(axis=1)
    se_pop = err_pop.std(ddof=1) / math.sqrt(reps)
    u_pop = mle_error(K, prior, "population")
    assert abs(err_pop.mean() - u_pop) <= 4 * se_pop, (err_pop.mean(), u_pop, se_pop)
    assert u_pop == pytest.approx(mle_error(K, prior) - (1 - (prior**2).sum()), rel=1e-9)
