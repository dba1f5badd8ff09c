"""Every transition system the engines run on, built in one place from a cutpoint-graph encoding.

Why one place: the engines see a program through three systems of its cutpoint graph -- the pc-encoded whole
program (k-induction, TPA, counterexample replay), the single loop of a one-loop program (TPA), and the network
of per-loop bodies and bridges (multi-loop TPA). They must agree on the state vocabulary (which constants, in
which order, under which display names) and on the formulas of each CPG edge, or a proof found on one system
and a counterexample replayed on another speak about different variables. Each of the systems used to be
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

from typing import Collection, Mapping, Protocol

import z3

from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, CPGEdge, CutpointGraph
from looprover.program.expr import Var
from looprover.smt.terms import mk_and, mk_ite, mk_or
from looprover.smt.ts import TransitionSystem

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

    def edge_formula(self, e: CPGEdge) -> z3.BoolRef: ...


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
