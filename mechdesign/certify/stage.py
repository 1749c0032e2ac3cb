"""The certify stage's grid, check and repair for (ε, Q_X(c))-PML on the grid 2^−52, in few passes.

:func:`certify_on_fine_grid` returns what ``repair(to_grid(K), prior_set, E)`` and ``.to_float()`` of its kernel
return (:mod:`mechdesign.certify.exact`), the same integers and the same weight, with fewer passes over the
N × M kernel and fewer fresh N × M arrays:

1. the 2^−52 rounding writes the int64 kernel and its float kernel block of rows by block of rows and folds each
   block into the exact column aggregates (max, min, sum) that the exact check reads
   (:func:`mechdesign.certify.exact._to_fine_grid_by_rows`, :mod:`mechdesign.certify.fused`);
2. when the check fails, the snapping grids are tried as :func:`mechdesign.certify.exact.snap_to_coarser_grid`
   tries them: a grid is given up as soon as a probe column of its rounding is shown to break the constraint,
   from the rounding of as few rows as it takes (:func:`mechdesign.certify.fused.coarse_probe_fails`);
3. then the one-pass integer mix (:mod:`mechdesign.certify.grid_repair`) is written over the int64 kernel the
   stage owns and its float kernel over the float array of step 1, folding the aggregates of the mixed kernel
   in the same pass (:func:`mechdesign.certify.fused.mix_on_grid_in_place`; its arithmetic on the rounding's
   floats, :func:`mechdesign.certify.fused.mix_rows_from_floats`, the same integers); the exact check
   (:func:`mechdesign.certify.exact.check_pml`) then compares them with E, column by column (Lemma 4 of the
   Dobrushin paper, :mod:`mechdesign.certify.lemma4`).

Two new N × M arrays in all (int64 and float) instead of three, only the int64 one when the caller gives its float
kernel away (``overwrite``: the floats go over it, :func:`certify_on_fine_grid`), and three passes over the kernel
(rounding, snapping test, mix), the snapping test over part of the rows only when a probe column breaks by a wide enough margin.
Anything else (other prior sets, coarser target grids, small kernels where :func:`repair` also searches the
weight, a mix the in-place pass does not take or whose check fails) goes the way of :func:`repair`, from a fresh
rounding when the in-place mix has already written over the kernel. Every kernel it returns is the one the old
path returns (tests/test_certify_fused.py) and has passed the exact check.

The rounding, the snapping probe and the mix run their blocks of rows on the process's HiGHS threads where cores are
idle (:mod:`mechdesign.certify.parallel_rows`): the same bits on any number of threads
(tests/test_certify_parallel_rows.py).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.certify.exact import (
    GRID_BITS,
    SEARCH_ALSO_BELOW,
    ExactKernel,
    GridKernel,
    PMLCheck,
    _stochastic_grid_ints,
    _to_fine_grid_by_rows,
    check_pml,
    merge_noise_columns,
    repair,
    repair_by_mixing,
    snap_to_coarser_grid,
)
from mechdesign.certify.fused import mix_on_grid_in_place
from mechdesign.privacy.priors import rules
from mechdesign.spec.models import PriorSet

__all__ = ["FineGridOutcome", "certify_on_fine_grid"]


@dataclass(frozen=True)
class FineGridOutcome:
    """What the certify stage needs from the grid and the repair."""

    gridded: ExactKernel | None
    """The 2^−52 rounding of K, when it is still intact (None once the in-place mix has written over it); the
    certify stage repairs it again without snapping when the emitted kernel is a snapped one."""
    kernel: ExactKernel
    """The emitted exact kernel (passed :attr:`check` unless even the constant kernel could not)."""
    weight: Fraction
    check: PMLCheck
    floats: np.ndarray
    """``kernel`` as floats (exact: entries on a grid 2^−k, k ≤ 52), a fresh array the caller owns."""


@contextmanager
def _ctrl_c_held(hold: bool):
    """SIGINT recorded, not raised, for the duration when ``hold`` (and this is the main thread with Python's
    default handler), and raised as KeyboardInterrupt when the block ends: the in-place mix writes the mixed
    kernel over the solver's array, which the design's incumbent (:mod:`mechdesign.lp.incumbent`) reads on
    Ctrl-C, so it reads the rounding or the whole mixed kernel, never half of each. The pass takes < 0.1 s at
    N = 3000."""
    if not hold or threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # someone else's handler (a notebook, a test): left alone
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def certify_on_fine_grid(
    K, prior_set: PriorSet, bound: Fraction, bits: int, overwrite: bool = False
) -> FineGridOutcome | None:
    """``repair(to_grid(K), prior_set, bound, bits=bits)`` and its float kernel, in the fused passes of the module
    docstring; None when it does not apply (``bits`` ≠ 52, 𝒫 not a Q_X(c) for any c, at most
    :data:`~mechdesign.certify.exact.SEARCH_ALSO_BELOW` entries, a row far from stochastic): then the caller
    runs :func:`~mechdesign.certify.exact.to_grid` and :func:`~mechdesign.certify.exact.repair`.

    ``overwrite``: the caller gives ``K`` (a C-contiguous, writeable float64 array owning its data; otherwise the
    stage copies as before) to the stage, which writes the
    2^−52 rounding's floats over it instead of into a fresh N × M array (a fresh array's first page faults
    cost as much as a pass). ``K`` then holds, row by row, either its own rows or their rounding, whose rounding is
    itself, so anyone reading ``K`` during the rounding, and the fallbacks below that round ``K`` again, round it
    to the same integers. The one-pass mix then writes the mixed kernel's floats over ``K`` too (a fresh 72 MB
    array at N = 3000 cost 10–150 ms of first page faults in a fresh process, the pass itself 50 ms), with Ctrl-C
    held back until ``K`` is whole (:func:`_ctrl_c_held`). The returned ``floats`` is then ``K`` itself."""
    K = np.asarray(K, float)
    if bits != GRID_BITS or K.ndim != 2 or K.shape[0] * K.shape[1] <= SEARCH_ALSO_BELOW:
        return None
    n, m = K.shape
    c = rules(prior_set, n).equivalent_c()
    if c is None:
        return None
    # an array of its own (not a view into a buffer someone else may still hold), writeable, C-ordered doubles
    in_place = overwrite and K.flags.owndata and K.flags.c_contiguous and K.flags.writeable and K.dtype == np.float64
    floats = K if in_place else np.empty((n, m))
    start = _to_fine_grid_by_rows(K, floats)
    if start is None:
        return None
    check = check_pml(start, prior_set, bound)
    if check.feasible:
        return FineGridOutcome(start, start, Fraction(0), check, floats)
    snapped = snap_to_coarser_grid(start, check, prior_set, bound, bits)
    if snapped is not None:
        return FineGridOutcome(start, snapped[0], Fraction(0), snapped[1], snapped[0].to_float())
    merged = merge_noise_columns(start, check, bound, Fraction(c))
    owned = _stochastic_grid_ints(merged)  # start's integers, or merge_noise_columns's copy of them
    aggregates = merged.column_aggregates()
    if owned is not None and owned[1] == bits and aggregates is not None:
        ints = owned[0]
        ints.flags.writeable = True  # ours: made by the rounding above (or its merged copy), not shared
        # the mix from the rounding's floats when they are the kernel's (no noise column merged); its floats go
        # over the rounding's floats, or to a fresh array when those are K's (K keeps its rounding)
        source = floats if merged is start else None
        if in_place and source is None:
            floats = np.empty((n, m))  # K keeps its rounding: the integer mix of the merged copy writes here
        with _ctrl_c_held(in_place):  # K is half mixed during the pass: a Ctrl-C waits until it is whole
            mixed = mix_on_grid_in_place(
                ints, merged.denominator, Fraction(c), bound, aggregates, floats, source=source
            )
        if mixed is None:
            ints.flags.writeable = False  # untouched: the repair below reads it as it is
        else:
            weight, mixed_aggregates = mixed
            if mixed_aggregates is not None:
                # each block checked (entries in [0, 2^52], rows summing to 2^52) and folded into the aggregates
                candidate = GridKernel(ints, merged.denominator, stochastic=True, aggregates=mixed_aggregates)
                mixed_check = check_pml(candidate, prior_set, bound)
                if mixed_check.feasible:
                    return FineGridOutcome(None, candidate, weight, mixed_check, floats)
            # written over and not passing (which (★) of grid_repair.py rules out): the repair of exact.py from a
            # fresh rounding of K, the same kernel as before, or when the mix went over K (overwrite), the repair
            # of what K holds then (mixed rows before the failed block, the rounding's after): exactly checked too
            exact, again, check = repair(_to_fine_grid_by_rows(K), prior_set, bound, bits=bits)
            if source is K:  # K's rows were mixed by `weight` (some of them) before this repair mixed by `again`
                again = 1 - (1 - weight) * (1 - again)
            return FineGridOutcome(None, exact, again, check, exact.to_float())
    exact, weight, check = repair_by_mixing(start, check, prior_set, bound, bits)  # as repair() goes on
    return FineGridOutcome(start, exact, weight, check, exact.to_float())
