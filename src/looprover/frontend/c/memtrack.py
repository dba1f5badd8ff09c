"""valid-memtrack: no run loses track of a heap object it has not freed (SV-COMP: "there exists no finite
execution on which the program lost track of some previously allocated memory").

What is lost stays lost: no pointer can be forged (`memory.py`), so once no pointer reaches a live `malloc`/
`calloc` object, none will again. It is therefore enough to look at a few points of every run:
  * where a run ends: the end of `main`, whose locals then die (only the globals still point anywhere), and a
    call of `exit`, `abort` or a failed assert, where every function being run keeps its locals (SV-COMP: a
    program that ends there has not lost what its locals point to);
  * the head of every loop and every label (a `goto` target): a run that never ends passes one of them again
    and again after any loss (the loops the library models and `memset` make run a bounded number of times);
  * where an assumption fails: `assume_abort_if_not` ends the run there (abort), `__VERIFIER_assume` lets it
    go no further.
At each such point (`memtrack_point`) every live heap object o gets two assertions, built when the lowering is
done and every allocation is known (`finish_memtrack`):
  * `valid-memtrack`: o is *maybe* reached -- some scalar variable that may hold a pointer holds o's id (a
    superset of the live pointers: dead locals and temporaries count too; at the end of main only the globals),
    or a pointer in an array (of the globals, of main's argv array when the program stores into it, or of any
    local but at the end of main) might, or another live heap object holds o's id in one of its first
    `INSPECTED` cells of a pointer leaf or has more cells than that (whether that object is reached or not: a
    lost cycle of two or more objects counts as reached), or the statement that allocated o has not finished
    (its pointer may be an operand not yet stored: `f(malloc(n), g())` while g runs). A failure is a real leak:
    nothing but o itself points to o any more.
  * `UNMODELLED_MEMTRACK`: if o is maybe reached, it is *surely* reached -- a pointer into it (its start up to
    one past its end) is held by a global, by a parameter or a local of a function being run whose declaration
    the run surely passed (`memtrack_point`; at the end of main: by a global), or is the value a parameter is
    bound to; or a pointer into it lies in one of the first `INSPECTED` cells of a live heap object surely
    reached (a chain of up to `CHAIN_ROUNDS` links: a list built in a loop, `heap.py`); and not inside a union
    (a union's members keep their own leaves: another member stored since may have overwritten the pointer's
    bytes). What lies between (a pointer only in an array, in a dead local, further down a chain) is UNKNOWN
    naming it.
So a TRUE means that at every point every live heap object is surely reached, and a FALSE shows a run on which
one is reached by nothing.

Only under valid-memsafety in `verify` (`LoweringState.memtrack`); `check` reports the access checks alone.
valid-memcleanup (`LoweringState.memcleanup`, SV-COMP: "all allocated memory is deallocated before the program
terminates") asserts at the points where a run ends that every heap object is freed.
"""
from __future__ import annotations

from dataclasses import dataclass

from looprover.frontend.c.ctype import (
    OFF, TAG, CArray, CPtr, CStruct, CType, CVoid, compatible, elements_in, innermost, is_char,
)
from looprover.frontend.c.cursors import K
from looprover.frontend.c.memory import Obj, Val
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assert, Assign, Edge, SrcLoc
from looprover.program.expr import (
    BOOL, FALSE, TRUE, ArrayType, Binary, Compare, Expr, IntConst, Select, Var, and_, cast, implies, not_, or_,
)
from looprover.properties import UNMODELLED_MEMTRACK


INSPECTED = 2        # cells of each pointer leaf of a heap object read for the chain (`finish_memtrack`)
CHAIN_ROUNDS = 4     # links of a chain of heap objects followed to find one surely reached


@dataclass
class MemtrackPoint:
    """A point where the heap objects' tracking is asserted: the index of its (so far empty) edge, whether it
    is the end of main or of the run, and the pointers that surely reach objects there (id, offset) beside the
    globals'."""
    edge: int
    main_end: bool
    run_ends: bool
    roots: list[tuple[Expr, Expr]]
    where: SrcLoc | None
    pending: frozenset      # heap objects whose pointer an unfinished statement holds in no variable yet


class MemtrackMixin(LoweringState):
    def memtrack_point(self, main_end: bool = False, run_ends: bool = False) -> None:
        """A point where no heap object may be lost (module docstring), or where the run ends (`main_end`, or
        `run_ends`: exit, abort): an edge of its own, filled in by `finish_memtrack`.

        The roots of every running function are its parameters and the locals of its open blocks whose
        declarations the run has surely passed in this activation of the block. The lowering has passed
        them; and in a nested block, no jump target (label, case) lies between the declaration and here: a
        `goto` or `switch` may enter the block past the declaration, and the local then still holds what an
        earlier pass left, which C calls indeterminate (its object died when the block was left). A body's
        own locals are entered once per call; what an earlier call left there was lost, and seen lost, at the
        caller's points in between. A function's return value is no root: it holds an earlier call's value
        until its `return`."""
        run_ends = run_ends or main_end
        if self.cur is None or not (self.memtrack or self.memcleanup and run_ends):
            return
        roots: list[tuple[Expr, Expr]] = []
        if not main_end:
            for fr in self.frames:
                live = [o for d, o in fr.env.items() if d.kind == K.PARM_DECL]
                for depth, (decls, _) in enumerate(fr.scopes):   # (in the order declared: decls is a set)
                    live += [o for d, o in fr.env.items() if d in decls and d in fr.declared
                             and (depth == 0 or fr.declared[d] == fr.jump_targets)]
                for o in live:
                    roots += self._pointers(o)[0]
                for v in fr.bound.values():
                    roots += _bound_pointers(v)
        src = self.flush()
        dst = self.bld.new_loc(self.loc)
        self.bld.add_edge(src, dst)
        pending = frozenset().union(*(fr.allocating for fr in self.frames))
        self.memtrack_points.append(MemtrackPoint(len(self.bld.edges) - 1, main_end, run_ends, roots, self.loc,
                                                  pending))
        self.cur, self.pending = dst, []

    def _pointers(self, obj: Obj) -> tuple[list[tuple[Expr, Expr]], list[tuple[Expr, Expr]], bool]:
        """The (id, offset) variables of the pointers stored in `obj` outside arrays: those outside unions,
        those inside (a union member's leaves keep their values when another member is stored: the pointer
        may be gone), and whether it stores pointers in arrays."""
        sure, in_unions, arrays = [], [], False
        for path, var in obj.vars.items():
            off = obj.vars.get(path + (OFF,))
            if off is None:
                continue
            if isinstance(var.type, ArrayType):
                arrays = True
            elif any(path[:i] + (TAG,) in obj.vars for i in range(len(path))):
                in_unions.append((var, off))
            else:
                sure.append((var, off))
        return sure, in_unions, arrays

    def finish_memtrack(self) -> None:
        """Fill every point's edge with the assertions of the module docstring, now that every heap object is
        known."""
        if not self.memtrack_points:
            return
        heap = [(self.objects[i - 1], flag) for i, flag in sorted(self.heap_flags.items())]
        if not heap:
            return
        glob: list[tuple[Expr, Expr]] = []
        glob_unsure: list[tuple[Expr, Expr]] = []
        glob_arrays = False
        for o in self.globals.values():
            sure, in_unions, arr = self._pointers(o)
            glob += sure
            glob_unsure += in_unions
            glob_arrays |= arr
        # heap objects that store pointers, with their pointer cells (`_heap_cells`)
        holders = [(o, flag, cells) for o, flag in heap if (cells := self._heap_cells(o))]
        held = {v for _, _, cells in holders for ids, offs, *_ in cells for v in (ids, offs)}
        # main's argv array outlives main: a pointer the program stores there is no local's
        argv = self.argv_array.vars[()] if self.argv_array is not None else None
        argv_written = argv is not None and sum(argv in s.writes() for e in self.bld.edges for s in e.stmts) > 1
        # arrays of pointers of any object but the heap's, whose cells the chain below reads
        any_arrays = any(isinstance(v.type, ArrayType) for v in self.id_vars if v not in held)
        scalars = sorted((v for v in self.id_vars if isinstance(v, Var) and v.type == self.OBJ), key=lambda v: v.name)
        # the ids by which a pointer may point into each heap object: its own and its members' objects'
        addresses = {o.id: self._addresses(o) for o, _ in heap}
        # the links through the heap, the same at every point: per object, the live holders that surely point
        # into it (those whose pointers can), and whether one may (reached or not: a lost cycle of objects counts
        # as reached, `maybe` only needs to be an over-approximation)
        sure_links = {o.id: [(h, hflag, link) for h, hflag, cells in holders if h is not o
                             if (link := self._points_into(cells, h, addresses[o.id], sure=True)) != FALSE]
                      for o, _ in heap}
        via_heap = {o.id: [and_(hflag, self._points_into(cells, h, addresses[o.id], sure=False))
                           for h, hflag, cells in holders if h is not o] for o, _ in heap}
        for point in self.memtrack_points:
            stmts = []
            if self.memcleanup and point.run_ends:
                stmts += [Assert(not_(flag), "valid-memcleanup", point.where) for _, flag in heap]
            if self.memtrack:
                roots = glob + point.roots
                surely = {o.id: or_(*(and_(Compare("==", i, aid), Compare(">=", off, IntConst(0, off.type)),
                                           Compare("<=", off, cast(off.type, n)))
                                      for i, off in roots for aid, n, _ in addresses[o.id]))
                          for o, _ in heap}
                if holders:
                    # surely reached through live heap objects surely reached: a few rounds of the chain, each
                    # following at least one link (fewer rounds reach less: `surely` only needs to be an
                    # under-approximation)
                    reach = {o.id: self.new_var(f"{o.name}@reached", BOOL, "temp") for o, _ in heap}
                    stmts += [Assign(reach[o.id], surely[o.id], point.where) for o, _ in heap]
                    for _ in range(min(len(holders), CHAIN_ROUNDS)):
                        stmts += [Assign(reach[o.id], or_(reach[o.id], *(and_(hflag, reach[h.id], link)
                                                                         for h, hflag, link in sure_links[o.id])),
                                         point.where) for o, _ in heap if sure_links[o.id]]
                    surely = reach
                for o, flag in heap:
                    aids = [aid for aid, _, _ in addresses[o.id]]
                    if o.id in point.pending:
                        maybe = TRUE
                    elif point.main_end:
                        maybe = or_(surely[o.id],
                                    *(Compare("==", i, aid) for i, _ in glob + glob_unsure for aid in aids),
                                    TRUE if glob_arrays or argv_written else FALSE, *via_heap[o.id])
                    else:
                        maybe = or_(surely[o.id], *(Compare("==", v, aid) for v in scalars for aid in aids),
                                    TRUE if any_arrays else FALSE, *via_heap[o.id])
                    stmts.append(Assert(implies(flag, maybe), "valid-memtrack", point.where))
                    stmts.append(Assert(implies(and_(flag, maybe), surely[o.id]), UNMODELLED_MEMTRACK, point.where))
            e = self.bld.edges[point.edge]
            self.bld.edges[point.edge] = Edge(e.src, e.dst, tuple(stmts))

    def _heap_cells(self, o: Obj) -> list[tuple[Var, Var, int, bool, CType | None]]:
        """The pointer leaves of heap object `o` (an array of its elements' leaves): (ids, offsets, cells per
        element, inside a union, the pointee type)."""
        if not isinstance(o.ctype, CArray):     # (every heap object is one; none: its arrays count as any)
            return []
        counts = {lf.path: lf.count for lf in self.types.leaves(o.ctype.elem)}
        out = []
        for path, var in o.vars.items():
            off = o.vars.get(path + (OFF,))
            if off is None or not isinstance(var.type, ArrayType) or not isinstance(counts.get(path), int):
                continue
            in_union = any(path[:i] + (TAG,) in o.vars for i in range(len(path)))
            out.append((var, off, counts[path], in_union, self._leaf_pointee(o.ctype.elem, path)))
        return out

    def _leaf_pointee(self, t: CType, path: tuple) -> CType | None:
        """The pointee type of the pointer at leaf `path` of type t (None: not known)."""
        for name in path:
            t = innermost(t)
            if not isinstance(t, CStruct):
                return None
            t = self.types.field_type(t, name)
        t = innermost(t)
        return t.pointee if isinstance(t, CPtr) else None

    def _addresses(self, o: Obj) -> list[tuple[Expr, Expr, CType]]:
        """(id, number of elements, element type) of heap object `o` and of each of its members' objects
        (`memory.py`): a pointer into any of them (start up to one past the end) points into o."""
        out = [(self.obj_id(o), o.length, innermost(o.ctype))]
        for sub in o.members.values():
            n = elements_in(sub.ctype)
            if n is not None:
                out.append((self.obj_id(sub), IntConst(n, self.IDX), innermost(sub.ctype)))
        return out

    def _points_into(self, cells, h: Obj, addresses: list, sure: bool) -> Expr:
        """Whether heap object h holds a pointer into the heap object of `addresses` (`_addresses`): in one of
        its first `INSPECTED` cells of each pointer leaf (`sure`: a pointer into it, not in a union, of a type
        that can point there: a `T *` holds only ids of objects of T's, `memory.py`), or (not `sure`) in a cell
        beyond those."""
        terms = []
        for ids, offs, per, in_union, pointee in cells:
            n = h.length if per == 1 else Binary("*", h.length, IntConst(per, self.IDX), self.IDX)
            for aid, length, elem in addresses:
                if sure and (in_union or not (self.types.opaque(pointee) or _may_point_into(pointee, elem))):
                    continue
                for j in range(INSPECTED):
                    jj = IntConst(j, self.IDX)
                    hit = Compare("==", Select(ids, jj, self.OBJ), aid)
                    if sure:
                        at = Select(offs, jj, self.IDX)
                        hit = and_(hit, Compare(">=", at, IntConst(0, self.IDX)), Compare("<=", at, length))
                    terms.append(and_(Compare("<", jj, n), hit))
            if not sure:
                terms.append(Compare(">", n, IntConst(INSPECTED, self.IDX)))
        return or_(*terms)


def _may_point_into(pointee: CType | None, elem: CType) -> bool:
    """Whether a pointer to `pointee` may hold the id of an object of `elem`s (a `void *` or a character pointer
    may hold any, and so may a pointer to a struct the program never defines, `TypeTable.opaque`)."""
    return pointee is None or isinstance(pointee, CVoid) or is_char(pointee) or compatible(pointee, elem)


def _bound_pointers(v: Val) -> list[tuple[Expr, Expr]]:
    """The (id, offset) pairs of the pointers in a parameter's bound value."""
    return [(e, v.leaves[p + (OFF,)]) for p, e in v.leaves.items() if p + (OFF,) in v.leaves]
