"""The O(NM) exact certify stage: int64 grid kernels, Lemma 4 aggregates, vectorised rounding.

Every expected value here comes from an independent derivation written in this file with plain
Fractions and Python ints, straight from the definitions of docs/explanation/mathematics.md, section 'Linear constraints':

* K is row-stochastic: every entry ≥ 0, every row sums to exactly 1;
* K is (ε,𝒫)-PML with e^ε replaced by a rational E iff for every output y
  max_x K_x(y) ≤ E · min_{v vertex of 𝒫} v·K(:,y), the vertices being e_j for the simplex and
  c·1 + (1 − Nc)·e_j for Q_X(c) (all N of them enumerated, not Lemma 4's shortcut).

The kernels put columns exactly on the boundary (ratio = E) and one unit of the grid 2^−52 over and
under it, where a float check cannot decide.
"""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.certify.exact import ExactKernel, GridKernel, check_pml, repair, to_grid
from mechdesign.certify.grid_arith import exact_sums, largest_in_rows
from mechdesign.spec.models import load_spec

D = 1 << 52


# --------------------------------------------------------------------------- the independent check
def vertices(kind: str, n: int, c: Fraction) -> list[list[Fraction]]:
    """docs/explanation/mathematics.md, section 'Linear constraints': the simplex has vertices e_j; Q_X(c) has v_j = c·1 + (1 − Nc)e_j."""
    if kind == "simplex":
        return [[Fraction(int(i == j)) for i in range(n)] for j in range(n)]
    return [[c + (1 - n * c) * (i == j) for i in range(n)] for j in range(n)]


def reference_check(ints: list[list[int]], den: int, kind: str, c: Fraction, bound: Fraction):
    """(stochastic, feasible, ratios, worst column, worst ratio, worst prior) from the definitions.
    A column with max 0 has ratio None; one whose minimum over 𝒫 is ≤ 0 has ratio None and is +∞."""
    n, m = len(ints), len(ints[0])
    K = [[Fraction(v, den) for v in row] for row in ints]
    stochastic = all(v >= 0 for row in K for v in row) and all(sum(row) == 1 for row in K)
    verts = vertices(kind, n, c)
    feasible, ratios, worst = stochastic, [], (None, None, None)
    for y in range(m):
        col = [K[x][y] for x in range(n)]
        top = max(col)
        if top == 0:
            ratios.append(None)
            continue
        dots = [sum(v[x] * col[x] for x in range(n)) for v in verts]
        low = min(dots)
        prior = verts[dots.index(low)]  # the first minimising vertex
        ratio = float("inf") if low <= 0 else top / low
        feasible = feasible and ratio <= bound
        ratios.append(None if low <= 0 else ratio)
        if worst[1] is None or ratio > worst[1]:
            worst = (y, ratio, prior)
    return stochastic, feasible, ratios, worst[0], worst[1], worst[2]


# --------------------------------------------------------------------------- kernels on the boundary
@st.composite
def boundary_kernels(draw):
    """(numerators on 2^−52, kind, c, E): column 0 sets E to its own ratio (exactly tight); other
    columns are random, or copies of column 0 with its largest entry moved by ±1 (one ulp of 2^−52
    over and under the boundary); a last column takes each row's remainder, so the rows sum to 1
    unless ``stochastic`` is drawn False."""
    kind = draw(st.sampled_from(["min_mass", "simplex"]))
    n = draw(st.integers(2, 6))
    c = Fraction(draw(st.integers(1, 4)), draw(st.integers(4, 10)) * n) if kind == "min_mass" else Fraction(0)
    m = draw(st.integers(1, 5))
    cap = D // (m + 2)
    cols = []
    base = [draw(st.integers(0, cap)) for _ in range(n)]
    if max(base) == 0:
        base[0] = 1
    cols.append(base)
    for _ in range(m - 1):
        how = draw(st.sampled_from(["random", "over", "under", "zero", "same"]))
        if how == "random":
            cols.append([draw(st.integers(0, cap)) for _ in range(n)])
        elif how == "zero":
            cols.append([0] * n)
        elif how == "same":
            cols.append(list(base))
        else:
            col = list(base)
            top = col.index(max(col))
            col[top] += 1 if how == "over" else (-1 if col[top] > 0 else 0)
            cols.append(col)
    ints = [[col[x] for col in cols] for x in range(n)]
    if draw(st.booleans()):  # remainder column: row sums exactly 2^52
        for row in ints:
            row.append(D - sum(row))
    elif draw(st.booleans()):
        ints[0][0] = -ints[0][0] - 1  # a negative entry
    low = min(sum(v[x] * base[x] for x in range(n)) for v in vertices(kind, n, c))
    scale = draw(st.sampled_from([Fraction(1), Fraction(1), Fraction(D - 1, D), Fraction(D + 1, D)]))
    bound = max(Fraction(max(base)) / low if low > 0 else Fraction(2), Fraction(1)) * scale
    return ints, kind, c, bound


def prior_set(kind: str, c: Fraction):
    spec = {"kind": "min_mass", "c": str(c)} if kind == "min_mass" else {"kind": "simplex"}
    return load_spec({"alphabet": 2, "epsilon": 1, "prior_set": spec, "objective": {"kind": "dobrushin"}}).prior_set


@settings(max_examples=300)
@given(boundary_kernels(), st.booleans())
def test_grid_check_agrees_with_the_definition(case, as_int64):
    ints, kind, c, bound = case
    kernel = GridKernel(np.array(ints, dtype=np.int64), D) if as_int64 else ExactKernel(np.array(ints, dtype=object), D)
    got = check_pml(kernel, prior_set(kind, c), bound)
    stochastic, feasible, ratios, worst_y, worst_ratio, worst_prior = reference_check(ints, D, kind, c, bound)
    assert got.stochastic == stochastic
    assert got.feasible == feasible
    assert got.ratios == ratios
    assert got.worst_output == worst_y
    assert got.worst_ratio == worst_ratio
    assert got.worst_prior == worst_prior


def test_one_ulp_over_the_boundary_fails_and_on_it_passes():
    """Column ratios a / (c S + (1 − Nc) b) exactly at E, and with a raised by 2^−52 (docs/explanation/mathematics.md, section 'Linear constraints')."""
    c = Fraction(1, 6)  # N = 3: 1 − Nc = 1/2
    # column [6t, t, t]: S = 8t, min = t, so min_P P·k = 8t/6 + t/2 = 11t/6 and the ratio is 36/11
    t = 1 << 40
    tight = [[6 * t], [t], [t]]
    E = Fraction(36, 11)
    rows = [[v[0], D - v[0]] for v in tight]
    assert check_pml(GridKernel(np.array(rows, dtype=np.int64), D), prior_set("min_mass", c), E).feasible
    rows[0][0] += 1
    rows[0][1] -= 1
    over = check_pml(GridKernel(np.array(rows, dtype=np.int64), D), prior_set("min_mass", c), E)
    assert not over.feasible and over.stochastic and over.worst_output == 0
    assert reference_check(rows, D, "min_mass", c, E)[1] is False


# --------------------------------------------------------------------------- the integer arithmetic
@settings(max_examples=200)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.lists(st.integers(-(1 << 62), 1 << 62), min_size=36, max_size=36),
    st.sampled_from([0, 1]),
)
def test_exact_sums_equal_python_integer_sums(n, m, values, axis):
    """Sums that leave int64 (entries near 2^62) are still exact: compared with Python's unbounded ints."""
    a = np.array(values[: n * m], dtype=np.int64).reshape(n, m)
    expected = [sum(int(v) for v in (a[:, j] if axis == 0 else a[j])) for j in range(a.shape[1 - axis])]
    assert exact_sums(a, axis=axis).tolist() == expected


@pytest.mark.parametrize("sign", [1, -1])
def test_exact_sums_past_int64(sign):
    """Columns of 3000 entries of 2^52 (a column sum of a grid kernel at N = 3000) and of 2^62 leave int64."""
    a = np.full((3000, 2), sign * (1 << 52), dtype=np.int64)
    a[:4, 1] = sign * (1 << 62)
    assert exact_sums(a, axis=0).tolist() == [sign * 3000 * (1 << 52), sign * (4 * (1 << 62) + 2996 * (1 << 52))]
    assert exact_sums(a.T.copy(), axis=1).tolist() == exact_sums(a, axis=0).tolist()
    b = np.full((3, 1), sign * (1 << 62), dtype=np.int64)  # 3·2^62 < 2^64 but > 2^63
    assert exact_sums(b, axis=0).tolist() == [sign * 3 * (1 << 62)]


@settings(max_examples=200)
@given(st.integers(1, 5), st.integers(1, 8), st.data())
def test_largest_in_rows_is_the_stable_sort_prefix(n, m, data):
    """Definition: row x's first counts[x] positions when sorted by decreasing value, ties by index."""
    values = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75]), min_size=n * m, max_size=n * m)))
    values = values.reshape(n, m)
    counts = np.array(data.draw(st.lists(st.integers(0, m), min_size=n, max_size=n)), dtype=np.int64)
    expected = np.zeros((n, m), dtype=bool)
    for x in range(n):
        order = sorted(range(m), key=lambda y: (-values[x, y], y))
        expected[x, order[: counts[x]]] = True
    assert (largest_in_rows(values, counts) == expected).all()


@settings(max_examples=100)
@given(st.integers(1, 5), st.integers(1, 6), st.sampled_from([3, 10, 40, 52]), st.data())
def test_rounding_to_a_grid_follows_its_definition(n, m, bits, data):
    """to_grid: at 52 bits, entries clipped to [0, 1] and rounded to the nearest multiple of 2^−52, each row's
    (first) largest entry absorbing the remainder; coarser, each row normalised, floored, and the
    remainder given one unit at a time to the largest fractional parts (ties: lower index)."""
    floats = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 1.0, 1e-300, 0.1, 1 / 3])
    K = np.array(data.draw(st.lists(floats, min_size=n * m, max_size=n * m))).reshape(n, m)
    got = to_grid(K, bits)
    G = 1 << bits
    assert got.denominator == G and got.is_stochastic()
    for x in range(n):
        row = [Fraction(float(v)) for v in K[x]]
        if bits == 52:
            nums = [round(v * G) for v in row]  # half to even, as rint
            nums[nums.index(max(nums))] += G - sum(nums)
            if min(nums) < 0:
                continue  # the renormalising fallback, not this rule
        else:
            total = sum(Fraction(float(v)) for v in K[x])
            if total == 0:
                continue
            scaled = [Fraction(float(np.float64(v) / np.float64(K[x].sum()))) * G for v in K[x]]
            nums = [int(v) for v in scaled]  # floor: v ≥ 0
            order = sorted(range(m), key=lambda y: (-(scaled[y] - nums[y]), y))
            for y in order[: G - sum(nums)]:
                nums[y] += 1
        assert [int(v) for v in got.int64()[x]] == nums


# --------------------------------------------------------------------------- the kernel object
def test_grid_kernel_is_an_exact_kernel_with_read_only_numerators():
    ints = np.array([[3, 1], [2, 2]], dtype=np.int64)
    k = GridKernel(ints, 4)
    assert isinstance(k, ExactKernel) and k.shape == (2, 2)
    assert k.numerators.dtype == object and k.numerators.tolist() == [[3, 1], [2, 2]]
    assert type(k.numerators[0, 0]) is int
    with pytest.raises(ValueError):
        k.numerators[0, 0] = 7
    assert k.fractions() == [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 2), Fraction(1, 2)]]
    back = pickle.loads(pickle.dumps(k))
    assert back.int64().tolist() == ints.tolist() and back.denominator == 4 and back.is_stochastic()
    with pytest.raises(ValueError):
        GridKernel(np.array([[(1 << 63) - 1]], dtype=np.int64), 1)


def test_object_kernels_with_huge_numerators_take_the_generic_path():
    """Numerators beyond int64 (a kernel read by `verify` with a large denominator) still check exactly."""
    den = 3**60
    a = 3**59
    k = ExactKernel(np.array([[a, den - a], [den - a, a]], dtype=object), den)
    assert k.int64() is None
    ps = prior_set("simplex", Fraction(0))
    # ratios: column 0 is max(a, den-a)/min(a, den-a) = 2 (a = den/3)
    assert check_pml(k, ps, Fraction(2)).feasible
    assert not check_pml(k, ps, Fraction(2) - Fraction(1, 10**40)).feasible


@pytest.mark.parametrize("kind", ["min_mass", "simplex"])
def test_repair_of_a_dense_kernel_passes_the_independent_check(kind):
    """A random 40 × 40 kernel, far from private, repaired on the grid: the reference check accepts it."""
    n = 40
    rng = np.random.default_rng(5)
    K = rng.dirichlet(np.full(n, 0.3), size=n)
    c = Fraction(1, 2 * n) if kind == "min_mass" else Fraction(0)
    E = Fraction(27182818, 10**7)  # a rational below e
    fixed, weight, check = repair(to_grid(K), prior_set(kind, c), E)
    assert weight > 0 and check.feasible
    ints = [[int(v) for v in row] for row in fixed.int64()]
    assert reference_check(ints, fixed.denominator, kind, c, E)[:2] == (True, True)


@settings(max_examples=100)
@given(boundary_kernels())
def test_gamma_max_of_a_grid_kernel_is_the_vertex_ratio(case):
    """Γ_max = max_y max_v v·K(:,y) / min_v v·K(:,y) over the vertices v of 𝒫 (Dobrushin paper §IV, under
    eq. 8): outputs of zero mass under every prior skipped, ∞ when some prior gives zero mass."""
    from mechdesign.theory.measures import gamma_extremes

    ints, kind, c, _ = case
    if any(v < 0 for row in ints for v in row):
        return  # the measure is defined for kernels (entries ≥ 0)
    n, m = len(ints), len(ints[0])
    verts = vertices(kind, n, c)
    expected = Fraction(1)
    for y in range(m):
        dots = [sum(v[x] * Fraction(ints[x][y], D) for x in range(n)) for v in verts]
        if max(dots) <= 0:
            continue
        if min(dots) <= 0:
            expected = float("inf")
            break
        expected = max(expected, max(dots) / min(dots))
    got = gamma_extremes(GridKernel(np.array(ints, dtype=np.int64), D), prior_set(kind, c))
    assert got[0] == float(expected)
