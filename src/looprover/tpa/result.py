"""Result objects of the TPA core and the small vocabulary layer they share with the checkers.

Why a separate module: the certificate checkers (`certify.py`) must not depend on the engine that produced the
certificate -- a SAFE/UNSAFE answer is only as good as a check that does not trust the search.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

import z3

from looprover.errors import GiveUp
from looprover.smt.ts import TransitionSystem
from looprover.smt.terms import Renaming

Value = int | bool | Fraction
State = tuple[Value, ...]          # one value per state variable, in `ts.state` order


class TPAStatus(str, Enum):
    SAFE = "SAFE"
    UNSAFE = "UNSAFE"
    UNKNOWN = "UNKNOWN"


@dataclass
class SafeCertificate:
    """A safe transition invariant TI(x, x') over `ts.state`/`ts.next` (no auxiliary variables).

    kind "right": TI ⊇ Id and TI∘Tr ⊆ TI on Init-sources, so `Inv(x') = ∃x. Init(x) ∧ TI(x, x')` is an
    inductive invariant; checked as `Init ⇒ TI(x,x)`, `Init ∧ TI(x,x') ∧ Tr(x',x'') ⇒ TI(x,x'')`,
    `Init ∧ TI ∧ Bad'` unsat.
    kind "left": the mirror image on Bad-targets, so `¬∃x'. TI(x, x') ∧ Bad(x')` is an inductive invariant;
    checked as `Bad ⇒ TI(x,x)`, `Tr(x,x') ∧ TI(x',x'') ∧ Bad(x'') ⇒ TI(x,x'')`, `Init ∧ TI ∧ Bad'` unsat.
    `restricted` says whether closure only holds from Init (right) or towards Bad (left); `level` is the TPA level
    whose abstraction it came from.
    kinds "split-right"/"split-left" (split TPA's exact fixed point): `chain` = ((E_1, L_1), …, (E_i, L_i)) for
    i = `level`, with E_0 = Tr and L_0 = Id, each step checked as `E_k∘E_k ⊆ E_{k+1}`, `L_k ⊆ L_{k+1}`,
    `L_k∘E_k ⊆ L_{k+1}` (so E_i ⊇ Tr^{=2^i}, L_i ⊇ Tr^{<2^i}); E_i is transitive (unrestricted, or restricted:
    right, its first state in Init∘L_i; left, its last state in L_i∘Bad), so every path is in `L_i ∨ L_i∘E_i`
    (right) or `L_i ∨ E_i∘L_i` (left), and neither meets Init and Bad. `ti` is E_i. `state_invariant` (over `ts.state`) is filled in when QE made it cheap, and only
    after it was itself checked inductive and safe.
    """
    kind: str
    ti: z3.BoolRef
    level: int
    restricted: bool = False
    state_invariant: z3.BoolRef | None = None
    checked: bool = False
    chain: tuple[tuple[z3.BoolRef, z3.BoolRef], ...] = ()


@dataclass
class UnsafeWitness:
    """Bad is reachable in exactly `depth` steps of Tr.

    `initial` is a concrete initial state from which a path of exactly `depth` steps ends in `final` ∈ Bad.
    `path` (all depth+1 states) is present when it was replayed by an exact BMC query (depth ≤ the replay limit).
    `waypoints` are (step index, state) pairs of the path that the search established; for deep counterexamples
    they (and `initial`) are what a caller replays the original program from. `checked` says how the path was
    confirmed: "bmc" (whole path replayed by a fresh solver), or "segments" (every waypoint-to-waypoint segment
    of at most the replay limit replayed; a longer one must be an exact power 2^j whose formula E_j holds between
    its ends, with E_j re-validated as an iterated composition of Tr -- see `certify.replay_counterexample`).
    """
    depth: int
    initial: State
    final: State
    path: list[State] | None = None
    waypoints: list[tuple[int, State]] = field(default_factory=list)
    checked: str = ""
    names: list[str] = field(default_factory=list)
    target: z3.BoolRef | None = None     # over `ts.state`: ⊆ Bad, all reachable (MBP-refined post states)

    def named(self, state: State) -> dict[str, Value]:
        return dict(zip(self.names, state))


@dataclass
class TPAResult:
    status: TPAStatus
    reason: str = ""
    certificate: SafeCertificate | None = None
    witness: UnsafeWitness | None = None
    stats: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------- vocabulary
def value_of(v: z3.ExprRef) -> Value:
    """A Python value for a z3 numeral/Boolean of an evaluated model term."""
    if isinstance(v, (z3.IntNumRef, z3.BitVecNumRef)):     # the common case first, without API calls
        return v.as_long()
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_bv_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    raise GiveUp(f"cannot read a concrete value from {v} (sort {v.sort()})")


def z3_value(val: Value, sort: z3.SortRef) -> z3.ExprRef:
    if sort.kind() == z3.Z3_BOOL_SORT:
        return z3.BoolVal(bool(val), sort.ctx)
    if sort.kind() == z3.Z3_INT_SORT:
        return z3.IntVal(int(val), sort.ctx)
    if sort.kind() == z3.Z3_REAL_SORT:
        return z3.RealVal(val, sort.ctx)
    if sort.kind() == z3.Z3_BV_SORT:
        return z3.BitVecVal(int(val), sort.size(), sort.ctx)
    raise GiveUp(f"unsupported state sort {sort}")


def state_of(model: z3.ModelRef, vars_: list[z3.ExprRef]) -> State:
    return tuple(value_of(model.eval(v, model_completion=True)) for v in vars_)


def is_state(vars_: list[z3.ExprRef], state: State, ctx: z3.Context | None = None) -> z3.BoolRef:
    """The formula `vars = state` (a point)."""
    if not vars_:
        return z3.BoolVal(True, ctx)
    eqs = [v == z3_value(val, v.sort()) for v, val in zip(vars_, state)]
    return eqs[0] if len(eqs) == 1 else z3.And(eqs)


class Vocabulary:
    """The copies of the state variables the algorithm needs and the renamings between them.

    x = `ts.state`, x' = `ts.next`, x'' = fresh `v!tpa2`; step copies `v!s<t>` for unrollings. Auxiliary
    variables of Tr get a fresh copy per use (`aux_copy`), so two copies of Tr never share a choice.
    """

    def __init__(self, ts: TransitionSystem):
        self.ts = ts
        self.ctx = ts.init.ctx
        self.x = list(ts.state)
        self.x1 = list(ts.next)
        self.x2 = [z3.Const(f"{v}!tpa2", v.sort()) for v in self.x]
        self.aux = list(ts.aux_vars)
        self._aux_counter = 0
        self._step_vars: dict[int, list[z3.ExprRef]] = {}
        self._aux_copies: dict[str, list[z3.ExprRef]] = {}
        self._renamed: dict[tuple, tuple[z3.ExprRef, z3.ExprRef]] = {}
        self._renamings: dict[tuple, Renaming] = {}

    # renamings (simultaneous, so swaps are safe). Memoised: TPA renames the same level lemmas into the same
    # copies over and over (measured: 12,000 substitutions, 3.2 s of a 20 s split-TPA run); the memo keeps the
    # source term alive, since z3 reuses the ids of collected terms. Each (frm, to) pair of variable lists gets
    # one prepared `Renaming`, found by the Python identities of the variables (which it keeps alive): keying
    # by z3 ids and letting `z3.substitute` re-check every pair cost 9 of 23 profiled seconds on a
    # 159-variable system (issue 27's profile).
    def _renaming(self, frm: list[z3.ExprRef], to: list[z3.ExprRef]) -> Renaming:
        key = (tuple(map(id, frm)), tuple(map(id, to)))
        r = self._renamings.get(key)
        if r is None:
            r = self._renamings[key] = Renaming(list(zip(frm, to)))
        return r

    def _sub(self, f: z3.ExprRef, frm: list[z3.ExprRef], to: list[z3.ExprRef]) -> z3.ExprRef:
        if not frm:
            return f
        r = self._renaming(frm, to)
        key = (f.get_id(), id(r))
        hit = self._renamed.get(key)
        if hit is None:
            hit = self._renamed[key] = (f, r(f))
        return hit[1]

    def cur_to(self, f: z3.ExprRef, to: list[z3.ExprRef]) -> z3.ExprRef:
        return self._sub(f, self.x, to)

    def rel_to(self, f: z3.ExprRef, a: list[z3.ExprRef], b: list[z3.ExprRef]) -> z3.ExprRef:
        """A relation over (x, x') re-expressed over (a, b)."""
        return self._sub(f, self.x + self.x1, a + b) if self.x else f

    def identity(self, a: list[z3.ExprRef], b: list[z3.ExprRef]) -> z3.BoolRef:
        eqs = [u == v for u, v in zip(a, b)]
        if not eqs:
            return z3.BoolVal(True, self.ctx)
        return eqs[0] if len(eqs) == 1 else z3.And(eqs)

    def aux_copy(self, tag: str) -> list[z3.ExprRef]:
        """The auxiliaries' copy `tag` (memoised: a deep query renames Tr a thousand times; measured 3.6 s of a
        20 s multi-loop run making these constants)."""
        vs = self._aux_copies.get(tag)
        if vs is None:
            vs = self._aux_copies[tag] = [z3.Const(f"{a}!{tag}", a.sort()) for a in self.aux]
        return vs

    def trans(self, a: list[z3.ExprRef], b: list[z3.ExprRef], tag: str | None) -> z3.BoolRef:
        """Tr(a, b) with its auxiliary variables renamed to the copy `tag` (None: the original aux names)."""
        frm = self.x + self.x1
        to = a + b
        if tag is not None and self.aux:
            frm = frm + self.aux
            to = to + self.aux_copy(tag)
        return self._sub(self.ts.trans, frm, to)

    def fresh_tag(self, prefix: str) -> str:
        self._aux_counter += 1
        return f"{prefix}{self._aux_counter}"

    def step(self, t: int) -> list[z3.ExprRef]:
        vs = self._step_vars.get(t)
        if vs is None:
            # the declared name, not str(v): z3's printer took 1.1 of 8 s replaying a 3,000-step counterexample
            vs = [z3.Const(f"{v.decl().name()}!s{t}", v.sort()) for v in self.x]
            self._step_vars[t] = vs
        return vs
