"""Distinct exit statuses (3 internal error, 130 interrupted),
documented in every command's --help together with an example."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# A bug of ours (any exception not raised on purpose) inside a command, run through the real main():
_BUG = """
import sys
import importlib
m = importlib.import_module("mechdesign.cli.main")
def boom(args):
    raise ZeroDivisionError("planted bug")
m._cmd_schema = boom
sys.exit(m.main(["schema"]))
"""

# Ctrl-C inside a command, delivered as a real SIGINT to this process:
_SIGINT = """
import os, signal, sys
import importlib
m = importlib.import_module("mechdesign.cli.main")
def interrupted(args):
    os.kill(os.getpid(), signal.SIGINT)
    import time; time.sleep(5)
m._cmd_schema = interrupted
sys.exit(m.main(["schema"]))
"""


def _python(code: str):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)


def test_internal_error_exits_3_with_one_line():
    r = _python(_BUG)
    assert r.returncode == 3
    assert "internal error: ZeroDivisionError: planted bug" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_ctrl_c_exits_130():
    r = _python(_SIGINT)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr


COMMANDS = ["solve", "schema", "verify", "privatize", "analyze", "bench", "extremes", "completion"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_shows_an_example_and_the_exit_statuses(command):
    r = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", command, "--help"], capture_output=True, text=True, env=ENV, timeout=60
    )
    assert r.returncode == 0
    assert f"mechdesign {command}" in r.stdout.split("examples:", 1)[1]  # an example invoking this very command
    for code in ("0", "1", "2", "3", "130"):
        assert any(line.split()[:1] == [code] for line in r.stdout.split("exit statuses:")[1].splitlines())
