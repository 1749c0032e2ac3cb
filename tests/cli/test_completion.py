"""Shell completion generated from the parser, exercised in a real bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_and_options(tmp_path):
    pytest.importorskip("shtab")
    script = tmp_path / "mechdesign.bash"
    r = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "completion", "bash"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    script.write_text(r.stdout)

    def complete(*words):
        line = " ".join(words)
        code = (
            f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
            'COMP_POINT=${#COMP_LINE}; _shtab_mechdesign; echo "${COMPREPLY[@]}"'
        )
        return subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=60).stdout.split()

    assert complete("mechdesign", "sol") == ["solve"]
    assert complete("mechdesign", "solve", "--se") == ["--set"]
    assert "--prior-set" in complete("mechdesign", "verify", "--pri")
