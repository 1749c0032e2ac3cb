"""Sweeps: axes, validation, the store (resume), Dask execution (equal to serial, survives a
killed worker), tidy output and figures.

Expected values: ranges against numpy.linspace / numpy.geomspace (an independent implementation);
Dobrushin optima against Ξ(ε,c) = min{(e^ε − 1)/(e^ε(1 − Nc) + 1), 1}, Theorem 1 of the Dobrushin
paper, written out below; expected-loss optima against the LDP optimum of binary randomized
response for N = 2 (e^ε/(1 + e^ε) correct, Kairouz et al.), written out below.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time

import numpy as np
import pandas as pd
import pytest

from helpers.cli import cli_with_ctrl_c
import mechdesign
from mechdesign import InputError
from mechdesign.cli.main import main
from mechdesign.sweeps.axes import apply_path, expand_points, make_axes, parse_values, parse_vary

pytestmark = pytest.mark.filterwarnings("ignore:Port 8787 is already in use")


DOB = {"alphabet": 3, "prior_set": {"kind": "min_mass", "c": 0}, "objective": {"kind": "dobrushin"}}


def xi_theorem1(eps: float, c: float, n: int) -> float:
    """Dobrushin paper, Theorem 1 (and Theorem 2 for the cap at 1)."""
    return min((math.exp(eps) - 1) / (math.exp(eps) * (1 - n * c) + 1), 1.0)


# ------------------------------------------------------------------ axes
def test_linear_range_matches_numpy_linspace():
    values = parse_values("0.05:5:40")
    assert len(values) == 40
    np.testing.assert_allclose(values, np.linspace(0.05, 5, 40), rtol=1e-11)
    assert values[0] == 0.05 and values[-1] == 5.0
    assert parse_values("0:1:11")[3] == 0.3  # rounded to 12 digits, not 0.30000000000000004


def test_log_range_matches_numpy_geomspace():
    values = parse_values("log:1e-3:10:30")
    assert len(values) == 30
    np.testing.assert_allclose(values, np.geomspace(1e-3, 10, 30), rtol=1e-11)
    ratios = np.array(values[1:]) / np.array(values[:-1])
    np.testing.assert_allclose(ratios, (10 / 1e-3) ** (1 / 29), rtol=1e-9)


def test_lists_integers_and_yaml_values():
    assert parse_vary("alphabet=10,20,50").values == (10, 20, 50)
    assert all(isinstance(v, int) for v in parse_values("10:50:5"))  # integer ends, whole steps
    assert parse_vary("prior_set.c=0,0.005,0.01").values == (0, 0.005, 0.01)
    assert parse_values("log(10/3),1e-3") == ["log(10/3)", 0.001]
    assert parse_values("[{kind: simplex}, {kind: min_mass, c: 0.01}]") == [
        {"kind": "simplex"},
        {"kind": "min_mass", "c": 0.01},
    ]


@pytest.mark.parametrize(
    "text, words",
    [
        ("epsilon", "PATH=VALUES"),
        ("epsilon=1:2", "a:b:n"),
        ("epsilon=log:-1:2:3", "a > 0"),
        ("epsilon=0:1:0", ">= 1"),
        ("epsilon=0:x:3", "number"),
        ("prior set=1", "dotted"),
        ("epsilon=", "no values"),
    ],
)
def test_bad_axis_text_is_named(text, words):
    with pytest.raises(InputError, match="--vary") as err:
        parse_vary(text)
    assert words in str(err.value)


def test_product_zip_and_dotted_paths():
    axes = make_axes({"epsilon": [0.5, 1.0, 2.0], "alphabet": [3, 4], "solver.time_limit": [10, 20]})
    points = expand_points(DOB, axes)
    assert len(points) == 12
    assert points[1].values == {"epsilon": 0.5, "alphabet": 3, "solver.time_limit": 20}  # last axis fastest
    assert points[1].spec["solver"] == {"time_limit": 20} and "solver" not in DOB  # created, base untouched
    zipped = expand_points(DOB, axes, [["alphabet", "solver.time_limit"]])
    assert len(zipped) == 6
    assert {(p.values["alphabet"], p.values["solver.time_limit"]) for p in zipped} == {(3, 10), (4, 20)}
    spec = {"objective": {"kind": "f_divergence", "priors": [[0.5, 0.5], [0.2, 0.8]]}}
    apply_path(spec, "objective.priors.1", [0.3, 0.7])
    assert spec["objective"]["priors"] == [[0.5, 0.5], [0.3, 0.7]]
    with pytest.raises(InputError, match="equal lengths"):
        expand_points(DOB, make_axes({"epsilon": [1, 2, 3], "alphabet": [3, 4]}), [["epsilon", "alphabet"]])
    with pytest.raises(InputError, match="not an axis"):
        expand_points(DOB, make_axes({"epsilon": [1]}), [["epsilon", "alphabet"]])


# ------------------------------------------------------------ validation
def test_a_sweep_too_large_to_hold_is_refused_before_any_point_is_built():
    # a range of 10^9 values was built (and each point validated) before anything ran: minutes, gigabytes
    with pytest.raises(InputError, match="the number of values must be at most 100000"):
        parse_values("0:1:1000000000")
    with pytest.raises(InputError, match="the number of values must be at most 100000"):
        parse_values("log:1:2:1000000000")
    with pytest.raises(InputError, match=r"a sweep has at most 100000 points, found 1000000 \(1000 x 1000\)"):
        expand_points(DOB, [parse_vary("epsilon=0:1:1000"), parse_vary("prior_set.c=0:0.3:1000")])


def test_every_point_is_validated_first_and_bad_points_are_named(tmp_path):
    with pytest.raises(InputError) as err:
        mechdesign.sweep(DOB, {"epsilon": [1.0, 2.0], "prior_set.c": [0.1, 0.5]}, serial=True, store=tmp_path)
    text = str(err.value)
    assert "2 of 4 points" in text
    assert "point 1 (epsilon=1.0, prior_set.c=0.5): prior_set.c: must be <= 1/N = 1/3" in text
    assert "point 3 (epsilon=2.0, prior_set.c=0.5)" in text
    assert not list(tmp_path.glob("*/*.json"))  # nothing ran


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(json.dumps(DOB))
    assert (
        main(
            [
                "sweep",
                str(spec),
                "--vary",
                "epsilon=1,2",
                "--vary",
                "prior_set.kind=min_mass,point",
                "--serial",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "point 1 (epsilon=1, prior_set.kind=point)" in err and "prior_set.prior" in err
    assert main(["sweep", str(spec), "--vary", "epsilon=1:2", "--serial"]) == 2


# ----------------------------------------------------------- store, rows
def test_store_key_is_the_normalised_spec_and_reruns_reuse(tmp_path):
    calls = []
    base = dict(DOB, epsilon=1.0)
    df = mechdesign.sweep(
        base, {"prior_set.c": [0.05, "1/20", 0.1]}, serial=True, store=tmp_path, on_record=calls.append, progress=False
    )
    assert len(calls) == 2  # 0.05 and '1/20' are one exact c: one design
    assert df["key"][0] == df["key"][1] != df["key"][2]
    assert len(list(tmp_path.glob("*/*.json"))) == 2 and len(list(tmp_path.glob("*/*.npy"))) == 2
    for _, row in df.iterrows():
        assert row["status"] == "optimal" and row["certified"] and row["feasible"]
        assert row["objective"] == pytest.approx(xi_theorem1(1.0, row["c"], 3), abs=1e-9)
        assert row["leakage"] <= 1.0 + 1e-12
    again = mechdesign.sweep(
        base, {"prior_set.c": [0.05, "1/20", 0.1]}, serial=True, store=tmp_path, on_record=calls.append, progress=False
    )
    assert len(calls) == 2 and again["cached"].all() and again.attrs["computed"] == 0
    assert again["objective"].tolist() == df["objective"].tolist()


def test_an_objective_axis_keeps_the_objective_column():
    base = dict(DOB, alphabet=2, epsilon=1.0, prior_set={"kind": "simplex"})
    df = mechdesign.sweep(
        base,
        {"objective": [{"kind": "dobrushin"}, {"kind": "expected_loss", "loss": "hamming", "prior": "uniform"}]},
        serial=True,
        store=None,
        progress=False,
    )
    assert df.attrs["axes"] == ["objective (axis)"] and df["objective_kind"].tolist() == ["dobrushin", "expected_loss"]
    # N = 2, ε-LDP: Dobrushin (e^ε − 1)/(e^ε + 1) (Kairouz et al.), randomized response error 1/(1 + e^ε)
    assert df["objective"].tolist() == pytest.approx([math.tanh(0.5), 1 / (1 + math.e)], abs=1e-9)
    # readable columns: the objective axis as short text, finish times as datetimes
    assert df["objective (axis)"].tolist() == ["dobrushin", "expected_loss(loss=hamming, prior=uniform)"]
    assert isinstance(df["finished_at"].dtype, pd.DatetimeTZDtype)
    # estimation errors per report of randomized response (N = 2, uniform prior), from Wang, Blocki, Li, Jha
    # (USENIX Security 2017): n Var(p_hat_x) = q(1-q)/(p-q)^2 for a fixed population (1 - p - q = 0 at k = 2),
    # p = e/(1+e), q = 1/(1+e): summed over x, 2e/(e-1)^2; records i.i.d. from P add sum P(1-P) = 1/2
    e = math.e
    rr = df.iloc[1]
    assert rr["mle_error_population"] == pytest.approx(2 * e / (e - 1) ** 2, rel=1e-9)
    assert rr["mle_error"] == pytest.approx(2 * e / (e - 1) ** 2 + 0.5, rel=1e-9)
    assert rr["inversion_error"] == pytest.approx(rr["mle_error"], rel=1e-9)  # square, invertible: equal


def test_failing_design_becomes_a_row(tmp_path, monkeypatch):
    design_module = sys.modules["mechdesign.design"]

    real = design_module.design

    def flaky(spec):
        if spec["alphabet"] == 4:
            raise MemoryError("simulated: out of memory")
        return real(spec)

    monkeypatch.setattr(design_module, "design", flaky)
    df = mechdesign.sweep(dict(DOB, epsilon=1), {"alphabet": [3, 4]}, serial=True, store=tmp_path, progress=False)
    assert df["status"].tolist() == ["optimal", "error"]
    assert df["message"][1] == "MemoryError: simulated: out of memory" and not df["certified"][1]
    monkeypatch.setattr(design_module, "design", real)
    retried = mechdesign.sweep(
        dict(DOB, epsilon=1), {"alphabet": [3, 4]}, serial=True, store=tmp_path, retry_failed=True, progress=False
    )
    assert retried["status"].tolist() == ["optimal", "optimal"] and retried.attrs["computed"] == 1


def test_expected_loss_rows_and_tidy_files(tmp_path):
    from mechdesign.sweeps.table import read_table, write_table

    base = {
        "alphabet": 2,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "expected_loss", "loss": "hamming", "prior": "uniform"},
    }
    df = mechdesign.sweep(base, {"epsilon": [0.5, 1.0, 2.0]}, serial=True, store=None, progress=False)
    for _, row in df.iterrows():  # binary randomized response is LDP-optimal: error 1/(1 + e^ε)
        assert row["objective"] == pytest.approx(1 / (1 + math.exp(row["epsilon"])), abs=1e-9)
        assert row["N"] == 2 and row["M"] == 2 and row["prior_set_kind"] == "simplex" and row["c"] == 0
    write_table(df, tmp_path)
    for name in ("results.csv", "results.parquet"):
        back = read_table(tmp_path / name)
        assert back.attrs["axes"] == ["epsilon"]
        np.testing.assert_array_equal(back["objective"].to_numpy(float), df["objective"].to_numpy(float))
        assert back["status"].tolist() == ["optimal"] * 3


def test_cli_sweep_file_plot_and_plot_command(tmp_path):
    sweep_file = tmp_path / "dob.yaml"
    sweep_file.write_text(
        "base: {alphabet: 3, prior_set: {kind: min_mass, c: 0}, objective: {kind: dobrushin}}\n"
        "axes: {epsilon: '0.2:3:4', prior_set.c: [0, 0.1]}\n"
    )
    out = tmp_path / "out"
    assert (
        main(["sweep", str(sweep_file), "--vary", "alphabet=3,4", "--serial", "--out", str(out), "--plot", "-q"]) == 0
    )
    import pandas as pd

    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 16 and list(df.columns[:3]) == ["epsilon", "prior_set.c", "alphabet"]
    for _, row in df.iterrows():
        assert row["objective"] == pytest.approx(
            xi_theorem1(row["epsilon"], row["prior_set.c"], row["alphabet"]), abs=1e-9
        )
    for name in ("utility_vs_epsilon", "time_vs_size"):
        for ext in ("png", "svg"):
            assert (out / f"{name}.{ext}").stat().st_size > 1000
    (out / "utility_vs_epsilon.png").unlink()
    assert main(["plot", str(out)]) == 0 and (out / "utility_vs_epsilon.png").exists()
    assert main(["plot", str(tmp_path / "missing")]) == 2


# ------------------------------------------------------------- resume
def test_resume_after_interrupting_the_driver(tmp_path):
    """Interrupt a serial CLI sweep (a real SIGINT, as Ctrl-C) inside the design of its 5th point (helpers.ctrl_c: the
    moment is chosen by the sweep's progress, not by a clock); the re-run designs only the rest."""
    spec = tmp_path / "loss.yaml"
    spec.write_text(
        "alphabet: 25\nprior_set: {kind: min_mass, c: 0.01}\n"
        "objective: {kind: expected_loss, loss: absolute, prior: uniform}\n"
    )
    store = tmp_path / "store"
    args = ["sweep", spec, "--vary", "epsilon=0.1:3:30", "--serial", "--out", tmp_path / "out", "--store", store, "-q"]
    r = cli_with_ctrl_c("design=5", *args)
    assert r.returncode == 130, r.stderr
    assert "resume" in r.stderr
    before = {p.name: (p.stat().st_mtime_ns, json.loads(p.read_text())["finished_at"]) for p in store.glob("*/*.json")}
    assert len(before) == 4  # the interrupted 5th point is not stored
    assert not list(store.glob("*/*.tmp"))  # no half-written file

    designed = []
    df = mechdesign.sweep(
        spec, {"epsilon": "0.1:3:30"}, serial=True, store=store, on_record=designed.append, progress=False
    )
    assert len(designed) == 30 - len(before)  # one design per missing point, none again
    assert not {r["key"] + ".json" for r in designed} & set(before)
    after = {p.name: (p.stat().st_mtime_ns, json.loads(p.read_text())["finished_at"]) for p in store.glob("*/*.json")}
    assert len(after) == 30 and all(after[name] == stamp for name, stamp in before.items())
    assert df["key"].is_unique and (df["status"] == "optimal").all()
    assert set(df.loc[df["cached"], "key"] + ".json") == set(before)


# -------------------------------------------------------------- Dask
def test_dask_cluster_equals_serial_point_by_point(tmp_path):
    """60 points on a real dask.distributed cluster on loopback (the default local cluster:
    LocalCluster(processes=True, n_workers=2, threads_per_worker=1)), against --serial."""
    axes = {"alphabet": [2, 3, 5], "prior_set.c": [0, 0.05, 0.1, 0.15, 0.2], "epsilon": [0.1, 0.5, 1.0, 3.0]}
    remote = mechdesign.sweep(DOB, axes, workers=2, store=tmp_path / "d", progress=False)
    serial = mechdesign.sweep(DOB, axes, serial=True, store=tmp_path / "s", progress=False)
    assert len(remote) == len(serial) == 60
    assert remote.attrs["computed"] == serial.attrs["computed"] == 60
    pids = {w.split(":")[-1] for w in remote["worker"]}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # the designs ran in the two workers
    from mechdesign.sweeps.store import DirectoryStore

    ds, ss = DirectoryStore(tmp_path / "d"), DirectoryStore(tmp_path / "s")
    assert {ds.get(k)["highs_threads"] for k in remote["key"]} == {1}  # single-threaded HiGHS per task
    for (_, r), (_, s) in zip(remote.iterrows(), serial.iterrows()):
        assert (r["point"], r["key"], r["alphabet"], r["prior_set.c"], r["epsilon"]) == (
            s["point"],
            s["key"],
            s["alphabet"],
            s["prior_set.c"],
            s["epsilon"],
        )
        assert r["status"] == s["status"] == "optimal"
        assert r["objective"] == pytest.approx(s["objective"], abs=1e-12)
        np.testing.assert_allclose(ds.kernel(r["key"]), ss.kernel(s["key"]), atol=1e-12)
        assert r["objective"] == pytest.approx(xi_theorem1(r["epsilon"], r["prior_set.c"], r["alphabet"]), abs=1e-9)


def test_killed_worker_sweep_completes_once_per_point(tmp_path, monkeypatch):
    """SIGKILL one worker process mid-sweep: Dask reruns its tasks; every point is stored exactly once.
    The cluster is an existing one, found through DASK_SCHEDULER_ADDRESS."""
    from dask.distributed import Client, LocalCluster

    axes = {"epsilon": "0.2:3:10", "prior_set.c": [0, 0.02]}
    base = {
        "alphabet": 20,
        "prior_set": {"kind": "min_mass", "c": 0},
        "objective": {"kind": "expected_loss", "loss": "absolute", "prior": "uniform"},
    }
    killed = {}
    with (
        LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) as cl,
        Client(cl) as client,
    ):
        pids = client.run(os.getpid)

        def kill_one(record):
            if not killed and record.get("worker"):
                pid = int(record["worker"].split(":")[-1])
                other = next(p for p in pids.values() if p != pid)  # kill the worker that is busy now
                os.kill(other, signal.SIGKILL)
                killed["pid"], killed["at"] = other, time.time()

        stored = []
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cl.scheduler_address)
        df = mechdesign.sweep(
            base, axes, store=tmp_path, on_record=lambda r: (stored.append(r["key"]), kill_one(r)), progress=False
        )
    assert killed, "no worker was killed"
    with pytest.raises(ProcessLookupError):
        os.kill(killed["pid"], 0)
    assert len(df) == 20 and df["point"].tolist() == list(range(20)) and df["key"].is_unique
    assert (df["status"] == "optimal").all()
    assert sorted(stored) == sorted(df["key"])  # each point stored once
    assert len(list(tmp_path.glob("*/*.json"))) == 20
    late = df[df["finished_at"] > pd.Timestamp(killed["at"], unit="s", tz="UTC")]
    assert not late["worker"].str.endswith(f":{killed['pid']}").any()  # nothing finished on the dead worker


def test_a_batch_run_again_after_its_worker_died_designs_nothing_stored(tmp_path, monkeypatch):
    """design_batch (several designs per Dask task) writes each design to the store as it finishes;
    run again with the same run token (Dask reruns a dead worker's task) it reads those back."""
    from mechdesign.sweeps.api import plan_sweep
    from mechdesign.sweeps.run import design_batch
    from mechdesign.sweeps.store import DirectoryStore

    tasks = plan_sweep(dict(DOB, epsilon=1.0), {"alphabet": [2, 3, 4]}).unique_tasks()
    marker = tmp_path / ".run-abc"
    marker.write_text("driver")
    design_module = sys.modules["mechdesign.design"]
    real, calls = design_module.design, []

    def counted(spec):
        calls.append(spec["alphabet"])
        if len(calls) == 3:
            raise KeyboardInterrupt  # stands in for the worker dying during the third design
        return real(spec)

    monkeypatch.setattr(design_module, "design", counted)
    with pytest.raises(KeyboardInterrupt):
        design_batch(tasks, 1, str(tmp_path), str(marker), "abc")
    assert len(list(tmp_path.glob("*/*.json"))) == 2  # the two finished designs are stored already
    calls.clear()
    monkeypatch.setattr(design_module, "design", lambda spec: (calls.append(spec["alphabet"]), real(spec))[1])
    out = design_batch(tasks, 1, str(tmp_path), str(marker), "abc")
    assert calls == [4] and [r["_stored"] for r, _ in out] == [True] * 3
    store = DirectoryStore(tmp_path)
    for (key, spec), (record, kernel) in zip(tasks, out):
        assert kernel is None and store.get(key)["status"] == "optimal"
        n = spec["alphabet"]  # N-ary LDP Dobrushin optimum (e^ε − 1)/(e^ε + 1) (Kairouz et al.; Theorem 1, c = 0)
        assert record["row"]["objective"] == pytest.approx(xi_theorem1(1.0, 0.0, n), abs=1e-9)
    # without the marker (a worker that cannot see the store) nothing is written there and kernels come back
    other = tmp_path / "other"
    other.mkdir()
    out = design_batch(tasks[:1], 1, str(other), str(other / ".run-missing"), "abc")
    assert out[0][1] is not None and "_stored" not in out[0][0] and not list(other.glob("*/*.json"))


def test_isolated_designs_run_in_child_processes_under_a_memory_cap(tmp_path):
    """sweep(isolate=True): each design in its own child process (bench T3 uses it with a 4 GiB cap);
    a cap the design cannot live under fails that point alone, as a row."""
    axes = {"epsilon": [0.5, 2.0]}
    base = dict(DOB, alphabet=4, prior_set={"kind": "min_mass", "c": 0.1})
    df = mechdesign.sweep(base, axes, isolate=True, store=tmp_path / "a", progress=False)
    assert (df["status"] == "optimal").all() and df.attrs["mode"] == "isolated"
    pids = {int(w.split(":")[-1]) for w in df["worker"]}
    assert len(pids) == 2 and os.getpid() not in pids
    for _, r in df.iterrows():
        assert r["objective"] == pytest.approx(xi_theorem1(r["epsilon"], 0.1, 4), abs=1e-9)
    with open("/proc/self/status") as fh:  # this process's address space; the child starts with as much
        vm_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
    # 64 MiB of address space: too little to load numpy, scipy and HiGHS, let alone design
    assert vm_kib * 1024 > 64 << 20
    capped = mechdesign.sweep(base, {"epsilon": [0.7]}, isolate=True, memory_limit=64 << 20, store=None, progress=False)
    assert capped["status"].tolist() == ["error"] and not capped["certified"][0]
