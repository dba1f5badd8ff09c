"""Where C variables live: the IR objects of globals, static locals, locals and parameters, and the ids of
address-taken objects.

Why a module: storage is decided by rules that the rest of the lowering only consumes through `storage(decl)`:
file-scope definitions (`extern int a[]; int a[3] = {..};` uses the second), one object per address-taken
local declaration (found by a pre-pass over the code reachable from main, so that a dereference knows all
candidate objects wherever they are declared), fresh objects per inlined activation otherwise.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.errors import UnsupportedError
from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import OFF, CArray, CFunc, CInt, CPtr, CStruct, CType, CVoid, innermost
from looprover.frontend.c.cursors import (
    ARRAY_KINDS, FUNCTION_KINDS, K, called_function, children, designated, is_array_decay, pointee_member,
    strip_implicit, strip_parens,
)
from looprover.frontend.c.known_functions import FORMAT_FUNCTIONS, OUTPUT_FUNCTIONS, TERMINATING_FUNCTIONS
from looprover.frontend.c.memory import FUNCTION_ID_BASE, LV, Cell, Obj, idx_const, single
from looprover.frontend.c.state import Frame, LoweringState
from looprover.program.cfa import Assign
from looprover.program.expr import BOOL, FALSE, TRUE, Binary, Expr, IntConst, Var

# functions (without a body) whose string literal arguments need no objects
_LITERALS_UNUSED = TERMINATING_FUNCTIONS | OUTPUT_FUNCTIONS.keys() | FORMAT_FUNCTIONS.keys()


class StorageMixin(LoweringState):
    """Objects for declarations (`storage`, `local_obj`, `global_obj`), their lvalues (`obj_lv`), the
    file-scope definitions (`collect_globals`) and the address-taken pre-pass (`scan_address_taken`)."""

    def collect_globals(self):
        """File-scope variables by canonical declaration: (declaration to take the type from, whether some
        declaration defines it, initialiser). `extern int a[]; int a[3] = {..};` must use the second."""
        for c in children(self.tu.cursor):
            if c.kind != K.VAR_DECL:
                continue
            can = c.canonical
            init = capi.var_initializer(c)
            decl, is_def, old_init = self.global_defs.get(can, (c, False, None))
            if init is not None:
                decl, is_def, old_init = c, True, init
            elif c.storage_class != ci.StorageClass.EXTERN:
                is_def = True
                if old_init is None:
                    decl = c
            self.global_defs[can] = (decl, is_def, old_init)

    # ================================================================================ pre-pass (scan)
    def scan_address_taken(self, main: ci.Cursor) -> None:
        """Find every variable whose address is taken in code reachable from main, and give it an object id
        before lowering starts: a dereference must know all candidate objects, wherever they are declared."""
        todo = [main]
        seen_funcs = {main.canonical}
        seen_globals = set()
        # Declarations met before (as cursors: checking one costs less than computing its canonical
        # declaration or definition, and the same variables and functions are referenced over and over).
        seen_refs = set()
        while todo:
            root = todo.pop()
            stack = [(root, None)]
            while stack:
                c, parent = stack.pop()
                k = c.kind
                if k == K.CALL_EXPR:
                    ref = called_function(c)
                    if ref is not None and ref.spelling in _LITERALS_UNUSED \
                            and ref.get_definition() is None:
                        # `__assert_fail("0", "file.c", ...)` in every SV-COMP reach_error: the arguments are
                        # not used (`calls.py`); printf's literals are read without objects
                        # (`output_functions.py`), sprintf's copied from their bytes (`format_functions.py`); and
                        # literal objects would give the program arrays
                        stack += [(a, c) for a in children(c)[1:] if strip_implicit(a).kind != K.STRING_LITERAL]
                        continue
                    if ref is not None and ref.kind == K.FUNCTION_DECL and ref not in seen_refs:
                        seen_refs.add(ref)
                        d = ref.get_definition()
                        if d is not None and d.canonical not in seen_funcs:
                            seen_funcs.add(d.canonical)
                            todo.append(d)
                    if ref is not None:   # a direct call: its callee is not a function pointer
                        stack += [(a, c) for a in children(c)[1:]]
                        continue
                elif k == K.UNARY_OPERATOR and capi.unary_op(c) == capi.UO_ADDR_OF:
                    self._mark_address_taken(children(c)[0])
                elif k == K.UNEXPOSED_EXPR and is_array_decay(c):  # (decays are UNEXPOSED_EXPRs)
                    if strip_parens(children(c)[0]).kind == K.STRING_LITERAL:
                        self.literal_obj(strip_parens(children(c)[0]))
                    under_subscript = (parent is not None and parent.kind == K.ARRAY_SUBSCRIPT_EXPR)
                    if not under_subscript:
                        self._mark_address_taken(children(c)[0])
                elif k == K.DECL_REF_EXPR:
                    ref = c.referenced
                    if ref is not None and ref.kind == K.FUNCTION_DECL and ref.canonical not in self.function_ids:
                        # a function used as a value: a candidate of every call through a pointer of its type
                        self.function_ids[ref.canonical] = FUNCTION_ID_BASE + len(self.function_ids)
                        d = ref.get_definition()
                        if d is not None and d.canonical not in seen_funcs:
                            seen_funcs.add(d.canonical)
                            todo.append(d)
                    if ref is not None and ref.kind == K.VAR_DECL and ref not in seen_refs:
                        seen_refs.add(ref)
                        can = ref.canonical
                        if can not in seen_globals:
                            seen_globals.add(can)
                            gd = self.global_defs.get(can)
                            if gd is not None and gd[2] is not None:
                                todo.append(gd[2])
                            elif ref.storage_class == ci.StorageClass.STATIC:
                                i = capi.var_initializer(ref)
                                if i is not None:
                                    todo.append(i)
                for ch in children(c):
                    if k == K.ARRAY_SUBSCRIPT_EXPR and ch.kind == K.PAREN_EXPR:
                        # `(a)[i]`: the decay sits under the parentheses
                        inner = strip_parens(ch)
                        stack.append((inner, c))
                        continue
                    stack.append((ch, c))
        for decl in list(self.addr_taken):
            obj = self.storage(decl, None)
            self.register(obj)
        for decl, path in list(self.member_addr_taken):
            self._member_obj(self.storage(decl, None), path)
        if self.memsafety:
            for decl in list(self.addr_taken):
                self._liveness_flag(decl, main)
        self.id_step = len(self.objects)    # heap objects come later, with static ids above (`_new_instance`)

    def literal_obj(self, lit: ci.Cursor) -> Obj:
        """The object of a string literal used as an array: a char array with static storage, initialised
        before main, read-only."""
        obj = self.literals.get(lit)
        if obj is None:
            saved = self.loc
            self.loc = self.where(lit)
            t = self.ctype(lit)
            if not (isinstance(t, CArray) and isinstance(t.elem, CInt) and t.elem.bits == 8):
                raise self.unsupported("wide string literal", lit)
            obj = self.literals[lit] = self.make_obj("strlit", t, "global")
            self.register(obj)
            self.literal_vars.update(obj.vars.values())
            self.init_queue.append((obj, lit, self.loc))
            self.loc = saved
        return obj

    def _mark_address_taken(self, e: ci.Cursor) -> None:
        d, path = designated(e, members=True)
        if d is not None:
            self.addr_taken.setdefault(d.canonical, True)
            if path:
                self.member_addr_taken.setdefault((d, path), True)
            return
        got = pointee_member(e)
        if got is not None:
            try:
                t = self.type_of(got[0], e, canonical=True)
            except UnsupportedError:
                return          # (the lowering refuses the member access itself, with its place)
            if isinstance(t, CStruct) and not t.union:
                self.pointee_members.setdefault(t, {})[got[1]] = True

    def _liveness_flag(self, decl: ci.Cursor, main: ci.Cursor) -> None:
        """The `alive` flag of an address-taken local that `born` will make live (not main's parameters, which
        live throughout, nor static storage), made before lowering: a dereference lowered before the local's
        declaration (on a loop's way back) must check it too (valid-memsafety)."""
        obj = self.storage(decl, None)
        sem = decl.semantic_parent
        if obj.kind != "local" or obj.id is None or \
                (decl.kind == K.PARM_DECL and sem is not None and sem.canonical == main.canonical):
            return
        self.alive_flag(obj)

    def alive_flag(self, obj: Obj) -> Var:
        """The liveness flag of `obj` (made at the first call), which its members' objects share: a member's
        object lives and dies with its struct."""
        flag = self.alive.get(obj.id)
        if flag is None:
            flag = self.alive[obj.id] = self.new_var(f"{obj.name}@alive", BOOL, "local", f"{obj.name}@alive")
            for sub in obj.members.values():
                self.alive[sub.id] = flag
        return flag

    def sized_obj(self, name: str, elem: CType, length: Var) -> Obj:
        """A registered array object of `length` elements, a variable (heap allocations, argv's strings)."""
        obj = self.make_obj(name, CArray(elem, length), "local")
        obj.length = length
        self.register(obj)
        return obj

    def _member_obj(self, parent: Obj, path: tuple) -> None:
        """The object of member `path` of struct object `parent`, or of its first struct when `parent` is an
        array of them (`Obj.members`); only for the paths whose address is taken: every object is a candidate of
        each dereference of its type. In an array its leaves stay IR arrays, indexed by the element offsets
        inside the member alone."""
        t = innermost(parent.ctype)
        for name in path:
            if not isinstance(t, CStruct) or t.union:   # a union member has no address (`lvalues.member`)
                return
            t = self.types.field_type(t, name)
        if path in parent.members:
            return
        sub = Obj(f"{parent.name}.{'.'.join(path)}", t,
                  {lf.path: parent.vars[path + lf.path] for lf in self.types.leaves(t)}, parent.kind,
                  is_array=parent.is_array or isinstance(t, CArray), parent=parent, path=path)
        if parent.id_var is not None:
            sub.id_var = self.new_var(f"{sub.name}@id", self.OBJ, "local", f"{sub.name}@id")
        self.register(sub)
        if parent.id in self.alive:
            self.alive[sub.id] = self.alive[parent.id]
        parent.members[path] = sub

    def pointee_member_objects(self, obj: Obj) -> None:
        """The objects of the members of `obj`'s structs of a type T whose address the program takes through a
        `T *` (`memory.py`): of its first element, and of the structs nested in that by value."""
        todo = [((), innermost(obj.ctype))]
        while todo:
            prefix, t = todo.pop()
            if not isinstance(t, CStruct) or t.union:
                continue
            for path in self.pointee_members.get(t, ()):
                self._member_obj(obj, prefix + path)
            todo += [(prefix + (name,), ft) for name, ft in self.types.members(t) if isinstance(ft, CStruct)]

    # ======================================================================================= variables
    def storage(self, decl: ci.Cursor, ref_cursor: ci.Cursor | None) -> Obj:
        """The object a VAR_DECL/PARM_DECL denotes in the current activation."""
        can = decl.canonical
        if can in self.poisoned:
            raise self.unsupported(self.poisoned[can], ref_cursor)
        for fr in reversed(self.frames[-1:]):
            obj = fr.env.get(can)  # one lookup: comparing cursors is a libclang call
            if obj is not None:
                return obj
        obj = self.globals.get(can)
        if obj is not None:
            return obj
        if decl.kind == K.VAR_DECL and self._global_storage(decl):
            return self.global_obj(decl, ref_cursor)
        if can in self.addr_taken:  # from the pre-pass (a local not yet declared on this path)
            return self._shared_local(decl)
        raise self.unsupported(f"use of '{decl.spelling}' outside its scope", ref_cursor)

    @staticmethod
    def _global_storage(decl: ci.Cursor) -> bool:
        sem = decl.semantic_parent
        return (sem is not None and sem.kind == K.TRANSLATION_UNIT) or decl.storage_class in (
            ci.StorageClass.STATIC, ci.StorageClass.EXTERN)

    def global_obj(self, decl: ci.Cursor, ref_cursor) -> Obj:
        can = decl.canonical
        if can in self.globals:
            return self.globals[can]
        sem = decl.semantic_parent
        at_file_scope = sem is not None and sem.kind == K.TRANSLATION_UNIT
        if at_file_scope or decl.storage_class == ci.StorageClass.EXTERN:
            gd = self.global_defs.get(can)
            if gd is None or not gd[1]:
                raise self.unsupported(f"extern variable '{decl.spelling}' without a definition", ref_cursor)
            dcur, _, init = gd
            kind = "global"
            prefix = ""
        else:  # static local
            dcur, init = decl, capi.var_initializer(decl)
            kind = "global"
            fn = decl.semantic_parent.spelling if decl.semantic_parent is not None else ""
            prefix = "" if fn in ("main", "") else f"{fn}::"
        saved = self.loc
        self.loc = self.where(dcur)
        ctype = self.types.of(dcur.type, self.loc)
        if isinstance(ctype, CArray) and ctype.size is None:
            raise self.unsupported("variable-length array with static storage", dcur)
        obj = self.make_obj(decl.spelling, ctype, kind, prefix)
        self.globals[can] = obj
        self.init_queue.append((obj, init, self.loc))
        self.loc = saved
        return obj

    def _shared_local(self, decl: ci.Cursor) -> Obj:
        can = decl.canonical
        obj = self.shared.get(can)
        if obj is None:
            saved = self.loc
            self.loc = self.where(decl)
            ctype = self.decl_ctype(decl)
            fn = decl.semantic_parent.spelling if decl.semantic_parent is not None else ""
            obj = self.make_obj(decl.spelling, ctype, "local", "" if fn in ("main", "") else f"{fn}::")
            if self.memsafety and not (fn == "main" and (decl.kind == K.PARM_DECL or can in self.main_top_decls)):
                # a local whose block may be entered again (main's own and its parameters live once)
                obj.id_var = self.new_var(f"{obj.name}@id", self.OBJ, "local", f"{obj.name}@id")
            self.shared[can] = obj
            self.loc = saved
        return obj

    def local_obj(self, decl: ci.Cursor, fr: Frame, kind: str, ctype: CType | None = None) -> Obj:
        can = decl.canonical
        if can in self.addr_taken and ctype is None:
            obj = self._shared_local(decl)
        else:
            obj = self.make_obj(decl.spelling, ctype or self.decl_ctype(decl), kind, fr.prefix)
            if can in self.addr_taken:  # an address-taken VLA: its candidates are per declaration
                self._replace_shared(can, obj)
        fr.env[can] = obj
        return obj

    def born(self, obj: Obj, decl: ci.Cursor, fr: Frame) -> None:
        """valid-memsafety: an address-taken local is live from the entry into its block (its declaration, for a
        variable-length array; its call, for a parameter) until its block ends (`die` when the block is left
        normally, by break or continue) or its function returns (`Frame.born`, reset by the caller). A
        declaration that is not directly in a block (a `for` initialiser) is refused."""
        if not self.memsafety or obj.id is None:
            return
        nested = decl.kind != K.PARM_DECL and decl.canonical not in fr.top_decls
        if nested and not (fr.scopes and decl.canonical in fr.scopes[-1][0]):
            raise self.unsupported("address-taken local declared outside a block (valid-memsafety)", decl)
        flag = self.alive_flag(obj)
        for o in (obj, *obj.members.values()):
            if o.id_var is not None:
                self._new_instance(o)
        self.emit(Assign(flag, TRUE, self.loc))
        fr.born.append(flag)
        if nested:
            fr.scopes[-1][1].append(flag)

    def _new_instance(self, obj: Obj) -> None:
        """The next id of `obj` (see `memory.py`): object k's ids are -k, -k - N, -k - 2N, ... (N objects with
        an id after the pre-pass; heap objects registered later have static ids above N), one per birth, so no
        two activations of any objects share one, static ids are positive and NULL is 0. A counter rather than
        a chosen value: the run stays deterministic (BMC folds it as a constant; a havoc with distinctness
        assumptions made BMC of a Verisec scan 40 times slower)."""
        step = IntConst(self.id_step, self.OBJ)
        self.emit(Assign(obj.id_var, Binary("-", obj.id_var, step, self.OBJ), self.loc))

    def obj_id(self, obj: Obj) -> Expr:
        """The id a pointer to `obj` carries (its current one for an object with a variable id)."""
        return obj.id_var if obj.id_var is not None else IntConst(obj.id, self.OBJ)

    def die(self, flags: list) -> None:
        """The end of the lifetime of the locals with these liveness flags (if the code here is reachable)."""
        if flags and self.cur is not None:
            self.emit(*(Assign(f, FALSE, self.loc) for f in flags))

    def die_to(self, fr: Frame, target: int) -> None:
        """A break or continue to `target` leaves the blocks opened since its loop began."""
        for _, flags in fr.scopes[fr.depth_of.get(target, len(fr.scopes)):]:
            self.die(flags)

    def decl_ctype(self, decl: ci.Cursor) -> CType:
        """A declaration's type; parameters declared as arrays or functions are pointers (C11 6.7.6.3)."""
        t = decl.type.get_canonical()
        if decl.kind == K.PARM_DECL:
            if t.kind in ARRAY_KINDS:
                return CPtr(self.type_of(t.element_type, decl))
            if t.kind in FUNCTION_KINDS:
                return CPtr(CFunc())
        return self.type_of(decl.type, decl)

    def _replace_shared(self, can, obj: Obj) -> None:
        """A VLA's type depends on the lengths stored at its declaration, so the pre-pass object (with unknown
        lengths) is replaced by the declared one, keeping the id (one live instance at a time)."""
        old = self.shared.get(can)
        if old is not None and old.members:
            raise self.unsupported("a pointer to a member of a struct in a variable-length array")
        if old is not None and old.id is not None:
            obj.id, obj.id_var = old.id, old.id_var
            self.objects[old.id - 1] = obj
            self.pointee_cache.clear()      # the object's type changed
        self.shared[can] = obj

    def make_obj(self, cname: str, ctype: CType, kind: str, prefix: str = "") -> Obj:
        if isinstance(ctype, (CVoid, CFunc)):
            raise self.unsupported(f"object of type {ctype}")
        leaves = self.types.leaves(ctype)
        base = self.fresh(prefix + cname)
        vars_ = {}
        paths = {lf.path for lf in leaves}
        for lf in leaves:
            suffix = "".join(".off" if p == OFF else "." + p for p in lf.path)
            csuffix = "".join("@off" if p == OFF else "." + p for p in lf.path)
            name = base + suffix if not suffix else self.fresh(base + suffix)
            if lf.in_array and isinstance(lf.count, int) and lf.count <= 0:
                raise self.unsupported("array of size 0")
            vars_[lf.path] = self.bld.declare(name, self.types.ir_leaf_type(lf), kind, c_name=cname + csuffix,
                                              src=self.loc)
            if lf.path + (OFF,) in paths:     # a pointer's object id (`object_ids.py`)
                self.id_vars.add(vars_[lf.path])
        return Obj(cname, ctype, vars_, kind, None, isinstance(ctype, CArray))

    def register(self, obj: Obj) -> None:
        if obj.id is None:
            self.objects.append(obj)
            obj.id = len(self.objects)
            if self.pointee_members and obj.parent is None:
                self.pointee_member_objects(obj)

    def obj_lv(self, obj: Obj) -> LV:
        cells = {}
        for lf in self.types.leaves(obj.ctype):
            v = obj.vars[lf.path]
            cells[lf.path] = Cell(v, idx_const(0, self.IDX) if lf.in_array else None)
        addr = (self.obj_id(obj), idx_const(0, self.IDX)) if obj.id is not None else None
        return single(obj.ctype, cells, addr, (obj, ()))
