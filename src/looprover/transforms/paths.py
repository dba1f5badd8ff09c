"""Which paths of a loop body to accelerate: those that can run twice in a row (CBMC's `sat_path_enumerator`).

The body of loop L (header H) is copied twice into a DAG: copy 0 starts at H, L's back edges lead from copy 0
to copy 1's H and from copy 1 to an end node. Edges that leave L are dropped, and so are back edges of inner
loops (their iterations are not part of one iteration of L), except an inner loop's accelerated branches
(`transforms/accelerate.py`): one of them may be taken per visit of the inner header, after which only the
inner loop's exits are open (the inner loop ran its accelerated iterations and is left). Assertions hold on the
chosen path (a failing one ends the execution; the accelerated branch only covers iterations that pass them).

Every edge's `taken` term of the SSA encoding (`smt.dag`) is its branch distinguisher. Asking for the end node
with copy 1 taking exactly the edges copy 0 takes gives a path π with π·π feasible: a path that only one
iteration can take (the last one, say) gains nothing from acceleration. Each path found is blocked
(`¬ ∧ taken_0(e)` for its edges) and the query repeated for as long as the caller asks for paths: several
paths per loop are the phases of a phase-changing loop.
"""
from __future__ import annotations

from typing import Hashable, Iterator, Mapping

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Edge, Program
from looprover.program.loops import Loop, LoopForest
from looprover.smt.dag import DagSpec, encode_dag
from looprover.smt.encode import Encoder
from looprover.smt.solver import check_unpaused, plain_solver
from looprover.smt.terms import FALSE

END = ("end",)

Node = Hashable     # (copy, location, after an accelerated inner iteration?) or END


def _doubled_body(program: Program, forest: LoopForest, loop: Loop, accelerated: Mapping[Edge, object]
                  ) -> tuple[list[Node], dict[Node, list[tuple[Edge, Node]]]]:
    h = loop.header
    succ: dict[Node, list[tuple[Edge, Node]]] = {}
    entry = (0, h, False)
    todo, seen = [entry], {entry}
    while todo:
        node = todo.pop()
        c, loc, after = node
        outs: list[tuple[Edge, Node]] = []
        inner = forest.loops.get(loc) if loc != h else None
        for e in program.out_edges(loc):
            if e.dst not in loop.body:
                continue                                        # leaves L
            if e in accelerated:
                if loc != h and not after:
                    outs.append((e, (c, loc, True)))            # an inner loop's accelerated iterations
                continue
            if after and inner is not None and e.dst in inner.body:
                continue                                        # after them, only the inner loop's exits
            if e.dst == h:
                outs.append((e, (1, h, False) if c == 0 else END))
            elif not forest.is_back_edge(e):
                outs.append((e, (c, e.dst, False)))
        succ[node] = outs
        for _, d in outs:
            if d not in seen and d != END:
                seen.add(d)
                todo.append(d)
    # topological order (the graph is acyclic: every cycle of a reducible CFA contains a back edge)
    indeg: dict[Node, int] = {n: 0 for n in seen}
    indeg[END] = 0
    for n, outs in succ.items():
        for _, d in outs:
            indeg[d] += 1
    order, ready = [], [entry]
    while ready:
        n = ready.pop()
        order.append(n)
        for _, d in succ.get(n, ()):
            indeg[d] -= 1
            if indeg[d] == 0:
                ready.append(d)
    return order, succ


def loop_paths(program: Program, forest: LoopForest, loop: Loop, accelerated: Mapping[Edge, object],
               timeout_ms: int, deadline: Deadline | None = None) -> Iterator[tuple[Edge, ...]]:
    """The distinct paths through one iteration of `loop` (header to a back edge) that can be taken twice in a
    row, in the order the solver finds them, each asked for when the caller wants the next."""
    order, succ = _doubled_body(program, forest, loop, accelerated)
    if END not in order:
        return
    enc = Encoder(program, bitvector=False, deadline=deadline)
    env0, side = enc.initial_env(program.all_vars)
    dag = encode_dag(enc, DagSpec(order[0], order, succ), env0)
    taken: dict[tuple[int, Edge, bool], z3.BoolRef] = {}
    for node, ees in dag.out.items():
        for ee in ees:
            key = (node[0], ee.edge, node[2])
            prev = taken.get(key)
            taken[key] = ee.taken if prev is None else z3.Or(prev, ee.taken)
    s = plain_solver()
    s.set("timeout", timeout_ms)
    s.add(*side, *dag.side, dag.guard(END))
    for (c, e, after) in list(taken):
        if c == 0:
            s.add(taken[(0, e, after)] == taken.get((1, e, after), FALSE))
        elif (0, e, after) not in taken:
            s.add(z3.Not(taken[(1, e, after)]))
    while True:
        if deadline is not None and deadline.expired():
            break
        if check_unpaused(s, deadline=deadline) != z3.sat:
            break
        m = s.model()
        steps, _, last = dag.path(lambda t: m.eval(t, model_completion=True))
        if last != END:
            break                                              # cannot happen: the end node is reached
        first = [ee for ee in steps if ee.node[0] == 0]
        s.add(z3.Not(z3.And([taken[(0, ee.edge, ee.node[2])] for ee in first])))
        yield tuple(ee.edge for ee in first)
