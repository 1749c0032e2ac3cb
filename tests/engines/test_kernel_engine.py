"""The uncompiled kernel-LP engine (engines/kernel_lp.py: one ray per output, then output generation with
seated rays) reaches the optimum of the kernel LP written directly from its definition, and its bound is a
true bound.

The reference LP is built here from docs/explanation/mathematics.md, section 'Linear constraints' and solved by scipy's linprog: K ≥ 0 with rows summing to
one and, for every output y and every vertex P of the prior set, e^ε·K_xy ≤ P·K(:,y) for every x; the
vertices of Q_X(c) are the priors with mass 1 − (N−1)c on one symbol and c on the others (for the simplex,
c = 0: the point masses, i.e. ε-LDP pairwise). That is neither the lifted LP with column maxima and minima
the library compiles nor its ray pricing.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from mechdesign import design
from mechdesign.engines.kernel_lp import solve_kernel_lp


def vertex_priors(n: int, c: float) -> np.ndarray:
    """The N vertices of Q_X(c) (c = 0: the simplex's point masses), one per row."""
    V = np.full((n, n), c)
    np.fill_diagonal(V, 1.0 - (n - 1) * c)
    return V


def reference_kernel_lp(C: np.ndarray, c: float, eps: float) -> float:
    """min Σ C_xy K_xy over (ε, Q_X(c))-PML kernels, every vertex constraint written out, by linprog."""
    n, m = C.shape
    V = vertex_priors(n, c)
    e = math.exp(eps)
    nv = n * m
    rows = n * n * m
    A = lil_matrix((rows, nv))
    r = 0
    for y in range(m):
        for v in range(n):
            for x in range(n):
                # K_xy − e^ε Σ_x' V[v, x'] K_x'y ≤ 0   (column y, prior vertex v, symbol x)
                for xp in range(n):
                    A[r, xp * m + y] -= e * V[v, xp]
                A[r, x * m + y] += 1.0
                r += 1
    A_eq = np.zeros((n, nv))
    for x in range(n):
        A_eq[x, x * m : (x + 1) * m] = 1.0
    res = linprog(
        C.ravel(), A_ub=A.tocsr(), b_ub=np.zeros(rows), A_eq=A_eq, b_eq=np.ones(n), bounds=(0, None), method="highs"
    )
    assert res.status == 0, res.message
    return float(res.fun)


def is_private(K: np.ndarray, c: float, eps: float, slack: float = 1e-9) -> bool:
    n = K.shape[0]
    low = (vertex_priors(n, c) @ K).min(axis=0)  # min over the vertices of P·K(:,y)
    return bool(np.all(K.max(axis=0) <= math.exp(eps) * low + slack))


def loss_matrix(n: int, loss: str) -> np.ndarray:
    """L(x, y) of the spec's named losses on the alphabet 0..N−1, from their definitions."""
    x = np.arange(n)
    return {
        "absolute": np.abs(x[:, None] - x[None, :]),
        "squared": (x[:, None] - x[None, :]) ** 2,
        "hamming": (x[:, None] != x[None, :]),
    }[loss].astype(float)


def cost(n: int, loss: str, prior: str, seed: int = 0) -> np.ndarray:
    L = loss_matrix(n, loss)
    P = np.full(n, 1.0 / n) if prior == "uniform" else np.random.default_rng(seed).dirichlet(np.ones(n)) + 1e-3
    return (P / P.sum())[:, None] * L


@pytest.mark.parametrize("loss", ["absolute", "squared", "hamming"])
@pytest.mark.parametrize("prior", ["uniform", "dirichlet"])
@pytest.mark.parametrize("c_frac,eps", [(0.5, 1.0), (0.0, 1.0), (0.9, 0.3), (0.2, 3.0)])
def test_engine_matches_the_vertex_lp(loss, prior, c_frac, eps):
    n = 7
    C = cost(n, loss, prior)
    c = c_frac / n
    ref = reference_kernel_lp(C, c, eps)
    res = solve_kernel_lp(C, Fraction(c), math.nextafter(math.exp(-eps), 0.0))
    assert res.status == "optimal"
    assert res.value == pytest.approx(ref, abs=1e-9)
    assert res.bound <= ref + 1e-12  # a true lower bound
    assert res.value - res.bound <= 1e-9 * max(1.0, abs(ref))
    K = res.kernel
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-9) and K.min() >= -1e-12
    assert is_private(K, c, eps)
    assert float((C * K).sum()) == pytest.approx(ref, abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 6),
    m=st.integers(1, 7),
    c_frac=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    eps=st.floats(0.05, 4.0),
    seed=st.integers(0, 10_000),
    signed=st.booleans(),
)
def test_engine_matches_the_vertex_lp_on_random_costs(n, m, c_frac, eps, seed, signed):
    rng = np.random.default_rng(seed)
    C = rng.normal(size=(n, m)) if signed else rng.integers(0, 4, size=(n, m)).astype(float)
    c = c_frac / n
    ref = reference_kernel_lp(C, c, eps)
    res = solve_kernel_lp(C, Fraction(c), math.nextafter(math.exp(-eps), 0.0))
    assert res.status == "optimal"
    assert res.value == pytest.approx(ref, abs=1e-8)
    assert res.bound <= ref + 1e-12
    assert is_private(res.kernel, c, eps, slack=1e-8)


def test_every_output_used_is_one_master_and_few_outputs_are_generated():
    """Hamming under a uniform prior uses all N outputs (k-RR): the one-ray-per-output master closes it;
    |x − y| uses two outputs at ε = 1: output generation."""
    n = 40
    ham = solve_kernel_lp(cost(n, "hamming", "uniform"), Fraction(1, 2 * n), math.exp(-1))
    assert ham.method.startswith("ray master") and ham.status == "optimal"
    assert (ham.kernel.max(axis=0) > 1e-9).sum() == n
    ldp = solve_kernel_lp(cost(n, "hamming", "uniform"), Fraction(0), math.exp(-1))  # ties k-RR with constant
    assert ldp.method.startswith("ray master") and (ldp.kernel.max(axis=0) > 1e-9).sum() == n
    ab = solve_kernel_lp(cost(n, "absolute", "uniform"), Fraction(1, 2 * n), math.exp(-1))
    assert ab.method == "output generation" and ab.status == "optimal"


@pytest.mark.parametrize(
    "objective",
    [
        {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"},
        {"kind": "expected_loss", "loss": "hamming", "prior": ["1/10", "2/10", "3/10", "4/10"]},
        {"kind": "bayes_vulnerability", "prior": "uniform"},
        {"kind": "bayes_vulnerability", "prior": ["1/10", "2/10", "3/10", "4/10"]},
    ],
)
@pytest.mark.parametrize("prior_set", [{"kind": "min_mass", "c": "1/10"}, {"kind": "simplex"}])
def test_designs_through_the_engine_are_certified_at_the_reference_optimum(objective, prior_set):
    n = 4
    spec = {"alphabet": n, "epsilon": "1/2", "prior_set": prior_set, "objective": objective}
    r = design(spec)
    assert r.is_ok and r.certificate.feasible
    c = 0.1 if prior_set["kind"] == "min_mass" else 0.0
    P = (
        np.full(n, 1 / n)
        if objective["prior"] == "uniform"
        else np.array([float(Fraction(p)) for p in objective["prior"]])
    )
    if objective["kind"] == "expected_loss":
        C = P[:, None] * loss_matrix(n, objective["loss"])
        ref = reference_kernel_lp(C, c, 0.5)
        assert r.objective == pytest.approx(ref, abs=1e-9)
        assert r.certificate.dual_bound <= ref + 1e-12
    else:  # max Σ_y max_x P(x) K_xy = max Σ_x P(x) K_xx over N outputs (compile_bayes_vulnerability)
        ref = -reference_kernel_lp(-np.diag(P), c, 0.5)
        assert r.objective == pytest.approx(ref, abs=1e-9)
        assert r.certificate.dual_bound >= ref - 1e-12


def reference_worst_case(L: np.ndarray, c: float, eps: float) -> float:
    """min_K max_{P ∈ Q_X(c)} Σ_x P(x) Σ_y L_xy K_xy over (ε, Q_X(c))-PML kernels: an epigraph τ ≥ V_v·(L∘K)1
    for every vertex V_v (a linear function of P is largest at a vertex), by linprog."""
    n, m = L.shape
    V = vertex_priors(n, c)
    e = math.exp(eps)
    nv = n * m + 1  # K, then τ
    rows = []
    for y in range(m):
        for v in range(n):
            for x in range(n):
                row = np.zeros(nv)
                row[[xp * m + y for xp in range(n)]] -= e * V[v]
                row[x * m + y] += 1.0
                rows.append(row)
    for v in range(n):
        row = np.zeros(nv)
        row[: n * m] = (V[v][:, None] * L).ravel()
        row[-1] = -1.0
        rows.append(row)
    A_eq = np.zeros((n, nv))
    for x in range(n):
        A_eq[x, x * m : (x + 1) * m] = 1.0
    cost_ = np.zeros(nv)
    cost_[-1] = 1.0
    res = linprog(cost_, A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=A_eq, b_eq=np.ones(n), method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


@pytest.mark.parametrize("loss", ["absolute", "squared", "hamming"])
@pytest.mark.parametrize("prior_set,c", [({"kind": "min_mass", "c": "1/14"}, 1 / 14), ({"kind": "simplex"}, 0.0)])
def test_worst_case_prior_by_seated_output_generation_matches_the_epigraph_lp(loss, prior_set, c):
    """The worst-case prior (engines/worst_case.py: the uniform prior's master, then output generation with
    the epigraph rows, outputs seated at their priced rays)."""
    n = 7
    spec = {
        "alphabet": n,
        "epsilon": 1,
        "prior_set": prior_set,
        "objective": {"kind": "expected_loss", "loss": loss, "prior": "worst_case"},
    }
    r = design(spec)
    assert r.is_ok and r.solve.method in (
        "output generation (worst case)",
        "ray master (uniform prior)",
        "interval-partition master (worst case, ε-LDP)",  # ε-LDP with |x − y|
    )
    L = loss_matrix(n, loss)
    ref = reference_worst_case(L, c, 1.0)
    assert r.objective == pytest.approx(ref, abs=1e-9)
    assert r.certificate.dual_bound <= ref + 1e-12


def test_a_time_limit_before_output_generation_finishes_a_round_returns_the_probe_kernel():
    # probe_then_generate's fallback: when output generation ends without a solved round (here its HiGHS time
    # limit is spent at once: 1 ms for a first restricted LP of ~1,200 rows and ~1,000 pivots), the answer is
    # the probe's kernel, still a PML kernel with its value and a bound below it, not a kernel of zeros
    from mechdesign.engines.output_generation import generate_outputs
    from mechdesign.engines.kernel_lp import probe_then_generate, ray_probe
    from mechdesign.cone.lagrangian_bound import lagrangian_bound, pricing_c

    n = 400
    x = np.arange(n)
    C = np.abs(x[:, None] - x[None, :]) / n  # |x − y| under the uniform prior: the probe alone is not optimal
    c, E = Fraction(1, 2 * n), math.nextafter(math.exp(-1.0), 0.0)
    res = probe_then_generate(
        C,
        c,
        E,
        kernel_value=lambda K, lp_value: lp_value,
        probe_bound=lambda pi, values: lagrangian_bound(C, pi, pricing_c(c), E, values),
        round_bound=lambda r: lagrangian_bound(C, r.pi, pricing_c(c), E),
        generate=lambda **options: generate_outputs(C, float(c), E, **{**options, "time_limit": 0.0}),
        probe_method="probe",
        probe_source="probe",
        method="output generation",
        time_limit=None,
        tolerance=1e-9,
        threads=1,
        verbose=False,
    )
    assert res.status == "time_limit"
    K = res.kernel
    probe_K = ray_probe(C, float(c), E, None, 1, False)[0]
    np.testing.assert_array_equal(K, probe_K)
    assert K.min() >= 0 and np.allclose(K.sum(axis=1), 1.0, atol=1e-9)
    # (ε, Q_X(c))-PML column by column (docs/explanation/mathematics.md, section 'Linear constraints' with the worst vertex of Q_X(c)), e^ε = 1/E
    worst = float(c) * K.sum(axis=0) + (1 - n * float(c)) * K.min(axis=0)
    assert np.all(K.max(axis=0) <= worst / E * (1 + 1e-9) + 1e-12)
    assert res.value == pytest.approx(float((C * K).sum()), rel=1e-9)
    assert res.bound <= res.value


def test_a_design_stopped_by_its_time_limit_reports_its_kernel_and_a_true_bound():
    """|x − y| under the worst prior of all priors (ε-LDP), N = 400, ε = 2: output generation needs ~30 rounds
    (≈ 18 s here); with 2 s it stops. The design then reports the last round's kernel, certified, and the best
    Lagrangian bound met: before, the bound was dropped ("dual bound -") and a faint output pair of that kernel
    (entries of 9 to 64 grid units) asked the mix for w = 0.07, raising the objective by ~10 %. How close the design
    gets in 2 s depends on the machine; what is asserted does not."""
    spec = {
        "alphabet": 400,
        "epsilon": 2,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "worst_case"},
        "solver": {"time_limit": 2},
    }
    r = design(spec)
    assert r.status.value in ("time_limit", "optimal")  # optimal only on a machine ~10× faster than ours
    cert = r.certificate
    assert cert.feasible and cert.dual_bound is not None
    # weak duality: a lower bound is below the worst-case loss of any ε-LDP kernel, the certified one included
    assert cert.dual_bound <= r.objective
    # the worst row's loss of the certified kernel, recomputed here: the reported objective
    n = 400
    L = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    K = np.asarray(r.kernel, float)
    assert r.objective == pytest.approx(float((K * L).sum(axis=1).max()), rel=1e-9)
    # how many rounds run in 2 s depends on the machine and its load (a gap of 3 % on a quiet machine, 13 % seen on a
    # loaded one), so the kernel is only asked to be a real design: no repair of note, and below k-RR, whose worst
    # row (x = 0) loses Σ_y y / (e^ε + N − 1) = 79,800 / (e² + 399) ≈ 196.4 (written out here)
    krr = sum(range(n)) / (math.exp(2) + n - 1)
    assert cert.repair_weight < 1e-6 and r.objective < krr


def test_a_private_noise_output_is_merged_rather_than_mixed():
    """merge_noise_columns given c: a private column of a few grid units would alone ask the one-pass mix for a
    weight of ~1e-2 (its margin of 2(1 + E) units is most of it); merged into the heaviest column (post-processing)
    the whole kernel asks for ~1e-15. The expected kernel is written out here, and the repaired kernel is checked
    by the exact oracle (tests/helpers/exact_oracle.py)."""
    from helpers.exact_oracle import check_kernel

    from mechdesign.certify.exact import GRID, GridKernel, check_pml, merge_noise_columns, repair
    from mechdesign.certify.grid_repair import mixing_weight_on_grid
    from mechdesign.spec.models import Simplex

    D, bound = GRID, Fraction(8)  # e^ε = 8 exactly: ε = log(8)
    heavy = [D // 2, D // 16 - 1, D // 16]  # max/min = 8 (1 + 16/D): breaks PML by one unit
    faint = [64, 9, 9]  # 64/9 < 8: private, 1.4e-14 at most
    rows = [[h, f, D - h - f] for h, f in zip(heavy, faint)]
    kernel = GridKernel(np.array(rows, dtype=np.int64), D)
    check = check_pml(kernel, Simplex(kind="simplex"), bound)
    assert not check.feasible and check.worst_output == 0
    alone, _ = mixing_weight_on_grid(np.array(rows, dtype=np.int64), Fraction(0), bound)
    assert alone > Fraction(1, 1000)  # what the faint column costs the mix when kept

    merged = merge_noise_columns(kernel, check, bound, Fraction(0))
    expected = [[h, 0, D - h] for h in heavy]  # the faint output merged into the heaviest (the third)
    assert merged.int64().tolist() == expected
    assert merge_noise_columns(kernel, check, bound).int64().tolist() == rows  # without c: kept (private)
    need, _ = mixing_weight_on_grid(np.array(expected, dtype=np.int64), Fraction(0), bound)
    assert need < Fraction(1, 10**12)

    repaired, weight, final = repair(kernel, Simplex(kind="simplex"), bound, bits=52)
    assert final.feasible and weight < Fraction(1, 10**9)
    verdict = check_kernel(repaired.fractions(), {"alphabet": 3, "epsilon": "log(8)", "prior_set": {"kind": "simplex"}})
    assert verdict.stochastic and verdict.private, verdict.reason
