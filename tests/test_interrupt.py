"""Issue 12 item 4: Ctrl-C while HiGHS runs stops the solve; the command exits 130 within 2 s."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

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
        out, err = proc.communicate(timeout=10)
        elapsed = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert elapsed < 2.0, f"took {elapsed:.2f} s to stop"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err
