"""Stage 1 — the declarative problem: pydantic models (``models``), safe arithmetic for ε (``expr``),
and the error types every stage raises (``errors``). Nothing here imports another stage.

The error types are imported at once (they are light, and every stage raises them); the models, which need
pydantic, on first use of one of their names (PEP 562 module ``__getattr__``)."""

from importlib import import_module

from mechdesign.spec.errors import InputError as InputError
from mechdesign.spec.errors import MechdesignError as MechdesignError
from mechdesign.spec.errors import SolveFailure as SolveFailure
from mechdesign.spec.errors import SpecError as SpecError

_ERRORS = ["InputError", "MechdesignError", "SolveFailure", "SpecError"]


def __getattr__(name: str):
    models = import_module("mechdesign.spec.models")
    if name == "__all__":
        value = [*models.__all__, *_ERRORS]
    elif name in models.__all__:
        value = getattr(models, name)
    else:
        raise AttributeError(f"module 'mechdesign.spec' has no attribute {name!r}")
    globals()[name] = value
    return value
