"""Execution of a sweep: one design per task, serially or on Dask.

* ``serial``: in this process, one design after another (for debugging; HiGHS keeps this
  process's thread count, :mod:`mechdesign.lp.threads`).
* default: a local ``dask.distributed`` cluster of worker *processes*, one per core, one
  thread each, every worker started with ``MECHDESIGN_HIGHS_THREADS=1`` so that each design
  runs a single-threaded HiGHS and the processes share the cores.
* ``scheduler='tcp://host:8786'`` (or ``DASK_SCHEDULER_ADDRESS``): an existing
  ``dask.distributed`` cluster; its workers need mechdesign installed. The first task on a
  fresh worker sets ``MECHDESIGN_HIGHS_THREADS=1`` unless the worker's environment sets it.

The driver receives each result as it finishes and hands it to ``on_record`` (which writes
it to the store at once). A design that raises becomes a record with status ``error`` and the
message; a task whose workers keep dying (Dask gives up after
``distributed.scheduler.allowed-failures`` attempts) becomes ``worker_lost``. A worker that
dies once is not an error: Dask runs its tasks again on the others.
Per-task time limits are the spec's own (``solver.time_limit``, the LP solver's limit).
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from typing import Callable, Iterable

from mechdesign.lp.threads import HIGHS_THREADS_ENV, highs_threads

__all__ = ["design_point", "run_serial", "run_dask", "error_record", "SCHEDULER_ENV"]

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


def _reset_peak_rss() -> bool:
    """Reset this process's peak RSS (Linux: ``echo 5 > /proc/self/clear_refs``); False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mib(reset_ok: bool) -> float | None:
    """Peak RSS since the reset (VmHWM), MiB; without a reset, the process's peak so far (an upper bound)."""
    if reset_ok:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except Exception:
        return None


def _rounds(message: str) -> int | None:
    """Rounds of output/ray generation when the solver's message reports them ("… 3 rounds …")."""
    import re

    m = re.search(r"(\d+) rounds", message or "")
    return int(m.group(1)) if m else None


def row_fields(result: dict) -> dict:
    """The tidy fields of one design from its ``DesignResult.to_json()``."""
    cert = result.get("certificate") or {}
    cf = cert.get("closed_form") or {}
    solve = result.get("solve") or {}
    kernel = result.get("kernel")
    return {
        "status": result["status"],
        "certified": bool(result["status"] == "optimal" and cert.get("feasible")),
        "objective": result.get("objective"),
        "objective_kind": result.get("objective_kind"),
        "epsilon_value": result.get("epsilon"),
        "N": len(result.get("labels") or []),
        "M": len(kernel[0]) if kernel else None,
        "feasible": cert.get("feasible"),
        "leakage": cert.get("leakage"),
        "dual_bound": cert.get("dual_bound"),
        "gap": cert.get("gap"),
        "lp_objective": cert.get("lp_objective"),
        "repair_weight": cert.get("repair_weight"),
        "closed_form": cf.get("name"),
        "closed_form_value": cf.get("value"),
        "closed_form_difference": cf.get("difference"),
        "solve_seconds": solve.get("seconds"),
        "design_seconds": solve.get("total_seconds"),
        "iterations": solve.get("iterations"),
        "lps": solve.get("lps"),
        "rounds": _rounds(solve.get("message", "")),
        "method": solve.get("method"),
    }


def error_record(key: str, status: str, message: str, seconds: float | None = None) -> dict:
    return {
        "key": key,
        "status": status,
        "message": message,
        "row": {"status": status, "certified": False},
        "result": None,
        "seconds": seconds,
        "peak_mib": None,
        "worker": None,
        "finished_at": time.time(),
    }


def design_point(key: str, spec: dict, threads: int | None = None) -> tuple[dict, object]:
    """Run one design (in whatever process the task lands in); return (record, kernel or None).

    ``threads``: HiGHS threads for this process when it has not fixed them yet (None: leave as is).
    Never raises for a failing design: the exception becomes a record with status ``error``.
    """
    if threads is not None:
        os.environ.setdefault(HIGHS_THREADS_ENV, str(threads))
    import numpy as np

    from mechdesign.design import design

    reset = _reset_peak_rss()
    start = time.perf_counter()
    try:
        result = design(spec)
    except Exception as exc:  # a failing task becomes a row, never a crashed sweep
        rec = error_record(key, "error", f"{type(exc).__name__}: {exc}".splitlines()[0], time.perf_counter() - start)
        rec["worker"] = f"{socket.gethostname()}:{os.getpid()}"
        return rec, None
    seconds = time.perf_counter() - start
    data = result.to_json()
    kernel = None if result.kernel is None else np.asarray(result.kernel, dtype=np.float64)
    row = row_fields(data)
    data.pop("kernel", None)
    data.pop("kernel_exact", None)  # the float64 kernel in the .npy holds the same exact grid values
    record = {
        "key": key,
        "status": row["status"],
        "message": (data.get("solve") or {}).get("message", ""),
        "row": row,
        "result": data,
        "seconds": seconds,
        "peak_mib": _peak_rss_mib(reset),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "finished_at": time.time(),
        "highs_threads": highs_threads(),
    }
    return record, kernel


OnRecord = Callable[[dict, object], None]


def run_serial(tasks: Iterable[tuple[str, dict]], on_record: OnRecord, on_status: Callable[[int], None]) -> None:
    on_status(1)
    for key, spec in tasks:
        record, kernel = design_point(key, spec, None)
        on_record(record, kernel)


def local_cluster(workers: int | None):
    """A LocalCluster of single-threaded worker processes with single-threaded HiGHS."""
    from dask.distributed import LocalCluster

    n = workers or os.cpu_count() or 1
    env = {HIGHS_THREADS_ENV: "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    import warnings

    with warnings.catch_warnings():  # "Port 8787 is already in use": another cluster's; a free port is taken
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        return LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env=env,
            silence_logs=logging.ERROR,
        )


def run_dask(
    tasks: list[tuple[str, dict]],
    on_record: OnRecord,
    on_status: Callable[[int], None],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
) -> None:
    """Submit one task per design to a Dask cluster and hand each result over as it finishes."""
    from contextlib import ExitStack

    from dask.distributed import Client, as_completed

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover
        KilledWorker = RuntimeError

    with ExitStack() as stack:
        if scheduler:
            from mechdesign.spec.errors import InputError

            try:
                client = stack.enter_context(Client(scheduler, timeout="20s"))
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"--scheduler: cannot connect to {scheduler}: {exc}") from None
        else:
            cluster = stack.enter_context(local_cluster(workers))
            client = stack.enter_context(Client(cluster))
        run_token = uuid.uuid4().hex[:8]
        futures = {}
        for key, spec in tasks:
            fut = client.submit(
                design_point, key, spec, 1, key=f"mechdesign-design-{key}-{run_token}", pure=False, retries=0
            )
            futures[fut] = key
        last_info = 0.0

        def workers_now() -> int:
            try:
                return len(client.scheduler_info().get("workers", {}))
            except Exception:
                return 0

        on_status(workers_now())
        for fut in as_completed(list(futures)):
            key = futures.pop(fut)
            try:
                record, kernel = fut.result()
            except KilledWorker as exc:
                record, kernel = error_record(key, "worker_lost", f"KilledWorker: {exc}".splitlines()[0]), None
            except Exception as exc:
                record, kernel = error_record(key, "error", f"{type(exc).__name__}: {exc}".splitlines()[0]), None
            fut.release()
            on_record(record, kernel)
            now = time.monotonic()
            if now - last_info > 1.0:
                on_status(workers_now())
                last_info = now
