"""Objects, values and lvalues of the C front-end: how C storage maps onto IR variables.

Memory model (why it is sound for the programs we accept):
  * Every C object is flattened into leaf variables (see `ctype.Leaf`). Arrays are IR arrays indexed by the
    flattened element number (row-major for multi-dimensional arrays; struct arrays become one array per field).
  * An object whose address is taken (`&x`, or an array used as a pointer) gets a positive integer id. A pointer
    is a pair (object id, element offset in units of its pointee type); 0 is NULL. A member of a struct variable
    whose address is taken (`&s.x`, `s.buf` used as a pointer, members of members by `.` alone) is an object of
    its own besides the struct's (`Obj.members`): it has the struct's variables for its leaves, so every access
    reaches the same cells, its own id and the struct's lifetime. An access through it outside the member is
    asserted against with tag `properties.UNMODELLED_MEMBER` (UNKNOWN): C11 6.5.6p8 makes it undefined, tools
    that take the struct as one object accept it. A member of a struct reached through a pointer (`&p->x`,
    `p->buf` used as a pointer, `&(*p).a.b`) has an object of the same kind in every object that holds structs
    of p's type -- a heap object, an array of them, a struct variable, a struct inside any of these -- made
    with that object (`storage.StorageMixin.pointee_member_objects`) for each such member whose address the
    program takes anywhere. Its leaves are those of the first struct of the object, so the pointer it is
    taken through must point to the object's start (offset 0) and to an object that has it: where the address
    is taken, that is asserted with tag `properties.UNMODELLED_MEMBER` (UNKNOWN otherwise: `&a[2].x`, a
    member of a struct inside an array, a NULL or reused-slot pointer). The member's objects of a heap object
    live and die with it; each pool object's get fresh ids with it (`heap.py`). Members of struct arrays
    reached by name (`&s.v[2].x`) get none: their address is refused.
  * A union is flattened like a struct of all its members plus a tag leaf (`ctype.TAG`): the members do not
    share cells, and the tag says which member's value the union's bytes hold (or that they are all zero, or
    unset). A read through another member, or a store into part of a member over another's value, is asserted
    against with tag `properties.UNMODELLED_UNION` (UNKNOWN); a pointer into a member is refused
    (`lvalues.LValueMixin.member`).
  * A `T*` pointer can only hold ids of objects containing `T`s: the front-end rejects every way of forging a
    pointer (integer-to-pointer, pointer casts between different pointee types, unknown functions), and a
    conversion from `void *` is checked to reach only such objects (`void_pointers.py`). (A pointer to a struct
    the program never defines is the exception: it holds what the `void *` it is converted from held, and is
    compared like one; it is never dereferenced.) So dereferencing is a
    case split over the address-taken objects that contain a `T`; the invalid case (NULL, dangling, wrong
    object) is undefined behaviour and is blocked with an `Assume` (the unreach-call property presupposes
    UB-free executions).
  * Locals of inlined functions get fresh variables per call site, except address-taken ones, which get one
    storage per declaration: without recursion at most one activation of a function (one execution of a
    block) is live at a time. Under valid-memsafety each activation is still a new object (C11 6.2.4): an
    address-taken local whose block may be entered more than once (any but `main`'s top-level locals and
    parameters) has a variable id, the next of its own sequence of negative values at each entry into its
    block (or call), so no two activations share one (`storage.born`); a pointer kept from an earlier
    activation then names no live object, and dereferencing it is a violation.
  * Under `valid-memsafety` (`LoweringState.memsafety`) the invalid cases are what is checked: every access
    through an array index or a pointer asserts (property `valid-deref`) that the pointer names a live object
    and that the offset lies inside it: `0 <= index < length` of the array indexed, and for a pointer
    `0 <= offset < number of pointee-sized elements of the object` (0 for a non-array object). Address-taken
    locals get a Boolean `alive` variable, false before their declaration runs and after their function
    returns, so a dangling pointer is invalid too.
  * A function pointer is a pointer whose id is the function's (`FUNCTION_ID_BASE` upward, one per function the
    program uses as a value, found by the pre-pass) and whose offset is 0. It is never dereferenced as data: a call
    through it is a case split over the functions of its type whose address is taken (`function_pointers.py`).
  * String literals used as arrays are read-only char-array objects (registered by the pre-pass); a write into
    one is a violation under valid-memsafety and undefined behaviour (not followed) otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from looprover.frontend.c.ctype import OFF, CType
from looprover.program.expr import TRUE, Expr, IntConst, IntType, Var


@dataclass
class Obj:
    """A C object with storage: its IR variables by leaf path, and its id if its address is taken."""
    name: str
    ctype: CType
    vars: dict[tuple, Var]
    kind: str
    id: int | None = None
    is_array: bool = False  # leaves stored in IR arrays at the top level (the object is a C array)
    id_var: Var | None = None   # memsafety, a local whose declaration may run again: its current id (`born`)
    length: Expr | None = None  # a heap object (`heap.py`): its number of elements
    # member path -> the object of that member, for the members whose address the program takes (`&s.x`, the
    # array `s.buf` used as a pointer): its variables are this object's, so accesses through either alias
    members: dict[tuple, "Obj"] = field(default_factory=dict)
    parent: "Obj | None" = None     # a member's object: the object it is a member of
    path: tuple = ()                # a member's object: its member path in `parent`'s first element


@dataclass(frozen=True)
class Cell:
    """Where one leaf of an lvalue lives: a scalar variable (`index` None), or an IR array and the flattened
    index of the element (for array-typed lvalues: of the first element of the sub-array)."""
    var: Var
    index: Expr | None


@dataclass
class LV:
    """An lvalue of C type `ctype`.

    `alts` are guarded alternatives (one with guard TRUE unless the lvalue comes from dereferencing a pointer
    with several candidate objects); exactly one guard holds on every UB-free execution.
    `addr` is the lvalue's own address as a pointer value (object id, offset in units of `ctype`), when the
    model can represent it (whole objects, array elements, and members that have objects, `Obj.members`).
    `checks` (only under valid-memsafety) are the (condition, source location) pairs that must hold when the
    lvalue is accessed (indices in bounds, a valid pointer); forming an lvalue (`&a[n]`) checks nothing.
    The first read or write asserts them and clears the list: later accesses of the same lvalue in one
    expression (`a[i]++`) are the same access, and after a write the conditions may read changed values.
    """
    ctype: CType
    alts: list[tuple[Expr, dict[tuple, Cell]]]
    addr: tuple[Expr, Expr] | None = None
    checks: list[tuple[Expr, object]] = field(default_factory=list)
    # a whole object or a member of one reached by `.` alone: (the object, the member path); what `member` needs
    # to give an address-taken member its own object (`Obj.members`)
    base: tuple["Obj", tuple] | None = None
    # the unions the lvalue lies in, outermost first, as (their tag cells per alternative, the number of the
    # member it lies in, whether it is that whole member): what an access checks and a write sets
    # (`lvalues.LValueMixin.member`)
    unions: tuple[tuple[tuple[tuple[Expr, "Cell"], ...], int, bool], ...] = ()
    # `addr` is the lvalue's address only where this holds (a member reached through a pointer, `memory.py`):
    # asserted with tag UNMODELLED_MEMBER where the address is taken
    addr_ok: Expr = TRUE
    # an lvalue reached through a pointer: the pointer's offset and, per object it may point into, (the test
    # that it does, the object whose members have objects, the member path there): what `member` needs to find
    # the member's objects (`Obj.members`)
    through: tuple[Expr, list[tuple[Expr, "Obj", tuple]]] | None = None


@dataclass
class Val:
    """An rvalue: one IR expression per leaf of `ctype` (scalars have the single leaf path `()`)."""
    ctype: CType
    leaves: dict[tuple, Expr] = field(default_factory=dict)

    @property
    def e(self) -> Expr:
        return self.leaves[()]

    @property
    def obj(self) -> Expr:
        return self.leaves[()]

    @property
    def off(self) -> Expr:
        return self.leaves[(OFF,)]


def scalar(ctype: CType, e: Expr) -> Val:
    return Val(ctype, {(): e})


# Ids of functions, above every object's (objects count up from 1, their activations down from -1)
FUNCTION_ID_BASE = 1 << 30


def pointer(ctype: CType, obj: Expr, off: Expr) -> Val:
    return Val(ctype, {(): obj, (OFF,): off})


def single(ctype: CType, cells: dict[tuple, Cell], addr=None, base=None) -> LV:
    return LV(ctype, [(TRUE, cells)], addr, base=base)


def is_zero(e: Expr) -> bool:
    return isinstance(e, IntConst) and e.value == 0


def idx_const(v: int, t: IntType) -> IntConst:
    return IntConst(t.wrap(v), t)
