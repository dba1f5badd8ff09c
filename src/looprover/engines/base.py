"""The engine interface: what an engine declares, what one run of it gets, and the one guarded runner.

Why: every engine used to open with the same `t0`/`stats`/`done` preamble and close with its own choice of
`except` clauses, so a timeout, a memory error or a z3 exception became UNKNOWN in one engine and a traceback
or a wrong reason in another. Now an engine only says what it accepts and implements `solve`; `run_engine`
is the single place where

  * a task the engine does not accept becomes UNKNOWN with the reason,
  * `OutOfTime`, `MemoryError`, `RecursionError`, z3 errors, `LooproverError` (unsupported constructs,
    `GiveUp`) and any other exception become UNKNOWN with a reason (an internal error keeps its traceback in
    the statistics, for `--debug`),
  * the verdict's time and statistics are filled in, and
  * the evidence rule is applied: a FALSE is UNKNOWN unless its evidence is of the kind the property needs
    and was checked on the program -- a replayed counterexample for a safety property, a non-termination
    witness that passed its independent check for termination (`vet`).

Engine-specific settings are a dataclass per engine (`Engine.Settings`); the fields that carry a `help`
metadata entry can be set by users as `--option ENGINE.FIELD=VALUE` (parsed and type-checked here), and
`looprover engines` lists them.
"""
from __future__ import annotations

import dataclasses
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.engines.cards import CARDS, EngineCard, refusal
from looprover.errors import LooproverError
from looprover.processes import out_of_memory, out_of_memory_reason
from looprover.program.cfa import Program
from looprover.properties import (
    CHECK_SAT, TERMINATION, Property, default_property,
)
from looprover.verdict import Counterexample, NonTermination, Status, Verdict


@dataclass(frozen=True)
class Task:
    """What a run checks: the property, the input language (`c` or `chc`) and the C data model."""
    property: Property = field(default_factory=default_property)
    language: str = "c"
    data_model: str = "ILP32"

    @staticmethod
    def for_program(program: Program, prop: Property | None = None) -> "Task":
        """The default task of a program: unreach-call for C, check-sat for Horn clauses."""
        chc = program.data_model == "CHC"
        if prop is None:
            prop = Property(CHECK_SAT) if chc else default_property()
        return Task(prop, "chc" if chc else "c", "ILP32" if chc else program.data_model)


@dataclass
class Run:
    """One engine run: the limits and options it gets, and the statistics it leaves.

    `settings` maps engine names to their typed settings objects (the portfolio hands each child its own).
    `stage` says what the engine is doing ("bound 8", "k=3"); a timeout's reason names it.
    """
    deadline: Deadline
    bitvector: bool = False
    max_bound: int | None = None          # engine-specific cap on unwinding / k (None: until the deadline)
    settings: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    stage: str = ""

    @staticmethod
    def with_timeout(seconds: float, **kw) -> "Run":
        return Run(Deadline.after(seconds), **kw)

    def report(self, msg: str) -> None:
        if self.progress is not None:
            self.progress(msg)

    def sub(self, deadline: Deadline | None = None, **changes) -> "Run":
        """A run for a nested engine call (LABMC's BMC, a fallback): same options, its own statistics."""
        base = dict(deadline=deadline or self.deadline, bitvector=self.bitvector, max_bound=self.max_bound,
                    settings=self.settings, progress=self.progress)
        base.update(changes)
        return Run(**base)


class Engine:
    """A verification engine. Subclasses set `name`, `summary` and `Settings` and implement `solve`; what they
    accept and cost comes from their card (`engines/cards.py`), the defaults of `EngineCard` for a strategy."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    languages: ClassVar[frozenset[str]] = EngineCard.languages
    properties: ClassVar[frozenset[str]] = EngineCard.properties
    bitvector: ClassVar[bool] = EngineCard.bitvector
    verdicts: ClassVar[frozenset[Status]] = EngineCard.verdicts
    Settings: ClassVar[type | None] = None             # a dataclass of engine-specific settings
    # for the portfolio: whether it runs this engine, and the relative cost of a first answer (lower-cost
    # engines get the first turns: 0 = cheap unrolling, 1 = a transformation plus unrolling, 2 = deep search)
    portfolio: ClassVar[bool] = EngineCard.portfolio
    cost: ClassVar[int] = EngineCard.cost

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        card = CARDS.get(cls.__dict__.get("name", ""))
        if card is not None:
            for attr in ("languages", "properties", "bitvector", "verdicts", "portfolio", "cost"):
                setattr(cls, attr, getattr(card, attr))

    def refuses(self, task: Task, run: Run) -> str | None:
        """Why this engine cannot run `task` (None if it can)."""
        return refusal(self, task, run)

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        raise NotImplementedError

    def processes(self, settings: Any) -> int:
        """How many processes a run of this engine with `settings` keeps busy at once (the bench gives it that
        many of its cores)."""
        return 1

    def settings(self, run: Run) -> Any:
        """This engine's settings for the run (the defaults unless the run carries others)."""
        own = run.settings.get(self.name)
        if own is not None:
            return own
        return self.Settings() if self.Settings is not None else None

    # verdict constructors: the runner fills in statistics and time
    def true(self, reason: str, evidence: Any = None) -> Verdict:
        return Verdict(Status.TRUE, self.name, reason, evidence)

    def false(self, reason: str, cex: Counterexample | NonTermination) -> Verdict:
        return Verdict(Status.FALSE, self.name, reason, cex)

    def unknown(self, reason: str, candidate: Counterexample | None = None) -> Verdict:
        """UNKNOWN; `candidate` is a counterexample that did not replay (evidence for a caller that maps it
        back to another program, e.g. `engines/transformed.py`, and shown to users as unconfirmed)."""
        return Verdict(Status.UNKNOWN, self.name, reason, candidate)


def z3_message(exc: z3.Z3Exception) -> str:
    """z3's error text (its Python API keeps it as bytes)."""
    v = exc.value if hasattr(exc, "value") else exc
    return (v.decode(errors="replace") if isinstance(v, bytes) else str(v)).strip()


def vet(verdict: Verdict, task: Task | None = None) -> Verdict:
    """The verdict if its evidence is acceptable, else UNKNOWN. A FALSE needs checked evidence of the kind the
    task's property calls for: for termination a `NonTermination` witness whose independent check passed
    (a reached `reach_error` ends an execution, so a violation trace proves nothing there); for the safety
    properties (the default without a task) a `Counterexample` that replayed on the program."""
    if verdict.status == Status.FALSE:
        ev = verdict.evidence
        wanted = NonTermination if task is not None and task.property.name == TERMINATION else Counterexample
        if not isinstance(ev, wanted) or not ev.validated:
            what = "non-termination witness" if wanted is NonTermination else "counterexample"
            return dataclasses.replace(verdict, status=Status.UNKNOWN, evidence=None,
                                       reason=f"{what} not validated ({verdict.reason})")
    return verdict


def run_engine(engine: Engine, program: Program, task: Task, run: Run) -> Verdict:
    """Run `engine` on `program` and always return a verdict (see the module docstring)."""
    t0 = time.monotonic()
    why = engine.refuses(task, run)
    if why is not None:
        return Verdict(Status.UNKNOWN, engine.name, why, time=time.monotonic() - t0)
    extra: dict[str, Any] = {}
    try:
        verdict = engine.solve(program, task, run)
    except OutOfTime:
        verdict = engine.unknown("timeout" + (f" at {run.stage}" if run.stage else ""))
    except MemoryError:
        verdict = engine.unknown(out_of_memory_reason())
    except RecursionError:
        verdict = engine.unknown("recursion too deep")
    except LooproverError as err:
        verdict = engine.unknown(str(err))
    except z3.Z3Exception as exc:
        msg = z3_message(exc)
        verdict = engine.unknown(out_of_memory_reason() if "out of memory" in msg else f"z3 error: {msg[:300]}")
    except Exception as exc:  # noqa: BLE001 -- an engine bug must end in UNKNOWN, never in a verdict
        if out_of_memory(exc):          # e.g. a module or thread that --memory leaves no room for
            verdict = engine.unknown(out_of_memory_reason())
        else:
            verdict = engine.unknown(f"internal error: {type(exc).__name__}: {exc}")
            extra["traceback"] = traceback.format_exc()
    if verdict.status not in engine.verdicts and verdict.status != Status.UNKNOWN:
        verdict = engine.unknown(f"internal error: engine {engine.name} answered {verdict.status.value}, "
                                 f"which it does not declare")
    verdict.stats = {**run.stats, **verdict.stats, **extra}
    verdict.time = time.monotonic() - t0
    return vet(verdict, task)


# ------------------------------------------------------------------------------------------- settings
def user_fields(settings_cls: type | None) -> list[dataclasses.Field]:
    """The settings fields users may set (`--option`): those with a `help` metadata entry."""
    if settings_cls is None:
        return []
    return [f for f in dataclasses.fields(settings_cls) if "help" in f.metadata]


_TRUE = {"on", "true", "yes", "1"}
_FALSE = {"off", "false", "no", "0"}


def _convert(text: str, default: Any, what: str) -> Any:
    if isinstance(default, bool):
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"{what}: expected on/off, got {text!r}")
    if isinstance(default, int) or default is None and text.strip().lstrip("-").isdigit():
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{what}: expected an integer, got {text!r}") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{what}: expected a number, got {text!r}") from None
    if isinstance(default, tuple):
        return tuple(x.strip() for x in text.split("+") if x.strip())
    return text


def make_settings(engine: Engine, values: Mapping[str, str]) -> Any:
    """The engine's settings with `values` (field name -> text) applied; ValueError for an unknown field or a
    bad value."""
    fields = {f.name: f for f in user_fields(engine.Settings)}
    if values and not fields:
        raise ValueError(f"engine {engine.name} has no options")
    changes = {}
    for key, text in values.items():
        f = fields.get(key)
        if f is None:
            raise ValueError(f"unknown option {engine.name}.{key} (known: "
                             f"{', '.join(engine.name + '.' + n for n in sorted(fields))})")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        changes[key] = _convert(text, default, f"{engine.name}.{key}")
    return engine.Settings(**changes) if engine.Settings is not None else None
