"""`tpa/nested.py`: contracting a nested loop into a summary of its closure over-approximates it.

The direction is what makes a TRUE of the contracted network sound, so it is tested on concrete runs: random
inner-loop bodies (seeded random, the project does not use hypothesis), runs computed in Python from random
states, and every prefix of a run must satisfy the summary; every concrete iteration of the outer loop (enter,
run the inner loop to its exit, leave) must be a step of the contracted outer body.
"""
from __future__ import annotations

import itertools
import random

import z3

from looprover.deadline import Deadline
from looprover.smt.systems import Bridge, Network
from looprover.tpa.nested import check_summary, contract, contract_nested, eliminate, find_summary

ERR = "err"
NAMES = ["i", "j", "s", "t"]


def nested(d: dict[str, int], bound: int, outer: int) -> tuple[Network, dict]:
    """entry -> A: i, j, s, t := 0; A: `while (i < outer) { H: while (j < i + bound) { j += 1; s += d_s; t += s
    + d_t*i } ; i++; j := 0 }` (the inner body's increments from `d`), A -> err when s < 0 (whether reachable
    depends on d). Returns the network and its Python semantics (the functions of one inner step and of the
    guards) for the concrete runs."""
    xs = [z3.Int(n) for n in NAMES]
    x1 = [z3.Int(n + "'") for n in NAMES]
    i, j, s, t = xs
    i1, j1, s1, t1 = x1

    def keep(*written):
        return [b == a for a, b in zip(xs, x1) if all(not b.eq(w) for w in written)]

    body = z3.And(j < i + bound, j1 == j + 1, s1 == s + d["s"], t1 == t + s + d["t"] * i, *keep(j1, s1, t1))
    bridges = [Bridge("entry", "A", z3.And(*(v == 0 for v in x1))),
               Bridge("A", "H", z3.And(i < outer, j1 == 0, *keep(j1))),
               Bridge("H", "A", z3.And(j >= i + bound, i1 == i + 1, *keep(i1))),
               Bridge("A", ERR, z3.And(i >= outer, s < 0)),
               Bridge("A", "exit", z3.And(i >= outer, s >= 0, *keep()))]
    net = Network(xs, x1, "entry", z3.BoolVal(True), ["entry", "A", "H", "exit", ERR], {"H": body}, bridges, ERR)
    sem = {"body": lambda v: {**v, "j": v["j"] + 1, "s": v["s"] + d["s"], "t": v["t"] + v["s"] + d["t"] * v["i"]},
           "runs": lambda v: v["j"] < v["i"] + bound}
    return net, sem


def holds(net: Network, f: z3.BoolRef, pre: dict, post: dict) -> bool:
    """Is f(pre, post) satisfiable (its auxiliaries existential)?"""
    slv = z3.Solver()
    slv.add(f, *(x == pre[n] for x, n in zip(net.state, NAMES)), *(x == post[n] for x, n in zip(net.next, NAMES)))
    return slv.check() == z3.sat


def test_summary_over_approximates_every_inner_run():
    rng = random.Random(12)
    for case in range(12):
        d = {"s": rng.randint(-3, 3), "t": rng.randint(-2, 2)}
        net, sem = nested(d, rng.randint(0, 4), 5)
        summary = find_summary(net, "H", Deadline.after(30))
        assert check_summary(net, "H", summary, Deadline.after(30)) is None
        for _ in range(6):
            start = {n: rng.randint(-6, 6) for n in NAMES}
            now = dict(start)
            for _ in range(8):            # every prefix of the run, zero iterations included
                assert holds(net, summary, start, now), (case, d, start, now, summary)
                if not sem["runs"](now):
                    break
                now = sem["body"](now)


def test_contracted_outer_body_contains_every_concrete_outer_iteration():
    rng = random.Random(7)
    for case in range(8):
        d = {"s": rng.randint(-2, 3), "t": rng.randint(-2, 2)}
        net, sem = nested(d, rng.randint(0, 3), 6)
        contracted, sums = contract_nested(net, ["H"], Deadline.after(30))
        assert [h for h, _ in sums] == ["H"] and "H" not in contracted.nodes
        assert contracted.cycle() is None and set(contracted.loops) == {"A"}
        outer = contracted.loops["A"]
        for _ in range(5):
            start = {n: rng.randint(-4, 4) for n in NAMES}
            if start["i"] >= 6:
                continue
            now = {**start, "j": 0}                     # A -> H
            while sem["runs"](now):
                now = sem["body"](now)
            now = {**now, "i": now["i"] + 1}            # H -> A
            assert holds(contracted, outer, start, now), (case, d, start, now)


def test_summary_check_rejects_under_approximations():
    net, _ = nested({"s": 1, "t": 0}, 2, 3)
    j, j1 = z3.Int("j"), z3.Int("j'")
    dl = Deadline.after(30)
    assert "not closed" in check_summary(net, "H", j1 == j, dl)         # only zero iterations
    assert "not reflexive" in check_summary(net, "H", j1 == j + 1, dl)  # only one iteration
    # contract re-checks what it is given, and wants a summary for every loop it eliminates
    assert "not closed" in contract(net, ["H"], [("H", j1 == j)], dl)
    assert "no summary" in contract(net, ["H"], [], dl)
    assert isinstance(contract(net, ["H"], [("H", j1 >= j)], dl), Network)


def test_eliminating_a_loop_free_node_composes_its_bridges():
    """A node without a self-loop is eliminated through the identity: u -> h -> w becomes a -> c exactly."""
    x, x1 = z3.Int("x"), z3.Int("x'")
    net = Network([x], [x1], "entry", z3.BoolVal(True), ["entry", "h", "exit", ERR], {},
                  [Bridge("entry", "h", x1 == 5), Bridge("h", "exit", x1 == x + 1), Bridge("h", ERR, x > 5)], ERR)
    out = eliminate(net, "h", None, itertools.count())
    assert {(b.src, b.dst) for b in out.bridges} == {("entry", "exit"), ("entry", ERR)}
    to_exit = next(b.label for b in out.bridges if b.dst == "exit")
    assert holds_1(to_exit, 0, 6) and not holds_1(to_exit, 0, 7)
    assert not holds_1(next(b.label for b in out.bridges if b.dst == ERR), 0, 0)


def holds_1(f: z3.BoolRef, a: int, b: int) -> bool:
    slv = z3.Solver()
    slv.add(f, z3.Int("x") == a, z3.Int("x'") == b)
    return slv.check() == z3.sat
