"""What a program reads from outside (when it gives no body for these functions): `getchar`, `getc`, `fgetc`,
`fgets`, `rand`, `srand` and `time`.

Each returns any value C11 lets it return, so a TRUE holds for every input and a FALSE's run is one some input
gives: `getchar`/`getc`/`fgetc` a character as unsigned char, or EOF (-1); `rand` a value in [0, RAND_MAX]
(glibc's 2^31-1; C fixes no sequence), independent of each other; `time` any time_t, also stored in `*t` when t
is not NULL; `srand` nothing. Because C makes a seed repeat its sequence, a program in which an `srand` may run
after another or after a `rand` is refused (`reseeded`). `fgets(s, n, f)` reads k < n characters (none of them a
newline but the last), writes them to s[0..k-1], and then either succeeds, writing s[k] = 0 and returning s (which needs
k > 0; with n == 1 there is nothing to read and it always succeeds, as glibc and musl do), or fails (end of file,
or a read error after k characters, where C leaves the array indeterminate: the k characters stay) and returns
NULL. Its writes are checked like the program's, so an
`fgets` into a buffer shorter than n overflows at the call.

The values returned are inputs of the program, as `__VERIFIER_nondet_*`'s are: a violation witness pins each at
its call (a `function_return` waypoint). The characters fgets stores are the model's choice, which no witness
can name: a violation witness of a run that reads some is not confirmed by our validator, so it is not written.
The compiled harness feeds only `__VERIFIER_nondet_*` calls, so it is not run for a counterexample that reads
any of these values (`witness/harness.py`). The stream argument is
not evaluated for a value (`FILE` is outside the model).
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.frontend.c.ctype import CInt, CPtr, is_char
from looprover.frontend.c.known_functions import INPUT_FUNCTIONS
from looprover.frontend.c.memory import Val, is_zero, pointer, scalar
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assume, Havoc, reached_from
from looprover.program.expr import (
    BOOL, Binary, Compare, IntConst, and_, cast, ite, not_, or_,
)

RAND_MAX = 2**31 - 1


class InputFunctionsMixin(LoweringState):
    """`input_call` lowers a call of `INPUT_FUNCTIONS`."""

    def input_call(self, c: ci.Cursor, name: str, args: list, want: bool) -> Val:
        self.loc = self.where(c)
        rt = self.ctype(c)
        if name == "fgets":
            return self._fgets(c, args)
        stream = 0 if name in ("getc", "fgetc") else None
        vals = []
        for k, a in enumerate(args):
            if k == stream:
                self.discard(a)
            else:
                vals.append(self.protect(self.keep_operations(self.rv(a)), args[k + 1:]))
        if name in ("srand", "rand"):
            self.random_calls.append((name, self.here(), self.loc))
        if name == "srand":
            return Val(rt, {})
        if not isinstance(rt, CInt):
            raise self.unsupported(f"{name} returning {rt}", c)
        t = self.types.ir_scalar(rt)
        r = self.read_value(name, t, returned=True)
        if name != "time":      # rand: [0, RAND_MAX]; getchar, getc, fgetc: an unsigned char or EOF
            lo, hi = (0, RAND_MAX) if name == "rand" else (-1, 255)
            self.emit(Assume(and_(Compare(">=", r, IntConst(lo, t)), Compare("<=", r, IntConst(hi, t))), self.loc))
        else:
            where = vals[0] if vals else None
            if where is None or not isinstance(where.ctype, CPtr):
                raise self.unsupported("time without a time_t * argument", c)
            if not is_zero(where.obj):      # time(t) with t not NULL stores the time in *t too
                done, store = self.new_loc(), self.new_loc()
                self.branch(Compare("!=", where.obj, IntConst(0, self.OBJ)), store, done)
                self.start(store)
                self.write(self.deref(where, c), scalar(where.ctype.pointee, r))
                self.start(done)
        return scalar(rt, r)

    def read_value(self, name: str, t, returned: bool = False):
        """A fresh value read from outside by a call of `name`. The value a call returns is an input of the
        program (kind `nondet`, like `__VERIFIER_nondet_*`'s): a violation witness pins it at the call; what
        fgets stores is not (no witness can name it)."""
        r = self.new_var(f"{name}.read", t, "nondet" if returned else "temp", c_name=f"{name}()")
        self.emit(Havoc((r,), self.loc))
        return r

    def _fgets(self, c, args: list) -> Val:
        """fgets(s, n, stream) (module docstring)."""
        if len(args) != 3:
            raise self.unsupported(f"fgets with {len(args)} arguments", c)
        s = self.protect(self.rv(args[0]), args[1:])
        n = self.rv(args[1])
        self.discard(args[2])
        if not (isinstance(s.ctype, CPtr) and is_char(s.ctype.pointee)) or not isinstance(n.ctype, CInt):
            raise self.unsupported("fgets with arguments of other types than (char *, int, FILE *)", c)
        idx = self.IDX
        n_i = self.snap(cast(idx, n.e))
        s = self.snapped(s)
        k = self.read_value("fgets", idx)
        zero = IntConst(0, idx)
        self.emit(Assume(and_(Compare(">=", k, zero), or_(Compare("<", k, n_i), Compare("==", k, zero))), self.loc))
        ch = s.ctype.pointee
        ct = self.types.ir_scalar(ch)

        def store(i):
            v = self.read_value("fgets", ct)
            last = Compare("==", i, Binary("-", k, IntConst(1, idx), idx))
            self.emit(Assume(or_(Compare("!=", v, IntConst(10, ct)), last), self.loc))
            self.write(self.deref(self.ptr_add(s, i, +1), c), scalar(ch, v))
        self.counted_loop("fgets", idx, [lambda i: Compare("<", i, k)], store)
        ok = self.read_value("fgets", BOOL)
        one = Compare("==", n_i, IntConst(1, idx))     # n == 1: nothing to read, s becomes "" (glibc, musl)
        self.emit(Assume(and_(or_(not_(ok), Compare(">", k, zero), one), or_(ok, not_(one))), self.loc))
        done, terminate = self.new_loc(), self.new_loc()
        self.branch(ok, terminate, done)
        self.start(terminate)
        self.write(self.deref(self.ptr_add(s, k, +1), c), scalar(ch, IntConst(0, ct)))
        self.start(done)
        return pointer(s.ctype, ite(ok, s.obj, IntConst(0, self.OBJ)), ite(ok, s.off, zero))


def reseeded(edges, calls: list[tuple[str, int, object]]):
    """Where an `srand` is that may run after another `srand` or a `rand` (or again): C11 7.22.2.2 makes the
    seed repeat its sequence, which the independent values of `rand` do not model; None if there is none."""
    for i, (_, loc, _) in enumerate(calls):
        later = reached_from(edges, loc)
        # a call recorded later at the same location is later on the same edge (lowering order)
        again = next((src for j, (name, at, src) in enumerate(calls)
                      if name == "srand" and (at in later or (at == loc and j > i))), False)
        if again is not False:
            return again
    return None


def reads_input(name: str) -> bool:
    """Is an IR variable of this name a value one of these functions read (`read_value`)?"""
    return name.split(".", 1)[0] in INPUT_FUNCTIONS and ".read" in name
