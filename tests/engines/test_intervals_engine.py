"""The `intervals` engine: TRUE only with cutpoint invariants z3 accepts, on safe programs; never on unsafe ones;
and a wrong analysis costs the answer, not soundness."""
from __future__ import annotations

import dataclasses

import pytest

from looprover.absint import fixpoint
from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.engines.base import Task
from looprover.jobs import JobOptions, checked_verdict
from looprover.program.cfa import Havoc
from looprover.program.expr import IntType
from looprover.program.liveness import liveness
from looprover.verdict import Status

from helpers.randprog import random_program

HEADER = """extern void abort(void);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int c) { if (!c) { reach_error(); abort(); } }
extern int __VERIFIER_nondet_int(void);
extern unsigned char __VERIFIER_nondet_uchar(void);
"""

SAFE = HEADER + """int buf[64];
int main(void) {
  unsigned char c = __VERIFIER_nondet_uchar();
  int i, j = 0;
  for (i = 0; i < 64; i++) {
    buf[i] = c % 10;
    if (i % 3 == 0) j = i / 2;
  }
  __VERIFIER_assert(j >= 0 && j <= 32);
  __VERIFIER_assert(100 / (c + 1) <= 100);
  while (c > 10) c = c - 3;
  __VERIFIER_assert(c <= 10);
  return buf[j];
}
"""

UNSAFE = HEADER + """int main(void) {
  int i, j = 0;
  for (i = 0; i < 64; i++) { if (i % 3 == 0) j = i / 2; }
  __VERIFIER_assert(j < 31);
  return 0;
}
"""


def _load(tmp_path, text: str):
    from looprover.frontend.c import load_c_program
    path = tmp_path / "t.c"
    path.write_text(text)
    return load_c_program(path)


@pytest.mark.parametrize("bitvector", [False, True])
def test_a_safe_program_is_true_with_invariants_z3_accepts(tmp_path, bitvector):
    program = _load(tmp_path, SAFE)
    v = verify("intervals", program, timeout=30, bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.invariants and v.evidence.kind == "cutpoint-invariants"
    assert v.evidence.check(program, bitvector, Deadline.after(30)) is None


@pytest.mark.parametrize("bitvector", [False, True])
def test_an_unsafe_program_is_never_true(tmp_path, bitvector):
    v = verify("intervals", _load(tmp_path, UNSAFE), timeout=30, bitvector=bitvector)
    assert v.status == Status.UNKNOWN and "not the one at" in v.reason, v.reason


@pytest.mark.parametrize("seed", range(40))
def test_on_random_programs_true_only_where_bmc_finds_no_violation_and_its_proof_checks(seed):
    """Every loop of these programs has a small bound, so bmc exhausts them: its FALSE is the ground truth."""
    program = random_program(seed)
    got = verify("intervals", program, timeout=30)
    if got.status != Status.TRUE:
        return
    assert got.evidence.check(program, False, Deadline.after(30)) is None
    truth = verify("bmc", program, timeout=60)
    assert truth.status != Status.FALSE, (seed, truth.reason)


def test_a_wrong_analysis_is_caught_by_the_proof_check(tmp_path, monkeypatch):
    """An analysis that claims every bound a loop counter starts with holds for ever proves the unsafe program;
    the job's check of its invariants with fresh solvers refuses the TRUE."""
    real = fixpoint.analyze

    def wrong(program, bitvector, deadline=None):
        result = real(program, bitvector, deadline)
        states = {loc: ({k: ((0, 0) if isinstance(program.var(k).type, IntType) else v) for k, v in s.items()}
                        if s is not None else None) for loc, s in result.states.items()}
        return dataclasses.replace(result, states=states, proved=result.proved | set(result.unproved), unproved=())
    monkeypatch.setattr("looprover.engines.intervals.analyze", wrong)
    program = _load(tmp_path, UNSAFE)
    alone = verify("intervals", program, timeout=30)
    assert alone.status == Status.TRUE            # the engine believes its analysis ...
    task = Task.for_program(program)
    v = checked_verdict(program, task, JobOptions(engine="intervals"), Deadline.after(30))
    assert v.status == Status.UNKNOWN and "check" in v.reason, v.reason     # ... the job does not


def test_a_widened_unsigned_counter_keeps_its_type_s_bound_in_the_proof(tmp_path):
    """With integers, z3's Int knows nothing of a C type's range: an unsigned counter widened past every
    constant must end at its type's maximum, not at infinity, or the proof's state would let it hold values no
    execution has, on which the encoding's wraps are not exact (jsmn's token counter failed the check that way)."""
    program = _load(tmp_path, HEADER + """int main(void) {
  unsigned int n = 0, m = 0;
  while (__VERIFIER_nondet_int()) { n++; m = n + 1u; }
  return 0;
}
""")
    result = fixpoint.analyze(program, False)
    (head,) = result.cutpoints
    assert fixpoint.lookup(result.states[head], program.var("n"))[1] == 2 ** 32 - 1
    assert any(str(c.atom) == "(n <= 4294967295u)" for c in result.invariants(False) if c.node == head), \
        [str(c.atom) for c in result.invariants(False)]
    v = verify("intervals", program, timeout=30, bitvector=False)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.check(program, False, Deadline.after(30)) is None



@pytest.mark.parametrize("bitvector", [False, True])
def test_a_variable_live_at_the_start_keeps_its_type_s_range_from_there(tmp_path, bitvector):
    """A variable read before any write (here: the declaration's havoc taken out; in cwalk, struct members a
    write through a pointer may keep) is live at the initial location with its type's range, which the
    analysis knows there and, with integers, states at the loop head. The initial location must state it
    too, or the first fragment cannot show it at the head (cwalk's proof failed its check there that way)."""
    program = _load(tmp_path, HEADER + """int main(void) {
  int x;
  unsigned char i = 0;
  while (i < 10) i++;
  if (x > 0) i = 0;
  __VERIFIER_assert(i <= 10);
  return 0;
}
""")
    edges = tuple(dataclasses.replace(e, stmts=tuple(s for s in e.stmts if not isinstance(s, Havoc)))
                  for e in program.edges)
    program = dataclasses.replace(program, edges=edges)
    assert program.var("x") in liveness(program)[program.init]
    v = verify("intervals", program, timeout=30, bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.check(program, bitvector, Deadline.after(30)) is None


SHARED = HEADER + """int main(void) {
  int a = __VERIFIER_nondet_int(), s = 0, t = 0, i;
  if (a > 0) for (i = 0; i < 10; i++) s = i;
  t = s + 1; t = t + 2; t = t + 3; t = t - 1; t = t + 2; s = s + 0;
  if (a > 1) for (i = 0; i < 10; i++) s = i;
  t = s + 1; t = t + 2; t = t + 3; t = t - 1; t = t + 2; s = s + 0;
  if (a > 2) for (i = 0; i < 10; i++) s = i;
  t = s + 1; t = t + 2; t = t + 3; t = t - 1; t = t + 2;
  __VERIFIER_assert(s <= 9 && t <= 16);
  return 0;
}
"""


@pytest.mark.parametrize("bitvector", [False, True])
def test_code_the_loop_heads_fragments_share_is_cut_out_and_checked_once(tmp_path, bitvector):
    """After a conditional loop, the code up to the next loop lies in the fragment of the loop head and in that
    of the node before the loop: the proof cuts the graph where such shared code starts, with the analysis's
    state there as its invariant, so that its check encodes that code once (x509-parser's fragments held 17
    times its locations). The proof checks, and a wrong invariant at such a point does not."""
    from looprover.program.cpg import build_cpg, split_points
    from looprover.smt.text import to_text
    program = _load(tmp_path, SHARED)
    live = liveness(program)
    splits = split_points(program, lambda loc: len(live[loc]))
    assert splits and not splits & {program.init, program.exit}

    def interior(cpg):
        return sum(len(f.inner) for f in cpg.fragments.values())
    assert interior(build_cpg(program, splits=splits)) < interior(build_cpg(program))
    v = verify("intervals", program, timeout=30, bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.splits == tuple(sorted(splits)) and {n for n, _ in v.evidence.invariants} >= splits
    assert v.evidence.check(program, bitvector, Deadline.after(30)) is None
    import z3
    cut = min(splits)
    wrong = tuple((n, to_text(z3.BoolVal(False)) if n == cut else t) for n, t in v.evidence.invariants)
    assert dataclasses.replace(v.evidence, invariants=wrong).check(program, bitvector, Deadline.after(30))
    missing = tuple((n, t) for n, t in v.evidence.invariants if n != cut)
    assert "no interpretation" in dataclasses.replace(v.evidence, invariants=missing).check(
        program, bitvector, Deadline.after(30))
    odd = dataclasses.replace(v.evidence, splits=(program.num_locs + 5,))
    assert "no location" in odd.check(program, bitvector, Deadline.after(30))


def test_no_cut_where_shared_code_is_shorter_than_the_invariant_it_would_need(tmp_path):
    from looprover.program.cpg import split_points
    program = _load(tmp_path, SHARED)
    assert not split_points(program, lambda loc: 10_000)


@pytest.mark.parametrize("bitvector", [False, True])
def test_where_a_fragment_s_query_gives_up_its_clauses_are_asked_one_by_one(tmp_path, monkeypatch, bitvector):
    """A proof's check asks a fragment's obligations together; where the solver gives up on that query, each
    clause alone decides: the analysis's proof still passes, a wrong one still fails."""
    import z3

    from looprover.errors import GiveUp
    from looprover.evidence import proofs
    from looprover.smt.text import to_text
    together: list[z3.BoolRef] = []
    real_or, real_check = proofs.mk_or, proofs.check

    def recorded_or(*fs):       # the same disjunction, made a term no other query has
        f = z3.And(real_or(*fs), z3.Not(z3.Bool("made-up marker")))
        together.append(f)
        return f

    def giving_up(s, deadline):
        if any(a.eq(f) for a in s.assertions() for f in together):
            raise GiveUp("unknown (made up by the test)")
        return real_check(s, deadline)
    monkeypatch.setattr(proofs, "mk_or", recorded_or)
    monkeypatch.setattr(proofs, "check", giving_up)
    program = _load(tmp_path, SHARED)
    v = verify("intervals", program, timeout=30, bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.check(program, bitvector, Deadline.after(30)) is None
    assert together
    cut = min(v.evidence.splits)
    wrong = tuple((n, to_text(z3.BoolVal(False)) if n == cut else t) for n, t in v.evidence.invariants)
    assert dataclasses.replace(v.evidence, invariants=wrong).check(program, bitvector, Deadline.after(30))
