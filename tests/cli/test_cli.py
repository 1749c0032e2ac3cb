"""The command line contract (docs/explanation/mathematics.md, section 'Contract'): report, JSON keys, exit statuses."""

import json
import subprocess
import sys

import pytest

from mechdesign.cli.main import main

from helpers import ROOT

THEOREM1 = ROOT / "problems" / "theorem1_n10.yaml"


def test_json_output_has_the_contract_keys(capsys):
    assert main(["solve", str(THEOREM1), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "optimal"
    assert data["objective"] == pytest.approx(0.875, abs=1e-12)
    assert len(data["kernel"]) == 10 and all(len(r) == 2 for r in data["kernel"])
    assert data["epsilon"] == pytest.approx(1.2039728043259361)
    cert = data["certificate"]
    for key in ["feasible", "leakage", "dual_bound", "gap", "closed_form"]:
        assert key in cert
    assert cert["feasible"] is True
    assert cert["leakage"] <= data["epsilon"] + 1e-12
    assert cert["closed_form"]["name"].startswith("Theorem 1")
    assert abs(cert["closed_form"]["difference"]) < 1e-9
    for key in ["solver", "seconds"]:
        assert key in data["solve"]
    assert data["kernel_exact"][0][0].count("/") == 1


def test_report_and_output_file(tmp_path, capsys):
    out = tmp_path / "report.txt"
    assert main(["solve", str(THEOREM1), "-o", str(out)]) == 0
    text = out.read_text()
    assert "status: optimal" in text and "exact privacy check" in text and "Theorem 1" in text
    assert capsys.readouterr().out == ""


def test_time_limit_exits_1_without_a_traceback(tmp_path, capsys):
    spec = tmp_path / "big.yaml"
    spec.write_text(
        "alphabet: 150\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.003}\n"
        "objective: {kind: expected_loss, loss: absolute}\nsolver: {time_limit: 0.01, method: ipm}\n"
    )
    status = main(["solve", str(spec), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert data["status"] == "time_limit"
    if data["kernel"] is not None:  # whatever is emitted is still certified private
        assert data["certificate"]["feasible"] is True


def test_installed_console_script_runs_an_example():
    proc = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(THEOREM1), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "optimal"


def test_bad_spec_via_subprocess_exits_2_with_one_line(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("alphabet: 4\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.3}\nobjective: {kind: dobrushin}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "prior_set.c" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_write_lp_writes_the_compiled_lp_without_solving(tmp_path, capsys):
    import highspy

    path = tmp_path / "theorem1.mps"
    assert main(["solve", str(THEOREM1), "--write-lp", str(path)]) == 0
    assert capsys.readouterr().out == ""
    # an independent solve of the written file gives Theorem 1's value (the file minimises -eta)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 2)  # one HiGHS thread count per process (mechdesign.lp.solve uses 2)
    h.readModel(str(path))
    h.run()
    assert -h.getInfo().objective_function_value == pytest.approx(0.875, abs=1e-9)
    assert main(["solve", str(THEOREM1), "--write-lp", str(tmp_path / "x.txt")]) == 2
