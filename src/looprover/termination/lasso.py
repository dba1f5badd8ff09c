"""The search for a non-termination witness: a lasso (stem + cycle) with a recurrent set.

Bounded model checking on the cutpoint-graph system finds lassos: a run of n cutpoint steps from the start to
a loop head h (the stem) followed by m steps back to h (the cycle), first with the state at the end equal to the
state at the start of the cycle (a fixed point), then without. From a model we take

  * the stem as a concrete trace (initial values, havoc values, edges) -- `witness/replay.TraceBuilder`;
  * the cycle's CFA edges and its havoc values, which become the fixed nondet choices of every round;
  * candidate recurrent sets R at h, as IR formulas over the program variables:
      G1      the cycle's path condition (assumes and asserts on it, symbolically executed with the fixed
              choices): the states from which the cycle runs once;
      G2      G1 and G1 after one round: the states from which it runs twice (and so on, `depth` times);
      G ∧ Inv the path condition with the program's invariants at h;
      {s}     for a fixed point, the stem's last state on the variables the cycle reads or writes.

Each candidate goes to the independent check (`witness/nontermination.validate_nontermination`); the first one
that passes is the witness. Nothing found here is trusted: a candidate that does not pass is dropped.
"""
from __future__ import annotations

from typing import Any, Sequence

import z3

from looprover.deadline import Deadline
from looprover.domains import Candidate
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program
from looprover.program.expr import (
    ArrayType, BoolConst, BoolType, Expr, IntConst, IntType, Var, and_, cmp, const, free_vars, substitute,
    transform,
)
from looprover.program.interp import ArrayValue, Evaluator, UndefinedBehavior
from looprover.smt.cpg_system import CPGSystem
from looprover.verdict import NonTermination
from looprover.evidence.nontermination import check_recurrent, replay_stem, validate_nontermination
from looprover.evidence.replay import ModelArray, TraceBuilder

MAX_FORMULA = 4000      # size cap (nodes) of an unrolled path condition


def _fold(e: Expr) -> Expr:
    """Constant subexpressions evaluated (integer semantics), so that `1 != 0` reads as `true`."""
    ev = Evaluator("math")

    def fn(n: Expr) -> Expr | None:
        if isinstance(n, (IntConst, BoolConst, Var)) or isinstance(n.type, ArrayType) or free_vars(n):
            return None
        try:
            v = ev.eval(n, {})
        except (UndefinedBehavior, ArithmeticError, TypeError, KeyError):
            return None
        if isinstance(n.type, BoolType):
            return BoolConst(bool(v))
        if isinstance(n.type, IntType) and isinstance(v, int):
            return IntConst(v, n.type)
        return None
    return transform(e, fn)


def _size(e: Expr) -> int:
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        n += 1
        if n > MAX_FORMULA:
            break
        stack.extend(x.children())
    return n


def path_condition(edges: Sequence[Edge], havocs: Sequence[Any]) -> tuple[Expr, dict[Var, Expr]] | None:
    """(the condition for the straight-line path to run to its end from a state x, the state it ends in as
    expressions over x), with the havocs taking `havocs` in order; None for array havocs."""
    env: dict[Var, Expr] = {}
    guards: list[Expr] = []
    pos = 0
    for e in edges:
        for st in e.stmts:
            if isinstance(st, Assign):
                env[st.lhs] = _fold(substitute(st.rhs, env))
            elif isinstance(st, Havoc):
                for v in st.vars:
                    if pos >= len(havocs) or isinstance(v.type, ArrayType):
                        return None
                    val = havocs[pos]
                    pos += 1
                    env[v] = BoolConst(bool(val)) if isinstance(v.type, BoolType) else const(val, v.type)
            elif isinstance(st, (Assume, Assert)):
                guards.append(_fold(substitute(st.cond, env)))
    return and_(*guards), env


def recurrent_candidates(edges: Sequence[Edge], havocs: Sequence[Any], state: dict | None, inv: Expr,
                         depth: int = 3) -> list[Expr]:
    """Candidate recurrent sets for the cycle `edges` (module docstring), most general first."""
    out: list[Expr] = []
    got = path_condition(edges, havocs)
    if got is not None:
        g1, env = got
        g = g1
        for _ in range(depth):
            if g not in out:
                out.append(g)
            if inv != BoolConst(True):
                gi = and_(g, inv)
                if gi not in out:
                    out.append(gi)
            nxt = _fold(and_(g1, substitute(g, env)))
            if _size(nxt) > MAX_FORMULA or nxt == g:
                break
            g = nxt
    if state is not None:
        touched: set[Var] = set()
        for e in edges:
            touched |= e.reads() | e.writes()
        if not any(isinstance(v.type, ArrayType) for v in touched):
            eqs = [cmp("==", v, BoolConst(bool(state[v.name])) if isinstance(v.type, BoolType)
                       else const(state[v.name], v.type)) for v in sorted(touched, key=lambda v: v.name)]
            out.append(and_(*eqs))
    return out


def _invariant_at(invariants: Sequence[Candidate], head: int) -> Expr:
    return and_(*(c.atom for c in invariants if c.node is None or c.node == head))


def _plain(v: Any) -> Any:
    return v.materialize() if isinstance(v, ModelArray) else v


class LassoSearch:
    """Bounded search for lassos at the given loop heads (see the module docstring)."""

    def __init__(self, program: Program, sys: CPGSystem, heads: Sequence[int], invariants: Sequence[Candidate],
                 bitvector: bool, deadline: Deadline, max_stem: int = 12, max_cycle: int = 8):
        self.program, self.sys, self.heads = program, sys, list(heads)
        self.invariants = list(invariants)
        self.bitvector, self.deadline = bitvector, deadline
        self.max_stem, self.max_cycle = max_stem, max_cycle
        self.candidates = 0
        self.rejected: list[str] = []
        self.refuted: set = set()        # (cycle, havoc values, recurrent set) whose closure failed
        self._lits = 0

    def _lit(self, f: z3.BoolRef, s) -> z3.BoolRef:
        self._lits += 1
        b = z3.Bool(f"!lasso{self._lits}")
        s.add(z3.Implies(b, f))
        return b

    def run(self) -> NonTermination | None:
        ts, sys = self.sys.ts, self.sys
        s = sys.enc.solver(self.deadline)
        s.add(ts.at(ts.init, 0))
        for total in range(1, self.max_stem + self.max_cycle + 1):
            self.deadline.check()
            s.add(ts.trans_at(total - 1))
            for m in range(1, min(self.max_cycle, total) + 1):
                n = total - m
                if n > self.max_stem:
                    continue
                for h in self.heads:
                    at = [self._lit(sys.pc_at(n) == sys.pc_id[h], s.z3),
                          self._lit(sys.pc_at(total) == sys.pc_id[h], s.z3)]
                    same = self._lit(z3.And([a == b for a, b in zip(ts.step_vars(n)[1:], ts.step_vars(total)[1:])]),
                                     s.z3)
                    for extra in ([same], []):
                        r = s.check(*at, *extra)
                        if r == z3.unknown:
                            self.deadline.check()
                            continue
                        if r != z3.sat:
                            if extra:
                                continue
                            break
                        w = self._witness(s.model(), n, total, h, fixed=bool(extra))
                        if w is not None:
                            return w
        return None

    def _witness(self, model: z3.ModelRef, n: int, total: int, head: int, fixed: bool) -> NonTermination | None:
        sys, program = self.sys, self.program
        ev0 = (lambda t: model.eval(t, model_completion=True))
        stem = TraceBuilder(program, sys.enc)
        for j in range(n):
            _, path, viol, _, value = sys.step_path(model, j)
            if viol is not None:
                return None
            stem.add_path(path, None, value)
        cex = stem.build(sys.state_at(0), ev0)
        cycle = TraceBuilder(program, sys.enc)
        for j in range(n, total):
            _, path, viol, _, value = sys.step_path(model, j)
            if viol is not None:
                return None
            cycle.add_path(path, None, value)
        if any(isinstance(v, ArrayValue) for v in cycle.havocs):
            self.rejected.append("array havoc in the cycle")
            return None
        initial = {k: _plain(v) for k, v in cex.initial.items()}
        havocs = [_plain(v) for v in cex.havocs]
        edges = [st.edge for st in cex.steps]
        loop = [st.edge for st in cycle.steps]
        where = next((e.src_loc for e in loop if e.src_loc is not None), None)
        probe = NonTermination(head, edges, initial, havocs, loop, list(cycle.havocs), BoolConst(True),
                               inputs=list(cex.inputs), where=where)
        state, why = replay_stem(program, probe, self.bitvector)
        if why is not None:
            self.rejected.append(f"stem: {why}")
            return None
        inv = _invariant_at(self.invariants, head)
        for rec in recurrent_candidates(loop, cycle.havocs, state if fixed else None, inv):
            self.deadline.check()
            key = (tuple(loop), tuple(cycle.havocs), rec)
            if key in self.refuted:          # the same cycle and set from another stem: closure known to fail
                continue
            self.candidates += 1
            why = check_recurrent(program, loop, cycle.havocs, rec, self.deadline)
            if why is not None:
                self.refuted.add(key)
                self.rejected.append(why)
                continue
            w = NonTermination(head, edges, initial, havocs, loop, list(cycle.havocs), rec,
                               inputs=list(cex.inputs), where=where)
            why = validate_nontermination(program, w, self.bitvector, self.deadline)
            if why is None:
                return w
            self.rejected.append(why)
        return None
