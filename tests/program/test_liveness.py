"""Liveness (`program.liveness`) against its definition: a variable is live at a location when some path from
there reads it before writing it."""
from __future__ import annotations

import pytest

from looprover.program.liveness import live_through, liveness

from helpers.randprog import random_program


def _live_by_paths(program, loc, v) -> bool:
    seen, todo = {loc}, [loc]
    while todo:
        for e in program.out_edges(todo.pop()):
            for s in e.stmts:
                if v in s.reads():
                    return True
                if v in s.writes():
                    break
            else:
                if e.dst not in seen:
                    seen.add(e.dst)
                    todo.append(e.dst)
    return False


@pytest.mark.parametrize("seed", range(30))
def test_live_exactly_where_a_path_reads_before_writing(seed):
    program = random_program(seed)
    live = liveness(program)
    for loc in program.locations:
        want = {v for v in program.all_vars if loc != program.exit and _live_by_paths(program, loc, v)}
        assert live[loc] == want, (seed, loc)


@pytest.mark.parametrize("seed", range(10))
def test_an_edge_passes_on_what_its_statements_read_and_keeps_what_they_do_not_write(seed):
    program = random_program(seed)
    everything = frozenset(program.all_vars)
    for e in program.edges:
        before = everything
        for s in reversed(e.stmts):
            before = (before - s.writes()) | s.reads()
        assert live_through(e, everything) == before
