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

With the integer encoding the unrolling is incremental (`Unrolling`): one solver for the whole run, and going
from bound k to 2k asserts only the new nodes and edges. The 2k-unrolling extends the k-unrolling except that
the edges into LIMIT now start iterations, and that nodes behind a loop (its exit, the next loop's header)
gain in-edges: those nodes are encoded *open* (`Frontier` says which; `smt.dag.LazyDag` how: their `If`
terms end in fresh symbols that the next bound defines, assumed absent meanwhile). With bit-vectors each
bound gets a fresh unrolling and solver (the same code, nothing open). Measured, single runs on 2 shared
cores (C versions of the programs below; engine time of `looprover verify F --engine bmc [--bitvector]`),
per-bound / incremental:
  * integers: 1000-iteration counter 0.45/0.41 s; bug at depth 300 behind a constant loop 0.56/0.44 s,
    behind a nondeterministic bound 0.96/0.82 s; accumulator over 200 nondeterministic iterations 2.5/1.1 s
    (0.63/0.47 s with an assumed range); triangular nest of 30 0.34/0.49 s; nested nondeterministic loops,
    bug / safe: 0.87/0.83 s, 2.6/2.3 s; the two loops with `% 3` of issue 14: both reach bound 512 in 10 s
    (in one process, per bound at 256: 2.3/6.4 s, the incremental one slower there). Values at open nodes
    are kept when the loops behind them do not write them (an outer counter stays a constant past an inner
    loop): without that, the nested safe case's last query took 10.5 s instead of 4.2 s.
  * bit-vectors, incremental in one process: the two loops 16.5 s at bound 64 and 34 s at 128 (per bound:
    4.4 and 9.4 s), nested safe 4.2 s vs 2.5 s: the open ends hide from bit-blasting's preprocessing that
    e.g. every leaf of `x`'s `If` chain is below 3. Hence a fresh unrolling per bound there.
  * steps of +1 instead of doubling (integers, incremental, loaded machine): counter 1.3 vs 0.8 s,
    nondeterministic depth 300 2.7 vs 1.9 s, two loops bound 89 instead of 256 in 10 s (x1.25: 151);
    constant depth 300 1.4 vs 2.1 s. Doubling kept.
  * `If` terms vs fresh constants with one implication per in-edge at open nodes: BMC of an accelerated array
    program (quantified guards) timed out at bound 1 instead of answering in 0.05 s; terms.
Measured on the per-bound version (same programs): push/pop on one solver re-encoding each bound was slower
(2.8/3.3 s, 2.6/2.9 s, 23/31 s); `If` terms beat fresh constants at every join (2.6/9.1 s); named node
guards (`name_guards`) are required, see `smt.dag.encode_dag` (1024-fold unrolling: 1 s vs timeout, and no
timeout overrun); the logic hint (`Encoder.logic`): QF_AUFLIA 0.01 s vs 0.3-0.6 s (default) on the nest,
2.4-4.9 s vs 3.1-15 s on the accumulator; QF_BV honours timeouts where the default overran by 5 s.

Irreducible control flow has no natural loops to unwind: UNKNOWN with that reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Hashable

import z3

from looprover.deadline import Deadline
from looprover.engines.base import Engine, Run, Task
from looprover.program.cfa import Assert, Edge, Program
from looprover.program.loops import LoopForest, analyze_loops
from looprover.smt.dag import DagEncoding, LazyDag, same_value
from looprover.smt.encode import Encoder
from looprover.smt.solver import Solver
from looprover.smt.terms import mk_or
from looprover.verdict import Verdict
from looprover.evidence.confirm import confirm_trace
from looprover.evidence.proofs import KInductiveProof, Proof
from looprover.evidence.replay import TraceBuilder

LIMIT = ("limit",)


class Unwinding:
    """The k-unrolling of a program, given implicitly: nodes are (loc, counts) plus the LIMIT sink.

    `counts` are the completed iterations of the loops containing `loc` (outermost first). `key` is a
    topological order of the unrolling: (rpo(h1), c1, rpo(h2), c2, ..., rpo(loc)) for the loops h1..hm
    containing loc, with rpo the reverse postorder of the CFA without back edges. A back edge increases
    some c_i, entering a loop or a forward edge increases an rpo at the first position that changes, and
    leaving loops goes to a location later in the rpo than the left loop's header. So every edge increases
    the key, and a priority queue on it visits each node after all its predecessors (`smt.dag.LazyDag`).

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
        """Out-edges in the k-unrolling: an edge that would start a (k+1)-th iteration leads to LIMIT."""
        if node == LIMIT:
            return []
        loc, ctx = node
        if loc == self.program.exit:
            return []
        lp = self.forest.loops.get(loc)
        outs: list[tuple[Edge, Hashable]] = []
        for e in self.program.out_edges(loc):
            if lp is not None and ctx[-1] >= self.k and e.dst in lp.body:
                outs.append((e, LIMIT))  # the unwinding assertion: a (k+1)-th iteration would start
                continue
            dst = self.target(node, e)
            if dst is not None:
                outs.append((e, dst))
        return outs

    def target(self, node: Hashable, e: Edge) -> Hashable | None:
        """Where `e` leads from `node` whatever the bound (None: left out, it cannot matter)."""
        loc, ctx = node
        if e.dst not in self.useful and not self.has_assert[id(e)]:
            return None
        forest = self.forest
        src_chain, dst_chain = forest.chain(loc), forest.chain(e.dst)
        new: list[int] = []
        common = True
        for i, h in enumerate(dst_chain):
            if common and i < len(src_chain) and src_chain[i] == h:
                c = ctx[i]
                if h == e.dst and e.src in forest.loops[h].body:  # back edge: one more iteration
                    c += 1
                new.append(c)
            else:
                common = False
                new.append(0)  # newly entered loop (natural loops are entered at the header)
        return (e.dst, tuple(new))

    def sources(self, node: Hashable) -> list[tuple[Edge, Hashable | None, tuple | None]]:
        """The in-edges of `node` in the unrolling for an unlimited bound, the inverse of `target`: per CFA
        in-edge `(edge, source, None)`, or `(edge, None, (h, ctx))` when the edge leaves loops, so that it
        comes from any iteration of the outermost loop it leaves, headed `h`, in the context `ctx`."""
        loc, ctx = node
        prog, forest = self.program, self.forest
        dst_chain = forest.chain(loc)
        lp = forest.loops.get(loc)
        out: list[tuple[Edge, Hashable | None, tuple | None]] = []
        for e in prog.in_edges(loc):
            if e.src == prog.exit or (loc not in self.useful and not self.has_assert[id(e)]):
                continue
            src_chain = forest.chain(e.src)
            p = 0
            while p < len(dst_chain) and p < len(src_chain) and src_chain[p] == dst_chain[p]:
                p += 1
            if any(c != 0 for c in ctx[p:]):
                continue                  # entering a loop starts at iteration 0
            sctx = list(ctx[:p])
            if lp is not None and e.src in lp.body:
                if sctx[-1] == 0:
                    continue              # a back edge comes from the previous iteration
                sctx[-1] -= 1
            if len(src_chain) > p:
                out.append((e, None, (src_chain[p], tuple(sctx))))
            else:
                out.append((e, (e.src, tuple(sctx)), None))
        return out


def bound_schedule(max_bound: int | None):
    k = 1
    while max_bound is None or k < max_bound:
        yield k
        k *= 2
    if max_bound is not None and max_bound >= 1:
        yield max_bound


class Frontier:
    """Which nodes of the unrolling may still gain in-edges at a larger bound: `LazyDag` encodes those open.

    Every node that a larger bound adds lies behind an edge that leads to LIMIT now (counters grow by one per
    back edge), so an existing node gains in-edges only from behind those. An in-edge from one determined
    source is final once that source is encoded (its out-edges are) or can never be (`_dead`). An edge that
    leaves loops comes from every iteration of the outermost loop it leaves, so it is final once that loop
    (in its context) cannot grow: none of its nodes, nested loops included, has a non-false edge to LIMIT now
    (`live`), and its first header is encoded or dead. Unencoded nodes, and iterations that constant folding
    pruned, therefore do not make a node open: a loop with a constant bound exhausts and closes its exit.
    Nodes are evaluated in key order, so everything these checks look at is already encoded.
    """

    DEPTH = 64     # deeper searches for a dead predecessor answer "may grow": open costs time, not soundness

    def __init__(self, unw: Unwinding):
        self.unw = unw
        self.writes = {h: {v.name for v in lp.writes} for h, lp in unw.forest.loops.items()}
        self.lazy: LazyDag | None = None
        self.dead: set[Hashable] = set()        # never encoded at any bound
        self.closed: set[tuple] = set()         # (loop header, context) that no bound extends
        self.live: set[tuple] = set()           # (loop header, context) with a non-false edge to LIMIT now
        self._maybe: set[Hashable] = set()      # not known dead in this step
        self._sinks: list | None = None
        self._seen = 0

    def step(self) -> None:
        self.live, self._maybe, self._sinks, self._seen = set(), set(), None, 0

    def _update_live(self) -> None:
        edges = self.lazy.sink_edges
        if edges is not self._sinks:
            self._sinks, self._seen = edges, 0
        for ee in edges[self._seen:]:
            loc, ctx = ee.node
            for i, h in enumerate(self.unw.forest.chain(loc)):
                self.live.add((h, ctx[:i]))
        self._seen = len(edges)

    def is_open(self, node: Hashable) -> dict[str, object] | None:
        """None if no bound adds an in-edge to `node`; else the values (by variable) that every in-edge a
        larger bound adds surely carries: those the loops it comes from do not write, as on entering them.
        Keeping them (instead of fresh symbols) keeps e.g. an outer loop's counter constant past an inner loop."""
        if node in self.dead:
            raise AssertionError(f"unrolling node {node} was taken for unreachable at every bound")
        self._update_live()
        loops = []
        for _, src, left in self.unw.sources(node):
            if src is not None:
                if not self._final(src, 0):
                    return {}
            elif not self._closed(left, 0):
                loops.append(left)
        if not loops:
            return None
        fixed: dict[str, object] | None = None
        for h, ctx in loops:
            env = self.lazy.dag.envs.get((h, ctx + (0,)))
            if env is None:
                return {}
            w = self.writes[h]
            f = {n: t for n, t in env.items() if n not in w}
            fixed = f if fixed is None else {n: t for n, t in fixed.items() if n in f and same_value(f[n], t)}
        return fixed

    def _final(self, node: Hashable, depth: int) -> bool:
        return node in self.lazy.visited or self._dead(node, depth)

    def _dead(self, node: Hashable, depth: int) -> bool:
        if node in self.dead:
            return True
        if node in self._maybe or depth > self.DEPTH or node == self.unw.entry:
            return False
        r = all(self._final(src, depth + 1) if src is not None else self._closed(left, depth + 1)
                for _, src, left in self.unw.sources(node))
        (self.dead if r else self._maybe).add(node)
        return r

    def _closed(self, loop: tuple, depth: int) -> bool:
        if loop in self.closed:
            return True
        if loop in self.live:
            return False
        h, ctx = loop
        r = self._final((h, ctx + (0,)), depth)
        if r:
            self.closed.add(loop)
        return r


class BoundResult:
    def __init__(self, status: str, nodes: int = 0, model: z3.ModelRef | None = None, why: str = ""):
        self.status = status        # violation | safe | limit | unknown
        self.nodes, self.model, self.why = nodes, model, why


class Unrolling:
    """The unrolling for growing bounds on one solver; `check(k)` asserts only what bound k adds.

    Open nodes' completeness literals (`LazyDag.assumptions`) are assumptions of both queries. Query (a)
    assumes `err_k` with `err_k -> (violations new at k or err_j)`, j the previous bound (old violations stay
    candidates: an open node's new in-edges can make them reachable); query (b) assumes `lim_k ->` some edge
    into LIMIT of bound k, and the next bound points those edges at the iterations they start
    (`LazyDag.redirect`). `stable` variables (written by no edge) are never opened. With `incremental=False`
    no node is open and the object serves one bound (the bit-vector encoding, see the module docstring).
    """

    def __init__(self, program: Program, forest: LoopForest, bitvector: bool, deadline: Deadline | None,
                 incremental: bool = True, falsify_only: bool = False):
        self.program, self.incremental = program, incremental
        self.unw = Unwinding(program, forest, 0)
        self.enc = Encoder(program, bitvector, deadline=deadline)
        self.env0, side = self.enc.initial_env(program.all_vars)
        written = {v.name for e in program.edges for v in e.writes()}
        self.frontier = Frontier(self.unw)
        self.lazy = LazyDag(self.enc, self.unw.entry, self.env0, self.unw.key, self.unw.successors,
                            self.frontier.is_open if incremental else lambda node: None, sinks=frozenset({LIMIT}),
                            stable=frozenset(self.env0) - written, one_way_binders=falsify_only)
        self.frontier.lazy = self.lazy
        self.deadline = deadline
        self.asserted: list[z3.BoolRef] = list(side)
        self.solver: Solver | None = None
        self.logic: str | None = None
        self.err: z3.BoolRef | None = None
        self.limit_edges: list = []

    @property
    def dag(self) -> DagEncoding:
        return self.lazy.dag

    def _add(self, fs: list[z3.BoolRef]) -> None:
        self.asserted += fs
        logic = self.enc.logic()
        if self.solver is None or logic != self.logic:
            # the first query, or the new part needs a wider logic (arrays, a product): a new solver gets
            # everything, which happens at most a few times per run
            self.solver, self.logic = self.enc.solver(self.deadline), logic
            self.solver.add(*self.asserted)
        else:
            self.solver.add(*fs)

    def _fresh(self) -> z3.Solver:
        """A new z3 solver holding everything asserted so far (for `Solver.check_restarting`)."""
        s = self.enc.solver().z3
        s.add(*self.asserted)
        return s

    def check(self, k: int) -> BoundResult:
        """Queries (a) and (b) for bound k (larger than the previous one)."""
        unw, lazy = self.unw, self.lazy
        assert self.incremental or not unw.k, "a non-incremental unrolling serves one bound"
        unw.k = k
        for ee in self.limit_edges:
            lazy.redirect(ee, unw.target(ee.node, ee.edge))
        self.frontier.step()
        new = lazy.grow()
        self.limit_edges = lazy.sink_edges
        viols = [v.cond for v in lazy.new_violations]
        if viols:
            err = z3.Bool(self.enc.fresh_name("err"))
            new.append(z3.Implies(err, mk_or(*viols, *([self.err] if self.err is not None else []))))
            self.err = err
        lim = None
        if self.limit_edges:
            lim = z3.Bool(self.enc.fresh_name("lim"))
            new.append(z3.Implies(lim, mk_or(*(ee.taken for ee in self.limit_edges))))
        self._add(new)
        s, assume, nodes = self.solver, lazy.assumptions(), lazy.nodes
        # accelerated programs' quantified guards make z3's run time heavy-tailed: restarts with new seeds
        check = partial(s.check_restarting, fresh=self._fresh) if self.enc.quantified else s.check
        if self.err is not None:
            r = check(*assume, self.err)
            if r == z3.sat:
                return BoundResult("violation", nodes, s.model())
            if r != z3.unsat:
                return BoundResult("unknown", nodes, why=s.why_unknown())
        if lim is None:
            return BoundResult("safe", nodes)
        r = check(*assume, lim)
        if r == z3.unsat:
            return BoundResult("safe", nodes)
        if r == z3.sat:
            return BoundResult("limit", nodes)
        return BoundResult("unknown", nodes, why=s.why_unknown())

    def counterexample(self, model: z3.ModelRef):
        ev = lambda t: model.eval(t, model_completion=True)  # noqa: E731
        path, viol, _ = self.dag.path(ev)
        tb = TraceBuilder(self.program, self.enc)
        tb.add_path(path, viol, ev)
        return tb.build(self.env0, ev)


@dataclass(frozen=True)
class UnwindingProof(Proof):
    """BMC's TRUE: at `bound` every loop is exhausted (LIMIT unreachable) and no violation is reachable in the
    unrolling. Checked by building that unrolling afresh from the program, in one piece (no open nodes, no
    redirected edges: the incremental machinery the run used is not trusted) and deciding both queries with a
    fresh solver. A BMC of the pc-encoded system to the depth the unrolling bounds was tried first: it needed
    more than the run's time on nested and string loops (svcomp eureka_01-2, theatreSquare; Verisec
    parse_expression), where the unrolling's constant folding decides in a second."""
    bound: int
    kind: ClassVar[str] = "unwinding"

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        forest = analyze_loops(program)
        if forest.irreducible:
            return "irreducible control flow: no unwinding"
        res = Unrolling(program, forest, bitvector, deadline, incremental=False).check(self.bound)
        if res.status == "safe":
            return None
        if res.status == "violation":
            return f"a violation is reachable within the unwinding at bound {self.bound}"
        if res.status == "limit":
            return f"the loops are not exhausted at bound {self.bound}"
        return f"the unwinding at bound {self.bound} is undecided ({res.why})"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "bound": self.bound}


class BMC(Engine):
    name = "bmc"
    summary = "bounded model checking: loops unwound with doubling bounds (incremental for integers), " \
              "CBMC-style unwinding assertions"
    # only violations are wanted (an under-approximation's BMC, `engines/accel.py`): quantified guards are
    # encoded one way (`smt.dag.DagEncoding.one_way_binders`), and an exhausted unrolling is no TRUE
    falsify_only = False

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        forest = analyze_loops(program)
        if forest.irreducible:
            e = forest.irreducible_edges[0]
            return self.unknown(f"irreducible control flow (edge L{e.src} -> L{e.dst}"
                                f"{' at ' + str(e.src_loc) if e.src_loc else ''}): no natural loops to unwind")
        reachable_asserts = [s for l in forest.reachable if l != program.exit
                             for e in program.out_edges(l) for s in e.stmts if isinstance(s, Assert)]
        if not reachable_asserts:
            return self.true("no reachable assertion", KInductiveProof(1))   # no step reaches the error
        k = 0
        incremental = not run.bitvector
        unrolling = None
        for k in bound_schedule(run.max_bound):
            run.deadline.check()
            run.stage = f"bound {k}"
            run.report(f"bmc: bound {k}")
            if unrolling is None or not incremental:
                unrolling = Unrolling(program, forest, run.bitvector, run.deadline, incremental,
                                      falsify_only=self.falsify_only)
            res = unrolling.check(k)
            run.stats.update(bound=k, nodes=res.nodes, open=len(unrolling.lazy.opened))
            if res.status == "violation":
                c = confirm_trace(program, unrolling.counterexample(res.model), run.bitvector)
                if not c.ok:
                    return self.unknown(c.why, c.candidate)
                return self.false(f"assertion violated (bound {k}, {len(c.cex.steps)} steps)", c.cex)
            if res.status == "safe":
                if self.falsify_only:
                    return self.unknown(f"no violation, all loops fully unwound at bound {k} (falsification only: "
                                        f"this proves nothing)")
                return self.true(f"all loops fully unwound at bound {k}", UnwindingProof(k))
            if res.status == "unknown":
                return self.unknown(f"{res.why} at bound {k}")
        return self.unknown(f"no violation up to bound {k} (max bound); loops not exhausted")
