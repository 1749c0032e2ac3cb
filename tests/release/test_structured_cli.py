"""``privatize``/``estimate`` with ``--mechanism`` (structured mechanisms): round trip through files,
streaming in blocks (same output as one block for one seed), and bad input exiting 2 naming the row."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.cli.main import main

FAMILIES = ["krr", "subset_selection", "unary_encoding", "local_hashing", "hadamard_response"]


@pytest.fixture()
def files(tmp_path):
    labels = [f"s{i}" for i in range(12)]
    (tmp_path / "labels.txt").write_text("\n".join(labels) + "\n")
    rng = np.random.default_rng(3)
    x = rng.choice(12, size=6000, p=np.arange(12, 0, -1) / 78)
    (tmp_path / "data.csv").write_text("id,c\n" + "".join(f"{i},{labels[v]}\n" for i, v in enumerate(x)))
    return tmp_path


@pytest.mark.parametrize("family", FAMILIES)
def test_round_trip_and_intervals(files, family, capsys):
    extra = []  # local hashing: a fresh seed per report (a fixed pool: the test below)
    common = ["--epsilon", "2", "--alphabet", str(files / "labels.txt")]
    rel, mech, est = files / "rel.csv", files / "mech.json", files / "est.csv"
    args = ["privatize", "--mechanism", family, *common, *extra, "--input", str(files / "data.csv"), "--column", "c"]
    assert main(args + ["--seed", "4", "-o", str(rel), "--save-mechanism", str(mech)]) == 0
    # streamed in blocks of 7 rows: every row released, and one seed gives one file
    small, again = files / "rel_small.csv", files / "rel_again.csv"
    assert main(args + ["--seed", "4", "-o", str(small), "--block-rows", "7"]) == 0
    assert main(args + ["--seed", "4", "-o", str(again), "--block-rows", "7"]) == 0
    assert small.read_text() == again.read_text()
    assert len(small.read_text().splitlines()) == len(rel.read_text().splitlines()) == 6001
    assert main(["estimate", "--mechanism-file", str(mech), "--input", str(rel), "--column", "c", "-o", str(est)]) == 0
    out = capsys.readouterr().out
    assert "estimate of P_X, 95% intervals" in out
    import pandas as pd

    table = pd.read_csv(est)
    truth = np.arange(12, 0, -1) / 78
    # 12 intervals at 95%: all but a few cover the truth (6000 reports)
    assert ((table["lower"] <= truth) & (truth <= table["upper"])).sum() >= 9


def test_bad_input_exits_2_naming_the_row(files, capsys):
    common = ["--epsilon", "1", "--alphabet", str(files / "labels.txt")]
    bad = files / "bad.csv"
    bad.write_text("id,c\n1,s0\n2,s1\n3,nope\n")
    assert (
        main(
            [
                "privatize",
                "--mechanism",
                "krr",
                *common,
                "--input",
                str(bad),
                "--column",
                "c",
                "-o",
                str(files / "o.csv"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "row 3" in err and "'nope'" in err and not (files / "o.csv").exists()
    cases = {
        "subset_selection": (
            "id,c\n1,0 1 2\n2,1 1 1\n",
            "row 2: impossible report: symbol indices must be distinct",
        ),  # wrong size / repeated symbol
        "unary_encoding": ("id,c\n1,0 1\n2,3 12\n", "row 2: symbol index 12 outside"),  # mismatched alphabet
        "hadamard_response": ("id,c\n1,3\n2,x\n", "row 2: malformed report"),
        "local_hashing": ("id,c\n1,5:0\n2,5\n", "row 2: malformed report"),
        "krr": ("id,c\n1,s1\n2,s99\n", "row 2: unknown input label 's99'"),
    }
    for family, (text, message) in cases.items():
        bad.write_text(text)
        args = ["estimate", "--mechanism", family, *common, "--input", str(bad), "--column", "c"]
        if family == "subset_selection":
            args += ["--d", "3"]
        assert main(args) == 2, family
        assert message in capsys.readouterr().err, family
    assert main(["privatize", "--mechanism", "krr", "--epsilon", "1", "--input", str(bad), "--column", "c"]) == 2
    assert "--alphabet: required" in capsys.readouterr().err


def test_plain_report_cells_are_written_as_csv_writes_them(tmp_path):
    """The fast writer for set reports gives the bytes csv.writer gives, quoting the other columns when needed."""
    import csv
    import io

    (tmp_path / "labels.txt").write_text("a\nb\nc\nd\n")
    rows = [["1", "a", "plain"], ["2", "b", 'has "quotes", and a comma'], ["3", "c", "line\nbreak"], ["4", "d", ""]]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "c", "note"])
    w.writerows(rows)
    (tmp_path / "d.csv").write_text(buf.getvalue())
    out = tmp_path / "o.csv"
    args = ["privatize", "--mechanism", "unary_encoding", "--epsilon", "1", "--alphabet", str(tmp_path / "labels.txt")]
    assert main(args + ["--input", str(tmp_path / "d.csv"), "--column", "c", "--seed", "2", "-o", str(out)]) == 0
    released = list(csv.reader(io.StringIO(out.read_text(), newline="")))
    assert [r[0] for r in released[1:]] == ["1", "2", "3", "4"] and [r[2] for r in released[1:]] == [r[2] for r in rows]
    again = io.StringIO()
    csv.writer(again, lineterminator="\n").writerows(released)
    assert again.getvalue() == out.read_text()


def test_family_names_listed_for_the_parser_are_the_registry():
    from mechdesign.mechanisms import FAMILIES
    from mechdesign.release.structured_cli import FAMILY_NAMES

    assert sorted(FAMILY_NAMES) == sorted(FAMILIES)


def test_local_hashing_pool_is_decoded_for_the_pool_in_use(files):
    """With --seeds (a fixed pool) at small N the estimate uses the pool's own support matrix (exactly
    unbiased for that pool) and says so in its JSON diagnostics, without a warning."""
    import json

    common = ["--epsilon", "2", "--alphabet", str(files / "labels.txt")]
    rel, mech, est = files / "rel.csv", files / "mech.json", files / "est.json"
    args = ["privatize", "--mechanism", "local_hashing", "--seeds", "20", *common]
    args += ["--input", str(files / "data.csv"), "--column", "c", "--seed", "4", "-o", str(rel)]
    assert main(args + ["--save-mechanism", str(mech)]) == 0
    assert main(["estimate", "--mechanism-file", str(mech), "--input", str(rel), "--column", "c", "-o", str(est)]) == 0
    result = json.loads(est.read_text())
    assert result["diagnostics"]["decoder"] == "pool-exact" and result["warnings"] == []
    truth = np.arange(12, 0, -1) / 78
    lower, upper = np.array(result["lower"]), np.array(result["upper"])
    assert ((lower <= truth) & (truth <= upper)).sum() >= 9
