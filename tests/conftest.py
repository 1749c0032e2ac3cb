import os

import pytest
from hypothesis import settings

# Locally hypothesis explores new random examples on every run (and replays failures from its
# database); in CI (CI=true) the examples are derived from each test's name, so a submission's CI
# verdict is reproducible rather than a draw.
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
os.environ.setdefault("COLUMNS", "120")
# tests/integration/test_fuzz_exact.py: "fuzz" runs 200 examples (default and CI), "fuzz-slow" 2000, chosen
# with MECHDESIGN_FUZZ=slow; both inherit the profile loaded above (derandomized when CI=true).
_fuzz_parent = settings.get_profile("ci" if os.environ.get("CI") else "dev")
settings.register_profile("fuzz", parent=_fuzz_parent, max_examples=200)
settings.register_profile("fuzz-slow", parent=_fuzz_parent, max_examples=2000)


_COUNTED: dict[str, int] = {}
"""The counts of :func:`_counts` gathered from pytest-xdist's workers (``-n``), on the controlling process."""


def _counts() -> dict[str, int]:
    """How many code blocks of README.md and docs/ this process ran, by kind (tests/integration/test_docs_examples.py),
    and how many --help examples (tests/cli/test_help_examples.py)."""
    import sys

    counts: dict[str, int] = {}
    module = sys.modules.get("test_docs_examples")
    if module is not None:
        counts.update(module.RAN)
    helps = sys.modules.get("test_help_examples")
    if helps is not None and helps.RAN:
        counts["--help examples"] = len(helps.RAN)
    return counts


def pytest_sessionfinish(session):
    """On a pytest-xdist worker, hand this worker's counts to the controlling process."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["mechdesign_counts"] = _counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the controlling process, add up the counts of a worker that finished (pytest-xdist's hook)."""
    for what, n in getattr(node, "workeroutput", {}).get("mechdesign_counts", {}).items():
        _COUNTED[what] = _COUNTED.get(what, 0) + n


def pytest_terminal_summary(terminalreporter):
    """How many code blocks of README.md and docs/ ran and how many --help examples, when those tests ran (in this
    process, or in pytest-xdist's workers)."""
    counts = dict(_COUNTED)
    for what, n in _counts().items():
        counts[what] = counts.get(what, 0) + n
    helps = counts.pop("--help examples", 0)
    if counts:
        terminalreporter.write_line("docs code blocks: " + ", ".join(f"{n} {w}" for w, n in sorted(counts.items())))
    if helps:
        terminalreporter.write_line(f"--help examples run: {helps}")
