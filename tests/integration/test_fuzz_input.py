"""Bad input never escapes as an unexpected exception: random specs either load or raise SpecError,
and random YAML through the CLI exits 0, 1 or 2 with at most one line on stderr."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign import SpecError, load_spec
from mechdesign.cli.main import main

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "log(3)",
            "1/3",
            "abc",
            "",
            "-1",
            "1e400",
            "0.1",
            "exp(800)",
            "uniform",
            "worst_case",
            "hamming",
            "kl",
            "min_mass",
            "simplex",
            "point",
            "box",
            "hull",
            "l1_ball",
            "dobrushin",
            "expected_loss",
            "mutual_information",
            "f_divergence",
            "bayes_vulnerability",
            "auto",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "kind",
                    "c",
                    "prior",
                    "priors",
                    "lower",
                    "upper",
                    "center",
                    "radius",
                    "loss",
                    "f",
                    "alpha",
                    "time_limit",
                    "method",
                    "backend",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
KEYS = ["alphabet", "epsilon", "prior_set", "objective", "output_size", "solver", "extra"]
specs = st.dictionaries(st.sampled_from(KEYS), values, max_size=7)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs)
def test_random_specs_load_or_raise_spec_error(data):
    try:
        spec = load_spec(data)
    except SpecError as exc:
        assert exc.pairs and all(field and rule for field, rule in exc.pairs)
        assert "\n" not in str(exc)
    else:
        assert spec.n >= 2 and spec.epsilon.value >= 0 and math.isfinite(spec.epsilon.value)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet="abcdeklnopsuxy_:{}[],-0123456789. \n'\"", max_size=120))
def test_random_yaml_text_never_tracebacks(tmp_path, capsys, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    status = main(["solve", str(path)])
    err = capsys.readouterr().err
    assert status in (0, 1, 2)
    assert "Traceback" not in err and "internal error" not in err
    if status == 2:
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "bad",
    [
        # exp(800) and 1e400 are valid large epsilons now: see tests/spec/test_exact_input.py
        {"alphabet": 3, "epsilon": "1e99999", "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}},
        {"alphabet": 3, "epsilon": float("inf"), "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}},
        {"alphabet": 10**9, "epsilon": 1, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}},
    ],
)
def test_out_of_range_numbers_are_spec_errors(bad):
    with pytest.raises(SpecError):
        load_spec(bad)
