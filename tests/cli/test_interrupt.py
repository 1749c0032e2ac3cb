"""Ctrl-C while HiGHS runs stops the solve; the command exits 130 promptly (well under 2 s on a quiet machine;
these tests only guard against a hang, so that no verdict depends on the load), printing one line and the best
certified kernel found so far, if there is one (with ``verbose`` the solver's log goes to stderr, so
``solve --json`` stays one JSON object on stdout).

Kernels printed after an interrupt are checked by the exact oracle of tests/helpers/exact_oracle.py
(independent of mechdesign), and their bounds against the true optimum of an uninterrupted design."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from helpers.exact_oracle import check_kernel, utility

from mechdesign import design

from helpers import ROOT

STOP_SECONDS = 30.0
"""A hang guard, not a speed claim: the verdict must not depend on the machine's load (the exit takes well under 2 s
on a quiet machine; benchmarks/interrupt_overhead.py measures it)."""

# A problem that keeps HiGHS busy for minutes (N = M = 300 squared loss by interior point).
LONG = """\
alphabet: 300
epsilon: 1
prior_set: {kind: min_mass, c: 0.001}
objective: {kind: expected_loss, loss: squared}
solver: {method: ipm, time_limit: 600}
"""


@pytest.mark.slow
def test_sigint_during_solve_exits_130_within_2_seconds(tmp_path):
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
        time.sleep(6)  # imports and compilation done: HiGHS is running
        assert proc.poll() is None, "the solve finished before it could be interrupted"
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        elapsed = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert elapsed < STOP_SECONDS, f"took {elapsed:.2f} s to stop"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err
    # interior point holds no feasible kernel before it finishes; the constant kernel is not "found"
    assert err.strip().endswith("no kernel found yet") and out == ""


def _run_until(spec: Path, trigger: str, extra: list[str], wait_after: float = 0.0):
    """Start ``mechdesign solve SPEC --json``, read stderr until a line contains ``trigger``, wait
    ``wait_after`` s, send SIGINT; return (exit status, seconds from the signal to the exit, stdout,
    stderr lines after the trigger)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec), "--json", *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out_chunks: list[str] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()  # stdout drained meanwhile (a large JSON object must not block the child)
    try:
        for line in proc.stderr:
            if trigger in line:
                break
        else:
            pytest.fail(f"the solve ended before {trigger!r}")
        time.sleep(wait_after)
        assert proc.poll() is None, "the solve finished before it could be interrupted"
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        proc.wait(timeout=30)
        elapsed = time.perf_counter() - sent
        reader.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, elapsed, "".join(out_chunks), err.splitlines()


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


# Output generation (engines/output_generation.py, run by engines/kernel_lp.py) for |x − y| at N = M = 200 and ε = 3 (the
# optimum uses ~20 outputs): ~20 rounds over ~2 s, a kernel after every round (every restricted LP's kernel
# is feasible for the full problem).
ABSOLUTE_200 = {
    "alphabet": 200,
    "epsilon": 3,
    "prior_set": {"kind": "min_mass", "c": "1/400"},
    "objective": {"kind": "expected_loss", "loss": "absolute"},
    "solver": {"verbose": True},  # one stderr line per round: the test interrupts after round 3
}


@pytest.mark.slow
def test_sigint_during_output_generation_reports_the_best_certified_kernel(tmp_path):
    spec = tmp_path / "absolute.yaml"
    spec.write_text(yaml.safe_dump(ABSOLUTE_200))
    status, elapsed, out, err = _run_until(spec, "output generation: round 3,", [])
    assert status == 130, err[-5:]
    assert elapsed < STOP_SECONDS, f"took {elapsed:.2f} s to stop"
    data = _check_interrupted_report(ABSOLUTE_200, out, err, +1)
    assert data["certificate"]["dual_bound"] is not None and data["certificate"]["gap"] > 0


# A Bayes-vulnerability MIP (M = 5 < N = 24 outputs, one binary per output): ~5 s of branch and bound
# on 2 shared cores; the prior is P ∝ 24 integers drawn once (numpy default_rng(1), 1..19).
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
    status, elapsed, out, err = _run_until(spec, "Solving MIP model", ["-o", str(out_file)], wait_after=0.5)
    assert status == 130, err[-5:]
    assert elapsed < STOP_SECONDS, f"took {elapsed:.2f} s to stop"
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
