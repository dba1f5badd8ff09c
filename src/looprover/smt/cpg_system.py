"""The encoding of a program's cutpoint graph (`CPGSystem`): pc + all program variables.

k-induction, TPA and the multi-loop engine work on transition systems, not on CFAs. `CPGSystem` encodes each
fragment of a cutpoint graph as an SSA DAG (`encode_dag`) and offers what the systems are made of: the state
constants, the per-fragment step (`fragment_step`), per-CPG-edge formulas (`edge_formula`) and the range
constraints of the program variables. Which systems are assembled from these pieces -- the pc-encoded `ts`
built here on construction, a single loop's system, the multi-loop network -- is `smt/systems.py`'s business;
the step renaming is `TransitionSystem`'s (`smt/ts.py`). It also maps a model of an unrolling of `ts` back to
CFA paths (`step_path`, used by witness replay). It is kept apart from the expression and DAG encodings, which
know nothing about cutpoints or a pc.
"""
from __future__ import annotations

from functools import cached_property
from typing import Callable, Collection, Hashable, Mapping, Sequence

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Edge
from looprover.program.cpg import ERROR, CPGEdge, CutpointGraph
from looprover.program.expr import IntType, Var
from looprover.smt.dag import DagEncoding, DagSpec, EdgeEnc, SsaEnv, Violation, encode_dag
from looprover.smt.encode import Encoder
from looprover.smt.systems import pc_system
from looprover.smt.terms import FALSE, Renaming, is_false, mk_and, mk_ite, mk_or
from looprover.smt.ts import TransitionSystem, step_var


def fragment_spec(cpg: CutpointGraph, src: int, edges: Sequence[Edge] | None = None) -> DagSpec:
    """The DAG of `src`'s fragment (or of the sub-DAG `edges` of one CPG edge).

    Targets become nodes `("t", loc)`, so a fragment that returns to its own head has distinct entry and
    exit nodes.
    """
    frag = cpg.fragment(src)
    allowed = None if edges is None else {id(e) for e in edges}
    targets = set(frag.targets)
    succ: dict[Hashable, list[tuple[Edge, Hashable]]] = {}
    for l in frag.locs:
        if l not in frag.inner:
            continue
        outs = [(e, ("t", e.dst) if e.dst in targets else e.dst) for e in frag.out_edges(l)
                if allowed is None or id(e) in allowed]
        if outs:
            succ[l] = outs
    order = [l for l in frag.locs if l in frag.inner] + [("t", t) for t in frag.targets]
    return DagSpec(src, order, succ, frozenset(("t", t) for t in frag.targets))


def state_name(name: str) -> str:
    # `ts.py` names step copies `x@j` and `a@auxj`: keep '@' out of state variable names.
    return name.replace("@", "%40")


class CPGSystem:
    """The transition system of a program's cutpoint graph.

    State: `pc` (an Int numbering `cpg.nodes`) and every program variable. One step runs one fragment: from
    `pc = c` along one path of c's fragment to the next cutpoint (or exit), or to ERROR at a failed assert.
    Init = (pc = init) with in-range values; Bad = (pc = ERROR). Exit and ERROR have no successors.
    `ts.trans` branches on terms: `x' == If(pc == c1, next_c1(x), If(pc == c2, ...))` (`systems.pc_system`).
    """

    def __init__(self, cpg: CutpointGraph, bitvector: bool = False, deadline: Deadline | None = None):
        self.cpg = cpg
        self.program = cpg.program
        self.bitvector = bitvector
        self.enc = Encoder(self.program, bitvector, prefix="", deadline=deadline)
        self.vars: list[Var] = list(self.program.all_vars)
        self.cur: dict[str, z3.ExprRef] = {v.name: self.enc.const(state_name(v.name), v.type)
                                           for v in self.vars}
        self.nxt: dict[str, z3.ExprRef] = {v.name: self.enc.const(state_name(v.name) + "'", v.type)
                                           for v in self.vars}
        self.enc.ints = True   # the pc is an Int (so a bit-vector system is not pure QF_BV)
        self.pc = z3.Int(".pc")
        self.pc_next = z3.Int(".pc'")
        self.pc_id: dict[int, int] = {n: i for i, n in enumerate(cpg.nodes)}
        self.node_of: dict[int, int] = {i: n for n, i in self.pc_id.items()}

    # The whole-graph encodings are built on first use: the per-edge clauses (`edge_formula`, Spacer's Horn
    # system) need neither, a cutpoint proof's check only the fragments, and on a 2 KLOC library with 944
    # cutpoints the two took 80 s to build.
    @cached_property
    def regions(self) -> dict[int, DagEncoding]:
        """Each fragment's SSA DAG, over the current state."""
        return {src: self.region(src) for src in self.cpg.sources}

    def region(self, src: int) -> DagEncoding:
        """`src`'s fragment as an SSA DAG over the current state, made anew (`regions` keeps them all; a proof's
        check needs one at a time, and on inlined real code all of them at once take gigabytes)."""
        self.enc.prefix = f"c{src}."
        try:
            return encode_dag(self.enc, fragment_spec(self.cpg, src), self._cur_env)
        finally:
            self.enc.prefix = ""

    @cached_property
    def _cur_env(self) -> SsaEnv:
        return SsaEnv.of(self.cur, entry=True)     # made once: it has every variable

    @cached_property
    def ts(self) -> TransitionSystem:
        """The pc-encoded transition system (`systems.pc_system`)."""
        return pc_system(self)

    # ---------------------------------------------------------------- pieces of the systems
    def fragment_step(self, src: int) -> tuple[z3.BoolRef, z3.ExprRef, dict[str, z3.ExprRef]]:
        """(the fragment ends somewhere, next pc, next values) for pc = src."""
        R = self.regions[src]
        contrib: list[tuple[z3.BoolRef, int, Mapping[str, z3.ExprRef]]] = []
        for t in self.cpg.fragment(src).targets:
            g = R.guard(("t", t))
            if not is_false(g):
                contrib.append((g, self.pc_id[t], R.envs[("t", t)]))
        for v in R.violations:
            contrib.append((v.cond, self.pc_id[ERROR], v.env))
        if not contrib:
            return FALSE, z3.IntVal(self.pc_id[ERROR]), dict(self.cur)
        reach = mk_or(*(c for c, _, _ in contrib))
        pc_n: z3.ExprRef = z3.IntVal(contrib[-1][1])
        for c, p, _ in reversed(contrib[:-1]):
            pc_n = mk_ite(c, z3.IntVal(p), pc_n)
        vals: dict[str, z3.ExprRef] = {}
        for v in self.vars:
            term = self.enc.term
            r = term(contrib[-1][2][v.name], v.type)
            for c, _, env in reversed(contrib[:-1]):
                r = mk_ite(c, term(env[v.name], v.type), r)
            vals[v.name] = r
        return reach, pc_n, vals

    def side_conditions(self) -> list[z3.BoolRef]:
        """The side conditions of every fragment's encoding (definitions, ranges of fresh constants)."""
        return [c for R in self.regions.values() for c in R.side]

    def range_constraints(self, env: Mapping[str, z3.ExprRef], only: Collection[Var] | None = None
                          ) -> list[z3.BoolRef]:
        """The value ranges of the program variables (those in `only`) at `env`, in variable order."""
        out: list[z3.BoolRef] = []
        for v in self.vars:
            if only is None or v in only:
                out += self.enc.in_range(env[v.name], v.type)
        return out

    def unsigned_ranges(self, env: Mapping[str, z3.ExprRef] | None = None) -> list[z3.BoolRef]:
        """The value ranges of the unsigned variables at `env` (default: the current state): every C state has
        them, since unsigned arithmetic wraps explicitly; signed values are mathematical in integer mode and get
        no range. Empty in bit-vector mode."""
        return self.range_constraints(self.cur if env is None else env,
                                      [v for v in self.vars if isinstance(v.type, IntType) and v.type.bounded
                                       and not v.type.signed])

    def valid_pc(self, pc: z3.ExprRef | None = None) -> z3.BoolRef:
        pc = self.pc if pc is None else pc
        return z3.And(pc >= 0, pc < len(self.pc_id))

    # ---------------------------------------------------------------- per-edge formulas
    def edge_formula(self, e: CPGEdge, only: Collection[Var] | None = None) -> z3.BoolRef:
        """Tr_e(x, x', aux) for one CPG edge: some path of e's sub-DAG runs from x to x' (to a failed assert
        when `e.dst` is ERROR, where x' is unconstrained). Over `self.cur`/`self.nxt`; aux constants fresh.
        `only`: constrain just these variables' next values (the others' x' are left free: exact wherever
        nothing else mentions them, as in a clause whose head is over `only`)."""
        self.enc.prefix = f"e{e.src}_{e.dst}."
        spec = fragment_spec(self.cpg, e.src, e.edges)
        R = encode_dag(self.enc, spec, self.cur)
        self.enc.prefix = ""
        if e.dst == ERROR:
            return mk_and(*R.side, R.error())
        wanted = None if only is None else {v.name for v in only}
        key = ("t", e.dst)
        env = R.envs.get(key)
        if env is None:
            return FALSE
        return mk_and(*R.side, R.guard(key),
                      *(self.nxt[v.name] == self.enc.term(env[v.name], v.type) for v in self.vars
                        if wanted is None or v.name in wanted))

    # ---------------------------------------------------------------- unrolling and traces
    def state_at(self, j: int) -> dict[str, z3.ExprRef]:
        """Program-variable copies at step j (`ts.step_vars(j)` without the pc)."""
        return {v.name: x for v, x in zip(self.vars, self.ts.step_vars(j)[1:])}

    def pc_at(self, j: int) -> z3.ExprRef:
        return step_var(self.pc, j)

    def step_path(self, model: z3.ModelRef, j: int
                  ) -> tuple[int, list[EdgeEnc], Violation | None, Hashable, Callable[[z3.ExprRef], z3.ExprRef]]:
        """The CFA path of step j of an unrolling `Init@0, trans_at(0), ..., ` in `model`:
        (source node, edges, violation or None, last node, evaluator of region terms at step j)."""
        pc = model.eval(self.pc_at(j), model_completion=True).as_long()
        src = self.node_of[pc]
        if src not in self.regions:
            raise ValueError(f"step {j} starts at terminal node {src}")
        rename = Renaming(self.ts.step_substitution(j, self.regions[src].aux))    # this fragment's terms only

        def value(t: z3.ExprRef) -> z3.ExprRef:
            return model.eval(rename(t), model_completion=True)

        steps, viol, last = self.regions[src].path(value)
        return src, steps, viol, last, value
