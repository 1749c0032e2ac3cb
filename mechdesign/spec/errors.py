"""Exceptions that the command line turns into messages and exit statuses.

Exit statuses (docs/explanation/mathematics.md, section 'Contract'): 0 optimal and certified; 1 no certified optimum
(:class:`SolveFailure` and non-optimal results); 2 bad input (:class:`InputError`);
3 internal error (any other exception: a bug); 130 interrupted (Ctrl-C). The command line
(:func:`mechdesign.cli.main.main`) maps them.
"""

from __future__ import annotations


class MechdesignError(Exception):
    """Base class of the errors mechdesign raises on purpose."""

    exit_status = 1


class InputError(MechdesignError, ValueError):
    """Bad input from the user: exit status 2."""

    exit_status = 2


class SpecError(InputError):
    """A spec breaks one or more rules; each pair names the field and the rule."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.pairs = list(pairs)
        super().__init__(self.message)

    @classmethod
    def from_pairs(cls, pairs: list[tuple[str, str]]) -> "SpecError":
        return cls(pairs)

    @property
    def message(self) -> str:
        return "; ".join(f"{field}: {rule}" for field, rule in self.pairs)


class SolveFailure(MechdesignError):
    """The solver produced no usable solution: exit status 1."""
