"""After installing the wheel without its extras, ``mechdesign bench --quick`` runs from an empty directory.

The wheel is built from this checkout (``pip wheel --no-deps``), installed with ``--no-deps`` into a
fresh venv that sees this environment's dependencies through a ``.pth`` line pointing at a folder of links to
them *without the optional extras* (matplotlib, psutil, pycddlib, shtab, sympy, hypothesis, pytest: the
environment a plain ``pip install .`` leaves; PYTHONPATH is cleared and the editable install's finder is not
loaded), and run from an empty directory: the grids must come from the package data, the tables must land
under that directory at the path the command prints, and the figures, which need matplotlib, are named in one
line with the extra to install (exit 0). ``mechdesign figures``, whose every output is a figure, refuses at once
with that line (exit 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from helpers import ROOT

EXTRAS = ("matplotlib", "mpl_toolkits", "pylab", "psutil", "cdd", "pycddlib", "shtab", "sympy", "hypothesis", "pytest")
"""Import names and distribution names of the optional extras (test, bench, cdd, completion) and their test tools."""


def _without_extras(purelib: Path, folder: Path) -> Path:
    """A folder of links to every entry of ``purelib`` except the extras (their packages and dist-info)."""
    folder.mkdir()
    for entry in purelib.iterdir():
        stem = entry.name.lower().replace("-", "_").split(".")[0]
        if any(stem == e or stem.startswith(e + "_") or stem.startswith("_" + e) for e in EXTRAS):
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.slow
def test_bench_quick_from_a_wheel_in_an_empty_directory(tmp_path):
    dist, venv, work = tmp_path / "dist", tmp_path / "venv", tmp_path / "empty"
    work.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=600,
        cwd=tmp_path,
    )
    wheel = next(dist.glob("mechdesign-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, timeout=600, env=env)
    # after the install: otherwise pip would see this environment's (editable) mechdesign and skip the wheel
    base = _without_extras(Path(sysconfig.get_paths()["purelib"]), tmp_path / "base-deps")
    (purelib / "_parent_env.pth").write_text(str(base) + "\n")
    missing = subprocess.run(
        [str(py), "-c", "import matplotlib"], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )
    assert missing.returncode != 0 and "No module named 'matplotlib'" in missing.stderr  # the extras are absent
    where = subprocess.run(
        [str(py), "-c", "import mechdesign; print(mechdesign.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(purelib), where  # the installed wheel, not the checkout
    r = subprocess.run(
        [str(venv / "bin" / "mechdesign"), "bench", "--quick"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = work / "benchmarks" / "results" / "quick"
    assert f"results in {out}" in r.stderr
    for name in ("bench.md", "t1_theorem1.csv", "t2_formulations.csv", "t3_scaling.csv"):
        assert (out / name).stat().st_size > 0
    assert not (out / "f3_krr_envelopes.png").exists()
    notes = [line for line in r.stderr.splitlines() if "mechdesign[bench]" in line]
    assert len(notes) == 1 and "f3_krr_envelopes.png" in notes[0] and "matplotlib" in notes[0]
    assert "Traceback" not in r.stderr
    assert not (purelib / "benchmarks").exists()
    # figures: nothing but figures, so refused at once (before any work: no output folder), one line
    f = subprocess.run(
        [str(venv / "bin" / "mechdesign"), "figures", "--out", str(work / "figs")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert f.returncode == 2, f.stderr
    assert f.stderr.strip().count("\n") == 0 and "pip install 'mechdesign[bench]'" in f.stderr
    assert not (work / "figs").exists()
