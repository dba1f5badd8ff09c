"""Wrap-around as a side obligation: a transition system without modular arithmetic plus "a wrap is possible" as
an extra bad state.

Why: in integer mode every C `unsigned`/`signed` conversion becomes `If(a > MAX, a - 2^w, a)` (or `a % 2^w`).
Transition invariants such as `y' - y = 2(x' - x)` are then false from states near MAX, so TPA's seed lemmas and
interpolants never become relational and deep loops do not converge (deep_safe_N: UNKNOWN at level 9). Most
loops never wrap on a reachable state; proving that is one more safety query, and without the wraps the
relation is linear.

The rewrite replaces a wrap term t by t' and records a condition c with `¬c ⇒ t = t'` (checked by shape:
`If(a > K, a - M, e)` -> e, `If(a < K, a + M, e)` -> e, `If(lo ≤ a ≤ hi, a, w)` -> a, `a % 2^w` -> a). With
C = ⋁c, a step of Tr with ¬C is a step of Tr' = Tr[t := t'] with the same values and vice versa. So for

    Tr_nw(x, x') = ¬C ∧ Tr'        Bad_nw(x) = Bad(x) ∨ ∃x', aux. Tr(x, x', aux) ∧ C

every run of the original either stays in ¬C (a run of Tr_nw) or reaches a first state that takes a C-step
(a Bad_nw state): Bad_nw unreachable under Tr_nw ⇒ Bad unreachable under Tr. Conversely a Tr_nw-run ending in a
state of the *original* Bad is a run of the original; one ending only in the wrap part says nothing (callers
then fall back to the exact system).
"""
from __future__ import annotations

import z3

from looprover.deadline import Deadline
from looprover.smt.mbp import QEError, has_quantifier, qe


def _num(t: z3.ExprRef) -> int | None:
    return t.as_long() if z3.is_int_value(t) else None


# the moduli of C's integer widths: only these are wrap-around (a CHC file's `mod x 4` is arithmetic)
_WRAP_MODULI = frozenset(1 << w for w in (8, 16, 32, 64, 128))


def _wrap_modulus(k: int | None) -> bool:
    return k in _WRAP_MODULI


class _Rewriter:
    def __init__(self) -> None:
        self.memo: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}   # id -> (term kept alive, rewritten)
        self.conds: list[z3.BoolRef] = []

    def __call__(self, t: z3.ExprRef) -> z3.ExprRef:
        stack = [(t, False)]
        while stack:
            u, done = stack.pop()
            if u.get_id() in self.memo:
                continue
            kids = u.children() if z3.is_app(u) else []
            if not done and kids:
                stack.append((u, True))
                stack.extend((k, False) for k in kids if k.get_id() not in self.memo)
                continue
            new_kids = [self.memo[k.get_id()][1] for k in kids]
            self.memo[u.get_id()] = (u, self._rule(u, new_kids))
        return self.memo[t.get_id()][1]

    def _rule(self, u: z3.ExprRef, k: list[z3.ExprRef]) -> z3.ExprRef:
        if not k:
            return u
        kind = u.decl().kind()
        if kind == z3.Z3_OP_ITE:
            c, a, b = k
            w = self._wrap_ite(c, a, b)
            if w is not None:
                return w
        elif kind == z3.Z3_OP_MOD and _wrap_modulus(_num(k[1])) and z3.is_int(k[0]):
            a, m = k
            self.conds.append(z3.Or(a < 0, a >= m))
            return a
        if all(x.eq(y) for x, y in zip(k, u.children())):
            return u
        return u.decl()(*k)

    def _wrap_ite(self, c: z3.ExprRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef | None:
        if not z3.is_int(a):
            return None
        ck = c.decl().kind() if z3.is_app(c) else None
        if ck in (z3.Z3_OP_GT, z3.Z3_OP_LT) and _num(c.arg(1)) is not None:
            base = c.arg(0)
            op = z3.Z3_OP_SUB if ck == z3.Z3_OP_GT else z3.Z3_OP_ADD
            if z3.is_app_of(a, op) and a.num_args() == 2 and a.arg(0).eq(base) and _wrap_modulus(_num(a.arg(1))):
                self.conds.append(c)
                return b
        if ck == z3.Z3_OP_AND and c.num_args() == 2:
            lo, hi = c.arg(0), c.arg(1)
            if z3.is_app_of(lo, z3.Z3_OP_GE) and z3.is_app_of(hi, z3.Z3_OP_LE) and lo.arg(0).eq(a) \
                    and hi.arg(0).eq(a) and _num(lo.arg(1)) is not None and _num(hi.arg(1)) is not None \
                    and _wrap_modulus(_num(hi.arg(1)) - _num(lo.arg(1)) + 1):
                self.conds.append(z3.Not(c))
                return a
        return None


def split_wraps(trans: z3.BoolRef, state: list[z3.ExprRef], deadline: Deadline
                ) -> tuple[z3.BoolRef, z3.BoolRef] | None:
    """(Tr_nw, WrapBad) as described above, or None when Tr has no wrap term or QE of the wrap states failed by
    the deadline."""
    rw = _Rewriter()
    plain = rw(trans)
    if not rw.conds:
        return None
    C = z3.Or(rw.conds) if len(rw.conds) > 1 else rw.conds[0]
    try:
        wrap_bad = qe(z3.And(trans, C), keep=state, deadline=deadline)
    except QEError:
        return None
    if has_quantifier(wrap_bad):
        return None
    return z3.And(z3.Not(C), plain), wrap_bad
