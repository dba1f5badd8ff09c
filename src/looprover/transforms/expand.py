"""From a counterexample of an accelerated program (`transforms/accelerate.py`) to one of the original program.

Every step of the counterexample that takes an original edge stays; a step through an accelerated branch with
iteration count n and frozen inputs h becomes n copies of its path, each reading h at the path's havocs (in
order), and an accelerated inner loop on that path expands the same way. The result is a trace of the original
program with every havoc value known; it still has to replay on the program, which is the caller's check
(`engines/transformed.py`). Nothing here is trusted: an expansion that does not replay is no counterexample.

How it is checked depends on its length:
  * up to `FULL_TRACE` edges: a stored trace, replayed edge by edge like every other counterexample;
  * longer ones are run (`evidence.deep.follow`): on the interpreter when that takes at most
    `INTERPRETED_SECONDS` (about `RunOnInputs.STEPS_PER_SECOND` edges a second), else as a compiled program
    (`evidence.native`, falling back to the interpreter if that fails and time allows), fed the same havoc
    values, which must end in `reach_error`. All iterations of an accelerated path read the same values, so
    the values are stored compressed (`deep.Repeat`): a run of 10^9 iterations needs no 10^9-entry list.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from looprover.deadline import Deadline
from looprover.program.cfa import Edge, Havoc, Program
from looprover.program.expr import ArrayType
from looprover.transforms.base import BackTranslation, RunOnInputs
from looprover.verdict import Counterexample, TraceStep
from looprover.evidence.deep import KEEP, Repeat, follow
from looprover.evidence.replay import ModelCounterexample

FULL_TRACE = 20_000
# Longer runs are compiled when gcc can: the interpreter's ~10^5 edges a second would make a bug behind 10^5
# iterations take longer to confirm than one behind 10^9, compiled (a third of a second to compile, a second
# per 10^9 edges to run). The interpreter's run lists the inputs it read (for witnesses and test harnesses).
INTERPRETED_SECONDS = 1.0


class ExpandAccelerated(BackTranslation):
    def __init__(self, accelerators: Mapping[Edge, Any]):
        self.accels = dict(accelerators)
        self.last_how = ""          # how the last trace was checked (for statistics and tests)

    # ------------------------------------------------------------------------- the expansion
    def _split(self, acc, vals: list) -> list[tuple[Edge, list]]:
        """One iteration of an accelerated path: its edges with their share of the frozen inputs."""
        out, pos = [], 0
        for e, k in zip(acc.path, acc.havocs):
            out.append((e, vals[pos:pos + k]))
            pos += k
        return out

    def edges(self, edge: Edge, vals: list) -> Iterator[tuple[Edge, list]]:
        acc = self.accels.get(edge)
        if acc is None:
            yield edge, vals
            return
        one = self._split(acc, vals[1:])
        for _ in range(vals[0]):
            for e, v in one:
                yield from self.edges(e, v)

    def reversed_edges(self, edge: Edge, vals: list) -> Iterator[Edge]:
        acc = self.accels.get(edge)
        if acc is None:
            yield edge
            return
        one = self._split(acc, vals[1:])
        for _ in range(vals[0]):
            for e, v in reversed(one):
                yield from self.reversed_edges(e, v)

    def length(self, edge: Edge, vals: list) -> int:
        acc = self.accels.get(edge)
        if acc is None:
            return 1
        return vals[0] * sum(self.length(e, v) for e, v in self._split(acc, vals[1:]))

    def plan(self, edge: Edge, vals: list) -> list:
        acc = self.accels.get(edge)
        if acc is None:
            return list(vals)
        items: list = []
        for e, v in self._split(acc, vals[1:]):
            items += self.plan(e, v)
        return [Repeat(vals[0], items)] if items else []

    def steps(self, cex: Counterexample) -> list[tuple[Edge, list]] | None:
        """The counterexample's edges with the havoc values each one read (None without recorded havocs)."""
        havocs = getattr(cex, "havocs", None)
        if havocs is None:
            return None
        out, pos = [], 0
        for st in cex.steps:
            k = sum(len(s.vars) for s in st.edge.stmts if isinstance(s, Havoc))
            out.append((st.edge, list(havocs[pos:pos + k])))
            pos += k
        return out

    # ------------------------------------------------------------------------- the back translation
    def trace(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        items = self.steps(cex)
        if items is None:
            return None
        stop = Deadline.after(max(budget, 0.0))     # on the engine's clock: a pause does not spend it
        initial = {n: v for n, v in cex.initial.items() if n in original.variables}
        total = sum(self.length(e, v) for e, v in items)
        if total <= FULL_TRACE:
            self.last_how = "replay"
            return self._full(original, items, initial, cex)
        plan: list = []
        for e, v in items:
            plan += self.plan(e, v)
        expanded = (x for e, v in items for x, _ in self.edges(e, v))
        from looprover.evidence import native
        seconds = total / RunOnInputs.STEPS_PER_SECOND
        if seconds <= min(INTERPRETED_SECONDS, max(budget, 0.0) / 2) or native.why_not(original) is not None:
            self.last_how = "interpreter"
            cex2, _ = follow(original, initial, expanded, plan, stop.expired)
            return cex2
        self.last_how = "native"
        head = []
        for x in expanded:
            head.append(x)
            if len(head) >= KEEP:
                break
        tail: list[Edge] = []
        for e, v in reversed(items):
            for x in self.reversed_edges(e, v):
                tail.append(x)
                if len(tail) >= KEEP:
                    break
            if len(tail) >= KEEP:
                break
        tail.reverse()
        cex2 = native.confirm(original, initial, plan, head, tail, total, cex.violated_at,
                              max(stop.left(), 0.0))
        if cex2 is None and seconds <= stop.left() / 2:
            # gcc refused the printed C, or the run differs from the IR's: the interpreter decides
            self.last_how = "interpreter"
            expanded = (x for e, v in items for x, _ in self.edges(e, v))
            cex2, _ = follow(original, initial, expanded, plan, stop.expired)
        return cex2

    def _full(self, original: Program, items, initial, cex) -> ModelCounterexample:
        kinds = {n: i.kind for n, i in original.variables.items()}
        steps, flat, inputs = [], [], []
        for e, v in items:
            for x, xv in self.edges(e, v):
                steps.append(TraceStep(x, x.src_loc, {}))
                flat += xv
                hv = [u for s in x.stmts if isinstance(s, Havoc) for u in s.vars]
                for var, val in zip(hv, xv):
                    if kinds.get(var.name) == "nondet" and not isinstance(var.type, ArrayType):
                        inputs.append(val)
        return ModelCounterexample(steps, inputs, initial, False, cex.violated_at, havocs=flat, length=len(steps))
