"""Houdini: the largest subset of candidate formulas that is inductive relative to itself.

Why one function: k-induction (state invariants over the pc-encoded cutpoint system), TPA's fixed-point check
(transition-invariant conjuncts closed under one more step) and TPA's seed lemmas (reflexive-transitive template
facts) all run the same algorithm -- keep the candidates c_i with

    [init ⇒ at_init_i]  and  background ∧ ⋀_{j alive} pre_j ⇒ post_i,

dropping every candidate that some model falsifies, until no model exists. The result does not depend on the
models z3 returns: the inductive subsets are closed under union, and a candidate of the largest one is never
falsified while all of that subset is alive, so the loop ends at the greatest fixed point. The callers differ
only in what `pre`, `post`, `background` and `init` are (see `engines/kinduction.py`, `tpa/core.py`,
`tpa/seeds.py`); the witness validator's candidate filter (`witness/validate.inductive_subset`) runs the two
passes apart (`unrefuted` on executions a few steps long, then `consecutive`).

Solver use: one solver for the initiation pass, and for consecution a fresh solver per round, each
candidate's `pre` guarded by an assumption literal (with assumptions z3 uses its incremental core; the same
rounds asserted without assumptions went through z3's preprocessing tactics and took 3.0-11.6 s here). Why not one incremental solver across
the rounds (as before issue 14): its learned state made the rounds' times depend on the run's history. Measured
on loopv2 (113 candidates, 60 inductive, `%`-heavy consecution): one incremental solver took 1.5, 1.8 and 8.9 s
for the same Houdini run repeated in one process (the last round alone 0.3 s or 4.8 s; that round's query in a
fresh solver: 0.2-0.7 s under six random seeds), so k-induction's Houdini share of a 10 s run (1/3) ran out
in the CLI; a fresh solver per round: 0.8-1.3 s over eight repetitions.

A `Refuter` may drop more per round: the candidates false in some state reachable from the round's model state
(`evidence/certify.RunRefuter` runs the program from it). The model's pre-state satisfies every alive candidate,
hence the largest inductive subset, and so does every state reachable from it; a candidate false in one of them
is not in that subset. Whatever a refuter drops, the loop still ends at an inductive subset (the last round is
unsat over the candidates left), so a wrong drop could cost a proof, never make one.

A round whose model falsifies no alive candidate (an incomplete model) raises GiveUp instead of looping;
`unknown` raises OutOfTime or GiveUp (`smt.solver.check`). Callers that can do without the invariants catch
both.
"""
from __future__ import annotations

from typing import Callable, Collection, Protocol, Sequence

import z3

from looprover.deadline import Deadline
from looprover.errors import GiveUp
from looprover.smt.solver import add_all, check, holds_in
from looprover.smt.terms import any_of, mk_not


class Refuter(Protocol):
    """More candidates to drop, given a model of the initiation query (a state `init` allows) or of a
    consecution round (a step from a state of all alive candidates): the alive indices false in some state
    reachable from the model's state (see the module docstring)."""

    def at_init(self, m: z3.ModelRef, alive: list[int]) -> Collection[int]: ...

    def after_step(self, m: z3.ModelRef, alive: list[int]) -> Collection[int]: ...


def _survivors(m: z3.ModelRef, alive: list[int], forms: Sequence[z3.BoolRef]) -> list[int]:
    """The alive candidates whose form holds in m; m must falsify at least one (else we would loop forever)."""
    keep = [i for i in alive if holds_in(m, forms[i])]
    if len(keep) == len(alive):
        raise GiveUp("internal error: Houdini model violates no candidate")
    return keep


def _next_alive(m: z3.ModelRef, alive: list[int], forms: Sequence[z3.BoolRef],
                refute: Callable[[z3.ModelRef, list[int]], Collection[int]] | None) -> list[int]:
    """A round's survivors: those `m` does not falsify, less those the refuter finds false (see above)."""
    alive = _survivors(m, alive, forms)
    gone = set(refute(m, alive)) if refute is not None else set()
    return [i for i in alive if i not in gone] if gone else alive


def houdini(background: Sequence[z3.BoolRef], pre: Sequence[z3.BoolRef], post: Sequence[z3.BoolRef],
            deadline: Deadline | None, *, init: z3.BoolRef | None = None,
            at_init: Sequence[z3.BoolRef] | None = None,
            new_solver: Callable[[], z3.Solver] | None = None, refute: Refuter | None = None) -> list[int]:
    """Indices (ascending) of the largest subset H of the candidates with `init ⇒ at_init_i` (when `init` is
    given; `at_init` defaults to `pre`) and `background ∧ ⋀_{j∈H} pre_j ⇒ post_i` for every i in H.

    `pre[i]`/`post[i]` are candidate i read in the pre- and post-state; `new_solver` makes an empty solver
    (default: `z3.Solver` in the candidates' context); `refute` drops more per round (see the module
    docstring). Raises OutOfTime/GiveUp when the solver gives no answer."""
    assert len(pre) == len(post)
    if not pre:
        return []
    deadline = deadline if deadline is not None else Deadline.never()
    ctx = pre[0].ctx
    make = new_solver if new_solver is not None else (lambda: z3.Solver(ctx=ctx))
    alive = list(range(len(pre)))
    if init is not None:
        s0 = make()
        s0.add(init)
        alive = unrefuted(s0, list(at_init) if at_init is not None else list(pre), alive, deadline,
                          refute.at_init if refute is not None else None)
    return consecutive(background, pre, post, alive, deadline, make,
                       refute.after_step if refute is not None else None)


def unrefuted(s: z3.Solver, forms: Sequence[z3.BoolRef], alive: list[int], deadline: Deadline,
              refute: Callable[[z3.ModelRef, list[int]], Collection[int]] | None = None) -> list[int]:
    """The `alive` indices of `forms` that hold in every model of what `s` holds (initiation: the initial
    states, or the states of executions a few steps long); a model that falsifies some drops each it falsifies.
    (The negations are made once: a round drops few candidates, and remaking hundreds of `Not`s per round through
    z3's Python API cost as much as the checks; issue 27's profile.)"""
    neg = {i: mk_not(forms[i]) for i in alive}
    while alive:
        if check(s, deadline, any_of([neg[i] for i in alive], forms[alive[0]].ctx)) == z3.unsat:
            break
        alive = _next_alive(s.model(), alive, forms, refute)
    return alive


def consecutive(background: Sequence[z3.BoolRef], pre: Sequence[z3.BoolRef], post: Sequence[z3.BoolRef],
                alive: list[int], deadline: Deadline, make: Callable[[], z3.Solver],
                refute: Callable[[z3.ModelRef, list[int]], Collection[int]] | None = None) -> list[int]:
    """Houdini's consecution: the largest subset of the `alive` indices with `background ∧ ⋀ pre_j ⇒ post_i`."""
    if not alive:
        return []
    ctx = pre[0].ctx
    lits = [z3.Bool(f"!h{i}", ctx) for i in range(len(pre))]
    q = z3.Bool("!hq", ctx)
    guarded = {i: z3.Implies(lits[i], pre[i]) for i in alive}
    neg = {i: mk_not(post[i]) for i in alive}
    while alive:
        s = make()          # fresh per round: see the module docstring
        add_all(s, background)
        add_all(s, (guarded[i] for i in alive))
        s.add(z3.Implies(q, any_of([neg[i] for i in alive], ctx)))
        if check(s, deadline, q, *(lits[i] for i in alive)) == z3.unsat:
            break
        alive = _next_alive(s.model(), alive, post, refute)
    return alive
