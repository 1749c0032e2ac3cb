"""Readable results at any size, output formats by extension, JSON without
"inf", the prior set in spec notation, and the notebook displays of DesignResult."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from helpers.cli import cli_subprocess
from mechdesign import design
from mechdesign.cli.report import render_result

from helpers import ROOT

KRR = ROOT / "problems/expected_loss_krr.yaml"  # N = M = 6, labels a..f, simplex, eps = 1


@pytest.fixture(scope="module")
def big():
    return design(
        {
            "alphabet": 50,
            "epsilon": 1,
            "prior_set": "min_mass:0.002",
            "objective": {"kind": "expected_loss", "loss": "absolute"},
        }
    )


@pytest.mark.parametrize("width", [60, 100, 160])
def test_large_kernel_fits_the_width_and_says_how_to_get_all_of_it(big, width):
    text = render_result(big, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" in text and "-o kernel.csv" in text
    assert "0.00…" not in text


def test_cells_use_significant_digits():
    # k-RR (Kairouz et al.): diagonal e^eps/(e^eps + N - 1), off-diagonal 1/(e^eps + N - 1), N = 6, eps = 1
    result = design(KRR)
    text = render_result(result, width=120)
    e = math.e
    assert f"{e / (e + 5):.4g}" in text and f"{1 / (e + 5):.4g}" in text


def test_output_columns_carry_labels_when_m_equals_n():
    text = render_result(design(KRR), width=120)
    header = next(line for line in text.splitlines() if "x \\ y" in line)
    assert all(f" {lab} " in header for lab in "abcdef")


def test_header_wording_and_prior_set_notation():
    text = render_result(design(KRR), width=120)
    assert "eps = 1 nats" in text and "= 1 =" not in text and "P = simplex" in text
    text = render_result(design(ROOT / "problems/theorem1_n10.yaml"), width=160)
    assert "P = min_mass:1/20" in text and "eps = log(10/3) (= 1.203972804 nats)" in text
    assert "{'kind'" not in text


@pytest.mark.parametrize("eps", ["1e400", "exp(800)"])
def test_header_does_not_claim_an_epsilon_beyond_the_double_range_equals_the_largest_double(eps):
    # 1e400 nats is held as the largest double (1.797...e308); the header may say ">=" of it, never "="
    spec = {"alphabet": 3, "epsilon": eps, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
    text = render_result(design(spec), width=160)
    assert f"eps = {eps} (>= 1.797693135e+308 nats)" in text and "(= 1.79" not in text


@pytest.mark.parametrize("suffix", [".csv", ".npy", ".json", ".txt"])
def test_solve_output_format_by_extension(tmp_path, suffix):
    out = tmp_path / f"k{suffix}"
    r = cli_subprocess("solve", KRR, "-o", out)
    assert r.returncode == 0, r.stderr
    e = Fraction(math.e)
    if suffix == ".csv":
        rows = [[Fraction(v) for v in line.split(",")] for line in out.read_text().splitlines()]
        assert len(rows) == 6 and all(sum(r) == 1 for r in rows)  # exact p/q, rows sum to exactly 1
        assert abs(float(rows[0][0]) - float(e / (e + 5))) < 1e-9
    elif suffix == ".npy":
        K = np.load(out)
        assert K.shape == (6, 6) and abs(K[0, 0] - math.e / (math.e + 5)) < 1e-9
    elif suffix == ".json":
        assert json.loads(out.read_text())["status"] == "optimal"
    else:
        assert out.read_text().startswith("mechdesign: expected_loss")


def test_json_has_no_inf_strings(tmp_path):
    # zeros next to non-zeros in a column: leakage capacity and LDP level are infinite under the simplex
    path = tmp_path / "k.csv"
    path.write_text("1/2,1/2,0\n0,1/2,1/2\n1/2,0,1/2\n")
    r = cli_subprocess("analyze", path, "--json")
    assert r.returncode == 0, r.stderr
    assert '"inf"' not in r.stdout and "Infinity" not in r.stdout
    data = json.loads(r.stdout)
    assert data["measures"]["ldp"] is None and "measures.ldp" in data["infinite"]
    r = cli_subprocess("verify", path, "--prior-set", "simplex", "--epsilon", "1", "--json")
    assert '"inf"' not in r.stdout and json.loads(r.stdout)["infinite"]


def test_design_result_repr_html_and_dumps():
    result = design(ROOT / "problems/theorem1_n10.yaml")
    text = repr(result)
    assert text.startswith("DesignResult(status='optimal'") and "10x2" in text and "objective=0.875" in text
    assert "array(" not in text and len(text) < 200
    page = result._repr_html_()
    assert "<table" in page and "exact privacy check" in page and "background:rgb(" in page
    dumped = result.dumps()
    assert isinstance(dumped, str) and json.loads(dumped) == json.loads(json.dumps(result.to_json()))
    assert isinstance(result.to_json(), dict)
