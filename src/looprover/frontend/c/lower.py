"""Lowering of clang's typed AST to the IR: statements to CFA edges, expressions to typed IR expressions.

Conventions (documented because engines and witnesses depend on them):
  * Every C conversion is explicit: clang's implicit casts (UNEXPOSED_EXPR whose type is the converted type)
    and C-style casts become `Cast`s; compound assignments and ++/-- apply the promotions and usual arithmetic
    conversions themselves (clang does not expose their computation type).
  * `_Bool` is the IR's BOOL type (values true/false, so havocs need no range assumption); int -> _Bool is
    `!= 0`, _Bool -> int is 0/1. Arithmetic on _Bool never happens in C (it is promoted to int first).
  * Evaluation order: left to right wherever C leaves it unspecified (operands, arguments, initialisers,
    the two sides of an assignment). A value already computed is copied to a temporary when a later operand
    may write one of the variables it reads (calls, assignments, ++).
  * `&&`, `||` and `?:` stay pure IR expressions when the conditionally evaluated part has no side effects;
    otherwise (assignments, calls, pointer dereferences, which may block) they become control flow.
  * Functions are inlined at every call (no recursion); `return` jumps to the end of the inlined body.
  * Undefined behaviour that we block with `Assume`: dereferencing a pointer that does not point to a
    suitable object (NULL, dangling, wrong type), reaching `__builtin_unreachable()`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from looprover.errors import InputError, UnsupportedError
from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import (
    OFF, CArray, CBool, CFunc, CInt, CPtr, CStruct, CType, CVoid, TypeTable, compatible, strip_array,
)
from looprover.frontend.c.memory import LV, Cell, Obj, Val, idx_const, is_zero, pointer, scalar, single
from looprover.frontend.c.parse import Parsed
from looprover.frontend.c.simplify import simplify
from looprover.program.cfa import Assert, Assign, Assume, Havoc, Program, ProgramBuilder, SrcLoc
from looprover.program.expr import (
    BOOL, FALSE, TRUE, ArrayType, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr, IntConst,
    IntType, Select, Store, Unary, Var, and_, cast, free_vars, ite, not_, or_, transform,
)

K = ci.CursorKind
TK = ci.TypeKind

_ARITH = {"+", "-", "*", "/", "%", "&", "|", "^"}
_SHIFT = {"<<", ">>"}
_CMP = {"<", ">", "<=", ">=", "==", "!="}
_INCDEC = {capi.UO_POST_INC, capi.UO_POST_DEC, capi.UO_PRE_INC, capi.UO_PRE_DEC}
_ARRAY_KINDS = {TK.CONSTANTARRAY, TK.VARIABLEARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENTSIZEDARRAY}

# Functions that end the program (not an error): the edge goes to Program.exit.
_TERMINATE = {"abort", "exit", "_exit", "_Exit", "__assert_fail", "__assert", "__assert_perror_fail",
              "__builtin_abort", "__builtin_exit", "__builtin_trap", "__assert_rtn"}
_ASSUME = {"__VERIFIER_assume", "assume_abort_if_not"}
_ALL = object()  # may_write: "any global, static or address-taken variable"


def _kids(c: ci.Cursor) -> list[ci.Cursor]:
    return list(c.get_children())


def _expr_kids(c: ci.Cursor) -> list[ci.Cursor]:
    return [k for k in c.get_children() if k.kind.is_expression()]


def _strip_parens(c: ci.Cursor) -> ci.Cursor:
    while c.kind == K.PAREN_EXPR:
        c = _kids(c)[0]
    return c


def _denotes_param(c: ci.Cursor) -> bool:
    while c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        ks = _kids(c)
        if len(ks) != 1:
            return False
        c = ks[0]
    if c.kind != K.DECL_REF_EXPR:
        return False
    ref = c.referenced
    return ref is not None and ref.kind == K.PARM_DECL


def _ckind(c: ci.Cursor):
    """The canonical type kind of an expression. libclang shows a parameter declared as an array (`int a[]`)
    with its written array type although C adjusts it to a pointer; we undo that here."""
    k = c.type.get_canonical().kind
    if k in _ARRAY_KINDS and _denotes_param(c):
        return TK.POINTER
    return k


def _is_array_expr(c: ci.Cursor) -> bool:
    return _ckind(c) in _ARRAY_KINDS


def _is_decay(c: ci.Cursor) -> bool:
    """An implicit array-to-pointer conversion."""
    if c.kind != K.UNEXPOSED_EXPR or _ckind(c) != TK.POINTER:
        return False
    ks = _kids(c)
    return len(ks) == 1 and _is_array_expr(ks[0])


# SV-COMP: `__VERIFIER_nondet_X()` returns an arbitrary value of type X, whatever the program declares.
# (bits, signed); "long" means the data model's long; None: _Bool.
_NONDET_TYPES = {
    "bool": None, "_Bool": None, "char": (8, True), "schar": (8, True), "uchar": (8, False),
    "short": (16, True), "ushort": (16, False), "int": (32, True), "uint": (32, False),
    "unsigned": (32, False), "u32": (32, False), "u16": (16, False), "u8": (8, False),
    "s32": (32, True), "s16": (16, True), "s8": (8, True), "long": ("long", True), "ulong": ("long", False),
    "longlong": (64, True), "ulonglong": (64, False), "size_t": ("long", False), "loff_t": (64, True),
    "sector_t": ("long", False),
}


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


@dataclass
class Frame:
    """One inlined activation of a function."""
    name: str
    prefix: str
    ret: Obj | None
    ret_loc: int
    env: dict = field(default_factory=dict)          # canonical decl cursor -> Obj
    labels: dict[str, int] = field(default_factory=dict)
    bound: dict = field(default_factory=dict)        # read-only parameters bound to their argument's value
    breaks: list[int] = field(default_factory=list)
    conts: list[int] = field(default_factory=list)


class Lowerer:
    def __init__(self, parsed: Parsed, data_model: str):
        self.parsed = parsed
        self.tu = parsed.tu
        self.types = TypeTable(data_model)
        self.IDX = self.types.index_type
        self.OBJ = self.types.obj_type
        self.bld = ProgramBuilder(Path(parsed.path).stem, data_model, source_file=parsed.path)
        self.exit = self.bld.new_loc(name="exit")
        self.bld.exit = self.exit
        self.cur: int | None = None
        self.pending: list = []
        self.loc: SrcLoc | None = None
        self.frames: list[Frame] = []
        self.call_stack: list = []
        self.globals: dict = {}          # canonical decl cursor -> Obj (globals and static locals)
        self.global_defs: dict = {}      # canonical -> the declaration that carries the initialiser
        self.init_queue: list = []       # (Obj, initialiser cursor or None)
        self.shared: dict = {}           # canonical decl -> Obj for address-taken locals/params
        self.addr_taken: dict = {}       # canonical decl cursors (ordered: object ids are deterministic)
        self.objects: list[Obj] = []     # address-taken objects, id = index + 1
        self.poisoned: dict = {}         # canonical decl -> why it cannot be used (main's argv)
        self.case_locs: dict = {}
        self._counters: dict[str, int] = {}
        self._effect_memo: dict = {}
        self._written_params: dict = {}
        self._call_writes_memo: dict = {}

    # =========================================================================================== driver
    def run(self) -> Program:
        main = self._find_main()
        self._collect_globals()
        self._scan(main)
        entry = self.bld.new_loc()
        self.cur = entry
        fr = Frame("main", "", None, self.exit)
        self.frames.append(fr)
        self.call_stack.append(main.canonical)
        self._main_params(main, fr)
        self.stmt(self._body(main))
        self.jump(self.exit)  # falling off the end of main returns 0
        self.frames.pop()
        # Globals and static locals are initialised before main runs; lowering their initialisers may
        # reference further globals, hence the work list.
        self.cur = self.bld.init
        done = 0
        while done < len(self.init_queue):
            obj, init, where = self.init_queue[done]
            done += 1
            self.loc = where
            self._init_static(obj, init)
        self.jump(entry)
        edges, init, exit_, n, srcs, names = simplify(self.bld.edges, self.bld.init, self.exit, self.bld.num_locs,
                                                      dict(self.bld.loc_src), dict(self.bld.loc_names))
        p = Program(self.bld.name, dict(self.bld.variables), tuple(edges), init, exit_, n, srcs, names,
                    self.bld.data_model, self.bld.source_file)
        p.check()
        return p

    def _find_main(self) -> ci.Cursor:
        for c in self.tu.cursor.get_children():
            if c.kind == K.FUNCTION_DECL and c.spelling == "main" and c.is_definition():
                return c
        raise InputError(f"{self.parsed.path}: no definition of main()")

    def _body(self, fdef: ci.Cursor) -> ci.Cursor:
        for k in fdef.get_children():
            if k.kind == K.COMPOUND_STMT:
                return k
        raise UnsupportedError(f"function '{fdef.spelling}' without a body", self.where(fdef))

    def _collect_globals(self):
        """File-scope variables by canonical declaration: (declaration to take the type from, whether some
        declaration defines it, initialiser). `extern int a[]; int a[3] = {..};` must use the second."""
        for c in self.tu.cursor.get_children():
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

    def _main_params(self, main: ci.Cursor, fr: Frame):
        for p in main.get_children():
            if p.kind != K.PARM_DECL:
                continue
            t = p.type.get_canonical()
            if t.kind == TK.POINTER or t.kind in _ARRAY_KINDS:
                self.poisoned[p.canonical] = "main's pointer parameter (argv)"
                continue
            obj = self._local_obj(p, fr, "local")
            self.emit(Havoc(tuple(obj.vars.values()), self.where(p)))

    # ======================================================================================= utilities
    def where(self, c: ci.Cursor | None) -> SrcLoc | None:
        if c is None:
            return self.loc
        try:
            f, line, col = self.parsed.where(c.location)
        except Exception:  # noqa: BLE001 - a location is only decoration
            return self.loc
        if not line:
            return self.loc
        return SrcLoc(f, line, col)

    def unsupported(self, what: str, c: ci.Cursor | None = None) -> UnsupportedError:
        return UnsupportedError(what, self.where(c) if c is not None else self.loc)

    def fresh(self, base: str) -> str:
        if base not in self.bld.variables:
            return base
        k = self._counters.get(base, 0)
        while True:
            k += 1
            name = f"{base}#{k}"
            if name not in self.bld.variables:
                self._counters[base] = k
                return name

    def new_var(self, base: str, t, kind: str, c_name: str | None = None) -> Var:
        return self.bld.declare(self.fresh(base), t, kind, c_name=c_name or base, src=self.loc)

    def temp(self, t) -> Var:
        return self.new_var("tmp", t, "temp")

    def make_obj(self, cname: str, ctype: CType, kind: str, prefix: str = "") -> Obj:
        if isinstance(ctype, (CVoid, CFunc)):
            raise self.unsupported(f"object of type {ctype}")
        leaves = self.types.leaves(ctype)
        base = self.fresh(prefix + cname)
        vars_ = {}
        for lf in leaves:
            suffix = "".join(".off" if p == OFF else "." + p for p in lf.path)
            csuffix = "".join("@off" if p == OFF else "." + p for p in lf.path)
            name = base + suffix if not suffix else self.fresh(base + suffix)
            if lf.in_array and isinstance(lf.count, int) and lf.count <= 0:
                raise self.unsupported("array of size 0")
            vars_[lf.path] = self.bld.declare(name, self.types.ir_leaf_type(lf), kind, c_name=cname + csuffix,
                                              src=self.loc)
        return Obj(cname, ctype, vars_, kind, None, isinstance(ctype, CArray))

    def register(self, obj: Obj) -> None:
        if obj.id is None:
            self.objects.append(obj)
            obj.id = len(self.objects)

    # ---------------------------------------------------------------------------------- CFA building
    def here(self) -> int:
        if self.cur is None:  # code after return/break/goto: unreachable unless a label follows
            self.cur = self.bld.new_loc()
            self.pending = []
        return self.cur

    def emit(self, *stmts) -> None:
        self.here()
        self.pending.extend(stmts)

    def jump(self, loc: int) -> None:
        if self.cur is None:
            return
        self.bld.add_edge(self.cur, loc, *self.pending)
        self.pending = []
        self.cur = None

    def start(self, loc: int) -> None:
        self.jump(loc)
        self.cur = loc
        self.pending = []

    def flush(self) -> int:
        """Put pending statements on their own edge, so that branches need not repeat them."""
        self.here()
        if self.pending:
            nxt = self.bld.new_loc()
            self.start(nxt)
        return self.cur

    def branch(self, cond: Expr, t: int, f: int) -> None:
        if cond == TRUE or t == f:
            self.jump(t)
            return
        if cond == FALSE:
            self.jump(f)
            return
        src = self.flush()
        self.bld.add_edge(src, t, Assume(cond, self.loc))
        self.bld.add_edge(src, f, Assume(not_(cond), self.loc))
        self.cur = None

    def assume_once(self, cond: Expr, src) -> None:
        """Emit Assume(cond) unless the current edge already assumes it and nothing since wrote its
        variables (repeated dereferences of one pointer in a statement)."""
        fv = free_vars(cond)
        if self.cur is not None:
            for st in reversed(self.pending):
                if isinstance(st, Assume) and st.cond == cond:
                    return
                if st.writes() & fv:
                    break
        self.emit(Assume(cond, src))

    def block(self) -> None:
        """The path ends here without terminating (blocked)."""
        self.jump(self.bld.new_loc())

    def new_loc(self, name: str | None = None) -> int:
        return self.bld.new_loc(self.loc, name)

    # ================================================================================ pre-pass (scan)
    def _scan(self, main: ci.Cursor) -> None:
        """Find every variable whose address is taken in code reachable from main, and give it an object id
        before lowering starts: a dereference must know all candidate objects, wherever they are declared."""
        todo = [main]
        seen_funcs = {main.canonical}
        seen_globals = set()
        while todo:
            root = todo.pop()
            stack = [(root, None)]
            while stack:
                c, parent = stack.pop()
                k = c.kind
                if k == K.CALL_EXPR:
                    ref = c.referenced
                    if ref is not None and ref.kind == K.FUNCTION_DECL:
                        d = ref.get_definition()
                        if d is not None and d.canonical not in seen_funcs:
                            seen_funcs.add(d.canonical)
                            todo.append(d)
                elif k == K.UNARY_OPERATOR and capi.unary_op(c) == capi.UO_ADDR_OF:
                    self._mark(_kids(c)[0])
                elif _is_decay(c):
                    under_subscript = (parent is not None and parent.kind == K.ARRAY_SUBSCRIPT_EXPR)
                    if not under_subscript:
                        self._mark(_kids(c)[0])
                elif k == K.DECL_REF_EXPR:
                    ref = c.referenced
                    if ref is not None and ref.kind == K.VAR_DECL and ref.canonical not in seen_globals:
                        seen_globals.add(ref.canonical)
                        gd = self.global_defs.get(ref.canonical)
                        if gd is not None and gd[2] is not None:
                            todo.append(gd[2])
                        elif ref.storage_class == ci.StorageClass.STATIC:
                            i = capi.var_initializer(ref)
                            if i is not None:
                                todo.append(i)
                for ch in c.get_children():
                    if ch.kind == K.PAREN_EXPR and k == K.ARRAY_SUBSCRIPT_EXPR:
                        # `(a)[i]`: the decay sits under the parentheses
                        inner = _strip_parens(ch)
                        stack.append((inner, c))
                        continue
                    stack.append((ch, c))
        for decl in list(self.addr_taken):
            obj = self.storage(decl, None)
            self.register(obj)

    def _mark(self, e: ci.Cursor) -> None:
        d = self._base_decl(e)
        if d is not None:
            self.addr_taken.setdefault(d.canonical, True)

    def _base_decl(self, e: ci.Cursor):
        while True:
            k = e.kind
            if k == K.PAREN_EXPR:
                e = _kids(e)[0]
            elif k == K.ARRAY_SUBSCRIPT_EXPR:
                a, b = _kids(e)
                base = a if _ckind(a) == TK.POINTER else b
                base = _strip_parens(base)
                if not _is_decay(base):
                    return None
                e = _kids(base)[0]
            elif k == K.MEMBER_REF_EXPR:
                ks = _kids(e)
                if not ks or _ckind(ks[0]) == TK.POINTER:
                    return None
                e = ks[0]
            elif k == K.DECL_REF_EXPR:
                ref = e.referenced
                if ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL):
                    return ref
                return None
            elif k == K.UNEXPOSED_EXPR and len(_kids(e)) == 1 and not _is_decay(e):
                e = _kids(e)[0]
            else:
                return None

    # ======================================================================================= variables
    def storage(self, decl: ci.Cursor, ref_cursor: ci.Cursor | None) -> Obj:
        """The object a VAR_DECL/PARM_DECL denotes in the current activation."""
        can = decl.canonical
        if can in self.poisoned:
            raise self.unsupported(self.poisoned[can], ref_cursor)
        for fr in reversed(self.frames[-1:]):
            if can in fr.env:
                return fr.env[can]
        if can in self.globals:
            return self.globals[can]
        if decl.kind == K.VAR_DECL and self._global_storage(decl):
            return self._global_obj(decl, ref_cursor)
        if can in self.addr_taken:  # from the pre-pass (a local not yet declared on this path)
            return self._shared_local(decl)
        raise self.unsupported(f"use of '{decl.spelling}' outside its scope", ref_cursor)

    @staticmethod
    def _global_storage(decl: ci.Cursor) -> bool:
        sem = decl.semantic_parent
        return (sem is not None and sem.kind == K.TRANSLATION_UNIT) or decl.storage_class in (
            ci.StorageClass.STATIC, ci.StorageClass.EXTERN)

    def _global_obj(self, decl: ci.Cursor, ref_cursor) -> Obj:
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
            self.shared[can] = obj
            self.loc = saved
        return obj

    def _local_obj(self, decl: ci.Cursor, fr: Frame, kind: str, ctype: CType | None = None) -> Obj:
        can = decl.canonical
        if can in self.addr_taken and ctype is None:
            obj = self._shared_local(decl)
        else:
            obj = self.make_obj(decl.spelling, ctype or self.decl_ctype(decl), kind, fr.prefix)
            if can in self.addr_taken:  # an address-taken VLA: its candidates are per declaration
                self._replace_shared(can, obj)
        fr.env[can] = obj
        return obj

    def decl_ctype(self, decl: ci.Cursor) -> CType:
        """A declaration's type; parameters declared as arrays or functions are pointers (C11 6.7.6.3)."""
        t = decl.type.get_canonical()
        if decl.kind == K.PARM_DECL:
            if t.kind in _ARRAY_KINDS:
                return CPtr(self.type_of(t.element_type, decl))
            if t.kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
                raise self.unsupported("function pointer parameter", decl)
        return self.type_of(decl.type, decl)

    def type_of(self, t: ci.Type, c: ci.Cursor) -> CType:
        """Translate a clang type; the location (slow to compute) is only looked up for an error."""
        try:
            return self.types.of(t)
        except UnsupportedError as exc:
            if exc.where is None:
                raise UnsupportedError(exc.construct, self.where(c)) from None
            raise

    def _replace_shared(self, can, obj: Obj) -> None:
        """A VLA's type depends on the lengths stored at its declaration, so the pre-pass object (with unknown
        lengths) is replaced by the declared one, keeping the id (one live instance at a time)."""
        old = self.shared.get(can)
        if old is not None and old.id is not None:
            obj.id = old.id
            self.objects[old.id - 1] = obj
        self.shared[can] = obj

    def obj_lv(self, obj: Obj) -> LV:
        cells = {}
        for lf in self.types.leaves(obj.ctype):
            v = obj.vars[lf.path]
            cells[lf.path] = Cell(v, idx_const(0, self.IDX) if lf.in_array else None)
        addr = (IntConst(obj.id, self.OBJ), idx_const(0, self.IDX)) if obj.id is not None else None
        return single(obj.ctype, cells, addr)

    # ==================================================================================== initialisers
    def _init_static(self, obj: Obj, init: ci.Cursor | None) -> None:
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
        init_s = _strip_parens(init)
        if init_s.kind == K.INIT_LIST_EXPR:
            if not zeroed:
                self.write(lv, self.zero(lv.ctype))
            items = _kids(init_s)
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
        data: list[int] = []
        for tok in lit.get_tokens():
            b = _decode_string_literal(tok.spelling)
            if b is None:
                raise self.unsupported("wide or unusual string literal", lit)
            data.extend(b)
        it = self.types.ir_scalar(t.elem)
        for i, b in enumerate(data[:t.size]):
            self.write(self.subscript(lv, idx_const(i, self.IDX)), scalar(t.elem, IntConst(it.wrap(b), it)))

    def _init_agg(self, lv: LV, t: CType, items: list, pos: int) -> int:
        """Initialise the sub-objects of aggregate `t` from items[pos:] (C's brace elision); returns the
        position after the consumed items."""
        if isinstance(t, CArray):
            if not isinstance(t.size, int):
                raise self.unsupported("initialiser for a variable-length array")
            subs = ((self.subscript(lv, idx_const(i, self.IDX)), t.elem) for i in range(t.size))
        elif isinstance(t, CStruct):
            subs = ((self.member(lv, n), ft) for n, ft in self.types.fields[t.key])
        else:
            raise self.unsupported(f"initialiser for {t}")
        for sub, st in subs:
            if pos >= len(items):
                break
            item = items[pos]
            if item.kind == K.UNEXPOSED_EXPR and item.type.get_canonical().kind == TK.VOID:
                raise self.unsupported("designated initialiser", item)
            if item.kind == K.INIT_LIST_EXPR:
                inner = _kids(item)
                if self.types.is_scalar(st):
                    if inner:
                        self.write(sub, self.convert(self.rv(inner[0]), st, inner[0]))
                else:
                    p = self._init_agg(sub, st, inner, 0)
                    if p < len(inner):
                        raise self.unsupported("excess elements in initialiser", item)
                pos += 1
            elif self.types.is_scalar(st):
                self.write(sub, self.convert(self.rv(item), st, item))
                pos += 1
            elif _strip_parens(item).kind == K.STRING_LITERAL:
                self._init_string(sub, _strip_parens(item))
                pos += 1
            elif isinstance(st, CStruct) and self.ctype(item) == st:
                self.write(sub, self.rv(item))
                pos += 1
            else:
                pos = self._init_agg(sub, st, items, pos)
        return pos

    # ===================================================================================== statements
    def stmt(self, c: ci.Cursor) -> None:
        k = c.kind
        self.loc = self.where(c)
        if k == K.COMPOUND_STMT:
            for ch in c.get_children():
                self.stmt(ch)
        elif k == K.DECL_STMT:
            for ch in c.get_children():
                if ch.kind == K.VAR_DECL:
                    self.local_decl(ch)
                elif ch.kind in (K.TYPEDEF_DECL, K.STRUCT_DECL, K.ENUM_DECL, K.FUNCTION_DECL, K.UNION_DECL,
                                 K.STATIC_ASSERT):
                    continue
                else:
                    raise self.unsupported(f"declaration {ch.kind.name}", ch)
        elif k == K.NULL_STMT:
            self.here()
        elif k == K.IF_STMT:
            self._if(c)
        elif k == K.WHILE_STMT:
            self._while(c)
        elif k == K.DO_STMT:
            self._do(c)
        elif k == K.FOR_STMT:
            self._for(c)
        elif k == K.SWITCH_STMT:
            self._switch(c)
        elif k in (K.CASE_STMT, K.DEFAULT_STMT):
            loc = self.case_locs.get(c)
            if loc is None:
                raise self.unsupported("case label outside a switch", c)
            self.start(loc)
            self.stmt(_kids(c)[-1])
        elif k == K.BREAK_STMT:
            fr = self.frames[-1]
            if not fr.breaks:
                raise self.unsupported("break outside a loop or switch", c)
            self.jump(fr.breaks[-1])
        elif k == K.CONTINUE_STMT:
            fr = self.frames[-1]
            if not fr.conts:
                raise self.unsupported("continue outside a loop", c)
            self.jump(fr.conts[-1])
        elif k == K.LABEL_STMT:
            loc = self._label(c.spelling)
            self.start(loc)
            ks = _kids(c)
            if ks:
                self.stmt(ks[-1])
        elif k == K.GOTO_STMT:
            ref = [x for x in c.get_children() if x.kind == K.LABEL_REF]
            if not ref:
                raise self.unsupported("goto", c)
            self.jump(self._label(ref[0].spelling))
        elif k == K.RETURN_STMT:
            self._return(c)
        elif k == K.INDIRECT_GOTO_STMT:
            raise self.unsupported("computed goto", c)
        elif k in (K.ASM_STMT, K.MS_ASM_STMT):
            raise self.unsupported("inline assembly", c)
        elif k.is_expression():
            self.rv(c, want=False)
        else:
            raise self.unsupported(f"statement {k.name}", c)

    def _label(self, name: str) -> int:
        fr = self.frames[-1]
        loc = fr.labels.get(name)
        if loc is None:
            loc = fr.labels[name] = self.new_loc(name=f"{fr.prefix}{name}")
        return loc

    def local_decl(self, vd: ci.Cursor) -> None:
        fr = self.frames[-1]
        sc = vd.storage_class
        if sc == ci.StorageClass.EXTERN:
            return  # refers to a global; resolved through its canonical declaration
        if sc == ci.StorageClass.STATIC:
            fr.env[vd.canonical] = self._global_obj(vd, vd)
            return
        self.loc = self.where(vd)
        init = capi.var_initializer(vd)
        vla = None
        if vd.type.get_canonical().kind == TK.VARIABLEARRAY:
            vla = self._vla_type(vd, init)
        obj = self._local_obj(vd, fr, "local", vla)
        if init is None:
            self.emit(Havoc(tuple(obj.vars.values()), self.loc))
        else:
            self.initialize(self.obj_lv(obj), init)

    def _vla_type(self, vd: ci.Cursor, init) -> CType:
        """A variable-length array's type with its inner lengths evaluated now and kept in variables: later
        subscripts need the strides of the object as declared (C fixes them at the declaration)."""
        levels = []
        t = vd.type.get_canonical()
        while t.kind in _ARRAY_KINDS:
            levels.append(t)
            t = t.element_type
        sizes = [ch for ch in _expr_kids(vd) if init is None or ch != init]
        if len(sizes) != len(levels):
            raise self.unsupported("variable-length array with a typedef'd dimension", vd)
        sizes.reverse()  # libclang lists the innermost dimension first
        dims: list = []
        for depth, (lv_t, sz) in enumerate(zip(levels, sizes)):
            if lv_t.kind == TK.CONSTANTARRAY:
                dims.append(lv_t.get_array_size())
                continue
            if depth == 0:  # the outermost length is never a stride: evaluate it only for its effects
                if self.effectful(sz):
                    self.rv(sz, want=False)
                dims.append(None)
                continue
            v = self.rv(sz)
            if not isinstance(v.ctype, (CInt, CBool)):
                raise self.unsupported("array length that is not an integer", sz)
            n = self.new_var(f"{vd.spelling}.len", self.IDX, "local", c_name=f"length of {vd.spelling}")
            self.emit(Assign(n, cast(self.IDX, v.e), self.loc))
            dims.append(n)
        ct = self.types.of(t, self.loc)
        for d in reversed(dims):
            ct = CArray(ct, d)
        return ct

    def _if(self, c):
        ks = _kids(c)
        cond, then = ks[0], ks[1]
        els = ks[2] if len(ks) > 2 else None
        t, end = self.new_loc(), self.new_loc()
        f = self.new_loc() if els is not None else end
        self.branch_on(cond, t, f)
        self.start(t)
        self.stmt(then)
        self.jump(end)
        if els is not None:
            self.start(f)
            self.stmt(els)
            self.jump(end)
        self.start(end)

    def _loop_name(self, c, kind):
        return f"{kind}@{self.loc.line}" if self.loc is not None else kind

    def _while(self, c):
        cond, body = _kids(c)[0], _kids(c)[-1]
        head = self.new_loc(self._loop_name(c, "while"))
        bl, end = self.new_loc(), self.new_loc()
        self.start(head)
        self.branch_on(cond, bl, end)
        self.start(bl)
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.conts.append(head)
        self.stmt(body)
        self.jump(head)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(end)

    def _do(self, c):
        body, cond = _kids(c)[0], _kids(c)[-1]
        head = self.new_loc(self._loop_name(c, "do"))
        cont, end = self.new_loc(), self.new_loc()
        self.start(head)
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.conts.append(cont)
        self.stmt(body)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(cont)
        self.loc = self.where(cond)
        self.branch_on(cond, head, end)
        self.start(end)

    def _for_parts(self, c):
        """libclang omits absent parts of `for (init; cond; inc)`; classify children by the header's
        top-level semicolons."""
        toks = list(c.get_tokens())
        i = 0
        while i < len(toks) and toks[i].spelling != "(":
            i += 1
        depth, semis, rparen = 0, [], None
        for t in toks[i:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    rparen = t.extent.start.offset
                    break
            elif s == ";" and depth == 1:
                semis.append(t.extent.start.offset)
        if len(semis) != 2 or rparen is None:
            raise self.unsupported("for statement with an unusual header", c)
        init = cond = inc = body = None
        for ch in c.get_children():
            o = ch.extent.start.offset
            if o < semis[0]:
                init = ch
            elif o < semis[1]:
                cond = ch
            elif o < rparen:
                inc = ch
            else:
                body = ch
        return init, cond, inc, body

    def _for(self, c):
        init, cond, inc, body = self._for_parts(c)
        if init is not None:
            self.stmt(init)
        head = self.new_loc(self._loop_name(c, "for"))
        bl, cont, end = self.new_loc(), self.new_loc(), self.new_loc()
        self.start(head)
        if cond is not None:
            self.branch_on(cond, bl, end)
        else:
            self.jump(bl)
        self.start(bl)
        fr = self.frames[-1]
        fr.breaks.append(end)
        fr.conts.append(cont)
        if body is not None:
            self.stmt(body)
        fr.breaks.pop()
        fr.conts.pop()
        self.start(cont)
        if inc is not None:
            self.loc = self.where(inc)
            self.rv(inc, want=False)
        self.jump(head)
        self.start(end)

    def _switch(self, c):
        ks = _kids(c)
        cond, body = ks[0], ks[-1]
        v = self.rv(cond)
        ct = v.ctype
        if not isinstance(ct, CInt):
            raise self.unsupported(f"switch on {ct}", c)
        e = v.e
        if not isinstance(e, (Var, IntConst)):
            t = self.temp(e.type)
            self.emit(Assign(t, e, self.loc))
            e = t
        it = self.types.ir_scalar(ct)
        cases, default = [], None
        stack = [body]
        while stack:
            n = stack.pop()
            if n.kind == K.SWITCH_STMT:
                continue
            if n.kind == K.CASE_STMT:
                kids = _kids(n)
                lo = capi.evaluate_int(kids[0])
                hi = capi.evaluate_int(kids[1]) if len(kids) == 3 else lo
                if lo is None or hi is None:
                    raise self.unsupported("non-constant case label", n)
                loc = self.new_loc()
                self.case_locs[n] = loc
                cases.append((it.wrap(lo), it.wrap(hi), loc, len(kids) == 3))
            elif n.kind == K.DEFAULT_STMT:
                default = self.new_loc()
                self.case_locs[n] = default
            stack.extend(reversed(_kids(n)))
        end = self.new_loc()
        # dispatch as a chain of two-way tests (complementary guards: the encoders' easy case)
        for lo, hi, loc, is_range in cases:
            if is_range:
                g = and_(Compare("<=", IntConst(lo, it), e), Compare("<=", e, IntConst(hi, it)))
            else:
                g = Compare("==", e, IntConst(lo, it))
            nxt = self.new_loc()
            self.branch(g, loc, nxt)
            self.start(nxt)
        self.jump(default if default is not None else end)
        fr = self.frames[-1]
        fr.breaks.append(end)
        self.stmt(body)
        fr.breaks.pop()
        self.start(end)

    def _return(self, c):
        fr = self.frames[-1]
        ks = _expr_kids(c)
        if ks:
            if fr.ret is not None:
                v = self.rv(ks[0])
                self.write(self.obj_lv(fr.ret), self.convert(v, fr.ret.ctype, ks[0]))
            else:
                self.rv(ks[0], want=False)
        self.jump(fr.ret_loc)

    # ===================================================================================== conditions
    def branch_on(self, c: ci.Cursor, t: int, f: int) -> None:
        """Jump to t if expression c is nonzero, else to f (short-circuit as control flow when needed)."""
        c = _strip_parens(c)
        if self.effectful(c):
            if c.kind == K.BINARY_OPERATOR:
                op = capi.binary_op(c)
                a, b = _kids(c)
                if op == "&&":
                    mid = self.new_loc()
                    self.branch_on(a, mid, f)
                    self.start(mid)
                    self.branch_on(b, t, f)
                    return
                if op == "||":
                    mid = self.new_loc()
                    self.branch_on(a, t, mid)
                    self.start(mid)
                    self.branch_on(b, t, f)
                    return
                if op == ",":
                    self.rv(a, want=False)
                    self.branch_on(b, t, f)
                    return
            if c.kind == K.UNARY_OPERATOR and capi.unary_op(c) == capi.UO_LNOT:
                self.branch_on(_kids(c)[0], f, t)
                return
            if c.kind == K.UNEXPOSED_EXPR and len(_kids(c)) == 1 and self._keeps_zeroness(c, _kids(c)[0]):
                self.branch_on(_kids(c)[0], t, f)
                return
        self.branch(self.to_bool(self.rv(c)), t, f)

    def _keeps_zeroness(self, c, ch) -> bool:
        """Conversion to _Bool, or an integer conversion that does not narrow, maps 0 to 0 and only 0."""
        if _is_array_expr(ch) or ch.type.get_canonical().kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
            return False
        to, fr = self.ctype(c), self.ctype(ch)
        if isinstance(fr, CBool) and isinstance(to, (CInt, CBool)):
            return True
        if isinstance(fr, CInt) and isinstance(to, CBool):
            return True
        return isinstance(fr, CInt) and isinstance(to, CInt) and to.bits >= fr.bits

    def to_bool(self, v: Val) -> Expr:
        t = v.ctype
        if isinstance(t, CBool):
            return v.e
        if isinstance(t, CInt):
            e = v.e
            if isinstance(e, Cast) and e.arg.type == BOOL:
                return e.arg  # (int)(a < b) != 0  is  a < b
            if isinstance(e, IntConst):
                return BoolConst(e.value != 0)
            return Compare("!=", e, IntConst(0, e.type))
        if isinstance(t, CPtr):
            o = v.obj
            if isinstance(o, IntConst):
                return BoolConst(o.value != 0)
            return Compare("!=", o, IntConst(0, self.OBJ))
        raise self.unsupported(f"condition of type {t}")

    # ==================================================================================== effects
    def effectful(self, c: ci.Cursor) -> bool:
        """May evaluating c do more than compute a value (write, call, block)? Then it cannot be evaluated
        unconditionally inside `&&`, `||`, `?:`."""
        key = c.hash, c.extent.start.offset, c.kind
        got = self._effect_memo.get(key)
        if got is not None:
            return got
        k = c.kind
        r = False
        if k in (K.CALL_EXPR, K.StmtExpr, K.COMPOUND_ASSIGNMENT_OPERATOR):
            r = True
        elif k == K.CXX_UNARY_EXPR:
            r = False  # sizeof/alignof do not evaluate their operand
        elif k == K.BINARY_OPERATOR and capi.binary_op(c) == "=":
            r = True
        elif k == K.UNARY_OPERATOR and (capi.unary_op(c) in _INCDEC or capi.unary_op(c) == capi.UO_DEREF):
            r = True
        elif k == K.MEMBER_REF_EXPR and _kids(c) and _ckind(_kids(c)[0]) == TK.POINTER:
            r = True
        elif k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = _kids(c)
            base = a if _ckind(a) == TK.POINTER else b
            r = not _is_decay(_strip_parens(base))
        if not r and k != K.CXX_UNARY_EXPR:
            r = any(self.effectful(ch) for ch in c.get_children())
        self._effect_memo[key] = r
        return r

    def may_write(self, cs) -> set | object:
        """IR variables that evaluating the expressions cs may write (`_ALL`: any global, static or
        address-taken variable, e.g. through a call)."""
        out: set = set()
        stack = list(cs)
        while stack:
            c = stack.pop()
            k = c.kind
            if k == K.CXX_UNARY_EXPR:
                continue
            target = None
            if k == K.COMPOUND_ASSIGNMENT_OPERATOR or (k == K.BINARY_OPERATOR and capi.binary_op(c) == "="):
                target = _kids(c)[0]
            elif k == K.UNARY_OPERATOR and capi.unary_op(c) in _INCDEC:
                target = _kids(c)[0]
            elif k == K.CALL_EXPR:
                sub = self._call_writes(c)
                if sub is _ALL:
                    return _ALL
                out.update(sub)
            if target is not None:
                d = self._base_decl(target)
                if d is None:
                    return _ALL  # a write through a pointer
                try:
                    obj = self.storage(d, target)
                except UnsupportedError:
                    obj = None
                if obj is not None:
                    out.update(obj.vars.values())
            stack.extend(c.get_children())
        return out

    def _call_writes(self, c: ci.Cursor):
        """Variables a call may write besides its arguments' effects: nothing for the built-in models,
        the globals written by an inlined body (callee locals are fresh), `_ALL` if unknown."""
        ref = c.referenced
        if ref is None or ref.kind != K.FUNCTION_DECL:
            return _ALL
        name = ref.spelling
        d = ref.get_definition()
        if (name.startswith("__VERIFIER_nondet_") or name in _ASSUME or name in _TERMINATE
                or name in ("__builtin_expect", "__builtin_unreachable")
                or (name == "__VERIFIER_assert" and d is None)):
            return set()
        if d is None:
            return set() if name == "reach_error" else _ALL
        key = d.canonical
        memo = self._call_writes_memo
        if key in memo:
            return memo[key] if memo[key] is not None else set()  # None: being computed (recursion)
        memo[key] = None
        res = self.may_write([self._body(d)])
        memo[key] = res
        return res

    def _all_shared_vars(self) -> set:
        vs = set()
        for o in list(self.globals.values()) + self.objects:
            vs.update(o.vars.values())
        return vs

    def _threatened(self, e: Expr, mw) -> bool:
        if isinstance(e, (IntConst, BoolConst)):
            return False
        fv = free_vars(e)
        if not fv:
            return False
        if mw is _ALL:
            return bool(fv & self._all_shared_vars())
        return bool(fv & mw)

    def snap(self, e: Expr) -> Expr:
        if isinstance(e, (IntConst, BoolConst)):
            return e
        t = self.temp(e.type)
        self.emit(Assign(t, e, self.loc))
        return t

    def protect(self, v: Val, later: list) -> Val:
        """Keep v's value if evaluating the `later` expressions may change a variable it reads."""
        if not later or not v.leaves:
            return v
        mw = self.may_write(later)
        if not mw:
            return v
        return Val(v.ctype, {p: (self.snap(e) if self._threatened(e, mw) else e) for p, e in v.leaves.items()})

    def protect_lv(self, lv: LV, later: list) -> LV:
        mw = self.may_write(later) if later else set()
        if not mw:
            return lv
        alts = []
        for g, cells in lv.alts:
            if self._threatened(g, mw):
                g = self.snap(g)
            nc = {}
            for p, cell in cells.items():
                if cell.index is not None and self._threatened(cell.index, mw):
                    cell = Cell(cell.var, self.snap(cell.index))
                nc[p] = cell
            alts.append((g, nc))
        addr = lv.addr
        if addr is not None and (self._threatened(addr[0], mw) or self._threatened(addr[1], mw)):
            addr = (self.snap(addr[0]), self.snap(addr[1]))
        return LV(lv.ctype, alts, addr)

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
        leaves = {}
        for lf in self.types.leaves(t):
            alts = [(g, self._leaf_read(cells[lf.path], lf.in_array, lf.count)) for g, cells in lv.alts]
            e = alts[-1][1]
            for g, x in reversed(alts[:-1]):
                e = ite(g, x, e)
            leaves[lf.path] = e
        return Val(t, leaves)

    def write(self, lv: LV, v: Val) -> None:
        t = lv.ctype
        writes: list[tuple[Var, Expr, list]] = []  # (var, new value, expressions the new value reads)
        for g, cells in lv.alts:
            for lf in self.types.leaves(t):
                cell = cells[lf.path]
                x = v.leaves[lf.path]
                var = cell.var
                if lf.in_array:
                    self._leaf_read(cell, True, lf.count)  # checks it is the whole array
                    writes.append((var, x if g == TRUE else ite(g, x, var), [g, x]))
                elif cell.index is None:
                    writes.append((var, x if g == TRUE else ite(g, x, var), [g, x]))
                else:
                    old = Select(var, cell.index, var.type.elem)
                    new = Store(var, cell.index, x if g == TRUE else ite(g, x, old), var.type)
                    writes.append((var, new, [g, x, cell.index]))
        if len(writes) > 1:
            # All reads happen before all writes (struct copies between aliasing objects, guards that read
            # a pointer the same assignment overwrites).
            written: set[Var] = set()
            fixed = []
            snaps: dict[Expr, Expr] = {}
            for var, new, parts in writes:
                for p in parts:
                    if p not in snaps and not isinstance(p, (IntConst, BoolConst)) and free_vars(p) & written:
                        snaps[p] = None
                written.add(var)
            if snaps:
                for p in list(snaps):
                    snaps[p] = self.snap(p)
                for var, new, parts in writes:
                    fixed.append((var, transform(new, lambda n: snaps.get(n))))
                writes = [(a, b, []) for a, b in fixed]
        for var, new, _ in writes:
            self.emit(Assign(var, new, self.loc))

    # ================================================================================== lvalues
    def lv(self, c: ci.Cursor) -> LV:
        k = c.kind
        if k == K.PAREN_EXPR:
            return self.lv(_kids(c)[0])
        if k == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is None or ref.kind not in (K.VAR_DECL, K.PARM_DECL):
                raise self.unsupported(f"reference to {ref.kind.name if ref is not None else '?'}", c)
            if self.frames and ref.canonical in self.frames[-1].bound:
                raise self.unsupported("internal: a read-only parameter used as an object", c)
            return self.obj_lv(self.storage(ref, c))
        if k == K.MEMBER_REF_EXPR:
            base = _kids(c)[0]
            if _ckind(base) == TK.POINTER:
                blv = self.deref(self.rv(base), base)
            else:
                blv = self.lv(base)
            return self.member(blv, c.spelling, c)
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = _kids(c)
            if _ckind(a) != TK.POINTER:
                a, b = b, a  # `i[a]`
            a_s = _strip_parens(a)
            if _is_decay(a_s):
                alv = self.lv(_kids(a_s)[0])
                alv = self.protect_lv(alv, [b])
                i = self.rv(b)
                return self.subscript(alv, self._index(i, b))
            p = self.protect(self.rv(a), [b])
            i = self.rv(b)
            return self.deref(self.ptr_add(p, self._index(i, b), +1), c)
        if k == K.UNARY_OPERATOR:
            op = capi.unary_op(c)
            if op == capi.UO_DEREF:
                ch = _kids(c)[0]
                return self.deref(self.rv(ch), c)
            if op == capi.UO_EXTENSION:
                return self.lv(_kids(c)[0])
        if k == K.UNEXPOSED_EXPR and len(_kids(c)) == 1 and not _is_decay(c):
            ch = _kids(c)[0]
            if self.ctype(ch) == self.ctype(c):
                return self.lv(ch)
        if k == K.STRING_LITERAL:
            raise self.unsupported("string literal", c)
        # an rvalue of aggregate type used where an object is needed (`f().x`): a temporary object
        t = self.ctype(c)
        if isinstance(t, CStruct):
            v = self.rv(c)
            obj = self.make_obj("tmp", t, "temp")
            lv = self.obj_lv(obj)
            self.write(lv, v)
            return lv
        raise self.unsupported(f"lvalue {k.name}", c)

    def _index(self, i: Val, c) -> Expr:
        if not isinstance(i.ctype, (CInt, CBool)):
            raise self.unsupported("array index that is not an integer", c)
        return cast(self.IDX, i.e)

    def member(self, lv: LV, name: str, c=None) -> LV:
        t = lv.ctype
        if not isinstance(t, CStruct):
            raise self.unsupported(f"member access on {t}", c)
        ft = self.types.field_type(t, name)
        alts = []
        for g, cells in lv.alts:
            alts.append((g, {lf.path: cells[(name,) + lf.path] for lf in self.types.leaves(ft)}))
        return LV(ft, alts, None)

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
        return LV(e, alts, addr)

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
        cands = [o for o in self.objects if any(compatible(x, pt) for x in strip_array(o.ctype))]
        if isinstance(obj, IntConst):
            cands = [o for o in cands if o.id == obj.value]
        alts = []
        valids = []
        for o in cands:
            # selecting the object needs only its id; validity (checked once, below) also needs the offset
            g = Compare("==", obj, IntConst(o.id, self.OBJ)) if not isinstance(obj, IntConst) else TRUE
            cells = {}
            if o.is_array:
                valids.append(g)
                for lf in self.types.leaves(pt):
                    if lf.count is None:
                        raise self.unsupported("pointer to a variable-length array type", c)
                    cells[lf.path] = Cell(o.vars[lf.path], self.imul(off, lf.count))
            else:
                valids.append(g if is_zero(off) else and_(g, Compare("==", off, idx_const(0, self.IDX))))
                for lf in self.types.leaves(pt):
                    v = o.vars[lf.path]
                    cells[lf.path] = Cell(v, idx_const(0, self.IDX) if lf.in_array else None)
            alts.append((g, cells))
        valid = or_(*valids)
        if valid != TRUE:
            self.assume_once(valid, self.where(c))  # NULL / invalid dereference: undefined behaviour
        if not alts:
            self.block()
            # the rest of this expression is dead code; give it a harmless lvalue of the right shape
            dummy = self.make_obj("unreachable", pt, "temp")
            return self.obj_lv(dummy)
        if len(alts) == 1:
            alts = [(TRUE, alts[0][1])]
        return LV(pt, alts, (obj, off))

    # ================================================================================ conversions
    def ctype(self, c: ci.Cursor) -> CType:
        t = c.type.get_canonical()
        if t.kind in _ARRAY_KINDS and _denotes_param(c):
            return CPtr(self.type_of(t.element_type, c))
        return self.type_of(c.type, c)

    def convert(self, v: Val, to: CType, c=None) -> Val:
        fr = v.ctype
        if isinstance(to, CVoid):
            return Val(to, {})
        if fr == to:
            return Val(to, v.leaves)
        if isinstance(to, CBool):
            if isinstance(fr, (CInt, CPtr)):
                return scalar(to, self.to_bool(v))
        elif isinstance(to, CInt):
            if isinstance(fr, (CInt, CBool)):
                return scalar(to, cast(IntType(to.bits, to.signed), v.e))
            if isinstance(fr, CPtr):
                raise self.unsupported("conversion of a pointer to an integer", c)
        elif isinstance(to, CPtr):
            if isinstance(fr, CPtr):
                if isinstance(v.obj, IntConst) and v.obj.value == 0:
                    return pointer(to, v.obj, v.off)  # NULL converts to every pointer type
                if isinstance(fr.pointee, CFunc) or isinstance(to.pointee, CFunc):
                    raise self.unsupported("function pointer", c)
                if fr.pointee == to.pointee:
                    return Val(to, v.leaves)
                if compatible(fr.pointee, to.pointee):
                    return Val(fr, v.leaves)  # keep the variable-length array lengths of the source
                raise self.unsupported(f"pointer conversion from {fr} to {to}", c)
            if isinstance(fr, (CInt, CBool)):
                if isinstance(v.e, IntConst) and v.e.value == 0:
                    return pointer(to, IntConst(0, self.OBJ), idx_const(0, self.IDX))
                raise self.unsupported("conversion of an integer to a pointer", c)
        elif isinstance(to, CStruct) and fr == to:
            return Val(to, v.leaves)
        raise self.unsupported(f"conversion from {fr} to {to}", c)

    # ================================================================================ expressions
    def rv(self, c: ci.Cursor, want: bool = True) -> Val:
        """Evaluate expression c (emitting its side effects); `want=False` when the value is discarded."""
        k = c.kind
        if k == K.INTEGER_LITERAL or k == K.CHARACTER_LITERAL:
            t = self.ctype(c)
            v = capi.evaluate_int(c)
            if v is None or not isinstance(t, CInt):
                raise self.unsupported("literal", c)
            return scalar(t, IntConst(IntType(t.bits, t.signed).wrap(v), IntType(t.bits, t.signed)))
        if k == K.PAREN_EXPR:
            return self.rv(_kids(c)[0], want)
        if k == K.UNEXPOSED_EXPR:
            return self._unexposed(c, want)
        if k == K.CSTYLE_CAST_EXPR:
            ch = _expr_kids(c)[-1]
            to = self.ctype(c)
            if isinstance(to, CVoid) or not want:
                self.rv(ch, want=False)
                return Val(to, {})
            if _is_array_expr(ch):
                return self.convert(self._decay(ch), to, c)
            return self.convert(self.rv(ch), to, c)
        if k == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is not None and ref.kind == K.ENUM_CONSTANT_DECL:
                t = self.ctype(c)
                it = IntType(t.bits, t.signed)
                return scalar(t, IntConst(it.wrap(ref.enum_value), it))
            if ref is not None and ref.kind == K.FUNCTION_DECL:
                raise self.unsupported("function pointer", c)
            if ref is not None and self.frames:
                b = self.frames[-1].bound.get(ref.canonical)
                if b is not None:
                    return b
            return self.read(self.lv(c))
        if k in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR):
            return self.read(self.lv(c))
        if k == K.UNARY_OPERATOR:
            return self._unary(c, want)
        if k == K.BINARY_OPERATOR:
            return self._binary(c, want)
        if k == K.COMPOUND_ASSIGNMENT_OPERATOR:
            return self._compound(c, want)
        if k == K.CONDITIONAL_OPERATOR:
            ks = _kids(c)
            return self._conditional(c, ks[0], ks[1], ks[2], want)
        if k == K.CALL_EXPR:
            return self._call(c, want)
        if k == K.CXX_UNARY_EXPR:
            v = capi.evaluate_int(c)
            t = self.ctype(c)
            if v is None or not isinstance(t, CInt):
                raise self.unsupported("sizeof of a variable-length array", c)
            it = IntType(t.bits, t.signed)
            return scalar(t, IntConst(it.wrap(v), it))
        if k == K.StmtExpr:
            return self._stmt_expr(c, want)
        if k == K.STRING_LITERAL:
            raise self.unsupported("string literal", c)
        if k == K.ADDR_LABEL_EXPR:
            raise self.unsupported("address of label (computed goto)", c)
        if k == K.INIT_LIST_EXPR:
            t = self.ctype(c)
            if isinstance(t, CStruct):
                obj = self.make_obj("tmp", t, "temp")
                lv = self.obj_lv(obj)
                self.initialize(lv, c)
                return self.read(lv)
            raise self.unsupported("initialiser list used as a value", c)
        if k == K.COMPOUND_LITERAL_EXPR:
            raise self.unsupported("compound literal", c)
        if k in (K.FLOATING_LITERAL, K.IMAGINARY_LITERAL):
            raise self.unsupported("floating-point literal", c)
        raise self.unsupported(f"expression {k.name}", c)

    def _decay(self, arr: ci.Cursor) -> Val:
        alv = self.lv(arr)
        t = alv.ctype
        if not isinstance(t, CArray):
            raise self.unsupported("array decay of a non-array", arr)
        if alv.addr is None:
            raise self.unsupported("pointer to an array member of a struct", arr)
        obj, off = alv.addr
        if t.size is not None:
            off = self.imul(off, t.size)
        elif not is_zero(off):
            raise self.unsupported("pointer into a variable-length array", arr)
        return pointer(CPtr(t.elem), obj, off)

    def _unexposed(self, c: ci.Cursor, want: bool) -> Val:
        ks = _kids(c)
        if len(ks) == 1:
            ch = ks[0]
            to = self.ctype(c)
            if _is_array_expr(ch) and isinstance(to, CPtr):
                return self.convert(self._decay(ch), to, c)
            chk = ch.type.get_canonical().kind
            if chk in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
                raise self.unsupported("function pointer", c)
            if isinstance(to, CVoid) or not want:
                self.rv(ch, want=False)
                return Val(to, {})
            return self.convert(self.rv(ch), to, c)
        if len(ks) == 4 and self._is_binary_conditional(c):  # GNU `a ?: b`
            common, _, _, other = ks
            if self.effectful(common):
                raise self.unsupported("'?:' with side effects in its condition", c)
            return self._conditional(c, common, common, other, want)
        if all(not k.kind.is_expression() for k in ks):
            t = self.ctype(c)
            v = capi.evaluate_int(c)
            if v is not None and isinstance(t, CInt):
                it = IntType(t.bits, t.signed)
                return scalar(t, IntConst(it.wrap(v), it))
            if not ks and (isinstance(t, (CInt, CBool, CPtr, CStruct))):
                return self.zero(t)  # implicit value initialisation
        toks = " ".join(x.spelling for x in c.get_tokens())[:40]
        raise self.unsupported(f"expression '{toks}'", c)

    @staticmethod
    def _is_binary_conditional(c: ci.Cursor) -> bool:
        toks = [t.spelling for t in c.get_tokens()]
        return any(a == "?" and b == ":" for a, b in zip(toks, toks[1:]))

    def _unary(self, c: ci.Cursor, want: bool) -> Val:
        op = capi.unary_op(c)
        ch = _kids(c)[0]
        if op in _INCDEC:
            return self._incdec(c, ch, op, want)
        if op == capi.UO_ADDR_OF:
            t = self.ctype(c)
            if ch.type.get_canonical().kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
                raise self.unsupported("function pointer", c)
            lv = self.lv(ch)
            if lv.addr is None:
                raise self.unsupported("address of a struct member", c)
            return pointer(t, lv.addr[0], lv.addr[1])
        if op == capi.UO_DEREF:
            return self.read(self.lv(c))
        if op == capi.UO_EXTENSION:
            return self.rv(ch, want)
        t = self.ctype(c)
        if op == capi.UO_PLUS:
            return self.convert(self.rv(ch), t, c)
        if op in (capi.UO_MINUS, capi.UO_NOT):
            v = self.convert(self.rv(ch), t, c)
            if not isinstance(t, CInt):
                raise self.unsupported(f"unary operator on {t}", c)
            e = v.e
            sym = "-" if op == capi.UO_MINUS else "~"
            if isinstance(e, IntConst):
                it = IntType(t.bits, t.signed)
                val = -e.value if sym == "-" else ~e.value
                if it.contains(val) or not it.signed:
                    return scalar(t, IntConst(it.wrap(val), it))
            return scalar(t, Unary(sym, e, e.type))
        if op == capi.UO_LNOT:
            b = self.to_bool(self.rv(ch))
            return self._bool_result(c, not_(b))
        raise self.unsupported("unary operator (complex numbers)", c)

    def _bool_result(self, c, b: Expr) -> Val:
        t = self.ctype(c)
        if isinstance(t, CBool):
            return scalar(t, b)
        return scalar(t, cast(IntType(t.bits, t.signed), b))

    def _binary(self, c: ci.Cursor, want: bool) -> Val:
        op = capi.binary_op(c)
        a, b = _kids(c)
        if op == ",":
            self.rv(a, want=False)
            return self.rv(b, want)
        if op == "=":
            return self._assign(c, a, b, want)
        if op in ("&&", "||"):
            return self._logical(c, op, a, b, want)
        va = self.protect(self.rv(a), [b])
        vb = self.rv(b)
        t = self.ctype(c)
        ta, tb = va.ctype, vb.ctype
        if op in _CMP:
            if isinstance(ta, CPtr) or isinstance(tb, CPtr):
                return self._bool_result(c, self._ptr_cmp(op, va, vb, c))
            if ta != tb:
                raise self.unsupported(f"comparison of {ta} and {tb}", c)
            return self._bool_result(c, Compare(op, va.e, vb.e))
        if isinstance(t, CPtr):
            if op == "+":
                if isinstance(ta, CPtr):
                    return self.convert(self.ptr_add(va, self._index(vb, b), +1), t, c)
                return self.convert(self.ptr_add(vb, self._index(va, a), +1), t, c)
            if op == "-" and isinstance(ta, CPtr):
                return self.convert(self.ptr_add(va, self._index(vb, b), -1), t, c)
            raise self.unsupported(f"pointer operator '{op}'", c)
        if isinstance(ta, CPtr) and isinstance(tb, CPtr) and op == "-":
            if not isinstance(t, CInt):
                raise self.unsupported("pointer difference", c)
            return scalar(t, cast(IntType(t.bits, t.signed), Binary("-", va.off, vb.off, self.IDX)))
        if not isinstance(t, CInt):
            raise self.unsupported(f"operator '{op}' on {t}", c)
        it = IntType(t.bits, t.signed)
        if op in _SHIFT:
            if ta != t or not isinstance(tb, CInt):
                raise self.unsupported("shift operand types", c)
            return scalar(t, Binary(op, va.e, vb.e, it))
        if op in _ARITH:
            if ta != t or tb != t:
                raise self.unsupported(f"operand types of '{op}' ({ta}, {tb} -> {t})", c)
            return scalar(t, Binary(op, va.e, vb.e, it))
        raise self.unsupported(f"operator '{op}'", c)

    def _ptr_cmp(self, op: str, a: Val, b: Val, c) -> Expr:
        if not (isinstance(a.ctype, CPtr) and isinstance(b.ctype, CPtr)):
            raise self.unsupported("comparison of a pointer with an integer", c)
        if op in ("==", "!="):
            eq = and_(Compare("==", a.obj, b.obj), Compare("==", a.off, b.off))
            return eq if op == "==" else not_(eq)
        # relational comparison is only defined within one object: compare the offsets
        return Compare(op, a.off, b.off)

    def _logical(self, c, op, a, b, want) -> Val:
        if not self.effectful(b):
            x = self.to_bool(self.rv(a))
            y = self.to_bool(self.rv(b))
            return self._bool_result(c, and_(x, y) if op == "&&" else or_(x, y))
        t = self.ctype(c)
        if not want:
            join = self.new_loc()
            self.branch_on(c, join, join)
            self.start(join)
            return Val(t, {})
        res = self.temp(self.types.ir_scalar(t))
        tl, fl, join = self.new_loc(), self.new_loc(), self.new_loc()
        self.branch_on(c, tl, fl)
        it = res.type
        self.start(tl)
        self.emit(Assign(res, TRUE if it == BOOL else IntConst(1, it), self.loc))
        self.jump(join)
        self.start(fl)
        self.emit(Assign(res, FALSE if it == BOOL else IntConst(0, it), self.loc))
        self.jump(join)
        self.start(join)
        return scalar(t, res)

    def _conditional(self, c, cond, then, els, want) -> Val:
        t = self.ctype(c)
        if not self.effectful(then) and not self.effectful(els) and not isinstance(t, CVoid):
            g = self.to_bool(self.rv(cond))
            tv = self.convert(self.rv(then), t, then)
            ev = self.convert(self.rv(els), t, els)
            return Val(t, {p: ite(g, tv.leaves[p], ev.leaves[p]) for p in tv.leaves})
        tl, fl, join = self.new_loc(), self.new_loc(), self.new_loc()
        res = None
        if want and not isinstance(t, CVoid):
            res = self.make_obj("tmp", t, "temp")
        self.branch_on(cond, tl, fl)
        for loc, branch in ((tl, then), (fl, els)):
            self.start(loc)
            if res is not None:
                v = self.convert(self.rv(branch), t, branch)
                self.write(self.obj_lv(res), v)
            else:
                self.rv(branch, want=False)
            self.jump(join)
        self.start(join)
        if res is None:
            return Val(t, {})
        return self.read(self.obj_lv(res))

    def _assign(self, c, a, b, want) -> Val:
        target = self.protect_lv(self.lv(a), [b])
        v = self.rv(b)
        v = self.convert(v, target.ctype, c)
        self.write(target, v)
        if not want:
            return Val(target.ctype, {})
        if all(isinstance(x, (IntConst, BoolConst)) for x in v.leaves.values()):
            return v
        return self.read(target)

    def _incdec(self, c, ch, op, want) -> Val:
        target = self.lv(ch)
        t = target.ctype
        old = self.read(target)
        post = op in (capi.UO_POST_INC, capi.UO_POST_DEC)
        inc = op in (capi.UO_POST_INC, capi.UO_PRE_INC)
        if post and want:
            old = Val(t, {p: self.snap(e) for p, e in old.leaves.items()})
        if isinstance(t, CInt):
            pt = self.types.promote(t)
            pit = IntType(pt.bits, pt.signed)
            r = Binary("+" if inc else "-", cast(pit, old.e), IntConst(1, pit), pit)
            new = scalar(t, cast(IntType(t.bits, t.signed), r))
        elif isinstance(t, CBool):
            new = scalar(t, TRUE if inc else not_(old.e))
        elif isinstance(t, CPtr):
            new = self.ptr_add(old, idx_const(1, self.IDX), +1 if inc else -1)
        else:
            raise self.unsupported(f"++/-- on {t}", c)
        self.write(target, new)
        if not want:
            return Val(t, {})
        return old if post else self.read(target)

    def _compound(self, c, want) -> Val:
        op = capi.binary_op(c)[:-1]
        a, b = _kids(c)
        target = self.protect_lv(self.lv(a), [b])
        t = target.ctype
        old = self.protect(self.read(target), [b])
        r = self.rv(b)
        if isinstance(t, CPtr):
            if op not in ("+", "-"):
                raise self.unsupported(f"pointer operator '{op}='", c)
            new = self.ptr_add(old, self._index(r, b), +1 if op == "+" else -1)
        elif isinstance(t, (CInt, CBool)) and isinstance(r.ctype, (CInt, CBool)):
            if op in _SHIFT:
                comp = self.types.promote(t)
                rv_ = self.convert(r, self.types.promote(r.ctype), b)
            else:
                comp = self.types.usual_arithmetic(t, r.ctype)
                rv_ = self.convert(r, comp, b)
            cit = IntType(comp.bits, comp.signed)
            res = Binary(op, cast(cit, old.e), rv_.e, cit)
            new = self.convert(scalar(comp, res), t, c)
        else:
            raise self.unsupported(f"compound assignment on {t}", c)
        self.write(target, new)
        if not want:
            return Val(t, {})
        return self.read(target)

    def _stmt_expr(self, c, want) -> Val:
        body = _kids(c)[0]
        stmts = _kids(body)
        t = self.ctype(c)
        for s in stmts[:-1]:
            self.stmt(s)
        if not stmts:
            return Val(t, {})
        last = stmts[-1]
        if isinstance(t, CVoid) or not last.kind.is_expression():
            self.stmt(last)
            return Val(t, {})
        return self.convert(self.rv(last, want), t, last) if want else self.rv(last, want=False)

    # ========================================================================================= calls
    def _call(self, c: ci.Cursor, want: bool) -> Val:
        ks = _kids(c)
        callee = _strip_parens(ks[0])
        while callee.kind == K.UNEXPOSED_EXPR and len(_kids(callee)) == 1:
            callee = _strip_parens(_kids(callee)[0])
        ref = callee.referenced if callee.kind == K.DECL_REF_EXPR else None
        if ref is None or ref.kind != K.FUNCTION_DECL:
            raise self.unsupported("call through a function pointer", c)
        name = ref.spelling
        args = ks[1:]
        self.loc = self.where(c)
        rt = self.ctype(c)
        if name == "reach_error":
            self.emit(Assert(FALSE, "unreach-call", self.loc))
            fdef = ref.get_definition()
            if fdef is not None:
                return self._inline(c, fdef, args, want)
            for a in args:
                self.rv(a, want=False)
            return Val(rt, {})
        if name.startswith("__VERIFIER_nondet_"):
            for a in args:
                self.rv(a, want=False)
            if not isinstance(rt, (CInt, CBool)):
                raise self.unsupported(f"{name} returning {rt}", c)
            suffix = name[len("__VERIFIER_nondet_"):]
            nt = rt
            if suffix in _NONDET_TYPES:
                spec = _NONDET_TYPES[suffix]
                if spec is None:
                    nt = CBool()
                else:
                    bits = self.types.ptr_bits if spec[0] == "long" else spec[0]
                    nt = CInt(bits, spec[1])
            v = self.new_var("nondet_" + suffix, self.types.ir_scalar(nt), "nondet", c_name=f"{name}()")
            self.emit(Havoc((v,), self.loc))
            return self.convert(scalar(nt, v), rt, c)
        if name in _ASSUME:
            if len(args) != 1:
                raise self.unsupported(f"{name} with {len(args)} arguments", c)
            self.emit(Assume(self.to_bool(self.rv(args[0])), self.loc))
            return Val(rt, {})
        if name == "__VERIFIER_assert" and ref.get_definition() is None:
            if len(args) != 1:
                raise self.unsupported(f"{name} with {len(args)} arguments", c)
            self.emit(Assert(self.to_bool(self.rv(args[0])), "unreach-call", self.loc))
            return Val(rt, {})
        if name in _TERMINATE:
            for a in args:
                if self.effectful(a):
                    self.rv(a, want=False)
            self.jump(self.exit)
            return Val(rt, {}) if isinstance(rt, CVoid) else self.zero(rt)
        if name == "__builtin_expect":
            v = self.protect(self.rv(args[0]), args[1:])
            for a in args[1:]:
                self.rv(a, want=False)
            return self.convert(v, rt, c)
        if name == "__builtin_unreachable":
            self.emit(Assume(FALSE, self.loc))
            self.block()
            return Val(rt, {})
        fdef = ref.get_definition()
        if fdef is None:
            raise self.unsupported(f"call to undefined function '{name}'", c)
        return self._inline(c, fdef, args, want)

    def _params_written(self, fdef: ci.Cursor, body: ci.Cursor) -> set:
        """Parameters (canonical cursors) the function body assigns, increments or takes the address of."""
        key = fdef.canonical
        got = self._written_params.get(key)
        if got is not None:
            return got
        out = set()
        stack = [body]
        while stack:
            c = stack.pop()
            k = c.kind
            target = None
            if k == K.COMPOUND_ASSIGNMENT_OPERATOR or (k == K.BINARY_OPERATOR and capi.binary_op(c) == "="):
                target = _kids(c)[0]
            elif k == K.UNARY_OPERATOR and capi.unary_op(c) in (_INCDEC | {capi.UO_ADDR_OF}):
                target = _kids(c)[0]
            if target is not None:
                d = self._base_decl(target)
                if d is not None and d.kind == K.PARM_DECL:
                    out.add(d.canonical)
            stack.extend(c.get_children())
        self._written_params[key] = out
        return out

    def _inline(self, c, fdef: ci.Cursor, args: list, want: bool) -> Val:
        name = fdef.spelling
        can = fdef.canonical
        if can in self.call_stack:
            raise self.unsupported(f"recursion ('{name}')", c)
        if fdef.type.get_canonical().kind == TK.FUNCTIONPROTO and fdef.type.is_function_variadic():
            raise self.unsupported(f"variadic function '{name}'", c)
        params = [p for p in fdef.get_children() if p.kind == K.PARM_DECL]
        if len(params) != len(args):
            raise self.unsupported(f"call of '{name}' with {len(args)} arguments for {len(params)} parameters", c)
        vals = []
        for i, a in enumerate(args):
            v = self.rv(a)
            vals.append(self.protect(v, args[i + 1:]))
        rt = self.type_of(fdef.result_type, fdef)
        call_loc = self.loc
        ret = None if isinstance(rt, CVoid) else self.make_obj("ret", rt, "ret", f"{name}::")
        fr = Frame(name, f"{name}::", ret, self.new_loc())
        body = self._body(fdef)
        written = self._params_written(fdef, body)
        body_writes = None
        for p, v in zip(params, vals):
            self.loc = self.where(p)
            pc = p.canonical
            ct = self.decl_ctype(p)
            v = self.convert(v, ct, p)
            if pc not in written and pc not in self.addr_taken and isinstance(ct, (CInt, CBool, CPtr)):
                # A parameter the body never changes can stand for its argument's value, if the body cannot
                # change what that value reads either: no variable (and no assignment) per call.
                if body_writes is None:
                    body_writes = self.may_write([body])
                if not any(self._threatened(e, body_writes) for e in v.leaves.values()):
                    fr.bound[pc] = v
                    continue
            obj = self._local_obj(p, fr, "param")
            self.write(self.obj_lv(obj), v)
        self.frames.append(fr)
        self.call_stack.append(can)
        try:
            self.stmt(body)
        finally:
            self.frames.pop()
            self.call_stack.pop()
        self.start(fr.ret_loc)
        self.loc = call_loc
        if ret is None or not want:
            return Val(rt, {})
        return self.read(self.obj_lv(ret))


def lower(parsed: Parsed, data_model: str) -> Program:
    lw = Lowerer(parsed, data_model)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 200_000))  # load_c_program runs us on a thread with a large stack
    try:
        return lw.run()
    except InputError:
        raise
    except UnsupportedError as exc:
        if exc.where is None and lw.loc is not None:  # raised where no location was at hand
            raise UnsupportedError(exc.construct, lw.loc) from None
        raise
    except RecursionError:
        raise UnsupportedError("expression or statement nesting too deep", lw.loc) from None
    except Exception as exc:  # noqa: BLE001 - never a traceback for user input
        raise UnsupportedError(f"internal front-end error ({type(exc).__name__}: {exc})", lw.loc) from exc
    finally:
        sys.setrecursionlimit(old)
