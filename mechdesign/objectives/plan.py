"""What every objective's program hands back to :func:`mechdesign.design.design`.

Every engine (:mod:`mechdesign.engines`) runs a program of its own kind (one kernel LP, N(N−1) pair LPs, the
extreme-ray LP, column generation, tangent/secant LPs, a MIP); whatever it is, running it yields a :class:`PlanOutcome`:
a float kernel, the program's value, a bound on the optimum and the solver's statistics. The single
certify stage in ``design`` turns that into the exact kernel and its certificate.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

import numpy as np

from mechdesign.lp.solve import Status

__all__ = ["PlanOutcome", "ClosedForm"]


@dataclass
class PlanOutcome:
    status: Status
    """The program's own status (``OPTIMAL`` when it reached its bound within its tolerance)."""
    kernel: np.ndarray | None
    """The kernel found (N × M floats), before the exact grid and repair; None when there is none."""
    value: float | None
    """The program's value at ``kernel`` (``lp_objective`` in the certificate)."""
    bound: float | None
    """A bound on the optimum (upper when maximising, lower when minimising), or None."""
    sense: int
    """+1 minimise, −1 maximise."""
    method: str
    backend: str = "highs"
    seconds: float = 0.0
    """Time in the solver."""
    compile_seconds: float = 0.0
    iterations: int = 0
    lps: int = 1
    rows: int = 0
    columns: int = 0
    nonzeros: int = 0
    message: str = ""
    rays: np.ndarray | None = None
    """Sublinear objectives: the extreme rays used (max entry 1), one per output."""
    engine: str = ""
    """The engine that produced this outcome (:mod:`mechdesign.engines.routing`; set by the route)."""
    mechanism: Any = None
    """A structured mechanism (:mod:`mechdesign.mechanisms`) in place of a kernel (``kernel`` None): the optimum
    whose explicit kernel does not fit the output limits; it carries its own exact certificate."""


@dataclass(frozen=True)
class ClosedForm:
    """A paper's closed form for the problem, compared with the emitted kernel's objective."""

    name: str
    value: float
    difference: float
    """objective − value."""
