"""The `intervals` engine: an interval analysis of the whole program (`absint`), its cutpoint states as the proof.

Why: many assertions of real code need nothing relational or deep (an index bounded by its loop's guard, a
divisor that is a non-zero constant). One pass of abstract interpretation shows them in a fraction of the time a
solver-based engine needs on a large program, and `check` uses it to settle the easy checks before the engines
see the rest (`runtime_checks.run_checks`). The answer is TRUE only: when every assertion holds in the analysis,
its states at the cutpoints become a `CutpointInvariantProof` (z3 checks, one cutpoint fragment at a time, that
they hold initially, are kept by every edge and exclude every violation; one query for the whole pc-encoded
system did not finish in 15 minutes on a 2 KLOC library with 941 cutpoints), which the portfolio or the job
checks with fresh solvers, so no TRUE rests on the analysis. Otherwise UNKNOWN, naming the first assertion it cannot show.
"""
from __future__ import annotations

import z3

from looprover.absint.fixpoint import Analysis, analyze
from looprover.engines.base import Engine, Run, Task
from looprover.evidence.proofs import CutpointInvariantProof
from looprover.program.cfa import Program
from looprover.program.cpg import split_points
from looprover.program.liveness import liveness
from looprover.smt.cpg_system import state_name
from looprover.smt.encode import Encoder
from looprover.smt.terms import mk_and
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
        shown = f"show all {total} assertions" if total else "hold (the program has no assertion)"
        proof = proof_of(program, result, run.bitvector)
        return self.true(f"interval invariants at {places(result, proof)} {shown}", proof)


def proof_of(program: Program, result: Analysis, bitvector: bool) -> CutpointInvariantProof:
    """The analysis's states at the cutpoint-graph sources (the initial location and the cutpoints) as one
    formula each (`state_formulas`), and at the locations where cutting the graph once more pays
    (`program.cpg.split_points`: inlined real code shares long stretches between the fragments of its loop
    heads). `program` may be the analysed one with assertions made assumptions: both refine a state alike, so
    the states are the same."""
    live = liveness(program)
    splits = split_points(program, lambda loc: len(live.get(loc, ())))
    return CutpointInvariantProof.of(state_formulas(program, result, bitvector, splits, live), program, splits)


def places(result: Analysis, proof: CutpointInvariantProof) -> str:
    """Where the proof states invariants, as reasons say it: the cutpoints, and its cuts if it has any."""
    cuts = f" and {len(proof.splits)} cuts of shared code" if proof.splits else ""
    return f"{len(result.cutpoints)} cutpoints{cuts}"


def state_formulas(program: Program, result: Analysis, bitvector: bool, also: frozenset[int] = frozenset(),
                   live: dict | None = None) -> dict[int, z3.BoolRef]:
    """The analysis's state at each cutpoint-graph source (and at the locations `also`) as a formula over the
    state constants the cutpoint graph's Horn clauses have as parameters (`smt.systems.cpg_horn`,
    `smt.cpg_system.CPGSystem.cur`)."""
    enc = Encoder(program, bitvector, prefix="")
    env = {v.name: enc.const(state_name(v.name), v.type) for v in program.all_vars}
    atoms: dict[int, list[z3.BoolRef]] = {n: [] for n in {program.init, *result.cutpoints, *also}}
    made: dict = {}     # most bounds recur at many locations: each is encoded once
    for c in result.invariants(bitvector, also, live):
        f = made.get(c.atom)
        if f is None:
            f = made[c.atom] = enc.expr(c.atom, env)
        atoms[c.node].append(f)
    return {n: mk_and(*fs) for n, fs in atoms.items()}
