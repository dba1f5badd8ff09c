"""Deep counterexamples: replay by running the original program, not by following a stored trace.

Why: TPA finds violations after 10^6 loop iterations (exact powers); a CFA trace of that run has millions of
edges, more than a SAT model or a trace file should carry. What an SMT query can cheaply give is the start:
the initial values and the havoc values of the first fragment (the entry to the loop). From there the
concrete interpreter runs the *original* program; `__VERIFIER_nondet_*` calls after the recorded prefix get
harness values (0). A run that reaches a violated assertion is a real counterexample whatever the engine
believed; a run that does not proves nothing, and the caller says UNKNOWN.

The counterexample keeps the first and last `KEEP` edges of the run and the total length; `validated` is set
only by an actual run to the violation (signed overflow on the way refuses it in integer mode, as `replay` does).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from looprover.program.cfa import Program
from looprover.program.interp import InputOracle, run
from looprover.verdict import Counterexample, TraceStep
from looprover.witness.replay import cpg_trace

KEEP = 100


@dataclass
class RunCounterexample(Counterexample):
    """A validated run shown abbreviated: `steps` are the first and the last edges; `omitted` edges in between
    were executed at position `omitted_at`. `length` is the whole run's number of CFA edges."""
    length: int = 0
    omitted: int = 0
    omitted_at: int = 0


def run_from_model(program: Program, sys, model, prefix: int, depth: int, bitvector: bool
                   ) -> tuple[RunCounterexample | None, str]:
    """Run the program from the start a model of the cutpoint-graph system `sys` fixes for its first `prefix`
    steps (initial values and havocs), for at most `depth` cutpoint steps: a faithful run takes at most one
    fragment's edges per step, a longer one has left the engine's path."""
    first = cpg_trace(program, sys, model, prefix)
    per_step = max(len(f.edges) for f in sys.cpg.fragments.values())
    return run_counterexample(program, first.initial, first.havocs, bitvector, per_step * depth + 100)


def run_counterexample(program: Program, initial: dict[str, Any], havocs: Sequence[Any], bitvector: bool,
                       max_steps: int) -> tuple[RunCounterexample | None, str]:
    """Run the program from `initial` with the prefix `havocs`; a validated counterexample or (None, why not)."""
    oracle = InputOracle(program, havocs=havocs)
    res = run(program, oracle, initial, max_steps=max_steps, signed_overflow="wrap" if bitvector else "math")
    if res.outcome != "violation":
        return None, f"the run from the found initial state ended with '{res.outcome}' after {res.steps} edges"
    if res.overflowed:      # as `replay.validate`: in both modes, signed overflow is undefined behaviour in C
        return None, "the violation depends on signed overflow (undefined behaviour)"
    edges = res.edges
    cut = len(edges) > 2 * KEEP
    shown = edges[:KEEP] + edges[-KEEP:] if cut else edges
    steps = [TraceStep(e, e.src_loc, {}) for e in shown]
    viol = res.violated.src if res.violated is not None and res.violated.src else edges[-1].src_loc
    cex = RunCounterexample(steps, oracle.read(), dict(initial), True, viol, length=len(edges),
                            omitted=len(edges) - len(shown), omitted_at=KEEP if cut else len(edges))
    return cex, ""
