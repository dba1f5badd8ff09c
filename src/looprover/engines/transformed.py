"""Transform, then engine: run an engine on a transformed program and carry its answer back by the
transform's guarantee (`transforms/base.py`).

  * TRUE of the result: TRUE of the program if the transform over-approximates (or is exact), with the
    result's evidence mapped back where the transform can; otherwise it proves nothing.
  * A counterexample of the result (a FALSE, or an UNKNOWN whose evidence is an unreplayed counterexample): the
    transform's back-translation proposes a trace of the original program, which must replay on it
    (`evidence.replay.validate`), or, for a trace too long to store, runs the program to the violation itself
    (a validated `evidence.deep.RunCounterexample`). If it does not, an optional `confirm` engine runs on the original program with
    the time left; only its validated FALSE (or its TRUE: it ran on the program itself) counts. Otherwise the
    answer is UNKNOWN: the counterexample was not confirmed.
"""
from __future__ import annotations

from typing import ClassVar

from looprover.engines.base import Engine, Run, Task, run_engine
from looprover.errors import LooproverError
from looprover.program.cfa import Program
from looprover.transforms.base import Transform, Transformed
from looprover.verdict import Counterexample, Status, Verdict
from looprover.evidence.confirm import confirm_trace
from looprover.evidence.deep import RunCounterexample


class TransformThenEngine(Engine):
    """Subclasses set `transform`, `inner` (the engine for the transformed program) and `confirm`."""

    transform: ClassVar[Transform]
    inner: ClassVar[Engine]
    confirm: ClassVar[Engine | None] = None
    result: ClassVar[str] = "abstraction"      # what the transformed program is called in reasons

    @property
    def proved(self) -> str:
        """How a TRUE reads: `<transform> proved by <ENGINE>`."""
        return f"{self.transform.summary} proved by {self.inner.name.upper()}"

    def extent(self, t: Transformed) -> str:
        """How much the transform changed, for a TRUE's reason (by default the loops it rewrote)."""
        return f"{len(t.notes)} loop(s)"

    def stages(self, t: Transformed) -> list[tuple[Transformed, float]]:
        """The transformed programs the inner engine gets in turn, each with its share of the time left (the
        last one gets the rest). By default the result alone; a transform whose result has parts that are
        costly for the inner engine can offer a weaker, cheaper program first."""
        return [(t, 1.0)]

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        stats = run.stats
        try:
            t = self.transform.apply(program, self.settings(run))
        except LooproverError as err:
            return self.unknown(f"{self.transform.name} transform failed: {err}")
        if t.program is program:       # nothing changed: nothing to carry back
            return run_engine(self.inner, program, task, run.sub())
        stats["loops"] = list(t.notes)
        stats["abstract_edges"] = len(t.program.edges)
        for note in t.notes:
            run.report(f"{self.name}: {note}")
        stages = self.stages(t)
        for i, (ti, share) in enumerate(stages):
            if i + 1 == len(stages):
                return self._stage(program, task, run, ti, run.deadline)
            v = self._stage(program, task, run, ti, run.deadline.cap(run.deadline.left() * share))
            stats.setdefault("stages", []).append(f"{v.status.value}: {v.reason}")
            if v.status == Status.FALSE or v.status == Status.TRUE and ti.guarantee.keeps_true:
                return v
        raise AssertionError("no stage")

    def _stage(self, program: Program, task: Task, run: Run, t: Transformed, deadline) -> Verdict:
        """The inner engine on one transformed program until `deadline`, its answer carried back."""
        stats = run.stats
        bound = max(t.unwind_bound, 1) if t.unwind_bound is not None else run.max_bound
        iv = run_engine(self.inner, t.program, task, run.sub(max_bound=bound, deadline=deadline))
        stats[f"abstract_{self.inner.name}"] = {
            "status": iv.status.value, "reason": iv.reason, "time": round(iv.time, 3),
            **{k: v for k, v in iv.stats.items() if k in ("bound", "nodes")}}
        if iv.status == Status.TRUE:
            if not t.guarantee.keeps_true:
                return self.unknown(f"{self.inner.name.upper()} proved the {t.guarantee.value}, which proves "
                                    f"nothing about the program")
            return self.true(f"{self.proved} ({iv.reason}; {self.extent(t)})",
                             t.back.invariant(iv.evidence))
        candidate = iv.evidence if isinstance(iv.evidence, Counterexample) else None
        if iv.status == Status.UNKNOWN and candidate is None:
            return self.unknown(f"{self.inner.name.upper()} on the {self.result}: {iv.reason}")
        # the back-translation may run the program (deep traces, compiled); without a confirming engine to
        # leave time for, it gets all that is left
        budget = run.deadline.left() / (3 if self.confirm is not None else 1)
        stats["back_translation_budget"] = round(budget, 2)
        v = self._confirm(program, task, run, t.back.trace(candidate, program, budget)
                          if candidate is not None else None)
        return self.unconfirmed(v, candidate, t) if v.status == Status.UNKNOWN and candidate is not None else v

    def unconfirmed(self, verdict: Verdict, candidate: Counterexample, t: Transformed) -> Verdict:
        """An UNKNOWN whose counterexample of the transformed program `candidate` was not confirmed; a subclass
        may attach it as evidence (never a FALSE)."""
        return verdict

    def _confirm(self, program: Program, task: Task, run: Run, cex: Counterexample | None) -> Verdict:
        """A counterexample of the transformed program: find a real one, or say UNKNOWN."""
        if isinstance(cex, RunCounterexample) and cex.omitted and cex.validated:
            # too long to store and replay: the back-translation ran the program to the violation itself
            # (`evidence.deep.follow`, or compiled: `evidence.native`); the portfolio runs it again
            run.stats["confirm"] = "compiled run of the program" if cex.native else "run of the program"
            return self.false(f"counterexample of the {self.result} confirmed by {run.stats['confirm']} "
                              f"({cex.length} edges)", cex)
        if cex is not None and confirm_trace(program, cex, run.bitvector).ok:
            run.stats["confirm"] = "concrete run on the abstract trace's inputs"
            return self.false(f"counterexample of the {self.result} confirmed by running the program on its inputs "
                              f"({len(cex.steps)} steps)", cex)
        if self.confirm is None:
            return self.unknown(f"counterexample of the {self.result} not confirmed (it did not replay or run to "
                                f"the violation on the program within {run.stats.get('back_translation_budget', 0):g} s)")
        if run.deadline.left() <= 0.05:
            return self.unknown(f"abstract counterexample not confirmed (no time left for "
                                f"{self.confirm.name.upper()})")
        run.report(f"{self.name}: abstract counterexample; {self.confirm.name.upper()} on the original program")
        cv = run_engine(self.confirm, program, task, run.sub())
        run.stats[f"confirm_{self.confirm.name}"] = {"status": cv.status.value, "reason": cv.reason,
                                                     "time": round(cv.time, 3)}
        if cv.status == Status.FALSE:        # validated: `run_engine` vets every FALSE
            return self.false(f"abstract counterexample confirmed by {self.confirm.name.upper()} on the program: "
                              f"{cv.reason}", cv.evidence)
        if cv.status == Status.TRUE:          # the confirming engine ran on the program itself: a proof of its own
            return self.true(f"abstract counterexample was spurious; {self.confirm.name.upper()} on the program: "
                             f"{cv.reason}", cv.evidence)
        return self.unknown(f"abstract counterexample not confirmed ({cv.reason})")


class OnCells(TransformThenEngine):
    """An engine without array state (tpa, multiloop) on the cell abstraction of a program with arrays
    (`transforms/cells.py`): its TRUE carries over with the abstract program's proof, checked on the
    abstraction again (`TransformedProof`); a counterexample is run on the program's own inputs."""
    result = "cell abstraction"

    def __init__(self, inner: Engine):
        from looprover.transforms.cells import CellAbstraction
        self.transform = CellAbstraction()
        self.inner = inner
        self.name = inner.name


class OnStrings(TransformThenEngine):
    """An engine on the cell abstraction of the program with its strings' terminators as ghost variables
    (`transforms/strings.py`): the ghosts keep what the one cell cannot, where a scan stops."""
    result = "string-terminator abstraction"

    def __init__(self, inner: Engine):
        from looprover.transforms.strings import StringTerminators
        self.transform = StringTerminators()
        self.inner = OnCells(inner)
        self.name = inner.name


class OnSlice(TransformThenEngine):
    """An engine on the program sliced to its assertions' dependences (`transforms/slicing.py`): its TRUE
    carries over with the slice's proof, checked on the slice made again (`TransformedProof`); its
    counterexample is mapped onto the original's edges and replayed there, and one that does not replay (a path
    a dropped branch condition opened) leaves the time left to the engine on the program itself."""
    result = "slice"

    def __init__(self, inner: Engine):
        from looprover.transforms.slicing import Slice
        self.transform = Slice()
        self.inner = inner
        self.confirm = inner
        self.name = inner.name
        self.verdicts = inner.verdicts
        self.bitvector = inner.bitvector

    def refuses(self, task: Task, run: Run) -> str | None:
        """What the engine accepts: a slice is a program of the same kind, for the same property."""
        return self.inner.refuses(task, run)

    def extent(self, t: Transformed) -> str:
        return t.notes[0]


def on_abstractions(engine: Engine, program: Program, task: Task, run: Run,
                    stages: tuple[tuple[type[TransformThenEngine], float], ...]) -> Verdict | None:
    """`engine` on the program's abstractions in turn (`stages`: each wrapper with its share of the time then
    left): the first verdict that is not UNKNOWN, or None when the program itself is next."""
    for stage, share in stages:
        run.report(f"{engine.name}: the program has char arrays; trying its {stage.result}")
        v = run_engine(stage(engine), program, task, run.sub(deadline=run.deadline.cap(run.deadline.left() * share)))
        run.stats.setdefault("abstractions", []).append(f"{v.status.value}: {v.reason}")
        if v.status != Status.UNKNOWN:
            return v
    return None


def on_cells(engine: Engine, program: Program, task: Task, run: Run) -> Verdict:
    """`engine` on the cell abstraction of `program` (which has array variables)."""
    run.report(f"{engine.name}: the program has arrays; running on its cell abstraction")
    return OnCells(engine).solve(program, task, run)
