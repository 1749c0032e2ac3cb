"""mechdesign: certified design of (ε,𝒫)-PML and LDP privacy mechanisms by linear programming.

>>> from mechdesign import design
>>> result = design({"alphabet": 2, "epsilon": 1, "prior_set": {"kind": "simplex"},
...                  "objective": {"kind": "dobrushin"}})
>>> round(result.objective, 6)   # tanh(1/2), Kairouz et al.
0.462117
"""

import sys
from importlib import import_module
from types import ModuleType

_LAZY = {
    "design": "mechdesign.design",
    "Certificate": "mechdesign.design",
    "ClosedForm": "mechdesign.design",
    "DesignInterrupted": "mechdesign.design",
    "DesignResult": "mechdesign.design",
    "SolveReport": "mechdesign.design",
    "InputError": "mechdesign.spec.errors",
    "MechdesignError": "mechdesign.spec.errors",
    "SolveFailure": "mechdesign.spec.errors",
    "SpecError": "mechdesign.spec.errors",
    "Mechanism": "mechdesign.release.mechanism",
    "Status": "mechdesign.lp.solve",
    "Box": "mechdesign.spec.models",
    "Hull": "mechdesign.spec.models",
    "L1Ball": "mechdesign.spec.models",
    "MinMass": "mechdesign.spec.models",
    "Point": "mechdesign.spec.models",
    "PriorSet": "mechdesign.spec.models",
    "Simplex": "mechdesign.spec.models",
    "Spec": "mechdesign.spec.models",
    "load_spec": "mechdesign.spec.models",
    "sweep": "mechdesign.sweeps.api",
}
"""Where each public name lives. They are imported on first use (PEP 562 module ``__getattr__``), so that
``import mechdesign`` and the command line's start do not pay for scipy, HiGHS, pydantic and numpy before a
command needs them; ``from mechdesign import design`` works as before."""


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mechdesign' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(ModuleType):
    """The package's module type: the attribute ``design`` stays the function. Importing the sub-module
    :mod:`mechdesign.design` (which the command line and the sweep workers do) makes the import system set
    the package's attribute of that name to the sub-module; here it becomes the sub-module's function, as
    ``from mechdesign import design`` has always given."""

    def __setattr__(self, name: str, value) -> None:
        if name == "design" and isinstance(value, ModuleType):
            value = value.design
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
