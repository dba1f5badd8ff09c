"""The interval analysis of a program: an abstract state per location, and the assertions it shows hold.

Why this iteration: a worklist in reverse post-order, joins everywhere and widening only at the cutpoints (every
cycle passes one, `program/loops.py`), after a few exact rounds, to the next constant of the program (so a
counter stops at its loop's limit rather than at infinity) for a few rounds, then to infinity (a program has
hundreds of constants, and a chain of widenings through all of them, per variable, does not end in time); then a few decreasing rounds recover the bounds that
the exit guards give back. Each state over-approximates every execution that reaches its location: from a
post-fixpoint, a decreasing round keeps that (each location's new state is the transfer of states that
already over-approximate their locations). The cutpoints' states are the invariants z3 checks
(`engines/intervals.py`), so a mistake here costs answers, not soundness.
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

from looprover.deadline import Deadline
from looprover.domains import Candidate
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program
from looprover.program.expr import FALSE, BoolType, Cast, Compare, Expr, IntConst, IntType, Var, cmp, const, not_
from looprover.program.liveness import liveness
from looprover.program.loops import analyze_loops, postorder
from looprover.absint.values import INF, Semantics, State, clip, join, lookup, put, type_range

WIDEN_DELAY = 3         # exact joins at a cutpoint before widening starts
THRESHOLD_ROUNDS = 4    # widenings at a cutpoint that stop at the program's constants; later ones stop only at
                        # the constants a variable is compared with, or go to infinity
NARROW_ROUNDS = 2       # decreasing rounds after the increasing iteration has stabilised


@dataclass(frozen=True)
class Analysis:
    """Per location the state at its entry (None: unreachable); the assertion sites (edge index, statement
    index) shown to hold in every execution, and those not shown."""
    program: Program
    states: dict[int, State | None]
    cutpoints: frozenset[int]
    proved: frozenset[tuple[int, int]]
    unproved: tuple[tuple[int, int], ...]

    def at_sources(self) -> "Analysis":
        """This analysis with only the states the proofs use (the initial location's and the cutpoints') and
        no program: small enough to send from one process to another (`runtime_checks`)."""
        keep = {self.program.init, *self.cutpoints}
        return Analysis(None, {n: s for n, s in self.states.items() if n in keep}, self.cutpoints, self.proved,
                        self.unproved)

    def invariants(self, bitvector: bool, also: frozenset[int] = frozenset(),
                   live: dict[int, frozenset[Var]] | None = None) -> list[Candidate]:
        """The cutpoints' states as candidate invariants, over the variables live there (`live`, else computed):
        `false` where nothing arrives, else each variable's bounds (with integers also those of its type, which
        a state leaves out but z3's Int does not know) and each known boolean. The initial location's too: a
        variable live there (read before any write, e.g. a struct member a write through a pointer may keep)
        starts with its type's range, which a cutpoint's bounds rest on and the first fragment's clause must be
        given. And those of the locations `also` (any state over-approximates its location's executions)."""
        live = liveness(self.program) if live is None else live
        out: list[Candidate] = []
        for c in sorted({self.program.init, *self.cutpoints, *also}):
            s = self.states.get(c)
            if s is None:
                out.append(Candidate(c, FALSE))
                continue
            for v in sorted(live.get(c, ()), key=lambda v: v.name):
                out += [Candidate(c, a) for a in _atoms(v, lookup(s, v), bitvector)]
        return out


def _atoms(v: Var, value, bitvector: bool) -> list[Expr]:
    t = v.type
    if isinstance(t, BoolType):
        return [] if value is None else [v if value else not_(v)]
    if not isinstance(t, IntType):
        return []
    lo, hi = value
    out = []
    if lo != -INF and t.contains(lo) and not (bitvector and lo == t.min):
        out.append(cmp(">=", v, const(int(lo), t)))
    if hi != INF and t.contains(hi) and not (bitvector and hi == t.max):
        out.append(cmp("<=", v, const(int(hi), t)))
    return out


class _Iteration:
    def __init__(self, program: Program, bitvector: bool, deadline: Deadline):
        self.types = {name: info.var.type for name, info in program.variables.items()}
        self.sem = Semantics(bitvector, self.types)
        self.deadline = deadline
        self.steps = 0

    def post(self, e: Edge, s: State | None, sites: dict | None = None, ei: int = -1) -> State | None:
        """The state after edge `e` from `s`; `sites` (if given) hears whether each assertion on it holds."""
        if s is None and sites is None:
            return None
        self.steps += 1
        if self.steps % 256 == 0:
            self.deadline.check()
        cur: State | None = None if s is None else dict(s)
        for si, st in enumerate(e.stmts):
            if cur is None:             # no execution gets here: an assertion holds vacuously
                if sites is not None and isinstance(st, Assert):
                    sites[(ei, si)] = True
                continue
            if isinstance(st, Assign):
                if not isinstance(st.lhs.type, (IntType, BoolType)):
                    continue
                put(cur, st.lhs, self.sem.eval(st.rhs, cur))
            elif isinstance(st, Havoc):
                for v in st.vars:
                    cur.pop(v.name, None)
            elif isinstance(st, (Assume, Assert)):
                if sites is not None and isinstance(st, Assert):
                    sites[(ei, si)] = self.sem.eval(st.cond, cur) is True
                cur = self.sem.refine(cur, st.cond)
        return cur


def analyze(program: Program, bitvector: bool, deadline: Deadline | None = None) -> Analysis:
    """Run the analysis (OutOfTime when `deadline` passes)."""
    deadline = deadline or Deadline.never()
    it = _Iteration(program, bitvector, deadline)
    loops = analyze_loops(program)
    widen_at = loops.cutpoints
    order = _reverse_postorder(program)
    rank = {loc: i for i, loc in enumerate(order)}
    thresholds = _thresholds(program)
    own = _compared_constants(program)
    merged = {k: sorted({*thresholds, *v}) for k, v in own.items()}    # the program's and a variable's own
    out_edges: dict[int, list[tuple[int, Edge]]] = {loc: [] for loc in order}
    for ei, e in enumerate(program.edges):
        if e.src in rank and e.src != program.exit:
            out_edges[e.src].append((ei, e))

    states: dict[int, State | None] = {loc: None for loc in program.locations}
    states[program.init] = {}
    visits: dict[int, int] = {}
    work = [(rank[program.init], program.init)]
    queued = {program.init}
    while work:
        _, loc = heapq.heappop(work)
        queued.discard(loc)
        for _, e in out_edges[loc]:
            post = it.post(e, states[loc])
            if post is None:
                continue
            old = states[e.dst]
            new = join(old, post, it.types)
            if e.dst in widen_at and old is not None:
                visits[e.dst] = visits.get(e.dst, 0) + 1
                if visits[e.dst] > WIDEN_DELAY:
                    early = visits[e.dst] <= WIDEN_DELAY + THRESHOLD_ROUNDS
                    new = _widen(old, new, it.types, thresholds if early else [], bitvector, merged if early else own)
            if new != old:
                states[e.dst] = new
                if e.dst not in queued:
                    queued.add(e.dst)
                    heapq.heappush(work, (rank[e.dst], e.dst))

    into: dict[int, list[Edge]] = {loc: [] for loc in order}
    for loc in order:
        for _, e in out_edges[loc]:
            into[e.dst].append(e)
    for _ in range(NARROW_ROUNDS):
        for loc in order:
            new = {} if loc == program.init else None
            for e in into[loc]:
                new = join(new, it.post(e, states[e.src]), it.types)
            states[loc] = new

    sites: dict[tuple[int, int], bool] = {}
    for ei, e in enumerate(program.edges):
        if e.src != program.exit:
            it.post(e, states.get(e.src), sites, ei)
    proved = frozenset(k for k, ok in sites.items() if ok)
    unproved = tuple(sorted(k for k, ok in sites.items() if not ok))
    return Analysis(program, states, frozenset(loops.cutpoints - {program.exit}), proved, unproved)


def _reverse_postorder(program: Program) -> list[int]:
    """Locations reachable from init, each before its successors except along back edges."""
    succ: dict[int, list[int]] = {}
    for e in program.edges:
        if e.src != program.exit:
            succ.setdefault(e.src, []).append(e.dst)
    return postorder(succ, program.init)[::-1]


def _thresholds(program: Program) -> list[int]:
    """The program's integer constants, sorted: where widening stops before it gives up a bound."""
    found: set[int] = set()
    done: set[int] = set()
    stack: list[Expr] = [x for e in program.edges for st in e.stmts
                         for x in ((st.rhs,) if isinstance(st, Assign) else
                                   (st.cond,) if isinstance(st, (Assume, Assert)) else ())]
    while stack:
        n = stack.pop()
        if id(n) in done:
            continue
        done.add(id(n))
        if isinstance(n, IntConst):
            found.add(n.value)
        stack.extend(n.children())
    return sorted(found)


def _compared_constants(program: Program) -> dict[str, list[int]]:
    """Per variable, the constants it is compared with (`x >= 16`, also through a conversion), sorted."""
    found: dict[str, set[int]] = {}
    done: set[int] = set()
    stack: list[Expr] = [st.cond for e in program.edges for st in e.stmts if isinstance(st, (Assume, Assert))]
    while stack:
        n = stack.pop()
        if id(n) in done:
            continue
        done.add(id(n))
        if isinstance(n, Compare):
            for a, b in ((n.lhs, n.rhs), (n.rhs, n.lhs)):
                while isinstance(a, Cast):
                    a = a.arg
                if isinstance(a, Var) and isinstance(b, IntConst):
                    found.setdefault(a.name, set()).add(b.value)
        stack.extend(n.children())
    return {k: sorted(v) for k, v in found.items()}


def _widen(old: State, new: State, types, thresholds: list[int], bitvector: bool,
           own: dict[str, list[int]] | None = None) -> State:
    """`new` (which contains `old`) with each moving bound pushed to the next threshold, or to infinity: a
    variable's thresholds are `own[k]` where given (`analyze` gives the program's constants merged with those the
    variable is compared with, and after the first rounds those alone), else `thresholds` (the program's
    constants, empty after the first rounds). The variable's own constants outlast the program's: the
    program's run out after a few rounds at a busy cutpoint, where jsmn's character codes lie dense below its
    token limit 16, and a bound gone to infinity does not come back where a path keeps the value (`if
    (toknext >= 16) return NULL`). A bound still inside its type stops at the type's end first: with integers a
    signed value goes beyond it only by an overflow, which a later round then shows (jsmn: an `int` copy of an
    unsigned position widened to +inf made every conversion back to unsigned unbounded, and 15 of its checks
    unshown)."""
    out: State = {}
    for k, y in new.items():
        t = types[k]
        if isinstance(t, BoolType):
            out[k] = y
            continue
        x = old.get(k, type_range(t))
        lo, hi = y
        steps = own.get(k, thresholds) if own else thresholds
        if lo < x[0]:
            i = bisect.bisect_right(steps, lo) - 1
            below = steps[i] if i >= 0 else -INF
            lo = max(below, t.min) if t.bounded and lo >= t.min else below
        if hi > x[1]:
            i = bisect.bisect_left(steps, hi)
            above = steps[i] if i < len(steps) else INF
            hi = min(above, t.max) if t.bounded and hi <= t.max else above
        put(out, Var(k, t), clip((lo, hi), t, bitvector))
    return out
