"""--write-lp writes the program actually solved, or refuses with one clear line."""

from __future__ import annotations

import subprocess
import sys

import highspy
import pytest

from mechdesign import design

from helpers import ROOT

BASE = "alphabet: 4\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.05}\n"
REFUSED = {
    "mutual_information": BASE + "objective: {kind: mutual_information}\n",
    "f_divergence": BASE + "objective: {kind: f_divergence, f: kl, priors: [[0.1,0.2,0.3,0.4],[0.4,0.3,0.2,0.1]]}\n",
    "bayes_m_lt_n": BASE + "objective: {kind: bayes_vulnerability}\noutput_size: 2\n",
}


def _cli(*argv):
    return subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_write_lp_refuses_programs_that_are_not_one_lp(tmp_path, name):
    spec = tmp_path / "s.yaml"
    spec.write_text(REFUSED[name])
    r = _cli("solve", spec, "--write-lp", tmp_path / "out.lp")
    assert r.returncode == 2 and not (tmp_path / "out.lp").exists()
    assert "--write-lp applies to" in r.stderr and "Traceback" not in r.stderr and "KeyError" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_written_lp_is_the_program_solved(tmp_path):
    # Bayes vulnerability with M = N: the file, solved by HiGHS on its own, has the optimum design() reports
    spec = tmp_path / "s.yaml"
    spec.write_text(BASE + "objective: {kind: bayes_vulnerability}\n")
    r = _cli("solve", spec, "--write-lp", tmp_path / "out.lp")
    assert r.returncode == 0, r.stderr
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(tmp_path / "out.lp"))
    h.run()
    assert abs(abs(h.getInfo().objective_function_value) - design(spec).objective) < 1e-7
