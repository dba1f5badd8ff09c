"""`<stdio.h>`'s formatting into memory (when the program gives no body): `sprintf` and `snprintf`.

Why exact rather than nondet text: a FALSE is replayed on the model and confirmed by running the compiled program
against the real library, so the characters written must be those C11 7.21.6.1 (and glibc) write; a text of
nondet characters or length would let a FALSE rest on an output the call cannot produce. So the model formats
exactly what it supports and refuses the rest, naming the call:
  * supported: ordinary characters, `%%`, `%c`, `%s` (precision a number or `*`), and the integer conversions
    `%d %i %u %x %X %o` with the length modifiers `hh h l ll j z t` and a precision (the minimum of digits);
    each with the flags `-` and (integers) `0`, `+` and space, and a width that is a number;
  * refused: floating point, `%p` (its text is the implementation's), `%n` (it writes), `%m`, the flags `#` and
    `'`, a width `*`, positional arguments, an argument whose type does not match its conversion, and a format
    that is not a string literal.

Writes go through the program's own checks (valid-memsafety: a sprintf into a buffer too small overflows at the
call). sprintf writes every character and then the terminator; snprintf(s, n, ...) writes the characters of
index < n - 1 and, when n > 0, the terminator at min(count, n - 1) (C11 7.21.6.5). Both return the number of
characters of the whole output (a count over INT_MAX: -1, glibc's EOVERFLOW). A `%s` argument is
read up to its terminator (at most its precision) by a loop whose reads are checked; one that points into the
object the call writes is copying between overlapping objects, undefined (7.21.6.6p2), and the model does not
follow it: a run that does is UNKNOWN (`properties.UNMODELLED_OVERLAP`).

An integer's field is written cell by cell at constant distances from its start (a cell at a symbolic
distance costs the solver seconds when the program reads it back), each cell's character chosen by where the
spaces, sign, zeros and digits end; digit k from the last is `(m / b^k) % b` of the magnitude m, computed in a
signed type twice as wide, where nothing overflows. A width is unrolled too, so one over `_MAX_WIDTH` is refused.
"""
from __future__ import annotations

import re

import clang.cindex as ci

from looprover.frontend.c.ctype import CInt, CPtr, is_char
from looprover.frontend.c.cursors import K, strip_implicit
from looprover.frontend.c.known_functions import FORMAT_FUNCTIONS
from looprover.frontend.c.memory import Val, scalar
from looprover.frontend.c.output_functions import format_text
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assert, Assign
from looprover.program.expr import (
    TRUE, Binary, Compare, Expr, IntConst, IntType, and_, cast, ite, or_,
)
from looprover.properties import UNMODELLED_OVERLAP


_SPEC = re.compile(r"%([-+ #0'I]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L|q)?(.?)", re.S)
_INTS = {"d": (10, True), "i": (10, True), "u": (10, False), "x": (16, False), "X": (16, False), "o": (8, False)}
_U8 = IntType(8, False)
_UNROLL = 32        # a padding of a constant count up to this is written cell by cell, a longer one by a loop
_MAX_WIDTH = 256


class FormatFunctionsMixin(LoweringState):
    """`format_call` lowers a call of `FORMAT_FUNCTIONS`."""

    def format_call(self, c: ci.Cursor, name: str, args: list, want: bool) -> Val:
        fmt_at = FORMAT_FUNCTIONS[name]
        self.loc = self.where(c)
        rt = self.ctype(c)
        if len(args) <= fmt_at:
            raise self.unsupported(f"{name} with {len(args)} arguments", c)
        if strip_implicit(args[0]).kind == K.STRING_LITERAL:
            raise self.unsupported(f"{name} into a string literal", c)
        lit = strip_implicit(args[fmt_at])
        data = self.literal_bytes(lit) if lit.kind == K.STRING_LITERAL else None
        if data is None:
            raise self.unsupported(f"{name} with a format that is not a string literal", c)
        pieces = self._pieces(c, name, format_text(data), len(args) - fmt_at - 1)
        # the arguments, in order, each kept against what the later ones do; a literal's bytes stand for it
        vals: list = []
        for k, a in enumerate(args):
            if k == fmt_at:
                vals.append(None)
            elif strip_implicit(a).kind == K.STRING_LITERAL:
                vals.append(self.literal_bytes(strip_implicit(a)))
            else:
                vals.append(self.snapped(self.protect(self.keep_operations(self.rv(a)), args[k + 1:])))
        dst = vals[0]
        if not (isinstance(dst.ctype, CPtr) and is_char(dst.ctype.pointee)):
            raise self.unsupported(f"{name} into a {dst.ctype} argument", c)
        u = IntType(self.IDX.bits, False)
        cap = None
        if name == "snprintf":
            n = vals[1]
            if not isinstance(n, Val) or not isinstance(n.ctype, CInt):
                raise self.unsupported(f"{name} with a size that is not an integer", c)
            cap = cast(u, n.e)
        out = _Output(self, c, name, dst, cap, u)
        k = fmt_at + 1
        for piece in pieces:
            if isinstance(piece, bytes):
                out.text(piece)
                continue
            flags, width, prec, length, conv = piece
            if conv == "%":
                out.text(b"%")
                continue
            star = prec == "*"
            arg = vals[k + star] if k + star < len(vals) else None
            prec_val = vals[k] if star else None
            k += 1 + star
            if conv == "c":
                v = self._integer_arg(c, name, arg, "", conv)
                out.field(flags, width, IntConst(1, u), lambda at, v=v: out.put(at, cast(out.ct, cast(_U8, v))))
            elif conv == "s":
                self._string(c, name, out, arg, flags, width, prec, prec_val)
            else:
                self._integer(c, name, out, self._integer_arg(c, name, arg, length, conv), flags, width, prec, conv)
        out.finish()
        if not want:
            return Val(rt, {})
        t = self.types.ir_scalar(rt)
        r = ite(Compare("<=", out.pos, IntConst(t.max, u)), cast(t, out.pos), IntConst(-1, t))
        return scalar(rt, self.snap(r))

    def _pieces(self, c, name: str, fmt: str, nargs: int) -> list:
        """The format as ordinary text (bytes) and conversions (flags, width, precision, length, conversion),
        refusing what the model does not follow (module docstring)."""
        out: list = []
        at = used = 0
        for m in _SPEC.finditer(fmt):
            if m.start() > at:
                out.append(fmt[at:m.start()].encode("latin-1"))
            at = m.end()
            flags, width, prec, length, conv = m.groups()
            spec = m.group(0)
            if not conv:
                raise self.unsupported(f"{name} with a format ending in {spec!r}", c)
            if conv == "%" and spec == "%%":
                out.append((flags, None, None, "", conv))
                continue
            if width is not None and width != "*" and int(width) > _MAX_WIDTH:
                raise self.unsupported(f"{name} with {spec} (a width over {_MAX_WIDTH})", c)
            if width == "*" or set(flags) & set("#'I") or length in ("L", "q"):
                raise self.unsupported(f"{name} with {spec} (a width *, the flags # ' I, or long double)", c)
            if conv in "sc" and (set(flags) & set("0+ ") or length):
                raise self.unsupported(f"{name} with {spec}", c)
            if conv == "c" and prec is not None:
                raise self.unsupported(f"{name} with {spec}", c)
            if conv in "uxXo" and set(flags) & set("+ "):
                raise self.unsupported(f"{name} with {spec} (a sign flag on an unsigned conversion)", c)
            if conv in _INTS and prec == "*":
                raise self.unsupported(f"{name} with {spec} (an integer precision *)", c)
            if conv in _INTS and prec and int(prec) > _MAX_WIDTH:
                raise self.unsupported(f"{name} with {spec} (a precision over {_MAX_WIDTH})", c)
            if conv not in _INTS and conv not in "sc":
                raise self.unsupported(f"{name} with %{conv} (only %c, %s, %d, %i, %u, %x, %X and %o are "
                                       f"formatted by the model)", c)
            used += 1 + (prec == "*")
            out.append((flags, int(width) if width else 0, prec, length or "", conv))
        if at < len(fmt):
            out.append(fmt[at:].encode("latin-1"))
        if used > nargs:
            raise self.unsupported(f"{name} with more conversions than arguments", c)
        return out

    def _integer_arg(self, c, name: str, arg, length: str, conv: str) -> Expr:
        """The argument of an integer conversion (or %c) as the type the conversion reads; an argument of
        another size (after the default promotions) is refused: C leaves that undefined."""
        if not isinstance(arg, Val) or not isinstance(arg.ctype, CInt):
            raise self.unsupported(f"{name} with %{length}{conv} of an argument that is not an integer", c)
        long_bits = self.IDX.bits
        bits = {"": 32, "hh": 32, "h": 32, "l": long_bits, "ll": 64, "j": 64, "z": long_bits, "t": long_bits}[length]
        if arg.ctype.bits != bits:
            raise self.unsupported(f"{name} with %{length}{conv} of a {arg.ctype} argument", c)
        read = {"hh": 8, "h": 16}.get(length, bits)
        return cast(IntType(read, conv in "di"), arg.e)

    def _string(self, c, name: str, out: "_Output", arg, flags: str, width: int, prec, prec_val) -> None:
        """%s: the argument's characters up to its terminator, at most the precision's (a negative `*` one
        is none), padded to the width."""
        u = out.u
        if isinstance(arg, list):         # a string literal: its bytes up to its first NUL
            text = bytes(arg[:arg.index(0)] if 0 in arg else arg)
            if prec == "*":
                raise self.unsupported(f"{name} with %.*s of a string literal", c)
            if prec is not None:
                text = text[:int(prec or 0)]
            out.field(flags, width, IntConst(len(text), u), lambda at: out.text(text, at))
            return
        if not (isinstance(arg, Val) and isinstance(arg.ctype, CPtr) and isinstance(arg.ctype.pointee, CInt)
                and is_char(arg.ctype.pointee)):
            raise self.unsupported(f"{name} with %s of a {arg.ctype if isinstance(arg, Val) else 'missing'} "
                                   f"argument", c)
        self.emit(Assert(or_(Compare("==", arg.obj, IntConst(0, arg.obj.type)), Compare("!=", arg.obj, out.dst.obj)),
                         UNMODELLED_OVERLAP, self.loc))
        tests = []
        if prec == "*":
            if not (isinstance(prec_val, Val) and isinstance(prec_val.ctype, CInt)):
                raise self.unsupported(f"{name} with %.*s whose precision is not an int", c)
            p = self.snap(cast(self.IDX, prec_val.e))
            tests.append(lambda i: or_(Compare("<", p, IntConst(0, self.IDX)), Compare("<", cast(self.IDX, i), p)))
        elif prec is not None:
            tests.append(lambda i: Compare("<", i, IntConst(int(prec or 0), u)))
        nul = IntConst(0, self.types.ir_scalar(arg.ctype.pointee))

        def char(i):
            return self.read(self.deref(self.ptr_add(arg, cast(self.IDX, i), +1), c)).e

        tests.append(lambda i: Compare("!=", char(i), nul))
        if width and "-" not in flags:      # the length first, for the spaces before the characters
            n = self.snap(self.counted_loop(name, u, tests, lambda i: None))
            out.field(flags, width, n, lambda at: self.counted_loop(
                name, u, [lambda i: Compare("<", i, n)], lambda i: out.put(Binary("+", at, i, u), char(i))))
            return
        start = out.pos
        n = self.snap(self.counted_loop(name, u, tests, lambda i: out.put(Binary("+", start, i, u), char(i))))
        out.advance(n)
        if width:
            spaces = self.snap(ite(Compare("<", n, IntConst(width, u)), Binary("-", IntConst(width, u), n, u),
                                   IntConst(0, u)))
            out.fill(out.pos, spaces, ord(" "), width)
            out.advance(spaces)

    def _integer(self, c, name: str, out: "_Output", v: Expr, flags: str, width: int, prec, conv: str) -> None:
        """%d %i %u %x %X %o: [spaces][sign][zeros][digits][spaces]: zeros up to the precision (the minimum
        of digits; precision 0 writes no digit for 0), and up to the width instead of leading spaces with the
        flag 0 (ignored with a precision or `-`); cell by cell (module docstring)."""
        base, signed = _INTS[conv]
        u, ct = out.u, out.ct
        t = v.type
        m = IntType(2 * t.bits if t.bits > 32 else 64, True)     # the magnitude's type: wide, signed, no wrap
        mv = cast(m, v)
        if signed:
            neg = Compare("<", v, IntConst(0, t))
            mag = self.snap(ite(neg, Binary("-", IntConst(0, m), mv, m), mv))
            sign = self.snap(ite(neg, IntConst(1, u), IntConst(1 if set(flags) & set("+ ") else 0, u)))
            sign_char = ite(neg, IntConst(ord("-"), ct), IntConst(ord("+") if "+" in flags else ord(" "), ct))
        else:
            mag = self.snap(mv)
            sign, sign_char = IntConst(0, u), IntConst(0, ct)
        most = len(_digits(t.max, base))
        nd = IntConst(1, u)                 # the digits of the magnitude
        for k in range(1, most):
            nd = Binary("+", nd, ite(Compare(">=", mag, IntConst(base ** k, m)), IntConst(1, u), IntConst(0, u)), u)
        least = 1 if prec is None else int(prec or 0)
        if least == 0:
            nd = ite(Compare("==", mag, IntConst(0, m)), IntConst(0, u), nd)
        nd = self.snap(nd)
        digits = ite(Compare("<", nd, IntConst(least, u)), IntConst(least, u), nd)
        body = self.snap(Binary("+", sign, digits, u))
        pad = self.snap(ite(Compare("<", body, IntConst(width, u)), Binary("-", IntConst(width, u), body, u),
                            IntConst(0, u)))
        zero_pad = "0" in flags and "-" not in flags and prec is None
        lead = pad if not zero_pad and "-" not in flags else IntConst(0, u)
        zeros = Binary("-", digits, nd, u)
        if zero_pad:
            zeros = Binary("+", zeros, pad, u)
        # where the sign, the zeros and the digits end, counted from the field's start
        ends = [self.snap(e) for e in (lead, Binary("+", lead, sign, u))]
        ends.append(self.snap(Binary("+", ends[1], zeros, u)))
        ends.append(self.snap(Binary("+", ends[2], nd, u)))
        chars = []
        for k in range(most):               # digit k, counted from the last: (mag / b^k) % b
            d = Binary("%", Binary("/", mag, IntConst(base ** k, m), m), IntConst(base, m), m)
            ch = Binary("+", d, IntConst(ord("0"), m), m)
            if base == 16:
                a = ord("a") if conv == "x" else ord("A")
                ch = ite(Compare("<", d, IntConst(10, m)), ch, Binary("+", d, IntConst(a - 10, m), m))
            chars.append(self.snap(cast(ct, ch)))
        size = self.snap(Binary("+", body, pad, u))
        space, zero = IntConst(ord(" "), ct), IntConst(ord("0"), ct)
        for j in range(max(width, 1 + max(most, least))):
            at = IntConst(j, u)
            digit = chars[0]
            for k in range(1, most):        # the digit j is: number k from the last, k = ends[3] - 1 - j
                digit = ite(Compare("==", Binary("+", at, IntConst(k + 1, u), u), ends[3]), chars[k], digit)
            ch = ite(Compare("<", at, ends[0]), space, ite(Compare("<", at, ends[1]), sign_char,
                     ite(Compare("<", at, ends[2]), zero, ite(Compare("<", at, ends[3]), digit, space))))
            out.put(Binary("+", out.pos, at, u) if j else out.pos, ch, Compare("<", at, size))
        out.advance(size)


class _Output:
    """Where the formatted text goes: the destination, the limit (snprintf's n, None for sprintf) and the
    position (the count of characters so far, written or not; unsigned, so that no position is an overflow)."""

    def __init__(self, low: FormatFunctionsMixin, c, name: str, dst: Val, cap: Expr | None, u: IntType):
        self.low, self.c, self.name, self.dst, self.cap, self.u = low, c, name, dst, cap, u
        self.ct = low.types.ir_scalar(dst.ctype.pointee)
        self.pos = low.new_var(f"{name}.count", u, "temp")
        low.emit(Assign(self.pos, IntConst(0, u), low.loc))

    def put(self, at: Expr, ch: Expr, cond: Expr = TRUE) -> None:
        """dst[at] = ch when `cond` holds and the limit lets the call write at `at`."""
        if self.cap is not None:
            cond = and_(cond, Compare("<", Binary("+", at, IntConst(1, self.u), self.u), self.cap))
        self._write(at, ch, cond)

    def _write(self, at: Expr, ch: Expr, cond: Expr) -> None:
        low = self.low
        if cond != TRUE:
            yes, done = low.new_loc(), low.new_loc()
            low.branch(cond, yes, done)
            low.start(yes)
        low.write(low.deref(low.ptr_add(self.dst, cast(low.IDX, at), +1), self.c), scalar(self.dst.ctype.pointee, ch))
        if cond != TRUE:
            low.start(done)

    def text(self, data: bytes, at: Expr | None = None) -> None:
        """Constant characters at `at` (by default at the position, which they then advance)."""
        start = self.pos if at is None else at
        for j, b in enumerate(data):
            self.put(Binary("+", start, IntConst(j, self.u), self.u) if j else start, IntConst(self.ct.wrap(b), self.ct))
        if at is None:
            self.advance(IntConst(len(data), self.u))

    def fill(self, start: Expr, count: Expr, ch: int, most: int) -> None:
        """Character `ch` at start .. start + count - 1, where count is at most `most`."""
        u, c = self.u, IntConst(self.ct.wrap(ch), self.ct)
        if isinstance(count, IntConst) or most <= _UNROLL:
            for j in range(count.value if isinstance(count, IntConst) else most):
                self.put(Binary("+", start, IntConst(j, u), u), c,
                         TRUE if isinstance(count, IntConst) else Compare("<", IntConst(j, u), count))
            return
        self.low.counted_loop(self.name, u, [lambda i: Compare("<", i, count)],
                              lambda i: self.put(Binary("+", start, i, u), c))

    def field(self, flags: str, width: int, length: Expr, write) -> None:
        """A field of `length` characters that `write(at)` writes, padded with spaces to `width`: before it, or
        after it with the flag `-`; the position advances past it."""
        u = self.u
        spaces = IntConst(0, u) if not width else self.low.snap(
            ite(Compare("<", length, IntConst(width, u)), Binary("-", IntConst(width, u), length, u), IntConst(0, u)))
        if "-" not in flags:
            self.fill(self.pos, spaces, ord(" "), width)
            self.advance(spaces)
        write(self.pos)
        self.advance(length)
        if "-" in flags:
            self.fill(self.pos, spaces, ord(" "), width)
            self.advance(spaces)

    def advance(self, n: Expr) -> None:
        if not (isinstance(n, IntConst) and n.value == 0):
            self.low.emit(Assign(self.pos, Binary("+", self.pos, n, self.u), self.low.loc))

    def finish(self) -> None:
        """The terminator: at the position (sprintf), or at min(position, n - 1) when n > 0 (snprintf)."""
        u, nul = self.u, IntConst(0, self.ct)
        if self.cap is None:
            self._write(self.pos, nul, TRUE)
            return
        last = Binary("-", self.cap, IntConst(1, u), u)
        self._write(ite(Compare("<", self.pos, last), self.pos, last), nul, Compare(">", self.cap, IntConst(0, u)))


def _digits(value: int, base: int) -> str:
    """The digits of a non-negative value in base 8, 10 or 16."""
    return {8: "%o", 10: "%d", 16: "%x"}[base] % value
