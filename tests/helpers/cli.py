"""Running the command line from a test: in this process (``mechdesign.cli.main.main``, output captured by pytest's
``capsys``) or as ``python -m mechdesign.cli`` in a subprocess (exit statuses, stdout/stderr as a user sees them)."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import ROOT


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """``main(argv)`` in this process (each argument passed as ``str``): (exit status, stdout, stderr)."""
    from mechdesign.cli.main import main

    status = main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return status, out, err


def cli_subprocess(*argv, columns=None) -> subprocess.CompletedProcess:
    """``python -m mechdesign.cli ARGV`` with this checkout on PYTHONPATH (and COLUMNS when given), text output
    captured, at most 120 s."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if columns:
        env["COLUMNS"] = str(columns)
    return subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", *map(str, argv)], capture_output=True, text=True, env=env, timeout=120
    )


def cli_with_ctrl_c(when: str, *argv, timeout: float = 120) -> subprocess.CompletedProcess:
    """``mechdesign ARGV`` in a subprocess that receives a real SIGINT when ``when`` happens (:mod:`helpers.ctrl_c`:
    ``round=K``, ``mip-incumbent``, ``design=K``), text output captured. ``timeout`` only guards against a hang."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run(
        [sys.executable, "-m", "helpers.ctrl_c", when, *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
