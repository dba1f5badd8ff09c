"""program/model_exits.py: which checks a run can reach after it leaves the model, against a brute-force walk of
the statement positions of random CFAs."""
from __future__ import annotations

import dataclasses
import random

import pytest

from looprover.program.cfa import Assert, Assume, ProgramBuilder, Refusal, SrcLoc
from looprover.program.expr import TRUE
from looprover.program.model_exits import assuming_untouched, exits_of, touched, touching
from looprover.properties import UNMODELLED_CALL, UNMODELLED_MEMBER, UNMODELLED_REFUSED, UNREACH_CALL

FILE = "/tmp/exits.c"


def _random_program(rng: random.Random):
    """A CFA of a few locations whose edges carry checks, exits of each kind and plain statements, each on a
    random source line; the refused calls with random code extents (or none known)."""
    b = ProgramBuilder("exits", source_file=FILE)
    locs = [b.init] + [b.new_loc() for _ in range(rng.randint(2, 7))]
    refusals = []
    line = iter(range(1000, 2000))      # distinct lines for the calls, to tell their refusals apart
    for _ in range(rng.randint(2, 12)):
        stmts = []
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(["check", "check", "member", "refused", "call", "assume"])
            src = SrcLoc(FILE, rng.randint(1, 30))
            if kind == "check":
                stmts.append(Assert(TRUE, UNREACH_CALL, src))
            elif kind == "member":
                stmts.append(Assert(TRUE, UNMODELLED_MEMBER, src))
            elif kind == "call":
                stmts.append(Assert(TRUE, UNMODELLED_CALL, src))
            elif kind == "refused":
                src = SrcLoc(FILE, next(line))
                first = rng.randint(1, 30)
                extents = None if rng.random() < 0.15 else ((FILE, first, first + rng.randint(0, 6)),)
                refusals.append(Refusal(src, "construct", "", extents))
                stmts.append(Assert(TRUE, UNMODELLED_REFUSED, src))
            else:
                stmts.append(Assume(TRUE, src))
        b.add_edge(rng.choice(locs), rng.choice(locs), *stmts)
    return dataclasses.replace(b.build(), refusals=tuple(refusals))


def _brute_touches(program, exit_, site) -> bool:
    """A run leaving the model at `exit_` walks the statement positions on from there; it reaches `site` on the
    way, or runs code that holds the site's line: that of a refused call it passes (`exit_` itself included),
    any code for a call whose code is not known."""
    edges = program.edges
    seen, todo = set(), [(exit_[0], exit_[1])]
    passed_code: list = []
    while todo:
        ei, si = todo.pop()
        if (ei, si) in seen:
            continue
        seen.add((ei, si))
        stmts = edges[ei].stmts
        if si < len(stmts):
            s = stmts[si]
            if (ei, si) == site:
                return True
            if isinstance(s, Assert) and s.prop == UNMODELLED_CALL:
                return True
            if isinstance(s, Assert) and s.prop == UNMODELLED_REFUSED:
                found = [r for r in program.refusals if r.call == s.src]
                if any(r.extents is None for r in found):
                    return True
                passed_code.extend(x for r in found for x in r.extents)
            todo.append((ei, si + 1))
        else:
            todo.extend((ej, 0) for ej, e in enumerate(edges) if e.src == edges[ei].dst)
    line = edges[site[0]].stmts[site[1]].src.line
    return any(first <= line <= last for _, first, last in passed_code)


@pytest.mark.parametrize("seed", range(150))
def test_touched_and_touching_are_the_brute_force_relation(seed):
    """For every exit and check site of a random CFA, `touched` (forward) and `touching` (backward) agree with
    a walk of the statement positions from the exit; so do they on sets (a union over their members)."""
    rng = random.Random(seed)
    program = _random_program(rng)
    exits = exits_of(program)
    sites = [(ei, si) for ei, e in enumerate(program.edges) for si, s in enumerate(e.stmts)
             if isinstance(s, Assert) and s.prop == UNREACH_CALL]
    truth = {(x, s): _brute_touches(program, x, (s[0], s[1])) for x in exits for s in sites}
    for x in exits:
        for s in sites:
            assert (s in touched(program, [x], [s])) == truth[x, s], (seed, x, s)
            assert (x in touching(program, [x], [s])) == truth[x, s], (seed, x, s)
    if exits and sites:
        some_exits = rng.sample(exits, rng.randint(1, len(exits)))
        some_sites = rng.sample(sites, rng.randint(1, len(sites)))
        assert touched(program, some_exits, sites) == {s for s in sites if any(truth[x, s] for x in some_exits)}
        assert touching(program, exits, some_sites) == {x for x in exits if any(truth[x, s] for s in some_sites)}


def test_only_the_exits_that_touch_no_check_become_assumptions():
    """`assuming_untouched` turns exactly the exits no run can leave by and then reach a check into assumptions."""
    for seed in range(60):
        rng = random.Random(seed)
        program = _random_program(rng)
        sites = [(ei, si) for ei, e in enumerate(program.edges) for si, s in enumerate(e.stmts)
                 if isinstance(s, Assert) and s.prop == UNREACH_CALL]
        chosen = set(rng.sample(sites, min(len(sites), 2)))
        after = assuming_untouched(program, chosen)
        for x in exits_of(program):
            assumed = isinstance(after.edges[x[0]].stmts[x[1]], Assume)
            assert assumed == (not any(_brute_touches(program, x, s) for s in chosen)), (seed, x)
