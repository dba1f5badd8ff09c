"""Deep counterexamples: replay by running the original program, not by following a stored trace.

Why: TPA finds violations after 10^6 loop iterations (exact powers); a CFA trace of that run has millions of
edges, more than a SAT model or a trace file should carry. What an SMT query can cheaply give is the start:
the initial values and the havoc values of the first fragment (the entry to the loop). From there the
concrete interpreter runs the *original* program; `__VERIFIER_nondet_*` calls after the recorded prefix get
harness values (0). A run that reaches a violated assertion is a real counterexample whatever the engine
believed; a run that does not proves nothing, and the caller says UNKNOWN.

The counterexample keeps the first and last `KEEP` edges of the run and the total length; `validated` is set
only by an actual run to the violation (signed overflow on the way refuses it in integer mode, as `replay` does).

Accelerated counterexamples (`transforms/expand.py`) know every havoc value of their run, in a compressed
form (`Repeat`: the n iterations of an accelerated path read the same values): `follow` runs the program along
their expanded edges, and the counterexample keeps the compressed values as its `plan`, so that running it
again (`evidence/recheck.py`, or a compiled run, `evidence/native.py`) feeds every havoc the same value.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from looprover.program.cfa import Edge, Program
from looprover.program.interp import (
    Evaluator, InputOracle, UndefinedBehavior, commit, initial_state, run, try_edge,
)
from looprover.verdict import Counterexample, TraceStep
from looprover.evidence.replay import cpg_trace

KEEP = 100


@dataclass
class Repeat:
    """`items` (values or nested `Repeat`s) `times` times in a row."""
    times: int
    items: list


def plan_length(plan: Sequence[Any]) -> int:
    return sum(x.times * plan_length(x.items) if isinstance(x, Repeat) else 1 for x in plan)


def iter_plan(plan: Sequence[Any]) -> Iterator[Any]:
    for x in plan:
        if isinstance(x, Repeat):
            for _ in range(x.times):
                yield from iter_plan(x.items)
        else:
            yield x


class PlanSeq(SequenceABC):
    """A compressed havoc plan as a sequence (indexable without expanding it: runs read it by position)."""

    def __init__(self, plan: Sequence[Any]):
        self.plan = list(plan)
        self.starts: list[int] = []
        self.lens: list[int] = []
        pos = 0
        for x in self.plan:
            self.starts.append(pos)
            n = x.times * plan_length(x.items) if isinstance(x, Repeat) else 1
            self.lens.append(n)
            pos += n
        self.total = pos
        self._inner: dict[int, PlanSeq] = {}

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.total))]
        if i < 0:
            i += self.total
        if not 0 <= i < self.total:
            raise IndexError(i)
        k = bisect_right(self.starts, i) - 1
        x = self.plan[k]
        if not isinstance(x, Repeat):
            return x
        inner = self._inner.get(k)
        if inner is None:
            inner = self._inner[k] = PlanSeq(x.items)
        return inner[(i - self.starts[k]) % inner.total]


@dataclass
class RunCounterexample(Counterexample):
    """A validated run shown abbreviated: `steps` are the first and the last edges; `omitted` edges in between
    were executed at position `omitted_at`. `length` is the whole run's number of CFA edges. `plan`, when
    known, is every havoc value of the run in order (compressed); `native` says the run was a compiled one
    (`evidence/native.py`), too long for the interpreter."""
    length: int = 0
    omitted: int = 0
    omitted_at: int = 0
    plan: list | None = None
    native: bool = False


def run_from_model(program: Program, sys, model, prefix: int, depth: int, bitvector: bool
                   ) -> tuple[RunCounterexample | None, str]:
    """Run the program from the start a model of the cutpoint-graph system `sys` fixes for its first `prefix`
    steps (initial values and havocs), for at most `depth` cutpoint steps: a faithful run takes at most one
    fragment's edges per step, a longer one has left the engine's path."""
    first = cpg_trace(program, sys, model, prefix)
    per_step = max(len(f.edges) for f in sys.cpg.fragments.values())
    return run_counterexample(program, first.initial, first.havocs, bitvector, per_step * depth + 100)


def run_counterexample(program: Program, initial: dict[str, Any], havocs: Sequence[Any], bitvector: bool,
                       max_steps: int, typed: bool = False) -> tuple[RunCounterexample | None, str]:
    """Run the program from `initial` with the prefix `havocs`; a validated counterexample or (None, why not).
    `typed`: the havoc values were recorded on another program and must each be a value of the havoc's type
    (`InputOracle`)."""
    oracle = InputOracle(program, havocs=havocs, typed=typed)
    res = run(program, oracle, initial, max_steps=max_steps, signed_overflow="wrap" if bitvector else "math")
    if res.outcome != "violation":
        return None, f"the run from the found initial state ended with '{res.outcome}' after {res.steps} edges"
    if res.overflowed:      # as `replay.validate`: in both modes, signed overflow is undefined behaviour in C
        return None, "the violation depends on signed overflow (undefined behaviour)"
    edges = res.edges
    cut = len(edges) > 2 * KEEP
    shown = edges[:KEEP] + edges[-KEEP:] if cut else edges
    steps = [TraceStep(e, e.src_loc, {}) for e in shown]
    viol = res.violated.src if res.violated is not None and res.violated.src else edges[-1].src_loc
    cex = RunCounterexample(steps, oracle.read(), dict(initial), True, viol, res.violated, length=len(edges),
                            omitted=len(edges) - len(shown), omitted_at=KEEP if cut else len(edges))
    return cex, ""


def follow(program: Program, initial: dict[str, Any], edges: Iterable[Edge], plan: Sequence[Any],
           stop: Callable[[], bool], tail: Sequence[Edge] = ()) -> tuple[RunCounterexample | None, str]:
    """Run `program` from `initial` along `edges` (a trace too long to store), every havoc reading the next
    value of `plan`; a validated counterexample if the last edge fails an assertion without signed overflow on
    the way, else (None, why). `stop()` is polled every 4096 edges."""
    ev = Evaluator("math")
    state = initial_state(program, initial)
    oracle = InputOracle(program, havocs=PlanSeq(plan))
    head: list[Edge] = []
    last: deque[Edge] = deque(maxlen=KEEP)
    loc, n = program.init, 0
    try:
        for e in edges:
            if n % 4096 == 4095 and stop():
                return None, f"out of time after {n} edges of the expanded trace"
            outs = program.out_edges(loc)
            if e.src != loc or not any(e is o for o in outs) and e not in outs:
                return None, f"edge {n} of the expanded trace is not an edge of the program from L{loc}"
            r = try_edge(ev, e, state, oracle)
            if r.blocked is not None:
                return None, f"the expanded trace is blocked at edge {n} ({e.src_loc}): {r.blocked.cond}"
            state = commit(r)
            n += 1
            if len(head) < KEEP:
                head.append(e)
            else:
                last.append(e)
            if r.violated is not None:
                if ev.overflowed:
                    return None, "the violation depends on signed overflow (undefined behaviour)"
                shown = head + list(last)
                steps = [TraceStep(x, x.src_loc, {}) for x in shown]
                viol = r.violated.src or e.src_loc
                return RunCounterexample(steps, oracle.read(), dict(initial), True, viol, r.violated, length=n,
                                         omitted=n - len(shown), omitted_at=len(head), plan=list(plan)), ""
            loc = e.dst
    except UndefinedBehavior as ub:
        return None, f"undefined behaviour at edge {n} of the expanded trace: {ub}"
    except IndexError as err:
        return None, f"the expanded trace reads more havoc values than it has ({err})"
    return None, f"the expanded trace ends after {n} edges without a violation"
