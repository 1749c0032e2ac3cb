"""The registries and the models agree, and no stage branches on a prior set's or an objective's kind:
what a prior set or an objective is lives in one module behind a registry."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from mechdesign.objectives.base import ObjectiveRules
from mechdesign.objectives.registry import OBJECTIVE_RULES
from mechdesign.privacy.base import PriorSetRules
from mechdesign.privacy.registry import PRIOR_SET_RULES
from mechdesign.spec.models import Objective, PriorSet

PACKAGE = Path(__file__).resolve().parents[2] / "mechdesign"


def _union_kinds(annotation) -> set[str]:
    """The ``kind`` literals of the models in a (possibly Annotated) discriminated union."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    kinds = set()
    for model in typing.get_args(annotation):
        kinds |= set(typing.get_args(model.model_fields["kind"].annotation))
    return kinds


def test_every_prior_set_model_has_exactly_one_implementation():
    assert _union_kinds(PriorSet) == set(PRIOR_SET_RULES)
    for kind, cls in PRIOR_SET_RULES.items():
        assert issubclass(cls, PriorSetRules) and cls.kind == kind


def test_every_objective_model_has_exactly_one_implementation():
    assert _union_kinds(Objective) == set(OBJECTIVE_RULES)
    for kind, cls in OBJECTIVE_RULES.items():
        assert issubclass(cls, ObjectiveRules) and cls.kind == kind and cls.sense in (-1, 1)


def test_no_stage_branches_on_a_kind():
    """Comparisons of a prior set's or objective's kind with a literal are allowed only in the models
    (spec/) and the CLI's shorthand parser; everything else asks a registry."""
    pattern = re.compile(r"""(prior_set|objective|ps|obj)\.kind\s*(==|!=|in\b|not in\b)""")
    allowed = {PACKAGE / "spec" / "models.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path in allowed:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}")
    assert offenders == []


def test_the_readme_route_table_is_the_routing_table():
    """README.md's "How it works" table lists, per objective kind, the engines of ROUTES in their order, and the
    fallbacks: a new engine or route that the front page does not show fails here."""
    import re

    from helpers import ROOT
    from mechdesign.engines.routing import FALLBACKS, ROUTES

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## How it works", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = re.findall(r"`([a-z-]+)`", cells[1])
    assert {k: tuple(v) for k, v in rows.items()} == ROUTES
    fallbacks = [line for line in section.splitlines() if line.startswith("| after any route")]
    assert len(fallbacks) == 1 and tuple(re.findall(r"`([a-z-]+)`", fallbacks[0])) == tuple(FALLBACKS)
