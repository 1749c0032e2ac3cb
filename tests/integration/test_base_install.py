"""Documented features run from the base install (no pycddlib, cvxpy never imported
by a design); where cdd is really needed, the error names the extra.

The base install is simulated in a subprocess whose import system refuses ``cdd`` (and, for the
second test, ``cvxpy``), as on a machine where ``pip install .`` did not bring them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import ROOT

BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {BLOCKED}:
            raise ImportError(f"No module named {{name!r}} (blocked by the test)")
sys.meta_path.insert(0, _Block())
"""


def _python(code: str, blocked=("cdd",)):
    script = BLOCK.format(BLOCKED=set(blocked)) + code
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )


def test_extremes_of_example1_without_cdd():
    r = _python(
        "import sys\nfrom mechdesign.cli.main import main\n"
        f"sys.exit(main(['extremes', {str(ROOT / 'problems/example1_binary.yaml')!r}, '--json']))"
    )
    assert r.returncode == 0, r.stderr
    P = sorted(tuple(round(v, 9) for v in p) for p in json.loads(r.stdout)["vectors"])
    # N = 2, c = 0.2, eps = log 2. Binary kernel [p, 1-p] with first column (a, b): the min_mass vertices are
    # (0.8, 0.2) and (0.2, 0.8), so PML asks max(a,b) <= 2 (0.2 max + 0.8 min) for both columns. Solving by
    # hand: the non-constant vertices have a = 8/11, b = 3/11 (8/11 = 2(0.2*8/11 + 0.8*3/11) = 2*4/11) and
    # the mirror, plus the constant kernels (0,0) and (1,1).
    expected = sorted(
        [(round(8 / 11, 9), round(3 / 11, 9)), (round(3 / 11, 9), round(8 / 11, 9)), (0.0, 0.0), (1.0, 1.0)]
    )
    assert P == expected


@pytest.mark.parametrize(
    "prior_set", ["{kind: simplex}", "{kind: min_mass, c: 0.05}", "{kind: point, prior: [0.1, 0.2, 0.3, 0.4]}"]
)
def test_closed_form_ray_families_design_without_cdd_or_cvxpy(prior_set):
    spec = f"alphabet: 4\nepsilon: 1\nprior_set: {prior_set}\nobjective: {{kind: mutual_information}}\n"
    r = _python(
        f"import sys, mechdesign\nres = mechdesign.design({spec!r})\n"
        "print(res.status.value, res.certificate.feasible)\n"
        "assert 'cvxpy' not in sys.modules and 'cdd' not in sys.modules\n",
        blocked=("cdd", "cvxpy"),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["optimal", "True"]


def test_design_never_imports_cvxpy():
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, mechdesign\n"
            f"mechdesign.design({str(ROOT / 'problems/theorem1_n10.yaml')!r})\n"
            "print('cvxpy' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_hull_without_cdd_names_the_extra(tmp_path):
    spec = (
        "alphabet: 3\nepsilon: 1\nprior_set: {kind: box, lower: [0.1, 0.1, 0.1], upper: [0.6, 0.6, 0.6]}\n"
        "objective: {kind: mutual_information}\n"
    )
    r = _python(
        "import sys\nfrom pathlib import Path\nfrom mechdesign.cli.main import main\n"
        f"path = Path({str(tmp_path / 's.yaml')!r})\npath.write_text({spec!r})\nsys.exit(main(['solve', str(path)]))"
    )
    assert r.returncode == 2
    assert "mechdesign[cdd]" in r.stderr and "pycddlib" in r.stderr and len(r.stderr.strip().splitlines()) == 1
