"""The certify stage emits the same exact kernels, to the last numerator, as the code that wrote the reference.

tests/certify/certify_fractions.json holds a SHA-256 of each emitted kernel's denominator, numerators and repair weight,
written by tests/certify/make_certify_fractions.py on the code before the certify stage was restructured (from one
function of fast-path conditions into named steps: to the grid, exact check, repair, check again). Cases: every
file of problems/, specs of benchmarks/scaling_families.py at N = 200 … 1000, and the dense kernels of
benchmarks/certify_scaling.py at N = 200, 500, 1000 (with variants that reach the snapping, the one-pass mix, the
mix it declines and a kernel that passes as rounded), with and without the caller giving its float kernel away.
The problems/ and family cases go through the solver, whose float kernels change with HiGHS, numpy and scipy and with
the machine's vector instructions (numpy's loops and OpenBLAS choose kernels by them): they run only with the versions
and the instructions the reference was made with (``_made_with``); the dense certify cases run with any.
"""

from __future__ import annotations

import json

import pytest

import make_certify_fractions as ref

REFERENCE = json.loads(ref.FIXTURE.read_text())

same_solver = pytest.mark.skipif(
    ref.solver_versions() != REFERENCE["_made_with"],
    reason=f"the reference's solver kernels come from {REFERENCE['_made_with']}, not {ref.solver_versions()} "
    "(the dense certify cases below run with any versions)",
)


def test_reference_covers_every_case():
    keys = {ref.certify_key(*case) for case in ref.CERTIFY_CASES}
    keys |= {f"family/{name}/{n}" for name, n in ref.FAMILY_CASES}
    assert keys <= set(REFERENCE)
    assert sum(k.startswith("problems/") for k in REFERENCE) == len(list((ref.ROOT / "problems").glob("*.yaml")))


@pytest.mark.parametrize("case", ref.CERTIFY_CASES, ids=lambda c: ref.certify_key(*c))
def test_certify_design_emits_the_reference_fractions(case):
    assert ref.certify_case(*case) == REFERENCE[ref.certify_key(*case)]


@same_solver
def test_problems_emit_the_reference_fractions():
    got = ref.problem_cases()
    want = {k: v for k, v in REFERENCE.items() if k.startswith("problems/")}
    assert got == want


@same_solver
@pytest.mark.parametrize(("name", "n"), ref.FAMILY_CASES)
def test_benchmark_families_emit_the_reference_fractions(name, n):
    from mechdesign import design

    result = design(ref.family_spec(name, n))
    assert ref.fraction_hash(result.exact_kernel, result.certificate.repair_weight) == REFERENCE[f"family/{name}/{n}"]
