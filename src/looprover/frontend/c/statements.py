"""Statements to control flow: blocks, declarations, if/while/do/for/switch, break/continue/goto/labels and
return (a jump to the end of the inlined body), and conditions as branches (`branch_on`).

Why a module: this is the part that shapes the CFA (loop heads, joins, case dispatch); expressions only ever
add straight-line statements, except where `&&`, `||` and `?:` must become control flow.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import CArray, CBool, CInt, CType
from looprover.frontend.c.cursors import (
    ARRAY_KINDS, FUNCTION_KINDS, TK, K, children, expr_children, is_array_expr, strip_parens,
)
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assign, Havoc
from looprover.program.expr import Compare, IntConst, Var, and_, cast


class StatementMixin(LoweringState):
    """`stmt(c)` lowers one statement at the current location; `branch_on(c, t, f)` jumps on a condition."""

    def stmt(self, c: ci.Cursor) -> None:
        k = c.kind
        self.loc = self.where(c)
        if self.frames:
            self.frames[-1].allocating.clear()   # the last statement's values are stored or gone
        if k == K.COMPOUND_STMT:
            self.open_block(c)
            for ch in children(c):
                self.stmt(ch)
            self.close_block()
        elif k == K.DECL_STMT:
            for ch in children(c):
                if ch.kind == K.VAR_DECL:
                    self.local_decl(ch)
                elif ch.kind in (K.TYPEDEF_DECL, K.STRUCT_DECL, K.ENUM_DECL, K.FUNCTION_DECL, K.UNION_DECL,
                                 K.STATIC_ASSERT):
                    continue
                else:
                    raise self.unsupported(f"declaration {ch.kind.name}", ch)
        elif k == K.NULL_STMT:
            self.here()
        elif k == K.IF_STMT:
            self._if(c)
        elif k == K.WHILE_STMT:
            self._while(c)
        elif k == K.DO_STMT:
            self._do(c)
        elif k == K.FOR_STMT:
            self._for(c)
        elif k == K.SWITCH_STMT:
            self._switch(c)
        elif k in (K.CASE_STMT, K.DEFAULT_STMT):
            loc = self.case_locs.get(c)
            if loc is None:
                raise self.unsupported("case label outside a switch", c)
            if any(flags for _, flags in self.frames[-1].scopes[self.switch_scopes[-1]:]):
                raise self.unsupported("case label inside a block with an address-taken local (valid-memsafety)", c)
            self.start(loc)
            self.frames[-1].jump_targets += 1
            self.stmt(children(c)[-1])
        elif k == K.BREAK_STMT:
            fr = self.frames[-1]
            if not fr.breaks:
                raise self.unsupported("break outside a loop or switch", c)
            self.die_to(fr, fr.breaks[-1])
            self.jump(fr.breaks[-1])
        elif k == K.CONTINUE_STMT:
            fr = self.frames[-1]
            if not fr.conts:
                raise self.unsupported("continue outside a loop", c)
            self.die_to(fr, fr.conts[-1])
            self.jump(fr.conts[-1])
        elif k == K.LABEL_STMT:
            if any(flags for _, flags in self.frames[-1].scopes[1:]):
                # a goto to it could enter the block without passing its start, where its locals' lives begin
                raise self.unsupported("label inside a block with an address-taken local (valid-memsafety)", c)
            loc = self._label(c.spelling)
            self.start(loc)
            self.frames[-1].jump_targets += 1
            self.memtrack_point()       # a goto may make a loop of it
            ks = children(c)
            if ks:
                self.stmt(ks[-1])
        elif k == K.GOTO_STMT:
            ref = [x for x in children(c) if x.kind == K.LABEL_REF]
            if not ref:
                raise self.unsupported("goto", c)
            fr = self.frames[-1]
            if any(flags for _, flags in fr.scopes[1:]):
                if ref[0].spelling not in fr.top_labels:
                    raise self.unsupported("goto in a block with an address-taken local to a label in a block "
                                           "(valid-memsafety)", c)
                for _, flags in fr.scopes[1:]:     # it leaves every block but the body's: their locals die
                    self.die(flags)
            self.jump(self._label(ref[0].spelling))
        elif k == K.RETURN_STMT:
            self._return(c)
        elif k == K.INDIRECT_GOTO_STMT:
            raise self.unsupported("computed goto", c)
        elif k in (K.ASM_STMT, K.MS_ASM_STMT):
            raise self.unsupported("inline assembly", c)
        elif k.is_expression():
            self.discard(c)
        else:
            raise self.unsupported(f"statement {k.name}", c)

    def open_block(self, c: ci.Cursor) -> None:
        """Enter block c: under valid-memsafety its address-taken locals start their lives here, at the entry
        into the block, not at their declarations (C11 6.2.4p6: a `goto` or a `switch` may jump over a
        declaration); a variable-length array's starts at its declaration (6.2.4p7)."""
        fr = self.frames[-1]
        fr.scopes.append((self.top_decls(c), []))
        if not self.memsafety:
            return
        for d in children(c):
            for vd in children(d) if d.kind == K.DECL_STMT else ():
                if vd.kind == K.VAR_DECL and self._born_at_block_entry(vd):
                    self.loc = self.where(vd)
                    self.born(self.local_obj(vd, fr, "local"), vd, fr)
        self.loc = self.where(c)

    def close_block(self) -> None:
        _, flags = self.frames[-1].scopes.pop()
        self.die(flags)

    def _born_at_block_entry(self, vd: ci.Cursor) -> bool:
        return (vd.canonical in self.addr_taken and vd.type.get_canonical().kind != TK.VARIABLEARRAY
                and vd.storage_class not in (ci.StorageClass.EXTERN, ci.StorageClass.STATIC))

    def _label(self, name: str) -> int:
        fr = self.frames[-1]
        loc = fr.labels.get(name)
        if loc is None:
            loc = fr.labels[name] = self.new_loc(name=f"{fr.prefix}{name}")
        return loc

    def local_decl(self, vd: ci.Cursor) -> None:
        fr = self.frames[-1]
        sc = vd.storage_class
        if sc == ci.StorageClass.EXTERN:
            return  # refers to a global; resolved through its canonical declaration
        if sc == ci.StorageClass.STATIC:
            fr.env[vd.canonical] = self.global_obj(vd, vd)
            return
        self.loc = self.where(vd)
        init = capi.var_initializer(vd)
        vla = None
        if vd.type.get_canonical().kind == TK.VARIABLEARRAY:
            vla = self._vla_type(vd, init)
        obj = self.local_obj(vd, fr, "local", vla)
        born_with_block = fr.scopes and vd.canonical in fr.scopes[-1][0] and self._born_at_block_entry(vd)
        if not (self.memsafety and born_with_block):
            self.born(obj, vd, fr)      # not born with its block (a VLA; a `for` declaration is refused)
        if init is None:
            self.emit(Havoc(tuple(obj.vars.values()), self.loc))
            self.unset_union_tags(obj)
        else:
            self.initialize(self.obj_lv(obj), init)
        fr.declared[vd.canonical] = fr.jump_targets    # from here on it holds its own value (`memtrack_point`)

    def _vla_type(self, vd: ci.Cursor, init) -> CType:
        """A variable-length array's type with its inner lengths evaluated now and kept in variables: later
        subscripts need the strides of the object as declared (C fixes them at the declaration)."""
        levels = []
        t = vd.type.get_canonical()
        while t.kind in ARRAY_KINDS:
            levels.append(t)
            t = t.element_type
        sizes = [ch for ch in expr_children(vd) if init is None or ch != init]
        if len(sizes) != len(levels):
            raise self.unsupported("variable-length array with a typedef'd dimension", vd)
        sizes.reverse()  # libclang lists the innermost dimension first
        dims: list = []
        for depth, (lv_t, sz) in enumerate(zip(levels, sizes)):
            if lv_t.kind == TK.CONSTANTARRAY:
                dims.append(lv_t.get_array_size())
                continue
            if depth == 0:  # the outermost length is never a stride: evaluated for its effects and checks
                self.discard(sz)
                dims.append(None)
                continue
            v = self.rv(sz)
            if not isinstance(v.ctype, (CInt, CBool)):
                raise self.unsupported("array length that is not an integer", sz)
            n = self.new_var(f"{vd.spelling}.len", self.IDX, "local", c_name=f"length of {vd.spelling}")
            self.emit(Assign(n, cast(self.IDX, v.e), self.loc))
            dims.append(n)
        ct = self.types.of(t, self.loc)
        for d in reversed(dims):
            ct = CArray(ct, d)
        return ct

    def _if(self, c):
        ks = children(c)
        cond, then = ks[0], ks[1]
        els = ks[2] if len(ks) > 2 else None
        t, end = self.new_loc(), self.new_loc()
        f = self.new_loc() if els is not None else end
        self.branch_on(cond, t, f)
        self.start(t)
        self.stmt(then)
        self.jump(end)
        if els is not None:
            self.start(f)
            self.stmt(els)
            self.jump(end)
        self.start(end)

    def _loop_name(self, c, kind):
        return f"{kind}@{self.loc.line}" if self.loc is not None else kind

    def _while(self, c):
        cond, body = children(c)[0], children(c)[-1]
        head = self.new_loc(self._loop_name(c, "while"))
        bl, end = self.new_loc(), self.new_loc()
        self.start(head)
        self.memtrack_point()
        self.branch_on(cond, bl, end)
        self.start(bl)
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.depth_of[end] = len(fr.scopes)
        fr.conts.append(head)
        fr.depth_of[head] = len(fr.scopes)
        self.stmt(body)
        self.jump(head)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(end)

    def _do(self, c):
        body, cond = children(c)[0], children(c)[-1]
        head = self.new_loc(self._loop_name(c, "do"))
        cont, end = self.new_loc(), self.new_loc()
        self.start(head)
        self.memtrack_point()
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.depth_of[end] = len(fr.scopes)
        fr.conts.append(cont)
        fr.depth_of[cont] = len(fr.scopes)
        self.stmt(body)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(cont)
        self.loc = self.where(cond)
        self.branch_on(cond, head, end)
        self.start(end)

    def _for_parts(self, c):
        """libclang omits absent parts of `for (init; cond; inc)`; classify children by the header's
        top-level semicolons."""
        toks = list(c.get_tokens())
        i = 0
        while i < len(toks) and toks[i].spelling != "(":
            i += 1
        depth, semis, rparen = 0, [], None
        for t in toks[i:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    rparen = t.extent.start.offset
                    break
            elif s == ";" and depth == 1:
                semis.append(t.extent.start.offset)
        if len(semis) != 2 or rparen is None:
            raise self.unsupported("for statement with an unusual header", c)
        init = cond = inc = body = None
        for ch in children(c):
            o = ch.extent.start.offset
            if o < semis[0]:
                init = ch
            elif o < semis[1]:
                cond = ch
            elif o < rparen:
                inc = ch
            else:
                body = ch
        return init, cond, inc, body

    def _for(self, c):
        init, cond, inc, body = self._for_parts(c)
        if init is not None:
            self.stmt(init)
        head = self.new_loc(self._loop_name(c, "for"))
        bl, cont, end = self.new_loc(), self.new_loc(), self.new_loc()
        self.start(head)
        self.memtrack_point()
        if cond is not None:
            self.branch_on(cond, bl, end)
        else:
            self.jump(bl)
        self.start(bl)
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.depth_of[end] = len(fr.scopes)
        fr.conts.append(cont)
        fr.depth_of[cont] = len(fr.scopes)
        if body is not None:
            self.stmt(body)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(cont)
        if inc is not None:
            self.loc = self.where(inc)
            self.discard(inc)
        self.jump(head)
        self.start(end)

    def _switch(self, c):
        ks = children(c)
        cond, body = ks[0], ks[-1]
        v = self.rv(cond)
        ct = v.ctype
        if not isinstance(ct, CInt):
            raise self.unsupported(f"switch on {ct}", c)
        e = v.e
        if not isinstance(e, (Var, IntConst)):
            t = self.temp(e.type)
            self.emit(Assign(t, e, self.loc))
            e = t
        it = self.types.ir_scalar(ct)
        cases, default = [], None
        stack = [body]
        while stack:
            n = stack.pop()
            if n.kind == K.SWITCH_STMT:
                continue
            if n.kind == K.CASE_STMT:
                kids = children(n)
                lo = capi.evaluate_int(kids[0])
                hi = capi.evaluate_int(kids[1]) if len(kids) == 3 else lo
                if lo is None or hi is None:
                    raise self.unsupported("non-constant case label", n)
                loc = self.new_loc()
                self.case_locs[n] = loc
                cases.append((it.wrap(lo), it.wrap(hi), loc, len(kids) == 3))
            elif n.kind == K.DEFAULT_STMT:
                default = self.new_loc()
                self.case_locs[n] = default
            stack.extend(reversed(children(n)))
        end = self.new_loc()
        block = body.kind == K.COMPOUND_STMT
        if block:       # entered before the dispatch jumps into it
            self.open_block(body)
        fr = self.frames[-1]
        self.switch_scopes.append(len(fr.scopes))
        # dispatch as a chain of two-way tests (complementary guards: the encoders' easy case)
        for lo, hi, loc, is_range in cases:
            if is_range:
                g = and_(Compare("<=", IntConst(lo, it), e), Compare("<=", e, IntConst(hi, it)))
            else:
                g = Compare("==", e, IntConst(lo, it))
            nxt = self.new_loc()
            self.branch(g, loc, nxt)
            self.start(nxt)
        self.jump(default if default is not None else end)
        fr.breaks.append(end)
        fr.depth_of[end] = len(fr.scopes) - block     # a break leaves the body's block too
        if block:
            for ch in children(body):
                self.stmt(ch)
            self.close_block()
        else:
            self.stmt(body)
        fr.breaks.pop()
        self.switch_scopes.pop()
        self.start(end)

    def _return(self, c):
        fr = self.frames[-1]
        ks = expr_children(c)
        if ks:
            if fr.ret is not None:
                v = self.rv(ks[0])
                self.write(self.obj_lv(fr.ret), self.convert(v, fr.ret.ctype, ks[0]))
            else:
                self.discard(ks[0])
        self.jump(fr.ret_loc)

    # ===================================================================================== conditions
    def branch_on(self, c: ci.Cursor, t: int, f: int) -> None:
        """Jump to t if expression c is nonzero, else to f (short-circuit as control flow when needed)."""
        c = strip_parens(c)
        # Only `&&`, `||`, `,`, `!` and conversions become control flow, and only when they have side effects:
        # the shape is tested first, which spares plain comparisons the effect analysis (a walk of the
        # condition; `effectful` is a pure function, so the order of the tests does not matter).
        k = c.kind
        if k == K.BINARY_OPERATOR:
            op = capi.binary_op(c)
            if op in ("&&", "||", ",") and self.effectful(c):
                a, b = children(c)
                if op == "&&":
                    mid = self.new_loc()
                    self.branch_on(a, mid, f)
                    self.start(mid)
                    self.branch_on(b, t, f)
                    return
                if op == "||":
                    mid = self.new_loc()
                    self.branch_on(a, t, mid)
                    self.start(mid)
                    self.branch_on(b, t, f)
                    return
                self.discard(a)  # ","
                self.branch_on(b, t, f)
                return
        elif k == K.UNARY_OPERATOR:
            if capi.unary_op(c) == capi.UO_LNOT and self.effectful(c):
                self.branch_on(children(c)[0], f, t)
                return
        elif k == K.UNEXPOSED_EXPR:
            if self.effectful(c) and len(children(c)) == 1 and self._keeps_zeroness(c, children(c)[0]):
                self.branch_on(children(c)[0], t, f)
                return
        self.branch(self.to_bool(self.rv(c)), t, f)

    def _keeps_zeroness(self, c, ch) -> bool:
        """Conversion to _Bool, or an integer conversion that does not narrow, maps 0 to 0 and only 0."""
        if is_array_expr(ch) or ch.type.get_canonical().kind in FUNCTION_KINDS:
            return False
        to, fr = self.ctype(c), self.ctype(ch)
        if isinstance(fr, CBool) and isinstance(to, (CInt, CBool)):
            return True
        if isinstance(fr, CInt) and isinstance(to, CBool):
            return True
        return isinstance(fr, CInt) and isinstance(to, CInt) and to.bits >= fr.bits
