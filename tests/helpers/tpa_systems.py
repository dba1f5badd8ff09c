"""Hand-built transition systems for the TPA tests (z3 terms over Int, Bool and bit-vector state)."""
from __future__ import annotations

import z3

from looprover.smt.ts import TransitionSystem


def ints(*names: str) -> tuple[list[z3.ArithRef], list[z3.ArithRef]]:
    return [z3.Int(n) for n in names], [z3.Int(n + "'") for n in names]


def counter(N: int, unsafe: bool = False) -> TransitionSystem:
    """x = 0, y = 0; while (x < N) { x++; y += 2 }. Safe: Bad = x ≥ N ∧ y ≠ 2N. Unsafe: Bad = x ≥ N, first and
    only reached after exactly N steps."""
    (x, y), (x1, y1) = ints("x", "y")
    tr = z3.And(x < N, x1 == x + 1, y1 == y + 2)
    bad = (x >= N) if unsafe else z3.And(x >= N, y != 2 * N)
    return TransitionSystem([x, y], [x1, y1], z3.And(x == 0, y == 0), tr, bad)


def nondet_step(N: int, unsafe: bool) -> TransitionSystem:
    """x = 0; while (x < N) x += nondet() ? 1 : 2 (the choice is an auxiliary Bool of Tr).
    Safe: Bad = x > N+1. Unsafe: Bad = x == N+1 (reached from x = N-1 by a +2 step)."""
    (x,), (x1,) = ints("x")
    c = z3.Bool("choice")
    tr = z3.And(x < N, z3.If(c, x1 == x + 1, x1 == x + 2))
    bad = (x == N + 1) if unsafe else (x > N + 1)
    return TransitionSystem([x], [x1], x == 0, tr, bad)


def down_up(N: int) -> TransitionSystem:
    """x = 0, y = N; while (x < N) { x++; y-- }; Bad = x ≥ N ∧ y ≠ 0 (needs x + y = N)."""
    (x, y), (x1, y1) = ints("x", "y")
    return TransitionSystem([x, y], [x1, y1], z3.And(x == 0, y == N),
                            z3.And(x < N, x1 == x + 1, y1 == y - 1), z3.And(x >= N, y != 0))


def two_speeds() -> TransitionSystem:
    """i = j = 0; loop { (i, j) += (1, 2) or (2, 4) } forever; Bad = j ≠ 2i (needs j = 2i)."""
    (i, j), (i1, j1) = ints("i", "j")
    c = z3.Bool("fast")
    tr = z3.If(c, z3.And(i1 == i + 2, j1 == j + 4), z3.And(i1 == i + 1, j1 == j + 2))
    return TransitionSystem([i, j], [i1, j1], z3.And(i == 0, j == 0), tr, j != 2 * i)


def token_ring() -> TransitionSystem:
    """Three Boolean tokens rotating; Bad = two tokens at once (needs "exactly one token")."""
    t = [z3.Bool(f"t{k}") for k in range(3)]
    t1 = [z3.Bool(f"t{k}'") for k in range(3)]
    init = z3.And(t[0], z3.Not(t[1]), z3.Not(t[2]))
    tr = z3.And(t1[0] == t[2], t1[1] == t[0], t1[2] == t[1])
    bad = z3.Or(z3.And(t[0], t[1]), z3.And(t[1], t[2]), z3.And(t[0], t[2]))
    return TransitionSystem(t, t1, init, tr, bad)


def flag_counter(unsafe: bool) -> TransitionSystem:
    """x = 0, f = false; loop { f = f || x == 5; x++ }. Unsafe: Bad = f ∧ x == 7 (depth 7).
    Safe: Bad = f ∧ x < 6."""
    x, x1 = z3.Int("x"), z3.Int("x'")
    f, f1 = z3.Bool("f"), z3.Bool("f'")
    tr = z3.And(f1 == z3.Or(f, x == 5), x1 == x + 1)
    bad = z3.And(f, x == 7) if unsafe else z3.And(f, x < 6)
    return TransitionSystem([x, f], [x1, f1], z3.And(x == 0, z3.Not(f)), tr, bad)


def triangular(target: int) -> TransitionSystem:
    """x = 0, y = 0; loop { x++; y += x } (y = x(x+1)/2); Bad = y == target. Safe when target is not
    triangular, but the only proofs are non-linear or enumerate the path up to the target."""
    (x, y), (x1, y1) = ints("x", "y")
    return TransitionSystem([x, y], [x1, y1], z3.And(x == 0, y == 0),
                            z3.And(x1 == x + 1, y1 == y + x + 1), y == target)


def bv_counter(N: int, bad_value: int, width: int = 32) -> TransitionSystem:
    """x = 0 (bv); while (x <u N) x++; Bad = x == bad_value."""
    x, x1 = z3.BitVec("x", width), z3.BitVec("x'", width)
    return TransitionSystem([x], [x1], x == 0, z3.And(z3.ULT(x, N), x1 == x + 1), x == bad_value)


def phase_split() -> TransitionSystem:
    """a > b at the start; each step a += 1, b += 2; d counts the steps while b <= a, c those after (CHC-COMP's
    aeval multi-phase s_split_17). Bad = d <= 0 ∧ c > 1000: safe, since the first step already counts in d.
    TPA's levels close only with facts that land on a higher level than the one that closes."""
    (a, b, c, d), (a1, b1, c1, d1) = ints("a", "b", "c", "d")
    return TransitionSystem([a, b, c, d], [a1, b1, c1, d1], z3.And(d == 0, c == 0, a > b),
                            z3.And(a1 == a + 1, b1 == b + 2, c1 == z3.If(b <= a, c, c + 1),
                                   d1 == z3.If(b <= a, d + 1, d)),
                            z3.And(d <= 0, c > 1000))
