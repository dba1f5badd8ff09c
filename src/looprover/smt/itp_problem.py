"""The interpolation problem shared by the methods of `smt/interpolate.py` and `smt/itp_farkas.py`: A and B in a
fresh z3 context, their shared vocabulary, the call's deadline and the running method's own budget, and the
small formula helpers every method uses (conjunction in a given context, unsat-core weakening against B).

Why a module of its own: the Farkas method is large enough for a module of its own, and both it and the driver
need the problem; here neither imports the other.
"""
from __future__ import annotations

from collections.abc import Sequence

import z3

from looprover.deadline import Deadline
from looprover.smt.mbp import vocabulary
from looprover.smt.terms import all_of, conjuncts
from looprover.smt.solver import check_assuming, plain_solver

MAX_ROUNDS = 500             # cube-enumeration cap per loop (a safety net against DNF blow-up)


class MethodFailed(Exception):
    """A method could not produce a candidate (timeout, unsupported construct, enumeration cap)."""


def as_formula(f: z3.BoolRef | Sequence[z3.BoolRef], ctx: z3.Context | None = None) -> z3.BoolRef:
    if isinstance(f, z3.ExprRef):
        return f
    fs = list(f)
    if not fs:
        return z3.BoolVal(True, ctx)
    return fs[0] if len(fs) == 1 else z3.And(fs)


class Problem:
    """A and B (in one fresh context) with their vocabularies, the call's `deadline`, and the running method's
    own earlier deadline (`budget`)."""

    def __init__(self, A: z3.BoolRef, B: z3.BoolRef, shared: Sequence[z3.ExprRef] | None, deadline: Deadline):
        if A.ctx != B.ctx:
            raise ValueError("A and B live in different z3 contexts")
        self.A, self.B, self.ctx, self.deadline = A, B, A.ctx, deadline
        self.method_deadline = deadline         # the running method's own (earlier) deadline, see `budget`
        va, vb = vocabulary(A), vocabulary(B)
        a_consts, b_consts = va.constants, vb.constants
        b_ids = {c.get_id() for c in b_consts}
        common = [c for c in a_consts if c.get_id() in b_ids]
        if shared is None:
            self.shared = common
        else:
            self.shared = list({v.get_id(): v for v in shared}.values())
            given = {v.get_id() for v in self.shared}
            missing = [c for c in common if c.get_id() not in given]
            if missing:
                raise ValueError(f"shared= omits symbols occurring in both A and B: {missing}")
        self.shared_ids = {v.get_id() for v in self.shared}
        self.a_local = [c for c in a_consts if c.get_id() not in self.shared_ids]
        self.b_local = [c for c in b_consts if c.get_id() not in self.shared_ids]
        for v in self.shared:
            if not (z3.is_const(v) and v.decl().kind() == z3.Z3_OP_UNINTERPRETED):
                raise ValueError(f"shared= must list uninterpreted constants, not {v}")
        if va.functions or vb.functions:
            self.unsupported = "uninterpreted functions"
        elif va.quantified or vb.quantified:
            self.unsupported = "quantifiers"
        else:
            self.unsupported = None

    def left(self) -> float:
        """Seconds left for the running method."""
        return min(self.deadline.left(), self.method_deadline.left())

    def total_left(self) -> float:
        return self.deadline.left()

    def budget(self, cap: float | None) -> None:
        self.method_deadline = Deadline.after(max(cap, 0.0)) if cap is not None else self.deadline

    def limit(self) -> Deadline:
        """The running method's deadline (the earlier of the call's and the method's own)."""
        return self.deadline.earliest(self.method_deadline)

    def ms(self, cap: float | None = None) -> int:
        """Milliseconds left (≥ 1), optionally capped; raises MethodFailed('timeout') when the time is up."""
        left = self.left()
        if cap is not None:
            left = min(left, cap)
        if left <= 0:
            raise MethodFailed("timeout")
        return max(1, int(left * 1000))

    def solver(self, *fs: z3.BoolRef) -> z3.Solver:
        s = plain_solver(self.ctx)
        s.set("random_seed", 0)
        for f in fs:
            s.add(f)
        return s

    def check(self, s: z3.Solver, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
        s.set("timeout", self.ms())
        r = check_assuming(s, assumptions)
        if r == z3.unknown:
            raise MethodFailed("timeout" if self.left() <= 0 else f"solver unknown ({s.reason_unknown()})")
        return r


def op_kind(t: z3.ExprRef) -> int | None:
    return t.decl().kind() if z3.is_app(t) else None


def weaken(p: Problem, P: z3.BoolRef) -> z3.BoolRef:
    """The conjuncts of P in an unsat core of `P ∧ B` (P ∧ B must be unsat): implied by P, still inconsistent
    with B, and usually much more general than P."""
    parts = conjuncts(P)
    if len(parts) <= 1:
        return P
    s = p.solver(p.B)
    s.set("core.minimize", True)
    names = [z3.Bool(f"weaken!{i}", p.ctx) for i in range(len(parts))]
    for n, c in zip(names, parts):
        s.add(z3.Implies(n, c))
    if p.check(s, *names) == z3.sat:
        raise MethodFailed("weakening: the projection is consistent with B")
    core_ids = {n.get_id() for n in s.unsat_core()}
    kept = [c for n, c in zip(names, parts) if n.get_id() in core_ids]
    return all_of(kept, p.ctx)
