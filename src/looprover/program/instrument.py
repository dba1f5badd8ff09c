"""The `no-overflow` property as assertions: before each statement, an `Assert` (property `no-overflow`) that
every signed arithmetic operation the statement evaluates stays within its type.

What counts as an overflow is SV-COMP's definition of `G ! overflow` (sv-comp.sosy-lab.org/rules.php,
"Properties", also quoted by witness converters): "It can never happen that the resulting type of an
operation is a signed integer type but the resulting value is not in the range of values that are
representable by that type." How the competition reads it, from its benchmarks and tools:
  * signed `+ - *`, unary `-`, and `/`, `%` (INT_MIN / -1, INT_MIN % -1): overflows (sosy-lab/cpachecker
    `util/ArithmeticOverflowAssumptionBuilder.java` and `OverflowAssumptionManager.java`, the checks of its
    SV-COMP overflow configuration `config/specification/overflow.spc`, cover exactly these;
    sv-benchmarks `signedintegeroverflow-regression`: Division-1, UnaryMinus, Multiplication-1/2, ...);
  * signed `x << n` with `x >= 0` and `0 <= n < width` whose value exceeds the type (CPAchecker:
    "shifting out set bits ... is considered to be an overflow", the check `x <= MAX >> n`);
  * conversions are not operations that overflow: converting an out-of-range value to a signed type is
    implementation-defined (C11 6.3.1.3p3), and sv-benchmarks `ConversionToSignedInt.yml` expects `true` for
    no-overflow (CPAchecker does not check casts either); the C front-end makes promotions explicit, so
    `char` arithmetic is `int` arithmetic followed by such a conversion (`IntegerPromotion.yml`: true);
  * unsigned arithmetic wraps and is never an overflow.
Undefined behaviour whose status the definition leaves open -- a shift by a negative amount or by the width
or more, a left shift of a negative value, division by zero -- and arithmetic in the index type inside an
array subscript (the front-end's own index computations for nested arrays look like C's there) get an
assertion of property `UNDECIDED` instead: it keeps a TRUE sound (the proof covers it), and a violation of it
is answered UNKNOWN by the job (`undecided_reason`), never FALSE.

Why assertions in the IR rather than a check inside each engine: every engine treats assertions alike, and a
counterexample then ends at the failing check, before the overflowing statement runs, with the operands'
values in the trace (so no replay ever sees the overflow itself, which replays refuse as undefined).

The checks are exact in both encodings: a check against a constant operand is a bound on the other operand in
its own type (linear, cheap); otherwise the operation is recomputed in a wider signed type (`I64` for up to
32 bits, 128 bits for 64) where it cannot overflow, and compared with the type's bounds. `&&`, `||` and `?:`
are IR `And`/`Or`/`Ite` when their conditional part is pure (`frontend/c/lower.py`); an operation under them
is checked only when it is evaluated (its check is guarded by the conditions that lead to it). Control flow
the front-end made of them is covered by placing checks before the `Assume`s that are its branches.

The program's other assertions (`reach_error`, `__VERIFIER_assert` without a body: `unreach-call`) are
dropped: reaching them is not an overflow, and what the program does afterwards is what the front-end
inlined (SV-COMP's `reach_error` bodies call `__assert_fail`, which ends the run; without a body the run
goes on, which only adds executions). A value computed and discarded (`x + 1;`) is only in the program when
the front-end was asked to keep it (`load_c_program(keep_values=True)`, as the job does for this property).
"""
from __future__ import annotations

from looprover.errors import UnsupportedError
from looprover.properties import NO_OVERFLOW, UNDECIDED, UNDEFINED_ASSERT, UNMODELLED
from looprover.program.cfa import Assert, Assign, Edge, Havoc, Program, SrcLoc, Stmt
from looprover.program.expr import (
    BINDERS, FALSE, I64, TRUE, And, Binary, Expr, Ite, IntConst, IntType, Or, Select, Store, Unary, and_, cast,
    cmp, const, implies, not_, or_,
)

I128 = IntType(128, True)


def instrument_no_overflow(program: Program, keep_assertions: bool = False) -> Program:
    """The program with an overflow check before each statement and without its other assertions (with
    `keep_assertions`, with them: `looprover check` verifies every kind at once)."""
    ops: dict[Expr, bool] = {}
    edges = [Edge(e.src, e.dst, tuple(_edge_stmts(e, keep_assertions, ops))) for e in program.edges]
    return program.with_edges(edges)


def undecided_reason(assertion: Assert) -> str:
    where = f" at {assertion.src}" if assertion.src else ""
    return (f"undefined behaviour that SV-COMP's overflow definition does not classify is reachable{where} "
            f"(a shift amount out of range, a left shift of a negative value, a division by zero, or index "
            f"arithmetic): {assertion.cond}")


def _edge_stmts(edge: Edge, keep_assertions: bool, ops: dict[Expr, bool]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in edge.stmts:
        if isinstance(s, Havoc) or (isinstance(s, Assert) and s.prop in UNMODELLED):
            out.append(s)       # the model's own conditions: their arithmetic is checked where the program does it
            continue
        expr = s.rhs if isinstance(s, Assign) else s.cond
        checks: list[tuple[str, Expr]] = []
        _collect(expr, TRUE, False, checks, ops)
        out.extend(_asserts(checks, s.src))
        if isinstance(s, Assert) and s.prop not in (NO_OVERFLOW, UNDECIDED, UNDEFINED_ASSERT) and not keep_assertions:
            continue            # reachability is not this property
        out.append(s)
    return out


def _asserts(checks: list[tuple[str, Expr]], src: SrcLoc | None) -> list[Assert]:
    """One assertion per run of consecutive checks of the same kind, in evaluation order."""
    out: list[Assert] = []
    for prop, cond in checks:
        if cond == TRUE:
            continue
        if out and out[-1].prop == prop:
            out[-1] = Assert(and_(out[-1].cond, cond), prop, src)
        else:
            out.append(Assert(cond, prop, src))
    return out


def _has_ops(e: Expr, ops: dict[Expr, bool]) -> bool:
    """Does `e` evaluate an operation `_op_checks` looks at (or bind a variable, which `_collect` refuses)?
    Memoised over the statements of a program, which share large sub-terms (a dereference's case split)."""
    known = ops.get(e)
    if known is None:
        known = ops[e] = isinstance(e, BINDERS) or _is_op(e) or any(_has_ops(k, ops) for k in e.children())
    return known


def _is_op(e: Expr) -> bool:
    """An operation `_op_checks` looks at: arithmetic in a bounded integer type."""
    return isinstance(e, (Binary, Unary)) and isinstance(e.type, IntType) and e.type.bounded


def _collect(e: Expr, guard: Expr, in_index: bool, out: list[tuple[str, Expr]], ops: dict[Expr, bool]) -> None:
    """Append (property, guard => check) for every operation of `e` in evaluation order (operands first).
    Sub-terms without operations are not walked, and the guard of a `&&`/`||` operand is only built for the
    operands that have some (it grows with each operand: hundreds, for a dereference's case split)."""
    if not _has_ops(e, ops):
        return
    if isinstance(e, BINDERS):
        raise UnsupportedError("overflow checks of an accelerated program (quantifier or array fill)")
    if isinstance(e, (And, Or)):
        g, before = guard, []
        for a in e.args:
            if _has_ops(a, ops):
                g, before = and_(g, *before), []
                _collect(a, g, in_index, out, ops)
            before.append(a if isinstance(e, And) else not_(a))
        return
    if isinstance(e, Ite):
        _collect(e.cond, guard, in_index, out, ops)
        _collect(e.then, and_(guard, e.cond), in_index, out, ops)
        _collect(e.orelse, and_(guard, not_(e.cond)), in_index, out, ops)
        return
    if isinstance(e, (Select, Store)):
        _collect(e.array, guard, in_index, out, ops)
        _collect(e.index, guard, True, out, ops)
        if isinstance(e, Store):
            _collect(e.value, guard, in_index, out, ops)
        return
    for k in e.children():
        _collect(k, guard, in_index, out, ops)
    if _is_op(e):
        for prop, ok in _op_checks(e):
            if in_index:
                prop = UNDECIDED
            out.append((prop, implies(guard, ok)))


def _op_checks(e: Binary | Unary) -> list[tuple[str, Expr]]:
    """(property, condition that the operation is defined and in range) for one operation."""
    t = e.type
    if isinstance(e, Unary):
        if e.op == "-" and t.signed:
            return [(NO_OVERFLOW, _ne(e.arg, t.min))]
        return []
    op, a, b = e.op, e.lhs, e.rhs
    if op in ("+", "-", "*"):
        return [(NO_OVERFLOW, _arith_in_range(op, a, b, t))] if t.signed else []
    if op in ("/", "%"):
        checks = [(UNDECIDED, _ne(b, 0))]
        if t.signed:
            checks.append((NO_OVERFLOW, or_(_ne(a, t.min), _ne(b, -1))))
        return checks
    if op in ("<<", ">>"):
        return _shift_checks(op, a, b, t)
    return []                   # & | ^: never out of range


def _shift_checks(op: str, a: Expr, b: Expr, t: IntType) -> list[tuple[str, Expr]]:
    bt: IntType = b.type
    amount_ok = and_(_ge(b, 0, bt), _le(b, t.bits - 1, bt))
    if op == ">>" or not t.signed:
        return [(UNDECIDED, amount_ok)]
    defined = and_(amount_ok, _ge(a, 0, t))
    if isinstance(b, IntConst):
        fits = _le(a, t.max >> b.value, t) if 0 <= b.value < t.bits else TRUE
    else:
        fits = cmp("<=", a, Binary(">>", const(t.max, t), b, t))
    return [(UNDECIDED, defined), (NO_OVERFLOW, implies(defined, fits))]


def _arith_in_range(op: str, a: Expr, b: Expr, t: IntType) -> Expr:
    ca = a.value if isinstance(a, IntConst) else None
    cb = b.value if isinstance(b, IntConst) else None
    if ca is not None and cb is not None:
        v = ca + cb if op == "+" else ca - cb if op == "-" else ca * cb
        return TRUE if t.contains(v) else FALSE
    if cb is not None or (ca is not None and op != "-"):
        x, c = (a, cb) if cb is not None else (b, ca)
        if op == "-":           # x - c in range  <=>  min + c <= x <= max + c
            return and_(_ge(x, t.min + c, t), _le(x, t.max + c, t))
        if op == "+":
            return and_(_ge(x, t.min - c, t), _le(x, t.max - c, t))
        if c == 0:
            return TRUE
        lo_b = -((-t.min) // c) if c > 0 else -((-t.max) // c)     # ceil(min / c) or ceil(max / c)
        hi_b = t.max // c if c > 0 else t.min // c                  # floor(max / c) or floor(min / c)
        return and_(_ge(x, lo_b, t), _le(x, hi_b, t))
    if ca is not None:          # c - x in range  <=>  c - max <= x <= c - min
        return and_(_ge(b, ca - t.max, t), _le(b, ca - t.min, t))
    if t.bits > 64:
        raise UnsupportedError(f"overflow check of {t.bits}-bit arithmetic")
    w = I64 if t.bits <= 32 else I128
    r = Binary(op, cast(w, a), cast(w, b), w)
    return and_(cmp(">=", r, const(t.min, w)), cmp("<=", r, const(t.max, w)))


def _ge(x: Expr, bound: int, t: IntType) -> Expr:
    """x >= bound for x of type t (decided statically when the bound is outside t's range)."""
    if bound <= t.min:
        return TRUE
    if bound > t.max:
        return FALSE
    if isinstance(x, IntConst):
        return TRUE if x.value >= bound else FALSE
    return cmp(">=", x, const(bound, t))


def _le(x: Expr, bound: int, t: IntType) -> Expr:
    if bound >= t.max:
        return TRUE
    if bound < t.min:
        return FALSE
    if isinstance(x, IntConst):
        return TRUE if x.value <= bound else FALSE
    return cmp("<=", x, const(bound, t))


def _ne(x: Expr, value: int) -> Expr:
    t: IntType = x.type
    if not t.contains(value):
        return TRUE
    if isinstance(x, IntConst):
        return TRUE if x.value != value else FALSE
    return not_(cmp("==", x, const(value, t)))
