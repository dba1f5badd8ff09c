"""Helper for the domain tests: a z3 loop body as a `StepSite`."""
from __future__ import annotations

import z3

from looprover.domains import StepSite


def step_site(x, x1, trans, atoms=(), deltas=()) -> StepSite:
    nums = [(v, w) for v, w in zip(x, x1) if v.sort().kind() == z3.Z3_INT_SORT]
    return StepSite(nums, [list(d) for d in deltas], list(atoms), lambda f: z3.substitute(f, *zip(x, x1)),
                    z3.main_ctx())
