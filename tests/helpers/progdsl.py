"""A tiny structured-program builder for tests (the C front-end lowers C the same way, roughly).

    p = Prog("name")
    x = p.var("x", I32)
    n = p.var("n", I32, kind="nondet")
    p.havoc(n); p.assign(x, c(0))
    with p.while_(lt(x, n)):            # or p.while_(None) for while(*)
        p.assign(x, add(x, c(1)))
    p.assert_(ge(x, c(0)))
    prog = p.build()

Statements accumulate on one edge until control flow splits. `while_(None)` / `if_(None)` branch
nondeterministically with two unconditional edges.
"""
from __future__ import annotations

from contextlib import contextmanager

from looprover.program.cfa import Assert, Assign, Assume, Havoc, ProgramBuilder
from looprover.program.expr import (
    BOOL, I32, Expr, IntType, Select, Store, Var, binary, cast, cmp, const, not_,
)


class Prog:
    def __init__(self, name: str = "t"):
        self.b = ProgramBuilder(name)
        self.cur = self.b.init
        self.pending: list = []
        self.loops: list[tuple[int, int]] = []  # (head, exit) of enclosing loops

    def var(self, name, t, kind="local"):
        return self.b.declare(name, t, kind=kind)

    # statements
    def assign(self, v: Var, e: Expr):
        self.pending.append(Assign(v, e))

    def store(self, a: Var, i: Expr, v: Expr):
        self.pending.append(Assign(a, Store(a, i, v, a.type)))

    def havoc(self, *vs: Var):
        self.pending.append(Havoc(tuple(vs)))

    def assume(self, c: Expr):
        self.pending.append(Assume(c))

    def assert_(self, c: Expr):
        self.pending.append(Assert(c))

    # control flow
    def goto(self, target: int):
        self.b.add_edge(self.cur, target, *self.pending)
        self.pending = []
        self.cur = self.b.new_loc()  # dead until something jumps here

    def _fresh_head(self) -> int:
        """A location only reachable through the edge just added (so a loop head has one entry edge)."""
        nxt = self.b.new_loc()
        self.b.add_edge(self.cur, nxt, *self.pending)
        self.pending = []
        self.cur = nxt
        return nxt

    def _branch(self, src: int, cond: Expr | None, yes: int, no: int):
        if cond is None:
            self.b.add_edge(src, yes)
            self.b.add_edge(src, no)
        else:
            self.b.add_edge(src, yes, Assume(cond))
            self.b.add_edge(src, no, Assume(not_(cond)))

    @contextmanager
    def while_(self, cond: Expr | None):
        head = self._fresh_head()
        body, out = self.b.new_loc(), self.b.new_loc()
        self._branch(head, cond, body, out)
        self.cur = body
        self.loops.append((head, out))
        yield head
        self.loops.pop()
        self.b.add_edge(self.cur, head, *self.pending)
        self.pending = []
        self.cur = out

    def break_(self):
        self.goto(self.loops[-1][1])

    def continue_(self):
        self.goto(self.loops[-1][0])

    @contextmanager
    def if_(self, cond: Expr | None):
        """`with p.if_(c) as els:` ... then-part ...; call `els()` to switch to the else part."""
        src = self._fresh_head()
        yes, no, join = self.b.new_loc(), self.b.new_loc(), self.b.new_loc()
        self._branch(src, cond, yes, no)
        self.cur = yes
        state = {"else": False}

        def els():
            self.b.add_edge(self.cur, join, *self.pending)
            self.pending = []
            self.cur = no
            state["else"] = True

        yield els
        self.b.add_edge(self.cur, join, *self.pending)
        self.pending = []
        if not state["else"]:
            self.b.add_edge(no, join)
        self.cur = join

    def build(self):
        exit_loc = self.b.new_loc(name="exit")
        self.b.add_edge(self.cur, exit_loc, *self.pending)
        self.pending = []
        return self.b.build(exit_loc=exit_loc)


# expression shorthands (I32 unless the operands say otherwise)
def c(v: int, t: IntType = I32):
    return const(v, t)


def add(a, b):
    return binary("+", a, b)


def sub(a, b):
    return binary("-", a, b)


def mul(a, b):
    return binary("*", a, b)


def lt(a, b):
    return cmp("<", a, b)


def le(a, b):
    return cmp("<=", a, b)


def gt(a, b):
    return cmp(">", a, b)


def ge(a, b):
    return cmp(">=", a, b)


def eq(a, b):
    return cmp("==", a, b)


def ne(a, b):
    return cmp("!=", a, b)


def sel(a: Var, i: Expr):
    return Select(a, i, a.type.elem)


__all__ = ["Prog", "c", "add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne", "sel", "cast", "BOOL"]
