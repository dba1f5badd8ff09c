"""The `labmc` engine: LABMC abstraction (transforms/labmc.py), then BMC on the bounded abstract program.

* TRUE on the abstraction is TRUE on the program: the abstraction over-approximates it.
* FALSE on the abstraction is only a hint (havocked or accelerated values may be impossible). We try to
  confirm it on the original program: first by *running* the original program on the abstract trace's
  inputs with the concrete interpreter (a test: cheap, and it reaches bugs behind long loops that BMC cannot
  unwind), then by BMC of the original with the remaining time. Only a trace that replays on the original
  program makes a FALSE; otherwise UNKNOWN("abstract counterexample not confirmed").

BMC of the abstraction gets `max_bound` = the largest abstract-loop bound M: every abstract loop is exhausted
at that unwinding, so BMC either decides or reports that it could not (which would be a bug, not a verdict).
"""
from __future__ import annotations

import time
from collections import ChainMap

from looprover.engines import EngineOptions
from looprover.engines import bmc
from looprover.errors import LooproverError
from looprover.program.cfa import Program
from looprover.program.cfa import Assert, Assign, Assume, Havoc
from looprover.program.expr import Store
from looprover.program.interp import ArrayValue, Evaluator, InputOracle, UndefinedBehavior, default_value
from looprover.transforms.labmc import LabmcOptions, abstract
from looprover.verdict import Counterexample, Status, TraceStep, Verdict
from looprover.witness.replay import validate

NAME = "labmc"
PROVED = "LABMC abstraction (output abstraction/acceleration/induction) proved by BMC"


def verify(program: Program, options: EngineOptions, labmc_options: LabmcOptions | None = None) -> Verdict:
    t0 = time.monotonic()
    stats: dict = {}

    def done(status: Status, reason: str, evidence=None) -> Verdict:
        return Verdict(status, NAME, reason, evidence, stats, time.monotonic() - t0)

    try:
        result = abstract(program, labmc_options or LabmcOptions())
    except LooproverError as err:
        return done(Status.UNKNOWN, f"abstraction failed: {err}")
    stats["loops"] = [r.describe() for r in result.loops]
    stats["abstract_edges"] = len(result.program.edges)
    for r in result.loops:
        options.report(f"labmc: {r.describe()}")
    sub = EngineOptions(timeout=max(options.remaining(), 0.0), bitvector=options.bitvector,
                        max_bound=max(result.max_bound, 1), progress=options.progress)
    av = bmc.verify(result.program, sub)
    stats["abstract_bmc"] = {"status": av.status.value, "reason": av.reason, "time": round(av.time, 3),
                             **{k: v for k, v in av.stats.items() if k in ("bound", "nodes")}}
    if av.status == Status.TRUE:
        return done(Status.TRUE, f"{PROVED} ({av.reason}; {len(result.loops)} loop(s))")
    if av.status == Status.UNKNOWN and not av.reason.startswith("counterexample did not replay"):
        return done(Status.UNKNOWN, f"BMC on the abstraction: {av.reason}")
    # An abstract counterexample: look for a real one.
    cex = _run_on_inputs(program, av.evidence, options)
    if cex is not None:
        stats["confirm"] = "concrete run on the abstract trace's inputs"
        return done(Status.FALSE, f"abstract counterexample confirmed by running the program on its inputs "
                    f"({len(cex.steps)} steps)", cex)
    remaining = options.remaining()
    if remaining <= 0.05:
        return done(Status.UNKNOWN, "abstract counterexample not confirmed (no time left for BMC)")
    options.report("labmc: abstract counterexample; BMC on the original program")
    cv = bmc.verify(program, EngineOptions(timeout=remaining, bitvector=options.bitvector,
                                           max_bound=options.max_bound, progress=options.progress))
    stats["confirm_bmc"] = {"status": cv.status.value, "reason": cv.reason, "time": round(cv.time, 3)}
    if cv.status == Status.FALSE and getattr(cv.evidence, "validated", False):
        return done(Status.FALSE, f"abstract counterexample confirmed by BMC on the program: {cv.reason}",
                    cv.evidence)
    if cv.status == Status.TRUE:
        # BMC exhausted the original program's loops: that is a proof of its own.
        return done(Status.TRUE, f"abstract counterexample was spurious; BMC on the program: {cv.reason}")
    return done(Status.UNKNOWN, f"abstract counterexample not confirmed ({cv.reason})")


STEPS_PER_SECOND = 80_000      # measured: ~110k edges/s on a simple loop (the run gets a third of the time)
MAX_RUN_STEPS = 1_000_000      # a longer trace costs too much memory as evidence


class _Overlay(ArrayValue):
    """The cells a tentative edge stores into `base`, without copying `base` (arrays can be large)."""

    def __init__(self, base: ArrayValue):
        super().__init__(base.default, {})
        self.base = base

    def get(self, i):
        return self.cells[i] if i in self.cells else self.base.get(i)

    def copy(self) -> ArrayValue:
        return ArrayValue(self.default, {**self.base.cells, **self.cells})


def _try_edge(ev: Evaluator, edge, state: dict, oracle: InputOracle):
    """Run `edge` tentatively: (values written, violated assertion or None), or None if it is blocked."""
    written: dict = {}
    view = ChainMap(written, state)
    for st in edge.stmts:
        if isinstance(st, Assign):
            rhs = st.rhs
            if isinstance(rhs, Store) and rhs.array == st.lhs:
                cur = view[st.lhs.name]
                if not isinstance(cur, _Overlay):
                    cur = _Overlay(cur)
                    written[st.lhs.name] = cur
                idx, val = ev.eval(rhs.index, view), ev.eval(rhs.value, view)
                cur.cells[idx] = val
            else:
                val = ev.eval(rhs, view)
                written[st.lhs.name] = val.copy() if isinstance(val, ArrayValue) else val
        elif isinstance(st, Havoc):
            for v in st.vars:
                written[v.name] = oracle(v)
        elif isinstance(st, Assume):
            if not ev.eval(st.cond, view):
                return None
        elif isinstance(st, Assert):
            if not ev.eval(st.cond, view):
                return written, st
    return written, None


def _commit(state: dict, written: dict) -> None:
    for name, val in written.items():
        if isinstance(val, _Overlay):
            val.base.cells.update(val.cells)     # in place: every variable owns its array
            state[name] = val.base
        else:
            state[name] = val


def _run_on_inputs(program: Program, abstract_cex, options: EngineOptions) -> Counterexample | None:
    """Run `program` on the `nondet` inputs of the abstract counterexample (a test: other havocs read 0, the
    first enabled edge is taken at a nondeterministic choice, as in `interp.run`). A violation found this
    way becomes a trace that `validate` replays like any other. Uses at most a third of the remaining time;
    stores update arrays in place (`interp.run` copies an array per store: quadratic on array loops)."""
    inputs = list(getattr(abstract_cex, "inputs", None) or [])
    budget = int(min(MAX_RUN_STEPS, STEPS_PER_SECOND * max(options.remaining(), 0.0) / 3))
    if budget < 100:
        return None
    stop = time.monotonic() + max(options.remaining(), 0.0) / 3
    ev = Evaluator("wrap" if options.bitvector else "math")
    oracle = InputOracle(program, inputs)
    state = {n: default_value(i.var.type) for n, i in program.variables.items()}
    loc, taken = program.init, []
    try:
        while len(taken) < budget:
            if len(taken) % 1024 == 1023 and time.monotonic() > stop:
                return None
            if loc == program.exit:
                return None
            for e in program.out_edges(loc):
                snap = oracle.snapshot()
                r = _try_edge(ev, e, state, oracle)
                if r is None:
                    oracle.restore(snap)
                    continue
                written, violated = r
                _commit(state, written)
                taken.append(e)
                loc = e.dst
                if violated is not None:
                    cex = Counterexample([TraceStep(x, x.src_loc, {}) for x in taken], inputs)
                    cex.violated_at = violated.src
                    return cex if validate(program, cex, options.bitvector).ok else None
                break
            else:
                return None      # blocked
    except UndefinedBehavior:
        return None
    return None
