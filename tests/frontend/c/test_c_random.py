"""Randomly generated integer programs (fixed seeds), cross-checked against gcc.

Why: C's promotions and conversions interact in more ways than hand-written tests cover; a small generator of
UB-free expressions over every integer type finds conversion bugs quickly. Division by 0 or -1, left shifts of
negative values and over-wide shifts are avoided by construction; signed overflow wraps on both sides
(`-fwrapv` and the interpreter's `signed_overflow="wrap"`).
"""
from __future__ import annotations

import random

import pytest

from helpers.c_harness import crosscheck

TYPES = ["char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "long",
         "unsigned long", "long long", "unsigned long long", "_Bool"]
VARS = [f"v{i}" for i in range(len(TYPES))]
UNSIGNED = {"unsigned char", "unsigned short", "unsigned int", "unsigned long", "unsigned long long", "_Bool"}
LITERALS = ["0", "1", "-1", "7", "-128", "255", "65535", "2147483647", "(-2147483647-1)", "4294967295u",
            "0x7fffffffffffffffLL", "18446744073709551615ULL", "'a'", "100000L", "3u"]


class Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def expr(self, d: int, avoid=()) -> str:
        """A pure expression (no side effects) reading no variable in `avoid`."""
        r = self.r
        if d <= 0 or r.random() < 0.25:
            names = [v for v in VARS if v not in avoid]
            return r.choice(names) if r.random() < 0.7 else r.choice(LITERALS)
        k = r.randrange(10)
        a = self.expr(d - 1, avoid)
        if k == 0:
            return f"({r.choice(['-', '~', '!'])} {a})"
        if k == 1:
            return f"(({r.choice(TYPES)})({a}))"
        if k == 2:
            b = self.expr(d - 1, avoid)
            return f"({a} {r.choice(['/', '%'])} SAFE({b}))"
        if k == 3:
            b = self.expr(d - 1, avoid)
            if r.random() < 0.5:
                return f"(({r.choice(['unsigned', 'unsigned long long', 'unsigned char'])})({a}) << ({b} & 7))"
            return f"({a} >> ({b} & 7))"
        if k == 4:
            return f"({self.expr(d - 1, avoid)} ? {a} : {self.expr(d - 1, avoid)})"
        b = self.expr(d - 1, avoid)
        op = r.choice(["+", "-", "*", "&", "|", "^", "<", ">", "<=", ">=", "==", "!=", "&&", "||"])
        return f"({a} {op} {b})"

    def stmt(self, d: int = 2) -> str:
        """A statement without unsequenced side effects on one variable (that would be UB, not a test)."""
        r = self.r
        i = r.randrange(len(VARS))
        v, t = VARS[i], TYPES[i]
        k = r.randrange(9)
        if k <= 2:
            return f"{v} = {self.expr(3)};"
        if k == 3:
            op = r.choice(["+=", "-=", "*=", "&=", "|=", "^="])
            return f"{v} {op} {self.expr(2)};"
        if k == 4:
            return f"{v} {r.choice(['/=', '%='])} SAFE({self.expr(2)});"
        if k == 5:
            if t in UNSIGNED:
                return f"{v} <<= ({self.expr(1)} & 3);"
            return f"{v} >>= ({self.expr(1)} & 7);"
        w = r.choice([x for x in VARS if x != v])
        vw = (v, w)
        if k == 6:
            return r.choice([f"{v}++;", f"{v}--;", f"++{v};", f"--{v};", f"{w} = {v}++ + 1;", f"{w} = --{v} * 3;"])
        if k == 7 and d > 0:
            return f"if ({self.expr(2)}) {{ {self.stmt(d - 1)} }} else {{ {self.stmt(d - 1)} }}"
        return r.choice([
            f"{v} = ({w} += {self.expr(1, vw)}) + ({self.expr(1, vw)} && {self.expr(1, vw)});",
            f"{v} = {self.expr(1, vw)} && ({w} = {self.expr(2, vw)});",
            f"{v} = ({self.expr(1, vw)} || {w}++) + 1;",
            f"{v} = {self.expr(1, vw)} ? ({w} -= {self.expr(1, vw)}) : {w}--;",
            f"{v} = ({w} = {self.expr(1, vw)}, {w} * 2);",
            f"{v} = f({self.expr(1, vw)}, {w}++) + {self.expr(1, vw)};",
            f"for (int k = 0; k < 5 && {w}-- > 0 && {self.expr(1, (v,))}; k++) {{ {v} += 2; }}",
        ])

    def program(self) -> str:
        decls = "\n".join(f"{t} {v};" for t, v in zip(TYPES, VARS))
        init = "\n".join(f"  {v} = __VERIFIER_nondet_longlong();" for v in VARS)
        body = "\n".join("  " + self.stmt() for _ in range(14))
        return (f"extern long long __VERIFIER_nondet_longlong(void);\n"
                f"#define SAFE(x) (((x) == 0 || (x) == -1) ? 7 : (x))\n{decls}\n"
                f"int f(short a, unsigned char b) {{ int t = a; t -= b; return t * 3; }}\n"
                f"int main(void) {{\n{init}\n{body}\n  return 0;\n}}\n")


INPUTS = [
    [0] * 12,
    [1, -1, 255, -32768, 65535, 2147483647, 4294967295, -5, 3, -2**63, 2**64 - 1, 2],
    [-128, 127, 128, 32767, -1, -2147483648, 2**31, 2**40, 2**63 - 1, 7, 12345678901, 0],
    [100, -100, 1000, -1000, 77, 65536, 3000000000, -2**33, -1, 1, 2**62, 1],
]


@pytest.mark.parametrize("seed", range(12))
def test_random_integer_programs(gcc, tmp_path, seed):
    src = Gen(seed).program()
    crosscheck(gcc, tmp_path, src, INPUTS, VARS, ("LP64",), name=f"rand{seed}")
