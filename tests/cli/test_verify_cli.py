"""`mechdesign verify` and `mechdesign privatize`: exit statuses, messages, and the round trip
design -> JSON -> verify -> privatize, in-process and once through the installed command."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from helpers.cli import run_cli
from mechdesign.cli.main import main

F = Fraction

SPEC = """\
alphabet: ["no", "yes", "maybe"]
epsilon: log(2)
prior_set: {kind: min_mass, c: 0.1}
objective: {kind: expected_loss, loss: hamming}
"""


@pytest.fixture
def files(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    data = tmp_path / "data.csv"
    data.write_text('id,answer,note\n1,yes,a\n2,no,b\n3,maybe,c\n4,yes,"x,y"\n')
    return tmp_path, spec, data


def test_round_trip_design_json_verify_privatize(files, capsys):
    tmp, spec, data = files
    result_json = tmp / "result.json"
    status, _, err = run_cli(capsys, "solve", spec, "--json", "-o", result_json)
    assert status == 0, err
    result = json.loads(result_json.read_text())
    assert result["certificate"]["rounding_cost"] is not None
    status, out, _ = run_cli(capsys, "verify", result_json, "--spec", spec)
    assert status == 0 and "PRIVATE" in out
    status, out, _ = run_cli(
        capsys, "verify", result_json, "--prior-set", "min_mass:0.1", "--epsilon", "log(2)", "--json"
    )
    assert status == 0 and json.loads(out)["private"] is True

    for source in (["--kernel", result_json], ["--spec", spec]):
        out_csv = tmp / "out.csv"
        status, _, err = run_cli(
            capsys, "privatize", *source, "--input", data, "--column", "answer", "--seed", 5, "-o", out_csv
        )
        assert status == 0, err
        rows = list(csv.reader(out_csv.open()))
        assert rows[0] == ["id", "answer", "note"]
        assert [r[0] for r in rows[1:]] == ["1", "2", "3", "4"] and rows[4][2] == "x,y"
        assert {r[1] for r in rows[1:]} <= {"no", "yes", "maybe"}
        first = out_csv.read_text()
        run_cli(capsys, "privatize", *source, "--input", data, "--column", "answer", "--seed", 5, "-o", out_csv)
        assert out_csv.read_text() == first  # one seed, identical output
        out_csv.unlink()

    # the same file through the installed console script
    exe = shutil.which("mechdesign")
    assert exe is not None
    proc = subprocess.run(
        [exe, "verify", str(result_json), "--spec", str(spec)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "PRIVATE" in proc.stdout, proc.stderr


def test_kernel_one_ulp_over_is_rejected_with_output_prior_and_ratio(tmp_path, capsys):
    # Example 1 of the Dobrushin paper: a = 8/11 is tight at eps = log 2, c = 1/5
    a = 8 / 11
    while F(a) > F(8, 11):
        a = math.nextafter(a, 0)
    for value, expected in ((a, 0), (math.nextafter(a, 1), 1)):
        path = tmp_path / "k.npy"
        np.save(path, np.array([[value, 1 - value], [1 - value, value]]))
        status, out, _ = run_cli(capsys, "verify", path, "--prior-set", "min_mass:1/5", "--epsilon", "log(2)")
        assert status == expected, out
    assert "NOT PRIVATE" in out and "worst output y = " in out and "worst prior vertex P = [" in out
    assert "> e^eps = 2" in out


def test_verify_rejects_rows_not_summing_to_one_as_invalid(tmp_path, capsys):
    # a row 0.1 away from 1 is an invalid kernel (exit 2 naming the row), not "NOT PRIVATE"
    path = tmp_path / "k.csv"
    path.write_text("0.5,0.6\n1/2,1/2\n")
    status, out, err = run_cli(capsys, "verify", path, "--prior-set", "simplex", "--epsilon", "5")
    assert status == 2 and "row 0 sums to 1.1" in err and "NOT PRIVATE" not in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "missing.csv", "--prior-set", "simplex", "--epsilon", "1"], "file not found"),
        (["verify", "K", "--epsilon", "1"], "needs --spec, or both --prior-set and --epsilon"),
        (["verify", "K", "--prior-set", "simplex", "--epsilon", "-1"], "--epsilon"),
        (["verify", "K", "--prior-set", "point:0.5,0.5,0", "--epsilon", "1"], "--prior-set"),
        (["verify", "BAD", "--prior-set", "simplex", "--epsilon", "1"], "not a number"),
        (["verify", "K", "--spec", "SPEC"], "N = 3"),
        (
            ["privatize", "--kernel", "K", "--input", "DATA", "--column", "answer"],
            "row 1 (line 2): unknown label 'yes'",
        ),
        (
            ["privatize", "--kernel", "K", "--labels", "no,yes", "--input", "DATA", "--column", "nope"],
            "no column 'nope'",
        ),
        (["privatize", "--kernel", "K", "--labels", "a,b,c", "--input", "DATA", "--column", "answer"], "--labels"),
        (["privatize", "--input", "DATA", "--column", "answer"], "usage"),
    ],
)
def test_bad_input_exits_2_with_one_line(files, capsys, argv, message):
    tmp, spec, data = files
    (tmp / "k.csv").write_text("1/2,1/2\n1/4,3/4\n")
    (tmp / "bad.csv").write_text("1/2,abc\n1/4,3/4\n")
    subst = {"K": str(tmp / "k.csv"), "BAD": str(tmp / "bad.csv"), "SPEC": str(spec), "DATA": str(data)}
    status, out, err = run_cli(capsys, *[subst.get(a, a) for a in argv])
    assert status == 2
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_privatize_unknown_label_writes_nothing(files, capsys):
    tmp, spec, data = files
    bad = tmp / "bad_data.csv"
    bad.write_text("id,answer\n1,yes\n2,no\n3,perhaps\n")
    out_csv = tmp / "out.csv"
    status, out, err = run_cli(capsys, "privatize", "--spec", spec, "--input", bad, "--column", "answer", "-o", out_csv)
    assert status == 2 and "row 3 (line 4): unknown label 'perhaps'" in err
    assert not out_csv.exists() and out == ""
    assert not list(tmp.glob(".privatize-*"))


def test_a_large_worst_prior_vertex_is_written_as_its_common_mass_and_the_exception(tmp_path, capsys):
    # a vertex of Q_X(c) is c on every symbol but one, which carries 1 − (N − 1)c (docs/explanation/mathematics.md, section 'Linear constraints'): at N = 40 the
    # text report names the common mass and the one exception instead of 40 fractions; --json lists all 40
    import numpy as np

    n = 40
    K = np.full((n, 2), 0.5)
    K[0] = [1.0, 0.0]  # output 1 impossible from symbol 0: its worst prior puts the free mass 1 − 39/80 on 0,
    # P·K(:,1) = 39/80 · 1/2 and the ratio is (1/2) / (39/160) = 80/39 < e
    path = tmp_path / "k.npy"
    np.save(path, K)
    assert main(["verify", str(path), "--prior-set", "min_mass:1/80", "--epsilon", "1"]) == 0
    out = capsys.readouterr().out
    assert "worst output y = 1" in out and "80/39" in out
    line = next(v for v in out.splitlines() if "worst prior vertex" in v)
    assert line.strip() == "worst prior vertex P = 1/80 on every symbol but P(0) = 41/80 (40 symbols)"
    assert main(["verify", str(path), "--prior-set", "min_mass:1/80", "--epsilon", "1", "--json"]) == 0
    prior = json.loads(capsys.readouterr().out)["worst_prior"]
    assert len(prior) == n and sum(Fraction(v) for v in prior) == 1


def test_a_large_prior_without_a_common_mass_is_cut_to_its_first_and_last_masses():
    from mechdesign.cli.verify import _prior_text

    masses = [str(Fraction(i + 1, 210)) for i in range(20)]  # 1/210 .. 20/210: all different, sum 1
    text = _prior_text(masses)
    assert text == "[1/210, 1/105, 1/70, 2/105, 1/42, 1/35, …, 3/35, 19/210, 2/21] (20 masses; --json lists them all)"
    assert _prior_text(masses[:12]) == "[" + ", ".join(masses[:12]) + "]"
