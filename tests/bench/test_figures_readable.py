"""Figure F3 of ``mechdesign bench`` is readable: coinciding curves both stay visible, the y-range is used,
the lower curve's stop is explained, axes name their units. (The Dobrushin paper's Figure 1, whose curves must
stay inside the panel, is ``mechdesign figures``'s: tests/bench/test_dobrushin_figure1.py.)"""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from mechdesign.bench.tables import figures  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    figs = {}
    original = Figure.savefig

    def keep(self, fname, *a, **kw):
        figs[str(fname).rsplit("/", 1)[-1]] = self
        return original(self, fname, *a, **kw)

    Figure.savefig = keep
    try:
        figures(tmp_path_factory.mktemp("figs"))
    finally:
        Figure.savefig = original
    return figs


def _curves(ax):
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 2]


def test_f3a_coinciding_curves_both_visible_and_range_used(saved):
    ax = saved["f3_krr_envelopes.png"].axes[0]
    upper, lower = _curves(ax)[:2]
    assert np.allclose(upper.get_ydata(), lower.get_ydata())  # k-RR, uniform prior: the bounds coincide
    assert upper.get_linewidth() > lower.get_linewidth() and lower.get_linestyle() != upper.get_linestyle()
    assert "equal to the upper bound" in lower.get_label()
    low, high = ax.get_ylim()
    data = np.concatenate([np.asarray(line.get_ydata(), float) for line in _curves(ax)])
    data = data[np.isfinite(data)]
    # before: an eps_r line at 1.0 left ~95% of the panel above the curves empty
    assert (high - data.max()) < 0.75 * (high - low) and (data.min() - low) < 0.75 * (high - low)


def test_f3b_stop_of_the_lower_bound_is_explained_and_units_named(saved):
    fig = saved["f3_krr_envelopes.png"]
    texts = " ".join(t.get_text() for t in fig.axes[1].texts)
    assert "no lower bound" in texts
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert all("nats" in ax.get_ylabel() for ax in fig.axes)
