"""States seen in short random runs of the concrete interpreter: the `samples` of a `Site`.

Why here: the domains read their bounds, offsets, residues and lines off these states, and the state driver
drops every atom some sampled (hence reachable) state falsifies, before Houdini sees it. Inputs are small
numbers mostly, with a few type extremes, so wrap-around paths get sampled too.
"""
from __future__ import annotations

import random
from typing import Any

from looprover.deadline import Deadline
from looprover.program.cfa import Program
from looprover.program.expr import BoolType, IntType, Var
from looprover.program.interp import ArrayValue, Evaluator, Oracle, UndefinedBehavior, commit, try_edge


class _RandomOracle(Oracle):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def __call__(self, v: Var):
        return _random_value(self.rng, v.type)


def _random_value(rng: random.Random, t) -> Any:
    if isinstance(t, BoolType):
        return rng.random() < 0.5
    if isinstance(t, IntType):
        r = rng.random()
        if r < 0.75 or not t.bounded:
            return t.wrap(rng.randint(-4, 16)) if t.bounded else rng.randint(-4, 16)
        if r < 0.85:
            return rng.choice([t.min, t.max, t.min + 1, t.max - 1])
        return rng.randint(t.min, t.max)
    return ArrayValue(_random_value(rng, t.elem))


def sample_states(program: Program, points: set[int], seed: int = 0, runs: int = 32, max_steps: int = 600,
                  per_point: int = 200, bitvector: bool = False, deadline: Deadline | None = None,
                  arrays: bool = False) -> dict[int, list[dict]]:
    """States (scalar variables, and copies of the arrays with `arrays`) seen at `points` in random runs of the
    concrete interpreter."""
    rng = random.Random(seed)
    out: dict[int, list[dict]] = {p: [] for p in points}
    scalars = [(n, i.var.type) for n, i in program.variables.items() if not hasattr(i.var.type, "elem")]
    arrs = [n for n, i in program.variables.items() if arrays and hasattr(i.var.type, "elem")]
    for _ in range(runs):
        if deadline is not None and deadline.expired():
            break
        ev = Evaluator("wrap" if bitvector else "math")
        oracle = _RandomOracle(rng)
        state = {n: _random_value(rng, i.var.type) for n, i in program.variables.items()}
        loc = program.init
        try:
            for _ in range(max_steps):
                if loc in out and len(out[loc]) < per_point:
                    out[loc].append({**{n: state[n] for n, _ in scalars}, **{n: state[n].copy() for n in arrs}})
                if loc == program.exit:
                    break
                edges = list(program.out_edges(loc))
                rng.shuffle(edges)
                moved = False
                for e in edges:
                    r = try_edge(ev, e, state, oracle)
                    if r.blocked is not None:
                        continue
                    if r.violated is not None:
                        break
                    state = commit(r)
                    loc, moved = e.dst, True
                    break
                if not moved:
                    break
        except (UndefinedBehavior, KeyError, TypeError):
            continue
    return out
