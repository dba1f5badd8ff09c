"""Loop structure of a CFA: dominators, natural loops, the nesting forest, irreducibility, cutpoints.

Only locations reachable from `init` count, and out-edges of `exit` are ignored (execution stops there), so
dead code can neither create loops nor make a program look irreducible.

Natural loops with the same header are merged: C's `continue` and multiple back edges give one loop per
header, which is what unwinding and loop summaries want. A *retreating* edge (DFS edge to a location on the
DFS stack) whose target does not dominate its source means irreducible control flow (a cycle with two
entries, e.g. from `goto` into a loop body). Such cycles have no natural loop: they are reported in
`irreducible_edges` and covered by the cutpoints (targets of all retreating edges form a feedback vertex
set, because every cycle contains a retreating edge of any DFS).

Usage: `forest = analyze_loops(program)`; `forest.order` lists headers innermost first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from looprover.program.cfa import Edge, Program
from looprover.program.expr import Var


@dataclass(frozen=True)
class Loop:
    """A natural loop (all back edges to `header` merged).

    `body` includes the header and the bodies of nested loops. `body_edges` have both ends in the body
    (back edges included); `exit_edges` go from the body to outside; `entry_edges` come from outside into
    the header. `reads`/`writes` cover body and exit edges (an exit edge's `Assume` is the loop condition;
    over-approximating writes is the safe side for havoc-based abstractions).
    """
    header: int
    body: frozenset[int]
    body_edges: tuple[Edge, ...]
    back_edges: tuple[Edge, ...]
    entry_edges: tuple[Edge, ...]
    exit_edges: tuple[Edge, ...]
    reads: frozenset[Var]
    writes: frozenset[Var]
    parent: int | None = None            # header of the innermost enclosing loop
    children: tuple[int, ...] = ()       # headers of directly nested loops
    depth: int = 1                       # 1 = outermost

    @property
    def exits(self) -> frozenset[int]:
        """Locations outside the loop that an exit edge leads to."""
        return frozenset(e.dst for e in self.exit_edges)

    def contains(self, loc: int) -> bool:
        return loc in self.body


@dataclass(frozen=True)
class LoopForest:
    program: Program
    loops: Mapping[int, Loop]                 # header -> loop
    roots: tuple[int, ...]                    # headers of outermost loops
    order: tuple[int, ...]                    # all headers, children before parents (innermost first)
    reachable: frozenset[int]
    idom: Mapping[int, int]                   # immediate dominator (init has none)
    irreducible_edges: tuple[Edge, ...]       # retreating edges whose target does not dominate the source
    cutpoints: frozenset[int]                 # every cycle passes one: loop headers + retreating targets
    _chain: Mapping[int, tuple[int, ...]] = field(repr=False, default_factory=dict)
    _dom_interval: Mapping[int, tuple[int, int]] = field(repr=False, default_factory=dict)

    @property
    def irreducible(self) -> bool:
        return bool(self.irreducible_edges)

    def headers(self) -> tuple[int, ...]:
        return tuple(sorted(self.loops))

    def chain(self, loc: int) -> tuple[int, ...]:
        """Headers of the loops containing `loc`, outermost first."""
        return self._chain.get(loc, ())

    def loop_of(self, loc: int) -> Loop | None:
        """The innermost loop containing `loc`."""
        ch = self.chain(loc)
        return self.loops[ch[-1]] if ch else None

    def is_back_edge(self, e: Edge) -> bool:
        lp = self.loops.get(e.dst)
        return lp is not None and e.src in lp.body

    def dominates(self, a: int, b: int) -> bool:
        """Does `a` dominate `b` (both reachable)? O(1) through a DFS numbering of the dominator tree."""
        ia, ib = self._dom_interval.get(a), self._dom_interval.get(b)
        if ia is None or ib is None:
            return False
        return ia[0] <= ib[0] and ib[1] <= ia[1]


def _reachable(program: Program) -> set[int]:
    seen = {program.init}
    todo = [program.init]
    while todo:
        l = todo.pop()
        if l == program.exit:
            continue
        for e in program.out_edges(l):
            if e.dst not in seen:
                seen.add(e.dst)
                todo.append(e.dst)
    return seen


def _succ(program: Program, l: int) -> list[Edge]:
    return [] if l == program.exit else program.out_edges(l)


def _retreating_edges(program: Program) -> list[Edge]:
    """Edges to a location on the DFS stack (iterative DFS from init, deterministic edge order)."""
    on_stack: set[int] = set()
    visited: set[int] = set()
    result: list[Edge] = []
    visited.add(program.init)
    on_stack.add(program.init)
    stack = [(program.init, iter(_succ(program, program.init)))]
    while stack:
        loc, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            on_stack.discard(loc)
            continue
        if nxt.dst in on_stack:
            result.append(nxt)
        elif nxt.dst not in visited:
            visited.add(nxt.dst)
            on_stack.add(nxt.dst)
            stack.append((nxt.dst, iter(_succ(program, nxt.dst))))
    return result


def postorder(succ: Mapping[int, Iterable[int]], start: int) -> list[int]:
    """The nodes reachable from `start` in DFS postorder (iterative; successors in their given order)."""
    order: list[int] = []
    seen = {start}
    stack = [(start, iter(succ.get(start, ())))]
    while stack:
        node, it = stack[-1]
        nxt = next((n for n in it if n not in seen), None)
        if nxt is None:
            order.append(node)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succ.get(nxt, ()))))
    return order


def immediate_dominators(succ: Mapping[int, Iterable[int]], start: int) -> dict[int, int]:
    """The immediate dominator of every node reachable from `start` but `start` itself (Cooper, Harvey and
    Kennedy, "A Simple, Fast Dominance Algorithm", 2001: iterate over reverse postorder, intersecting the
    predecessors' dominator-tree paths, to a fixed point). Why our own: it is the one graph algorithm looprover
    needs, and importing networkx for it cost 150 ms of every run's start-up (tests check it against networkx)."""
    order = postorder(succ, start)
    post = {n: i for i, n in enumerate(order)}
    preds: dict[int, list[int]] = {n: [] for n in order}
    for n in order:
        for m in succ.get(n, ()):
            if m in post:
                preds[m].append(n)
    idom = {start: start}

    def intersect(a: int, b: int) -> int:
        while a != b:
            while post[a] < post[b]:
                a = idom[a]
            while post[b] < post[a]:
                b = idom[b]
        return a
    changed = True
    while changed:
        changed = False
        for n in reversed(order):
            if n == start:
                continue
            done = [p for p in preds[n] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    del idom[start]
    return idom


def analyze_loops(program: Program) -> LoopForest:
    reach = _reachable(program)
    idom = immediate_dominators({l: [e.dst for e in _succ(program, l)] for l in reach}, program.init)
    # Dominator tree DFS intervals for O(1) dominance queries.
    kids: dict[int, list[int]] = {l: [] for l in reach}
    for n, d in idom.items():
        kids[d].append(n)
    interval: dict[int, tuple[int, int]] = {}
    counter = 0
    stack: list[tuple[int, bool]] = [(program.init, False)]
    start: dict[int, int] = {}
    while stack:
        n, done = stack.pop()
        if done:
            interval[n] = (start[n], counter)
            counter += 1
            continue
        start[n] = counter
        counter += 1
        stack.append((n, True))
        for k in sorted(kids[n], reverse=True):
            stack.append((k, False))

    def dominates(a: int, b: int) -> bool:
        ia, ib = interval[a], interval[b]
        return ia[0] <= ib[0] and ib[1] <= ia[1]

    retreating = _retreating_edges(program)
    # Back edges: any edge (not only DFS-retreating ones) whose target dominates its source.
    back: dict[int, list[Edge]] = {}
    for l in sorted(reach):
        for e in _succ(program, l):
            if dominates(e.dst, e.src):
                back.setdefault(e.dst, []).append(e)
    irreducible = tuple(e for e in retreating if not dominates(e.dst, e.src))

    # Natural loop bodies, merged per header.
    bodies: dict[int, set[int]] = {}
    for h, bes in back.items():
        body = {h}
        todo = [e.src for e in bes if e.src != h]
        body.update(todo)
        while todo:
            n = todo.pop()
            for e in program.in_edges(n):
                if e.src in reach and e.src not in body and e.src != program.exit:
                    body.add(e.src)
                    todo.append(e.src)
        bodies[h] = body

    # Nesting: the parent is the smallest other loop whose body contains the header.
    headers = sorted(bodies)
    parent: dict[int, int | None] = {}
    for h in headers:
        cands = [o for o in headers if o != h and h in bodies[o]]
        # Merged loops with equal bodies cannot happen (one loop per header); ties break by header id.
        parent[h] = min(cands, key=lambda o: (len(bodies[o]), o)) if cands else None
    children: dict[int, list[int]] = {h: [] for h in headers}
    for h in headers:
        if parent[h] is not None:
            children[parent[h]].append(h)
    depth: dict[int, int] = {}

    def get_depth(h: int) -> int:
        d, p = 1, parent[h]
        while p is not None:
            d, p = d + 1, parent[p]
        return d

    for h in headers:
        depth[h] = get_depth(h)

    loops: dict[int, Loop] = {}
    for h in headers:
        body = bodies[h]
        body_edges, exit_edges, entry_edges = [], [], []
        for l in sorted(body):
            for e in _succ(program, l):
                (body_edges if e.dst in body else exit_edges).append(e)
        for e in program.in_edges(h):
            if e.src in reach and e.src not in body and e.src != program.exit:
                entry_edges.append(e)
        reads: set[Var] = set()
        writes: set[Var] = set()
        for e in body_edges + exit_edges:
            reads |= e.reads()
            writes |= e.writes()
        loops[h] = Loop(h, frozenset(body), tuple(body_edges), tuple(back[h]), tuple(entry_edges),
                        tuple(exit_edges), frozenset(reads), frozenset(writes), parent[h],
                        tuple(sorted(children[h])), depth[h])

    # Innermost-first order: deeper loops first, then by header for determinism.
    order = tuple(sorted(headers, key=lambda h: (-depth[h], h)))
    roots = tuple(h for h in headers if parent[h] is None)
    innermost: dict[int, int] = {}
    for h in sorted(headers, key=lambda h: depth[h]):  # outer first, so inner loops overwrite
        for l in bodies[h]:
            innermost[l] = h
    chain: dict[int, tuple[int, ...]] = {}
    for l, h in innermost.items():
        c: list[int] = []
        p: int | None = h
        while p is not None:
            c.append(p)
            p = parent[p]
        chain[l] = tuple(reversed(c))
    cutpoints = frozenset(headers) | frozenset(e.dst for e in retreating)
    return LoopForest(program, loops, roots, order, frozenset(reach), idom, irreducible, cutpoints,
                      chain, interval)


def loop_vars(loops: Iterable[Loop]) -> tuple[frozenset[Var], frozenset[Var]]:
    """Union of reads and writes of several loops."""
    r: set[Var] = set()
    w: set[Var] = set()
    for lp in loops:
        r |= lp.reads
        w |= lp.writes
    return frozenset(r), frozenset(w)
