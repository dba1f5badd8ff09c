"""C types as the front-end models them, translated from libclang's typed AST, and their storage layout.

Why our own small type model: clang's types carry qualifiers, typedef sugar and target details we do not
want to compare by hand; after translation two types are equal exactly when their values have the same IR
representation (e.g. `int` and `long` in ILP32 are both `i32`). Every C object is flattened into *leaves*:
one IR variable per scalar component (struct fields become separate variables, a pointer becomes an object id
plus an element offset, arrays become IR arrays indexed by the flattened element number).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from looprover.errors import UnsupportedError
from looprover.frontend.c.cursors import FUNCTION_KINDS
from looprover.program.expr import BOOL, I32, I64, ArrayType, Binary, Expr, IntConst, IntType, Type

TK = ci.TypeKind


@dataclass(frozen=True)
class CInt:
    bits: int
    signed: bool
    rank: int = field(default=3, compare=False)  # 1 char, 2 short, 3 int, 4 long, 5 long long

    def __str__(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.bits}"


@dataclass(frozen=True)
class CBool:
    def __str__(self) -> str:
        return "_Bool"


@dataclass(frozen=True)
class CVoid:
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class CPtr:
    pointee: "CType"

    def __str__(self) -> str:
        return f"{self.pointee}*"


@dataclass(frozen=True)
class CArray:
    elem: "CType"
    # int: fixed length; an IR variable: a variable-length array object whose length was stored when its
    # declaration ran; None: a variable-length array type we know nothing about
    size: "int | Expr | None"

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"


@dataclass(frozen=True)
class CStruct:
    """A struct or a union, identified by its declaration; fields live in `TypeTable.fields` (structs may be
    recursive through pointers, so they cannot be nested by value here). A union's members do not share
    storage in the model: each has its own leaves, and the union one more, its tag (`TAG`), which says which
    member its bytes hold (`lvalues.LValueMixin.member`)."""
    key: tuple
    name: str
    union: bool = False

    def __str__(self) -> str:
        return f"{'union' if self.union else 'struct'} {self.name}"


@dataclass(frozen=True)
class CFunc:
    def __str__(self) -> str:
        return "function"


CType = CInt | CBool | CVoid | CPtr | CArray | CStruct | CFunc

OFF = "@off"  # the leaf-path component of a pointer's offset (not a C identifier, so no field can clash)
# the leaf-path component of a union's tag: which member's representation the union's bytes hold, as the
# member's number (1, 2, ...), or TAG_ZERO (every byte zero: every member reads as zero) or TAG_UNSET (no value
# yet: every member reads as indeterminate)
TAG = "@tag"
TAG_ZERO, TAG_UNSET = 0, -1
TAG_TYPE = CInt(8, True, 1)


@dataclass(frozen=True)
class Leaf:
    """A scalar component of a C type: its path (field names, OFF for a pointer offset), its scalar C type,
    how many scalars of it one value of the type holds (`count`, > 1 inside arrays) and whether it lies
    inside an array (then objects store it in an IR array)."""
    path: tuple
    ctype: CType  # CInt, CBool, or CInt for pointer components
    count: "int | Expr | None"  # an IR expression for variable-length arrays; None if unknown
    in_array: bool


_INT_KINDS = {
    TK.CHAR_S: (True, 1), TK.SCHAR: (True, 1), TK.CHAR_U: (False, 1), TK.UCHAR: (False, 1),
    TK.SHORT: (True, 2), TK.USHORT: (False, 2), TK.INT: (True, 3), TK.UINT: (False, 3),
    TK.LONG: (True, 4), TK.ULONG: (False, 4), TK.LONGLONG: (True, 5), TK.ULONGLONG: (False, 5),
    TK.WCHAR: (True, 3), TK.CHAR16: (False, 2), TK.CHAR32: (False, 3),
}
_FLOAT_KINDS = {TK.FLOAT, TK.DOUBLE, TK.LONGDOUBLE, TK.HALF, TK.FLOAT128, TK.COMPLEX, TK.IBM128}


def is_floating(t: ci.Type) -> bool:
    """Whether the clang type `t` is one of the floating-point types the model has no values for."""
    return t.get_canonical().kind in _FLOAT_KINDS


class TypeTable:
    """Translates clang types for one translation unit and one data model."""

    def __init__(self, data_model: str):
        self.data_model = data_model
        self.ptr_bits = 32 if data_model == "ILP32" else 64
        self.index_type: IntType = I32 if self.ptr_bits == 32 else I64  # ptrdiff_t: array indices, offsets
        self.obj_type: IntType = I32                                   # pointer object ids
        self.fields: dict[tuple, tuple[tuple[str, CType], ...]] = {}
        self._leaves: dict[CType, tuple[Leaf, ...]] = {}
        self._int_types: dict[ci.TypeKind, CInt] = {}  # the target fixes their sizes: ask libclang once

    # ------------------------------------------------------------------------------------ translation
    def of(self, t: ci.Type, where=None) -> CType:
        return self.of_canonical(t.get_canonical(), where)

    def of_canonical(self, t: ci.Type, where=None) -> CType:
        """`of` for a type that is already canonical (the lowering asks for the type of every expression)."""
        k = t.kind
        if k in _INT_KINDS:
            ct = self._int_types.get(k)
            if ct is None:
                signed, rank = _INT_KINDS[k]
                ct = self._int_types[k] = CInt(t.get_size() * 8, signed, rank)
            return ct
        if k == TK.BOOL:
            return CBool()
        if k == TK.VOID:
            return CVoid()
        if k == TK.ENUM:
            return self.of(t.get_declaration().enum_type, where)
        if k == TK.POINTER:
            p = t.get_pointee().get_canonical()
            if p.kind in FUNCTION_KINDS:
                return CPtr(CFunc())
            return CPtr(self.of(p, where))
        if k == TK.CONSTANTARRAY:
            return CArray(self.of(t.element_type, where), t.get_array_size())
        if k == TK.VARIABLEARRAY:
            return CArray(self.of(t.element_type, where), None)
        if k == TK.INCOMPLETEARRAY:
            raise UnsupportedError("array of unknown size", where)
        if k == TK.RECORD:
            return self._record(t, where)
        if k in FUNCTION_KINDS:
            return CFunc()
        if k in _FLOAT_KINDS:
            raise UnsupportedError(f"floating-point type '{t.spelling}'", where)
        if k in (TK.INT128, TK.UINT128):
            raise UnsupportedError("128-bit integer type", where)
        raise UnsupportedError(f"type '{t.spelling}'", where)

    def _record(self, t: ci.Type, where) -> CStruct:
        decl = t.get_declaration()
        loc = decl.location
        key = (loc.file.name if loc.file else "", loc.offset, decl.spelling)
        st = CStruct(key, decl.spelling or "<anonymous>", decl.kind == ci.CursorKind.UNION_DECL)
        if key not in self.fields and decl.get_definition() is None:
            # never defined: a pointer to it is fine until something needs its members (`members`)
            self.fields[key] = None
        if key not in self.fields:
            self.fields[key] = ()  # placeholder: a recursive field reference only needs the key
            fs = []
            for f in decl.get_children():
                if f.kind != ci.CursorKind.FIELD_DECL:
                    continue
                if f.is_bitfield():
                    raise UnsupportedError("bit-field", where)
                if not f.spelling:
                    raise UnsupportedError("anonymous struct/union member", where)
                ft = f.type.get_canonical()
                if ft.kind == TK.INCOMPLETEARRAY:
                    raise UnsupportedError("flexible array member", where)
                fs.append((f.spelling, self.of(f.type, where)))
            if not fs:
                raise UnsupportedError(f"incomplete or empty {'union' if st.union else 'struct'} '{t.spelling}'",
                                       where)
            if st.union and len(fs) > 127:      # the numbers a tag (an 8-bit leaf) holds
                raise UnsupportedError("union with more than 127 members", where)
            self.fields[key] = tuple(fs)
        return st

    # --------------------------------------------------------------------------------------- layout
    def leaves(self, t: CType) -> tuple[Leaf, ...]:
        """The scalar components of `t` in declaration order (struct fields, then pointer id/offset)."""
        got = self._leaves.get(t)
        if got is None:
            got = self._leaves[t] = tuple(self._compute_leaves(t))
        return got

    def _compute_leaves(self, t: CType):
        if isinstance(t, (CInt, CBool)):
            yield Leaf((), t, 1, False)
        elif isinstance(t, CPtr):   # a function pointer too: its id is a function's (`calls.py`), its offset 0
            yield Leaf((), CInt(self.obj_type.bits, True), 1, False)
            yield Leaf((OFF,), CInt(self.index_type.bits, True), 1, False)
        elif isinstance(t, CStruct):
            if t.union:
                yield Leaf((TAG,), TAG_TYPE, 1, False)
            for name, ft in self.members(t):
                for lf in self.leaves(ft):
                    yield Leaf((name,) + lf.path, lf.ctype, lf.count, lf.in_array)
        elif isinstance(t, CArray):
            for lf in self.leaves(t.elem):
                yield Leaf(lf.path, lf.ctype, self.mul_count(t.size, lf.count), True)
        elif isinstance(t, CVoid):
            raise UnsupportedError("object of type void")
        else:
            raise UnsupportedError(f"object of type {t}")

    def mul_count(self, a, b):
        if a is None or b is None:
            return None
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(a, int):
            a, b = b, a
        if b == 1:
            return a
        bb = IntConst(b, self.index_type) if isinstance(b, int) else b
        return Binary("*", a, bb, self.index_type)

    def count(self, t: CType, path: tuple):
        for lf in self.leaves(t):
            if lf.path == path:
                return lf.count
        raise KeyError(path)

    def members(self, st: CStruct) -> tuple:
        """The (name, type) of `st`'s members; UnsupportedError for a struct the program never defines."""
        fs = self.fields[st.key]
        if fs is None:
            raise UnsupportedError(f"incomplete {'union' if st.union else 'struct'} '{st.name}' (never defined)")
        return fs

    def opaque(self, t: CType) -> bool:
        """A struct or union the program never defines: a pointer to it is never dereferenced nor moved."""
        return isinstance(t, CStruct) and self.fields.get(t.key) is None

    def field_type(self, st: CStruct, name: str) -> CType:
        for n, ft in self.members(st):
            if n == name:
                return ft
        raise UnsupportedError(f"member '{name}' of {st}")

    # ---------------------------------------------------------------------------------- IR mapping
    def ir_scalar(self, t: CType) -> Type:
        if isinstance(t, CBool):
            return BOOL
        if isinstance(t, CInt):
            return IntType(t.bits, t.signed)
        raise TypeError(t)

    def ir_leaf_type(self, lf: Leaf) -> Type:
        """The IR type of a variable storing this leaf of a whole object."""
        s = self.ir_scalar(lf.ctype)
        if lf.in_array:
            return ArrayType(self.index_type, s, lf.count if isinstance(lf.count, int) else None)
        return s

    # ----------------------------------------------------------------------------- C conversions
    @staticmethod
    def is_scalar(t: CType) -> bool:
        return isinstance(t, (CInt, CBool, CPtr))

    def promote(self, t: CType) -> CType:
        """Integer promotion: everything of lower rank than int becomes int (int holds all their values)."""
        if isinstance(t, CBool):
            return CInt(32, True, 3)
        if isinstance(t, CInt) and t.rank < 3:
            return CInt(32, True, 3)
        return t

    def usual_arithmetic(self, a: CType, b: CType) -> CInt:
        """C11 6.3.1.8 for integer operands (after promotion)."""
        a, b = self.promote(a), self.promote(b)
        assert isinstance(a, CInt) and isinstance(b, CInt)
        if a.signed == b.signed:
            return a if (a.rank, a.bits) >= (b.rank, b.bits) else b
        u, s = (a, b) if not a.signed else (b, a)
        if u.rank >= s.rank:
            return u
        if s.bits > u.bits:
            return s
        return CInt(s.bits, False, s.rank)


def compatible(a: CType, b: CType) -> bool:
    """Equal, or arrays that differ only where a length is not a compile-time constant (C11 6.7.6.2p6)."""
    if a == b:
        return True
    if isinstance(a, CArray) and isinstance(b, CArray):
        if isinstance(a.size, int) and isinstance(b.size, int) and a.size != b.size:
            return False
        return compatible(a.elem, b.elem)
    if isinstance(a, CPtr) and isinstance(b, CPtr):
        return compatible(a.pointee, b.pointee)
    return False


def is_char(t: CType) -> bool:
    """A character type (any signedness): objects of one may be accessed through another (C11 6.5p7)."""
    return isinstance(t, CInt) and t.bits == 8


def strip_array(t: CType):
    """Element types of `t` from outermost to innermost (t itself first)."""
    while True:
        yield t
        if not isinstance(t, CArray):
            return
        t = t.elem


def innermost(t: CType) -> CType:
    """The innermost element type of `t` (t itself unless it is an array)."""
    while isinstance(t, CArray):
        t = t.elem
    return t


def elements_in(t: CType) -> int | None:
    """How many innermost elements one `t` holds: 1 unless t is an array; None for a variable-length one."""
    n = 1
    while isinstance(t, CArray):
        if not isinstance(t.size, int):
            return None
        n *= t.size
        t = t.elem
    return n
