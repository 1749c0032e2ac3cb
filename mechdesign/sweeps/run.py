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
import math
import os
import socket
import time
import uuid
from contextlib import contextmanager
from typing import Callable, Iterable

from mechdesign.lp.threads import HIGHS_THREADS_ENV, highs_threads

__all__ = [
    "design_point",
    "design_batch",
    "run_serial",
    "run_isolated",
    "run_dask",
    "error_record",
    "auto_batch_size",
    "SCHEDULER_ENV",
]

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


def estimation_fields(result) -> dict:
    """The sweep table's error columns of a designed kernel at the reports' prior
    (:func:`mechdesign.theory.estimation.estimation_columns`): per-report errors, None without a kernel.
    ``inf`` (the MLE's error on a kernel of rank < N) is written as None too (Parquet and JSON have no inf)."""
    from mechdesign.theory.estimation import accuracy_prior, estimation_columns

    empty = {"mle_error": None, "mle_error_population": None, "inversion_error": None}
    if result.kernel is None:
        return empty
    try:
        cols = estimation_columns(result.kernel, accuracy_prior(result.spec))
    except (ValueError, FloatingPointError):
        return empty
    return {k: (v if v is not None and math.isfinite(v) else None) for k, v in cols.items()}


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
    row.update(estimation_fields(result))
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


SINGLE_THREAD_ENV = {
    HIGHS_THREADS_ENV: "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
"""Environment of every local worker process (set before it starts, so before numpy loads its BLAS):
one HiGHS thread and single-threaded BLAS/OpenMP, so that W workers use W cores, not W × threads."""

MAX_BATCH = 8
"""Most designs per Dask task when batching automatically (see :func:`auto_batch_size`)."""


def auto_batch_size(tasks: int, workers: int) -> int:
    """Designs per Dask task: enough tasks for about 10 per worker (the last ones balance the load),
    at most :data:`MAX_BATCH` per task. Each task costs the scheduler and the driver a few ms of CPU
    on the same cores as the workers; a design here takes 10–200 ms, so one task per design spends a
    large share of a 2-core machine on bookkeeping."""
    return max(1, min(MAX_BATCH, tasks // max(1, 10 * workers)))


def local_cluster(workers: int | None):
    """A LocalCluster of single-threaded worker processes with single-threaded HiGHS and BLAS;
    each worker imports the design pipeline when it starts (``preload``), not in its first task."""
    from dask.distributed import LocalCluster

    n = workers or os.cpu_count() or 1
    import warnings

    with warnings.catch_warnings():  # "Port 8787 is already in use": another cluster's; a free port is taken
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        return LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env=dict(SINGLE_THREAD_ENV),
            silence_logs=logging.ERROR,
            preload=["mechdesign.sweeps.preload"],
        )


@contextmanager
def main_module_not_reimported():
    """While the body runs, ``__main__`` offers spawned processes neither a file nor a module name to re-import.

    A local cluster's workers are started by ``multiprocessing``'s *spawn* method, which re-imports the parent's
    ``__main__`` in each child (from ``__main__.__file__``, or by name for ``python -m``): a script read on
    standard input (``python - <<EOF``) has no file to import, so every worker fails to start, and a script
    without an ``if __name__ == "__main__":`` guard would run its own ``sweep(...)`` again in every worker. The
    workers need nothing from ``__main__`` (they run :func:`design_batch`, from this module), so the parent hides
    ``__file__`` and ``__spec__`` of ``__main__`` for the cluster's whole life (a worker restarted after a crash
    is spawned the same way) and restores them after. ``python -c`` and notebook kernels have neither already."""
    import sys

    main = sys.modules.get("__main__")
    saved = {
        name: main.__dict__[name] for name in ("__file__", "__spec__") if main is not None and name in main.__dict__
    }
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            if "__spec__" in saved:
                main.__spec__ = None
        yield
    finally:
        if main is not None:
            main.__dict__.update(saved)


def design_batch(
    points: list[tuple[str, dict]], threads: int | None, store_root: str | None, marker: str | None, run: str
) -> list[tuple[dict, object]]:
    """Design several points in one Dask task, each written to the store as soon as it finishes.

    The worker writes a point itself when it sees the driver's store (``marker``, a file the driver
    made in the store for this run: a local cluster, or a shared file system); the record then says
    ``_stored`` and comes back without its kernel. Otherwise the driver writes it when the task
    returns. A point this run already stored (a batch run again after its worker died) is read back,
    not designed again. Returns (record, kernel or None) per point, in order.
    """
    store = None
    if store_root is not None and marker is not None and os.path.exists(marker):
        from mechdesign.sweeps.store import DirectoryStore

        store = DirectoryStore(store_root)
    out = []
    for key, spec in points:
        if store is not None:
            old = store.get(key)
            if old is not None and old.get("run") == run:
                old["_stored"] = True
                out.append((old, None))
                continue
        record, kernel = design_point(key, spec, threads)
        record["run"] = run
        if store is not None:
            store.put(record, kernel)
            record["_stored"], kernel = True, None
        out.append((record, kernel))
    return out


def run_dask(
    tasks: list[tuple[str, dict]],
    on_record: OnRecord,
    on_status: Callable[[int], None],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    store_root: str | None = None,
    batch_size: int | None = None,
) -> None:
    """Submit the designs to a Dask cluster, ``batch_size`` per task, and hand each result over as it finishes.

    ``batch_size`` None: :func:`auto_batch_size` on a local cluster writing to a folder store (the
    workers write each point as it finishes, so a killed worker or driver loses nothing finished);
    one design per task on an existing cluster (whose workers may not see the store). Records the
    workers stored carry ``_stored`` (the caller must not write them again).
    """
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
            stack.enter_context(main_module_not_reimported())  # entered first: exited after the cluster closes
            cluster = stack.enter_context(local_cluster(workers))
            client = stack.enter_context(Client(cluster))
        run_token = uuid.uuid4().hex[:8]
        marker = None
        if store_root is not None:
            marker = os.path.join(store_root, f".run-{run_token}")
            with open(marker, "w") as fh:
                fh.write(f"{socket.gethostname()}:{os.getpid()}\n")
            stack.callback(lambda: os.path.exists(marker) and os.unlink(marker))

        def workers_now() -> int:
            try:
                return len(client.scheduler_info().get("workers", {}))
            except Exception:
                return 0

        if batch_size is None:
            batch_size = 1 if scheduler or store_root is None else auto_batch_size(len(tasks), workers_now() or 1)
        n_batches = max(1, -(-len(tasks) // batch_size))
        batches = [tasks[i::n_batches] for i in range(n_batches)]  # strided: each batch mixes sizes
        futures = {}
        for batch in batches:
            fut = client.submit(
                design_batch,
                batch,
                1,
                store_root,
                marker,
                run_token,
                key=f"mechdesign-design-{batch[0][0]}-{len(batch)}-{run_token}",
                pure=False,
                retries=0,
            )
            futures[fut] = [key for key, _ in batch]
        last_info = 0.0
        on_status(workers_now())
        for fut in as_completed(list(futures)):
            keys = futures.pop(fut)
            try:
                results = fut.result()
            except KilledWorker as exc:
                status, message = "worker_lost", f"KilledWorker: {exc}".splitlines()[0]
                results = [(error_record(k, status, message), None) for k in keys]
            except Exception as exc:
                status, message = "error", f"{type(exc).__name__}: {exc}".splitlines()[0]
                results = [(error_record(k, status, message), None) for k in keys]
            fut.release()
            for record, kernel in results:
                on_record(record, kernel)
            now = time.monotonic()
            if now - last_info > 1.0:
                on_status(workers_now())
                last_info = now


def _isolated_child(key: str, spec: dict, memory_limit: int | None, conn) -> None:
    if memory_limit is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    # a Pipe, not a Queue: send() runs in this thread (a Queue's feeder thread may fail to start under
    # the cap, and the child then hangs without a result)
    conn.send(design_point(key, spec, None))


def run_isolated(
    tasks: Iterable[tuple[str, dict]],
    on_record: OnRecord,
    on_status: Callable[[int], None],
    *,
    memory_limit: int | None = None,
    timeout: float | None = None,
) -> None:
    """Each design in a fresh child process (spawned, one after another), under an address-space cap of
    ``memory_limit`` bytes: its peak memory is its own, and a design that needs more fails alone
    (status ``error``, MemoryError) instead of taking the machine down. A child that crashes or
    gives no result within ``timeout`` seconds (default: 3 × the spec's time limit + 120 s) becomes
    a row with status ``error``."""
    import multiprocessing as mp

    # spawn, not fork: a fork of a process with running threads (a Dask client, HiGHS's scheduler)
    # can deadlock in the child (observed here); a fresh interpreter also makes the peak memory its own
    ctx = mp.get_context("spawn")
    on_status(1)
    for key, spec in tasks:
        limit = timeout
        if limit is None:
            spec_limit = (spec.get("solver") or {}).get("time_limit")
            limit = 3 * float(spec_limit) + 120 if spec_limit else 3600.0
        receive, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_isolated_child, args=(key, spec, memory_limit, send))
        start = time.perf_counter()
        child.start()
        send.close()
        got = None
        while got is None and time.perf_counter() - start < limit:
            if receive.poll(0.2):
                try:
                    got = receive.recv()
                except (EOFError, OSError):
                    break
            elif not child.is_alive() and not receive.poll(0):
                break
        receive.close()
        if got is not None:
            record, kernel = got
        else:
            state = "no result within the timeout" if child.is_alive() else f"exit status {child.exitcode}"
            record, kernel = error_record(key, "error", f"child process: {state}", time.perf_counter() - start), None
        child.join(5)
        if child.is_alive():
            child.kill()
            child.join()
        on_record(record, kernel)
