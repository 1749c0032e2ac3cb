"""A live status on a terminal (phase, round, certified gap, elapsed), nothing when
not a terminal or with --quiet, and a warning before a problem whose size implies minutes."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

from helpers import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "150", "TERM": "xterm"}
# a prior that is not reflection invariant (P(x) = (x + 1)/T): the restricted LP is not folded
# (cone/mirror_fold.py), so output generation runs long enough (~19 rounds, ~1 s) for the status to show it
_N = 500
_PRIOR = ", ".join(f'"{x + 1}/{_N * (_N + 1) // 2}"' for x in range(_N))
SPEC = (
    f"alphabet: {_N}\nepsilon: 1\nprior_set: min_mass:0.001\n"
    f"objective: {{kind: expected_loss, loss: absolute, prior: [{_PRIOR}]}}\n"
)


def _on_terminal(argv):
    """Run with stdout and stderr on a pseudo-terminal; return (status, everything written)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=slave, stderr=slave, env=ENV)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_live_status_on_a_terminal_and_quiet_otherwise(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    cmd = [sys.executable, "-m", "mechdesign.cli", "solve", str(spec)]
    status, text = _on_terminal(cmd)
    assert status == 0, text[-2000:]
    assert "output generation" in text and "round" in text and "certified gap" in text and " s" in text
    status, text = _on_terminal(cmd + ["--quiet"])
    assert status == 0 and "certified gap" not in text
    piped = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert piped.returncode == 0 and "certified gap" not in piped.stdout + piped.stderr


def test_size_warning_before_a_large_problem(tmp_path):
    spec = tmp_path / "big.yaml"
    # N x M = 600 x 600 = 360,000 entries; solver.time_limit keeps the test short, --write-lp is not used
    spec.write_text(
        "alphabet: 600\nepsilon: 1\nprior_set: simplex\nobjective: {kind: expected_loss, loss: hamming}\n"
        "solver: {time_limit: 1}\noutput_size: 600\n"
    )
    from mechdesign.cli.status import size_warning
    from mechdesign.spec.models import load_spec

    message = size_warning(load_spec(spec))
    assert message is not None and "600 x 600 = 360,000" in message and "minutes" in message
    assert size_warning(load_spec(ROOT / "problems/theorem1_n10.yaml")) is None
