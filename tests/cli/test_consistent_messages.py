"""Messages that contradicted each other."""

from __future__ import annotations

import json
import math

from helpers.cli import run_cli


def test_analyze_without_epsilon_never_says_ldp_holds_at_infinite_level(tmp_path, capsys):
    # a zero next to a non-zero entry in a column: LDP level = infinity (ratio K_x(y)/K_x'(y) unbounded)
    path = tmp_path / "k.csv"
    path.write_text("1/2,1/2,0\n0,1/2,1/2\n1/2,0,1/2\n")
    status, out, _ = run_cli(capsys, "analyze", path, "--prior-set", "min_mass:0.2")
    assert status == 0
    assert "eps-LDP holds for no finite eps" in out and "LDP: holds" not in out
    status, out, _ = run_cli(capsys, "analyze", path, "--prior-set", "min_mass:0.2", "--json")
    r = json.loads(out)
    assert r["guarantees"]["ldp"] is False and r["guarantees"]["pml"] is True


def test_analyze_bounds_are_not_shown_as_holding_at_a_failed_epsilon(tmp_path, capsys):
    # point prior (0.2, 0.3, 0.5), K = 0.8 on the diagonal: pml of x=0 is log(0.8 / (0.2*0.8 + 0.8*0.1)) = log(10/3) > 0.2
    path = tmp_path / "k.csv"
    path.write_text("0.8,0.1,0.1\n0.1,0.8,0.1\n0.1,0.1,0.8\n")
    status, out, _ = run_cli(capsys, "analyze", path, "--prior-set", "point:0.2,0.3,0.5", "--epsilon", "0.2", "--json")
    r = json.loads(out)
    assert r["guarantees"]["pml"] is False
    capacity = math.log(0.8 / (0.2 * 0.8 + 0.3 * 0.1 + 0.5 * 0.1))  # column 0 under the point prior
    assert r["bounds_epsilon"] == r["measures"]["leakage_capacity"]
    assert abs(r["bounds_epsilon"] - capacity) < 1e-12
    # the disclosure rows need eps below their thresholds; at eps = capacity > both they do not apply
    assert not any("disclosure" in b["name"] for b in r["bounds"])
    status, out, _ = run_cli(capsys, "analyze", path, "--prior-set", "point:0.2,0.3,0.5", "--epsilon", "0.2")
    assert "the leakage capacity (the kernel is not (eps,P)-PML" in out


def test_analyze_delta_reaches_the_bounds_table(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("0.8,0.1,0.1\n0.1,0.8,0.1\n0.1,0.1,0.8\n")
    _, out, _ = run_cli(capsys, "analyze", path, "--prior-set", "point:0.2,0.3,0.5", "--delta", "0.05", "--json")
    names = [b["name"] for b in json.loads(out)["bounds"]]
    assert any("eps_c(0.05)" in n and "log(1/0.05)" in n for n in names)
    assert not any("eps_c(0.1)" in n for n in names)


def test_coarse_grid_with_a_large_gap_is_not_reported_optimal(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: simplex}\n"
        "objective: {kind: dobrushin}\nsolver: {denominator_bits: 2}\n"
    )
    status, out, _ = run_cli(capsys, "solve", spec, "--json")
    r = json.loads(out)
    gap = r["certificate"]["gap"]
    # README's rule: a gap above 1e-6 max(1, |objective|) is `suboptimal`, exit 1
    assert gap > 1e-6 * max(1.0, abs(r["objective"]))
    assert r["status"] == "suboptimal" and status == 1
