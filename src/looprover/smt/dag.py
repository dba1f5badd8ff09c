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
from collections.abc import Mapping
from typing import Callable, Hashable, Sequence

import immutables
import z3

from looprover.errors import UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc
from looprover.program.expr import Compare, Expr, Store, Var, not_
from looprover.smt.encode import Encoder
from looprover.smt.solver import check_deadline
from looprover.smt.terms import FALSE, TRUE, is_false, mk_and, mk_ite, mk_not, mk_or


# ------------------------------------------------------------------------------------------ environments
class SsaEnv(Mapping):
    """The values of all variables at one point of an encoded DAG.

    Why not a dict: a dict per edge and per node copies every variable's entry, and inlined real code has
    thousands of variables (x509-parser: 9,671, with 27,736 edges; the dicts of one proof check's encoding took
    18 GB). Here the values are a persistent map (`immutables.Map`: a write shares all but O(log n) of it), and
    `log` records the names written since the DAG's entry as a chain of cells `(names, previous cell, depth)`
    shared with the environments this one came from, so that a join compares only the names written since its
    incoming environments last agreed (`_diverged`), not every variable."""
    __slots__ = ("values", "log")

    def __init__(self, values: immutables.Map, log: tuple | None):
        self.values = values
        self.log = log

    @staticmethod
    def of(env: Mapping[str, object], entry: bool = False) -> "SsaEnv":
        """`env` as an environment: of a DAG's entry (nothing written yet), or else one whose every name counts
        as written (what a join must compare)."""
        if isinstance(env, SsaEnv):
            return env
        values = env if isinstance(env, immutables.Map) else immutables.Map(env)
        return SsaEnv(values, None if entry else (tuple(values), None, 1))

    def written(self, names: Mapping[str, object]) -> "SsaEnv":
        """This environment after `names` are written."""
        if not names:
            return self
        return SsaEnv(self.values.update(names), (tuple(names), self.log, _depth(self.log) + 1))

    def __getitem__(self, name: str):
        return self.values[name]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def _depth(log: tuple | None) -> int:
    return 0 if log is None else log[2]


def _diverged(envs: Sequence[SsaEnv]) -> tuple[list[str], tuple | None]:
    """The names written on the way to any of `envs` since the last log cell all of them share (each once, in
    the order the walk meets them: a set's order would vary with Python's string hashing, and with it the order
    in which z3 terms are made), and that cell: only those names can hold different values in them."""
    logs = [e.log for e in envs]
    names: dict[str, None] = {}
    while any(l is not logs[0] for l in logs):
        deepest = max(_depth(l) for l in logs)
        for i, l in enumerate(logs):
            if _depth(l) == deepest:
                names.update(dict.fromkeys(l[0]))
                logs[i] = l[1]
    return list(names), logs[0]


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
    # a quantified guard's name implies it instead of being equivalent to it: the models are executions all the
    # same, some executions are left out (an edge whose guard holds may count as not taken), so an unsat
    # answer proves nothing; for falsification only (`BMC.falsify_only`). Measured on an accelerated Verisec
    # program at BASE_SZ 1000: z3 found the violation in 0.14 s instead of 2.1 s
    one_way_binders: bool = False

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
    dag = DagEncoding(spec, {spec.entry: TRUE}, {spec.entry: SsaEnv.of(env0, entry=True)}, {}, {}, [], [], [])
    for count, node in enumerate(spec.order):
        if count % 256 == 255:
            check_deadline(enc.deadline)
        _visit(enc, dag, node, spec.succ.get(node), node in spec.want_env, join_consts, name_guards)
    return dag


class LazyDag:
    """`encode_dag` for a DAG given implicitly and grown in steps (BMC's unrolling for growing bounds).

    Nodes are explored from `entry` in increasing `key` order (which must be topological: every edge goes to a
    larger key), and a successor is only expanded when some edge into it is not constant-false after folding,
    so infeasible parts (loop counters past their constant bound) are never built: CBMC's symbolic-execution
    pruning. Edges into a node of `sinks` are not followed: `grow` lists them (`sink_edges`), and `redirect`
    later points one at a real node.

    Growing never re-asserts anything: `grow` returns only the constraints of what is new. A node for which
    `is_open` says it may still gain in-edges later (it returns the values all later in-edges surely carry,
    None for a complete node) keeps the `If`-term encoding of `encode_dag` over the in-edges it has, with
    fresh symbols for the rest: its guard is `Or(taken_1, ..., more)` and each value that may still change
    `If(taken_1, v_1, ... tail)`. `more` is assumed false (`assumptions`) until in-edges arrive; then
    `more == Or(new takens, more')` and `tail == If(new..., tail')` define them, the primed symbols being the
    new open ends (or none, once the node is complete). A complete node that gains an
    in-edge, or a new in-edge that changes a kept value, would lose executions: that raises (an internal
    error, never a wrong answer).
    Measured against fresh constants with one implication per in-edge (`taken -> g`, `taken -> x == v`):
    BMC of an accelerated array program (quantified guards) timed out at bound 1 (20 s) with 10 nodes, 2 of
    them open; with the terms it answers in 0.05 s.
    """

    def __init__(self, enc: Encoder, entry: Hashable, env0: Mapping[str, z3.ExprRef],
                 key: Callable[[Hashable], tuple], successors: Callable[[Hashable], Sequence[tuple[Edge, Hashable]]],
                 is_open: Callable[[Hashable], Mapping[str, object] | None], sinks: frozenset = frozenset(),
                 stable: frozenset = frozenset(), name_guards: bool = True, one_way_binders: bool = False):
        self.enc, self.key, self.successors, self.is_open = enc, key, successors, is_open
        self.sinks, self.stable, self.name_guards = sinks, stable, name_guards
        self.dag = DagEncoding(DagSpec(entry, [], {}), {entry: TRUE}, {entry: SsaEnv.of(env0, entry=True)},
                               {}, {}, [], [], [],
                               one_way_binders)
        self.visited: set[Hashable] = set()              # nodes whose out-edges are encoded
        self.more: dict[Hashable, z3.BoolRef] = {}       # open nodes: their current completeness literal
        self.opened: set[Hashable] = set()               # nodes ever encoded open
        self.used_in: dict[Hashable, int] = {}           # open nodes: in-edges already encoded
        self.tails: dict[Hashable, dict[str, z3.ExprRef]] = {}   # open nodes: their values' undefined rest
        self.kept: dict[Hashable, dict[str, object]] = {}        # open nodes: values every in-edge carries
        self.sink_edges: list[EdgeEnc] = []              # non-false edges into sinks found by the last `grow`
        self._heap: list = [(key(entry), 0, entry)]
        self._queued = {entry}
        self._tie = 0
        self._side = 0                                   # `dag.side` constraints already returned
        self.new_violations: list[Violation] = []

    @property
    def nodes(self) -> int:
        return len(self.visited)

    def assumptions(self) -> list[z3.BoolRef]:
        """No open node has an in-edge beyond those encoded so far."""
        return [z3.Not(m) for m in self.more.values()]

    def redirect(self, ee: EdgeEnc, dst: Hashable) -> None:
        """An edge that ended in a sink now leads to `dst` (encoded by the next `grow`)."""
        ee.dst = dst
        self.dag.incoming.setdefault(dst, []).append(ee)
        self._push(dst)

    def _push(self, node: Hashable) -> None:
        if node not in self._queued:
            self._queued.add(node)
            self._tie += 1
            heapq.heappush(self._heap, (self.key(node), self._tie, node))

    def grow(self) -> list[z3.BoolRef]:
        """Encode every node reachable from the pending ones; the constraints not returned before.
        `new_violations` and `sink_edges` are those of this step."""
        enc, dag = self.enc, self.dag
        nv = len(dag.violations)
        self.sink_edges = []
        count = 0
        while self._heap:
            count += 1
            if count % 256 == 0:
                check_deadline(enc.deadline)
            _, _, node = heapq.heappop(self._heap)
            if node in self.visited:
                self._extend(node)
                continue
            if node != dag.spec.entry:
                ins = [ee for ee in dag.incoming.get(node, ()) if not is_false(ee.taken)]
                if not ins:
                    continue
            outs = self.successors(node)
            if node != dag.spec.entry:
                fixed = self.is_open(node)
                if fixed is not None:
                    self._open(node, ins, fixed)
                else:
                    _join(enc, dag, node, ins, bool(outs), False, self.name_guards)
            self.visited.add(node)
            dag.spec.order.append(node)
            if outs:
                dag.spec.succ[node] = outs
            for ee in _outs(enc, dag, node, outs):
                if is_false(ee.taken):
                    continue
                if ee.dst in self.sinks:
                    self.sink_edges.append(ee)
                else:
                    self._push(ee.dst)
        self._queued = set()
        self.new_violations = dag.violations[nv:]
        new = dag.side[self._side:]
        self._side = len(dag.side)
        return new

    def _open(self, node: Hashable, ins: list[EdgeEnc], fixed: Mapping[str, object]) -> None:
        enc, dag = self.enc, self.dag
        self.opened.add(node)
        kept = {}
        for name, t0 in ins[0].env.items():
            if name in self.stable or (name in fixed and same_value(fixed[name], t0)
                                       and all(same_value(ee.env[name], t0) for ee in ins[1:])):
                kept[name] = t0
        self.kept[node] = kept
        g, env = self._chain(node, ins, [n for n in ins[0].env if n not in kept], True)
        dag.envs[node] = SsaEnv.of({**env, **kept})
        gc = z3.Bool(enc.fresh_name("g"))
        dag.aux.append(gc)
        dag.side.append(gc == g)
        dag.guards[node] = gc

    def _chain(self, node: Hashable, ins: list[EdgeEnc], names: list[str], still_open: bool
               ) -> tuple[z3.BoolRef, dict[str, z3.ExprRef]]:
        """The guard and the values of `names` over `ins`: `Or(taken_1, ..., more)` and
        `If(taken_1, v_1, ... If(taken_n, v_n, tail))` with a fresh `more` literal and `tail` constants when
        `still_open`, which a later step defines; else `encode_dag`'s terms. (Measured, integer BMC of
        /tmp/i14/twoloop_mod.c at bound 64: 0.3 s; with `If(more, tail, If(taken_1, v_1, ... v_n))`, which
        keeps the last in-edge as the default, 35 s, though bit-vectors gained from it: 2.5 vs 4.6 s at 32.)"""
        enc, dag = self.enc, self.dag
        self.used_in[node] = len(dag.incoming.get(node, ()))
        takens = [ee.taken for ee in ins]
        more = None
        if still_open:
            more = z3.Bool(enc.fresh_name("more"))
            dag.aux.append(more)
            self.more[node] = more
            self.tails[node] = {}
            takens.append(more)
        env: dict[str, z3.ExprRef] = {}
        for name in names:
            ty = enc.var_types[name]
            if more is not None:
                r = enc.const(enc.fresh_name(name, "t"), ty)
                dag.aux.append(r)
                self.tails[node][name] = r
                rest = ins
            else:
                r, rest = enc.term(ins[-1].env[name], ty), ins[:-1]
            for ee in reversed(rest):
                r = mk_ite(ee.taken, enc.term(ee.env[name], ty), r)
            env[name] = r
        return mk_or(*takens), env

    def _extend(self, node: Hashable) -> None:
        """New in-edges of an encoded node: it must be open; define its `more` literal and tail constants."""
        dag = self.dag
        incoming = dag.incoming.get(node, ())
        new = [ee for ee in incoming[self.used_in.get(node, len(incoming)):] if not is_false(ee.taken)]
        if not new:
            return
        if node not in self.more:
            raise AssertionError(f"unrolling node {node} gained an in-edge after it was encoded as complete")
        for name, t in self.kept[node].items():
            if not all(same_value(ee.env[name], t) for ee in new):
                raise AssertionError(f"unrolling node {node}: a new in-edge changes {name}, taken for fixed")
        more, tails = self.more.pop(node), self.tails.pop(node)
        g, env = self._chain(node, new, list(tails), self.is_open(node) is not None)
        dag.side.append(more == g)
        dag.side.extend(t == env[n] for n, t in tails.items())


def _visit(enc: Encoder, dag: DagEncoding, node: Hashable, outs: Sequence[tuple[Edge, Hashable]] | None,
           want_env: bool, join_consts: bool, name_guards: bool) -> list[EdgeEnc] | None:
    """Guard and merged values of `node` from its (already encoded) in-edges, then its out-edges.
    None if the node is unreachable."""
    if node != dag.spec.entry:
        ins = [ee for ee in dag.incoming.get(node, ()) if not is_false(ee.taken)]
        if not ins:
            return None
        _join(enc, dag, node, ins, bool(outs) or want_env, join_consts, name_guards)
    return _outs(enc, dag, node, outs) if outs else []


def _join(enc: Encoder, dag: DagEncoding, node: Hashable, ins: list[EdgeEnc], want_env: bool,
          join_consts: bool, name_guards: bool) -> None:
    """A node's guard (the disjunction of its non-false in-edges) and, if wanted, its merged values."""
    g = mk_or(*(ee.taken for ee in ins))
    if name_guards and z3.Z3_get_app_num_args(g.ctx_ref(), g.ast) > 0:
        gc = z3.Bool(enc.fresh_name("g"))
        dag.aux.append(gc)
        dag.side.append(gc == g)
        g = gc
    dag.guards[node] = g
    if want_env:
        dag.envs[node] = _merge(enc, dag, ins, join_consts)


def _outs(enc: Encoder, dag: DagEncoding, node: Hashable, outs: Sequence[tuple[Edge, Hashable]] | None
          ) -> list[EdgeEnc]:
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
        prefix.append(mk_not(c))
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
    post = env.written(written)
    return EdgeEnc(node, edge, dst, taken, post, written, havocs, cells)


def _named(enc: Encoder, dag: DagEncoding, c: z3.BoolRef) -> z3.BoolRef:
    """A fresh Boolean defined as `c`: a model gives it a value even when `c` is a quantifier (accelerated
    programs' guards), which `model.eval` often cannot evaluate, so the path through it can be read off."""
    q = z3.Bool(enc.fresh_name("quant"))
    dag.aux.append(q)
    dag.side.append(z3.Implies(q, c) if dag.one_way_binders else q == c)
    return q


def _merge(enc: Encoder, dag: DagEncoding, ins: list[EdgeEnc], join_consts: bool) -> SsaEnv:
    if len(ins) == 1:
        return ins[0].env
    names, common = _diverged([ee.env for ee in ins])
    first = ins[0].env
    merged: dict[str, object] = {}
    for name in names:
        t0 = first[name]
        terms = [t0]
        same = True
        for ee in ins[1:]:
            t = ee.env[name]
            terms.append(t)
            if same and not same_value(t, t0):
                same = False
        if same:
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
    # every name written since `common` is logged again: it may differ from its value there
    return SsaEnv(first.values.update(merged) if merged else first.values,
                  (tuple(names), common, _depth(common) + 1) if names else common)


def _complementary(c: Expr, d: Expr) -> bool:
    """Syntactically exclusive and exhaustive branch conditions."""
    if c == not_(d) or d == not_(c):
        return True
    if isinstance(c, Compare) and isinstance(d, Compare) and c.lhs == d.lhs and c.rhs == d.rhs:
        return {c.op, d.op} in ({"<", ">="}, {"<=", ">"}, {"==", "!="})
    return False


def same_value(a, b) -> bool:
    if a is b:
        return True
    za, zb = isinstance(a, z3.ExprRef), isinstance(b, z3.ExprRef)
    if za and zb:
        return a.ast.value == b.ast.value
    return not za and not zb and a == b
