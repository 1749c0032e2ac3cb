"""``mechdesign epsilon`` (choosing ε from a requirement) and the disclosure section of ``analyze``.

Expected values are closed forms of the disclosure paper's thresholds for Q_X(c): log 1/(1 − c)
(Proposition 7 for every prior in the set), −log(1 − (N − 1)c) (Corollary 8), and ε = h (Theorem 4);
Theorem 6's bound log(1 + c/(1 − c) e^{−C}) with C = log 4 for the kernel used.
"""

from __future__ import annotations

import json
import math

import pytest

from helpers.cli import run_cli


def test_epsilon_protect_min_entropy_theorem4(capsys):
    status, out, _ = run_cli(
        capsys, "epsilon", "--prior-set", "min_mass:0.1", "--alphabet", "5", "--protect-min-entropy", "0.5", "--json"
    )
    res = json.loads(out)
    assert status == 0 and res["epsilon"] == 0.5 and res["strict"] is False and "Theorem 4" in res["theorem"]


def test_epsilon_protect_below_the_set_threshold_is_proposition7(capsys):
    status, out, _ = run_cli(
        capsys, "epsilon", "--prior-set", "min_mass:0.1", "--alphabet", "5", "--protect-min-entropy", "0.01", "--json"
    )
    res = json.loads(out)
    assert res["epsilon"] == pytest.approx(math.log(1 / 0.9), rel=1e-12) and res["strict"] is True


def test_epsilon_no_singling_out_for_a_point_prior(capsys):
    status, out, _ = run_cli(capsys, "epsilon", "--prior-set", "point:0.2,0.3,0.5", "--no-singling-out", "--json")
    res = json.loads(out)
    assert status == 0 and res["alphabet"] == 3 and res["epsilon"] == pytest.approx(math.log(2), rel=1e-12)


@pytest.mark.parametrize(
    "argv, field",
    [
        (["--prior-set", "min_mass:0.1", "--no-disclosure"], "--alphabet"),
        (["--prior-set", "min_mass:0.5", "--alphabet", "5", "--no-disclosure"], "--prior-set"),
        (["--prior-set", "simplex", "--alphabet", "5", "--protect-min-entropy", "-1"], "--protect-min-entropy"),
        (["--prior-set", "simplex", "--alphabet", "5"], "requirement"),
    ],
)
def test_epsilon_bad_input_is_one_line_exit_2(capsys, argv, field):
    status, _, err = run_cli(capsys, "epsilon", *argv)
    assert status == 2 and field in err and len(err.strip().splitlines()) == 1


def test_analyze_shows_disclosure_guarantees(tmp_path, capsys):
    k = tmp_path / "k.csv"
    k.write_text("0.8,0.2\n0.2,0.8\n0.5,0.5\n")
    status, out, _ = run_cli(capsys, "analyze", str(k), "--prior-set", "min_mass:0.1", "--json")
    dis = json.loads(out)["disclosure"]
    assert status == 0
    assert dis["no_disclosure_threshold"] == pytest.approx(-math.log(0.9), rel=1e-12)
    assert dis["no_singling_out_threshold"] == pytest.approx(-math.log(1 - 2 * 0.1), rel=1e-12)
    # C = log(0.8/0.2): Theorem 6 with q_min = c = 0.1
    assert dis["theorem6_min_entropy_left"] == pytest.approx(math.log1p(0.1 / 0.9 / 4), rel=1e-12)
    assert dis["no_disclosure"] is True
    status, out, _ = run_cli(capsys, "analyze", str(k), "--prior-set", "min_mass:0.1")
    assert "disclosure guarantees" in out


def test_epsilon_unachievable_requirement_exits_1(capsys):
    # over all priors some prior is a point mass: min_P H∞(P) = 0, so no eps guarantees no singling out
    status, out, _ = run_cli(capsys, "epsilon", "--prior-set", "simplex", "--alphabet", "4", "--no-singling-out")
    assert status == 1 and "no eps" in out


def test_epsilon_hull_prior_set_infers_the_alphabet(capsys):
    status, out, _ = run_cli(
        capsys,
        "epsilon",
        "--prior-set",
        "{kind: hull, priors: [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2]]}",
        "--no-disclosure",
        "--json",
    )
    res = json.loads(out)
    # min over the hull of min_x P(x) = 0.2 (at a vertex): log 1/(1 - 0.2)
    assert status == 0 and res["alphabet"] == 3 and res["epsilon"] == pytest.approx(-math.log(0.8), rel=1e-12)
