"""The multi-loop TPA engine (`engines/multiloop.py` over `tpa/network.py`) on C programs and Horn clauses.

FALSE must come with a counterexample that replayed on the program and the per-loop iteration counts of the
violating path; TRUE with the per-node safe sets that passed the independent re-check. Nested loops are
contracted into summaries (`tpa/nested.py`); only irreducible flow with a cycle through several cutpoints goes
to the single-system TPA engine, and the verdict says so.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import z3

from looprover.deadline import Deadline
from looprover.smt.text import to_text
from looprover.evidence.deep import RunCounterexample
from looprover.evidence.recheck import recheck_proof

from looprover.engines import get_engine, loop_path, multiloop, verify
from looprover.program.cfa import Assert, Assign, Assume, Havoc, ProgramBuilder
from looprover.program.expr import I32, binary, cmp, const
from looprover.verdict import Status
from looprover.evidence.replay import validate

from helpers.svcomp_c import load_main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# s = 3n after the first loop (n <= 10); the second loop counts j up to s and fails once j > LIM
TWO = """int n = __VERIFIER_nondet_int(); __VERIFIER_assume(0 <= n && n <= 10);
  int i = 0, s = 0; while (i < n) { i++; s += 3; }
  int j = 0; while (j < s) { j++; __VERIFIER_assert(j <= LIM); }"""
# a third loop after it (k ends at j or j + 1), proved separately
THREE = TWO + " int k = 0; while (k < j) { k += 2; } __VERIFIER_assert(k <= j + 1);"
NESTED = "int i = 0, s = 0; while (i < 2) { int j = 0; while (j < 2) { j++; s++; } i++; } __VERIFIER_assert(s != 4);"
# the inner loop runs i times in the i-th outer iteration: s = 0+1+...+(i-1), 10 after five outer iterations
TRIANGLE = ("int i = 0, s = 0; while (i < 10) { int j = 0; while (j < i) { j++; s++; } i++;"
            " __VERIFIER_assert(s != 10); }")
# j runs up to i in every outer iteration (the summary must relate j to i on exit), n is unbounded above
NESTED_SAFE = ("int n = __VERIFIER_nondet_int(); __VERIFIER_assume(0 <= n); int i = 0, s = 0;"
               "while (i < n) { int j = 0; while (j < i) { j++; s++; } __VERIFIER_assert(j == i); i++; }"
               "__VERIFIER_assert(s >= 0);")
TRIPLE = "int s = 0; for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) for (int k = 0; k < 3; k++) s++;"
LOOPFREE = ("int x = __VERIFIER_nondet_int(); __VERIFIER_assume(0 < x && x < 10); int y = 2 * x;"
            "__VERIFIER_assert(y != BAD);")


@pytest.fixture
def load(gcc, tmp_path):
    pytest.importorskip("looprover.frontend.c")
    return lambda name, body: load_main(tmp_path, name, body)


def run(program, timeout: float = 30, bitvector: bool = False):
    return verify("multiloop", program, timeout=timeout, bitvector=bitvector)


def iterations(v) -> list[int]:
    """Loop iterations of the violating path, in path order."""
    return list(v.stats["loop_iterations"].values())


def assert_replayed(program, v, bitvector: bool = False):
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and v.evidence.steps
    assert validate(program, v.evidence, bitvector).ok          # replays again, independently of the engine
    assert "fallback" not in v.stats


def assert_proved(v, loops: int, program=None, bitvector: bool = False):
    assert v.status == Status.TRUE, v.reason
    assert len(v.stats["loop_checks"]) == loops and len(v.stats["loops"]) == loops
    for sets in v.evidence.to_json()["nodes"].values():
        assert set(sets) == {"preSafe", "postSafe"}
    assert "fallback" not in v.stats
    if program is not None:       # the proof passes the portfolio's check; with empty safe sets it fails
        assert recheck_proof(program, v.evidence, bitvector, Deadline.after(30)) is None
        empty = tuple((n, to_text(z3.BoolVal(False))) for n, _ in v.evidence.pre)
        assert recheck_proof(program, replace(v.evidence, pre=empty, post=empty), bitvector,
                             Deadline.after(30)) is not None


# ----------------------------------------------------------------------------------------- C programs
def test_two_loops_bug_in_second_loop(load):
    p = load("two_unsafe", TWO.replace("LIM", "20"))
    v = run(p)
    assert_replayed(p, v)
    first, second = iterations(v)
    assert 7 <= first <= 10 and second == 20          # j = 21 needs s >= 21, i.e. n >= 7
    assert v.stats["cex_depth"] == first + second + 3  # + the bridges init->1, 1->2, 2->ERROR


def test_two_loops_fixed(load):
    prog = load("two_safe", TWO.replace("LIM", "30"))
    assert_proved(run(prog), loops=2, program=prog)


def test_three_loops_bug_in_second_loop(load):
    p = load("three_unsafe", THREE.replace("LIM", "20"))
    v = run(p)
    assert_replayed(p, v)
    first, second = iterations(v)                       # the path ends in the second loop
    assert 7 <= first <= 10 and second == 20
    assert len(v.stats["loops"]) == 3


@pytest.mark.slow
def test_three_loops_fixed(load):
    prog = load("three_safe", THREE.replace("LIM", "30"))
    assert_proved(run(prog), loops=3, program=prog)


@pytest.mark.parametrize("lim, want", [(20, Status.FALSE), (30, Status.TRUE)], ids=["unsafe", "safe"])
def test_tpa_engine_runs_the_network_on_loops_in_sequence(load, lim, want):
    """As Golem's TPA engine: loops in sequence, none nested, are solved by the network of per-loop TPAs, with the
    multiloop engine's evidence (safe sets re-checked, or the counterexample replayed); `tpa.loops=single`
    keeps the one pc-encoded system instead."""
    from looprover.tpa.options import TPAOptions
    p = load(f"two_{lim}", TWO.replace("LIM", str(lim)))
    v = verify("tpa", p, timeout=60)
    assert v.status == want, v.reason
    assert v.stats["system"] == "network of loops" and len(v.stats["loops"]) == 2
    if want == Status.TRUE:
        assert_proved(v, loops=2, program=p)
    else:
        assert_replayed(p, v)
    single = verify("tpa", p, timeout=5, settings=TPAOptions(loops="single"))     # the system is what counts here
    assert single.stats["system"] != "network of loops" and single.status in (want, Status.UNKNOWN)


def test_tpa_engine_keeps_one_system_for_nested_loops(load):
    """Nested loops are not a DAG of loops: the tpa engine solves them as one pc-encoded system (Golem's
    single-loop transformation), never by the network, whose contraction is the multiloop engine's."""
    p = load("nested_unsafe", NESTED)
    v = verify("tpa", p, timeout=10)
    assert v.stats.get("system") != "network of loops"
    assert v.status in (Status.FALSE, Status.UNKNOWN), v.reason


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_loop_free(load, bitvector):
    p = load("loopfree_unsafe", LOOPFREE.replace("BAD", "8"))
    v = run(p, bitvector=bitvector)
    assert_replayed(p, v, bitvector)
    assert v.stats["loop_iterations"] == {} and v.stats["cex_depth"] == 1
    assert_proved(run(load("loopfree_safe", LOOPFREE.replace("BAD", "7")), bitvector=bitvector), loops=0)


def test_bitvector_loops(load):
    """Bit-vector mode end to end: a wrap-around bug after two loops (found by TPA in bit-vector semantics),
    and loops whose reached states are closed under their bodies."""
    p = load("bv_unsafe", "unsigned char c = 250; while (__VERIFIER_nondet_bool()) c++;"
                          "int d = 0; while (d < 3) d++; __VERIFIER_assert(c >= 250 || d != 3);")
    v = run(p, bitvector=True)
    assert_replayed(p, v, bitvector=True)
    first, second = iterations(v)
    assert first >= 6 and second == 3                  # c must wrap to 0..249
    v = run(load("bv_safe", "unsigned x = 0; while (__VERIFIER_nondet_bool()) x = 0; int y = 5;"
                            "while (__VERIFIER_nondet_bool()) y = 5; __VERIFIER_assert(x == 0 && y == 5);"),
            bitvector=True)
    assert_proved(v, loops=2)


def assert_contracted(v, inner: int):
    assert "fallback" not in v.stats and len(v.stats["contracted"]) == inner, v.stats


def test_nested_loops_bug(load):
    p = load("nested_unsafe", NESTED)
    v = run(p)
    assert_replayed(p, v)
    assert_contracted(v, 1)
    inner = v.stats["contracted"][0]
    assert v.stats["cex_path"].count(inner) == 2 and v.stats["loop_iterations"][inner] == 2
    assert inner not in v.stats["abstract_cex_path"]        # the network's path names the outer loop only


def test_nested_bug_needs_several_outer_and_inner_iterations(load):
    """The abstract path (five iterations of the contracted outer loop) is expanded through the inner loop,
    which must run 0, 1, 2, 3, 4 times."""
    p = load("triangle_unsafe", TRIANGLE)
    v = run(p)
    assert_replayed(p, v)
    assert_contracted(v, 1)
    inner = v.stats["contracted"][0]
    assert v.stats["cex_path"].count(inner) == 5
    assert v.stats["loop_iterations"][inner] == 4                   # the last inner run
    assert "4 iterations" in v.reason and "3 iterations" in v.reason
    assert v.stats["abstract_cex_path"].count(v.stats["loops"][0]) == 1


def test_nested_loops_proved_with_summaries(load):
    p = load("nested_safe", NESTED_SAFE)
    v = run(p)
    assert_proved(v, loops=1, program=p)
    assert_contracted(v, 1)
    summaries = v.evidence.to_json()["nested_loop_summaries"]
    assert list(summaries) == v.stats["contracted"]
    # the portfolio's check re-checks the summaries: one that only allows zero iterations is rejected
    j, j1 = z3.Int("j"), z3.Int("j'")
    broken = tuple((h, to_text(j1 == j)) for h, _ in v.evidence.summaries)
    why = recheck_proof(p, replace(v.evidence, summaries=broken), False, Deadline.after(30))
    assert why is not None and "summary" in why


@pytest.mark.parametrize("safe", [True, False])
def test_three_nested_loops(load, safe):
    p = load("triple", TRIPLE + (" __VERIFIER_assert(s <= 27);" if safe else " __VERIFIER_assert(s != 27);"))
    v = run(p)
    assert_contracted(v, 2)
    if safe:
        assert_proved(v, loops=1, program=p)
    else:
        assert_replayed(p, v)
        assert v.stats["cex_path"].count(v.stats["contracted"][0]) == 9     # innermost loop: 3 x 3 runs


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_inner_loop_leaving_both_loops(load, bitvector):
    """`goto` out of the inner loop skips the outer head: the contracted edge goes from the outer head past it."""
    p = load("leave_both", "int i = 0; while (1) { int j = 0; while (1) { if (j > 3) break; if (i > 4) goto out;"
                           " j++; } i++; } out: __VERIFIER_assert(i != 5);")
    v = run(p, bitvector=bitvector)
    assert_replayed(p, v, bitvector)
    assert_contracted(v, 1)
    assert v.stats["cex_path"].count(v.stats["contracted"][0]) == 6      # five full inner runs, one left early


def test_unexpandable_counterexample_is_unknown(load, monkeypatch):
    """A counterexample of the contracted network that no run within the step limit follows is UNKNOWN, never
    FALSE (here: the limit is below the 21 steps the triangle's bug needs)."""
    monkeypatch.setattr(loop_path, "REPLAY_LIMIT", 15)
    v = run(load("triangle_unsafe", TRIANGLE))
    assert v.status == Status.UNKNOWN and "within 15 cutpoint steps" in v.reason, v.reason
    # an outer loop deeper than the limit is not expanded at all (its path is not even listed step by step)
    v = run(load("deep_outer", "int i = 0; while (i < 40) { int j = 0; while (j < 2) j++; i++; }"
                               "__VERIFIER_assert(i != 40);"))
    assert v.status == Status.UNKNOWN and "42 steps at the outer loops, more than 15" in v.reason, v.reason


def test_irreducible_cycle_falls_back_to_single_system_tpa():
    """Two loops l1, l2 in a cycle that is entered at both (goto into it): no natural loop to contract."""
    b = ProgramBuilder("irreducible2")
    x, y = b.declare("x", I32, kind="nondet"), b.declare("y", I32)
    l1, l2, out = b.new_loc(), b.new_loc(), b.new_loc()
    zero, one = const(0, I32), const(1, I32)
    b.add_edge(b.init, l1, Havoc((x,)), Assume(cmp(">=", x, zero)), Assume(cmp("<", x, const(10, I32))),
               Assign(y, zero))
    b.add_edge(b.init, l2, Havoc((x,)), Assume(cmp(">=", x, const(10, I32))), Assume(cmp("<", x, const(20, I32))),
               Assign(y, zero))
    b.add_edge(l1, l1, Assume(cmp("<", y, const(3, I32))), Assign(y, binary("+", y, one)))
    b.add_edge(l1, l2, Assume(cmp(">=", y, const(3, I32))), Assign(x, binary("+", x, one)))
    b.add_edge(l2, l2, Assume(cmp(">", y, zero)), Assign(y, binary("-", y, one)))
    b.add_edge(l2, l1, Assume(cmp("<=", y, zero)), Assume(cmp("<", x, const(30, I32))))
    b.add_edge(l2, out, Assume(cmp("<=", y, zero)), Assume(cmp(">=", x, const(30, I32))),
               Assert(cmp("==", x, const(30, I32))))
    p = b.build(exit_loc=out)
    v = run(p, timeout=5)     # only the fallback is asked for; TPA need not finish
    assert v.engine == "multiloop" and v.stats["fallback"] == "tpa", v.stats
    assert "irreducible" in v.reason and "single-system TPA" in v.reason


def test_deep_counterexample_is_confirmed_by_running_the_program(load, monkeypatch):
    """Past the BMC replay limit, the path up to the first deep loop is solved for a start and the program is
    run from there on the interpreter; the run must fail the assertion itself. (Inputs read after that point get
    harness values, so with nondeterminism inside or after deep loops the run may miss: then UNKNOWN.)"""
    monkeypatch.setattr(loop_path, "REPLAY_LIMIT", 10)
    monkeypatch.setattr(loop_path, "DEEP_LOOP", 5)
    v = run(load("two_det", "int i = 0, s = 0; while (i < 10) { i++; s += 3; }"
                            "int j = 0; while (j < s) { j++; __VERIFIER_assert(j <= 20); }"))
    assert v.status == Status.FALSE and "replayed by running the program" in v.reason, v.reason
    assert isinstance(v.evidence, RunCounterexample) and v.evidence.validated
    assert iterations(v) == [10, 20] and v.stats["cex_depth"] > 10


def test_deep_counterexample_the_run_misses_is_unknown(load, monkeypatch):
    monkeypatch.setattr(loop_path, "REPLAY_LIMIT", 10)
    monkeypatch.setattr(loop_path, "DEEP_LOOP", 5)
    p = load("two_unsafe", TWO.replace("LIM", "20"))
    v = run(p)
    assert v.status in (Status.FALSE, Status.UNKNOWN)
    if v.status == Status.FALSE:
        assert v.evidence.validated and validate(p, v.evidence).ok if not isinstance(v.evidence, RunCounterexample) \
            else v.evidence.validated
    else:
        assert "not confirmed" in v.reason and iterations(v)[1] == 20


def test_failures_are_unknown_never_verdicts(load, monkeypatch):
    p = load("two_safe", TWO.replace("LIM", "30"))
    assert run(p, timeout=0.01).status == Status.UNKNOWN
    monkeypatch.setattr(multiloop, "check_proof", lambda *a, **k: ("bridge 1 -> 2 leaves the safe sets", {}))
    v = run(p)
    assert v.status == Status.UNKNOWN and "re-check" in v.reason
    monkeypatch.undo()

    def boom(self, stack):
        raise RuntimeError("boom")
    monkeypatch.setattr(multiloop.NetworkTPA, "_traverse_bridge", boom)
    v = run(p)
    assert v.status == Status.UNKNOWN and "boom" in v.reason


# ----------------------------------------------------------------------------------------- examples
@pytest.mark.parametrize("name,want,loops", [("multiloop_safe.c", Status.TRUE, [2]),
                                             ("multiloop_unsafe.c", Status.FALSE, [2])])
@pytest.mark.slow
def test_repo_examples(gcc, name, want, loops):
    frontend = pytest.importorskip("looprover.frontend.c")
    p = frontend.load_c_program(EXAMPLES / name)
    v = run(p)
    assert v.status == want, v.reason
    assert len(v.stats["loops"]) == loops[0]
    if want == Status.FALSE:
        assert_replayed(p, v)
        first, second = iterations(v)
        x1, x2 = v.evidence.inputs             # the replayed run: loop 1 raises x1 to 300 (x2++, x3-- alike),
        assert first == 300 - x1               # loop 2 runs until x3 = x2, lowering x1 once per iteration
        assert second == x2 + 2 * first and 300 - second > 0
    else:
        assert_proved(v, loops=2)


def test_cli_engine_name(gcc):
    assert isinstance(get_engine("multiloop"), multiloop.MultiLoop)
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", "--engine", "multiloop", "--json",
                        "--timeout", "30", str(EXAMPLES / "multiloop_unsafe.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "FALSE" and data["engine"] == "multiloop" and data["counterexample"]["validated"]


# ----------------------------------------------------------------------------------------- Horn clauses
CHC = """(set-logic HORN)
(declare-fun P (Int Int) Bool)
(declare-fun Q (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (P x y))))
(assert (forall ((x Int) (y Int)) (=> (and (P x y) (< x 10)) (P (+ x 1) (+ y 2)))))
(assert (forall ((x Int) (y Int)) (=> (and (P x y) (>= x 10)) (Q x y))))
(assert (forall ((x Int) (y Int)) (=> (and (Q x y) (> y 0)) (Q x (- y 1)))))
(assert (forall ((x Int) (y Int)) (=> (and (Q x y) (<= y 0) QUERY) false)))
(check-sat)
"""


@pytest.mark.parametrize("query,want", [("(or (not (= x 10)) (< y 0))", Status.TRUE), ("(= x 10)", Status.FALSE)],
                         ids=["sat-safe", "unsat-unsafe"])
def test_two_predicates_in_sequence(tmp_path, query, want):
    from looprover.frontend.chc import load_chc_program
    path = tmp_path / "two.smt2"
    path.write_text(CHC.replace("QUERY", query))
    p = load_chc_program(path)
    v = run(p)
    if want == Status.TRUE:
        assert_proved(v, loops=2, program=p)
        nodes = v.evidence.to_json()["nodes"]
        assert any("(P)" in n for n in nodes) and any("(Q)" in n for n in nodes)
    else:
        assert_replayed(p, v)
        # P counts x to 10 (y = 20), Q counts y down to 0: exactly 10 and 20 iterations
        assert [(n.split()[-1], k) for n, k in v.stats["loop_iterations"].items()] == [("(P)", 10), ("(Q)", 20)]


@pytest.mark.slow
def test_unsigned_loops_split_off_wrap_around(load):
    """Unsigned counters: the loop queries run on the wrap-free body with "a wrap is possible" as a second bad
    set (review: without the split this stayed UNKNOWN at 60 s). A wrap that matters is still found exactly."""
    v = run(load("u_safe", "unsigned x = __VERIFIER_nondet_uint(); unsigned y = 0;"
                           "while (x < 100u) { x++; y++; } unsigned z = 0; while (z < y) z++;"
                           "__VERIFIER_assert(z <= 100u);"))
    assert_proved(v, loops=2)
    p = load("u_wrap", "unsigned x = 4294967290u; int i = 0; while (i < 10) { x++; i++; }"
                       "int j = 0; while (j < 3) j++; __VERIFIER_assert(x > 100u);")
    v = run(p)
    assert_replayed(p, v)
    assert iterations(v) == [10, 3]


# ----------------------------------------------------------------------------------------- split TPA per loop
@pytest.mark.slow
@pytest.mark.parametrize("seeds", [True, False])
def test_split_tpa_in_the_network(load, seeds):
    """The network with split TPA per loop (`--option multiloop.variant=split`): the bug in the second loop at
    its exact iteration count, and the fixed program proved with a proof that passes the portfolio's check
    (split certificates of the loops included)."""
    from looprover.tpa import TPAOptions
    opts = TPAOptions(variant="split", seeds=seeds)
    p = load("two_unsafe", TWO.replace("LIM", "20"))
    v = verify("multiloop", p, timeout=30, settings=opts)
    assert_replayed(p, v)
    first, second = iterations(v)
    assert 7 <= first <= 10 and second == 20
    prog = load("two_safe", TWO.replace("LIM", "30"))
    assert_proved(verify("multiloop", prog, timeout=30, settings=opts), loops=2, program=prog)
