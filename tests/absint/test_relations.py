"""The second pass of `check`: orderings `x <= y` between two variables kept where they are inductive with the
interval analysis's states (`absint/relations.py`), and the assertions both show."""
from __future__ import annotations

import pytest

from helpers.explore import violation_reachable
from helpers.randprog import random_program
from looprover.absint.fixpoint import analyze
from looprover.absint.relations import candidates, strengthened
from looprover.deadline import Deadline
from looprover.engines.intervals import state_formulas
from looprover.evidence.proofs import CutpointInvariantProof
from looprover.program.cfa import Assert
from looprover.program.cpg import build_cpg
from looprover.runtime_checks import asserting


@pytest.mark.parametrize("seed", range(60))
def test_what_the_relations_show_is_a_checked_proof_and_no_violation_is_reachable(seed):
    """On random programs: the analysis's states with the kept relations, the shown assertions asserted and the
    others assumed, pass the independent cutpoint-proof check; and an exhaustive run over small inputs reaches
    none of the assertions the relations show."""
    program = random_program(seed)
    sites = {(ei, si) for ei, e in enumerate(program.edges) for si, s in enumerate(e.stmts) if isinstance(s, Assert)}
    result = analyze(program, False)
    interp, kept, shown = strengthened(program, result, False, sites - result.proved,
                                       state_formulas(program, result, False), Deadline.after(60))
    assert shown <= sites - result.proved
    proved = asserting(program, set(result.proved) | shown)
    assert CutpointInvariantProof.of(interp, proved).check(proved, False, Deadline.after(60)) is None, seed
    for site in shown:
        assert violation_reachable(asserting(program, {site})) is not True, (seed, site)
    KEPT[seed] = (kept, len(shown))


KEPT: dict[int, tuple[int, int]] = {}


def test_the_random_programs_exercise_the_relations():
    """Not vacuous: over the seeds above, many keep relations (each one part of a checked proof), and some
    assertion is shown by them (seed 54: one)."""
    for seed in range(60):
        if seed not in KEPT:
            test_what_the_relations_show_is_a_checked_proof_and_no_violation_is_reachable(seed)
    assert sum(1 for kept, _ in KEPT.values() if kept) >= 30
    assert sum(shown for _, shown in KEPT.values()) >= 1


def test_candidates_are_orderings_the_intervals_leave_open_between_variables_a_loop_moves(tmp_path):
    """`c <= i` (both moved by the loop) and `i <= n` (n a limit the loop leaves alone) are proposed; no
    ordering of two variables the loop leaves alone, nor one the intervals decide."""
    from looprover.frontend.c import load_c_program
    path = tmp_path / "p.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nint main(void) {\n"
                    "  int n = __VERIFIER_nondet_int(); int m = __VERIFIER_nondet_int(); int k = 5;\n"
                    "  int i = 0, c = 0;\n  while (i < n) { if (__VERIFIER_nondet_int()) c++; i++; }\n"
                    "  return c + m + k;\n}\n")
    program = load_c_program(path)
    result = analyze(program, False)
    (atoms,) = candidates(program, build_cpg(program), result, False).values()
    text = {str(a) for a in atoms}
    assert {"(c <= i)", "(i <= n)"} <= {t.replace("main::", "") for t in text}, text
    assert not any("m" in t.replace("main::", "").replace("(", " ").split() for t in text)
    assert not any("k" in t.replace("main::", "").replace("(", " ").split() for t in text)


def test_an_inner_loop_s_candidates_relate_what_its_outer_loop_moves(tmp_path):
    """`c <= p` must hold at the inner loop's head too (its fragments leave both alone) for the outer loop's
    proof: the variables moved are those of the whole strongly connected part of the cutpoint graph."""
    from looprover.frontend.c import load_c_program
    path = tmp_path / "p.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nint main(void) {\n"
                    "  int n = __VERIFIER_nondet_int(); int p = 0, c = 0;\n"
                    "  while (p < n) {\n    for (int j = 0; j < 3; j++) __VERIFIER_nondet_int();\n"
                    "    if (__VERIFIER_nondet_int()) c++;\n    p++;\n  }\n  return c;\n}\n")
    program = load_c_program(path)
    result = analyze(program, False)
    found = candidates(program, build_cpg(program), result, False)
    assert len(found) == 2
    for atoms in found.values():
        assert "(c <= p)" in {str(a).replace("main::", "") for a in atoms}
