"""`looprover check FILE…`: every run-time check of a C program, one verdict per check.

What a user with real C code asks is "which of these possible run-time errors can happen?" (the LABMC seed's
setting: static-analysis alarms settled one by one). The program is built once with every kind of check as an
assertion: each array index and pointer dereference (valid-deref, the front-end's memory-safety lowering),
each signed arithmetic operation (overflow), each division, remainder and shift (operand ranges; the
`no-overflow` instrumentation's undecided kind), and each `reach_error` call (`__VERIFIER_assert`, `assert`).
Each assertion is one check, with an id and its source location.

A check is verified on the program in which it is the only assertion and every other check is an assumption
(the front-end's assertions that a run stays inside the model, `properties.UNMODELLED`, stay assertions: a run
that leaves the model makes the check's verdict unknown):
its verdict speaks of the executions that reach it without an earlier run-time error (what happens after
undefined behaviour is not C's business; an earlier error is a verdict of its own check). That program goes
through the same engine and the same evidence checks as `verify` (`jobs.checked_verdict`): `safe` only with a
checked proof, `violated` only with a counterexample replayed on the program, `unknown` with the reason. The
checks share one time budget, each within its own (`--check-timeout`). Before checks are verified one at a
time, the open ones are verified together (`run_checks`): one proof often settles them all, and each
counterexample settles the check it fails first.

Each of these runs is on the program sliced to what its assertions depend on (`transforms/slicing.py`,
`engines.transformed.OnSlice`): a check reads a few variables of a program that computes many. A proof of the
slice is checked on the slice made again; a counterexample of the slice counts only once it replays on the
program, and one that does not leaves the time left to the engine on the whole program.

When the first pass (an interval analysis, `interval_settled`) shows the model's own assertions with its
checked proof, the later runs have them as assumptions (`model_assumed`): no run that passes every check leaves
the model, so assuming it takes no run away that reaches a check's violation, and the slices no longer keep what
those assertions read. On cwalk they are 5,210 (`segment->begin` through a pointer: "the model has an object
there") and kept 89 % of the program in every slice.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from looprover.deadline import Deadline, OutOfTime
from looprover.engines.base import Task
from looprover.engines.transformed import OnSlice
from looprover.errors import GiveUp, InputError, UnsupportedError
from looprover.jobs import (
    Job, JobOptions, checked_verdict, encoding_choice, load_program, model_assertions_only, undecided_verdict,
)
from looprover.program.cfa import Assert, Assume, Edge, Program, SrcLoc, same_file
from looprover.processes import Child
from looprover.program.instrument import UNDECIDED, instrument_no_overflow
from looprover.program.model_exits import assuming, assuming_untouched, refused_of, touched, touching_note
from looprover.properties import NO_OVERFLOW, UNMODELLED, UNMODELLED_REFUSED, UNREACH_CALL, Property
from looprover.verdict import Counterexample, Status, Verdict

# assertion property -> (check kind, what a violation is)
KINDS = {
    "valid-deref": ("memory-access", "an array index or pointer dereference outside a live object"),
    "valid-free": ("free", "a free of a pointer that is neither NULL nor the start of a live heap object"),
    NO_OVERFLOW: ("signed-overflow", "signed arithmetic leaves its type's range"),
    UNDECIDED: ("undefined-operation", "a division or remainder by zero, a shift amount out of range, a left "
                                       "shift of a negative value, or overflowing index arithmetic"),
    UNREACH_CALL: ("assertion", "an assertion fails (reach_error is called)"),
}
SAFE, VIOLATED, UNKNOWN = "safe", "violated", "unknown"


@dataclass(frozen=True)
class Check:
    """One run-time check: its kind and source, and where its assertions are in the program (edge, statement):
    one per copy of the code that inlining made (a function called from three places has each of its checks
    three times; the check holds if every copy does)."""
    id: str
    kind: str
    src: SrcLoc | None
    sites: tuple[tuple[int, int], ...]

    @property
    def description(self) -> str:
        return next(d for k, d in KINDS.values() if k == self.kind)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind,
                "file": self.src.file if self.src else None, "line": self.src.line if self.src else None,
                "column": (self.src.col or None) if self.src else None}


@dataclass
class CheckResult:
    check: Check
    status: str                 # SAFE, VIOLATED, UNKNOWN
    reason: str
    engine: str = ""
    time: float = 0.0
    inputs: list[Any] = field(default_factory=list)     # a violation's nondet inputs, in order
    harness: Any = None         # a violation's compiled harness (`witness.harness.HarnessResult`), if it ran

    def to_json(self) -> dict[str, Any]:
        return {**self.check.to_json(), "status": self.status, "reason": self.reason, "engine": self.engine,
                "time": round(self.time, 3), **({"inputs": self.inputs} if self.status == VIOLATED else {}),
                **({"harness": self.harness.to_json()} if self.harness is not None else {})}


def checked_program(job: Job) -> Program:
    """The job's program with every check as an assertion (module docstring)."""
    program = load_program(job.input, job.data_model, job.more_inputs, memsafety=True, cpp_flags=job.cpp_flags,
                           keep_values=True, nondet_undefined=job.nondet_undefined, reach_checks=True,
                           allocation_fails=job.allocation_fails)
    return instrument_no_overflow(program, keep_assertions=True)


def checked_program_within(job: Job, deadline: Deadline) -> Program:
    """`checked_program` in a child process stopped at the deadline (`OutOfTime`): the front-end has no
    deadline checks of its own, and inlining a large program can take it past any budget, where `verify` runs
    it in its job's child for the same reason (`jobs.run_job_limited`)."""
    child = Child("looprover-frontend", _checked_program_or_error, job)
    try:
        if not Child.wait([child], deadline.left()):
            raise OutOfTime()
        ok, value = child.result()
    finally:
        child.kill()
    if not ok:
        raise UnsupportedError(f"internal error: the front-end crashed ({value})", None)
    kind, payload = value
    if kind == "input":
        raise InputError(payload)
    if kind == "unsupported":
        raise UnsupportedError(*payload)
    return payload


def _checked_program_or_error(job: Job) -> tuple[str, Any]:
    try:
        return "program", checked_program(job)
    except InputError as exc:
        return "input", str(exc)
    except UnsupportedError as exc:
        return "unsupported", (exc.construct, exc.where)
    except Exception as exc:  # noqa: BLE001 - never a traceback for user input
        return "unsupported", (f"internal front-end error ({type(exc).__name__}: {exc})", None)


def kind_of(prop: str) -> str:
    return KINDS.get(prop, (prop, ""))[0]


def of_kinds(program: Program, kinds: frozenset[str]) -> Program:
    """`program` without the assertions of other kinds: they are neither checked nor assumed (`--kinds`), so
    the selected checks speak of every execution, as `verify` of their property does."""
    return program.with_edges(
        Edge(e.src, e.dst, tuple(s for s in e.stmts if not isinstance(s, Assert) or kind_of(s.prop) in kinds
                                 or s.prop in UNMODELLED))
        for e in program.edges)


def checks_of(program: Program) -> list[Check]:
    """The program's assertions as checks, one per source place and kind, numbered in source order."""
    found: dict[tuple, tuple[SrcLoc | None, list]] = {}   # (place, kind, site if no place) -> (src, sites)
    for ei, e in enumerate(program.edges):
        for si, s in enumerate(e.stmts):
            if isinstance(s, Assert) and s.prop not in UNMODELLED:
                src = s.src
                key = ((src.file, src.line, src.col), kind_of(s.prop), ()) if src is not None else \
                    (("", 0, 0), kind_of(s.prop), (ei, si))
                found.setdefault(key, (src, []))[1].append((ei, si))
    return [Check(f"C{i}", k[1], found[k][0], tuple(found[k][1])) for i, k in enumerate(sorted(found), 1)]


def at_places(checks: list[Check], places: list[tuple[str, int]]) -> list[Check]:
    """The checks at the given (file, line) places (`check --at`): the seed's use, a static analyser's alarms
    checked one by one. A file matches by its path or by its name alone; the other checks stay in the program,
    assumed, as each check assumes the others."""
    def at(c: Check, file: str, line: int) -> bool:
        return c.src is not None and c.src.line == line and \
            (same_file(c.src.file, file) or Path(c.src.file).name == file)
    return [c for c in checks if any(at(c, f, n) for f, n in places)]


def model_assumed(program: Program) -> Program:
    """`program` with the model's own assertions (`properties.UNMODELLED`) as assumptions: for the checks'
    runs once a checked proof has shown that no run passing every check violates them (`run_checks`). Not the
    refused calls': which checks they touch decides (`asserting`)."""
    return program.with_edges(
        Edge(e.src, e.dst, tuple(Assume(s.cond, s.src) if isinstance(s, Assert) and s.prop in UNMODELLED
                                 and s.prop != UNMODELLED_REFUSED else s for s in e.stmts))
        for e in program.edges)


def only(program: Program, check: Check) -> Program:
    """`program` with `check` its only assertion and every other check an assumption."""
    return asserting(program, set(check.sites))


def asserting(program: Program, sites: set[tuple[int, int]], untouched_exits: bool = True) -> Program:
    """`program` with the checks at `sites` as assertions (of property unreach-call, which every engine checks)
    and every other check an assumption; so are, with `untouched_exits`, the model's own assertions after which
    no run can reach any of them (`program/model_exits.py`)."""
    if untouched_exits:
        program = assuming_untouched(program, sites)
    edges = []
    for ei, e in enumerate(program.edges):
        stmts = []
        for si, s in enumerate(e.stmts):
            if isinstance(s, Assert) and s.prop not in UNMODELLED:
                s = Assert(s.cond, UNREACH_CALL, s.src) if (ei, si) in sites else Assume(s.cond, s.src)
            stmts.append(s)
        edges.append(Edge(e.src, e.dst, tuple(stmts)))
    return program.with_edges(edges)


def failed_site(program: Program, cex: Counterexample) -> tuple[int, int] | None:
    """The (edge, statement) of the assertion a counterexample of `program` fails, if it says which."""
    if not cex.steps or not isinstance(cex.violated, Assert):
        return None
    edge = cex.steps[-1].edge
    try:
        ei = program.edges.index(edge)
    except ValueError:
        return None
    hits = [si for si, s in enumerate(edge.stmts) if s == cex.violated]
    return (ei, hits[0]) if len(hits) == 1 else None


SLICE_PAYS = 0.85      # slice each check's program when the model's own assertions keep less than this share


def slicing_pays(program: Program) -> bool:
    """Whether slicing each check's program can pay: every check's program keeps the model's own assertions
    (`properties.UNMODELLED`), so their slice is the least any check's slice keeps. On x509-parser it keeps 88 %
    of the statements (a slice of its 336,470 takes 5 s); on jsmn 10 % (5 ms)."""
    from looprover.transforms.slicing import slice_program
    _, stats = slice_program(model_assertions_only(program))
    return stats.kept < SLICE_PAYS * stats.statements


def run_checks(program: Program, checks: list[Check], data_model: str, options: JobOptions, deadline: Deadline,
               per_check: float, done: Callable[[CheckResult], None] = lambda r: None, slicing: bool = True,
               harness: Callable[[Check, Counterexample], Any] | None = None, interval_pass: bool = True
               ) -> list[CheckResult]:
    """Each check's verdict (module docstring), in order; `done` hears of each as it is settled.

    First, with `interval_pass`, the checks the interval analysis shows are settled at once (`interval_settled`);
    when its proof shows the model's own assertions, the later runs assume them (`model_assumed`).
    Then the open checks are verified all at once, each run within one check's share of the budget (at most
    `per_check`, at most the time left over the number of open checks): a TRUE settles them all
    (no run fails any of them, so none fails with the others assumed), a FALSE settles the check its replayed
    counterexample fails first (the run passes every check before it), which then becomes an assumption for the
    next run. What that leaves open (an UNKNOWN, a counterexample that names no single check) is verified one
    check at a time. `harness` gives a violation its compiled harness's result (`compiled_check`)."""
    task = Task(Property(UNREACH_CALL), "c", data_model)
    settled: dict[str, CheckResult] = {}

    def settle(r: CheckResult) -> None:
        if r.status == UNKNOWN and "refuses" not in r.reason:
            r.reason += touching_note(program, r.check.sites)
        settled[r.check.id] = r
        done(r)
    by_site = {site: c for c in checks for site in c.sites}
    open_ = list(checks)
    model = ""
    report = options.progress or (lambda msg: None)
    if interval_pass and open_:
        report(f"first pass (intervals) on {len(open_)} checks")
        first = interval_settled(program, open_, options, deadline)
        report(f"first pass: {len(first.settled)} safe" if first is not None else "first pass: none settled")
        if first is not None:
            for r in first.settled:
                settle(r)
                open_.remove(r.check)
            if not first.model_shown:
                # checks the pass shows beside runs that leave the model; the later passes need them all shown
                report("first pass: the model's own assertions are not all shown; no second pass")
            elif any(isinstance(st, Assert) and st.prop in UNMODELLED for e in program.edges for st in e.stmts):
                program = model_assumed(program)
                model = " (the model's own assertions assumed, as the interval pass's checked proof shows them)"
            second = None
            if open_ and first.model_shown:
                report(f"second pass (orderings) on {len(open_)} checks")
                second = interval_settled(program, open_, options, deadline, first)
                report(f"second pass: {len(second.settled)} safe" if second is not None else
                       "second pass: none settled")
            for r in second.settled if second is not None else ():
                r.reason += model       # its program assumes them too
                settle(r)
                open_.remove(r.check)
    wrap = OnSlice if slicing and slicing_pays(program) else None
    while len(open_) > 1 and deadline.left() > 0.5:
        start = time.monotonic()
        # at most what one check would get of the total budget: a run that fails costs no more than that
        mine = Deadline(min(deadline.at, start + min(per_check, deadline.left() / (len(open_) + 1))))
        report(f"the {len(open_)} open checks at once, within {mine.left():.1f} s")
        together = asserting(program, {site for c in open_ for site in c.sites})
        verdict = undecided_verdict(checked_verdict(together, task, options, mine, wrap), program.refusals)
        spent = time.monotonic() - start
        if verdict.status == Status.TRUE:
            for c in open_:
                settle(CheckResult(c, SAFE, f"proved with the other {len(open_) - 1} open checks at once: "
                                            f"{verdict.reason}{model}", verdict.engine, spent))
            open_ = []
            break
        cex = verdict.evidence if verdict.status == Status.FALSE else None
        site = failed_site(together, cex) if isinstance(cex, Counterexample) else None
        if site not in by_site or by_site[site] not in open_:
            break
        c = by_site[site]
        settle(CheckResult(c, VIOLATED, verdict.reason, verdict.engine, spent, list(cex.inputs),
                           harness(c, cex) if harness is not None else None))
        open_.remove(c)
    for c in open_:
        start = time.monotonic()
        if deadline.left() <= 0.5:
            r = CheckResult(c, UNKNOWN, "not run: the total time budget is spent")
        else:
            mine = Deadline(min(deadline.at, start + per_check))
            report(f"check {c.id} alone ({c.kind} at {c.src})")
            verdict = undecided_verdict(checked_verdict(only(program, c), task, options, mine, wrap),
                                         program.refusals)
            status = {Status.TRUE: SAFE, Status.FALSE: VIOLATED}.get(verdict.status, UNKNOWN)
            cex = verdict.evidence if status == VIOLATED else None
            r = CheckResult(c, status, verdict.reason + (model if status == SAFE else ""), verdict.engine,
                            time.monotonic() - start,
                            list(cex.inputs) if isinstance(cex, Counterexample) else [],
                            harness(c, cex) if harness is not None and isinstance(cex, Counterexample) else None)
        settle(r)
    return [settled[c.id] for c in checks]


INTERVAL_SHARE = 0.25       # at most this share of the time left goes to the first pass,
RELATIONS_SHARE = 0.5       # and this share of what is left then to the second: on cwalk the first takes 130 s,
                            # the second 280 s and settles 24 more checks, where the engines settle none in 10 s


@dataclass
class PassResult:
    """What a pass settled, and the first pass's analysis (its states at the cutpoint-graph sources) for the
    second: both passes' programs differ in which checks are assertions, which refine a state as assumptions
    do, so the states are the same (on cwalk the analysis takes 40 s)."""
    settled: list[CheckResult]
    analysis: Any = None

    @property
    def model_shown(self) -> bool:
        """Whether the pass's proof shows every assertion of the model's own (the first pass's only)."""
        return self.analysis is None or self.analysis[2]


def interval_settled(program: Program, checks: list[Check], options: JobOptions, deadline: Deadline,
                     earlier: PassResult | None = None) -> PassResult | None:
    """The checks an interval analysis of the program with all of `checks` asserted shows to hold, settled
    `safe` together: the analysis's proof (`engines.intervals.proof_of`) goes through the job's check with fresh
    solvers on the program with just those asserted and the model's own assertions (`properties.UNMODELLED`),
    the others assumed (as for any one check), as any engine's proof would. Where the analysis does not show
    one of the model's own assertions (a run may leave the model there), the checks such a run can reach next
    are not shown, and the others' proof assumes it (`model_exits.py`: a run that reaches them never passed it);
    when it shows them all, the result, even with nothing settled, also says that no run passing every check
    leaves the model (`PassResult.model_shown`). None when it shows nothing, or runs out of its share of the
    time: it runs in a child process killed at the end of that share (building the proof check's encoding
    of a large program has no deadline checks of its own).

    With the first pass's result `earlier`, this is the second pass (`_relations_shown`): its analysis
    with the orderings between two variables that are inductive with its states."""
    start = time.monotonic()
    share = INTERVAL_SHARE if earlier is None else RELATIONS_SHARE
    mine = Deadline(min(deadline.at, start + share * deadline.left()))
    child = Child("looprover-intervals", _interval_shown, program, checks, options.bitvector, mine) \
        if earlier is None else \
        Child("looprover-relations", _relations_shown, program, checks, earlier.analysis, mine)
    try:
        if not Child.wait([child], mine.left() + 1.0):
            return None
        ok, value = child.result()
    finally:
        child.kill()
    if not ok or value is None:
        return None
    ids, reason, analysis = value
    spent = time.monotonic() - start
    return PassResult([CheckResult(c, SAFE, reason, "intervals", spent) for c in checks if c.id in ids], analysis)


def _interval_shown(program: Program, checks: list[Check], requested: bool | None, mine: Deadline
                    ) -> tuple[set[str], str, tuple] | None:
    """The first pass's work, in its child: the ids of the checks shown, with the reason, and (bit-vectors or
    not, the analysis at the cutpoint-graph sources) for the second; or None."""
    from looprover.absint.fixpoint import analyze
    from looprover.engines.intervals import places, proof_of
    together = asserting(program, {site for c in checks for site in c.sites})
    bitvector, _ = encoding_choice(together, requested, True)
    try:
        result = analyze(together, bitvector, mine)
    except OutOfTime:
        return None
    model = [(ei, si) for ei, e in enumerate(together.edges) for si, st in enumerate(e.stmts)
             if isinstance(st, Assert) and st.prop in UNMODELLED]
    # where the analysis does not show that runs stay in the model: refused calls and others of its assertions
    exits = [site for site in model if site not in result.proved]
    refused = set(refused_of(together))
    left = [site for site in exits if site not in refused]
    found = (bitvector, result.at_sources(), not left)
    # a check is shown when its sites are, and no run that leaves the model where the analysis does not show it
    # stays can reach them (`model_exits.py`)
    out = touched(together, exits, {site for c in checks for site in c.sites})
    shown = [c for c in checks if all(site in result.proved and site not in out for site in c.sites)]
    if not shown and (left or not model):
        return (set(), "", found) if not left else None
    # the proof is checked with the model's assertions it shows as assertions (so that, with none left, it shows
    # that no run leaves the model), and those it does not as assumptions: no run to a shown check passes them
    proved = assuming(asserting(program, {site for c in shown for site in c.sites}, untouched_exits=False), exits)
    proof = proof_of(proved, result, bitvector)
    reason = f"shown with {len(shown) - 1} other checks by an interval analysis, its invariants at " \
             f"{places(result, proof)} checked by z3"
    if not _passes_check(proved, reason, proof, bitvector, mine):
        return None
    return {c.id for c in shown}, reason, found


def _relations_shown(program: Program, checks: list[Check], found: tuple, mine: Deadline
                     ) -> tuple[set[str], str, None] | None:
    """The second pass's work, in its child, on the checks the first left open (its program has no assertion
    of the model's own left: `model_assumed`): the first pass's states, the orderings between two variables
    that are inductive with them (`absint.relations`), the checks both show, and their proof checked as the
    first pass's is. None when they show nothing or the proof fails its check."""
    from dataclasses import replace

    from looprover.absint.relations import strengthened
    from looprover.engines.intervals import state_formulas
    from looprover.evidence.proofs import CutpointInvariantProof
    bitvector, analysis, _ = found
    together = asserting(program, {site for c in checks for site in c.sites})
    result = replace(analysis, program=together)
    try:
        open_sites = {site for c in checks for site in c.sites} - result.proved
        interp, count, extra = strengthened(together, result, bitvector, open_sites,
                                            state_formulas(together, result, bitvector), mine)
    except (OutOfTime, GiveUp):
        return None
    open_refused = [x for x in refused_of(together) if x not in result.proved and x not in extra]
    out = touched(together, open_refused, {site for c in checks for site in c.sites})
    shown = [c for c in checks if all((site in result.proved or site in extra) and site not in out
                                      for site in c.sites)]
    if not shown:
        return None
    proved = asserting(program, {site for c in shown for site in c.sites})
    reason = f"shown with {len(shown) - 1} other checks by an interval analysis and {count} " \
             f"ordering{'s' if count != 1 else ''} between two variables kept by Houdini, its invariants at " \
             f"{len(result.cutpoints)} cutpoints checked by z3"
    if not _passes_check(proved, reason, CutpointInvariantProof.of(interp, proved), bitvector, mine):
        return None
    return {c.id for c in shown}, reason, None


def _passes_check(proved: Program, reason: str, proof, bitvector: bool, mine: Deadline) -> bool:
    """Whether a pass's proof of the checks asserted in `proved` goes through the job's check with fresh
    solvers (`evidence.recheck`), as any engine's TRUE would, within `mine`."""
    from looprover.evidence.recheck import evidence_failure
    try:
        return evidence_failure(proved, Verdict(Status.TRUE, "intervals", reason, proof), bitvector, mine) is None
    except OutOfTime:
        return False


# what each kind of check's violation looks like in the sanitizers' reports (`witness.harness.run_sanitized`)
_REPORTED_AS = {
    "signed-overflow": ("signed integer overflow", "negation of", "cannot be represented in type"),
    "undefined-operation": ("division by zero", "shift exponent", "left shift of negative value"),
    # ASan's "stack-overflow": an access far past a stack array lands in the stack's guard page (Verisec's
    # bounds_bad at BASE_SZ 1000); the line must still be the check's
    "memory-access": ("out of bounds", "buffer-overflow", "use-after", "SEGV", "stack-buffer", "underflow",
                      "stack-overflow"),
    "free": ("double-free", "bad-free", "free on address"),
}
HARNESS_SHARE = 0.25        # at most this share of the time left goes to one harness (and MAX_SECONDS)


def compiled_check(check: Check, cex: Counterexample, sources: list[Path], data_model: str, deadline: Deadline,
                   checks: list[Check] = (), cpp_flags: tuple[str, ...] = (), program: Program | None = None) -> Any:
    """A violation run again outside looprover's model of C: the original sources compiled by gcc with the
    sanitizers reporting (`witness.harness.run_sanitized`), fed the counterexample's inputs. It reaches the
    check if the run stops in the check's file, at its line, with an error of its kind, and no other check of
    that kind (of `checks`) shares the line unless the column tells them apart; an assertion, if reach_error is
    entered and the program has no other assertion. Evidence beside the verdict: it never changes it, and it
    takes at most a quarter of the time left."""
    from looprover.witness.harness import HarnessResult
    try:
        return _compiled_check(check, cex, sources, data_model, deadline, checks, cpp_flags, program)
    except Exception as exc:  # noqa: BLE001 - evidence beside a verdict must not cost the verdicts
        return HarnessResult(None, f"the harness failed: {type(exc).__name__}: {exc}")


def _compiled_check(check: Check, cex: Counterexample, sources: list[Path], data_model: str, deadline: Deadline,
                    checks: list[Check], cpp_flags: tuple[str, ...], program: Program | None) -> Any:
    from looprover.witness.harness import (
        MAX_SECONDS, UNINITIALISED_SECONDS, HarnessResult, reads_library_input, reads_uninitialised, says_nothing,
        takes_arguments,
    )
    if getattr(cex, "omitted", 0) and not cex.inputs and getattr(cex, "plan", None) != []:
        return HarnessResult(None, "the run is too long to list its inputs")
    if takes_arguments(cex):
        return HarnessResult(None, "not run: the run starts main with an argc and argv of its choice")
    # stdin, rand or time that the harness does not feed: run anyway (stdin empty), said so; a violation that
    # does not depend on them (Juliet's `srand(time(0))` before a fixed overflow) still reaches its check
    unfed = " (the run also reads stdin, rand or time, which the harness does not feed)" \
        if reads_library_input(cex) else ""
    uninit = reads_uninitialised(cex, program)
    budget = min(UNINITIALISED_SECONDS if uninit else MAX_SECONDS, deadline.left() * HARNESS_SHARE)
    if budget < 0.5:
        return HarnessResult(None, "no time left")
    return says_nothing(_sanitized_stop(check, cex, sources, data_model, budget, cpp_flags, checks, unfed), uninit)


def _sanitized_stop(check: Check, cex: Counterexample, sources: list[Path], data_model: str, budget: float,
                    cpp_flags: tuple[str, ...], checks: list[Check], unfed: str) -> Any:
    from looprover.witness.harness import HarnessResult, run_sanitized
    stop = run_sanitized(sources, list(cex.inputs), data_model, budget, cpp_flags,
                         stop_at_reach_error=check.kind == "assertion")
    if isinstance(stop, HarnessResult):
        return HarnessResult(stop.reached_error, stop.detail + unfed)
    where = f" at {Path(stop.file).name}:{stop.line}" + (f":{stop.col}" if stop.col else "") \
        if stop.file is not None else ""
    said = f"the gcc-compiled program stopped{where}: {stop.what}{unfed}"
    if check.kind == "assertion":
        if stop.file is not None or "reach_error" not in stop.what:
            return HarnessResult(False, said)
        others = sum(1 for c in checks if c.kind == "assertion" and c.id != check.id)
        return HarnessResult(True, said) if not others else \
            HarnessResult(None, f"{said}; the program has {others + 1} assertions and the run does not say which")
    if check.src is None or stop.file is None or stop.line != check.src.line \
            or not same_file(stop.file, check.src.file) \
            or not any(w in stop.what for w in _REPORTED_AS.get(check.kind, ())):
        return HarnessResult(False, said)
    twins = [c for c in checks if c.id != check.id and c.kind == check.kind and c.src is not None
             and c.src.line == check.src.line and same_file(c.src.file, check.src.file)]
    if twins and not (stop.col and check.src.col == stop.col):
        return HarnessResult(None, f"{said}; {len(twins) + 1} checks of this kind share the line")
    return HarnessResult(True, said)


def refusal_lines(program: Program) -> list[str]:
    """One line per refused call (`Program.refusals`): its code has no checks of its own in the list, and the
    checks it can touch stay unknown unless a proof shows no run makes it (`program/model_exits.py`)."""
    lines = {f"the call at {r.call} is not modelled, nor are the checks in its code: {r.describe()}": None
             for r in program.refusals}
    return list(lines)


def summary(results: list[CheckResult]) -> dict[str, int]:
    return {s: sum(1 for r in results if r.status == s) for s in (SAFE, VIOLATED, UNKNOWN)}


def _harness_text(r: CheckResult) -> str:
    if r.harness is None:
        return ""
    said = {True: "reaches the check", False: "does not reach the check", None: "not run"}[r.harness.reached_error]
    return f" [compiled harness {said}: {r.harness.detail}]"


def table(results: list[CheckResult], base: Path | None = None) -> list[str]:
    """The results as text lines: one per check, then the totals."""
    def where(src: SrcLoc | None) -> str:
        if src is None:
            return "?"
        f = Path(src.file)
        name = f.name if base is None or f.resolve() == base.resolve() else str(f)
        return f"{name}:{src.line}" + (f":{src.col}" if src.col else "")
    lines = [f"{r.check.id:<5} {r.check.kind:<20} {where(r.check.src):<24} {r.status:<9} "
             f"{r.time:6.2f} s  {r.engine}: {r.reason}" + _harness_text(r) for r in results]
    s = summary(results)
    lines.append(f"{len(results)} checks: {s[SAFE]} safe, {s[VIOLATED]} violated, {s[UNKNOWN]} unknown")
    return lines
