"""`bench --runexec`: each run measured and limited by BenchExec's RunExecutor (cgroups) instead of wait4.

Why: wait4's CPU time counts only the processes the verifier waited for, and `--memory` (RLIMIT_AS) caps each
process's address space, not the run's memory. A cgroup holds every process of the run, so its CPU time is the
run's, the memory limit is on all of them together, and a kill at the limit kills all of them: how SV-COMP
measures. It needs usable cgroups (`executor()` says why not); without them bench keeps its own runner.
"""
from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from typing import Sequence

from looprover.bench.tasks import BenchTask
from looprover.errors import InputError

POLL = 0.05


def executor():
    """(a RunExecutor, "") where cgroups allow measuring and limiting CPU time and memory and killing a run,
    else (None, the reason)."""
    try:
        from benchexec.runexecutor import RunExecutor
        ex = RunExecutor(use_namespaces=False)
    except ImportError as exc:
        return None, f"BenchExec is not installed ({exc})"
    except (Exception, SystemExit) as exc:         # BenchExec exits when it cannot use cgroups at all
        return None, f"cgroups cannot be used ({exc or type(exc).__name__})"
    missing = [s for s in (ex.cgroups.CPU, ex.cgroups.MEMORY, ex.cgroups.FREEZE) if s not in ex.cgroups]
    if missing:
        return None, f"cgroup subsystems missing: {', '.join(missing)}"
    return ex, ""


def choose(requested: bool, cluster: str | None) -> bool:
    """Whether `bench` runs under RunExecutor: when asked for and cgroups allow it; otherwise a warning says why
    and the usual runner measures."""
    if not requested:
        return False
    if cluster:
        raise InputError("--runexec measures runs on this machine; it cannot be combined with --cluster")
    ex, why = executor()
    if ex is None:
        print(f"warning: --runexec: {why}; the runs are measured with wait4 and limited by --memory per process",
              file=sys.stderr)
    return ex is not None


def run_measured(task: BenchTask, cmd: Sequence[str], timeout: float, grace: float, memory: int | None,
                 stop: threading.Event | None = None):
    """One run under a RunExecutor: killed at timeout + grace wall time or `memory` MB (all its processes
    together), or when `stop` is set; CPU time and wall time from the cgroup."""
    from looprover.bench.runner import RunResult, interpret
    ex, why = executor()
    if ex is None:
        raise RuntimeError(f"--runexec: {why}")
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL):
            if stop is not None and stop.is_set():
                ex.stop()
                return
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with tempfile.TemporaryDirectory() as d:
            out, err = Path(d) / "out", Path(d) / "err"
            res = ex.execute_run(list(cmd), str(out), error_filename=str(err), walltimelimit=timeout + grace,
                                 memlimit=memory * 2**20 if memory else None, write_header=False)
            stdout = out.read_text(errors="replace") if out.exists() else ""
            stderr = err.read_text(errors="replace") if err.exists() else ""
    finally:
        done.set()
        watcher.join()
    wall, cpu = float(res.get("walltime", 0.0)), float(res.get("cputime", 0.0))
    reason = res.get("terminationreason")
    if stop is not None and stop.is_set():
        r = RunResult(task, "UNKNOWN", "-", "interrupted", wall, cpu)
    elif reason == "walltime":
        r = RunResult(task, "UNKNOWN", "-", f"timeout (killed after {wall:.1f} s)", wall, cpu)
    elif reason == "memory":
        r = RunResult(task, "UNKNOWN", "-", f"memout (the run's processes reached {memory} MB)", wall, cpu)
    else:
        code = res["exitcode"]
        r = interpret(task, -code.signal if code.signal else code.value, stdout, stderr, wall, cpu)
    if res.get("memory") is not None:
        r.memory_mb = float(res["memory"]) / 2**20        # the cgroup's peak, all processes of the run
    return r
