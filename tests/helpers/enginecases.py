"""IR programs with known verdicts, shared by the BMC and k-induction tests.

Each builder returns a Program; comments give the C it stands for. `bounded` = every loop has a small
constant bound (BMC can prove it through unwinding assertions).
"""
from __future__ import annotations

from looprover.program.cfa import Assert, Assign, Assume, Havoc, ProgramBuilder
from looprover.program.expr import (
    BOOL, I32, U8, U32, ArrayType, ConstArray, binary, cast, cmp, const, not_,
)

from helpers.progdsl import Prog, add, c, eq, ge, gt, lt, mul, ne, sel


def loopfree(safe: bool):
    """x = nondet(); assume(0 < x < 10); y = 2*x; assert(y != (safe ? 7 : 8));"""
    p = Prog("loopfree")
    x, y = p.var("x", I32, "nondet"), p.var("y", I32)
    p.havoc(x)
    p.assume(gt(x, c(0)))
    p.assume(lt(x, c(10)))
    p.assign(y, mul(c(2), x))
    p.assert_(ne(y, c(7 if safe else 8)))
    return p.build()


def bounded_loop(safe: bool):
    """s = 0; for (i = 0; i < 5; i++) s += 2; assert(s == 10) / assert(s != 10)"""
    p = Prog("bounded")
    i, s = p.var("i", I32), p.var("s", I32)
    p.assign(i, c(0))
    p.assign(s, c(0))
    with p.while_(lt(i, c(5))):
        p.assign(s, add(s, c(2)))
        p.assign(i, add(i, c(1)))
    p.assert_(eq(s, c(10)) if safe else ne(s, c(10)))
    return p.build()


def even_counter(bad: int):
    """x = 0; while (nondet_bool()) x += 2; assert(x != bad);   safe iff bad is odd (needs `x` even)"""
    p = Prog("even")
    x, b = p.var("x", I32), p.var("b", BOOL, "nondet")
    p.assign(x, c(0))
    p.havoc(b)
    with p.while_(b):
        p.assign(x, add(x, c(2)))
        p.havoc(b)
    p.assert_(ne(x, c(bad)))
    return p.build()


def nonneg_counter():
    """x = 0; while (*) x++; assert(x >= 0);   (integer semantics: overflow is undefined, not a wrap)"""
    p = Prog("nonneg")
    x = p.var("x", I32)
    p.assign(x, c(0))
    with p.while_(None):
        p.assign(x, add(x, c(1)))
    p.assert_(ge(x, c(0)))
    return p.build()


def deep_bug():
    """x = nondet(); for (i = 0; i < 10; i++) if (i == 5 && x == 42) assert(0);   FALSE with input 42"""
    p = Prog("deep")
    x, i = p.var("x", I32, "nondet"), p.var("i", I32)
    p.havoc(x)
    p.assign(i, c(0))
    with p.while_(lt(i, c(10))):
        with p.if_(eq(i, c(5))):
            p.assert_(ne(x, c(42)))
        p.assign(i, add(i, c(1)))
    return p.build()


def nested(safe: bool):
    """for (i = 0; i < 3; i++) for (j = 0; j < 3; j++) s++; assert(s == 9) / assert(s != 9)"""
    p = Prog("nested")
    i, j, s = p.var("i", I32), p.var("j", I32), p.var("s", I32)
    p.assign(s, c(0))
    p.assign(i, c(0))
    with p.while_(lt(i, c(3))):
        p.assign(j, c(0))
        with p.while_(lt(j, c(3))):
            p.assign(s, add(s, c(1)))
            p.assign(j, add(j, c(1)))
        p.assign(i, add(i, c(1)))
    p.assert_(eq(s, c(9)) if safe else ne(s, c(9)))
    return p.build()


def nested_unbounded(bad: int):
    """s = 0; while (*) { j = 0; while (j < 2) { j++; s++; } } assert(s != bad);  safe iff bad odd"""
    p = Prog("nested_unbounded")
    j, s = p.var("j", I32), p.var("s", I32)
    p.assign(s, c(0))
    with p.while_(None):
        p.assign(j, c(0))
        with p.while_(lt(j, c(2))):
            p.assign(j, add(j, c(1)))
            p.assign(s, add(s, c(1)))
    p.assert_(ne(s, c(bad)))
    return p.build()


def unsigned_decrement():
    """unsigned x = 0; x--; assert(x > 0);   safe: x == UINT_MAX"""
    p = Prog("udec")
    x = p.var("x", U32)
    p.assign(x, const(0, U32))
    p.assign(x, binary("-", x, const(1, U32)))
    p.assert_(gt(x, const(0, U32)))
    return p.build()


def unsigned_wrap_bug():
    """unsigned x = 0; x--; assert(x < 100);   FALSE (mathematical -1 would make it look safe)"""
    p = Prog("uwrap")
    x = p.var("x", U32)
    p.assign(x, const(0, U32))
    p.assign(x, binary("-", x, const(1, U32)))
    p.assert_(lt(x, const(100, U32)))
    return p.build()


def uchar_overflow_bug():
    """unsigned char c = 250; while (nondet()) c = c + 1;  assert(c >= 250);   FALSE after 6 increments
    (C promotes to int and converts back: c = (unsigned char)((int)c + 1))."""
    p = Prog("uchar")
    ch, b = p.var("c", U8), p.var("b", BOOL, "nondet")
    p.assign(ch, const(250, U8))
    p.havoc(b)
    with p.while_(b):
        p.assign(ch, cast(U8, binary("+", cast(I32, ch), c(1))))
        p.havoc(b)
    p.assert_(ge(ch, const(250, U8)))
    return p.build()


def doubling_wrap_bug():
    """unsigned i = 1; while (i != 0) i = i * 2; assert(0);   FALSE: i wraps to 0 after 32 doublings.
    Without the wrap, `i >= 1` would be an inductive invariant and the error unreachable (a wrong TRUE)."""
    p = Prog("doubling")
    i = p.var("i", U32)
    p.assign(i, const(1, U32))
    with p.while_(ne(i, const(0, U32))):
        p.assign(i, binary("*", i, const(2, U32)))
    p.assert_(ne(i, const(0, U32)))
    return p.build()


def signed_unsigned_compare(safe: bool):
    """int x = -1; unsigned y = 1;  safe: assert((unsigned)x > y);  unsafe: assert(x > (int)y)"""
    p = Prog("sucmp")
    x, y = p.var("x", I32), p.var("y", U32)
    p.assign(x, c(-1))
    p.assign(y, const(1, U32))
    if safe:
        p.assert_(gt(cast(U32, x), y))
    else:
        p.assert_(gt(x, cast(I32, y)))
    return p.build()


def negative_division(safe: bool):
    """x = nondet(); assume(-10 <= x && x <= -1); q = x / 3; r = x % 3;
    safe: assert(q * 3 + r == x && r <= 0);   unsafe: assert(r >= 0)  (x = -1 gives r = -1; a Euclidean
    encoding would give r = 2 and call it safe)"""
    p = Prog("negdiv")
    x, q, r = p.var("x", I32, "nondet"), p.var("q", I32), p.var("r", I32)
    p.havoc(x)
    p.assume(ge(x, c(-10)))
    p.assume(le_(x, c(-1)))
    p.assign(q, binary("/", x, c(3)))
    p.assign(r, binary("%", x, c(3)))
    if safe:
        p.assert_(eq(add(mul(q, c(3)), r), x))
        p.assert_(le_(r, c(0)))
    else:
        p.assert_(ge(r, c(0)))
    return p.build()


def le_(a, b):
    return cmp("<=", a, b)


def array_init(safe: bool):
    """int a[6] = {0}; for (i = 0; i < 6; i++) a[i] = i * i; assert(a[4] == 16) / assert(a[4] != 16)"""
    p = Prog("array")
    at = ArrayType(I32, I32, 6)
    a, i = p.var("a", at), p.var("i", I32)
    p.assign(a, ConstArray(c(0), at))
    p.assign(i, c(0))
    with p.while_(lt(i, c(6))):
        p.store(a, i, mul(i, i))
        p.assign(i, add(i, c(1)))
    p.assert_(eq(sel(a, c(4)), c(16)) if safe else ne(sel(a, c(4)), c(16)))
    return p.build()


def array_nondet(safe: bool):
    """unsigned char a[8]; (uninitialised) k = nondet(); assume(0 <= k < 8); x = a[k];
    safe: assert(x <= 255)   unsafe: assert(x != 200) (the trace must carry the array contents)"""
    p = Prog("array_nondet")
    at = ArrayType(I32, U8, 8)
    a, k, x = p.var("a", at), p.var("k", I32, "nondet"), p.var("x", U8)
    p.havoc(a)
    p.havoc(k)
    p.assume(ge(k, c(0)))
    p.assume(lt(k, c(8)))
    p.assign(x, sel(a, k))
    p.assert_(le_(x, const(255, U8)) if safe else ne(x, const(200, U8)))
    return p.build()


def irreducible(safe: bool):
    """Two-entry cycle (goto into a loop): x in [0, 20] counts up to 30; assert(x == 30) / (x != 30)."""
    b = ProgramBuilder("irreducible")
    x = b.declare("x", I32, kind="nondet")
    l1, l2, out = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1, Havoc((x,)), Assume(cmp(">=", x, c(0))), Assume(cmp("<", x, c(10))))
    b.add_edge(b.init, l2, Havoc((x,)), Assume(cmp(">=", x, c(10))), Assume(cmp("<=", x, c(20))))
    b.add_edge(l1, l2, Assign(x, add(x, c(1))))
    b.add_edge(l2, l1, Assume(lt(x, c(30))))
    b.add_edge(l2, out, Assume(not_(lt(x, c(30)))), Assert(eq(x, c(30)) if safe else ne(x, c(30))))
    return b.build(exit_loc=out)
