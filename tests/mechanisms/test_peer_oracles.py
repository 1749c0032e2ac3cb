"""mechdesign's structured mechanisms against pure-ldp's own clients and servers (the optional ``peers`` extra):
the same family at the same ε releases reports with the same distribution and decodes with the same error.

* Hadamard response (Acharya, Sun and Zhang, AISTATS 2019): pure-ldp's ``HadamardResponseClient`` for ε ≤ 1 is
  the paper's high-privacy variant (``Hadamard_Rand_high_priv``: row x + 1 of the Sylvester–Hadamard matrix of
  order K = 2^⌈log2(k + 1)⌉, output in C_x with probability e^ε / (1 + e^ε)), the variant mechdesign implements;
  above ε = 1 pure-ldp switches to the blocked general variant, a different family, so ε = 1 is compared here.
* k-RR: pure-ldp's direct encoding (``DEClient``/``DEServer``, Wang et al., USENIX Security 2017).
* Optimised unary encoding: pure-ldp's ``UEClient(use_oue=True)`` (Wang et al. 2017, section 4.3).

Reference values: the two libraries' samples against each other (two-sample chi-square), and each side's mean
squared error against the variance of the unbiased estimator derived below from the two-level form
(p* = P(report supports x | x), q* = P(report supports x | x' ≠ x)), for one fixed population.
"""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from mechdesign.mechanisms import hadamard_response, krr, unary_encoding

pure_ldp = pytest.importorskip("pure_ldp.frequency_oracles")  # needs scikit-learn and statsmodels (extra `peers`)

# pure-ldp 1.2's Hadamard response client calls random.randint with a float bound: deprecated in Python 3.10 and 3.11,
# a TypeError from 3.12 on (where its client cannot run at all)
pytestmark = pytest.mark.filterwarnings("ignore:non-integer arguments to randrange:DeprecationWarning")
HR_RUNS = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="pure-ldp 1.2's Hadamard response client needs Python < 3.12"
)
FAMILIES = [pytest.param("hadamard_response", marks=HR_RUNS), "krr", "unary_encoding"]

K_SYMBOLS = 20
EPS = 1.0
N_RECORDS = 4000
REPS = 30


def _population():
    """A fixed, skewed population of N_RECORDS records on K_SYMBOLS symbols (weights ∝ 1/(x + 1))."""
    w = 1 / np.arange(1, K_SYMBOLS + 1)
    x = np.random.default_rng(7).choice(K_SYMBOLS, size=N_RECORDS, p=w / w.sum())
    return x, np.bincount(x, minlength=K_SYMBOLS) / N_RECORDS


def _pure_ldp(family):
    """pure-ldp's client and server for ``family`` at (EPS, K_SYMBOLS); the server is fresh for each call."""
    if family == "hadamard_response":
        server = pure_ldp.HadamardResponseServer(EPS, K_SYMBOLS)
        return pure_ldp.HadamardResponseClient(EPS, K_SYMBOLS, server.get_hash_funcs()), server
    if family == "krr":
        return pure_ldp.DEClient(EPS, K_SYMBOLS), pure_ldp.DEServer(EPS, K_SYMBOLS)
    return pure_ldp.UEClient(EPS, K_SYMBOLS, use_oue=True), pure_ldp.UEServer(EPS, K_SYMBOLS, use_oue=True)


def _seed_pure_ldp(seed):
    random.seed(seed)  # pure-ldp draws from both the random module and numpy's global generator
    np.random.seed(seed)


def _mechdesign(family):
    return {"hadamard_response": hadamard_response, "krr": krr, "unary_encoding": unary_encoding}[family](
        K_SYMBOLS, str(EPS)
    )


def _pure_ldp_support(family):
    """(p*, q*) of pure-ldp's parameters, from the papers: HR q* = 1/2 (two rows of H agree on half the
    columns); DE p = e^ε / (e^ε + k − 1), q = 1 / (e^ε + k − 1); OUE p = 1/2, q = 1 / (e^ε + 1)."""
    e = math.exp(EPS)
    return {
        "hadamard_response": (e / (1 + e), 0.5),
        "krr": (e / (e + K_SYMBOLS - 1), 1 / (e + K_SYMBOLS - 1)),
        "unary_encoding": (0.5, 1 / (e + 1)),
    }[family]


def _expected_mse(f, n, p, q):
    """E Σ_x (f̂_x − f_x)² of the unbiased estimator f̂_x = (S_x / n − q) / (p − q), S_x the number of reports
    supporting x, for the fixed population with frequencies f: the n reports are independent, a record of x
    supports x with probability p and a record of x' ≠ x with probability q, so
    Var S_x = n f_x p (1 − p) + n (1 − f_x) q (1 − q) and Var f̂_x = Var S_x / (n (p − q))²."""
    return float(np.sum(f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2))


@pytest.mark.parametrize("family", FAMILIES)
def test_mean_squared_error_agrees_with_pure_ldp_and_with_the_variance(family):
    x, f = _population()
    ours = _mechdesign(family)
    err_ours, err_peer = [], []
    for r in range(REPS):
        est = ours.estimate(ours.privatize_indices(x, rng=100 + r)).estimate
        err_ours.append(np.sum((est - f) ** 2))
        _seed_pure_ldp(1000 + r)
        client, server = _pure_ldp(family)
        server.aggregate_all([client.privatise(int(v) + 1) for v in x])  # pure-ldp indexes items from 1
        est = np.array(server.estimate_all(range(1, K_SYMBOLS + 1), suppress_warnings=True)) / N_RECORDS
        err_peer.append(np.sum((est - f) ** 2))
    m1, s1 = np.mean(err_ours), np.std(err_ours, ddof=1) / math.sqrt(REPS)
    m2, s2 = np.mean(err_peer), np.std(err_peer, ddof=1) / math.sqrt(REPS)
    assert abs(m1 - m2) <= 4 * math.hypot(s1, s2), (m1, s1, m2, s2)
    p_ours, q_ours = (float(v) for v in ours.support_probabilities())
    assert abs(m1 - _expected_mse(f, N_RECORDS, p_ours, q_ours)) <= 4 * s1
    assert abs(m2 - _expected_mse(f, N_RECORDS, *_pure_ldp_support(family))) <= 4 * s2


@pytest.mark.parametrize("family", FAMILIES[:2])
@pytest.mark.parametrize("symbol", [0, 6, K_SYMBOLS - 1])
def test_reports_of_one_symbol_have_pure_ldps_distribution(family, symbol):
    """Two-sample chi-square on the output histograms of 6000 releases of one symbol by each library (the
    outputs are the same integers: HR's column index in [0, K), k-RR's symbol index)."""
    m = 6000
    ours = _mechdesign(family)
    mine = ours.privatize_indices(np.full(m, symbol), rng=symbol).values
    _seed_pure_ldp(symbol)
    client, _ = _pure_ldp(family)
    theirs = np.array([client.privatise(symbol + 1) for _ in range(m)])
    size = ours.output_size()
    assert mine.max() < size and 0 <= theirs.min() and theirs.max() < size
    table = np.array([np.bincount(mine, minlength=size), np.bincount(theirs, minlength=size)])
    table = table[:, table.sum(axis=0) > 0]
    assert table.shape[1] == size  # every output occurs: neither library has a dead output
    assert chi2_contingency(table).pvalue > 1e-4
