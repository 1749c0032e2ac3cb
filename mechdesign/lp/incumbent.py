"""The best kernel and the best bound a running design holds, for Ctrl-C.

When the user interrupts a design, :func:`mechdesign.design.design` reports the best *feasible* kernel
found so far, certified exactly like any other, with the gap to the best *valid* bound found so far.
Every iterative program already meets such kernels and bounds on its way: each restricted master of
output or column generation is a feasible kernel of the full problem and each Lagrangian bound it
computes is valid; a MIP keeps an incumbent and a dual bound; a fixed-output design starts from the
greedy merge of the auto optimum, whose bound holds for every M. This module is where they are
handed in, one mechanism for all of them.

**Using it from a program** (one call, no object to pass down)::

    from mechdesign.lp import incumbent

    incumbent.offer(kernel, bound, stream=master)   # after each round / master solve

``kernel`` is a feasible N × M' kernel of the design problem (floats as the solver returns them: rows
are renormalised, and a kernel wider than the spec's M has its lightest columns merged into its
heaviest one, which is post-processing and keeps every privacy constraint), or a zero-argument
callable returning one. ``bound`` is a *true* bound on the optimum of the design problem as the user
wrote it (lower when minimising, upper when maximising), or a zero-argument callable returning one
(evaluated only if that bound is reported, so an exact recomputation costs nothing while the design
runs) together with ``estimate=`` its float value, used to rank bounds. Either may be None.
``stream`` (optional: any object, compared by identity, or a string) says that this kernel is no
worse than the previous one offered with the same stream, as a generation loop's restricted masters
are: it then replaces that one without evaluating either. Kernels are evaluated (the objective's own
value of the normalised kernel) only when more than :data:`MAX_PENDING` streams wait, or when the
design asks for the best one after Ctrl-C; so an offer costs next to nothing even at N = M = 3000.
The call is a no-op when no design is collecting (a program run on its own), never raises for a bad
kernel (it is ignored when evaluated), and the design keeps the best kernel and the best bound.
Offers end in plain assignments of immutable records, so a KeyboardInterrupt that lands in the middle
of one leaves the candidates held before it in place.

A program that solves LPs through :func:`mechdesign.lp.solve.solve_lp` need not offer their kernels:
every solved LP that has a kernel block (``lp.blocks["K"]``, made by
:func:`mechdesign.objectives.compile.add_pml_kernel`) is offered by the solver, including a MIP's
incumbent read after Ctrl-C cancels HiGHS. Bounds are different: an LP's multipliers bound *that*
LP, which is the design problem only when the program says so, with :func:`design_problem`
(``with incumbent.design_problem(lp, bound_lp): solve_lp(lp, ...)``); then the solver and output
generation offer the weak-duality bound of its multipliers (:func:`mechdesign.lp.program.dual_bound`
on ``bound_lp``, lazily) and a MIP's dual bound.

A new engine (say a Dantzig–Wolfe master for expected loss) calls
``incumbent.offer(K, bound, stream=master)`` once per master solve with the master's kernel and its
Lagrangian bound (or ``bound=lambda: dual_bound(lp, y), estimate=...`` when the rigorous bound is
costly); nothing else is needed for Ctrl-C to report it. Tests can interrupt it without signals by
replacing its module's ``run_interruptible`` with one that raises KeyboardInterrupt at round k
(``tests/lp/test_interrupt_incumbent.py``).
"""

from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Incumbent", "Offer", "offer", "offer_lp", "collecting", "current", "design_problem"]

ROW_SUM_TOLERANCE = 1e-6
"""An offered kernel whose row sums are further than this from 1 (or with entries below −this) is
ignored: it is not a solution of the kernel LP (e.g. a point of an interrupted simplex)."""
PRIMAL_TOLERANCE = 1e-6
"""An LP solution offered through :func:`offer_lp` must satisfy its rows and bounds to this."""


@dataclass(frozen=True)
class Offer:
    """A kernel as held: normalised, exactly ``columns`` wide, with the objective's value there."""

    kernel: np.ndarray
    value: float
    source: str


@dataclass(frozen=True)
class _Pending:
    """A kernel offered but not yet evaluated: an array, or a callable that makes it."""

    kernel: object
    source: str
    stream: object


@dataclass(frozen=True)
class _Bound:
    estimate: float
    """The bound's float value (the bound itself when ``settle`` is None)."""
    settle: Callable[[], float] | None
    source: str


MAX_PENDING = 4
"""Kernels held unevaluated (one per stream) before they are evaluated and the best kept."""


class Incumbent:
    """The best feasible kernel and the best valid bound offered during one design.

    ``sense`` is +1 when minimising, −1 when maximising; ``value`` the objective of a kernel
    (N × ``columns`` floats); ``columns`` the M of the spec (kernels are padded or merged to it).

    Kernels are not evaluated when offered (the objective of an N = M = 3000 kernel costs 0.2–0.6 s,
    more than a round of output generation): an offer with a ``stream`` replaces the pending offer of
    the same stream (a program whose successive kernels are no worse, such as the restricted masters
    of one generation loop, whose optimum can only improve as outputs join), and only when more than
    :data:`MAX_PENDING` streams are pending, or when the best kernel is asked for
    (:meth:`best_kernel`), are they evaluated and the best kept.
    """

    def __init__(self, sense: int, value: Callable[[np.ndarray], float], columns: int):
        self.sense = sense
        self._value = value
        self.columns = columns
        self._best: Offer | None = None
        self._pending: tuple[_Pending, ...] = ()
        self._bound: _Bound | None = None
        self._design_lps: list[tuple[object, object]] = []

    # ------------------------------------------------------------ kernels
    def _shape(self, kernel) -> np.ndarray | None:
        K = np.array(kernel() if callable(kernel) else kernel, dtype=float, copy=True)
        if K.ndim != 2 or K.shape[1] == 0 or not np.all(np.isfinite(K)):
            return None
        if K.min() < -ROW_SUM_TOLERANCE or np.any(np.abs(K.sum(axis=1) - 1.0) > ROW_SUM_TOLERANCE):
            return None
        np.clip(K, 0.0, None, out=K)
        m = self.columns
        if K.shape[1] > m:  # merge the lightest columns into the heaviest (post-processing)
            order = np.argsort(-K.sum(axis=0), kind="stable")
            keep, rest = np.sort(order[:m]), order[m:]
            merged = K[:, keep]
            merged[:, int(np.argmax(merged.sum(axis=0)))] += K[:, rest].sum(axis=1)
            K = merged
        elif K.shape[1] < m:  # zero columns leak nothing and add nothing
            K = np.hstack([K, np.zeros((K.shape[0], m - K.shape[1]))])
        K /= K.sum(axis=1, keepdims=True)
        return K

    def _evaluated(self, pending: _Pending) -> Offer | None:
        K = self._shape(pending.kernel)
        if K is None:
            return None
        try:
            v = float(self._value(K))
        except Exception:  # noqa: BLE001 - a kernel the objective cannot evaluate is not kept
            return None
        return Offer(K, v, pending.source) if math.isfinite(v) else None

    def _settle(self, pending) -> Offer | None:
        best = self._best
        for p in pending:
            o = self._evaluated(p)
            if o is not None and (best is None or self.sense * o.value < self.sense * best.value):
                best = o
        return best

    def offer_kernel(self, kernel, source: str = "", stream=None) -> None:
        """Hold ``kernel`` (an array, or a callable returning one) as a candidate (class docstring)."""
        if kernel is None:
            return
        entry = _Pending(kernel, source, stream)
        pending = tuple(p for p in self._pending if stream is None or not _same_stream(p.stream, stream)) + (entry,)
        if len(pending) > MAX_PENDING:
            self._best = self._settle(pending)  # an interrupt between these two assignments evaluates
            pending = ()  # the same candidates again later: nothing is lost
        self._pending = pending

    def best_kernel(self) -> Offer | None:
        """The best kernel offered so far (evaluating the pending ones), or None."""
        self._best, self._pending = self._settle(self._pending), ()
        return self._best

    # ------------------------------------------------------------ bounds
    def offer_bound(self, bound, estimate: float | None = None, source: str = "") -> bool:
        """Keep ``bound`` (a float, or a callable with its ``estimate``) when tighter; True when kept."""
        if bound is None:
            return False
        if callable(bound):
            if estimate is None:
                raise ValueError("a lazy bound needs estimate=, its float value")
            record = _Bound(float(estimate), bound, source)
        else:
            record = _Bound(float(bound), None, source)
        if not math.isfinite(record.estimate):
            return False
        old = self._bound
        if old is None or self.sense * record.estimate > self.sense * old.estimate:
            self._bound = record
            return True
        return False

    def offer(self, kernel=None, bound=None, *, estimate: float | None = None, source: str = "", stream=None) -> None:
        """Offer a feasible kernel and/or a valid bound (module docstring)."""
        self.offer_kernel(kernel, source, stream)
        self.offer_bound(bound, estimate, source)

    @property
    def bound_estimate(self) -> float | None:
        """The best bound's float value (not yet recomputed when it was offered lazily)."""
        return None if self._bound is None else self._bound.estimate

    def settled_bound(self) -> float | None:
        """The best bound, recomputed when it was offered lazily (None when there is none, or when its
        recomputation fails)."""
        b = self._bound
        if b is None:
            return None
        if b.settle is None:
            return b.estimate
        try:
            value = float(b.settle())
        except Exception:  # noqa: BLE001 - no bound rather than a doubtful one
            return None
        return value if math.isfinite(value) else None

    # ------------------------------------------------------------ LPs that are the design problem
    def bound_lp_of(self, lp):
        """The LP whose multipliers bound the design when ``lp`` is declared the design problem, else None."""
        for declared, bound_lp in self._design_lps:
            if declared is lp:
                return bound_lp
        return None


def _same_stream(a, b) -> bool:
    """Streams are objects compared by identity (an LP), or strings compared by value."""
    return a is b or (isinstance(a, str) and isinstance(b, str) and a == b)


_current: contextvars.ContextVar[Incumbent | None] = contextvars.ContextVar("mechdesign_incumbent", default=None)


def current() -> Incumbent | None:
    """The incumbent of the design running in this context, or None."""
    return _current.get()


@contextmanager
def collecting(incumbent: Incumbent):
    """Make ``incumbent`` receive every :func:`offer` made while the body runs."""
    token = _current.set(incumbent)
    try:
        yield incumbent
    finally:
        _current.reset(token)


def offer(kernel=None, bound=None, *, estimate: float | None = None, source: str = "", stream=None) -> None:
    """Offer a feasible kernel and/or a valid bound to the running design (no-op outside one);
    ``stream`` names a sequence of kernels each no worse than the one before (class :class:`Incumbent`)."""
    inc = _current.get()
    if inc is not None:
        inc.offer(kernel, bound, estimate=estimate, source=source, stream=stream)


@contextmanager
def design_problem(lp, bound_lp=None):
    """Declare that ``lp`` *is* the design problem while the body runs: bounds from its multipliers
    (weak duality on ``bound_lp``, default ``lp``) and a MIP's dual bound are then offered as bounds
    of the design. Without a collecting design this does nothing."""
    inc = _current.get()
    if inc is None:
        yield
        return
    entry = (lp, lp if bound_lp is None else bound_lp)
    inc._design_lps.append(entry)
    try:
        yield
    finally:
        inc._design_lps.remove(entry)


def offer_lp(
    lp,
    x=None,
    row_dual=None,
    *,
    estimate: float | None = None,
    bound: float | None = None,
    source: str = "",
    feasible: bool = False,
):
    """Offer what a solved (or interrupted) LP holds: the kernel block of ``x`` when ``x`` satisfies
    the LP to :data:`PRIMAL_TOLERANCE` (checked unless the caller says ``feasible``: an optimal point
    whose rows the solver's ladder has checked already, a restricted master's point), and, when ``lp`` is declared the design problem (:func:`design_problem`), the bound of
    ``row_dual`` (weak duality, computed lazily; ``row_dual`` may itself be a callable returning the
    multipliers; ``estimate`` is the bound's float value, in the user's sense) or a ready ``bound``
    (a MIP's dual bound, already moved outwards by its tolerances). No-op outside a design."""
    inc = _current.get()
    if inc is None:
        return
    blocks = getattr(lp, "blocks", None) or {}
    if x is not None and "K" in blocks:
        x = np.asarray(x, float)
        if x.shape == (lp.num_cols,) and (feasible or _violation(lp, x) <= PRIMAL_TOLERANCE):
            index = blocks["K"]
            inc.offer_kernel(lambda: x[index], source, stream=lp)  # one LP's later points are no worse
    bound_lp = inc.bound_lp_of(lp)
    if bound_lp is None:
        return
    if bound is not None:
        inc.offer_bound(bound, source=source)
    elif row_dual is not None and estimate is not None:
        from mechdesign.lp.program import dual_bound

        y = row_dual if callable(row_dual) else np.array(row_dual, copy=True)
        inc.offer_bound(lambda: dual_bound(bound_lp, y() if callable(y) else y), estimate=estimate, source=source)


def _violation(lp, x: np.ndarray) -> float:
    Ax = lp.A @ x
    parts = [lp.row_lower - Ax, Ax - lp.row_upper, lp.col_lower - x, x - lp.col_upper]
    return float(max((np.max(p[np.isfinite(p)], initial=0.0) for p in parts), default=0.0))
