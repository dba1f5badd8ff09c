"""The `portfolio` strategy: every engine that accepts the task, time-shared over the cores; only checked
evidence counts.

Which engines: each registered engine that declares it accepts the task's input language and property (and
`--bitvector`, if given), cheapest first by its declared `cost` (`engines/base.py`) -- or the list
`--option portfolio.engines=...` names. No per-file or per-name choices.

Schedule (`timeshare.py`): never more engine processes running than usable cores. With more engines than
cores they take turns: each engine's k-th turn lasts `first_slice`·2^k, a paused engine keeps its state
(SIGSTOP/SIGCONT), and an engine that finishes frees its core for the next one. So the cheap engines get the
first short look (most easy tasks are answered there), the deep ones then get long stretches, and on a long
run every engine gets about an equal share of the machine. With no more engines than cores all run at once.
An engine's deadlines read its own clock, which stands still while the engine is paused, so its plans
("Houdini gets a third of the time left") are not spent while it waits for its turn.

Each engine runs under the guarded runner (`engines.base.run_engine`) in its own child process
(`processes.Child`), so a crash, a memory error or a stuck solver takes down only that engine, which counts as
UNKNOWN. Decision rule (never guess):
  * a FALSE counts only when the portfolio itself has executed its counterexample on the program again
    (`evidence/recheck.py`; the engine's `validated` flag is not taken on trust) -- for termination, when it
    has re-run the independent check of the non-termination witness; otherwise it is UNKNOWN, and the
    rejected evidence is reported as a bug (`bugs` in the JSON statistics);
  * a TRUE that comes with a proof (`evidence/proofs.py`) counts only when the portfolio's own check of the
    proof passes; a failed one is UNKNOWN and a bug report like a rejected counterexample;
  * the first definitive answer wins and the other engines are killed; if a TRUE and a FALSE are both on
    the table, the answer is UNKNOWN("engines disagree ..."), reported as a bug with both answers;
  * at the deadline (plus `deadline.PAST_DEADLINE`) every engine still running is killed.
"""
from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from looprover.deadline import PAST_DEADLINE, Clock, Deadline, use_clock
from looprover.engines import get_engine, unavailable
from looprover.engines.cards import CARDS, refusal
from looprover.engines.base import Engine, Run, Task, run_engine, vet
from looprover.processes import Child, forking, out_of_memory_reason
from looprover.program.cfa import Program
from looprover.properties import TERMINATION
from looprover.timeshare import TimeShare, usable_cores
from looprover.verdict import Status, Verdict
from looprover.evidence.recheck import evidence_failure, rejected


@dataclass(frozen=True)
class PortfolioSettings:
    engines: tuple[str, ...] = field(default=(), metadata={
        "help": "engines to run, joined by '+' (default: every engine that accepts the task, cheapest first)"})
    first_slice: float = field(default=0.0, metadata={
        "help": "seconds of an engine's first turn when engines outnumber cores; each later turn doubles "
                "(default: the time limit / 40, between 0.5 and 10)"})
    cores: int = field(default=0, metadata={
        "help": "engine processes running at once (default: the cores this process may use)"})


class Portfolio(Engine):
    name = "portfolio"
    summary = "every engine that accepts the task, cheapest first, time-shared over the cores; first checked " \
              "answer wins"
    Settings = PortfolioSettings

    def refuses(self, task: Task, run: Run) -> str | None:
        """The portfolio accepts what one of its engines accepts (engines named by `--option` speak for
        themselves)."""
        if self.settings(run).engines or choose_engines(task, run):
            return None
        return (f"unsupported property: no engine accepts {task.language.upper()} input with property "
                f"{task.property.name}" + (" in bit-vector mode" if run.bitvector else ""))

    def processes(self, settings: PortfolioSettings) -> int:
        return settings.cores or usable_cores()

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: PortfolioSettings = self.settings(run)
        names = opts.engines or choose_engines(task, run)
        total = max(run.deadline.left(), 0.0)
        first = opts.first_slice or min(max(total / 40, 0.5), 10.0)
        return run_portfolio(program, task, run, tuple(names), cores=opts.cores or usable_cores(),
                             first_slice=first)


def choose_engines(task: Task, run: Run) -> list[str]:
    """The registered engines that accept `task` under `run`'s options, cheapest first (ties: registry order),
    read off their cards: none is imported for it."""
    accepted = []
    for order, (name, card) in enumerate(CARDS.items()):
        if card.portfolio and refusal(card, task, run) is None:
            accepted.append((card.cost_for(task.language, task.property.name), order, name))
    return [name for _, _, name in sorted(accepted)]


def run_portfolio(program: Program, task: Task, run: Run, names: tuple[str, ...], cores: int | None = None,
                  first_slice: float = 1.0) -> Verdict:
    # engines by name: each child imports its own engine (one the job imported before the fork it inherits),
    # so a run answered by its first engines never loads the others (`engines/cards.py`)
    engines, results = [], {}
    for name in names:
        why = unavailable(name)
        if why is None:
            engines.append(name)
        else:                   # a missing engine must not take the others down
            results[name] = Verdict.unknown(name, f"engine not available: {why}")
    started = time.monotonic()

    def start(i: int, clock: Clock) -> Child:
        name = engines[i]
        progress = _Prefixed(name, run.progress) if forking() and run.progress is not None else None
        child_run = Run(Deadline(run.deadline.at), bitvector=run.bitvector, max_bound=run.max_bound,
                        settings=_settings_for(name, engines, run.settings), progress=progress)
        # not daemonic: an engine starts children of its own (QE, smt/tactics.py); `kill_all` below kills every
        # engine still running, and an engine's children die with it
        child = Child(f"looprover-{name}", _solve, name, program, task, child_run, clock, daemon=False)
        run.report(f"portfolio: started {name} (pid {child.pid})")
        return child

    share = TimeShare(len(engines), start, cores or usable_cores(), first_slice)
    decided: Verdict | None = None
    bugs: list[dict] = []           # evidence that failed the portfolio's check, engines that disagree
    try:
        while not share.finished() and decided is None:
            wait_for = run.deadline.left() + PAST_DEADLINE   # then stragglers are killed
            if wait_for <= 0:
                break
            for i, child in share.poll(wait_for):
                name = engines[i]
                ok, value = child.result()
                results[name] = _checked(program, task, run, vet(value, task), bugs) if ok else \
                    Verdict.unknown(name, value if value.startswith("out of memory") else f"engine crashed ({value})")
                run.report(f"portfolio: {name} answered {results[name].status.value}")
            decided = _decide(results, bugs)
    finally:
        for i in share.unfinished():
            name = engines[i]
            began = i in share.children
            results[name] = Verdict.unknown(name, ("stopped" if began else "not started") + ": another engine "
                                            "answered" if decided else "timeout (killed at the deadline)" if began
                                            else "not started: no core was free before the deadline")
        share.kill_all()

    # in the order the engines were chosen (cheapest first), not the order they finished in: the engine that
    # gave up at once (execute on a program that reads input) should not be the first reason a user reads
    results = {n: results[n] for n in (*names, *results) if n in results}
    final = decided or _undecided(results)
    summary = {}
    for n, v in results.items():
        summary[n] = {"status": v.status.value, "reason": v.reason, "time": round(v.time, 3)}
        if "traceback" in v.stats:          # an engine's internal error, shown by `verify --debug`
            summary[n]["traceback"] = v.stats["traceback"]
    if bugs:
        final.stats["bugs"] = bugs
    final.stats = {**final.stats, "portfolio": summary,
                   "schedule": {"cores": share.cores, "first_slice": round(share.first_slice, 3),
                                "pauses": share.pauses, "most_running": share.max_running}}
    final.time = time.monotonic() - started
    return final


def _settings_for(name: str, engines: list[str], settings: dict) -> dict:
    """The settings an engine runs with in the portfolio. Beside the multiloop engine, whose network search
    `tpa` would otherwise repeat on loops in sequence, `tpa` keeps its one pc-encoded system: a second view of
    such programs, which answered CHC files the network did not (fm24's dillig20-1 and dillig43 in 1.4-1.7 s,
    the network not in 30 s; issue 27's note). Options the user gave are kept as given."""
    if name == "tpa" and "multiloop" in engines and "tpa" not in settings:
        from looprover.tpa.options import TPAOptions
        return {**settings, "tpa": TPAOptions(loops="single")}
    return settings


def _solve(name: str, program: Program, task: Task, run: Run, clock: Clock) -> Verdict:
    """A child's work: the guarded engine run, its deadlines on its time-share clock (`timeshare.py`), as a
    verdict that can cross the process boundary. An engine that cannot be imported is UNKNOWN: a missing engine
    must not take the others down."""
    use_clock(clock)
    try:
        engine = get_engine(name)
    except (ImportError, KeyError) as exc:
        return Verdict.unknown(name, f"engine not available: {exc}")
    except MemoryError:
        return Verdict.unknown(name, "out of memory while loading the engine")
    return _picklable(run_engine(engine, program, task, run))


def _checked(program: Program, task: Task, run: Run, v: Verdict, bugs: list[dict]) -> Verdict:
    """The engine's verdict if the portfolio's own check of its evidence passes (`evidence.recheck`), else
    UNKNOWN (and a bug report): a FALSE's counterexample runs again, a TRUE's proof is decided again, and a
    TRUE without a proof does not count."""
    why = evidence_failure(program, v, run.bitvector, run.deadline, task.property.name == TERMINATION)
    if why is None:
        if v.status in (Status.FALSE, Status.TRUE):
            v.stats["evidence_checked_by"] = "portfolio"
        return v
    bugs.append({"kind": "evidence rejected", "engine": v.engine, "answer": v.status.value,
                 "reason": v.reason, "rejected_because": why})
    return rejected(v, why, "the portfolio")


def _decide(results: dict[str, Verdict], bugs: list[dict] | None = None) -> Verdict | None:
    true = [v for v in results.values() if v.status == Status.TRUE]
    false = [v for v in results.values() if v.status == Status.FALSE]
    if true and false:
        if bugs is not None:
            bugs.append({"kind": "engines disagree", "answers": [
                {"engine": v.engine, "answer": v.status.value, "reason": v.reason} for v in true + false]})
        return Verdict.unknown("portfolio", "engines disagree: " + ", ".join(
            f"{v.engine} says {v.status.value}" for v in true + false))
    winner = (false or true or [None])[0]
    if winner is None:
        return None
    return replace(winner, engine=f"portfolio:{winner.engine}")


def _undecided(results: dict[str, Verdict]) -> Verdict:
    if len(results) > 1 and all(v.reason.startswith("out of memory") for v in results.values()):
        return Verdict.unknown("portfolio", out_of_memory_reason("in every engine"))
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
