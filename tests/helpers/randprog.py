"""Random small loop programs with a decidable ground truth (every loop has a small constant bound, so BMC
exhausts the original), for differential soundness checks of the LABMC abstraction."""
from __future__ import annotations

import random

from looprover.program.expr import BOOL, I32, U8, BoolConst, Var, and_, binary, cast, cmp, const

from helpers.progdsl import Prog


class Gen:
    def __init__(self, seed: int, max_depth: int = 2, stmts: int = 5):
        self.r = random.Random(seed)
        self.p = Prog(f"rand{seed}")
        self.max_depth = max_depth
        self.stmts = stmts
        self.ints = [self.p.var(n, I32) for n in ("x", "y", "z")]
        self.bytes = [self.p.var("u", U8)]
        self.flag = self.p.var("f", BOOL)
        self.n = self.p.var("n", I32, "nondet")
        self.inp = self.p.var("in", I32, "nondet")
        self.counters: list[Var] = []
        self.nloops = 0

    def scalar(self):
        return self.r.choice(self.ints + self.bytes)

    def atom(self, t):
        r = self.r.random()
        if r < 0.4:
            return const(self.r.randint(-3, 5) if t == I32 else self.r.randint(0, 255), t)
        pool = [v for v in self.ints + self.bytes + [self.n] + self.counters if v.type == t]
        if t == I32:
            pool += [cast(I32, v) for v in self.bytes]
        return self.r.choice(pool)

    def rhs(self, x: Var):
        t = x.type
        k = self.r.random()
        if k < 0.35:
            return binary("+", x, const(self.r.choice([1, 1, 2, -1, 3]), t))
        if k < 0.5:
            return self.atom(t)
        if k < 0.6:
            return binary("-", x, self.atom(t))
        if k < 0.7:
            return binary("+", self.atom(t), self.atom(t))
        if k < 0.78:
            return binary("*", x, const(2, t))
        if t == U8:
            # (u8)((int)u + c): a char increment as C writes it
            return cast(U8, binary("+", cast(I32, x), const(self.r.choice([1, 200, -1]), I32)))
        return binary("+", x, self.atom(t))

    def cond(self):
        k = self.r.random()
        if k < 0.15:
            return self.flag
        if k < 0.2:
            return None
        x = self.scalar()
        op = self.r.choice(["<", "<=", "==", "!=", ">", ">="])
        return cmp(op, x, self.atom(x.type))

    def block(self, depth: int, n: int):
        """`depth`: number of enclosing loops (break/continue need one)."""
        p = self.p
        for _ in range(n):
            k = self.r.random()
            if k < 0.45:
                x = self.scalar()
                p.assign(x, self.rhs(x))
            elif k < 0.5:
                p.assign(self.flag, self.r.choice([BoolConst(True), BoolConst(False), self.cond() or BoolConst(True)]))
            elif k < 0.55:
                p.havoc(self.inp)
                p.assume(cmp("<=", self.inp, const(3, I32)))
                p.assume(cmp(">=", self.inp, const(-3, I32)))
                x = self.r.choice(self.ints)
                p.assign(x, self.inp)
            elif k < 0.68:
                c = self.cond()
                with p.if_(c) as els:
                    self.block(depth, self.r.randint(0, 2))
                    if self.r.random() < 0.5:
                        els()
                        self.block(depth, self.r.randint(0, 2))
            elif k < 0.78 and depth < self.max_depth and self.nloops < 4:
                self.loop(depth + 1)
            elif k < 0.86:
                p.assert_(self.prop())
            elif k < 0.92 and depth > 0:
                c = self.cond()
                with p.if_(c):
                    if self.r.random() < 0.5:
                        p.break_()
                    else:
                        p.continue_()
            else:
                x = self.scalar()
                p.assign(x, self.rhs(x))

    def loop(self, depth: int):
        """A loop at nesting depth `depth` (its body may nest up to `max_depth`)."""
        p = self.p
        self.nloops += 1
        ctr = p.var(f"c{self.nloops}", I32)
        bound = self.r.choice([self.n, const(self.r.randint(0, 5), I32)])
        p.assign(ctr, const(0, I32))
        extra = self.cond() if self.r.random() < 0.4 else None
        guard = cmp("<", ctr, bound)
        if extra is not None:
            guard = and_(guard, extra)
        with p.while_(guard):
            p.assign(ctr, binary("+", ctr, const(1, I32)))
            self.counters.append(ctr)
            self.block(depth, self.r.randint(1, self.stmts))
            self.counters.pop()

    def build(self):
        p = self.p
        for v in self.ints:
            p.assign(v, const(self.r.randint(-2, 3), I32))
        p.assign(self.bytes[0], const(self.r.choice([0, 250, 5]), U8))
        p.assign(self.flag, BoolConst(False))
        p.havoc(self.n)
        p.assume(cmp(">=", self.n, const(0, I32)))
        p.assume(cmp("<=", self.n, const(4, I32)))
        self.loop(1)
        self.block(0, self.r.randint(1, 3))
        if self.r.random() < 0.5:
            self.loop(1)
        p.assert_(self.prop())
        return p.build()

    def prop(self):
        """An assertion: a random comparison, or (more often) `v != c` for a constant that may or may not
        be reachable, so that both safe programs and rare violations are common."""
        if self.r.random() < 0.3:
            c = self.cond()
            if c is not None:
                return c
        x = self.r.choice(self.ints + self.bytes + self.counters)
        v = self.r.randint(-8, 12) if x.type == I32 else self.r.choice([0, 1, 2, 3, 4, 5, 6, 250, 255, 7])
        return cmp("!=", x, const(v, x.type))


def random_program(seed: int):
    return Gen(seed).build()
