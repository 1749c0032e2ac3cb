"""Figures of a sweep table (matplotlib, PNG and SVG).

* ``utility_vs_epsilon``: the certified objective against ε (nats), one panel per objective and
  one line per combination of the other axes. For the Dobrushin coefficient the closed forms
  are overlaid: Ξ(ε,c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1} (Dobrushin paper, Theorem 1) for
  each line's N and c, and the LDP limit (e^ε − 1)/(e^ε + 1) (Kairouz et al.; eq. 4, the c → 0
  limit), which every (ε,c)-PML curve lies on or above. Lines are grouped by the sweep's axes
  (from the table's metadata), never by a result column; curves that coincide are drawn once
  and named together in the legend.
* ``error_vs_epsilon``: the estimation error per report against ε, log scale, when the table has it:
  U = n·E‖p̂ − P‖² of the MLE (records i.i.d. from P, solid; the collected population's frequencies,
  dashed), the curves grouped as in ``utility_vs_epsilon``; designs whose kernel does not identify P
  (U infinite) are left out and counted in the title.
* ``time_vs_size``: seconds per design against N, log–log, one series per objective and prior set; the
  medians are joined by a line only from three sizes on.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mechdesign.spec.errors import InputError

__all__ = ["utility_vs_epsilon", "error_vs_epsilon", "time_vs_size", "plot_all", "coinciding_curves"]

Y_LABELS = {
    "dobrushin": "Dobrushin coefficient η_TV(K) (higher: more utility)",
    "expected_loss": "expected loss E[L(X, Y)] (lower: more utility)",
    "mutual_information": "mutual information I(X;Y) (nats)",
    "bayes_vulnerability": "Bayes vulnerability",
    "f_divergence": "f-divergence between output laws",
}
MAX_LEGEND = 14
MIN_SIZES_FOR_LINE = 3
"""The time plot joins the medians by a line only from this many sizes on."""

LOSS_TEXT = {"hamming": "L = 1[x ≠ y]", "absolute": "L = |x − y|", "squared": "L = (x − y)²", "matrix": "L given"}
PRIOR_TEXT = {"uniform": "uniform prior", "worst_case": "worst prior of the prior set", "given": "given prior"}


def _y_label(kind: str, part) -> str:
    """The panel's y label: the objective, and for an expected loss the loss and prior it is taken under
    (from the ``objective_detail`` column when one detail holds for the whole panel)."""
    label = Y_LABELS.get(kind, kind)
    if kind != "expected_loss" or "objective_detail" not in part:
        return label
    details = part["objective_detail"].dropna().unique()
    if len(details) != 1:
        return label.replace("E[L(X, Y)]", "E[L(X, Y)], L and prior in the legend")
    settings = dict(item.split("=", 1) for item in str(details[0]).split(", ") if "=" in item)
    words = [LOSS_TEXT.get(settings.get("loss", ""), f"L = {settings['loss']}" if "loss" in settings else "")]
    words.append(PRIOR_TEXT.get(settings.get("prior", "uniform"), "given prior"))
    return "expected loss E[L(X, Y)], " + ", ".join(w for w in words if w) + "\n(lower: more utility)"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise InputError("--plot: needs matplotlib (pip install 'mechdesign[bench]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=130)
    fig.savefig(paths[1])
    return paths


SHORT_NAMES = {"alphabet": "N", "prior_set.c": "c", "objective (axis)": "objective"}
"""Legend names of common axes (Theorem 1's symbols); other axes are named by their column."""

SAME_CURVE_RTOL = 1e-3
"""Curves closer than this fraction of the panel's y range at every ε are one curve on the figure."""


def _label(values: dict) -> str:
    return ", ".join(f"{SHORT_NAMES.get(k, k)}={_fmt(v)}" for k, v in values.items()) or "all points"


def _fmt(v) -> str:
    from mechdesign.sweeps.table import prior_set_label

    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, str) and v.startswith("{"):
        return prior_set_label(v)
    return str(v)


def _colour_keys(data, axis_cols: list[str]) -> dict:
    """One colour per combination of the axes other than ε and the objective, the same in every panel."""
    keyed = [a for a in axis_cols if a not in ("epsilon", "objective (axis)") and data[a].nunique(dropna=False) > 1]
    if not keyed:
        return {}
    combos = data[keyed].astype(str).drop_duplicates().itertuples(index=False, name=None)
    return {"axes": keyed, "colour": {combo: f"C{i % 10}" for i, combo in enumerate(combos)}}


def _curves(part, others: list[str], kind: str, eps_all):
    """One curve per value of the ``others`` axes: (label, points sorted by ε, Ξ(ε,c) on eps_all or None)."""
    from mechdesign.theory.bounds import xi

    groups = part.groupby(others, sort=True, dropna=False) if others else [((), part)]
    curves = []
    for values, g in groups:
        values = values if isinstance(values, tuple) else (values,)
        g = g.sort_values("epsilon_value")
        closed = None
        if kind == "dobrushin":
            ns, cs = g["N"].dropna().unique(), g["c"].dropna().unique()
            if len(ns) == 1 and len(cs) == 1 and 0 <= cs[0] <= 1 / ns[0] + 1e-15:
                n, c = int(ns[0]), float(min(cs[0], 1 / ns[0]))
                closed = np.array([xi(e, c, n) for e in eps_all])
        curves.append((_label(dict(zip(others, values))), g, closed))
    return curves


def coinciding_curves(curves, tolerance: float) -> list[list[int]]:
    """Classes of curves that would hide each other: the same ε values, objectives within
    ``tolerance`` at every one of them, and (when both have one) closed forms within it too.
    Ξ(ε,c) depends on N and c only through Nc (Theorem 1), so e.g. N=10, c=0.01 and N=20, c=0.005
    are one curve. Returns lists of indices into ``curves``, in order."""
    classes: list[list[int]] = []
    for i, (_, g, closed) in enumerate(curves):
        eps, y = g["epsilon_value"].to_numpy(float), g["objective"].to_numpy(float)
        for cls in classes:
            _, h, closed_h = curves[cls[0]]
            eps_h, y_h = h["epsilon_value"].to_numpy(float), h["objective"].to_numpy(float)
            if len(eps) != len(eps_h) or not np.allclose(eps, eps_h, rtol=1e-12, atol=0):
                continue
            if np.max(np.abs(y - y_h), initial=0.0) > tolerance:
                continue
            if closed is not None and closed_h is not None and np.max(np.abs(closed - closed_h)) > tolerance:
                continue
            cls.append(i)
            break
        else:
            classes.append([i])
    return classes


def utility_vs_epsilon(
    df, out: str | Path, stem: str = "utility_vs_epsilon", axes: list[str] | None = None
) -> list[Path]:
    """Objective against ε (see the module docstring); returns the PNG and SVG paths.

    Lines are grouped by the sweep's axes other than ε, taken from the table's metadata (``axes``:
    axis paths; default ``df.attrs``, see :func:`mechdesign.sweeps.table.axis_columns`), never by a
    result column; one panel per objective kind, and within a panel only the axes that vary there.
    Curves that coincide (to 1e-3 of the panel's range) are drawn once and named together in the
    legend (``N=10, c=0.01 = N=20, c=0.005``), so every listed curve can be seen.
    """
    from mechdesign.sweeps.table import axis_columns
    from mechdesign.theory.bounds import ldp_dobrushin

    axis_cols = axis_columns(df, axes)
    plt = _pyplot()
    data = df[df["objective"].notna() & df["epsilon_value"].notna()]
    if data.empty:
        raise InputError("plot: no point has an objective to plot")
    kinds = [k for k in data["objective_kind"].dropna().unique()]
    colours = _colour_keys(data, axis_cols)
    fig, panels = plt.subplots(1, len(kinds), figsize=(8.6 * len(kinds), 4.6), squeeze=False)
    for ax, kind in zip(panels[0], kinds):
        part = data[data["objective_kind"] == kind]
        others = [a for a in axis_cols if a != "epsilon" and part[a].nunique(dropna=False) > 1]
        eps_all = np.linspace(0.0, float(part["epsilon_value"].max()), 200)
        curves = _curves(part, others, kind, eps_all)
        ys = part["objective"].to_numpy(float)
        tolerance = SAME_CURVE_RTOL * max(float(ys.max() - ys.min()), 1e-12)
        shown_xi = False
        for i, cls in enumerate(coinciding_curves(curves, tolerance)):
            label = " = ".join(curves[j][0] for j in cls)
            _, g, closed = curves[cls[0]]
            color = f"C{i % 10}"
            if colours:
                first = curves[cls[0]][1].iloc[0]
                color = colours["colour"].get(tuple(str(first[a]) for a in colours["axes"]), color)
            if closed is not None:  # the certified LP optimum as dots, Theorem 1 as a line of the same colour
                ax.plot(eps_all, closed, "-", lw=1.0, color=color, alpha=0.9)
                ax.plot(g["epsilon_value"], g["objective"], "o", ms=3.5, color=color, label=label, gid="curve")
                shown_xi = True
            else:
                ax.plot(g["epsilon_value"], g["objective"], "o-", ms=3, lw=1.2, color=color, label=label, gid="curve")
            bad = part[part.index.isin([k for j in cls for k in curves[j][1].index]) & (part["status"] != "optimal")]
            if not bad.empty:
                ax.plot(bad["epsilon_value"], bad["objective"], "x", color="red", ms=6, label="_not certified")
        if (part["status"] != "optimal").any():
            ax.plot([], [], "x", color="red", ms=6, label="not certified optimal")
        if kind == "dobrushin":
            if shown_xi:
                ax.plot([], [], "-", color="gray", lw=1.0, label="lines: Ξ(ε,c), Theorem 1 (same colour)")
            ax.plot(
                eps_all,
                [ldp_dobrushin(e) for e in eps_all],
                ":",
                color="black",
                lw=1.8,
                label="LDP limit (e^ε−1)/(e^ε+1)",
            )
            ax.set_ylim(0, 1.05)
        ax.set_xlabel("ε (nats)")
        ax.set_ylabel(_y_label(kind, part))
        ax.set_title(f"{kind}: utility against privacy")
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if len(handles) > MAX_LEGEND:
            more = len(handles) - MAX_LEGEND + 1
            handles = handles[: MAX_LEGEND - 3] + handles[-2:]
            labels = labels[: MAX_LEGEND - 3] + labels[-2:]
            handles.insert(MAX_LEGEND - 3, ax.plot([], [], " ")[0])
            labels.insert(MAX_LEGEND - 3, f"… {more} more curves not listed")
        ax.legend(
            handles,
            labels,
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            title="dots: LP optimum" if kind == "dobrushin" else None,
            title_fontsize=7,
        )
    fig.tight_layout()
    paths = _save(fig, Path(out), stem)
    plt.close(fig)
    return paths


def time_vs_size(df, out: str | Path, stem: str = "time_vs_size") -> list[Path]:
    """Seconds per design (the task's wall clock) against N, log–log: every design as a faint dot and the median
    per N as a large marker, joined by a line only when there are at least :data:`MIN_SIZES_FOR_LINE` sizes (a
    line through two medians would suggest a trend that two sizes cannot show). Ticks are the sizes run and
    plain seconds."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    plt = _pyplot()
    data = df[df["seconds"].notna() & df["N"].notna() & (df["seconds"] > 0)]
    if data.empty:
        raise InputError("plot: no point has a time to plot")
    sizes = sorted(int(n) for n in data["N"].unique())
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    groups = data.groupby(["objective_kind", "prior_set_kind"], dropna=False)
    for i, ((kind, ps), g) in enumerate(groups):
        color = f"C{i % 10}"
        shift = 1.0 + 0.03 * (i - (len(groups) - 1) / 2)  # side by side at each N, not on top of each other
        ax.scatter(g["N"].astype(float) * shift, g["seconds"], s=8, alpha=0.35, color=color, linewidths=0)
        med = g.groupby("N")["seconds"].median()
        style = "o-" if len(med) >= MIN_SIZES_FOR_LINE else "o"
        ax.plot(
            med.index.astype(float) * shift,
            med.values,
            style,
            ms=8,
            mec="black",
            mew=0.8,
            color=color,
            lw=1.5,
            label=f"{kind}, {ps}: median",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([float(n) for n in sizes])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(sizes[0] / 1.25, sizes[-1] * 1.25)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("N (secret alphabet size)")
    ax.set_ylabel("time per design (s)")
    ax.set_title("time per design against problem size")
    ax.grid(alpha=0.3, which="major")
    ax.legend(fontsize=7, title="dots: one design each", title_fontsize=7)
    fig.tight_layout()
    paths = _save(fig, Path(out), stem)
    plt.close(fig)
    return paths


def error_vs_epsilon(df, out: str | Path, stem: str = "error_vs_epsilon", axes: list[str] | None = None) -> list[Path]:
    """The MLE's error per report (``mle_error``, ``mle_error_population``) against ε; returns the PNG and SVG
    paths. One line per combination of the sweep's other axes (as :func:`utility_vs_epsilon`)."""
    from mechdesign.sweeps.table import axis_columns

    axis_cols = axis_columns(df, axes)
    plt = _pyplot()
    data = df[df["epsilon_value"].notna() & df["mle_error"].notna()] if "mle_error" in df.columns else df.iloc[:0]
    if data.empty:
        raise InputError("plot: no point has an estimation error to plot")
    left_out = int((df["epsilon_value"].notna() & df["M"].notna()).sum() - len(data)) if "M" in df.columns else 0
    others = [a for a in axis_cols if a != "epsilon" and data[a].nunique(dropna=False) > 1]
    fig, ax = plt.subplots(figsize=(8.6, 4.6))
    groups = data.groupby(others, sort=True, dropna=False) if others else [((), data)]
    for i, (values, g) in enumerate(groups):
        values = values if isinstance(values, tuple) else (values,)
        g = g.sort_values("epsilon_value")
        color = f"C{i % 10}"
        label = _label(dict(zip(others, values)))
        ax.plot(g["epsilon_value"], g["mle_error"], "o-", ms=3, lw=1.2, color=color, label=label, gid="curve")
        ax.plot(g["epsilon_value"], g["mle_error_population"], "--", lw=1.0, color=color, label="_population")
    ax.plot([], [], "-", color="gray", label="solid: records i.i.d. from P")
    ax.plot([], [], "--", color="gray", label="dashed: the collected population's frequencies")
    ax.set_yscale("log")
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("U = n · E‖p̂ − P‖² of the MLE (lower is better)")
    title = "estimation error per report against privacy"
    if left_out > 0:
        title += f" ({left_out} design{'s' if left_out > 1 else ''} not identifying P left out)"
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    paths = _save(fig, Path(out), stem)
    plt.close(fig)
    return paths


def plot_all(df, out: str | Path) -> list[Path]:
    """The figures: utility against ε, the estimation error against ε when the table has it, and the
    time plot only when the table has more than one N (else it says little)."""
    paths = utility_vs_epsilon(df, out)
    if "mle_error" in df.columns and df["mle_error"].notna().any():
        paths += error_vs_epsilon(df, out)
    sizes = df["N"].dropna().unique()
    if len(sizes) > 1 and not math.isnan(float(df["seconds"].max())):
        paths += time_vs_size(df, out)
    return paths
