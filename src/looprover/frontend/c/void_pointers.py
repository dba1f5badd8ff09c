"""`void *`: which objects a `void *` points into, checked wherever the model gives its offset a meaning.

A pointer counts its offset in elements of its pointee type (`memory.py`), and a `void *` has none. The model
lets a `void *` keep the offset of the pointer it was converted from, counted in the innermost elements (scalars
or structs) of the object it points into: a `T *` to a `T` object converts to `void *` and back unchanged
(generic containers, `xmalloc` wrappers returning `void *`), a `char *` keeps counting bytes. That is sound only
where every use of a `void *` that interprets the offset reads it in the units of the object's elements:
  * a conversion from `void *` to `U *` (U an object type; a character type only under valid-memsafety, where a
    character pointer reads any character object, `lvalues.pointees`);
  * a `void *` given to memset, memcpy, memmove, memcmp or memchr (`byte_functions.py`), taken as a pointer to
    the elements of the allocation it points to or else to chars;
  * `void *` arithmetic and differences (a GNU extension counting bytes): chars.
Each such use is a *site*: the lowering copies the pointer's object id into a temporary and notes the element
type the site assumes (`void_site`). When the lowering is done, a flow-insensitive analysis of the ids every
variable can hold (`object_ids.values`) gives each site's set of objects, and every object in it must have
elements of the assumed type (`check_void_sites`). A site whose set is unknown or holds another object makes
the program unsupported with the site's place; so a TRUE or FALSE never rests on a reinterpreted offset. Under
`looprover check` such a site is a model exit instead (`void_site_exits`): only the checks a run can reach
through it stay unknown (Monocypher wipes every context struct through a `u8 *` at the end of each call).

An allocation used as `void *` is an array of chars (`heap.allocate_bytes`) unless a first lowering shows that
the sites its pointer reaches convert it to one object type T: then a second lowering makes its object an array
of T's, the object C's effective-type rules give it at its first typed store (C11 6.5p6), and byte functions
given a pointer into it work on its T's (`learned_types`; `lower.lower` runs the lowering again).
"""
from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from looprover.frontend.c.ctype import CArray, CInt, CType, compatible, innermost, is_char
from looprover.frontend.c.memory import Val
from looprover.frontend.c.object_ids import ANY, object_index, values
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assert, Assign, Edge, SrcLoc
from looprover.program.expr import FALSE, IntConst, Var
from looprover.properties import UNMODELLED_VOID


CHAR = CInt(8, True, rank=1)


@dataclass
class VoidSite:
    """A use of a `void *` that reads its offset as counting `elem`s (module docstring)."""
    obj: Var                 # a copy of the pointer's object id, taken where it is used
    elem: CType
    where: SrcLoc | None
    byte_call: tuple | None = None   # a byte function's argument (`call_key` of it): its type may be learned
    target: ci.Type | None = None    # a conversion to `target *`: what an allocation reaching it may become
    access: bool = True     # the site reads or writes through the pointer (not so: arithmetic, differences)


class VoidPointerMixin(LoweringState):
    def void_site(self, p: Val, elem: CType, byte_call: tuple | None = None, target: ci.Type | None = None,
                  access: bool = True) -> None:
        """Note a use of the `void *` p whose offset counts `elem`s (module docstring); `access`: an access
        through it follows."""
        if isinstance(p.obj, IntConst) and p.obj.value == 0:
            return                        # NULL: no object
        t = self.new_var("void@obj", self.OBJ, "temp")   # for the check alone (`drop_void_sites`)
        self.emit(Assign(t, p.obj, self.loc))
        self.void_sites.append(VoidSite(t, elem, self.loc, byte_call, target, access))

    def void_objects(self, edges) -> list[tuple[VoidSite, frozenset | None]]:
        """Each site with the object ids it may reach (ANY: unknown), by `object_ids.values` over `edges`."""
        argv = frozenset(self.argv_array.vars.values()) if self.argv_array is not None else frozenset()
        tracked = set(self.id_vars) | self.indeterminate_ids | {s.obj for s in self.void_sites}
        sets = values(edges, tracked, self.pool_seeds(),
                      havocs_indeterminate=True, valued=argv)

        def objects(ids):       # a local's instance ids stand for its one object
            return ANY if ids is ANY else frozenset(object_index(x) for x in ids)
        return [(s, objects(sets.get(s.obj, ANY))) for s in self.void_sites]

    def check_void_sites(self, reached: list[tuple[VoidSite, frozenset | None]]) -> list[tuple[VoidSite, str]]:
        """The sites whose objects (`reached`, from `void_objects`) are unknown or have other elements than the
        site assumes, with why."""
        bad = []
        for site, ids in reached:
            if ids is ANY:
                bad.append((site, "a void * whose objects are not known (a computed or havocked pointer)"))
                continue
            for i in sorted(ids - {0}):
                o = self.objects[i - 1] if 1 <= i <= len(self.objects) else None
                if o is None:
                    bad.append((site, "a void * that may hold a function's address"))
                    break
                e = innermost(o.ctype)
                # one character type for another: only where no access follows, or under valid-memsafety, where
                # a character pointer reads every character object (`lvalues.pointees`)
                chars = is_char(site.elem) and is_char(e) and (self.memsafety or not site.access)
                if not (compatible(e, site.elem) or chars):
                    bad.append((site, f"a void * read as pointing to {site.elem} that may point into "
                                      f"{o.name}, of {e} elements"))
                    break
        return bad

    def void_site_exits(self, refused: list[tuple[VoidSite, str]]) -> None:
        """Each refused site (`check_void_sites`) an assertion that no run gets there (`UNMODELLED_VOID`), in
        place of its copy of the object id: a run that does leaves the model before the access, so what the
        model does with the offset there is never part of a verdict (`program/model_exits.py`)."""
        exits = {site.obj: site for site, _ in refused}
        self.bld.edges = [Edge(e.src, e.dst, tuple(
            Assert(FALSE, UNMODELLED_VOID, exits[st.lhs].where) if isinstance(st, Assign) and st.lhs in exits
            else st for st in e.stmts)) for e in self.bld.edges]

    def drop_void_sites(self) -> None:
        """The CFA without the copies the sites took for the check (no engine needs them)."""
        copies = {s.obj for s in self.void_sites}
        self.bld.edges = [Edge(e.src, e.dst, tuple(st for st in e.stmts
                                                   if not (isinstance(st, Assign) and st.lhs in copies)))
                          for e in self.bld.edges]

    def learned_types(self, reached: list[tuple[VoidSite, frozenset | None]]) -> tuple[dict, dict]:
        """What a first lowering shows (module docstring): (allocation call -> the clang type of its elements, for
        the allocations used as `void *` that the conversions they reach agree on; byte function argument ->
        the clang type of the elements of the allocations it is given, when they agree, or the integer type of
        the elements of the program's objects it is given, when they agree); `reached` as from `void_objects`."""
        wants: dict[tuple, dict[str, ci.Type]] = {}
        for site, ids in reached:
            if site.target is None or ids is ANY:
                continue
            for i in ids - {0}:
                key = self.byte_allocations.get(i)
                if key is not None:
                    wants.setdefault(key, {})[site.target.spelling] = site.target
        allocs = {key: next(iter(ts.values())) for key, ts in wants.items() if len(ts) == 1}
        calls = {}
        for site, ids in reached:
            if site.byte_call is None or ids is ANY or not ids - {0}:
                continue
            keys = {self.byte_allocations.get(i) for i in ids - {0}}
            if None not in keys:        # allocations only: the type learned for them all
                types = {allocs[k].spelling: allocs[k] for k in keys if k in allocs}
                if len(types) == 1 and keys <= allocs.keys():
                    calls[site.byte_call] = next(iter(types.values()))
            elif keys == {None}:        # objects of the program: their integer elements, when they agree
                elems = {innermost(self.objects[i - 1].ctype) for i in ids - {0} if 1 <= i <= len(self.objects)}
                if len(elems) == 1 and isinstance(e := next(iter(elems)), CInt) and e != site.elem:
                    calls[site.byte_call] = e
        return allocs, calls

    def void_target(self, target: CType, c) -> CType:
        """The element type a conversion from `void *` to `target *` assumes."""
        if isinstance(target, CArray):
            raise self.unsupported(f"conversion of a void * to a pointer to an array ({target})", c)
        return target
