"""The binary report format of set-valued reports (``-o FILE.parquet``): privatize writes the same reports as
the text format for one seed (read back independently with pyarrow and compared with the text cells), estimate
reads it to the same estimate, and every rule of the text format (index in range, increasing, size) plus the
column's type and nulls exits 2 naming the row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mechdesign.cli.main import main


@pytest.fixture()
def files(tmp_path):
    labels = [f"s{i}" for i in range(12)]
    (tmp_path / "labels.txt").write_text("\n".join(labels) + "\n")
    rng = np.random.default_rng(3)
    x = rng.choice(12, size=3000, p=np.arange(12, 0, -1) / 78)
    (tmp_path / "data.csv").write_text("id,c,note\n" + "".join(f"{i},{labels[v]},n{i % 7}\n" for i, v in enumerate(x)))
    return tmp_path


@pytest.mark.parametrize("family", ["subset_selection", "unary_encoding"])
def test_parquet_holds_the_text_reports_and_estimates_alike(files, family, capsys):
    common = ["--mechanism", family, "--epsilon", "1", "--alphabet", str(files / "labels.txt")]
    args = [
        "privatize",
        *common,
        "--input",
        str(files / "data.csv"),
        "--column",
        "c",
        "--seed",
        "9",
        "--block-rows",
        "500",
    ]
    text, binary, mech = files / "rel.csv", files / "rel.parquet", files / "mech.json"
    assert main(args + ["-o", str(text), "--save-mechanism", str(mech)]) == 0
    assert main(args + ["-o", str(binary)]) == 0  # one row group per block of 500 rows
    table = pq.read_table(binary)
    assert table.column_names == ["id", "c", "note"]
    assert table.schema.field("c").type == pa.list_(pa.uint16())
    lines = text.read_text().splitlines()[1:]
    assert table.column("id").to_pylist() == [line.split(",")[0] for line in lines]
    assert table.column("note").to_pylist() == [line.split(",")[2] for line in lines]
    cells = [line.split(",")[1] for line in lines]
    assert [" ".join(map(str, s)) for s in table.column("c").to_pylist()] == cells
    assert pq.ParquetFile(binary).metadata.num_row_groups == 6
    for method in (["--method", "unbiased"], ["--method", "mle", "--bootstrap", "0"]):  # counts; whole reports
        outputs = []
        for source in (text, binary):
            est = files / f"est_{source.suffix[1:]}.csv"
            args = ["estimate", "--mechanism-file", str(mech), "--input", str(source), "--column", "c", *method]
            assert main(args + ["-o", str(est)]) == 0
            outputs.append(est.read_text())
        capsys.readouterr()
        assert outputs[0] == outputs[1], method
        assert len(outputs[0].splitlines()) == 13  # header + the 12 symbols


def _write(path, column, names=("id", "c")):
    pq.write_table(pa.table({names[0]: pa.array([str(i) for i in range(len(column))]), names[1]: column}), path)


def test_bad_binary_reports_exit_2_naming_the_row(files, capsys):
    common = ["--epsilon", "1", "--alphabet", str(files / "labels.txt")]
    bad = files / "bad.parquet"
    u16 = pa.list_(pa.uint16())
    cases = [
        (
            "subset_selection",
            pa.array([[0, 1, 2], [1, 1, 2]], u16),
            "row 2: impossible report: symbol indices must be distinct",
        ),
        (
            "subset_selection",
            pa.array([[0, 1, 2], [3, 2, 5]], u16),
            "row 2: impossible report: symbol indices must be distinct",
        ),
        ("subset_selection", pa.array([[0, 1, 2], [0, 1]], u16), "row 2: impossible report: a set of 2 symbols"),
        ("unary_encoding", pa.array([[0, 1], [3, 12]], u16), "row 2: symbol index 12 outside [0, 12)"),
        ("unary_encoding", pa.array([[0, 1], [-1, 3]], pa.list_(pa.int64())), "row 2: symbol index -1 outside"),
        ("unary_encoding", pa.array([[0], None, [1]], u16), "row 2: missing report (null)"),
        ("unary_encoding", pa.array([[0], [1], [2, None]], u16), "row 3: a null symbol index"),
        ("unary_encoding", pa.array(["0 1", "2"]), "expected a list of integer symbol indices per report"),
        ("unary_encoding", pa.array([[0.0, 1.0]], pa.list_(pa.float64())), "found type list<element: double>"),
    ]
    for family, column, message in cases:
        _write(bad, column)
        args = ["estimate", "--mechanism", family, *common, "--input", str(bad), "--column", "c"]
        if family == "subset_selection":
            args += ["--d", "3"]
        assert main(args) == 2, message
        err = capsys.readouterr().err
        assert message in err and str(bad) in err and "column 'c'" in err, err
    _write(bad, pa.array([[0]], u16), names=("id", "other"))
    assert main(["estimate", "--mechanism", "unary_encoding", *common, "--input", str(bad), "--column", "c"]) == 2
    assert "--column: no column 'c'" in capsys.readouterr().err
    (files / "junk.parquet").write_text("id,c\n1,0 1\n")
    assert (
        main(
            [
                "estimate",
                "--mechanism",
                "unary_encoding",
                *common,
                "--input",
                str(files / "junk.parquet"),
                "--column",
                "c",
            ]
        )
        == 2
    )
    assert "as Parquet" in capsys.readouterr().err
    _write(bad, pa.array([[0]], u16))
    assert main(["estimate", "--mechanism", "krr", *common, "--input", str(bad), "--column", "c"]) == 2
    assert "set-valued reports" in capsys.readouterr().err


def test_parquet_output_only_for_set_valued_reports(files, capsys):
    common = [
        "--epsilon",
        "1",
        "--alphabet",
        str(files / "labels.txt"),
        "--input",
        str(files / "data.csv"),
        "--column",
        "c",
    ]
    out = files / "o.parquet"
    assert main(["privatize", "--mechanism", "krr", *common, "-o", str(out)]) == 2
    assert "-o: the .parquet report format holds the set-valued reports" in capsys.readouterr().err
    assert not out.exists()
    ragged = files / "ragged.csv"
    ragged.write_text("id,c,note\n1,s0,a\n2,s1\n")
    args = ["privatize", "--mechanism", "unary_encoding", "--epsilon", "1", "--alphabet", str(files / "labels.txt")]
    assert main(args + ["--input", str(ragged), "--column", "c", "-o", str(out)]) == 2
    assert "row 2 has 2 fields, the header 3" in capsys.readouterr().err
    assert not out.exists() and not list(files.glob(".privatize-*"))
    empty = files / "empty.csv"
    empty.write_text("id,c\n")
    assert main(args + ["--input", str(empty), "--column", "c", "-o", str(out)]) == 0
    assert pq.read_table(out).num_rows == 0 and pq.read_table(out).schema.field("c").type == pa.list_(pa.uint16())
