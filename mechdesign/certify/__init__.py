"""Stage 4 — certificates: the exact rational kernel, the exact (ε,𝒫)-PML check against a rational
lower bound of e^ε, and the repair by mixing with the constant kernel (``exact``)."""

from mechdesign.certify.exact import *  # noqa: F403
from mechdesign.certify.exact import __all__  # noqa: F401
