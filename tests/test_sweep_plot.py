"""Sweep figures: lines are grouped by the sweep's axes (from the table's metadata), one
panel per objective kind, and curves that coincide are named together in the legend.

Expected coincidences come from Theorem 1 of the Dobrushin paper: η_TV(ε,c) = Ξ(ε,c) =
min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1} depends on N and c only through Nc, so two (N, c) pairs with
equal Nc give the same curve; for expected loss the curves are told apart by the values written
out below (N = 2, LDP: randomized response, error 1/(1 + e^ε), Kairouz et al.).
"""

from __future__ import annotations

import math

import matplotlib
import pytest

import mechdesign
from mechdesign import InputError
from mechdesign.sweeps.plot import utility_vs_epsilon

matplotlib.use("Agg")

BASE = {"alphabet": 2, "prior_set": {"kind": "min_mass", "c": 0}, "objective": {"kind": "dobrushin"}}
AXES = {
    "objective": [{"kind": "dobrushin"}, {"kind": "expected_loss", "loss": "hamming", "prior": "uniform"}],
    "epsilon": [0.25, 0.5, 1.0, 1.5],
    "alphabet": [2, 4],
    "prior_set.c": [0, 0.1, 0.2],
}


@pytest.fixture(scope="module")
def table():
    return mechdesign.sweep(BASE, AXES, serial=True, store=None, progress=False)


def _panels(monkeypatch, table, tmp_path, **kw):
    """Draw, and keep the figure's Axes (the function closes the figure after saving it)."""
    import matplotlib.pyplot as plt

    kept = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    utility_vs_epsilon(table, tmp_path, **kw)
    monkeypatch.setattr(plt, "close", real_close)
    (fig,) = kept
    return {ax.get_title().split(":")[0]: ax for ax in fig.axes}


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_lines_follow_the_axes_not_the_objective_values(monkeypatch, table, tmp_path):
    panels = _panels(monkeypatch, table, tmp_path)
    assert set(panels) == {"dobrushin", "expected_loss"}
    dob = panels["dobrushin"]
    curves = [line for line in dob.get_lines() if line.get_gid() == "curve"]
    # N·c over the grid: N=2: 0, 0.2, 0.4; N=4: 0, 0.4, 0.8 -> Nc = 0 twice and 0.4 twice (Theorem 1)
    assert [line.get_label() for line in curves] == [
        "N=2, c=0 = N=4, c=0",
        "N=2, c=0.1",
        "N=2, c=0.2 = N=4, c=0.1",
        "N=4, c=0.2",
    ]
    assert _legend(dob) == [line.get_label() for line in curves] + [
        "lines: Ξ(ε,c), Theorem 1 (same colour)",
        "LDP limit (e^ε−1)/(e^ε+1)",
    ]
    loss = panels["expected_loss"]
    curves = [line for line in loss.get_lines() if line.get_gid() == "curve"]
    labels = [f"N={n}, c={c}" for n in (2, 4) for c in (0, 0.1, 0.2)]
    assert [line.get_label() for line in curves] == _legend(loss) == labels
    # the N=2, c=0 line is binary randomized response's error 1/(1 + e^ε)
    x, y = curves[0].get_data()
    assert list(y) == pytest.approx([1 / (1 + math.exp(e)) for e in x], abs=1e-9)


def test_metadata_from_a_written_table_and_a_missing_one(monkeypatch, table, tmp_path):
    from mechdesign.sweeps.table import read_table, write_table

    write_table(table, tmp_path / "t")
    back = read_table(tmp_path / "t" / "results.csv")
    assert back.attrs["axis_paths"] == list(AXES)
    panels = _panels(monkeypatch, back, tmp_path)
    assert len([line for line in panels["expected_loss"].get_lines() if line.get_gid() == "curve"]) == 6
    bare = table.copy()
    bare.attrs = {}
    with pytest.raises(InputError, match="no axis metadata"):
        utility_vs_epsilon(bare, tmp_path)
    # the bug this replaces: axis *paths* taken as columns made 'objective' (the values) a line axis
    bare.attrs = {"axes": list(AXES)}
    with pytest.raises(InputError, match="result column"):
        utility_vs_epsilon(bare, tmp_path)
    panels = _panels(monkeypatch, bare, tmp_path, axes=list(AXES))
    assert len([line for line in panels["dobrushin"].get_lines() if line.get_gid() == "curve"]) == 4
