"""The one-pass exact repair of the certify stage: mixing with the mean-row constant kernel in
integer grid arithmetic (:func:`mechdesign.certify.grid_repair.mix_on_grid`) and integer rounding to the
coarser snapping grids (:class:`mechdesign.certify.grid_repair.CoarseRounding`).

Independent references, written here with Fractions from the definitions:

* privacy: tests/helpers/exact_oracle.py (no mechdesign import), for ε = log E written as text, so e^ε = E exactly:
  K is (ε,𝒫)-PML iff max_x K_x(y) ≤ e^ε · min_{P∈𝒫} P·K(:,y) for every y (docs/explanation/mathematics.md, section 'Linear constraints');
* the smallest mixing weight: for a column k of K and the mean row q, the mixture (1 − w)k + w q_y 1 has
  max − E·min_P P·(·) = (1 − w)(max k − E min_P P·k) + w q_y (1 − E) (every P sums to 1), linear in w, so
  column y needs w ≥ u_y / (u_y + (E − 1) q_y) where u_y = max k − E min_P P·k > 0;
* the coarse rounding: per row, floor to the grid, then +1 to the entries with the largest remainders,
  ties to the lower column index (the definition in :func:`mechdesign.certify.exact.to_grid`).

The kernels are on the grid 2^−52 and adversarial: columns exactly tight, one unit of 2^−52 over and
under the boundary, zero columns, columns of a few units, rows with all their mass on one output.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.exact_oracle import PriorSetOracle, check_kernel
from mechdesign.certify.exact import GridKernel, check_pml, repair
from mechdesign.certify.grid_repair import CoarseRounding, mix_on_grid
from mechdesign.spec.models import load_spec

D = 1 << 52


def raw_prior_set(kind: str, c: Fraction) -> dict:
    return {"kind": "min_mass", "c": str(c)} if kind == "min_mass" else {"kind": "simplex"}


def raw_spec(n: int, kind: str, c: Fraction, bound: Fraction) -> dict:
    """A spec as the oracle reads it, with e^ε = ``bound`` exactly (ε = log(bound), or 0 for bound 1)."""
    eps = "0" if bound == 1 else f"log({bound.numerator}/{bound.denominator})"
    return {"alphabet": n, "epsilon": eps, "prior_set": raw_prior_set(kind, c), "objective": {"kind": "dobrushin"}}


def prior_set(kind: str, c: Fraction):
    return load_spec(
        {"alphabet": 2, "epsilon": 1, "prior_set": raw_prior_set(kind, c), "objective": {"kind": "dobrushin"}}
    ).prior_set


def oracle_private(ints, den: int, kind: str, c: Fraction, bound: Fraction) -> bool:
    rows = [[Fraction(int(v), den) for v in row] for row in ints]
    return check_kernel(rows, raw_spec(len(rows), kind, c, bound)).private


def smallest_weight(ints, kind: str, c: Fraction, bound: Fraction) -> Fraction:
    """w* = max over failing columns of u_y / (u_y + (E − 1) q_y) (module docstring), from Fractions; 1 when
    a column fails and E = 1 (no mixture below the constant kernel helps)."""
    n, m = len(ints), len(ints[0])
    oracle = PriorSetOracle(raw_prior_set(kind, c), n)
    need = Fraction(0)
    for y in range(m):
        col = [Fraction(int(ints[x][y]), D) for x in range(n)]
        q = sum(col) / n
        u = max(col) - bound * oracle.minimise(col)[0]
        if u > 0:
            need = max(need, Fraction(1) if bound == 1 else u / (u + (bound - 1) * q))
    return need


@st.composite
def grid_kernels(draw):
    """(int numerators on 2^−52 with rows summing to 2^52, kind, c, E); zero entries where the mixing's
    row corrections go first (the first columns), so that a −1 can meet an entry 0."""
    kind = draw(st.sampled_from(["min_mass", "simplex"]))
    n = draw(st.integers(2, 6))
    c = Fraction(draw(st.integers(1, 4)), draw(st.integers(4, 10)) * n) if kind == "min_mass" else Fraction(0)
    m = draw(st.integers(1, 6))
    cap = D // (m + 2)
    base = [draw(st.integers(1, cap)) for _ in range(n)]
    cols = [base]
    for _ in range(m - 1):
        how = draw(st.sampled_from(["random", "over", "under", "zero", "same", "tiny", "flat"]))
        if how == "random":
            cols.append([draw(st.integers(0, cap)) for _ in range(n)])
        elif how == "zero":
            cols.append([0] * n)
        elif how == "tiny":  # a few units of 2^−52: rounding noise, large relative errors
            cols.append([draw(st.integers(0, 4)) for _ in range(n)])
        elif how == "flat":
            v = draw(st.integers(1, cap))
            cols.append([v] * n)
        elif how == "same":
            cols.append(list(base))
        else:  # one unit of 2^−52 over or under the boundary that column 0 sets
            col = list(base)
            top = col.index(max(col))
            col[top] += 1 if how == "over" else -1
            cols.append(col)
    ints = [[col[x] for col in cols] + [0] for x in range(n)]
    for row in ints:  # the last column takes each row's remainder: rows sum to 2^52
        row[-1] = D - sum(row)
    for x in draw(st.lists(st.integers(0, n - 1), max_size=2)):  # rows with all their mass on one output
        j = draw(st.integers(0, m))
        ints[x] = [D if y == j else 0 for y in range(m + 1)]
    for x in draw(st.lists(st.integers(0, n - 1), max_size=3)):  # rows with zeros in their first columns
        j = draw(st.integers(1, m))
        ints[x] = [0] * j + ints[x][j:-1] + [ints[x][-1] + sum(ints[x][:j])]
    oracle = PriorSetOracle(raw_prior_set(kind, c), n)
    low = oracle.minimise([Fraction(v) for v in base])[0]
    tight = Fraction(max(base)) / low if low > 0 else Fraction(3)
    bound = draw(
        st.sampled_from(
            [tight, tight * Fraction(D - 1, D), tight * Fraction(D + 1, D), Fraction(27182818, 10**7), Fraction(3)]
        )
    )
    return ints, kind, c, max(bound, Fraction(1))


def margin_bound(ints, c: Fraction, bound: Fraction, w_star: Fraction) -> Fraction:
    """The docstring's bound on the weight of mix_on_grid: (w* + max_y 2(1+E) / ((E−1) s_y/N − 2(1+E)))
    (1 + 2^−30) + 2^−85, the max over live columns (s_y in units of 2^−52)."""
    n = len(ints)
    extra = Fraction(0)
    for y in range(len(ints[0])):
        s = sum(int(ints[x][y]) for x in range(n))
        if s:
            room = (bound - 1) * Fraction(s, n) - 2 * (1 + bound)
            extra = max(extra, 2 * (1 + bound) / room) if room > 0 else Fraction(10**9)
    return (w_star + extra) * (1 + Fraction(1, 1 << 30)) + Fraction(1, 1 << 85)


@settings(max_examples=300, deadline=None)
@given(grid_kernels())
def test_repair_passes_the_independent_check(case):
    """Whatever path the repair takes (passes as is, snaps, mixes in one pass, searches, or gives the
    constant kernel), its kernel is private by the oracle, and a kernel that passes is returned as is."""
    ints, kind, c, bound = case
    kernel = GridKernel(np.array(ints, dtype=np.int64), D)
    ps = prior_set(kind, c)
    for snap in (True, False):
        fixed, weight, check = repair(kernel, ps, bound, snap=snap)
        assert check.feasible
        assert oracle_private(fixed.int64(), fixed.denominator, kind, c, bound)
        if oracle_private(ints, D, kind, c, bound):
            assert weight == 0 and np.array_equal(fixed.int64(), kernel.int64())


@settings(max_examples=100, deadline=None)
@given(grid_kernels(), st.data())
def test_repair_of_a_kernel_with_a_zero_row_gives_a_private_stochastic_kernel(case, data):
    """A zero row (not stochastic, so never private): the repair's kernel is stochastic and private by the oracle."""
    ints, kind, c, bound = case
    x = data.draw(st.integers(0, len(ints) - 1))
    ints[x] = [0] * len(ints[x])
    fixed, _, check = repair(GridKernel(np.array(ints, dtype=np.int64), D), prior_set(kind, c), bound)
    assert check.feasible  # (weight 0 when a snap's row normalisation already fixed it)
    assert oracle_private(fixed.int64(), fixed.denominator, kind, c, bound)


@settings(max_examples=300, deadline=None)
@given(grid_kernels(), st.data())
def test_one_pass_mix_is_private_close_to_the_mixture_and_not_heavier_than_needed(case, data):
    """mix_on_grid: rows sum to 1, entries ≥ 0, every entry within 2 units of 2^−52 of the exact mixture
    (1 − w)K + w 1qᵀ, private by the oracle, w* ≤ w ≤ the docstring's bound, and a linear objective
    moves by at most w·|L(K) − L(1qᵀ)| plus the rounding (2 units per entry)."""
    ints, kind, c, bound = case
    n, m = len(ints), len(ints[0])
    w_star = smallest_weight(ints, kind, c, bound)
    out = mix_on_grid(np.array(ints, dtype=np.int64), D, c, bound)
    cap = margin_bound(ints, c, bound, w_star)
    if out is None:
        # only when (★) cannot be met below w = 1 (a column too light for the rounding margin, or E = 1), or
        # when a row's −1 meets an entry 0 of a column that gets less than one unit from the mix (w q_y < 2^−52)
        light = any(w_star * sum(ints[x][y] for x in range(n)) < n for y in range(m) if any(r[y] for r in ints))
        assert cap >= 1 or bound == 1 or light
        return
    mixed, w = out
    assert w_star <= w <= cap
    assert all(v >= 0 for row in mixed.tolist() for v in row)
    assert all(sum(row) == D for row in mixed.tolist())
    assert oracle_private(mixed, D, kind, c, bound)
    q = [Fraction(sum(ints[x][y] for x in range(n)), n) for y in range(m)]
    exact = [[(1 - w) * ints[x][y] + w * q[y] for y in range(m)] for x in range(n)]
    assert all(abs(int(mixed[x, y]) - exact[x][y]) < 2 for x in range(n) for y in range(m))
    loss = data.draw(st.lists(st.lists(st.integers(0, 9), min_size=m, max_size=m), min_size=n, max_size=n))

    def value(rows):  # a linear objective Σ_xy loss_xy K_xy (uniform prior), rows in units of 2^−52
        return sum(Fraction(loss[x][y]) * rows[x][y] for x in range(n) for y in range(m)) / (n * D)

    const = [[q[y] for y in range(m)] for _ in range(n)]
    moved = abs(value(mixed.tolist()) - value(ints))
    assert moved <= w * abs(value(ints) - value(const)) + Fraction(2 * sum(map(sum, loss)), n * D)


def dense_kernel(n: int, seed: int) -> np.ndarray:
    K = np.random.default_rng(seed).dirichlet(np.full(n, 0.5), size=n)
    ints = np.rint(K * D).astype(np.int64)
    ints[:, 0] += D - ints.sum(axis=1)
    return ints


def test_one_pass_mix_of_a_dense_kernel_is_within_the_margin_of_the_smallest_weight():
    """A 60 × 60 random kernel far from ε = 1: the weight is w* up to the rounding of the weight (a relative
    2^−30) and the margin of the docstring, 2(1+E) / ((E−1) s_y / N) ≈ 1e−13 here."""
    ints = dense_kernel(60, 7)
    E = Fraction(27182818, 10**7)
    for kind, c in (("min_mass", Fraction(1, 120)), ("simplex", Fraction(0))):
        w_star = smallest_weight(ints.tolist(), kind, c, E)
        mixed, w = mix_on_grid(ints, D, c, E)
        assert 0 < w_star <= w <= w_star * (1 + Fraction(1, 1 << 30)) + Fraction(1, 10**12)
        assert oracle_private(mixed, D, kind, c, E)


def test_repair_of_a_large_kernel_is_the_one_pass_mix():
    """Past SEARCH_ALSO_BELOW entries (300 × 300) the repair is the one-pass mix: same kernel, same weight."""
    ints = dense_kernel(300, 8)
    E = Fraction(27182818, 10**7)
    for kind, c in (("min_mass", Fraction(1, 600)), ("simplex", Fraction(0))):
        mixed, w = mix_on_grid(ints, D, c, E)
        fixed, weight, check = repair(GridKernel(ints, D), prior_set(kind, c), E, snap=False)
        assert check.feasible and weight == w > 0 and np.array_equal(fixed.int64(), mixed)


def reference_coarse(ints, from_bits: int, to_bits: int) -> list[list[int]]:
    """Per row: ⌊A / 2^d⌋, then +1 to the (2^to_bits − Σ⌊·⌋) largest remainders, ties to the lower index."""
    d = from_bits - to_bits
    out = []
    for row in ints:
        floor = [v >> d for v in row]
        rem = [v - (f << d) for v, f in zip(row, floor)]
        deficit = (1 << to_bits) - sum(floor)
        for y in sorted(range(len(row)), key=lambda j: (-rem[j], j))[:deficit]:
            floor[y] += 1
        out.append(floor)
    return out


@settings(max_examples=200, deadline=None)
@given(grid_kernels(), st.sampled_from([48, 44, 40, 37]), st.data())
def test_coarse_rounding_follows_its_definition(case, to_bits, data):
    ints = case[0]
    rounding = CoarseRounding(np.array(ints, dtype=np.int64), 52, to_bits)
    got = rounding.kernel()
    assert got.tolist() == reference_coarse(ints, 52, to_bits)
    assert all(sum(row) == 1 << to_bits for row in got.tolist())
    ys = data.draw(st.lists(st.integers(0, len(ints[0]) - 1), max_size=6))
    assert np.array_equal(rounding.columns(ys), got[:, ys])


def test_coarse_rounding_with_many_ties():
    """Remainders that tie across most of each row (the case the per-column tie count is for), rows in one
    block and in blocks of two."""
    rng = np.random.default_rng(3)
    n, m, d = 30, 50, 4
    ints = (rng.integers(0, 1 << 40, size=(n, m)) << d) + rng.integers(0, 3, size=(n, m))
    ints[:, -1] = 0
    ints[:, -1] = D - ints.sum(axis=1)
    want = reference_coarse(ints.tolist(), 52, 52 - d)
    import mechdesign.certify.grid_repair as grid_repair

    for block in (1 << 16, 120):  # one block of rows, and blocks of 2 rows
        old, grid_repair._ROW_BLOCK_ENTRIES = grid_repair._ROW_BLOCK_ENTRIES, block
        try:
            rounding = CoarseRounding(ints, 52, 52 - d)
            assert rounding.kernel().tolist() == want
            assert rounding.columns(range(m)).tolist() == want
            assert rounding.columns([7, 3, 3, 49]).tolist() == [[row[y] for y in (7, 3, 3, 49)] for row in want]
        finally:
            grid_repair._ROW_BLOCK_ENTRIES = old


def test_repair_snaps_a_vertex_a_few_ulps_off_to_its_exact_value():
    """Remark 2 of the Dobrushin paper: a solver's 7/8 + 3·2^−52 for 7/8 snaps back on the grid 2^−48 (rounded
    in integers now), with weight 0; ε = log 7 makes [[7/8, 1/8], [1/8, 7/8]] exactly tight (ratio 7)."""
    off = (7 * D) // 8 + 3
    ints = np.array([[off, D - off], [D - off, off]], dtype=np.int64)
    ps = prior_set("simplex", Fraction(0))
    assert not check_pml(GridKernel(ints, D), ps, Fraction(7)).feasible  # ratio (7/8 + 3u)/(1/8 − 3u) > 7
    fixed, weight, check = repair(GridKernel(ints, D), ps, Fraction(7))
    assert weight == 0 and check.feasible
    assert fixed.fractions() == [[Fraction(7, 8), Fraction(1, 8)], [Fraction(1, 8), Fraction(7, 8)]]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 9), st.integers(1, 6), st.data())
def test_rounding_to_the_fine_grid_by_blocks_of_rows_follows_its_definition(n, m, data):
    """to_grid at 52 bits, rows taken a few at a time (ROW_BLOCK_ENTRIES = 8 here): each row clipped to [0, 1],
    rounded to the nearest multiple of 2^−52 (half to even), its first largest entry absorbing the remainder
    (tests/certify/test_certify_grid.py states the same definition for whole kernels)."""
    import mechdesign.certify.exact as exact

    floats = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 1.0, 1e-300, 0.1, 1 / 3])
    K = np.array(data.draw(st.lists(floats, min_size=n * m, max_size=n * m))).reshape(n, m)
    K[:, 0] += 1 - K.sum(axis=1)  # near stochastic: the blocked path applies
    K = np.clip(K, 0, 1)
    old = exact.ROW_BLOCK_ENTRIES
    exact.ROW_BLOCK_ENTRIES = 8
    try:
        got = exact.to_grid(K)
    finally:
        exact.ROW_BLOCK_ENTRIES = old
    for x in range(n):
        nums = [round(Fraction(float(v)) * D) for v in K[x]]
        nums[nums.index(max(nums))] += D - sum(nums)
        if min(nums) >= 0:
            assert got.int64()[x].tolist() == nums


def test_exact_sums_of_a_tall_kernel_in_blocks_of_rows():
    """5000 rows of entries up to 2^52: column sums past 2^63 in int64 blocks of 2047 rows, against Python ints."""
    from mechdesign.certify.grid_arith import exact_sums

    ints = np.random.default_rng(1).integers(D // 2, D + 1, size=(5000, 3), dtype=np.int64)
    want = [sum(int(v) for v in ints[:, y]) for y in range(3)]
    assert max(want) > 1 << 63
    assert exact_sums(ints, axis=0, largest=D).tolist() == want
    assert exact_sums(ints.T.copy(), axis=1, largest=D).tolist() == want


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 52), st.lists(st.integers(-(1 << 52), 1 << 52), min_size=1, max_size=12), st.booleans())
def test_strings_of_a_grid_kernel_are_the_reduced_fractions(k, values, as_grid):
    """kernel_exact: each entry A / 2^k written as str(Fraction(A, 2^k)) (Python's reduced "p/q", "p" if q = 1)."""
    from mechdesign.certify.exact import ExactKernel

    den = 1 << k
    values = [v % (den + 1) if k < 52 else v for v in values] + [0, den]
    ints = np.array([values, values[::-1]], dtype=np.int64)
    kernel = GridKernel(ints, den) if as_grid else ExactKernel(ints.astype(object), den)
    assert kernel.strings() == [[str(Fraction(int(v), den)) for v in row] for row in ints.tolist()]


@settings(max_examples=200, deadline=None)
@given(grid_kernels(), st.sampled_from([1, 4, 8, 12]))
def test_a_violation_that_outlasts_rounding_fails_on_the_coarse_grid(case, d):
    """The snapping skip: when a column breaks PML by ≥ 2^d (1 + E) units of 2^−52 (from its max, min and sum),
    the kernel rounded to 2^−(52−d) fails the independent check too (every entry moved by < 2^d units)."""
    from mechdesign.certify.exact import _violation_outlasts_rounding

    ints, kind, c, bound = case
    kernel = GridKernel(np.array(ints, dtype=np.int64), D)
    if _violation_outlasts_rounding(kernel, range(len(ints[0])), prior_set(kind, c), bound, d):
        coarse = CoarseRounding(kernel.int64(), 52, 52 - d).kernel()
        assert not oracle_private(coarse, 1 << (52 - d), kind, c, bound)


def test_a_column_far_over_the_bound_skips_every_snapping_grid():
    """Column 0 = [0.6, 0.2, 0.2] against E = 2 over the simplex (ratio 3): no rounding within 2^−40 mends it."""
    ints = np.array([[3 * D // 5, D - 3 * D // 5], [D // 5, D - D // 5], [D // 5, D - D // 5]], dtype=np.int64)
    from mechdesign.certify.exact import _violation_outlasts_rounding

    ps = prior_set("simplex", Fraction(0))
    assert all(_violation_outlasts_rounding(GridKernel(ints, D), [0], ps, Fraction(2), d) for d in (4, 8, 12))
    assert not _violation_outlasts_rounding(GridKernel(ints, D), [1], ps, Fraction(2), 4)  # column 1 passes
