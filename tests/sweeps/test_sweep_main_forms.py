"""``mechdesign.sweep(...)`` with default arguments (a local cluster of worker processes) from every form of
``__main__`` a user writes it in: a script read on standard input (``python - <<EOF``), a script file without an
``if __name__ == "__main__":`` guard (the form of the README's example), ``python -c``, and a notebook kernel.

Workers are started by ``multiprocessing``'s spawn method, which re-imports the parent's ``__main__`` in each child
unless told otherwise: from standard input there is no file, and every worker failed to start ("Nanny failed to
start", 80 lines of tracebacks); without a guard each worker ran the script's sweep again (486 lines). Each form
runs here in its own subprocess and must exit 0 with one table of two optimal rows, no traceback, and the script
body run once (a re-imported ``__main__`` would print its marker again from a worker).

No Jupyter kernel is installed in the test environment; the notebook form is simulated as a kernel runs a cell:
the code is executed with ``exec`` in a fresh module installed as ``sys.modules["__main__"]``, which has no
``__file__`` (IPython's user namespace module).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

BODY = """\
import mechdesign
print("SCRIPT BODY RAN", flush=True)
df = mechdesign.sweep(
    {"alphabet": 3, "prior_set": {"kind": "min_mass", "c": 0.1}, "objective": {"kind": "dobrushin"}},
    {"epsilon": [0.5, 1.0]},
)
print("STATUSES", ",".join(df["status"]), flush=True)
"""

NOTEBOOK = """\
import sys, types
main = types.ModuleType("__main__")  # what a kernel runs cells in: a __main__ with no file
sys.modules["__main__"] = main
exec(compile(open(sys.argv[1]).read(), "<cell>", "exec"), main.__dict__)
"""


def _run(form: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "sweep_script.py"
    script.write_text(BODY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if form == "stdin":
        args, stdin = [sys.executable, "-"], BODY
    elif form == "file_without_guard":
        args, stdin = [sys.executable, str(script)], None
    elif form == "dash_c":
        args, stdin = [sys.executable, "-c", BODY], None
    else:  # notebook kernel
        runner = tmp_path / "kernel.py"
        runner.write_text(NOTEBOOK)
        args, stdin = [sys.executable, str(runner), str(script)], None
    return subprocess.run(args, input=stdin, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["stdin", "file_without_guard", "dash_c", "notebook_kernel"])
def test_sweep_with_default_workers_from_every_form_of_main(form, tmp_path):
    r = _run(form, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "failed to start" not in r.stderr, r.stderr[-3000:]
    assert r.stdout.count("SCRIPT BODY RAN") == 1, r.stdout  # __main__ was not run again by a worker
    assert "STATUSES optimal,optimal" in r.stdout, r.stdout + r.stderr[-2000:]
    assert (tmp_path / "sweep-store").is_dir()  # the default store, in the working directory


def test_main_module_is_restored_after_the_cluster(monkeypatch):
    """The hiding is temporary: ``__main__`` gets its ``__file__`` and ``__spec__`` back."""
    import types

    from mechdesign.sweeps.run import main_module_not_reimported

    fake = types.ModuleType("__main__")
    fake.__file__ = "/somewhere/script.py"
    fake.__spec__ = "a spec"
    monkeypatch.setitem(sys.modules, "__main__", fake)
    with main_module_not_reimported():
        assert not hasattr(fake, "__file__") and fake.__spec__ is None
    assert fake.__file__ == "/somewhere/script.py" and fake.__spec__ == "a spec"
