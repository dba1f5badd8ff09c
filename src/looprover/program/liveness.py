"""Live variables per CFA location: which values a location's future may still read.

Why in `program`: the LABMC classification (`transforms/classify.py`), the Horn encodings (`engines/spacer.py`,
`engines/multiloop.py`) and the proofs over them (`evidence/proofs.py`, `tpa/proof.py`) all ask it; it is a
property of the program, not of any one transformation.
"""
from __future__ import annotations

from looprover.program.cfa import Edge, Program
from looprover.program.expr import Var


def live_through(edge: Edge, live_after: frozenset[Var]) -> frozenset[Var]:
    """The variables live before `edge`, given those live after it."""
    out = set(live_after)
    for s in reversed(edge.stmts):
        out -= s.writes()
        out |= s.reads()
    return frozenset(out)


def liveness(program: Program) -> dict[int, frozenset[Var]]:
    """Live-in variables per location (backward may-analysis; `exit` and sinks have nothing live)."""
    live: dict[int, frozenset[Var]] = {l: frozenset() for l in program.locations}
    changed = True
    while changed:
        changed = False
        for loc in reversed(program.locations):
            if loc == program.exit:
                continue
            new: set[Var] = set()
            for e in program.out_edges(loc):
                new |= live_through(e, live[e.dst])
            if new != live[loc]:
                live[loc] = frozenset(new)
                changed = True
    return live
