"""A kernel file read exactly for ``privatize`` and ``estimate``, without a Fraction per entry when possible.

:func:`mechdesign.release.kernel_io.read_kernel` builds one :class:`fractions.Fraction` per entry (N = 1000:
about 10 s of ``estimate``). A float ``.npy`` or JSON array, or a CSV of ``p/q`` entries, whose rows sum to
exactly 1 is read by :func:`mechdesign.release.kernel_arrays.read_normalised_fast` as int64 numerators on
the same common denominator (the lcm of the reduced denominators, as ``ExactKernel.from_fractions`` picks),
so the kernel is *equal* to the one ``read_kernel`` returns. Everything else (a row that sums to 1 only
within rounding, a negative entry, a missing file, a format outside the fast grammars) is read by
``read_kernel`` itself, so its checks and messages are unchanged.
"""

from __future__ import annotations

from pathlib import Path

from mechdesign.certify.exact import ExactKernel
from mechdesign.spec.errors import InputError

__all__ = ["read_stochastic_kernel"]


def read_stochastic_kernel(path: str | Path) -> ExactKernel:
    """The kernel of ``path``, exactly, as :func:`~mechdesign.release.kernel_io.read_kernel` reads it."""
    from mechdesign.release.kernel_arrays import read_normalised_fast
    from mechdesign.release.kernel_io import read_kernel

    try:
        fast = read_normalised_fast(Path(path))
    except (InputError, OSError, ValueError):
        fast = None  # read_kernel raises its own message for a bad file
    if fast is not None and not fast[1]:  # no row needed normalising: every row sums to exactly 1
        return fast[0]
    return read_kernel(path)
