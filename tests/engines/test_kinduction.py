"""k-induction with Houdini invariants: proofs of unbounded loops, replayed base-case counterexamples."""
import pytest

from helpers import enginecases as ec
from looprover.deadline import Deadline
from looprover.engines import kinduction, verify
from looprover.engines.kinduction import KInductionSettings
from looprover.evidence.certify import houdini
from looprover.verdict import Status

MODES = pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])


def run(prog, bitvector=False, max_bound=None, timeout=20.0, **kw):
    return verify("kinduction", prog, timeout=timeout, bitvector=bitvector, max_bound=max_bound,
                  settings=KInductionSettings(**kw) if kw else None)


CASES = [
    ("loopfree-safe", lambda: ec.loopfree(True), Status.TRUE),
    ("loopfree-unsafe", lambda: ec.loopfree(False), Status.FALSE),
    ("bounded-safe", lambda: ec.bounded_loop(True), Status.TRUE),
    ("bounded-unsafe", lambda: ec.bounded_loop(False), Status.FALSE),
    ("even-safe", lambda: ec.even_counter(7), Status.TRUE),
    ("even-unsafe", lambda: ec.even_counter(8), Status.FALSE),
    ("nested-safe", lambda: ec.nested(True), Status.TRUE),
    ("nested-unsafe", lambda: ec.nested(False), Status.FALSE),
    ("nested-unbounded-safe", lambda: ec.nested_unbounded(7), Status.TRUE),
    ("nested-unbounded-unsafe", lambda: ec.nested_unbounded(6), Status.FALSE),
    ("udec-safe", ec.unsigned_decrement, Status.TRUE),
    ("uwrap-unsafe", ec.unsigned_wrap_bug, Status.FALSE),
    ("uchar-unsafe", ec.uchar_overflow_bug, Status.FALSE),
    ("sucmp-safe", lambda: ec.signed_unsigned_compare(True), Status.TRUE),
    ("sucmp-unsafe", lambda: ec.signed_unsigned_compare(False), Status.FALSE),
    ("negdiv-safe", lambda: ec.negative_division(True), Status.TRUE),
    ("negdiv-unsafe", lambda: ec.negative_division(False), Status.FALSE),
    ("array-safe", lambda: ec.array_init(True), Status.TRUE),
    ("array-unsafe", lambda: ec.array_init(False), Status.FALSE),
    ("array-nondet-safe", lambda: ec.array_nondet(True), Status.TRUE),
    ("array-nondet-unsafe", lambda: ec.array_nondet(False), Status.FALSE),
    ("irreducible-safe", lambda: ec.irreducible(True), Status.TRUE),
    ("irreducible-unsafe", lambda: ec.irreducible(False), Status.FALSE),
]


@MODES
@pytest.mark.parametrize("name,make,expected", CASES, ids=[c[0] for c in CASES])
def test_verdicts(name, make, expected, bitvector):
    v = run(make(), bitvector, max_bound=40)
    assert v.status == expected, v.reason
    if expected == Status.FALSE:
        assert v.evidence.validated and v.evidence.steps


@MODES
def test_nonneg_counter_needs_an_invariant(bitvector):
    v = run(ec.nonneg_counter(), bitvector, max_bound=10)
    if bitvector:
        # with wrap-around semantics x overflows to INT_MIN: a real (gcc) bug, but one that needs signed
        # overflow; its replay is refused, so the verdict must not be TRUE
        assert v.status != Status.TRUE
    else:
        assert v.status == Status.TRUE, v.reason
        assert any("x >= 0" in str(c) for c in v.evidence.invariants)
    # without invariants, plain k-induction cannot prove it
    assert run(ec.nonneg_counter(), bitvector, max_bound=6, invariants=False).status != Status.TRUE


def test_doubling_wrap_is_never_proved():
    """`i >= 1` is inductive under mathematical integers but not with the wrap: no wrong TRUE."""
    for bv in (False, True):
        v = run(ec.doubling_wrap_bug(), bv, max_bound=6)
        assert v.status == Status.UNKNOWN, v.reason


def test_base_case_counterexample_inputs():
    v = run(ec.deep_bug())
    assert v.status == Status.FALSE and v.evidence.inputs == [42]
    v = run(ec.even_counter(8))
    assert v.status == Status.FALSE and v.evidence.inputs == [True] * 4 + [False]


def test_simple_path_option_still_sound():
    assert run(ec.even_counter(7), simple_path=True).status == Status.TRUE
    assert run(ec.even_counter(8), simple_path=True).status == Status.FALSE


def test_houdini_keeps_only_inductive_candidates():
    from looprover.program.cpg import build_cpg
    from looprover.program.expr import I32, cmp, const
    from looprover.smt.cpg_system import CPGSystem
    prog = ec.even_counter(7)
    cpg = build_cpg(prog)
    sysm = CPGSystem(cpg)
    head = cpg.cutpoints[0]
    x = prog.var("x")
    C = kinduction.Candidate
    cands = [C(head, cmp(">=", x, const(0, I32))), C(head, cmp("<=", x, const(10, I32))),
             C(head, cmp("==", x, const(0, I32))), C(None, cmp("<=", x, const(2**31 - 1, I32)))]
    kept = houdini(sysm, cands, None)
    assert kept == [cands[0]]


SCALAR_PROOF_WITH_ARRAYS = """
extern void abort(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) { reach_error(); abort(); } }
int main(void) {
  int a[100000]; int i = 0, s = 0;
  while (i < 100000) { __VERIFIER_assert(s == %s); a[i] = i; i++; s += 2; }
  return 0;
}
"""


@pytest.mark.parametrize("rhs", ["2 * i", "2 * i + 1"], ids=["safe", "unsafe"])
def test_a_proof_without_array_invariants_skips_the_quantified_houdini_round(tmp_path, rhs):
    """The array offers quantified candidates (`a[k] == k` over the swept cells), but `s == 2 * i` needs none:
    the quantifier-free invariants' proof ends the run before Houdini's round over all of them; the unsafe twin
    is found."""
    from looprover.frontend.c import load_c_program
    f = tmp_path / "p.c"
    f.write_text(SCALAR_PROOF_WITH_ARRAYS % rhs)
    v = verify("kinduction", load_c_program(f, "ILP32"), timeout=30)
    if rhs == "2 * i":
        assert v.status == Status.TRUE and "quantifier-free invariants" in v.reason, v.reason
        assert v.evidence.check(load_c_program(f, "ILP32"), False, Deadline.never()) is None
    else:
        assert v.status == Status.FALSE, v.reason
