"""Constant-folding z3 term builders (`mk_and`, `mk_or`, `mk_not`, `mk_ite`) and cheap literal tests.

Every encoder builds its formulas through these: folding `true`/`false` as terms are built keeps node guards
small and lets infeasible parts of an unrolling fold away entirely, which z3's own constructors do not do.
They live apart from the encoders so that the expression encoder, the DAG encoding, the CPG transition system
and the engines share one definition.
"""
from __future__ import annotations

from collections.abc import Iterator

import z3

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)

# Python-side checks on z3 terms cost several C calls each through the z3 wrapper; on big unrollings they
# dominated encoding time. Terms are hash-consed, so literal true/false are recognised by AST pointer.
_TRUE_P = TRUE.ast.value
_FALSE_P = FALSE.ast.value


def is_false(t: z3.ExprRef) -> bool:
    return t.ast.value == _FALSE_P


def _same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    return a is b or a.ast.value == b.ast.value


def is_val(t: z3.ExprRef) -> bool:
    """`t` is a literal: true, false or a numeral."""
    p = t.ast.value
    return p == _TRUE_P or p == _FALSE_P or z3.Z3_is_numeral_ast(t.ctx_ref(), t.ast)


def mk_and(*args: z3.BoolRef) -> z3.BoolRef:
    """Conjunction with constant folding (keeps guards small; folds whole unrolled paths away)."""
    out = []
    for a in args:
        p = a.ast.value
        if p == _FALSE_P:
            return FALSE
        if p != _TRUE_P:
            out.append(a)
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else _nary(z3.Z3_mk_and, z3.And, out)


def mk_or(*args: z3.BoolRef) -> z3.BoolRef:
    out = []
    for a in args:
        p = a.ast.value
        if p == _TRUE_P:
            return TRUE
        if p != _FALSE_P:
            out.append(a)
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else _nary(z3.Z3_mk_or, z3.Or, out)


def mk_not(a: z3.BoolRef) -> z3.BoolRef:
    p = a.ast.value
    if p == _TRUE_P:
        return FALSE
    if p == _FALSE_P:
        return TRUE
    return z3.BoolRef(z3.Z3_mk_not(a.ctx.ref(), a.as_ast()), a.ctx)


def mk_ite(c: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    p = c.ast.value
    if p == _TRUE_P or _same(a, b):
        return a
    if p == _FALSE_P:
        return b
    ctx = c.ctx
    if a.ctx is not ctx or b.ctx is not ctx:
        return z3.If(c, a, b)           # raises z3's own error
    return z3.z3._to_expr_ref(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()), ctx)


def _nary(mk, checked, args: list[z3.BoolRef]) -> z3.BoolRef:
    """`mk` (Z3_mk_and or Z3_mk_or) called directly: z3's Python `And`/`Or` coerce and type-check every
    argument through several wrapper calls, ten times the cost of the C call (a third of BMC's encoding time
    on the fm24 unrollings). Arguments of different contexts go to `checked`, whose error names the
    mismatch; an argument that is not Boolean makes z3 raise its sort-mismatch error either way."""
    ctx = args[0].ctx
    n = len(args)
    arr = (z3.Ast * n)()
    for i, a in enumerate(args):
        if not isinstance(a, z3.ExprRef) or a.ctx is not ctx:
            return checked(*args)
        arr[i] = a.as_ast()
    return z3.BoolRef(mk(ctx.ref(), n, arr), ctx)


def all_of(fs: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """The conjunction of `fs` in context `ctx` (true for none), without folding: for formulas kept in a context
    of their own (interpolation problems, TPA levels), where `mk_and`'s default context does not apply."""
    return z3.BoolVal(True, ctx) if not fs else fs[0] if len(fs) == 1 else _nary(z3.Z3_mk_and, z3.And, fs)


def any_of(fs: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """The disjunction of `fs` in context `ctx` (false for none), without folding."""
    return z3.BoolVal(False, ctx) if not fs else fs[0] if len(fs) == 1 else _nary(z3.Z3_mk_or, z3.Or, fs)


def subterms(f: z3.ExprRef) -> Iterator[z3.ExprRef]:
    """Each distinct sub-term of `f` once (parents before their children); a quantifier is yielded but not
    entered."""
    ctx = f.ctx
    return (z3.z3._to_expr_ref(a, ctx) for a in distinct_asts(f, into_quantifiers=False, in_order=False))


def distinct_asts(*formulas: z3.ExprRef, into_quantifiers: bool = True, in_order: bool = True) -> Iterator:
    """The raw ASTs of the formulas (one context), each distinct one once, parents before their children:
    the one walk of z3 terms through the C API (the Python wrapper's `children()`/`is_app()` cost about ten
    times as much per node). With `in_order` the first visit of each term is in left-to-right pre-order, so
    what the callers collect comes in the order of the text; quantifier bodies are entered with
    `into_quantifiers` (their bound variables are `Var`s, never uninterpreted constants). The formulas keep
    every raw sub-term alive during the walk."""
    if not formulas:
        return
    c = formulas[0].ctx.ref()
    seen: set[int] = set()
    for f in formulas:
        todo = [f.as_ast()]
        while todo:
            a = todo.pop()
            i = z3.Z3_get_ast_id(c, a)
            if i in seen:
                continue
            seen.add(i)
            yield a
            kind = z3.Z3_get_ast_kind(c, a)
            if kind == z3.Z3_APP_AST:
                n = z3.Z3_get_app_num_args(c, a)
                todo.extend(z3.Z3_get_app_arg(c, a, k) for k in (range(n - 1, -1, -1) if in_order else range(n)))
            elif kind == z3.Z3_QUANTIFIER_AST and into_quantifiers:
                todo.append(z3.Z3_get_quantifier_body(c, a))


def dag_size(f: z3.ExprRef) -> int:
    """The number of distinct sub-terms of `f` (a quantifier counts as one)."""
    return sum(1 for _ in distinct_asts(f, into_quantifiers=False, in_order=False))


def uninterpreted_apps(f: z3.ExprRef) -> Iterator[z3.ExprRef]:
    """Each distinct application of an uninterpreted symbol in `f` once, in the order of the text (constants
    included; quantifier bodies entered), the only terms of `f` wrapped as Python objects: on clauses of a few
    hundred terms the wrapper's walk was most of the CHC front-end's time."""
    ctx = f.ctx
    c = ctx.ref()
    for a in distinct_asts(f):
        if z3.Z3_get_ast_kind(c, a) == z3.Z3_APP_AST and \
                z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, a)) == z3.Z3_OP_UNINTERPRETED:
            yield z3.z3._to_expr_ref(a, ctx)


def conjuncts(f: z3.BoolRef) -> list[z3.BoolRef]:
    """The conjuncts of `f` (nested `And`s flattened, `true` dropped), in order."""
    out, todo = [], [f]
    while todo:
        g = todo.pop()
        if z3.is_and(g):
            todo.extend(reversed(g.children()))
        elif not z3.is_true(g):
            out.append(g)
    return out


def clauses(f: z3.BoolRef, limit: int) -> list[z3.BoolRef]:
    """`f`'s conjuncts, each disjunction of conjunctions distributed into clauses (`a ∨ (b ∧ c)` becomes
    `a ∨ b`, `a ∨ c`) when that makes at most `limit` clauses of it; otherwise the conjunct as it is. An
    equivalent set of facts, but finer: a subset of clauses can hold (be transitive, be needed in a core) where
    the whole disjunction does not."""
    out: list[z3.BoolRef] = []
    for c in conjuncts(f):
        if not z3.is_or(c):
            out.append(c)
            continue
        options = [conjuncts(d) or [d] for d in c.children()]
        count = 1
        for o in options:
            count *= len(o)
        if count > limit:
            out.append(c)
            continue
        rows: list[list[z3.BoolRef]] = [[]]
        for o in options:
            rows = [r + [d] for r in rows for d in o]
        out.extend(any_of(r, c.ctx) for r in rows)
    return out


class Renaming:
    """A substitution prepared once and applied to many terms. `z3.substitute` rebuilds its argument arrays on
    every call and, in z3's default debug mode, checks the sorts of every pair through several wrapper calls:
    reading a 406-step counterexample's trace (a step renaming of hundreds of pairs applied to every value read)
    spent 27 of 47 profiled seconds there."""

    def __init__(self, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]):
        self._pairs = pairs                              # keeps the ASTs the arrays point to alive
        n = len(pairs)
        self._from, self._to = (z3.Ast * n)(), (z3.Ast * n)()
        for i, (a, b) in enumerate(pairs):
            assert a.sort().eq(b.sort()), (a, b)
            self._from[i], self._to[i] = a.as_ast(), b.as_ast()

    def __call__(self, t: z3.ExprRef) -> z3.ExprRef:
        if not self._pairs:
            return t
        ctx = t.ctx
        return z3.z3._to_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), len(self._pairs), self._from, self._to),
                                  ctx)
