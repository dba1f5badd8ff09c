"""A concrete interpreter for the IR: the executable definition of its semantics.

Used to (1) replay counterexamples on the original program before a FALSE is reported, and (2) cross-check
the C front-end against gcc-compiled executions of the same program on the same inputs.

Signed overflow is undefined in C. `signed_overflow="math"` keeps the mathematical value (the integer
encoding's reading), `"wrap"` wraps in two's complement (the bit-vector encoding's and gcc's reading); either
way the run records that it happened, so a replay can refuse evidence that depends on undefined behaviour.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt
from looprover.program.expr import (
    And, ArrayType, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr, IntConst, IntType, Ite, Not,
    Or, Select, Store, Unary, Var,
)


class UndefinedBehavior(Exception):
    """Division by zero, bad shift amount: the C program has no defined meaning from here on."""


@dataclass
class ArrayValue:
    """A total array: `default` everywhere except the explicitly stored cells."""
    default: object
    cells: dict = field(default_factory=dict)

    def get(self, i):
        return self.cells.get(i, self.default)

    def copy(self) -> "ArrayValue":
        return ArrayValue(self.default, dict(self.cells))

    def __eq__(self, other):
        if not isinstance(other, ArrayValue):
            return NotImplemented
        keys = set(self.cells) | set(other.cells)
        return self.default == other.default and all(self.get(k) == other.get(k) for k in keys)


Value = int | bool | ArrayValue
State = dict[str, Value]


class Evaluator:
    def __init__(self, signed_overflow: str = "math"):
        assert signed_overflow in ("math", "wrap")
        self.signed_overflow = signed_overflow
        self.overflowed = False

    def _fit(self, value: int, t: IntType) -> int:
        if t.bits is None:
            return value
        if not t.signed:
            return t.wrap(value)
        if not t.contains(value):
            self.overflowed = True
            if self.signed_overflow == "wrap":
                return t.wrap(value)
        return value

    def eval(self, e: Expr, s: State) -> Value:
        if isinstance(e, Var):
            return s[e.name]
        if isinstance(e, (IntConst, BoolConst)):
            return e.value
        if isinstance(e, Compare):
            a, b = self.eval(e.lhs, s), self.eval(e.rhs, s)
            op = e.op
            return (a == b if op == "==" else a != b if op == "!=" else a < b if op == "<" else
                    a <= b if op == "<=" else a > b if op == ">" else a >= b)
        if isinstance(e, Not):
            return not self.eval(e.arg, s)
        if isinstance(e, And):
            return all(self.eval(a, s) for a in e.args)
        if isinstance(e, Or):
            return any(self.eval(a, s) for a in e.args)
        if isinstance(e, Ite):
            return self.eval(e.then, s) if self.eval(e.cond, s) else self.eval(e.orelse, s)
        if isinstance(e, Cast):
            v = self.eval(e.arg, s)
            if isinstance(e.type, BoolType):
                return v != 0
            return e.type.wrap(int(v))
        if isinstance(e, Unary):
            v = self.eval(e.arg, s)
            return self._fit(-v if e.op == "-" else ~v, e.type)
        if isinstance(e, Binary):
            return self._binary(e, self.eval(e.lhs, s), self.eval(e.rhs, s))
        if isinstance(e, Select):
            return self.eval(e.array, s).get(self.eval(e.index, s))
        if isinstance(e, Store):
            arr = self.eval(e.array, s).copy()
            arr.cells[self.eval(e.index, s)] = self.eval(e.value, s)
            return arr
        if isinstance(e, ConstArray):
            return ArrayValue(self.eval(e.value, s))
        raise TypeError(f"cannot evaluate {type(e).__name__}")

    def _binary(self, e: Binary, a: int, b: int) -> int:
        op, t = e.op, e.type
        if op == "+":
            return self._fit(a + b, t)
        if op == "-":
            return self._fit(a - b, t)
        if op == "*":
            return self._fit(a * b, t)
        if op in ("/", "%"):
            if b == 0:
                raise UndefinedBehavior("division by zero")
            q = abs(a) // abs(b)
            if (a < 0) != (b < 0):
                q = -q
            qf = self._fit(q, t)      # C11 6.5.5: a % b is undefined when a / b is (INT_MIN % -1)
            return qf if op == "/" else self._fit(a - q * b, t)
        if op == "&":
            return t.wrap(a & b)
        if op == "|":
            return t.wrap(a | b)
        if op == "^":
            return t.wrap(a ^ b)
        if op in ("<<", ">>"):
            if b < 0 or (t.bits is not None and b >= t.bits):
                raise UndefinedBehavior(f"shift by {b}")
            if op == ">>":
                return a >> b  # arithmetic for signed (gcc), logical for unsigned (a >= 0)
            if t.signed and a < 0:
                raise UndefinedBehavior("left shift of a negative value")
            return self._fit(a << b, t)
        raise TypeError(op)


def default_value(t) -> Value:
    if isinstance(t, BoolType):
        return False
    if isinstance(t, ArrayType):
        return ArrayValue(default_value(t.elem))
    return 0


class Oracle:
    """Supplies the value of each havocked variable. `snapshot`/`restore` let the interpreter try several
    enabled edges without consuming inputs for the ones it does not take."""

    def __call__(self, v: Var) -> Value:
        return default_value(v.type)

    def snapshot(self):
        return None

    def restore(self, snap) -> None:
        pass


@dataclass
class StepResult:
    state: State | None          # None: the edge is blocked by an Assume
    violated: Assert | None = None


def execute_edge(ev: Evaluator, edge: Edge, state: State, oracle: Oracle) -> StepResult:
    """Run an edge's statements on a copy of `state`; stops at the first blocking Assume or failing Assert."""
    s = dict(state)
    for st in edge.stmts:
        if isinstance(st, Assign):
            rhs = st.rhs
            # In-place array update for the common `a := Store(a, i, v)` (no copy of a large array).
            if isinstance(rhs, Store) and rhs.array == st.lhs:
                arr = s[st.lhs.name]
                idx, val = ev.eval(rhs.index, s), ev.eval(rhs.value, s)
                if arr is state.get(st.lhs.name):
                    arr = arr.copy()
                arr.cells[idx] = val
                s[st.lhs.name] = arr
            else:
                s[st.lhs.name] = ev.eval(rhs, s)
        elif isinstance(st, Havoc):
            for v in st.vars:
                s[v.name] = oracle(v)
        elif isinstance(st, Assume):
            if not ev.eval(st.cond, s):
                return StepResult(None)
        elif isinstance(st, Assert):
            if not ev.eval(st.cond, s):
                return StepResult(s, st)
    return StepResult(s)


@dataclass
class RunResult:
    outcome: str                  # violation | exit | blocked | nondeterministic | steps-exhausted | undefined
    state: State
    loc: int
    steps: int
    violated: Assert | None = None
    edges: list[Edge] = field(default_factory=list)
    overflowed: bool = False
    detail: str = ""


class InputOracle(Oracle):
    """Feeds a fixed input sequence to `nondet` havocs (0 once it runs out); other havocs get 0.

    This mirrors a test harness: `__VERIFIER_nondet_*` returns the next input, uninitialised memory is 0.
    """

    def __init__(self, program: Program, inputs: Sequence[int]):
        self.kinds = {n: i.kind for n, i in program.variables.items()}
        self.inputs = list(inputs)
        self.pos = 0

    def __call__(self, v: Var) -> Value:
        if self.kinds.get(v.name) == "nondet" and not isinstance(v.type, ArrayType):
            val = self.inputs[self.pos] if self.pos < len(self.inputs) else 0
            self.pos += 1
            if isinstance(v.type, BoolType):
                return bool(val)
            return v.type.wrap(val)
        return default_value(v.type)

    def snapshot(self):
        return self.pos

    def restore(self, snap) -> None:
        self.pos = snap


def run(program: Program, oracle: Oracle, initial: Mapping[str, Value] | None = None,
        choose: Callable[[list[Edge]], Edge] | None = None, max_steps: int = 10_000_000,
        signed_overflow: str = "math") -> RunResult:
    """Execute from `init` until exit, a violated assertion, a block, or `max_steps` edges.

    When several out-edges are enabled, `choose` picks one; without it the run stops as `nondeterministic`.
    """
    ev = Evaluator(signed_overflow)
    state: State = {name: default_value(info.var.type) for name, info in program.variables.items()}
    if initial:
        state.update(initial)
    loc, steps = program.init, 0
    taken: list[Edge] = []
    try:
        while steps < max_steps:
            if loc == program.exit:
                return RunResult("exit", state, loc, steps, edges=taken, overflowed=ev.overflowed)
            enabled: list[tuple[Edge, StepResult, object]] = []
            start = oracle.snapshot()
            for e in program.out_edges(loc):
                oracle.restore(start)
                r = execute_edge(ev, e, state, oracle)
                if r.state is not None:
                    enabled.append((e, r, oracle.snapshot()))
                    if r.violated is not None:
                        taken.append(e)
                        return RunResult("violation", r.state, loc, steps + 1, r.violated, taken, ev.overflowed)
            if not enabled:
                return RunResult("blocked", state, loc, steps, edges=taken, overflowed=ev.overflowed)
            if len(enabled) > 1:
                if choose is None:
                    return RunResult("nondeterministic", state, loc, steps, edges=taken,
                                     overflowed=ev.overflowed)
                pick = choose([e for e, _, _ in enabled])
                edge, res, after = next(x for x in enabled if x[0] is pick)
            else:
                edge, res, after = enabled[0]
            oracle.restore(after)
            taken.append(edge)
            state, loc, steps = res.state, edge.dst, steps + 1
    except UndefinedBehavior as ub:
        return RunResult("undefined", state, loc, steps, edges=taken, overflowed=ev.overflowed, detail=str(ub))
    return RunResult("steps-exhausted", state, loc, steps, edges=taken, overflowed=ev.overflowed)
