"""Which object ids a pointer can hold, and the comparisons with other ids dropped from the CFA.

Why: a dereference is a case split over every object of the pointee's type (`memory.py`), so in a program with
hundreds of char arrays (string literals, tables) every `s[i]` is a chain of hundreds of `id == k` cases, which
the encoding and every engine then carry. The lowering knows where an object's id is stored: only in the id
leaves of pointer objects (and in temporaries that copy one when they are made). So a flow-insensitive fixpoint
over the program's assignments gives each such variable the set of values it can be assigned (`values`: constants
joined through `?:`, array stores and selects; anything computed, a havoc, or more than `LIMIT` values is
"any"), and a comparison `v == k` with k outside the set is false on every run that assigned v first.

A local whose block may be entered again has a variable id, a new one per birth (`StorageMixin._new_instance`):
its id variable is seeded with `Instances`, the one value that stands for them all, so that a pointer copying it
is known to designate that object and `x == k` is dropped for every constant k no instance id equals (a static
id, say: the `dest == A` case of a copy into a called function's local buffer).

Soundness: inlining gives every call its own variables, so the sets are per call site. A variable read before any
assignment holds an indeterminate value; for a pointer that is undefined behaviour (C11 6.3.2.1p2, J.2), which
the dereference checks (valid-memsafety) or does not follow (other properties) either way, so dropping the cases
it could match changes no defined run. (The converse, `v == k` true where k is v's only value, would not be
sound: a pointer read uninitialised must stay an invalid access under valid-memsafety.)

`resolved_ids` adds what straight-line code decides: within one edge, a pointer assigned an object's id holds it
until either is written again (a function's locals are one set of variables for all its inlined calls, so the
flow-insensitive sets above mix every call's objects).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from looprover.program.cfa import Assign, Assume, Assert, Edge, Havoc
from looprover.properties import UNMODELLED
from looprover.program.expr import (
    ArrayType, Compare, ConstArray, Expr, IntConst, IntType, Ite, Select, Store, Var, FALSE, TRUE, transform,
)

LIMIT = 256          # more values than this: any value
ANY = None           # the set of every value


@dataclass(frozen=True)
class Instances:
    """The ids of a local with a variable id, `obj` its static id: -obj, -obj - N, -obj - 2N, ...
    (`StorageMixin._new_instance`), taken here as every id at or below -obj, none of them NULL or a static id."""
    obj: int

    def holds(self, k: int) -> bool:
        return k <= -self.obj


def may_equal(vs: frozenset, k: int) -> bool:
    """Whether a value of the (known) set `vs` may be `k`."""
    return k in vs or any(isinstance(x, Instances) and x.holds(k) for x in vs)


def object_index(x) -> int:
    """The static id of the object a value of a set designates (an id, or `Instances` of one)."""
    return x.obj if isinstance(x, Instances) else x


def _value_set(e: Expr, sets: dict, memo: dict):
    """The values `e` can have, given the variables' sets (ANY for variables outside `sets`). `memo` holds each
    term with its set: an id alone could be a freed term's, reused (the terms `narrowed` rebuilds are transient)."""
    got = memo.get(id(e))
    if got is not None and got[0] is e:
        return got[1]
    if isinstance(e, IntConst):
        r = frozenset((e.value,))
    elif isinstance(e, Var):
        r = sets.get(e, ANY)
    elif isinstance(e, Ite):
        r = _union(_value_set(e.then, sets, memo), _value_set(e.orelse, sets, memo))
    elif isinstance(e, Select):
        r = _value_set(e.array, sets, memo)
    elif isinstance(e, Store):
        r = _union(_value_set(e.array, sets, memo), _value_set(e.value, sets, memo))
    elif isinstance(e, ConstArray):
        r = _value_set(e.value, sets, memo)
    else:
        r = ANY
    memo[id(e)] = (e, r)
    return r


def _union(a, b):
    if a is ANY or b is ANY:
        return ANY
    u = a | b
    return ANY if len(u) > LIMIT else u


def values(edges: list[Edge], tracked: set[Var], seeds: dict | None = None, havocs_indeterminate: bool = False,
           valued: frozenset = frozenset()) -> dict[Var, frozenset | None]:
    """For each tracked variable, the values its assignments can give it (ANY: unknown). `seeds` fixes the sets
    of some variables, whatever their assignments: the ids a pool's allocation gives, one value standing for the
    pool's objects (`heap.py`; they lie far above every constant the program compares ids with). With
    `havocs_indeterminate` a havoc adds no value: the front-end havocs a pointer only where C leaves its value
    indeterminate (an uninitialised local, the contents of a malloc), and an object reached through such a value
    is no object the program stored there (`void_pointers.check_void_sites`); but for the variables `valued`,
    whose havocs the front-end constrains to values (main's argv array, `main_args.py`)."""
    seeds = seeds or {}
    rhs: dict[Var, list] = {v: [] for v in tracked if v not in seeds}
    for e in edges:
        for s in e.stmts:
            if isinstance(s, Assign) and s.lhs in rhs:
                rhs[s.lhs].append(s.rhs)
            elif isinstance(s, Havoc):
                for v in s.vars:
                    if v in rhs and (not havocs_indeterminate or v in valued):
                        rhs[v].append(None)
    sets: dict[Var, frozenset | None] = {v: frozenset() for v in rhs}
    sets.update(seeds)
    changed = True
    while changed:           # sets only grow, and at most LIMIT + 1 times each: this ends
        changed = False
        memo: dict = {}
        for v, exprs in rhs.items():
            if sets[v] is ANY:
                continue
            acc = sets[v]
            for x in exprs:
                acc = ANY if x is None else _union(acc, _value_set(x, sets, memo))
                if acc is ANY:
                    break
            if acc != sets[v]:     # (the memo may hold older sets: the next round starts afresh)
                sets[v] = acc
                changed = True
    return sets


def narrowed(edges: list[Edge], tracked: set[Var], seeds: dict | None = None) -> list[Edge]:
    """The edges with every `x == k` (k a constant) that no value of x can satisfy replaced by false (x an
    expression over the tracked variables; `seeds` as for `values`), and the writes that leaves without effect
    dropped."""
    sets = values(edges, tracked, seeds)
    if all(s is ANY for s in sets.values()):
        return edges
    memo: dict = {}
    rewritten: dict = {}        # shared by every statement's `transform` (one `fold`)

    def fold(n: Expr):
        if isinstance(n, Compare) and n.op == "==":
            x, k = (n.lhs, n.rhs) if isinstance(n.rhs, IntConst) else (n.rhs, n.lhs)
            if isinstance(k, IntConst):
                vs = _value_set(x, sets, memo)
                if vs is not ANY and not may_equal(vs, k.value):
                    return FALSE
        if isinstance(n, Store) and n.value == Select(n.array, n.index, n.value.type):
            return n.array      # a write of the object the pointer cannot designate (`a[i] = false ? v : a[i]`)
        return None

    out = []
    for e in edges:
        stmts = []
        for s in e.stmts:
            if isinstance(s, Assign):
                s = replace(s, rhs=transform(s.rhs, fold, rewritten))
                if s.rhs == s.lhs:
                    continue
            elif isinstance(s, (Assume, Assert)):
                s = replace(s, cond=transform(s.cond, fold, rewritten))
            stmts.append(s)
        out.append(Edge(e.src, e.dst, tuple(stmts)))
    return out


def resolved_ids(edges: list[Edge], distinct: frozenset[Var]) -> list[Edge]:
    """The edges with the id comparisons that straight-line code decides folded: `v == w` where both hold the same
    value (the same variable, or `v` assigned `w` earlier on the edge and neither written since) is true, and
    where they hold the current ids of two different objects of `distinct` it is false (an id at or above 0,
    NULL or a static id, is no such object's either). `distinct`: the id variables of the locals registered before
    `StorageMixin.id_step` was fixed, whose ids -k - jN never meet (`_new_instance`).

    Why: a function's locals are one set of variables for all its inlined calls, so `values` (flow-insensitive)
    gives `input = ctx->input` in Monocypher's blake2b_compress every call's `ctx`, and each `input[i]` stays a
    case split over every u64 array of the program (172 K statements per line of its rounds); on the edge itself
    the pointer holds one known id."""
    def same(a: Expr, b: Expr) -> bool | None:
        if isinstance(a, Var) and a == b and not isinstance(a.type, ArrayType):
            return True     # (variables only: `x + 1 == x + 1` keeps the arithmetic `check` instruments later)
        if a in distinct and (b in distinct or (isinstance(b, IntConst) and b.value >= 0)):
            return False
        if b in distinct and isinstance(a, IntConst) and a.value >= 0:
            return False
        return None

    out = []
    for e in edges:
        known: dict[Var, Var] = {}          # a variable -> the id variable it holds here
        memo: dict = {}

        def fold(n: Expr):
            if isinstance(n, Compare) and n.op in ("==", "!="):
                a = known.get(n.lhs, n.lhs) if isinstance(n.lhs, Var) else n.lhs
                b = known.get(n.rhs, n.rhs) if isinstance(n.rhs, Var) else n.rhs
                s = same(a, b)
                if s is not None:
                    return TRUE if s == (n.op == "==") else FALSE
            return None

        stmts = []
        changed = False
        for s in e.stmts:
            if isinstance(s, Assign):
                r = transform(s.rhs, fold, memo)
                if r is not s.rhs:
                    s, changed = replace(s, rhs=r), True
                written = (s.lhs,)
            elif isinstance(s, (Assume, Assert)):
                c = transform(s.cond, fold, memo)
                if c is not s.cond:
                    changed = True
                    if c == TRUE and (isinstance(s, Assume) or s.prop in UNMODELLED):
                        continue    # (a check keeps its assertion: it is listed, and shown safe)
                    s = replace(s, cond=c)
                written = ()
            elif isinstance(s, Havoc):
                written = s.vars
            else:
                written = ()
            if written:
                gone = set(written)
                if any(v in gone or w in gone for v, w in known.items()):
                    known = {v: w for v, w in known.items() if v not in gone and w not in gone}
                    memo = {}       # what `fold` gave depends on `known`
                if isinstance(s, Assign) and isinstance(s.lhs.type, IntType) and s.lhs not in distinct:
                    w = known.get(s.rhs, s.rhs) if isinstance(s.rhs, Var) else s.rhs
                    if w in distinct:
                        known[s.lhs] = w
                        memo = {}
            stmts.append(s)
        out.append(Edge(e.src, e.dst, tuple(stmts)) if changed else e)
    return out
