"""Frequency estimation on real data: the state of each US airport (vega_datasets' airports, k = 56 states).

Usage:  python benchmarks/frequency_estimation_data.py [--reps 50] [--olh-reps 10] [--n 100000]
            [--out benchmarks/results/frequency_estimation_data.md]

The population: n = 100,000 records bootstrapped (seed 0) from the 3,376 airports' states (the data ship inside the
``vega_datasets`` package; no network). The estimand is the population's frequencies f (so no sampling term).
For ε ∈ {0.5, 1, 2, 4}, each mechanism releases the population ``reps`` times (seeded) and the table gives the
measured mean squared error E‖f̂ − f‖² over the repetitions (± its standard error).

Designed mechanisms: the ``frequency_estimation`` designs at the uniform prior (ε-LDP: the best subset-selection class
as a balanced cyclic kernel; Q_X(c), c = 1/(2k): the optimal two-level class), and k-RR as an explicit kernel,
each decoded by the MLE (:func:`mechdesign.release.estimate.em_mle`); predicted = (U − (1 − ‖f‖²))/n at the data's f,
U = tr J⁻¹ − ‖f‖² (:func:`mechdesign.theory.estimation.mle_error`). Releasing a population through a kernel K is done
by output counts Σ_x Multinomial(c_x, K_x) (the same distribution as releasing each record; the first repetition of
the ε-LDP design is released record by record through :class:`mechdesign.release.mechanism.Mechanism` as a check).

Peers (optional extra ``peers``; benchmarks/peer_oracles.py): multi-freq-ldpy's GRR (k-RR), SS, OUE and OLH and
pure-ldp's DE (k-RR), OUE, OLH and Hadamard response, each run with the library's OWN client on every record and its
OWN aggregator, the unbiased estimate clipped at 0 and renormalised (multi-freq-ldpy's ``MI``; the same applied to
pure-ldp's counts). ``reps`` releases each, ``olh-reps`` for OLH (both libraries' aggregators hash every report
against every symbol, about 30–45 µs per record). Beside it, the analytical variance Σ_x Var f̂_x of the library's
unbiased estimator (Wang et al., USENIX Security 2017, at the library's (p, q); without clipping, so above the
measured error where clipping helps). A library that is missing or does not import is skipped.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import time

import numpy as np

from mechdesign import design
from mechdesign.release.estimate import clip_and_renormalise, em_mle
from mechdesign.theory.estimation import mle_error
from peer_oracles import PEERS, analytical_variance, run_peer, unavailable

EPSILONS = (0.5, 1.0, 2.0, 4.0)
SUPPORT_NAME = "designed, ε-LDP, peers' decoder (support counts, clip, renormalise)"


def population(n: int):
    from vega_datasets import data

    states = data.airports()["state"].dropna().astype(str).to_numpy()
    labels = sorted(set(states))
    index = {s: i for i, s in enumerate(labels)}
    codes = np.array([index[s] for s in states])
    sample = np.random.default_rng(0).choice(codes, size=n, replace=True)
    counts = np.bincount(sample, minlength=len(labels))
    return labels, sample, counts


def release_counts(K: np.ndarray, counts: np.ndarray, reps: int, rng) -> np.ndarray:
    out = np.zeros((reps, K.shape[1]))
    for x, c in enumerate(counts):
        if c:
            out += rng.multinomial(c, K[x] / K[x].sum(), size=reps)
    return out


def krr_kernel(k, eps):
    e = math.exp(eps)
    return (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)


def support_count_decoder(K, C, counts):
    """The frequency oracles' decoder applied to a two-level kernel K (every column has a high and a low level;
    Wang et al., USENIX Security 2017, section 3): report y supports x iff K[x, y] is its column's high level (Z);
    S = Z C counts the supports of each x, and since E[S/n] = A f with A = Z Kᵀ (A[x, x'] = P(a report of x'
    supports x)), the unbiased estimate is f̂ = A⁻¹ S / n (for k-RR, SS, OUE: (S/n − q)/(p − q)). Returns the
    estimates (one row per row of C) and Σ_x Var f̂_x for the fixed population ``counts``: the reports are
    independent, so Cov S = Σ_x' c_x' (Z diag(K_x') Zᵀ − a_x' a_x'ᵀ), a_x' = Z K_x'."""
    K = np.asarray(K, dtype=float)
    Z = (K >= K.max(axis=0, keepdims=True) * (1 - 1e-9)).astype(float)
    A = Z @ K.T
    n = counts.sum()
    est = np.linalg.solve(A, (C @ Z.T / C.sum(axis=1, keepdims=True)).T).T
    cov = sum(c * ((Z * K[x]) @ Z.T - np.outer(Z @ K[x], Z @ K[x])) for x, c in enumerate(counts) if c)
    Ainv = np.linalg.inv(A)
    return est, float(np.trace(Ainv @ cov @ Ainv.T)) / n**2


def designed(k, eps, prior_set):
    r = design({"alphabet": k, "epsilon": eps, "prior_set": prior_set, "objective": {"kind": "frequency_estimation"}})
    assert r.certificate.feasible
    return r


def measure_designed(k, eps, counts, sample, reps, rng):
    """Rows for the designed mechanisms and the explicit k-RR kernel at ε, each released ``reps`` times and
    decoded by the MLE."""
    n = int(counts.sum())
    f = counts / n
    sampling = 1 - float(f @ f)
    mechs = {
        "designed, ε-LDP": designed(k, eps, "simplex"),
        f"designed, Q_X(1/{2 * k})": designed(k, eps, {"kind": "min_mass", "c": f"1/{2 * k}"}),
    }
    kernels = {name: r.kernel for name, r in mechs.items()}
    kernels["k-RR (explicit kernel)"] = krr_kernel(k, eps)
    rows = []
    for name, K in kernels.items():
        t = time.perf_counter()
        C = release_counts(K, counts, reps, rng)
        if name == "designed, ε-LDP":  # one release record by record through mechdesign.release
            from mechdesign.release.mechanism import Mechanism

            mech = Mechanism.from_result(mechs[name])
            C[0] = np.bincount(mech.privatize_indices(sample, rng), minlength=K.shape[1])
        err = np.sum((em_mle(K, C).p - f) ** 2, axis=1)
        if name == "designed, ε-LDP":  # the same releases through the peers' kind of decoder
            est, analytical = support_count_decoder(K, C, counts)
            rows.append(
                dict(
                    eps=eps,
                    name=SUPPORT_NAME,
                    library="mechdesign",
                    reps=reps,
                    outputs=K.shape[1],
                    err=np.sum((clip_and_renormalise(est) - f) ** 2, axis=1),
                    predicted=None,
                    analytical=analytical,
                    client_us=None,
                    agg_us=None,
                    seconds=0.0,
                )
            )
        rows.append(
            dict(
                eps=eps,
                name=name,
                library="mechdesign",
                reps=reps,
                outputs=K.shape[1],
                err=err,
                predicted=(mle_error(K, f) - sampling) / n,
                analytical=None,
                client_us=None,
                agg_us=None,
                seconds=time.perf_counter() - t,
            )
        )
        print(name, eps, err.mean(), flush=True)
    first = rows.pop(0)  # the support-count row after the MLE row whose releases it decodes
    rows.insert(1, first)
    return rows


def measure_peers(k, eps, sample, f, reps, olh_reps, seed):
    """Rows for every available peer at ε: its own client on every record, its own aggregator."""
    n = sample.size
    missing = {lib: unavailable(lib) for lib in ("multi-freq-ldpy", "pure-ldp")}
    rows = []
    for i, (lib, oracle) in enumerate(PEERS):
        if missing[lib]:
            continue
        r = olh_reps if oracle == "OLH" else reps
        t = time.perf_counter()
        est, t_client, t_agg = run_peer(lib, oracle, k, eps, sample, r, seed + 1000 * i)
        err = np.sum((est - f) ** 2, axis=1)
        variant = " (high-privacy variant)" if oracle == "HR" and eps <= 1 else " (blocked variant)" * (oracle == "HR")
        rows.append(
            dict(
                eps=eps,
                name=f"{lib} {oracle}{variant}",
                library=lib,
                reps=r,
                outputs=None,
                err=err,
                predicted=None,
                analytical=analytical_variance(lib, oracle, k, eps, f, n),
                client_us=1e6 * t_client / n,
                agg_us=1e6 * t_agg / n,
                seconds=time.perf_counter() - t,
            )
        )
        print(rows[-1]["name"], eps, r, err.mean(), f"{rows[-1]['seconds']:.1f} s", flush=True)
    return rows, sorted({why for why in missing.values() if why})


def mean_se(err):
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(err.size))


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--olh-reps", type=int, default=10)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--figure", default="benchmarks/results/frequency_estimation_data.png")
    ap.add_argument(
        "--rows", default="benchmarks/results/frequency_estimation_data.jsonl", help="every release's error"
    )
    ap.add_argument("--redraw", action="store_true", help="only redraw the figure from --rows")
    args = ap.parse_args(argv)
    labels, sample, counts = population(args.n)
    k, n = len(labels), args.n
    if args.redraw:
        figure(load_rows(args.rows), args.figure, k, n)
        return
    f = counts / n
    rng = np.random.default_rng(1)
    rows, skipped = [], []
    load_start, t_all = os.getloadavg()[0], time.perf_counter()
    for j, eps in enumerate(EPSILONS):
        rows += measure_designed(k, eps, counts, sample, args.reps, rng)
        peer_rows, skipped = measure_peers(k, eps, sample, f, args.reps, args.olh_reps, 10_000 * (j + 1))
        rows += peer_rows
    elapsed, load_end = time.perf_counter() - t_all, os.getloadavg()[0]
    save_rows(rows, args.rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    qx_name = f"designed, Q_X(1/{2 * k})"
    lines = [
        "# Frequency estimation on the airports data (k = 56 states)",
        "",
        f"Command: `python benchmarks/frequency_estimation_data.py --reps {args.reps} --olh-reps {args.olh_reps} "
        f"--n {n}`, commit {commit}, {elapsed:.0f} s on 2 shared cores (load average {load_start:.1f} at the start, "
        f"{load_end:.1f} at the end). Population: n = {n} records bootstrapped (seed 0) from vega_datasets' airports "
        "states; estimand: the population frequencies f. MSE = mean of ‖f̂ − f‖² over the releases, ± its standard "
        "error. Designed mechanisms and the explicit k-RR kernel: MLE; predicted = (U − (1 − ‖f‖²))/n at f; the designed "
        "ε-LDP mechanism's releases are also decoded as the peers decode theirs (support counts Z C, Z[x, y] = 1 where "
        "K[x, y] is column y's high level, f̂ = (Z Kᵀ)⁻¹ Z C / n, clipped at 0 and renormalised; analytical = Σ_x Var f̂_x). "
        "Peers: the "
        "library's own client on every record and its own aggregator, the estimate clipped at 0 and renormalised "
        "(multi-freq-ldpy's MI; the same applied to pure-ldp's counts); analytical = Σ_x Var f̂_x of the unbiased "
        "estimator at the library's (p, q) (Wang et al. 2017; multi-freq-ldpy's VAR_Pure), none for pure-ldp's blocked "
        "HR (ε > 1). pure-ldp's HR is the high-privacy variant (mechdesign's family) at ε ≤ 1 and the blocked "
        "general variant above. Both libraries' OLH run with a shim for xxhash >= 3 (text encoded, seed mod 2^32). "
        "µs/record: the peer's client and aggregator time per record.",
        "",
        "| ε | mechanism | releases | outputs | measured MSE | ± s.e. | predicted (MLE) | analytical (unbiased) "
        "| client µs/record | aggregator µs/record | seconds |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        m, se = mean_se(r["err"])
        lines.append(
            f"| {r['eps']:g} | {r['name']} | {r['reps']} | {fmt(r['outputs'], 'd')} | {m:.4g} | {se:.2g} | "
            f"{fmt(r['predicted'], '.4g')} | {fmt(r['analytical'], '.4g')} | {fmt(r['client_us'], '.1f')} | "
            f"{fmt(r['agg_us'], '.1f')} | {r['seconds']:.1f} |"
        )
    lines += [
        "",
        "Designed ε-LDP mechanism against the best peer at each ε (best = smallest measured MSE; "
        "z = (designed − best) / √(s.e.² + s.e.²), negative: designed lower), its predicted error against the smallest "
        "analytical peer variance, and the designed Q_X(1/112) mechanism's measured MSE as a ratio "
        "(it is (ε, Q_X(c))-PML, not ε-LDP):",
        "",
        "| ε | designed ε-LDP MSE | best peer | best peer MSE | designed / best | z | designed, peers' decoder / best "
        "| designed predicted | smallest peer analytical | predicted / analytical | Q_X(c) MSE | Q_X(c) / designed ε-LDP "
        "| Q_X(c) / best peer |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for eps in EPSILONS:
        at = [r for r in rows if r["eps"] == eps]
        ours = next(r for r in at if r["name"] == "designed, ε-LDP")
        qx = next(r for r in at if r["name"] == qx_name)
        inv = next(r for r in at if r["name"] == SUPPORT_NAME)
        peers = [r for r in at if r["library"] != "mechdesign"]
        m, se = mean_se(ours["err"])
        mq, _ = mean_se(qx["err"])
        if not peers:
            lines.append(
                f"| {eps:g} | {m:.4g} | (no peer) | | | | {ours['predicted']:.4g} | | | {mq:.4g} | {mq / m:.3f} | |"
            )
            continue
        best = min(peers, key=lambda r: r["err"].mean())
        mb, sb = mean_se(best["err"])
        analytical = min(r["analytical"] for r in peers if r["analytical"] is not None)
        lines.append(
            f"| {eps:g} | {m:.4g} ± {se:.2g} | {best['name']} ({best['reps']}) | {mb:.4g} ± {sb:.2g} | {m / mb:.3f} | "
            f"{(m - mb) / math.hypot(se, sb):+.1f} | {mean_se(inv['err'])[0] / mb:.3f} | {ours['predicted']:.4g} | "
            f"{analytical:.4g} | "
            f"{ours['predicted'] / analytical:.3f} | {mq:.4g} | {mq / m:.3f} | {mq / mb:.3f} |"
        )
    lines += [""] + [f"Skipped: {why}." for why in skipped]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    figure(rows, args.figure, k, n)


FAMILY_COLOURS = {"GRR": "tab:orange", "DE": "tab:orange", "SS": "tab:green", "OUE": "tab:red", "OLH": "tab:purple"}
FAMILY_COLOURS["HR"] = "tab:brown"
LIBRARY_STYLE = {"multi-freq-ldpy": dict(ls="--", marker="s"), "pure-ldp": dict(ls=":", marker="^")}
DESIGNED_STYLE = {
    "designed, ε-LDP": dict(color="black", ls="-", marker="o", lw=2.4),
    "k-RR (explicit kernel)": dict(color="tab:orange", ls="-", marker="o", lw=1.6),
    SUPPORT_NAME: dict(color="dimgray", ls="-.", marker="D", lw=1.4),
}


def figure(rows, path, k, n):
    """Measured MSE against ε for every mechanism (left) and relative to the designed ε-LDP mechanism (right);
    colour: the family, line style and marker: the library (solid: mechdesign, dashed: multi-freq-ldpy,
    dotted: pure-ldp)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    def base(name):
        return name.replace(" (high-privacy variant)", "").replace(" (blocked variant)", "")

    names = list(dict.fromkeys(base(r["name"]) for r in rows))
    ref = {r["eps"]: np.mean(r["err"]) for r in rows if r["name"] == "designed, ε-LDP"}
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.6))
    for name in names:
        pts = [r for r in rows if base(r["name"]) == name]
        e = np.array([r["eps"] for r in pts])
        m = np.array([np.mean(r["err"]) for r in pts])
        se = np.array([mean_se(np.asarray(r["err"]))[1] for r in pts])
        if pts[0]["library"] == "mechdesign":
            style = DESIGNED_STYLE.get(name, dict(color="tab:blue", ls="-", marker="o", lw=2.4))
        else:
            style = dict(color=FAMILY_COLOURS[name.split()[-1]], lw=1.3, **LIBRARY_STYLE[pts[0]["library"]])
        reps = "/".join(map(str, sorted({r["reps"] for r in pts})))
        label = f"{name} ({reps} releases)" + (", blocked variant above ε = 1" if name.endswith("HR") else "")
        r_ = np.array([ref[x] for x in e])
        axes[0].errorbar(e, m, yerr=se, label=label, capsize=2, ms=5, **style)
        axes[1].errorbar(e, m / r_, yerr=se / r_, capsize=2, ms=5, **style)
        if name == "designed, ε-LDP":
            axes[0].plot(
                e,
                [r["predicted"] for r in pts],
                color="black",
                ls=(0, (1, 1)),
                lw=1,
                label="designed, ε-LDP: predicted (U − (1 − ‖f‖²))/n",
            )
    axes[0].set_yscale("log")
    axes[0].set_ylabel("measured mean squared error E‖f̂ − f‖²")
    axes[0].set_title(f"airports by state, k = {k}, n = {n:,}: measured MSE (± s.e.)")
    axes[1].set_yscale("log")
    axes[1].axhline(1, color="black", lw=0.8)
    axes[1].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes[1].yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if round(v * 10) % 2 == 0 else ""))
    axes[1].set_ylabel("measured MSE ÷ designed ε-LDP's measured MSE")
    axes[1].set_title("relative to the designed ε-LDP mechanism (above 1: larger error)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks([0.5, 1, 2, 4], ["0.5", "1", "2", "4"])
        ax.set_xlabel("ε (nats)")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=3,
        fontsize=8,
        title="solid: mechdesign, dashed: multi-freq-ldpy, dotted: pure-ldp",
        title_fontsize=8,
    )
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, dpi=120)


def save_rows(rows, path):
    import json

    with open(path, "w") as fh:
        for r in rows:
            fh.write(json.dumps({**r, "err": [float(v) for v in r["err"]]}) + "\n")


def load_rows(path):
    import json

    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


if __name__ == "__main__":
    main()
