"""C initialisers: zero-filling, brace lists with C's brace elision, string literals for char arrays, and the
initialisation of objects with static storage before main runs.

Why a module: initialisation is its own small language (nested lists, elided braces, strings) that ends in
plain `write`s; keeping it apart keeps the statement and expression lowering free of it.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import TAG, TAG_TYPE, TAG_UNSET, TAG_ZERO, CArray, CInt, CStruct, CType
from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.cursors import TK, K, children, strip_parens
from looprover.frontend.c.lvalues import tag_lv
from looprover.frontend.c.memory import LV, Obj, Val, idx_const, scalar
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assign
from looprover.program.expr import FALSE, ArrayType, BoolType, ConstArray, IntConst


def _decode_string_literal(tok: str) -> list[int] | None:
    """The bytes of one narrow C string literal token (without the terminating NUL); None if not narrow."""
    if not (tok.startswith('"') and tok.endswith('"')) and not tok.startswith('u8"'):
        return None
    body = tok[tok.index('"') + 1:-1]
    out: list[int] = []
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63,
              "e": 27}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.extend(ch.encode("utf-8"))
            i += 1
            continue
        i += 1
        ch = body[i]
        if ch in simple:
            out.append(simple[ch])
            i += 1
        elif ch in "01234567":
            j = i
            while j < len(body) and j < i + 3 and body[j] in "01234567":
                j += 1
            out.append(int(body[i:j], 8) & 0xFF)
            i = j
        elif ch == "x":
            j = i + 1
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 1:j], 16) & 0xFF)
            i = j
        else:
            return None
    return out


class InitialiserMixin(LoweringState):
    """`initialize(lv, init)` for declarations, `zero(t)` for C's implicit zero values, `init_static` for
    globals and static locals."""

    def init_static(self, obj: Obj, init: ci.Cursor | None) -> None:
        lv = self.obj_lv(obj)
        self.write(lv, self.zero(obj.ctype))
        if init is not None:
            self.initialize(lv, init, zeroed=True)

    def zero(self, t: CType) -> Val:
        leaves = {}
        for lf in self.types.leaves(t):
            s = self.types.ir_scalar(lf.ctype)
            z = FALSE if isinstance(s, BoolType) else IntConst(0, s)
            if lf.in_array:
                z = ConstArray(z, ArrayType(self.IDX, s, lf.count if isinstance(lf.count, int) else None))
            leaves[lf.path] = z
        return Val(t, leaves)

    def initialize(self, lv: LV, init: ci.Cursor, zeroed: bool = False) -> None:
        init_s = strip_parens(init)
        if init_s.kind == K.INIT_LIST_EXPR:
            if not zeroed:
                self.write(lv, self.zero(lv.ctype))
            items = children(init_s)
            if self.types.is_scalar(lv.ctype):
                if items:
                    self.write(lv, self.convert(self.rv(items[0]), lv.ctype, items[0]))
                return
            pos = self._init_agg(lv, lv.ctype, items, 0)
            if pos < len(items):
                raise self.unsupported("excess elements in initialiser", init)
            return
        if init_s.kind == K.STRING_LITERAL:
            if not zeroed and isinstance(lv.ctype, CArray):
                self.write(lv, self.zero(lv.ctype))
            self._init_string(lv, init_s)
            return
        v = self.rv(init)
        self.write(lv, self.convert(v, lv.ctype, init))

    def _init_string(self, lv: LV, lit: ci.Cursor) -> None:
        """`char s[N] = "..."`: the characters (the caller has zero-filled the array)."""
        t = lv.ctype
        if not (isinstance(t, CArray) and isinstance(t.elem, CInt) and t.elem.bits == 8 and isinstance(t.size, int)):
            raise self.unsupported("string literal", lit)
        data = self.literal_bytes(lit)
        if data is None:
            raise self.unsupported("wide or unusual string literal", lit)
        it = self.types.ir_scalar(t.elem)
        for i, b in enumerate(data[:t.size]):
            self.write(self.subscript(lv, idx_const(i, self.IDX)), scalar(t.elem, IntConst(it.wrap(b), it)))

    @staticmethod
    def literal_bytes(lit: ci.Cursor) -> list[int] | None:
        """The bytes of a narrow string literal (its concatenated tokens, without the terminating NUL); None for
        another kind of literal."""
        data: list[int] = []
        for tok in lit.get_tokens():
            b = _decode_string_literal(tok.spelling)
            if b is None:
                return None
            data.extend(b)
        return data

    def _init_agg(self, lv: LV, t: CType, items: list, pos: int, elided: bool = False) -> int:
        """Initialise the sub-objects of aggregate `t` from items[pos:] (C's brace elision, `elided`: without
        braces of its own; designators, after which the next items go on from the sub-object designated);
        returns the position after the consumed items."""
        if isinstance(t, CArray):
            if not isinstance(t.size, int):
                raise self.unsupported("initialiser for a variable-length array")
            n = t.size
        elif isinstance(t, CStruct):
            n = 1 if t.union else len(self.types.members(t))   # a union: its first member, or one designated
        else:
            raise self.unsupported(f"initialiser for {t}")
        i = 0
        chain = False
        while pos < len(items):
            item = items[pos]
            if item.kind == K.UNEXPOSED_EXPR and item.type.get_canonical().kind == TK.VOID:
                if elided:     # a designator speaks of the object of the enclosing braces
                    break
                first, chain = self._designated(lv, t, item)
                i = first + 1
                pos += 1
                continue
            if i >= n:
                break
            if chain:
                raise self.unsupported("initialiser without a designator after a chain of designators", item)
            sub, st = self._sub_object(lv, t, i)
            i += 1
            if item.kind == K.INIT_LIST_EXPR or self.types.is_scalar(st) or \
                    strip_parens(item).kind == K.STRING_LITERAL or \
                    (isinstance(st, CStruct) and self.ctype(item) == st):
                self._init_one(sub, st, item)
                pos += 1
            else:
                pos = self._init_agg(sub, st, items, pos, elided=True)
        return pos

    def _sub_object(self, lv: LV, t: CType, i: int) -> tuple[LV, CType]:
        """The i-th element or member of aggregate `t` at `lv`, and its type."""
        if isinstance(t, CArray):
            return self.subscript(lv, idx_const(i, self.IDX)), t.elem
        name, ft = self.types.members(t)[i]
        return self.member(lv, name), ft

    def _init_one(self, sub: LV, st: CType, item: ci.Cursor) -> None:
        """Initialise one sub-object from one item: a braced list, a scalar, a string, a struct value."""
        if item.kind == K.INIT_LIST_EXPR:
            inner = children(item)
            if self.types.is_scalar(st):
                if inner:
                    self.write(sub, self.convert(self.rv(inner[0]), st, inner[0]))
            else:
                p = self._init_agg(sub, st, inner, 0)
                if p < len(inner):
                    raise self.unsupported("excess elements in initialiser", item)
        elif self.types.is_scalar(st):
            self.write(sub, self.convert(self.rv(item), st, item))
        elif strip_parens(item).kind == K.STRING_LITERAL:
            self._init_string(sub, strip_parens(item))
        elif isinstance(st, CStruct) and self.ctype(item) == st:
            self.write(sub, self.rv(item))
        else:
            raise self.unsupported("initialiser of an aggregate without braces after a designator", item)

    def _designated(self, lv: LV, t: CType, item: ci.Cursor) -> tuple[int, bool]:
        """`.m = v`, `[k] = v`, `.m[k].n = v`: initialise the sub-object designated; returns the index of the
        first designator (the next item without one goes on after it) and whether there were several. A chain
        of designators must be the last item or be followed by another designated one: C would go on inside the
        innermost aggregate."""
        ks = children(item)
        if len(ks) < 2 or any(tok.spelling == "..." for tok in item.get_tokens()):
            raise self.unsupported("range designator", item)
        *designators, value = ks
        first = None
        sub, st = lv, t
        for d in designators:
            if d.kind == K.MEMBER_REF and isinstance(st, CStruct):
                names = [n for n, _ in self.types.members(st)]
                if d.spelling not in names:
                    raise self.unsupported(f"designator '.{d.spelling}'", item)
                j = names.index(d.spelling)
            else:
                j = capi.evaluate_int(d)
                if not (isinstance(st, CArray) and isinstance(st.size, int) and j is not None and 0 <= j < st.size):
                    raise self.unsupported("array designator", item)
            if first is None:
                first = j
            sub, st = self._sub_object(sub, st, j)
        if not self.types.is_scalar(st) and (value.kind == K.INIT_LIST_EXPR or
                                             strip_parens(value).kind == K.STRING_LITERAL):
            self._zero_each(sub, st)   # it replaces what earlier items wrote there (C11 6.7.9p19)
        self._init_one(sub, st, value)
        return first, len(designators) > 1

    def _zero_each(self, lv: LV, t: CType) -> None:
        """Zero a sub-object scalar by scalar (a row of an array cannot be written as a whole)."""
        if self.types.is_scalar(t):
            self.write(lv, self.zero(t))
        elif isinstance(t, CStruct) and not any(lf.in_array for lf in self.types.leaves(t)):
            self.write(lv, self.zero(t))
        else:
            for i in range(t.size if isinstance(t, CArray) else len(self.types.members(t))):
                self._zero_each(*self._sub_object(lv, t, i))
            if isinstance(t, CStruct) and t.union:      # every member zero: the tag says so (`ctype.TAG`)
                tags = tuple((g, cells[(TAG,)]) for g, cells in lv.alts)
                self.write(tag_lv(tags), scalar(TAG_TYPE, IntConst(TAG_ZERO, self.types.ir_scalar(TAG_TYPE))))

    def unset_union_tags(self, obj: Obj) -> None:
        """After the leaves of `obj` got any values (a declaration without initialiser, `malloc`): its unions
        hold no member's value yet, so each member reads as indeterminate (`ctype.TAG`)."""
        unset = IntConst(TAG_UNSET, self.types.ir_scalar(TAG_TYPE))
        for path, var in obj.vars.items():
            if path and path[-1] == TAG:
                value = ConstArray(unset, var.type) if isinstance(var.type, ArrayType) else unset
                self.emit(Assign(var, value, self.loc))
