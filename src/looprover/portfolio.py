"""The `portfolio` strategy: run several engines in parallel processes and accept only checked evidence.

Each engine runs under the guarded runner (`engines.base.run_engine`) in its own child process
(`processes.Child`), so a crash, a memory error or a stuck solver takes down only that engine, which counts as
UNKNOWN. Decision rule (never guess):
  * a FALSE counts only with a `Counterexample` whose `validated` flag is set (the runner's `vet`); otherwise
    it is demoted to UNKNOWN;
  * the first definitive answer wins and the other engines are killed; if a TRUE and a FALSE are both on
    the table, the answer is UNKNOWN("engines disagree ...");
  * at the deadline (plus a short grace) every engine still running is killed.
"""
from __future__ import annotations

import pickle
import time
from dataclasses import replace
from typing import Callable

from looprover.deadline import Deadline
from looprover.engines import get_engine
from looprover.engines.base import Engine, Run, Task, run_engine, vet
from looprover.processes import Child, forking
from looprover.program.cfa import Program
from looprover.verdict import Status, Verdict

PORTFOLIO_ENGINES: tuple[str, ...] = ("bmc", "kinduction", "labmc")
KILL_GRACE = 1.0     # seconds past the deadline before a straggler is killed


class Portfolio(Engine):
    name = "portfolio"
    summary = "runs " + ", ".join(PORTFOLIO_ENGINES) + " in parallel processes; the first checked answer wins"

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        return run_portfolio(program, task, run, PORTFOLIO_ENGINES)


def run_portfolio(program: Program, task: Task, run: Run, names: tuple[str, ...]) -> Verdict:
    engines, results = [], {}
    for name in names:
        try:
            engines.append(get_engine(name))
        except (ImportError, KeyError) as exc:   # a missing engine must not take the others down
            results[name] = Verdict.unknown(name, f"engine not available: {exc}")
    started = time.monotonic()
    running: dict[Child, str] = {}
    for engine in engines:
        progress = _Prefixed(engine.name, run.progress) if forking() and run.progress is not None else None
        child_run = Run(Deadline(run.deadline.at), bitvector=run.bitvector, max_bound=run.max_bound,
                        settings=run.settings, progress=progress)
        child = Child(f"looprover-{engine.name}", _solve, engine, program, task, child_run)
        running[child] = engine.name
        run.report(f"portfolio: started {engine.name} (pid {child.pid})")

    decided: Verdict | None = None
    try:
        while running and decided is None:
            wait_for = run.deadline.left() + KILL_GRACE
            if wait_for <= 0:
                break
            for child in Child.wait(running, wait_for):
                name = running.pop(child)
                ok, value = child.result()
                results[name] = vet(value) if ok else Verdict.unknown(name, f"engine crashed ({value})")
                run.report(f"portfolio: {name} answered {results[name].status.value}")
            decided = _decide(results)
    finally:
        for child, name in running.items():
            child.kill()
            results[name] = Verdict.unknown(name, "stopped: another engine answered" if decided else
                                            "timeout (killed at the deadline)")

    final = decided or _undecided(results)
    summary = {}
    for n, v in results.items():
        summary[n] = {"status": v.status.value, "reason": v.reason, "time": round(v.time, 3)}
        if "traceback" in v.stats:          # an engine's internal error, shown by `verify --debug`
            summary[n]["traceback"] = v.stats["traceback"]
    final.stats = {**final.stats, "portfolio": summary}
    final.time = time.monotonic() - started
    return final


def _solve(engine: Engine, program: Program, task: Task, run: Run) -> Verdict:
    """A child's work: the guarded engine run, as a verdict that can cross the process boundary."""
    return _picklable(run_engine(engine, program, task, run))


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


class _Prefixed:
    """Progress callback for a child: the parent's callback, each line prefixed with the engine name."""

    def __init__(self, name: str, progress: Callable[[str], None]):
        self.name, self.progress = name, progress

    def __call__(self, msg: str) -> None:
        self.progress(f"[{self.name}] {msg}")


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
