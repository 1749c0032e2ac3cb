"""Notebook and text displays of Mechanism, EstimateResult and Certificate, and the one convention for
output labels (mechdesign.spec.notation.output_labels) in the CLI, the notebook and privatize."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from mechdesign import Mechanism, design
from mechdesign.cli.main import main
from mechdesign.spec.notation import output_labels

YES_NO = {
    "alphabet": ["no", "yes"],
    "epsilon": 1,
    "prior_set": {"kind": "min_mass", "c": 0.1},
    "objective": {"kind": "dobrushin"},
}
MI5 = {"alphabet": 5, "epsilon": 1, "prior_set": {"kind": "simplex"}, "objective": {"kind": "mutual_information"}}


def _long_integers(text: str) -> list[str]:
    return re.findall(r"\d{16,}", text)


def test_output_labels_are_names_no_input_label_takes():
    assert output_labels(["no", "yes"], 2) == ("y0", "y1")
    assert output_labels(["0", "1", "2"], 4) == ("y0", "y1", "y2", "y3")
    assert output_labels(["y0", "y1"], 2) == ("y_0", "y_1")  # never an input label
    assert output_labels(["y0", "y_0"], 1) == ("y__0",)
    assert output_labels(["a", "b"], 2, estimates_inputs=True) == ("a", "b")  # output y guesses x = y


def test_mechanism_shows_labels_and_decimals_not_an_object_array():
    mech = Mechanism.from_result(design(YES_NO))
    assert mech.output_labels == ("y0", "y1")
    text = repr(mech)
    assert "dtype" not in text and not _long_integers(text)
    assert "inputs: no, yes; outputs: y0, y1" in text and "2^52" in text
    rows = dict(line.split(None, 1) for line in text.splitlines()[2:])
    np.testing.assert_allclose([float(v) for v in rows["no"].split()], mech.kernel.to_float()[0], atol=5e-5)
    page = mech._repr_html_()
    assert "<th>y0</th><th>y1</th>" in page and "<th>no</th>" in page and "dtype" not in page


def test_certificate_shows_decimals():
    cert = design(YES_NO).certificate
    text = repr(cert)
    assert not _long_integers(text) and "exact privacy check=passed" in text
    assert "2.71828182846" in text  # the rational e^eps lower bound, as a decimal
    assert "<table>" in cert._repr_html_() and not _long_integers(cert._repr_html_())


def test_estimate_result_is_a_table_and_marks_masses_not_identified():
    mech = Mechanism.from_result(design(MI5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = mech.estimate({"y0": 300, "y1": 700, "y2": 100, "y3": 100}, bootstrap=20)
    text = repr(est)
    assert text.startswith("EstimateResult: estimate of P_X by mle from n = 1200 reports, 95% intervals")
    lines = {line.split()[0]: line for line in text.splitlines()[2:7]}
    assert lines["2"].endswith("not identified") and lines["3"].endswith("not identified")
    assert not lines["0"].endswith("not identified")
    assert f"{est.estimate[4]:.6f}" in lines["4"]
    page = est._repr_html_()
    assert page.count("not identified") >= 2 and "<th>note</th>" in page


def test_notebook_and_cli_show_the_same_output_labels(tmp_path, capsys):
    result = design(MI5)
    page = result._repr_html_()
    assert "<tr><th></th><th>y0</th><th>y1</th><th>y2</th><th>y3</th></tr>" in page
    spec = tmp_path / "mi5.yaml"
    spec.write_text("alphabet: 5\nepsilon: 1\nprior_set: {kind: simplex}\nobjective: {kind: mutual_information}\n")
    assert main(["solve", str(spec)]) == 0
    out = capsys.readouterr().out
    # the header gives the M of the emitted kernel (5 x 4), and the kernel's columns are y0..y3
    assert "N = 5, M = 4 (spec: auto)" in out
    assert re.search(r"x \\ y\s*┃\s*y0\s*┃\s*y1\s*┃\s*y2\s*┃\s*y3", out), out


@pytest.mark.parametrize("spec_text", ["alphabet: ['no', 'yes']\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.1}\n"])
def test_privatize_writes_output_labels_distinct_from_inputs(tmp_path, spec_text):
    spec = tmp_path / "s.yaml"
    spec.write_text(spec_text + "objective: {kind: dobrushin}\n")
    data = tmp_path / "d.csv"
    data.write_text("id,answer\n" + "".join(f"{i},{'yes' if i % 3 else 'no'}\n" for i in range(300)))
    out = tmp_path / "r.csv"
    args = ["privatize", "--spec", str(spec), "--input", str(data), "--column", "answer", "--seed", "3", "-o", str(out)]
    assert main(args) == 0
    released = {line.rsplit(",", 1)[1] for line in out.read_text().splitlines()[1:]}
    assert released <= {"y0", "y1"} and released.isdisjoint({"no", "yes", "0", "1"})
