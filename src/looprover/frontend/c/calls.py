"""Calls: SV-COMP built-ins modelled by name (`reach_error`, `__VERIFIER_nondet_*`, assume, assert,
abort/exit, `__builtin_expect`/`__builtin_unreachable`) and inlining of every other defined function (through
a pointer: `function_pointers.py`).

Why a module: inlining binds parameters (to the argument's value directly when the body never changes them),
opens a frame for the callee's locals, labels and return, and rejects recursion and variadic functions; that
bookkeeping is independent of how statements and expressions are lowered.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.ctype import OFF, CBool, CInt, CPtr, CVoid, is_char
from looprover.frontend.c.cursors import INCDEC_OPS, TK, K, base_decl, called_function, children
from looprover.frontend.c.known_functions import (
    ASSERT_FAILURES, ASSUME_FUNCTIONS, FORMAT_FUNCTIONS, INPUT_FUNCTIONS, NONDET_TYPES, OUTPUT_FUNCTIONS,
    TERMINATING_FUNCTIONS, nondet_suffix,
)
from looprover.frontend.c.byte_functions import BYTE_FUNCTIONS
from looprover.frontend.c.heap import ALLOCATORS
from looprover.frontend.c.libc_models import FILE_NAME as LIBC_FILE
from looprover.frontend.c.memory import Val, scalar
from looprover.frontend.c.state import Frame, LoweringState, source_position
from looprover.errors import UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Havoc, Refusal
from looprover.program.expr import FALSE
from looprover.properties import UNDEFINED_ASSERT, UNMODELLED_REFUSED

# the lists of sites that lowering appends to and the post-lowering analyses read (`CallMixin._back_to`)
_LOWERED_LISTS = ("memtrack_points", "allocations", "void_sites", "random_calls", "object_views", "refusals")


class CallMixin(LoweringState):
    """`call(c, want)` lowers a call expression."""

    def call(self, c: ci.Cursor, want: bool) -> Val:
        ks = children(c)
        ref = called_function(c)
        if ref is None:
            return self.indirect_call(c, want)
        name = ref.spelling
        args = ks[1:]
        self.loc = self.where(c)
        rt = self.ctype(c)
        if not self.reach_checks and name in ("reach_error", "__VERIFIER_assert") and ref.get_definition() is None:
            # not part of valid-memsafety (valid-memcleanup), and what such a call does is then unknown
            prop = "valid-memsafety" if self.memsafety else "valid-memcleanup"
            raise self.unsupported(f"call to undefined function '{name}' ({prop})", c)
        if name == "reach_error" and self.reach_checks:
            self.emit(Assert(FALSE, "unreach-call", self.loc))
            fdef = ref.get_definition()
            if fdef is not None:
                return self._inline(c, fdef, args, want)
            for a in args:
                self.discard(a)
            return Val(rt, {})
        suffix = nondet_suffix(name, ref.get_definition() is not None)
        if suffix is not None:
            for a in args:
                self.discard(a)
            if not isinstance(rt, (CInt, CBool)):
                raise self.unsupported(f"{name} returning {rt}", c)
            nt = rt
            if suffix in NONDET_TYPES:
                spec = NONDET_TYPES[suffix]
                if spec is None:
                    nt = CBool()
                else:
                    bits = self.types.ptr_bits if spec[0] == "long" else spec[0]
                    nt = CInt(bits, spec[1])
            v = self.new_var("nondet_" + suffix, self.types.ir_scalar(nt), "nondet", c_name=f"{name}()")
            self.emit(Havoc((v,), self.loc))
            return self.convert(scalar(nt, v), rt, c)
        if name in ASSUME_FUNCTIONS:
            if len(args) != 1:
                raise self.unsupported(f"{name} with {len(args)} arguments", c)
            cond = self.to_bool(self.rv(args[0]))
            if self.memtrack or self.memcleanup:
                # a false condition ends the run (assume_abort_if_not calls abort) or never lets it go on
                # (__VERIFIER_assume): what was lost before counts (`memtrack.py`)
                ok, stop = self.new_loc(), self.new_loc()
                self.branch(cond, ok, stop)
                self.start(stop)
                self.memtrack_point(run_ends=name == "assume_abort_if_not")
                self.block()
                self.start(ok)
            else:
                self.emit(Assume(cond, self.loc))
            return Val(rt, {})
        if name == "__VERIFIER_assert" and ref.get_definition() is None:
            if len(args) != 1:
                raise self.unsupported(f"{name} with {len(args)} arguments", c)
            self.emit(Assert(self.to_bool(self.rv(args[0])), "unreach-call", self.loc))
            return Val(rt, {})
        if name == "assert" and ref.get_definition() is None and len(args) == 1:
            # the program calls assert as a function of its own (undeclared, or declared without a body): under
            # `check` a check like any other; in verify what a failure does is unknown (`UNDEFINED_ASSERT`)
            cond = self.to_bool(self.rv(args[0]))
            self.emit(Assert(cond, "unreach-call" if self.assert_checks else UNDEFINED_ASSERT, self.loc))
            return Val(rt, {})
        if name in TERMINATING_FUNCTIONS:
            if self.assert_checks and name in ASSERT_FAILURES and not any(f.name == "reach_error"
                                                                            for f in self.frames):
                self.emit(Assert(FALSE, "unreach-call", self.loc))   # a failed assert (reach_error asserted it)
            for a in args:
                self.discard(a)
            self.memtrack_point(run_ends=True)      # nothing may have been lost (nor left, for memcleanup)
            self.jump(self.exit)
            return Val(rt, {}) if isinstance(rt, CVoid) else self.zero(rt)
        if name == "__builtin_expect":
            v = self.protect(self.rv(args[0]), args[1:])
            for a in args[1:]:
                self.discard(a)
            return self.convert(v, rt, c)
        if name in INPUT_FUNCTIONS and ref.get_definition() is None:
            return self.input_call(c, name, args, want)
        if name in OUTPUT_FUNCTIONS and ref.get_definition() is None:
            return self.output_call(c, name, args, want)
        if name in FORMAT_FUNCTIONS and ref.get_definition() is None:
            return self.format_call(c, name, args, want)
        if name in BYTE_FUNCTIONS and ref.get_definition() is None:
            return self.byte_function_call(c, name, args, want)
        if name in ALLOCATORS and ref.get_definition() is None:
            if not (isinstance(rt, CPtr) and (isinstance(rt.pointee, CVoid) or is_char(rt.pointee))):
                raise self.unsupported(f"{name} declared to return {rt}", c)
            return Val(rt, self.allocate_bytes(c, name, args).leaves)
        if name == "free" and ref.get_definition() is None:
            self.free_call(c, args)
            return Val(rt, {})
        if name == "__builtin_unreachable":
            self.emit(Assume(FALSE, self.loc))
            self.block()
            return Val(rt, {})
        fdef = ref.get_definition()
        if fdef is None:
            if not self.nondet_undefined or self.memsafety:
                raise self.unsupported(f"call to undefined function '{name}'", c)
            return self.undefined_call(c, name, args, rt)
        return self._inline(c, fdef, args, want)

    def undefined_call(self, c: ci.Cursor, name: str, args: list, rt) -> Val:
        """A call of a function we have neither a body nor a model for (`--undefined-functions nondet`): the
        arguments are evaluated, then every global, static and address-taken object (all that a callee can
        reach: by name, or through a pointer it is given or finds stored) takes any value, and so does the
        result. An over-approximation of every body the function could have that returns and does not free,
        so a TRUE stays sound; a FALSE rests on the function doing what the counterexample picks
        (`Program.assumptions`). A result we cannot havoc (a pointer, a struct) stays unsupported."""
        if not isinstance(rt, (CVoid, CInt, CBool)):
            raise self.unsupported(f"call to undefined function '{name}' returning {rt}", c)
        for a in args:
            self.discard(a)
        self.loc = self.where(c)
        for decl, defined, _ in list(self.global_defs.values()):
            if defined:             # globals get their objects when first used: the ones used later too
                self.global_obj(decl, c)
        reach = sorted((v for v in self.shared_vars() if v not in self.literal_vars), key=lambda v: v.name)
        pointers = [o.name for o in list(self.globals.values()) + self.known_objects()
                    if any(OFF in lf.path for lf in self.types.leaves(o.ctype))]
        if pointers:
            # the callee could store a pointer to storage of its own (a malloc), which no object models
            raise self.unsupported(f"call to undefined function '{name}' that can reach pointers "
                                   f"({', '.join(sorted(pointers)[:3])}): fresh storage is not modelled", c)
        if reach:
            self.emit(Havoc(tuple(reach), self.loc))
        where = f" at {self.loc}" if self.loc is not None and self.loc.line else ""
        note = f"undefined function '{name}'{where} returns any value and may write any global or address-taken object"
        if note not in self.assumptions:
            self.assumptions.append(note)
        if isinstance(rt, CVoid):
            return Val(rt, {})
        v = self.new_var("undefined_" + name, self.types.ir_scalar(rt), "temp", c_name=f"{name}()")
        self.emit(Havoc((v,), self.loc))
        return scalar(rt, v)

    def _library_model(self, fdef: ci.Cursor) -> bool:
        where = self.where(fdef)
        return where is not None and where.file.endswith(LIBC_FILE)

    def _params_written(self, fdef: ci.Cursor, body: ci.Cursor) -> set:
        """Parameters (canonical cursors) the function body assigns, increments or takes the address of."""
        key = fdef.canonical
        got = self.written_params_memo.get(key)
        if got is not None:
            return got
        out = set()
        stack = [body]
        while stack:
            c = stack.pop()
            k = c.kind
            target = None
            if k == K.COMPOUND_ASSIGNMENT_OPERATOR or (k == K.BINARY_OPERATOR and capi.binary_op(c) == "="):
                target = children(c)[0]
            elif k == K.UNARY_OPERATOR and capi.unary_op(c) in (INCDEC_OPS | {capi.UO_ADDR_OF}):
                target = children(c)[0]
            if target is not None:
                d = base_decl(target)
                if d is not None and d.kind == K.PARM_DECL:
                    out.add(d.canonical)
            stack.extend(children(c))
        self.written_params_memo[key] = out
        return out

    def _inline(self, c, fdef: ci.Cursor, args: list, want: bool) -> Val:
        params = self.callable_params(c, fdef, len(args))
        return self.inline_values(c, fdef, params, self.call_arguments(args), want)

    def call_arguments(self, args: list) -> list[Val]:
        """The arguments' values, evaluated here, before the call, whether or not the body reads them."""
        vals = []
        for i, a in enumerate(args):
            v = self.keep_operations(self.rv(a))
            vals.append(self.protect(v, args[i + 1:]))
        return vals

    def callable_params(self, c, fdef: ci.Cursor, nargs: int) -> list:
        """fdef's parameters, if a call with `nargs` arguments can be inlined."""
        name = fdef.spelling
        if fdef.canonical in self.call_stack:
            raise self.unsupported(f"recursion ('{name}')", c)
        if fdef.type.get_canonical().kind == TK.FUNCTIONPROTO and fdef.type.is_function_variadic():
            raise self.unsupported(f"variadic function '{name}'", c)
        params = list(fdef.get_arguments())   # not its children: `int (*pick(int k))(int)` has two PARM_DECLs
        if len(params) != nargs:
            raise self.unsupported(f"call of '{name}' with {nargs} arguments for {len(params)} parameters", c)
        return params

    def inline_values(self, c, fdef: ci.Cursor, params: list, vals: list[Val], want: bool) -> Val:
        """The call `c` of `fdef` (its `callable_params`) with its arguments' values, inlined here. Under `check`,
        a body with a construct the front-end refuses costs only the checks it can touch: the call becomes an
        assertion that no run makes it (`refused_call`), and the rest of the program is lowered as before."""
        if not self.assert_checks:
            return self._inline_values(c, fdef, params, vals, want)
        saved = self._lowering_point()
        try:
            return self._inline_values(c, fdef, params, vals, want)
        except UnsupportedError as exc:
            self._back_to(saved)
            return self.refused_call(c, fdef, exc, want)

    def _lowering_point(self) -> tuple:
        """What lowering a call adds to, to take a failed body's code back out (`_back_to`)."""
        return (len(self.bld.edges), self.cur, list(self.pending), self.loc, self.pinned, len(self.frames),
                len(self.call_stack), len(self.call_sites), list(self.switch_scopes),
                {k: len(getattr(self, k)) for k in _LOWERED_LISTS})

    def _back_to(self, saved: tuple) -> None:
        """Drop what lowering began after `saved` (`_lowering_point`): its edges -- with the checks in them, which
        must not be reported for code the program no longer has -- and the sites the post-lowering analyses
        would look at. The locations, variables and objects it made stay, unused."""
        (edges, self.cur, pending, self.loc, self.pinned, frames, stack, sites, scopes, lists) = saved
        del self.bld.edges[edges:]
        self.pending = pending
        del self.frames[frames:]
        del self.call_stack[stack:]
        del self.call_sites[sites:]
        self.switch_scopes = scopes
        for k, n in lists.items():
            del getattr(self, k)[n:]

    def refused_call(self, c, fdef: ci.Cursor, exc: UnsupportedError, want: bool) -> Val:
        """A call whose body has a construct the front-end refuses (`exc`): asserted not to be made (tag
        `properties.UNMODELLED_REFUSED`; a run that makes it leaves the model) and recorded with the code it runs
        (`cfa.Refusal`). The code after the call stays: no run of the model passes the failing assertion, but
        which checks a real run could reach from there is read off it (`model_exits.py`)."""
        self.loc = self.where(c)
        where = str(exc.where) if exc.where is not None else ""
        if fdef.canonical not in self.refused_code:    # the same for every call of it (debie1: 191 calls)
            self.refused_code[fdef.canonical] = self.code_of(fdef)
        self.refusals.append(Refusal(self.loc, exc.construct, where, self.refused_code[fdef.canonical]))
        self.emit(Assert(FALSE, UNMODELLED_REFUSED, self.loc))
        rt = self.type_of(fdef.result_type, fdef)
        return Val(rt, {}) if isinstance(rt, CVoid) or not want else self.zero(rt)

    def code_of(self, fdef: ci.Cursor) -> tuple[tuple[str, int, int], ...] | None:
        """The source extents of `fdef` and of every function it calls, directly or not (`cfa.Refusal`); None
        when a call goes through a pointer (any function whose address is taken could run)."""
        out, seen, todo = [], set(), [fdef]
        while todo:
            f = todo.pop()
            if f.canonical in seen:
                continue
            seen.add(f.canonical)
            try:
                file, first, _ = self.parsed.where(f.extent.start)
                _, last, _ = self.parsed.where(f.extent.end)
            except Exception:  # noqa: BLE001 - no place known: any code could be this
                return None
            if not first or not last:
                return None
            out.append((file, first, last))
            stack = [f]
            while stack:
                x = stack.pop()
                if x.kind == K.CALL_EXPR:
                    ref = called_function(x)
                    if ref is None:
                        return None
                    d = ref.get_definition()
                    if d is not None:
                        todo.append(d)
                stack.extend(children(x))
        return tuple(sorted(out))

    def _inline_values(self, c, fdef: ci.Cursor, params: list, vals: list[Val], want: bool) -> Val:
        name = fdef.spelling
        can = fdef.canonical
        rt = self.type_of(fdef.result_type, fdef)
        call_loc = self.loc
        ret = None if isinstance(rt, CVoid) else self.make_obj("ret", rt, "ret", f"{name}::")
        body = self.function_body(fdef)
        fr = Frame(name, f"{name}::", ret, self.new_loc(), top_decls=self.top_decls(body),
                   top_labels=self.top_labels(body))
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
                if not any(self.threatened(e, body_writes) for e in v.leaves.values()):
                    fr.bound[pc] = v
                    continue
            obj = self.local_obj(p, fr, "param")
            self.born(obj, p, fr)
            self.write(self.obj_lv(obj), v)
        self.frames.append(fr)
        self.call_stack.append(can)
        self.call_sites.append(source_position(c))
        pinned = self.pinned
        if pinned is None and (name == "__VERIFIER_assert" or self._library_model(fdef)):
            # SV-COMP's assertion: a violation is reported where it is called, not at the line in its body
            # (the same two lines in every task); so is one inside a C library function (`libc_models.py`)
            self.pinned = call_loc
        try:
            self.stmt(body)
        finally:
            self.frames.pop()
            self.call_stack.pop()
            self.call_sites.pop()
            self.pinned = pinned
        self.start(fr.ret_loc)
        self.loc = call_loc
        for flag in fr.born:   # its address-taken locals die with the activation (valid-memsafety)
            self.emit(Assign(flag, FALSE, call_loc))
        if ret is None or not want:
            return Val(rt, {})
        return self.read(self.obj_lv(ret))
