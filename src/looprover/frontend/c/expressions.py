"""Expressions to typed IR values: literals, casts and conversions, unary and binary operators, `&&`/`||`/`?:`,
assignments, ++/--, compound assignments and GNU statement expressions.

Why a module: `rv(c)` is the dispatcher every other part calls to evaluate an expression; the rules that make
every C conversion explicit (`convert`, `to_bool`, the promotions of compound assignment and ++/--) live
next to it.
"""
from __future__ import annotations

import math

import clang.cindex as ci

from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import (
    CArray, CBool, CFunc, CInt, CPtr, CStruct, CType, CVoid, compatible, elements_in, innermost, is_char, is_floating,
)
from looprover.frontend.c.cursors import (
    ARRAY_KINDS, FUNCTION_KINDS, INCDEC_OPS, K, canonical_kind, children, expr_children, is_array_expr, strip_parens,
)
from looprover.frontend.c.memory import Val, idx_const, pointer, scalar
from looprover.frontend.c.state import LoweringState
from looprover.frontend.c.void_pointers import CHAR
from looprover.program.cfa import Assign
from looprover.program.expr import (
    BOOL, FALSE, TRUE, And, Binary, BoolConst, Cast, Compare, Expr, Ite, IntConst, IntType, Or, Unary, and_, cast,
    ite, not_, or_, walk,
)

_ARITH = {"+", "-", "*", "/", "%", "&", "|", "^"}
_SHIFT = {"<<", ">>"}
_CMP = {"<", ">", "<=", ">=", "==", "!="}


class ExpressionMixin(LoweringState):
    """`rv(c, want)` evaluates an expression (emitting its side effects; `want=False` discards the value);
    `convert(v, to)` and `to_bool(v)` are C's conversions."""

    def discard(self, c: ci.Cursor) -> None:
        """Evaluate c for its side effects, its value unused (`x + 1;`, `(void)e`, `return e` in main, the left
        operand of `,`, a `for` increment, an argument of `exit`)."""
        self.rv(c, want=False)

    def rv(self, c: ci.Cursor, want: bool = True) -> Val:
        """Evaluate expression c (emitting its side effects); `want=False` when the value is discarded.

        A discarded value is still evaluated: with `keep_values` (the no-overflow property, for which
        evaluating an operation is what counts) its operations stay in the program (`keep_operations`), whatever
        the expression (`x + 1;`, `f() + (x + 1);`), so no overflow check can vanish with an unused value.
        What is discarded at every level comes back empty, so an enclosing discard keeps nothing twice; an
        expression with nothing to evaluate (no side effect, no check, no kept operation) is not looked at."""
        if not want and not self.effectful(c) and not (self.keep_values and self.operates(c)):
            return Val(CVoid(), {})
        v = self._value(c, want)
        if want:
            return v
        if self.keep_values:
            self.keep_operations(v)
        return Val(v.ctype, {})

    def keep_operations(self, v: Val) -> Val:
        """`v` with every leaf that computes an operation (no-overflow: `keep_values`) evaluated here, into a
        temporary, so its checks are made at this point of the program; other leaves as they are."""
        if not self.keep_values:
            return v
        return Val(v.ctype, {p: (self.snap(e) if any(isinstance(n, (Binary, Unary)) for n in walk(e)) else e)
                             for p, e in v.leaves.items()})

    def unfolded(self, folded: Expr, operands, build) -> Expr:
        """`folded`, the simplified form of an expression over `operands` (`and_(x, FALSE)` is FALSE,
        `ite(c, t, t)` is t), unless `keep_values` is on and it dropped an operation of an operand that C
        evaluates: then `build()`, the expression without that simplification, whose operations the
        no-overflow checks see under the conditions that lead to them (`program/instrument.py`)."""
        if not self.keep_values:
            return folded
        kept = {n for n in walk(folded) if isinstance(n, (Binary, Unary))}
        if all(n in kept for e in operands for n in walk(e) if isinstance(n, (Binary, Unary))):
            return folded
        return build()

    def _value(self, c: ci.Cursor, want: bool) -> Val:
        k = c.kind
        if k == K.INTEGER_LITERAL or k == K.CHARACTER_LITERAL:
            t = self.ctype(c)
            v = capi.evaluate_int(c)
            if v is None or not isinstance(t, CInt):
                raise self.unsupported("literal", c)
            return scalar(t, IntConst(IntType(t.bits, t.signed).wrap(v), IntType(t.bits, t.signed)))
        if k == K.PAREN_EXPR:
            return self.rv(children(c)[0], want)
        if k == K.UNEXPOSED_EXPR:
            return self._unexposed(c, want)
        if k == K.CSTYLE_CAST_EXPR:
            ch = expr_children(c)[-1]
            to = self.ctype(c)
            if isinstance(to, CVoid) or not want:
                self.discard(ch)
                return Val(to, {})
            if is_array_expr(ch):
                return self.convert(self.decay_array(ch), to, c)
            return self._converted(ch, to, c)
        if k == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is not None and ref.kind == K.ENUM_CONSTANT_DECL:
                t = self.ctype(c)
                it = IntType(t.bits, t.signed)
                return scalar(t, IntConst(it.wrap(ref.enum_value), it))
            if ref is not None and ref.kind == K.FUNCTION_DECL:
                return self.function_value(c)
            if ref is not None and self.frames:
                b = self.frames[-1].bound.get(ref.canonical)
                if b is not None:
                    return b
            return self.read(self.lv(c))
        if k in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR):
            return self.read(self.lv(c))
        if k == K.UNARY_OPERATOR:
            return self._unary(c, want)
        if k == K.BINARY_OPERATOR:
            return self._binary(c, want)
        if k == K.COMPOUND_ASSIGNMENT_OPERATOR:
            return self._compound(c, want)
        if k == K.CONDITIONAL_OPERATOR:
            ks = children(c)
            return self._conditional(c, ks[0], ks[1], ks[2], want)
        if k == K.CALL_EXPR:
            return self.call(c, want)
        if k == K.CXX_UNARY_EXPR:
            v = capi.evaluate_int(c)
            t = self.ctype(c)
            if v is None or not isinstance(t, CInt):
                raise self.unsupported("sizeof of a variable-length array", c)
            it = IntType(t.bits, t.signed)
            return scalar(t, IntConst(it.wrap(v), it))
        if k == K.StmtExpr:
            return self._stmt_expr(c, want)
        if k == K.STRING_LITERAL:
            raise self.unsupported("string literal", c)
        if k == K.ADDR_LABEL_EXPR:
            raise self.unsupported("address of label (computed goto)", c)
        if k == K.INIT_LIST_EXPR:
            t = self.ctype(c)
            if isinstance(t, CStruct):
                obj = self.make_obj("tmp", t, "temp")
                lv = self.obj_lv(obj)
                self.initialize(lv, c)
                return self.read(lv)
            raise self.unsupported("initialiser list used as a value", c)
        if k == K.COMPOUND_LITERAL_EXPR:
            raise self.unsupported("compound literal", c)
        if k in (K.FLOATING_LITERAL, K.IMAGINARY_LITERAL):
            raise self.unsupported("floating-point literal", c)
        raise self.unsupported(f"expression {k.name}", c)

    def _unexposed(self, c: ci.Cursor, want: bool) -> Val:
        ks = children(c)
        if len(ks) == 1:
            ch = ks[0]
            to = self.ctype(c)
            chk = canonical_kind(ch)
            if isinstance(to, CArray) and chk not in ARRAY_KINDS:
                # an argument converted to a parameter declared as an array: libclang gives the conversion the
                # declared type (clang's DecayedType); C converts to the pointer it adjusts to (C11 6.7.6.3p7)
                to = CPtr(to.elem)
            if chk in ARRAY_KINDS and isinstance(to, CPtr):
                return self.convert(self.decay_array(ch), to, c)
            if chk in FUNCTION_KINDS:
                return self.function_value(ch)
            if isinstance(to, CVoid) or not want:
                self.rv(ch, want=False)
                return Val(to, {})
            return self._converted(ch, to, c)
        if len(ks) == 4 and self._is_binary_conditional(c):  # GNU `a ?: b`
            common, _, _, other = ks
            if self.effectful(common):
                raise self.unsupported("'?:' with side effects in its condition", c)
            return self._conditional(c, common, common, other, want)
        if all(not k.kind.is_expression() for k in ks):
            t = self.ctype(c)
            v = capi.evaluate_int(c)
            if v is not None and isinstance(t, CInt):
                it = IntType(t.bits, t.signed)
                return scalar(t, IntConst(it.wrap(v), it))
            if not ks and (isinstance(t, (CInt, CBool, CPtr, CStruct))):
                return self.zero(t)  # implicit value initialisation
        toks = " ".join(x.spelling for x in c.get_tokens())[:40]
        raise self.unsupported(f"expression '{toks}'", c)

    @staticmethod
    def _is_binary_conditional(c: ci.Cursor) -> bool:
        toks = [t.spelling for t in c.get_tokens()]
        return any(a == "?" and b == ":" for a, b in zip(toks, toks[1:]))

    def _unary(self, c: ci.Cursor, want: bool) -> Val:
        op = capi.unary_op(c)
        ch = children(c)[0]
        if op in INCDEC_OPS:
            return self._incdec(c, ch, op, want)
        if op == capi.UO_ADDR_OF:
            t = self.ctype(c)
            if ch.type.get_canonical().kind in FUNCTION_KINDS:
                return self.function_value(ch)
            lv = self.lv(ch)
            if lv.addr is None and self.cur is None:   # dead code (a dereference no object can satisfy)
                return pointer(t, IntConst(0, self.OBJ), idx_const(0, self.IDX))
            if lv.addr is None:
                raise self.unsupported("address of a union member" if lv.unions else "address of a struct member", c)
            self.check_addr(lv, c)
            return pointer(t, lv.addr[0], lv.addr[1])
        if op == capi.UO_DEREF:
            if canonical_kind(c) in FUNCTION_KINDS:   # `*fp`: a function designator
                return self.function_value(c)
            return self.read(self.lv(c))
        if op == capi.UO_EXTENSION:
            return self.rv(ch, want)
        t = self.ctype(c)
        if op == capi.UO_PLUS:
            return self.convert(self.rv(ch), t, c)
        if op in (capi.UO_MINUS, capi.UO_NOT):
            v = self.convert(self.rv(ch), t, c)
            if not isinstance(t, CInt):
                raise self.unsupported(f"unary operator on {t}", c)
            e = v.e
            sym = "-" if op == capi.UO_MINUS else "~"
            if isinstance(e, IntConst):
                it = IntType(t.bits, t.signed)
                val = -e.value if sym == "-" else ~e.value
                if it.contains(val) or not it.signed:
                    return scalar(t, IntConst(it.wrap(val), it))
            return scalar(t, Unary(sym, e, e.type))
        if op == capi.UO_LNOT:
            b = self.to_bool(self.rv(ch))
            return self._bool_result(c, not_(b))
        raise self.unsupported("unary operator (complex numbers)", c)

    def _bool_result(self, c, b: Expr) -> Val:
        t = self.ctype(c)
        if isinstance(t, CBool):
            return scalar(t, b)
        return scalar(t, cast(IntType(t.bits, t.signed), b))

    def _binary(self, c: ci.Cursor, want: bool) -> Val:
        op = capi.binary_op(c)
        a, b = children(c)
        if op == ",":
            self.discard(a)
            return self.rv(b, want)
        if op == "=":
            return self._assign(c, a, b, want)
        if op in ("&&", "||"):
            return self._logical(c, op, a, b, want)
        va = self.protect(self.rv(a), [b])
        vb = self.rv(b)
        t = self.ctype(c)
        ta, tb = va.ctype, vb.ctype
        if op in _CMP:
            if isinstance(ta, CPtr) or isinstance(tb, CPtr):
                return self._bool_result(c, self._ptr_cmp(op, va, vb, c))
            if ta != tb:
                raise self.unsupported(f"comparison of {ta} and {tb}", c)
            return self._bool_result(c, Compare(op, va.e, vb.e))
        if isinstance(t, CPtr):
            if op == "+":
                if isinstance(ta, CPtr):
                    return self.convert(self.ptr_add(va, self.to_index(vb, b), +1), t, c)
                return self.convert(self.ptr_add(vb, self.to_index(va, a), +1), t, c)
            if op == "-" and isinstance(ta, CPtr):
                return self.convert(self.ptr_add(va, self.to_index(vb, b), -1), t, c)
            raise self.unsupported(f"pointer operator '{op}'", c)
        if isinstance(ta, CPtr) and isinstance(tb, CPtr) and op == "-":
            if not isinstance(t, CInt) or isinstance(ta.pointee, CFunc):
                raise self.unsupported("pointer difference" + (" of function pointers" if isinstance(t, CInt)
                                                               else ""), c)
            if isinstance(ta.pointee, CVoid):       # GNU: a difference of bytes (`void_pointers.py`)
                self.void_site(va, CHAR, access=False)
                self.void_site(vb, CHAR, access=False)
            return scalar(t, cast(IntType(t.bits, t.signed), Binary("-", va.off, vb.off, self.IDX)))
        if not isinstance(t, CInt):
            raise self.unsupported(f"operator '{op}' on {t}", c)
        it = IntType(t.bits, t.signed)
        if op in _SHIFT:
            if ta != t or not isinstance(tb, CInt):
                raise self.unsupported("shift operand types", c)
            return scalar(t, Binary(op, va.e, vb.e, it))
        if op in _ARITH:
            if ta != t or tb != t:
                raise self.unsupported(f"operand types of '{op}' ({ta}, {tb} -> {t})", c)
            return scalar(t, Binary(op, va.e, vb.e, it))
        raise self.unsupported(f"operator '{op}'", c)

    def _ptr_cmp(self, op: str, a: Val, b: Val, c) -> Expr:
        if not (isinstance(a.ctype, CPtr) and isinstance(b.ctype, CPtr)):
            raise self.unsupported("comparison of a pointer with an integer", c)
        if op in ("==", "!="):
            self.assert_layout_free(a, b, c)
            eq = and_(Compare("==", a.obj, b.obj), Compare("==", a.off, b.off))
            return eq if op == "==" else not_(eq)
        # relational comparison is only defined within one object (or struct): compare the offsets
        if isinstance(a.ctype.pointee, CFunc) or isinstance(b.ctype.pointee, CFunc):
            raise self.unsupported("order of function pointers (where the functions lie in memory)", c)
        self.assert_members_unordered(a, b, c)
        return Compare(op, a.off, b.off)

    def _logical(self, c, op, a, b, want) -> Val:
        if not self.effectful(b):
            x = self.to_bool(self.rv(a))
            y = self.to_bool(self.rv(b))
            r = and_(x, y) if op == "&&" else or_(x, y)
            return self._bool_result(c, self.unfolded(r, (x, y), lambda: (And if op == "&&" else Or)((x, y))))
        t = self.ctype(c)
        if not want:
            join = self.new_loc()
            self.branch_on(c, join, join)
            self.start(join)
            return Val(t, {})
        res = self.temp(self.types.ir_scalar(t))
        tl, fl, join = self.new_loc(), self.new_loc(), self.new_loc()
        self.branch_on(c, tl, fl)
        it = res.type
        self.start(tl)
        self.emit(Assign(res, TRUE if it == BOOL else IntConst(1, it), self.loc))
        self.jump(join)
        self.start(fl)
        self.emit(Assign(res, FALSE if it == BOOL else IntConst(0, it), self.loc))
        self.jump(join)
        self.start(join)
        return scalar(t, res)

    def _conditional(self, c, cond, then, els, want) -> Val:
        t = self.ctype(c)
        if not self.effectful(then) and not self.effectful(els) and not isinstance(t, CVoid):
            g = self.to_bool(self.rv(cond))
            tv = self.convert(self.rv(then), t, then)
            ev = self.convert(self.rv(els), t, els)
            return Val(t, {p: self.unfolded(ite(g, tv.leaves[p], ev.leaves[p]), (g, tv.leaves[p], ev.leaves[p]),
                                            lambda p=p: Ite(g, tv.leaves[p], ev.leaves[p], tv.leaves[p].type))
                           for p in tv.leaves})
        tl, fl, join = self.new_loc(), self.new_loc(), self.new_loc()
        res = None
        if want and not isinstance(t, CVoid):
            res = self.make_obj("tmp", t, "temp")
        self.branch_on(cond, tl, fl)
        for loc, branch in ((tl, then), (fl, els)):
            self.start(loc)
            if res is not None:
                v = self.convert(self.rv(branch), t, branch)
                self.write(self.obj_lv(res), v)
            else:
                self.rv(branch, want=False)
            self.jump(join)
        self.start(join)
        if res is None:
            return Val(t, {})
        return self.read(self.obj_lv(res))

    def _assign(self, c, a, b, want) -> Val:
        target = self.protect_lv(self.lv(a), [b])
        v = self.rv(b)
        v = self.convert(v, target.ctype, c)
        self.write(target, v)
        if not want:
            return Val(target.ctype, {})
        if all(isinstance(x, (IntConst, BoolConst)) for x in v.leaves.values()):
            return v
        return self.read(target)

    def _incdec(self, c, ch, op, want) -> Val:
        target = self.lv(ch)
        t = target.ctype
        old = self.read(target)
        post = op in (capi.UO_POST_INC, capi.UO_POST_DEC)
        inc = op in (capi.UO_POST_INC, capi.UO_PRE_INC)
        if post and want:
            old = Val(t, {p: self.snap(e) for p, e in old.leaves.items()})
        if isinstance(t, CInt):
            pt = self.types.promote(t)
            pit = IntType(pt.bits, pt.signed)
            r = Binary("+" if inc else "-", cast(pit, old.e), IntConst(1, pit), pit)
            new = scalar(t, cast(IntType(t.bits, t.signed), r))
        elif isinstance(t, CBool):
            new = scalar(t, TRUE if inc else not_(old.e))
        elif isinstance(t, CPtr):
            new = self.ptr_add(old, idx_const(1, self.IDX), +1 if inc else -1)
        else:
            raise self.unsupported(f"++/-- on {t}", c)
        self.write(target, new)
        if not want:
            return Val(t, {})
        return old if post else self.read(target)

    def _compound(self, c, want) -> Val:
        op = capi.binary_op(c)[:-1]
        a, b = children(c)
        target = self.protect_lv(self.lv(a), [b])
        t = target.ctype
        checks = list(target.checks)
        old = self.protect(self.read(target), [b])
        r = self.rv(b)
        if checks and self.effectful(b):
            target.checks = checks      # a call in between may have freed the object: the write is checked too
        if isinstance(t, CPtr):
            if op not in ("+", "-"):
                raise self.unsupported(f"pointer operator '{op}='", c)
            new = self.ptr_add(old, self.to_index(r, b), +1 if op == "+" else -1)
        elif isinstance(t, (CInt, CBool)) and isinstance(r.ctype, (CInt, CBool)):
            if op in _SHIFT:
                comp = self.types.promote(t)
                rv_ = self.convert(r, self.types.promote(r.ctype), b)
            else:
                comp = self.types.usual_arithmetic(t, r.ctype)
                rv_ = self.convert(r, comp, b)
            cit = IntType(comp.bits, comp.signed)
            res = Binary(op, cast(cit, old.e), rv_.e, cit)
            new = self.convert(scalar(comp, res), t, c)
        else:
            raise self.unsupported(f"compound assignment on {t}", c)
        self.write(target, new)
        if not want:
            return Val(t, {})
        return self.read(target)

    def _stmt_expr(self, c, want) -> Val:
        body = children(c)[0]
        stmts = children(body)
        t = self.ctype(c)
        for s in stmts[:-1]:
            self.stmt(s)
        if not stmts:
            return Val(t, {})
        last = stmts[-1]
        if isinstance(t, CVoid) or not last.kind.is_expression():
            self.stmt(last)
            return Val(t, {})
        return self.convert(self.rv(last, want), t, last) if want else self.rv(last, want=False)

    # ================================================================================ conversions
    def _converted(self, ch, to: CType, c) -> Val:
        """The operand `ch` converted to `to` by the cast `c`; an allocation converted to T* makes its object
        (`heap.py`)."""
        if isinstance(to, (CInt, CBool)) and is_floating(ch.type):
            return self._folded_float(ch, to, c)
        alloc = self.allocation_call(ch) if isinstance(to, CPtr) else None
        if alloc is not None:
            return self.allocate(strip_parens(ch), *alloc, to, c)
        return self.convert(self.rv(ch), to, c)

    def _folded_float(self, ch, to: CType, c) -> Val:
        """A floating-point constant `ch` converted to an integer type (`(unsigned)(2.5 * RATE)`, as embedded
        code writes timing limits): its value folded by clang, truncated toward zero as C converts. The model
        has no floating-point values, so an operand that does not fold stays refused, and so does a value out
        of the target's range (undefined behaviour, C11 6.3.1.4)."""
        f = capi.evaluate_float(ch)
        if f is None or not math.isfinite(f):
            raise self.unsupported("floating-point value converted to an integer", c)
        if isinstance(to, CBool):
            return scalar(to, FALSE if f == 0.0 else TRUE)
        it = IntType(to.bits, to.signed)
        v = int(f)  # toward zero
        if not it.min <= v <= it.max:
            raise self.unsupported(f"floating-point constant {f!r} out of the range of '{c.type.spelling}'", c)
        return scalar(to, IntConst(v, it))

    def convert(self, v: Val, to: CType, c=None) -> Val:
        fr = v.ctype
        if isinstance(to, CVoid):
            return Val(to, {})
        if fr == to:
            return Val(to, v.leaves)
        if isinstance(to, CBool):
            if isinstance(fr, (CInt, CPtr)):
                return scalar(to, self.to_bool(v))
        elif isinstance(to, CInt):
            if isinstance(fr, (CInt, CBool)):
                return scalar(to, cast(IntType(to.bits, to.signed), v.e))
            if isinstance(fr, CPtr):
                raise self.unsupported("conversion of a pointer to an integer", c)
        elif isinstance(to, CPtr):
            if isinstance(fr, CPtr):
                if isinstance(v.obj, IntConst) and v.obj.value == 0:
                    return pointer(to, v.obj, v.off)  # NULL converts to every pointer type
                if isinstance(fr.pointee, CFunc) or isinstance(to.pointee, CFunc):
                    raise self.unsupported("function pointer", c)
                if fr.pointee == to.pointee:
                    return Val(to, v.leaves)
                if compatible(fr.pointee, to.pointee):
                    return Val(fr, v.leaves)  # keep the variable-length array lengths of the source
                elem, per = innermost(fr.pointee), elements_in(fr.pointee)
                if elem is not fr.pointee and per is not None and (
                        compatible(elem, to.pointee) or (self.memsafety and is_char(elem) and is_char(to.pointee))):
                    # `(char *)&buf`: a pointer to an array points to its first element (offsets count elements)
                    return pointer(to, v.obj, self.imul(v.off, per))
                if isinstance(to.pointee, CVoid):
                    # the offset counts the innermost elements of the object (`void_pointers.py`)
                    if per is None:
                        raise self.unsupported(f"conversion of a pointer to {fr.pointee} to void *", c)
                    return pointer(to, v.obj, self.imul(v.off, per))
                if isinstance(fr.pointee, CVoid) and self.types.opaque(to.pointee):
                    # to a struct never defined: no access and no arithmetic reads the offset (`void_pointers.py`)
                    return Val(to, v.leaves)
                if isinstance(fr.pointee, CVoid) and (self.memsafety or not is_char(to.pointee)):
                    # a use of the void *, checked when the lowering is done (`void_pointers.py`)
                    target = self.void_target(to.pointee, c)
                    self.void_site(v, target, target=c.type.get_canonical().get_pointee() if c is not None else None)
                    return Val(to, v.leaves)
                if self.memsafety and is_char(fr.pointee) and is_char(to.pointee):
                    # char* <-> unsigned char*: the offset counts bytes in both (memcpy-style code); a
                    # dereference reads the char object through the other character type
                    return Val(to, v.leaves)
                raise self.unsupported(f"pointer conversion from {fr} to {to}", c)
            if isinstance(fr, (CInt, CBool)):
                if isinstance(v.e, IntConst) and v.e.value == 0:
                    return pointer(to, IntConst(0, self.OBJ), idx_const(0, self.IDX))
                raise self.unsupported("conversion of an integer to a pointer", c)
        elif isinstance(to, CStruct) and fr == to:
            return Val(to, v.leaves)
        raise self.unsupported(f"conversion from {fr} to {to}", c)

    def to_bool(self, v: Val) -> Expr:
        t = v.ctype
        if isinstance(t, CBool):
            return v.e
        if isinstance(t, CInt):
            e = v.e
            if isinstance(e, Cast) and e.arg.type == BOOL:
                return e.arg  # (int)(a < b) != 0  is  a < b
            if isinstance(e, IntConst):
                return BoolConst(e.value != 0)
            return Compare("!=", e, IntConst(0, e.type))
        if isinstance(t, CPtr):
            o = v.obj
            b = BoolConst(o.value != 0) if isinstance(o, IntConst) else Compare("!=", o, IntConst(0, self.OBJ))
            # the offset was computed too: `off == off` keeps its operations where they are evaluated
            return self.unfolded(b, (v.off,), lambda: And((Compare("==", v.off, v.off), b)))
        raise self.unsupported(f"condition of type {t}")
