"""The command line starts without the heavy libraries: ``import mechdesign`` and ``import mechdesign.cli.main``,
and building every sub-command's parser (what ``mechdesign --help`` does), import none of scipy, numpy, cvxpy,
highspy, matplotlib, pandas, dask, pydantic or the spec models; each is imported by the command that needs it.
Checked in a fresh interpreter through ``sys.modules`` (not by timing). The public names still resolve."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import ROOT

HEAVY = [
    "scipy",
    "numpy",
    "cvxpy",
    "highspy",
    "matplotlib",
    "pandas",
    "dask",
    "pydantic",
    "mpmath",
    "mechdesign.spec.models",
    "mechdesign.design",
]


def _loaded_after(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    run = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_import_mechdesign_loads_nothing_heavy():
    assert _loaded_after("import mechdesign") == []


def test_the_command_line_and_its_parsers_load_nothing_heavy():
    assert _loaded_after("import mechdesign.cli.main") == []
    assert _loaded_after("from mechdesign.cli.main import build_parser\nbuild_parser()") == []


def test_the_public_names_resolve_and_design_stays_the_function():
    code = (
        "import mechdesign.design\n"  # the sub-module first, as the command line and sweep workers import it
        "from mechdesign import design, load_spec, Spec, sweep, Status, Mechanism, InputError, MinMass\n"
        "import mechdesign\n"
        "assert callable(design) and design.__module__ == 'mechdesign.design'\n"
        "assert mechdesign.design is design and set(mechdesign.__all__) <= set(dir(mechdesign))\n"
        "r = design({'alphabet': 2, 'epsilon': 1, 'prior_set': {'kind': 'simplex'}, 'objective': {'kind': 'dobrushin'}})\n"
        "print(round(r.objective, 6))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1] == "0.462117"  # tanh(1/2), Kairouz et al. (LDP binary optimum)
