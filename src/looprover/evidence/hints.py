"""Loop-invariant candidates that come with a TRUE for the SV-COMP correctness witness: not a proof.

Why apart from `proofs.py`: the `summarize` engine proves TRUE by BMC of a summarized program, so it holds no state
invariants of the program it was given, yet its kept summary conjuncts are likely invariants at the original loop
heads. They are handed over as candidates: the portfolio does not check them (the TRUE rests on the engine's own
argument), and the witness writer (`svcomp.py`) keeps only the subset that the validator's own checks accept
(`validate.inductive_subset`) and writes a witness only when those invariants are confirmed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from looprover.domains import Candidate


@dataclass(frozen=True)
class LoopInvariantHints:
    source: str                          # what they come from (for the report)
    atoms: tuple[Candidate, ...] = ()    # program-level atoms at CFA loop heads, over the program's variables
    kind: ClassVar[str] = "loop-invariant candidates"

    def to_json(self) -> dict[str, Any]:
        # a count only: there are often hundreds, and they are not evidence of the TRUE
        return {"kind": self.kind, "source": self.source, "candidates": len(self.atoms)}
