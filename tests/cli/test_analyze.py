"""``mechdesign analyze``: the CLI on the papers' kernels, and clear errors on bad files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mechdesign.cli.main import main


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


K1 = "\n".join(["15/16,1/16"] * 5 + ["1/16,15/16"] * 5) + "\n"  # Dobrushin paper Example 2
K2 = "1/3,1/3,1/3,0,0\n0,1/3,1/3,1/3,0\n0,0,1/3,1/3,1/3\n1/3,0,0,1/3,1/3\n1/3,1/3,0,0,1/3\n"
E2 = "0,0,0.5,0.5\n0,0,0.5,0.5\n0,0.2,0.4,0.4\n0.2,0,0.4,0.4\n"  # envelopes paper Example 2


def _run_json(capsys, argv):
    status = main(argv + ["--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)


def test_example2_k1_is_tight_pml_and_log15_ldp(tmp_path, capsys):
    path = _write(tmp_path, "k1.csv", K1)
    status, r = _run_json(capsys, ["analyze", path, "--prior-set", "min_mass:0.05", "--epsilon", "log(10/3)"])
    assert status == 0
    assert r["guarantees"]["pml"] is True and r["guarantees"]["ldp"] is False  # exactly tight at 10/3
    assert r["measures"]["ldp"] == pytest.approx(math.log(15))
    assert r["bounds"] and all(b["holds"] for b in r["bounds"])
    _, r = _run_json(capsys, ["analyze", path, "--prior-set", "min_mass:0.05", "--epsilon", "log(15)"])
    assert r["guarantees"]["ldp"] is True
    _, r = _run_json(capsys, ["analyze", path, "--prior-set", "min_mass:0.05", "--epsilon", "1.2"])
    assert r["guarantees"]["pml"] is False  # 1.2 < log(10/3) = 1.2039...


def test_example2_k2_has_no_finite_ldp(tmp_path, capsys):
    path = _write(tmp_path, "k2.json", json.dumps([[s for s in row.split(",")] for row in K2.split()]))
    status, r = _run_json(capsys, ["analyze", path, "--prior-set", "min_mass:0.1", "--epsilon", "log(10/3)"])
    assert status == 0 and r["guarantees"]["pml"] is True
    assert r["measures"]["ldp"] is None and "measures.ldp" in r["infinite"]  # JSON: null + explicit field
    assert r["measures"]["zeros_per_column"] == 2
    assert r["measures"]["leakage_capacity"] == pytest.approx(math.log(10 / 3))


def test_point_prior_envelope_report(tmp_path, capsys):
    path = _write(tmp_path, "e2.csv", E2)
    status, r = _run_json(capsys, ["analyze", path, "--prior-set", "point:0.25,0.25,0.25,0.25"])
    assert status == 0
    pp = r["point_prior"]
    assert pp["leakage_quantile"] == pytest.approx(math.log(10 / 9))  # envelopes paper Example 3
    assert pp["leakage_upper_quantile"] == pytest.approx(math.log(4))
    assert pp["envelope_lower"] == pytest.approx(math.log(4)) and pp["envelope_upper"] == pytest.approx(math.log(4))


def test_npy_and_text_report(tmp_path, capsys):
    path = tmp_path / "q.npy"
    np.save(path, np.array([[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]]))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "disjoint_support_pairs" in out and "[[0, 2], [0, 3], [1, 2], [1, 3]]" in out  # f_alpha paper Example 5, Q


@pytest.mark.parametrize(
    "name,text,needle",
    [
        ("bad.csv", "0.5,0.6\n0.5,0.5\n", "sums to"),
        ("rag.csv", "0.5,0.5\n1\n", "ragged"),
        ("neg.csv", "1.5,-0.5\n0.5,0.5\n", ">= 0"),
        ("txt.csv", "a,b\n0.5,0.5\n", "not a number"),
        ("k.yaml", "x", "unknown kernel format"),
    ],
)
def test_bad_files_exit_2_with_one_line(tmp_path, capsys, name, text, needle):
    path = _write(tmp_path, name, text)
    assert main(["analyze", path]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--prior-set", "min_mass:0.6"], "--prior-set"),
        (["--epsilon", "log(-1)"], "--epsilon"),
        (["--delta", "1.5"], "--delta"),
    ],
)
def test_bad_options_exit_2(tmp_path, capsys, argv, needle):
    path = _write(tmp_path, "k1.csv", K1)
    assert main(["analyze", path] + argv) == 2
    assert needle in capsys.readouterr().err
