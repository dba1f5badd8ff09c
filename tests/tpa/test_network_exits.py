"""The multi-loop search's reached set after a loop (`network.reached_exits`): only states truly reachable in
exactly the path's number of steps (an under-approximation of the loop's image, which the search relies on), yet
not pinned to the path's values of what the loop leaves unchanged."""
from __future__ import annotations

import random

import pytest
import z3

from looprover.deadline import Deadline
from looprover.smt.ts import TransitionSystem
from looprover.tpa.network import reached_exits


def _counter(step: int):
    """i counts up by `step` while i < n; n is never written (the bound a later loop reads)."""
    i, n, i1, n1 = z3.Ints("i n i' n'")
    ts = TransitionSystem([i, n], [i1, n1], z3.And(i == 0, n >= 0), z3.And(i < n, i1 == i + step, n1 == n),
                          z3.BoolVal(False))
    return ts, i, n


def _reachable_in(ts: TransitionSystem, init, bad, k: int, target) -> bool:
    """Is every state of `target` reachable from `init` in exactly k steps into `bad`? (LIA quantifiers: z3 decides.)"""
    steps = [ts.step_vars(j) for j in range(k + 1)]
    aux = [v for j in range(k) for _, v in ts.step_substitution(j)[2 * len(ts.state):]]
    inner = z3.And([ts.at(init, 0)] + [ts.trans_at(j) for j in range(k)] + [ts.at(bad, k)]
                   + [a == b for a, b in zip(steps[k], ts.state)])
    hidden = [v for vs in steps for v in vs] + aux
    claim = z3.ForAll(ts.state, z3.Implies(target, z3.Exists(hidden, inner)))
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def test_the_loop_bound_is_not_pinned_to_the_paths_value():
    ts, i, n = _counter(1)
    bad = i >= 5
    path = [(j, 7) for j in range(6)]                 # 5 steps with n = 7
    target = reached_exits(ts, ts.init, bad, path, Deadline.after(30))
    assert target is not None
    holds = lambda iv, nv: z3.is_true(z3.simplify(z3.substitute(target, (i, z3.IntVal(iv)), (n, z3.IntVal(nv)))))
    assert holds(5, 7)                                # the path's own end
    assert holds(5, 1000)                             # any bound the five steps allow, not only the path's
    assert not holds(5, 4)                            # the fifth step needs i = 4 < n
    assert _reachable_in(ts, ts.init, bad, 5, target)


@pytest.mark.parametrize("seed", range(12))
def test_every_state_of_the_reached_set_is_reachable_in_exactly_k_steps(seed):
    rng = random.Random(seed)
    step, k, slack = rng.randint(1, 3), rng.randint(1, 6), rng.randint(0, 20)
    ts, i, n = _counter(step)
    bad = i >= step * k
    path = [(step * j, step * k + slack) for j in range(k + 1)]
    target = reached_exits(ts, ts.init, bad, path, Deadline.after(30))
    assert target is not None
    assert _reachable_in(ts, ts.init, bad, k, target)


def test_no_reached_set_for_a_path_that_is_not_one_or_too_long():
    ts, i, n = _counter(1)
    assert reached_exits(ts, ts.init, i >= 2, [(0, 3), (5, 3), (6, 3)], Deadline.after(30)) is None
    assert reached_exits(ts, ts.init, i >= 0, [(0, 3)], Deadline.after(30)) is None          # no step
    assert reached_exits(ts, ts.init, i >= 0, None, Deadline.after(30)) is None


def test_a_quotient_the_loop_tracks_does_not_pin_the_dividend():
    """x grows by 101 and q must equal x div 100 at every step (fm24 const_div): the exits after 3 steps are
    every x whose quotients fit, not only the path's x. Projecting the `div` terms themselves fixed x."""
    c, x, q, c1, x1, q1 = z3.Ints("c x q c' x' q'")
    ts = TransitionSystem([c, x, q], [c1, x1, q1], c == 0,
                          z3.And(c < 3, c1 == c + 1, x1 == x + 101, x / 100 == q, q1 == q + 1), z3.BoolVal(False))
    bad = c >= 3
    path = [(j, 5 + 101 * j, (5 + 101 * j) // 100) for j in range(4)]
    target = reached_exits(ts, ts.init, bad, path, Deadline.after(30))
    assert target is not None
    ends = z3.Solver()
    ends.add(target, x != 5 + 3 * 101)
    assert ends.check() == z3.sat                     # another dividend than the path's
    assert _reachable_in(ts, ts.init, bad, 3, target)
