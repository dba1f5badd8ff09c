"""`looprover bench --cluster ADDRESS`: the bench's runs on a Dask distributed cluster instead of this machine.

Why Dask: its scheduler already does what a bench over many machines needs, and nothing here re-implements it:
it hands runs to workers as they free up, and when a worker is lost (its machine dies, its process is killed)
it gives the runs that worker held to another worker (up to `distributed.scheduler.allowed-failures`, 3 by
default; a result that finished there but was not collected yet is run again too). Each run on a worker is
still `run_one`: a separate process group with the same wall-clock kill and `--memory` limit as a local run,
so a run's result does not depend on where it ran.

Workers need looprover installed (any Python: the command's interpreter is replaced by the worker's own) and
the benchmark files at the same paths as here (a shared file system). How many runs go at once is the
workers' thread count (`dask worker --nthreads N`); `--jobs` is for local runs only.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

from looprover.bench.runner import RunResult, run_one
from looprover.bench.tasks import BenchTask
from looprover.errors import InputError

CONNECT_TIMEOUT = 30      # seconds to reach the scheduler


def run_on_worker(task: BenchTask, cmd: Sequence[str], timeout: float, grace: float,
                  client_python: str) -> RunResult:
    """One run, on a worker (pickled by reference: the worker imports it from its looprover)."""
    if cmd and cmd[0] == client_python:
        cmd = [sys.executable, *cmd[1:]]
    return run_one(task, cmd, timeout, grace)


def run_on_cluster(address: str, runs: Sequence[tuple[BenchTask, str, list[str]]], timeout: float, grace: float,
                   on_result: Callable[[RunResult], None] | None = None) -> list[RunResult]:
    """Every (task, solver, command) of `runs` on the cluster at `address`; results in the order of `runs`, each
    passed to `on_result` as it arrives. A run the cluster could not finish (KilledWorker: it was on every
    worker that died, allowed-failures times; or it raised on the worker) is UNKNOWN with that reason, like a
    local run that crashed."""
    try:
        from distributed import Client, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError as exc:
        from looprover.bench.plots import BENCH_EXTRA
        raise InputError(f"--cluster needs Dask's distributed, which is not installed ({exc}): {BENCH_EXTRA}") \
            from None

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--cluster {address}: cannot reach the Dask scheduler ({exc})") from None
    results: dict[int, RunResult] = {}
    with client:
        index: dict[str, int] = {}        # future key -> run; no future is kept once its result is in (below)
        pending = []
        for i, (task, solver, cmd) in enumerate(runs):
            if not task.runnable:         # reported without running, as locally
                results[i] = r = run_one(task, cmd, timeout, grace)
                r.solver = solver
                if on_result is not None:
                    on_result(r)
                continue
            fut = client.submit(run_on_worker, task, list(cmd), timeout, grace, sys.executable, pure=False,
                                key=f"looprover-run-{i}-{task.id}-{solver}")
            index[fut.key] = i
            pending.append(fut)
        # Why no reference to a finished future may stay: the scheduler recomputes every result a lost worker
        # still held for a client, so a run that was already collected would be run again (measured: five of
        # ten finished runs re-ran after a worker was killed).
        finished = as_completed(pending, loop=client.loop)
        pending.clear()
        try:
            for fut in finished:
                i = index[fut.key]
                task, solver, _ = runs[i]
                try:
                    r = fut.result()
                except KilledWorker as exc:
                    r = RunResult(task, "UNKNOWN", "-", f"error: the cluster lost every worker that ran it ({exc})")
                except Exception as exc:    # e.g. a worker without looprover: that run failed, like a crash
                    r = RunResult(task, "UNKNOWN", "-", f"error: on the cluster: {type(exc).__name__}: {exc}")
                fut.release()
                r.solver = solver
                results[i] = r
                if on_result is not None:
                    on_result(r)
        except BaseException:
            client.cancel(list(finished.futures))  # queued runs never start; running ones end at their own timeout
            raise
    return [results[i] for i in range(len(runs))]
