"""The transition system of a program's cutpoint graph (`CPGSystem`): pc + all program variables.

k-induction, TPA and the multi-loop engine work on transition systems, not on CFAs. `CPGSystem` builds the
pc-encoded system of a cutpoint graph (each fragment SSA-encoded as a DAG, `encode_dag`), offers per-CPG-edge
formulas (`edge_formula`, from which `tpa.program_ts` and the multi-loop engine build their own systems), and
maps a model of an unrolling back to CFA paths (`step_path`, used by witness replay). It is kept apart from
the expression and DAG encodings, which know nothing about cutpoints or a pc.
"""
from __future__ import annotations

from typing import Callable, Hashable, Mapping, Sequence

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Edge
from looprover.program.cpg import ERROR, CPGEdge, CutpointGraph
from looprover.program.expr import Var
from looprover.smt.dag import DagEncoding, DagSpec, EdgeEnc, Violation, encode_dag
from looprover.smt.encode import Encoder
from looprover.smt.terms import FALSE, is_false, mk_and, mk_ite, mk_or
from looprover.smt.ts import TransitionSystem


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


def _state_name(name: str) -> str:
    # `ts.py` names step copies `x@j` and `a@auxj`: keep '@' out of state variable names.
    return name.replace("@", "%40")


class CPGSystem:
    """The transition system of a program's cutpoint graph.

    State: `pc` (an Int numbering `cpg.nodes`) and every program variable. One step runs one fragment: from
    `pc = c` along one path of c's fragment to the next cutpoint (or exit), or to ERROR at a failed assert.
    Init = (pc = init) with in-range values; Bad = (pc = ERROR). Exit and ERROR have no successors.
    `trans` branches on terms: `x' == If(pc == c1, next_c1(x), If(pc == c2, ...))`.
    """

    def __init__(self, cpg: CutpointGraph, bitvector: bool = False, deadline: Deadline | None = None):
        self.cpg = cpg
        self.program = cpg.program
        self.bitvector = bitvector
        self.enc = Encoder(self.program, bitvector, prefix="", deadline=deadline)
        self.vars: list[Var] = list(self.program.all_vars)
        self.cur: dict[str, z3.ExprRef] = {v.name: self.enc.const(_state_name(v.name), v.type)
                                           for v in self.vars}
        self.nxt: dict[str, z3.ExprRef] = {v.name: self.enc.const(_state_name(v.name) + "'", v.type)
                                           for v in self.vars}
        self.enc.ints = True   # the pc is an Int (so a bit-vector system is not pure QF_BV)
        self.pc = z3.Int(".pc")
        self.pc_next = z3.Int(".pc'")
        self.pc_id: dict[int, int] = {n: i for i, n in enumerate(cpg.nodes)}
        self.node_of: dict[int, int] = {i: n for n, i in self.pc_id.items()}
        self.regions: dict[int, DagEncoding] = {}
        for src in cpg.sources:
            self.enc.prefix = f"c{src}."
            self.regions[src] = encode_dag(self.enc, fragment_spec(cpg, src), self.cur)
        self.enc.prefix = ""
        self.ts = self._build_ts()

    # ---------------------------------------------------------------- construction
    def _region_next(self, src: int) -> tuple[z3.BoolRef, z3.ExprRef, dict[str, z3.ExprRef]]:
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

    def _build_ts(self) -> TransitionSystem:
        sources = list(self.cpg.sources)
        parts = {s: self._region_next(s) for s in sources}
        at = {s: self.pc == self.pc_id[s] for s in sources}
        enabled = mk_or(*(mk_and(at[s], parts[s][0]) for s in sources))
        pc_n = parts[sources[-1]][1]
        for s in reversed(sources[:-1]):
            pc_n = mk_ite(at[s], parts[s][1], pc_n)
        conj = [enabled, self.pc_next == pc_n]
        for v in self.vars:
            r = parts[sources[-1]][2][v.name]
            for s in reversed(sources[:-1]):
                r = mk_ite(at[s], parts[s][2][v.name], r)
            conj.append(self.nxt[v.name] == r)
        for R in self.regions.values():
            conj.extend(R.side)
        init = mk_and(self.pc == self.pc_id[self.cpg.init], *self.range_constraints(self.cur))
        bad = self.pc == self.pc_id[ERROR]
        names = ["pc"] + [self.program.variables[v.name].c_name or v.name for v in self.vars]
        return TransitionSystem([self.pc] + [self.cur[v.name] for v in self.vars],
                                [self.pc_next] + [self.nxt[v.name] for v in self.vars],
                                init, mk_and(*conj), bad, names)

    def range_constraints(self, env: Mapping[str, z3.ExprRef]) -> list[z3.BoolRef]:
        out: list[z3.BoolRef] = []
        for v in self.vars:
            out += self.enc.in_range(env[v.name], v.type)
        return out

    def valid_pc(self, pc: z3.ExprRef | None = None) -> z3.BoolRef:
        pc = self.pc if pc is None else pc
        return z3.And(pc >= 0, pc < len(self.pc_id))

    # ---------------------------------------------------------------- per-edge formulas
    def edge_formula(self, e: CPGEdge) -> z3.BoolRef:
        """Tr_e(x, x', aux) for one CPG edge: some path of e's sub-DAG runs from x to x' (to a failed assert
        when `e.dst` is ERROR, where x' is unconstrained). Over `self.cur`/`self.nxt`; aux constants fresh."""
        self.enc.prefix = f"e{e.src}_{e.dst}."
        spec = fragment_spec(self.cpg, e.src, e.edges)
        R = encode_dag(self.enc, spec, self.cur)
        self.enc.prefix = ""
        if e.dst == ERROR:
            return mk_and(*R.side, R.error())
        key = ("t", e.dst)
        env = R.envs.get(key)
        if env is None:
            return FALSE
        return mk_and(*R.side, R.guard(key),
                      *(self.nxt[v.name] == self.enc.term(env[v.name], v.type) for v in self.vars))

    # ---------------------------------------------------------------- unrolling and traces
    def state_at(self, j: int) -> dict[str, z3.ExprRef]:
        """Program-variable copies at step j, named as `TransitionSystem.step_vars` names them."""
        return {v.name: z3.Const(f"{self.cur[v.name]}@{j}", self.cur[v.name].sort()) for v in self.vars}

    def pc_at(self, j: int) -> z3.ExprRef:
        return z3.Int(f"{self.pc}@{j}")

    def step_substitution(self, j: int) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """The renaming `ts.trans_at(j)` applies: state -> @j, next -> @j+1, aux -> @auxj."""
        pairs = [(self.pc, self.pc_at(j)), (self.pc_next, self.pc_at(j + 1))]
        sj, sj1 = self.state_at(j), self.state_at(j + 1)
        for v in self.vars:
            pairs.append((self.cur[v.name], sj[v.name]))
            pairs.append((self.nxt[v.name], sj1[v.name]))
        for R in self.regions.values():
            for a in R.aux:
                pairs.append((a, z3.Const(f"{a}@aux{j}", a.sort())))
        return pairs

    def step_path(self, model: z3.ModelRef, j: int
                  ) -> tuple[int, list[EdgeEnc], Violation | None, Hashable, Callable[[z3.ExprRef], z3.ExprRef]]:
        """The CFA path of step j of an unrolling `Init@0, trans_at(0), ..., ` in `model`:
        (source node, edges, violation or None, last node, evaluator of region terms at step j)."""
        pc = model.eval(self.pc_at(j), model_completion=True).as_long()
        src = self.node_of[pc]
        if src not in self.regions:
            raise ValueError(f"step {j} starts at terminal node {src}")
        pairs = self.step_substitution(j)

        def value(t: z3.ExprRef) -> z3.ExprRef:
            return model.eval(z3.substitute(t, *pairs), model_completion=True)

        steps, viol, last = self.regions[src].path(value)
        return src, steps, viol, last, value
