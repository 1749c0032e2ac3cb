"""After installing the wheel, ``mechdesign bench --quick`` runs from an empty directory.

The wheel is built from this checkout (``pip wheel --no-deps``), installed with ``--no-deps`` into a
fresh venv that sees this environment's dependencies through a ``.pth`` line (the dependencies,
not this checkout: PYTHONPATH is cleared and the editable install's finder is not loaded), and run
from an empty directory: the grids must come from the package data and the results must land under
that directory, at the path the command prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
    (purelib / "_parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
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
    for name in ("README.md", "t1_theorem1.csv", "f1_corollaries.png"):
        assert (out / name).stat().st_size > 0
    assert not (purelib / "benchmarks").exists()
