"""The lazy pair engine for the Dobrushin coefficient over prior sets that are not permutation invariant
(mechdesign.engines.dobrushin_pairs) against an independent LP written here.

Expected values: Lemma 3 of the Dobrushin paper (binary outputs suffice), so
η_TV(ε,𝒫) = max over ordered pairs (a, b) of  max p_a − p_b  s.t. [p, 1 − p] is (ε,𝒫)-PML. For a
polytope 𝒫 the PML constraint of a column k is  k_x ≤ e^ε v·k  for every symbol x and every vertex v
of 𝒫 (docs/explanation/mathematics.md, section 'Linear constraints'). This test enumerates the vertices of each prior set itself (point, hull, box,
ℓ1-ball) and solves every pair with scipy.optimize.linprog: no mechdesign LP code is involved.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign import design


def box_vertices(lower, upper):
    """Vertices of {lower ≤ P ≤ upper, Σ P = 1}: every coordinate but one at a bound."""
    n = len(lower)
    out = []
    for free in range(n):
        for at in itertools.product((0, 1), repeat=n - 1):
            P = np.zeros(n)
            others = [i for i in range(n) if i != free]
            for i, hi in zip(others, at):
                P[i] = upper[i] if hi else lower[i]
            P[free] = 1.0 - P[others].sum()
            if lower[free] - 1e-12 <= P[free] <= upper[free] + 1e-12:
                out.append(P)
    return np.unique(np.round(out, 14), axis=0)


def l1_vertices(center, radius):
    """Vertices of {P in the simplex, ‖P − center‖₁ ≤ r} when every center_j ≥ r/2:
    the section of the ℓ1-ball by Σ d = 0 has vertices (r/2)(e_i − e_j)."""
    n = len(center)
    c = np.asarray(center, float)
    assert c.min() >= radius / 2
    return np.array([c + radius / 2 * (np.eye(n)[i] - np.eye(n)[j]) for i in range(n) for j in range(n) if i != j])


def eta_by_vertices(vertices, eps):
    """max over ordered pairs of the LP max p_a − p_b, [p, 1 − p] PML for every vertex (scipy HiGHS)."""
    V = np.asarray(vertices, float)
    n = V.shape[1]
    E = math.exp(eps)
    rows, rhs = [], []
    for v in V:
        for x in range(n):
            # column p:      p_x − e^ε v·p ≤ 0
            rows.append(np.eye(n)[x] - E * v)
            rhs.append(0.0)
            # column 1 − p:  (1 − p_x) − e^ε (1 − v·p) ≤ 0  ⇔  −p_x + e^ε v·p ≤ e^ε − 1
            rows.append(-np.eye(n)[x] + E * v)
            rhs.append(E - 1.0)
    A, b = np.array(rows), np.array(rhs)
    best = -np.inf
    for a in range(n):
        for c in range(n):
            if a == c:
                continue
            cost = np.zeros(n)
            cost[a], cost[c] = -1.0, 1.0
            res = linprog(cost, A_ub=A, b_ub=b, bounds=[(0, 1)] * n, method="highs")
            assert res.status == 0
            best = max(best, -res.fun)
    return best


def _dob(n, eps, prior_set):
    return {"alphabet": n, "epsilon": eps, "prior_set": prior_set, "objective": {"kind": "dobrushin"}}


def _dirichlet(n, seed):
    p = np.random.default_rng(seed).dirichlet(np.ones(n)) + 0.05
    p = np.round(p / p.sum(), 10)
    p[-1] = 1 - p[:-1].sum()
    return [float(v) for v in p]


CASES = []
for n, eps in [(3, 0.3), (5, 0.2), (6, 0.5), (8, 0.1)]:
    P = _dirichlet(n, n)
    CASES.append((f"point N={n}", n, eps, {"kind": "point", "prior": P}, [P]))
    H = [_dirichlet(n, n + s) for s in range(3)]
    CASES.append((f"hull N={n}", n, eps, {"kind": "hull", "priors": H}, H))
for n, eps in [(3, 0.4), (5, 0.3), (6, 0.2)]:
    lower = [(1 + i % 3) / (4 * n) for i in range(n)]
    upper = [min(1.0, 3.0 / n + i / (2 * n)) for i in range(n)]
    CASES.append((f"box N={n}", n, eps, {"kind": "box", "lower": lower, "upper": upper}, box_vertices(lower, upper)))
for n, eps in [(4, 0.3), (6, 0.2)]:
    center = _dirichlet(n, 7 * n)
    r = 0.05
    CASES.append((f"l1 N={n}", n, eps, {"kind": "l1_ball", "center": center, "radius": r}, l1_vertices(center, r)))


@pytest.mark.parametrize("name,n,eps,prior_set,vertices", CASES, ids=[c[0] for c in CASES])
def test_lazy_pairs_reach_the_optimum_of_every_pair_lp(name, n, eps, prior_set, vertices):
    result = design(_dob(n, eps, prior_set))
    assert "pair" in result.solve.method  # the lazy engine ran, not the one-LP path
    expected = eta_by_vertices(vertices, eps)
    assert result.is_ok, (result.status, result.solve.message)
    assert result.certificate.lp_objective == pytest.approx(expected, abs=1e-8)
    assert result.objective == pytest.approx(expected, abs=1e-8)
    # the reported bound is a true upper bound on the optimum of the independent LP
    assert result.certificate.dual_bound >= expected - 1e-12
    assert result.certificate.feasible


def test_lazy_pairs_stop_at_the_bound_one():
    """With ε large every pair reaches TV = 1 (a kernel with a zero column entry per output), and the
    engine stops after the first pair: 1 is a bound of every pair."""
    n = 7
    P = _dirichlet(n, 1)
    expected = eta_by_vertices([P], 5.0)
    assert expected == pytest.approx(1.0, abs=1e-9)
    result = design(_dob(n, 5.0, {"kind": "point", "prior": P}))
    assert result.is_ok
    assert result.solve.lps == 1
    assert result.objective == pytest.approx(1.0, abs=1e-9)


def test_pair_bounds_from_one_dual_bound_every_pair_like_dual_bound():
    """PairBounds.add with one y gives, for each pair, the same number as lp.program.dual_bound on that
    pair's LP (within the rounding slack): the closed form of the two changed terms is right."""
    from dataclasses import replace

    from mechdesign.lp.program import LPBuilder, dual_bound
    from mechdesign.objectives.compile import add_pml_kernel
    from mechdesign.engines.dobrushin_pairs import PairBounds
    from mechdesign.spec.models import load_spec

    n = 5
    spec = load_spec(_dob(n, 0.3, {"kind": "point", "prior": _dirichlet(n, 3)}))
    b = LPBuilder()
    K = add_pml_kernel(b, spec, 2)
    p = K[:, 0]
    lp = b.build((p[:1], np.zeros(1)), sense=-1)
    y = np.random.default_rng(0).normal(size=lp.num_rows)
    pb = PairBounds(lp, p)
    assert pb.add(y)
    for a in range(n):
        for c in range(n):
            if a == c:
                continue
            cost = np.zeros(lp.num_cols)
            cost[p[a]], cost[p[c]] = -1.0, 1.0  # minimise p_c − p_a (sense −1 stores −objective)
            ab = dual_bound(replace(lp, c=cost), y)
            cost[p[a]], cost[p[c]] = 1.0, -1.0
            ba = dual_bound(replace(lp, c=cost), y)
            assert pb.bound[a, c] == pytest.approx(min(ab, ba, 1.0), rel=1e-9, abs=1e-9)


def test_fractions_in_the_spec_are_kept():
    """The box of the benchmark (lower masses 1/(4N), 2/(4N), 3/(4N)), written as fractions."""
    n = 6
    lower = [f"{1 + i % 3}/{4 * n}" for i in range(n)]
    result = design(_dob(n, 0.2, {"kind": "box", "lower": lower, "upper": [1] * n}))
    expected = eta_by_vertices(box_vertices([float(Fraction(v)) for v in lower], [1.0] * n), 0.2)
    assert result.is_ok
    assert result.objective == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize(
    "prior_set,vertices",
    [
        ({"kind": "point", "prior": [0.1, 0.1, 0.2, 0.2, 0.4]}, [[0.1, 0.1, 0.2, 0.2, 0.4]]),
        (
            {"kind": "hull", "priors": [[0.1, 0.1, 0.3, 0.5], [0.2, 0.2, 0.3, 0.3]]},
            [[0.1, 0.1, 0.3, 0.5], [0.2, 0.2, 0.3, 0.3]],
        ),
        ({"kind": "point", "prior": [0.05, 0.3, 0.05, 0.3, 0.3]}, [[0.05, 0.3, 0.05, 0.3, 0.3]]),
    ],
)
def test_symbols_with_equal_entries_share_their_pairs_value(prior_set, vertices):
    """Classes of interchangeable symbols: one pair per pair of classes is solved, and the value is
    still the maximum over *every* pair of the independent LP."""
    n = len(vertices[0])
    result = design(_dob(n, 0.3, prior_set))
    expected = eta_by_vertices(vertices, 0.3)
    assert result.is_ok
    assert result.objective == pytest.approx(expected, abs=1e-8)
    assert result.certificate.dual_bound >= expected - 1e-12
    assert result.solve.lps <= 6  # at most one LP per pair of classes (3 classes here, 2 for the hull)
