"""TPA on C programs: the single-loop system, wrap-around as a side obligation, and deep counterexamples that are
replayed by running the program (issue 4: deep_safe_N TRUE, underapprox_counter_N FALSE for large N).
The single-loop system alone: tests/tpa/test_program_ts.py; the wrap split: tests/smt/test_nowrap.py."""
from __future__ import annotations

import pytest

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.verdict import Status
from looprover.evidence.deep import RunCounterexample
from looprover.evidence.recheck import recheck_proof

from helpers.deep_counter import DEEP, HEADER, load


def run(prog, timeout=30.0, bitvector=False):
    return verify("tpa", prog, timeout=timeout, bitvector=bitvector)


@pytest.mark.parametrize("n", [10, 1000, 10**6, 10**9])
def test_deep_safe_is_true_for_every_n(tmp_path, n):
    prog = load(tmp_path, DEEP.replace("@N@", str(n)).replace("@OP@", "=="))
    v = run(prog)
    assert v.status == Status.TRUE, v.reason
    proof = v.evidence
    assert proof.head is not None and proof.certificate.free_trans is not None        # the loop's own TS, wrap-free
    assert recheck_proof(prog, proof, False, Deadline.after(30)) is None


@pytest.mark.slow
@pytest.mark.parametrize("n", [1000, 10**5])
def test_deep_unsafe_counter_is_false_with_exact_depth(tmp_path, n):
    v = run(load(tmp_path, DEEP.replace("@N@", str(n)).replace("@OP@", "!=")))
    assert v.status == Status.FALSE, v.reason
    cex = v.evidence
    assert cex.validated
    assert v.stats["loop_iterations"] == n and v.stats["cex_depth"] == n + 2
    if n > 2000:      # beyond the BMC replay limit: run on the interpreter, shown abbreviated
        assert isinstance(cex, RunCounterexample)
        assert cex.length > n and cex.omitted == cex.length - len(cex.steps)


@pytest.mark.slow
def test_unsafe_counter_bitvector(tmp_path):
    """Bit-vector mode goes through the same loop system (no wrap split); its interpolants are weaker, so the
    depth stays small here (N = 5000 does not finish in 30 s)."""
    v = run(load(tmp_path, DEEP.replace("@N@", "20").replace("@OP@", "!=")), bitvector=True)
    assert v.status == Status.FALSE and v.evidence.validated
    assert v.stats["loop_iterations"] == 20 and "wrap_split" not in v.stats


@pytest.mark.slow
def test_wrap_that_matters_is_found_through_the_exact_system(tmp_path):
    """x wraps from 4294967290 to 4: the wrap-free run ends in a wrap state, the exact system finds the bug."""
    prog = load(tmp_path, HEADER + """int main(void) {
      unsigned int x = 4294967290u; int i = 0;
      while (i < 10) { x++; i++; }
      __VERIFIER_assert(x > 100u);
      return 0; }""")
    v = run(prog)
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and v.stats.get("wrap_fallback")


@pytest.mark.slow
def test_harmless_wrap_is_never_a_wrong_answer(tmp_path):
    """Safe only because of the wrap: the wrap-free system must not be taken for the program."""
    prog = load(tmp_path, HEADER + """int main(void) {
      unsigned int x = 4294967290u; int i = 0;
      while (i < 10) { x++; i++; }
      __VERIFIER_assert(x < 10u);
      return 0; }""")
    v = run(prog, timeout=20)
    assert v.status in (Status.TRUE, Status.UNKNOWN), v.reason
    if v.status == Status.TRUE:
        assert v.evidence.certificate.free_trans is None


def test_nondet_bound_unsafe(tmp_path):
    """The loop bound is an input: the counterexample carries it, and it replays."""
    prog = load(tmp_path, HEADER + """int main(void) {
      unsigned int n = __VERIFIER_nondet_uint(), x = 0, y = 0;
      if (n > 5000u) return 0;
      while (x < n) { x++; y += 3; }
      __VERIFIER_assert(y != 9000u);
      return 0; }""")
    v = run(prog)
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and v.evidence.inputs == [3000]


@pytest.mark.slow
def test_deep_counterexample_inputs_reproduce_the_run(tmp_path):
    """Regression (review): inputs read on an enabled edge were lost when the interpreter tried a blocked
    sibling edge first, so the printed inputs did not reproduce the violation."""
    from looprover.program.interp import InputOracle, run as interp_run
    prog = load(tmp_path, HEADER.replace("unsigned int __VERIFIER_nondet_uint", "int __VERIFIER_nondet_int") +
                """int main(void) {
      int c = __VERIFIER_nondet_int(); int x = 0;
      if (c) { x = __VERIFIER_nondet_int(); } else { x = 5; }
      unsigned i = 0; while (i < 5000u) { i++; }
      __VERIFIER_assert(x != 42);
      return 0; }""")
    v = run(prog)
    assert v.status == Status.FALSE and isinstance(v.evidence, RunCounterexample), v.reason
    assert len(v.evidence.inputs) == 2 and v.evidence.inputs[1] == 42
    assert interp_run(prog, InputOracle(prog, v.evidence.inputs)).outcome == "violation"
