"""The one Houdini (smt/houdini.py): initiation, consecution relative to the survivors, the greatest fixed point."""
from __future__ import annotations

import itertools
import random

import pytest
import z3

from looprover.deadline import Deadline
from looprover.smt.houdini import houdini


def test_keeps_the_largest_inductive_subset():
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    trans = z3.And(x1 == x + 1, y1 == y + x)
    cands = [x >= 0, y >= 0, x <= 10, y == 0]
    post = [z3.substitute(c, (x, x1), (y, y1)) for c in cands]
    # y >= 0 is inductive only together with x >= 0; x <= 10 is not inductive; y == 0 fails from the start
    alive = houdini([trans], cands, post, Deadline.after(10), init=z3.And(x == 0, y == 1))
    assert alive == [0, 1]


def test_relative_to_survivors_drops_dependents():
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    trans = z3.And(x1 == x - 1, y1 == y + x)
    cands = [x >= 0, y >= 0]              # x >= 0 fails, and y >= 0 needs it
    post = [z3.substitute(c, (x, x1), (y, y1)) for c in cands]
    assert houdini([trans], cands, post, None) == []
    assert houdini([trans], [], [], None) == []


def _inductive(trans, init, cands, post, subset) -> bool:
    """Brute force: `subset` holds initially and is closed under trans (each candidate relative to all)."""
    s = z3.Solver()
    if init is not None:
        s.add(init, z3.Or([z3.Not(cands[i]) for i in subset] or [z3.BoolVal(False)]))
        if s.check() != z3.unsat:
            return False
    s = z3.Solver()
    s.add(trans, *(cands[i] for i in subset), z3.Or([z3.Not(post[i]) for i in subset] or [z3.BoolVal(False)]))
    return s.check() == z3.unsat


@pytest.mark.parametrize("seed", range(12))
def test_random_candidates_give_the_largest_inductive_subset(seed):
    """Against brute force over all subsets: the result is inductive and contains every inductive subset."""
    rng = random.Random(seed)
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    a, b, c = rng.choice([-1, 0, 1, 2]), rng.choice([-1, 0, 1]), rng.choice([0, 1, 3])
    trans = z3.And(x1 == x + a, y1 == y + b * x + c)
    init = z3.And(x == rng.randint(-2, 2), y == rng.randint(-2, 2))
    atoms = [lambda u, v, k=k: u >= k for k in range(-2, 3)] + [lambda u, v, k=k: v >= k for k in range(-2, 3)] \
        + [lambda u, v: u <= v, lambda u, v: (u - v) % 2 == 0, lambda u, v: v % 3 == 0, lambda u, v: u + v >= 0]
    picked = rng.sample(atoms, 6)
    cands = [f(x, y) for f in picked]
    post = [f(x1, y1) for f in picked]
    alive = houdini([trans], cands, post, Deadline.after(30), init=init)
    assert _inductive(trans, init, cands, post, alive)
    for r in range(len(cands) + 1):
        for subset in itertools.combinations(range(len(cands)), r):
            if _inductive(trans, init, cands, post, subset):
                assert set(subset) <= set(alive)


def test_each_consecution_round_gets_a_fresh_solver():
    """The consecution rounds do not share a solver (its learned state made their times depend on the run's
    history, see the module docstring): one solver for initiation, then one per round."""
    x, x1 = z3.Ints("x x1")
    trans = x1 == x + 1
    cands = [x >= 0, x >= 1, x <= 5, x <= 3]
    post = [z3.substitute(c, (x, x1)) for c in cands]
    made: list[z3.Solver] = []

    def new_solver() -> z3.Solver:
        made.append(z3.Solver())
        return made[-1]
    alive = houdini([trans], cands, post, Deadline.after(10), init=x == 0, new_solver=new_solver)
    assert alive == [0]
    # initiation drops x >= 1; at least one round drops an upper bound and a last one finds no model
    assert len(made) >= 3 and len({id(s) for s in made}) == len(made)


class _DropEvery:
    """A refuter that drops the alive candidates of `gone` whatever the model: right or wrong, Houdini's
    result must stay inductive."""

    def __init__(self, gone: set[int]):
        self.gone, self.calls = gone, 0

    def at_init(self, m, alive):
        self.calls += 1
        return self.gone & set(alive)

    def after_step(self, m, alive):
        self.calls += 1
        return self.gone & set(alive)


@pytest.mark.parametrize("seed", range(8))
def test_a_refuter_s_drops_never_make_the_result_non_inductive(seed):
    """Whatever a refuter drops (here: arbitrary candidates, some of them inductive), the loop still ends at an
    inductive subset of what the plain run keeps: a wrong drop can cost a proof, never make one."""
    rng = random.Random(seed)
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    trans = z3.And(x1 == x + rng.choice([0, 1, 2]), y1 == y + x)
    init = z3.And(x == rng.randint(0, 2), y == rng.randint(0, 2))
    atoms = [lambda u, v, k=k: u >= k for k in range(-1, 3)] + [lambda u, v, k=k: v >= k for k in range(-1, 3)] \
        + [lambda u, v: u <= v, lambda u, v: u + v >= 0, lambda u, v: v <= 7]
    cands = [f(x, y) for f in atoms]
    post = [f(x1, y1) for f in atoms]
    plain = houdini([trans], cands, post, Deadline.after(30), init=init)
    refuter = _DropEvery(set(rng.sample(range(len(cands)), 3)))
    alive = houdini([trans], cands, post, Deadline.after(30), init=init, refute=refuter)
    assert refuter.calls > 0
    assert _inductive(trans, init, cands, post, alive)
    assert set(alive) <= set(plain) and not set(alive) & refuter.gone
