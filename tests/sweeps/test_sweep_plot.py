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


def test_same_axis_values_have_the_same_colour_in_both_panels(monkeypatch, table, tmp_path):
    panels = _panels(monkeypatch, table, tmp_path)
    colours = {}
    for kind, ax in panels.items():
        for line in ax.get_lines():
            if line.get_gid() == "curve":
                # a merged curve (Theorem 1: equal Nc) is coloured by its first member
                colours.setdefault(line.get_label().split(" = ")[0], {})[kind] = line.get_color()
    shared = [d for d in colours.values() if len(d) == 2]
    assert len(shared) >= 3
    assert all(d["dobrushin"] == d["expected_loss"] for d in shared)


def test_the_loss_axis_names_the_loss_and_the_prior(monkeypatch, table, tmp_path):
    label = _panels(monkeypatch, table, tmp_path)["expected_loss"].get_ylabel()
    assert "L = 1[x ≠ y]" in label and "uniform prior" in label


def test_time_plot_draws_no_trend_through_two_sizes_and_ticks_at_the_sizes(monkeypatch, table, tmp_path):
    import matplotlib.pyplot as plt

    from mechdesign.sweeps.plot import time_vs_size

    kept = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    time_vs_size(table, tmp_path)
    monkeypatch.setattr(plt, "close", real_close)
    (ax,) = kept[0].axes
    medians = [line for line in ax.get_lines() if "median" in line.get_label()]
    assert medians and all(line.get_linestyle() == "None" for line in medians)  # two sizes: markers only
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "4"]


def test_prior_set_label_is_short_text():
    from mechdesign.spec.models import spec_from_dict
    from mechdesign.sweeps.table import prior_set_label

    assert prior_set_label({"kind": "min_mass", "c": 0.05}) == "min_mass(c=0.05)"
    assert prior_set_label('{"kind":"min_mass","c":0.05}') == "min_mass(c=0.05)"  # a sweep table's axis cell
    assert prior_set_label({"kind": "simplex"}) == "simplex"
    assert prior_set_label({"kind": "point", "prior": [0.2, 0.3, 0.5]}) == "point(prior=[0.2, 0.3, 0.5])"
    long = prior_set_label({"kind": "box", "lower": [0.01] * 10, "upper": [1] * 10})
    assert long == "box(lower=[0.01, 0.01, 0.01, … (10 values)], upper=[1, 1, 1, … (10 values)])"
    spec = spec_from_dict(
        {
            "alphabet": 3,
            "epsilon": 1,
            "prior_set": {"kind": "min_mass", "c": "1/20"},
            "objective": {"kind": "dobrushin"},
        }
    )
    assert prior_set_label(spec.prior_set).startswith("min_mass(c=")
    assert prior_set_label("c=0.05") == "c=0.05"  # not a prior set: unchanged


def test_error_against_epsilon_draws_the_mle_error_of_each_design(monkeypatch, table, tmp_path):
    import matplotlib.pyplot as plt
    import numpy as np

    from mechdesign.sweeps.plot import error_vs_epsilon

    part = table[(table["objective_kind"] == "expected_loss") & (table["N"] == 2) & (table["c"] == 0)]
    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    paths = error_vs_epsilon(part, tmp_path)
    assert all(p.exists() for p in paths)
    (ax,) = kept[0].axes
    (curve,) = [line for line in ax.get_lines() if line.get_gid() == "curve"]
    eps, u = (np.asarray(v, float) for v in curve.get_data())
    # randomized response (N = 2, uniform prior), Wang, Blocki, Li, Jha (USENIX Security 2017):
    # U = 2 e^ε/(e^ε − 1)² + Σ P(1 − P) = 2 e^ε/(e^ε − 1)² + 1/2
    np.testing.assert_allclose(u, 2 * np.exp(eps) / np.expm1(eps) ** 2 + 0.5, rtol=1e-9)
    assert ax.get_yscale() == "log"


def test_prior_sets_in_legends_are_short_text(monkeypatch, tmp_path):
    df = mechdesign.sweep(
        dict(BASE, objective={"kind": "dobrushin"}),
        {"epsilon": [0.5, 1.0], "prior_set": [{"kind": "simplex"}, {"kind": "min_mass", "c": 0.05}]},
        serial=True,
        store=None,
        progress=False,
    )
    assert df["prior_set"].tolist() == ["simplex", "min_mass(c=0.05)"] * 2
    panels = _panels(monkeypatch, df, tmp_path)
    labels = _legend(panels["dobrushin"])
    assert any("prior_set=min_mass(c=0.05)" in t for t in labels) and not any("{" in t for t in labels)
