"""Ground truth by explicit-state search: every reachable (location, state) of a program whose havocs take
values from a small domain, with the interpreter's edge semantics (`program.interp.try_edge`). Exact for
programs like `helpers.randprog`'s, whose nondeterministic values are assumed into that domain and whose loops
are bounded; independent of every SMT encoding, so it checks BMC's verdicts."""
from __future__ import annotations

import itertools

from looprover.program.cfa import Havoc, Program
from looprover.program.expr import BoolType
from looprover.program.interp import Evaluator, Oracle, commit, initial_state, try_edge


class _Values(Oracle):
    def __init__(self, values):
        self.values = list(values)

    def __call__(self, v):
        x = self.values.pop(0)
        return bool(x & 1) if isinstance(v.type, BoolType) else v.type.wrap(x)


def violation_reachable(program: Program, domain=range(-3, 6), wrap: bool = False,
                        max_states: int = 200_000) -> bool | None:
    """True/False: some/no assertion fails; None: too many states, or a signed overflow (whose meaning
    differs between the semantics)."""
    ev = Evaluator("wrap" if wrap else "math")
    start = (program.init, initial_state(program))
    seen = {(start[0], tuple(sorted(start[1].items())))}
    todo = [start]
    while todo:
        loc, state = todo.pop()
        if loc == program.exit:
            continue
        for e in program.out_edges(loc):
            n = sum(len(st.vars) for st in e.stmts if isinstance(st, Havoc))
            for vals in itertools.product(domain, repeat=n):
                r = try_edge(ev, e, state, _Values(vals))
                if ev.overflowed and not wrap:
                    return None
                if r.violated is not None:
                    return True
                if r.blocked is not None:
                    continue
                s = commit(r)
                key = (e.dst, tuple(sorted(s.items())))
                if key not in seen:
                    if len(seen) >= max_states:
                        return None
                    seen.add(key)
                    todo.append((e.dst, s))
    return False
