"""Heap objects: `malloc`, `calloc`, `realloc`, `alloca` and `free` (when the program gives no body for them).

An allocation whose result is converted at once to a pointer to an object type T (`int *a = malloc(n *
sizeof *a)`, `(struct s *)calloc(1, sizeof(struct s))`) is a fresh object: an array of the T's that fit in the
requested bytes (C11 7.22.3: the object is that many bytes; a trailing partial scalar is no element), with a
liveness flag. Under valid-memsafety a struct T needs a byte count that is a constant multiple of its size (or
a `calloc` size that is): accesses to the fields of a partial struct would be valid, and `n * sizeof(T)` wraps
around in `size_t`. `malloc` and `calloc` may fail and return NULL (C11 7.22.3; SV-COMP's rules from 2027 on
allow it too), and a request of more than PTRDIFF_MAX bytes fails (as glibc's do; `calloc`'s `count * size` is
computed exactly); `alloca` does not fail. Under the convention that allocations succeed (`--allocation
succeeds`, SV-COMP's rule before 2027) none fails, and a request beyond PTRDIFF_MAX is no run. `calloc`
zero-fills, `malloc` and `alloca` leave the contents indeterminate (any values). An `alloca` object lives until
its function returns, like an address-taken local. `free(p)` needs p to be NULL or the start of a live
`malloc`/`calloc` object (valid-free: asserted under valid-memsafety, assumed otherwise, as undefined behaviour
is) and ends that object's life: later accesses through any pointer to it are invalid (asserted or assumed
against, as for a dead local, `memory.py`).

Why no access that runs after an allocation lowered later: a dereference (and a free) is a case split over the
objects known when it is lowered, and no code lowered before an allocation runs after it, except through a loop
around both or a `goto`; the lowered CFA is checked for that (`used_before_allocated`: Frama-C's output writes
every loop with gotos, which is fine after the allocation).

An allocation a loop executes (its call lies on a cycle of the CFA: a list built node by node, a buffer per
iteration) makes more objects than one set of IR variables can hold. Such a call (each inlined copy of a call
is one of its own, `LoweringState.call_key`) gets a pool of `POOL_SLOTS` objects (the front-end lowers the
program again, `lower.lower`, with the calls the first lowering found on cycles). Each allocation takes the
first slot whose object is dead (never allocated, freed, or an `alloca` object whose function returned) and
gives it a fresh id, and the objects of its members whose address is taken (`memory.py`) the next ones: values
of a counter that runs down from just below the functions' ids (`POOL_ID_TOP`) to `POOL_ID_FLOOR`, so a
pointer kept to the slot's earlier object or one of its members names no live object, and a use after free
stays one. (A slot never allocated has an id of its own below the
floor, above every static id.) Every run that never needs more than `POOL_SLOTS` live objects of one call at
once, nor more than 2^29 pool allocations, is modelled exactly; an allocation with every slot live or the
counter at its floor is asserted against with tag `properties.UNMODELLED_HEAP` (UNKNOWN: a TRUE proves no run
gets there, and a run that does is no counterexample, `jobs.inside_the_model`). An allocation used as `void *`
(stored as one, returned by a wrapper, passed to free or memset) is the requested bytes, an array of chars, or
of the type its pointer is converted to (`allocate_bytes`, `void_pointers.py`); so is one converted to a pointer
to a struct the program never defines. `realloc` converted to the type of its argument is an allocation that
copies and frees (`_reallocate`); used as `void *` it is refused.
"""
from __future__ import annotations

from typing import NamedTuple

import clang.cindex as ci

from looprover.frontend.c.ctype import (
    OFF, TAG, TAG_TYPE, TAG_UNSET, CBool, CInt, CPtr, CVoid, compatible,
)
from looprover.frontend.c.cursors import K, called_function, children, strip_parens
from looprover.frontend.c.memory import FUNCTION_ID_BASE, Obj, Val, idx_const, pointer
from looprover.frontend.c.state import LoweringState
from looprover.frontend.c.void_pointers import CHAR
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, SrcLoc, reached_from
from looprover.program.expr import (
    BOOL, TRUE, ArrayType, Binary, BoolConst, Cast, Compare, ConstArray, Expr, IntConst, IntType, Var, and_, cast,
    ite, not_, or_,
)
from looprover.properties import UNMODELLED_HEAP, UNMODELLED_MEMBER

ALLOCATORS = ("malloc", "calloc", "realloc", "alloca", "__builtin_alloca")
MAY_FAIL = ("malloc", "calloc", "realloc")
POOL_SLOTS = 3                   # objects per allocation a loop executes (module docstring)
POOL_ID_TOP = FUNCTION_ID_BASE - 1   # the first id a pool gives; later ones count down (static ids count up)
POOL_ID_FLOOR = 1 << 29              # above it: the ids pools give; below it: their unallocated slots' ids


class Allocation(NamedTuple):
    """One lowered allocation call: what `allocations_in_loops` and `used_before_allocated` look for."""
    ok: Var              # its success flag: the edge writing it is the allocation's
    src: SrcLoc | None
    loc: int             # the CFA location where it was lowered
    first_id: int        # its object's id (the first of its pool's)
    call: tuple          # `LoweringState.call_key`
    pooled: bool


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
        if name == "realloc":
            return self._reallocate(call, args, to, c)
        if self.types.opaque(pt):   # a struct never defined: the requested bytes (`expressions.convert`)
            return Val(to, self.allocate_bytes(call, name, args).leaves)
        size = c.type.get_canonical().get_pointee().get_size()
        if isinstance(pt, CVoid) or size <= 0:
            raise self.unsupported(f"{name} converted to {to}", c)
        return self._allocation(call, name, args, to, size, c.type.get_canonical().get_pointee())

    def allocate_bytes(self, call: ci.Cursor, name: str, args: list) -> Val:
        """The `void *` an allocation not converted at once returns: its object is the requested bytes (C11
        7.22.3), an array of chars, unless a first lowering learned that the uses its pointer reaches take it as
        an array of one type (`void_pointers.py`): then an array of that type."""
        if name == "realloc":
            raise self.unsupported("realloc used as void * (its result not converted to the type of its "
                                   "argument at once)", call)
        key = self.call_key(call)
        typed = self.void_allocation_types.get(key)
        if typed is not None:      # its pointer is converted to typed's only (`void_pointers.py`)
            elem = self.type_of(typed, call)
            size = typed.get_size()
            if size <= 0:
                raise self.unsupported(f"{name} used as {elem} *", call)
            v = self._allocation(call, name, args, CPtr(elem), size, typed)
            return Val(CPtr(CVoid()), v.leaves)
        v = self._allocation(call, name, args, CPtr(CHAR), 1, CHAR)
        if key in self.pools:
            self.byte_allocations.update((o.id, key) for o in self.pools[key])
        else:
            self.byte_allocations[self.objects[-1].id] = key
        return Val(CPtr(CVoid()), v.leaves)

    def _allocation(self, call: ci.Cursor, name: str, args: list, to: CPtr, size: int, element) -> Val:
        """The pointer an allocation returns, its object an array of `to`'s pointee, `size` bytes each;
        `element` is that type as clang's type (or, when clang has none at hand, our own)."""
        expected = 2 if name == "calloc" else 1
        if len(args) != expected:
            raise self.unsupported(f"{name} with {len(args)} arguments", call)
        self.loc = self.where(call)
        vals = [self.protect(self.rv(a), args[i + 1:]) for i, a in enumerate(args)]
        return self._allocate(call, name, vals, to, size, element)[0]

    def _reallocate(self, call: ci.Cursor, args: list, to: CPtr, c: ci.Cursor) -> Val:
        """`realloc(p, n)` converted to a pointer to the type p points to (C11 7.22.3.5): malloc(n) for a NULL p;
        else p must be free's to give (asserted or assumed as for free), and a new object of n bytes is
        allocated, may fail (NULL, p untouched), and on success gets the first min(old, new) elements of p's
        object, which is freed. A size of 0 for a non-NULL p, which C leaves to the implementation, is asserted
        against (`properties.UNMODELLED_HEAP`)."""
        if len(args) != 2:
            raise self.unsupported(f"realloc with {len(args)} arguments", call)
        pt = to.pointee
        size = c.type.get_canonical().get_pointee().get_size()
        if isinstance(pt, CVoid) or size <= 0 or self.types.opaque(pt):
            raise self.unsupported(f"realloc converted to {to}", c)
        self.loc = self.where(call)
        old = self.rv(self.typed_pointer(args[0]))
        if isinstance(old.ctype, (CInt, CBool)) and isinstance(old.e, IntConst) and old.e.value == 0:
            old = pointer(to, IntConst(0, self.OBJ), idx_const(0, self.IDX))
        if not (isinstance(old.ctype, CPtr) and compatible(old.ctype.pointee, pt)):
            raise self.unsupported(f"realloc of a {old.ctype} converted to {to}", c)
        old = self.snapped(self.protect(old, args[1:]))
        n = self.rv(args[1])
        is_null = Compare("==", old.obj, IntConst(0, self.OBJ))
        self.emit(Assert(or_(is_null, Compare("!=", n.e, IntConst(0, n.e.type))), UNMODELLED_HEAP, self.loc))
        heap = self._freeable_objects()
        self._check_freeable(old, heap)
        new, count = self._allocate(call, "realloc", [n], to, size, c.type.get_canonical().get_pointee())
        new = self.snapped(new)
        moved = and_(not_(is_null), Compare("!=", new.obj, IntConst(0, self.OBJ)))
        old_len = idx_const(0, self.IDX)
        readable = {o.id for o in self.pointees(pt)}     # the objects a dereference of p may read
        for o in heap:
            if o.id in readable:
                old_len = ite(Compare("==", old.obj, self.obj_id(o)), o.length, old_len)
        keep = self.snap(ite(Compare("<", old_len, count), old_len, count))
        copy, done = self.new_loc(), self.new_loc()
        self.branch(moved, copy, done)
        self.start(copy)
        self.element_loop("realloc", keep, new, old, None, c)
        self._end_life(old, heap)
        self.jump(done)
        self.start(done)
        return new

    def _allocate(self, call: ci.Cursor, name: str, vals: list[Val], to: CPtr, size: int, element
                  ) -> tuple[Val, Expr]:
        """`_allocation` given the values of its arguments; with the number of elements the object gets when the
        allocation succeeds (an index)."""
        pt = to.pointee
        size_t = IntType(self.types.ptr_bits, False)
        wide = IntType(2 * self.types.ptr_bits, False)       # count * size cannot wrap here (and is no C operation)
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
        ok = self.new_var(f"{site}.ok", BOOL, "allocated", c_name=f"{name} succeeded")
        if name in MAY_FAIL and self.allocation_fails:
            self.emit(Havoc((ok,), self.loc), Assign(ok, and_(ok, fits), self.loc))
        else:   # alloca, or the convention that allocations succeed: a larger request is no run
            self.emit(Assume(fits, self.loc), Assign(ok, TRUE, self.loc))
        key = self.call_key(call)
        self.allocation_calls[key] = (name, site, element)
        if key in self.pools:
            return pointer(to, self._allocate_in_pool(name, site, cast(self.IDX, count), ok, key),
                           idx_const(0, self.IDX)), cast(self.IDX, count)
        n = self.new_var(f"{site}.len", self.IDX, "local", c_name=f"length of the {name} object")
        self.emit(Assign(n, ite(ok, cast(self.IDX, count), idx_const(0, self.IDX)), self.loc))
        obj = self._heap_object(name, site, pt, n)
        self._allocated(name, obj)
        flag = self.alive[obj.id]
        cells = tuple(obj.vars.values())
        if name == "calloc":
            self.emit(*(Assign(v, ConstArray(_zero(v.type.elem), v.type), self.loc) for v in cells))
        else:
            self.emit(Havoc(cells, self.loc))
            self.unset_union_tags(obj)
        self.emit(Assign(flag, ok, self.loc))
        # `allocations_in_loops` finds the allocation by its flag; `used_before_allocated` by its place and object
        self.allocations.append(Allocation(ok, self.loc, self.here(), obj.id, key, False))
        oid = ite(ok, IntConst(obj.id, self.OBJ), IntConst(0, self.OBJ))
        return pointer(to, oid, idx_const(0, self.IDX)), cast(self.IDX, count)

    def _heap_object(self, name: str, site: str, pt, n: Var) -> Obj:
        """A registered heap object of `n` elements of `pt`, with its liveness flag (what `free` may end, for
        malloc and calloc)."""
        obj = self.sized_obj(site, pt, n)
        flag = self.alive_flag(obj)
        if name in MAY_FAIL:
            self.heap_flags[obj.id] = flag
        return obj

    def _allocated(self, name: str, obj: Obj) -> None:
        """`obj` may have been allocated by the statement being lowered: its pointer is no variable's yet
        (`memtrack.py`); an alloca object dies when the function running returns."""
        fr = self.frames[-1]
        fr.allocating.add(obj.id)
        if name not in MAY_FAIL and self.alive[obj.id] not in fr.born:
            fr.born.append(self.alive[obj.id])

    def make_pools(self, calls: dict) -> None:
        """The pools of the allocation calls a loop executes (module docstring), made before the lowering
        starts, so that every dereference and free knows their objects; `calls`: call -> (function, site name,
        element type), as a first lowering found them (`lower.lower`; the element type of an allocation used as
        `void *` may have been learned since, `void_pointers.py`)."""
        for key, (name, site, _) in calls.items():
            typed = self.void_allocation_types.get(key)
            element = typed if typed is not None else calls[key][2]
            pt = self.type_of(element, None) if isinstance(element, ci.Type) else element
            slots = []
            for i in range(POOL_SLOTS):
                n = self.new_var(f"{site}#{i}.len", self.IDX, "local", c_name=f"length of the {name} object #{i}")
                obj = self._heap_object(name, f"{site}#{i}", pt, n)
                for o in (obj, *obj.members.values()):
                    o.id_var = self.new_var(f"{o.name}@id", self.OBJ, "local", f"{o.name}@id")
                slots.append(obj)
            self.pools[key] = slots
        if calls:
            self.pool_next = self.new_var("heap@next_id", self.OBJ, "global", "the next id of a pool object")

    def _allocate_in_pool(self, name: str, site: str, count: Expr, ok: Var, key: tuple) -> Expr:
        """The id of the object an allocation a loop executes gives (module docstring): the first dead slot of
        the call's pool gets `count` elements, fresh contents (zeros for calloc), life and the pool's next id."""
        slots = self.pools[key]
        for o in slots:
            self._allocated(name, o)
        dead = [not_(self.alive[o.id]) for o in slots]
        members = list(slots[0].members)      # (the same paths in every slot: one element type)
        fresh_id = Compare(">", self.pool_next, IntConst(POOL_ID_FLOOR + len(members), self.OBJ))
        self.emit(Assert(or_(not_(ok), and_(or_(*dead), fresh_id)), UNMODELLED_HEAP, self.loc))
        # which slot is taken, decided before any flag changes
        taken = [self.new_var(f"{o.name}.taken", BOOL, "temp") for o in slots]
        self.emit(*(Assign(t, and_(ok, dead[i], *(not_(d) for d in dead[:i])), self.loc)
                    for i, t in enumerate(taken)))
        oid = self.new_var(f"{site}.id", self.OBJ, "temp")
        self.pool_ids[oid] = slots[0].id       # (no `id_vars`: memtrack need not count it, `pending` does)
        self.emit(Assign(oid, ite(ok, self.pool_next, IntConst(0, self.OBJ)), self.loc))
        # the ids of its members' objects (`memory.py`): the next ones
        member_ids = []
        for j, path in enumerate(members):
            mid = self.new_var(f"{site}.id", self.OBJ, "temp")
            self.pool_ids[mid] = slots[0].members[path].id
            self.emit(Assign(mid, Binary("-", self.pool_next, IntConst(j + 1, self.OBJ), self.OBJ), self.loc))
            member_ids.append(mid)
        self.emit(Assign(self.pool_next, Binary("-", self.pool_next, IntConst(1 + len(members), self.OBJ),
                                                self.OBJ), self.loc))
        fresh = {}
        if name != "calloc":
            # "local": uninitialised memory (`VarInfo.uninitialised`), which no harness or witness can give a value
            fresh = {p: self.new_var(f"{site}.fresh", v.type, "local", c_name=f"contents of the {name} object")
                     for p, v in slots[0].vars.items()}
            # indeterminate pointers, as the single object's havocked cells are (`void_pointers.py`); no
            # pointer the program holds (`memtrack.py`)
            self.indeterminate_ids.update(fresh[p] for p in fresh if p + (OFF,) in fresh)
            self.emit(Havoc(tuple(fresh.values()), self.loc))
        unset = IntConst(TAG_UNSET, self.types.ir_scalar(TAG_TYPE))
        for o, t in zip(slots, taken):
            for p, v in o.vars.items():
                if name == "calloc":
                    new = ConstArray(_zero(v.type.elem), v.type)
                elif p and p[-1] == TAG:      # a union holds no member's value yet (`unset_union_tags`)
                    new = ConstArray(unset, v.type) if isinstance(v.type, ArrayType) else unset
                else:
                    new = fresh[p]
                self.emit(Assign(v, ite(t, new, v), self.loc))
            self.emit(Assign(o.length, ite(t, count, o.length), self.loc),
                      Assign(o.id_var, ite(t, oid, o.id_var), self.loc),
                      *(Assign(o.members[path].id_var, ite(t, mid, o.members[path].id_var), self.loc)
                        for path, mid in zip(members, member_ids)),
                      Assign(self.alive[o.id], or_(self.alive[o.id], t), self.loc))
        self.allocations.append(Allocation(ok, self.loc, self.here(), slots[0].id, key, True))
        return oid

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
        heap = self._freeable_objects()
        self._check_freeable(p, heap)
        self._end_life(p, heap)

    def _freeable_objects(self) -> list[Obj]:
        """The malloc, calloc and realloc objects known here (what free and realloc may be given)."""
        return [o for o in self.known_objects() if o.id in self.heap_flags]

    def _end_life(self, p: Val, heap: list[Obj]) -> None:
        """The object of `heap` that p points to is no longer live (free, a realloc that moved it)."""
        self.emit(*(Assign(self.heap_flags[o.id], and_(self.heap_flags[o.id],
                                                       not_(Compare("==", p.obj, self.obj_id(o)))),
                           self.loc) for o in heap))

    def _check_freeable(self, p: Val, heap: list) -> None:
        """Assert (valid-free, under valid-memsafety) or assume that p is NULL or the start of a live heap object
        of `heap` (what free and realloc may be given)."""
        members = [sub for o in heap for sub in o.members.values()]
        if members:     # C frees by address: a first member's is its struct's (not modelled, `memory.py`)
            self.emit(Assert(not_(or_(*(Compare("==", p.obj, self.obj_id(sub)) for sub in members))),
                             UNMODELLED_MEMBER, self.loc))
        hit = [and_(Compare("==", p.obj, self.obj_id(o)), self.heap_flags[o.id]) for o in heap]
        valid = or_(Compare("==", p.obj, IntConst(0, self.OBJ)),
                    and_(or_(*hit), Compare("==", p.off, idx_const(0, self.IDX))))
        if self.memsafety:
            self.emit(Assert(valid, "valid-free", self.loc))
        else:
            self.emit(Assume(valid, self.loc))


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


def allocations_in_loops(edges: list[Edge], allocations: list[Allocation]) -> list[tuple[tuple, SrcLoc | None]]:
    """(call, source) of the allocations without a pool that a loop can execute more than once: those whose
    edge (the one writing the success flag) lies on a cycle of the CFA, i.e. its target reaches its source. For
    `lower.Lowerer.run` (module docstring)."""
    where = {a.ok.name: a for a in allocations if not a.pooled}
    out = []
    for e in edges:
        sites = [where[v.name] for s in e.stmts for v in s.writes() if v.name in where]
        if sites and (e.dst == e.src or e.src in reached_from(edges, e.dst)):
            out.append((sites[0].call, sites[0].src))
    return out


def used_before_allocated(edges: list[Edge], allocations: list[Allocation], views: list[tuple]
                          ) -> tuple[SrcLoc | None, SrcLoc | None] | None:
    """(the allocation, the step) where a step lowered before an allocation, which enumerated the objects without
    its object (a dereference, a free; `LoweringState.known_objects`), can run after it: a `goto` back over the
    allocation, or forward into code lowered earlier. None if there is none. On the CFA as lowered, whose
    locations the views and allocations name (`lower.Lowerer.run`)."""
    for a in allocations:
        blind = {}
        for vloc, count, vsrc in views:
            if count < a.first_id:
                blind.setdefault(vloc, vsrc)
        later = reached_from(edges, a.loc) if blind else set()
        hit = next((vloc for vloc in blind if vloc in later), None)
        if hit is not None:
            return a.src, blind[hit]
    return None
