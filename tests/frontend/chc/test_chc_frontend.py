"""CHC front-end: clause shapes, the slot translation, unsupported inputs, and Euclidean div/mod."""
import random

import pytest
import z3

from looprover.errors import InputError, UnsupportedError
from looprover.frontend.chc import QUERY_PROP, load_chc_program
from looprover.program import interp
from looprover.program.cfa import Assert, Assign, Havoc

COUNTER = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int))
  (=> (and (inv x y) (< x 10) (= x1 (+ x 1)) (= y1 (+ y 2))) (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) (>= x 10) (not (= y 20))) false)))
(check-sat)
"""


def write(tmp_path, text, name="t.smt2"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_counter_becomes_loop_with_query_edge(tmp_path):
    p = load_chc_program(write(tmp_path, COUNTER))
    inv = next(l for l, n in p.loc_names.items() if n == "inv")
    assert {(e.src, e.dst) for e in p.edges} == {(p.init, inv), (inv, inv), (inv, p.exit)}
    loop = next(e for e in p.edges if e.src == inv == e.dst)
    # x1 = x + 1 is a definition: no havoc, a direct update of the slot
    assert not any(isinstance(s, Havoc) for s in loop.stmts)
    assert [s.lhs.name for s in loop.stmts if isinstance(s, Assign)] == ["i0", "i1"]
    query = next(e for e in p.edges if e.dst == p.exit)
    assert isinstance(query.stmts[-1], Assert) and query.stmts[-1].prop == QUERY_PROP


def test_interpreting_the_counter_reaches_no_violation(tmp_path):
    p = load_chc_program(write(tmp_path, COUNTER))
    assert interp.run(p, interp.Oracle()).outcome == "blocked"  # x = 10, y = 20: the query is blocked
    bad = load_chc_program(write(tmp_path, COUNTER.replace("(not (= y 20))", "(= y 20)")))
    assert interp.run(bad, interp.Oracle()).outcome == "violation"


def test_swapped_arguments_use_parallel_assignment(tmp_path):
    text = """(set-logic HORN)
(declare-fun p (Int Int) Bool)
(assert (forall ((a Int) (b Int)) (=> (and (= a 1) (= b 2)) (p a b))))
(assert (forall ((a Int) (b Int)) (=> (p a b) (p b a))))
(assert (forall ((a Int) (b Int)) (=> (and (p a b) (= a 2) (= b 1)) false)))
"""
    p = load_chc_program(write(tmp_path, text))
    ploc = next(l for l, n in p.loc_names.items() if n == "p")
    swap = next(e for e in p.edges if e.src == ploc == e.dst)
    state = {"i0": 1, "i1": 2, "ni0": 0, "ni1": 0}
    res = interp.try_edge(interp.Evaluator(), swap, state, interp.Oracle())
    assert res.blocked is None and (res.state["i0"], res.state["i1"]) == (2, 1)


def test_zero_ary_predicates_and_bool_arguments(tmp_path):
    text = """(set-logic HORN)
(declare-fun start () Bool)
(declare-fun q (Bool Int) Bool)
(assert start)
(assert (forall ((b Bool) (n Int)) (=> (and start (= b (> n 3))) (q b n))))
(assert (forall ((b Bool) (n Int)) (=> (and (q b n) b (< n 2)) false)))
"""
    p = load_chc_program(write(tmp_path, text))
    assert {n for n in p.loc_names.values()} >= {"start", "q"}
    assert any(info.var.type.__class__.__name__ == "BoolType" for info in p.variables.values())


@pytest.mark.parametrize("bad, construct", [
    ("(declare-fun p (Int) Bool)(declare-fun r (Int) Bool)"
     "(assert (forall ((x Int)) (=> (and (p x) (r x)) false)))", "non-linear"),
    ("(declare-fun p (Real) Bool)(assert (forall ((x Real)) (=> (> x 0.0) (p x))))", "sort Real"),
    ("(declare-fun p (Int) Bool)(assert (forall ((x Int) (y Int)) (=> (= x (div y x)) (p x))))", "div/mod"),
])
def test_unsupported_inputs(tmp_path, bad, construct):
    with pytest.raises(UnsupportedError) as err:
        load_chc_program(write(tmp_path, "(set-logic HORN)\n" + bad))
    assert construct in str(err.value)


def test_bad_files(tmp_path):
    with pytest.raises(InputError):
        load_chc_program(tmp_path / "missing.smt2")
    with pytest.raises(InputError):
        load_chc_program(write(tmp_path, ""))
    with pytest.raises(InputError):
        load_chc_program(write(tmp_path, "(set-logic HORN)\n(assert (forall ((x Int)) (=> (> x 0) (p x))))"))


def test_euclidean_div_mod_agree_with_z3(tmp_path):
    text = """(set-logic HORN)
(declare-fun p (Int Int Int) Bool)
(assert (forall ((x Int) (q Int) (r Int)) (=> (and (= q (div x {d})) (= r (mod x {d}))) (p x q r))))
"""
    rng = random.Random(7)
    for d in (3, -3, 50, 1):
        p = load_chc_program(write(tmp_path, text.format(d=d), f"d{d}.smt2"))
        edge = next(e for e in p.edges if e.src == p.init)
        for _ in range(30):
            x = rng.randint(-200, 200)
            oracle = lambda v, x=x: x  # the only havocked clause variable is x
            res = interp.try_edge(interp.Evaluator(), edge, {n: 0 for n in p.variables}, oracle)
            state = interp.commit(res)
            expect_q = z3.simplify(z3.IntVal(x) / z3.IntVal(d)).as_long()
            expect_r = z3.simplify(z3.IntVal(x) % z3.IntVal(d)).as_long()
            assert (state["i0"], state["i1"], state["i2"]) == (x, expect_q, expect_r), (x, d)


@pytest.mark.slow
def test_every_shared_chc_file_loads(shared_dir):
    files = sorted((shared_dir / "benchmarks" / "chc").rglob("*.smt2"))
    assert files
    for f in files:
        p = load_chc_program(f)
        assert any(isinstance(s, Assert) for _, s in p.statements()), f
