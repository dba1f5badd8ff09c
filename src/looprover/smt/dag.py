"""SSA encoding of loop-free DAGs of CFA edges (a cutpoint-graph fragment, or a BMC unrolling) into z3.

Each node gets a reachability guard, each edge a `taken` condition, and values are merged at joins with
`If(taken_1, v_1, If(taken_2, v_2, ...))`. Branching on *terms* is what keeps z3 fast (stack.md: 0.03 s vs
21 s against `If(c, And(x1==..), And(..))`). Nodes with several out-edges that are not syntactically exclusive
(`assume c` / `assume !c`) get fresh choice booleans, so that at most one path is active in a model: otherwise
a merge would silently prefer one of two enabled nondeterministic branches and lose the executions of the
other (a wrong TRUE). Uniqueness also makes trace extraction a simple walk (`DagEncoding.path`).

The statements of each edge are encoded here, their expressions by an `Encoder` (`smt.encode`); SSA
environments keep constants as Python values. Node guards can be named to stop z3 from flattening guard
chains (`encode_dag`). This is kept apart from the expression encoder because it is about control flow
(guards, joins, path choice), which the CPG transition system, BMC and trace replay build on, while
`Encoder` is only about the semantics of one expression.
"""
from __future__ import annotations

import heapq
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Callable, Hashable, Mapping, Sequence

import z3

from looprover.errors import UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc
from looprover.program.expr import Compare, Expr, Store, Var, not_
from looprover.smt.encode import Encoder
from looprover.smt.solver import check_deadline
from looprover.smt.terms import FALSE, TRUE, is_false, mk_and, mk_ite, mk_not, mk_or


# ------------------------------------------------------------------------------------------ DAG data
@dataclass
class EdgeEnc:
    """One CFA edge inside an encoded DAG: `taken` = source reached, edge chosen, all its assumes/asserts hold.

    Values in `env`/`written` are z3 terms or Python constants (folded); `Encoder.term(v, type)` converts.
    """
    node: Hashable
    edge: Edge
    dst: Hashable
    taken: z3.BoolRef
    env: Mapping[str, z3.ExprRef]                 # values after the edge (all variables)
    written: dict[str, z3.ExprRef]                # values of the variables the edge wrote
    havocs: list[tuple[Var, z3.ExprRef]]          # fresh constants of its Havoc statements, in order
    cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = field(default_factory=list)  # array writes (name, i, v)


@dataclass
class Violation:
    """Assertion `stmt` (index `index` in `edge`) fails: `cond` = reached and the condition is false."""
    node: Hashable
    edge: Edge
    index: int
    stmt: Assert
    cond: z3.BoolRef
    env: Mapping[str, z3.ExprRef]
    written: dict[str, z3.ExprRef]
    havocs: list[tuple[Var, z3.ExprRef]]
    cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = field(default_factory=list)


@dataclass
class DagSpec:
    """A DAG of CFA edges over arbitrary hashable nodes (a fragment, or a BMC unrolling).

    `order` is topological with `entry` first; `succ[n]` lists (edge, successor) pairs; nodes without `succ`
    entries are sinks. `want_env` are the sinks whose merged values are needed (e.g. the next state).
    """
    entry: Hashable
    order: Sequence[Hashable]
    succ: Mapping[Hashable, Sequence[tuple[Edge, Hashable]]]
    want_env: frozenset = frozenset()


@dataclass
class DagEncoding:
    spec: DagSpec
    guards: dict[Hashable, z3.BoolRef]
    envs: dict[Hashable, Mapping[str, z3.ExprRef]]
    out: dict[Hashable, list[EdgeEnc]]
    incoming: dict[Hashable, list[EdgeEnc]]
    violations: list[Violation]
    side: list[z3.BoolRef]                        # range constraints of fresh constants, definitions
    aux: list[z3.ExprRef]                         # fresh constants (havoc values, choices, join values)

    def guard(self, node: Hashable) -> z3.BoolRef:
        return self.guards.get(node, FALSE)

    def error(self) -> z3.BoolRef:
        """Some assertion on some path fails."""
        return mk_or(*(v.cond for v in self.violations))

    def path(self, value: Callable[[z3.ExprRef], z3.ExprRef]
             ) -> tuple[list[EdgeEnc], Violation | None, Hashable]:
        """The unique active path in a model (`value` evaluates a term in it): the edges taken, the violation
        that ends it (if any), and the last node."""
        viol_at: dict[Hashable, list[Violation]] = {}
        for v in self.violations:
            viol_at.setdefault(v.node, []).append(v)
        node = self.spec.entry
        steps: list[EdgeEnc] = []
        while True:
            nxt = None
            for v in viol_at.get(node, []):
                if z3.is_true(value(v.cond)):
                    return steps, v, node
            for ee in self.out.get(node, []):
                if z3.is_true(value(ee.taken)):
                    nxt = ee
                    break
            if nxt is None:
                return steps, None, node
            steps.append(nxt)
            node = nxt.dst


# ------------------------------------------------------------------------------------------ encoding
def encode_dag(enc: Encoder, spec: DagSpec, env0: Mapping[str, z3.ExprRef], join_consts: bool = False,
               name_guards: bool = False) -> DagEncoding:
    """SSA-encode a DAG of CFA edges from `spec.entry` with entry values `env0` (all variables).

    `name_guards=True` gives every node's guard a name (`g == Or(in-edges)`). Why: z3's simplifier
    flattens nested `And`s, which destroys the sharing of a guard chain along a path; a 2048-fold
    unrolling of a 3-variable loop became 4.2M expressions, and z3 overran its timeout by 4 s while
    preprocessing them. Named guards keep it linear and were as fast or faster on every unrolling we
    measured (e.g. 1024-fold: 0.99 s vs. timeout). Naming values too (at loop heads) was much slower
    (3.0 s vs 0.16 s at 256): the arithmetic simplifier folds `i-1-1-1` chains, names block that.
    `join_consts=True` names merged values at every join (measured: no gain; kept for experiments).
    """
    dag = DagEncoding(spec, {spec.entry: TRUE}, {spec.entry: env0}, {}, {}, [], [], [])
    for count, node in enumerate(spec.order):
        if count % 256 == 255:
            check_deadline(enc.deadline)
        _visit(enc, dag, node, spec.succ.get(node), node in spec.want_env, join_consts, name_guards)
    return dag


def encode_lazy(enc: Encoder, entry: Hashable, env0: Mapping[str, z3.ExprRef],
                key: Callable[[Hashable], tuple], successors: Callable[[Hashable], Sequence[tuple[Edge, Hashable]]],
                name_guards: bool = False) -> DagEncoding:
    """`encode_dag` for a DAG given implicitly, explored from `entry` in increasing `key` order (which
    must be topological: every edge goes to a larger key). A successor is only expanded when some edge
    into it is not constant-false after folding, so infeasible parts of an unrolling (loop counters
    past their constant bound) are never built: the symbolic-execution pruning of CBMC."""
    spec = DagSpec(entry, [], {})
    dag = DagEncoding(spec, {entry: TRUE}, {entry: env0}, {}, {}, [], [], [])
    heap: list = [(key(entry), 0, entry)]
    queued = {entry}
    tie = 0
    order: list[Hashable] = []
    succ: dict[Hashable, Sequence[tuple[Edge, Hashable]]] = {}
    while heap:
        if tie % 256 == 255 or len(order) % 256 == 255:
            check_deadline(enc.deadline)
        _, _, node = heapq.heappop(heap)
        outs = successors(node)
        ees = _visit(enc, dag, node, outs, False, False, name_guards)
        if ees is None:
            continue
        order.append(node)
        if outs:
            succ[node] = outs
        for ee in ees:
            if not is_false(ee.taken) and ee.dst not in queued:
                queued.add(ee.dst)
                tie += 1
                heapq.heappush(heap, (key(ee.dst), tie, ee.dst))
    spec.order, spec.succ = order, succ
    return dag


def _visit(enc: Encoder, dag: DagEncoding, node: Hashable, outs: Sequence[tuple[Edge, Hashable]] | None,
           want_env: bool, join_consts: bool, name_guards: bool) -> list[EdgeEnc] | None:
    """Guard and merged values of `node` from its (already encoded) in-edges, then its out-edges.
    None if the node is unreachable."""
    if node != dag.spec.entry:
        ins = [ee for ee in dag.incoming.get(node, ()) if not is_false(ee.taken)]
        if not ins:
            return None
        g = mk_or(*(ee.taken for ee in ins))
        if name_guards and z3.Z3_get_app_num_args(g.ctx_ref(), g.ast) > 0:
            gc = z3.Bool(enc.fresh_name("g"))
            dag.aux.append(gc)
            dag.side.append(gc == g)
            g = gc
        dag.guards[node] = g
        if outs or want_env:
            dag.envs[node] = _merge(enc, dag, ins, join_consts)
    if not outs:
        return []
    g = dag.guards[node]
    env = dag.envs[node]
    sels = _selectors(enc, dag, outs)
    result: list[EdgeEnc] = []
    for (edge, dst), sel in zip(outs, sels):
        ee = _edge(enc, dag, node, edge, dst, env, mk_and(g, sel))
        dag.out.setdefault(node, []).append(ee)
        dag.incoming.setdefault(dst, []).append(ee)
        result.append(ee)
    return result


def _selectors(enc: Encoder, dag: DagEncoding, outs: Sequence[tuple[Edge, Hashable]]) -> list[z3.BoolRef]:
    k = len(outs)
    if k == 1:
        return [TRUE]
    if k == 2:
        s1, s2 = outs[0][0].stmts, outs[1][0].stmts
        if (s1 and s2 and isinstance(s1[0], Assume) and isinstance(s2[0], Assume)
                and _complementary(s1[0].cond, s2[0].cond)):
            return [TRUE, TRUE]
    sels: list[z3.BoolRef] = []
    prefix: list[z3.BoolRef] = []
    for i in range(k - 1):
        c = z3.Bool(enc.fresh_name("ch"))
        dag.aux.append(c)
        sels.append(mk_and(*prefix, c))
        prefix.append(z3.Not(c))
    sels.append(mk_and(*prefix))
    return sels


def _edge(enc: Encoder, dag: DagEncoding, node, edge: Edge, dst, env: Mapping[str, z3.ExprRef],
          pre: z3.BoolRef) -> EdgeEnc:
    written: dict[str, z3.ExprRef] = {}
    havocs: list[tuple[Var, z3.ExprRef]] = []
    cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = []
    conds = [pre]
    blocked = is_false(pre)
    for idx, st in enumerate(edge.stmts):
        if blocked:
            break
        view = ChainMap(written, env) if written else env
        if isinstance(st, Assign):
            rhs = st.rhs
            if isinstance(rhs, Store) and rhs.array == st.lhs:
                at = st.lhs.type
                i = enc.term(enc.value_of(rhs.index, view), at.index)
                v = enc.term(enc.value_of(rhs.value, view), at.elem)
                written[st.lhs.name] = z3.Store(view[st.lhs.name], i, v)
                cells.append((st.lhs.name, i, v))
            else:
                written[st.lhs.name] = enc.value_of(rhs, view)
        elif isinstance(st, Havoc):
            for v in st.vars:
                c = enc.fresh(v.name, v.type)
                dag.aux.append(c)
                dag.side.extend(enc.in_range(c, v.type))
                written[v.name] = c
                havocs.append((v, c))
        elif isinstance(st, Assume):
            binders = enc.binders
            c = enc.value_of(st.cond, view)
            if enc.binders != binders and not isinstance(c, bool):
                c = _named(enc, dag, c)
            if isinstance(c, bool):
                blocked = not c
            else:
                conds.append(c)
                blocked = is_false(c)
        elif isinstance(st, Assert):
            c = enc.value_of(st.cond, view)
            if isinstance(c, bool):
                c = TRUE if c else FALSE
            viol = mk_and(*conds, mk_not(c))
            if not is_false(viol):
                dag.violations.append(Violation(node, edge, idx, st, viol, ChainMap(dict(written), env),
                                                dict(written), list(havocs), list(cells)))
            conds.append(c)
            blocked = is_false(c)
        else:
            raise UnsupportedError(f"statement {type(st).__name__}")
    taken = FALSE if blocked else mk_and(*conds)
    post = env if not written else {**env, **written}
    return EdgeEnc(node, edge, dst, taken, post, written, havocs, cells)


def _named(enc: Encoder, dag: DagEncoding, c: z3.BoolRef) -> z3.BoolRef:
    """A fresh Boolean defined as `c`: a model gives it a value even when `c` is a quantifier (accelerated
    programs' guards), which `model.eval` often cannot evaluate, so the path through it can be read off."""
    q = z3.Bool(enc.fresh_name("quant"))
    dag.aux.append(q)
    dag.side.append(q == c)
    return q


def _merge(enc: Encoder, dag: DagEncoding, ins: list[EdgeEnc], join_consts: bool) -> Mapping[str, object]:
    if len(ins) == 1:
        return ins[0].env
    first = ins[0].env
    merged: dict[str, object] = {}
    for name, t0 in first.items():
        terms = [t0]
        same = True
        for ee in ins[1:]:
            t = ee.env[name]
            terms.append(t)
            if same and not _same_value(t, t0):
                same = False
        if same:
            merged[name] = t0
            continue
        ty = enc.var_types[name]
        r = enc.term(terms[-1], ty)
        for ee, t in zip(reversed(ins[:-1]), reversed(terms[:-1])):
            r = mk_ite(ee.taken, enc.term(t, ty), r)
        if join_consts:
            c = z3.Const(enc.fresh_name(name, "j"), r.sort())
            dag.aux.append(c)
            dag.side.append(c == r)
            r = c
        merged[name] = r
    return merged


def _complementary(c: Expr, d: Expr) -> bool:
    """Syntactically exclusive and exhaustive branch conditions."""
    if c == not_(d) or d == not_(c):
        return True
    if isinstance(c, Compare) and isinstance(d, Compare) and c.lhs == d.lhs and c.rhs == d.rhs:
        return {c.op, d.op} in ({"<", ">="}, {"<=", ">"}, {"==", "!="})
    return False


def _same_value(a, b) -> bool:
    if a is b:
        return True
    za, zb = isinstance(a, z3.ExprRef), isinstance(b, z3.ExprRef)
    if za and zb:
        return a.ast.value == b.ast.value
    return not za and not zb and a == b
