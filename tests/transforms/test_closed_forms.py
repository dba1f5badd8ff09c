"""Acceleration: recognising `x + b`, the per-iteration update forms, and exactness of the closed forms under
wrap-around (checked against repeated execution, and by z3 for all values in bit-vector mode)."""
from __future__ import annotations

import random

import pytest
import z3

from looprover.program.expr import (
    I8, I32, U8, U32, U64, MATH_INT, Var, binary, cast, const, free_vars,
)
from looprover.program.interp import Evaluator
from looprover.program.loops import analyze_loops
from looprover.smt.encode import Encoder
from looprover.program.liveness import liveness
from looprover.transforms.classify import classify
from looprover.transforms.closed_forms import FormAnalysis, closed_form, offset_of, summarize

from helpers.progdsl import Prog, add, c, eq, lt, ne


# ------------------------------------------------------------------------------------ offset_of
def test_offset_patterns():
    x, y = Var("x", I32), Var("y", I32)
    assert offset_of(binary("+", x, c(1)), x) == c(1)
    assert offset_of(binary("+", c(3), x), x) == c(3)
    assert offset_of(binary("-", x, y), x) is not None
    assert offset_of(binary("+", binary("+", x, c(1)), c(2)), x) == c(3)
    assert offset_of(x, x) == c(0)
    assert offset_of(binary("+", x, x), x) is None            # 2x
    assert offset_of(binary("*", x, c(2)), x) is None
    assert offset_of(binary("-", c(0), x), x) is None         # -x
    assert offset_of(y, x) is None


def test_offset_through_char_promotion():
    """(unsigned char)((int)u + 1): congruent to u + 1 modulo 256."""
    u = Var("u", U8)
    e = cast(U8, binary("+", cast(I32, u), const(1, I32)))
    assert offset_of(e, u) == const(1, U8)
    s = Var("s", I8)
    e = cast(I8, binary("+", cast(I32, s), const(-1, I32)))
    assert offset_of(e, s) == const(-1, I8)


def test_narrowing_in_between_is_not_an_offset():
    """(int)((unsigned char)x + 1) for an int x is not x + 1 modulo 2^32."""
    x = Var("x", I32)
    e = cast(I32, binary("+", cast(U8, x), const(1, U8)))
    assert offset_of(e, x) is None


# ------------------------------------------------------------------------------------ exactness
def _repeat(ev, x0, e, x, k):
    val = x0
    for _ in range(k):
        val = ev.eval(e, {x.name: val, "b": BETA[0]})
    return val


BETA = [0]


@pytest.mark.parametrize("t", [U8, I8, U32, I32], ids=str)
def test_closed_form_equals_repeated_update(t):
    """x0 + k*b computed in the unsigned type of x's width equals k wrapping updates (gcc semantics)."""
    rng = random.Random(7)
    x = Var("x", t)
    b = Var("b", t)
    k = Var("k", U64)
    upd = binary("+", x, b) if t.bits >= 32 else cast(t, binary("+", cast(I32, x), cast(I32, b)))
    beta = offset_of(upd, x)
    assert beta is not None and free_vars(beta) == {b}
    cf = closed_form(x, beta, k)
    ev = Evaluator("wrap")
    for _ in range(200):
        x0 = rng.randint(t.min, t.max)
        BETA[0] = rng.randint(t.min, t.max)
        steps = rng.randint(0, 600)
        want = _repeat(ev, x0, upd, x, steps)
        got = ev.eval(cf, {"x": x0, "b": BETA[0], "k": steps})
        assert got == want, (x0, BETA[0], steps)


@pytest.mark.parametrize("t", [U8, I8, U32], ids=str)
def test_closed_form_modular_in_k_bitvector(t):
    """For every x0 and b (z3, bit-vector mode): the closed form at k equals k updates, for k = 0..5, and it
    only depends on k modulo 2^w (so a w-bit counter stands for any iteration count)."""
    x, b, k = Var("x", t), Var("b", t), Var("k", U64)
    cf = closed_form(x, b, k)
    enc = Encoder(None, bitvector=True)
    xs, bs, ks = z3.BitVec("x", t.bits), z3.BitVec("b", t.bits), z3.BitVec("k", 64)
    env = {"x": xs, "b": bs, "k": ks}
    s = z3.Solver()
    term = enc.expr(cf, env)
    for n in range(6):
        want = xs
        for _ in range(n):
            want = want + bs
        s.push()
        s.add(ks == n, term != want)
        assert s.check() == z3.unsat
        s.pop()
    s.add(z3.substitute(term, (ks, ks + (1 << t.bits))) != term)
    assert s.check() == z3.unsat


def test_closed_form_signed_integer_mode_no_overflow():
    """Integer mode: for signed x the closed form is the mathematical x0 + k*b whenever that is in range."""
    x, k = Var("x", I32), Var("k", U32)
    cf = closed_form(x, const(3, I32), k)
    enc = Encoder(None, bitvector=False)
    xs, ks = z3.Int("x"), z3.Int("k")
    term = enc.expr(cf, {"x": xs, "k": ks})
    s = z3.Solver()
    s.add(xs >= I32.min, xs <= I32.max, ks >= 0, ks <= U32.max)
    s.add(xs + 3 * ks <= I32.max, term != xs + 3 * ks)
    assert s.check() == z3.unsat


def test_closed_form_mathematical_integers():
    x, km = Var("x", MATH_INT), Var("km", MATH_INT)
    cf = closed_form(x, const(-2, MATH_INT), km)
    ev = Evaluator("math")
    assert ev.eval(cf, {"x": 10, "km": 7}) == -4


# ------------------------------------------------------------------------------------ update forms
def _forms(prog):
    forest = analyze_loops(prog)
    h = forest.order[0]
    loop = forest.loops[h]
    cls = classify(prog, loop, liveness(prog))
    # every written scalar (the transformation only asks for IO variables; PO are never havocked)
    fa = FormAnalysis(loop, frozenset(v for v in cls.written if not hasattr(v.type, "index")), cls.written)
    return {v.name: summarize(v, f) for v, f in fa.run().items()}


def test_forms_linear_multipath_reset_nonrecurrent_top():
    """while (i < n) { i++; j += 2; if (*) a += 1; else a += 3; if (i == 5) r = 0; r++;
                       if (*) f = 7; g = g * 2; }"""
    p = Prog()
    i, j, a, r, f, g = (p.var(v, I32) for v in "ijarfg")
    n = p.var("n", I32, "nondet")
    p.havoc(n)
    with p.while_(lt(i, n)):
        p.assign(i, add(i, c(1)))
        p.assign(j, add(j, c(2)))
        with p.if_(None) as els:
            p.assign(a, add(a, c(1)))
            els()
            p.assign(a, add(a, c(3)))
        with p.if_(eq(i, c(5))):
            p.assign(r, c(0))
        p.assign(r, add(r, c(1)))
        with p.if_(None):
            p.assign(f, c(7))
        p.assign(g, binary("*", g, c(2)))
    p.assert_(ne(j, c(1)))
    s = _forms(p.build())
    assert s["i"].kind == "linear" and s["i"].offsets == (c(1),)
    assert s["j"].kind == "linear" and s["j"].offsets == (c(2),)
    assert s["a"].kind == "multi-path" and set(s["a"].offsets) == {c(1), c(3)}
    assert s["r"].kind == "reset" and s["r"].resets == (c(1),) and s["r"].offsets == (c(1),)
    assert s["f"].kind == "non-recurrent" and s["f"].resets == (c(7),)
    assert s["g"] is None


def test_forms_inner_loop_writes_are_top():
    """while (i < n) { i++; while (j < m) j++; x = x + 1; }: j is written in a cycle -> havoc."""
    p = Prog()
    i, j, x = p.var("i", I32), p.var("j", I32), p.var("x", I32)
    n, m = p.var("n", I32, "nondet"), p.var("m", I32, "nondet")
    with p.while_(lt(i, n)):
        p.assign(i, add(i, c(1)))
        with p.while_(lt(j, m)):
            p.assign(j, add(j, c(1)))
        p.assign(x, add(x, c(1)))
    p.assert_(ne(x, c(-1)))
    prog = p.build()
    forest = analyze_loops(prog)
    outer = forest.loops[forest.order[-1]]
    cls = classify(prog, outer, liveness(prog))
    forms = FormAnalysis(outer, cls.io, cls.written).run()
    by = {v.name: summarize(v, f) for v, f in forms.items()}
    assert by["j"] is None
    assert by["i"].kind == "linear" and by["x"].kind == "linear"


def test_increment_by_a_variable_written_in_the_loop_is_top():
    """while (i < n) { d = d + 1; x = x + d; i++; }: x's increment is not loop-invariant."""
    p = Prog()
    i, d, x = p.var("i", I32), p.var("d", I32), p.var("x", I32)
    n = p.var("n", I32, "nondet")
    with p.while_(lt(i, n)):
        p.assign(d, add(d, c(1)))
        p.assign(x, add(x, d))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(x, c(-1)))
    s = _forms(p.build())
    assert s["x"] is None and s["d"].kind == "linear"


def test_increment_by_an_input_is_linear():
    p = Prog()
    i, x = p.var("i", I32), p.var("x", I32)
    n, st = p.var("n", I32, "nondet"), p.var("st", I32, "nondet")
    with p.while_(lt(i, n)):
        p.assign(x, add(x, st))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(x, c(-1)))
    s = _forms(p.build())
    assert s["x"].kind == "linear" and s["x"].offsets == (st,)
