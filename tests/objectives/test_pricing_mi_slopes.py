"""The vectorised root pass of mutual-information pricing (mechdesign.objectives.pricing_mi_slopes) and the
pricing round built on it, against brute force.

The references are independent of the code under test: every set of every ray family is enumerated with
itertools, its ray built from the definition of the family (r = m + (1 − m)1_A, or 1_A + w e_j normalised),
and its reduced value (μ(r) − λ·r)/(1·r) computed from μ(r) = Σ_x P_x r_x log(r_x / P·r) written out in
tests/objectives/test_pricing_mi.py (mi_of_ray); the extreme rays come from mechdesign.privacy.extremes (the cone's own
listing, not the families).
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from mechdesign.objectives.pricing_mi import MIFamily, MIPricer
from mechdesign.objectives.pricing_mi_slopes import FamilyArrays, root_pass, swap_pass
from mechdesign.privacy.extremes import extreme_rays
from mechdesign.privacy.ray_families import families
from test_pricing_mi import CASES, duals, make_spec, prior, reduced


def family_ray(n, kind, level, j, A):
    """The ray of a family for the set A, from the family's definition."""
    if kind == "two":
        r = np.full(n, level)
        r[list(A)] = 1.0
        return r
    r = np.zeros(n)
    r[list(A)] = 1.0
    r[j] = level
    return r / r.max()


# (not named setup: pytest before 8 calls a module-level setup() as a nose-style fixture, with the module)
def pricing_instance(case):
    n, eps, cnum, kind, how, seed = case
    rng = np.random.default_rng(seed)
    P = prior(rng, n, kind)
    spec = make_spec(n, eps, Fraction(cnum, 10 * n), P)
    lam = duals(rng, spec, P, how)
    fams = [
        MIFamily(P, lam, kind_, size, level, j)
        for kind_, size, level in families(spec)
        for j in ([None] if kind_ == "two" else range(n))
    ]
    return n, P, lam, spec, fams


def brute(n, P, lam, fam):
    """{set: reduced value} over every set of the family."""
    return {
        A: reduced(P, lam, family_ray(n, fam.kind, fam.level, fam.j, A))
        for A in itertools.combinations(fam.free.tolist(), fam.size)
    }


@pytest.mark.parametrize("case", CASES[:8])
def test_root_pass_bounds_every_set_and_returns_true_sets(case):
    n, P, lam, spec, fams = pricing_instance(case)
    fa = FamilyArrays(fams, n)
    values = [brute(n, P, lam, f) for f in fams]
    best = np.array([max(v.values()) for v in values])
    # a prune per family between its best and its worst set: only sets above it may come back
    prune = np.array([float(np.median(list(v.values()))) for v in values]) * fa.norm
    bound, best_F, sets, best_sets = root_pass(fa, P, lam, prune, keep=4)
    for f, fam in enumerate(fams):
        tol = 1e-12 * (1 + abs(best[f]))
        assert bound[f] / fam.norm >= best[f] - tol  # a true bound over all sets of the family
        # the best set met is a set of the family and its value is the one reported
        A = tuple(best_sets[f].tolist())
        assert A in values[f]
        assert best_F[f] / fam.norm == pytest.approx(values[f][A], abs=1e-12)
        assert len(sets[f]) <= 4
        assert len({tuple(S.tolist()) for S in sets[f]}) == len(sets[f])  # distinct
        for S in sets[f]:
            key = tuple(S.tolist())
            assert key in values[f]  # right size, j excluded, items distinct
            assert values[f][key] * fam.norm > prune[f] - 1e-12
        got = [values[f][tuple(S.tolist())] for S in sets[f]]
        assert got == sorted(got, reverse=True)


@pytest.mark.parametrize("case", CASES)
def test_root_bound_is_tight_where_a_set_attains_it(case):
    # where the root relaxation is attained by a set (the round then skips the family's branch and bound),
    # that set is the best of the family by enumeration
    n, P, lam, spec, fams = pricing_instance(case)
    fa = FamilyArrays(fams, n)
    bound, best_F, sets, best_sets = root_pass(fa, P, lam, np.full(len(fams), -np.inf), keep=1)
    attained = 0
    for f, fam in enumerate(fams):
        if bound[f] <= best_F[f] + 1e-12 * (1 + abs(best_F[f])):
            attained += 1
            assert max(brute(n, P, lam, fam).values()) == pytest.approx(best_F[f] / fam.norm, abs=1e-11)
    assert attained > 0


@pytest.mark.parametrize("case", CASES[:6])
def test_swap_pass_finds_the_best_single_swaps(case):
    n, P, lam, spec, fams = pricing_instance(case)
    fa = FamilyArrays(fams, n)
    _, _, _, best_sets = root_pass(fa, P, lam, np.full(len(fams), -np.inf), keep=1)
    swaps = swap_pass(fa, P, lam, best_sets, np.full(len(fams), -np.inf), 3, [True] * len(fams))
    for f, fam in enumerate(fams):
        A = set(best_sets[f].tolist())
        outside = [x for x in fam.free.tolist() if x not in A]
        # every set one swap away, by enumeration
        neigh = sorted(
            (
                reduced(P, lam, family_ray(n, fam.kind, fam.level, fam.j, (A - {a}) | {b})),
                tuple(sorted((A - {a}) | {b})),
            )
            for a in A
            for b in outside
        )[::-1]
        if not neigh:
            assert swaps[f] == []
            continue
        got = [tuple(S.tolist()) for S in swaps[f]]
        assert len(got) == min(3, len(neigh))
        values = dict((s, v) for v, s in neigh)
        for s in got:
            assert s in values
        # the best returned is the best swap (ties: any of them)
        assert values[got[0]] == pytest.approx(neigh[0][0], abs=1e-12)


class _Everything:
    """A ``known`` set that holds every ray: the round cannot return early on the quick pass, so it searches
    every family to the end (the certified maximum then is the maximum)."""

    def __contains__(self, item):
        return True


@pytest.mark.parametrize("case", CASES[:6])
def test_pricing_round_optimum_equals_enumeration(case):
    n, P, lam, spec, fams = pricing_instance(case)
    eps = spec.epsilon.value
    R = extreme_rays(spec.prior_set, n, eps)
    g_true = max(reduced(P, lam, r) for r in R)
    pricer = MIPricer(P, families(spec))
    for floor in (-1.0, 0.0, g_true - 1e-6):
        new, g, note = pricer.price(lam, floor, False, _Everything())
        assert g >= g_true - 1e-12 * (1 + abs(g_true))  # a true bound
        if g_true > floor and not note:  # searched to the end: the bound is the maximum
            assert g == pytest.approx(g_true, abs=1e-10 * (1 + abs(g_true)))
        else:
            assert g <= max(g_true, floor) + 1e-10
        for Rb in new:  # (the quick pass's rays count as known here: only the search's rays come back)
            for row in np.atleast_2d(Rb):
                assert floor - 1e-12 < reduced(P, lam, row) <= g_true + 1e-12
    # and with the quick pass allowed to return: still a true bound, every ray improving on the floor
    for floor in (0.0, abs(g_true) / 2):
        new, g, note = pricer.price(lam, floor, False)
        assert g >= g_true - 1e-12 * (1 + abs(g_true))
        for Rb in new:
            for row in np.atleast_2d(Rb):
                assert reduced(P, lam, row) > floor - 1e-12
    assert math.isfinite(g_true)
