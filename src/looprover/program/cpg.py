"""The cutpoint graph (CPG): large-block edges between loop heads.

Nodes are `init`, the cutpoints (loop heads; a feedback vertex set when control flow is irreducible),
`exit`, and the virtual `ERROR` node. Every cycle of the CFA passes a cutpoint, so the part of the CFA reachable
from a node before the next cutpoint (its *fragment*) is a DAG. A CPG edge `u -> v` stands for all paths
through u's fragment ending at v; `u -> ERROR` for all paths through u's fragment ending in a violated
`Assert` (the assertion edge's statements up to the failing assert; earlier asserts on the path hold).

The fragment is kept as CFA edges (not as a formula) so that the encoder can build ite-merged transition
formulas, and so that a counterexample can name the CFA edges it took. Engines built on the CPG: k-induction
(through `smt.cpg_system.CPGSystem`), TPA and the multi-loop engine (one node per loop).

    cpg = build_cpg(program)
    for e in cpg.out_edges(cpg.init): ... e.dst, e.edges, e.asserts
    frag = cpg.fragment(node)          # the DAG behind all out-edges of `node`
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from looprover.program.cfa import Assert, Edge, Program
from looprover.program.loops import LoopForest, analyze_loops

ERROR = -1  # node id of the error node (locations are >= 0)


@dataclass(frozen=True)
class Fragment:
    """The loop-free CFA region from `head` up to the next cutpoints (or exit).

    `locs` is in topological order with `head` first. Edges into a cutpoint, exit, or back to `head` end the
    fragment; those locations are its `targets`. `edges` are ordered by the topological order of their source.
    """
    head: int
    locs: tuple[int, ...]
    edges: tuple[Edge, ...]
    targets: tuple[int, ...]

    @cached_property
    def _out(self) -> dict[int, list[Edge]]:
        out: dict[int, list[Edge]] = {}
        for e in self.edges:
            out.setdefault(e.src, []).append(e)
        return out

    def out_edges(self, loc: int) -> list[Edge]:
        """Out-edges of `loc` inside the fragment (none for targets)."""
        return self._out.get(loc, []) if loc in self.inner else []

    @cached_property
    def inner(self) -> frozenset[int]:
        """Locations whose out-edges belong to the fragment (head included, targets excluded)."""
        return frozenset(l for l in self.locs if l == self.head or l not in self.targets)

    @cached_property
    def assertion_edges(self) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if any(isinstance(s, Assert) for s in e.stmts))


@dataclass(frozen=True)
class CPGEdge:
    """All paths from `src` to `dst` inside `src`'s fragment; `edges` is their union (a DAG, topological).

    For `dst == ERROR`, `asserts` lists the (edge, assert) pairs whose violation the edge stands for.
    """
    src: int
    dst: int
    edges: tuple[Edge, ...]
    asserts: tuple[tuple[Edge, Assert], ...] = ()


@dataclass(frozen=True)
class CutpointGraph:
    program: Program
    loops: LoopForest
    init: int
    exit: int
    cutpoints: tuple[int, ...]
    fragments: dict[int, Fragment]       # one per source node: init and each cutpoint
    edges: tuple[CPGEdge, ...]
    error: int = ERROR

    @cached_property
    def nodes(self) -> tuple[int, ...]:
        """init, cutpoints, exit, ERROR (each once, in this order)."""
        out: list[int] = []
        for n in (self.init, *self.cutpoints, self.exit, ERROR):
            if n not in out:
                out.append(n)
        return tuple(out)

    @property
    def sources(self) -> tuple[int, ...]:
        """Nodes with a fragment (init and cutpoints); exit and ERROR are terminal."""
        return tuple(self.fragments)

    def fragment(self, node: int) -> Fragment:
        return self.fragments[node]

    def out_edges(self, node: int) -> list[CPGEdge]:
        return [e for e in self.edges if e.src == node]

    def in_edges(self, node: int) -> list[CPGEdge]:
        return [e for e in self.edges if e.dst == node]

    def is_terminal(self, node: int) -> bool:
        return node not in self.fragments


def _fragment(program: Program, head: int, stops: frozenset[int]) -> Fragment:
    """Explore from `head`, not expanding `stops` (cutpoints and exit) except `head` itself."""
    seen = {head}
    order_in: dict[int, int] = {}
    edges: list[Edge] = []
    todo = [head]
    while todo:
        l = todo.pop()
        if l != head and l in stops:
            continue
        if l == program.exit:
            continue
        for e in program.out_edges(l):
            edges.append(e)
            if e.dst == head:
                continue
            order_in[e.dst] = order_in.get(e.dst, 0) + 1
            if e.dst not in seen:
                seen.add(e.dst)
                todo.append(e.dst)
    targets = {e.dst for e in edges if e.dst == head or e.dst in stops}
    # Kahn's algorithm; edges back into `head` end the fragment, so they do not count as in-edges.
    out: dict[int, list[Edge]] = {}
    for e in edges:
        out.setdefault(e.src, []).append(e)
    indeg = {l: 0 for l in seen}
    for e in edges:
        if e.dst != head:
            indeg[e.dst] += 1
    ready = [head]
    locs: list[int] = []
    while ready:
        l = ready.pop()
        locs.append(l)
        if l != head and l in targets:
            continue
        for e in out.get(l, []):
            if e.dst == head:
                continue
            indeg[e.dst] -= 1
            if indeg[e.dst] == 0:
                ready.append(e.dst)
    if len(locs) != len(seen):
        raise AssertionError(f"fragment of {head} has a cycle: cutpoints do not cut every loop")
    pos = {l: i for i, l in enumerate(locs)}
    edges.sort(key=lambda e: pos[e.src])
    return Fragment(head, tuple(locs), tuple(edges), tuple(sorted(targets)))


def _paths_to(frag: Fragment, goal_edges: list[Edge]) -> tuple[Edge, ...]:
    """Fragment edges lying on some path from the head through one of `goal_edges` (which are included)."""
    useful: set[int] = {e.src for e in goal_edges}
    keep: list[Edge] = []
    goal_ids = {id(e) for e in goal_edges}
    for l in reversed(frag.locs):
        if l not in frag.inner:
            continue
        for e in frag.out_edges(l):
            if id(e) in goal_ids or (e.dst in useful and e.dst in frag.inner and e.dst != frag.head):
                useful.add(l)
    for e in frag.edges:
        if id(e) in goal_ids or (e.src in useful and e.dst in useful and e.dst in frag.inner
                                 and e.dst != frag.head):
            keep.append(e)
    return tuple(keep)


def build_cpg(program: Program, loops: LoopForest | None = None, splits: frozenset[int] = frozenset()
              ) -> CutpointGraph:
    """The cutpoint graph whose cutpoints are the loop heads and `splits` (`split_points`): any superset of the
    loop heads cuts every cycle, so any such set gives a cutpoint graph."""
    loops = loops if loops is not None else analyze_loops(program)
    cutpoints = tuple(sorted((loops.cutpoints | splits) - {program.exit}))
    stops = frozenset(cutpoints) | {program.exit}
    fragments: dict[int, Fragment] = {}
    for n in (program.init, *cutpoints):
        if n == program.exit or n in fragments:
            continue
        fragments[n] = _fragment(program, n, stops)
    edges: list[CPGEdge] = []
    for n, frag in fragments.items():
        for t in frag.targets:
            into = [e for e in frag.edges if e.dst == t]
            edges.append(CPGEdge(n, t, _paths_to(frag, into)))
        asserts = [(e, s) for e in frag.assertion_edges for s in e.stmts if isinstance(s, Assert)]
        if asserts:
            edges.append(CPGEdge(n, ERROR, _paths_to(frag, list(frag.assertion_edges)), tuple(asserts)))
    return CutpointGraph(program, loops, program.init, program.exit, cutpoints, fragments, tuple(edges))


def split_points(program: Program, live: Callable[[int], int], loops: LoopForest | None = None) -> frozenset[int]:
    """Locations worth making cutpoints besides the loop heads, so that code several fragments share is encoded
    once: a location is shared when the fragments of several sources reach it (after a conditional loop,
    every later location is in the fragment of the loop head and in that of the node before it), and it is the
    entry of a shared region when one of its predecessors lies in another set of fragments. Such an entry is
    made a cutpoint when what it saves pays for what it costs: its region's statements, encoded once more per
    further fragment, against the invariant it then needs, one atom per live variable (`live(loc)`).

    Measured on x509-parser inlined (27,736 edges, 530 loop heads and init): the fragments held 462,860
    locations, 17 times the program's, and an interval proof's check did not end in 25 minutes. Its 1,292
    region entries, all made cutpoints, take that to 13,340 (this test keeps 1,273 of them), and the check
    to 276 s."""
    loops = loops if loops is not None else analyze_loops(program)
    stops = frozenset(loops.cutpoints) | {program.init, program.exit}
    shared: dict[int, set[int]] = {}        # location -> the sources whose fragments reach it
    for s in stops - {program.exit}:
        seen, todo = {s}, [s]
        while todo:
            for e in program.out_edges(todo.pop()):
                d = e.dst
                if d not in seen:
                    seen.add(d)
                    shared.setdefault(d, set()).add(s)
                    if d not in stops:
                        todo.append(d)
    out = set()
    for loc, sources in shared.items():
        if loc in stops or len(sources) < 2 or \
                all(e.src not in stops and shared.get(e.src) == sources for e in program.in_edges(loc)):
            continue
        # the region's statements, counted only as far as deciding needs
        need = live(loc) // (len(sources) - 1) + 1
        seen, todo, stmts = {loc}, [loc], 0
        while todo and stmts < need:
            for e in program.out_edges(todo.pop()):
                stmts += len(e.stmts)
                if e.dst not in seen and e.dst not in stops:
                    seen.add(e.dst)
                    todo.append(e.dst)
        if stmts >= need:
            out.add(loc)
    return frozenset(out)
