"""The certify stage: a float kernel K in, an exactly (ε,𝒫)-PML-private kernel on the grid 2^−bits out.

It reads top to bottom (:func:`certify_kernel`), each step one named function over one kernel representation,
:class:`OnGrid` (the exact kernel on the grid and, beside it, its floats):

1. :func:`round_to_grid`: K to the grid 2^−52 (then to 2^−bits when the target is coarser);
2. :func:`~mechdesign.certify.exact.check_pml`: the exact check against a rational E ≤ e^ε (Lemma 4 of the
   Dobrushin paper for 𝒫 = Q_X(c), :mod:`mechdesign.certify.lemma4`);
3. :func:`repair_on_grid`: when the check fails, snap to a coarser grid
   (:func:`~mechdesign.certify.exact.snap_to_coarser_grid`), else mix with the mean-row constant kernel
   (:func:`mix_over_grid`, then :func:`~mechdesign.certify.exact.repair_by_mixing`);
4. check again: every repaired kernel the step returns has passed :func:`~mechdesign.certify.exact.check_pml`
   (the constant kernel, weight 1, is the last resort and always passes); a snapped kernel is then compared
   with the repair without snapping (:func:`_unsnapped_if_better`), whose utility can be better for optima of
   1e−9.

The fast paths sit behind those same functions, chosen once, in :func:`round_to_grid`, by :attr:`OnGrid.fused`:
for 𝒫 = Q_X(c) (the simplex is c = 0) on the grid 2^−52 with more than
:data:`~mechdesign.certify.exact.SEARCH_ALSO_BELOW` entries, the rounding writes the int64 kernel and its floats
block of rows by block of rows and folds the exact column aggregates the check reads
(:func:`mechdesign.certify.exact._to_fine_grid_by_rows`, :mod:`mechdesign.certify.fused`), and the mix is one
integer pass written over the int64 kernel the stage owns (:func:`mechdesign.certify.fused.mix_on_grid_in_place`).
Otherwise the same steps run on :func:`~mechdesign.certify.exact.to_grid`'s kernel and the repair also searches
the weight over float mixes (small kernels). The kernel emitted is the same either way (tests/certify/test_certify_fused.py,
tests/certify/test_certify_fractions.py).

``overwrite``: the caller gives its float kernel away (the solver's fresh array), and the stage writes the
rounding's floats, then the mixed kernel's floats, over it instead of into fresh N × M arrays (whose first page
faults cost as much as a pass). K then holds, row by row, either its own rows or their rounding, whose rounding is
itself, so anyone reading K during the stage (the design's incumbent on a Ctrl-C, :mod:`mechdesign.lp.incumbent`)
rounds it to the same integers; Ctrl-C is held back while the mix is written (:func:`_ctrl_c_held`).

The rounding, the snapping probe and the mix run their blocks of rows on the process's HiGHS threads where cores are
idle (:mod:`mechdesign.certify.parallel_rows`): the same bits on any number of threads
(tests/certify/test_certify_parallel_rows.py).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
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
    to_grid,
)
from mechdesign.certify.fused import mix_on_grid_in_place
from mechdesign.privacy.priors import rules
from mechdesign.spec.models import PriorSet

__all__ = [
    "CertifiedKernel",
    "FineGridOutcome",
    "OnGrid",
    "certify_kernel",
    "certify_on_fine_grid",
    "check_and_repair",
    "grid_check_repair",
    "repair_on_grid",
    "round_to_grid",
]


@dataclass
class OnGrid:
    """The stage's one kernel representation: K on the grid 2^−52, and beside it what the fast paths need."""

    fine: ExactKernel
    """K rounded to the grid 2^−52 (what :func:`~mechdesign.certify.exact.to_grid` returns)."""
    target: ExactKernel
    """The kernel checked first: ``fine`` itself, or its rounding to 2^−bits when the target grid is coarser."""
    floats: np.ndarray | None
    """``fine`` as floats, written by the fused rounding (None on the other path: made when needed)."""
    source: np.ndarray
    """K as the stage received it (after the caller's envelope): rounded again by a fallback."""
    c: Fraction | None
    """𝒫 = Q_X(c): c (the simplex: 0); None for other prior sets."""
    fused: bool
    """The fast path: the rounding was fused, and the mix may be written over ``fine``'s integers."""
    in_place: bool
    """``floats`` is the caller's K (``overwrite``): the mix writes over it with Ctrl-C held."""


@dataclass(frozen=True)
class CertifiedKernel:
    """What the certify stage returns."""

    kernel: ExactKernel
    """The emitted exact kernel (passed :attr:`check` unless even the constant kernel could not)."""
    weight: Fraction
    """The weight of the mean-row constant kernel mixed in (0: passed as rounded, or snapped)."""
    check: PMLCheck
    floats: np.ndarray
    """``kernel`` as floats (exact: entries on a grid 2^−k, k ≤ 52)."""
    gridded: ExactKernel | None = None
    """The 2^−52 rounding of K while still intact (None once the in-place mix has written over it)."""
    objective: float | None = None
    """The objective's value of ``kernel`` (:func:`certify_kernel` with ``value``)."""


FineGridOutcome = CertifiedKernel
"""The fused stage's outcome (:func:`certify_on_fine_grid`): the same record."""


def certify_kernel(
    K,
    prior_set: PriorSet,
    bound: Fraction,
    bits: int,
    *,
    value: Callable[[ExactKernel, np.ndarray, PMLCheck], float],
    sense: int,
    overwrite: bool = False,
) -> CertifiedKernel:
    """The certify stage: to the grid, exact check, repair, check again (module docstring).

    ``bound``: the rational E ≤ e^ε the check compares with; ``bits``: the emitted kernel lies on the grid
    2^−bits; ``value(exact, floats, check)``: the objective of a kernel, and ``sense`` (+1 minimise, −1
    maximise), to choose between a snapped kernel and the repair without snapping; ``overwrite``: K is the
    caller's to give away (module docstring)."""
    emitted = _with_value(grid_check_repair(K, prior_set, bound, bits, overwrite), value)
    if _snapped(emitted, bits):
        emitted = _unsnapped_if_better(emitted, prior_set, bound, bits, value, sense)
    return emitted


def grid_check_repair(K, prior_set: PriorSet, bound: Fraction, bits: int, overwrite: bool = False) -> CertifiedKernel:
    """Steps 1 to 4 of the module docstring: to the grid, exact check, repair when it fails, check again (inside
    the repair: every kernel it returns passed its check)."""
    return check_and_repair(round_to_grid(K, prior_set, bits, overwrite), prior_set, bound, bits)


def check_and_repair(grid: OnGrid, prior_set: PriorSet, bound: Fraction, bits: int) -> CertifiedKernel:
    """Steps 2 to 4: the exact check of the kernel on the grid, and the repair when it fails."""
    check = check_pml(grid.target, prior_set, bound)
    if check.feasible:
        return _passed_as_rounded(grid, check)
    return repair_on_grid(grid, check, prior_set, bound, bits)


def round_to_grid(K, prior_set: PriorSet, bits: int, overwrite: bool = False) -> OnGrid:
    """Step 1: K on the grid 2^−52 (and its rounding to 2^−bits), in the fused passes when they apply (module
    docstring), else by :func:`~mechdesign.certify.exact.to_grid`: the same integers either way."""
    fused = _round_fused(K, prior_set, bits, overwrite)
    if fused is not None:
        return fused
    fine = to_grid(K)
    on_target = (1 << bits) % fine.denominator == 0
    target = fine if on_target else to_grid(fine, bits)
    return OnGrid(fine, target, None, K, None, fused=False, in_place=False)


def _round_fused(K, prior_set: PriorSet, bits: int, overwrite: bool) -> OnGrid | None:
    """The fused 2^−52 rounding for 𝒫 = Q_X(c) past SEARCH_ALSO_BELOW entries; None where it does not apply (a
    coarser target grid, another prior set, a small kernel, a row far from stochastic)."""
    K = np.asarray(K, float)
    if bits != GRID_BITS or K.ndim != 2 or K.shape[0] * K.shape[1] <= SEARCH_ALSO_BELOW:
        return None
    c = rules(prior_set, K.shape[0]).equivalent_c()
    if c is None:
        return None
    # an array of its own (not a view into a buffer someone else may still hold), writeable, C-ordered doubles
    in_place = overwrite and K.flags.owndata and K.flags.c_contiguous and K.flags.writeable and K.dtype == np.float64
    floats = K if in_place else np.empty(K.shape)
    fine = _to_fine_grid_by_rows(K, floats)
    if fine is None:
        return None
    return OnGrid(fine, fine, floats, K, Fraction(c), fused=True, in_place=in_place)


def _passed_as_rounded(grid: OnGrid, check: PMLCheck) -> CertifiedKernel:
    floats = grid.floats if grid.target is grid.fine and grid.floats is not None else grid.target.to_float()
    return CertifiedKernel(grid.target, Fraction(0), check, floats, gridded=grid.fine)


def repair_on_grid(grid: OnGrid, check: PMLCheck, prior_set: PriorSet, bound: Fraction, bits: int) -> CertifiedKernel:
    """Step 3 and the check again: the kernel whose ``check`` failed, snapped to a coarser grid when one passes,
    else mixed with its mean-row constant kernel by the smallest weight found (:func:`mix_over_grid` on the fast
    path, :func:`~mechdesign.certify.exact.repair_by_mixing` otherwise). Every kernel returned passed its check."""
    snapped = snap_to_coarser_grid(grid.fine, check, prior_set, bound, bits)
    if snapped is not None:
        return CertifiedKernel(snapped[0], Fraction(0), snapped[1], snapped[0].to_float(), gridded=grid.fine)
    if grid.fused:
        mixed = mix_over_grid(grid, check, prior_set, bound, bits)
        if mixed is not None:
            return mixed
    exact, weight, mixed_check = repair_by_mixing(grid.fine, check, prior_set, bound, bits)
    return CertifiedKernel(exact, weight, mixed_check, exact.to_float(), gridded=grid.fine)


def mix_over_grid(
    grid: OnGrid, check: PMLCheck, prior_set: PriorSet, bound: Fraction, bits: int
) -> CertifiedKernel | None:
    """The fast path of the mix: noise columns merged (:func:`~mechdesign.certify.exact.merge_noise_columns`),
    then the one-pass integer mix written over the int64 kernel the stage owns, its floats over the rounding's
    floats, the column aggregates of the mixed kernel folded in the same pass, and the exact check again. None,
    with the 2^−52 kernel untouched, where the pass does not take the kernel: the caller then repairs as
    :func:`~mechdesign.certify.exact.repair_by_mixing` does."""
    merged = merge_noise_columns(grid.fine, check, bound, grid.c)
    owned = _stochastic_grid_ints(merged)  # the rounding's integers, or merge_noise_columns's copy of them
    aggregates = merged.column_aggregates()
    if owned is None or owned[1] != bits or aggregates is None:
        return None
    ints = owned[0]
    ints.flags.writeable = True  # ours: made by the rounding (or its merged copy), not shared
    # the mix from the rounding's floats when they are the kernel's (no noise column merged); its floats go over
    # the rounding's floats, or to a fresh array when those are K's (K keeps its rounding)
    source = grid.floats if merged is grid.fine else None
    floats = np.empty(grid.fine.shape) if grid.in_place and source is None else grid.floats
    with _ctrl_c_held(grid.in_place):  # K is half mixed during the pass: a Ctrl-C waits until it is whole
        mixed = mix_on_grid_in_place(ints, merged.denominator, grid.c, bound, aggregates, floats, source=source)
    if mixed is None:
        ints.flags.writeable = False  # untouched: the repair after reads it as it is
        return None
    weight, mixed_aggregates = mixed
    if mixed_aggregates is not None:
        # each block checked (entries in [0, 2^52], rows summing to 2^52) and folded into the aggregates
        candidate = GridKernel(ints, merged.denominator, stochastic=True, aggregates=mixed_aggregates)
        mixed_check = check_pml(candidate, prior_set, bound)
        if mixed_check.feasible:
            return CertifiedKernel(candidate, weight, mixed_check, floats)
    return _repair_after_a_failed_mix(grid, weight, source, prior_set, bound, bits)


def _repair_after_a_failed_mix(
    grid: OnGrid, weight: Fraction, source, prior_set: PriorSet, bound: Fraction, bits: int
) -> CertifiedKernel:
    """The in-place mix wrote over the integers and its kernel did not pass (which (★) of grid_repair.py rules
    out): the repair of exact.py from a fresh rounding of K, the same kernel as before, or when the mix went over
    K (overwrite), the repair of what K holds then (mixed rows before the failed block, the rounding's after)."""
    K = grid.source
    exact, again, check = repair(_to_fine_grid_by_rows(K), prior_set, bound, bits=bits)
    if source is K:  # K's rows were mixed by `weight` (some of them) before this repair mixed by `again`
        again = 1 - (1 - weight) * (1 - again)
    return CertifiedKernel(exact, again, check, exact.to_float())


def _with_value(emitted: CertifiedKernel, value) -> CertifiedKernel:
    return CertifiedKernel(
        emitted.kernel,
        emitted.weight,
        emitted.check,
        emitted.floats,
        emitted.gridded,
        value(emitted.kernel, emitted.floats, emitted.check),
    )


def _snapped(emitted: CertifiedKernel, bits: int) -> bool:
    """The emitted kernel is a snapped one (on a grid coarser than the intact 2^−52 rounding, weight 0). When the
    repair mixed (weight > 0) its snapping had failed, and the repair without snapping is the same deterministic
    mixing, so re-running it would give the same kernel."""
    gridded = emitted.gridded
    return (
        bits == 52 and gridded is not None and emitted.kernel.denominator != gridded.denominator and emitted.weight == 0
    )


def _unsnapped_if_better(
    emitted: CertifiedKernel, prior_set: PriorSet, bound: Fraction, bits: int, value, sense: int
) -> CertifiedKernel:
    """The repair of the 2^−52 rounding without snapping (entries move by up to 2^−49 when snapped, which matters
    for optima of 1e−9), when it passes and its objective is better; else ``emitted``."""
    alt, alt_weight, alt_check = repair(emitted.gridded, prior_set, bound, bits=bits, snap=False)
    alt_floats = alt.to_float()
    alt_objective = value(alt, alt_floats, alt_check)
    if alt_check.feasible and sense * alt_objective < sense * emitted.objective:
        return CertifiedKernel(alt, alt_weight, alt_check, alt_floats, emitted.gridded, alt_objective)
    return emitted


def certify_on_fine_grid(
    K, prior_set: PriorSet, bound: Fraction, bits: int, overwrite: bool = False
) -> CertifiedKernel | None:
    """Steps 1–3 of :func:`certify_kernel` on its fast path alone: ``repair(to_grid(K), prior_set, bound,
    bits=bits)`` and its float kernel; None where the fused rounding does not apply (``bits`` ≠ 52, 𝒫 not a
    Q_X(c), at most :data:`~mechdesign.certify.exact.SEARCH_ALSO_BELOW` entries, a row far from stochastic)."""
    grid = _round_fused(K, prior_set, bits, overwrite)
    return None if grid is None else check_and_repair(grid, prior_set, bound, bits)


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
