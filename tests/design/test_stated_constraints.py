"""Every constraint a spec states holds exactly on the emitted kernel, and the certificate has one verdict each.

A loss cap (``min_vulnerability``'s ``max_loss``) and a vulnerability cap (``expected_loss``'s
``max_vulnerability``) are checked in rational arithmetic like privacy; a kernel that misses one is repaired
exactly (the loss cap by mixing with the least-loss private kernel, the vulnerability cap with the constant
kernel), and when no repair exists the verdict names the failing constraint and ``feasible`` is false.

References, written here independently of mechdesign: the expected loss Σ_x P(x) Σ_y K_x(y) L(x, y) and the
posterior Bayes vulnerability Σ_y max_x P(x) K_x(y) in Fractions from their definitions; LDP checked pairwise
(K_x(y) ≤ e^ε K_x'(y)); at ε = 0 every private kernel is constant (rows equal), so the least loss is
min_y Σ_x P(x) L(x, y) and every kernel's vulnerability is at least max_x P(x) (the prior vulnerability).
"""

from __future__ import annotations

import json
from fractions import Fraction as F

import numpy as np

from mechdesign import design
from mechdesign.cli.report import render_result
from mechdesign.design import DesignResult, certify_design
from mechdesign.spec.models import load_spec

PRIOR = [F("0.24"), F("0.6"), F("0.1"), F("0.06")]


def _squared_loss(K, prior):
    return sum(prior[x] * K[x][y] * (x - y) ** 2 for x in range(len(K)) for y in range(len(K[0])))


def _bayes_vulnerability(K, prior):
    return sum(max(prior[x] * K[x][y] for x in range(len(K))) for y in range(len(K[0])))


def _min_vulnerability(max_loss, epsilon=0):
    return {
        "alphabet": 4,
        "epsilon": epsilon,
        "prior_set": {"kind": "simplex"},
        "objective": {
            "kind": "min_vulnerability",
            "loss": "squared",
            "prior": [str(p) for p in PRIOR],
            "max_loss": max_loss,
        },
    }


def test_loss_cap_at_the_least_loss_holds_exactly_and_is_named():
    """The audit's spec: the LP solver's kernel had expected loss 0.5800000003 > 0.58 = max_loss, certified
    feasible. At ε = 0 the least loss is the constant kernel on output 1: 0.24 + 0.1 + 0.06·4 = 0.58."""
    result = design(_min_vulnerability(0.58))
    K = result.exact_kernel.fractions()
    assert _squared_loss(K, PRIOR) <= F("0.58")
    assert all(row == K[0] for row in K)  # ε = 0: private means constant rows
    cert = result.certificate
    assert cert.feasible and cert.private
    [verdict] = cert.side_constraints
    assert verdict.field == "objective.max_loss" and verdict.feasible and verdict.value == _squared_loss(K, PRIOR)
    # its vulnerability is the prior vulnerability max P = 0.6, a lower bound for every kernel: optimal
    assert _bayes_vulnerability(K, PRIOR) == F("0.6") and result.status.value == "optimal"
    out = json.loads(result.dumps())["certificate"]["side_constraints"]
    assert out[0]["field"] == "objective.max_loss" and out[0]["feasible"] is True
    assert F(out[0]["value_exact"]) <= F("0.58")
    assert "objective.max_loss (exact check)" in render_result(result, width=200)


def _exp_lower(t: F) -> F:
    """A rational ≤ e^t for t ≥ 0: the Taylor sum to t^80/80! (within 1e-80 of it for t ≤ 2)."""
    term, total = F(1), F(0)
    for k in range(81):
        total += term
        term = term * t / (k + 1)
    return total


def _certify(spec_dict, K):
    spec = load_spec(spec_dict)
    return certify_design(spec, np.asarray(K, float), lp_objective=None, dual=None, sense=1), spec


def test_loss_cap_missed_by_a_little_is_repaired_by_a_small_mix():
    """A constant kernel on outputs 1 and 2 whose loss exceeds max_loss = 0.8 by about 1e-10: mixing with the
    least-loss private kernel (output 1, loss 0.58) restores it with a weight of about 1e-10 / 0.22."""
    a = (0.8 - 0.58) / 1.04 + 1e-10  # output 2 costs 0.24·4 + 0.6 + 0 + 0.06 = 1.62 = 0.58 + 1.04
    row = [0.0, 1 - a, a, 0.0]
    (exact, _, _, cert, _), _ = _certify(_min_vulnerability("0.8"), [row] * 4)
    K = exact.fractions()
    assert _squared_loss(K, PRIOR) <= F("0.8")
    assert all(r == K[0] for r in K)
    assert cert.feasible and cert.side_constraints[0].feasible
    assert 0 < cert.repair_weight < F(1, 10**8)
    assert "least-loss" in cert.side_constraints[0].repair


def test_loss_cap_below_the_least_loss_fails_by_name_and_feasible_is_false():
    """max_loss = 0.5 is below the least loss 0.58 of every private kernel: no repair exists, the kernel stays
    private, and the certificate says that the loss cap fails."""
    (exact, kernel, objective, cert, ok), spec = _certify(_min_vulnerability("0.5"), [[0, 1, 0, 0]] * 4)
    assert not ok and not cert.feasible and cert.private
    [verdict] = cert.side_constraints
    assert verdict.field == "objective.max_loss" and not verdict.feasible
    assert verdict.value == F("0.58") and verdict.limit == F("0.5")
    from mechdesign.lp.solve import Status
    from mechdesign.design import SolveReport

    report = SolveReport("HiGHS", "highs", "simplex", 0.0, 0.0, 0.0, 0.0, 0, 1, 0, 0, 0)
    result = DesignResult(Status.SUBOPTIMAL, objective, kernel, exact, 0.0, cert, report, spec)
    text = render_result(result, width=200)
    assert "objective.max_loss (exact check)" in text and "FAILS" in text
    assert "NOT private" not in repr(result) and "FAILS objective.max_loss" in repr(result)


def test_vulnerability_cap_is_restored_with_every_privacy_constraint_of_the_list():
    """expected_loss under a vulnerability cap and a privacy list (an LDP level and an ε·|x − x'| metric): the
    identity-like kernel breaks the cap; the repaired kernel meets the cap and both privacy constraints
    exactly, and the certificate has one verdict per stated constraint (two privacy, one cap)."""
    n = 4
    prior = [F(1, 4)] * n
    spec = {
        "alphabet": n,
        "privacy": [
            {"epsilon": "log(3)", "prior_set": {"kind": "simplex"}},
            {"epsilon": "0.6", "metric": {"kind": "absolute"}},
        ],
        "objective": {"kind": "expected_loss", "loss": "absolute", "max_vulnerability": {"at_most": "0.4"}},
    }
    e = np.exp(-0.6 * np.abs(np.subtract.outer(np.arange(n), np.arange(n))))  # ε·d-private rows, then normalised
    K = e / e.sum(axis=1, keepdims=True)
    assert _bayes_vulnerability([[F(v) for v in r] for r in K], prior) > F("0.4")
    (exact, _, _, cert, _), _ = _certify(spec, K)
    Kx = exact.fractions()
    assert _bayes_vulnerability(Kx, prior) <= F("0.4")
    assert all(sum(r) == 1 for r in Kx)
    for x in range(n):  # LDP at log 3 (e^ε = 3 exactly) and the metric at 0.6 against a rational below e^{0.6 d}
        for z in range(n):
            for y in range(n):
                assert Kx[x][y] <= 3 * Kx[z][y]
                assert Kx[x][y] <= _exp_lower(F("0.6") * abs(x - z)) * Kx[z][y]
    assert cert.feasible and len(cert.guarantees) == 2 and all(g.feasible for g in cert.guarantees)
    [verdict] = cert.side_constraints
    assert verdict.field == "objective.max_vulnerability" and verdict.feasible and verdict.value <= F("0.4")


def test_a_loss_cap_beyond_the_doubles_gets_a_verdict_that_prints():
    """max_loss = 1e400 (a valid rational, above every double) excludes nothing: the verdict holds, and the JSON,
    the report and the repr show it without converting 1e400 to a double."""
    result = design(_min_vulnerability("1e400", epsilon=1))
    [verdict] = result.certificate.side_constraints
    assert verdict.feasible and not verdict.binding and verdict.limit == F(10) ** 400
    out = json.loads(result.dumps())["certificate"]["side_constraints"][0]
    assert out["limit_exact"] == str(F(10) ** 400)
    assert "objective.max_loss (exact check)" in render_result(result, width=200)
    assert result.is_ok and "private (exact check)" in repr(result)


def test_a_loss_cap_below_the_least_loss_by_less_than_the_lp_tolerance_is_refused():
    """At ε = 0 only constant kernels are private, so the least expected Hamming loss is 1 − max P = 1e−9 exactly
    (written out here). A cap of 2.5e−10 lies below it by less than HiGHS's feasibility tolerance: the capped LP
    called it optimal and the kernel emitted missed the cap. It is refused (exit 2), naming the field."""
    import pytest

    from mechdesign.spec.errors import InputError

    spec = {
        "alphabet": 3,
        "epsilon": 0,
        "prior_set": {"kind": "simplex"},
        "objective": {"kind": "min_vulnerability", "prior": [1e-09, 0, 0.999999999], "loss": "hamming"},
    }
    with pytest.raises(InputError, match="objective.max_loss"):
        design({**spec, "objective": {**spec["objective"], "max_loss": 2.5e-10}})
    # a cap the best constant kernel meets exactly is designed, and the cap holds exactly
    result = design({**spec, "objective": {**spec["objective"], "max_loss": "1/1000000000"}})
    (report,) = result.certificate.side_constraints
    assert report.feasible and report.value <= F(1, 10**9)


def test_the_constant_fallback_takes_a_constant_kernel_that_meets_the_loss_cap():
    """Every constant kernel has the same posterior vulnerability, but only the point mass at the least-loss output
    meets max_loss. Here (ε = 1e−9, squared loss, prior (1e−9, 0, 1 − 1e−9, 0)) the cap is exactly the loss of
    always answering 2: 1e−9·(0 − 2)² = 4e−9 (written out here). The design falls back to a constant kernel; that
    kernel must be this one, and the cap must hold exactly, not the first constant kernel (loss ≈ 4)."""
    result = design(
        {
            "alphabet": 4,
            "epsilon": 1e-09,
            "prior_set": {"kind": "point", "prior": [0.25, 0.375, 0.25, 0.125]},
            "objective": {
                "kind": "min_vulnerability",
                "prior": [1e-09, 0, 0.999999999, 0],
                "loss": "squared",
                "max_loss": 4e-09,
            },
        }
    )
    (report,) = result.certificate.side_constraints
    assert report.feasible and report.value <= F(4, 10**9)
