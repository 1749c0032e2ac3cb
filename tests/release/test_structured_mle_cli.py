"""``mechdesign estimate --method mle`` for structured mechanisms: subset selection, unary encoding, Hadamard
response and local hashing with a seed pool print the table with finite intervals (bootstrap by default at this
size, asymptotic with --bootstrap 0), from --mechanism-file or --mechanism; local hashing with fresh seeds is
refused, and bad input exits 2 naming the row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mechdesign.cli.main import main

TRUTH = np.array([0.4, 0.3, 0.2, 0.1])
FAMILIES = {
    "subset_selection": ["--d", "2"],
    "unary_encoding": [],
    "local_hashing_pool": ["--seeds", "6"],
    "hadamard_response": [],
}


@pytest.fixture()
def files(tmp_path):
    labels = ["red", "green", "blue", "black"]
    (tmp_path / "labels.txt").write_text("\n".join(labels) + "\n")
    x = np.random.default_rng(9).choice(4, size=3000, p=TRUTH)
    (tmp_path / "data.csv").write_text("id,c\n" + "".join(f"{i},{labels[v]}\n" for i, v in enumerate(x)))
    return tmp_path


def _privatize(files, family, extra):
    name = "local_hashing" if family.startswith("local_hashing") else family
    common = ["--mechanism", name, "--epsilon", "1", "--alphabet", str(files / "labels.txt"), *extra]
    rel, mech = files / f"{family}.csv", files / f"{family}.json"
    args = ["privatize", *common, "--input", str(files / "data.csv"), "--column", "c", "--seed", "5"]
    assert main(args + ["-o", str(rel), "--save-mechanism", str(mech)]) == 0
    return common, rel, mech


@pytest.mark.parametrize("family", list(FAMILIES))
def test_mle_prints_the_table_with_finite_intervals(files, family, capsys):
    common, rel, mech = _privatize(files, family, FAMILIES[family])
    out_csv = files / "est.csv"
    base = ["estimate", "--mechanism-file", str(mech), "--input", str(rel), "--column", "c", "--method", "mle"]
    assert main(base + ["-o", str(out_csv)]) == 0
    text = capsys.readouterr().out
    assert "mechdesign estimate: mle" in text and "estimate of P_X, 95% intervals" in text
    assert "parametric bootstrap (B = 200, seed 0" in text
    table = pd.read_csv(out_csv)
    assert np.isfinite(table[["standard_error", "lower", "upper"]].to_numpy()).all()
    assert (table["lower"] <= table["estimate"]).all() and (table["estimate"] <= table["upper"]).all()
    assert ((table["lower"] <= TRUTH) & (TRUTH <= table["upper"])).sum() >= 3
    # asymptotic intervals, a seeded bootstrap and a simultaneous band, as JSON
    assert main(base + ["--bootstrap", "0", "--json"]) == 0
    asym = json.loads(capsys.readouterr().out)
    assert asym["uncertainty"].startswith("asymptotic: observed information")
    assert np.isfinite(asym["lower"]).all() and np.isfinite(asym["upper"]).all()
    np.testing.assert_allclose(asym["estimate"], table["estimate"], atol=1e-6)  # the table rounds to 6 digits
    assert main(base + ["--bootstrap", "50", "--seed", "3", "--simultaneous", "--json"]) == 0
    band = json.loads(capsys.readouterr().out)
    assert band["simultaneous"] and band["diagnostics"]["bootstrap"] == 50 and band["diagnostics"]["seed"] == 3
    assert any("raise --bootstrap" in w for w in band["warnings"])  # 50 resamples are too few for the band
    if family != "local_hashing_pool":  # the options rebuild the same mechanism (a pool is drawn anew: file only)
        assert main(["estimate", *common, "--input", str(rel), "--column", "c", "--method", "mle", "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        np.testing.assert_allclose(again["estimate"], asym["estimate"], rtol=0, atol=1e-12)


def test_local_hashing_with_fresh_seeds_is_refused(files, capsys):
    _, rel, mech = _privatize(files, "local_hashing", [])
    args = ["estimate", "--mechanism-file", str(mech), "--input", str(rel), "--column", "c", "--method", "mle"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "local hashing with a fresh seed per report has no compact likelihood" in err
    assert len(err.splitlines()) == 1


def test_bad_input_and_bad_options_exit_2_naming_them(files, capsys):
    _, rel, mech = _privatize(files, "unary_encoding", [])
    bad = files / "bad.csv"
    bad.write_text("id,c\n1,0 2\n2,3 1\n3,1\n")
    base = ["estimate", "--mechanism-file", str(mech), "--column", "c", "--method", "mle"]
    assert main(base + ["--input", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "row 2: impossible report" in err and len(err.strip().splitlines()) == 1
    assert main(base + ["--input", str(rel), "--bootstrap", "1"]) == 2
    assert "--bootstrap: must be 0 (asymptotic intervals) or an integer >= 2" in capsys.readouterr().err
    assert main(base + ["--input", str(rel), "--seed", "-1"]) == 2
    assert "--seed: must be an integer >= 0" in capsys.readouterr().err
    empty = files / "empty.csv"
    empty.write_text("id,c\n")
    assert main(base + ["--input", str(empty)]) == 2
    assert "empty input" in capsys.readouterr().err
