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
