"""Transition systems over z3 terms: the common input of k-induction, TPA and the multi-loop engine.

A system is (x, Init(x), Tr(x, x', aux), Bad(x)). `state[i]` and `next[i]` are the current and primed copy of
the i-th state variable; any other constant in `trans` is auxiliary (implicitly existentially quantified per
step). Engines unroll it by renaming: step j of an unrolling uses `at(f, j)` and `trans_at(j)`, and
`step_substitution(j)` is that one renaming for anyone who must evaluate the system's terms at step j (the
counterexample replay of `CPGSystem`). The names `x@j` and `a@auxj` are made here and nowhere else.

Systems are built from a program in `smt/systems.py`. Algorithms that keep Tr and change the query (TPA's
Init/Bad per multi-loop query, its certificate checks) or keep the query and change Tr (the wrap-free split)
derive a system with `with_query` / `with_trans`; `restricted` abstracts state variables away (the multi-loop
engine's per-loop vocabularies). Deriving never re-encodes anything: the formulas are shared.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

import z3

from looprover.smt.mbp import free_constants


@dataclass
class TransitionSystem:
    state: list[z3.ExprRef]
    next: list[z3.ExprRef]
    init: z3.BoolRef
    trans: z3.BoolRef
    bad: z3.BoolRef
    names: list[str] = field(default_factory=list)   # display names of the state variables (C names)

    def __post_init__(self) -> None:
        assert len(self.state) == len(self.next)
        if not self.names:
            self.names = [str(v) for v in self.state]

    # ------------------------------------------------------------------------------------------ unrolling
    def step_vars(self, j: int) -> list[z3.ExprRef]:
        """The copy of the state variables for time step j (fresh constants named `x@j`). Memoised: replaying a
        1000-step TPA counterexample made 43,000 of these constants, 6 s of a 30 s run."""
        memo = self.__dict__.setdefault("_step_memo", {})
        vs = memo.get(j)
        if vs is None:
            vs = memo[j] = [step_var(v, j) for v in self.state]
        return list(vs)

    @cached_property
    def aux_vars(self) -> list[z3.ExprRef]:
        """Constants of `trans` that are neither state nor next variables."""
        known = {v.get_id() for v in self.state + self.next}
        return [c for c in free_constants(self.trans) if c.get_id() not in known]

    def at(self, formula: z3.ExprRef, j: int) -> z3.ExprRef:
        """A state formula at step j."""
        return z3.substitute(formula, *zip(self.state, self.step_vars(j)))

    def step_substitution(self, j: int, aux: Iterable[z3.ExprRef] | None = None
                          ) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """The renaming of step j: state -> @j, next -> @j+1, auxiliaries (`aux_vars`, or `aux`) -> @auxj."""
        pairs = list(zip(self.state, self.step_vars(j))) + list(zip(self.next, self.step_vars(j + 1)))
        memo = self.__dict__.setdefault("_aux_memo", {})
        for a in self.aux_vars if aux is None else aux:
            key = (a.get_id(), j)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = (a, z3.Const(f"{_name(a)}@aux{j}", a.sort()))     # a kept alive: ids are reused
            pairs.append(hit)
        return pairs

    def trans_at(self, j: int) -> z3.ExprRef:
        """Tr from step j to step j+1, with its auxiliary variables renamed apart per step."""
        return z3.substitute(self.trans, *self.step_substitution(j))

    # ------------------------------------------------------------------------------------------ derived systems
    def with_query(self, init: z3.BoolRef, bad: z3.BoolRef) -> TransitionSystem:
        """The same Tr with another Init and Bad (over the same state); `self` when both are unchanged."""
        if init is self.init and bad is self.bad:
            return self
        return TransitionSystem(list(self.state), list(self.next), init, self.trans, bad, list(self.names))

    def with_trans(self, trans: z3.BoolRef) -> TransitionSystem:
        """The same state, Init and Bad with another Tr."""
        return TransitionSystem(list(self.state), list(self.next), self.init, trans, self.bad, list(self.names))

    def restricted(self, keep: Iterable[z3.ExprRef]) -> TransitionSystem:
        """The system over the state variables in `keep` (order kept): the others and their primed copies
        become auxiliaries (`x!dead`, `x'!dead`), which makes Tr `∃ others, others'. Tr` -- an
        over-approximation, exact when Tr does not read them. Init and Bad must not mention them."""
        ids = {x.get_id() for x in keep}
        pairs, xs, x1s, names = [], [], [], []
        for x, x1, name in zip(self.state, self.next, self.names):
            if x.get_id() in ids:
                xs.append(x)
                x1s.append(x1)
                names.append(name)
            else:
                pairs += [(x, z3.Const(f"{x}!dead", x.sort())), (x1, z3.Const(f"{x1}!dead", x1.sort()))]
        trans = _drop_definitions(z3.substitute(self.trans, *pairs), [d for _, d in pairs]) if pairs \
            else self.trans
        return TransitionSystem(xs, x1s, self.init, trans, self.bad, names)


def step_var(x: z3.ExprRef, j: int) -> z3.ExprRef:
    """The copy of one state variable for time step j (`TransitionSystem.step_vars` for a single variable)."""
    return z3.Const(f"{_name(x)}@{j}", x.sort())


def _name(c: z3.ExprRef) -> str:
    """A constant's name without z3's pretty printer (`str(c)`, the same text for a constant, took 0.25 ms a
    call: a third of the time to unroll a 406-step counterexample path)."""
    return c.decl().name() if z3.is_const(c) else str(c)


def _drop_definitions(f: z3.BoolRef, fresh: list[z3.ExprRef]) -> z3.BoolRef:
    """Drop top-level conjuncts `d == t` whose `d` is one of `fresh` and occurs nowhere else (∃d. d == t is
    true): the frame equations of abstracted variables would only burden TPA's interpolation."""
    parts = list(f.children()) if z3.is_and(f) else [f]
    count: Counter = Counter(c.get_id() for p in parts for c in free_constants(p))
    ids = {d.get_id() for d in fresh}

    def droppable(p: z3.BoolRef) -> bool:
        return z3.is_eq(p) and any(a.get_id() in ids and count[a.get_id()] == 1 and
                                   not any(a.eq(c) for c in free_constants(b)) for a, b in
                                   ((p.arg(0), p.arg(1)), (p.arg(1), p.arg(0))))

    keep = [p for p in parts if not droppable(p)]
    return keep[0] if len(keep) == 1 else z3.And(keep) if keep else z3.BoolVal(True, f.ctx)
