"""Frequency estimation on real data: the state of each US airport (vega_datasets' airports, k = 56 states).

Usage:  python benchmarks/frequency_estimation_data.py [--reps 50] [--n 100000] [--out benchmarks/results/frequency_estimation_data.md]

The population: n = 100,000 records bootstrapped (seed 0) from the 3,376 airports' states (the data ship inside the
``vega_datasets`` package; no network). The estimand is the population's frequencies f (so no sampling term).
For ε ∈ {0.5, 1, 2, 4}, each mechanism releases the population ``reps`` times (seeded) and the MLE
(:func:`mechdesign.release.estimate.em_mle`) estimates f; the table gives the measured mean squared error
E‖f̂ − f‖² over the repetitions (± its standard error) and the predicted (U − (1 − ‖f‖²))/n at the data's f,
U = tr J⁻¹ − ‖f‖² (:func:`mechdesign.theory.estimation.mle_error`).

Mechanisms: the ``frequency_estimation`` designs at the uniform prior (ε-LDP: the best subset-selection class as a
balanced cyclic kernel; Q_X(c), c = 1/(2k): the optimal two-level class), and k-RR. Releasing a population through
a kernel K is done by output counts Σ_x Multinomial(c_x, K_x) (the same distribution as releasing each record; the
first repetition of the ε-LDP design is released record by record through :class:`mechdesign.release.mechanism.
Mechanism` as a check). Peers (multi-freq-ldpy, optional extra ``peers``): the library's own variance formula
``VAR_Pure`` of its GRR, SS, OUE and OLH estimators at the same (p, q) the library uses, summed over the symbols
at the data's f (their clients draw one Python call per record, about 2–4 ms each on this machine, so 50 releases
of 100,000 records per mechanism and ε are out of reach here); skipped cleanly when it is not installed.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import time

import numpy as np

from mechdesign import design
from mechdesign.release.estimate import em_mle
from mechdesign.theory.estimation import mle_error

EPSILONS = (0.5, 1.0, 2.0, 4.0)


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


def peer_variances(k, eps, f, n):
    """Σ_x VAR_Pure(p, q, n, f_x) of multi-freq-ldpy's GRR, SS, OUE, OLH (parameters as the library sets them)."""
    try:
        from multi_freq_ldpy.pure_frequency_oracles.Variance_PURE import VAR_Pure
    except ImportError:
        return {}
    e = math.exp(eps)
    sub_k = int(max(1, np.rint(k / (e + 1))))
    g = int(round(e)) + 1
    params = {
        "GRR (k-RR)": (e / (e + k - 1), 1 / (e + k - 1)),
        "SS": (
            sub_k * e / (sub_k * e + k - sub_k),
            ((sub_k - 1) * sub_k * e + (k - sub_k) * sub_k) / ((k - 1) * (sub_k * e + k - sub_k)),
        ),
        "OUE": (0.5, 1 / (e + 1)),
        "OLH": (e / (e + g - 1), 1 / g),
    }
    return {name: float(sum(VAR_Pure(p, q, n, fx) for fx in f)) for name, (p, q) in params.items()}


def designed(k, eps, prior_set):
    r = design({"alphabet": k, "epsilon": eps, "prior_set": prior_set, "objective": {"kind": "frequency_estimation"}})
    assert r.certificate.feasible
    return r


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--figure", default="benchmarks/results/frequency_estimation_data.png")
    args = ap.parse_args(argv)
    labels, sample, counts = population(args.n)
    k, n = len(labels), args.n
    f = counts / n
    sampling = 1 - float(f @ f)
    rng = np.random.default_rng(1)
    rows, series = [], {}
    t_all = time.perf_counter()
    for eps in EPSILONS:
        mechs = {
            "designed, eps-LDP": designed(k, eps, "simplex"),
            f"designed, Q_X(1/{2 * k})": designed(k, eps, {"kind": "min_mass", "c": f"1/{2 * k}"}),
        }
        kernels = {name: r.kernel for name, r in mechs.items()}
        kernels["k-RR (explicit kernel)"] = krr_kernel(k, eps)
        for name, K in kernels.items():
            t = time.perf_counter()
            C = release_counts(K, counts, args.reps, rng)
            if name == "designed, eps-LDP":  # one release record by record through mechdesign.release
                from mechdesign.release.mechanism import Mechanism

                mech = Mechanism.from_result(mechs[name])
                C[0] = np.bincount(mech.privatize_indices(sample, rng), minlength=K.shape[1])
            est = em_mle(K, C).p
            err = np.sum((est - f) ** 2, axis=1)
            predicted = (mle_error(K, f) - sampling) / n
            mse, se = float(err.mean()), float(err.std(ddof=1) / math.sqrt(len(err)))
            rows.append((eps, name, K.shape[1], mse, se, predicted, time.perf_counter() - t))
            series.setdefault(name, []).append((eps, mse, predicted))
            print(rows[-1], flush=True)
        for name, v in peer_variances(k, eps, f, n).items():
            rows.append((eps, f"multi-freq-ldpy {name}, analytical (VAR_Pure)", None, None, None, v, 0.0))
            series.setdefault(f"{name} (VAR_Pure)", []).append((eps, None, v))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Frequency estimation on the airports data (k = 56 states)",
        "",
        f"Command: `python benchmarks/frequency_estimation_data.py --reps {args.reps} --n {n}`, commit {commit}, "
        f"{time.perf_counter() - t_all:.0f} s on 2 shared cores. Population: n = {n} records bootstrapped (seed 0) "
        "from vega_datasets' airports states; estimand: the population frequencies f. MSE = mean of ‖f̂ − f‖² over "
        "the releases (MLE), ± its standard error; predicted = (U − (1 − ‖f‖²))/n at f.",
        "",
        "| ε | mechanism | outputs | measured MSE | ± s.e. | predicted | per symbol (measured / k) | seconds |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for eps, name, m, mse, se, pred, s in rows:
        lines.append(
            f"| {eps:g} | {name} | {'' if m is None else m} | {'' if mse is None else f'{mse:.4g}'} | "
            f"{'' if se is None else f'{se:.2g}'} | {pred:.4g} | {'' if mse is None else f'{mse / k:.3g}'} | {s:.1f} |"
        )
    lines += ["", "Ratios (predicted, designed Q_X(c) / designed ε-LDP): "]
    ldp = dict((e, p) for e, _, p in series["designed, eps-LDP"])
    qx = dict((e, p) for e, _, p in series[f"designed, Q_X(1/{2 * k})"])
    lines.append(", ".join(f"ε = {e:g}: {qx[e] / ldp[e]:.3f}" for e in EPSILONS))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        e = [p[0] for p in pts]
        if pts[0][1] is not None:
            ax.plot(e, [p[1] for p in pts], "o-", label=f"{name}: measured")
            ax.plot(e, [p[2] for p in pts], "k:", lw=0.8)
        else:
            ax.plot(e, [p[2] for p in pts], "s--", alpha=0.7, label=name)
    ax.set_yscale("log")
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("mean squared error E‖f̂ − f‖²")
    ax.set_title(f"airports states, k = {k}, n = {n}, {args.reps} releases (dotted: predicted)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.figure, dpi=120)


if __name__ == "__main__":
    main()
