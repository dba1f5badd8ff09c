"""Counterexamples from SMT models, and their replay on the original program with the concrete interpreter.

A FALSE verdict is only as good as this replay: the trace's edges are executed with `program.interp`'s
expression semantics (`Evaluator`), the havocs get the model's values in order, and the run must reach a
violated assertion. A trace that blocks, leaves the path, divides by zero or (by default) overflows a signed
integer is refused: it would be evidence of an encoding bug or rely on undefined behaviour.

Why a stepping loop instead of `interp.run(..., choose=...)`: `choose` is only called at nondeterministic
locations and does not learn the step number, so it cannot tell where in the trace the run is (a location
can be visited many times). Following the trace edge by edge is exact. The statements are executed by the
interpreter's one executor (`interp.try_edge`/`commit`, arrays updated in place), with its one input oracle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from looprover.program.cfa import Assert, Assign, Edge, Havoc, Program
from looprover.program.expr import ArrayType, IntType, Store, Type
from looprover.program.interp import (
    ArrayValue, EdgeRun, Evaluator, InputOracle, UndefinedBehavior, commit, default_value, initial_state,
    stored_cells, try_edge,
)
from looprover.smt.dag import EdgeEnc, Violation
from looprover.smt.encode import Encoder
from looprover.smt.terms import is_val
from looprover.verdict import Counterexample, TraceStep


@dataclass
class ModelCounterexample(Counterexample):
    """A `Counterexample` that also records the value of every havocked variable in trace order.

    `inputs` are only the `nondet` scalars (what a harness feeds); replay also needs the values the model
    chose for other havocs (uninitialised locals, abstraction havocs).
    """
    havocs: list[Any] = field(default_factory=list)
    length: int = 0           # number of CFA edges (the last one contains the violated assertion)


class ModelArray(ArrayValue):
    """An array value read lazily from a z3 model. Reads of base cells are recorded in `touched` (shared by
    copies) so that the array can be turned into a plain, picklable `ArrayValue` after the replay."""

    def __init__(self, read: Callable[[int], Any], default: Any, cells: dict | None = None,
                 touched: dict | None = None):
        super().__init__(default, cells if cells is not None else {})
        self.read = read
        self.touched = touched if touched is not None else {}

    def get(self, i):
        if i in self.cells:
            return self.cells[i]
        if i not in self.touched:
            self.touched[i] = self.read(i)
        return self.touched[i]

    def copy(self) -> "ModelArray":
        return ModelArray(self.read, self.default, dict(self.cells), self.touched)

    def materialize(self) -> ArrayValue:
        return ArrayValue(self.default, {**self.touched, **self.cells})


# ------------------------------------------------------------------------------------ model -> trace
def _array_literal(v: z3.ExprRef, enc: Any, t: ArrayType) -> ArrayValue | None:
    """A model's array value written as stores over a constant array (`Store(Store(K(Int, 2), 6, 5), 7, 3)`, how
    z3 evaluates an array in a model) as the same total `ArrayValue`, every cell exact; None for another shape
    (a lambda), which is then read lazily (`ModelArray`). Why exact: a lazily read array knows only the cells the
    replay read, so two arrays the model makes equal (`ha0 == ha1` of a Horn clause) could differ in a later
    replay at a cell only one of them was read at."""
    def elem(x: z3.ExprRef) -> Any:
        raw = enc.to_python(x, t.elem)
        return t.elem.clamp(raw) if isinstance(t.elem, IntType) else raw
    cells: dict = {}
    while z3.is_store(v):
        a, i, x = v.children()
        if not (is_val(i) and is_val(x)):
            return None
        cells.setdefault(enc.to_python(i, t.index), elem(x))      # an outer store hides an inner one
        v = a
    if not (z3.is_const_array(v) and is_val(v.arg(0))):
        return None
    return ArrayValue(elem(v.arg(0)), cells)


class TraceBuilder:
    """Accumulates model paths (possibly several, e.g. one per transition-system step) into a trace."""

    def __init__(self, program: Program, enc: Encoder):
        self.program = program
        self.enc = enc
        self.steps: list[TraceStep] = []
        self.inputs: list[Any] = []
        self.havocs: list[Any] = []
        self.violated_at = None

    def value(self, term, t: Type, ev: Callable[[z3.ExprRef], z3.ExprRef]) -> Any:
        """The model's value of an SSA value (a z3 term, or a Python constant the encoder folded)."""
        if not isinstance(term, z3.ExprRef):
            return term
        if isinstance(t, ArrayType):
            enc = self.enc
            elem = t.elem
            exact = _array_literal(ev(term), enc, t)
            if exact is not None:
                return exact

            def read(i: int, term=term, ev=ev) -> Any:
                raw = enc.to_python(ev(z3.Select(term, enc.value(i, t.index))), elem)
                # integer mode clamps reads of bounded elements (see encode.py)
                return elem.clamp(raw) if isinstance(elem, IntType) else raw
            return ModelArray(read, default_value(elem))
        return self.enc.to_python(ev(term), t)

    def _record(self, edge, written, havocs, cells, ev) -> None:
        vals: dict[str, Any] = {}        # keyed by IR name (unique; the report shows C names)
        cell_names = {n for n, _, _ in cells}
        for name, term in written.items():
            t = self.program.variables[name].var.type
            if isinstance(t, ArrayType):
                if name in cell_names:
                    continue
                vals[name] = "<array>"
            else:
                vals[name] = self.value(term, t, ev)
        for name, i, v in cells:
            t = self.program.variables[name].var.type
            idx = self.enc.to_python(ev(i), t.index)
            vals[f"{name}[{idx}]"] = self.enc.to_python(ev(v), t.elem)
        for var, c in havocs:
            val = self.value(c, var.type, ev)
            self.havocs.append(val)
            info = self.program.variables.get(var.name)
            if info is not None and info.kind == "nondet" and not isinstance(var.type, ArrayType):
                self.inputs.append(val)
        self.steps.append(TraceStep(edge, edge.src_loc, vals))

    def add_path(self, path: Sequence[EdgeEnc], violation: Violation | None,
                 ev: Callable[[z3.ExprRef], z3.ExprRef]) -> None:
        for ee in path:
            self._record(ee.edge, ee.written, ee.havocs, ee.cells, ev)
        if violation is not None:
            self._record(violation.edge, violation.written, violation.havocs, violation.cells, ev)
            self.violated_at = violation.stmt.src or violation.edge.src_loc

    def build(self, initial_env: dict[str, z3.ExprRef], ev0: Callable[[z3.ExprRef], z3.ExprRef]
              ) -> ModelCounterexample:
        initial = {}
        for name, info in self.program.variables.items():
            if name in initial_env:
                initial[name] = self.value(initial_env[name], info.var.type, ev0)
        return ModelCounterexample(self.steps, self.inputs, initial, False, self.violated_at,
                                   havocs=self.havocs, length=len(self.steps))


def model_state(sys, model: z3.ModelRef, env: dict[str, z3.ExprRef]) -> dict[str, Any]:
    """The program state a model gives the state constants `env` of the cutpoint-graph system `sys` (the
    interpreter's values; arrays exact where the model writes them as stores, else read lazily)."""
    values = TraceBuilder(sys.program, sys.enc)

    def ev(t: z3.ExprRef) -> z3.ExprRef:
        return model.eval(t, model_completion=True)
    return {v.name: values.value(env[v.name], v.type, ev) for v in sys.vars}


def cpg_trace(program: Program, sys, model: z3.ModelRef, steps: int) -> ModelCounterexample:
    """The CFA trace of the first `steps` cutpoint steps in a model of `Init@0 ∧ trans_at(0) ∧ …` over the
    cutpoint-graph system `sys` (`smt.cpg_system.CPGSystem`), up to the first violated assertion."""
    tb = TraceBuilder(program, sys.enc)
    for j in range(steps):
        _, path, viol, _, value = sys.step_path(model, j)
        tb.add_path(path, viol, value)
        if viol is not None:
            break
    return tb.build(sys.state_at(0), lambda t: model.eval(t, model_completion=True))


# ------------------------------------------------------------------------------------ replay
@dataclass
class ReplayResult:
    ok: bool
    reason: str = ""
    steps: int = 0
    overflowed: bool = False
    violated: Assert | None = None
    state: dict = field(default_factory=dict)
    values: list[dict[str, Any]] = field(default_factory=list)    # per step: what it wrote (`written`)


def written(edge: Edge, r: EdgeRun) -> dict[str, Any]:
    """The values an executed edge wrote, in statement order, keyed by IR variable name (array cells as
    `a[i]`, a whole array as `<array>`), up to a failed assertion. IR names are unique where C names are not
    (two `__VERIFIER_nondet_int()` calls in one statement are two variables)."""
    out: dict[str, Any] = {}
    for st in edge.stmts:
        if st is r.violated:
            break
        if isinstance(st, Havoc):
            names = [v.name for v in st.vars]
        elif isinstance(st, Assign):
            if isinstance(st.rhs, Store) and st.rhs.array == st.lhs:
                cells = stored_cells(r.state.get(st.lhs.name))
                if cells is not None:
                    for i, v in cells.items():
                        out[f"{st.lhs.name}[{i}]"] = v
                    continue
            names = [st.lhs.name]
        else:
            continue
        for n in names:
            v = r.state.get(n)
            out[n] = "<array>" if isinstance(v, ArrayValue) else v
    return out


def replay(program: Program, cex: Counterexample, bitvector: bool = False, allow_overflow: bool = False
           ) -> ReplayResult:
    """Execute the trace's edges on `program` from its initial values; ok iff an assertion fails on it.

    The havocs take the trace's recorded values (a model counterexample records every havoc), or, for a plain
    `Counterexample`, harness semantics on its inputs (`interp.InputOracle`)."""
    ev = Evaluator("wrap" if bitvector else "math")
    state = initial_state(program, cex.initial)
    havocs = list(getattr(cex, "havocs", None) or [])
    oracle = InputOracle(program, cex.inputs, havocs, strict=bool(havocs))
    loc = program.init
    n = 0
    values: list[dict[str, Any]] = []
    try:
        for n, step in enumerate(cex.steps):
            if loc == program.exit:
                return ReplayResult(False, f"trace continues after program exit at step {n}", n)
            if step.edge.src != loc:
                return ReplayResult(False, f"step {n} leaves from L{step.edge.src}, not from L{loc}", n)
            # execute the program's own edge: a trace that crossed a process boundary carries copies, and one
            # from an engine we do not trust may carry an edge the program does not have
            edge = next((e for e in program.out_edges(loc) if e is step.edge or e == step.edge), None)
            if edge is None:
                return ReplayResult(False, f"step {n} is not an edge of the program (from L{loc})", n)
            r = try_edge(ev, edge, state, oracle)
            if r.blocked is not None:
                return ReplayResult(False, f"blocked at step {n} ({edge.src_loc}): {r.blocked.cond}", n,
                                    ev.overflowed)
            values.append(written(edge, r))
            state = commit(r)
            if r.violated is not None:
                if ev.overflowed and not allow_overflow:
                    return ReplayResult(False, "the violation depends on signed overflow (undefined behaviour)",
                                        n + 1, True, r.violated)
                return ReplayResult(True, "", n + 1, ev.overflowed, r.violated, state, values)
            loc = edge.dst
    except UndefinedBehavior as ub:
        return ReplayResult(False, f"undefined behaviour at step {n}: {ub}", n, ev.overflowed)
    except IndexError as err:
        return ReplayResult(False, str(err), n, ev.overflowed)
    return ReplayResult(False, "the trace ends without a violated assertion", len(cex.steps), ev.overflowed)


def validate(program: Program, cex: Counterexample, bitvector: bool = False) -> ReplayResult:
    """Replay; on success mark `cex.validated`, trim it to the violating step, give every step the values the
    replay wrote (so every validated trace shows them, whichever engine found it: a LABMC trace is a run on
    inputs that recorded none), and replace lazy model arrays by plain `ArrayValue`s (so the evidence can be
    pickled across processes)."""
    res = replay(program, cex, bitvector)
    if res.ok:
        cex.validated = True
        cex.violated = res.violated
        del cex.steps[res.steps:]
        for step, vals in zip(cex.steps, res.values):
            step.values = vals
    for name, v in list(cex.initial.items()):
        if isinstance(v, ModelArray):
            cex.initial[name] = v.materialize()
    if isinstance(cex, ModelCounterexample):
        cex.havocs = [v.materialize() if isinstance(v, ModelArray) else v for v in cex.havocs]
        cex.length = len(cex.steps)
    return res
