"""The `portfolio` engine: run several engines in parallel processes and accept only checked evidence.

Why processes and not threads: a solver call can run far past its deadline inside native code, and only a
process can be killed reliably. Children are forked where possible (no re-import of z3, no pickling of the
program; `spawn` is the fallback and needs a picklable Program, which it is: frozen dataclasses all the
way down). Each child reports one `Verdict` through a pipe; a child that dies reports nothing and counts as
UNKNOWN.

Decision rule (never guess):
  * a FALSE counts only with a `Counterexample` whose `validated` flag is set (the engine replayed it on the
    original program); otherwise it is demoted to UNKNOWN;
  * the first definitive answer wins and the other engines are killed; if a TRUE and a FALSE are both on
    the table, the answer is UNKNOWN("engines disagree ...");
  * at the deadline (plus a short grace) every engine still running is killed.
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection
import os
import pickle
import signal
import sys
import time
import traceback
from dataclasses import replace
from typing import Callable

from looprover.engines import EngineOptions, get_engine
from looprover.errors import UnsupportedError
from looprover.program.cfa import Program
from looprover.verdict import Counterexample, Status, Verdict

PORTFOLIO_ENGINES: tuple[str, ...] = ("bmc", "kinduction", "labmc")
KILL_GRACE = 1.0     # seconds past the deadline before a straggler is killed


def accept(verdict: Verdict) -> Verdict:
    """The verdict if its evidence is acceptable; an unvalidated FALSE becomes UNKNOWN."""
    if verdict.status == Status.FALSE:
        cex = verdict.evidence
        if not isinstance(cex, Counterexample) or not cex.validated:
            return replace(verdict, status=Status.UNKNOWN, evidence=None,
                           reason=f"counterexample not validated ({verdict.reason})")
    return verdict


def verify(program: Program, options: EngineOptions) -> Verdict:
    engines, results = [], {}
    for name in PORTFOLIO_ENGINES:
        try:
            engines.append((name, get_engine(name)))
        except (ImportError, KeyError) as exc:   # a missing engine must not take the others down
            results[name] = Verdict.unknown(name, f"engine not available: {exc}")
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    forked = ctx.get_start_method() == "fork"
    started = time.monotonic()
    sys.stdout.flush()    # a forked child flushes its copy of these buffers on exit: empty them first
    sys.stderr.flush()
    running: dict[multiprocessing.connection.Connection, tuple[str, mp.Process]] = {}
    for name, fn in engines:
        progress = _Prefixed(name, options.progress) if forked and options.progress is not None else None
        child_opts = EngineOptions(timeout=max(options.remaining(), 0.0), bitvector=options.bitvector,
                                   max_bound=options.max_bound, progress=progress)
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(name, fn, program, child_opts, send), name=f"looprover-{name}",
                           daemon=True)
        proc.start()
        send.close()
        running[recv] = (name, proc)
        options.report(f"portfolio: started {name} (pid {proc.pid})")

    decided: Verdict | None = None
    try:
        while running and decided is None:
            wait_for = options.deadline + KILL_GRACE - time.monotonic()
            if wait_for <= 0:
                break
            for conn in mp.connection.wait(list(running), timeout=wait_for):
                name, proc = running.pop(conn)
                results[name] = accept(_receive(name, conn, proc))
                options.report(f"portfolio: {name} answered {results[name].status.value}")
            decided = _decide(results)
    finally:
        for conn, (name, proc) in running.items():
            _kill(proc)
            conn.close()
            results[name] = Verdict.unknown(name, "stopped: another engine answered" if decided else
                                            "timeout (killed at the deadline)")
        for _, proc in running.values():
            proc.join(timeout=2)

    final = decided or _undecided(results)
    summary = {}
    for n, v in results.items():
        summary[n] = {"status": v.status.value, "reason": v.reason, "time": round(v.time, 3)}
        if "traceback" in v.stats:          # an engine's internal error, shown by `verify --debug`
            summary[n]["traceback"] = v.stats["traceback"]
    final.stats = {**final.stats, "portfolio": summary}
    final.time = time.monotonic() - started
    return final


def _decide(results: dict[str, Verdict]) -> Verdict | None:
    true = [v for v in results.values() if v.status == Status.TRUE]
    false = [v for v in results.values() if v.status == Status.FALSE]
    if true and false:
        return Verdict.unknown("portfolio", "engines disagree: " + ", ".join(
            f"{v.engine} says {v.status.value}" for v in true + false))
    winner = (false or true or [None])[0]
    if winner is None:
        return None
    return replace(winner, engine=f"portfolio:{winner.engine}")


def _undecided(results: dict[str, Verdict]) -> Verdict:
    reasons = "; ".join(f"{name}: {v.reason}" for name, v in results.items())
    return Verdict.unknown("portfolio", reasons or "no engine answered")


def _receive(name: str, conn, proc: mp.Process) -> Verdict:
    try:
        verdict = conn.recv()
    except (EOFError, OSError):
        proc.join(timeout=2)
        code = proc.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return Verdict.unknown(name, f"engine crashed ({how})")
    finally:
        conn.close()
    proc.join(timeout=2)
    return verdict


def _kill(proc: mp.Process) -> None:
    try:
        proc.kill()
    except (OSError, AttributeError):
        pass


class _Prefixed:
    """Progress callback for a child: the parent's callback, each line prefixed with the engine name."""

    def __init__(self, name: str, progress: Callable[[str], None]):
        self.name, self.progress = name, progress

    def __call__(self, msg: str) -> None:
        self.progress(f"[{self.name}] {msg}")


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no orphaned solvers after a kill -9)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(name: str, fn, program: Program, options: EngineOptions, conn) -> None:
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:            # the parent died before prctl took effect
        os._exit(1)
    options.start = time.monotonic()
    t0 = time.monotonic()
    try:
        verdict = fn(program, options)
    except UnsupportedError as exc:
        verdict = Verdict.unknown(name, str(exc))
    except MemoryError:
        verdict = Verdict.unknown(name, "out of memory")
    except Exception as exc:  # reported as a verdict: the portfolio goes on with the other engines
        verdict = Verdict.unknown(name, f"internal error: {type(exc).__name__}: {exc}",
                                  traceback=traceback.format_exc())
    if not verdict.time:
        verdict.time = time.monotonic() - t0
    conn.send(_picklable(verdict))
    conn.close()


def _picklable(v: Verdict) -> Verdict:
    """The verdict, with evidence and statistics that cannot cross a process boundary (z3 terms) turned
    into text."""
    try:
        pickle.dumps(v)
        return v
    except Exception:
        pass
    evidence = v.evidence
    try:
        pickle.dumps(evidence)
    except Exception:
        evidence = str(evidence)
    stats = {}
    for k, val in v.stats.items():
        try:
            pickle.dumps(val)
            stats[k] = val
        except Exception:
            stats[k] = str(val)
    return replace(v, evidence=evidence, stats=stats)
