"""Structured mechanisms against the peers at k = 56 (the state of each US airport, vega_datasets' airports,
bootstrapped to n = 10^5): the same family at the same ε gives the same mean squared error within noise, and
decoding is timed against the peers' aggregators. Peers (benchmarks/peer_oracles.py, the optional extra
``peers``), each run with its own client and aggregator: multi-freq-ldpy's GRR, SS, OUE and OLH and pure-ldp's
DE (k-RR), OUE, OLH and Hadamard response (for ε ≤ 1 the high-privacy variant, mechdesign's family; above 1 pure-ldp
runs the blocked general variant, another family). A library that is missing or does not import is skipped.

    python benchmarks/structured_peers.py [--reps 5] [--out benchmarks/results/structured_peers.md]

Both sides are post-processed alike: the unbiased estimate clipped at 0 and renormalised (multi-freq-ldpy's
``MI``). Errors are over repeated privatisation of one bootstrapped population (the estimand: its
frequencies). The figure draws mechdesign's error against ε for every family at k = 56 (measured and
closed form, Wang et al., USENIX Security 2017) and at k = 10^4 (closed form).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

import numpy as np

from mechdesign.mechanisms import hadamard_response, krr, local_hashing, subset_selection, unary_encoding
from peer_oracles import PEERS, clip_renormalise, run_peer, unavailable

ROOT = Path(__file__).resolve().parents[1]


def population(n: int, seed: int = 0):
    from vega_datasets import local_data

    states = local_data.airports()["state"].dropna().astype(str)
    labels = sorted(states.unique())
    codes = states.map({s: i for i, s in enumerate(labels)}).to_numpy()
    x = np.random.default_rng(seed).choice(codes, size=n, replace=True)
    return labels, x, np.bincount(x, minlength=len(labels)) / n


def ours(make, labels, x, f, reps, seed):
    mech = make(labels)
    mech.estimate(mech.privatize_indices(x[:100], rng=seed))  # warm-up: imports (scipy.stats) are not decoding time
    errs, t_priv, t_dec = [], 0.0, 0.0
    for r in range(reps):
        t0 = time.perf_counter()
        reports = mech.privatize_indices(x, rng=seed + r)
        t1 = time.perf_counter()
        est = mech.estimate(reports).estimate
        t_dec += time.perf_counter() - t1
        t_priv += t1 - t0
        errs.append(np.sum((clip_renormalise(est) - f) ** 2))
    return np.array(errs), t_priv / reps, t_dec / reps


FAMILIES = {
    "krr": lambda eps: lambda labels: krr(labels, eps),
    "subset_selection": lambda eps: lambda labels: subset_selection(labels, eps),
    "unary_encoding": lambda eps: lambda labels: unary_encoding(labels, eps),
    "local_hashing": lambda eps: lambda labels: local_hashing(labels, eps),
    "hadamard_response": lambda eps: lambda labels: hadamard_response(labels, eps),
}


def figure(path: Path, labels, x, f, reps):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = [0.5, 1, 2, 3, 4, 6]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    n = len(x)
    for family, maker in FAMILIES.items():
        measured, predicted, big = [], [], []
        for eps in grid:
            m = maker(str(eps))(labels)
            errs, _, _ = ours(lambda lab, m=m: m, labels, x, f, reps, 100)
            measured.append(errs.mean())
            predicted.append(m.variances(n, f, population=True).sum())
            big.append(maker(str(eps))([str(i) for i in range(10_000)]).variances(n).sum())
        (line,) = axes[0].plot(grid, predicted, "-", label=f"{family} (closed form)")
        axes[0].plot(grid, measured, "o", color=line.get_color())
        axes[1].plot(grid, big, "-", color=line.get_color(), label=family)
    for ax, title in zip(
        axes, ["k = 56 (airports by state), n = 10^5", "k = 10^4, uniform prior, n = 10^5 (closed form)"]
    ):
        ax.set_yscale("log")
        ax.set_xlabel("ε (nats)")
        ax.set_ylabel("mean squared error Σ_x (p̂_x − p_x)²")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, title="lines: closed form; dots: measured (clipped)", title_fontsize=7)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--eps", default="1")
    ap.add_argument("--out")
    ap.add_argument("--figure")
    a = ap.parse_args()
    labels, x, f = population(a.n)
    k, eps = len(labels), float(a.eps)
    load_start, t_start = os.getloadavg()[0], time.perf_counter()
    missing = {lib: unavailable(lib) for lib in ("multi-freq-ldpy", "pure-ldp")}
    rows, skipped = [], sorted({why for why in missing.values() if why})
    for family, maker in FAMILIES.items():
        e_ours, tp, td = ours(maker(a.eps), labels, x, f, max(a.reps, 20), 0)
        peers = [(lib, o) for (lib, o), fam in PEERS.items() if fam == family and not missing[lib]]
        for lib, oracle in peers or [None]:
            peer = None
            if lib is not None:
                est, ptp, ptd = run_peer(lib, oracle, k, eps, x, a.reps, 1000)
                peer = (f"{lib} {oracle}", np.sum((est - f) ** 2, axis=1), ptp, ptd)
            rows.append((family, e_ours, tp, td, peer))
            print(family, e_ours.mean(), tp, td, None if peer is None else (peer[0], peer[1].mean(), peer[2], peer[3]))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    lines = [
        "# Structured mechanisms against the peers (k = 56, airports by state)",
        "",
        f"`python benchmarks/structured_peers.py --reps {a.reps} --n {a.n} --eps {a.eps}` at commit {commit}, 2 shared cores "
        f"(load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        f"{time.perf_counter() - t_start:.0f} s); ε = {a.eps}, n = {a.n:,} records bootstrapped from vega_datasets' "
        f"airports (k = {k}). MSE = Σ_x (p̂_x − f_x)² after clipping at 0 and renormalising (both sides), mean ± standard "
        f"error over repetitions (mechdesign {max(a.reps, 20)}, peer {a.reps}); z = (peer − mechdesign) / √(s.e.² + s.e.²). "
        "Each peer runs its own client on every record and its own aggregator (benchmarks/peer_oracles.py; the OLH of "
        "both libraries with a shim for xxhash >= 3: its text encoded, its seed mod 2^32). pure-ldp's HR at ε ≤ 1 is "
        "the high-privacy variant, mechdesign's family. Times are per run of n records.",
        "",
        "| family | mechdesign MSE | peer | peer MSE | z | mechdesign privatize s | peer privatize s | mechdesign decode s | peer decode s | decode speed-up |",
        "| --- | --- | --- | --- | ---: | --- | --- | --- | --- | --- |",
    ]
    for family, e, tp, td, peer in rows:
        se = e.std(ddof=1) / np.sqrt(e.size)
        if peer is None:
            lines.append(
                f"| {family} | {e.mean():.3e} ± {se:.1e} | (absent) | - | - | {tp:.3f} | - | {td:.4f} | - | - |"
            )
            continue
        name, pe, ptp, ptd = peer
        pse = pe.std(ddof=1) / np.sqrt(pe.size)
        lines.append(
            f"| {family} | {e.mean():.3e} ± {se:.1e} | {name} | {pe.mean():.3e} ± {pse:.1e} | "
            f"{(pe.mean() - e.mean()) / np.hypot(se, pse):+.1f} | {tp:.3f} | {ptp:.2f} | "
            f"{td:.4f} | {ptd:.3f} | {ptd / td:.0f}× |"
        )
    lines += [""] + [f"Skipped: {note}." for note in skipped]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)
    if a.figure:
        figure(Path(a.figure), labels, x, f, 5)


if __name__ == "__main__":
    main()
