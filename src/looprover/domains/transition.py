"""Relations over (x, x') of a loop body, for TPA's seed lemmas (`tpa/seeds.py` checks and filters them).

Why a driver: the steps the relational domains read their coefficients from (`StepSite.deltas`) come from a
few models of Tr, taken once here for all domains; the domains are then asked in one fixed order
(`TRANSITION_DOMAINS`): per variable, then for the whole body. Candidates are simplified, deduplicated and capped
-- the same list, in the same order, that the seed generator produced before.
"""
from __future__ import annotations

from typing import Callable

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


def sample_steps(trans: z3.BoolRef, nums: list[tuple[z3.ExprRef, z3.ExprRef]], ctx: z3.Context,
                 deadline: Deadline) -> list[list[int]]:
    """The steps x' - x of up to MAX_MODELS models of `trans`, each differing from the previous ones."""
    s = z3.Solver(ctx=ctx)
    s.add(trans)
    out: list[list[int]] = []
    for _ in range(MAX_MODELS):
        if check(s, deadline, cap=1.0) != z3.sat:
            break
        m = s.model()
        d = [m.eval(w - v, model_completion=True).as_long() for v, w in nums]
        out.append(d)
        s.add(z3.Or([w - v != dv for (v, w), dv in zip(nums, d)]))
    return out


def transition_candidates(x: list[z3.ExprRef], x1: list[z3.ExprRef], trans: z3.BoolRef, atoms: list[z3.BoolRef],
                          to_post: Callable[[z3.ExprRef], z3.ExprRef], relational: bool, deadline: Deadline,
                          ctx: z3.Context, domains: tuple[Domain, ...] = TRANSITION_DOMAINS) -> list[z3.BoolRef]:
    """Candidate relations: per-variable and sampled-step templates (`relational`, they depend on Tr alone) and
    the templates of the comparison `atoms` (over x; `to_post` renames them to x')."""
    cands: list[z3.BoolRef] = []
    for v, w in zip(x if relational else [], x1):
        for d in domains:
            cands += d.var_relations(v, w)
    nums = [(v, w) for v, w in zip(x, x1) if v.sort().kind() == z3.Z3_INT_SORT]
    deltas = sample_steps(trans, nums, ctx, deadline) if relational and nums else []
    site = StepSite(nums, deltas, atoms, to_post, ctx)
    for d in domains:
        cands += d.relations(site)
    uniq: dict[int, z3.BoolRef] = {}
    for c in cands:
        c = z3.simplify(c)
        if not z3.is_true(c) and not z3.is_false(c):
            uniq.setdefault(c.get_id(), c)
    return list(uniq.values())[:MAX_CANDIDATES]
