"""Progress of long work, reported to whoever listens.

Solvers and design stages call :func:`report` with what they know (the phase, a column- or
output-generation round, the current certified gap); nothing happens unless a listener is set. The
command line sets one (:mod:`mechdesign.cli.status`) that shows a live status on a terminal; the
library stays silent. A listener must be cheap and must not raise.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

__all__ = ["report", "listening"]

_listener: Callable[..., None] | None = None


def report(**fields) -> None:
    """Tell the listener (if any): ``phase=``, ``round=``, ``gap=``, ``detail=``."""
    if _listener is not None:
        try:
            _listener(**fields)
        except Exception:  # noqa: BLE001 - progress display must never break a solve
            pass


@contextmanager
def listening(listener: Callable[..., None]):
    global _listener
    previous, _listener = _listener, listener
    try:
        yield
    finally:
        _listener = previous
