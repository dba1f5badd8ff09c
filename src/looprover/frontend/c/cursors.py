"""Questions about clang cursors that every part of the lowering asks (children, canonical kinds, array decay,
the variable an lvalue expression is rooted in).

Why a module: these are pure functions of the AST, independent of the lowering's state; statements,
expressions, side-effect analysis and the address-taken pre-pass all need the same answers.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.clang_api import children  # the lowering imports it from here with the rest

K = ci.CursorKind
TK = ci.TypeKind

ARRAY_KINDS = {TK.CONSTANTARRAY, TK.VARIABLEARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENTSIZEDARRAY}
FUNCTION_KINDS = {TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO}
INCDEC_OPS = {capi.UO_POST_INC, capi.UO_POST_DEC, capi.UO_PRE_INC, capi.UO_PRE_DEC}
# clang's builtin types are canonical types: libclang reports one of these kinds only for a builtin type
# (sugar such as typedefs has its own kinds), so its canonical type is itself, qualifiers included.
_BUILTIN_KINDS = {
    TK.VOID, TK.BOOL, TK.CHAR_U, TK.UCHAR, TK.CHAR16, TK.CHAR32, TK.USHORT, TK.UINT, TK.ULONG, TK.ULONGLONG,
    TK.UINT128, TK.CHAR_S, TK.SCHAR, TK.WCHAR, TK.SHORT, TK.INT, TK.LONG, TK.LONGLONG, TK.INT128,
}


def expr_children(c: ci.Cursor) -> list[ci.Cursor]:
    return [k for k in children(c) if k.kind.is_expression()]


def strip_parens(c: ci.Cursor) -> ci.Cursor:
    while c.kind == K.PAREN_EXPR:
        c = children(c)[0]
    return c


def strip_implicit(c: ci.Cursor) -> ci.Cursor:
    """`c` without parentheses and clang's implicit conversions around it (a callee's decay to a function
    pointer, a literal's to a char pointer)."""
    c = strip_parens(c)
    while c.kind == K.UNEXPOSED_EXPR and len(children(c)) == 1:
        c = strip_parens(children(c)[0])
    return c


def called_function(call: ci.Cursor) -> ci.Cursor | None:
    """The function declaration a call expression names, through parentheses and implicit conversions
    (`(isdigit)(c)`); None for a call through a function pointer."""
    ks = children(call)
    callee = strip_implicit(ks[0]) if ks else None
    ref = callee.referenced if callee is not None and callee.kind == K.DECL_REF_EXPR else None
    return ref if ref is not None and ref.kind == K.FUNCTION_DECL else None


def denotes_param(c: ci.Cursor) -> bool:
    while c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        ks = children(c)
        if len(ks) != 1:
            return False
        c = ks[0]
    if c.kind != K.DECL_REF_EXPR:
        return False
    ref = c.referenced
    return ref is not None and ref.kind == K.PARM_DECL


def canonical_type(t: ci.Type) -> ci.Type:
    """t's canonical type. Most expressions have a builtin type, which is its own canonical type: skipping
    libclang's canonicalisation for them saves a native call and a Python wrapper per expression."""
    return t if t.kind in _BUILTIN_KINDS else t.get_canonical()


def canonical_kind(c: ci.Cursor):
    """The canonical type kind of an expression. libclang shows a parameter declared as an array (`int a[]`)
    with its written array type although C adjusts it to a pointer; we undo that here."""
    k = canonical_type(c.type).kind
    if k in ARRAY_KINDS and denotes_param(c):
        return TK.POINTER
    return k


def is_array_expr(c: ci.Cursor) -> bool:
    return canonical_kind(c) in ARRAY_KINDS


def is_array_decay(c: ci.Cursor) -> bool:
    """An implicit array-to-pointer conversion."""
    if c.kind != K.UNEXPOSED_EXPR or canonical_kind(c) != TK.POINTER:
        return False
    ks = children(c)
    return len(ks) == 1 and is_array_expr(ks[0])


def base_decl(e: ci.Cursor) -> ci.Cursor | None:
    """The variable or parameter declaration an lvalue expression designates (part of), looking through
    parentheses, member access and subscripts of arrays; None for anything reached through a pointer."""
    return designated(e)[0]


def pointee_member(e: ci.Cursor) -> tuple[ci.Type, tuple[str, ...]] | None:
    """(the struct type, the member path) when `e` designates a member of a struct reached through a pointer,
    through `.`s after `->` (or after `(*p)`, `p[i]`) and subscripts of the innermost member only: (T, ('down',))
    for `p->down` with p a `T *`, (T, ('a', 'b')) for `p->a.b`, `(*p).a.b`, `p[i].a.b`, (T, ('buf',)) for
    `p->buf[i]`; None otherwise (`memory.Obj.members`)."""
    path: list[str] = []
    own = True          # as in `designated`: subscripts of the innermost member only
    while True:
        k = e.kind
        if k == K.PAREN_EXPR or (k == K.UNEXPOSED_EXPR and len(children(e)) == 1 and not is_array_decay(e)):
            e = children(e)[0]
        elif k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = children(e)
            base = strip_parens(a if canonical_kind(a) == TK.POINTER else b)
            if not is_array_decay(base):        # `p[i].m`
                return (e.type.get_canonical(), tuple(path)) if own and path else None
            own = own and not path
            e = children(base)[0]
        elif k == K.UNARY_OPERATOR and capi.unary_op(e) == capi.UO_DEREF:      # `(*p).m`
            return (e.type.get_canonical(), tuple(path)) if own and path else None
        elif k == K.MEMBER_REF_EXPR:
            ks = children(e)
            if not ks:
                return None
            path.insert(0, e.spelling)
            if canonical_kind(ks[0]) == TK.POINTER:
                return (ks[0].type.get_canonical().get_pointee().get_canonical(), tuple(path)) if own else None
            e = ks[0]
        else:
            return None


def designated(e: ci.Cursor, members: bool = False) -> tuple[ci.Cursor | None, tuple[str, ...]]:
    """`base_decl(e)` and, with `members`, the members (outermost last) by which `e` designates part of that
    variable through `.` alone and subscripts of the innermost member only: ('buf',) for `s.buf`, `s.buf[i]`,
    `&s.buf[i]`; ('a', 'b') for `s.a.b`; () for a whole variable and for a member of an array element
    (`s.v[2].x`), which has no object of its own (`memory.Obj.members`). Without `members` the path is ()."""
    path: list[str] = []
    own = True          # the path names a member of the variable itself, not of one of its elements
    while True:
        k = e.kind
        if k == K.PAREN_EXPR:
            e = children(e)[0]
        elif k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = children(e)
            base = a if canonical_kind(a) == TK.POINTER else b
            base = strip_parens(base)
            if not is_array_decay(base):
                return None, ()
            own = own and not path
            e = children(base)[0]
        elif k == K.MEMBER_REF_EXPR:
            ks = children(e)
            if not ks or canonical_kind(ks[0]) == TK.POINTER:
                return None, ()
            if members:
                path.insert(0, e.spelling)
            e = ks[0]
        elif k == K.DECL_REF_EXPR:
            ref = e.referenced
            if ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL):
                return ref, tuple(path) if own else ()
            return None, ()
        elif k == K.UNEXPOSED_EXPR and len(children(e)) == 1 and not is_array_decay(e):
            e = children(e)[0]
        else:
            return None, ()

