"""Extreme rays of the (eps,P)-PML column cone and extremal binary mechanisms (mechdesign.privacy.extremes)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mechdesign import bounds
from mechdesign.cli.main import main
from mechdesign.privacy.extremes import binary_extremes, cdd_rays, structured_rays
from mechdesign.spec.models import MinMass, Point, Simplex


def same_set(A, B, tol=1e-7):
    if A.shape != B.shape:
        return False
    return all(np.abs(B - a).max(axis=1).min() <= tol for a in A)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 6), c_frac=st.sampled_from([0, 1, 2, 5, 7, 10]), eps=st.floats(0.05, 4.0))
def test_min_mass_structured_rays_match_cdd(n, c_frac, eps):
    c = Fraction(c_frac, 10 * n)  # c in [0, 1/N]
    ps = MinMass(kind="min_mass", c=c)
    S, C = structured_rays(ps, n, eps), cdd_rays(ps, n, eps)
    assert same_set(S, C) and same_set(C, S)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_both_regimes_two_level_then_zeros(n):
    c = Fraction(1, 2 * n)
    ps = MinMass(kind="min_mass", c=c)
    small = structured_rays(ps, n, 0.2)  # e^eps c (N-1) < 1: no zeros (Lemma 1)
    assert np.all(small > 0)
    assert all(len(np.unique(np.round(r, 9))) == 2 for r in small)
    assert len(small) == 2**n - 2  # the two-level vectors of Remark 2
    large = structured_rays(ps, n, math.log(2 * n / 1.5))  # e^eps c = 2/3 -> rays with levels {0, w, 1}
    assert np.any(large == 0)
    assert same_set(large, cdd_rays(ps, n, math.log(2 * n / 1.5)))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_simplex_rays_are_staircases(n):
    R = structured_rays(Simplex(kind="simplex"), n, 1.0)
    assert len(R) == 2**n - 2
    assert np.allclose(np.sort(np.unique(np.round(R, 12))), [math.exp(-1), 1.0])
    assert same_set(R, cdd_rays(Simplex(kind="simplex"), n, 1.0))


@pytest.mark.parametrize("n,eps", [(3, 0.3), (4, 1.0), (5, 0.7)])
def test_point_rays_match_cdd(n, eps):
    prior = [Fraction(i + 1, n * (n + 1) // 2) for i in range(n)]
    ps = Point(kind="point", prior=prior)
    assert same_set(structured_rays(ps, n, eps), cdd_rays(ps, n, eps))


@pytest.mark.parametrize("n,c,eps", [(3, 0.1, 1.0), (4, 0.05, 0.5), (5, 0.02, 1.5), (2, 0.2, 0.8)])
def test_remark2_kernels_are_enumerated_extremes(n, c, eps):
    ps = MinMass(kind="min_mass", c=Fraction(c).limit_denominator(1000))
    V = binary_extremes(ps, n, eps)
    R = structured_rays(ps, n, eps)
    for q in range(1, n):
        if math.exp(eps) * c * q >= 1:
            continue
        p = np.array(bounds.remark2_column(eps, c, n, q))
        assert np.abs(V - p).max(axis=1).min() < 1e-9  # a vertex of the binary kernels
        assert np.abs(R - p / p.max()).max(axis=1).min() < 1e-9  # and an extreme ray of the cone


def test_cli_extremes(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text("alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.1}\nobjective: {kind: dobrushin}\n")
    assert main(["extremes", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "8 extremal binary" in out
    assert main(["extremes", str(spec), "--rays", "--json"]) == 0
    assert '"kind": "rays"' in capsys.readouterr().out


def _l1_ball_with_tiny_masses():
    from mechdesign.spec.models import Spec

    rest = (1 - 2 * Fraction(1, 10**9)) / 3
    center = ["1/1000000000"] * 2 + [f"{rest.numerator}/{rest.denominator}"] * 3
    return {
        "alphabet": 5,
        "epsilon": 2,
        "prior_set": {"kind": "l1_ball", "center": center, "radius": "1/2"},
        "objective": {"kind": "mutual_information", "prior": "uniform"},
    }, Spec


def test_tight_subsets_skip_rows_that_no_vertex_makes_tight(monkeypatch):
    """The fallback vertex enumeration drops strictly redundant rows before counting subsets: the vertices are
    those of the full enumeration over every row (the definition: every subset of tight rows tried)."""
    import mechdesign.privacy.brute_vertices as bv
    from mechdesign.privacy.extremes import cone_inequalities, unique_rows

    spec_dict, Spec = _l1_ball_with_tiny_masses()
    spec = Spec.model_validate(spec_dict)
    G = unique_rows(cone_inequalities(spec.prior_set, 5, 2.0), 14)
    assert math.comb(len(G), 4) > bv.MAX_SUBSETS  # the case that was refused
    pruned = bv.brute_force_vertices(G, np.zeros(len(G)), np.ones((1, 5)), np.ones(1))
    monkeypatch.setattr(bv, "MAX_SUBSETS", math.comb(len(G), 4))
    full = bv.brute_force_vertices(G, np.zeros(len(G)), np.ones((1, 5)), np.ones(1))
    key = lambda V: sorted(map(tuple, np.round(V, 9)))  # noqa: E731
    assert len(pruned) > 0 and key(pruned) == key(full)


def test_l1_ball_with_masses_of_one_billionth_is_designed_not_refused():
    """A valid spec that cdd's floating-point double description cannot enumerate (its rays fail the check) is
    designed: a private kernel, checked exactly, and a bound on the right side of its value."""
    from mechdesign import design

    spec_dict, _ = _l1_ball_with_tiny_masses()
    result = design(spec_dict)
    assert result.certificate.feasible
    assert result.status.value in ("optimal", "suboptimal")
    # mutual information is maximised: its dual bound is an upper bound
    assert result.certificate.dual_bound is not None
    assert result.certificate.dual_bound >= result.objective - 1e-12 * max(1.0, result.objective)


def test_listing_check_accepts_the_cube_and_refuses_it_with_a_vertex_dropped_or_a_point_outside():
    """listing_is_complete on the cube [0, 1]^4 (rows x_i ≥ 0 and 1 − x_i ≥ 0), whose 16 vertices are the 0/1
    vectors, written here: the full list passes; without (1, 1, 1, 1), the maximiser of any direction with positive
    entries, some random direction's LP maximum is missed; with a point outside (x_1 = 1.01) it is refused."""
    import itertools

    from mechdesign.privacy.extremes import listing_is_complete

    d = 4
    rows = np.vstack([np.hstack([np.zeros((d, 1)), np.eye(d)]), np.hstack([np.ones((d, 1)), -np.eye(d)])])
    V = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    assert listing_is_complete(rows, V)
    assert not listing_is_complete(rows, V[:-1])  # (1, 1, 1, 1) is the last of the product
    outside = V.copy()
    outside[-1, 0] = 1.01
    assert not listing_is_complete(rows, outside)


def test_listing_check_certifies_exact_vertices_without_an_lp_and_falls_back_to_one_for_inexact_ones(monkeypatch):
    """The cube [0, 1]^4 again. Exact vertices: at the best listed vertex of a direction c the rows tight there
    carry c with nonnegative multipliers (c_i > 0: the row 1 − x_i ≥ 0, c_i < 0: x_i ≥ 0), so no LP is needed
    (the LP is made unavailable here). Vertices pulled 1e-8 toward the centre (every slack 1e-8 > 1e-9, no row
    tight): the conditions cannot be checked, the LP maximum is, and 1e-8 is within its tolerance (1e-7) so the
    list passes; the same list without (1, 1, 1, 1) is refused."""
    import itertools

    import mechdesign.privacy.extremes as extremes

    d = 4
    rows = np.vstack([np.hstack([np.zeros((d, 1)), np.eye(d)]), np.hstack([np.ones((d, 1)), -np.eye(d)])])
    V = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    inexact = 0.5 + (V - 0.5) * (1 - 2e-8)
    assert extremes.listing_is_complete(rows, inexact)
    assert not extremes.listing_is_complete(rows, inexact[:-1])

    class NoLP:
        def __init__(self, *args):
            raise AssertionError("an LP was solved for exact vertices")

    monkeypatch.setattr(extremes, "_ProbeLP", NoLP)
    assert extremes.listing_is_complete(rows, V)
