"""Bounded model checking by loop unwinding, with unwinding assertions (CBMC style).

Every natural loop is unrolled k times into a DAG; a nested loop k times per iteration of its parent. A node
of the unrolling is (location, iteration counts of the loops containing it, outermost first). Arriving at a
header for the (k+1)-th time, the loop may still be left through an exit edge, but taking an edge that stays
in the loop leads to the LIMIT sink instead (the *unwinding assertion*). Per bound:

  (a) is a violated assertion reachable in the DAG?  -> FALSE, after the trace replays on the program
  (b) else, is LIMIT reachable?  no -> TRUE: every execution stays inside the unrolling, so (a) covered all
      of them; yes -> double k.

The unrolling is built lazily in a topological order and only along edges whose condition does not fold to
false (see `Unwinding`), so a loop with a constant bound costs its real iterations, not k.

Solver use, measured on this encoding (2 shared cores, whole bound schedule up to the verdict; programs like
tests/engines: a 1000-iteration counter, a bug at depth 300, a nondeterministic accumulator over 200
iterations, a triangular nest of 30):
  * fresh solver per bound vs one solver with push/pop per bound: 2.8/3.3 s, 2.6/2.9 s, 23/31 s, 1.4/1.3 s,
    bit-vector bug 0.5/0.8 s. The unrolling for 2k is not an extension of the one for k (joins after a loop
    gain in-edges), so push/pop only keeps stale lemmas. Fresh solver per bound; inside one bound the two
    queries share it through assumption literals.
  * `If` terms vs fresh constants at joins (`join_consts`): 2.8/3.7 s, 2.6/9.1 s, 23/33 s: terms.
  * named node guards (`name_guards`): required, see `smt.dag.encode_dag` (1024-fold unrolling: 1 s vs
    timeout, and no timeout overrun);
  * the logic hint (`Encoder.logic`): QF_AUFLIA 0.01 s vs 0.3-0.6 s (default) on the nest, 2.4-4.9 s vs
    3.1-15 s on the accumulator; QF_BV honours timeouts where the default overran by 5 s.

Irreducible control flow has no natural loops to unwind: UNKNOWN with that reason.
"""
from __future__ import annotations

from typing import Hashable

import z3

from looprover.deadline import Deadline
from looprover.engines.base import Engine, Run, Task
from looprover.program.cfa import Assert, Edge, Program
from looprover.program.loops import LoopForest, analyze_loops
from looprover.smt.dag import DagEncoding, encode_lazy
from looprover.smt.encode import Encoder
from looprover.smt.solver import Solver
from looprover.verdict import Verdict
from looprover.witness.confirm import confirm_trace
from looprover.witness.replay import TraceBuilder

LIMIT = ("limit",)


class Unwinding:
    """The k-unrolling of a program, given implicitly: nodes are (loc, counts) plus the LIMIT sink.

    `counts` are the completed iterations of the loops containing `loc` (outermost first). `key` is a
    topological order of the unrolling: (rpo(h1), c1, rpo(h2), c2, ..., rpo(loc)) for the loops h1..hm
    containing loc, with rpo the reverse postorder of the CFA without back edges. A back edge increases
    some c_i, entering a loop or a forward edge increases an rpo at the first position that changes, and
    leaving loops goes to a location later in the rpo than the left loop's header. So every edge increases
    the key, and a priority queue on it visits each node after all its predecessors (`smt.dag.encode_lazy`).

    Edges that cannot lead to an assertion or to a loop head (so not to LIMIT either) are left out.
    """

    def __init__(self, program: Program, forest: LoopForest, k: int):
        self.program, self.forest, self.k = program, forest, k
        self.rpo = self._rpo()
        self.has_assert = {id(e): any(isinstance(s, Assert) for s in e.stmts) for e in program.edges}
        self.useful = self._useful()

    @property
    def entry(self) -> Hashable:
        return (self.program.init, (0,) * len(self.forest.chain(self.program.init)))

    def _rpo(self) -> dict[int, int]:
        prog, forest = self.program, self.forest
        post: list[int] = []
        seen = {prog.init}
        stack = [(prog.init, iter(prog.out_edges(prog.init)))]
        while stack:
            loc, it = stack[-1]
            e = next(it, None)
            if e is None:
                stack.pop()
                post.append(loc)
                continue
            if forest.is_back_edge(e) or e.dst in seen:
                continue
            seen.add(e.dst)
            stack.append((e.dst, iter([] if e.dst == prog.exit else prog.out_edges(e.dst))))
        n = len(post)
        return {loc: n - i for i, loc in enumerate(post)}

    def _useful(self) -> set[int]:
        """CFA locations from which an assertion edge or a loop header is reachable."""
        prog = self.program
        useful: set[int] = set(self.forest.loops)
        todo = list(useful)
        for e in prog.edges:
            if self.has_assert[id(e)] and e.src not in useful:
                useful.add(e.src)
                todo.append(e.src)
        while todo:
            l = todo.pop()
            for e in prog.in_edges(l):
                if e.src not in useful and e.src != prog.exit:
                    useful.add(e.src)
                    todo.append(e.src)
        return useful

    def key(self, node: Hashable) -> tuple:
        if node == LIMIT:
            return (float("inf"),)
        loc, ctx = node
        out: list[int] = []
        for h, c in zip(self.forest.chain(loc), ctx):
            out += (self.rpo[h], c)
        out.append(self.rpo[loc])
        return tuple(out)

    def successors(self, node: Hashable) -> list[tuple[Edge, Hashable]]:
        if node == LIMIT:
            return []
        loc, ctx = node
        prog, forest, k = self.program, self.forest, self.k
        if loc == prog.exit:
            return []
        loops = forest.loops
        lp = loops.get(loc)
        src_chain = forest.chain(loc)
        outs: list[tuple[Edge, Hashable]] = []
        for e in prog.out_edges(loc):
            if lp is not None and ctx[-1] >= k and e.dst in lp.body:
                outs.append((e, LIMIT))  # the unwinding assertion: a (k+1)-th iteration would start
                continue
            if e.dst not in self.useful and not self.has_assert[id(e)]:
                continue
            dst_chain = forest.chain(e.dst)
            new: list[int] = []
            common = True
            for i, h in enumerate(dst_chain):
                if common and i < len(src_chain) and src_chain[i] == h:
                    c = ctx[i]
                    if h == e.dst and e.src in loops[h].body:  # back edge: one more iteration
                        c += 1
                    new.append(c)
                else:
                    common = False
                    new.append(0)  # newly entered loop (natural loops are entered at the header)
            outs.append((e, (e.dst, tuple(new))))
        return outs


def bound_schedule(max_bound: int | None):
    k = 1
    while max_bound is None or k < max_bound:
        yield k
        k *= 2
    if max_bound is not None and max_bound >= 1:
        yield max_bound


class BoundResult:
    def __init__(self, status: str, enc: Encoder | None = None, dag: DagEncoding | None = None,
                 env0: dict | None = None, model: z3.ModelRef | None = None, nodes: int = 0, why: str = ""):
        self.status = status        # violation | safe | limit | unknown
        self.enc, self.dag, self.env0, self.model, self.nodes = enc, dag, env0, model, nodes
        self.why = why


def check_bound(program: Program, forest: LoopForest, k: int, bitvector: bool, deadline: Deadline | None,
                solver: Solver | None = None) -> BoundResult:
    """Queries (a) and (b) for bound k. With `solver` given, runs inside push/pop on it (for measurement)."""
    unw = Unwinding(program, forest, k)
    enc = Encoder(program, bitvector, deadline=deadline)
    env0, side = enc.initial_env(program.all_vars)
    dag = encode_lazy(enc, unw.entry, env0, unw.key, unw.successors, name_guards=True)
    nodes = len(dag.spec.order)
    own = solver is None
    s = enc.solver(deadline) if own else solver
    if not own:
        s.push()
    try:
        s.add(*side, *dag.side)
        a_err, a_lim = z3.Bool("!a_err"), z3.Bool("!a_lim")
        s.add(z3.Implies(a_err, dag.error()))
        s.add(z3.Implies(a_lim, dag.guard(LIMIT)))
        r = s.check(a_err)
        if r == z3.sat:
            return BoundResult("violation", enc, dag, env0, s.model(), nodes)
        if r != z3.unsat:
            return BoundResult("unknown", nodes=nodes, why=s.why_unknown())
        r = s.check(a_lim)
        if r == z3.unsat:
            return BoundResult("safe", nodes=nodes)
        if r == z3.sat:
            return BoundResult("limit", nodes=nodes)
        return BoundResult("unknown", nodes=nodes, why=s.why_unknown())
    finally:
        if not own:
            s.pop()


def counterexample(program: Program, res: BoundResult):
    model = res.model
    ev = lambda t: model.eval(t, model_completion=True)  # noqa: E731
    path, viol, _ = res.dag.path(ev)
    tb = TraceBuilder(program, res.enc)
    tb.add_path(path, viol, ev)
    return tb.build(res.env0, ev)


class BMC(Engine):
    name = "bmc"
    summary = "bounded model checking: loops unwound with doubling bounds, CBMC-style unwinding assertions"
    cost = 0

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        forest = analyze_loops(program)
        if forest.irreducible:
            e = forest.irreducible_edges[0]
            return self.unknown(f"irreducible control flow (edge L{e.src} -> L{e.dst}"
                                f"{' at ' + str(e.src_loc) if e.src_loc else ''}): no natural loops to unwind")
        reachable_asserts = [s for l in forest.reachable if l != program.exit
                             for e in program.out_edges(l) for s in e.stmts if isinstance(s, Assert)]
        if not reachable_asserts:
            return self.true("no reachable assertion")
        k = 0
        for k in bound_schedule(run.max_bound):
            run.deadline.check()
            run.stage = f"bound {k}"
            run.report(f"bmc: bound {k}")
            res = check_bound(program, forest, k, run.bitvector, run.deadline)
            run.stats.update(bound=k, nodes=res.nodes)
            if res.status == "violation":
                c = confirm_trace(program, counterexample(program, res), run.bitvector)
                if not c.ok:
                    return self.unknown(c.why, c.candidate)
                return self.false(f"assertion violated (bound {k}, {len(c.cex.steps)} steps)", c.cex)
            if res.status == "safe":
                return self.true(f"all loops fully unwound at bound {k}")
            if res.status == "unknown":
                return self.unknown(f"{res.why} at bound {k}")
        return self.unknown(f"no violation up to bound {k} (max bound); loops not exhausted")
