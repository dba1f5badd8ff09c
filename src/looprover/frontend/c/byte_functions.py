"""`memset`, `memcpy`, `memmove`, `memcmp` and `memchr` (when the program gives no body for them): a loop over the
elements of the type the destination had before its conversion to `void *`.

Why loops built here rather than C bodies (`libc_models.py`): the model's pointers count elements of their
pointee type, not bytes (`memory.py`), and these functions take `void *`. At the call the front-end still sees
the typed argument (`int *`, `struct s *`, an array), so it writes the loop over that type's elements. Each element
is read and written like the program's own `p[i]`: every access is checked under valid-memsafety (an overflow is
reported at the call), and the engines see an ordinary loop they can summarize or accelerate.

What each does, per element of type T (arrays of arrays count their innermost elements):
  * `memset(p, c, n)` stores the byte `(unsigned char)c` in every byte of the element: an integer gets that byte
    repeated (so -1 in every signed element for `c == -1`), a _Bool `byte != 0`, a pointer NULL (only `c == 0`
    is accepted for an element holding pointers: other byte patterns are no pointer the model knows).
  * `memcpy(d, s, n)` copies element by element from the first, `memmove` from the last when the destination
    lies after the source in the same object (C11 7.24.2.2: as if through a temporary). On overlapping
    arguments, where memcpy is undefined, the forward copy is one of the things it may do.
  * `memcmp(a, b, n)` and `memchr(s, c, n)` (C11 7.24.4.1, 7.24.5.1) take bytes of character arrays only: the
    order of the bytes of a wider element is the machine's, which the model does not fix. `memcmp` reads up to
    the first differing byte (compared as unsigned char) and returns any value of the sign of their difference
    (only the sign is defined: glibc returns the difference, gcc folds constants to -1/0/1), 0 when the first n
    bytes agree; `memchr` reads up to the first byte equal to `(unsigned char)c` and returns a pointer to it, or
    NULL when none of the first n is.
  * The byte count must be a whole number of elements (C11 allows any count; a part of an element would need
    memory of bytes). That is asserted with tag `unmodelled-bytes`, where it does not follow from the count's
    form: a run that copies part of an element is UNKNOWN naming it, never TRUE or FALSE.
  * The source and destination element types must agree (or be integers of one width); the result is the
    destination as a `void *` (`void_pointers.py`).
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import OFF, CBool, CFunc, CInt, CPtr, CVoid, compatible, elements_in, innermost
from looprover.frontend.c.cursors import K, canonical_type, children, strip_parens
from looprover.frontend.c.memory import Val, pointer, scalar
from looprover.frontend.c.state import LoweringState
from looprover.frontend.c.void_pointers import CHAR
from looprover.program.cfa import Assert, Assign, Assume, Havoc
from looprover.program.expr import (
    I32, Binary, Compare, ConstArray, Expr, IntConst, IntType, Var, and_, cast, const, ite,
)
from looprover.properties import UNMODELLED_BYTES

BYTE_FUNCTIONS = {"memset": "set", "__builtin_memset": "set", "memcpy": "copy", "__builtin_memcpy": "copy",
                  "memmove": "move", "__builtin_memmove": "move", "memcmp": "compare", "__builtin_memcmp": "compare",
                  "memchr": "find", "__builtin_memchr": "find"}
_U8 = IntType(8, False)


class ByteFunctionsMixin(LoweringState):
    """`byte_function_call` lowers a call of `BYTE_FUNCTIONS`; `typed_pointer` finds an argument's type before
    its conversion to `void *` (also what `free` is given)."""

    def typed_pointer(self, arg: ci.Cursor) -> ci.Cursor:
        """The expression under the conversions of `arg` to `void *` (implicit or cast)."""
        arg = strip_parens(arg)
        while arg.kind in (K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR) and len(children(arg)) >= 1 and \
                isinstance(self.ctype(arg), CPtr) and isinstance(self.ctype(arg).pointee, CVoid):
            arg = strip_parens(children(arg)[-1])
        return arg

    def byte_function_call(self, c: ci.Cursor, name: str, args: list, want: bool) -> Val:
        kind = BYTE_FUNCTIONS[name]
        if len(args) != 3:
            raise self.unsupported(f"{name} with {len(args)} arguments", c)
        self.loc = self.where(c)
        if kind in ("compare", "find"):
            return self._byte_scan(c, name, kind, args, want)
        dst_c = self.typed_pointer(args[0])
        src_c = self.typed_pointer(args[1]) if kind != "set" else None
        dst, elem, size = self._element_pointer(dst_c, name, c, like=src_c)
        dst = self.protect(dst, args[1:])
        if kind == "set":
            fill = self.protect(self.rv(args[1]), args[2:])
            if not isinstance(fill.ctype, (CInt, CBool)):
                raise self.unsupported(f"{name} with a non-integer value", c)
            byte = self.snap(cast(_U8, fill.e))   # the value at the call: the loop may write what it reads
            has_pointers = any(OFF in lf.path for lf in self.types.leaves(elem))
            if has_pointers and not (isinstance(byte, IntConst) and byte.value == 0):
                raise self.unsupported(f"{name} of a non-zero byte into {elem} (holds pointers)", c)
            value = Val(elem, {lf.path: self._filled(lf, byte) for lf in self.types.leaves(elem)})
            src = None
        else:
            src, selem, _ = self._element_pointer(src_c, name, c, like=dst_c)
            same_width = isinstance(elem, CInt) and isinstance(selem, CInt) and elem.bits == selem.bits
            if not (compatible(elem, selem) or same_width):
                raise self.unsupported(f"{name} from {selem} to {elem}", c)
            src = self.protect(src, args[2:])
            value = None
        n = self.rv(args[2])
        if not isinstance(n.ctype, CInt):
            raise self.unsupported(f"{name} with a byte count of type {n.ctype}", c)
        nbytes = n.e
        count = nbytes if size == 1 else Binary("/", nbytes, IntConst(size, nbytes.type), nbytes.type)
        if size > 1 and not _whole(nbytes, size):
            rest = Binary("%", nbytes, IntConst(size, nbytes.type), nbytes.type)
            self.emit(Assert(Compare("==", rest, IntConst(0, nbytes.type)), UNMODELLED_BYTES, self.loc))
        # the loop writes memory that the pointers and the count may read: their values at the call
        count = self.snap(count)
        dst = self.snapped(dst)
        if src is not None:
            src = self.snapped(src)
        if kind == "move":
            back = self.new_loc()
            fwd = self.new_loc()
            done = self.new_loc()
            after = and_(Compare("==", dst.obj, src.obj), Compare(">", dst.off, src.off))
            self.branch(after, back, fwd)
            self.start(back)
            self.element_loop(name, count, dst, src, value, c, backward=True)
            self.jump(done)
            self.start(fwd)
            self.element_loop(name, count, dst, src, value, c)
            self.start(done)
        else:
            self.element_loop(name, count, dst, src, value, c)
        if want:   # the destination, its offset counting its elements (`void_pointers.py`)
            return Val(self.ctype(c), dict(dst.leaves))
        return Val(CVoid(), {})

    def _byte_scan(self, c: ci.Cursor, name: str, kind: str, args: list, want: bool) -> Val:
        """`memcmp` or `memchr` (module docstring): the loop over the bytes up to the first that decides."""
        a = self.protect(self._byte_pointer(args[0], name, c), args[1:])
        if kind == "compare":
            b = self.protect(self._byte_pointer(args[1], name, c), args[2:])
        else:
            ch = self.protect(self.rv(args[1]), args[2:])
            if not isinstance(ch.ctype, CInt):
                raise self.unsupported(f"{name} of a {ch.ctype} value", c)
            byte = self.snap(cast(_U8, ch.e))
        n = self.rv(args[2])
        if not isinstance(n.ctype, CInt):
            raise self.unsupported(f"{name} with a byte count of type {n.ctype}", c)
        count = self.snap(n.e)
        t = count.type
        a = self.snapped(a)

        def at(p: Val, i: Expr) -> Expr:
            return cast(_U8, self.read(self.deref(self.ptr_add(p, cast(self.IDX, i), +1), c)).e)
        if kind == "find":
            i = self.counted_loop(name, t, [lambda i: Compare("<", i, count),
                                            lambda i: Compare("!=", at(a, i), byte)], lambda i: None)
            found = Compare("<", i, count)
            # typed as the argument's bytes (the void * converts back to a pointer to them)
            return pointer(a.ctype, ite(found, a.obj, IntConst(0, a.obj.type)),
                           ite(found, self.iadd(a.off, cast(self.IDX, i)), IntConst(0, a.off.type)))
        b = self.snapped(b)
        i = self.counted_loop(name, t, [lambda i: Compare("<", i, count),
                                        lambda i: Compare("==", at(a, i), at(b, i))], lambda i: None)
        r = self.new_var(f"{name}.r", I32, "temp")
        differ, same, done = self.new_loc(), self.new_loc(), self.new_loc()
        self.branch(Compare("<", i, count), differ, same)
        self.start(same)
        self.emit(Assign(r, IntConst(0, I32), self.loc))
        self.jump(done)
        self.start(differ)
        d = Binary("-", cast(I32, at(a, i)), cast(I32, at(b, i)), I32)
        h = self.new_var(f"{name}.h", I32, "temp")     # how far from -1 or 1: any value of the sign
        self.emit(Havoc((h,), self.loc), Assume(Compare(">=", h, IntConst(0, I32)), self.loc),
                  Assume(Compare("<", h, IntConst(I32.max, I32)), self.loc),
                  Assign(r, ite(Compare("<", d, IntConst(0, I32)), Binary("-", IntConst(-1, I32), h, I32),
                                Binary("+", IntConst(1, I32), h, I32)), self.loc))
        self.jump(done)
        self.start(done)
        return scalar(self.ctype(c), r) if want else Val(CVoid(), {})

    def _byte_pointer(self, arg: ci.Cursor, name: str, c) -> Val:
        """`arg` as a pointer to bytes: the bytes of a wider type are in an order the model does not fix."""
        p, elem, size = self._element_pointer(self.typed_pointer(arg), name, c)
        if size != 1 or not isinstance(elem, CInt):
            raise self.unsupported(f"{name} of the bytes of {elem} (only character arrays are modelled)", c)
        return p

    def _element_pointer(self, arg: ci.Cursor, name: str, c, like: ci.Cursor | None = None
                         ) -> tuple[Val, object, int]:
        """The pointer `arg` as a pointer to its innermost element type T, T, and sizeof(T). A `void *` that is
        no conversion of a typed pointer at the call (`typed_pointer`) is taken to point to the elements of the
        allocations it is given when a first lowering learned them, else to the elements the other argument
        `like` points to (memcpy from or to a typed pointer), else to chars: a use of the `void *` that is
        checked when the lowering is done (`void_pointers.py`)."""
        p = self.rv(arg)
        t = p.ctype
        if isinstance(t, CPtr) and isinstance(t.pointee, CVoid):
            typed = self.byte_call_types.get(self.call_key(arg))
            if isinstance(typed, CInt):     # learned from the program's objects (`void_pointers.learned_types`)
                t, size, typed = CPtr(typed), typed.bits // 8, None
            else:
                if typed is None and like is not None:
                    typed = _innermost(canonical_type(like.type).get_pointee())
                    typed = None if typed.kind == ci.TypeKind.VOID or typed.get_size() <= 0 else typed
                t = CPtr(self.type_of(typed, arg) if typed is not None else CHAR)
                size = typed.get_size() if typed is not None else 1
            self.void_site(p, t.pointee, byte_call=self.call_key(arg), target=typed)
            p = Val(t, p.leaves)
        elif not isinstance(t, CPtr) or isinstance(t.pointee, CFunc):
            raise self.unsupported(f"{name} of a {t} argument (the type of its bytes is not known)", c)
        else:
            size = canonical_type(arg.type).get_pointee().get_size()
        elem, per = innermost(t.pointee), elements_in(t.pointee)
        if per is None:
            raise self.unsupported(f"{name} of a variable-length array", c)
        if size <= 0 or size % per:
            raise self.unsupported(f"{name} of {t.pointee} (size unknown)", c)
        off = p.off if per == 1 else self.imul(p.off, per)
        return pointer(CPtr(elem), p.obj, off), elem, size // per

    def _filled(self, lf, byte: Expr) -> Expr:
        """The value of scalar leaf `lf` whose every byte is `byte` (whole arrays: every element)."""
        t = lf.ctype
        if isinstance(t, CBool):
            v = Compare("!=", byte, IntConst(0, _U8))
        else:
            unsigned = IntType(t.bits, False)
            repeat = sum(1 << (8 * k) for k in range(t.bits // 8))
            wide = cast(unsigned, byte)
            v = cast(IntType(t.bits, t.signed),
                     const(byte.value * repeat, unsigned) if isinstance(byte, IntConst)
                     else wide if repeat == 1 else Binary("*", wide, IntConst(repeat, unsigned), unsigned))
        if lf.in_array:
            return ConstArray(v, self.types.ir_leaf_type(lf))
        return v

    def element_loop(self, name: str, count: Expr, dst: Val, src: Val | None, value: Val | None, c,
                      backward: bool = False) -> None:
        """for (i = 0; i < count; i++) dst[k] = src[k] (or = value), k = i, or count-1-i `backward`."""
        t = count.type

        def body(i):
            k = Binary("-", Binary("-", count, IntConst(1, t), t), i, t) if backward else i
            k = cast(self.IDX, k)
            v = value if src is None else self.read(self.deref(self.ptr_add(src, k, +1), c))
            self.write(self.deref(self.ptr_add(dst, k, +1), c), v)
        self.counted_loop(name, t, [lambda i: Compare("<", i, count)], body)

    def counted_loop(self, name: str, t: IntType, tests: list, body) -> Var:
        """`for (i = 0; tests hold; i++) body(i)` for a loop a library call makes, with a fresh counter i of
        type t: each test (i -> condition) is evaluated only when the ones before it hold, so it may read
        memory (and emit that access's checks). The counter, to read after the loop."""
        i = self.new_var(f"{name}.i", t, "temp")
        self.emit(Assign(i, IntConst(0, t), self.loc))
        head = self.new_loc(f"{name}@{self.loc.line}" if self.loc is not None else name)
        end = self.new_loc()
        self.start(head)
        for test in tests:
            nxt = self.new_loc()
            self.branch(test(i), nxt, end)
            self.start(nxt)
        body(i)
        self.emit(Assign(i, Binary("+", i, IntConst(1, t), t), self.loc))
        self.jump(head)
        self.start(end)
        return i


def _innermost(t: ci.Type) -> ci.Type:
    """The innermost element type of clang type `t` (t itself unless it is an array)."""
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY):
        t = t.get_array_element_type().get_canonical()
    return t


def _whole(nbytes: Expr, size: int) -> bool:
    """Is the byte count a multiple of `size` by its form: a constant multiple, or a product with such a
    factor when `size` is a power of two (2^N is then a multiple too, so wrapping keeps it one)?"""
    if isinstance(nbytes, IntConst):
        return nbytes.value % size == 0
    if size & (size - 1) == 0 and isinstance(nbytes, Binary) and nbytes.op == "*":
        return any(_whole(x, size) for x in (nbytes.lhs, nbytes.rhs))
    return False
