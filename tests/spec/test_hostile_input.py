"""Hostile and inconsistent input: exit 2 with one line naming the place and the rule, in bounded time and memory,
and one rule per question wherever the input is given (docs/reference/input-rules.md).

* Every YAML text the program reads goes through the spec file's loader: an alias bomb through ``--set``,
  ``--vary`` (list and comma forms), a sweep file, a sweep's base file and ``--prior-set`` is refused at once. The
  bomb here is the classic "billion laughs" (9 levels of 9 aliases: 9^9 ≈ 3.9·10^8 strings once expanded); it runs
  in a subprocess under a 1.5 GiB address-space cap, so a regression fails by exit status (MemoryError → 3), not
  by taking the machine down.
* Kernel and data files: a ``.npy`` header beyond the size limits, a truncated or complex ``.npy``, a JSON kernel
  nested 100,000 deep, a CSV field over the csv module's limit, a counts file with extra columns, labels with
  spaces around them.
* No back end writes to standard output (``solver: {backend: cvxpy}`` with ``solve --json`` is one JSON object).
* Consistency: ``analyze --prior`` under a spec's rule for a prior; float kernels under one row-sum rule
  (``Mechanism.from_kernel`` and ``privatize`` accept k-RR written in doubles as ``verify`` does); ``verify``
  shows a violating ratio with digits that differ from the bound; ``--set`` messages name the option once.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from mechdesign.cli.main import main
from mechdesign.release.mechanism import Mechanism

from helpers import ROOT

SPEC = ROOT / "problems" / "example1_binary.yaml"


def _alias_bomb() -> str:
    levels = "abcdefghi"
    parts = ['&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip(levels, levels[1:]):
        parts.append(f"&{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "[" + ", ".join(parts) + "]"


BOMB = _alias_bomb()

CAPPED = """
import resource, sys
cap = 1536 * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from mechdesign.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _capped_cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", CAPPED, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-2000:]
    return lines[0]


@pytest.mark.parametrize(
    "form",
    ["set", "vary_list", "vary_items", "sweep_file", "sweep_base_file", "prior_set_verify", "bench_config"],
)
def test_yaml_alias_bomb_is_refused_everywhere(form, tmp_path):
    assert len(BOMB) < 400
    kernel = tmp_path / "k.csv"
    kernel.write_text("1/2,1/2\n1/2,1/2\n")
    if form == "set":
        argv = ["solve", str(SPEC), "--set", f"objective.loss={BOMB}"]
    elif form == "vary_list":
        argv = ["sweep", str(SPEC), "--serial", "--vary", f"epsilon={BOMB}"]
    elif form == "vary_items":
        argv = ["sweep", str(SPEC), "--serial", "--vary", "epsilon=1,&x [a, b]"]
    elif form == "sweep_file":
        path = tmp_path / "sweep.yaml"
        path.write_text(f"base: {{alphabet: 2, objective: {{kind: dobrushin}}}}\naxes:\n  epsilon: {BOMB}\n")
        argv = ["sweep", str(path), "--serial"]
    elif form == "sweep_base_file":
        (tmp_path / "base.yaml").write_text(f"alphabet: 2\nobjective: {{kind: dobrushin}}\nlabels: {BOMB}\n")
        path = tmp_path / "sweep.yaml"
        path.write_text("base: base.yaml\naxes:\n  epsilon: [1]\n")
        argv = ["sweep", str(path), "--serial"]
    elif form == "prior_set_verify":
        argv = ["verify", str(kernel), "--epsilon", "1", "--prior-set", f"{{kind: hull, priors: {BOMB}}}"]
    else:
        path = tmp_path / "grid.yaml"
        path.write_text(f"t1: {BOMB}\n")
        argv = ["bench", "--config", str(path), "--out", str(tmp_path / "out")]
    r = _capped_cli(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    line = _one_line(r.stderr)
    assert "anchors and aliases" in line, line


def test_set_and_vary_messages_name_the_option_once(tmp_path, capsys):
    assert main(["solve", str(SPEC), "--set", "epsilon=[1"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.count("--set") == 1 and "--set epsilon: malformed YAML" in line, line
    assert main(["sweep", str(SPEC), "--serial", "--vary", "epsilon=[1"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.count("--vary") == 1 and "malformed YAML" in line, line


def test_decimals_of_a_spec_keep_their_text_through_set(tmp_path, capsys):
    """--set edits a copy of the file's data, whose decimals are exact-text floats: the copy keeps the text."""
    spec = tmp_path / "s.yaml"
    spec.write_text("alphabet: 2\nepsilon: 0.1\nprior_set: {kind: min_mass, c: 0.2}\nobjective: {kind: dobrushin}\n")
    assert main(["solve", str(spec), "--set", "output_size=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "optimal"


# ------------------------------------------------------------------ kernel and data files
def _npy_header_only(path: Path, shape, descr="<f8") -> None:
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": descr, "fortran_order": False, "shape": shape})


def _kernel_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    huge = tmp_path / "huge.npy"
    _npy_header_only(huge, (100_000, 100_000))  # 74.5 GiB of doubles claimed by a ~128-byte file
    wide = tmp_path / "wide.npy"
    _npy_header_only(wide, (2, 10_000_001))
    truncated = tmp_path / "truncated.npy"
    _npy_header_only(truncated, (3, 3))
    complex_ = tmp_path / "complex.npy"
    np.save(complex_, np.array([[0.5 + 1j, 0.5 - 1j], [0.5, 0.5]]))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    deep_object = tmp_path / "deep_object.json"
    deep_object.write_text('{"kernel_exact": [["1"]], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    long_field = tmp_path / "long_field.csv"
    long_field.write_text("1/2," + "1" * 200_000 + "\n1/2,1/2\n")
    return {
        "huge": (huge, "beyond the limits"),
        "wide": (wide, "beyond the limits"),
        "truncated": (truncated, "truncated .npy"),
        "complex": (complex_, "real numbers"),
        "deep": (deep, "nested too deeply"),
        "deep_object": (deep_object, "nested too deeply"),
        "long_field": (long_field, "longer than 131072 characters"),
    }


KERNEL_CASES = ["huge", "wide", "truncated", "complex", "deep", "deep_object", "long_field"]


@pytest.mark.parametrize("command", ["verify", "analyze", "privatize", "estimate"])
@pytest.mark.parametrize("case", KERNEL_CASES)
def test_hostile_kernel_files_exit_2_naming_the_file_and_the_rule(case, command, tmp_path, capsys):
    path, rule = _kernel_cases(tmp_path)[case]
    data = tmp_path / "data.csv"
    data.write_text("x\n0\n1\n")
    argv = {
        "verify": ["verify", str(path), "--prior-set", "simplex", "--epsilon", "1"],
        "analyze": ["analyze", str(path), "--prior-set", "simplex"],
        "privatize": ["privatize", "--kernel", str(path), "--input", str(data), "--column", "x", "--seed", "1"],
        "estimate": ["estimate", "--kernel", str(path), "--input", str(data), "--column", "x"],
    }[command]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(path) in line and rule in line, line


def _krr_files(tmp_path: Path) -> Path:
    kernel = tmp_path / "k.csv"
    kernel.write_text("3/4,1/4\n1/4,3/4\n")
    return kernel


DATA_CASES = [
    ("data", "x\n" + "0" * 200_000 + "\n", "longer than 131072 characters"),
    ("data", "x\n 0\n1\n", "white space at an end"),
    ("data", "x\n0 \n1\n", "white space at an end"),
]
COUNTS_CASES = [
    ("counts", "label,count\n0," + "1" * 200_000 + "\n", "longer than 131072 characters"),
    ("counts", "label,count,extra\n0,5,7\n1,3,1\n", "expected exactly two fields"),
    ("counts", "0,5,\n1,3\n", "expected exactly two fields"),
    ("counts", "label,count\n 0,5\n1,3\n", "white space at an end"),
]


@pytest.mark.parametrize(
    "command,what,text,rule",
    [("privatize", *c) for c in DATA_CASES] + [("estimate", *c) for c in DATA_CASES + COUNTS_CASES],
)
def test_hostile_data_and_counts_files(command, what, text, rule, tmp_path, capsys):
    kernel = _krr_files(tmp_path)
    path = tmp_path / f"{what}.csv"
    path.write_text(text)
    if command == "privatize":
        argv = ["privatize", "--kernel", str(kernel), "--input", str(path), "--column", "x", "--seed", "1"]
    elif what == "data":
        argv = ["estimate", "--kernel", str(kernel), "--input", str(path), "--column", "x"]
    else:
        argv = ["estimate", "--kernel", str(kernel), "--counts", str(path)]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(path) in line and rule in line, line


def test_labels_with_spaces_are_refused_in_a_spec_and_in_python(tmp_path):
    from mechdesign import SpecError, load_spec
    from mechdesign.release.estimate import counts_for
    from mechdesign.spec.errors import InputError

    with pytest.raises(SpecError, match="white space at an end"):
        load_spec(
            {
                "alphabet": [" a", "b"],
                "epsilon": 1,
                "prior_set": {"kind": "simplex"},
                "objective": {"kind": "dobrushin"},
            }
        )
    mech = Mechanism.from_kernel([[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]], labels=["a", "b"])
    with pytest.raises(InputError, match="white space at an end"):
        counts_for(["y0", " y1"], mech.output_labels)  # outputs of this kernel are named y0, y1
    with pytest.raises(InputError, match="white space at an end"):
        counts_for({" y0": 3}, mech.output_labels)
    assert list(counts_for(["y0", "y1", "y1"], mech.output_labels)) == [1, 2]


F = Fraction


# ------------------------------------------------------------------ stdout
def test_cvxpy_back_end_keeps_solve_json_one_json_object(tmp_path):
    spec = tmp_path / "cvxpy.yaml"
    spec.write_text(
        "alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.1}\nobjective: {kind: dobrushin}\n"
        "output_size: 2\nsolver: {backend: cvxpy}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "mechdesign", "solve", str(spec), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)  # the banner of the process's first HiGHS model would make this invalid
    assert data["status"] == "optimal" and data["solve"]["backend"] == "cvxpy"
    # Theorem 1 of the Dobrushin paper: eta_TV(1, 0.1) = (e - 1) / (e (1 - 3·0.1) + 1) for N = 3
    assert math.isclose(data["objective"], (math.e - 1) / (math.e * 0.7 + 1), rel_tol=1e-9)


# ------------------------------------------------------------------ consistency
def test_analyze_prior_follows_the_spec_rule_for_a_prior(tmp_path, capsys):
    from mechdesign import SpecError, load_spec

    kernel = tmp_path / "k.csv"
    kernel.write_text("\n".join(["1/2,1/2"] * 5) + "\n")
    assert main(["analyze", str(kernel), "--prior-set", "simplex", "--prior", "2,2,2,2,3"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "--prior" in line and "must sum to 1" in line, line
    with pytest.raises(SpecError, match="must sum to 1"):  # the same rule, the same words, in a spec
        load_spec(
            {
                "alphabet": 5,
                "epsilon": 1,
                "prior_set": {"kind": "point", "prior": [2, 2, 2, 2, 3]},
                "objective": {"kind": "dobrushin"},
            }
        )
    assert main(["analyze", str(kernel), "--prior-set", "simplex", "--prior", "0.2,0.2,0.2,0.2,0.2", "--json"]) == 0
    capsys.readouterr()


def _krr_doubles(k: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    K = np.full((k, k), 1 / (e + k - 1))
    np.fill_diagonal(K, e / (e + k - 1))
    return K


def test_float_kernels_follow_one_row_sum_rule_everywhere(tmp_path, capsys):
    K = _krr_doubles(3, 1.0)
    sums = [sum(map(Fraction, row)) for row in K.tolist()]
    assert all(s != 1 and abs(s - 1) < Fraction(1, 10**15) for s in sums)  # k-RR in doubles misses 1 by an ulp
    mech = Mechanism.from_kernel(K)
    expected = [[v / s for v in map(Fraction, row)] for row, s in zip(K.tolist(), sums)]  # divided by its sum
    assert mech.kernel.fractions() == expected
    path = tmp_path / "krr.npy"
    np.save(path, K)
    from mechdesign.release.kernel_io import read_kernel, read_kernel_normalised

    assert read_kernel(path).fractions() == read_kernel_normalised(path)[0].fractions() == expected
    data = tmp_path / "data.csv"
    data.write_text("x\n0\n1\n2\n")
    assert main(["privatize", "--kernel", str(path), "--input", str(data), "--column", "x", "--seed", "3"]) == 0
    assert main(["verify", str(path), "--prior-set", "simplex", "--epsilon", "1.0000001"]) == 0
    capsys.readouterr()
    with pytest.raises(Exception, match="sums to"):  # further than 1e-9 from 1: refused, as verify refuses it
        Mechanism.from_kernel([[0.5, 0.5 + 1e-8], [0.5, 0.5]])


def test_verify_shows_a_violating_ratio_apart_from_the_bound(tmp_path, capsys):
    # the doubles above 2/3 and below 1/3: after normalising the rows, the ratio is
    # 12009599006321324/6004799503160661 = 2 + 3.3e-16, which 17 digits round to "2", against e^eps = 2
    path = tmp_path / "k.npy"
    np.save(path, np.array([[0.6666666666666667, 0.3333333333333333], [0.3333333333333333, 0.6666666666666667]]))
    assert main(["verify", str(path), "--prior-set", "simplex", "--epsilon", "log(2)"]) == 1
    out = capsys.readouterr().out
    m = re.search(r"\(~([0-9.e+-]+)\) > e\^eps = (\S+)", out)
    assert m, out
    shown, bound = Fraction(m.group(1)), Fraction(m.group(2))
    assert shown > bound == 2, out
    for ratio in re.findall(r"ratio ~([0-9.e+-]+)\)", out):
        assert Fraction(ratio) > 2, out


def test_sweep_plot_without_matplotlib_is_refused_before_any_design(tmp_path, capsys, monkeypatch):
    """An import system without matplotlib (as after a plain ``pip install .``): one line, exit 2, no store."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    out = tmp_path / "out"
    assert main(["sweep", str(SPEC), "--serial", "--plot", "--vary", "epsilon=0.5,1", "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "pip install 'mechdesign[bench]'" in line, line
    assert not out.exists()  # refused before the first design (no store, no table)


def test_figures_without_matplotlib_is_refused_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "figs"
    assert main(["figures", "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "figures" in line and "pip install 'mechdesign[bench]'" in line, line
    assert not out.exists()
