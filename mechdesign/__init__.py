"""mechdesign: certified design of (ε,𝒫)-PML and LDP privacy mechanisms by linear programming.

>>> from mechdesign import design
>>> result = design({"alphabet": 2, "epsilon": 1, "prior_set": {"kind": "simplex"},
...                  "objective": {"kind": "dobrushin"}})
>>> round(result.objective, 6)   # tanh(1/2), Kairouz et al.
0.462117
"""

from mechdesign.design import Certificate, ClosedForm, DesignInterrupted, DesignResult, SolveReport, design
from mechdesign.spec.errors import InputError, MechdesignError, SolveFailure, SpecError
from mechdesign.release.mechanism import Mechanism
from mechdesign.lp.solve import Status
from mechdesign.spec.models import Box, Hull, L1Ball, MinMass, Point, PriorSet, Simplex, Spec, load_spec
from mechdesign.sweeps import sweep

__version__ = "0.1.0"

__all__ = [
    "design",
    "load_spec",
    "Spec",
    "DesignResult",
    "DesignInterrupted",
    "Certificate",
    "ClosedForm",
    "SolveReport",
    "Status",
    "Mechanism",
    "sweep",
    "MechdesignError",
    "InputError",
    "SpecError",
    "SolveFailure",
    "__version__",
    "PriorSet",
    "Simplex",
    "MinMass",
    "Point",
    "Hull",
    "Box",
    "L1Ball",
]
