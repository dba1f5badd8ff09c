"""`<stdio.h>`'s output functions (when the program gives no body for them): `printf`, `fprintf`, `puts`, `fputs`,
`putchar`, `putc`, `fputc` and `fflush`.

What the model keeps: the stream is outside the program's memory, so a call writes nothing the program can read
back. It evaluates its arguments, reads what the function reads, and returns what C11 7.21 lets it return, so
that both a TRUE and a FALSE stand: on success `putchar`/`putc`/`fputc` the character written (as unsigned char),
`puts`/`fputs` any non-negative value, `fflush` 0, `printf`/`fprintf` the number of characters written, and on an
output error (which the stream decides) EOF (-1), or any negative value for printf. printf's count is modelled
only where the format fixes it (a string literal without conversions but `%%` and `%c`); a program that uses
the count of another format is refused. Under valid-memsafety what it reads is
checked: every `%s` argument and the strings of `puts`/`fputs` are read up to their terminator (at most the
precision's characters for `%.Ns` and `%.*s`) by a loop whose accesses are checked like the program's own; a
format that is not a string literal is read the same way. Under other properties those reads are not followed (a
run through an unterminated string goes on: undefined behaviour followed, never a run cut off). A string literal
argument is read without a loop (it is terminated) and needs no object (`storage.scan_address_taken`), so a
program that prints gets no arrays for it.

A format is what precedes its first NUL. Refused, naming the call: `%n` (it writes), positional arguments
(`%1$d`), a conversion C does not define, a format with more conversions than arguments, a format that is not a
string literal followed by pointer arguments (a `%n` in it would write through one), and under valid-memsafety
a `%s` whose argument is not a char pointer, and wide strings (`%ls`, `%S`).

Why built here rather than as C bodies (`libc_models.py`): printf is variadic, and the front-end inlines no
variadic function.
"""
from __future__ import annotations

import re

import clang.cindex as ci

from looprover.frontend.c.ctype import CInt, CPtr, is_char
from looprover.frontend.c.cursors import K, strip_implicit
from looprover.frontend.c.known_functions import OUTPUT_FUNCTIONS
from looprover.frontend.c.memory import Val, scalar
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assume, Havoc
from looprover.program.expr import Compare, Expr, IntConst, IntType, cast, or_

# %[flags][width][.precision][length]conversion (C11 7.21.6.1, with glibc's `I` flag and `%m`, `%C`, `%S`)
_CONVERSION = re.compile(r"%([-+ #0'I]*)(\*|\d+\$?)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L|q)?(.?)", re.S)
_TAKES_ARGUMENT = set("diouxXcspaAeEfFgGnCS")      # `%%` and glibc's `%m` (errno's message) take none


def format_text(data: list[int]) -> str:
    """A format literal's characters as printf sees them: up to the first NUL."""
    return bytes(data[:data.index(0)] if 0 in data else data).decode("latin-1")


def conversions(fmt: str) -> list[tuple[str | None, str | None, str, str]]:
    """(width, precision, length, conversion) of each conversion of a printf format, `%%` included; ValueError
    for what the model does not follow (positional arguments `%1$d`, a conversion C does not define)."""
    out = []
    for m in _CONVERSION.finditer(fmt):
        _, width, prec, length, conv = m.groups()
        if width is not None and width.endswith("$"):
            raise ValueError("positional arguments (%N$)")
        if not conv or (conv not in _TAKES_ARGUMENT and conv not in ("%", "m")):
            raise ValueError(f"the conversion %{conv}")
        out.append((width, prec, length or "", conv))
    return out


class OutputFunctionsMixin(LoweringState):
    """`output_call` lowers a call of `OUTPUT_FUNCTIONS`."""

    def output_call(self, c: ci.Cursor, name: str, args: list, want: bool) -> Val:
        fmt_at, strings_at, stream_at = OUTPUT_FUNCTIONS[name]
        self.loc = self.where(c)
        rt = self.ctype(c)
        vals: dict[int, Val | None] = {}        # argument index -> its value (None: a string literal)
        for k, a in enumerate(args):
            if k == stream_at:
                self.discard(a)                 # a FILE *: outside the model
            elif strip_implicit(a).kind == K.STRING_LITERAL:
                vals[k] = None
            else:
                vals[k] = self.protect(self.keep_operations(self.rv(a)), args[k + 1:])
        reads: list[tuple[int, int | Expr | None]] = [(k, None) for k in strings_at]   # (argument, at most so many)
        fmt = self._format(c, name, args[fmt_at]) if fmt_at is not None else None
        if fmt_at is not None:
            reads += self._format_reads(c, name, args, fmt_at, vals, fmt)
        if self.memsafety:
            for k, bound in reads:
                if vals.get(k) is not None:
                    self._read_string(name, vals[k], bound, args[k])
        if not want:
            return Val(rt, {})
        t = self.types.ir_scalar(rt)
        r = self.new_var(f"{name}.result", t, "temp", c_name=f"{name}()")
        eof = IntConst(-1, t)
        if fmt_at is not None:
            n = self._fixed_count(c, name, fmt)
            ok = or_(Compare("<", r, IntConst(0, t)), Compare("==", r, IntConst(n, t)))
        elif name == "fflush":
            ok = or_(Compare("==", r, eof), Compare("==", r, IntConst(0, t)))
        elif strings_at:
            ok = or_(Compare("==", r, eof), Compare(">=", r, IntConst(0, t)))
        else:       # putchar(c), putc(c, f), fputc(c, f): (unsigned char)c
            written = cast(t, cast(IntType(8, False), vals[0].e)) if vals.get(0) is not None else None
            if written is None:
                raise self.unsupported(f"{name} of a string literal", c)
            ok = or_(Compare("==", r, eof), Compare("==", r, written))
        self.emit(Havoc((r,), self.loc), Assume(ok, self.loc))
        return scalar(rt, r)

    def _format(self, c, name: str, fmt: ci.Cursor) -> tuple[str, list] | None:
        """A literal format's text (up to its first NUL) and its `conversions` (None for another format)."""
        lit = strip_implicit(fmt)
        data = self.literal_bytes(lit) if lit.kind == K.STRING_LITERAL else None
        if data is None:
            return None
        text = format_text(data)
        try:
            return text, conversions(text)
        except ValueError as exc:
            raise self.unsupported(f"{name} with {exc}", c) from None

    def _fixed_count(self, c, name: str, fmt: tuple[str, list] | None) -> int:
        """The number of characters a printf-like call writes, where its format (`_format`) alone fixes it."""
        if fmt is None:
            raise self.unsupported(f"the result of {name} with a format that is not a string literal", c)
        text, convs = fmt
        n = len(_CONVERSION.sub("", text))
        for width, _, _, conv in convs:
            if conv == "%":
                n += 1
            elif conv == "c" and width != "*":
                n += max(int(width or 0), 1)
            else:
                raise self.unsupported(f"the result of {name} with %{conv} (its count depends on the values)", c)
        return n

    def _format_reads(self, c, name: str, args: list, at: int, vals: dict, fmt: tuple[str, list] | None
                      ) -> list[tuple[int, int | Expr | None]]:
        """The strings a printf-like call reads besides its format (`_format`, at argument `at`), as (argument
        index, at most so many)."""
        if fmt is None:
            if any(vals.get(k) is not None and isinstance(vals[k].ctype, CPtr) for k in range(at + 1, len(args))):
                raise self.unsupported(f"{name} with a format that is not a string literal and pointer arguments "
                                       f"(a %n in it would write through one)", c)
            return [(at, None)]
        reads = []
        k = at + 1
        for width, prec, length, conv in fmt[1]:
            if conv == "n":
                raise self.unsupported(f"{name} with %n (it writes through its argument)", c)
            if conv not in _TAKES_ARGUMENT:
                continue
            k += (width == "*") + (prec == "*")
            if k >= len(args):
                raise self.unsupported(f"{name} with more conversions than arguments", c)
            if conv in "sS" and self.memsafety:
                v = vals[k]
                if length or conv == "S":
                    raise self.unsupported(f"{name} with %{length}{conv} (valid-memsafety)", c)
                if v is not None and not (isinstance(v.ctype, CPtr) and is_char(v.ctype.pointee)):
                    raise self.unsupported(f"{name} with %s of a {v.ctype} argument", c)
                if prec == "*":      # the precision is the argument before; a negative one is none (7.21.6.1p5)
                    pv = vals.get(k - 1)
                    if pv is None or not isinstance(pv.ctype, CInt):
                        raise self.unsupported(f"{name} with %.*s whose precision is not an int", c)
                    reads.append((k, cast(self.IDX, pv.e)))
                else:
                    reads.append((k, None if prec is None else int(prec or 0)))
            k += 1
        return reads

    def _read_string(self, name: str, p: Val, bound: "int | Expr | None", c) -> None:
        """Read p[0], p[1], ... up to the terminator, at most `bound` characters (an expression: its value, if
        it is not negative)."""
        if not (isinstance(p.ctype, CPtr) and isinstance(p.ctype.pointee, CInt) and is_char(p.ctype.pointee)):
            raise self.unsupported(f"{name} of a {p.ctype} argument", c)
        idx = self.IDX
        if bound is None:
            tests = []
        elif isinstance(bound, int):
            tests = [lambda i: Compare("<", i, IntConst(bound, idx))]
        else:
            at_most = self.snap(bound)
            tests = [lambda i: or_(Compare("<", at_most, IntConst(0, idx)), Compare("<", i, at_most))]

        def not_terminator(i):
            ch = self.read(self.deref(self.ptr_add(p, i, +1), c)).e
            return Compare("!=", ch, IntConst(0, ch.type))
        self.counted_loop(name, idx, tests + [not_terminator], lambda i: None)
