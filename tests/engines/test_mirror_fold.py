"""Output generation over symmetric kernels (cone/mirror_fold.py), with differenced coupling rows
(cone/difference_rows.py) and late ray columns (engines/output_generation.py), against independent LPs.

Expected optima: ``reference_worst_case`` / ``reference_kernel_lp`` of tests/engines/test_kernel_engine.py, linprog on the
unlifted vertex LP of docs/explanation/mathematics.md, section 'Linear constraints' over *all* kernels (no symmetry, no folding, no differencing, no rays). The
folding's algebra is checked against brute force written here: the symmetric kernel built by hand, its row sums
and epigraph rows computed from the full matrices.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from test_kernel_engine import reference_kernel_lp, reference_worst_case

import mechdesign.engines.output_generation as colgen
from mechdesign.cone.difference_rows import difference_matrix, sparsest_difference_order
from mechdesign.engines.kernel_lp import solve_kernel_lp
from mechdesign.cone.mirror_fold import MirrorFold, reflection_invariant
from mechdesign.engines.worst_case import solve_worst_case_kernel_lp


def scaled_loss(kind: str, n: int, m: int) -> np.ndarray:
    """|x − y'| or (x − y')² with y' = y (N − 1)/(M − 1): invariant under x ↦ N−1−x, y ↦ M−1−y for any N, M."""
    x, y = np.arange(n)[:, None], np.arange(m)[None, :] * (n - 1) / max(m - 1, 1)
    return np.abs(x - y) if kind == "absolute" else (x - y) ** 2


@pytest.fixture
def spy_fold(monkeypatch):
    """Records the fold each restricted LP used."""
    seen = []
    real = MirrorFold.reflection.__func__

    def reflection(cls, n, m):
        fold = real(cls, n, m)
        seen.append(fold)
        return fold

    monkeypatch.setattr(colgen.MirrorFold, "reflection", classmethod(reflection))
    return seen


@pytest.mark.parametrize("kind", ["absolute", "squared"])
@pytest.mark.parametrize("n,m", [(8, 8), (9, 9), (9, 5), (8, 7), (7, 4), (11, 11)])
@pytest.mark.parametrize("c_text", ["1/(2N)", "0"])
@pytest.mark.parametrize("eps", [0.5, 1.5])
@pytest.mark.parametrize("mode", ["fold", "fold+difference+rays"])
def test_folded_worst_case_reaches_the_unfolded_vertex_lp(kind, n, m, c_text, eps, mode, monkeypatch, spy_fold):
    used = {"rays": 0, "differences": 0}
    if mode != "fold":  # every path at small N: differenced rows (any order ≤ 3), rays from the second round
        real_ray, real_diff = colgen.priced_rays, colgen.difference_matrix

        def ray(*a):
            used["rays"] += 1
            return real_ray(*a)

        def diff(*a):
            used["differences"] += 1
            return real_diff(*a)

        monkeypatch.setattr(colgen, "priced_rays", ray)
        monkeypatch.setattr(colgen, "difference_matrix", diff)
        monkeypatch.setattr(colgen, "DIFFERENCE_MIN_N", 0)
        monkeypatch.setattr(colgen, "DIFFERENCE_MAX_ORDER", 3)
        monkeypatch.setattr(colgen, "LATE_GAP", math.inf)
    else:
        monkeypatch.setattr(colgen, "DIFFERENCE_ROWS", False)
        monkeypatch.setattr(colgen, "LATE_RAYS", False)
    L = scaled_loss(kind, n, m)
    c = Fraction(0) if c_text == "0" else Fraction(1, 2 * n)
    E = math.exp(-eps) * (1 - 1e-15)
    res = solve_worst_case_kernel_lp(L, c, E)
    ref = reference_worst_case(L, float(c), eps)
    scale = max(1.0, abs(ref))
    assert res.status == "optimal"
    assert res.value == pytest.approx(ref, abs=1e-7 * scale)
    assert res.bound <= ref + 1e-12 * scale
    K = res.kernel
    assert np.all(K >= -1e-12) and np.allclose(K.sum(axis=1), 1.0, atol=1e-9)
    if res.method.startswith("output generation") and reflection_invariant(L):  # (8, 7): y' rounds unevenly
        assert spy_fold and all(f.folded for f in spy_fold)
        assert np.allclose(K, K[::-1, ::-1], atol=1e-12)  # the folded LP's kernel is symmetric
    if res.method.startswith("output generation") and mode != "fold" and c > 0 and kind == "absolute" and n >= 8:
        assert used["differences"] > 0  # |x − y'| columns are sparsest after 2 differences


@pytest.mark.parametrize("n", [14, 15])
def test_late_rays_are_used_and_reach_the_vertex_lp(n, monkeypatch):
    """Every round after the first is late: outputs join as ray columns (then blocks after LATE_RAYS_MAX)."""
    calls = []
    real_ray = colgen.priced_rays
    monkeypatch.setattr(colgen, "priced_rays", lambda *a: calls.append(a[2]) or real_ray(*a))
    monkeypatch.setattr(colgen, "LATE_GAP", math.inf)
    monkeypatch.setattr(colgen, "LATE_RAYS_MAX", 2)
    L = scaled_loss("absolute", n, n)
    c = Fraction(1, 2 * n)
    res = solve_worst_case_kernel_lp(L, c, math.exp(-1.0) * (1 - 1e-15))
    ref = reference_worst_case(L, float(c), 1.0)
    assert res.method.startswith("output generation") and calls  # rays joined
    assert res.value == pytest.approx(ref, abs=1e-7 * ref)
    assert res.bound <= ref * (1 + 1e-12)
    K = res.kernel
    assert np.all(K >= -1e-12) and np.allclose(K.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("n,m", [(10, 10), (9, 9), (7, 4)])
@pytest.mark.parametrize("c_text", ["1/(2N)", "0"])
def test_folded_given_prior_reaches_the_unfolded_vertex_lp(n, m, c_text, spy_fold):
    """The uniform prior's expected |x − y'| loss (no epigraph): folded, compared with linprog on the full LP."""
    L = scaled_loss("absolute", n, m)
    C = L / n
    assert reflection_invariant(C)
    c = Fraction(0) if c_text == "0" else Fraction(1, 2 * n)
    res = solve_kernel_lp(C, c, math.nextafter(math.exp(-1.0), 0.0))
    ref = reference_kernel_lp(C, float(c), 1.0)
    assert res.value == pytest.approx(ref, abs=1e-9)
    assert res.bound <= ref + 1e-12


@pytest.mark.parametrize("n,m", [(6, 6), (7, 7), (7, 4), (6, 5)])
def test_fold_algebra_matches_the_full_rows(n, m):
    """Row sums, epigraph rows and objective of the symmetric kernel, computed on the full N × M matrices, equal
    the folded LP's rows (γ-weighted, per folded row, scaled by rhs) and objective (2γ-weighted)."""
    rng = np.random.default_rng(n * 31 + m)
    fold = MirrorFold.reflection(n, m)
    G = scaled_loss("absolute", n, m)
    C = rng.random((n, m))
    C = C + C[::-1, ::-1]  # reflection invariant
    cols = rng.random((n, fold.reps.size))
    js = np.arange(fold.reps.size)
    ys, full = fold.full_columns(js, cols)
    assert ys.tolist() == list(range(m))
    K = full  # N × M, every output
    assert np.allclose(K, K[::-1, ::-1])  # symmetric by construction
    # folded row sums: Σ_j γ_j Σ_{x→h} k_j(x) equals rhs_h × (full row sum of any x in orbit h)
    folded_sums = fold.fold_rows(cols * fold.gamma[None, :]).sum(axis=1)
    full_sums = K.sum(axis=1)
    for x in range(n):
        h = fold.row_of[x]
        assert folded_sums[h] == pytest.approx(fold.rhs[h] * full_sums[x])
    folded_epi = fold.fold_rows(G[:, fold.reps] * cols * fold.gamma[None, :]).sum(axis=1)
    full_epi = (G * K).sum(axis=1)
    for x in range(n):
        h = fold.row_of[x]
        assert folded_epi[h] == pytest.approx(fold.rhs[h] * full_epi[x])
    folded_obj = (C[:, fold.reps] * cols * fold.objective_weight[None, :]).sum()
    assert folded_obj == pytest.approx((C * K).sum())
    # multipliers: Σ_h rhs_h π'_h = Σ_x π_x for π = full_multipliers(π')
    pi_f = rng.normal(size=fold.num_rows)
    assert float(fold.rhs @ pi_f) == pytest.approx(fold.full_multipliers(pi_f).sum())
    assert fold.multiplicity.sum() == m


def test_reflection_invariance_is_exact():
    L = scaled_loss("absolute", 6, 6)
    assert reflection_invariant(L, L)
    L2 = L.copy()
    L2[0, 1] += 1e-15
    assert not reflection_invariant(L2)
    assert not reflection_invariant(L, L2)


@pytest.mark.parametrize("n,k", [(1, 0), (5, 0), (5, 1), (6, 2), (7, 3)])
def test_difference_matrix_is_k_forward_differences(n, k):
    rng = np.random.default_rng(n + k)
    v = rng.normal(size=n)
    expected = v.copy()
    for _ in range(k):  # (Dv)_0 = v_0, (Dv)_h = v_h − v_{h−1}
        expected = np.concatenate([expected[:1], expected[1:] - expected[:-1]])
    assert np.allclose(difference_matrix(n, k) @ v, expected)
    # invertible: D^k is unit lower triangular
    T = difference_matrix(n, k).toarray()
    assert np.allclose(np.diag(T), 1.0) and np.allclose(np.triu(T, 1), 0.0)


def test_sparsest_difference_order_of_the_named_losses():
    n = 40
    x = np.arange(n)[:, None]
    y = np.array([[3, 17, 30]])
    assert sparsest_difference_order(np.abs(x - y) * 1.0) == 2  # piecewise linear
    assert sparsest_difference_order((x - y) ** 2 * 1.0) == 3  # quadratic
    assert sparsest_difference_order((x != y) * 1.0) == 1  # constant but one entry
    assert sparsest_difference_order(np.random.default_rng(0).random((n, 3))) == 0


@pytest.mark.parametrize("loss,prior", [("absolute", "worst_case"), ("hamming", "uniform"), ("absolute", "uniform")])
def test_engine_designs_report_the_size_of_their_last_lp(loss, prior):
    """The solve record's rows, columns and nonzeros describe a real LP (every row of it has an entry: nonzeros ≥
    rows); the output-generation and probe paths once reported 0 nonzeros."""
    from mechdesign import design

    n = 12
    result = design(
        {
            "alphabet": n,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": f"1/{2 * n}"},
            "objective": {"kind": "expected_loss", "loss": loss, "prior": prior},
        }
    )
    assert result.is_ok
    assert result.solve.rows >= n and result.solve.columns >= n
    assert result.solve.nonzeros >= result.solve.rows


def test_output_generation_stops_at_a_floating_point_floor(monkeypatch):
    """The |x − y| worst case under ε-LDP at N = 3000 ran on at a gap of 1.2e-9 relative (tolerance 1e-9) while every
    round added the outputs that HiGHS's dual noise priced just below zero (colgen.STALL_GAP). Simulated here: every
    output prices δ below min(p, 0), a floor of 3e-9 relative. Without the stall rule all 60 outputs join one per
    round (59 rounds); with it the loop stops a few rounds after the floor, at the optimum of the vertex LP."""
    n, m = 12, 60
    L = scaled_loss("absolute", n, m)
    E = math.exp(-1.0) * (1 - 1e-15)
    ref = reference_worst_case(L, 0.0, 1.0)  # linprog on the vertex LP (c = 0: the unit priors)
    monkeypatch.setattr(colgen, "LATE_OUTPUTS", 1)
    monkeypatch.setattr(colgen, "GROW_EVERY", 10**6)
    delta = 3e-9 * ref / m
    real_price = colgen.price

    def noisy_price(W, c, E):
        priced = real_price(W, c, E)
        return dataclasses.replace(priced, value=np.minimum(priced.value, 0.0) - delta)

    monkeypatch.setattr(colgen, "price", noisy_price)
    res = colgen.generate_outputs(0 * L, 0.0, E, epigraph=(L, 1.0))
    assert res.status == "optimal"
    assert res.outputs.size < m // 2 and res.rounds < 30
    assert res.value == pytest.approx(ref, rel=1e-9)
    assert res.bound <= ref and ref - res.bound <= colgen.STALL_GAP * ref
