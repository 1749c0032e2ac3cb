"""``mechdesign verify`` at large N (brief bigverify): kernel files read as int64 numerators, no Fraction per entry.

The fast reader (:mod:`mechdesign.release.kernel_arrays`) must give *the same* verify run as the exact
Fraction path it bypasses: the same kernel (numerators and denominator), the same exit status and the same
report, byte for byte, on every file kind — including the files it declines (then the Fraction path runs).
Expected values come from two independent sources: the Fraction path itself (the fast reader switched off by
monkeypatching it to return None) and, for verdicts and worst ratios, the Fraction oracle of
``tests/helpers/exact_oracle.py`` (which imports nothing from mechdesign).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import run_cli
import mechdesign.release.kernel_arrays as kernel_arrays
from helpers.exact_oracle import check_kernel
from mechdesign.certify.exact import ExactKernel, GridKernel, verify_kernel
from mechdesign.cli.args import parse_epsilon, parse_prior_set
from mechdesign.cli.main import main
from mechdesign.release import kernel_io
from mechdesign.spec.errors import InputError

ULP = Fraction(1, 1 << 52)


def _both(capsys, monkeypatch, argv):
    """(fast run, Fraction-path run): each as (status, stdout, stderr)."""
    fast = run_cli(capsys, *argv)
    with monkeypatch.context() as m:
        m.setattr(kernel_arrays, "read_normalised_fast", lambda path: None)
        slow = run_cli(capsys, *argv)
    return fast, slow


def _write_csv(path, rows):
    path.write_text("\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return path


def _write_json(path, rows, floats=True):
    data = {"kernel_exact": [[str(v) for v in r] for r in rows]}
    if floats:
        data["kernel"] = [[float(v) for v in r] for r in rows]
    path.write_text(json.dumps(data, indent=1))
    return path


def _old_kernel(path) -> ExactKernel:
    """The kernel as the Fraction path reads it (before normalisation)."""
    rows, source = kernel_io._read_rows(path)
    return kernel_io._from_rows(rows, source, stochastic=False)


def _fractions(kernel: ExactKernel) -> list[list[Fraction]]:
    return [[Fraction(int(v), kernel.denominator) for v in row] for row in np.asarray(kernel.numerators)]


# ---------------------------------------------------------------------------------------------- the reader


def test_csv_of_grid_fractions_is_read_as_int64_equal_to_each_fraction(tmp_path):
    rows = [
        [Fraction(3, 4) + ULP, Fraction(1, 4) - ULP],
        [Fraction(1, 4), Fraction(3, 4)],
        [Fraction(1), Fraction(0)],
    ]
    path = _write_csv(tmp_path / "k.csv", rows)
    kernel, normalised = kernel_arrays.read_normalised_fast(path)
    assert isinstance(kernel, GridKernel) and normalised == []
    assert kernel.denominator == 1 << 52  # lcm of the reduced denominators 2^52, 4, 1
    assert _fractions(kernel) == rows  # each entry is exactly Fraction(text)
    old = _old_kernel(path)
    assert (
        old.denominator == kernel.denominator and (np.asarray(old.numerators, dtype=object) == kernel.numerators).all()
    )


def test_csv_with_mixed_non_dyadic_denominators(tmp_path):
    rows = [[Fraction(1, 3), Fraction(2, 3), Fraction(0)], [Fraction(1, 6), Fraction(5, 12), Fraction(5, 12)]]
    path = tmp_path / "k.csv"
    path.write_text("1/3,2/3,0\n2/12,5/12,10/24\n")  # unreduced on purpose: the denominator is the lcm of 3, 6, 12
    kernel, _ = kernel_arrays.read_normalised_fast(path)
    assert kernel.denominator == 12
    assert _fractions(kernel) == rows


@pytest.mark.parametrize(
    "text",
    [
        "0.25,0.75\n0.5,0.5\n",  # decimals
        "1/4, 3/4\n1/2,1/2\n",  # a space
        "# comment\n1/4,3/4\n1/2,1/2\n",
        "1/4,3/4\n\n1/2,1/2\n",  # a blank line
        "-1/4,5/4\n1/2,1/2\n",  # a sign
        "1/4,3/4\n1/2,1/2,0\n",  # ragged
        "1/4,3/4\n1/0,1/2\n",  # a zero denominator
        "1/2/2,3/4\n1/2,1/2\n",
        "1234567890123456789/2,1\n1,0\n",  # 19 digits
        "1/4,,3/4\n1/2,0,1/2\n",
    ],
)
def test_csv_outside_the_grammar_is_left_to_the_fraction_path(tmp_path, text):
    path = tmp_path / "k.csv"
    path.write_text(text)
    assert kernel_arrays.read_normalised_fast(path) is None


def test_dyadic_numerators_of_floats_are_exact():
    floats = np.array([[0.1, 0.9], [2.0**-60, 1 - 2.0**-60], [0.0, 1.0]])
    ints, den = kernel_arrays.dyadic_numerators(floats)
    # 0.1 has 55 binary digits after the point, 2^-60: 60; the lcm of the reduced denominators is 2^60
    assert den == 1 << 60
    assert [[Fraction(int(a), den) for a in row] for row in ints] == [[Fraction(v) for v in row] for row in floats]
    assert kernel_arrays.dyadic_numerators(np.array([[5e-324, 1.0]])) is None  # a subnormal: 2^-1074
    assert kernel_arrays.dyadic_numerators(np.array([[2.0**-63, 1.0]])) is None


# ------------------------------------------------------------------------------------ verify: fast == exact


def _kernel_files(tmp_path, rows, kinds=("csv", "json", "npy")):
    files = []
    if "csv" in kinds:
        files.append(_write_csv(tmp_path / "k.csv", rows))
    if "json" in kinds:
        files.append(_write_json(tmp_path / "k.json", rows))
    if "npy" in kinds and all(Fraction(float(v)) == v for r in rows for v in r):
        np.save(tmp_path / "k.npy", np.array([[float(v) for v in r] for r in rows]))
        files.append(tmp_path / "k.npy")
    return files


BOUNDARY = [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]]
"""Ratio exactly 3 = e^(log 3) under the simplex: private, on the boundary."""
OVER = [[Fraction(3, 4) + ULP, Fraction(1, 4) - ULP], [Fraction(1, 4), Fraction(3, 4)]]
"""One unit of 2^-52 over the boundary: not private."""


@pytest.mark.parametrize("rows, status", [(BOUNDARY, 0), (OVER, 1)])
def test_boundary_and_one_unit_over_agree_with_the_fraction_path_and_the_oracle(
    tmp_path, capsys, monkeypatch, rows, status
):
    oracle = check_kernel(rows, {"alphabet": 2, "epsilon": "log(3)", "prior_set": {"kind": "simplex"}})
    assert oracle.private == (status == 0)
    for path in _kernel_files(tmp_path, rows):
        argv = ["verify", path, "--prior-set", "simplex", "--epsilon", "log(3)"]
        fast, slow = _both(capsys, monkeypatch, argv)
        assert fast == slow and fast[0] == status, path
        # the worst ratio printed is the oracle's exact ratio
        assert f"= {oracle.worst_ratio} " in fast[1]
        fast, slow = _both(capsys, monkeypatch, argv + ["--json"])
        assert fast == slow
        assert json.loads(fast[1])["worst_ratio"] == str(oracle.worst_ratio)


def test_violating_columns_listed_alike(tmp_path, capsys, monkeypatch):
    rows = [["1/2", "1/4", "1/4"], ["1/8", "1/4", "5/8"], ["1/4", "1/2", "1/4"]]
    K = [[Fraction(v) for v in r] for r in rows]
    c, n = Fraction(1, 8), 3
    # Lemma 4 (Dobrushin paper): min over Q_X(c) of P.k = c sum_x k_x + (1 - Nc) min_x k_x; the ratios are
    # 8/3, 16/9 and 40/19, against e^0.6 = 1.822...: columns 0 and 2 break it, column 1 does not
    ratios = [max(col) / (c * sum(col) + (1 - n * c) * min(col)) for col in zip(*K)]
    assert ratios == [Fraction(8, 3), Fraction(16, 9), Fraction(40, 19)]
    oracle = check_kernel(rows, {"alphabet": 3, "epsilon": "0.6", "prior_set": {"kind": "min_mass", "c": "1/8"}})
    assert not oracle.private and oracle.worst_ratio == Fraction(8, 3)
    for path in _kernel_files(tmp_path, K):
        argv = ["verify", path, "--prior-set", "{kind: min_mass, c: 1/8}", "--epsilon", "0.6", "--json"]
        fast, slow = _both(capsys, monkeypatch, argv)
        assert fast == slow and fast[0] == 1
        data = json.loads(fast[1])
        assert [(v["output"], Fraction(v["ratio"])) for v in data["violating_outputs"]] == [
            (0, ratios[0]),
            (2, ratios[2]),
        ]
        assert data["worst_ratio"] == str(oracle.worst_ratio)


@pytest.mark.parametrize(
    "name, content",
    [
        ("negative.csv", "1/2,1/2\n-1/4,5/4\n"),
        ("far.csv", "1/2,1/2\n1/2,1/4\n"),
        ("near.csv", "1/2,1/2\n1/3,6666666667/10000000000\n"),  # within 1e-9 of 1: normalised
        ("ragged.csv", "1/2,1/2\n1\n"),
        ("decimal.csv", "0.5,0.5\n0.25,0.75\n"),
        ("shape.csv", "1/3,1/3,1/3\n1/3,1/3,1/3\n1/3,1/3,1/3\n"),  # N = 3 against a spec with N = 2
    ],
)
def test_bad_or_unusual_csv_reports_alike(tmp_path, capsys, monkeypatch, name, content):
    path = tmp_path / name
    path.write_text(content)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: simplex}\nobjective: {kind: expected_loss, loss: hamming}\n"
    )
    for argv in (["verify", path, "--prior-set", "simplex", "--epsilon", "1"], ["verify", path, "--spec", spec]):
        fast, slow = _both(capsys, monkeypatch, argv)
        assert fast == slow


def _npy(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, array)
    return path


@pytest.mark.parametrize(
    "name, array",
    [
        ("negative.npy", np.array([[0.5, 0.5], [-0.25, 1.25]])),
        ("far.npy", np.array([[0.5, 0.5], [0.5, 0.25]])),
        ("nan.npy", np.array([[0.5, np.nan], [0.5, 0.5]])),
        ("inf.npy", np.array([[0.5, 0.5], [np.inf, 0.5]])),
        ("subnormal.npy", np.array([[5e-324, 1 - 5e-324], [0.5, 0.5]])),  # 1 - 5e-324 == 1.0: within 1e-9
        ("tiny.npy", np.array([[2.0**-70, 1 - 2.0**-52], [0.5, 0.5]])),
        ("third.npy", np.array([[1 / 3, 2 / 3], [2 / 3, 1 / 3]])),  # sums 1 - 2^-54: normalised
        ("shape.npy", np.array([0.5, 0.5])),
        ("cube.npy", np.full((2, 2, 2), 0.5)),
        ("float32.npy", np.array([[0.25, 0.75], [0.5, 0.5]], dtype=np.float32)),
        ("ints.npy", np.array([[1, 0], [0, 1]], dtype=np.int32)),
        ("bools.npy", np.array([[True, False], [False, True]])),
    ],
)
def test_npy_reports_alike(tmp_path, capsys, monkeypatch, name, array):
    path = _npy(tmp_path, name, array)
    fast, slow = _both(capsys, monkeypatch, ["verify", path, "--prior-set", "simplex", "--epsilon", "1"])
    assert fast == slow


def test_npy_subnormal_kernel_is_read_exactly_by_the_fallback(tmp_path):
    # the grid 2^-1074 is far outside int64: the Fraction path keeps it exact (the row sums to 1 + 2^-1074 - ...
    # within 1e-9 of 1, so it is divided by its exact sum)
    array = np.array([[0.5, 0.5 - 2.0**-53, 5e-324], [0.25, 0.5, 0.25]])
    path = _npy(tmp_path, "k.npy", array)
    assert kernel_arrays.read_normalised_fast(path) is None
    kernel, normalised = kernel_io.read_kernel_normalised(path)
    exact = [[Fraction(v) for v in r] for r in array]
    expected = [[v / sum(r, Fraction(0)) for v in r] for r in exact]
    assert normalised == [0] and _fractions(kernel) == expected


@pytest.mark.parametrize(
    "text",
    [
        # the names inside another value: only the top-level keys count
        '{"labels": ["\\"kernel_exact\\": [[\\"1\\"]]"], "kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]]}',
        '{"meta": {"kernel_exact": [["1", "0"], ["0", "1"]]}, "kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]]}',
        '{"kernel_exact": [["1", "0"], ["0", "1"]], "kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]]}',
        '{"kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]], "kernel": [[0.5, 0.5], [0.25, 0.75]]}',
        '{"kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]], "kernel": [[0.5, 0.5], [0.25, 0.75.1]]}',  # bad float
        '{"kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]], "kernel": [[0.5, 0.5], [0.25, 07]]}',  # leading 0
        '{"kernel_exact": [["1 /2", "1/2"], ["1/4", "3/4"]]}',  # a space inside a string
        '{"kernel_exact": [[" 1/2", "1/2"], ["1/4", "3/4"]]}',
        '{"kernel_exact": [["1/2, 1/2"], ["1/4", "3/4"]]}',  # a comma inside a string
        '{"kernel_exact": [["1/2", 1], ["1/4", "3/4"]]}',  # a number among the strings
        '{"kernel_exact": [["1/2", "1/2"] ["1/4", "3/4"]]}',  # malformed
        '{"kernel_exact": [["1/2", "1/2"],, ["1/4", "3/4"]]}',
        '{"kernel_exact": [["1/2", "1/2"], ["1/4", "3/4"]]',  # unterminated
        '{"kernel_exact": [["1/2", "1/2"], ["-1/4", "5/4"]]}',
        '{"kernel_exact": [["1/2", "1/2"], ["1/4", "1/4"]]}',  # a row sum far from 1
        '{"kernel_exact": [], "kernel": [[0.5, 0.5], [0.25, 0.75]]}',
        '[["1/2", "1/2"], ["1/4", "3/4"]]',
        '{"kernel_exact":[["1/2","1/2"],["1/4","3/4"]],"kernel":[[0.5,0.5],[0.25,0.75]]}',
    ],
)
def test_json_reports_alike(tmp_path, capsys, monkeypatch, text):
    path = tmp_path / "k.json"
    path.write_text(text)
    fast, slow = _both(capsys, monkeypatch, ["verify", path, "--prior-set", "simplex", "--epsilon", "1"])
    assert fast == slow


def test_json_pieces_of_many_rows(tmp_path, capsys, monkeypatch):
    # more than one 8 MB piece is not needed to cross a cut: shrink the piece size so every row is a piece
    rng = np.random.default_rng(5)
    ints = rng.integers(0, 1 << 20, size=(7, 5))
    ints[:, -1] = (1 << 22) - ints[:, :-1].sum(axis=1)
    rows = [[Fraction(int(a), 1 << 22) for a in r] for r in ints]
    path = _write_json(tmp_path / "k.json", rows)
    monkeypatch.setattr(kernel_arrays, "_JSON_CHUNK", 16)
    kernel, _ = kernel_arrays.read_normalised_fast(path)
    assert _fractions(kernel) == rows
    fast, slow = _both(
        capsys, monkeypatch, ["verify", path, "--prior-set", "{kind: min_mass, c: 1/20}", "--epsilon", "3"]
    )
    assert fast == slow


# ------------------------------------------------------------------------- verify_kernel: int64 == Python ints


def _object_kernel(rows) -> ExactKernel:
    """An ExactKernel whose numerators are an object array of Python ints larger than int64 (so that every
    function takes its Python-integer path): the same rationals on the denominator 2^70."""
    den = 1 << 70
    return ExactKernel(np.array([[int(Fraction(v) * den) for v in r] for r in rows], dtype=object), den)


@pytest.mark.parametrize(
    "rows",
    [
        [["1/2", "1/2"], ["-1/4", "5/4"]],  # a negative entry
        [["1/2", "1/4"], ["1/4", "3/4"]],  # a row not summing to 1
        [["1/2", "1/2"], ["1/4", "3/4"]],
        [["1", "0"], ["1", "0"]],
        [["1", "0"], ["0", "1"]],  # unbounded ratio
    ],
)
def test_verify_kernel_on_int64_matches_the_python_integer_path(rows):
    prior_set, eps = parse_prior_set("{kind: min_mass, c: 1/8}", n=2), parse_epsilon("1")
    den = 1 << 52
    grid = GridKernel(np.array([[int(Fraction(v) * den) for v in r] for r in rows], dtype=np.int64), den)
    a = verify_kernel(grid, prior_set, eps)
    b = verify_kernel(_object_kernel(rows), prior_set, eps)
    assert (a.private, a.decided, a.row_sums, a.negative) == (b.private, b.decided, b.row_sums, b.negative)
    assert list(a.check.ratios) == list(b.check.ratios)
    assert a.check.worst_output == b.check.worst_output and a.check.worst_ratio == b.check.worst_ratio
    # row sums from the text, independently
    assert a.row_sums == [sum((Fraction(v) for v in r), Fraction(0)) for r in rows]


# ------------------------------------------------------------------------------------ hypothesis: random kernels

_DENOMINATORS = st.sampled_from([1 << 52, 1 << 10, 3, 12, 1 << 60])


@st.composite
def _kernels(draw):
    n, m = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    den = draw(_DENOMINATORS)
    rows = []
    for _ in range(n):
        cuts = sorted(draw(st.lists(st.integers(0, den), min_size=m - 1, max_size=m - 1)))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [den])]
        rows.append([Fraction(p, den) for p in parts])
    if draw(st.booleans()):  # break it: one entry moved by one unit (rows off 1, or a negative entry)
        x, y = draw(st.integers(0, n - 1)), draw(st.integers(0, m - 1))
        rows[x][y] += draw(st.sampled_from([Fraction(1, den), Fraction(-1, den)]))
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_kernels(), eps=st.sampled_from(["0.5", "1", "log(3)", "3"]), c=st.sampled_from(["0", "1/20", "1/8"]))
def test_random_kernels_verify_alike_and_as_the_oracle_says(tmp_path_factory, capsys, monkeypatch, rows, eps, c):
    tmp_path = tmp_path_factory.mktemp("k")
    prior = "simplex" if c == "0" else f"{{kind: min_mass, c: {c}}}"
    raw_prior = {"kind": "simplex"} if c == "0" else {"kind": "min_mass", "c": c}
    oracle = check_kernel(rows, {"alphabet": len(rows), "epsilon": eps, "prior_set": raw_prior})
    for path in _kernel_files(tmp_path, rows):
        fast, slow = _both(capsys, monkeypatch, ["verify", path, "--prior-set", prior, "--epsilon", eps, "--json"])
        assert fast == slow, path
        if oracle.stochastic:
            assert fast[0] == (0 if oracle.private else 1)
            data = json.loads(fast[1])
            if oracle.worst_ratio is not None:
                assert Fraction(data["worst_ratio"]) == oracle.worst_ratio
        else:
            assert fast[0] == 2 or any(abs(sum(r) - 1) <= Fraction(1, 10**9) for r in rows)


# -------------------------------------------------------------------------------------------------- writers


def test_npy_writer_round_trips_a_grid_kernel(tmp_path):
    rng = np.random.default_rng(1)
    ints = rng.integers(0, 1 << 40, size=(5, 4))
    ints[:, -1] = (1 << 52) - ints[:, :-1].sum(axis=1)
    kernel = GridKernel(ints.astype(np.int64), 1 << 52)
    kernel_io.write_kernel(kernel, tmp_path / "k.npy")
    back = np.load(tmp_path / "k.npy")
    assert [[Fraction(v) for v in r] for r in back] == _fractions(kernel)


def test_npy_writer_refuses_entries_that_are_not_doubles(tmp_path):
    kernel = ExactKernel.from_fractions([[Fraction(1, 3), Fraction(2, 3)], [Fraction(1, 2), Fraction(1, 2)]])
    with pytest.raises(InputError, match="not all doubles"):
        kernel_io.write_kernel(kernel, tmp_path / "k.npy")


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_text_writers_hold_each_entry_exactly(tmp_path, monkeypatch, suffix):
    import mechdesign.release.kernel_text as kernel_text

    monkeypatch.setattr(kernel_text, "ROWS_PER_BLOCK", 4)  # blocks of one row (M = 3): the joins between blocks
    rng = np.random.default_rng(2)
    ints = rng.integers(0, 1 << 50, size=(6, 3))
    ints[:, -1] = (1 << 52) - ints[:, :-1].sum(axis=1)
    ints[0] = [0, 1 << 52, 0]
    kernel = GridKernel(ints.astype(np.int64), 1 << 52)
    path = tmp_path / f"k.{suffix}"
    kernel_io.write_kernel(kernel, path)
    expected = _fractions(kernel)
    if suffix == "csv":
        assert [[Fraction(v) for v in line.split(",")] for line in path.read_text().splitlines()] == expected
    else:
        data = json.loads(path.read_text())
        assert [[Fraction(v) for v in r] for r in data["kernel_exact"]] == expected
        assert data["kernel_exact"] == [[str(v) for v in r] for r in expected]  # reduced "p/q", as str(Fraction)
        assert [[Fraction(v) for v in r] for r in data["kernel"]] == expected  # the floats are exact too
    assert math.isclose(float(sum(expected[1])), 1.0)


# ---------------------------------------------------------------------- the JSON number rows against json.loads


def _json_rows_of_numbers(text: str) -> bool:
    """The oracle: Python's json module reads ``[text]`` as a non-empty list of non-empty lists of numbers."""
    try:
        data = json.loads("[" + text + "]")
    except json.JSONDecodeError:
        return False
    return bool(data) and all(isinstance(r, list) and r and all(type(v) in (int, float) for v in r) for r in data)


@pytest.mark.parametrize(
    "text",
    [
        "[0.5, 0.25], [1e-5, 2E+3]",
        "[-0.5e-3, 0, -0, 10]",
        "[1 2]",
        "[1.]",
        "[.5]",
        "[+1]",
        "[1e]",
        "[--1]",
        "[]",
        "[1.2e3.4]",
        "[1e2e3]",
        "[01]",
        "[-01]",
        "[0.01, 1e05]",
        "[1-2]",
        "[1],[2]",
        "[1] [2]",
        "[1],,[2]",
        "[1,]",
        "[[1]]",
        "[1e-]",
        "[1.5e+10 , 3 ]\n ,\t[4]",
    ],
)
def test_number_rows_validity_is_json_loads(text):
    valid = kernel_arrays._number_rows_valid(np.frombuffer(text.encode(), dtype=np.uint8))
    assert (valid if valid is not None else _json_rows_of_numbers(text)) == _json_rows_of_numbers(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.eE+-, []\n", min_size=1, max_size=30))
def test_number_rows_validity_is_json_loads_on_random_text(text):
    valid = kernel_arrays._number_rows_valid(np.frombuffer(text.encode(), dtype=np.uint8))
    assert valid is not None and valid == _json_rows_of_numbers(text)


_TOKENS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
    st.integers(-(10**20), 10**20).map(str),
    st.text(alphabet="0123456789.eE+-", min_size=1, max_size=8),
)
_GLUE = st.sampled_from([",", ", ", " ,", ",\n ", " ", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_TOKENS, _GLUE), min_size=1, max_size=4), min_size=1, max_size=3), _GLUE)
def test_number_rows_validity_is_json_loads_on_number_like_rows(rows, between):
    text = between.join("[" + "".join(t + g for t, g in row[:-1]) + row[-1][0] + "]" for row in rows)
    valid = kernel_arrays._number_rows_valid(np.frombuffer(text.encode(), dtype=np.uint8))
    assert valid is not None and valid == _json_rows_of_numbers(text), text


@pytest.mark.parametrize(
    "spec_text",
    [
        "alphabet: 5\nepsilon: 1\nprior_set: {kind: min_mass, c: 1/10}\nobjective: {kind: expected_loss, loss: hamming}\n",
        "alphabet: 3\nepsilon: 0.5\nprior_set: {kind: simplex}\nobjective: {kind: expected_loss, loss: absolute}\n",
    ],
)
def test_solve_json_streamed_is_the_old_text_byte_for_byte(tmp_path, capsys, monkeypatch, spec_text):
    from mechdesign.design import design
    from mechdesign.spec.json_values import dumps_indented
    from mechdesign.spec.models import load_spec
    import mechdesign.release.kernel_text as kernel_text

    spec = tmp_path / "s.yaml"
    spec.write_text(spec_text)
    monkeypatch.setattr(kernel_text, "ROWS_PER_BLOCK", 4)  # several blocks of rows even at N = 5
    status = main(["solve", str(spec), "--json", "-q"])
    streamed = capsys.readouterr().out
    assert status == 0
    data = json.loads(streamed)
    result = design(load_spec(spec))
    # the old writer: the whole object through dumps_indented (the accuracy lines as the CLI computes them)
    old = (
        dumps_indented(
            {**result.to_json(), "mle_accuracy": data["mle_accuracy"], "inversion_accuracy": data["inversion_accuracy"]}
        )
        + "\n"
    )
    ignore = ("seconds", "compile_seconds", "certify_seconds", "total_seconds")  # wall clock differs run to run
    strip = lambda text: [line for line in text.splitlines() if not any(f'"{k}"' in line for k in ignore)]  # noqa: E731
    assert strip(streamed) == strip(old)
    main(["solve", str(spec), "-q", "-o", str(tmp_path / "r.json")])
    assert strip((tmp_path / "r.json").read_text()) == strip(old)


def test_a_wide_first_line_is_ragged_not_a_huge_allocation(tmp_path, capsys, monkeypatch):
    # 10^6 fields on the first line and 10^4 one-field lines: N·M = 10^10 entries would be 160 GB of int64
    path = tmp_path / "k.csv"
    path.write_text(",".join(["0"] * 10**6) + "\n" + "1\n" * 10**4)
    assert kernel_arrays.parse_fraction_text(path.read_bytes()) is None
    status, out, err = run_cli(capsys, "verify", path, "--prior-set", "simplex", "--epsilon", "1")
    assert status == 2 and "ragged kernel" in err + out


def _old_read(path):
    """read_kernel_normalised with the fast reader off: (kernel fractions, normalised rows) or the error text."""
    saved = kernel_arrays.read_normalised_fast
    kernel_arrays.read_normalised_fast = lambda p: None
    try:
        kernel, normalised = kernel_io.read_kernel_normalised(path)
        return _fractions(kernel), normalised
    except (InputError, ValueError) as exc:
        return f"error: {exc}"
    finally:
        kernel_arrays.read_normalised_fast = saved


_SPACE = st.sampled_from(["", " ", "\n", "\n  ", "\t"])


@st.composite
def _json_texts(draw):
    """A kernel_exact JSON text with random white space, sometimes mutated by one byte."""
    n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    den = draw(st.sampled_from([4, 6, 1 << 52]))
    rows = []
    for _ in range(n):
        cuts = sorted(draw(st.lists(st.integers(0, den), min_size=m - 1, max_size=m - 1)))
        rows.append([str(Fraction(b - a, den)) for a, b in zip([0] + cuts, cuts + [den])])
    s = lambda: draw(_SPACE)  # noqa: E731
    body = ("," + s()).join("[" + s() + ("," + s()).join(f'"{v}"' for v in r) + s() + "]" for r in rows)
    text = '{"kernel_exact":' + s() + "[" + s() + body + s() + "]" + s() + "}"
    for _ in range(draw(st.integers(0, 2))):  # a byte replaced or inserted, mostly next to a digit
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        at = draw(st.sampled_from(digits)) + draw(st.sampled_from([0, 1])) if digits else 0
        cut = draw(st.sampled_from([0, 1]))
        text = text[:at] + draw(st.sampled_from(['"', ",", " ", "[", "]", "/", "0", "-", ""])) + text[at + cut :]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_json_texts())
def test_random_json_texts_read_as_the_fraction_path_reads_them(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("j") / "k.json"
    path.write_text(text)
    old = _old_read(path)
    try:
        fast = kernel_arrays.read_normalised_fast(path)
    except InputError as exc:
        assert old == f"error: {exc}", text
        return
    if fast is not None:
        assert (_fractions(fast[0]), fast[1]) == old, text


@pytest.mark.parametrize("den_bits", [0, 3, 52])
@pytest.mark.parametrize("quoted", [False, True])
def test_fraction_lines_are_str_of_each_fraction(monkeypatch, den_bits, quoted):
    import mechdesign.release.kernel_text as kernel_text

    monkeypatch.setattr(kernel_text, "ROWS_PER_BLOCK", 6)
    rng = np.random.default_rng(den_bits)
    den = 1 << den_bits
    ints = rng.integers(-den, den + 1, size=(7, 3))
    ints[0] = [0, den, -den]  # 0, 1 and -1: "0", "1", "-1" (no "/1")
    ints[1, 0] = 1  # 1/den (just "1" when den = 1)
    kernel = GridKernel(ints.astype(np.int64), den)
    lines = [line for block in kernel_text.fraction_line_blocks(kernel, quoted) for line in block]
    # str(Fraction) is the text every entry must have (the Fraction path's own reading of it is Fraction(text))
    expected = [[str(Fraction(int(a), den)) for a in row] for row in ints]
    assert lines == [json.dumps(r) if quoted else ",".join(r) for r in expected]


@pytest.mark.parametrize(
    "block",
    [
        np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25]]),  # few values
        np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]),  # many distinct values
        np.array([[0.0, -0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]),  # -0.0 kept apart
        np.array([[1e-300, 1.0, 1.0, 1.0, 1.0, 1.0]] * 3),
    ],
)
def test_float_lines_are_json_dumps_of_each_row(block):
    import mechdesign.release.kernel_text as kernel_text

    assert kernel_text._float_lines(block) == [json.dumps(row) for row in block.tolist()]


@pytest.mark.parametrize(
    "text", ["1/2,1/2\n1/4,3/4", "1/2,1/2\n1/4,3/4\n", "1/2,1/2\n1/4,3/4\n\n\n", "1/2,1/2\r\n1/4,3/4\r\n"]
)
def test_final_newlines_do_not_matter(text):
    p, q, shape = kernel_arrays.parse_fraction_text(text.encode())
    assert shape == (2, 2) and p.tolist() == [1, 1, 1, 3] and q.tolist() == [2, 2, 4, 4]
