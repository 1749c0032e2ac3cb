"""``mechdesign bench [--quick] [--out DIR] [--config FILE]``: regenerate the benchmark tables.

Writes Markdown tables, CSV files and PNG figures into ``benchmarks/results/``
(or ``--out``), and ``bench.md`` quoting the headline numbers:

* T1 Theorem 1: LP optimum of the Dobrushin design vs Ξ(ε,c) (``bounds.xi``), max |difference| per N.
* T2 formulations: the lifted LP against the pairwise Lemma 4 LP (N²M rows), same solver.
* T3 scaling: expected-loss designs (uniform prior, |x − y|, M = N) for Q_X(c) and LDP:
  time to a certified optimum, iterations, peak memory, compile/solve/certify split;
  the ``qif`` library's ``min_loss_given_d`` as a baseline when it is installed.
* F3: the k-RR envelope bounds of the envelopes paper (Theorem 5); the papers' own figures are ``mechdesign figures``.

Grids come from the package data ``mechdesign/bench/configs/bench.yaml`` (``bench-quick.yaml`` with
``--quick``), read with :mod:`importlib.resources` so that they are found after ``pip install .``.
Results go under the current directory (``./benchmarks/results/``, ``./benchmarks/results/quick/``
with ``--quick``) unless ``--out`` says otherwise; the command prints where.
Timings are measured here, never asserted in tests.
"""

from __future__ import annotations

import csv
import math
import os
import platform
import resource
import sys
import time
from pathlib import Path

from mechdesign.spec.errors import InputError
from mechdesign.spec.input_rules import read_yaml_input

__all__ = ["register", "run_bench", "pairwise_dobrushin_lp"]


# ------------------------------------------------------------------ helpers
def _spec_dobrushin(n: int, c: float, eps: float, method: str = "auto") -> dict:
    ps = {"kind": "min_mass", "c": c} if c > 0 else {"kind": "simplex"}
    return {
        "alphabet": n,
        "epsilon": eps,
        "prior_set": ps,
        "objective": {"kind": "dobrushin"},
        "output_size": 2,
        "solver": {"method": method},
    }


def _spec_loss(n: int, c: float, eps: float, time_limit: float | None = None) -> dict:
    ps = {"kind": "min_mass", "c": c} if c > 0 else {"kind": "simplex"}
    solver = {} if time_limit is None else {"time_limit": time_limit}
    return {
        "alphabet": n,
        "epsilon": eps,
        "prior_set": ps,
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"},
        "output_size": n,
        "solver": solver,
    }


def _write_table(out: Path, name: str, header: list[str], rows: list[list], title: str, notes: str = "") -> None:
    with open(out / f"{name}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    fmt = lambda v: (
        f"{v:.3g}"
        if isinstance(v, float) and (abs(v) < 1e-3 or abs(v) >= 1e4) and v != 0
        else f"{v:.3f}"
        if isinstance(v, float)
        else str(v)
    )
    cell = lambda v: fmt(v).replace("|", "\\|")  # a literal | would split the Markdown cell
    lines = [f"# {title}", "", notes, "", "| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    (out / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------- T1
def table1(cfg: dict, progress, out: Path) -> list[list]:
    """T1 through the sweep engine (:mod:`mechdesign.sweeps`): the points (N, c = fraction/N) zipped,
    times ε; run serially in this process with an in-memory store (a benchmark recomputes)."""
    from mechdesign.theory.bounds import xi
    from mechdesign.sweeps.api import sweep

    pairs = [(n, frac / n) for n in cfg["n"] for frac in cfg["c_fractions"]]
    axes = {
        "alphabet": [n for n, _ in pairs],
        "prior_set": [_spec_dobrushin(n, c, 0.0)["prior_set"] for n, c in pairs],
        "epsilon": list(cfg["epsilons"]),
    }
    c_of = {i: c for i, (_, c) in enumerate(pairs)}
    calls = []
    df = sweep(
        _spec_dobrushin(2, 0.0, 0.0),
        axes,
        zip=[["alphabet", "prior_set"]],
        serial=True,
        store=None,
        progress=False,
        on_record=lambda record: (calls.append(1), progress()),
    )
    for _ in range(len(df) - len(calls)):  # points that repeat a design count once in the engine
        progress()
    rows = []
    per_pair = len(cfg["epsilons"])
    for n in cfg["n"]:
        worst, count, certified = 0.0, 0, 0
        for i, (n_i, _) in enumerate(pairs):
            if n_i != n:
                continue
            for _, r in df.iloc[i * per_pair : (i + 1) * per_pair].iterrows():
                worst = max(worst, abs(r["lp_objective"] - xi(r["epsilon_value"], c_of[i], n)))
                certified += int(r["certified"])
                count += 1
        rows.append([n, count, certified, worst])
    _write_table(
        out,
        "t1_theorem1",
        ["N", "instances", "certified", "max |LP - Xi|"],
        rows,
        "T1: Theorem 1, LP optimum vs Xi(eps, c)",
        f"c/(1/N) in {cfg['c_fractions']}, eps in {cfg['epsilons']} (past log(2/(Nc)) for c > 0).",
    )
    return rows


# ------------------------------------------------------------------- T2
def pairwise_dobrushin_lp(n: int, c: float, eps: float):
    """The Dobrushin LP in the pairwise form of Lemma 4 (N²M rows of up to N + 1 nonzeros, M = 2):

    maximise p_0 − p_1  s.t.  K = [p, 1 − p] ∈ [0, 1]^{N×2},
    K_x(y) − e^ε (c Σ_x' K_x'(y) + (1 − Nc) K_x''(y)) ≤ 0   for all x, x'', y.
    """
    import numpy as np
    from mechdesign.lp.program import LPBuilder

    m, ee = 2, math.exp(eps)
    b = LPBuilder()
    K = b.variables("K", (n, m), lower=0.0, upper=1.0)
    b.rows(K, np.ones((n, m)), 1.0, 1.0)
    x, x2, y = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), np.arange(m), indexing="ij"))
    cols = np.hstack([K[x, y][:, None], K[:, y].T, K[x2, y][:, None]])
    coefs = np.hstack([np.ones((x.size, 1)), np.full((x.size, n), -ee * c), np.full((x.size, 1), -ee * (1 - n * c))])
    b.rows(cols, coefs, -np.inf, 0.0)
    return b.build((np.array([K[0, 0], K[1, 0]]), np.array([1.0, -1.0])), sense=-1)


def _sweep_records(base: dict, axes: dict, zipped: list, progress=None, **engine) -> list[dict]:
    """Run a bench grid through the sweep engine (in-memory store: a benchmark recomputes) and return
    each point's full record (the tidy row plus the design's JSON: its solve report), in point order."""
    from mechdesign.sweeps.api import sweep

    records: dict[str, dict] = {}
    df = sweep(
        base,
        axes,
        zip=zipped,
        store=None,
        progress=False,
        on_record=lambda record: (records.__setitem__(record["key"], record), progress and progress()),
        **engine,
    )
    return [records[k] for k in df["key"]]


def table2(cfg: dict, progress, out: Path) -> list[list]:
    """T2: the lifted LP (what ``design()`` solves) through the sweep engine, the pairwise Lemma 4 LP beside it.

    The design side is a sweep (N and c = fraction/N zipped; serial, in this process, so the same
    HiGHS settings as the baseline): "lifted s" is the design's compile + LP solve time, and its rows
    and nonzeros are the design's own LP. The pairwise LP is not a design (no kernel, no certificate,
    a formulation mechdesign never emits), so it is not a sweep task: it is built and solved here,
    once per N, as the baseline beside the engine's result, and compared on the LP optimum.
    """
    from mechdesign.lp.solve import solve_lp
    from mechdesign.spec.models import load_spec

    method = cfg.get("method", "simplex")
    ns, eps = list(cfg["n"]), cfg["epsilon"]
    c_of = {n: cfg["c_fraction"] / n for n in ns}
    axes = {"alphabet": ns, "prior_set": [_spec_dobrushin(n, c_of[n], eps)["prior_set"] for n in ns]}
    zipped = [["alphabet", "prior_set"]]
    records = _sweep_records(_spec_dobrushin(2, 0.0, eps, method=method), axes, zipped, serial=True)
    rows = []
    for n, record in zip(ns, records):
        solve = (record.get("result") or {}).get("solve") or {}
        lifted_s = solve["compile_seconds"] + solve["seconds"]
        spec = load_spec(_spec_dobrushin(n, c_of[n], eps, method=method))
        t1 = time.perf_counter()
        pair = pairwise_dobrushin_lp(n, c_of[n], eps)
        s2 = solve_lp(pair, spec.solver)
        t2 = time.perf_counter()
        rows.append(
            [
                n,
                solve["rows"],
                solve["nonzeros"],
                lifted_s,
                pair.num_rows,
                int(pair.A.nnz),
                t2 - t1,
                (t2 - t1) / lifted_s,
                abs(record["row"]["lp_objective"] - s2.objective),
            ]
        )
        progress()
    _write_table(
        out,
        "t2_formulations",
        [
            "N",
            "lifted rows",
            "lifted nnz",
            "lifted s",
            "pairwise rows",
            "pairwise nnz",
            "pairwise s",
            "ratio",
            "|objective diff|",
        ],
        rows,
        "T2: lifted vs pairwise (Lemma 4) formulation",
        f"Dobrushin LP (M = 2), c = {cfg['c_fraction']}/N, eps = {cfg['epsilon']}; build + HiGHS solve "
        f"with the same method ({cfg.get('method', 'simplex')}) for both. The lifted side is the design "
        "run by the sweep engine (its compile + solve time); the pairwise LP is a baseline run beside it.",
    )
    return rows


# ------------------------------------------------------------------- T3
MEMORY_LIMIT = 4 << 30
"""Address-space cap of each T3 design process (the 4 GiB target; a design past it fails, not the machine)."""


def _qif_child(n: int, eps: float, queue) -> None:
    import numpy as np
    from qif.mechanism import d_privacy

    from mechdesign.certify.exact import check_pml, to_grid
    from mechdesign.certify.saturation import ratio_cap
    from mechdesign.spec.models import load_spec

    t = time.perf_counter()
    C = np.asarray(
        d_privacy.min_loss_given_d(np.full(n, 1.0 / n), n, lambda i, j: eps * (i != j), lambda i, j: float(abs(i - j)))
    )
    total = time.perf_counter() - t
    spec = load_spec(_spec_loss(n, 0.0, eps))
    feasible = check_pml(
        to_grid(C), spec.prior_set, spec.epsilon.exp_lower_bound(cap=ratio_cap(spec.prior_set, 1 << 52))
    ).feasible
    loss = float(np.mean((C * np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])).sum(axis=1)))
    queue.put(
        {
            "total": total,
            "objective": loss,
            "feasible": feasible,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    )


def _in_child(target, args, timeout: float) -> dict | None:
    """Run ``target(*args, queue)`` in a fresh process (its own peak memory); None on timeout or crash."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, queue))
    p.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:
        result = None
    p.join(5)
    if p.is_alive():
        p.kill()
        p.join()
    return result


def _qif_available() -> bool:
    try:
        from qif.mechanism import d_privacy  # noqa: F401

        return True
    except Exception:
        return False


def table3(cfg: dict, progress, out: Path) -> list[list]:
    """T3 through the sweep engine: (N, prior set) zipped with M = N, each design isolated in a fresh
    process under the :data:`MEMORY_LIMIT` address-space cap (``sweep(isolate=True)``: its own peak
    memory, and a design past the cap fails alone). libqif's ``min_loss_given_d`` (LDP only, up to
    ``qif_max_n``) is the baseline beside it, in a child process of its own; skipped without libqif."""
    limit = float(cfg["time_limit"])
    have_qif = _qif_available()
    points = [(n, label, frac) for n in cfg["n"] for label, frac in (("Q_X(c)", cfg["c_fraction"]), ("LDP", 0.0))]
    base = _spec_loss(2, 0.0, cfg["epsilon"], limit)
    axes = {
        "alphabet": [n for n, _, _ in points],
        "output_size": [n for n, _, _ in points],
        "prior_set": [_spec_loss(n, frac / n, cfg["epsilon"])["prior_set"] for n, _, frac in points],
    }
    records = _sweep_records(
        base,
        axes,
        [["alphabet", "output_size", "prior_set"]],
        progress=progress,
        isolate=True,
        memory_limit=MEMORY_LIMIT,
    )
    rows = []
    for (n, label, _), record in zip(points, records):
        result = record.get("result")
        if result is None:
            rows.append([n, label, "mechdesign", f"no result: {record.get('message')}"] + [""] * 11)
        else:
            s, row = result["solve"], record["row"]
            total = record["seconds"]
            rows.append(
                [
                    n,
                    label,
                    "mechdesign",
                    row["status"],
                    bool(row["feasible"]),
                    row["objective"],
                    row["gap"],
                    total,
                    s["compile_seconds"],
                    s["seconds"],
                    s["certify_seconds"],
                    (s["compile_seconds"] + s["certify_seconds"]) / total,
                    s["iterations"],
                    s["method"],
                    record["peak_mib"],
                ]
            )
        if label == "LDP" and have_qif and n <= cfg["qif_max_n"]:
            q = _in_child(_qif_child, (n, cfg["epsilon"]), 3600)
            if q is not None:
                rows.append(
                    [
                        n,
                        label,
                        "qif min_loss_given_d",
                        "",
                        q["feasible"],
                        q["objective"],
                        "",
                        q["total"],
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        q["peak_mib"],
                    ]
                )
    _write_table(
        out,
        "t3_scaling",
        [
            "N",
            "prior set",
            "solver",
            "status",
            "certified",
            "objective",
            "gap",
            "total s",
            "compile s",
            "solve s",
            "certify s",
            "(compile+certify)/total",
            "iterations",
            "method",
            "peak MiB",
        ],
        rows,
        "T3: scaling of expected-loss designs",
        f"uniform prior, loss |x - y|, M = N, eps = {cfg['epsilon']}, Q_X(c) with c = {cfg['c_fraction']}/N; "
        f"each design run by the sweep engine in a fresh process under a {MEMORY_LIMIT >> 30} GiB address-space "
        f"cap (peak MiB = its peak RSS); LP time limit {limit:g} s. "
        f"qif installed: {have_qif}.",
    )
    return rows


# ------------------------------------------------------------------ figures
FIGURE_FILES = ("f3_krr_envelopes.png",)
BENCH_EXTRA_NOTE = "pip install 'mechdesign[bench]'"


def matplotlib_missing() -> bool:
    """True when matplotlib (of the ``bench`` extra) cannot be imported: checked before any work, so that a plain
    ``pip install .`` learns at once which outputs need the extra instead of failing after the grids ran."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return True
    return False


def figures(out: Path) -> list[str]:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mechdesign.theory import bounds

    made = []
    # F3: k-RR envelope bounds (Theorem 5), panels (a) uniform prior and (b) a skewed prior.
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    k, eps_r = 5, 1.0
    for ax, (name, prior) in zip(
        axes, (("(a) uniform", np.full(k, 1 / k)), ("(b) skewed", np.array([0.05, 0.1, 0.15, 0.3, 0.4])))
    ):
        deltas = np.linspace(0.005, 0.99, 120)
        upper = np.array([_or_nan(bounds.krr_envelope_upper_bound, prior, eps_r, d) for d in deltas])
        lower = np.array([_or_nan(bounds.krr_envelope_lower_bound, prior, eps_r, d) for d in deltas])
        both = np.isfinite(lower)
        same = bool(both.any() and np.allclose(upper[both], lower[both], rtol=1e-9, atol=1e-12))
        # upper drawn wide and lower dashed on top, so coinciding curves both stay visible
        ax.plot(deltas, upper, color="tab:blue", lw=4, alpha=0.5, label="upper bound (Thm 5 i-ii)")
        ax.plot(
            deltas,
            lower,
            color="tab:orange",
            ls="--",
            lw=1.5,
            label="lower bound (Thm 5 iii)" + (": equal to the upper bound" if same else ""),
        )
        if not both.all() and both.any():
            stop = float(deltas[both][-1])
            ax.axvline(stop, color="gray", ls=":", lw=0.8)
            ax.annotate(
                f"past delta = {stop:.2f} the condition of\nThm 5 (iii) fails: no lower bound",
                xy=(stop, float(np.nanmin(lower))),
                xytext=(8, -4),
                textcoords="offset points",
                fontsize=7,
                va="top",
            )
        values = np.concatenate([upper[np.isfinite(upper)], lower[both]])
        span = max(float(values.max() - values.min()), 0.05 * float(values.max()))
        ax.set_ylim(float(values.min()) - 0.15 * span, float(values.max()) + 0.25 * span)
        ax.text(
            0.02,
            0.97,
            f"k-RR level eps_r = {eps_r:g} nats (above every curve)",
            transform=ax.transAxes,
            fontsize=7,
            va="top",
        )
        ax.set(
            xlabel="failure probability delta",
            ylabel="PML envelope eps_c(delta) in nats",
            title=f"F3{name[:3]} k-RR, {name[4:]} prior: k = {k}, eps_r = {eps_r:g} nats",
        )
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "f3_krr_envelopes.png", dpi=120)
    plt.close(fig)
    made.append("f3_krr_envelopes.png")
    return made


def _or_nan(f, *args) -> float:
    """f(*args), or NaN (a gap in the curve) outside the theorem's domain."""
    try:
        return f(*args)
    except ValueError:
        return float("nan")


# -------------------------------------------------------------------- main
def run_bench(
    quick: bool = False,
    out: Path | str | None = None,
    config: Path | str | None = None,
    command: str = "",
    plot: bool = True,
) -> Path:
    """Run T1–T3 (and, with ``plot`` and the config's ``figures``, the figures) and write them into ``out``;
    return ``out``."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if config:
        cfg_path = Path(config)
    else:  # package data: present in an installed wheel as in a source checkout
        from importlib.resources import files

        cfg_path = files("mechdesign.bench").joinpath("configs", "bench-quick.yaml" if quick else "bench.yaml")
    try:
        text = cfg_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--config: cannot read {cfg_path}: {exc.strerror or exc}") from None
    cfg = read_yaml_input(text, f"--config {cfg_path}")  # the spec file's YAML rules and limits (no aliases)
    out = Path(out) if out else Path.cwd() / "benchmarks" / "results" / ("quick" if quick else "")
    out.mkdir(parents=True, exist_ok=True)
    t1, t2, t3 = cfg["t1"], cfg["t2"], cfg["t3"]
    steps = (
        len(t1["n"]) * len(t1["c_fractions"]) * len(t1["epsilons"])
        + len(t2["n"])
        + 2 * len(t3["n"])
        + (3 if plot and cfg.get("figures", True) else 0)
    )
    start = time.perf_counter()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        transient=False,
    ) as bar:
        task = bar.add_task("bench", total=steps)
        step = lambda what: lambda: bar.update(task, advance=1, description=what)
        r1 = table1(t1, step("T1 Theorem 1"), out)
        r2 = table2(t2, step("T2 formulations"), out)
        r3 = table3(t3, step("T3 scaling"), out)
        figs = []
        if plot and cfg.get("figures", True):
            figs = figures(out)
            bar.update(task, advance=3, description="figures")
    _readme(out, cfg_path, command, r1, r2, r3, figs, time.perf_counter() - start)
    return out


def _readme(out: Path, cfg_path: Path, command: str, r1, r2, r3, figs, seconds: float) -> None:
    cores = os.cpu_count()
    lines = [
        "# `mechdesign bench`: tables T1–T3",
        "",
        f"Command: `{command or 'mechdesign bench'}` (config `{cfg_path.name}`), {cores} cores, "
        f"{platform.machine()}, Python {platform.python_version()}, {seconds:.0f} s in all; "
        f"commit {_commit()}.",
        "",
        "Tables: [T1 Theorem 1](t1_theorem1.md), [T2 formulations](t2_formulations.md), "
        "[T3 scaling](t3_scaling.md) (CSV beside each).",
        "",
    ]
    lines.append(f"- T1: max |LP optimum − Ξ(ε,c)| over all N: {max(r[3] for r in r1):.2e}.")
    for r in r2:
        lines.append(f"- T2: N = {r[0]}: pairwise / lifted time = {r[7]:.1f}× ({r[6]:.3f} s vs {r[3]:.3f} s).")
    by_n = {}
    for r in r3:
        by_n.setdefault((r[0], r[1]), []).append(r)
    for (n, label), rs in by_n.items():
        ours = next((r for r in rs if r[2] == "mechdesign"), None)
        base = next((r for r in rs if r[2].startswith("qif")), None)
        if ours is None or not isinstance(ours[7], float):
            lines.append(f"- T3: N = {n} {label}: no result.")
            continue
        text = f"- T3: N = M = {n} {label}: {ours[7]:.2f} s, status {ours[3]}, certified {ours[4]}"
        if base is not None:
            text += (
                f"; qif {base[7]:.2f} s (ratio {base[7] / ours[7]:.1f}×), qif's kernel as returned "
                f"{'passes' if base[4] else 'fails'} the exact ε-LDP check"
            )
        lines.append(text + ".")
    lines += [
        "",
        "Figures: " + (", ".join(f"[{f}]({f})" for f in figs) or f"none (matplotlib missing: {BENCH_EXTRA_NOTE})"),
        "",
        "Times are wall clock on a machine shared with other jobs; `certified` is the exact check of "
        "the kernel as emitted (mechdesign: after its repair step; qif: as returned, no repair).",
        "",
        "F3 plots Theorem 5's bounds for k-RR (envelopes paper); the papers' own figures are `mechdesign figures`.",
    ]
    (out / "bench.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _commit() -> str:
    """The git commit of the checkout that runs the benchmark (its short hash), if it is a git checkout."""
    import subprocess

    try:
        run = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        run = None
    if run is not None and run.returncode == 0 and run.stdout.strip():
        return run.stdout.strip()
    return "unknown (not a git checkout)"


def _cmd_bench(args) -> int:
    command = (
        "mechdesign bench"
        + (" --quick" if args.quick else "")
        + (f" --out {args.out}" if args.out else "")
        + (f" --config {args.config}" if args.config else "")
    )
    plot = not matplotlib_missing()  # before any work: the tables need no extra, the figures need matplotlib
    if not plot:
        print(
            f"mechdesign: note: writing the tables only; the figures ({', '.join(FIGURE_FILES)}) need matplotlib: "
            f"{BENCH_EXTRA_NOTE}",
            file=sys.stderr,
        )
    out = run_bench(quick=args.quick, out=args.out, config=args.config, command=command, plot=plot)
    print(f"results in {Path(out).resolve()}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="regenerate the benchmark tables and figures (benchmarks/results/)")
    p.add_argument(
        "--quick", action="store_true", help="small grids (bench-quick.yaml, shipped with the package), under 2 minutes"
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default ./benchmarks/results/ under the current directory, with --quick "
        "./benchmarks/results/quick/)",
    )
    p.add_argument("--config", metavar="FILE", help="grid file (default: bench.yaml shipped with the package)")
    p.set_defaults(func=_cmd_bench)
