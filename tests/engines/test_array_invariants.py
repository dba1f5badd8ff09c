"""Quantified array invariants (`domains/cells.py`) in k-induction: array loops of a hundred thousand iterations
proved 1-inductively, their unsafe twins never TRUE, and every kept invariant true in random concrete runs."""
import pytest

from looprover.domains import candidates, sample_states
from looprover.engines import verify
from looprover.evidence.certify import houdini
from looprover.program.cpg import build_cpg
from looprover.program.expr import ArrayType, Compare, ForAll
from looprover.program.interp import Evaluator
from looprover.smt.cpg_system import CPGSystem
from looprover.verdict import Status

from helpers.svcomp_c import load_main

GLOBALS = "int N = 100000;\n"

# name: (safe body of main, the same with one change that makes it unsafe)
PROGRAMS = {
    # a running sum stored per cell, checked by a second loop
    "sum": ("int i, j = 0; int a[N]; for (i = 0; i < N; i++) { if (__VERIFIER_nondet_int()) break; a[i] = j; j += i; }"
            " for (int k = 1; k < i; k++) __VERIFIER_assert(a[k] >= 0);",
            "int i, j = 0; int a[N]; for (i = 0; i < N; i++) { if (__VERIFIER_nondet_int()) break; a[i] = j; j += i - 2; }"
            " for (int k = 1; k < i; k++) __VERIFIER_assert(a[k] >= 0);"),
    # two arrays related cell by cell, combined into a third
    "pair": ("int i; int a[N], b[N], c[N]; for (i = 0; i < N; i++) { int x = __VERIFIER_nondet_int();"
             " __VERIFIER_assume(x > -1000 && x < 1000); a[i] = x; b[i] = 3 - x; }"
             " for (i = 0; i < N; i++) c[i] = a[i] + b[i]; for (i = 0; i < N; i++) __VERIFIER_assert(c[i] == 3);",
             "int i; int a[N], b[N], c[N]; for (i = 0; i < N; i++) { int x = __VERIFIER_nondet_int();"
             " __VERIFIER_assume(x > -1000 && x < 1000); a[i] = x; b[i] = 3 - x; }"
             " for (i = 1; i < N; i++) c[i] = a[i] + b[i]; for (i = 0; i < N; i++) __VERIFIER_assert(c[i] == 3);"),
    # a copy filled from both ends at once
    "ends": ("int S = __VERIFIER_nondet_int(); __VERIFIER_assume(S > 1 && S < 100000); int i; int a[2*S], b[2*S];"
             " for (i = 0; i < S; i++) { b[2*S - (i+1)] = a[2*S - (i+1)]; b[i] = a[i]; }"
             " for (i = 0; i < 2*S; i++) __VERIFIER_assert(b[i] == a[i]);",
             "int S = __VERIFIER_nondet_int(); __VERIFIER_assume(S > 1 && S < 100000); int i; int a[2*S], b[2*S];"
             " for (i = 0; i < S; i++) { b[2*S - (i+2)] = a[2*S - (i+2)]; b[i] = a[i]; }"
             " for (i = 0; i < 2*S; i++) __VERIFIER_assert(b[i] == a[i]);"),
    # a stride of two, each step writing two cells
    "stride": ("int i; int a[2*N+2]; for (i = 0; i <= N; i++) { a[2*i] = 0; a[2*i+1] = 1; }"
               " for (i = 0; i <= 2*N; i++) __VERIFIER_assert(a[i] >= 0);",
               "int i; int a[2*N+2]; for (i = 0; i < N; i++) { a[2*i] = 0; a[2*i+1] = 1; }"
               " for (i = 0; i <= 2*N; i++) __VERIFIER_assert(a[i] >= 0);"),
}


@pytest.fixture
def load(tmp_path):
    pytest.importorskip("looprover.frontend.c")
    return lambda name, body: load_main(tmp_path, name, body, GLOBALS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_safe_array_loops_are_proved_with_quantified_invariants(load, name):
    v = verify("kinduction", load(name, PROGRAMS[name][0]), timeout=60)
    assert v.status == Status.TRUE, v.reason
    assert any(isinstance(c.atom, ForAll) for c in v.evidence.invariants)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_unsafe_twins_are_never_true(load, name):
    v = verify("kinduction", load(name + "_bad", PROGRAMS[name][1]), timeout=20, max_bound=6)
    assert v.status != Status.TRUE, v.reason


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kept_quantified_invariants_hold_in_random_runs(load, name):
    """Houdini's quantified survivors against states of random runs that its candidates never saw (other seeds,
    longer runs): each must hold in every one."""
    prog = load(name, PROGRAMS[name][0])
    cpg = build_cpg(prog)
    samples = sample_states(prog, set(cpg.cutpoints), arrays=True)
    kept = houdini(CPGSystem(cpg, False, None), candidates(prog, cpg, samples, False), None)
    quantified = [c for c in kept or [] if isinstance(c.atom, ForAll)]
    assert quantified
    ev = Evaluator("math")
    checked = 0
    for seed in (1, 2, 3):
        fresh = sample_states(prog, set(cpg.cutpoints), seed=seed, runs=32, max_steps=1500, arrays=True)
        for c in quantified:
            for s in fresh[c.node]:
                assert ev.eval(c.atom, s), f"{c} fails in {s}"
                checked += 1
    assert checked > 0


RELATIONAL = """(set-logic HORN)
(declare-fun inv (Int Int (Array Int Int) (Array Int Int)) Bool)
(assert (forall ((n Int) (a (Array Int Int)) (b (Array Int Int))) (=> (= a b) (inv 0 n a b))))
(assert (forall ((i Int) (n Int) (a (Array Int Int)) (b (Array Int Int)) (v Int))
  (=> (and (inv i n a b) (< i n)) (inv (+ i 1) n (store a i v) (store b i v)))))
(assert (forall ((i Int) (n Int) (a (Array Int Int)) (b (Array Int Int)) (k Int))
  (=> (and (inv i n a b) (not (= (select a k) (select b k)))) false)))
"""


@pytest.mark.parametrize("twin", [False, True], ids=["sat", "unsat"])
def test_arrays_kept_equal_by_two_runs_side_by_side(tmp_path, twin):
    """Two versions of a loop writing the same values (a relational Horn system, as CHC-COMP's llreve tasks):
    `a == b` holds everywhere, with no index range; the twin writes v + 1 to b and is never sat."""
    from looprover.frontend.chc import load_chc_program
    path = tmp_path / "rel.smt2"
    path.write_text(RELATIONAL.replace("(store b i v)", "(store b i (+ v 1))") if twin else RELATIONAL)
    v = verify("kinduction", load_chc_program(path), timeout=20, max_bound=8)
    if twin:
        assert v.status != Status.TRUE, v.reason
    else:
        assert v.status == Status.TRUE, v.reason
        assert any(isinstance(c.atom, Compare) and isinstance(c.atom.lhs.type, ArrayType)
                   for c in v.evidence.invariants), [str(c) for c in v.evidence.invariants]
