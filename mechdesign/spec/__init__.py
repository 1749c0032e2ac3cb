"""Stage 1 — the declarative problem: pydantic models (``models``), safe arithmetic for ε (``expr``),
and the error types every stage raises (``errors``). Nothing here imports another stage."""

from mechdesign.spec.errors import InputError, MechdesignError, SolveFailure, SpecError
from mechdesign.spec.models import *  # noqa: F403
from mechdesign.spec.models import __all__ as _models_all

__all__ = [*_models_all, "InputError", "MechdesignError", "SolveFailure", "SpecError"]
