"""--set overrides, the prior-set shorthand in specs and measures, top-level prior-set
models, and "did you mean" for mistyped keys and kinds."""

from __future__ import annotations

import json
import math

import pytest

from helpers.cli import cli_subprocess
import mechdesign
from mechdesign import design, measures

from helpers import ROOT


def _xi(eps, c, n):  # Dobrushin paper, Theorem 1: Xi = min{(e^eps - 1)/(e^eps (1 - Nc) + 1), 1}
    return min((math.exp(eps) - 1) / (math.exp(eps) * (1 - n * c) + 1), 1.0)


def test_set_overrides_epsilon_and_c():
    spec = ROOT / "problems/theorem1_n10.yaml"  # N = 10, c = 0.05, eps = log(10/3)
    r = cli_subprocess("solve", spec, "--json", "--set", "epsilon=0.5", "--set", "prior_set.c=0.01")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["epsilon_text"] == "0.5"
    assert out["objective"] == pytest.approx(_xi(0.5, 0.01, 10), rel=1e-9)
    assert abs(out["objective"] - 7 / 8) > 0.1  # not the file's own answer


def test_set_indexes_a_list_as_sweep_does():
    # privacy.1.epsilon: the second constraint of the list (sweep's --vary takes the same paths); the metric
    # constraint d-privacy at eps' = 0.3 over |x - y| on 6 symbols, checked exactly, binds the design
    from mechdesign.cli.overrides import apply_overrides

    data = {"privacy": [{"epsilon": 1.0, "prior_set": "simplex"}, {"epsilon": 0.6, "metric": {"kind": "absolute"}}]}
    out = apply_overrides(data, ["privacy.1.epsilon=0.3"])
    assert out["privacy"][1]["epsilon"] == "0.3" and data["privacy"][1]["epsilon"] == 0.6  # a copy, as written
    r = cli_subprocess(
        "solve", ROOT / "problems/combined_min_mass_and_metric.yaml", "--json", "--set", "privacy.1.epsilon=0.3"
    )
    assert r.returncode == 0, r.stderr
    guarantees = json.loads(r.stdout)["certificate"]["guarantees"]
    assert any("0.3" in json.dumps(g) for g in guarantees)


@pytest.mark.parametrize(
    "assignment, needle",
    [
        ("epsilon.x=1", "epsilon is not a mapping"),
        ("privacy.5.epsilon=1", "privacy.5.epsilon: index 5 is outside a list of 2 items"),
        ("privacy.1=5", "privacy[1]: Input should be a valid dictionary, found '5'"),  # no pydantic class names
        ("prior_set.cc=0.01", "did you mean 'c'?"),
        ("epsilon", "expected key.path=value"),
        ("prior_set.c=0.5", "prior_set.c"),  # > 1/N: the spec's own rule
    ],
)
def test_set_errors_are_one_line_exit_2(assignment, needle):
    spec = "combined_min_mass_and_metric.yaml" if assignment.startswith("privacy") else "theorem1_n10.yaml"
    r = cli_subprocess("solve", ROOT / "problems" / spec, "--set", assignment)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_did_you_mean_for_kind_and_key(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mas, c: 0.1}\nobjective: {kind: dobrushin}\n")
    r = cli_subprocess("solve", bad)
    assert r.returncode == 2 and "did you mean 'min_mass'?" in r.stderr
    bad.write_text(
        "alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.1}\nobjective: {kind: dobrushin}\n"
        "solver: {time_limt: 3}\n"
    )
    r = cli_subprocess("solve", bad)
    assert r.returncode == 2 and "did you mean 'time_limit'?" in r.stderr


def test_shorthand_in_specs_equals_the_mapping():
    base = {"alphabet": 10, "epsilon": "log(10/3)", "objective": {"kind": "dobrushin"}}
    short = design({**base, "prior_set": "min_mass:0.05"})
    assert short.spec.prior_set == design({**base, "prior_set": {"kind": "min_mass", "c": "0.05"}}).spec.prior_set
    assert short.objective == pytest.approx(7 / 8, abs=1e-9)  # Theorem 1 at N = 10, c = 0.05, eps = log(10/3)
    assert design({**base, "prior_set": "simplex"}).spec.prior_set == mechdesign.Simplex(kind="simplex")


def test_shorthand_in_measures():
    K = [[0.75, 0.25], [0.25, 0.75]]
    # by hand: simplex -> max ratio 0.75/0.25 = 3; min_mass c=0.1 -> 0.75/(0.1*0.75 + 0.9*0.25) = 2.5;
    # point (1/2, 1/2) -> 0.75/0.5 = 1.5
    assert measures.leakage_capacity(K, "simplex") == pytest.approx(math.log(3))
    assert measures.leakage_capacity(K, "min_mass:0.1") == pytest.approx(math.log(2.5))
    assert measures.leakage_capacity(K, "point:0.5,0.5") == pytest.approx(math.log(1.5))
    with pytest.raises(mechdesign.InputError, match="prior_set"):
        measures.leakage_capacity(K, "min_mas:0.1")


def test_prior_set_models_at_top_level():
    for name in ("PriorSet", "Simplex", "MinMass", "Point", "Hull", "Box", "L1Ball"):
        assert name in mechdesign.__all__ and hasattr(mechdesign, name)
    assert mechdesign.MinMass(kind="min_mass", c="1/20").kind == "min_mass"
