"""`TerminationProof`: the evidence of a termination TRUE, checked from the program with fresh solvers.

What it claims and what `check` decides, from nothing but the program:
  * the CFA's loops are all natural loops (no irreducible control flow: a `goto` cycle with two entries has no
    header whose visits an argument could count); calls are inlined by the front-end, which refuses recursion,
    so the loops are the only source of infinite executions;
  * the invariants are inductive on the cutpoint-graph system (initiation and consecution);
  * there is exactly one argument per natural loop, and each holds (`ranking.check_argument`: the summary of
    the nested loops it uses is inductive, and T2 satisfies the argument's well-founded relation).
Then no execution visits a loop header infinitely often while staying in that loop, so every execution ends
(`relation.py` explains why that suffices). In integer mode this is a statement about the executions without
signed overflow (the encoding's meaning, see `smt/encode.py`); with `--bitvector` about gcc's wrap-around.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from looprover.deadline import Deadline, OutOfTime
from looprover.domains import Candidate
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.program.loops import analyze_loops
from looprover.smt.cpg_system import CPGSystem
from looprover.termination.ranking import LoopArgument, check_argument
from looprover.termination.relation import LoopRelation
from looprover.evidence.proofs import Proof, invariants_failure


@dataclass(frozen=True)
class TerminationProof(Proof):
    invariants: tuple[Candidate, ...]
    loops: tuple[LoopArgument, ...]
    names: tuple[tuple[str, str], ...] = ()       # IR name -> C name, for display
    kind: ClassVar[str] = "termination"
    proves: ClassVar[str] = "termination"

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        forest = analyze_loops(program)
        if forest.irreducible:
            return "the program has irreducible control flow"
        args: dict[int, LoopArgument] = {}
        for a in self.loops:
            if a.header in args:
                return f"two arguments for the loop at L{a.header}"
            args[a.header] = a
        missing = sorted(set(forest.loops) - set(args))
        if missing:
            return f"no argument for the loop at L{missing[0]}"
        extra = sorted(set(args) - set(forest.loops))
        if extra:
            return f"an argument for L{extra[0]}, which is not a loop header"
        if not forest.loops:
            return None
        sys = CPGSystem(build_cpg(program, forest), bitvector, deadline)
        try:
            why = invariants_failure(sys, self.invariants, deadline)
            if why is not None:
                return why
            for h in forest.order:
                why = check_argument(LoopRelation(sys, forest.loops[h], self.invariants), args[h], deadline)
                if why is not None:
                    return f"loop at L{h}: {why}"
        except (KeyError, TypeError, ValueError) as exc:
            return f"the proof does not fit the program ({type(exc).__name__}: {exc})"
        except OutOfTime:
            return "undecided: the deadline passed while checking the proof"
        return None

    def to_json(self) -> dict[str, Any]:
        names = dict(self.names)
        return {"kind": self.kind, "loops": [a.to_json(names) for a in self.loops],
                "invariants": [str(c) for c in self.invariants]}

    def lines(self) -> list[str]:
        names = dict(self.names)
        if not self.loops:
            return ["  argument: the program has no loops"]
        out = ["  arguments (one per loop, checked with fresh solvers):"]
        for a in self.loops:
            out.append(f"    {a.where or 'L' + str(a.header)}: {a.kind}: {a.text(names)}")
        return out
