import os

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


def pytest_terminal_summary(terminalreporter):
    """How many code blocks of README.md and docs/ ran (tests/test_docs_examples.py) and how many --help examples
    (tests/test_help_examples.py), when those tests ran."""
    import sys

    module = sys.modules.get("test_docs_examples")
    if module is not None and module.RAN:
        counts = ", ".join(f"{n} {what}" for what, n in sorted(module.RAN.items()))
        terminalreporter.write_line(f"docs code blocks: {counts}")
    helps = sys.modules.get("test_help_examples")
    if helps is not None and helps.RAN:
        terminalreporter.write_line(f"--help examples run: {len(helps.RAN)}")
