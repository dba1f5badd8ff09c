"""The independent check of a non-termination witness (`verdict.NonTermination`): the only way a termination
FALSE gets its `validated` flag, and what the portfolio runs again before it passes such a FALSE on.

A witness is a lasso: a concrete stem to a location `head` and a cycle `loop` from `head` back to `head` with
fixed nondet choices, plus a recurrent set R of states at `head`. It proves an infinite execution when

  1. the stem replays on the program with the concrete interpreter (`interp.try_edge`, the one statement
     executor): every edge is the program's own, leaves from where the previous one ended, never from `exit`,
     is not blocked, fails no assertion (a reached `reach_error` ends the execution), has no undefined
     behaviour and no signed overflow, uses exactly the recorded havoc values (each a value of its variable's
     type), and ends at `head`;
  2. R holds in the state the stem ends in (evaluated by the interpreter's `Evaluator`);
  3. the cycle is a path of program edges from `head` back to `head` (not through `exit`);
  4. for every state x at `head` (values within their types' ranges) with R(x): running the cycle from x with
     its havoc values is enabled -- every `Assume` and `Assert` on it holds -- has no undefined behaviour (no
     division by zero, no bad shift, no signed overflow in any arithmetic subexpression) and ends in a state
     satisfying R with every value within its type. One fresh z3 solver decides this (validity of
     R ⇒ enabled ∧ defined ∧ in range ∧ R').

Then stem · loop^ω is an execution of the program, with nondet values in range, that never ends. The check in
(4) is made in integer semantics (unsigned arithmetic wraps exactly, signed arithmetic is mathematical); with
the no-overflow conditions it is exact for gcc's wrap-around semantics (`--bitvector`) as well, since the two
readings agree on every execution without signed overflow. A witness whose cycle would need signed overflow is
rejected: such an execution has undefined behaviour.
"""
from __future__ import annotations

from typing import Any, Sequence

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program
from looprover.program.expr import ArrayType, Binary, BoolType, Expr, IntType, Unary, walk
from looprover.program.interp import (
    ArrayValue, Evaluator, InputOracle, UndefinedBehavior, commit, initial_state, try_edge,
)
from looprover.smt.encode import Encoder
from looprover.smt.terms import mk_and
from looprover.verdict import NonTermination


def validate_nontermination(program: Program, w: NonTermination, bitvector: bool, deadline: Deadline
                            ) -> str | None:
    """Run the independent check; on success set `w.validated`. Returns why the witness fails (None: it holds)."""
    why = check_nontermination(program, w, bitvector, deadline)
    w.validated = why is None
    return why


def check_nontermination(program: Program, w: object, bitvector: bool, deadline: Deadline) -> str | None:
    """Why `w` is not a non-termination witness of `program` (None when it is one; see the module docstring)."""
    try:
        return _check(program, w, bitvector, deadline)
    except OutOfTime:
        return "undecided: the deadline passed while checking the witness"


def _check(program: Program, w: object, bitvector: bool, deadline: Deadline) -> str | None:
    if not isinstance(w, NonTermination):
        return "no non-termination witness"
    if w.head < 0 or w.head >= program.num_locs or w.head == program.exit:
        return f"L{w.head} is not a location where the program can loop"
    state, why = replay_stem(program, w, bitvector)
    if why is not None:
        return why
    try:
        holds = Evaluator("math").eval(w.recurrent, state)
    except (UndefinedBehavior, KeyError, TypeError, ArithmeticError) as exc:
        return f"the recurrent set cannot be evaluated in the stem's last state ({exc})"
    if holds is not True:
        return "the stem's last state is not in the recurrent set"
    loop, why = program_path(program, w.loop, w.head, w.head, "loop")
    if why is not None:
        return why
    if not loop:
        return "the loop path is empty"
    return check_recurrent(program, loop, w.loop_havocs, w.recurrent, deadline)


# ------------------------------------------------------------------------------------------ the stem
def program_path(program: Program, edges: Sequence[Edge], start: int, end: int, what: str
                 ) -> tuple[list[Edge], str | None]:
    """The program's own edges for `edges`, which must form a path from `start` to `end` not leaving `exit`."""
    out: list[Edge] = []
    loc = start
    for n, e in enumerate(edges):
        if loc == program.exit:
            return out, f"the {what} continues after the program's exit (edge {n})"
        own = next((x for x in program.out_edges(loc) if x is e or x == e), None)
        if own is None:
            return out, f"edge {n} of the {what} is not an edge of the program from L{loc}"
        out.append(own)
        loc = own.dst
    if loc != end:
        return out, f"the {what} ends at L{loc}, not at L{end}"
    return out, None


def replay_stem(program: Program, w: NonTermination, bitvector: bool) -> tuple[dict, str | None]:
    """Execute the stem from its initial values with its havoc values; (the last state, why it fails)."""
    for name, val in w.stem_initial.items():
        info = program.variables.get(name)
        if info is None:
            return {}, f"the stem's initial state names an unknown variable {name}"
        if not _fits(val, info.var.type):
            return {}, f"the stem's initial value of {name} is not a value of its type"
    stem, why = program_path(program, w.stem, program.init, w.head, "stem")
    if why is not None:
        return {}, why
    ev = Evaluator("wrap" if bitvector else "math")
    state = initial_state(program, w.stem_initial)
    oracle = _TypedOracle(program, (), list(w.stem_havocs), strict=True)
    n = 0
    try:
        for n, edge in enumerate(stem):
            r = try_edge(ev, edge, state, oracle)
            if r.blocked is not None:
                return {}, f"the stem is blocked at edge {n} ({edge.src_loc}): {r.blocked.cond}"
            if r.violated is not None:
                return {}, f"the stem fails an assertion at edge {n} (the execution ends there)"
            state = commit(r)
    except UndefinedBehavior as ub:
        return {}, f"undefined behaviour on the stem at edge {n}: {ub}"
    except IndexError as err:
        return {}, f"the stem has fewer havoc values than its edges need ({err})"
    except ValueError as err:
        return {}, f"the stem's havoc values do not fit: {err}"
    if ev.overflowed:
        return {}, "the stem has a signed overflow (undefined behaviour)"
    if oracle.pos != len(w.stem_havocs):
        return {}, f"the stem records {len(w.stem_havocs)} havoc values but uses {oracle.pos}"
    for (name, info) in program.variables.items():
        if not _fits(state[name], info.var.type):
            return {}, f"the stem ends with a value of {name} outside its type"
    return state, None


class _TypedOracle(InputOracle):
    """The recorded havoc values, each of which must be a value of the havocked variable's type (an engine's
    model could carry an out-of-range number, which no C execution produces)."""

    def __call__(self, v):
        val = super().__call__(v)
        if not _fits(val, v.type):
            raise ValueError(f"{val!r} is not a value of {v.name}'s type {v.type}")
        return val


def _fits(val: Any, t) -> bool:
    if isinstance(t, BoolType):
        return isinstance(val, bool)
    if isinstance(t, IntType):
        return isinstance(val, int) and not isinstance(val, bool) and t.contains(val)
    if isinstance(t, ArrayType):
        return isinstance(val, ArrayValue) and _fits(val.default, t.elem) and \
            all(_fits(k, t.index) and _fits(v, t.elem) for k, v in val.cells.items())
    return False


# ------------------------------------------------------------------------------------------ the cycle
def undefined_conditions(enc: Encoder, e: Expr, env: dict[str, z3.ExprRef]) -> list[z3.BoolRef]:
    """Conditions under which evaluating `e` in `env` has no undefined behaviour, in integer semantics: no
    division by zero, no shift by a negative amount or the width or more, no left shift of a negative signed
    value, and no signed result outside its type (the interpreter's `Evaluator._fit` cases)."""
    out: list[z3.BoolRef] = []
    for n in walk(e):
        t = n.type
        if isinstance(n, Binary) and isinstance(t, IntType):
            if n.op in ("/", "%"):
                out.append(enc.expr(n.rhs, env) != 0)
            if n.op in ("<<", ">>"):
                b = enc.expr(n.rhs, env)
                out += [b >= 0] + ([b < t.bits] if t.bounded else [])
                if n.op == "<<" and t.signed:
                    out.append(enc.expr(n.lhs, env) >= 0)
            if t.bounded and t.signed and n.op in ("+", "-", "*", "/", "%", "<<"):
                r = enc.expr(n, env)
                out += [r >= t.min, r <= t.max]
                if n.op == "%":         # C11 6.5.5: a % b is undefined when a / b is (INT_MIN % -1)
                    a, b = enc.expr(n.lhs, env), enc.expr(n.rhs, env)
                    out.append(z3.Not(z3.And(a == t.min, b == -1)))
        elif isinstance(n, Unary) and isinstance(t, IntType) and t.bounded and t.signed and n.op == "-":
            r = enc.expr(n, env)
            out += [r >= t.min, r <= t.max]
    return out


def run_symbolically(enc: Encoder, edges: Sequence[Edge], havocs: Sequence[Any], env: dict[str, z3.ExprRef]
                     ) -> tuple[dict[str, z3.ExprRef], list[z3.BoolRef], str | None]:
    """The straight-line path `edges` from `env` with the havocs taking `havocs` in order: (the final
    environment, the conditions for the path to run to its end without undefined behaviour, why it cannot be
    encoded). Integer semantics (`enc` must not be a bit-vector encoder)."""
    assert not enc.bv
    env = dict(env)
    conds: list[z3.BoolRef] = []
    pos = 0
    for e in edges:
        for st in e.stmts:
            if isinstance(st, Assign):
                conds += undefined_conditions(enc, st.rhs, env)
                env[st.lhs.name] = enc.expr(st.rhs, env)
            elif isinstance(st, Havoc):
                for v in st.vars:
                    if pos >= len(havocs):
                        return env, conds, "the loop path has more havocs than recorded values"
                    val = havocs[pos]
                    pos += 1
                    if isinstance(v.type, ArrayType) or not _fits(val, v.type):
                        return env, conds, f"the loop's havoc value {val!r} is not a scalar value of {v.type}"
                    env[v.name] = enc.value(val, v.type)
            elif isinstance(st, (Assume, Assert)):
                conds += undefined_conditions(enc, st.cond, env)
                conds.append(enc.expr(st.cond, env))
            else:
                return env, conds, f"unknown statement {st!r}"
    if pos != len(havocs):
        return env, conds, f"the loop records {len(havocs)} havoc values but uses {pos}"
    return env, conds, None


def check_recurrent(program: Program, loop: Sequence[Edge], havocs: Sequence[Any], recurrent: Expr,
                    deadline: Deadline) -> str | None:
    """Is `recurrent` closed under `loop` (enabled, defined, back into the set) for every in-range state?"""
    enc = Encoder(program, bitvector=False, prefix="nt.", deadline=deadline)
    env0 = {n: enc.const(f"nt.{n}", i.var.type) for n, i in program.variables.items()}
    ranges = [c for n, i in program.variables.items() for c in enc.in_range(env0[n], i.var.type)]
    try:
        pre = enc.expr(recurrent, env0)
        env1, conds, why = run_symbolically(enc, loop, havocs, env0)
        if why is not None:
            return why
        post = enc.expr(recurrent, env1)
    except (KeyError, TypeError) as exc:
        return f"the recurrent set or the loop cannot be encoded ({exc})"
    s = z3.Solver()
    s.set("timeout", deadline.ms())
    # after a round every value is again within its type (belt and braces: the no-overflow conditions and the
    # exact wrap of unsigned arithmetic already imply it)
    after = [c for n, i in program.variables.items() for c in enc.in_range(env1[n], i.var.type)]
    s.add(*ranges, pre, z3.Not(mk_and(*conds, *after, post)))
    r = s.check()
    if r == z3.unsat:
        return None
    if r == z3.sat:
        return "the loop path is not always enabled in the recurrent set, or leaves it"
    return f"the closure of the recurrent set is undecided ({s.reason_unknown()})"
