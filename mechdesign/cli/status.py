"""Live status of ``mechdesign solve`` on a terminal.

On a TTY (and without ``--quiet``), a rich status line shows the phase, the column/output-generation
round, the current certified gap (restricted value − bound) and the elapsed time, fed by
:func:`mechdesign.lp.progress.report`. It is transient: it disappears when the solve ends, so the
report is unchanged. When stdout or stderr is not a terminal, or with ``--quiet``, nothing is shown.
Before starting, :func:`size_warning` warns when N·M implies minutes.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager, nullcontext

__all__ = ["live_status", "size_warning", "SLOW_CELLS"]

SLOW_CELLS = 250_000
"""N·M past which a kernel design typically takes minutes (measured: N = M = 1000 took 41 s on
2 cores, README benchmarks; the MI and f-divergence designs are slower per cell)."""


def size_warning(spec) -> str | None:
    cells = spec.n * spec.m
    if cells > SLOW_CELLS:
        return (
            f"mechdesign: note: N x M = {spec.n} x {spec.m} = {cells:,} kernel entries; this may take minutes "
            "(Ctrl-C stops it; solver.time_limit bounds it)"
        )
    return None


@contextmanager
def live_status(quiet: bool = False):
    """Show a live status while the body runs, when attached to a terminal and not quiet."""
    from mechdesign.lp.progress import listening

    if quiet or not (sys.stdout.isatty() and sys.stderr.isatty()):
        with nullcontext():
            yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    start = time.perf_counter()
    state = {"phase": "solving", "round": None, "gap": None, "detail": ""}
    with console.status("solving", spinner="dots") as status:

        def update(**fields):
            state.update({k: v for k, v in fields.items() if k in state})
            parts = [state["phase"]]
            if state["round"] is not None:
                parts.append(f"round {state['round']}")
            if state["gap"] is not None:
                parts.append(f"certified gap {state['gap']:.3g}")
            if state["detail"]:
                parts.append(state["detail"])
            parts.append(f"{time.perf_counter() - start:.1f} s")
            status.update(" · ".join(parts))

        with listening(update):
            yield
