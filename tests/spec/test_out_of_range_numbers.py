"""Numbers beyond the double range (1e400, 1e-400) or beyond the LP solver's coefficient range in a spec.

Each is either a valid spec, designed and certified like any other (a cap or a radius that excludes nothing, a
distance that constrains nothing), or refused with exit status 2 and a message that names the field, states
the rule and shows the number as written (never a double's rounding of it: "must be <= 1/4, found 0.25" for
c = 0.2500000001 would contradict itself). Before this file each "designed" case below ended in an internal
error (exit 3: a float overflow or a model HiGHS refused)."""

import warnings
from fractions import Fraction

import pytest

from mechdesign import design
from mechdesign.cli.main import main
from mechdesign.spec.input_rules import shown_number

PRIOR = "[0.1, 0.2, 0.3, 0.4]"


def _solve(tmp_path, capsys, text: str) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    status = main(["solve", str(path), "-q"])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


REFUSED = [
    (
        "alphabet: 4\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.2500000001}\nobjective: {kind: dobrushin}\n",
        "prior_set.c: must be <= 1/N = 1/4, found 0.2500000001",
    ),
    (
        "alphabet: 4\nepsilon: 1\nprior_set: {kind: min_mass, c: 1e400}\nobjective: {kind: dobrushin}\n",
        "prior_set.c: must be <= 1/N = 1/4, found 1e+400",
    ),
    (
        "alphabet: 4\nepsilon: 1\nprior_set: {kind: min_mass, c: -1e-400}\nobjective: {kind: dobrushin}\n",
        "prior_set.c: must be >= 0, found -1e-400",
    ),
    (
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: box, lower: [0.5000000001, 0.4], upper: [0.5, 0.6]}\n"
        "objective: {kind: dobrushin}\n",
        "lower[0] = 0.5000000001 exceeds upper[0] = 0.5",
    ),
    (
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: box, lower: [0.6000000001, 0.4], upper: [0.7, 0.6]}\n"
        "objective: {kind: dobrushin}\n",
        "sum(lower) = 1.0000000001 > 1",
    ),
    (
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: point, prior: [1e400, 1]}\nobjective: {kind: dobrushin}\n",
        "prior must sum to 1",
    ),
    (
        f"alphabet: 4\nepsilon: 1\nprior_set: {{kind: point, prior: {PRIOR}}}\nobjective: {{kind: expected_loss, "
        f"loss: absolute, prior: {PRIOR}, max_vulnerability: {{at_most: 1e401, gain: "
        "[[1e400, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}}\n",
        "objective.max_vulnerability.gain: gain matrix entries must be at most 1e15 in absolute value",
    ),
    (
        "alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.1}\nobjective: {kind: expected_loss, "
        "loss: [[0, 1e16, 1], [1, 0, 1], [1, 1, 0]], prior: worst_case}\n",
        "objective.loss: loss matrix entries must be at most 1e15 in absolute value",
    ),
    (
        f"alphabet: 4\nepsilon: 1\nprior_set: {{kind: point, prior: {PRIOR}}}\nobjective: {{kind: min_vulnerability, "
        f"loss: absolute, prior: {PRIOR}, max_loss: 1e-400}}\n",
        "objective.max_loss: must exceed the least expected loss under this privacy constraint (0.21",
    ),
    (
        "alphabet: 4\nprivacy:\n  - {epsilon: 1, metric: {kind: grid, shape: [2, 2], spacing: 0."
        + "1" * 300
        + "}}\nobjective: {kind: expected_loss, loss: hamming}\n",
        "privacy[0]: the LDP level it implies, epsilon * max d: expression longer than 200 characters",
    ),
]


@pytest.mark.parametrize("text, message", REFUSED, ids=range(len(REFUSED)))
def test_out_of_range_numbers_are_refused_with_the_number_as_written(tmp_path, capsys, text, message):
    status, out = _solve(tmp_path, capsys, text)
    assert status == 2, out
    assert message in out and "internal error" not in out


DESIGNED = [
    # a radius of 2 or more: the ℓ1 ball is the whole simplex (LDP), so Dobrushin's optimum is Xi(1, 0)
    "alphabet: 2\nepsilon: 1\nprior_set: {kind: l1_ball, center: [0.5, 0.5], radius: 1e400}\nobjective: {kind: dobrushin}\n",
    # upper bounds of 1 or more: the box is the whole simplex
    "alphabet: 3\nepsilon: 1\nprior_set: {kind: box, lower: [0, 0, 0], upper: [1e400, 1e400, 1e400]}\n"
    "objective: {kind: dobrushin}\n",
    "alphabet: 3\nepsilon: 1\nprior_set: {kind: l1_ball, center: [0.2, 0.3, 0.5], radius: 1e400}\n"
    "objective: {kind: expected_loss, loss: hamming, prior: worst_case}\n",
    # caps that exclude nothing
    f"alphabet: 4\nepsilon: 1\nprior_set: {{kind: point, prior: {PRIOR}}}\nobjective: {{kind: min_vulnerability, "
    f"loss: absolute, prior: {PRIOR}, max_loss: 1e400}}\n",
    f"alphabet: 4\nepsilon: 1\nprior_set: {{kind: point, prior: {PRIOR}}}\nobjective: {{kind: expected_loss, "
    f"loss: absolute, prior: {PRIOR}, max_vulnerability: {{at_most: 1e400}}}}\n",
    # a distance of 1e400 constrains nothing (the path through symbol 2 does)
    "alphabet: 3\nprivacy:\n  - {epsilon: 1, metric: {kind: matrix, d: [[0, 1e400, 1], [1e400, 0, 1], [1, 1, 0]]}}\n"
    "objective: {kind: expected_loss, loss: absolute}\n",
    # epsilon = 0 at an infinite-looking distance still allows no change
    "alphabet: 4\nprivacy:\n  - {epsilon: 0, metric: {kind: grid, shape: [2, 2], spacing: 1e400}}\n"
    "objective: {kind: expected_loss, loss: hamming}\n",
    # masses below the doubles (found by a fuzzer: ZeroDivisionError, OverflowError, overflow warnings)
    "alphabet: 3\nepsilon: 3\nprior_set: {kind: min_mass, c: 1e-400}\noutput_size: 2\n"
    "objective: {kind: bayes_vulnerability, prior: uniform}\n",
    "alphabet: 3\nepsilon: 10000\nprior_set: {kind: hull, priors: [[5e-324, 0.5, 0.5], [0.2, 0.3, 0.5]]}\n"
    "objective: {kind: bayes_vulnerability, prior: uniform}\n",
    "alphabet: 3\nepsilon: 1\nprior_set: {kind: box, lower: [5e-324, 0, 0], upper: [0.5, 1e-400, 1]}\n"
    "objective: {kind: expected_loss, loss: hamming, prior: uniform}\n",
    "alphabet: 3\nepsilon: 0\nprior_set: {kind: min_mass, c: 5e-324}\noutput_size: 2\nobjective: {kind: dobrushin}\n",
    "alphabet: 3\nepsilon: 10000\nprior_set: {kind: min_mass, c: 5e-324}\n"
    "objective: {kind: expected_loss, loss: absolute, prior: worst_case}\n",
    "alphabet: 3\nepsilon: 1e-400\nprior_set: {kind: min_mass, c: 1e-400}\nobjective: {kind: dobrushin}\n",
    "alphabet: 3\nprivacy: [{epsilon: 1e400, metric: {kind: matrix, d: [[0, 3, 1], [5e-324, 0, 1], [1, 1, 0]]}}]\n"
    "objective: {kind: expected_loss, loss: absolute, prior: worst_case}\n",
]


def test_theorem_2_holds_with_c_and_epsilon_beyond_the_doubles():
    # Dobrushin paper, Theorem 2: for eps >= log(2/(Nc)) the optimum is 1; with c = 1e-400 that threshold is
    # about 921 nats, and 1e400 is far above it (the threshold's float division by zero was an internal error)
    result = design(
        {
            "alphabet": 3,
            "epsilon": "1e400",
            "prior_set": {"kind": "min_mass", "c": "1e-400"},
            "objective": {"kind": "dobrushin"},
        }
    )
    assert result.status.value == "optimal" and result.objective == 1.0
    assert result.certificate.closed_form.name.startswith("Theorem 2") and result.certificate.closed_form.value == 1.0


@pytest.mark.parametrize("text", DESIGNED, ids=range(len(DESIGNED)))
def test_numbers_beyond_the_doubles_that_exclude_nothing_are_designed_and_certified(tmp_path, capsys, text):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, out = _solve(tmp_path, capsys, text)
    assert status == 0, out
    assert "internal error" not in out
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


def test_the_same_optimum_with_c_below_the_doubles_as_with_c_zero(tmp_path, capsys):
    # Q_X(1e-400) lies between the simplex (c = 0, LDP) and Q_X(1e-300); the three optima agree to 1e-12
    values = []
    for c in ("0", "1e-400", "1e-300"):
        result = design(
            {
                "alphabet": 3,
                "epsilon": 3,
                "prior_set": {"kind": "min_mass", "c": c},
                "output_size": 2,
                "objective": {"kind": "bayes_vulnerability", "prior": "uniform"},
            }
        )
        assert result.status.value == "optimal"
        values.append(result.objective)
    assert max(values) - min(values) < 1e-12


def test_a_radius_beyond_the_doubles_is_the_simplex():
    # Dobrushin paper, Proposition 1 and Theorem 3 at c = 0: over the simplex (ε-LDP) the optimum is
    # (e^ε − 1)/(e^ε + 1); an ℓ1 ball of radius ≥ 2 around any prior is the simplex
    import math

    spec = {
        "alphabet": 3,
        "epsilon": 1,
        "prior_set": {"kind": "l1_ball", "center": [0.2, 0.3, 0.5], "radius": "1e400"},
        "objective": {"kind": "dobrushin"},
    }
    result = design(spec)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx((math.e - 1) / (math.e + 1), rel=1e-9)


def test_an_epsilon_at_a_distance_of_zero_times_infinity_leaves_a_constant_kernel():
    # ε = 0 under any metric: every pair of rows must be equal, so the kernel is constant and the Hamming loss
    # under the uniform prior is 1 − 1/N at best (N = 4: 3/4)
    spec = {
        "alphabet": 4,
        "privacy": [{"epsilon": 0, "metric": {"kind": "grid", "shape": [2, 2], "spacing": "1e400"}}],
        "objective": {"kind": "expected_loss", "loss": "hamming"},
    }
    result = design(spec)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(0.75, rel=1e-12)


@pytest.mark.parametrize(
    "value, text",
    [
        (Fraction(1, 4), "0.25"),
        (Fraction("0.2500000001"), "0.2500000001"),
        (Fraction(10) ** 400, "1e+400"),
        (-Fraction(1, 10**400), "-1e-400"),
        (Fraction(1, 3), "1/3"),
        (Fraction(100), "100"),
        (Fraction(10**16), "1e+16"),
        (Fraction(0), "0"),
    ],
)
def test_shown_number_is_the_value_itself(value, text):
    assert shown_number(value) == text
    if "/" not in text:
        assert Fraction(text.replace("e+", "e")) == value


KERNEL = "0.5,1/3,1/6\n0.25,1/3,5/12\n0,1/3,2/3\n"
TOOLS = [
    # a prior mass of 5e-324 makes the worst PML ratio about 1e323, beyond the doubles: the exact verdict stands
    (["verify", "--prior-set", "min_mass:5e-324", "--epsilon", "1"], 1, "NOT PRIVATE"),
    (["verify", "--prior-set", "point:5e-324,0.5,0.5", "--epsilon", "1e400"], 0, "PRIVATE"),
    # c = 1e-400 is 0.0 in doubles: -log c was a math domain error reported as bad input
    (["analyze", "--prior-set", "min_mass:1e-400", "--epsilon", "1"], 0, "Proposition 2"),
    # delta = 1e-400 is in (0, 1): the envelope bound min{L + log 1/delta, eps} takes log delta exactly
    (["analyze", "--prior-set", "point:0.2,0.3,0.5", "--delta", "1e-400"], 0, "Theorem 3 (envelopes): eps_c(1e-400)"),
]


@pytest.mark.parametrize("args, status, needle", TOOLS, ids=range(len(TOOLS)))
def test_tools_take_masses_and_deltas_below_the_doubles(tmp_path, capsys, args, status, needle):
    path = tmp_path / "k.csv"
    path.write_text(KERNEL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = main([args[0], str(path), *args[1:]])
    captured = capsys.readouterr()
    assert got == status, captured.err
    assert needle in captured.out and "internal error" not in captured.err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    # the exact ratio and masses of 5e-324 are fractions of ~650 and ~325 characters: the text report abridges them
    assert max(len(line) for line in captured.out.splitlines()) < 250
