"""Textbook frequency oracles as structured mechanisms: k-RR, subset selection, unary encoding, local
hashing and Hadamard response, never written as an N × M matrix, sampled exactly, certified in closed form
(:mod:`mechdesign.mechanisms.two_level`) and decoded on support counts (:mod:`mechdesign.mechanisms.base`).
"""

from mechdesign.mechanisms.base import FrequencyEstimate, Reports, StructuredMechanism
from mechdesign.mechanisms.hadamard_response import hadamard_response
from mechdesign.mechanisms.krr import krr
from mechdesign.mechanisms.local_hashing import local_hashing
from mechdesign.mechanisms.registry import FAMILIES, build, load
from mechdesign.mechanisms.subset_selection import subset_selection
from mechdesign.mechanisms.unary_encoding import unary_encoding

__all__ = [
    "StructuredMechanism",
    "Reports",
    "FrequencyEstimate",
    "krr",
    "subset_selection",
    "unary_encoding",
    "local_hashing",
    "hadamard_response",
    "FAMILIES",
    "build",
    "load",
]
