"""``mechdesign figures [--out DIR]``: regenerate every figure of the four papers, same panels and parameters
as printed, into ``benchmarks/results/`` (PNG).

* disclosure paper, Figure 1: Example 3.3's bound on ℓ(X → 1) against m/n, (a) p = 0.3, (b) p = 0.5,
  n ∈ {200, 500, 1000, 2000} (:mod:`mechdesign.theory.disclosure`).
* Dobrushin paper, Figure 1: (a) K1, N = 10, c = 0.05: sampled D(K1P‖K1Q) against TV(P, Q) with
  Corollary 1, Duchi et al. and Asoodeh–Zhang + reverse Pinsker (Q_min = c); (b) K2, N = 5, c = 0.1
  with Corollary 2; panel (a) on a log y-axis so that every curve stays visible. (Zamanlooy–Asoodeh
  [9, Thm 5] is not drawn: see :data:`ZAMANLOOY_ASOODEH_NOTE`.)
* f_α paper, Figure 1: joint range of (TV, D_{f_α}) at α = 4 (binary pairs, which give the joint range
  by Harremoës–Vajda) with Theorem 8's g_α and Remark 9's tight ψ_α(p*, t); Figure 2: four panels
  against α (N = 5, ε = log 2; N = 5, ε = log 6; N = 20, ε = log 10 with channel P; N = 100,
  ε = log 10 with channel Q): the bound φ, the mechanism's RLDP and the composition's true RLDP.
* envelopes paper, Figure 1: the CDF of ℓ(Y) in Example 2 with ε_Y(0.1) and ε̄_Y(0.1); Figure 2: k-RR,
  ε_r = 1: (a) k = 3 uniform, (b) k = 5, P = (0.1, 0.1, 0.2, 0.3, 0.3), (c) k = 12 and (d) k = 20
  four-level prior with ρ = 0.1: upper and lower bounds on ε_c(δ) and the (ε, δ)-LDP curve.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from mechdesign.spec.errors import InputError

__all__ = ["register", "paper_figures", "FIGURES"]

ROOT = Path(__file__).resolve().parent.parent.parent

FIGURES = {
    "disclosure_fig1_count_query.png": "disclosure paper Figure 1 (Example 3.3)",
    "dobrushin_fig1_divergence_bounds.png": "Dobrushin paper Figure 1 (Corollaries 1-2, comparison bounds)",
    "falpha_fig1_joint_range.png": "f_alpha paper Figure 1 (joint range at alpha = 4)",
    "falpha_fig2_rldp.png": "f_alpha paper Figure 2 (Example 12, four panels against alpha)",
    "envelopes_fig1_cdf.png": "envelopes paper Figure 1 (CDF of the leakage, Example 2/3)",
    "envelopes_fig2_krr.png": "envelopes paper Figure 2 (k-RR envelopes and the (eps, delta)-LDP curve)",
}


def _disclosure_fig1(plt, out: Path) -> None:
    import numpy as np
    from mechdesign.theory import disclosure as d

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, p, tag in zip(axes, (0.3, 0.5), "ab"):
        for n in (200, 500, 1000, 2000):
            ms = np.arange(0, int(p * n))
            ax.plot(ms / n, [d.count_query_leakage_bound(n, int(m), p) for m in ms], label=f"n = {n}")
        ax.axhline(d.example33_gender_threshold(), color="k", ls="--", lw=0.8, label="min H_inf(S_i) = 0.36")
        ax.set_yscale("log")
        ax.set_ylim(1e-12, 10)
        ax.set(xlabel="m/n", ylabel="upper bound on l(X -> 1) (nats)", title=f"({tag}) p = {p}")
        ax.legend(fontsize=7)
    fig.suptitle("Disclosure paper, Figure 1: Example 3.3, deterministic answer to 'more than m females?'")
    fig.tight_layout()
    fig.savefig(out / "disclosure_fig1_count_query.png", dpi=120)
    plt.close(fig)


ZAMANLOOY_ASOODEH_NOTE = (
    "Zamanlooy-Asoodeh [9, Thm 5] is not drawn: the Dobrushin paper cites it without stating it, so its "
    "curve cannot be reproduced from the paper"
)
"""Why panel (a) has one comparison curve fewer than the paper's (said here and in
``benchmarks/results/paper_results.md``, not on the figure)."""


def _dobrushin_fig1(plt, out: Path) -> None:
    """Dobrushin paper Figure 1. Panel (a) spans four decades (Duchi et al. reaches ~196 nats at TV = 0.5,
    the samples ~1e-4), so its y-axis is logarithmic: every curve stays inside the panel. The paper's
    caption and text do not state its axis scale."""
    import numpy as np
    from mechdesign.theory import bounds
    from mechdesign.theory.dobrushin import asoodeh_zhang_kl_bound

    rng = np.random.default_rng(0)
    K1 = np.array([[15 / 16, 1 / 16]] * 5 + [[1 / 16, 15 / 16]] * 5)
    K2 = np.array([[1 / 3 if (j - i) % 5 in (0, 1, 2) else 0.0 for j in range(5)] for i in range(5)])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    eps = math.log(10 / 3)
    for ax, K, c, what, title in (
        (axes[0], K1, 0.05, "KL", "(a) K1, N = 10, c = 0.05"),
        (axes[1], K2, 0.1, "H2", "(b) K2, N = 5, c = 0.1"),
    ):
        n = K.shape[0]
        tvs, vals = [], []
        for _ in range(2000):
            P, Q = (c + (1 - n * c) * rng.dirichlet(np.ones(n) * 0.3) for _ in range(2))
            a, b = P @ K, Q @ K
            tvs.append(0.5 * np.abs(P - Q).sum())
            vals.append(
                float(np.sum(a * np.log(a / b))) if what == "KL" else float(np.sum((np.sqrt(a) - np.sqrt(b)) ** 2))
            )
        ax.scatter(tvs, vals, s=3, color="tab:blue", label="sampled P, Q in Q_X(c)")
        if what == "KL":
            tv = np.linspace(1e-3, 1 - n * c, 200)
            curves = [
                ([bounds.corollary1_kl_bound(eps, c, n, t) for t in tv], "k-", "Corollary 1 ((log(10/3), 0.05)-PML)"),
                ([bounds.duchi_kl_bound(math.log(15), t) for t in tv], "r--", "Duchi et al. [6] (K1 is log 15-LDP)"),
                (
                    [asoodeh_zhang_kl_bound(math.log(15), c, t) for t in tv],
                    "g-.",
                    "Asoodeh-Zhang [7] + reverse Pinsker (Q_min = c)",
                ),
            ]
            for ys, style, label in curves:
                ax.plot(tv, ys, style, label=label)
            top = max(max(ys) for ys, _, _ in curves)
            positive = [v for v in vals if v > 0] + [min(ys) for ys, _, _ in curves]
            ax.set_yscale("log")
            ax.set_ylim(10 ** math.floor(math.log10(min(positive))), 3 * top)
            ax.set(ylabel="D(K1 P || K1 Q)  (nats, log scale)")
        else:
            tv = np.linspace(0, 1 - n * c, 60)
            ax.plot(tv, [bounds.corollary2_hellinger_bound(eps, c, n, t) for t in tv], "k-", label="Corollary 2")
            ax.set(ylabel="H^2(K2 P || K2 Q) = sum(sqrt p - sqrt q)^2")
        ax.set(xlabel="TV(P, Q)", title=title + ", eps = log(10/3)")
        ax.legend(fontsize=7, loc="lower left" if what == "KL" else "best")
    fig.suptitle("Dobrushin paper, Figure 1: divergence bounds on sampled pairs P, Q in Q_X(c)")
    fig.tight_layout()
    fig.savefig(out / "dobrushin_fig1_divergence_bounds.png", dpi=120)
    plt.close(fig)


def _falpha_fig1(plt, out: Path) -> None:
    import numpy as np
    from mechdesign.theory import bounds, falpha

    alpha = 4.0
    grid = np.linspace(0.005, 0.995, 120)
    tvs, vals = [], []
    for p in grid:
        for q in grid:
            v = falpha.binary_f_alpha(p, q, alpha)
            if v < 12:
                tvs.append(abs(p - q))
                vals.append(v)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.scatter(tvs, vals, s=1, color="0.7", label="binary pairs (joint range)")
    t = np.linspace(1e-4, 0.9, 400)
    ax.plot(t, [bounds.g_alpha(x, alpha) for x in t], "r-", lw=1.5, label="Theorem 8: g_alpha(t)")
    ax.plot(t, [falpha.tight_pinsker_f_alpha(x, alpha) for x in t], "k--", lw=1, label="Remark 9: psi_alpha(p*, t)")
    ax.axvline(1 / alpha, color="b", ls=":", lw=0.8, label="t = 1/alpha")
    ax.set(
        xlabel="TV(P || Q)",
        ylabel="D_f_alpha(P || Q)",
        ylim=(0, 12),
        xlim=(0, 1),
        title="f_alpha paper, Figure 1: joint range at alpha = 4",
    )
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "falpha_fig1_joint_range.png", dpi=120)
    plt.close(fig)


def _falpha_fig2(plt, out: Path) -> None:
    import numpy as np
    from mechdesign.theory import falpha

    panels = [
        (5, math.log(2), "P", "(a) N = 5, eps = log 2, P_Y|X"),
        (5, math.log(6), "P", "(b) N = 5, eps = log 6, P_Y|X"),
        (20, math.log(10), "P", "(c) N = 20, eps = log 10, P_Y|X"),
        (100, math.log(10), "Q", "(d) N = 100, eps = log 10, Q_Y|X"),
    ]
    # α = 2 is a grid point: Theorem 8's g_α changes form there (the standard Pinsker bound below 2, the
    # Jensen bound (1 + 4t²)^{α−1} − 1 from 2 on), so φ steps down at α = 2; the line is broken there
    # instead of drawing the step as a slope. Its kink further right is where ε_f crosses g_α's jump at
    # t = 1/α (g_α⁻¹ is flat at 1/α over that jump). Both are the theorem's, not the computation's.
    alphas = np.unique(np.concatenate([np.linspace(1.05, 20, 240), [2.0]]))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for ax, (n, eps, ch, title) in zip(axes.ravel(), panels):
        d = falpha.example12_curves(n, eps, ch, alphas)
        stepped = np.array(d["bound"], float)
        before = np.searchsorted(alphas, 2.0)
        ax.plot(
            np.insert(alphas, before, np.nan),
            np.insert(stepped, before, np.nan),
            "k-",
            label="bound phi, eqs. 53-55 (Theorem 8's g_alpha: a step at alpha = 2)",
        )
        ax.plot(
            alphas,
            d["bound_tight_pinsker"],
            color="0.45",
            ls=":",
            lw=1.6,
            label="phi with Remark 9's tight Pinsker bound",
        )
        ax.plot(alphas, d["mechanism"], "b--", label="RLDP of P_X|W (mechanism)")
        ax.plot(alphas, d["composition"], "r-.", label="true RLDP of the composition")
        ax.set(xlabel="alpha", ylabel="RLDP (nats)", title=title)
    fig.suptitle("f_alpha paper, Figure 2: Example 12")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out / "falpha_fig2_rldp.png", dpi=120)
    plt.close(fig)


def _envelopes_fig1(plt, out: Path) -> None:
    import numpy as np
    from fractions import Fraction

    from mechdesign.theory import envelopes, measures

    K, u = envelopes.example2_kernel(), [Fraction(1, 4)] * 4
    vals, cdf = envelopes.leakage_cdf(K, u)
    xs = np.concatenate([[0.0], np.repeat(vals, 2), [1.6]])
    ys = np.concatenate([[0.0, 0.0], np.repeat(cdf, 2)])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, ys, "k-", label="C_Y(t) = P{l(Y) <= t}")
    lo, hi = measures.leakage_quantile(K, u, "0.1"), measures.leakage_upper_quantile(K, u, "0.1")
    ax.axvline(lo, color="b", ls="--", label=f"eps_Y(0.1) = log(10/9) = {lo:.3f}")
    ax.axvline(hi, color="r", ls=":", label=f"eps_bar_Y(0.1) = log 4 = {hi:.3f}")
    ax.axhline(0.9, color="0.6", lw=0.6)
    ax.set(
        xlabel="t (nats)",
        ylabel="C_Y(t)",
        ylim=(-0.02, 1.05),
        xlim=(0, 1.6),
        title="Envelopes paper, Figure 1\nCDF of l(X -> Y), Example 2, delta = 0.1",
    )
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(out / "envelopes_fig1_cdf.png", dpi=120)
    plt.close(fig)


def _envelopes_fig2(plt, out: Path) -> None:
    import numpy as np
    from mechdesign.theory import envelopes

    panels = [
        (3, [1 / 3] * 3, "(a) k = 3, P_X uniform"),
        (5, [0.1, 0.1, 0.2, 0.3, 0.3], "(b) k = 5, P_X = (0.1, 0.1, 0.2, 0.3, 0.3)"),
        (12, envelopes.four_level_prior(12, 0.1), "(c) k = 12, four-level prior, rho = 0.1"),
        (20, envelopes.four_level_prior(20, 0.1), "(d) k = 20, four-level prior, rho = 0.1"),
    ]
    deltas = np.linspace(0.005, 0.995, 150)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for ax, (k, prior, title) in zip(axes.ravel(), panels):
        d = envelopes.figure2_curves(k, prior, 1.0, deltas)
        ax.plot(deltas, d["upper"], "k-", label="upper bound on eps_c (Thm 5 i-ii)")
        ax.plot(deltas, d["lower"], "b--", label="lower bound on eps_c (Thm 5 iii, eps_bar_Y, eps_b)")
        ax.plot(deltas, d["ldp"], "r-.", label="(eps, delta)-LDP of k-RR")
        ax.set(xlabel="delta", ylabel="eps (nats)", title=title)
        ax.legend(fontsize=7)
    fig.suptitle("Envelopes paper, Figure 2: k-RR with eps_r = 1.0")
    fig.tight_layout()
    fig.savefig(out / "envelopes_fig2_krr.png", dpi=120)
    plt.close(fig)


def paper_figures(out: Path | str | None = None) -> list[Path]:
    """Write every paper figure into ``out`` (default ``benchmarks/results/``); return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out) if out else ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    for make in (_disclosure_fig1, _dobrushin_fig1, _falpha_fig1, _falpha_fig2, _envelopes_fig1, _envelopes_fig2):
        make(plt, out)
    return [out / name for name in FIGURES]


def _cmd_figures(args) -> int:
    from mechdesign.bench.tables import BENCH_EXTRA_NOTE, matplotlib_missing

    if matplotlib_missing():  # every output of this command is a figure: refuse before any work
        raise InputError(f"figures: the paper figures need matplotlib: {BENCH_EXTRA_NOTE}")
    for path in paper_figures(args.out):
        print(path, file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("figures", help="regenerate every figure of the four papers (benchmarks/results/*.png)")
    p.add_argument("--out", metavar="DIR", help="output directory (default benchmarks/results/)")
    p.set_defaults(func=_cmd_figures)
