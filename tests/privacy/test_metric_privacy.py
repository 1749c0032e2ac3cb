"""Metric (d-)privacy and combined guarantees.

Expected values come from: libqif's ``d_privacy.min_loss_given_d`` (an optional test dependency); an
independent all-pairs LP written here with scipy's HiGHS (every ordered pair x, x', no graph reduction,
Lemma 4 of the Dobrushin paper written pairwise for Q_X(c)); the truncated geometric mechanism with an
optimal remap (Ghosh, Roughgarden, Sundararajan, "Universally utility-maximizing privacy mechanisms",
STOC 2009); k-ary randomized response for LDP (Kairouz, Oh, Viswanath 2014: expected Hamming loss
(N − 1)/(e^ε + N − 1) under a uniform prior); mpmath at 60 digits for the exact check.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign import design
from mechdesign.certify.exact import ExactKernel
from mechdesign.privacy.metric import check_metric, graph_edges, metric_distances
from mechdesign.spec.errors import SpecError
from mechdesign.spec.models import load_spec


# ----------------------------------------------------------------- independent all-pairs LP (scipy)
def allpairs_lp(prior, L, d, eps, min_mass=None):
    """min Σ_x P(x) Σ_y L(x,y) K_xy over row-stochastic K with K_xy ≤ e^{eps d(x,x')} K_x'y for EVERY ordered
    pair (x, x') and y; optionally also (eps1, Q_X(c))-PML written pairwise (Lemma 4, Dobrushin paper):
    K_x''y ≤ e^{eps1} (c Σ_x K_xy + (1 − Nc) K_x'y) for all x'', x', y."""
    n, m = L.shape
    idx = lambda x, y: x * m + y
    A, b = [], []
    for x in range(n):
        for z in range(n):
            if x == z:
                continue
            for y in range(m):
                row = np.zeros(n * m)
                row[idx(x, y)] = math.exp(-eps * d[x][z])  # scaled by e^{-eps d}: coefficients <= 1
                row[idx(z, y)] -= 1.0
                A.append(row)
                b.append(0.0)
    if min_mass is not None:
        eps1, c = min_mass
        for x2 in range(n):
            for x1 in range(n):
                for y in range(m):
                    row = np.zeros(n * m)
                    row[idx(x2, y)] += 1.0
                    for x in range(n):
                        row[idx(x, y)] -= math.exp(eps1) * c
                    row[idx(x1, y)] -= math.exp(eps1) * (1 - n * c)
                    A.append(row)
                    b.append(0.0)
    Aeq = np.zeros((n, n * m))
    for x in range(n):
        Aeq[x, x * m : (x + 1) * m] = 1.0
    cost = (np.asarray(prior)[:, None] * L).ravel()
    res = linprog(cost, A_ub=np.array(A), b_ub=b, A_eq=Aeq, b_eq=np.ones(n), bounds=(0, 1), method="highs")
    assert res.status == 0
    return res.fun


def _spec(n, eps, metric, loss="absolute", prior="uniform", extra=()):
    return {
        "alphabet": n,
        "privacy": [*extra, {"epsilon": eps, "metric": metric}],
        "objective": {"kind": "expected_loss", "loss": loss, "prior": prior},
    }


def _prior(n, kind):
    if kind == "uniform":
        return [Fraction(1, n)] * n
    w = [Fraction(1 + (3 * i) % 7) for i in range(n)]  # non-uniform, fixed
    s = sum(w)
    return [v / s for v in w]


# ----------------------------------------------------------------- against libqif
# ε·(N−1) ≤ 15: libqif writes every pair with the coefficient e^{ε d} (up to e^{ε(N−1)}); past ~e^{20} its
# LP drops the tiny reciprocal terms and returns a kernel of a relaxed problem (zeros where the constraint
# needs positive mass; benchmarks/metric_vs_qif.py shows it failing the exact check). Our rows along the
# edges only carry e^{−ε}.
@pytest.mark.parametrize(
    "n,eps",
    [
        (10, 0.3),
        (10, 1.0),
        (20, 0.25),
        (20, 0.6),
        pytest.param(30, 0.2, marks=pytest.mark.slow),
        pytest.param(30, 0.45, marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("prior_kind", ["uniform", "nonuniform"])
def test_absolute_metric_matches_libqif(n, eps, prior_kind):
    qif = pytest.importorskip("qif")
    prior = _prior(n, prior_kind)
    pi = np.array([float(p) for p in prior])
    C = qif.mechanism.d_privacy.min_loss_given_d(
        pi, n, qif.metric.scale(qif.metric.euclidean(), eps), qif.metric.euclidean()
    )
    L = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(float)
    expected = float((pi[:, None] * C * L).sum())
    result = design(_spec(n, eps, {"kind": "absolute"}, prior=[str(p) for p in prior]))
    assert result.is_ok
    assert result.certificate.feasible
    assert result.objective == pytest.approx(expected, abs=1e-7)
    # independently of our checker: every pair and output at 60 digits
    _assert_metric_private_mpmath(result.exact_kernel, np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]), eps)


def _assert_metric_private_mpmath(kernel: ExactKernel, d, eps):
    mpmath.mp.dps = 60
    K = kernel.fractions()
    n = len(K)
    for x in range(n):
        for z in range(n):
            bound = mpmath.exp(mpmath.mpf(eps) * mpmath.mpf(float(d[x][z])))
            for a, b in zip(K[x], K[z]):
                assert mpmath.mpf(a.numerator) / a.denominator <= bound * mpmath.mpf(b.numerator) / b.denominator


def test_grid_metric_matches_libqif_and_allpairs_lp():
    """Geo-indistinguishability on a 3 x 3 grid, loss = Euclidean distance: libqif with the distance matrix,
    and the all-pairs scipy LP."""
    qif = pytest.importorskip("qif")
    n, eps = 9, 0.7
    pts = [(i // 3, i % 3) for i in range(n)]
    D = np.array([[math.dist(p, q) for q in pts] for p in pts])
    pi = np.full(n, 1.0 / n)
    C = qif.mechanism.d_privacy.min_loss_given_d(
        pi, n, qif.metric.scale(qif.metric.from_distance_matrix(D), eps), qif.metric.from_distance_matrix(D)
    )
    expected = float((pi[:, None] * C * D).sum())
    result = design(
        {
            "alphabet": n,
            "privacy": [{"epsilon": eps, "metric": {"kind": "grid", "shape": [3, 3]}}],
            "objective": {"kind": "expected_loss", "loss": D.tolist()},
        }
    )
    assert result.is_ok
    assert result.objective == pytest.approx(expected, abs=1e-7)
    assert result.objective == pytest.approx(allpairs_lp(pi, D, D, eps), abs=1e-7)
    _assert_metric_private_mpmath(result.exact_kernel, D, eps)


# ----------------------------------------------------------------- closed forms
def _geometric_remap_loss(n, eps, prior, L):
    """Ghosh–Roughgarden–Sundararajan: the truncated geometric mechanism (α = e^{−ε}), G_x(y) ∝ α^{|x−y|}
    with the tails folded onto 0 and N−1, followed by the best deterministic remap y ↦ ŷ, is optimal for
    ε·|x − x'|-privacy and every loss monotone in |x − y|; its loss is Σ_y min_ŷ Σ_x P(x) G_x(y) L(x, ŷ)."""
    a = math.exp(-eps)
    G = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            G[x, y] = a ** abs(x - y) * ((1 - a) / (1 + a) if 0 < y < n - 1 else 1 / (1 + a))
    P = np.asarray(prior, float)
    return float(sum(min((P * G[:, y] * L[:, yh]).sum() for yh in range(n)) for y in range(n)))


@pytest.mark.parametrize("n,eps,loss", [(8, 0.5, "absolute"), (12, 1.0, "squared"), (15, 0.2, "absolute")])
@pytest.mark.parametrize("prior_kind", ["uniform", "nonuniform"])
def test_geometric_mechanism_is_optimal_on_a_line(n, eps, loss, prior_kind):
    prior = _prior(n, prior_kind)
    x = np.arange(n)
    L = np.abs(x[:, None] - x[None, :]) if loss == "absolute" else (x[:, None] - x[None, :]) ** 2
    result = design(_spec(n, eps, {"kind": "absolute"}, loss=loss, prior=[str(p) for p in prior]))
    assert result.is_ok
    assert result.objective == pytest.approx(_geometric_remap_loss(n, eps, prior, L.astype(float)), abs=1e-8)


@pytest.mark.parametrize("n,eps", [(3, 0.5), (6, 1.0), (10, 2.0)])
def test_discrete_metric_is_ldp_randomized_response(n, eps):
    result = design(_spec(n, eps, {"kind": "discrete"}, loss="hamming"))
    assert result.is_ok
    assert result.objective == pytest.approx((n - 1) / (math.exp(eps) + n - 1), abs=1e-9)
    # the same as the epsilon + prior_set form with the simplex (eps-LDP)
    ldp = design(
        {
            "alphabet": n,
            "epsilon": eps,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
        }
    )
    assert result.objective == pytest.approx(ldp.objective, abs=1e-9)


# ----------------------------------------------------------------- the graph reduction
def test_matrix_metric_reduction_follows_the_graph_and_keeps_the_optimum():
    """d = shortest-path metric of a random weighted graph (Floyd–Warshall here): the kept pairs are edges of
    the graph, and the optimum equals the all-pairs LP's."""
    rng = np.random.default_rng(3)
    n = 7
    W = np.full((n, n), np.inf)
    np.fill_diagonal(W, 0)
    edges = {(i, i + 1) for i in range(n - 1)} | {(0, 4), (2, 6), (1, 5)}
    for i, j in edges:
        W[i, j] = W[j, i] = int(rng.integers(1, 5))
    d = W.copy()
    for k in range(n):
        d = np.minimum(d, d[:, [k]] + d[[k], :])
    spec = load_spec(
        {
            "alphabet": n,
            "privacy": [{"epsilon": 0.4, "metric": {"kind": "matrix", "d": d.astype(int).tolist()}}],
            "objective": {"kind": "expected_loss", "loss": "absolute"},
        }
    )
    kept = graph_edges(spec.privacy[0].metric, n)
    assert all((min(i, j), max(i, j)) in edges for i, j in kept)
    assert len(kept) < n * (n - 1)
    result = design(spec)
    assert result.is_ok
    L = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(float)
    assert result.objective == pytest.approx(allpairs_lp(np.full(n, 1 / n), L, d, 0.4), abs=1e-8)


def test_grid_edges_are_the_pairs_with_no_grid_point_between():
    spec = load_spec(
        {
            "alphabet": 12,
            "privacy": [{"epsilon": 1, "metric": {"kind": "grid", "shape": [3, 4]}}],
            "objective": {"kind": "expected_loss"},
        }
    )
    kept = set(graph_edges(spec.privacy[0].metric, 12))
    pts = [(i // 4, i % 4) for i in range(12)]
    for p in range(12):
        for q in range(12):
            if p == q:
                continue
            # brute force: some other grid point z with |pz| + |zq| = |pq| (collinear, in between)
            between = any(
                z not in (p, q)
                and abs(math.dist(pts[p], pts[z]) + math.dist(pts[z], pts[q]) - math.dist(pts[p], pts[q])) < 1e-12
                for z in range(12)
            )
            assert ((p, q) in kept) == (not between)


def test_grid_distances_are_exact():
    spec = load_spec(
        {
            "alphabet": 6,
            "privacy": [{"epsilon": 1, "metric": {"kind": "grid", "shape": [2, 3], "spacing": "1/2"}}],
            "objective": {"kind": "expected_loss"},
        }
    )
    dist = metric_distances(spec.privacy[0].metric, 6)
    assert dist.text(0, 5) == "(1/2)*sqrt(5)"  # (0,0)-(1,2)
    assert dist.text(0, 2) == "(1)"  # (0,0)-(0,2): 2 * 1/2
    assert dist.value(0, 4) == pytest.approx(math.sqrt(2) / 2)


# ----------------------------------------------------------------- the exact check
def test_check_metric_is_exact_at_the_boundary():
    """A two-row kernel whose ratio is a rational just below / just above e^{0.5}: mpmath decides the truth."""
    mpmath.mp.dps = 50
    e = mpmath.exp(mpmath.mpf("0.5"))
    below = Fraction(int(e * 10**30), 10**30)  # < e^{1/2}
    above = below + Fraction(2, 10**30)  # > e^{1/2}
    assert mpmath.mpf(above.numerator) / above.denominator > e > mpmath.mpf(below.numerator) / below.denominator
    spec = load_spec(_spec(2, "0.5", {"kind": "absolute"}))
    for ratio, ok in ((below, True), (above, False)):
        a = Fraction(1, 2)
        b = a / ratio
        K = ExactKernel.from_fractions([[a, 1 - a], [b, 1 - b]])
        assert check_metric(K.numerators, spec.privacy[0]).feasible is ok


def test_repair_restores_metric_privacy_exactly():
    """A kernel slightly outside the constraint is mixed with the constant kernel until it passes."""
    from mechdesign.certify.guarantees import enforce_guarantees

    spec = load_spec(_spec(4, "0.5", {"kind": "absolute"}))
    a = math.exp(-0.5)
    # the truncated geometric mechanism (exactly at the constraint), with 1e-6 of mass moved in row 0
    K = np.array(
        [[a ** abs(x - y) * ((1 - a) / (1 + a) if 0 < y < 3 else 1 / (1 + a)) for y in range(4)] for x in range(4)]
    )
    K[0, 0] += 1e-6
    K[0, 1] -= 1e-6
    from mechdesign.certify.exact import to_grid

    exact = to_grid(K)
    assert not check_metric(exact.numerators, spec.privacy[0]).feasible
    fixed, w = enforce_guarantees(exact, spec, spec.epsilon.exp_lower_bound(), 52)
    assert 0 < w < 1e-3
    assert check_metric(fixed.numerators, spec.privacy[0]).feasible and fixed.is_stochastic()


# ----------------------------------------------------------------- combined guarantees
def test_combined_guarantee_neither_alone_binds_the_optimum():
    """(1.0, Q_X(0.05))-PML and 0.6·|x−x'|-privacy together, N = 6, absolute loss: the joint optimum is worse
    than under either constraint alone, equals the independent all-pairs LP with both, and the kernel
    satisfies both exactly (both reported binding)."""
    n = 6
    pml = {"epsilon": 1.0, "prior_set": {"kind": "min_mass", "c": 0.05}}
    met = {"epsilon": 0.6, "metric": {"kind": "absolute"}}
    obj = {"kind": "expected_loss", "loss": "absolute"}
    both = design({"alphabet": n, "privacy": [pml, met], "objective": obj})
    only_pml = design({"alphabet": n, "privacy": [pml], "objective": obj})
    only_met = design({"alphabet": n, "privacy": [met], "objective": obj})
    assert both.is_ok and only_pml.is_ok and only_met.is_ok
    assert both.objective > only_pml.objective + 1e-4
    assert both.objective > only_met.objective + 1e-4
    L = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(float)
    d = L
    assert both.objective == pytest.approx(allpairs_lp(np.full(n, 1 / n), L, d, 0.6, min_mass=(1.0, 0.05)), abs=1e-8)
    reports = both.certificate.guarantees
    assert [g.feasible for g in reports] == [True, True]
    assert [g.binding for g in reports] == [True, True]
    assert all(g.leakage <= g.epsilon * (1 + 1e-12) for g in reports)  # float logs; feasible is exact
    out = both.to_json()["certificate"]
    assert out["binding"] == [0, 1] and len(out["guarantees"]) == 2


def test_combined_prior_sets_pml_and_ldp_backstop():
    """(ε1, Q_X(c))-PML with an ε2-LDP backstop: the LDP entry binds only when ε2 is small enough.
    The all-pairs LP for Q_X(c) + LDP: LDP is d-privacy with the discrete metric."""
    n = 5
    obj = {"kind": "expected_loss", "loss": "hamming"}
    L = 1.0 - np.eye(n)
    for eps2, binds in ((3.0, False), (0.8, True)):
        r = design(
            {
                "alphabet": n,
                "privacy": [
                    {"epsilon": 1.0, "prior_set": {"kind": "min_mass", "c": 0.1}},
                    {"epsilon": eps2, "prior_set": {"kind": "simplex"}},
                ],
                "objective": obj,
            }
        )
        assert r.is_ok
        assert r.certificate.guarantees[1].binding is binds
        expected = allpairs_lp(np.full(n, 1 / n), L, 1.0 - np.eye(n), eps2, min_mass=(1.0, 0.1))
        assert r.objective == pytest.approx(expected, abs=1e-8)


def _dobrushin_allpairs(n, d, eps):
    """max over pairs (a, c) of p_a − p_c, [p, 1 − p] ε·d-private: every ordered pair, both columns (scipy)."""
    best = 0.0
    for a in range(n):
        for c in range(n):
            if a == c:
                continue
            A, b = [], []
            for x in range(n):
                for z in range(n):
                    if x != z:
                        E = math.exp(eps * d[x][z])
                        r = np.zeros(n)
                        r[x], r[z] = 1.0, -E  # p_x ≤ E p_z
                        A.append(r)
                        b.append(0.0)
                        A.append(-r)  # 1 − p_x ≤ E (1 − p_z)
                        b.append(E - 1.0)
            cost = np.zeros(n)
            cost[a], cost[c] = -1.0, 1.0
            res = linprog(cost, A_ub=np.array(A), b_ub=b, bounds=(0, 1), method="highs")
            best = max(best, -res.fun)
    return best


def test_dobrushin_with_a_metric_constraint_solves_every_pair():
    """Binary outputs still suffice (Lemma 3's proof is post-processing, which keeps d-privacy); the value
    equals an independent all-pairs LP over every pair of rows."""
    n, eps = 4, 0.3
    r = design(
        {
            "alphabet": n,
            "privacy": [{"epsilon": eps, "metric": {"kind": "absolute"}}],
            "objective": {"kind": "dobrushin"},
        }
    )
    assert r.is_ok
    d = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    assert r.objective == pytest.approx(_dobrushin_allpairs(n, d, eps), abs=1e-9)


# ----------------------------------------------------------------- input
@pytest.mark.parametrize(
    "spec,message",
    [
        (
            {"alphabet": 5, "epsilon": 1, "privacy": [{"epsilon": 1, "metric": {"kind": "absolute"}}]},
            "privacy: give either privacy",
        ),
        ({"alphabet": 5, "privacy": []}, "privacy: must list at least one constraint"),
        (
            {"alphabet": 5, "privacy": [{"epsilon": 1, "metric": {"kind": "grid", "shape": [2, 2]}}]},
            "privacy[0].metric.shape: rows * cols must equal N = 5",
        ),
        (
            {"alphabet": 3, "privacy": [{"epsilon": 1, "metric": {"kind": "matrix", "d": [[0, 1], [1, 0]]}}]},
            "privacy[0].metric.d: must be N x N",
        ),
        (
            {"alphabet": 2, "privacy": [{"epsilon": 1, "metric": {"kind": "matrix", "d": [[0, -1], [1, 0]]}}]},
            "d[0][1] must be >= 0",
        ),
        (
            {"alphabet": 5, "privacy": [{"epsilon": 1, "prior_set": {"kind": "min_mass", "c": 0.5}}]},
            "privacy[0].prior_set.c: must be <= 1/N",
        ),
        (
            {
                "alphabet": 5,
                "privacy": [{"epsilon": 1, "metric": {"kind": "absolute"}}],
                "objective": {"kind": "mutual_information"},
            },
            "privacy: objective mutual_information",
        ),
        ({"alphabet": 5, "privacy": [{"epsilon": -1, "metric": {"kind": "absolute"}}]}, "must be >= 0"),
    ],
)
def test_bad_privacy_lists_name_the_field(spec, message):
    spec.setdefault("objective", {"kind": "expected_loss"})
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    assert message in str(err.value)


def test_shorthand_and_one_entry_list_agree():
    base = {"objective": {"kind": "expected_loss", "loss": "absolute"}, "alphabet": 6}
    a = design({**base, "epsilon": "log(2)", "prior_set": {"kind": "min_mass", "c": 0.1}})
    b = design({**base, "privacy": [{"epsilon": "log(2)", "prior_set": {"kind": "min_mass", "c": 0.1}}]})
    assert a.objective == pytest.approx(b.objective, abs=1e-12)
    assert a.to_json()["epsilon"] == b.to_json()["epsilon"]
    assert load_spec(b.spec.to_dict()) == b.spec  # the privacy form round-trips


def test_cli_verify_checks_every_constraint(tmp_path):
    """verify --spec with a privacy list: exit 0 when every constraint holds; exit 1 when the kernel designed
    for eps = 1 LDP is checked against a stricter metric entry (k-RR at eps = 1 has ratio e between any two
    rows, above e^{0.5 |x-x'|} for neighbours)."""
    import json
    import subprocess
    import sys
    import yaml

    design_spec = {
        "alphabet": 4,
        "privacy": [{"epsilon": 1, "metric": {"kind": "discrete"}}],
        "objective": {"kind": "expected_loss", "loss": "hamming"},
    }
    strict = {
        **design_spec,
        "privacy": [{"epsilon": 1, "prior_set": {"kind": "simplex"}}, {"epsilon": 0.5, "metric": {"kind": "absolute"}}],
    }
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(design_spec))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(strict))
    (tmp_path / "k.json").write_text(json.dumps(design(design_spec).to_json()))
    run = lambda spec: subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "verify", str(tmp_path / "k.json"), "--spec", str(tmp_path / spec)],
        capture_output=True,
        text=True,
    )
    assert run("d.yaml").returncode == 0
    bad = run("s.yaml")
    assert bad.returncode == 1 and "d = absolute at eps = 0.5: FAILS" in bad.stdout
