"""Time one |x − y| worst-case design split into HiGHS and the rest .

Usage (PYTHONPATH selects the tree measured):
    PYTHONPATH=/path/to/tree python benchmarks/worst_case_split.py N ldp|qx

Calls ``solve_worst_case_kernel_lp`` (ε = 1; ``ldp``: c = 0, ``qx``: c = 1/(2N)) and prints the total seconds,
the seconds spent in ``run_interruptible`` (HiGHS, the ray probe's included), the rest, rounds, simplex
iterations and the first 12 hex digits of the kernel's SHA-1, so two trees can be compared result for result.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from fractions import Fraction

import numpy as np

from mechdesign.engines import kernel_lp as kernel_engine
from mechdesign.engines import output_generation as colgen
from mechdesign.engines.worst_case import solve_worst_case_kernel_lp


def main() -> None:
    n, kind = int(sys.argv[1]), sys.argv[2]
    highs = [0.0]
    real = colgen.run_interruptible

    def timed(h):
        t0 = time.perf_counter()
        try:
            return real(h)
        finally:
            highs[0] += time.perf_counter() - t0

    colgen.run_interruptible = timed
    kernel_engine.run_interruptible = timed
    x = np.arange(n, dtype=float)
    L = np.abs(x[:, None] - x[None, :])
    c = Fraction(0) if kind == "ldp" else Fraction(1, 2 * n)
    t0 = time.perf_counter()
    r = solve_worst_case_kernel_lp(L, c, math.nextafter(math.exp(-1), 0))
    total = time.perf_counter() - t0
    sha = hashlib.sha1(np.ascontiguousarray(r.kernel).tobytes()).hexdigest()[:12]
    print(
        f"N={n} {kind} total={total:.2f} highs={highs[0]:.2f} rest={total - highs[0]:.2f} rounds={r.rounds} "
        f"it={r.iterations} sha={sha}"
    )


if __name__ == "__main__":
    main()
