"""Every engine that applies (by the routing table) on every reference problem (tests/helpers/reference_problems.py):
the optimum of the paper's closed form, an exactly private kernel, and a bound on the right side of the optimum.

Each (problem, engine) pair forces the engine through ``solver.engine``; the design must run that engine first and
certify its kernel as optimal."""

from __future__ import annotations

import math

import pytest
from helpers.reference_problems import reference_problems

from mechdesign import design
from mechdesign.engines.base import Problem
from mechdesign.engines.routing import ENGINES, ROUTES, plan
from mechdesign.lp.solve import Status
from mechdesign.spec.errors import InputError
from mechdesign.spec.models import load_spec

REFERENCE = reference_problems()


def _applicable(spec: dict) -> list[str]:
    problem = Problem.of(load_spec(spec))
    route = ROUTES[problem.spec.objective.kind] + ("exact-simplex",)
    return [name for name in route if ENGINES[name].applies(problem) is None]


CASES = [(rp, name) for rp in REFERENCE for name in _applicable(rp.spec)]


def _forced(spec: dict, name: str) -> dict:
    return {**spec, "solver": {**spec.get("solver", {}), "engine": name}}


@pytest.mark.parametrize("rp,engine", CASES, ids=[f"{rp.name}-{name}" for rp, name in CASES])
def test_every_applicable_engine_reaches_the_known_optimum(rp, engine):
    result = design(_forced(rp.spec, engine))
    attempts = result.solve.attempts
    assert attempts[0].engine == engine
    assert result.status is Status.OPTIMAL, (result.status, result.solve.message)
    assert result.certificate.feasible  # the exact (ε,𝒫)-PML check of the emitted kernel
    assert result.objective == pytest.approx(rp.optimum, rel=1e-6, abs=1e-9), rp.source
    sense = 1 if rp.spec["objective"]["kind"] in ("expected_loss", "min_vulnerability", "frequency_estimation") else -1
    bound = result.certificate.dual_bound
    # a lower bound when minimising, an upper bound when maximising: never on the wrong side of the optimum
    assert sense * (bound - rp.optimum) <= 1e-9 * max(1.0, abs(rp.optimum))
    assert result.certificate.gap <= 1e-6 * max(1.0, abs(rp.optimum))


def test_every_engine_on_a_route_is_exercised():
    """The catalogue reaches every engine of the routing table (a new engine needs a reference problem)."""
    exercised = {name for _, name in CASES}
    on_routes = {name for route in ROUTES.values() for name in route}
    assert on_routes <= exercised, on_routes - exercised


@pytest.mark.parametrize("rp", REFERENCE[:3], ids=[rp.name for rp in REFERENCE[:3]])
def test_the_constant_kernel_is_private_and_its_bound_true(rp):
    result = design(_forced(rp.spec, "constant-kernel"))
    assert result.solve.engine == "constant-kernel"
    assert result.certificate.feasible and result.certificate.leakage == pytest.approx(0.0, abs=1e-12)
    sense = 1 if rp.spec["objective"]["kind"] in ("expected_loss", "min_vulnerability", "frequency_estimation") else -1
    assert sense * (result.objective - rp.optimum) >= -1e-12  # never better than the optimum
    assert sense * (result.certificate.dual_bound - rp.optimum) <= 1e-12


def test_a_forced_engine_that_does_not_apply_is_an_input_error_naming_the_reason():
    spec = next(rp.spec for rp in REFERENCE if rp.name == "dobrushin_ldp")
    with pytest.raises(InputError, match=r"solver\.engine: dobrushin-pairs does not apply .*permutation invariant"):
        plan(load_spec(_forced(spec, "dobrushin-pairs")))
    with pytest.raises(
        InputError, match=r"solver\.engine: ray-lp does not apply .*not on the route of objective dobrushin"
    ):
        plan(load_spec(_forced(spec, "ray-lp")))
    with pytest.raises(InputError, match=r"solver\.engine: must be one of .*found simplexx"):
        plan(load_spec(_forced(spec, "simplexx")))


def test_plan_lists_the_engines_that_apply_and_why_the_others_do_not():
    spec = next(rp.spec for rp in REFERENCE if rp.name == "krr_hamming_uniform_ldp")
    route = plan(load_spec(spec))
    assert route.names == ["uncompiled-kernel-lp", "output-generation", "compiled-lp"]
    assert (
        "worst_case" in route.skipped["worst-case-kernel-lp"] or "given prior" in route.skipped["worst-case-kernel-lp"]
    )
    # a back end asked for leaves only the compiled LP
    cvx = plan(load_spec({**spec, "solver": {"backend": "cvxpy"}}))
    assert cvx.names == ["compiled-lp"] and all(
        "cvxpy" in cvx.skipped[n] for n in ("uncompiled-kernel-lp", "output-generation")
    )


def test_the_reference_optima_are_the_closed_forms():
    """The catalogue's values, recomputed from the closed forms in another way than the helper does."""
    by_name = {rp.name: rp.optimum for rp in REFERENCE}
    e = math.e
    assert by_name["dobrushin_ldp"] == pytest.approx(math.tanh(0.5))  # (e − 1)/(e + 1) = tanh(ε/2)
    assert by_name["krr_hamming_uniform_ldp"] + by_name["bayes_uniform_ldp"] == pytest.approx(
        1 - 1 / (e + 3) + 1 / (e + 2) - 0.0, rel=1.0
    )  # loose sanity of the two k-RR forms; exact ones below
    assert 1 - by_name["krr_hamming_uniform_ldp"] == pytest.approx(e / (e + 3))
    assert by_name["dobrushin_min_mass_theorem1"] == pytest.approx((e - 1) / (0.75 * e + 1))
