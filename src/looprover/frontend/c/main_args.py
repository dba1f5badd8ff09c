"""The parameters of `main`: `int main(int argc, char **argv)` as a hosted environment calls it (C11 5.1.2.2.1).

What the program is started with:
  * `argc >= 0`, any value below INT_MAX (a bound C does not give but every system does: Linux passes at most
    MAX_ARG_STRINGS, 2^31 - 1, arguments); `argv[argc]` is NULL. `argc == 0`, with `argv[0]` NULL, is what
    `execve(path, {NULL}, env)` gives (CVE-2021-4034), so a program that reads `argv[0]` unchecked is not TRUE.
    This holds for `main(int, char **, ...)` whether or not the program names argv.
  * `argv[0]` ... `argv[ARGV_STRINGS - 1]` (those below argc) point to objects of their own: char arrays of any
    length n >= 1 whose last cell is 0, the other cells any value. A cell before the last may be 0 too, so the
    object may outlast its string: C leaves the extent of the array holding an argument string to the
    implementation (Linux's strings lie back to back). Every execution on exact-size strings is among these, so
    a TRUE covers them; and an execution that reads past a terminator agrees, up to that read, with one on the
    exact-size string, where the read is out of bounds. That one string's end may be where the next one starts
    is the layout question every pair of objects raises (`properties.UNMODELLED_LAYOUT`).
  * The elements `argv[i]` for `ARGV_STRINGS <= i < argc` are not modelled (each would need an object of its
    own, and objects are finitely many). Every access to the `argv` array at such an index is asserted against
    with tag `UNMODELLED_ARGV`: a TRUE shows no execution makes one, and a counterexample that does is UNKNOWN
    naming it (`jobs.undecided_verdict`), never FALSE.
The strings are `main`'s: the program may write them and `argv` itself (C11 allows both); they live for the whole
run and are not heap objects (`free` of one is invalid). The model's own arithmetic is unsigned, so it adds no
run-time checks of its own. Any other parameter of pointer type (`envp`) can be declared but not used (UNKNOWN
naming it); other integer parameters are any value. An argv that the program never names gets no objects.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import OFF, CPtr, is_char
from looprover.frontend.c.cursors import ARRAY_KINDS, TK, K, children
from looprover.frontend.c.memory import Obj, idx_const
from looprover.frontend.c.state import Frame, LoweringState
from looprover.program.cfa import Assign, Assume, Havoc
from looprover.program.expr import Binary, Compare, Expr, IntConst, IntType, Select, and_, cast, implies, or_

ARGV_STRINGS = 4     # argv[0] .. argv[3]: the program name and three arguments
ARGV_COUNT = "argv.len"   # the IR variable of argc + 1 as main was called (the compiled harness looks for it)


def argument_string_name(j: int) -> str:
    """The IR name of argv[j]'s object (its length: this + ".len")."""
    return f"argv[{j}]"


class MainArgsMixin(LoweringState):
    def main_params(self, main: ci.Cursor, fr: Frame) -> None:
        """Give `main`'s parameters their values at program start (module docstring)."""
        params = [p for p in children(main) if p.kind == K.PARM_DECL]
        argc = None
        for k, p in enumerate(params):
            t = p.type.get_canonical()
            if t.kind == TK.POINTER or t.kind in ARRAY_KINDS:
                if k == 1 and argc is not None and self._is_argv(p) and _refers_to(main, p):
                    self._argv(argc, p, fr)
                else:
                    self.poisoned[p.canonical] = f"main's pointer parameter {p.spelling or k + 1}"
                continue
            obj = self.local_obj(p, fr, "local")
            self.emit(Havoc(tuple(obj.vars.values()), self.where(p)))
            if k == 0 and t.kind == TK.INT and len(params) >= 2 and \
                    params[1].type.get_canonical().kind in (TK.POINTER, *ARRAY_KINDS):
                argc = obj.vars[()]
                self.emit(Assume(and_(Compare(">=", argc, IntConst(0, argc.type)),
                                      Compare("<", argc, IntConst(argc.type.max, argc.type))), self.where(p)))

    def _is_argv(self, p: ci.Cursor) -> bool:
        t = self.decl_ctype(p)
        return isinstance(t, CPtr) and isinstance(t.pointee, CPtr) and is_char(t.pointee.pointee)

    def _argv(self, argc: Expr, p: ci.Cursor, fr: Frame) -> None:
        self.loc = where = self.where(p)
        ptr_t: CPtr = self.decl_ctype(p)
        str_t = ptr_t.pointee
        strings = [self._argument_string(j, str_t.pointee) for j in range(ARGV_STRINGS)]
        n = self.new_var(ARGV_COUNT, self.IDX, "local", c_name="length of the argv array")
        count = self.new_var("argv.argc", self.IDX, "local", c_name="argc at the start")  # argc may be changed
        self.emit(Assign(count, cast(self.IDX, argc), where), Assign(n, self._plus(count, 1), where))
        arr = self.argv_array = self.sized_obj("argv array", str_t, n)
        objs, offs = arr.vars[()], arr.vars[(OFF,)]
        self.emit(Havoc((objs, offs), where))
        null = IntConst(0, self.OBJ)
        for j, s in enumerate(strings):
            at = idx_const(j, self.IDX)
            self.emit(Assume(implies(Compare("<", at, count),
                                     and_(Compare("==", Select(objs, at, self.OBJ), IntConst(s.id, self.OBJ)),
                                          Compare("==", Select(offs, at, self.IDX), idx_const(0, self.IDX)))),
                             where))
        self.emit(Assume(and_(Compare("==", Select(objs, count, self.OBJ), null),
                              Compare("==", Select(offs, count, self.IDX), idx_const(0, self.IDX))), where))
        self.unmodelled[arr.id] = lambda off: or_(Compare("<", off, idx_const(ARGV_STRINGS, self.IDX)),
                                                  Compare(">=", off, count))
        param = self.local_obj(p, fr, "local")
        self.emit(Assign(param.vars[()], IntConst(arr.id, self.OBJ), where),
                  Assign(param.vars[(OFF,)], idx_const(0, self.IDX), where))

    def _argument_string(self, j: int, char_t) -> Obj:
        """argv[j]'s object: n >= 1 chars, the last one 0."""
        name = argument_string_name(j)
        n = self.new_var(f"{name}.len", self.IDX, "local", c_name=f"length of the {name} object")
        self.emit(Havoc((n,), self.loc), Assume(Compare(">=", n, idx_const(1, self.IDX)), self.loc))
        obj = self.sized_obj(name, char_t, n)
        cells = obj.vars[()]
        last = self._plus(n, -1)
        self.emit(Havoc((cells,), self.loc),
                  Assume(Compare("==", Select(cells, last, cells.type.elem), IntConst(0, cells.type.elem)), self.loc))
        return obj

    def _plus(self, e: Expr, k: int) -> Expr:
        """e + k in the index type, computed unsigned: the model's arithmetic is no run-time check of the
        program's (its operands are in range)."""
        u = IntType(self.IDX.bits, False)
        return cast(self.IDX, Binary("+", cast(u, e), IntConst(u.wrap(k), u), u))


def _refers_to(main: ci.Cursor, p: ci.Cursor) -> bool:
    """Whether `main`'s body names its parameter `p`: an argv that is only declared gets no objects, which would
    give every program that declares it arrays (and engines choose their methods by whether there are any)."""
    can = p.canonical
    return any(c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.canonical == can
               for c in main.walk_preorder())
