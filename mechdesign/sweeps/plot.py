"""Figures of a sweep table (matplotlib, PNG and SVG).

* ``utility_vs_epsilon``: the certified objective against ε (nats), one panel per objective and
  one line per combination of the other axes. For the Dobrushin coefficient the closed forms
  are overlaid: Ξ(ε,c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1} (Dobrushin paper, Theorem 1) for
  each line's N and c, and the LDP limit (e^ε − 1)/(e^ε + 1) (Kairouz et al.; eq. 4, the c → 0
  limit), which every (ε,c)-PML curve lies on or above.
* ``time_vs_size``: seconds per design against N, log–log, one series per objective and prior set.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mechdesign.spec.errors import InputError

__all__ = ["utility_vs_epsilon", "time_vs_size", "plot_all"]

Y_LABELS = {
    "dobrushin": "Dobrushin coefficient η_TV(K) (higher: more utility)",
    "expected_loss": "expected loss (lower: more utility)",
    "mutual_information": "mutual information I(X;Y) (nats)",
    "bayes_vulnerability": "Bayes vulnerability",
    "f_divergence": "f-divergence between output laws",
}
MAX_LEGEND = 14


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


def _label(values: dict) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in values.items()) or "all points"


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def utility_vs_epsilon(df, out: str | Path, stem: str = "utility_vs_epsilon") -> list[Path]:
    """Objective against ε (see the module docstring); returns the PNG and SVG paths."""
    from mechdesign.theory.bounds import ldp_dobrushin, xi

    plt = _pyplot()
    data = df[df["objective"].notna() & df["epsilon_value"].notna()]
    if data.empty:
        raise InputError("plot: no point has an objective to plot")
    others = [a for a in df.attrs.get("axes", []) if a not in ("epsilon", "objective (axis)") and a in df.columns]
    kinds = [k for k in data["objective_kind"].dropna().unique()]
    fig, axes = plt.subplots(1, len(kinds), figsize=(8.6 * len(kinds), 4.6), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        part = data[data["objective_kind"] == kind]
        groups = part.groupby(others, sort=True, dropna=False) if others else [((), part)]
        eps_all = np.linspace(0.0, float(part["epsilon_value"].max()), 200)
        shown_xi = False
        for i, (values, g) in enumerate(groups):
            values = values if isinstance(values, tuple) else (values,)
            g = g.sort_values("epsilon_value")
            color = f"C{i % 10}"
            label = _label(dict(zip(others, values)))
            closed = None
            if kind == "dobrushin":
                ns, cs = g["N"].dropna().unique(), g["c"].dropna().unique()
                if len(ns) == 1 and len(cs) == 1 and 0 <= cs[0] <= 1 / ns[0] + 1e-15:
                    n, c = int(ns[0]), float(min(cs[0], 1 / ns[0]))
                    closed = [xi(e, c, n) for e in eps_all]
            if closed is not None:  # the certified LP optimum as dots, Theorem 1 as a line of the same colour
                ax.plot(eps_all, closed, "-", lw=1.0, color=color, alpha=0.9)
                ax.plot(g["epsilon_value"], g["objective"], "o", ms=3.5, color=color, label=label)
                shown_xi = True
            else:
                ax.plot(g["epsilon_value"], g["objective"], "o-", ms=3, lw=1.2, color=color, label=label)
            bad = g[g["status"] != "optimal"]
            if not bad.empty:
                ax.plot(
                    bad["epsilon_value"],
                    bad["objective"],
                    "x",
                    color="red",
                    ms=6,
                    label="not certified optimal" if i == 0 else None,
                )
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
        ax.set_ylabel(Y_LABELS.get(kind, kind))
        ax.set_title(f"{kind}: utility against privacy")
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if len(handles) > MAX_LEGEND:
            keep = handles[: MAX_LEGEND - 3] + handles[-2:]
            labels = labels[: MAX_LEGEND - 3] + labels[-2:]
            handles = keep
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
    """Seconds per design (the task's wall clock) against N, log–log, with the median per N."""
    plt = _pyplot()
    data = df[df["seconds"].notna() & df["N"].notna() & (df["seconds"] > 0)]
    if data.empty:
        raise InputError("plot: no point has a time to plot")
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for i, ((kind, ps), g) in enumerate(data.groupby(["objective_kind", "prior_set_kind"], dropna=False)):
        color = f"C{i % 10}"
        ax.scatter(g["N"].astype(float), g["seconds"], s=8, alpha=0.5, color=color)
        med = g.groupby("N")["seconds"].median()
        ax.plot(med.index.astype(float), med.values, "-", color=color, lw=1.5, label=f"{kind}, {ps} (median)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (secret alphabet size)")
    ax.set_ylabel("time per design (s)")
    ax.set_title("time against problem size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths = _save(fig, Path(out), stem)
    plt.close(fig)
    return paths


def plot_all(df, out: str | Path) -> list[Path]:
    """Both figures; the time plot only when the table has more than one N (else it says little)."""
    paths = utility_vs_epsilon(df, out)
    sizes = df["N"].dropna().unique()
    if len(sizes) > 1 and not math.isnan(float(df["seconds"].max())):
        paths += time_vs_size(df, out)
    return paths
