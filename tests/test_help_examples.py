"""Every example that a sub-command's ``--help`` shows runs, in order, in a fresh directory.

The examples are read back from the ``--help`` text itself (not from the table that produces it), so the
test runs exactly what a user sees. They form one chain: the directory holds only a copy of the
repository's ``problems/`` folder, and every other file an example reads must be written by an example of
an earlier command (``solve -o kernel.csv`` before ``verify kernel.csv``, ``privatize`` before
``estimate``, ``sweep`` before ``plot``). A ``mechdesign ...`` line runs through the CLI's ``main`` in this
process (one import instead of one per line); a ``python ...`` line runs in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mechdesign.cli.help_text import EXAMPLES
from mechdesign.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
# the examples that ran, for the terminal summary (tests/conftest.py)
RAN: list[str] = []


def _help_text(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return out.getvalue()


def _examples(help_text: str) -> list[str]:
    """The lines of the ``examples:`` (or ``example:``) section of a help text."""
    match = re.search(r"^examples?:\n((?:  .*\n)+)", help_text, flags=re.MULTILINE)
    return [line.strip() for line in match.group(1).splitlines()] if match else []


def _commands() -> list[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return list(sub.choices)


def test_every_command_has_an_example():
    missing = [name for name in _commands() if not _examples(_help_text([name]))]
    assert missing == [], f"--help without an example: {missing}"
    assert _examples(_help_text([])), "mechdesign --help shows no example"


def _run(line: str, cwd: Path) -> tuple[int, str]:
    words = shlex.split(line, comments=True)
    if not words:
        return 0, ""
    if words[0] == "python":
        proc = subprocess.run([sys.executable, *words[1:]], cwd=cwd, capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr
    assert words[0] == "mechdesign", f"an example runs something other than mechdesign or python: {line}"
    words = words[1:]
    target = None
    if ">" in words:  # `mechdesign ... > FILE`: stdout to the file
        words, target = words[: words.index(">")], words[words.index(">") + 1]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(words)
    if target is not None:
        (cwd / target).write_text(out.getvalue(), encoding="utf-8")
    return status, out.getvalue() + err.getvalue()


def test_every_help_example_runs_in_order(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "problems", tmp_path / "problems")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    commands = _commands()
    # the chain's order is the order of the table that writes the examples; every command is in it
    assert sorted(EXAMPLES) == sorted(commands)
    ran = RAN
    ran.clear()
    for lines in [_examples(_help_text([])), *(_examples(_help_text([name])) for name in EXAMPLES)]:
        for line in lines:
            status, output = _run(line, tmp_path)
            assert status == 0, f"exit status {status} from the --help example\n  {line}\n{output[-3000:]}"
            ran.append(line)
    # the files the chain promises exist
    for name in ("spec-schema.json", "kernel.csv", "design.json", "theorem1.mps", "data.csv", "released.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert list((tmp_path / "example1-sweep").glob("utility_vs_epsilon.*"))
    assert (tmp_path / "mechdesign-completion.bash").read_text().startswith("#")
