"""The spacer engine (`engines/spacer.py`): z3's Spacer on the cutpoint graph as Horn clauses (`smt/horn.py`,
`smt/systems.cpg_horn`).

TRUE must carry one invariant per cutpoint-graph node that passed the independent re-check, FALSE a counterexample
that replayed on the program. What Spacer says is never taken on trust: a tampered solution, a derivation that is
not a path and a derivation that has no execution all end in UNKNOWN.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import z3

from helpers import enginecases as ec
from helpers.deep_counter import DEEP, load as load_text
from helpers.svcomp_c import HEADER
from looprover.deadline import Deadline
from looprover.engines import get_engine, loop_path, spacer as engine_mod, verify
from looprover.engines.base import make_settings
from looprover.engines.spacer import SpacerEngine, SpacerSettings
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.horn import SpacerAnswer, spacer
from looprover.smt.systems import cpg_horn
from looprover.program.liveness import liveness
from looprover.verdict import Status
from looprover.smt.text import to_text
from looprover.evidence.deep import RunCounterexample
from looprover.evidence.recheck import recheck_proof
from looprover.evidence.replay import validate

MODES = pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(prog, timeout: float = 20.0, bitvector: bool = False, **kw):
    return verify("spacer", prog, timeout=timeout, bitvector=bitvector,
                  settings=SpacerSettings(**kw) if kw else None)


def assert_replayed(prog, v, bitvector: bool = False):
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and v.evidence.steps
    assert validate(prog, v.evidence, bitvector).ok         # replays again, independently of the engine


def assert_proved(prog, v, bitvector: bool = False):
    assert v.status == Status.TRUE, v.reason
    cpg = build_cpg(prog)
    assert set(v.evidence.to_json()["invariants"]) == {prog.loc_label(n) for n in cpg.sources}
    # the proof passes the portfolio's check in a fresh system; claiming no state at all (false everywhere)
    # contradicts the initial states and fails it
    assert recheck_proof(prog, v.evidence, bitvector, Deadline.after(30)) is None
    empty = tuple((n, to_text(z3.BoolVal(False))) for n, _ in v.evidence.invariants)
    assert "clause init does not hold" in recheck_proof(prog, replace(v.evidence, invariants=empty), bitvector,
                                                        Deadline.after(30))


CASES = [
    ("loopfree-safe", lambda: ec.loopfree(True), Status.TRUE),
    ("loopfree-unsafe", lambda: ec.loopfree(False), Status.FALSE),
    ("bounded-safe", lambda: ec.bounded_loop(True), Status.TRUE),
    ("bounded-unsafe", lambda: ec.bounded_loop(False), Status.FALSE),
    ("even-safe", lambda: ec.even_counter(7), Status.TRUE),
    ("even-unsafe", lambda: ec.even_counter(8), Status.FALSE),
    ("deep-unsafe", ec.deep_bug, Status.FALSE),
    ("nested-unbounded-safe", lambda: ec.nested_unbounded(7), Status.TRUE),
    ("nested-unbounded-unsafe", lambda: ec.nested_unbounded(6), Status.FALSE),
    ("udec-safe", ec.unsigned_decrement, Status.TRUE),
    ("uwrap-unsafe", ec.unsigned_wrap_bug, Status.FALSE),
    ("uchar-unsafe", ec.uchar_overflow_bug, Status.FALSE),
    ("sucmp-safe", lambda: ec.signed_unsigned_compare(True), Status.TRUE),
    ("sucmp-unsafe", lambda: ec.signed_unsigned_compare(False), Status.FALSE),
    ("negdiv-safe", lambda: ec.negative_division(True), Status.TRUE),
    ("negdiv-unsafe", lambda: ec.negative_division(False), Status.FALSE),
    ("array-nondet-safe", lambda: ec.array_nondet(True), Status.TRUE),
    ("array-nondet-unsafe", lambda: ec.array_nondet(False), Status.FALSE),
    ("irreducible-safe", lambda: ec.irreducible(True), Status.TRUE),
    ("irreducible-unsafe", lambda: ec.irreducible(False), Status.FALSE),
]


@MODES
@pytest.mark.parametrize("name,make,expected", CASES, ids=[c[0] for c in CASES])
def test_verdicts(name, make, expected, bitvector):
    prog = make()
    v = run(prog, bitvector=bitvector, arrays="native")      # Spacer's own proofs (char arrays: test_strings.py)
    if expected == Status.TRUE:
        assert_proved(prog, v, bitvector)
    else:
        assert_replayed(prog, v, bitvector)


def test_signed_overflow_is_not_a_counterexample_nor_a_proof():
    """`x = 0; while (*) x++; assert(x >= 0)`: safe in integer mode (no signed overflow), and in bit-vector mode
    only unsafe through an overflow, which replay refuses: never FALSE."""
    prog = ec.nonneg_counter()
    assert_proved(prog, run(prog))
    assert run(prog, timeout=2, bitvector=True).status != Status.FALSE


def test_wrap_is_found_not_proved_away():
    """`i >= 1` is inductive for mathematical integers, not with the wrap: the doubling reaches 0."""
    prog = ec.doubling_wrap_bug()
    assert_replayed(prog, run(prog, bitvector=True), bitvector=True)


@pytest.mark.parametrize("global_guidance", [False, True], ids=["default", "global"])
def test_both_spacer_configurations(global_guidance):
    prog = ec.even_counter(7)
    assert_proved(prog, run(prog, global_guidance=global_guidance))
    prog = ec.even_counter(8)
    assert_replayed(prog, run(prog, global_guidance=global_guidance))


def test_invariant_is_per_cutpoint():
    prog = ec.even_counter(7)
    v = run(prog)
    cpg = build_cpg(prog)
    assert v.evidence.to_json()["invariants"][prog.loc_label(cpg.init)] == "True"
    assert "x" in v.evidence.to_json()["invariants"][prog.loc_label(cpg.cutpoints[0])]


# ------------------------------------------------------------------------------------- the re-check
def _even_system():
    prog = ec.even_counter(7)
    cpg = build_cpg(prog)
    sysm = CPGSystem(cpg)
    return cpg, sysm, cpg_horn(sysm, liveness(prog))


def test_check_solution_accepts_spacers_answer_and_rejects_tampered_ones():
    cpg, sysm, horn = _even_system()
    ans = spacer(horn, Deadline.after(20))
    assert ans.status == "safe"
    assert horn.check_solution(ans.interp, Deadline.after(20)) is None
    head = cpg.cutpoints[0]
    x = sysm.cur["x"]

    def tampered(f):
        return horn.check_solution({**ans.interp, head: f}, Deadline.after(20))
    assert "does not hold" in tampered(x >= 0)                  # admits 7: the query clause fails
    assert "does not hold" in tampered(x == 0)                  # not inductive: 0 -> 2
    assert "does not hold" in tampered(x >= 1)                  # misses the initial state 0
    assert "does not hold" in tampered(z3.BoolVal(True))
    assert tampered(z3.And(x >= 0, x % 2 == 0)) is None          # another valid invariant passes
    assert "not over its parameters" in tampered(z3.Int("y") >= 0)
    assert "no interpretation" in horn.check_solution({}, Deadline.after(20))


def test_a_quantified_proof_is_checked_clause_by_clause_and_still_refused_when_wrong():
    """Spacer's invariants may hold `exists` (nested6's do); an incremental solver gave up on them, so such a
    proof is checked one clause at a time in fresh solvers, as before the per-fragment check. A valid
    quantified invariant passes; one that misses the initial state or admits the violation does not."""
    from looprover.evidence.proofs import CutpointInvariantProof
    prog = ec.even_counter(7)
    cpg, sysm, horn = _even_system()
    head = cpg.cutpoints[0]
    x, y = sysm.cur["x"], z3.Int("y")
    ans = spacer(horn, Deadline.after(20))

    def check(f):
        interp = {**ans.interp, head: f}
        return CutpointInvariantProof.of(interp, prog).check(prog, False, Deadline.after(20))
    assert check(z3.Exists([y], z3.And(x == 2 * y, x >= 0))) is None
    assert "clause" in check(z3.Exists([y], z3.And(x == 2 * y + 1, x >= 0)))      # misses x = 0
    assert "does not hold" in check(z3.Exists([y], z3.And(x == y, x >= 0)))         # admits x = 7
    # a formula for a node without clauses (the exit) is no obligation, quantified or not
    for f in (z3.And(x >= 0, x % 2 == 0), z3.Exists([y], z3.And(x == 2 * y, x >= 0))):
        extra = {**ans.interp, head: f, prog.exit: z3.BoolVal(False)}
        assert CutpointInvariantProof.of(extra, prog).check(prog, False, Deadline.after(20)) is None


def test_a_tampered_solution_makes_the_engine_answer_unknown(monkeypatch):
    head = build_cpg(ec.even_counter(7)).cutpoints[0]

    def weakened(horn, deadline, **kw):
        ans = spacer(horn, deadline, **kw)
        ans.interp[head] = z3.BoolVal(True)
        return ans
    monkeypatch.setattr(engine_mod, "spacer", weakened)
    v = run(ec.even_counter(7))
    assert v.status == Status.UNKNOWN and "failed the re-check" in v.reason


# ------------------------------------------------------------------------------ Spacer's derivations
def test_merged_derivation_is_asked_for_again_without_merging():
    """Spacer's preprocessing folds a loop-free program into one clause named `<null>`: not a path, so the
    engine asks again with the merging passes off."""
    prog = ec.loopfree(False)
    v = run(prog)
    assert_replayed(prog, v)
    assert v.stats["merged_derivation"] is True


def test_derivation_that_is_not_a_path_is_unknown(monkeypatch):
    init = build_cpg(ec.even_counter(8)).init

    def gappy(horn, deadline, **kw):
        ans = spacer(horn, deadline, **kw)
        ans.trace = [c for c in ans.trace if c.tag is None or c.tag.src != init]    # drop the entry edge
        return ans
    monkeypatch.setattr(engine_mod, "spacer", gappy)
    v = run(ec.even_counter(8))
    assert v.status == Status.UNKNOWN and "not a path" in v.reason


def test_unsafe_then_safe_is_unknown(monkeypatch):
    calls = []

    def flaky(horn, deadline, **kw):
        calls.append(kw["merge"])
        if len(calls) == 1:
            return SpacerAnswer("unsafe", trace=[])
        return spacer(horn, deadline, **kw)
    monkeypatch.setattr(engine_mod, "spacer", flaky)
    v = run(ec.even_counter(7))
    assert calls == [True, False]
    assert v.status == Status.UNKNOWN and "safe without merging" in v.reason


def test_infeasible_derivation_is_never_false(monkeypatch):
    """A path of the cutpoint graph that no execution takes (init -> loop head -> ERROR with x = 0 != 7)."""
    def wrong(horn, deadline, **kw):
        return SpacerAnswer("unsafe", trace=[c for c in horn.clauses if c.name == "init" or
                                             (c.tag is not None and c.tag.src != c.tag.dst)])
    monkeypatch.setattr(engine_mod, "spacer", wrong)
    v = run(ec.even_counter(7))
    assert v.status == Status.UNKNOWN and "no BMC model" in v.reason


def test_deep_counterexample_is_replayed_by_running_the_program(tmp_path, monkeypatch):
    monkeypatch.setattr(loop_path, "REPLAY_LIMIT", 10)
    monkeypatch.setattr(loop_path, "DEEP_LOOP", 5)
    prog = load_text(tmp_path, DEEP.replace("@N@", "12").replace("@OP@", "!="))
    v = run(prog)
    assert v.status == Status.FALSE and "replayed by running the program" in v.reason, v.reason
    assert isinstance(v.evidence, RunCounterexample) and v.evidence.validated
    assert list(v.stats["loop_iterations"].values()) == [12]


# ----------------------------------------------------------------------------------------- limits
def test_timeout_is_unknown():
    v = run(ec.nonneg_counter(), timeout=1.0, bitvector=True)    # Spacer does not prove it in bit-vectors
    assert v.status == Status.UNKNOWN and "timeout" in v.reason and v.time < 3
    assert run(ec.even_counter(7), timeout=0.001).status == Status.UNKNOWN


# ------------------------------------------------------------------------------- C programs and CHC
# s = 3n after the first loop (n <= 10); the second loop counts j up to s and fails once j > LIM
TWO = """int n = __VERIFIER_nondet_int(); __VERIFIER_assume(0 <= n && n <= 10);
  int i = 0, s = 0; while (i < n) { i++; s += 3; }
  int j = 0; while (j < s) { j++; __VERIFIER_assert(j <= LIM); }"""


@pytest.fixture
def load(gcc, tmp_path):
    frontend = pytest.importorskip("looprover.frontend.c")

    def _load(name: str, body: str):
        path = tmp_path / f"{name}.c"
        path.write_text(HEADER + "int main(void) { " + body + " return 0; }\n")
        return frontend.load_c_program(path)
    return _load


def test_c_two_loops(load):
    p = load("two_safe", TWO.replace("LIM", "30"))
    v = run(p)
    assert_proved(p, v)
    assert len(v.evidence.to_json()["invariants"]) == 3                # init and the two loop heads
    cpg = build_cpg(p)
    params = cpg_horn(CPGSystem(cpg), liveness(p)).params       # the variables live at each loop head
    assert [[str(x) for x in params[h]] for h in cpg.cutpoints] == [["n", "i", "s"], ["s", "j"]]
    p = load("two_unsafe", TWO.replace("LIM", "20"))
    v = run(p)
    assert_replayed(p, v)
    first, second = v.stats["loop_iterations"].values()
    assert 7 <= first <= 10 and second == 20                 # j = 21 needs s >= 21, i.e. n >= 7
    assert v.stats["cex_depth"] == first + second + 3


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
def test_horn_clauses(tmp_path, query, want):
    from looprover.frontend.chc import load_chc_program
    path = tmp_path / "two.smt2"
    path.write_text(CHC.replace("QUERY", query))
    p = load_chc_program(path)
    # global guidance (the default) takes > 20 s to find this 33-step counterexample, plain Spacer ~1 s
    v = run(p, global_guidance=want == Status.TRUE)
    if want == Status.TRUE:
        assert_proved(p, v)
        assert any("(P)" in n for n in v.evidence.to_json()["invariants"]) and any("(Q)" in n for n in v.evidence.to_json()["invariants"])
    else:
        assert_replayed(p, v)
        # P counts x to 10 (y = 20), Q counts y down to 0: exactly 10 and 20 iterations
        assert [(n.split()[-1], k) for n, k in v.stats["loop_iterations"].items()] == [("(P)", 10), ("(Q)", 20)]


# ------------------------------------------------------------------------------- registry and CLI
def test_registered_with_its_options():
    eng = get_engine("spacer")
    assert isinstance(eng, SpacerEngine) and eng.bitvector
    assert make_settings(eng, {"global_guidance": "off", "seed": "3"}) == SpacerSettings(False, 3)
    with pytest.raises(ValueError):
        make_settings(eng, {"inline": "on"})
    assert make_settings(eng, {"arrays": "strings"}).arrays == "strings"
    with pytest.raises(ValueError, match="spacer.arrays"):
        make_settings(eng, {"arrays": "cell"})


def test_cli(gcc):
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", "--engine", "spacer", "--json", "--timeout", "20",
                        "--option", "spacer.global_guidance=off", str(EXAMPLES / "multiloop_unsafe.c")],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "FALSE" and data["engine"] == "spacer" and data["counterexample"]["validated"]
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", "--engine", "spacer", "--json", "--timeout", "20",
                        str(EXAMPLES / "multiloop_safe.c")], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    data = json.loads(r.stdout)
    assert data["status"] == "TRUE" and len(data["proof"]["invariants"]) == 3
