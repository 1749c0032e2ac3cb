"""(min_{P∈𝒫} min_x P(x), max_{P∈𝒫} max_x P(x)) of theory/disclosure.prior_set_mass_range, which the disclosure
guarantees of `analyze` read, against the masses written out for each set (docs/explanation/mathematics.md, section 'Linear constraints': Q_X(c) has its vertices
at c on all symbols but one)."""

from __future__ import annotations

from fractions import Fraction

import pytest


@pytest.mark.parametrize(
    "prior_set, n, expected",
    [
        ({"kind": "min_mass", "c": "1/50"}, 7, (Fraction(1, 50), 1 - 6 * Fraction(1, 50))),  # Q_X(c): (c, 1 − (N−1)c)
        ({"kind": "simplex"}, 5, (Fraction(0), Fraction(1))),  # every prior: a point mass reaches 1, another 0
        ({"kind": "point", "prior": ["1/2", "1/3", "1/6"]}, 3, (Fraction(1, 6), Fraction(1, 2))),  # not invariant
    ],
)
def test_prior_set_mass_range_is_the_smallest_and_largest_mass(prior_set, n, expected):
    # theory/disclosure.prior_set_mass_range takes one symbol for permutation-invariant sets, every symbol otherwise
    from pydantic import TypeAdapter

    from mechdesign.spec.models import PriorSet
    from mechdesign.theory.disclosure import prior_set_mass_range

    ps = TypeAdapter(PriorSet).validate_python(prior_set)
    assert prior_set_mass_range(ps, n) == expected
