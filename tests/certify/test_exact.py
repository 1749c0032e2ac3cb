"""Exact mechanisms: rational kernels on a 2^-k grid, the verifier, lossless export.

The privacy check here is written independently of mechdesign.certify.exact: plain Fractions,
explicit prior vertices (or the greedy exact minimiser for box and l1-ball sets), and
e^eps compared with mpmath at high precision.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign import design
from mechdesign.certify.exact import ExactKernel, to_grid, verify_kernel
from mechdesign.spec.errors import InputError
from mechdesign.release.kernel_io import read_kernel, write_kernel
from mechdesign.spec.models import Epsilon, MinMass, Simplex

F = Fraction


# ---------------------------------------------------------------- independent check
def min_expectation_independent(ps: dict, n: int, col: list[Fraction]) -> Fraction:
    """min over the prior set of Σ_x P(x) col[x], from first principles."""
    kind = ps["kind"]
    if kind == "simplex":
        return min(col)
    if kind == "min_mass":
        c = F(ps["c"])
        return min(sum(((c + (1 - n * c) * (i == j)) * col[i] for i in range(n)), F(0)) for j in range(n))
    if kind == "point":
        return sum((F(p) * k for p, k in zip(ps["prior"], col)), F(0))
    if kind == "hull":
        return min(sum((F(p) * k for p, k in zip(v, col)), F(0)) for v in ps["priors"])
    if kind == "box":  # start at lower, pour the remaining mass into the smallest entries first
        lower, upper = [F(v) for v in ps["lower"]], [F(v) for v in ps["upper"]]
        p = list(lower)
        rest = 1 - sum(lower)
        for i in sorted(range(n), key=lambda i: col[i]):
            add = min(rest, upper[i] - lower[i])
            p[i] += add
            rest -= add
        return sum((a * b for a, b in zip(p, col)), F(0))
    if kind == "l1_ball":  # move mass r/2 from the largest entries to the smallest one
        center, budget = [F(v) for v in ps["center"]], F(ps["radius"]) / 2
        p = list(center)
        j = min(range(n), key=lambda i: col[i])
        for i in sorted(range(n), key=lambda i: -col[i]):
            if i == j or budget <= 0:
                continue
            move = min(budget, p[i])
            p[i] -= move
            p[j] += move
            budget -= move
        return sum((a * b for a, b in zip(p, col)), F(0))
    raise AssertionError(kind)


def independently_private(rows: list[list[Fraction]], ps: dict, bound: Fraction) -> bool:
    n, m = len(rows), len(rows[0])
    if any(v < 0 for row in rows for v in row) or any(sum(row) != 1 for row in rows):
        return False
    for y in range(m):
        col = [row[y] for row in rows]
        if max(col) == 0:
            continue
        low = min_expectation_independent(ps, n, col)
        if low <= 0 or max(col) > bound * low:
            return False
    return True


def exp_of(eps_text: str):
    """e^eps at 600 bits, for eps a fraction 'p/q' or 'log(p/q)'."""
    with mpmath.workprec(600):
        if eps_text.startswith("log("):
            q = F(eps_text[4:-1])
            return mpmath.mpf(q.numerator) / q.denominator
        q = F(eps_text)
        return mpmath.exp(mpmath.mpf(q.numerator) / q.denominator)


def bound_is_below_exp(bound: Fraction, eps_text: str) -> bool:
    with mpmath.workprec(600):
        return mpmath.mpf(bound.numerator) / bound.denominator <= exp_of(eps_text) * (1 + mpmath.mpf(2) ** -500)


def assert_emitted_kernel_is_exact_and_private(result, ps: dict, eps: str, bits: int = 52) -> None:
    exact = result.exact_kernel
    assert exact is not None
    assert (1 << bits) % exact.denominator == 0, "entries on the 2^-k grid"
    rows = exact.fractions()
    # the float kernel the user receives is the exact kernel, and the JSON strings say the same
    assert all(F(float(v)) == q for frow, row in zip(result.kernel, rows) for v, q in zip(frow, row))
    js = result.to_json()
    assert [[F(s) for s in row] for row in js["kernel_exact"]] == rows
    bound = F(js["certificate"]["exp_epsilon_lower_bound"])
    assert bound_is_below_exp(bound, eps)
    assert result.certificate.feasible
    assert independently_private(rows, ps, bound)


# ------------------------------------------------------------ rational kernels
EXAMPLE1 = {
    "alphabet": ["no", "yes"],
    "epsilon": "log(2)",
    "prior_set": {"kind": "min_mass", "c": "1/5"},
    "objective": {"kind": "dobrushin"},
}


@pytest.mark.parametrize("bits", [52, 24, 12, 6, 2])
@pytest.mark.parametrize(
    "problem",
    [
        EXAMPLE1,
        {
            "alphabet": 6,
            "epsilon": 1,
            "prior_set": {"kind": "simplex"},
            "objective": {"kind": "expected_loss", "loss": "absolute"},
        },
        {
            "alphabet": 5,
            "epsilon": "log(3)",
            "prior_set": {"kind": "min_mass", "c": "1/20"},
            "objective": {"kind": "expected_loss", "loss": "hamming"},
        },
        {
            "alphabet": 4,
            "epsilon": "0.7",
            "prior_set": {"kind": "box", "lower": [0.1, 0.1, 0.1, 0.1], "upper": [0.5, 0.5, 0.5, 0.5]},
            "objective": {"kind": "dobrushin"},
            "output_size": 3,
        },
    ],
    ids=["example1", "ldp-abs", "minmass-hamming", "box-dobrushin"],
)
def test_rational_kernel_on_coarse_grid_is_exactly_private(problem, bits):
    spec = dict(problem, solver={"denominator_bits": bits})
    result = design(spec)
    assert_emitted_kernel_is_exact_and_private(result, spec["prior_set"], str(spec["epsilon"]), bits)
    cost = result.certificate.rounding_cost
    lp = result.certificate.lp_objective
    assert result.to_json()["certificate"]["rounding_cost"] == pytest.approx(cost)
    if bits == 52:
        assert abs(cost) <= 1e-9 * max(1.0, abs(lp))
        assert result.is_ok
    else:
        assert cost >= -1e-9  # rounding never beats the LP optimum
        assert result.status.value in ("optimal", "suboptimal")
        if bits >= 24:
            assert cost <= 1e-5 * max(1.0, abs(lp))


def test_coarse_grid_status_follows_the_emitted_kernels_gap():
    # the README's gap rule (gap > 1e-6 max(1, |objective|) -> suboptimal) holds on every grid
    for bits, expected in ((8, "suboptimal"), (2, "suboptimal"), (52, "optimal")):
        result = design(dict(EXAMPLE1, solver={"denominator_bits": bits}))
        gap = result.certificate.gap
        assert (gap > 1e-6 * max(1.0, abs(result.objective))) == (expected == "suboptimal")
        assert result.status.value == expected and result.is_ok == (expected == "optimal")
        assert result.exact_kernel.denominator <= 2**bits


def test_denominator_bits_is_validated():
    from mechdesign.spec.errors import SpecError

    for bad in (0, 53, "x"):
        with pytest.raises(SpecError, match="solver.denominator_bits"):
            design(dict(EXAMPLE1, solver={"denominator_bits": bad}))


def test_to_grid_coarse_moves_entries_by_less_than_one_unit():
    rng = np.random.default_rng(3)
    K = rng.dirichlet(np.ones(9), size=7)
    for bits in (3, 10, 30):
        g = to_grid(K, bits)
        assert g.denominator == 1 << bits and g.is_stochastic()
        assert np.abs(g.to_float() - K).max() < 2.0**-bits + 1e-15


# ------------------------------------------------------------------- verifier
def _largest_double_with(pred, start: float) -> float:
    """The largest double a with pred(a), searching down and up from ``start`` by ulps."""
    a = start
    for _ in range(64):  # start is within a few ulps of the boundary
        if pred(a):
            break
        a = math.nextafter(a, 0)
    while not pred(a):
        a = math.nextafter(a, 0)
    while pred(math.nextafter(a, 1)):
        a = math.nextafter(a, 1)
    return a


def _symmetric(a: float) -> ExactKernel:
    b = 1.0 - a  # exact for a in [1/2, 1]
    assert F(a) + F(b) == 1
    return ExactKernel.from_fractions([[F(a), F(b)], [F(b), F(a)]])


def _example1_private(a: float) -> bool:
    # c = 1/5, eps = log 2: a / (c + (1 - 2c)(1 - a)) <= 2  <=>  a <= 8/11 (exactly tight at the optimum)
    return F(a) <= F(8, 11)


def _rr_private(a: float) -> bool:
    # randomized response under LDP at eps = 1: a / (1 - a) <= e, e irrational
    with mpmath.workprec(300):
        x = mpmath.mpf(F(a).numerator) / F(a).denominator
        return x / (1 - x) <= mpmath.e


@pytest.mark.parametrize(
    "prior_set, eps, private, near",
    [
        (MinMass(kind="min_mass", c=F(1, 5)), Epsilon(text="log(2)", value=math.log(2)), _example1_private, 8 / 11),
        (Simplex(kind="simplex"), Epsilon(text="1", value=1.0), _rr_private, math.e / (1 + math.e)),
    ],
    ids=["example1-log2", "rr-ldp-eps1"],
)
def test_verifier_accepts_the_boundary_kernel_and_rejects_one_ulp_over(prior_set, eps, private, near):
    a = _largest_double_with(private, near)
    ok = verify_kernel(_symmetric(a), prior_set, eps)
    over = verify_kernel(_symmetric(math.nextafter(a, 1)), prior_set, eps.text)
    assert ok.private and ok.decided
    assert not over.private and over.decided
    assert over.check.worst_ratio > over.check.bound
    assert over.check.worst_prior is not None


def test_verifier_reports_non_stochastic_and_negative_kernels():
    ps = Simplex(kind="simplex")
    K = ExactKernel.from_fractions([[F(1, 2), F(1, 2)], [F(3, 5), F(1, 2)]])
    v = verify_kernel(K, ps, "1")
    assert not v.private and v.bad_rows == [1]
    K = ExactKernel.from_fractions([[F(3, 2), F(-1, 2)], [F(1, 2), F(1, 2)]])
    v = verify_kernel(K, ps, "5")
    assert not v.private and v.negative == [(0, 1)]


def test_design_certificate_and_verifier_agree():
    result = design(EXAMPLE1)
    v = verify_kernel(result.exact_kernel, result.spec.prior_set, result.spec.epsilon)
    assert v.private
    assert v.check.worst_ratio == result.certificate.worst_ratio


# ---------------------------------------------------------------- property test
_EPS = st.fractions(min_value=0, max_value=3, max_denominator=20)


@st.composite
def random_specs(draw):
    n = draw(st.integers(2, 5))
    kind = draw(st.sampled_from(["simplex", "min_mass", "point", "hull", "box", "l1_ball"]))

    def dist():
        w = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
        return [str(F(v, sum(w))) for v in w]

    if kind == "simplex":
        ps = {"kind": "simplex"}
    elif kind == "min_mass":
        ps = {"kind": "min_mass", "c": str(F(draw(st.integers(0, 10)), 10 * n))}
    elif kind == "point":
        ps = {"kind": "point", "prior": dist()}
    elif kind == "hull":
        ps = {"kind": "hull", "priors": [dist() for _ in range(draw(st.integers(1, 3)))]}
    elif kind == "box":
        lo = F(draw(st.integers(0, 10)), 10 * n)
        hi = max(lo + F(draw(st.integers(1, 10)), 10), F(1, n))  # sum(lower) <= 1 <= sum(upper)
        ps = {"kind": "box", "lower": [str(lo)] * n, "upper": [str(min(hi, F(1)))] * n}
    else:
        ps = {"kind": "l1_ball", "center": dist(), "radius": str(F(draw(st.integers(0, 10)), 10))}
    if draw(st.booleans()):
        objective = {"kind": "dobrushin"}
        m = draw(st.integers(2, 3))
    else:
        objective = {
            "kind": "expected_loss",
            "loss": draw(st.sampled_from(["hamming", "absolute", "squared"])),
            "prior": draw(st.sampled_from(["uniform", "worst_case"])),
        }
        m = n
    eps = draw(_EPS)
    bits = draw(st.sampled_from([52, 52, 20, 8]))
    return {
        "alphabet": n,
        "epsilon": str(eps),
        "prior_set": ps,
        "objective": objective,
        "output_size": m,
        "solver": {"denominator_bits": bits},
    }, eps


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_specs())
def test_no_emitted_kernel_fails_the_independent_exact_check(case):
    spec, eps = case
    result = design(spec)
    if result.exact_kernel is None:
        assert result.status.value != "optimal"
        return
    assert_emitted_kernel_is_exact_and_private(result, spec["prior_set"], str(eps), spec["solver"]["denominator_bits"])
    if spec["solver"]["denominator_bits"] == 52 and result.is_ok:
        assert abs(result.certificate.rounding_cost) <= 1e-9 * max(1.0, abs(result.certificate.lp_objective))


# --------------------------------------------------------------------- export
def _kernels():
    rng = np.random.default_rng(7)
    yield to_grid(rng.dirichlet(np.ones(5), size=4))
    yield to_grid(rng.dirichlet(np.ones(3), size=3), 6)
    yield design(EXAMPLE1).exact_kernel
    yield ExactKernel.from_fractions([[F(1, 3), F(2, 3)], [F(1, 7), F(6, 7)]])


@pytest.mark.parametrize("suffix", [".csv", ".json", ".npy"])
def test_kernels_round_trip_without_loss(tmp_path, suffix):
    for i, K in enumerate(_kernels()):
        path = tmp_path / f"k{i}{suffix}"
        if suffix == ".npy" and K.denominator in (3 * 7, 21):
            with pytest.raises(InputError, match="not all doubles"):
                write_kernel(K, path)
            continue
        write_kernel(K, path)
        back = read_kernel(path)
        assert back.fractions() == K.fractions()
        assert back.shape == K.shape


def test_json_written_by_solve_reads_back_exactly(tmp_path):
    result = design(EXAMPLE1)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result.to_json()))
    assert read_kernel(path).fractions() == result.exact_kernel.fractions()
    # a JSON with floats only is read as the exact doubles
    path.write_text(json.dumps({"kernel": result.kernel.tolist()}))
    assert read_kernel(path).fractions() == result.exact_kernel.fractions()


# ------------------------------------------------------------------ catalogue
def _catalogue():
    from pathlib import Path

    return sorted((Path(__file__).resolve().parents[2] / "problems").glob("*.yaml"))


@pytest.mark.parametrize("bits", [52, 16])
@pytest.mark.parametrize("path", _catalogue(), ids=lambda p: p.stem)
def test_every_catalogue_kernel_verifies_exactly(path, bits):
    import sympy
    import yaml

    data = yaml.safe_load(path.read_text())
    data.setdefault("solver", {})["denominator_bits"] = bits
    result = design(data)
    assert result.exact_kernel is not None, f"{path.name}: no kernel ({result.status.value})"  # a design always has one
    spec = result.spec
    bound = F(result.to_json()["certificate"]["exp_epsilon_lower_bound"])
    e_eps = sympy.exp(sympy.sympify(spec.epsilon.text, rational=True)).evalf(200)
    assert sympy.Rational(bound.numerator, bound.denominator) <= e_eps * (1 + sympy.Rational(1, 10**150))
    assert independently_private(result.exact_kernel.fractions(), spec.prior_set.model_dump(mode="json"), bound)
    assert verify_kernel(result.exact_kernel, spec.prior_set, spec.epsilon).private
    if bits == 52 and result.certificate.rounding_cost is not None:
        assert abs(result.certificate.rounding_cost) <= 1e-9 * max(1.0, abs(result.certificate.lp_objective))


# ------------------------------------------------------------ exact e^eps
@pytest.mark.parametrize(
    "text, value",
    [
        ("log(3)", F(3)),
        ("0", F(1)),
        ("log(10/3)", F(10, 3)),
        ("2*log(2) - log(3)", F(4, 3)),
        ("-log(1/3)", F(3)),
        ("log(2)*3", F(8)),
        ("1", None),
        ("log(2)/2", None),
        ("log(e)", None),
        ("sqrt(log(4))", None),
        ("log(3)*log(3)", None),
    ],
)
def test_exp_exact_recognises_rational_e_to_the_eps(text, value):
    from mechdesign.spec.expr import exp_exact, exp_lower_bound, exp_upper_bound

    assert exp_exact(text) == value
    lo, hi = exp_lower_bound(text), exp_upper_bound(text)
    assert lo <= hi and (value is None or lo <= value == hi)


def test_randomized_response_at_log3_is_exactly_tight_and_verified():
    K = ExactKernel.from_fractions([[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]])
    v = verify_kernel(K, Simplex(kind="simplex"), "log(3)")
    assert v.private and v.check.worst_ratio == 3 == v.check.bound
    assert not verify_kernel(K, Simplex(kind="simplex"), "log(3) - 1/10**30").private
