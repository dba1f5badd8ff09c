"""Lvalues: what an expression designates (variables, struct members, array elements, dereferenced
pointers as a case split over the candidate objects), and reading and writing through them.

Why a module: the memory model (see `memory.py`) is applied here and only here; everything else handles
`LV`s and `Val`s without knowing how objects are laid out in IR variables.
"""
from __future__ import annotations

from typing import Callable

import clang.cindex as ci

from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import (
    TAG, TAG_TYPE, TAG_UNSET, TAG_ZERO, CArray, CBool, CFunc, CInt, CPtr, CStruct, CVoid, compatible, innermost,
    is_char, strip_array,
)
from looprover.frontend.c.cursors import ARRAY_KINDS, TK, K, canonical_kind, children, is_array_decay, strip_parens
from looprover.frontend.c.memory import LV, Cell, Val, idx_const, is_zero, pointer, scalar
from looprover.frontend.c.state import LoweringState
from looprover.frontend.c.void_pointers import CHAR
from looprover.program.cfa import Assert, Assign
from looprover.properties import UNMODELLED_ARGV, UNMODELLED_LAYOUT, UNMODELLED_MEMBER, UNMODELLED_UNION
from looprover.program.expr import (
    TRUE, ArrayType, Binary, BoolConst, Compare, Expr, IntConst, Select, Store, Var, and_, cast, free_vars, implies,
    ite, not_, or_,
)


class LValueMixin(LoweringState):
    """`lv(c)` for an lvalue expression; `member`, `subscript`, `deref` and `ptr_add` on lvalues and pointers;
    `decay_array` (array to pointer); `read(lv)` and `write(lv, v)`."""

    def lv(self, c: ci.Cursor) -> LV:
        k = c.kind
        if k == K.PAREN_EXPR:
            return self.lv(children(c)[0])
        if k == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is None or ref.kind not in (K.VAR_DECL, K.PARM_DECL):
                raise self.unsupported(f"reference to {ref.kind.name if ref is not None else '?'}", c)
            if self.frames and ref.canonical in self.frames[-1].bound:
                raise self.unsupported("internal: a read-only parameter used as an object", c)
            return self.obj_lv(self.storage(ref, c))
        if k == K.MEMBER_REF_EXPR:
            base = children(c)[0]
            if canonical_kind(base) == TK.POINTER:
                blv = self.deref(self.rv(base), base)
            else:
                blv = self.lv(base)
            return self.member(blv, c.spelling, c)
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = children(c)
            if canonical_kind(a) not in (TK.POINTER, *ARRAY_KINDS):
                a, b = b, a  # `i[a]` (an array here: a parameter's adjusted type, `state.ctype`)
            a_s = strip_parens(a)
            if is_array_decay(a_s):
                alv = self.lv(children(a_s)[0])
                alv = self.protect_lv(alv, [b])
                i = self.rv(b)
                return self.subscript(alv, self.to_index(i, b))
            p = self.protect(self.rv(a), [b])
            i = self.rv(b)
            return self.deref(self.ptr_add(p, self.to_index(i, b), +1), c)
        if k == K.UNARY_OPERATOR:
            op = capi.unary_op(c)
            if op == capi.UO_DEREF:
                ch = children(c)[0]
                return self.deref(self.rv(ch), c)
            if op == capi.UO_EXTENSION:
                return self.lv(children(c)[0])
        if k == K.UNEXPOSED_EXPR and len(children(c)) == 1 and not is_array_decay(c):
            ch = children(c)[0]
            if self.ctype(ch) == self.ctype(c):
                return self.lv(ch)
        if k == K.STRING_LITERAL:
            obj = self.literals.get(c)
            if obj is None:
                raise self.unsupported("string literal", c)
            return self.obj_lv(obj)
        # an rvalue of aggregate type used where an object is needed (`f().x`): a temporary object
        t = self.ctype(c)
        if isinstance(t, CStruct):
            v = self.rv(c)
            obj = self.make_obj("tmp", t, "temp")
            lv = self.obj_lv(obj)
            self.write(lv, v)
            return lv
        raise self.unsupported(f"lvalue {k.name}", c)

    def to_index(self, i: Val, c) -> Expr:
        if not isinstance(i.ctype, (CInt, CBool)):
            raise self.unsupported("array index that is not an integer", c)
        if self.memsafety and isinstance(i.ctype, CInt) and i.ctype.bits > self.IDX.bits:
            # truncating it to the index type could move an out-of-bounds index back into bounds
            raise self.unsupported(f"index of type {i.ctype} wider than pointers (valid-memsafety)", c)
        return cast(self.IDX, i.e)

    def member(self, lv: LV, name: str, c=None) -> LV:
        """Member `name` of a struct or union lvalue.

        A union's members do not share leaves: each has its own, and the union has a tag leaf that says which
        member's value its bytes hold (`ctype.TAG`). The member lvalue remembers the tag (`LV.unions`): reading
        it asserts that the tag names it (or says zero or unset, when every member reads alike), and writing
        it sets the tag, after asserting the same when the write stores only part of the member (the rest of
        the member must be its own). Another member's bytes reinterpreted are outside the model
        (`UNMODELLED_UNION`: UNKNOWN, never a verdict built on the wrong value). A member of a union has no
        address in the model: a pointer to it would store without setting the tag."""
        t = lv.ctype
        if not isinstance(t, CStruct):
            raise self.unsupported(f"member access on {t}", c)
        ft = self.types.field_type(t, name)
        alts = []
        for g, cells in lv.alts:
            alts.append((g, {lf.path: cells[(name,) + lf.path] for lf in self.types.leaves(ft)}))
        unions = tuple((tag, m, False) for tag, m, _ in lv.unions)
        if t.union:
            number = [n for n, _ in self.types.members(t)].index(name) + 1
            unions += ((tuple((g, cells[(TAG,)]) for g, cells in lv.alts), number, True),)
        base = addr = through = None
        addr_ok = TRUE
        if lv.base is not None and not unions:
            obj, path = lv.base
            base = (obj, path + (name,))
            sub = obj.members.get(base[1])
            if sub is not None:
                addr = (self.obj_id(sub), idx_const(0, self.IDX))
        elif lv.through is not None and not unions:
            # reached through a pointer: the member's objects in the objects it may point into (`memory.py`)
            off, targets = lv.through
            targets = [(test, root, path + (name,)) for test, root, path in targets]
            through = (off, targets)
            have = [(test, root.members[path]) for test, root, path in targets if path in root.members]
            if have:
                oid = IntConst(0, self.OBJ)
                for test, sub in reversed(have):
                    oid = ite(test, self.obj_id(sub), oid)
                at_start = TRUE if is_zero(off) else Compare("==", off, idx_const(0, self.IDX))
                addr = (oid, idx_const(0, self.IDX))
                addr_ok = and_(at_start, or_(*(test for test, _ in have)))
        return LV(ft, alts, addr, list(lv.checks), base, unions, addr_ok, through)

    def check_unions(self, lv: LV, partial_write: bool = False) -> None:
        """Assert that the unions `lv` lies in hold the members it lies in (or are zero or unset): before a
        read, and before a write of part of a member (`member`)."""
        for tags, m, whole in lv.unions:
            if partial_write and whole:
                continue
            tag = self.read(tag_lv(tags)).e
            ok = or_(*(Compare("==", tag, IntConst(k, tag.type)) for k in (m, TAG_ZERO, TAG_UNSET)))
            self.emit(Assert(ok, UNMODELLED_UNION, self.loc))

    def set_union_tags(self, lv: LV) -> None:
        """A write of `lv`: each union it lies in now holds the member it lies in."""
        for tags, m, _ in lv.unions:
            self.write(tag_lv(tags), scalar(TAG_TYPE, IntConst(m, self.types.ir_scalar(TAG_TYPE))))

    def subscript(self, lv: LV, k: Expr) -> LV:
        t = lv.ctype
        assert isinstance(t, CArray), t
        e = t.elem
        alts = []
        for g, cells in lv.alts:
            nc = {}
            for lf in self.types.leaves(e):
                cell = cells[lf.path]
                if lf.count is None:
                    raise self.unsupported("variable-length array of unknown length")
                nc[lf.path] = Cell(cell.var, self.iadd(cell.index, self.imul(k, lf.count)))
            alts.append((g, nc))
        addr = None
        if lv.addr is not None:
            obj, off = lv.addr
            if t.size is not None:
                addr = (obj, self.iadd(self.imul(off, t.size), k))
            elif is_zero(off):  # the outermost dimension of a variable-length array object
                addr = (obj, k)
        checks = list(lv.checks)
        if self.memsafety:
            if not isinstance(t.size, int):
                raise self.unsupported("index into a variable-length array (valid-memsafety)")
            checks.append((self.in_range(k, t.size), self.loc))
        return LV(e, alts, addr, checks, unions=tuple((tag, m, False) for tag, m, _ in lv.unions),
                  addr_ok=lv.addr_ok)

    def check_addr(self, lv: LV, c) -> None:
        """Where the address of `lv` is taken: assert that the model has it (`LV.addr_ok`, `memory.py`)."""
        if lv.addr_ok != TRUE:
            self.emit(Assert(lv.addr_ok, UNMODELLED_MEMBER, self.where(c)))

    def in_range(self, k: Expr, n: int) -> Expr:
        """0 <= k < n in the index type."""
        if isinstance(k, IntConst):
            return TRUE if 0 <= k.value < n else BoolConst(False)
        return and_(Compare(">=", k, idx_const(0, self.IDX)), Compare("<", k, idx_const(n, self.IDX)))

    def check_access(self, lv: LV) -> None:
        """Assert, once, the validity conditions of an access (valid-memsafety; see `LV.checks`)."""
        for cond, where in lv.checks:
            if cond == TRUE:
                continue
            def same(st, cond=cond) -> bool:
                return isinstance(st, Assert) and st.prop == "valid-deref" and st.cond == cond
            # the same condition asserted on this edge and none of its variables written since: asserted already
            # (the variables of a large case split are only collected when such an assertion exists)
            if any(map(same, self.pending)) and any(map(same, self.since_written(free_vars(cond)))):
                continue
            self.emit(Assert(cond, "valid-deref", where))
        lv.checks.clear()

    def iadd(self, a: Expr, b: Expr) -> Expr:
        if is_zero(a):
            return b
        if is_zero(b):
            return a
        if isinstance(a, IntConst) and isinstance(b, IntConst):
            return idx_const(a.value + b.value, self.IDX)
        return Binary("+", a, b, self.IDX)

    def imul(self, a: Expr, n) -> Expr:
        """a * n in the index type; n is a constant or (variable-length arrays) an index expression."""
        if not isinstance(n, int):
            if is_zero(a):
                return a
            if isinstance(a, IntConst) and a.value == 1:
                return n
            return Binary("*", a, n, self.IDX)
        if n == 1:
            return a
        if isinstance(a, IntConst):
            return idx_const(a.value * n, self.IDX)
        return Binary("*", a, idx_const(n, self.IDX), self.IDX)

    def ptr_add(self, p: Val, k: Expr, sign: int) -> Val:
        if not isinstance(p.ctype, CPtr):
            raise self.unsupported("pointer arithmetic on a non-pointer")
        if isinstance(p.ctype.pointee, CFunc):   # a GNU extension: the code one byte into the function
            raise self.unsupported("arithmetic on a function pointer")
        if isinstance(p.ctype.pointee, CVoid):   # a GNU extension counting bytes (`void_pointers.py`)
            self.void_site(p, CHAR, access=False)
        off = p.off  # arithmetic on NULL is UB; a later dereference blocks it
        if sign > 0:
            new = self.iadd(off, k)
        elif isinstance(k, IntConst):
            new = self.iadd(off, idx_const(-k.value, self.IDX))
        else:
            new = Binary("-", off, k, self.IDX)
        return pointer(p.ctype, p.obj, new)

    def deref(self, p: Val, c) -> LV:
        t = p.ctype
        if not isinstance(t, CPtr):
            raise self.unsupported("dereference of a non-pointer", c)
        pt = t.pointee
        if isinstance(pt, (CVoid, CFunc)):
            raise self.unsupported(f"dereference of a {t} pointer", c)
        obj, off = p.obj, p.off
        cands = self.pointees(pt)
        if isinstance(obj, IntConst):
            cands = [o for o in cands if o.id_var is None and o.id == obj.value]
        alts = []
        valids = []
        targets = []
        at_start = Compare("==", off, idx_const(0, self.IDX))
        inside_memo: dict = {}
        for o in cands:
            # selecting the object needs only its id; validity (checked once, below) also needs the offset
            g = Compare("==", obj, self.obj_id(o)) if not isinstance(obj, IntConst) else TRUE
            root = _root(o)
            targets.append((g, root, o.path))
            cells = {}
            if o.parent is not None:     # a struct member's object: leaving it is UNKNOWN (`memory.py`)
                inside = self._in_object(o, pt, off, c, inside_memo) if o.is_array else at_start
                self.emit(Assert(implies(g, inside), UNMODELLED_MEMBER, self.where(c)))
                # a member of a heap object's first struct: that struct must exist (malloc(0), a failed one)
                valids.append(g if root.length is None else
                              and_(g, Compare(">", root.length, idx_const(0, self.IDX))))
            elif o.is_array:
                valids.append(and_(g, self._in_object(o, pt, off, c, inside_memo)) if self.memsafety else g)
            else:
                valids.append(g if is_zero(off) else and_(g, at_start))
            if o.is_array:
                for lf in self.types.leaves(pt):
                    if lf.count is None:
                        raise self.unsupported("pointer to a variable-length array type", c)
                    cells[lf.path] = Cell(o.vars[lf.path], self.imul(off, lf.count))
            else:
                for lf in self.types.leaves(pt):
                    v = o.vars[lf.path]
                    cells[lf.path] = Cell(v, idx_const(0, self.IDX) if lf.in_array else None)
            if o.id in self.alive:       # a local under valid-memsafety, a heap object in any mode
                valids[-1] = and_(valids[-1], self.alive[o.id])
            if o.id in self.unmodelled:  # argv beyond its modelled strings (`main_args.py`)
                self.emit(Assert(implies(g, self.unmodelled[o.id](off)), UNMODELLED_ARGV, self.where(c)))
            alts.append((g, cells))
        valid = or_(*valids)
        checks = []
        if self.memsafety:
            # NULL, dangling or out of the object: a valid-deref violation, asserted when the lvalue is accessed
            checks.append((valid, self.where(c)))
        elif valid != TRUE:
            self.assume_once(valid, self.where(c))  # NULL / invalid dereference: undefined behaviour
        if not alts:
            if self.memsafety:  # no object can be accessed: every access is a violation
                self.emit(Assert(valid, "valid-deref", self.where(c)))
            self.block()
            # the rest of this expression is dead code; give it a harmless lvalue of the right shape
            dummy = self.make_obj("unreachable", pt, "temp")
            return self.obj_lv(dummy)
        if len(alts) == 1:
            alts = [(TRUE, alts[0][1])]
        return LV(pt, alts, (obj, off), checks, through=(off, targets))

    def pointees(self, pt) -> list:
        """The objects a pointer to `pt` can point into: those of `pt`s (or arrays of them), and under
        valid-memsafety every char object for a char pointer (`memory.py`). Objects are only added (or replaced,
        which clears the cache), so each dereference looks only at the objects made since the last one of `pt`."""
        objects = self.known_objects()
        seen, found = self.pointee_cache.get(pt, (0, ()))
        if seen < len(objects):
            found = (*found, *(i for i in range(seen, len(objects)) if self._may_point_into(pt, objects[i])))
            self.pointee_cache[pt] = (len(objects), found)
        return [objects[i] for i in found]

    def _may_point_into(self, pt, o) -> bool:
        return any(compatible(x, pt) for x in strip_array(o.ctype)) \
            or (self.memsafety and is_char(pt) and is_char(innermost(o.ctype)))

    def _in_object(self, o, pt, off: Expr, c, memo: dict) -> Expr:
        """0 <= off < the number of `pt` elements in array object `o`; `memo` (one dereference's) shares the
        condition between its candidate objects of one size."""
        n = self._elements(o, pt)
        if n is None:
            raise self.unsupported("pointer into a variable-length array (valid-memsafety)", c)
        inside = memo.get(n)
        if inside is None:
            inside = memo[n] = and_(Compare(">=", off, idx_const(0, self.IDX)), Compare("<", off, n))
        return inside

    def _elements(self, o, pt) -> Expr | None:
        """The number of `pt` elements in object `o` (1 for an object that is no array); None where no expression
        gives it (a variable-length array, an array of them)."""
        if not o.is_array:
            return idx_const(1, self.IDX)
        lf = self.types.leaves(pt)[0]
        if o.parent is not None:       # a member's object: the member's elements alone (`memory.py`)
            whole = self.types.leaves(o.ctype)[0].count
            if not isinstance(whole, int) or not isinstance(lf.count, int) or lf.count <= 0:
                return None
            return idx_const(whole // lf.count, self.IDX)
        size = o.vars[lf.path].type.size
        if o.length is not None and isinstance(o.ctype, CArray) and \
                self.types.leaves(o.ctype.elem)[0].count == lf.count:     # a heap object of pt's
            return o.length
        if not isinstance(size, int) or not isinstance(lf.count, int) or lf.count <= 0:
            return None
        return idx_const(size // lf.count, self.IDX)

    def assert_members_unordered(self, a: Val, b: Val, c) -> None:
        """Before `a < b` (any order) of pointers: assert that they do not point to two members of one struct
        (`properties.UNMODELLED_LAYOUT`): C11 6.5.8p5 orders those by declaration, while the model compares the
        offsets inside each member's object (for `void *`s, also a struct and one of its members)."""
        pairs = [(x, y) for x in self._compared(a) for y in self._compared(b)
                 if x is not y and _root(x) is _root(y)]
        if pairs:
            both = or_(*(and_(Compare("==", a.obj, self.obj_id(x)), Compare("==", b.obj, self.obj_id(y)))
                         for x, y in pairs))
            self.emit(Assert(not_(both), UNMODELLED_LAYOUT, self.where(c)))

    def _untyped(self, p: Val) -> bool:
        """A `void *`, or a pointer to a struct the program never defines (converted from one, `convert`): it may
        point into any object, its offset counting the object's innermost elements (`void_pointers.py`)."""
        return isinstance(p.ctype.pointee, CVoid) or self.types.opaque(p.ctype.pointee)

    def _compared(self, p: Val) -> list:
        """The objects a pointer compared with another may point into: those of its pointee type, every object
        for an untyped one (`_untyped`)."""
        return self.known_objects() if self._untyped(p) else self.pointees(p.ctype.pointee)

    def _counted(self, o, p: Val) -> Expr | None:
        """The number of elements of object `o` that pointer p's offset counts (an untyped one: o's innermost
        elements)."""
        return self._elements(o, innermost(o.ctype) if self._untyped(p) else p.ctype.pointee)

    def assert_layout_free(self, a: Val, b: Val, c) -> None:
        """Before `a == b` of pointers: assert that it does not compare a pointer one past the end of one object
        with one to the start of another, nor pointers into two string literals (`properties.UNMODELLED_LAYOUT`):
        C11 6.5.9p6 lets the first pair be equal when the second object happens to follow the first, and 6.4.5p7
        lets literals share storage, so neither answer of the model's (different objects: unequal) is certain.
        An object of a length no expression gives counts as ending wherever it may. Only where two objects
        could be involved. (In `c && p == q` the assertion is not guarded by `c`: stricter, never unsound.)"""
        if any(isinstance(p.obj, IntConst) and p.obj.value == 0 for p in (a, b)):
            return          # NULL: equal only to NULL
        cands = {id(p): self._compared(p) for p in (a, b)}
        if len({o.id for objs in cands.values() for o in objs}) < 2:
            return          # one object for both: different objects means a NULL or dangling pointer
        ends = []
        for x, y in ((a, b), (b, a)):
            past = or_(*(and_(Compare("==", x.obj, self.obj_id(o)), _one_past(x.off, self._counted(o, x), self.IDX))
                         for o in cands[id(x)]))
            ends.append(and_(past, Compare("==", y.off, idx_const(0, self.IDX)),
                             Compare("!=", y.obj, IntConst(0, self.OBJ))))
        # a struct and one of its members (or two members, one inside the other) as void *s: their addresses
        # may be equal, the model's objects are not
        ends += [and_(Compare("==", a.obj, self.obj_id(x)), Compare("==", b.obj, self.obj_id(y)))
                 for x in cands[id(a)] for y in cands[id(b)] if x is not y and _root(x) is _root(y)]
        lits = [self.obj_id(o) for o in self.literals.values()]
        if lits:
            ends.append(and_(*(or_(*(Compare("==", p.obj, i) for i in lits)) for p in (a, b))))
        self.emit(Assert(not_(and_(Compare("!=", a.obj, b.obj), or_(*ends))), UNMODELLED_LAYOUT, self.where(c)))

    def _not_a_literal(self, lv: LV) -> None:
        """Writing into a string literal is undefined behaviour (read-only storage): a violation under
        valid-memsafety, an execution not followed otherwise."""
        hits = [g for g, cells in lv.alts if any(cell.var in self.literal_vars for cell in cells.values())]
        if hits and not self.static_init:
            if self.memsafety:
                self.emit(Assert(not_(or_(*hits)), "valid-deref", self.loc))
            else:
                self.assume_once(not_(or_(*hits)), self.loc)

    def decay_array(self, arr: ci.Cursor) -> Val:
        alv = self.lv(arr)
        t = alv.ctype
        if not isinstance(t, CArray):
            raise self.unsupported("array decay of a non-array", arr)
        if alv.addr is None and self.cur is None:     # dead code (a dereference no object can satisfy)
            return pointer(CPtr(t.elem), IntConst(0, self.OBJ), idx_const(0, self.IDX))
        if alv.addr is None:
            raise self.unsupported("pointer to an array member of a union" if alv.unions else
                                   "pointer to an array member of a struct", arr)
        self.check_addr(alv, arr)
        obj, off = alv.addr
        if t.size is not None:
            off = self.imul(off, t.size)
        elif not is_zero(off):
            raise self.unsupported("pointer into a variable-length array", arr)
        return pointer(CPtr(t.elem), obj, off)

    # ================================================================================ reads & writes
    def _leaf_read(self, cell: Cell, in_array: bool, count) -> Expr:
        if in_array:
            if cell.index is not None and not is_zero(cell.index):
                raise self.unsupported("copy of an array member of an array element")
            if isinstance(cell.var.type, ArrayType) and cell.var.type.size != count:
                raise self.unsupported("copy of part of an array")
            return cell.var
        if cell.index is None:
            return cell.var
        return Select(cell.var, cell.index, cell.var.type.elem)

    def read(self, lv: LV) -> Val:
        t = lv.ctype
        if isinstance(t, CArray):
            raise self.unsupported("array used as a value")
        self.check_access(lv)
        self.check_unions(lv)
        leaves = {}
        for lf in self.types.leaves(t):
            want = self.types.ir_leaf_type(lf)
            # (a char object read through another character type: the value converts)
            alts = [(g, _as(want, self._leaf_read(cells[lf.path], lf.in_array, lf.count))) for g, cells in lv.alts]
            e = alts[-1][1]
            for g, x in reversed(alts[:-1]):
                e = ite(g, x, e)
            leaves[lf.path] = e
        return Val(t, leaves)

    def write(self, lv: LV, v: Val) -> None:
        t = lv.ctype
        self.check_access(lv)
        if self.literal_vars:
            self._not_a_literal(lv)
        if lv.unions:       # the tags first: the value and the guards do not read them (`member`)
            self.check_unions(lv, partial_write=True)
            self.set_union_tags(lv)
        # (var, the parts its new value reads, how the value is made of them): made once the parts are known
        writes: list[tuple[Var, list, Callable]] = []
        for g, cells in lv.alts:
            for lf in self.types.leaves(t):
                cell = cells[lf.path]
                var = cell.var
                x = v.leaves[lf.path]
                if not lf.in_array and cell.index is not None:
                    x = _as(var.type.elem, x)
                elif not lf.in_array:
                    x = _as(var.type, x)
                if lf.in_array:
                    self._leaf_read(cell, True, lf.count)  # checks it is the whole array
                if lf.in_array or cell.index is None:
                    writes.append((var, [g, x], lambda g, x, var=var: x if g == TRUE else ite(g, x, var)))
                else:
                    writes.append((var, [g, x, cell.index], lambda g, x, i, var=var: Store(
                        var, i, x if g == TRUE else ite(g, x, Select(var, i, var.type.elem)), var.type)))
        if len(writes) > 1:
            # All reads happen before all writes (struct copies between aliasing objects, guards that read
            # a pointer the same assignment overwrites): a part that reads a variable written before it is
            # kept in a temporary first (the parts, not the values made of them: those can be large terms)
            written: set[Var] = set()
            snaps: dict[Expr, Expr] = {}
            for var, parts, _ in writes:
                for p in parts:
                    if p not in snaps and not isinstance(p, (IntConst, BoolConst)) and free_vars(p) & written:
                        snaps[p] = None
                written.add(var)
            for p in list(snaps):
                snaps[p] = self.snap(p)
            writes = [(var, [snaps.get(p) or p for p in parts], make) for var, parts, make in writes]
        for var, parts, make in writes:
            self.emit(Assign(var, make(*parts), self.loc))


def tag_lv(tags) -> LV:
    """The tag of a union as an lvalue of its own: its cell per alternative of the union's lvalue (`member`)."""
    return LV(TAG_TYPE, [(g, {(): cell}) for g, cell in tags])


def _as(t, e: Expr) -> Expr:
    """e converted to IR type t when a character object is accessed through another character type."""
    return e if e.type == t or isinstance(t, ArrayType) else cast(t, e)


def _root(o):
    """The variable's object of a member's object, else the object itself."""
    return o.parent if o.parent is not None else o


def _one_past(off: Expr, n: Expr | None, idx) -> Expr:
    """Whether offset `off` is one past the end of an object of `n` elements (None: of a length not known)."""
    return Compare("==", off, n) if n is not None else Compare(">=", off, IntConst(1, idx))
