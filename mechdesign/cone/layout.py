"""Where the lifted (ε,Q_X(c))-PML kernel LP of :func:`mechdesign.objectives.compile.add_pml_kernel` keeps its
variables and rows: the engines that solve that LP without its whole matrix (output generation, the uncompiled
kernel LP, the side-row output generation) read them from here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KernelLayout", "layout_reason"]


@dataclass(frozen=True)
class KernelLayout:
    """Where the lifted (ε,Q_X(c))-PML kernel LP keeps its variables and rows.

    ``K``, ``rows_t`` (K_xy − t_y ≤ 0) and ``rows_low`` are (N, M) index
    arrays; ``rows_sum`` (N,), ``t`` (M,). For c > 0 ``rows_low`` are the rows
    u_y − K_xy ≤ 0, ``u`` the minima and ``rows_pml`` the rows
    e^{−ε} t_y − c Σ_x K_xy − (1 − Nc) u_y ≤ 0; for c = 0 (LDP) ``rows_low``
    are e^{−ε} t_y − K_xy ≤ 0 and ``u``, ``rows_pml`` are None.
    """

    K: np.ndarray
    t: np.ndarray
    rows_sum: np.ndarray
    rows_t: np.ndarray
    rows_low: np.ndarray
    c: float
    scale: float
    """e^{−ε} as a float."""
    u: np.ndarray | None = None
    rows_pml: np.ndarray | None = None

    @property
    def num_rows(self) -> int:
        return (
            self.rows_sum.size
            + self.rows_t.size
            + self.rows_low.size
            + (0 if self.rows_pml is None else self.rows_pml.size)
        )


# ------------------------------------------------------------------ pricing


def layout_reason(spec) -> str | None:
    """None when the compiled kernel LP of ``spec`` has a :class:`~mechdesign.cone.layout.KernelLayout` (its PML rows
    are those of some Q_X(c) or the simplex), else why not."""
    from mechdesign.privacy.registry import rules

    if spec.primary_is_implied:
        return "the primary constraint is implied by the metric constraints (no PML rows)"
    if rules(spec.prior_set, spec.n).ray_family_c() is None:  # min_mass and simplex: lp_rows name their rows
        return f"the prior set {spec.prior_set.kind} is not min_mass or the simplex (no kernel layout)"
    return None
