"""What a design falls back on when its program fails: the best constant kernel and a bound without privacy.

A kernel design is never infeasible. A kernel whose rows are all equal (K = 1qᵀ) has
max_x K_x(y) = q_y = P·K(:,y) for every prior P, so its leakage is 0 and it is (ε,𝒫)-PML for every
ε ≥ 0 and every prior set 𝒫. The best one over the M "point" rows q = e_y is
:func:`best_constant_kernel`. The optimum over all kernels, private or not, bounds the private optimum:
:func:`unconstrained_bound` (each objective's ``unconstrained_bound``).
With the two, a failed program still yields a certified kernel, status ``suboptimal``, and a true gap.
"""

from __future__ import annotations

import numpy as np

from mechdesign.objectives.registry import objective_rules
from mechdesign.spec.models import Spec

__all__ = ["best_constant_kernel", "unconstrained_bound", "pad_columns"]


def best_constant_kernel(spec: Spec) -> tuple[np.ndarray, float]:
    """The constant kernel K = 1e_yᵀ (every row the point mass at y) with the best objective, and that
    objective (zero leakage: (ε,𝒫)-PML for every ε and 𝒫)."""
    rules = objective_rules(spec)
    n, m = spec.n, spec.m
    best = None
    for y in range(m):
        K = np.zeros((n, m))
        K[:, y] = 1.0
        v = rules.value(K)
        key = (_misses_a_side_constraint(rules, K), rules.sense * v)
        if best is None or key < best[2]:
            best = (K, v, key)
    return best[0], best[1]


def _misses_a_side_constraint(rules, K: np.ndarray) -> bool:
    """Whether the constant kernel K misses a constraint the spec states beside privacy (a loss or vulnerability cap),
    judged exactly: such kernels come last, whatever their objective (e.g. every constant kernel has the same
    vulnerability, and only the ones of least loss can meet ``max_loss``)."""
    from mechdesign.certify.exact import ExactKernel

    exact = ExactKernel(np.array([[int(v) for v in row] for row in K], dtype=object), 1)
    return any(not report.feasible for report in rules.side_constraints(exact))


def unconstrained_bound(spec: Spec) -> float | None:
    """A bound on the optimum over all kernels (no privacy), hence on the private optimum
    (:meth:`mechdesign.objectives.base.ObjectiveRules.unconstrained_bound`)."""
    try:
        return objective_rules(spec).unconstrained_bound()
    except Exception:  # noqa: BLE001 - a utility that cannot take N columns: no bound
        return None


def pad_columns(K: np.ndarray, m: int) -> np.ndarray:
    """K with zero columns appended up to M columns.

    A zero column y has max_x K_x(y) = 0, so its PML constraint 0 ≤ e^ε·min_P P·K(:,y) holds, and it adds
    nothing to any utility here (μ(0) = 0, loss 0, no change to total variation): the certificate of the
    narrower kernel stays valid.
    """
    if K.shape[1] >= m:
        return K
    return np.hstack([K, np.zeros((K.shape[0], m - K.shape[1]))])
