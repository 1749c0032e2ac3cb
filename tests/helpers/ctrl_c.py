"""The command line with a real Ctrl-C (SIGINT) sent at a moment chosen by the work itself, not by a clock.

``python -m helpers.ctrl_c WHEN ARGV...`` runs ``mechdesign ARGV...`` in this process, as the console script does
(:func:`mechdesign.cli.main.entry`), and sends SIGINT to this process (``os.kill``, through Python's own handler,
as a terminal's Ctrl-C arrives) when WHEN happens:

* ``round=K``: the K-th round of output or column generation is reported (:func:`mechdesign.lp.progress.report`);
  the interrupt lands between round K and round K + 1, with more rounds to come.
* ``mip-incumbent``: HiGHS reports its first improving MIP solution (its ``cbMipImprovingSolution`` event, fired
  from the solver thread while branch and bound runs); that thread then waits until the main thread has cancelled
  HiGHS, so the interrupt lands while the MIP runs and holds an incumbent.
* ``design=K``: the K-th call of :func:`mechdesign.design.design` (a sweep's K-th point) makes its first
  progress report: the interrupt lands inside that design.

So the interrupted path is the only possible one, whatever the machine's load: a test that sends SIGINT after a
sleep, or after reading a line of a solve that finishes a fraction of a second later, races the solve. Nothing
here changes the library: the trigger is installed by this wrapper only. If WHEN never happens, no signal is sent
and the command ends as it would (the test then sees exit status 0 instead of 130).
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import nullcontext

_sent: list[bool] = []


def send_ctrl_c() -> None:
    """SIGINT to this process, once."""
    if not _sent:
        _sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)


def _at_round(k: int):
    from mechdesign.lp.progress import listening

    def listener(**fields) -> None:
        if fields.get("round") == k:
            send_ctrl_c()

    return listening(listener)  # for the whole run (the command sets no listener of its own off a terminal)


def _at_mip_incumbent() -> None:
    import threading

    import highspy

    real_start, real_cancel = highspy.Highs.startSolve, highspy.Highs.cancelSolve
    cancelled = threading.Event()

    def on_improving_solution(event) -> None:
        send_ctrl_c()
        # the solver thread waits here until the main thread has seen the Ctrl-C and cancelled HiGHS, so that
        # branch and bound cannot end meanwhile (the wait only guards against a hang)
        cancelled.wait(timeout=120)

    def start_solve(self):
        self.cbMipImprovingSolution.subscribe(on_improving_solution)  # once per model (subscribe ignores repeats)
        return real_start(self)

    def cancel_solve(self):
        real_cancel(self)
        cancelled.set()

    highspy.Highs.startSolve = start_solve
    highspy.Highs.cancelSolve = cancel_solve


def _at_design(k: int) -> None:
    from importlib import import_module

    from mechdesign.lp import progress

    module = import_module("mechdesign.design")  # the module (the package's attribute `design` is the function)

    real_design = module.design
    calls = []

    def design(source):
        calls.append(source)
        if len(calls) != k:
            return real_design(source)
        with progress.listening(lambda **fields: send_ctrl_c()):
            return real_design(source)

    module.design = design


def main() -> None:
    when, argv = sys.argv[1], sys.argv[2:]
    name, _, value = when.partition("=")
    context = nullcontext()
    if name == "round":
        context = _at_round(int(value))
    elif name == "mip-incumbent":
        _at_mip_incumbent()
    elif name == "design":
        _at_design(int(value))
    else:
        raise SystemExit(f"helpers.ctrl_c: unknown moment {when!r}")
    from mechdesign.cli.main import entry

    sys.argv = ["mechdesign", *argv]
    with context:
        entry()


if __name__ == "__main__":
    main()
