"""Transition systems over z3 terms: the common input of k-induction, TPA and the multi-loop engine.

A system is (x, Init(x), Tr(x, x', aux), Bad(x)). `state[i]` and `next[i]` are the current and primed copy of
the i-th state variable; any other constant in `trans` is auxiliary (implicitly existentially quantified per
step). Engines unroll it by renaming: step j of an unrolling uses `at(f, j)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import z3


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

    def step_vars(self, j: int) -> list[z3.ExprRef]:
        """The copy of the state variables for time step j (fresh constants named `x@j`)."""
        return [z3.Const(f"{v}@{j}", v.sort()) for v in self.state]

    @cached_property
    def aux_vars(self) -> list[z3.ExprRef]:
        """Constants of `trans` that are neither state nor next variables."""
        known = {v.get_id() for v in self.state + self.next}
        return [c for c in _constants(self.trans) if c.get_id() not in known]

    def at(self, formula: z3.ExprRef, j: int) -> z3.ExprRef:
        """A state formula at step j."""
        return z3.substitute(formula, *zip(self.state, self.step_vars(j)))

    def trans_at(self, j: int) -> z3.ExprRef:
        """Tr from step j to step j+1, with its auxiliary variables renamed apart per step."""
        pairs = list(zip(self.state, self.step_vars(j))) + list(zip(self.next, self.step_vars(j + 1)))
        pairs += [(a, z3.Const(f"{a}@aux{j}", a.sort())) for a in self.aux_vars]
        return z3.substitute(self.trans, *pairs)


def _constants(f: z3.ExprRef) -> list[z3.ExprRef]:
    """Uninterpreted constants of a formula, each once, in first-seen order."""
    seen: dict[int, z3.ExprRef] = {}
    todo = [f]
    visited: set[int] = set()
    while todo:
        t = todo.pop()
        if t.get_id() in visited:
            continue
        visited.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            seen.setdefault(t.get_id(), t)
        todo.extend(t.children())
    return list(seen.values())
