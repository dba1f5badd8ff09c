"""The `intervals` engine: an interval analysis of the whole program (`absint`), its cutpoint states as the proof.

Why: many assertions of real code need nothing relational or deep (an index bounded by its loop's guard, a
divisor that is a non-zero constant). One pass of abstract interpretation shows them in a fraction of the time a
solver-based engine needs on a large program, and `check` uses it to settle the easy checks before the engines
see the rest (`runtime_checks.run_checks`). The answer is TRUE only: when every assertion holds in the analysis,
its states at the cutpoints become a `KInductiveProof` with k = 1 (z3 checks that they hold initially, are
kept by every cutpoint-graph step and exclude every violation), which the portfolio or the job checks again with
fresh solvers, so no TRUE rests on the analysis. Otherwise UNKNOWN, naming the first assertion it cannot show.
"""
from __future__ import annotations

from looprover.absint.fixpoint import analyze
from looprover.engines.base import Engine, Run, Task
from looprover.evidence.proofs import KInductiveProof
from looprover.program.cfa import Program
from looprover.verdict import Verdict


class Intervals(Engine):
    name = "intervals"
    summary = "interval analysis (abstract interpretation with widening); TRUE only, its invariants checked by z3"

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        run.stage = "interval analysis"
        run.report("intervals: abstract interpretation of the whole program")
        result = analyze(program, run.bitvector, run.deadline)
        total = len(result.proved) + len(result.unproved)
        run.stats["assertions_proved"] = len(result.proved)
        run.stats["assertions"] = total
        if result.unproved:
            ei, si = result.unproved[0]
            st = program.edges[ei].stmts[si]
            where = f" at {st.src}" if st.src is not None else ""
            return self.unknown(f"the interval analysis shows {len(result.proved)} of {total} assertions; "
                                f"not the one{where}: {st.cond}")
        invariants = tuple(result.invariants(run.bitvector))
        shown = f"show all {total} assertions" if total else "hold (the program has no assertion)"
        return self.true(f"interval invariants ({len(invariants)} bounds at {len(result.cutpoints)} cutpoints) "
                         f"{shown}", KInductiveProof(1, invariants))
