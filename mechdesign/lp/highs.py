"""The one place that makes HiGHS models (``highspy.Highs``), quiet.

HiGHS ≥ 1.16 prints a copyright banner on standard output the first time a process constructs a model,
before any option can be set; in ``mechdesign solve --json`` that line would precede the JSON object. The
first construction therefore runs with file descriptor 1 pointed at /dev/null (C's buffers flushed before
it is restored); later constructions print nothing, and every model starts with ``output_flag`` off
(``solver.verbose`` turns it back on where the caller wants HiGHS's log).

HiGHS's log goes to standard *error*, never to standard output: standard output
carries the report (``solve --json`` must stay one JSON object). Every model has ``log_to_console``
off and a logging callback (highspy's ``cbLogging``) that writes each message to ``sys.stderr``, so
turning ``output_flag`` on anywhere sends the log there. Solvers whose models are not made here (cvxpy's
verbose log and its own HiGHS) run inside :func:`stdout_to_stderr`.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from contextlib import contextmanager

__all__ = [
    "new_highs",
    "configured_highs",
    "highs_options",
    "HIGHS_PROFILES",
    "set_seconds_left",
    "silence_highs_banner",
    "stdout_to_stderr",
]

FEASIBILITY_TOLERANCE = 1e-9
"""HiGHS's primal and dual feasibility tolerance in mechdesign's LPs (its default is 1e−7): the exact certificate
repairs what the solver's tolerance leaves, so the tighter the smaller the repair."""

HIGHS_PROFILES: dict[str, dict[str, object]] = {
    # the compiled LP (lp/solve.py): method, presolve, crossover and the time limit are set per solve
    "lp": {
        "primal_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "dual_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        # HiGHS drops |a| ≤ small_matrix_value (default 1e−9): a prior mass of 1e−9 is such an entry; with
        # row scaling (lp/solve.py row_scales) the smallest value HiGHS accepts keeps it
        "small_matrix_value": 1e-12,
    },
    # the compiled MIP (fixed outputs): gaps well inside the design's optimality tolerance (HiGHS's default relative
    # gap is 1e−4), and a feasibility tolerance below the 1e−7 scale of some f-divergence optima
    "mip": {
        "primal_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "dual_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "small_matrix_value": 1e-12,
        "mip_rel_gap": 1e-9,
        "mip_abs_gap": 1e-12,
        "mip_feasibility_tolerance": 1e-9,
    },
    # the same LP through cvxpy's HiGHS interface (options passed as a dict)
    "cvxpy": {
        "primal_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "dual_feasibility_tolerance": FEASIBILITY_TOLERANCE,
    },
    # a restricted LP that grows between solves (output generation, the interval-partition master, the Dobrushin
    # pairs' one model): primal simplex without presolve, so the basis survives added columns and rows
    "warm_simplex": {
        "solver": "simplex",
        "presolve": "off",
        "simplex_strategy": 4,
        "primal_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "dual_feasibility_tolerance": FEASIBILITY_TOLERANCE,
    },
    # the ray LP's pool of active rays (engines/ray_pool.py): primal simplex without presolve, HiGHS's choice of
    # solver
    "ray_pool": {
        "presolve": "off",
        "simplex_strategy": 4,
        "primal_feasibility_tolerance": FEASIBILITY_TOLERANCE,
        "dual_feasibility_tolerance": FEASIBILITY_TOLERANCE,
    },
    # the ray probe's master (engines/kernel_lp.py): 1e−10, so that its duals give a Lagrangian bound within the
    # uncompiled engine's 1e−9 stopping tolerance without a round of output generation
    "ray_probe": {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    # cutting planes of mutual information's dual start (objectives/mi_dual_start.py)
    "dual_start": {"presolve": "off"},
}
"""Every HiGHS option mechdesign sets, by named profile (besides ``output_flag``, ``threads`` and time limits)."""


def highs_options(profile: str, **overrides) -> dict[str, object]:
    """The options of ``profile`` (:data:`HIGHS_PROFILES`) with ``overrides``."""
    return {**HIGHS_PROFILES[profile], **overrides}


def configured_highs(profile: str, *, verbose: bool = False, threads: int | None = None, **overrides):
    """A quiet model (:func:`new_highs`) with the options of ``profile``, HiGHS's log when ``verbose`` and
    HiGHS's threads as in :mod:`mechdesign.lp.threads` (its scheduler is global: one count per process)."""
    from mechdesign.lp.threads import highs_threads

    h = new_highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("threads", threads or highs_threads())
    for name, value in highs_options(profile, **overrides).items():
        h.setOptionValue(name, value)
    return h


_lock = threading.Lock()
_banner_silenced = False


def _first_construction_silently(highspy) -> None:
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable stdout (e.g. closed): nothing to protect
        highspy.Highs()
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            highspy.Highs()
            try:
                ctypes.CDLL(None).fflush(None)  # C stdio buffers go to /dev/null, not to the restored fd
            except (OSError, AttributeError):
                pass
        finally:
            os.dup2(saved, 1)
            os.close(devnull)
    finally:
        os.close(saved)


def silence_highs_banner() -> None:
    """Build the process's first ``highspy.Highs`` with standard output pointed at /dev/null (once), so that
    no later construction, ours or a library's (cvxpy's HiGHS interface), prints HiGHS's banner."""
    global _banner_silenced
    import highspy

    if not _banner_silenced:
        with _lock:
            if not _banner_silenced:
                _first_construction_silently(highspy)
                _banner_silenced = True


def new_highs():
    """A ``highspy.Highs`` with ``output_flag`` off; the process's first one is built silently."""
    import highspy

    silence_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
    h.cbLogging.subscribe(_log_to_stderr)
    return h


@contextmanager
def stdout_to_stderr():
    """File descriptor 1 (and ``sys.stdout``) pointed at standard error while the body runs: for solver
    logs printed by code that does not take a callback (cvxpy's ``verbose``, its own HiGHS model)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable stdout: nothing to protect
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        try:
            sys.stdout.flush()
            ctypes.CDLL(None).fflush(None)
        except (OSError, ValueError, AttributeError):
            pass
        os.dup2(saved, 1)
        os.close(saved)


def _log_to_stderr(event) -> None:
    """HiGHS's logging callback (called from its solver thread): the message, to standard error."""
    try:
        sys.stderr.write(event.message)
    except Exception:  # noqa: BLE001 - a closed stderr must not break a solve
        pass


def set_seconds_left(h, seconds: float) -> None:
    """Let the next ``run`` of ``h`` take at most ``seconds`` more (at least 1 ms).

    HiGHS's ``time_limit`` is measured on the model's own run clock, which keeps counting over every
    ``run`` of the same ``Highs`` object (``getRunTime()`` grows from solve to solve, also across
    ``passModel``). A loop that re-solves one warm model and sets ``time_limit`` to the seconds left
    would, once the earlier solves add up past that, stop every later solve at 0 iterations; the limit is
    therefore set past the clock's current reading.
    """
    h.setOptionValue("time_limit", float(h.getRunTime()) + max(float(seconds), 1e-3))


def new_warm_simplex(verbose: bool, threads: int | None, tolerance: float):
    """A model for a restricted LP that grows between solves (output/column generation): primal simplex
    without presolve, so the basis survives added columns and rows (new columns at 0 and new rows with
    their slacks basic keep it primal feasible), primal and dual feasibility ``tolerance``, HiGHS's threads
    as in :mod:`mechdesign.lp.threads` (its scheduler is global: one count per process)."""
    return configured_highs(
        "warm_simplex",
        verbose=verbose,
        threads=threads,
        primal_feasibility_tolerance=tolerance,
        dual_feasibility_tolerance=tolerance,
    )
