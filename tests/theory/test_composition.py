"""Repeated release and parallel composition: the efficient computation against the product
channel written out in full, with the worst-case prior computed by Lemma 4 of the Dobrushin paper in the
test itself."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import pytest

from helpers.krr import krr_exact
from mechdesign import design
from mechdesign.spec.models import MinMass, Point, Simplex
from mechdesign.theory.composition import parallel_composition, product_kernel, repeated_release


def full_product(K: list[list[F]], k: int) -> list[list[F]]:
    """K^{⊗k}: every output sequence as its own column (M^k columns)."""
    n, m = len(K), len(K[0])
    cols = []
    for seq in itertools.product(range(m), repeat=k):
        cols.append([math.prod((K[x][y] for y in seq), start=F(1)) for x in range(n)])
    return [[col[x] for col in cols] for x in range(n)]


def lemma4_capacity(K: list[list[F]], c: F) -> F:
    """max over columns of max_x k_x / (c Σ_x k_x + (1 − Nc) min_x k_x) (Lemma 4), exactly."""
    n = len(K)
    worst = F(1)
    for col in zip(*K):
        if max(col) > 0:
            worst = max(worst, max(col) / (c * sum(col) + (1 - n * c) * min(col)))
    return worst


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_krr_k_fold_ldp_is_exactly_k_epsilon(k):
    """k reports of k-RR with e^ε = 3: the worst sequence repeats one output, ratio 3^k exactly."""
    K = krr_exact(4, 3)
    rr = repeated_release(K, Simplex(kind="simplex"), k)
    assert rr.exact
    assert rr.ldp == pytest.approx(k * math.log(3), rel=1e-15)
    assert rr.epsilon == pytest.approx(k * math.log(3), rel=1e-15)  # over all priors, PML sup = LDP
    assert rr.worst_counts is not None and sorted(rr.worst_counts)[-1] == k


@pytest.mark.parametrize("k", [2, 3])
def test_min_mass_design_repeated_equals_the_full_product_channel(k):
    c = F(1, 20)
    res = design(
        {
            "alphabet": 4,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": "1/20"},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
        }
    )
    K = res.exact_kernel.fractions()
    rr = repeated_release(res.exact_kernel, MinMass(kind="min_mass", c=c), k)
    ref = lemma4_capacity(full_product(K, k), c)
    assert rr.exact
    assert rr.epsilon == pytest.approx(math.log(ref), rel=1e-12, abs=1e-15)
    assert rr.epsilon > res.certificate.leakage - 1e-12  # k reports never cost less than one


def test_point_prior_repeated_equals_the_full_product_channel():
    prior = [F(1, 10), F(2, 10), F(3, 10), F(4, 10)]
    K = [
        [F(1, 2), F(1, 4), F(1, 4)],
        [F(1, 3), F(1, 3), F(1, 3)],
        [F(1, 8), F(3, 8), F(1, 2)],
        [F(1, 5), F(2, 5), F(2, 5)],
    ]
    full = full_product(K, 3)
    ref = max(max(col) / sum(p * v for p, v in zip(prior, col)) for col in zip(*full))
    rr = repeated_release(K, Point(kind="point", prior=prior), 3)
    assert rr.epsilon == pytest.approx(math.log(ref), rel=1e-13)


def test_bound_past_the_multiset_limit_is_a_true_bound():
    c = F(1, 20)
    K = krr_exact(4, 3)
    exact = repeated_release(K, MinMass(kind="min_mass", c=c), 6)
    bound = repeated_release(K, MinMass(kind="min_mass", c=c), 6, max_multisets=10)
    assert exact.exact and not bound.exact
    assert bound.epsilon >= exact.epsilon - 1e-12
    assert bound.epsilon == pytest.approx(min(6 * math.log(3), math.log(20)))


def test_parallel_composition_is_additive_on_independent_secrets():
    """Against the product kernel under every product of vertex priors (the sup over product priors
    is attained at pairs of vertices, since ℓ factorises)."""
    K1, K2 = krr_exact(3, 2), [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]]
    c1, c2 = F(1, 10), F(1, 5)
    P = product_kernel(K1, K2)
    v1 = [[c1 + (1 - 3 * c1) * (i == j) for i in range(3)] for j in range(3)]
    v2 = [[c2 + (1 - 2 * c2) * (i == j) for i in range(2)] for j in range(2)]
    worst = F(1)
    for a in v1:
        for b in v2:
            prior = [pa * pb for pa in a for pb in b]
            for col in zip(*P):
                worst = max(worst, max(col) / sum(p * v for p, v in zip(prior, col)))
    total = parallel_composition(K1, MinMass(kind="min_mass", c=c1), K2, MinMass(kind="min_mass", c=c2))
    assert total == pytest.approx(math.log(worst), rel=1e-13)


def test_bad_k_is_refused():
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        repeated_release(krr_exact(2, 2), Simplex(kind="simplex"), 0)


def test_analyze_reports_the_cost_of_k_reports(tmp_path, capsys):
    """`analyze --repeated 3` on binary randomized response with e^ε = 3: 3 reports cost 3 log 3."""
    from mechdesign.cli import main

    path = tmp_path / "rr.csv"
    path.write_text("0.75,0.25\n0.25,0.75\n")
    assert main(["analyze", str(path), "--repeated", "3"]) == 0
    out = capsys.readouterr().out
    assert f"3 reports cost eps_3 = {3 * math.log(3):.6g} nats (exact" in out
    assert main(["analyze", str(path), "--repeated", "0"]) == 2
    assert "--repeated: must be an integer >= 1, found 0" in capsys.readouterr().err
