"""The one place that maps a prior set's ``kind`` to its implementation.

Adding a prior set: its pydantic model in :mod:`mechdesign.spec.models` (in the ``PriorSet`` union), one
module here implementing :class:`mechdesign.privacy.base.PriorSetRules`, and one line below.
"""

from __future__ import annotations

from mechdesign.privacy.base import PriorSetRules
from mechdesign.privacy.box import BoxRules
from mechdesign.privacy.hull import HullRules
from mechdesign.privacy.l1_ball import L1BallRules
from mechdesign.privacy.min_mass import MinMassRules
from mechdesign.privacy.point import PointRules
from mechdesign.privacy.simplex import SimplexRules

__all__ = ["PRIOR_SET_RULES", "rules"]

PRIOR_SET_RULES: dict[str, type[PriorSetRules]] = {
    cls.kind: cls for cls in (SimplexRules, MinMassRules, PointRules, HullRules, BoxRules, L1BallRules)
}


def rules(prior_set, n: int) -> PriorSetRules:
    """The implementation of ``prior_set`` (a validated spec model) for an alphabet of N symbols."""
    return PRIOR_SET_RULES[prior_set.kind](prior_set, n)
