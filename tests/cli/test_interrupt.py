"""Ctrl-C while HiGHS runs stops the solve; the command exits 130, printing one line and the best certified kernel
found so far, if there is one (with ``verbose`` the solver's log goes to stderr, so ``solve --json`` stays one
JSON object on stdout).

No verdict depends on the machine's load: each SIGINT is sent at a moment when the work is provably still running.
The first test reads the solver's log until the interior point iterations start on a problem that takes minutes,
then sends SIGINT from outside; the others run the command under :mod:`helpers.ctrl_c`, which sends the SIGINT
when the design itself reports round 3 or HiGHS its first MIP incumbent (both designs take under a second in
all, so a signal sent after reading a line or after a sleep could arrive after the end). Timeouts only guard
against a hang (the exit takes well under 2 s on a quiet machine; benchmarks/interrupt_overhead.py measures it).

Kernels printed after an interrupt are checked by the exact oracle of tests/helpers/exact_oracle.py
(independent of mechdesign), and their bounds against the true optimum of an uninterrupted design."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import yaml
from helpers.cli import cli_with_ctrl_c
from helpers.exact_oracle import check_kernel, utility

from mechdesign import design

from helpers import ROOT

HANG_GUARD_SECONDS = 120
"""How long a test waits for the interrupted command before it fails: a guard against a hang, not a speed claim."""

# A problem that keeps HiGHS busy for minutes (N = M = 300 squared loss by interior point: 21 IPX iterations in about
# a minute here, then crossover and simplex clean-up, unfinished after 5 minutes of CPU); verbose, so that the log
# says when the interior point iterations start.
LONG = """\
alphabet: 300
epsilon: 1
prior_set: {kind: min_mass, c: 0.001}
objective: {kind: expected_loss, loss: squared}
solver: {method: ipm, time_limit: 600, verbose: true}
"""


@pytest.mark.slow
def test_sigint_during_an_interior_point_solve_exits_130_with_no_kernel(tmp_path):
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stderr:
            if "Interior point solve" in line:  # IPX starts its iterations: minutes of work are left
                break
        else:
            pytest.fail("the solve ended before its interior point iterations started")
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = rest.strip().splitlines()
    assert proc.returncode == 130, rest[-2000:]
    assert "Traceback" not in rest and out == ""
    ours = [line for line in err if line.startswith("mechdesign:")]
    assert ours == err[-1:], err[-5:]  # one line of ours, the last (the rest is HiGHS's log)
    # interior point holds no feasible kernel before it finishes; the constant kernel is not "found"
    assert ours[0].startswith("mechdesign: interrupted after") and ours[0].endswith("no kernel found yet")


def _interrupted(spec, when: str, *extra):
    """``mechdesign solve SPEC --json EXTRA`` with a SIGINT when ``when`` happens (:mod:`helpers.ctrl_c`):
    (exit status, stdout, stderr lines)."""
    r = cli_with_ctrl_c(when, "solve", spec, "--json", *extra, timeout=HANG_GUARD_SECONDS)
    return r.returncode, r.stdout, r.stderr.splitlines()


def _check_interrupted_report(raw_spec: dict, out: str, err: list[str], sense: int) -> dict:
    """The one line, the JSON report, the kernel exactly private, the bound on the right side of the optimum."""
    lines = [line for line in err if line.startswith("mechdesign: interrupted after")]
    assert len(lines) == 1 and "best certified kernel so far" in lines[0], err[-5:]
    assert not any("Traceback" in line for line in err)
    data = json.loads(out)  # one JSON object, although the solver's log was on (it went to stderr)
    assert data["status"] == "interrupted" and data["interrupted_after"] > 0
    verdict = check_kernel(data["kernel_exact"], raw_spec)
    assert verdict.private, verdict.reason
    value = float(utility(data["kernel_exact"], raw_spec))
    assert abs(value - data["objective"]) <= 1e-9 * max(1.0, abs(value))
    quiet = {**raw_spec, "solver": {k: v for k, v in raw_spec.get("solver", {}).items() if k != "verbose"}}
    optimum = design(quiet).objective  # the true optimum, by a normal solve
    assert sense * value >= sense * optimum - 1e-12
    bound = data["certificate"]["dual_bound"]
    if bound is not None:
        assert sense * bound <= sense * optimum + 1e-12, (bound, optimum)
    return data


# Output generation (engines/output_generation.py, run by engines/kernel_lp.py) for |x − y| at N = M = 200 and ε = 3:
# 16 rounds (0.2 s here), a kernel after every round (every restricted LP's kernel is feasible for the full
# problem). The SIGINT comes when round 3 is reported.
ABSOLUTE_200 = {
    "alphabet": 200,
    "epsilon": 3,
    "prior_set": {"kind": "min_mass", "c": "1/400"},
    "objective": {"kind": "expected_loss", "loss": "absolute"},
    "solver": {"verbose": True},  # the solver's log on stderr: stdout must stay one JSON object
}


@pytest.mark.slow
def test_sigint_during_output_generation_reports_the_best_certified_kernel(tmp_path):
    spec = tmp_path / "absolute.yaml"
    spec.write_text(yaml.safe_dump(ABSOLUTE_200))
    status, out, err = _interrupted(spec, "round=3")
    assert status == 130, err[-5:]
    rounds = [line for line in err if line.startswith("output generation: round")]
    assert 2 <= len(rounds) <= 3, rounds  # stopped at round 3 of 16 (its line may not be out yet)
    data = _check_interrupted_report(ABSOLUTE_200, out, err, +1)
    assert data["certificate"]["dual_bound"] is not None and data["certificate"]["gap"] > 0


# A Bayes-vulnerability MIP (M = 5 < N = 24 outputs, one binary per output; under a second of branch and bound
# here); the prior is P ∝ 24 integers drawn once (numpy default_rng(1), 1..19). The SIGINT comes when HiGHS
# finds its first incumbent, while branch and bound runs.
WEIGHTS = [17, 15, 16, 11, 16, 7, 9, 15, 3, 6, 3, 9, 19, 3, 8, 8, 18, 4, 10, 5, 1, 15, 2, 6]
BAYES_MIP = {
    "alphabet": 24,
    "epsilon": 1,
    "prior_set": {"kind": "min_mass", "c": "1/240"},
    "objective": {"kind": "bayes_vulnerability", "prior": [f"{w}/{sum(WEIGHTS)}" for w in WEIGHTS]},
    "output_size": 5,
    "solver": {"verbose": True},
}


@pytest.mark.slow
def test_sigint_during_a_mip_reports_a_certified_kernel(tmp_path):
    spec = tmp_path / "bayes.yaml"
    spec.write_text(yaml.safe_dump(BAYES_MIP))
    out_file = tmp_path / "kernel.json"
    status, out, err = _interrupted(spec, "mip-incumbent", "-o", out_file)
    assert status == 130, err[-5:]
    assert any("Solving MIP model" in line for line in err)  # branch and bound had started
    assert any("Interrupted by user" in line for line in err)  # HiGHS's report: branch and bound was stopped
    assert out == ""  # -o: the report went to the file
    data = _check_interrupted_report(BAYES_MIP, out_file.read_text(), err, -1)
    assert len(data["kernel"][0]) == 5 and data["certificate"]["dual_bound"] is not None


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_verbose_solver_log_goes_to_stderr_and_json_stays_valid(tmp_path, backend):
    """With solver.verbose the solver's log is on stderr, stdout is one JSON object
    (highspy models through their logging callback; cvxpy, which prints its own log and runs its own
    HiGHS model, with standard output pointed at stderr)."""
    spec = tmp_path / "verbose.yaml"
    spec.write_text(
        "alphabet: 10\nepsilon: log(10/3)\nprior_set: {kind: min_mass, c: 0.05}\n"
        f"objective: {{kind: dobrushin}}\nsolver: {{verbose: true, backend: {backend}}}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "optimal" and abs(data["objective"] - 7 / 8) < 1e-12  # Theorem 1: Xi = 7/8
    assert "HiGHS" in r.stderr and "Coefficient ranges" in r.stderr  # HiGHS's own log lines
    if backend == "cvxpy":
        assert "CVXPY" in r.stderr
