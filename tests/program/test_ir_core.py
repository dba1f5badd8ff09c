"""The IR core: smart constructors, C conversions, and the concrete interpreter's C semantics."""
from looprover.program import interp
from looprover.program.cfa import Assert, Assign, Assume, Havoc, ProgramBuilder
from looprover.program.expr import (
    FALSE, I8, I32, TRUE, U8, U32, Binary, IntConst, and_, binary, cast, cmp, const, free_vars, not_, or_,
    substitute, Var,
)


def test_wrap_follows_twos_complement():
    assert U32.wrap(-1) == 4294967295
    assert I8.wrap(200) == -56
    assert U8.wrap(256) == 0
    assert I32.wrap(2**31) == -2**31


def test_smart_constructors_fold():
    x = Var("x", I32)
    c = cmp("<", x, const(3, I32))
    assert and_(TRUE, c) == c
    assert and_(c, FALSE) == FALSE
    assert or_(c, TRUE) == TRUE
    assert not_(not_(c)) == c
    assert cast(U8, const(300, I32)) == IntConst(44, U8)


def test_and_or_drop_repeated_operands_and_keep_their_order():
    x, y = Var("x", I32), Var("y", I32)
    a, b, c = cmp("<", x, y), cmp("==", x, const(1, I32)), cmp(">", y, const(2, I32))
    assert or_(a, b, a, or_(c, a), b).args == (a, b, c, a)     # a nested Or's operands are kept as they are
    assert and_(b, a, b, a).args == (b, a)


def test_a_cached_hash_is_not_pickled():
    """String hashes differ between processes: a term sent to an engine's process must hash there anew."""
    import pickle
    e = Binary("+", Var("x", I32), IntConst(1, I32), I32)
    h = hash(e)
    back = pickle.loads(pickle.dumps(e))
    assert not hasattr(back, "_h") and back == e and hash(back) == h


def test_substitute_and_free_vars():
    x, y = Var("x", I32), Var("y", I32)
    e = binary("+", x, y)
    assert free_vars(e) == {x, y}
    assert substitute(e, {x: const(1, I32)}) == Binary("+", const(1, I32), y, I32)


def _div_program(a: int, b: int):
    bld = ProgramBuilder("div")
    x, y, q, r = (bld.declare(n, I32) for n in "xyqr")
    bld.new_loc()
    bld.add_edge(bld.init, 1, Assign(x, const(a, I32)), Assign(y, const(b, I32)),
                 Assign(q, binary("/", x, y)), Assign(r, binary("%", x, y)))
    return bld.build(exit_loc=1)


def test_interpreter_division_truncates_like_c():
    for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2)]:
        res = interp.run(_div_program(a, b), interp.Oracle())
        q = int(a / b)
        assert (res.state["q"], res.state["r"]) == (q, a - q * b)


def test_interpreter_reports_division_by_zero_as_undefined():
    assert interp.run(_div_program(1, 0), interp.Oracle()).outcome == "undefined"


def test_interpreter_finds_violation_and_exit():
    bld = ProgramBuilder("loop")
    x = bld.declare("x", U32)
    n = bld.declare("n", I32, kind="nondet")
    head, body, done = bld.new_loc(), bld.new_loc(), bld.new_loc()
    bld.add_edge(bld.init, head, Havoc((n,)), Assign(x, const(0, U32)))
    bld.add_edge(head, body, Assume(cmp("<", x, cast(U32, n))))
    bld.add_edge(body, head, Assign(x, binary("+", x, const(1, U32))))
    bld.add_edge(head, done, Assume(not_(cmp("<", x, cast(U32, n)))), Assert(cmp("!=", x, const(5, U32))))
    p = bld.build(exit_loc=done)
    assert interp.run(p, interp.InputOracle(p, [3])).outcome == "exit"
    bad = interp.run(p, interp.InputOracle(p, [5]))
    assert bad.outcome == "violation" and bad.state["x"] == 5


def test_signed_overflow_is_recorded():
    bld = ProgramBuilder("ovf")
    x = bld.declare("x", I32)
    bld.new_loc()
    bld.add_edge(bld.init, 1, Assign(x, const(2**31 - 1, I32)), Assign(x, binary("+", x, const(1, I32))))
    p = bld.build(exit_loc=1)
    math = interp.run(p, interp.Oracle())
    wrap = interp.run(p, interp.Oracle(), signed_overflow="wrap")
    assert math.overflowed and math.state["x"] == 2**31
    assert wrap.state["x"] == -2**31
