"""The `execute` engine: a program that reads no input has exactly one execution; run it, compiled, to the end.

Why: closed programs whose loops count to constants in the millions (`while (x < 1000000) x++;` and phases of
such loops) are common in verification tasks. Their only execution is fully determined, yet BMC needs a bound
of millions to exhaust it, and invariant-based engines need invariants that relate the phases exactly. Running
the program decides the property directly: the IR printed as C (`program/emit_c.py`, the printing the
compiled counterexample confirmation already uses, `evidence/native.py`, where gcc's sanitizers trap wherever
C's undefined behaviour differs from the IR's meaning) executes 10^9 simple iterations in about a second.

When it answers (TRUE only):
  * the program is closed: no havoc whose value is ever read (no `__VERIFIER_nondet_*` result, no undefined
    function's result that matters; `int x;` overwritten before any read is no input) and no variable read before
    it is written (`emit_c.initial_havocs` is empty), so its execution is unique (`native.why_open`);
  * the compiled run ends by returning from `main` (exit code 0) or is blocked by an assumption, without
    calling `reach_error` -- so no execution violates an assertion: TRUE, with a `ClosedRunProof` that the
    portfolio (or the job) checks by running the program again, on the interpreter where the run is short.
A run that reaches `reach_error` is left to the engines that build counterexamples (bmc, accel: a violation
of a closed program is found there with a trace the portfolio replays), so this engine says UNKNOWN with that
fact; so does a run that traps (undefined behaviour), does not end in time, or a program that cannot be
compiled (`native.why_not`).
"""
from __future__ import annotations

from looprover.engines.base import Engine, Run, Task
from looprover.program.cfa import Program
from looprover.verdict import Verdict
from looprover.evidence import native
from looprover.evidence.proofs import ClosedRunProof


class Execute(Engine):
    name = "execute"
    summary = "closed programs (no input): run the only execution, compiled, to its end (TRUE only)"

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        why = native.why_open(program) or native.why_not(program)
        if why is not None:
            return self.unknown(f"not a closed program that can be run: {why}")
        run.stage = "compiled run"
        run.report("execute: compiling and running the program's only execution")
        ok, how = native.run_closed(program, run.deadline.left() - 0.2)
        if ok:
            return self.true(how, ClosedRunProof())
        if ok is False:
            return self.unknown(f"{how} (a counterexample is left to bmc or accel, which replay one)")
        return self.unknown(how)
