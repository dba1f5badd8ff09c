"""Relations over (x, x') of a loop body, for TPA's seed lemmas (`tpa/seeds.py` checks and filters them).

Why a driver: the steps the relational domains read their coefficients from (`StepSite.deltas`) come from a
few models of Tr, taken once here for all domains (`SampledSteps`); the domains are then asked in one fixed order
(`TRANSITION_DOMAINS`): per variable, then for the whole body. Candidates are simplified, deduplicated and capped
-- the same list, in the same order, that the seed generator produced before.
"""
from __future__ import annotations

from typing import Callable, Iterator

import z3

from looprover.deadline import Deadline
from looprover.domains.base import Domain, StepSite
from looprover.domains.booleans import Booleans
from looprover.domains.congruence import Congruence
from looprover.domains.intervals import Intervals
from looprover.domains.linear import Linear
from looprover.domains.zones import Zones
from looprover.smt.solver import check

MAX_MODELS = 4
MAX_CANDIDATES = 300

TRANSITION_DOMAINS: tuple[Domain, ...] = (Zones(), Booleans(), Linear(), Congruence(), Intervals())


class SampledSteps:
    """The steps x' - x of up to MAX_MODELS models of `trans`, each differing from the previous ones, taken lazily
    while a domain iterates (and cached for the next one).

    Lazily because z3's models depend on the terms created before a check: the seed generator built each
    model's difference equalities before asking for the next model (and held the last model until then), and
    taking the models in that rhythm (the linear domain iterates first) keeps the candidate list exactly what it
    was (measured: without it, 3 of the 20 TPA test systems got other models, hence other candidates)."""

    def __init__(self, trans: z3.BoolRef, nums: list[tuple[z3.ExprRef, z3.ExprRef]], ctx: z3.Context,
                 deadline: Deadline):
        self.trans, self.nums, self.ctx, self.deadline = trans, nums, ctx, deadline
        self.got: list[list[int]] = []
        self.solver: z3.Solver | None = None
        self.model: z3.ModelRef | None = None
        self.done = False

    def __iter__(self):
        i = 0
        while i < len(self.got) or self._more():
            yield self.got[i]
            i += 1

    def _more(self) -> bool:
        if self.done:
            return False
        if self.solver is None:
            self.solver = z3.Solver(ctx=self.ctx)
            self.solver.add(self.trans)
        else:                                   # exclude the last model's steps
            self.solver.add(z3.Or([w - v != dv for (v, w), dv in zip(self.nums, self.got[-1])]))
        if len(self.got) >= MAX_MODELS or check(self.solver, self.deadline, cap=1.0) != z3.sat:
            self.done = True
            return False
        m = self.model = self.solver.model()     # kept until the next check, as the seed generator did
        self.got.append([m.eval(w - v, model_completion=True).as_long() for v, w in self.nums])
        return True


def transition_candidates(x: list[z3.ExprRef], x1: list[z3.ExprRef], trans: z3.BoolRef, atoms: list[z3.BoolRef],
                          to_post: Callable[[z3.ExprRef], z3.ExprRef], relational: bool, deadline: Deadline,
                          ctx: z3.Context, domains: tuple[Domain, ...] = TRANSITION_DOMAINS) -> list[z3.BoolRef]:
    """Candidate relations: per-variable and sampled-step templates (`relational`, they depend on Tr alone) and
    the templates of the comparison `atoms` (over x; `to_post` renames them to x')."""
    uniq: dict[int, z3.BoolRef] = {}
    for c in _candidate_stream(x, x1, trans, atoms, to_post, relational, deadline, ctx, domains):
        c = z3.simplify(c)
        if not z3.is_true(c) and not z3.is_false(c):
            uniq.setdefault(c.get_id(), c)
            if len(uniq) >= MAX_CANDIDATES:
                break
    return list(uniq.values())


def _candidate_stream(x: list[z3.ExprRef], x1: list[z3.ExprRef], trans: z3.BoolRef, atoms: list[z3.BoolRef],
                      to_post: Callable[[z3.ExprRef], z3.ExprRef], relational: bool, deadline: Deadline,
                      ctx: z3.Context, domains: tuple[Domain, ...]) -> Iterator[z3.BoolRef]:
    """The candidates in their fixed order, made only as far as they are read: the cap is often reached by the
    per-variable templates of a wide system, and the sampled-step templates of n variables are n² terms
    (measured: 20,000 built and dropped, 5.9 of a 14 s profiled run on 159 variables; issue 27's profile)."""
    for v, w in zip(x if relational else [], x1):
        for d in domains:
            yield from d.var_relations(v, w)
    nums = [(v, w) for v, w in zip(x, x1) if v.sort().kind() == z3.Z3_INT_SORT]
    deltas = SampledSteps(trans, nums, ctx, deadline) if relational and nums else []
    site = StepSite(nums, deltas, atoms, to_post, ctx)
    for d in domains:
        yield from d.relations(site)
