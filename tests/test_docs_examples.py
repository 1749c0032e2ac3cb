"""Every code block of README.md and docs/**/*.md runs, and where it shows output, the output is checked.

One test per Markdown file; its blocks run in order in a fresh directory that holds a copy of the
repository's ``problems/``, ``benchmarks/`` and ``tests/`` folders, so a block may use a file that an earlier block of
the same page wrote. The conventions (docs/contributing-docs.md states them for writers):

- ```` ```bash ```` / ```` ```sh ```` / ```` ```console ````: shell. Without prompts the block is one bash
  script run with ``set -eo pipefail``. With ``$ `` prompts each command runs on its own and the lines
  after it, up to the next prompt, are its expected output (stdout and stderr, in order).
- ```` ```python ````: run in a fresh interpreter. A block of ``>>>`` prompts is a doctest (its output lines
  are checked); a plain block must exit 0.
- A ```` ```text ```` block directly after an HTML comment ``<!-- output -->`` is the expected output of the
  executed block before it. Other ``text`` blocks (and YAML, JSON, ...) are not run.
- A ```` ```yaml ```` block after ``<!-- file: NAME -->`` is written to NAME before the next block runs.
- A page with a block after ``<!-- slow -->`` is marked ``slow``.

Outputs are compared as doctest compares them with ``ELLIPSIS``, after collapsing runs of whitespace
(``...`` stands for any text, even several lines, and the blanks around it). ``pip install ...`` is not run (the test-suite runs in the installed
environment) and ``python -m pytest`` is not run (it is what runs this test; ``.ci/run`` runs the README's
test command verbatim, which ``test_readme_test_command_is_the_ci_command`` checks).
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
SHELL, PYTHON = {"bash", "sh", "shell", "console"}, {"python", "py", "pycon"}
CHECKER, FLAGS = doctest.OutputChecker(), doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# blocks run, per kind, over the whole session: the terminal summary prints them (tests/conftest.py)
RAN: Counter = Counter()


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    expected: str | None = None  # the output block that follows, if marked
    file: str | None = None  # for a yaml block written to the sandbox
    slow: bool = False


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a page with their markers (HTML comments just before a fence)."""
    blocks, marker = [], None
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "html_block":
            marker = token.content.strip()
            continue
        if token.type != "fence":
            marker = None
            continue
        lang = (token.info.split() or [""])[0].lower()
        block = Block(token.map[0] + 1, lang, token.content, slow=marker == "<!-- slow -->")
        file_match = re.fullmatch(r"<!--\s*file:\s*(\S+)\s*-->", marker or "")
        if marker == "<!-- output -->":
            assert blocks and blocks[-1].lang in SHELL | PYTHON, f"line {block.line}: an output block follows no code"
            assert blocks[-1].expected is None, f"line {block.line}: two output blocks for one code block"
            blocks[-1].expected = token.content
        elif file_match:
            block.file = file_match.group(1)
            blocks.append(block)
        elif lang in SHELL | PYTHON:
            blocks.append(block)
        marker = None
    return blocks


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(COLUMNS="100", MPLBACKEND="Agg", NO_COLOR="1", PYTHONHASHSEED="0")
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return env


_PIP_PREFIX = re.compile(r"^\s*pip install [^&;]*(&&\s*|$)")


def _runnable(command: str) -> str | None:
    """The command without a leading ``pip install ... &&``; None for what the test must not run."""
    command = _PIP_PREFIX.sub("", command)
    if not command.strip() or re.match(r"\s*python -m pytest\b", command):
        return None
    return command


def output_matches(expected: str, got: str) -> bool:
    """doctest's comparison with ELLIPSIS after collapsing whitespace; ``...`` also takes up the blanks
    around it (so ``value ...`` at the end of a line matches a padded table cell)."""
    want = re.sub(r"\s*\.\.\.\s*", "...", " ".join(expected.split()))
    return CHECKER.check_output(want, " ".join(got.split()), doctest.ELLIPSIS)


def _check(expected: str, got: str, where: str) -> None:
    if not output_matches(expected, got):
        diff = CHECKER.output_difference(doctest.Example("", expected), got, FLAGS)
        pytest.fail(f"{where}: the output differs from the page\n{diff}")


def _shell(command: str, cwd: Path, where: str) -> str:
    proc = subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + command],
        cwd=cwd,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(f"{where}: exit status {proc.returncode}\n$ {command}\n{proc.stdout[-4000:]}")
    return proc.stdout


def _prompted(code: str) -> list[tuple[str, str]]:
    """``$ command`` lines (with ``\\`` continuations) and the output lines that follow each."""
    pairs: list[tuple[str, list[str]]] = []
    continued = False
    for line in code.splitlines():
        if continued:
            pairs[-1] = (pairs[-1][0] + "\n" + line, pairs[-1][1])
        elif line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
        else:
            raise AssertionError(f"text before the first $ prompt: {line!r}")
        continued = line.endswith("\\") and not pairs[-1][1]
    return [(command, "\n".join(out) + ("\n" if out else "")) for command, out in pairs]


def run_shell(block: Block, cwd: Path, where: str) -> None:
    if any(line.startswith("$ ") for line in block.code.splitlines()):
        assert block.expected is None, f"{where}: a prompted block carries its output itself"
        for command, expected in _prompted(block.code):
            runnable = _runnable(command)
            if runnable is None:
                RAN["shell commands not run (pip install, pytest)"] += 1
                continue
            got = _shell(runnable, cwd, where)
            if expected.strip():
                _check(expected, got, where)
                RAN["outputs checked"] += 1
        RAN["shell blocks"] += 1
        return
    lines = [_runnable(line) for line in block.code.splitlines()]
    skipped = sum(1 for line, kept in zip(block.code.splitlines(), lines) if kept is None and line.strip())
    if skipped:
        RAN["shell commands not run (pip install, pytest)"] += skipped
    script = "\n".join(line for line in lines if line is not None)
    got = _shell(script, cwd, where) if script.strip() else ""
    if block.expected is not None:
        _check(block.expected, got, where)
        RAN["outputs checked"] += 1
    RAN["shell blocks"] += 1


_DOCTEST_RUNNER = """
import doctest, sys
text = sys.stdin.read()
test = doctest.DocTestParser().get_doctest(text, {"__name__": "__main__"}, "block", "block", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
sys.exit(1 if runner.failures else 0)
"""


def run_python(block: Block, cwd: Path, where: str) -> None:
    doctest_style = any(line.startswith(">>> ") for line in block.code.splitlines())
    if doctest_style:
        argv, stdin = [sys.executable, "-c", _DOCTEST_RUNNER], block.code
    else:  # from a file, so that multiprocessing's spawn can import the main module again
        script = cwd / ".blocks" / f"line_{block.line}.py"
        script.parent.mkdir(exist_ok=True)
        script.write_text(block.code, encoding="utf-8")
        argv, stdin = [sys.executable, str(script)], None
    proc = subprocess.run(
        argv,
        input=stdin,
        cwd=cwd,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{where}: the Python block fails\n{textwrap.indent(block.code, '    ')}\n{proc.stdout}{proc.stderr}"
        )
    if doctest_style:
        RAN["outputs checked"] += 1
    if block.expected is not None:
        _check(block.expected, proc.stdout, where)
        RAN["outputs checked"] += 1
    RAN["python blocks"] += 1


def _page_params():
    for page in PAGES:
        slow = any(b.slow for b in parse_blocks(page.read_text(encoding="utf-8")))
        marks = [pytest.mark.slow] if slow else []
        yield pytest.param(page, id=str(page.relative_to(ROOT)), marks=marks)


@pytest.mark.parametrize("page", list(_page_params()))
def test_code_blocks_of_the_page_run(page: Path, tmp_path: Path):
    blocks = parse_blocks(page.read_text(encoding="utf-8"))
    for folder in ("problems", "benchmarks", "tests"):  # what a page may read, as from the repository root
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    name = page.relative_to(ROOT)
    for block in blocks:
        where = f"{name}:{block.line}"
        if block.file:
            (tmp_path / block.file).write_text(block.code, encoding="utf-8")
            RAN["files written"] += 1
        elif block.lang in SHELL:
            run_shell(block, tmp_path, where)
        else:
            run_python(block, tmp_path, where)
    RAN["pages"] += 1


def test_readme_test_command_is_the_ci_command():
    """The README's test command is the one that ``.ci/run`` runs, character for character."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for b in parse_blocks(readme) if b.lang in SHELL for line in b.code.splitlines()]
    (test_command,) = [c for c in commands if "python -m pytest" in c]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci, f"README's test command is not a line of .ci/run: {test_command}"


def test_conventions_are_parsed():
    """The parser reads the markers as the module docstring says (a page that breaks them must fail)."""
    page = textwrap.dedent(
        """\
        <!-- file: a.yaml -->
        ```yaml
        x: 1
        ```

        ```bash
        echo hi
        ```
        <!-- output -->
        ```text
        hi
        ```

        ```text
        not run
        ```
        <!-- slow -->
        ```python
        print(1)
        ```
        """
    )
    blocks = parse_blocks(page)
    assert [(b.lang, b.file, b.expected, b.slow) for b in blocks] == [
        ("yaml", "a.yaml", None, False),
        ("bash", None, "hi\n", False),
        ("python", None, None, True),
    ]
    assert _prompted("$ a \\\n  b\nout\n$ c\n") == [("a \\\n  b", "out\n"), ("c", "")]
    assert _runnable('pip install ".[test]" && python -m pytest -q') is None
    assert _runnable("pip install . && mechdesign solve x.yaml") == "mechdesign solve x.yaml"
    assert not output_matches("a 1\n", "a 2\n")
    assert output_matches("x  1 ...\n y 2 ...\n", "x  1   \n y 2\n")
