"""Solver: {verbose: true} reaches the output-generation path, and the time spent
there is attributed to the solve even when it falls back to the whole LP."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from mechdesign.engines.kernel_lp import UncompiledKernelLP

import mechdesign.engines.output_generation as colgen
from mechdesign import design

from helpers import ROOT

SPEC = {
    "alphabet": 30,
    "epsilon": 1,
    "prior_set": "min_mass:0.001",
    "objective": {"kind": "expected_loss", "loss": "squared"},
}


def test_verbose_reaches_output_generation(tmp_path):
    spec = tmp_path / "v.yaml"
    spec.write_text(
        "alphabet: 150\nepsilon: 1\nprior_set: min_mass:0.001\n"
        "objective: {kind: expected_loss, loss: squared}\nsolver: {verbose: true}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "output generation: round 1" in r.stderr
    quiet = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(spec), "--set", "solver.verbose=false"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert "output generation" not in quiet.stderr


def test_time_in_a_failed_output_generation_counts_as_solve_time(monkeypatch):
    calls = []

    def slow_failure(lp, layout, **kw):  # spends 0.5 s, then does not certify: the whole LP is solved
        calls.append(1)
        time.sleep(0.5)
        return colgen.ColgenResult(
            x=np.zeros(lp.num_cols),
            row_dual=np.zeros(lp.num_rows),
            value=0.0,
            bound=-1.0,
            rounds=1,
            iterations=0,
            columns=2,
            seconds=0.5,
            status="time_limit",
        )

    monkeypatch.setattr(colgen, "solve_output_generation", slow_failure)
    # output generation on the compiled LP, not the uncompiled engine that expected loss tries first
    monkeypatch.setattr(UncompiledKernelLP, "applies", lambda self, problem: "not in this test")
    result = design(SPEC)
    assert calls and result.is_ok
    assert result.solve.seconds >= 0.5  # without the attribution: only the whole LP's HiGHS time (N = 30: ms)
    s = result.solve
    assert s.compile_seconds + s.seconds + s.certify_seconds <= s.total_seconds + 1e-6
