"""Heap objects: `malloc`, `calloc`, `alloca` and `free` (when the program gives no body for them).

An allocation whose result is converted at once to a pointer to an object type T (`int *a = malloc(n *
sizeof *a)`, `(struct s *)calloc(1, sizeof(struct s))`) is a fresh object: an array of the T's that fit in the
requested bytes (C11 7.22.3: the object is that many bytes; a trailing partial scalar is no element), with a
liveness flag. Under valid-memsafety a struct T needs a byte count that is a constant multiple of its size (or
a `calloc` size that is): accesses to the fields of a partial struct would be valid, and `n * sizeof(T)` wraps
around in `size_t`. `malloc` and `calloc` may fail and return NULL (C11 7.22.3; SV-COMP's rules from 2027 on
allow it too), and a request of more than PTRDIFF_MAX bytes fails (as glibc's do; `calloc`'s `count * size` is
computed exactly); `alloca` does not fail. `calloc` zero-fills, `malloc` and `alloca` leave the contents
indeterminate (any values). An `alloca` object lives until its function returns, like an address-taken local.
`free(p)` needs p to be NULL or the start of a live `malloc`/`calloc` object (valid-free: asserted under
valid-memsafety, assumed otherwise, as undefined behaviour is) and ends that object's life: later accesses
through any pointer to it are invalid (asserted or assumed against, as for a dead local, `memory.py`).

Why only allocations outside loops, and no access that runs after an allocation lowered later: a dereference
(and a free) is a case split over the objects known when it is lowered, and without loops no code lowered
before an allocation runs after it unless a `goto` leads there; the lowered CFA is checked for that
(`used_before_allocated`: Frama-C's output writes every loop with gotos, which is fine after the allocation).
Moreover an object is one set of IR variables, so an allocation executed twice in a run (a list built in a loop)
would need two live objects in one place. Such a program is refused, naming the allocation, rather than modelled
unsoundly: the finished CFA is checked for an allocation on a cycle (`allocations_in_loops`). `realloc` and an
allocation used as `void *` are refused as well.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import CBool, CInt, CPtr, CVoid
from looprover.frontend.c.cursors import K, called_function, children, strip_parens
from looprover.frontend.c.memory import Val, idx_const, pointer
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, SrcLoc, reached_from
from looprover.program.expr import (
    BOOL, TRUE, Binary, BoolConst, Cast, Compare, ConstArray, Expr, IntConst, IntType, and_, cast, ite, not_,
    or_,
)

ALLOCATORS = ("malloc", "calloc", "alloca", "__builtin_alloca")
MAY_FAIL = ("malloc", "calloc")


class HeapMixin(LoweringState):
    def allocation_call(self, c: ci.Cursor) -> tuple[str, list] | None:
        """(name, argument cursors) when `c` is a call of an allocation function without a body (whose result a
        conversion to T* then gives to `allocate`)."""
        c = strip_parens(c)
        if c.kind != K.CALL_EXPR:
            return None
        ks = children(c)
        ref = called_function(c)
        if ref is None or ref.spelling not in ALLOCATORS:
            return None
        if ref.get_definition() is not None:
            return None
        return ref.spelling, ks[1:]

    def allocate(self, call: ci.Cursor, name: str, args: list, to: CPtr, c: ci.Cursor) -> Val:
        """The pointer a converted allocation returns (module docstring)."""
        pt = to.pointee
        size = c.type.get_canonical().get_pointee().get_size()
        if isinstance(pt, CVoid) or size <= 0:
            raise self.unsupported(f"{name} converted to {to}", c)
        expected = 2 if name == "calloc" else 1
        if len(args) != expected:
            raise self.unsupported(f"{name} with {len(args)} arguments", call)
        self.loc = self.where(call)
        size_t = IntType(self.types.ptr_bits, False)
        wide = IntType(2 * self.types.ptr_bits, False)       # count * size cannot wrap here (and is no C operation)
        vals = [self.protect(self.rv(a), args[i + 1:]) for i, a in enumerate(args)]
        if self.memsafety and not self.types.is_scalar(pt) and \
                not any(_constant(v.e) is not None and _constant(v.e) % size == 0 for v in vals):
            raise self.unsupported(f"{name} of a byte count that is not a constant multiple of sizeof({pt}) "
                                   f"(valid-memsafety)", call)
        ops = [cast(wide, cast(size_t, v.e)) for v in vals]
        nbytes = ops[0] if len(ops) == 1 else Binary("*", ops[0], ops[1], wide)
        count = Binary("/", nbytes, IntConst(size, wide), wide)
        # at most PTRDIFF_MAX bytes (what glibc allocates; larger requests fail); calloc's product is exact
        fits = Compare("<=", nbytes, IntConst(self.IDX.max, wide))
        site = f"{name}@{self.loc.line if self.loc else 0}"
        ok = self.new_var(f"{site}.ok", BOOL, "local", c_name=f"{name} succeeded")
        if name in MAY_FAIL:
            self.emit(Havoc((ok,), self.loc), Assign(ok, and_(ok, fits), self.loc))
        else:
            self.emit(Assume(fits, self.loc), Assign(ok, TRUE, self.loc))   # larger: undefined behaviour
        n = self.new_var(f"{site}.len", self.IDX, "local", c_name=f"length of the {name} object")
        self.emit(Assign(n, ite(ok, cast(self.IDX, count), idx_const(0, self.IDX)), self.loc))
        obj = self.sized_obj(site, pt, n)
        if self.frames:
            self.frames[-1].allocating.add(obj.id)    # its pointer is no variable's yet (`memtrack.py`)
        flag = self.alive_flag(obj)
        if name in MAY_FAIL:
            self.heap_flags[obj.id] = flag          # what free may end
        else:
            self.frames[-1].born.append(flag)       # alloca: dies when its function returns
        cells = tuple(obj.vars.values())
        if name == "calloc":
            self.emit(*(Assign(v, ConstArray(_zero(v.type.elem), v.type), self.loc) for v in cells))
        else:
            self.emit(Havoc(cells, self.loc))
            self.unset_union_tags(obj)
        self.emit(Assign(flag, ok, self.loc))
        # `allocations_in_loops` finds the allocation by its flag; `used_before_allocated` by its place and object
        self.allocations.append((ok, self.loc, self.here(), obj.id))
        oid = ite(ok, IntConst(obj.id, self.OBJ), IntConst(0, self.OBJ))
        return pointer(to, oid, idx_const(0, self.IDX))

    def free_call(self, call: ci.Cursor, args: list) -> None:
        """`free(p)` (module docstring)."""
        if len(args) != 1:
            raise self.unsupported(f"free with {len(args)} arguments", call)
        self.loc = self.where(call)
        p = self.rv(self.typed_pointer(args[0]))   # free sees the object, not the conversion to void *
        if isinstance(p.ctype, (CInt, CBool)) and isinstance(p.e, IntConst) and p.e.value == 0:
            return                                      # free(0), free(NULL): nothing happens
        if not isinstance(p.ctype, CPtr):
            raise self.unsupported("free of a non-pointer", call)
        heap = [o for o in self.known_objects() if o.id in self.heap_flags]
        hit = [and_(Compare("==", p.obj, IntConst(o.id, self.OBJ)), self.heap_flags[o.id]) for o in heap]
        valid = or_(Compare("==", p.obj, IntConst(0, self.OBJ)),
                    and_(or_(*hit), Compare("==", p.off, idx_const(0, self.IDX))))
        if self.memsafety:
            self.emit(Assert(valid, "valid-free", self.loc))
        else:
            self.emit(Assume(valid, self.loc))
        self.emit(*(Assign(self.heap_flags[o.id], and_(self.heap_flags[o.id],
                                                       not_(Compare("==", p.obj, IntConst(o.id, self.OBJ)))),
                           self.loc) for o in heap))


def _constant(e: Expr) -> int | None:
    """The value of `e` when it is a constant (through the conversions applied to it), else None."""
    if isinstance(e, IntConst):
        return e.value
    if isinstance(e, Cast) and isinstance(e.type, IntType):
        inner = _constant(e.arg)
        return None if inner is None else e.type.wrap(inner)
    if isinstance(e, Binary) and e.op in ("*", "+") and isinstance(e.type, IntType):
        a, b = _constant(e.lhs), _constant(e.rhs)
        return None if a is None or b is None else e.type.wrap(a * b if e.op == "*" else a + b)
    return None


def _zero(t) -> Expr:
    return IntConst(0, t) if isinstance(t, IntType) else BoolConst(False)


def allocations_in_loops(edges: list[Edge], allocations: list[tuple]) -> list[SrcLoc | None]:
    """Where the allocations are that a loop can execute more than once: those whose edge (the one writing the
    success flag) lies on a cycle of the CFA, i.e. its target reaches its source. For `lower.Lowerer.run`
    (module docstring)."""
    where = {ok.name: src for ok, src, *_ in allocations}
    out = []
    for e in edges:
        sites = [where[v.name] for s in e.stmts for v in s.writes() if v.name in where]
        if sites and (e.dst == e.src or e.src in reached_from(edges, e.dst)):
            out.append(sites[0])
    return out


def used_before_allocated(edges: list[Edge], allocations: list[tuple], views: list[tuple]
                          ) -> tuple[SrcLoc | None, SrcLoc | None] | None:
    """(the allocation, the step) where a step lowered before an allocation, which enumerated the objects without
    its object (a dereference, a free; `LoweringState.known_objects`), can run after it: a `goto` back over the
    allocation, or forward into code lowered earlier. None if there is none. On the CFA as lowered, whose
    locations the views and allocations name (`lower.Lowerer.run`)."""
    for _, src, loc, oid in allocations:
        blind = {}
        for vloc, count, vsrc in views:
            if count < oid:
                blind.setdefault(vloc, vsrc)
        later = reached_from(edges, loc) if blind else set()
        hit = next((vloc for vloc in blind if vloc in later), None)
        if hit is not None:
            return src, blind[hit]
    return None
