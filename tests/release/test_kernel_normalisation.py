"""Kernels saved with ordinary floats.

Rule under test: rows within 1e-9 of 1 are divided by their exact rational sums and the verdict is
about that normalised kernel (one line says so); rows further off, or negative entries, are an
invalid kernel (exit 2 naming the row). "NOT PRIVATE" only ever means that the PML constraint fails.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from helpers.cli import run_cli
from mechdesign.release.kernel_io import read_kernel_normalised


def _savetxt_one_third(tmp_path):
    path = tmp_path / "k.csv"
    np.savetxt(path, np.array([[1 / 3, 2 / 3], [2 / 3, 1 / 3]]), delimiter=",")
    # the premise: in exact terms the written row does not sum to 1
    first = [Fraction(v) for v in path.read_text().splitlines()[0].split(",")]
    assert sum(first) != 1 and abs(sum(first) - 1) < Fraction(1, 10**15)
    return path


def test_float_saved_kernel_is_normalised_and_verified(tmp_path, capsys):
    path = _savetxt_one_third(tmp_path)
    # K ~ [[1/3,2/3],[2/3,1/3]] has column ratios ~2 (LDP level ~log 2 = 0.693): private at 0.7 under the simplex
    status, out, _ = run_cli(capsys, "verify", path, "--prior-set", "simplex", "--epsilon", "0.7")
    assert status == 0, out
    assert "PRIVATE" in out and "NOT PRIVATE" not in out
    assert "divided by their exact sums" in out and len([line for line in out.splitlines() if "note:" in line]) == 1
    # below log 2 it is genuinely not private: exit 1, because the PML constraint fails
    status, out, _ = run_cli(capsys, "verify", path, "--prior-set", "simplex", "--epsilon", "0.69")
    assert status == 1 and "NOT PRIVATE" in out
    status, out, _ = run_cli(capsys, "verify", path, "--prior-set", "simplex", "--epsilon", "0.7", "--json")
    data = json.loads(out)
    assert data["private"] is True and data["normalised_rows"] == [0, 1] and data["row_stochastic"] is True


def test_normalised_rows_are_divided_by_their_exact_sums(tmp_path):
    path = _savetxt_one_third(tmp_path)
    kernel, rows = read_kernel_normalised(path)
    raw = [[Fraction(v) for v in line.split(",")] for line in path.read_text().splitlines()]
    assert rows == [0, 1]
    assert kernel.fractions() == [[v / sum(r) for v in r] for r in raw]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("0.5,0.500001\n0.5,0.5\n", "row 0 sums to"),  # 1e-6 off: further than 1e-9
        ("0.5,0.5\n1.1,-0.1\n", "row 1, column 1"),  # negative entry
        ("1e400,0\n0,1\n", "row 0 sums to 1e+400"),  # beyond the doubles: was an internal error (exit 3)
        ("0.5,0.5000000011\n0.5,0.5\n", "row 0 sums to 1.0000000011"),  # the sum as written, not rounded
    ],
)
@pytest.mark.parametrize("command", ["verify", "analyze"])
def test_invalid_kernels_exit_2_naming_the_row(tmp_path, capsys, text, needle, command):
    path = tmp_path / "k.csv"
    path.write_text(text)
    extra = ["--epsilon", "1"] if command == "verify" else []
    status, out, err = run_cli(capsys, command, path, "--prior-set", "simplex", *extra)
    assert status == 2 and needle in err and "invalid kernel" in err
    assert "NOT PRIVATE" not in out and len(err.strip().splitlines()) == 1


def test_analyze_accepts_float_saved_kernel(tmp_path, capsys):
    path = _savetxt_one_third(tmp_path)
    status, out, err = run_cli(capsys, "analyze", path, "--prior-set", "simplex", "--epsilon", "0.7", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["normalised_rows"] == [0, 1] and data["guarantees"]["pml"] is True
    status, out, err = run_cli(capsys, "analyze", path, "--prior-set", "simplex")
    assert status == 0 and "divided by their exact sums" in out
