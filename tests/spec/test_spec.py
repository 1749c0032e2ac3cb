"""Spec validation: every rule is checked when the spec is built, and bad input gives exit status 2
with one line on stderr that names the field (docs/explanation/mathematics.md, section 'Contract')."""

from fractions import Fraction

import pytest

from mechdesign import SpecError, load_spec
from mechdesign.cli.main import main

GOOD = """\
alphabet: 3
epsilon: 1
prior_set: {kind: min_mass, c: 0.1}
objective: {kind: dobrushin}
"""


def _with(**replace) -> str:
    lines = dict(line.split(": ", 1) for line in GOOD.strip().splitlines())
    for key, value in replace.items():
        if value is None:
            lines.pop(key)
        else:
            lines[key] = value
    return "".join(f"{k}: {v}\n" for k, v in lines.items())


# (name, spec text, a field name the message must contain, a word of the rule it must contain)
MALFORMED = [
    ("unknown top-level key", _with(colour="blue"), "colour", "unknown key"),
    ("unknown prior-set key", _with(prior_set="{kind: min_mass, c: 0.1, d: 2}"), "prior_set.d", "unknown key"),
    ("unknown objective key", _with(objective="{kind: dobrushin, weight: 2}"), "objective.weight", "unknown key"),
    ("c above 1/N", _with(prior_set="{kind: min_mass, c: 0.5}"), "prior_set.c", "1/N"),
    ("negative c", _with(prior_set="{kind: min_mass, c: -0.1}"), "prior_set.c", ">= 0"),
    ("negative epsilon", _with(epsilon="-1"), "epsilon", ">= 0"),
    ("epsilon expression with unknown name", _with(epsilon="log(q)"), "epsilon", "unknown name"),
    ("epsilon expression calling a builtin", _with(epsilon="__import__('os')"), "epsilon", "only log, exp and sqrt"),
    ("epsilon log of a negative number", _with(epsilon="log(-2)"), "epsilon", "non-positive"),
    ("epsilon missing", _with(epsilon=None), "epsilon", "missing"),
    ("alphabet of one symbol", _with(alphabet="1"), "alphabet", "2"),
    ("alphabet labels read as booleans", _with(alphabet="[no, yes, maybe]"), "alphabet", "boolean"),
    ("alphabet labels repeated", _with(alphabet="[a, b, a]"), "alphabet", "distinct"),
    (
        "prior does not sum to one",
        _with(prior_set="{kind: point, prior: [0.5, 0.3, 0.1]}"),
        "prior_set.prior",
        "sum to 1",
    ),
    (
        "prior with a negative mass",
        _with(prior_set="{kind: point, prior: [1.2, -0.1, -0.1]}"),
        "prior_set.prior",
        "negative",
    ),
    ("prior of the wrong length", _with(prior_set="{kind: point, prior: [0.5, 0.5]}"), "prior_set.prior", "N = 3"),
    (
        "hull prior of the wrong length",
        _with(prior_set="{kind: hull, priors: [[0.5, 0.5]]}"),
        "prior_set.priors[0]",
        "N = 3",
    ),
    (
        "box with lower above upper",
        _with(prior_set="{kind: box, lower: [0.5, 0, 0], upper: [0.4, 1, 1]}"),
        "prior_set",
        "exceeds",
    ),
    (
        "box containing no distribution",
        _with(prior_set="{kind: box, lower: [0.5, 0.5, 0.5], upper: [1, 1, 1]}"),
        "prior_set",
        "no distribution",
    ),
    (
        "l1 ball with negative radius",
        _with(prior_set="{kind: l1_ball, center: [0.2, 0.3, 0.5], radius: -1}"),
        "prior_set.radius",
        ">= 0",
    ),
    ("unknown prior-set kind", _with(prior_set="{kind: gaussian}"), "prior_set", "unknown kind"),
    ("prior set without kind", _with(prior_set="{c: 0.1}"), "prior_set", "kind"),
    ("unknown objective kind", _with(objective="{kind: accuracy}"), "objective", "unknown kind"),
    (
        "loss matrix with wrong rows",
        _with(objective="{kind: expected_loss, loss: [[0, 1], [1, 0]]}"),
        "objective.loss",
        "N = 3",
    ),
    (
        "ragged loss matrix",
        _with(objective="{kind: expected_loss, loss: [[0, 1, 1], [1, 0], [1, 1, 0]]}"),
        "objective.loss",
        "different lengths",
    ),
    ("unknown named loss", _with(objective="{kind: expected_loss, loss: cosine}"), "objective.loss", "hamming"),
    (
        "loss columns differ from output_size",
        _with(objective="{kind: expected_loss, loss: [[0, 1], [1, 0], [1, 1]]}", output_size="3"),
        "objective.loss",
        "M = output_size",
    ),
    ("output size zero", _with(output_size="0"), "output_size", "greater than or equal to 1"),
    ("dobrushin with one output", _with(output_size="1"), "output_size", ">= 2"),
    ("negative time limit", _with(solver="{time_limit: -5}"), "solver.time_limit", "greater than 0"),
    ("unknown solver method", _with(solver="{method: magic}"), "solver.method", "simplex"),
    (
        "objective prior not a distribution",
        _with(objective="{kind: expected_loss, prior: [0.9, 0.9, 0.9]}"),
        "objective.prior",
        "sum to 1",
    ),
    ("malformed YAML", "alphabet: [1, 2\nepsilon: 1\n", "spec", "malformed YAML"),
    ("YAML that is a list", "- 1\n- 2\n", "spec", "mapping"),
    ("empty file", "", "spec", "mapping"),
]


@pytest.mark.parametrize("name,text,field,rule", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_spec_exits_2_naming_the_field(tmp_path, capsys, name, text, field, rule):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    status = main(["solve", str(path)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    assert field in err and rule in err, err


def test_at_least_twenty_malformed_specs():
    assert len(MALFORMED) >= 20


def test_missing_file_and_usage_errors_exit_2(tmp_path, capsys):
    assert main(["solve", str(tmp_path / "absent.yaml")]) == 2
    assert "file not found" in capsys.readouterr().err
    assert main(["solve"]) == 2
    assert main(["frobnicate"]) == 2


def test_probabilities_are_read_as_the_decimals_written():
    spec = load_spec(_with(prior_set="{kind: min_mass, c: 0.1}"))
    assert spec.prior_set.c == Fraction(1, 10)
    spec = load_spec(_with(prior_set="{kind: point, prior: ['1/3', '1/3', '1/3']}"))
    assert spec.prior_set.prior == [Fraction(1, 3)] * 3


def test_prior_within_tolerance_is_normalised_exactly():
    spec = load_spec(_with(prior_set="{kind: point, prior: [0.3333333333, 0.3333333333, 0.3333333334]}"))
    assert sum(spec.prior_set.prior) == 1


def test_epsilon_expression_is_evaluated_without_eval():
    spec = load_spec(_with(epsilon="log(10/3)"))
    assert spec.epsilon.value == pytest.approx(1.2039728043259361, rel=1e-15)
    assert spec.epsilon.exp_lower_bound() <= Fraction(10, 3)
    assert Fraction(10, 3) - spec.epsilon.exp_lower_bound() < Fraction(1, 10**40)


def test_spec_errors_collect_every_field():
    with pytest.raises(SpecError) as info:
        load_spec(_with(epsilon="-1", colour="red"))
    fields = {f for f, _ in info.value.pairs}
    assert {"epsilon", "colour"} <= fields


def test_schema_command_prints_every_kind(capsys):
    import json

    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    text = json.dumps(schema)
    for kind in ["min_mass", "simplex", "point", "hull", "box", "l1_ball", "dobrushin", "expected_loss"]:
        assert kind in text
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    "objective, prior_set, field, owner",
    [
        # max_loss is a field of min_vulnerability only: "did you mean 'max_loss'?" would puzzle
        ({"kind": "expected_loss", "loss": "hamming", "max_loss": 1}, {"kind": "simplex"}, "objective.max_loss",
         "'max_loss' is a key of the min_vulnerability objective only"),
        ({"kind": "dobrushin"}, {"kind": "simplex", "c": 0.1}, "prior_set.c", "'c' is a key of the min_mass prior_set only"),
    ],
)  # fmt: skip
def test_a_key_of_another_part_of_the_spec_says_where_it_belongs(tmp_path, objective, prior_set, field, owner):
    from mechdesign.spec.models import spec_from_dict

    with pytest.raises(SpecError) as info:
        spec_from_dict({"alphabet": 2, "epsilon": 1, "prior_set": prior_set, "objective": objective})
    assert f"{field}: unknown key here ({owner})" in str(info.value)
    assert "did you mean" not in str(info.value)


def test_a_misspelt_key_still_gets_a_suggestion():
    from mechdesign.spec.models import spec_from_dict

    with pytest.raises(SpecError) as info:
        spec_from_dict(
            {
                "alphabet": 2,
                "epsilon": 1,
                "prior_set": "simplex",
                "objective": {"kind": "expected_loss", "prio": "uniform"},
            }
        )
    assert "objective.prio: unknown key (not part of the spec); did you mean 'prior'?" in str(info.value)


def test_numpy_arrays_of_labels_are_lists_of_labels_and_complex_arrays_are_refused():
    import numpy as np

    from mechdesign.spec.models import spec_from_dict

    base = {"epsilon": 1, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
    assert spec_from_dict({**base, "alphabet": np.array(["a", "b", "c"])}).alphabet == ["a", "b", "c"]
    with pytest.raises(SpecError, match=r"alphabet: array of dtype complex128: expected real numbers or text"):
        spec_from_dict({**base, "alphabet": np.array([1 + 2j, 3])})
