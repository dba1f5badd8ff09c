"""One natural loop's iteration relation, for termination arguments (`ranking.py`) and their check (`proof.py`).

An *iteration* of loop L (header h) is a finite execution from h back to h that stays in L's body. If no
execution has infinitely many iterations of one loop, the program terminates: in a reducible CFA an infinite
execution eventually stays inside some natural loop and visits its header infinitely often. So each loop
needs a well-founded relation containing its iterations between reachable states.

T_L(x, x') is built from the cutpoint graph (`program/cpg.py`, encoded by `smt/cpg_system.CPGSystem`): the
CPG edges between the cutpoints in L's body (L's head and the heads of the loops nested in it). A path from
cutpoint u in L's body to cutpoint v in L's body never leaves the body in a reducible CFA (re-entering it
would pass h, a cutpoint), so these edges are exactly the pieces of L's iterations:

    T_L(x, x') = E(h,h)(x, x')
                 ∨  (⋁_u E(h,u)(x, y) ∧ Inv_u(y))  ∧  ⋁_v Sum_v(y, z_v) ∧ Inv_v(z_v) ∧ E(v,h)(z_v, x')

where u, v range over the inner cutpoints, y is the state after the first step into the nested loops and z_v
the state at v after any number of steps inside them (each iteration through the nested loops starts with one
step from h into them and ends with one step from some v back to h). The inner loops are not unrolled:
`Sum_v` is a *summary*, a set of relations between the state y on entering the inner region and the state z
at v (`z.i = y.i`, `z.i ≤ y.i`, `z.i ≥ y.i` per variable) that holds on entry (z = y: the relations are
reflexive) and is preserved by every step inside it -- checked with Houdini (`smt/houdini.py`), so an inner
loop contributes only what is proved about all of its executions (it may even run forever: then L's head is
never reached again, and that is the inner loop's own argument to exclude). `Inv_v` are the program's invariants at the
cutpoints (k-induction's Houdini-checked candidates), which hold at every reachable state there, so they may
be assumed on both sides of every step.

Termination arguments are checked on T2(x, x') = T_L(x, x') ∧ T_L(x', x'') (with the invariants at x, x', x''):
the steps of an infinite chain are all followed by another step, so a relation that is well-founded on T2
already excludes infinite chains. This is what lets a loop like `while (x != 0) x++` over `unsigned x` be
ranked: its last step (UINT_MAX -> 0) is not followed by another, and every other step increases x.

Unsigned variables are always within their range (their arithmetic wraps explicitly); that range is assumed
at every state. Signed ranges are not: in integer mode a signed value is mathematical, so an argument is never
founded on "x cannot exceed INT_MAX" (a loop that only stops by overflowing is not proved).
"""
from __future__ import annotations

from typing import Sequence

import z3

from looprover.deadline import Deadline
from looprover.domains import Candidate
from looprover.program.expr import Expr, IntType, Var, cmp
from looprover.program.loops import Loop
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.houdini import houdini
from looprover.smt.mbp import free_constants
from looprover.smt.terms import FALSE, is_false, mk_and, mk_or
from looprover.evidence.proofs import invariant_formula

ENTRY = "@entry"        # summary relations name the state at the loop's head `x@entry`
State = dict[str, z3.ExprRef]


def entry_var(v: Var) -> Var:
    return Var(v.name + ENTRY, v.type)


class LoopRelation:
    """The pieces of one loop's iteration relation over a `CPGSystem` (see the module docstring)."""

    def __init__(self, sys: CPGSystem, loop: Loop, invariants: Sequence[Candidate] = (),
                 state_invariant: z3.BoolRef | None = None):
        """`invariants` at cutpoints, or as a `state_invariant` over sys.cur and sys.pc (a witness's, read from C)."""
        self.sys, self.loop, self.head = sys, loop, loop.header
        self.invariants = tuple(invariants)
        self.state_invariant = state_invariant
        cpg = sys.cpg
        self.nodes = [c for c in cpg.cutpoints if c in loop.body]
        self.inner = [c for c in self.nodes if c != self.head]
        known = {t.get_id() for t in list(sys.cur.values()) + list(sys.nxt.values())}
        self.edges: dict[tuple[int, int], tuple[z3.BoolRef, list[z3.ExprRef]]] = {}
        for e in cpg.edges:
            if e.src in self.nodes and e.dst in self.nodes:
                f = sys.edge_formula(e)
                if not is_false(f):
                    self.edges[(e.src, e.dst)] = (f, [c for c in free_constants(f) if c.get_id() not in known])
        self.vars = sorted(loop.reads | loop.writes, key=lambda v: v.name)

    # ------------------------------------------------------------------------------- states and pieces
    def state(self, tag: str) -> State:
        """A fresh copy of the program state (every variable), its constants named `name#tag`."""
        return {v.name: self.sys.enc.const(f"{v.name}#{tag}", v.type) for v in self.sys.vars}

    def edge(self, u: int, v: int, pre: State, post: State, tag: str) -> z3.BoolRef:
        """The CPG edge u -> v from `pre` to `post`, its auxiliary constants renamed apart by `tag`."""
        got = self.edges.get((u, v))
        if got is None:
            return FALSE
        f, aux = got
        sys = self.sys
        pairs = [(sys.cur[n], pre[n]) for n in sys.cur] + [(sys.nxt[n], post[n]) for n in sys.nxt]
        pairs += [(a, z3.Const(f"{a}#{tag}", a.sort())) for a in aux]
        return z3.substitute(f, *pairs)

    def inv(self, node: int | z3.ExprRef, env: State) -> z3.BoolRef:
        """The program invariants at cutpoint `node` (or at a symbolic pc), with unsigned values in range."""
        pc = z3.IntVal(self.sys.pc_id[node]) if isinstance(node, int) else node
        extra = [] if self.state_invariant is None else [z3.substitute(
            self.state_invariant, (self.sys.pc, pc), *[(self.sys.cur[n], env[n]) for n in self.sys.cur])]
        return mk_and(invariant_formula(self.sys, self.invariants, env, pc), *extra, *self.ranges(env))

    def ranges(self, env: State) -> list[z3.BoolRef]:
        """Type ranges of the unsigned variables (always true: their arithmetic wraps; signed ones are not
        assumed, see the module docstring). Empty in bit-vector mode."""
        return self.sys.unsigned_ranges(env)

    def relation_term(self, rel: Expr, inner: State, entry: State) -> z3.BoolRef:
        env = dict(inner)
        env.update({n + ENTRY: t for n, t in entry.items()})
        return self.sys.enc.expr(rel, env)

    # ------------------------------------------------------------------------------- summaries
    def summary_candidates(self) -> list[tuple[int, Expr]]:
        """Per inner cutpoint and loop variable: `x = x@entry`, and for integers `x ≤ x@entry`, `x ≥ x@entry`
        (`x@entry`: the value on entering the nested loops from the head)."""
        out: list[tuple[int, Expr]] = []
        for node in self.inner:
            for v in self.vars:
                e = entry_var(v)
                out.append((node, cmp("==", v, e)))
                if isinstance(v.type, IntType):
                    out += [(node, cmp("<=", v, e)), (node, cmp(">=", v, e))]
        return out

    def _summary_system(self, cands: Sequence[tuple[int, Expr]]):
        xh, x0, z, z1 = self.state("head"), self.state("entry"), self.state("in"), self.state("in'")
        pc0, pc1 = z3.Int("pc#in"), z3.Int("pc#in'")
        pid = self.sys.pc_id
        same = mk_and(*(z[n] == x0[n] for n in z))
        init = mk_and(self.inv(self.head, xh), self.inv(pc0, z), same,
                      mk_or(*(mk_and(pc0 == pid[u], self.edge(self.head, u, xh, x0, "sum0")) for u in self.inner)))
        trans = mk_or(*(mk_and(pc0 == pid[u], pc1 == pid[v], self.edge(u, v, z, z1, "sum1"))
                        for (u, v) in self.edges if u in self.inner and v in self.inner))
        background = [trans, self.inv(pc0, z), self.inv(pc1, z1)]
        pre = [z3.Implies(pc0 == pid[n], self.relation_term(r, z, x0)) for n, r in cands]
        post = [z3.Implies(pc1 == pid[n], self.relation_term(r, z1, x0)) for n, r in cands]
        return init, background, pre, post

    def find_summary(self, deadline: Deadline) -> tuple[tuple[int, Expr], ...]:
        """The largest inductive subset of `summary_candidates` (empty for a loop without nested loops).
        Raises OutOfTime/GiveUp when the solver does not answer."""
        cands = self.summary_candidates()
        if not cands:
            return ()
        init, background, pre, post = self._summary_system(cands)
        alive = houdini(background, pre, post, deadline, init=init, at_init=pre,
                        new_solver=lambda: self.sys.enc.solver().z3)
        kept = [cands[i] for i in alive]
        # `x ≤ x@entry` and `x ≥ x@entry` next to `x = x@entry` say nothing more: the conjunction is the same
        # (so it stays inductive), and the summary reads better without them
        equal = {(n, r.lhs) for n, r in kept if r.op == "=="}
        return tuple((n, r) for n, r in kept if r.op == "==" or (n, r.lhs) not in equal)

    def check_summary(self, summary: Sequence[tuple[int, Expr]], deadline: Deadline) -> str | None:
        """Why `summary` is not an inductive summary of the inner region (None if it is one)."""
        if not summary:
            return None
        bad = [n for n, _ in summary if n not in self.inner]
        if bad:
            return f"summary relations at L{bad[0]}, which is not a cutpoint nested in the loop at L{self.head}"
        init, background, pre, post = self._summary_system(summary)
        for what, fs in (("initiation", [init, z3.Not(mk_and(*pre))]),
                         ("consecution", [*background, *pre, z3.Not(mk_and(*post))])):
            s = self.sys.enc.solver(deadline).z3
            s.set("timeout", deadline.ms())
            s.add(*fs)
            r = s.check()
            if r != z3.unsat:
                return f"{what} of the inner-loop summary " + ("fails" if r == z3.sat else
                                                              f"is undecided ({s.reason_unknown()})")
        return None

    # ------------------------------------------------------------------------------- the relation
    def relation(self, summary: Sequence[tuple[int, Expr]], pre: State, post: State, tag: str) -> z3.BoolRef:
        """T_L(pre, post): one iteration of the loop, nested loops through `summary` (module docstring)."""
        direct = self.edge(self.head, self.head, pre, post, f"{tag}.hh")
        y = self.state(f"{tag}.y")
        enter = [mk_and(self.edge(self.head, u, pre, y, f"{tag}.h{u}"), self.inv(u, y))
                 for u in self.inner if (self.head, u) in self.edges]
        leave = []
        for v in self.inner:
            if (v, self.head) not in self.edges:
                continue
            z = self.state(f"{tag}.z{v}")
            rels = [self.relation_term(r, z, y) for n, r in summary if n == v]
            leave.append(mk_and(*rels, self.inv(v, z), self.edge(v, self.head, z, post, f"{tag}.{v}h")))
        # through the nested loops: a first step into them from the head (to y), any number of steps inside
        # (the summary relates y to z), a last step back to the head
        return mk_or(direct, mk_and(mk_or(*enter), mk_or(*leave)))

    def two_steps(self, summary: Sequence[tuple[int, Expr]], x: State, x1: State, x2: State, tag: str
                  ) -> z3.BoolRef:
        """T2(x, x1) with its witness x2: x -> x1 -> x2, reachable states at the head (invariants on all)."""
        return mk_and(self.inv(self.head, x), self.relation(summary, x, x1, f"{tag}a"), self.inv(self.head, x1),
                      self.relation(summary, x1, x2, f"{tag}b"), self.inv(self.head, x2))

    # ------------------------------------------------------------------------------- ranking variables
    def rank_vars(self) -> list[Var]:
        """The integer variables a ranking function may use: the loop's, without input and temporary copies
        (`nondet`, `temp`, `ret` variables are dead at the head in front-end output)."""
        info = self.sys.program.variables
        return [v for v in self.vars if isinstance(v.type, IntType)
                and info[v.name].kind not in ("nondet", "temp", "ret")]

    def value(self, m: z3.ModelRef, env: State, v: Var) -> int:
        """The integer value of a variable in a model (bit-vectors read as signed or unsigned per its type)."""
        val = m.eval(env[v.name], model_completion=True)
        if z3.is_bv_value(val):
            return val.as_signed_long() if v.type.signed else val.as_long()
        return val.as_long()

