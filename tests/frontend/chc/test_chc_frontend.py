"""CHC front-end: clause shapes, the slot translation, unsupported inputs, and Euclidean div/mod."""
import random

import pytest
import z3

from looprover.engines import verify
from looprover.errors import InputError, UnsupportedError
from looprover.frontend.chc import QUERY_PROP, load_chc_program
from looprover.program import interp
from looprover.program.cfa import Assert, Assign, Havoc
from looprover.program.expr import Binary, IntConst
from looprover.smt.encode import Encoder
from looprover.smt.terms import subterms
from looprover.verdict import Status

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
    ("(declare-fun p ((Array Int Bool)) Bool)(assert (forall ((a (Array Int Bool))) (p a)))", "sort Array(Int, Bool)"),
    ("(declare-fun p (Int) Bool)(assert (forall ((x Int) (y Int)) (=> (= x (div y x)) (p x))))", "non-constant"),
    ("(declare-fun p (Int) Bool)(assert (forall ((x Int) (y Int)) (=> (= x (mod y (- 2 2))) (p x))))", "by zero"),
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


DIVMOD = """(set-logic HORN)
(declare-fun p (Int Int Int) Bool)
(assert (forall ((x Int) (q Int) (r Int)) (=> (and (= q (div x {d})) (= r (mod x {d}))) (p x q r))))
"""


def _smt_int(v: int) -> str:
    """CHC-COMP spelling of an integer: a negative one is `(- n)`, which z3 parses as a unary minus."""
    return str(v) if v >= 0 else f"(- {-v})"


@pytest.mark.parametrize("d, value", [("(- 2)", -2), ("(- 3)", -3), ("(* 2 (- 3))", -6), ("(- (+ 1 1) 5)", -3),
                                      ("(* 2 3)", 6)])
def test_constant_expressions_count_as_constant_divisors(tmp_path, d, value):
    """The divisor becomes one literal (so the encoding stays linear) with the value z3 gives it."""
    p = load_chc_program(write(tmp_path, DIVMOD.format(d=d)))
    edge = next(e for e in p.edges if e.src == p.init)
    q = next(s.rhs for s in edge.stmts if isinstance(s, Assign) and s.lhs.name == "i1")
    assert isinstance(q, Binary) and q.op == "/" and q.rhs == IntConst(value, q.type)
    enc = Encoder(p)
    env = {name: z3.Int(name) for name in p.variables}
    enc.expr(q, env)
    assert not enc.nonlinear


def _divmod_terms(t: z3.ExprRef) -> list[tuple[int, str, int]]:
    return [(u.decl().kind(), u.arg(0).sexpr(), u.arg(1).as_long()) for u in subterms(t)
            if z3.is_app_of(u, z3.Z3_OP_IDIV) or z3.is_app_of(u, z3.Z3_OP_MOD)]


def test_div_mod_by_constant_expressions_match_z3_on_random_values(tmp_path):
    """Property check (seeded random: the project does not use hypothesis): for random divisors written the
    CHC-COMP way and random dividends, both the interpreter and the SMT encoding of the translated clause give
    z3's own `div`/`mod`; and z3 proves the encoding equal to `div`/`mod` for every dividend."""
    rng = random.Random(14)
    divisors = {-1, 1, -2, 2, -3} | {rng.choice([-1, 1]) * rng.randint(1, 10 ** rng.randint(1, 12)) for _ in range(25)}
    for d in sorted(divisors):
        p = load_chc_program(write(tmp_path, DIVMOD.format(d=_smt_int(d)), f"d{d}.smt2"))
        edge = next(e for e in p.edges if e.src == p.init)
        havocked = next(s.vars[0].name for s in edge.stmts if isinstance(s, Havoc))
        rhs = {s.lhs.name: s.rhs for s in edge.stmts if isinstance(s, Assign)}
        x = z3.Int("x")
        env = {name: z3.Int(name) for name in p.variables} | {havocked: x}
        enc = Encoder(p)
        q_enc, r_enc = enc.expr(rhs["i1"], env), enc.expr(rhs["i2"], env)
        # one z3 `div` and one `mod` of x, not C's truncating operators with their sign fix-ups re-encoded
        assert [_divmod_terms(t) for t in (q_enc, r_enc)] == [[(z3.Z3_OP_IDIV, "x", d)], [(z3.Z3_OP_MOD, "x", abs(d))]]
        s = z3.Solver()
        s.add(z3.Or(q_enc != x / d, r_enc != x % d))
        assert s.check() == z3.unsat, (d, s.model() if s.check() == z3.sat else None)
        for _ in range(20):
            xv = rng.choice([-1, 1]) * rng.randint(0, 10 ** rng.randint(1, 15))
            want_q = z3.simplify(z3.IntVal(xv) / z3.IntVal(d)).as_long()
            want_r = z3.simplify(z3.IntVal(xv) % z3.IntVal(d)).as_long()
            res = interp.try_edge(interp.Evaluator(), edge, {n: 0 for n in p.variables}, lambda v, xv=xv: xv)
            state = interp.commit(res)
            assert (state["i0"], state["i1"], state["i2"]) == (xv, want_q, want_r), (xv, d)
            got = [z3.simplify(z3.substitute(t, (x, z3.IntVal(xv)))).as_long() for t in (q_enc, r_enc)]
            assert got == [want_q, want_r], (xv, d)


# x counts 0, 6, 12, ... and y is a function of x defined in the rule (definitions are translated as written,
# not simplified first): `mod x (- 3)` stays 0 (sat: the query is unreachable), `div x (- 2)` reaches -3 at x = 6
# (unsat: the query is reachable).
NEG_DIVISOR_LOOP = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int)) (=> (and (inv x y) (= x1 (+ x 6)) (= y1 ({op} x1 (- {d}))))
  (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) {query}) false)))
(check-sat)
"""


@pytest.mark.parametrize("op, d, query, want", [("mod", 3, "(not (= y 0))", Status.TRUE),
                                                 ("div", 2, "(= y (- 3))", Status.FALSE)], ids=["sat", "unsat"])
@pytest.mark.parametrize("engine", ["tpa", "kinduction"])
def test_negative_constant_divisors_are_decided(tmp_path, op, d, query, want, engine):
    p = load_chc_program(write(tmp_path, NEG_DIVISOR_LOOP.format(op=op, d=d, query=query)))
    v = verify(engine, p, timeout=30)
    assert v.status == want, v.reason


# a loop that writes v into a[i] for i in [0, n): a[0] is v afterwards (sat); with `+ i` added to the cell
# instead, a[1] is 1 after two iterations (unsat)
ARRAY_LOOP = """(set-logic HORN)
(declare-fun inv (Int (Array Int Int) Int) Bool)
(assert (forall ((i Int) (a (Array Int Int)) (n Int))
  (=> (and (= i 0) (> n 0) (= a ((as const (Array Int Int)) 0))) (inv i a n))))
(assert (forall ((i Int) (a (Array Int Int)) (n Int) (i1 Int) (a1 (Array Int Int)))
  (=> (and (inv i a n) (< i n) (= a1 (store a i {value})) (= i1 (+ i 1))) (inv i1 a1 n))))
(assert (forall ((i Int) (a (Array Int Int)) (n Int))
  (=> (and (inv i a n) (>= i n) (not (= (select a {cell}) {want}))) false)))
(check-sat)
"""


def test_integer_arrays_become_ir_array_slots(tmp_path):
    from looprover.program.expr import ArrayType, ConstArray, Store
    p = load_chc_program(write(tmp_path, ARRAY_LOOP.format(value=7, cell=0, want=7)))
    arrays = [i.var for i in p.variables.values() if isinstance(i.var.type, ArrayType)]
    assert [a.name for a in arrays if not a.name.startswith(("h", "n"))] == ["a0"]
    rhs = [s.rhs for _, s in p.statements() if isinstance(s, Assign)]
    assert any(isinstance(r, ConstArray) for r in rhs) and any(isinstance(r, Store) for r in rhs)


@pytest.mark.parametrize("value, cell, want, engine, expected", [
    (7, 0, 7, "spacer", Status.TRUE), (7, 0, 7, "portfolio", Status.TRUE),
    ("(+ (select a i) i)", 1, 0, "bmc", Status.FALSE), ("(+ (select a i) i)", 1, 0, "portfolio", Status.FALSE)],
    ids=["sat-spacer", "sat-portfolio", "unsat-bmc", "unsat-portfolio"])
def test_horn_clauses_over_arrays_are_decided(tmp_path, value, cell, want, engine, expected):
    """sat through a re-checked certificate (an invariant over the array), unsat through a replayed derivation."""
    p = load_chc_program(write(tmp_path, ARRAY_LOOP.format(value=value, cell=cell, want=want)))
    v = verify(engine, p, timeout=30)
    assert v.status == expected, v.reason


EQUAL_ARRAYS = """(set-logic HORN)
(declare-fun p ((Array Int Int) Int) Bool)
(assert (forall ((a (Array Int Int)) (i Int)) (p a i)))
(assert (forall ((a (Array Int Int)) (b (Array Int Int)) (c (Array Int Int)) (i Int) (g Bool))
  (=> (and (p a i) g (or (not g) (= b c)) (or (not g) (= c (store a i (- 5))))) false)))
(check-sat)
"""


def test_a_derivation_over_equal_arrays_replays_again_from_its_recorded_values(tmp_path):
    """b is never read, only equated with c = a[i := -5] (under a guard, so neither is a definition the
    front-end substitutes): its recorded value must still be the model's whole array (a lazily read one would
    be all zeros, and the job's second replay would find b != c)."""
    from looprover.evidence.replay import replay
    p = load_chc_program(write(tmp_path, EQUAL_ARRAYS))
    v = verify("bmc", p, timeout=30)
    assert v.status == Status.FALSE, v.reason
    again = replay(p, v.evidence)
    assert again.ok, again.reason


@pytest.mark.slow
def test_every_shared_chc_file_loads(shared_dir):
    files = sorted((shared_dir / "benchmarks" / "chc").rglob("*.smt2"))
    assert files
    for f in files:
        p = load_chc_program(f)
        assert any(isinstance(s, Assert) for _, s in p.statements()), f


def test_assert_lines_skip_comments_strings_and_quoted_symbols():
    from looprover.frontend.chc import assert_lines
    text = ('(set-info :source |an (assert in a quoted symbol|)\n'
            '; (assert in a comment)\n'
            '(set-info :note "a (assert in a string, with "" inside)")\n'
            '(declare-fun |p q| (Int) Bool)\n'
            '(assert (forall ((x Int)) (=> (= x 0) (|p q| x))))\n'
            '\n'
            '  (assert\n   (forall ((x Int)) (=> (|p q| x) false)))\n'
            '(assert-soft true)\n')
    assert assert_lines(text) == [5, 7]


def test_edges_keep_their_clause_position_line_and_variable_names(tmp_path):
    """Traces speak of the file's clauses: the k-th assert is clause k at its own line, and its variables keep
    their names (the slots i0, i1 are shared by every predicate)."""
    p = load_chc_program(write(tmp_path, "; a comment line\n" + COUNTER))
    by_number = {c.number: (e, c) for e, c in p.clauses.items()}
    assert sorted(by_number) == [1, 2, 3] and [c.line for _, (_, c) in sorted(by_number.items())] == [4, 5, 7]
    edge, rule = by_number[2]
    assert rule.head == "inv" and [n for n, _ in rule.variables] == ["x", "y", "x1", "y1"]
    assert all(s.src is not None and s.src.line == 5 for s in edge.stmts)
    # the values are expressions over the state before the step: x1 = x + 1 from x in slot i0
    res = interp.try_edge(interp.Evaluator(), edge, {"i0": 3, "i1": 6}, interp.Oracle())
    values = {n: interp.Evaluator().eval(e, {"i0": 3, "i1": 6}) for n, e in rule.variables}
    assert values == {"x": 3, "y": 6, "x1": 4, "y1": 8}
    assert [interp.Evaluator().eval(e, {"i0": 3, "i1": 6}) for e in rule.head_args] == [4, 8]
    assert (res.state["i0"], res.state["i1"]) == (4, 8)
    assert by_number[3][1].head is None and "(inv x y)" in by_number[3][1].text


def test_unsupported_clause_is_named_by_line_and_position(tmp_path):
    text = ("(set-logic HORN)\n(declare-fun p (Int) Bool)\n(declare-fun r (Int) Bool)\n"
            "(assert (forall ((x Int)) (=> (= x 0) (p x))))\n"
            "(assert (forall ((x Int)) (=> (and (p x) (r x)) false)))\n")
    with pytest.raises(UnsupportedError) as err:
        load_chc_program(write(tmp_path, text))
    assert str(err.value).endswith("t.smt2:5 (clause 2)")


@pytest.mark.parametrize("text, message", [
    ("(set-logic HORN)\n(declare-fun p (Int) Bool)\n(assert (forall ((x Int)) (=> (> x 0) (p x)))\n"
     "(assert (forall ((x Int)) (=> (and (p x) (> x 5 ) false))))\n",
     "t.smt2:4:0: invalid assert command, ')' expected"),
    ("(set-logic HORN)\n(declare-fun p (Int) Bool)\n(assert (> x 0))\n(assert (p \"a\"))\n",
     "t.smt2:3:11: unknown constant x (and 1 more error)"),
])
def test_parse_errors_are_one_readable_line(tmp_path, text, message):
    """z3 reports parse errors as the bytes of `(error "line L column C: ...")`: shown as file:line:column, not as
    a Python bytes literal."""
    with pytest.raises(InputError) as err:
        load_chc_program(write(tmp_path, text))
    assert str(err.value).endswith(message) and "b'" not in str(err.value) and "\n" not in str(err.value)


def test_definitions_keep_the_constraint_and_eliminate_what_they_define():
    """Property check (seeded random): for random conjunctions of equations between clause variables (chains,
    cycles, both orientations) and bounds, the chosen definitions are closed (no defined variable in a
    definition or in the rest) and the rest with `v = definition(v)` is equivalent to the constraint."""
    from looprover.frontend.chc import Clause, _definitions
    rng = random.Random(11)
    for _ in range(150):
        vs = [z3.Int(f"v{i}") for i in range(rng.randint(2, 7))]
        slot = {vs[0].get_id(): None}                   # v0 is bound to a slot: never defined
        parts = []
        for _ in range(rng.randint(1, 8)):
            a, b = rng.sample(vs, 2)
            t = rng.choice([b + rng.randint(-2, 2), 2 * b - a if rng.random() < 0.3 else b, b * 3])
            parts.append(a == t if rng.random() < 0.5 else t == a)
            if rng.random() < 0.3:
                parts.append(rng.choice(vs) <= rng.randint(-3, 3))
        clause = Clause([], z3.And(*parts), None, vs, 0, [str(v) for v in vs], None, "")
        defs, rest = _definitions(clause, slot)
        assert vs[0].get_id() not in defs
        byid = {v.get_id(): v for v in vs}
        for t in [*defs.values(), *rest]:
            assert not {u.get_id() for u in subterms(t)} & defs.keys(), (parts, t)
        rebuilt = z3.And(*rest, *[byid[k] == d for k, d in defs.items()])
        s = z3.Solver()
        s.add(z3.Not(rebuilt == z3.And(*parts)))
        assert s.check() == z3.unsat, parts
