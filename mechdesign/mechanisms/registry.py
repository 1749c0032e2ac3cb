"""Families by name, and a saved mechanism read back (the JSON that :meth:`StructuredMechanism.save` writes)."""

from __future__ import annotations

from fractions import Fraction

from mechdesign.mechanisms.base import StructuredMechanism, read_json
from mechdesign.mechanisms.hadamard_response import HadamardResponse
from mechdesign.mechanisms.krr import RandomizedResponse
from mechdesign.mechanisms.local_hashing import LocalHashing
from mechdesign.mechanisms.subset_selection import SubsetSelection
from mechdesign.mechanisms.unary_encoding import UnaryEncoding
from mechdesign.spec.errors import InputError

__all__ = ["FAMILIES", "build", "load", "from_json"]

FAMILIES = {
    cls.family: cls for cls in (RandomizedResponse, SubsetSelection, UnaryEncoding, LocalHashing, HadamardResponse)
}


def build(family: str, labels, epsilon, prior_set=None, **options) -> StructuredMechanism:
    """The mechanism of ``family`` (a key of FAMILIES) with its options (d, weights, optimized, g, seeds, pool)."""
    cls = FAMILIES.get(family)
    if cls is None:
        raise InputError(f"--mechanism: must be one of {', '.join(FAMILIES)}, found {family!r}")
    allowed = {
        "krr": set(),
        "subset_selection": {"d", "weights"},
        "unary_encoding": {"optimized"},
        "local_hashing": {"g", "seeds", "pool", "prime", "rng"},
        "hadamard_response": set(),
    }[family]
    given = {k: v for k, v in options.items() if v is not None}
    extra = sorted(set(given) - allowed)
    if extra:
        raise InputError(f"--{extra[0]}: not an option of {family}")
    return cls(labels, epsilon, prior_set, **given)


def from_json(data: dict, where: str = "mechanism") -> StructuredMechanism:
    """Rebuild a saved mechanism and check that its certificate's ratios are the ones rebuilt."""
    try:
        family, labels, epsilon = data["mechanism"], data["labels"], data["epsilon"]
        params = dict(data.get("parameters") or {})
        c = Fraction(str((data.get("prior_set") or {}).get("c", "0")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: not a saved structured mechanism ({exc})") from None
    options = {}
    if family == "subset_selection":
        options["d"] = params.get("d")
        options["weights"] = params.get("weights")
    elif family == "unary_encoding":
        options["optimized"] = params.get("optimized", True)
    elif family == "local_hashing":
        options.update(g=params.get("g"), pool=params.get("pool"), prime=params.get("prime"))
    mech = build(family, labels, epsilon, c if c else None, **options)
    saved = (data.get("certificate") or {}).get("ratios")
    if saved is not None and [r["ratio"] for r in saved] != [str(r) for r, _ in mech.components()]:
        raise InputError(f"{where}: the saved ratios differ from those rebuilt from its parameters")
    return mech


def load(path) -> StructuredMechanism:
    """A mechanism saved by :meth:`StructuredMechanism.save`."""
    return from_json(read_json(path), str(path))
