"""Small specs with extreme numbers designed end to end through the CLI: every one exits 0, 1 or 2 (never an
internal error, 3) and emits no RuntimeWarning (an overflow or a division by zero on the way is a bug even
when the exact check then passes). The numbers are those that found bugs before: beyond the doubles (1e400,
exp(800)), below them (1e-400, the subnormal 5e-324), just past a rule (c = 0.2500000001 with N = 4 is above
1/N; N = 3 here, where it is allowed), and beyond HiGHS's coefficient range (1e16)."""

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign.cli.main import main

NUMBERS = ["1e400", "-1e400", "1e-400", "5e-324", "0", "1", "0.5", "1/3", "2", "1e15", "1e16", "-0.0"]
NUMBERS += ["0.2500000001", "exp(800)", "log(2)", "10000", "1e308", "3"]
OBJECTIVES = [
    "{kind: dobrushin}",
    "{kind: expected_loss, loss: hamming, prior: uniform}",
    "{kind: expected_loss, loss: absolute, prior: worst_case}",
    "{kind: expected_loss, loss: squared, prior: [V, V, V]}",
    "{kind: expected_loss, loss: [[0, V, 1], [1, 0, V], [V, 1, 0]], prior: uniform}",
    "{kind: mutual_information, prior: uniform}",
    "{kind: bayes_vulnerability, prior: uniform}",
    "{kind: min_vulnerability, loss: absolute, prior: uniform, max_loss: V}",
    "{kind: expected_loss, loss: absolute, prior: uniform, max_vulnerability: {at_most: V}}",
    "{kind: f_divergence, f: kl, priors: [[V, 0.5, 0.5], [0.2, 0.3, 0.5]]}",
    "{kind: f_divergence, f: hellinger, priors: [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]]}",
    "{kind: mutual_information, prior: [V, V, V]}",
]
PRIOR_SETS = [
    "{kind: min_mass, c: V}",
    "{kind: simplex}",
    "{kind: point, prior: [V, V, V]}",
    "{kind: box, lower: [V, 0, 0], upper: [V, V, 1]}",
    "{kind: l1_ball, center: [0.2, 0.3, 0.5], radius: V}",
    "{kind: hull, priors: [[V, 0.5, 0.5], [0.2, 0.3, 0.5]]}",
]


@st.composite
def specs(draw):
    def fill(template: str) -> str:
        return "".join(draw(st.sampled_from(NUMBERS)) if ch == "V" else ch for ch in template)

    objective = fill(draw(st.sampled_from(OBJECTIVES)))
    if draw(st.booleans()) and draw(st.booleans()):  # a metric constraint instead of a prior set
        privacy = fill("privacy: [{epsilon: V, metric: {kind: matrix, d: [[0, V, 1], [V, 0, 1], [1, 1, 0]]}}]")
        return f"alphabet: 3\n{privacy}\nobjective: {objective}\n"
    output_size = draw(st.sampled_from(["", "output_size: 2\n", "output_size: 7\n"]))
    eps, prior_set = draw(st.sampled_from(NUMBERS)), fill(draw(st.sampled_from(PRIOR_SETS)))
    return (
        f"alphabet: 3\nepsilon: {eps}\nprior_set: {prior_set}\n{output_size}objective: {objective}\n"
        "solver: {time_limit: 20}\n"
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs())
def test_extreme_numbers_never_end_in_an_internal_error_or_a_warning(tmp_path, capsys, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(["solve", str(path), "-q"])
    err = capsys.readouterr().err
    assert status in (0, 1, 2), (text, err)
    assert "internal error" not in err, (text, err)
    runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not runtime, (text, runtime)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, (text, err)
