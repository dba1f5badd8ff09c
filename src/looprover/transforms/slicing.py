"""Program slicing: the program cut down to what its assertions depend on (a cone of influence).

Why: `looprover check` verifies each run-time check of a real program on its own, and every check used to cost a
run on the whole inlined program (x509-parser: 27,736 edges for each of 871 checks). A check reads a few
variables; most of the program computes values that never reach it. The slice keeps:

  * the assertions;
  * every write whose value a kept statement may read (a kept read is reachable from it without another write
    of the variable in between: liveness), and what that write reads, to a fixed point. A write no kept
    statement reads, such as a global's initialiser overwritten before any kept read, goes;
  * the conditions of the branches that decide whether a kept statement runs (control dependence: Ferrante,
    Ottenstein and Warren 1987, on the graph whose edges are nodes of their own);
  * every assumption whose variables are live where it stands (it costs nothing and keeps the slice closer);
  * every havoc, so that a trace of the slice has the original's havoc values in the original's order.

Everything else is dropped: the other writes, and the other assumptions (they become `true`). The locations and
edges stay as they were, only their statement lists shrink.

Guarantee: over-approximation, whatever control dependence decides. Take any path of the original. The slice
can take the same edges: its assumptions are a subset of the original's, and each of them reads only variables
that are live where it stands. A variable live at a point has the same value there in both programs, because
the write it got its value from was live after it, so it was kept (or was a havoc: havocs are all kept, and get
the same values), and, by induction along the path, computed from the same values. So every kept statement reads
what it reads in the original: a run of the original that fails an assertion is a run of the slice that fails
it. The converse does not hold: a dropped branch condition lets the slice take paths the original cannot (and
leave a loop that never ends), so a counterexample of the slice is a candidate until its trace, mapped edge for
edge onto the original (or the original run on its inputs), replays there. An invariant of the slice is checked
on the slice made again from the program (`TransformedProof`), as for the other over-approximations.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from looprover.evidence.deep import PlanSeq, run_counterexample
from looprover.evidence.proofs import Proof, TransformedProof
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt
from looprover.program.expr import Expr, Var, free_vars
from looprover.program.interp import (
    Evaluator, InputOracle, UndefinedBehavior, commit, initial_state, try_edge,
)
from looprover.program.loops import immediate_dominators
from looprover.transforms.base import Guarantee, RunOnInputs, Transform, Transformed
from looprover.verdict import Counterexample


@dataclass(frozen=True)
class SliceStats:
    statements: int          # statements of the original program
    kept: int                # statements of the slice
    variables: int           # variables the original's statements mention
    relevant: int            # variables the slice's assertions depend on

    def note(self) -> str:
        return (f"sliced to the assertions' dependences: {self.kept} of {self.statements} statements, "
                f"{self.relevant} of {self.variables} variables")


def control_dependences(program: Program) -> tuple[list[frozenset[int]], list[frozenset[int]]]:
    """For each location and for each edge (by position), the branch locations that decide whether it is
    reached: those with one out-edge from which every path to the end passes it and another from which one may
    not.

    Taken on the graph in which each edge is a node between its two locations, so that of two branches of an
    `if` between the same two locations each depends on the branch, while a loop's exit edge (which every path
    from the loop head takes in the end) does not depend on the loop's condition. Post-dominance is taken
    towards a virtual end node that `exit`, each location without out-edges, and each location that cannot
    reach either (an endless loop) lead to; such extra arcs only add dependences. Kept for the next program
    with the same graph (`check` slices one program per run-time check, all on the same graph)."""
    return _control_dependences(program.num_locs, program.exit, tuple((e.src, e.dst) for e in program.edges))


@lru_cache(maxsize=2)
def _control_dependences(num_locs: int, exit: int, arcs: tuple[tuple[int, int], ...]
                         ) -> tuple[list[frozenset[int]], list[frozenset[int]]]:
    end = num_locs + len(arcs)              # nodes: locations, then one per edge, then the end
    succ: dict[int, list[int]] = {n: [] for n in range(end)}
    for ei, (a, b) in enumerate(arcs):
        succ[a].append(num_locs + ei)
        succ[num_locs + ei].append(b)
    branching = {l for l in range(num_locs) if len(succ[l]) > 1}
    succ[exit].append(end)
    for l in range(num_locs):
        if not succ[l]:
            succ[l].append(end)
    reverse: dict[int, list[int]] = {n: [] for n in range(end + 1)}
    for n, ss in succ.items():
        for m in ss:
            reverse[m].append(n)
    reaches_end = {end}
    stack = [end]
    while stack:
        for n in reverse[stack.pop()]:
            if n not in reaches_end:
                reaches_end.add(n)
                stack.append(n)
    for l in range(num_locs):
        if l not in reaches_end:
            succ[l].append(end)
            reverse[end].append(l)
    ipdom = immediate_dominators(reverse, end)
    deps: list[set[int]] = [set() for _ in range(end)]
    for b in branching:
        stop = ipdom.get(b)
        for n in set(succ[b]):
            while n != stop and n != end and n in ipdom:
                deps[n].add(b)
                n = ipdom[n]
    frozen = [frozenset(d) for d in deps]      # shared through the cache: nobody may change them
    return frozen[:num_locs], frozen[num_locs:]


def slice_program(program: Program) -> tuple[Program, SliceStats]:
    """The slice of `program` with respect to all its assertions (module docstring), and how much it kept.

    The variables whose values a kept statement ahead reads (live) are found by a backward data-flow analysis
    that keeps, as it goes, each write of a variable live after it; sets of variables are bit masks (a large
    program has thousands of variables live at thousands of locations)."""
    edges = program.edges
    bits: dict[Var, int] = {}

    def mask(vs) -> int:
        m = 0
        for v in vs:
            m |= 1 << bits.setdefault(v, len(bits))
        return m
    reads = [[mask(_reads(st)) for st in e.stmts] for e in edges]
    writes = [[mask(st.writes()) for st in e.stmts] for e in edges]
    index = {id(e): ei for ei, e in enumerate(edges)}
    ins = {l: [index[id(e)] for e in program.in_edges(l)] for l in program.locations}
    at_loc, at_edge = control_dependences(program)
    keep: list[set[int]] = [set() for _ in edges]          # per edge, the positions of its kept statements
    live = [0] * program.num_locs                          # per location, what kept statements ahead read
    decided: set[int] = set()                               # branch locations whose conditions are kept
    work: list[int] = []
    queued = bytearray(len(edges))

    def push(ei: int) -> None:
        if not queued[ei]:
            queued[ei] = 1
            work.append(ei)

    def need(ei: int, si: int) -> None:
        """Keep a statement, and the conditions of the branches that decide whether it runs: those its edge
        depends on, and in turn those the branch locations depend on (a worklist: chains of thousands of
        branches, one per error check of a parser, are common)."""
        if si in keep[ei]:
            return
        first = not keep[ei]
        keep[ei].add(si)
        push(ei)
        if not first:
            return
        branches = list(at_edge[ei] - decided)
        while branches:
            b = branches.pop()
            if b in decided:
                continue
            decided.add(b)
            branches.extend(at_loc[b] - decided)
            for out in program.out_edges(b):
                oi = index[id(out)]
                for j, st in enumerate(out.stmts):
                    if isinstance(st, Assume) and j not in keep[oi]:
                        keep[oi].add(j)
                        push(oi)
                        branches.extend(at_edge[oi] - decided)

    def through(ei: int) -> int:
        """What is live before edge `ei`, keeping each of its writes of a variable live after it."""
        cur = live[edges[ei].dst]
        stmts, rm, wm, kept = edges[ei].stmts, reads[ei], writes[ei], keep[ei]
        for j in range(len(stmts) - 1, -1, -1):
            if j in kept:
                cur = (cur & ~wm[j]) | rm[j]
            elif wm[j] & cur:
                if isinstance(stmts[j], Havoc):
                    cur &= ~wm[j]
                else:
                    need(ei, j)
                    cur = (cur & ~wm[j]) | rm[j]
        return cur

    for ei, e in enumerate(edges):
        for si, st in enumerate(e.stmts):
            if isinstance(st, Assert):
                need(ei, si)
    while work:
        ei = work.pop()
        queued[ei] = 0
        before = through(ei)
        src = edges[ei].src
        if before & ~live[src]:
            live[src] |= before
            for ie in ins[src]:
                push(ie)
    new_edges = []
    for ei, e in enumerate(edges):
        free = _free_assumptions(e, keep[ei], reads[ei], writes[ei], live[e.dst])
        stmts = tuple(st for si, st in enumerate(e.stmts) if si in keep[ei] or si in free or isinstance(st, Havoc))
        new_edges.append(e if len(stmts) == len(e.stmts) else Edge(e.src, e.dst, stmts))
    relevant = 0
    for m in live:
        relevant |= m
    for ei, kept in enumerate(keep):
        for si in kept:
            relevant |= reads[ei][si]
    stats = SliceStats(sum(len(e.stmts) for e in edges), sum(len(e.stmts) for e in new_edges), len(bits),
                       relevant.bit_count())
    if all(n is e for n, e in zip(new_edges, edges)):
        return program, stats
    return program.with_edges(new_edges), stats


_READS: dict[int, tuple[Expr, frozenset[Var]]] = {}     # id(expression) -> (expression, its variables)


def _reads(st: Stmt) -> frozenset[Var]:
    """`st.reads()`, remembered per expression: `check` slices one program per check, and they share their
    statements' expressions (x509-parser: 336,470 statements, 8 of a slice's 9 s were spent finding their
    variables). The expression is kept with its variables, so its id is not reused while it is remembered."""
    e = st.rhs if isinstance(st, Assign) else getattr(st, "cond", None)
    if e is None:
        return st.reads()
    got = _READS.get(id(e))
    if got is None or got[0] is not e:
        if len(_READS) > 2_000_000:
            _READS.clear()
        got = _READS[id(e)] = (e, free_vars(e))
    return got[1]


def _free_assumptions(edge: Edge, kept: set[int], reads: list[int], writes: list[int], live_after: int) -> set[int]:
    """The dropped assumptions of `edge` that can stay at no cost: those whose variables are live where they
    stand, so that every write reaching them is kept and they read what the original reads."""
    out: set[int] = set()
    cur = live_after
    for j in range(len(edge.stmts) - 1, -1, -1):
        if j in kept:
            cur = (cur & ~writes[j]) | reads[j]
        elif isinstance(edge.stmts[j], Assume):
            if reads[j] & ~cur == 0:
                out.add(j)
        else:
            cur &= ~writes[j]
    return out


class Slice(Transform):
    name = "slice"
    summary = "the program sliced to its assertions' dependences"
    guarantee = Guarantee.OVER

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        sliced, stats = slice_program(program)
        return Transformed(sliced, self.guarantee, SameEdges(), notes=[stats.note()])


class SameEdges(RunOnInputs):
    """The slice has the original's edges in the original's order (fewer statements on them) and the same
    havocs, so a trace maps onto the original step for step, with the same havoc values and inputs. Where two
    out-edges of a location became alike in the slice (a dropped branch), the original's edge is the one whose
    statements let the run go on (the trace's run on the original, edge by edge); the caller replays it.

    Where the original cannot follow the trace (a loop the slice left early because its condition was dropped,
    while the original runs it 100,000 times first), the original is run on the trace's inputs
    (`RunOnInputs`). A run too long to store (`evidence.deep.RunCounterexample`) that knows every havoc value
    of its run (`plan`: an accelerated one) is run again on the original with those values, a run as long as
    the slice's, if the budget allows that many steps (a compiled one of 10^8 edges is not), and keeps them,
    compressed, as its own. Where the original's path parts from the slice's, the values go to other havocs:
    each must then be a value of its havoc's type (`typed`), so that the run, whatever path it takes, is one the
    program can make; at a nondeterministic branch the run stops."""

    def trace(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        if getattr(cex, "omitted", 0) and getattr(cex, "plan", None) is not None:
            return self._rerun(cex, original, budget)
        mapped = None if getattr(cex, "omitted", 0) else self._mapped(cex, original)
        return mapped if mapped is not None else super().trace(cex, original, budget)

    def _rerun(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        steps = getattr(cex, "length", 0) + 100
        if steps > min(self.MAX_STEPS, self.STEPS_PER_SECOND * max(budget, 0.0)):
            return None
        run, _ = run_counterexample(original, cex.initial, PlanSeq(cex.plan), False, steps, typed=True)
        if run is not None:
            run.plan = list(cex.plan)
        return run

    def _mapped(self, cex: Counterexample, original: Program) -> Counterexample | None:
        ev = Evaluator("math")
        state = initial_state(original, cex.initial)
        havocs = list(getattr(cex, "havocs", None) or [])
        oracle = InputOracle(original, cex.inputs, havocs, strict=bool(havocs))
        mapped = []
        try:
            for step in cex.steps:
                for twin in original.out_edges(step.edge.src):
                    if twin.dst != step.edge.dst or not _is_slice_of(step.edge, twin):
                        continue
                    snap = oracle.snapshot()
                    r = try_edge(ev, twin, state, oracle)
                    if r.blocked is None:
                        break
                    oracle.restore(snap)
                else:
                    return None      # the slice's path is not one the original can take
                mapped.append(dataclasses.replace(step, edge=twin))
                state = commit(r)
                if r.violated is not None:
                    return dataclasses.replace(cex, steps=mapped, validated=False, violated=None)
        except (UndefinedBehavior, IndexError):
            pass
        return None          # the original does not fail along the trace

    def invariant(self, evidence: Any) -> Any | None:
        return TransformedProof(Slice.name, evidence) if isinstance(evidence, Proof) else None


def _is_slice_of(cut: Edge, whole: Edge) -> bool:
    """Are `cut`'s statements `whole`'s with some left out (in order), its havocs all of them (so that the
    trace's havoc values go to the same havocs)?"""
    it = iter(whole.stmts)
    return all(any(s == w for w in it) for s in cut.stmts) and \
        [s for s in cut.stmts if isinstance(s, Havoc)] == [s for s in whole.stmts if isinstance(s, Havoc)]
