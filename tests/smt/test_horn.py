"""Horn clauses over z3 terms (`smt/horn.py`): Spacer's answers and the independent check of a solution, on
hand-built systems (the cutpoint-graph clauses of programs: tests/engines/test_spacer.py)."""
from __future__ import annotations

import pytest
import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.smt.horn import Atom, Clause, HornSystem, inductive_subset, relation_body, spacer

x, x1, y = z3.Ints("x x' y")


def counter(bad: int) -> HornSystem:
    """x = 0; while (x < 10) x += 2;  query: x == bad at the loop head. A 0-ary relation `start` before it."""
    return HornSystem({"start": [], "loop": [x]}, [
        Clause("fact", (), z3.BoolVal(True), Atom("start", ())),
        Clause("enter", (Atom("start", ()),), x1 == 0, Atom("loop", (x1,))),
        Clause("step", (Atom("loop", (x,)),), z3.And(x < 10, x1 == x + 2), Atom("loop", (x1,))),
        Clause("bad", (Atom("loop", (x,)),), x == bad, None),
    ])


@pytest.mark.parametrize("global_guidance", [False, True])
def test_safe_system_gets_a_checked_solution(global_guidance):
    h = counter(7)
    ans = spacer(h, Deadline.after(20), global_guidance=global_guidance)
    assert ans.status == "safe" and set(ans.interp) == {"start", "loop"}
    assert z3.is_true(z3.simplify(ans.interp["start"]))
    assert h.check_solution(ans.interp, Deadline.after(20)) is None
    assert ans.interp["loop"].ctx == x.ctx            # brought back from Spacer's own context


def test_unsafe_system_gets_its_derivation_fact_first():
    ans = spacer(counter(6), Deadline.after(20), merge=False)
    assert ans.status == "unsafe"
    assert [c.name for c in ans.trace] == ["fact", "enter", "step", "step", "step", "bad"]


def test_check_solution_rejects_what_is_no_solution():
    h = counter(7)
    ok = {"start": z3.BoolVal(True), "loop": z3.And(x >= 0, x % 2 == 0)}
    assert h.check_solution(ok, Deadline.after(20)) is None
    assert "clause fact" in h.check_solution({**ok, "start": z3.BoolVal(False)}, Deadline.after(20))
    assert "clause enter" in h.check_solution({**ok, "loop": x >= 1}, Deadline.after(20))
    assert "clause step" in h.check_solution({**ok, "loop": x <= 4}, Deadline.after(20))
    assert "clause bad" in h.check_solution({**ok, "loop": x >= 0}, Deadline.after(20))
    assert "not over its parameters" in h.check_solution({**ok, "loop": x >= y}, Deadline.after(20))


def test_deadline_is_out_of_time():
    with pytest.raises(OutOfTime):
        spacer(counter(7), Deadline.after(-1))


def test_relation_body_reads_spacers_answer_format():
    P = z3.Function("P", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    a, b = z3.Ints("a b")
    # Spacer's answer binds the arguments as variables of a ForAll; de Bruijn index 1 is the first bound one
    answer = z3.And(z3.ForAll([a, b], P(a, b) == (a < b)), z3.BoolVal(True))
    assert z3.eq(relation_body(answer, P, [x, y]), x < y)
    assert relation_body(z3.BoolVal(True), P, [x, y]) is None


def test_inductive_subset_keeps_what_every_clause_preserves():
    """x = 0; while (x < 10) x += 2: `x >= 0`, `x <= 10` and `x % 2 == 0` are kept; `x <= 8` fails the step
    from 8, `x >= 2` the entry, `x != 4` the step from 2 (dropping `x <= 8` removes what the even bound needs
    nothing of). A relation without candidates keeps none."""
    h = counter(7)
    cands = [x >= 0, x <= 10, x % 2 == 0, x <= 8, x >= 2, x != 4]
    kept = inductive_subset(h, {"loop": cands}, Deadline.after(20))
    assert [str(c) for c in kept["loop"]] == [str(c) for c in (x >= 0, x <= 10, x % 2 == 0)]
    assert kept["start"] == []
    interp = {"start": z3.BoolVal(True), "loop": z3.And(kept["loop"])}
    assert h.check_solution(interp, Deadline.after(20)) is None       # they exclude x == 7 too

