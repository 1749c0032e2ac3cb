"""What a design falls back on when its program fails: the best constant kernel and a bound without privacy.

Issue 10, item 2: a kernel design is never infeasible. A kernel whose rows are all equal (K = 1qᵀ) has
max_x K_x(y) = q_y = P·K(:,y) for every prior P, so its leakage is 0 and it is (ε,𝒫)-PML for every
ε ≥ 0 and every prior set 𝒫. The best one over the M "point" rows q = e_y is
:func:`best_constant_kernel`. The optimum over all kernels, private or not, bounds the private optimum:
:func:`unconstrained_bound` (for a maximised utility satisfying the data-processing inequality, the
identity kernel, which every kernel post-processes; for the expected loss the row-wise minimum of L).
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
        if best is None or rules.sense * v < rules.sense * best[1]:
            best = (K, v)
    return best


def unconstrained_bound(spec: Spec) -> float | None:
    """A bound on the optimum over all kernels (no privacy), hence on the private optimum.

    * expected loss under a prior P: Σ_x P(x) min_y L(x,y) (each row puts its mass on its cheapest output);
      worst case over 𝒫: max_{P∈𝒫} P·r with r_x = min_y L(x,y), the value of that same kernel;
    * Dobrushin coefficient: 1 (a total-variation distance);
    * mutual information, f-divergences, Bayes vulnerability: the utility of the identity kernel (N × N),
      which every kernel post-processes (data-processing inequality).
    """
    kind = spec.objective.kind
    rules = objective_rules(spec)
    n = spec.n
    if kind == "expected_loss":
        from mechdesign.objectives.expected_loss import loss_matrix

        L = loss_matrix(spec)
        K = np.zeros_like(L)
        K[np.arange(n), np.argmin(L, axis=1)] = 1.0
        return float(rules.value(K))
    if kind == "dobrushin":
        return 1.0
    try:
        return float(rules.value(np.eye(n)))
    except Exception:  # noqa: BLE001 - a utility that cannot take N columns: no bound
        return None


def pad_columns(K: np.ndarray, m: int) -> np.ndarray:
    """K with zero columns appended up to M columns (issue 10, item 5).

    A zero column y has max_x K_x(y) = 0, so its PML constraint 0 ≤ e^ε·min_P P·K(:,y) holds, and it adds
    nothing to any utility here (μ(0) = 0, loss 0, no change to total variation): the certificate of the
    narrower kernel stays valid.
    """
    if K.shape[1] >= m:
        return K
    return np.hstack([K, np.zeros((K.shape[0], m - K.shape[1]))])
