"""Every transition system the engines run on, built in one place from a cutpoint-graph encoding.

Why one place: the engines see a program through four systems of its cutpoint graph -- the pc-encoded whole
program (k-induction, TPA, counterexample replay), the single loop of a one-loop program (TPA), the network
of per-loop bodies and bridges (multi-loop TPA), and the Horn clauses with one relation per cutpoint (Spacer,
`smt/horn.py`). They must agree on the state vocabulary (which constants, in which order, under which display
names) and on the formulas of each CPG edge, or a proof found on one system and a counterexample replayed on
another speak about different variables. Each of the systems used to be
assembled by its own engine, each slightly differently; here each is assembled once from the same pieces of
`CPGSystem` (`smt/cpg_system.py`), which encodes fragments and edges but does not decide what a system is.

What stays with the algorithms: the quantifier elimination that turns a one-loop program's entry and error
edges into the loop's Init/Bad (`tpa/program_ts.py`), the wrap-around split (`smt/nowrap.py`, `tpa/loop_solver`)
and the liveness analysis (`transforms/classify.py`; its result is an argument here). Renaming a system per
unrolling step, and deriving a system with another Init/Bad or Tr, are `TransitionSystem` methods (`smt/ts.py`).

This module imports nothing that imports it: `CPGSystem` builds its own `ts` with `pc_system` and is seen here
only through the `CutpointEncoding` protocol.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Hashable, Mapping, Protocol

import z3

from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, CPGEdge, CutpointGraph
from looprover.program.expr import Var
from looprover.smt.horn import Atom, Clause, HornSystem
from looprover.smt.terms import mk_and, mk_ite, mk_or
from looprover.smt.ts import TransitionSystem

Node = Hashable


class CutpointEncoding(Protocol):
    """What the construction needs from an encoded cutpoint graph (implemented by `CPGSystem`)."""
    cpg: CutpointGraph
    program: Program
    vars: list[Var]                         # the program variables, in state order
    cur: dict[str, z3.ExprRef]              # current-state constant per variable name
    nxt: dict[str, z3.ExprRef]              # next-state constant per variable name
    pc: z3.ExprRef
    pc_next: z3.ExprRef
    pc_id: dict[int, int]                   # CPG node -> pc value

    def fragment_step(self, src: int) -> tuple[z3.BoolRef, z3.ExprRef, dict[str, z3.ExprRef]]: ...

    def side_conditions(self) -> list[z3.BoolRef]: ...

    def range_constraints(self, env: Mapping[str, z3.ExprRef], only: Collection[Var] | None = None
                          ) -> list[z3.BoolRef]: ...

    def edge_formula(self, e: CPGEdge, only: Collection[Var] | None = None) -> z3.BoolRef: ...


def program_state(enc: CutpointEncoding, only: Collection[Var] | None = None
                  ) -> tuple[list[z3.ExprRef], list[z3.ExprRef], list[str]]:
    """(current constants, next constants, C display names) of the program variables (those in `only`), in
    state order, without the pc: the vocabulary of the single-loop system and of the network."""
    vs = [v for v in enc.vars if only is None or v in only]
    return ([enc.cur[v.name] for v in vs], [enc.nxt[v.name] for v in vs],
            [enc.program.variables[v.name].c_name or v.name for v in vs])


# ---------------------------------------------------------------------------------------------- whole program
def pc_system(enc: CutpointEncoding) -> TransitionSystem:
    """The pc-encoded system of the whole cutpoint graph (`CPGSystem.ts`; see its docstring).

    State: pc, then the program variables. Tr branches on terms, `x' == If(pc == c1, next_c1(x), ...)`, with
    every fragment's side conditions; Init = (pc = init) with in-range values; Bad = (pc = ERROR)."""
    sources = list(enc.cpg.sources)
    parts = {s: enc.fragment_step(s) for s in sources}
    at = {s: enc.pc == enc.pc_id[s] for s in sources}
    enabled = mk_or(*(mk_and(at[s], parts[s][0]) for s in sources))
    pc_n = parts[sources[-1]][1]
    for s in reversed(sources[:-1]):
        pc_n = mk_ite(at[s], parts[s][1], pc_n)
    conj = [enabled, enc.pc_next == pc_n]
    for v in enc.vars:
        r = parts[sources[-1]][2][v.name]
        for s in reversed(sources[:-1]):
            r = mk_ite(at[s], parts[s][2][v.name], r)
        conj.append(enc.nxt[v.name] == r)
    conj.extend(enc.side_conditions())
    init = mk_and(enc.pc == enc.pc_id[enc.cpg.init], *enc.range_constraints(enc.cur))
    bad = enc.pc == enc.pc_id[ERROR]
    cur, nxt, names = program_state(enc)
    return TransitionSystem([enc.pc] + cur, [enc.pc_next] + nxt, init, mk_and(*conj), bad, ["pc"] + names)


# ---------------------------------------------------------------------------------------------- one loop
def loop_system(enc: CutpointEncoding, head: int, init: z3.BoolRef, bad: z3.BoolRef) -> TransitionSystem:
    """The loop at cutpoint `head` over the program variables: Tr = its self-loop CPG edge (false without one),
    with the given Init/Bad over `program_state(enc)` (for a one-loop program, `tpa.program_ts` computes them
    from the entry and error edges)."""
    cur, nxt, names = program_state(enc)
    loop = next((e for e in enc.cpg.edges if e.src == head and e.dst == head), None)
    trans = enc.edge_formula(loop) if loop is not None else z3.BoolVal(False)
    return TransitionSystem(cur, nxt, init, trans, bad, names)


# ---------------------------------------------------------------------------------------------- Horn clauses
def clause_name(src: int, dst: int) -> str:
    """The name of CPG edge src -> dst's clause in `cpg_horn` (and in the proof check that asks its obligation)."""
    return f"e{src}_{'error' if dst == ERROR else dst}"


def cpg_horn(enc: CutpointEncoding, live_at: Mapping[int, Collection[Var]]) -> HornSystem:
    """The cutpoint graph as linear Horn clauses (the `spacer` engine's system).

    One relation per node with a fragment (init and the cutpoints), over the program variables in `live_at`
    there (`program_state`: the current-state constants are its parameters); the fact `in-range values at init
    → init(x)`; per CPG edge `u -> v` between such nodes the rule `u(x) ∧ Tr_e(x, x') → v(x')` and per edge
    `u -> ERROR` the query `u(x) ∧ Tr_e(x, x') → false` (`edge_formula`; each clause is tagged with its edge).
    Every variable's next value stays in the rule, dead or not: with only the head's, Spacer took more than
    30 s on a CHC-COMP file it solves in 3.6 s (s_split_43).
    Edges into exit are left out: nothing follows them. A variable not live at u is a free variable of u's
    clauses: exact when it is dead, an over-approximation in any case (as in `cpg_network`)."""
    cpg = enc.cpg
    state = {n: program_state(enc, live_at.get(n, ())) for n in cpg.sources}
    params = {n: cur for n, (cur, _, _) in state.items()}
    names = {n: f"{'init' if n == cpg.init else 'cut'}_{n}" for n in cpg.sources}
    clauses: list[Clause] = []
    if cpg.init in params:
        init_vars = live_at.get(cpg.init, frozenset())
        clauses.append(Clause("init", (), mk_and(*enc.range_constraints(enc.cur, init_vars)),
                              Atom(cpg.init, tuple(params[cpg.init]))))
    for e in cpg.edges:
        if e.dst != ERROR and e.dst not in params:
            continue
        label = enc.edge_formula(e)
        if z3.is_false(label):
            continue
        head = None if e.dst == ERROR else Atom(e.dst, tuple(state[e.dst][1]))
        clauses.append(Clause(clause_name(e.src, e.dst),
                              (Atom(e.src, tuple(params[e.src])),), label, head, e))
    return HornSystem(params, clauses, names)


# ---------------------------------------------------------------------------------------------- network
@dataclass(frozen=True)
class Bridge:
    """A loop-free edge `src -> dst`: `label` over x, x' and auxiliary constants (existential per use)."""
    src: Node
    dst: Node
    label: z3.BoolRef


@dataclass
class Network:
    """Nodes over one state vocabulary x: an entry node with its initial states, per node an optional self-loop
    relation (its loop body), and bridge edges between nodes (the search is `tpa.network.NetworkTPA`)."""
    state: list[z3.ExprRef]
    next: list[z3.ExprRef]
    entry: Node
    init: z3.BoolRef                       # over vocab(entry)
    nodes: list[Node]                      # every node, the error node included
    loops: dict[Node, z3.BoolRef]          # self-loop relation per node that has one
    bridges: list[Bridge]
    error: Node
    names: list[str] = field(default_factory=list)
    live: dict[Node, list[z3.ExprRef]] = field(default_factory=dict)   # per node; absent: every state variable

    def vocab(self, v: Node) -> list[z3.ExprRef]:
        """The state variables node v's safe and reached sets range over (those live at v).

        Only a matter of efficiency, never of soundness: a loop's system over these variables abstracts the
        others away (`loop_system`), and the bridge obligations are checked over the whole state."""
        return self.live.get(v, self.state)

    def out(self, v: Node) -> list[Bridge]:
        """Bridges out of v, error bridges first (the cheapest way to find a bug)."""
        bs = [b for b in self.bridges if b.src == v]
        return [b for b in bs if b.dst == self.error] + [b for b in bs if b.dst != self.error]

    def body_system(self, v: Node) -> TransitionSystem:
        """v's loop body over `vocab(v)` (Init = Bad = false): the other variables become auxiliaries,
        `∃ others, others'. body` -- exact when they are dead at v, an over-approximation in any case."""
        false = z3.BoolVal(False, self.loops[v].ctx)
        whole = TransitionSystem(self.state, self.next, false, self.loops[v], false, self.names)
        return whole.restricted(self.vocab(v))

    def loop_system(self, v: Node, init: z3.BoolRef, bad: z3.BoolRef) -> TransitionSystem:
        """`body_system(v)` with the query's Init and Bad (over `vocab(v)`)."""
        return self.body_system(v).with_query(init, bad)

    def prime(self, f: z3.BoolRef) -> z3.BoolRef:
        return z3.substitute(f, *zip(self.state, self.next)) if self.state else f

    def primed(self, xs: list[z3.ExprRef]) -> list[z3.ExprRef]:
        nxt = {x.get_id(): x1 for x, x1 in zip(self.state, self.next)}
        return [nxt[x.get_id()] for x in xs]

    def unprime(self, f: z3.BoolRef) -> z3.BoolRef:
        return z3.substitute(f, *zip(self.next, self.state)) if self.state else f

    def cycle(self) -> list[Node] | None:
        """A cycle of bridges through several nodes (self-loops do not count), or None for a DAG."""
        succ: dict[Node, list[Node]] = {}
        for b in self.bridges:
            if b.src != b.dst:
                succ.setdefault(b.src, []).append(b.dst)
        color: dict[Node, int] = {}
        for root in self.nodes:
            if color.get(root):
                continue
            stack = [(root, iter(succ.get(root, ())))]
            path = [root]
            color[root] = 1
            while stack:
                v, it = stack[-1]
                w = next(it, None)
                if w is None:
                    color[v] = 2
                    stack.pop()
                    path.pop()
                elif color.get(w) == 1:
                    return path[path.index(w):] + [w]
                elif not color.get(w):
                    color[w] = 1
                    stack.append((w, iter(succ.get(w, ()))))
                    path.append(w)
        return None


def cpg_network(enc: CutpointEncoding, live_at: Mapping[int, Collection[Var]]) -> Network:
    """The cutpoint graph as a network over the program variables (the pc becomes the node): per cutpoint its
    self-loop edge (when not false) as loop body, every other CPG edge a bridge.

    Each node's vocabulary is the variables in `live_at` there: CHC slot copies and havoc temporaries are dead
    at the loop heads, and a loop system over 3 instead of 12 variables is what lets TPA's interpolants
    converge. Init is ∃dead. Init: the range constraints of the variables live at the entry."""
    cpg = enc.cpg
    live = {v: program_state(enc, live_at.get(v, ()))[0] for v in cpg.nodes if v != ERROR}
    init = mk_and(*enc.range_constraints(enc.cur, live_at.get(cpg.init, frozenset())))
    loops: dict[Node, z3.BoolRef] = {}
    bridges: list[Bridge] = []
    for e in cpg.edges:
        label = enc.edge_formula(e)
        if e.src == e.dst:
            if not z3.is_false(label):
                loops[e.src] = label
        else:
            bridges.append(Bridge(e.src, e.dst, label))
    state, nxt, names = program_state(enc)
    return Network(state=state, next=nxt, entry=cpg.init, init=init, nodes=list(cpg.nodes), loops=loops,
                   bridges=bridges, error=ERROR, names=names, live=live)


def shape_network(cpg: CutpointGraph) -> Network:
    """The cutpoint graph's shape as a network without formulas (for `Network.cycle`)."""
    return Network([], [], cpg.init, z3.BoolVal(True), list(cpg.nodes), {},
                   [Bridge(e.src, e.dst, z3.BoolVal(True)) for e in cpg.edges], ERROR)

