"""Every number in a spec means exactly what its text says; huge ε is the ε = ∞ problem; inputs are
checked for size, depth and type before any heavy work; NumPy values are accepted.

Expected values come from mpmath at 60 digits (e^ε of
the decimal as written), from the Dobrushin paper (Remark 1, eq. (4)), or from an exact check
written here (vertices listed by hand, Fractions), never from mechdesign.certify.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from mechdesign import design
from mechdesign.cli.main import main
from mechdesign.spec.errors import SpecError
from mechdesign.spec.models import Spec, load_spec
from mechdesign.theory import bounds

LN10_BELOW = "2.30258509299404568401799145468436420760"
"""38 digits just below ln 10 = 2.302585092994045684017991454684364207601…; its nearest double is above ln 10."""


def _e_to(text: str) -> mpmath.mpf:
    """e^ε for the decimal text, at 60 significant digits (independent of mechdesign)."""
    with mpmath.workdps(60):
        return mpmath.exp(mpmath.mpf(text))


def _frac_to_mpf(q: Fraction) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.mpf(q.numerator) / q.denominator


def _vertices(kind: str, n: int, c: Fraction = Fraction(0)) -> list[list[Fraction]]:
    """Vertices of the simplex / Q_X(c) (Dobrushin paper, Lemma 4: c·1 + (1 − Nc)e_x), by hand."""
    if kind == "simplex":
        c = Fraction(0)
    return [[c + (1 - n * c) * (i == j) for i in range(n)] for j in range(n)]


def _worst_ratio(kernel_exact: list[list[str]], vertices) -> Fraction | float:
    """max_y max_x K_x(y) / min_P P·K(:,y) over the listed vertices (inf if some P sees y as impossible)."""
    K = [[Fraction(v) for v in row] for row in kernel_exact]
    worst: Fraction | float = Fraction(0)
    for y in range(len(K[0])):
        col = [row[y] for row in K]
        if max(col) == 0:
            continue
        low = min(sum(p * k for p, k in zip(P, col)) for P in vertices)
        ratio = math.inf if low == 0 else max(col) / low
        worst = ratio if ratio > worst else worst
    return worst


# ------------------------------------------------------------------ item 1: ε as written
def test_the_example_decimal_lies_below_ln10_and_its_double_above():
    """The premise of exact decimals: rounding to a double moves ε past ln 10 (mpmath, 60 digits)."""
    with mpmath.workdps(60):
        assert mpmath.mpf(LN10_BELOW) < mpmath.log(10)
        assert mpmath.mpf(float(LN10_BELOW)) > mpmath.log(10)
    assert _e_to(LN10_BELOW) < 10


@pytest.mark.parametrize(
    "written",
    [f'"{LN10_BELOW}"', LN10_BELOW, f'"2*{Fraction(LN10_BELOW) / 2}"', '"2*1.15129254649702284200899572734218210380"'],
)
def test_38_digit_epsilon_gives_a_kernel_private_at_the_epsilon_written(tmp_path, capsys, written):
    """Quoted, unquoted (a YAML float) and inside an expression: worst ratio < e^ε of the text."""
    text = f"alphabet: 5\nepsilon: {written}\nprior_set: {{kind: simplex}}\nobjective: {{kind: expected_loss}}\n"
    spec = load_spec(text)
    result = design(spec)
    assert result.is_ok
    true_e = _e_to(LN10_BELOW)  # every form written above is exactly this decimal
    ratio = _worst_ratio(result.exact_kernel.strings(), _vertices("simplex", 5))
    assert ratio != math.inf and _frac_to_mpf(ratio) <= true_e
    assert _frac_to_mpf(result.certificate.exp_epsilon_lower_bound) <= true_e

    # verify agrees, and the E it prints is <= e^eps (no false "E = 10.000000000000004")
    spec_path, kernel_path = tmp_path / "spec.yaml", tmp_path / "k.json"
    spec_path.write_text(text)
    kernel_path.write_text(json.dumps(result.exact_kernel.strings()))
    status = main(["verify", str(kernel_path), "--spec", str(spec_path)])
    out = capsys.readouterr().out
    assert status == 0 and "PRIVATE" in out
    printed = out.split("E = ")[1].split(" ")[0]
    assert _frac_to_mpf(Fraction(printed)) <= true_e


def test_a_kernel_tight_at_the_rounded_double_is_rejected_at_the_decimal_written(tmp_path, capsys):
    """Randomized response with ratio exactly the double e^fl(ε) > 10 > e^ε: NOT PRIVATE (exit 1)."""
    ratio = Fraction(10) + Fraction(1, 10**14)  # between e^ε (< 10) and e^(double of ε) (≈ 10 + 4.4e-15·10)
    assert _frac_to_mpf(ratio) > _e_to(LN10_BELOW)
    p = ratio / (ratio + 1)  # binary randomized response: ratio p/(1-p) over the simplex
    kernel = [[str(p), str(1 - p)], [str(1 - p), str(p)]]
    path = tmp_path / "k.json"
    path.write_text(json.dumps(kernel))
    status = main(["verify", str(path), "--prior-set", "simplex", "--epsilon", LN10_BELOW])
    assert status == 1 and "NOT PRIVATE" in capsys.readouterr().out


@pytest.mark.parametrize(
    "field,yaml_value,exact",
    [
        ("c", "0.1000000000000000000000001", Fraction("0.1000000000000000000000001")),
        ("c", "0.05", Fraction(1, 20)),
        ("c", "1e-2", Fraction(1, 100)),
    ],
)
def test_yaml_decimals_are_exact_rationals_of_their_text(field, yaml_value, exact):
    spec = load_spec(
        f"alphabet: 3\nepsilon: 1\nprior_set: {{kind: min_mass, {field}: {yaml_value}}}\n"
        "objective: {kind: dobrushin}\n"
    )
    assert spec.prior_set.c == exact


def test_a_decimal_c_just_above_one_third_is_rejected():
    """c = 0.33333333333333333334 > 1/3 = 1/N; its double 0.3333333333333333 is below 1/3."""
    assert Fraction(0.33333333333333333334) < Fraction(1, 3) < Fraction("0.33333333333333333334")
    with pytest.raises(SpecError, match="prior_set.c"):
        load_spec(
            "alphabet: 3\nepsilon: 1\nprior_set: {kind: min_mass, c: 0.33333333333333333334}\n"
            "objective: {kind: dobrushin}\n"
        )


def test_box_bounds_and_prior_masses_are_exact():
    spec = load_spec(
        "alphabet: 2\nepsilon: 1\nprior_set: {kind: box, lower: [0.30000000000000000001, 0.2], "
        "upper: [0.7, 0.69999999999999999999]}\nobjective: {kind: dobrushin}\n"
    )
    assert spec.prior_set.lower[0] == Fraction("0.30000000000000000001")
    assert spec.prior_set.upper[1] == Fraction("0.69999999999999999999")


def test_python_floats_mean_their_repr():
    """Documented rule: a float passed from Python is the shortest decimal that reads back as it."""
    spec = load_spec(
        {
            "alphabet": 3,
            "epsilon": 0.1,
            "prior_set": {"kind": "min_mass", "c": 0.05},
            "objective": {"kind": "dobrushin"},
        }
    )
    assert spec.epsilon.text == "0.1" and spec.prior_set.c == Fraction(1, 20)


# ------------------------------------------------------------------ item 6: large ε
LARGE = ["1e4", "9900", "1e10", "1e300", "exp(700)", "pi**100", "exp(30)", "exp(800)", "1e400", "exp(exp(100))"]


@pytest.mark.parametrize("eps", LARGE)
@pytest.mark.parametrize("kind,c", [("simplex", 0), ("min_mass", Fraction(1, 3)), ("min_mass", Fraction(1, 20))])
@pytest.mark.parametrize("objective", ["expected_loss", "dobrushin", "mutual_information", "bayes_vulnerability"])
def test_large_epsilon_is_certified_and_private(eps, kind, c, objective):
    ps = {"kind": "simplex"} if kind == "simplex" else {"kind": kind, "c": str(c)}
    result = design({"alphabet": 3, "epsilon": eps, "prior_set": ps, "objective": {"kind": objective}})
    assert result.is_ok, (result.status, result.certificate)
    ratio = _worst_ratio(result.exact_kernel.strings(), _vertices(kind, 3, Fraction(c)))
    # private: every ratio finite (the zero pattern) and far below e^eps (eps >= 9900 here)
    assert ratio != math.inf and math.log(ratio) < 9900
    assert len(str(result.certificate.exp_epsilon_lower_bound)) < 100


def test_one_over_1e999_is_accepted_and_gives_the_constant_kernel():
    """ε = 10^-999 > 0 rounds to the double 0.0 for the LP: the LP designs for ε = 0 (stricter)."""
    result = design(
        {"alphabet": 3, "epsilon": "1/1e999", "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
    )
    assert result.certificate.feasible
    rows = {tuple(r) for r in result.exact_kernel.strings()}
    assert len(rows) == 1  # every row equal: zero leakage


def test_kl_divergence_at_large_epsilon_has_a_finite_corollary1_bound():
    """Previously OverflowError at ε ≥ 710 (kl, min_mass, c > 0)."""
    spec = {
        "alphabet": 3,
        "epsilon": 745,
        "prior_set": {"kind": "min_mass", "c": 0.1},
        "objective": {"kind": "f_divergence", "f": "kl", "priors": [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]},
    }
    result = design(spec)
    assert result.certificate.feasible
    assert result.certificate.closed_form is not None and math.isfinite(result.certificate.closed_form.value)


@pytest.mark.parametrize("eps", [745.0, 1000.0, 1e10])
def test_xi_at_c_equal_one_over_n_is_one(eps):
    """Remark 1 (Dobrushin paper): c = 1/N gives Ξ = min{e^ε − 1, 1} = 1 for ε ≥ log 2 (was ZeroDivisionError)."""
    assert bounds.xi(eps, 1 / 3, 3) == 1.0
    assert bounds.xi(eps, 0.5, 2) == 1.0


def test_corollary1_at_large_epsilon_matches_log_space_formula():
    """Ξ·log((1 − Nc)e^ε + 1)·tv with Ξ = 1 (Theorem 2) and log((1−Nc)e^ε + 1) = ε + log(1 − Nc) + o(1)."""
    got = bounds.corollary1_kl_bound(1000.0, 0.1, 3, 0.5)
    assert got == pytest.approx(0.5 * (1000.0 + math.log(0.7)), rel=1e-15)


@pytest.mark.parametrize("eps", ["9900", "1e4", "1e10"])
def test_solve_json_works_at_large_epsilon(tmp_path, eps):
    path = tmp_path / "spec.yaml"
    path.write_text(
        f"alphabet: 4\nepsilon: {eps}\nprior_set: {{kind: min_mass, c: 0.05}}\nobjective: {{kind: expected_loss}}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mechdesign.cli", "solve", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["certificate"]["feasible"] is True
    assert Fraction(data["certificate"]["exp_epsilon_lower_bound"]) >= 2 * 20 * 2**52  # the ratio cap


def test_verify_at_huge_epsilon_judges_the_zero_pattern(tmp_path, capsys):
    """At ε = 1e10 over the simplex the identity has an infinite ratio (P = e_0 sees output 1 as
    impossible): NOT PRIVATE; the randomized response with a tiny off-diagonal is private."""
    ident = tmp_path / "id.json"
    ident.write_text(json.dumps([["1", "0"], ["0", "1"]]))
    assert main(["verify", str(ident), "--prior-set", "simplex", "--epsilon", "1e10"]) == 1
    assert "NOT PRIVATE" in capsys.readouterr().out
    rr = tmp_path / "rr.json"
    tiny = Fraction(1, 10**30)
    rr.write_text(json.dumps([[str(1 - tiny), str(tiny)], [str(tiny), str(1 - tiny)]]))
    assert main(["verify", str(rr), "--prior-set", "simplex", "--epsilon", "1e10"]) == 0


# ------------------------------------------------------------------ item 8: size, depth, type
BASE = "alphabet: 3\nepsilon: 1\nprior_set: {kind: simplex}\nobjective: {kind: dobrushin}\n"


def _solve_text(tmp_path, capsys, text: str) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    status = main(["solve", str(path)])
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    "text,needle",
    [
        (BASE + "epsilon: 2\n", "duplicate key 'epsilon'"),
        (BASE.replace("alphabet: 3", "alphabet: !!set {a, b, c}"), "!!set"),
        (BASE.replace("alphabet: 3", "alphabet: !!python/tuple [a, b]"), "!!python/tuple"),
        (BASE.replace("alphabet: 3", "alphabet: [2024-01-01, b]"), "!!timestamp"),
        (BASE.replace("alphabet: 3", "alphabet: !!binary aGVsbG8="), "!!binary"),
        (BASE.replace("alphabet: 3", "alphabet: &a [x, y]") + "x: *a\n", "anchors and aliases"),
        ("alphabet: " + "[" * 5000 + "]" * 5000 + "\n" + BASE.split("\n", 1)[1], "limit 32"),
        ("".join("  " * i + f"k{i}:\n" for i in range(200)), "limit 32"),
        (BASE.replace("alphabet: 3", "alphabet: 100000"), "N must be <= 10000"),
        (BASE + "output_size: 2500000\n", "M must be <= 10000"),
        (
            BASE.replace("alphabet: 3", "alphabet: 5000").replace("dobrushin", "expected_loss"),
            "N*M must be <= 10000000",
        ),
    ],
)
def test_bad_shape_is_exit_2_with_one_line_naming_the_rule(tmp_path, capsys, text, needle):
    status, err = _solve_text(tmp_path, capsys, text)
    assert status == 2
    assert needle in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and "RecursionError" not in err


def test_documented_scale_n_equals_m_equals_3000_is_within_the_limits():
    spec = load_spec("alphabet: 3000\nepsilon: 1\nprior_set: {kind: simplex}\nobjective: {kind: expected_loss}\n")
    assert spec.n == 3000 and spec.m == 3000


def test_a_50_mb_file_is_refused_by_its_size_before_reading(tmp_path, capsys):
    path = tmp_path / "big.yaml"
    with open(path, "w") as f:
        f.write("# comment\n" * 1000)
        f.truncate(50 * 1024 * 1024)  # sparse: 50 MB on paper
    status = main(["solve", str(path)])
    err = capsys.readouterr().err
    assert status == 2 and "8388608 bytes" in err and str(50 * 1024 * 1024) in err


def test_deep_python_data_is_a_spec_error_not_recursion():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(SpecError, match="limit 32"):
        load_spec(
            {"alphabet": deep, "epsilon": 1, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
        )


# ------------------------------------------------------------------ NumPy
def test_numpy_scalars_and_arrays_are_accepted():
    loss = np.ones((3, 3)) - np.eye(3)
    result = design(
        {
            "alphabet": np.int64(3),
            "epsilon": np.float64(1.0),
            "prior_set": {"kind": "point", "prior": np.array([0.2, 0.3, 0.5])},
            "objective": {"kind": "expected_loss", "loss": loss, "prior": np.array([0.2, 0.3, 0.5])},
            "output_size": np.int64(3),
        }
    )
    plain = design(
        {
            "alphabet": 3,
            "epsilon": 1.0,
            "prior_set": {"kind": "point", "prior": [0.2, 0.3, 0.5]},
            "objective": {"kind": "expected_loss", "loss": loss.tolist(), "prior": [0.2, 0.3, 0.5]},
            "output_size": 3,
        }
    )
    assert result.is_ok and result.spec.epsilon.text == "1.0"
    assert result.spec.prior_set.prior == [Fraction(1, 5), Fraction(3, 10), Fraction(1, 2)]
    assert result.objective == plain.objective


def test_numpy_values_in_a_direct_spec():
    spec = Spec(
        alphabet=np.int64(3),
        epsilon=np.float64(0.5),
        prior_set={"kind": "min_mass", "c": np.float64(0.1)},
        objective={"kind": "dobrushin"},
    )
    assert spec.epsilon.text == "0.5" and spec.prior_set.c == Fraction(1, 10)


def test_a_linspace_sweep_matches_the_ldp_dobrushin_closed_form():
    """Simplex (ε-LDP): the best Dobrushin coefficient is (e^ε − 1)/(e^ε + 1) = tanh(ε/2)
    (Kairouz et al.; Dobrushin paper eq. (4))."""
    for eps in np.linspace(0.0, 2.0, 5):
        result = design(
            {"alphabet": 3, "epsilon": eps, "prior_set": {"kind": "simplex"}, "objective": {"kind": "dobrushin"}}
        )
        assert result.is_ok
        assert result.objective == pytest.approx(math.tanh(float(eps) / 2), abs=1e-9)


def test_remark2_and_proposition2_at_large_epsilon_take_their_limits():
    """c = 0 (LDP): Remark 2's column is e^ε/(1 + e^ε), 1/(1 + e^ε) → (1, 0); Proposition 2's
    Γ_max = e^ε + 1 → ∞ and Γ_min → 0 (both overflowed before at ε ≥ 710)."""
    assert bounds.remark2_column(1000.0, 0.0, 3, 1) == [1.0, 0.0, 0.0]
    assert bounds.proposition2_gamma_bounds(1000.0, 0.0, 3) == (math.inf, 0.0)
    # and at an ordinary ε they are the paper's formulas, written out here
    e = math.exp(1.0)
    assert bounds.remark2_column(1.0, 0.1, 4, 2)[0] == pytest.approx(e * (1 - 0.2) / (1 + e * (1 - 0.4)), rel=1e-15)
    assert bounds.proposition2_gamma_bounds(1.0, 0.1, 3)[0] == pytest.approx((1 - 0.3) * e + 1, rel=1e-15)
