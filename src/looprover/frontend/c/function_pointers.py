"""Function pointers: a function used as a value, and a call through a pointer.

Why a case split is sound: a function pointer can only hold what the program stored in it, and the only values
the front-end lets it hold are NULL and the ids of functions the program uses as values (the pre-pass numbers
every such function: `StorageMixin.scan_address_taken`; conversions from integers or data pointers are refused).
So a call through a pointer of type T is, for each function of type T whose address is taken, "if the pointer
holds its id, inline it", and otherwise either NULL (undefined behaviour: a `valid-deref` violation under
memory safety, a path not followed otherwise) or a function of another type, reached through a cast: C11
6.3.2.3p8 leaves that call undefined and real code relies on it, so it is asserted against with tag
`unmodelled-call` (UNKNOWN if it can happen), never dropped. The assertion names the ids of those functions, so
where the pointer cannot hold any of them (`object_ids.narrowed`) it is true: no run leaves the model there.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import CFunc, CPtr, CVoid
from looprover.frontend.c.cursors import FUNCTION_KINDS, K, TK, children, strip_parens
from looprover.frontend.c.known_functions import ASSUME_FUNCTIONS, TERMINATING_FUNCTIONS, nondet_suffix
from looprover.frontend.c.memory import Val, pointer
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assert
from looprover.program.expr import FALSE, Compare, IntConst, not_, or_
from looprover.properties import UNMODELLED_CALL

# functions `CallMixin.call` models by name even when the program defines them
MODELLED_BY_NAME = ASSUME_FUNCTIONS | TERMINATING_FUNCTIONS | {"__VERIFIER_assert", "__builtin_expect",
                                                               "__builtin_unreachable"}


def _signature(ft) -> str:
    """A function type as calls through pointers match it: `noreturn` is not part of the type a pointer to the
    function has."""
    return ft.spelling.replace("__attribute__((noreturn))", "").strip()


class FunctionPointerMixin(LoweringState):
    """`function_value(c)`: the pointer a function designator decays to; `indirect_call(c, want)`."""

    def function_value(self, c: ci.Cursor) -> Val:
        """The value of an expression of function type (`f`, `*fp`, `(f)`) as a pointer to it."""
        c = strip_parens(c)
        t = CPtr(CFunc())
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind == K.FUNCTION_DECL:
            fid = self.function_ids.get(c.referenced.canonical)
            if fid is None:   # the pre-pass did not see it: a call through a pointer would miss it
                raise self.unsupported(f"function '{c.spelling}' used as a value where the pre-pass did not look", c)
            return pointer(t, IntConst(fid, self.OBJ), IntConst(0, self.IDX))
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind == K.PARM_DECL:
            return Val(t, self.rv(c).leaves)   # a parameter declared as a function is a pointer (C11 6.7.6.3p8)
        if c.kind == K.UNARY_OPERATOR and len(children(c)) == 1:
            ch = children(c)[0]
            p = self.ctype(ch)
            if isinstance(p, CPtr) and isinstance(p.pointee, CFunc):   # `*fp` designates what fp points to
                return Val(t, self.rv(ch).leaves)
        if c.kind == K.UNEXPOSED_EXPR and len(children(c)) == 1:
            return self.function_value(children(c)[0])
        raise self.unsupported("expression of function type", c)

    def indirect_call(self, c: ci.Cursor, want: bool) -> Val:
        ks = children(c)
        callee, args = ks[0], ks[1:]
        self.loc = self.where(c)
        loc = self.loc
        rt = self.ctype(c)
        ft = callee.type.get_canonical()
        if ft.kind == TK.POINTER:
            ft = ft.get_pointee().get_canonical()
        if ft.kind not in FUNCTION_KINDS:   # (a parameter declared as a function has the function's type here)
            raise self.unsupported("call of an expression that is not a function pointer", c)
        signature = _signature(ft)
        fp = self.protect(self.rv(callee), args)
        vals = self.call_arguments(args)
        res = self.make_obj("tmp", rt, "temp") if want and not isinstance(rt, CVoid) else None
        join = self.new_loc()
        obj = fp.leaves[()]
        for can, fid in self.function_ids.items():
            if _signature(can.type.get_canonical()) != signature:
                continue
            hit, miss = self.new_loc(), self.new_loc()
            self.loc = loc
            self.branch(Compare("==", obj, IntConst(fid, self.OBJ)), hit, miss)
            self.start(hit)
            d = can.get_definition()
            name = can.spelling
            if name == "reach_error" and self.reach_checks:
                self.emit(Assert(FALSE, "unreach-call", loc))   # as a direct call of it (`CallMixin.call`)
            if d is None or d.canonical in self.call_stack or name in MODELLED_BY_NAME or \
                    nondet_suffix(name, True) is not None:
                # no body, recursion, or a function whose calls are modelled by its name, not by its body
                self.emit(Assert(FALSE, UNMODELLED_CALL, loc))
                self.block()
            else:
                v = self.inline_values(c, d, self.callable_params(c, d, len(vals)), vals, res is not None)
                if res is not None:
                    self.write(self.obj_lv(res), self.convert(v, rt, c))
                self.jump(join)
            self.start(miss)
        self.loc = loc
        # what is left: NULL, checked under valid-memsafety; a function of another type, whose body is not
        # inlined here (the model does not follow the call); anything else is no function, undefined behaviour
        # (C11 6.5.2.2p9), not followed. The ids of the others the pointer cannot hold drop out after lowering
        # (`object_ids.narrowed`), which leaves the assertion true where the pointer only holds functions of
        # its type.
        others = [fid for can, fid in self.function_ids.items() if _signature(can.type.get_canonical()) != signature]
        other = or_(*(Compare("==", obj, IntConst(fid, self.OBJ)) for fid in others))
        if self.memsafety:
            self.emit(Assert(not_(Compare("==", obj, IntConst(0, self.OBJ))), "valid-deref", loc))
        if other != FALSE:
            self.emit(Assert(not_(other), UNMODELLED_CALL, loc))
        self.block()
        self.start(join)
        if res is None:
            return Val(rt, {})
        return self.read(self.obj_lv(res))
