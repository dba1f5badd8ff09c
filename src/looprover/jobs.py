"""A verification job: resolve what to check, load the program, run the engine, render the outcome --
in a child process that is killed at the deadline.

Why a child process for the whole job: `verify --timeout T` must return within T plus a little whatever the
input and the engine. Solver calls and tactics can run past their own timeouts inside native code, and a
5 MB C file spends most of its budget in the front-end, which has no deadline checks at all. So the job (the
front-end included) runs in a forked child (`processes.Child`) that is killed at the deadline plus a second of
grace; the parent then answers UNKNOWN and names the phase the job was in (loading or the engine), and the
memory is freed with the process. The child renders its own output (it has the program whose C names a
counterexample uses), so only JSON-able data crosses the pipe.
"""
from __future__ import annotations

import dataclasses
import importlib
import multiprocessing as mp
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from looprover.deadline import KILL_GRACE, PAST_DEADLINE, Deadline
from looprover.engines import get_engine
from looprover.engines.base import Engine, Run, Task, run_engine
from looprover.errors import InputError, LooproverError, UnsupportedError
from looprover.processes import (
    Child, address_space_mb, out_of_memory, out_of_memory_reason, set_memory_limit,
)
from looprover.program.cfa import Assert, Assume, Edge, Program, Refusal
from looprover.program.instrument import UNDECIDED, instrument_no_overflow, undecided_reason
from looprover.properties import (
    CHECK_SAT, NO_OVERFLOW, TERMINATION, UNDEFINED_ASSERT, UNMODELLED, UNMODELLED_REFUSED, UNREACH_CALL,
    VALID_MEMCLEANUP, VALID_MEMSAFETY, Property, default_property, load_property,
)
from looprover.report import derivations_shared, split_tracebacks, verdict_json, verdict_text
from looprover.smt.encode import bitvector_reason
from looprover.verdict import Counterexample, Status, Verdict

# address space a run needs beyond what is loaded before it starts: z3 starts a thread (8 MB of stack) per
# solver timeout in each engine process; a trivial task ran with 10 MB, crashed with 5 (measured)
MIN_HEADROOM_MB = 16
PHASES = ("starting", "loading the program", "running the engine", "rendering the result")


def load_program(path: Path, data_model: str = "ILP32", more: tuple[Path, ...] = (), memsafety: bool = False,
                 cpp_flags: tuple[str, ...] = (), keep_values: bool = False, nondet_undefined: bool = False,
                 reach_checks: bool = False, memcleanup: bool = False, allocation_fails: bool = True) -> Program:
    """Parse a C file (`.c`, `.i`) or a Horn-clause file (`.smt2`) into the IR. `more`: further C files linked
    with it; `memsafety`: instrument memory accesses (valid-memsafety); `cpp_flags`: `-D`/`-I` options for C;
    `keep_values`, `nondet_undefined`, `reach_checks`, `allocation_fails`: see `load_c_program`."""
    for f in (path, *more):
        if not f.exists():
            raise InputError(f"{f}: no such file")
        if not f.is_file():
            raise InputError(f"{f}: not a regular file")
        try:
            text = f.read_bytes()
        except OSError as exc:
            raise InputError(f"{f}: cannot read: {exc.strerror}") from None
        if not text.strip():
            raise InputError(f"{f}: empty file")
    if path.suffix == ".smt2":
        if more:
            raise InputError(f"{path}: a Horn-clause file is read on its own, not with other input files")
        from looprover.frontend.chc import load_chc_program
        return load_chc_program(path)
    from looprover.frontend.c import load_c_program
    return load_c_program([path, *more] if more else path, data_model=data_model, memsafety=memsafety,
                          cpp_flags=cpp_flags, keep_values=keep_values, nondet_undefined=nondet_undefined,
                          reach_checks=reach_checks, memcleanup=memcleanup, allocation_fails=allocation_fails)


@dataclass
class Job:
    """What `verify` checks: resolved from the command line and, for a `.yml` task, the task definition."""
    input: Path
    property: Property
    data_model: str
    expected: bool | None = None
    task: Path | None = None
    more_inputs: tuple[Path, ...] = ()   # further input files linked with `input` (library stubs, ...)
    cpp_flags: tuple[str, ...] = ()      # preprocessor options for C inputs (`-DNAME[=VALUE]`, `-IDIR`)
    nondet_undefined: bool = False       # `--undefined-functions nondet` (`CallMixin.undefined_call`)
    allocation_fails: bool = True        # `--allocation may-fail` (`frontend/c/heap.py`)

    @property
    def is_chc(self) -> bool:
        """A Horn-clause input: it gets CHC-COMP's answer (sat/unsat/unknown) besides the verdict."""
        return self.input.suffix == ".smt2"

    def describe(self) -> dict[str, Any]:
        """The job's keys of the `--json` object."""
        return {"file": str(self.input), **({"more_files": [str(f) for f in self.more_inputs]}
                                             if self.more_inputs else {}),
                "task": str(self.task) if self.task else None,
                "property": self.property.name, "data_model": self.data_model, "expected": self.expected}


def resolve_job(file: str | list[str], property_spec: str | None, data_model: str | None,
                cpp_flags: tuple[str, ...] = (), nondet_undefined: bool = False, allocation_fails: bool = True) -> Job:
    """The job for the command line's FILE(s): a `.yml` task (alone), or one or more program files."""
    files = [file] if isinstance(file, str) else list(file)
    if len(files) > 1 and any(Path(f).suffix in (".yml", ".yaml") for f in files):
        raise InputError("a .yml task definition is verified on its own (it names its input files)")
    path = Path(files[0])
    more = tuple(Path(f) for f in files[1:])
    if path.suffix in (".yml", ".yaml"):
        from looprover.bench.tasks import choose_property, read_task_definition   # YAML only for tasks (50 ms)
        task = read_task_definition(path)
        if property_spec is not None:
            prop = load_property(property_spec)
            expected = next((tp.expected for tp in task.properties if _same_property(tp.property_file, prop)),
                            None)
        else:
            prop, expected = choose_property(task)
        return Job(task.input_files[0], prop, data_model or task.data_model or "ILP32", expected, path,
                   tuple(task.input_files[1:]), tuple(cpp_flags), nondet_undefined, allocation_fails)
    if property_spec is not None:
        prop = load_property(property_spec)
    else:
        prop = Property(CHECK_SAT) if path.suffix == ".smt2" else default_property()
    return Job(path, prop, data_model or "ILP32", more_inputs=more, cpp_flags=tuple(cpp_flags),
               nondet_undefined=nondet_undefined, allocation_fails=allocation_fails)


def _same_property(prp: Path, prop: Property) -> bool:
    try:
        return load_property(prp).name == prop.name
    except InputError:
        return False


@dataclass
class JobOptions:
    """How to run a job: the engine, its limits and settings (`--option`), progress output."""
    engine: str = "portfolio"
    bitvector: bool | None = None     # True: bit-vectors, False: integers, None: chosen per program
    settings: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    memory: int | None = None         # MB of address space for the job's process and its children
    witness: bool = False             # build an SV-COMP witness (`verify --witness`)


@dataclass
class Outcome:
    """A finished job, ready to print: the `--json` object and the text report, or an input error."""
    error: str | None = None
    json: dict[str, Any] | None = None
    text: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    witness: Any = None               # witness.svcomp.Witness when asked for (`verify --witness`)


def _unsupported_reason(job: Job) -> str | None:
    why = job.property.unsupported_reason()
    is_chc = job.is_chc
    if why is None and is_chc != (job.property.name == CHECK_SAT):
        why = (f"unsupported property: {job.property.name} for "
               f"{'Horn clauses (use check-sat)' if is_chc else 'C programs'}")
    return why


def verify_job(job: Job, options: JobOptions, deadline: Deadline, phase: Callable[[int], None] = lambda p: None
               ) -> tuple[Verdict, Program | None]:
    """Load, check that the property applies, run the engine under the guarded runner. Returns the verdict
    and the program (None if it could not be built), whose C names the counterexample trace uses."""
    report = options.progress or (lambda msg: None)
    report(f"loading {job.input} ({job.data_model})")
    phase(1)
    warm = _import_engines_meanwhile(options.engine, "chc" if job.is_chc else "c")
    try:
        program = _load(job)
    except UnsupportedError as exc:
        return Verdict.unknown("frontend", str(exc)), None
    finally:
        warm.join()
    report(f"program {program.name}: {program.num_locs} locations, {len(program.edges)} edges, "
           f"{len(program.variables)} variables")
    why = _unsupported_reason(job)
    if why is not None:
        return Verdict.unknown("none", why), program
    try:
        program = _instrument_for(job, program)
    except UnsupportedError as exc:
        return Verdict.unknown("frontend", str(exc)), program
    if job.property.name == NO_OVERFLOW:
        report(f"no-overflow: {sum(1 for _, a in program.assertions() if a.prop == NO_OVERFLOW)} overflow "
               f"checks added")
    task = Task(job.property, "chc" if job.is_chc else "c", job.data_model)
    report(f"running {options.engine} (timeout {max(deadline.left(), 0):.1f} s)")
    phase(2)
    verdict = checked_verdict(program, task, options, deadline)
    if _left_the_model(verdict) and deadline.left() > 1.0:
        # a run that leaves the model can hide one that stays inside it and fails: ask again on those alone
        inside = inside_the_model(program)
        report("a counterexample left the model; searching the runs that stay inside it")
        again = checked_verdict(inside, task, options, deadline)
        if again.status == Status.FALSE and not _left_the_model(again):
            verdict, program = again, inside
    verdict = undecided_verdict(verdict)
    outside = sorted(program.properties() & UNMODELLED.keys())
    if verdict.status == Status.TRUE and job.property.name == TERMINATION and outside:
        # termination does not check assertions: a run that leaves the model would count as one that ends, so
        # the TRUE stands only once no run leaves it (a safety run on those assertions alone)
        report("termination: checking that no run leaves the model")
        stays = checked_verdict(model_assertions_only(program), Task(Property(UNREACH_CALL), "c", job.data_model),
                                dataclasses.replace(options, engine="portfolio"), deadline)
        if stays.status == Status.TRUE:
            verdict = dataclasses.replace(verdict, reason=f"{verdict.reason}; no run leaves the model ({stays.reason})")
        else:
            verdict = Verdict.unknown(verdict.engine, f"{verdict.reason}, but the termination proof does not cover "
                                                      f"the runs that reach {'; '.join(UNMODELLED[t] for t in outside)}"
                                                      f" ({stays.status.value}: {stays.reason})")
    if verdict.status == Status.FALSE and program.assumptions:
        verdict = dataclasses.replace(verdict, reason=f"{verdict.reason}; resting on the assumption that "
                                                      + "; ".join(program.assumptions))
    return verdict, program


def checked_verdict(program: Program, task: Task, options: JobOptions, deadline: Deadline,
                    wrap: Callable[[Engine], Engine] | None = None) -> Verdict:
    """The engine's verdict on `program`, its evidence checked: by the portfolio itself, or for another engine
    here, with fresh solvers (`evidence/recheck.py`); evidence that fails the check makes the verdict UNKNOWN.
    `wrap` puts the engine behind a transform (`engines/transformed.py`), which checks what it carries back."""
    report = options.progress or (lambda msg: None)
    engine = get_engine(options.engine)
    if wrap is not None:
        engine = wrap(engine)
    bitvector, encoding = encoding_choice(program, options.bitvector, engine.bitvector)
    if bitvector and options.bitvector is None:
        report(f"{encoding}")
    run = Run(deadline, bitvector=bitvector, settings=options.settings, progress=options.progress)
    verdict = run_engine(engine, program, task, run)
    if options.engine != "portfolio":   # the portfolio checks its engines' evidence itself
        from looprover.evidence.recheck import evidence_failure, rejected
        why = evidence_failure(program, verdict, bitvector, Deadline(deadline.at + PAST_DEADLINE),
                               task.property.name == TERMINATION)
        if why is not None:
            verdict = rejected(verdict, why, "the job's check with fresh solvers")
        elif verdict.status in (Status.FALSE, Status.TRUE):
            verdict.stats["evidence_checked_by"] = "job"
    verdict.stats["encoding"] = encoding
    return verdict


def _import_engines_meanwhile(engine: str, language: str) -> threading.Thread:
    """Import the engines a run of `engine` consults (`_engine_loaders`) in a thread while the front-end works:
    libclang and the preprocessor release the GIL, and the imports are 60 ms of a 0.4 s run. The caller joins it
    before the engine runs: a fork while another thread holds an import lock would leave the child waiting for
    that lock forever."""
    t = threading.Thread(target=_run_quietly, args=(_engine_loaders(engine, language),), name="looprover-imports",
                         daemon=True)
    t.start()
    return t


def load_job_program(job: Job) -> Program:
    """The program a job checks, with its property's checks in it (what `verify` runs the engine on and
    `transform` prints). Raises UnsupportedError, and InputError also for a property the input cannot have
    (`verify` answers UNKNOWN for that instead, as SV-COMP expects)."""
    why = _unsupported_reason(job)
    if why is not None:
        raise InputError(why)
    return _instrument_for(job, _load(job))


def _load(job: Job) -> Program:
    """The front-end's program for the job's files, built for its property (memory accesses instrumented for
    valid-memsafety, heap objects asserted freed where a run ends for valid-memcleanup, unused values kept for
    no-overflow)."""
    return load_program(job.input, job.data_model, job.more_inputs, memsafety=job.property.name == VALID_MEMSAFETY,
                        cpp_flags=job.cpp_flags, keep_values=job.property.name == NO_OVERFLOW,
                        nondet_undefined=job.nondet_undefined, memcleanup=job.property.name == VALID_MEMCLEANUP,
                        allocation_fails=job.allocation_fails)


def _instrument_for(job: Job, program: Program) -> Program:
    """The checks a property adds after the front-end (memory-safety checks are the front-end's own)."""
    return instrument_no_overflow(program) if job.property.name == NO_OVERFLOW else program


def _left_the_model(verdict: Verdict) -> bool:
    return verdict.status == Status.FALSE and _unmodelled_failure(verdict.evidence) is not None


def _unmodelled_failure(cex) -> tuple[str, Assert] | None:
    """(tag, assertion) of the `UNMODELLED` assertion a counterexample fails, if it fails one."""
    if not isinstance(cex, Counterexample):
        return None
    return next(((tag, failed) for tag in UNMODELLED if (failed := cex.failed_check(tag)) is not None), None)


def inside_the_model(program: Program) -> Program:
    """`program` restricted to the runs that stay inside the model: its `UNMODELLED` assertions become
    assumptions. Its violations are violations of `program` (its runs are runs of `program`); its TRUE is not a
    TRUE of `program`, so only a FALSE found on it counts (`verify_job`)."""
    return program.with_edges(
        Edge(e.src, e.dst, tuple(Assume(s.cond, s.src) if isinstance(s, Assert) and s.prop in UNMODELLED else s
                                 for s in e.stmts))
        for e in program.edges)


def model_assertions_only(program: Program) -> Program:
    """`program` whose only assertions are its `UNMODELLED` ones, as unreach-call assertions: its TRUE proves
    that no run leaves the model (the other assertions dropped: more runs, never fewer)."""
    return program.with_edges(
        Edge(e.src, e.dst, tuple(Assert(s.cond, UNREACH_CALL, s.src) if isinstance(s, Assert) else s
                                 for s in e.stmts if not isinstance(s, Assert) or s.prop in UNMODELLED))
        for e in program.edges)


def undecided_verdict(verdict: Verdict, refusals: tuple[Refusal, ...] = ()) -> Verdict:
    """A FALSE whose trace ends at an assertion no property defines a violation by is UNKNOWN, its trace kept as
    the unconfirmed counterexample: undefined behaviour that SV-COMP's overflow definition leaves open
    (`program/instrument.py`), a failing call of an undefined `assert` (`properties.UNDEFINED_ASSERT`), or a run
    that leaves the model (`properties.UNMODELLED`; a refused call is named by its `refusals`). When
    the run did not record which assertion failed, such an assertion on the last edge is enough for UNKNOWN."""
    cex = verdict.evidence
    if verdict.status != Status.FALSE or not isinstance(cex, Counterexample) or not cex.steps:
        return verdict
    if (failed := cex.failed_check(UNDECIDED)) is not None:
        return dataclasses.replace(verdict, status=Status.UNKNOWN, reason=undecided_reason(failed))
    if (left := _unmodelled_failure(cex)) is not None:
        tag, failed = left
        where = f" at {failed.src}" if failed.src else ""
        named = [r.describe() for r in refusals if r.call == failed.src] if tag == UNMODELLED_REFUSED else []
        if named:
            return dataclasses.replace(verdict, status=Status.UNKNOWN, reason=(
                f"the run reaches a call{where} whose code looprover refuses: {'; '.join(dict.fromkeys(named))}"))
        return dataclasses.replace(verdict, status=Status.UNKNOWN, reason=(
            f"the run reaches what looprover does not model{where}: {UNMODELLED[tag]} ({failed.cond})"))
    if (failed := cex.failed_check(UNDEFINED_ASSERT)) is not None:
        where = f" at {failed.src}" if failed.src else ""
        return dataclasses.replace(verdict, status=Status.UNKNOWN, reason=(
            f"the program's assert{where} can fail, and assert is a function it leaves undefined (no <assert.h>), "
            f"so what happens then is unknown: {failed.cond}"))
    return verdict


def encoding_choice(program: Program, requested: bool | None, engine_has_bv: bool) -> tuple[bool, str]:
    """(bit-vectors?, how the choice reads): the user's choice, else integers unless the program has bitwise
    operators the integer encoding can only express by an int2bv round trip (`smt.encode.bitvector_reason`)."""
    if requested is not None:
        return requested, "bit-vector" if requested else "integer"
    why = bitvector_reason(program) if engine_has_bv else None
    return (True, f"bit-vector (chosen automatically: {why})") if why else (False, "integer")


def run_job(job: Job, options: JobOptions, start: float, deadline: Deadline,
            phase: Callable[[int], None] = lambda p: None) -> Outcome:
    """The whole job in this process: an Outcome for every input (an error only for unreadable input)."""
    program: Program | None = None
    try:
        verdict, program = verify_job(job, options, deadline, phase)
    except InputError as exc:
        return Outcome(error=str(exc))
    except LooproverError as exc:
        verdict = Verdict.unknown(options.engine, str(exc))
    except Exception as exc:  # noqa: BLE001 -- user input never produces a traceback (except with --debug)
        if out_of_memory(exc):
            verdict = Verdict.unknown(options.engine, out_of_memory_reason())
        else:
            verdict = Verdict.unknown(options.engine, f"internal error: {type(exc).__name__}: {exc}",
                                      traceback=traceback.format_exc())
    phase(3)
    _compiled_harness(verdict, job, deadline, program)
    outcome = render(verdict, program, job, start)
    if options.witness:
        outcome.witness = _witness(verdict, program, job, deadline)
    return outcome


def _compiled_harness(verdict: Verdict, job: Job, deadline: Deadline, program: Program | None) -> None:
    """Every FALSE with a counterexample: its inputs run on the gcc-compiled original program
    (`witness/harness.py`), reported next to the verdict."""
    from looprover.witness.harness import harness_for
    begin = time.monotonic()
    try:
        result = harness_for(verdict, job.input, job.data_model, not job.is_chc, deadline, job.property.name,
                             job.more_inputs, program, job.cpp_flags)
    except Exception as exc:  # noqa: BLE001 -- the harness is a report, never a reason to lose the verdict
        verdict.stats["harness"] = {"reached_error": None, "detail": f"internal error: {type(exc).__name__}: {exc}"}
        return
    if result is not None:
        # what the evidence cost, apart from the verdict's time (gcc and the run: tenths of a second)
        verdict.stats["harness"] = {**result.to_json(), "seconds": round(time.monotonic() - begin, 3)}


def _witness(verdict: Verdict, program: Program | None, job: Job, deadline: Deadline):
    """The verdict's witness, written in a child process of its own that is stopped by the deadline: whatever
    the writer does (Spacer, Houdini, the validator's checks), the verdict is never lost to it."""
    from looprover.witness.svcomp import Witness, witness_for
    if verdict.status == Status.FALSE and program is not None and program.assumptions:
        return Witness(None, None, "no violation witness: the counterexample rests on a model of undefined "
                                   "functions that a validator does not share")
    if verdict.status == Status.UNKNOWN or program is None:
        return witness_for(verdict, program, job.input, job.property.name, job.data_model)
    if deadline.left() < -0.3:
        return Witness(None, None, "no witness: no time left")
    # candidate invariants are checked before they are written: within the run's time, and past it only by
    # PAST_DEADLINE (the job itself is stopped KILL_GRACE after the deadline)
    until = Deadline(deadline.at + PAST_DEADLINE)
    child = Child("looprover-witness", _quiet_witness, verdict, program, job.input, job.property.name,
                  job.data_model, until, daemon=False)
    try:
        if Child.wait([child], max(until.left(), 0.0)):
            ok, value = child.result()
            return value if ok else Witness(None, None, f"no witness: its writer crashed ({value})")
    finally:
        child.kill()
    return Witness(None, None, "no witness: writing it did not finish by the deadline")


def _quiet_witness(*args: Any):
    """`witness_for` with this process's stdout and stderr closed to the user: z3 prints its internal failures
    (an ASSERTION VIOLATION in Spacer) there, which must not end up in the verdict's output."""
    import os
    from looprover.witness.svcomp import witness_for
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    return witness_for(*args)


def render(verdict: Verdict, program: Program | None, job: Job, start: float) -> Outcome:
    elapsed = time.monotonic() - start
    stats, tracebacks = split_tracebacks(verdict.stats)
    with derivations_shared():
        return Outcome(json=verdict_json(verdict, program, elapsed, job.describe(), stats, job.is_chc),
                       text=verdict_text(verdict, program, elapsed, job.property.name, job.expected, job.is_chc),
                       tracebacks=tracebacks)


def run_job_limited(job: Job, options: JobOptions, start: float, deadline: Deadline) -> Outcome:
    """`run_job` in a child process killed at the deadline (plus KILL_GRACE): returns by then whatever the
    front-end or the engine is doing, with UNKNOWN and the phase it was stopped in."""
    phase = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn").Value("i", 0)
    # an encoding the user forced is known even when the child never reports back (`--json`'s `encoding`)
    forced = {} if options.bitvector is None else {"encoding": "bit-vector" if options.bitvector else "integer"}
    child = Child("looprover-job", _child_job, job, options, start, deadline, phase, daemon=False,
                  memory_limit=options.memory)
    try:
        ready = Child.wait([child], deadline.left() + KILL_GRACE)
        if ready:
            ok, value = child.result()
            if ok:
                return value
            reason = value if value.startswith("out of memory") else \
                f"internal error: the run crashed while {PHASES[phase.value]} ({value})"
            return render(Verdict.unknown(options.engine, reason, **forced), None, job, start)
    finally:
        child.kill()
    reason = f"timeout while {PHASES[phase.value]} (the run was stopped at the deadline)"
    return render(Verdict.unknown(options.engine if phase.value >= 2 else "frontend", reason, **forced), None, job,
                  start)


def _child_job(job: Job, options: JobOptions, start: float, deadline: Deadline, phase) -> Outcome:
    """The job's process: the memory limit applies here (and to the portfolio's engines below it), not to the
    parent, which only waits and prints."""
    def set_phase(p: int) -> None:
        phase.value = p
    why = limit_memory(job, options.engine, options.memory)
    if why is not None:
        return render(Verdict.unknown(options.engine, why), None, job, start)
    return run_job(job, options, start, deadline, set_phase)


def limit_memory(job: Job, engine: str, memory: int | None) -> str | None:
    """Apply `--memory` (MB of address space) to this process and the processes it starts, after loading the code
    the job needs (`preload`); the reason to answer UNKNOWN when that code alone leaves no room, else None."""
    if not memory:
        return None
    preload(job, engine)
    loaded = address_space_mb()
    if loaded is not None and memory - loaded < MIN_HEADROOM_MB:
        return f"out of memory (--memory {memory} MB: looprover maps {loaded} MB before it starts and " \
               f"needs {MIN_HEADROOM_MB} MB more)"
    set_memory_limit(memory)
    return None


def preload(job: Job, engine: str) -> None:
    """Load, before `--memory` applies, the code the job would otherwise load under it: the front-end with its
    native library, the engines it starts first, the counterexample pipeline. A library that cannot be mapped
    under the limit fails as an ImportError or a native crash, not as a MemoryError; loaded first, the limit
    measures what the run computes. The other engines are pure Python (z3 is loaded by then) and load in their
    own processes under the limit, as without `--memory` (a failure is that engine's UNKNOWN). A failure here
    is left for the run itself to report."""
    steps = _engine_loaders(engine, "chc" if job.is_chc else "c")
    if job.is_chc:
        steps.append(lambda: importlib.import_module("looprover.frontend.chc"))
    else:
        steps.append(_load_libclang)
    steps += [lambda m=m: importlib.import_module(m) for m in _PIPELINE]
    _run_quietly(steps)


def _engine_loaders(engine: str, language: str) -> list[Callable[[], Any]]:
    """Loading the engines a run of `engine` starts at once: the portfolio's cheapest ones for the input
    language (its first turns, which answer most easy tasks); the others load in their own processes when they
    get a turn (`portfolio.run_portfolio`)."""
    from looprover.engines.cards import CARDS
    names = [n for n, c in CARDS.items() if c.portfolio and c.cost_for(language) == 0 and language in c.languages] + \
        ["portfolio"] if engine == "portfolio" else [engine]
    return [lambda n=n: get_engine(n) for n in names]


def _run_quietly(steps: list[Callable[[], Any]]) -> None:
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 -- what cannot load is reported by the run that needs it
            pass


_PIPELINE = ("looprover.evidence.confirm", "looprover.evidence.recheck", "looprover.evidence.proofs", "hashlib")


def _load_libclang() -> None:
    import clang.cindex as ci
    importlib.import_module("looprover.frontend.c.lower")
    ci.conf.lib             # maps libclang.so
