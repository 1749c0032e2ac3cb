"""The catalogue in problems/: every spec solves, certifies, and meets the value its header states.

Each file carries `# expected_objective:` and `# source:` comments (the paper or derivation the
value comes from); an optional `# tolerance:` (default 1e-8) covers values quoted to fewer digits.
"""

import re
from pathlib import Path

import pytest
import yaml

from mechdesign import design
from mechdesign.cli.main import main
from mechdesign.engines.routing import FALLBACKS, plan

PROBLEMS = sorted((Path(__file__).resolve().parents[2] / "problems").glob("*.yaml"))


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
    # the engine that produced the kernel: the first that applies on the spec's route, unless it handed over
    # (each attempt before the last says why) or a fallback after the certification replaced its kernel
    route, attempts = plan(result.spec), result.solve.attempts
    assert attempts[0].engine == route.names[0]
    ran = [a.engine for a in attempts if a.engine not in FALLBACKS]
    assert ran == route.names[: len(ran)] and all("handed over" in a.reason for a in attempts[: len(ran) - 1])
    assert result.solve.engine in (ran[-1], *FALLBACKS)


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_solve_plan_prints_the_route_without_solving(path, capsys):
    assert main(["solve", str(path), "--plan"]) == 0
    out = capsys.readouterr().out
    kind = yaml.safe_load(path.read_text())["objective"]["kind"]
    assert out.startswith(f"route for objective {kind}:") and " > " in out
