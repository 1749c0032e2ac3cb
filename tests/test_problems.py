"""The catalogue in problems/: every spec solves, certifies, and meets the value its header states.

Each file carries `# expected_objective:` and `# source:` comments (the paper or derivation the
value comes from); an optional `# tolerance:` (default 1e-8) covers values quoted to fewer digits.
"""

import re
from pathlib import Path

import pytest

from mechdesign import design

PROBLEMS = sorted((Path(__file__).parent.parent / "problems").glob("*.yaml"))


def _header(path: Path) -> dict:
    fields = dict(re.findall(r"^#\s*(expected_objective|tolerance|source):\s*(.+)$", path.read_text(), re.M))
    return fields


def test_catalogue_is_not_empty():
    assert len(PROBLEMS) >= 8


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_problem_matches_its_stated_value(path):
    header = _header(path)
    assert "expected_objective" in header and "source" in header, f"{path.name} lacks its expected value or source"
    result = design(path)
    assert result.is_ok, result.status
    assert result.certificate.feasible
    tol = float(header.get("tolerance", "1e-8"))
    assert result.objective == pytest.approx(float(header["expected_objective"]), abs=tol)
    assert result.certificate.gap <= 1e-6
