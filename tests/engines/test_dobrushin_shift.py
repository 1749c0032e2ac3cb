"""The Dobrushin coefficient over prior sets with no two interchangeable symbols: the lazy pair engine with the
mass-shift bounds (mechdesign.engines.dobrushin_shift) against an independent LP written here.

Expected values: Lemma 3 of the Dobrushin paper (binary outputs suffice), so η_TV(ε,𝒫) is the largest over
ordered pairs (a, b) of v(a, b) = max p_a − p_b s.t. [p, 1 − p] is (ε,𝒫)-PML; for a polytope 𝒫 the PML
constraint of a column k is k_x ≤ e^ε v·k for every symbol x and every vertex v of 𝒫 (docs/explanation/mathematics.md, section 'Linear constraints'). The
vertices are listed here (box by enumeration, ℓ1-ball by pycddlib, point and hull as given) and every pair LP is
solved with scipy.optimize.linprog: no mechdesign LP code is involved. The mass shifts κ are checked against
their own definition, max κ s.t. P, Q ∈ 𝒫, Q − P = κ(e_a − e_b), also solved with linprog.
"""

import itertools
import math
from fractions import Fraction

import cdd
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign import design
from mechdesign.engines import dobrushin_pairs
from mechdesign.engines.dobrushin_shift import mass_shifts, pair_shift_bounds
from mechdesign.spec.models import load_spec


# ------------------------------------------------------------------ independent computations
def box_vertices(lower, upper):
    """Vertices of {lower ≤ P ≤ upper, Σ P = 1}: every coordinate but one at a bound."""
    n = len(lower)
    out = []
    for free in range(n):
        others = [i for i in range(n) if i != free]
        for at in itertools.product((0, 1), repeat=n - 1):
            P = np.zeros(n)
            for i, hi in zip(others, at):
                P[i] = upper[i] if hi else lower[i]
            P[free] = 1.0 - P[others].sum()
            if lower[free] - 1e-12 <= P[free] <= upper[free] + 1e-12:
                out.append(P)
    return np.unique(np.round(out, 14), axis=0)


def l1_vertices(center, radius):
    """Vertices of {P ≥ 0, Σ P = 1, Σ_x s_x (P_x − c_x) ≤ r for every sign vector s}, by pycddlib."""
    n = len(center)
    c = np.asarray(center, float)
    rows = [[radius + float(np.dot(s, c))] + list(-np.asarray(s)) for s in itertools.product((-1.0, 1.0), repeat=n)]
    rows += [[0.0] + list(np.eye(n)[x]) for x in range(n)]
    rows.append([-1.0] + [1.0] * n)
    mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
    mat.lin_set = {len(rows) - 1}
    gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array)
    assert np.all(gen[:, 0] == 1.0)  # a polytope: points only
    return gen[:, 1:]


def pair_values(vertices, eps):
    """V[a, b] = max p_a − p_b over [p, 1 − p] PML for every vertex (scipy HiGHS), every ordered pair."""
    V = np.asarray(vertices, float)
    n = V.shape[1]
    E = math.exp(eps)
    rows, rhs = [], []
    for v in V:
        for x in range(n):
            rows.append(np.eye(n)[x] - E * v)  # column p:      p_x − e^ε v·p ≤ 0
            rhs.append(0.0)
            rows.append(-np.eye(n)[x] + E * v)  # column 1 − p:  (1 − p_x) ≤ e^ε (1 − v·p)
            rhs.append(E - 1.0)
    A, b = np.array(rows), np.array(rhs)
    out = np.full((n, n), -np.inf)
    for a, c in itertools.permutations(range(n), 2):
        cost = np.zeros(n)
        cost[a], cost[c] = -1.0, 1.0
        res = linprog(cost, A_ub=A, b_ub=b, bounds=[(0, 1)] * n, method="highs")
        assert res.status == 0
        out[a, c] = -res.fun
    return out


def shift_by_lp(vertices, a, b):
    """max κ s.t. P = V λ, Q = V μ (λ, μ in the simplex), Q − P = κ (e_a − e_b)."""
    V = np.asarray(vertices, float).T  # N × number of vertices
    n, m = V.shape
    d = np.zeros(n)
    d[a], d[b] = 1.0, -1.0
    A_eq = np.vstack(
        [
            np.hstack([-V, V, -d[:, None]]),
            np.r_[np.ones(m), np.zeros(m), 0.0],
            np.r_[np.zeros(m), np.ones(m), 0.0],
        ]
    )
    b_eq = np.r_[np.zeros(n), 1.0, 1.0]
    cost = np.zeros(2 * m + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * (2 * m + 1), method="highs")
    assert res.status == 0
    return -res.fun


def _dob(n, eps, prior_set):
    return {"alphabet": n, "epsilon": eps, "prior_set": prior_set, "objective": {"kind": "dobrushin"}}


def _distribution(n, seed, floor=0.02):
    p = np.random.default_rng(seed).dirichlet(np.ones(n)) + floor
    p = np.round(p / p.sum(), 10)
    p[-1] = 1 - p[:-1].sum()
    return [float(v) for v in p]


def _box_up(n, seed):
    """lower and upper both distinct per symbol (no two symbols interchangeable)."""
    rng = np.random.default_rng(seed)
    lower = np.round(rng.uniform(0.2, 1.0, n) / n, 6)
    upper = np.round(lower + rng.uniform(0.3, 3.0, n) / n, 6)
    return [float(v) for v in lower], [float(v) for v in np.minimum(upper, 1.0)]


# (name, N, ε, prior set, its vertices): η < 1 and η = 1 for each kind; hull5 has N vertices near those of
# Q_X(c), where the mass-shift bound of a hull (κ = 0) is loose and every pair LP runs
CASES = []
for n, eps in [(5, 0.3), (6, 2.0)]:
    lower = [(n + i) / (4 * n * n) for i in range(n)]
    CASES.append((f"box upper=1 N={n} eps={eps}", n, eps, {"kind": "box", "lower": lower, "upper": [1.0] * n}))
    lo, up = _box_up(n, n)
    CASES.append((f"box N={n} eps={eps}", n, eps, {"kind": "box", "lower": lo, "upper": up}))
    CASES.append((f"point N={n} eps={eps}", n, eps, {"kind": "point", "prior": _distribution(n, n)}))
    hull = [_distribution(n, n + s, floor=0.1) for s in range(3)]
    CASES.append((f"hull N={n} eps={eps}", n, eps, {"kind": "hull", "priors": hull}))
    # centre masses both below and above r/2 = 0.05, so both cases of the ℓ1 shift occur
    CASES.append(
        (f"l1 N={n} eps={eps}", n, eps, {"kind": "l1_ball", "center": _distribution(n, 3 * n, 0.0), "radius": 0.1})
    )
CASES.append(("point heavy N=4 eps=0.4", 4, 0.4, {"kind": "point", "prior": [0.05, 0.1, 0.25, 0.6]}))
CASES.append(("l1 wide N=4 eps=0.3", 4, 0.3, {"kind": "l1_ball", "center": [0.05, 0.15, 0.3, 0.5], "radius": 0.9}))
_qx = [[0.1 + 0.5 * (i == j) + 0.01 * ((i * 7 + j * 3) % 5) for i in range(5)] for j in range(5)]
CASES.append(("hull5 N=5 eps=0.5", 5, 0.5, {"kind": "hull", "priors": [list(np.array(v) / sum(v)) for v in _qx]}))
# 8 vertices: past the all-vertex-pairs size, the hull's witnesses come from the heaviest vertices per symbol
_qx7 = [[0.05 + 0.6 * (i == j % 7) + 0.01 * ((i * 5 + j * 3) % 7) for i in range(7)] for j in range(8)]
CASES.append(("hull8 N=7 eps=0.3", 7, 0.3, {"kind": "hull", "priors": [list(np.array(v) / sum(v)) for v in _qx7]}))


def vertices_of(prior_set):
    kind = prior_set["kind"]
    if kind == "point":
        return [prior_set["prior"]]
    if kind == "hull":
        return prior_set["priors"]
    if kind == "box":
        return box_vertices(prior_set["lower"], prior_set["upper"])
    return l1_vertices(prior_set["center"], prior_set["radius"])


def no_two_interchangeable(prior_set, n):
    """Every symbol's column of per-symbol data differs from every other's (no swap maps 𝒫 onto itself
    by the engine's symmetry rule)."""
    fields = {k: v for k, v in prior_set.items() if k not in ("kind", "radius")}
    columns = []
    for v in fields.values():
        columns.extend(v if isinstance(v[0], list) else [v])
    keys = {tuple(col[x] for col in columns) for x in range(n)}
    return len(keys) == n


@pytest.mark.parametrize("name,n,eps,prior_set", CASES, ids=[c[0] for c in CASES])
def test_engine_reaches_the_largest_pair_lp(name, n, eps, prior_set):
    assert no_two_interchangeable(prior_set, n)
    values = pair_values(vertices_of(prior_set), eps)
    expected = values.max()
    result = design(_dob(n, eps, prior_set))
    assert result.solve.method == "lazy pair LPs"
    assert result.is_ok, (result.status, result.solve.message)
    assert result.certificate.feasible
    assert result.objective == pytest.approx(expected, abs=1e-8)
    assert result.certificate.dual_bound >= expected - 1e-12  # a true bound on the independent optimum
    assert result.certificate.dual_bound <= expected + 1e-7
    if eps >= 2.0:
        assert expected == pytest.approx(1.0, abs=1e-9)  # the cases meant to reach TV = 1 do
    elif "hull5" not in name:
        assert expected < 1 - 1e-3


@pytest.mark.parametrize("name,n,eps,prior_set", CASES, ids=[c[0] for c in CASES])
def test_shift_bounds_bound_every_pair(name, n, eps, prior_set):
    values = pair_values(vertices_of(prior_set), eps)
    bounds = pair_shift_bounds(load_spec(_dob(n, eps, prior_set)))
    off = ~np.eye(n, dtype=bool)
    assert np.all(bounds[off] >= values[off] - 1e-12)
    assert np.all(bounds[off] <= 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_box_and_l1_shifts_are_witnessed(seed):
    """κ_ab of the closed forms never exceeds the largest shift with a witness pair (P, Q) in 𝒫 (the LP of
    its definition); for the box the closed form is that largest shift."""
    n = 5
    lo, up = _box_up(n, 100 + seed)
    center = _distribution(n, 200 + seed, 0.0)
    radius = [0.1, 0.3, 0.6, 1.5][seed]
    # a box whose upper masses sum to barely more than 1 (the shift is capped by Σ upper − 1 there)
    tight = list(np.round(np.array(_distribution(n, 300 + seed)) + 0.004, 6))
    sets = (
        {"kind": "box", "lower": lo, "upper": up},
        {"kind": "box", "lower": [v / 2 for v in tight], "upper": tight},
        {"kind": "l1_ball", "center": center, "radius": radius},
    )
    for prior_set in sets:
        spec = load_spec(_dob(n, 0.5, prior_set))
        per_symbol, exceptions = mass_shifts(spec.prior_set, n)
        verts = vertices_of(prior_set)
        for a, b in itertools.combinations(range(n), 2):
            kappa = float(exceptions.get((a, b), min(per_symbol[a], per_symbol[b])))
            best = shift_by_lp(verts, a, b)
            assert kappa <= best + 1e-9
            if prior_set["kind"] == "box":
                assert kappa == pytest.approx(best, abs=1e-9)


def test_one_lp_when_a_pair_reaches_its_shift_bound():
    """The benchmark's shapes: a box with every lower mass distinct and upper 1, a point prior at small ε.
    One pair LP reaches the bound of every pair; the value is the independent LP's."""
    n = 7
    for prior_set, eps in (
        ({"kind": "box", "lower": [f"{n + i}/{4 * n * n}" for i in range(n)], "upper": [1] * n}, 1.0),
        ({"kind": "point", "prior": _distribution(n, 5)}, 0.2),
    ):
        result = design(_dob(n, eps, prior_set))
        ps = dict(prior_set)
        if ps["kind"] == "box":
            ps["lower"] = [float(Fraction(v)) for v in ps["lower"]]
            ps["upper"] = [1.0] * n
        expected = pair_values(vertices_of(ps), eps).max()
        assert result.is_ok
        assert result.solve.lps == 1
        assert result.objective == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("flat_bounds", [False, True])
def test_pruning_never_skips_the_best_pair(monkeypatch, flat_bounds):
    """The order is rigged so that the best pair is solved last: the tie-breaking score is minus the pair's
    true value (from the independent LP), and with ``flat_bounds`` the mass-shift bounds are replaced by 1
    (every pair open, ordered by the score alone, the best last). The engine must still reach the optimum."""
    n = 6
    lo, up = _box_up(n, 11)
    prior_set = {"kind": "box", "lower": lo, "upper": up}
    eps = 0.4
    values = pair_values(vertices_of(prior_set), eps)
    expected = values.max()
    sym = np.maximum(values, values.T)
    monkeypatch.setattr(dobrushin_pairs, "pair_order_score", lambda prior_set, n: -sym)
    if flat_bounds:
        monkeypatch.setattr(dobrushin_pairs, "pair_shift_bounds", lambda spec: np.ones((spec.n, spec.n)))
    result = design(_dob(n, eps, prior_set))
    assert result.is_ok
    assert result.solve.lps >= 2  # the order made it try a worse pair first
    assert result.objective == pytest.approx(expected, abs=1e-8)
    assert result.certificate.dual_bound >= expected - 1e-12


@settings(max_examples=15)
@given(
    n=st.integers(3, 5),
    seed=st.integers(0, 10**6),
    eps=st.sampled_from([0.05, 0.2, 0.5, 1.0, 3.0]),
)
def test_random_generic_boxes(n, seed, eps):
    lo, up = _box_up(n, seed)
    if sum(up) < 1.0:
        up[-1] = 1.0
    prior_set = {"kind": "box", "lower": lo, "upper": up}
    expected = pair_values(box_vertices(lo, up), eps).max()
    result = design(_dob(n, eps, prior_set))
    assert result.is_ok, (result.status, result.solve.message)
    assert result.objective == pytest.approx(expected, abs=1e-8)
    assert result.certificate.dual_bound >= expected - 1e-12


@settings(max_examples=20)
@given(
    n=st.integers(3, 6),
    extra=st.integers(0, 3),
    noise=st.sampled_from([0.0, 0.02, 0.2, 1.0]),
    seed=st.integers(0, 10**6),
    eps=st.sampled_from([0.05, 0.3, 1.0]),
)
def test_hull_witness_bounds_hold(n, extra, noise, seed, eps):
    """The hull's approximate witnesses (vertex pairs that differ by a shift plus a residual) bound every
    pair LP: random hulls around the vertices of Q_X(c) (where the shift is large) with random noise."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.2, 0.9) / n
    verts = []
    for j in range(n + extra):
        v = np.full(n, c)
        v[j % n] += 1 - n * c
        v = v * (1 + noise * rng.uniform(0, 1, n))
        verts.append(list(np.round(v / v.sum(), 9)))
    for v in verts:
        v[-1] = 1 - sum(v[:-1])
    prior_set = {"kind": "hull", "priors": verts}
    values = pair_values(verts, eps)
    bounds = pair_shift_bounds(load_spec(_dob(n, eps, prior_set)))
    off = ~np.eye(n, dtype=bool)
    assert np.all(bounds[off] >= values[off] - 1e-12)


@pytest.mark.parametrize("n,c,eps", [(4, "1/10", "1/2"), (10, "1/40", "log(10/3)"), (7, "1/7", "1")])
def test_shift_bound_of_q_x_c_is_theorem_1(n, c, eps):
    """Q_X(c) written as a box (lower c, upper 1): every pair's mass shift is 1 − Nc, and the bound is the
    Dobrushin paper's Theorem 1, Ξ(ε,c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1} (c = 1/N: Remark 1, e^ε − 1)."""
    spec = load_spec(_dob(n, eps, {"kind": "box", "lower": [c] * n, "upper": [1] * n}))
    mpmath.mp.dps = 50
    if eps == "log(10/3)":
        e = mpmath.mpf(10) / 3
    else:
        e = mpmath.exp(mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator)
    q = Fraction(c)
    xi = min((e - 1) / (e * (1 - n * mpmath.mpf(q.numerator) / q.denominator) + 1), mpmath.mpf(1))
    bounds = pair_shift_bounds(spec)
    off = ~np.eye(n, dtype=bool)
    assert bounds[off] == pytest.approx(float(xi), rel=1e-12)
    assert all(mpmath.mpf(v) >= xi for v in bounds[off])  # rounded up


@pytest.mark.parametrize("lower", [[0.1, 0.05, 0.05, 0.05, 0.05], [0.05, 0.05, 0.1, 0.05, 0.05]])
def test_metric_guarantee_breaks_the_prior_sets_symmetry(lower):
    """A box whose symbols 1..4 (or 0, 1, 3, 4) share their entries, plus ε'·|x − x'|-privacy (a metric that is
    not symmetric under those swaps): the pair engine itself (called directly: design() would hide a false bound
    behind its exact fallback at this size) reaches the independent optimum, and its bound holds. Independent LP:
    the box's vertices lower + (1 − Σ lower) e_j, and the metric rows p_x ≤ e^{ε'|x−x'|} p_x',
    1 − p_x ≤ e^{ε'|x−x'|} (1 − p_x') (Chatzikokolakis et al. 2013) for the binary kernel [p, 1 − p]."""
    n, eps, eps_metric = 5, 1.0, 0.25
    verts = box_vertices(lower, [1.0] * n)
    E = math.exp(eps)
    rows, rhs = [], []
    for v in verts:
        for x in range(n):
            rows += [np.eye(n)[x] - E * v, -np.eye(n)[x] + E * v]
            rhs += [0.0, E - 1.0]
    for x, y in itertools.permutations(range(n), 2):
        w = math.exp(eps_metric * abs(x - y))
        rows += [np.eye(n)[x] - w * np.eye(n)[y], -np.eye(n)[x] + w * np.eye(n)[y]]
        rhs += [0.0, w - 1.0]
    expected = -np.inf
    for a, c in itertools.permutations(range(n), 2):
        cost = np.zeros(n)
        cost[a], cost[c] = -1.0, 1.0
        res = linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(0, 1)] * n, method="highs")
        expected = max(expected, -res.fun)
    spec = load_spec(
        {
            "alphabet": n,
            "privacy": [
                {"epsilon": eps, "prior_set": {"kind": "box", "lower": lower, "upper": [1] * n}},
                {"epsilon": eps_metric, "metric": {"kind": "absolute"}},
            ],
            "objective": {"kind": "dobrushin"},
        }
    )
    out = dobrushin_pairs.solve_dobrushin_pairs(spec)
    assert out.value == pytest.approx(expected, abs=1e-8)
    assert out.bound >= expected - 1e-12
