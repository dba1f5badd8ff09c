"""k-induction on the cutpoint-graph transition system, strengthened with Houdini invariants.

For k = 1, 2, ...:
  base(k-1): Init(s0) ∧ T(s0,s1) ∧ … ∧ T(s_{k-2},s_{k-1}) ∧ Bad(s_{k-1})   sat -> FALSE (after replay)
  step(k):   Inv(s0..sk) ∧ T(s0..sk) ∧ ¬Bad(s0..s_{k-1}) ∧ Bad(s_k)        unsat -> TRUE
With base(0..k-1) unsat, step(k) unsat gives safety by induction over path length. `Inv` is a conjunction
of proven invariants, so assuming it in the step case is sound.

Invariant candidates (pc-guarded per cutpoint) come from the abstract domains (`domains/`: type ranges, bounds,
orderings, equalities `x = y + d`, residues and congruences, lines `y = a·x + b`, Boolean constants). They are
generated from the program's constants and from states seen in short random concrete runs (`program.interp`;
at cutpoints no run reaches, on paths z3 finds there), which also discard candidates that are false in a
reachable state. Houdini (`smt/houdini.py`) then keeps the
largest inductive subset: check initiation, then drop every candidate that fails consecution relative to all
surviving ones, until none fails. Only a completed Houdini
run is used; on timeout the step case runs without invariants. Houdini runs over the quantifier-free candidates
first; when their survivors already make the property k-inductive for a small k (`QUICK_K`), that proof is the
answer and the costlier round over the quantified array facts is skipped.

Solver use, measured on the CPG transition system (total time up to the verdict or k=60, plain k-induction):
one incremental solver per case with Bad passed through an assumption literal, vs push/pop around Bad, vs a
fresh solver per k: bug at depth 60: 0.7 / 2.6 / 3.9 s; nondeterministic accumulator: 1.1 / 4.4 / 7.2 s;
triangular nest: 8.8 / 24 / 58 s; `while(*) x++`: 0.4 / 1.9 / 4.6 s. So: incremental with assumptions. (stack.md
saw push/pop of whole unrollings blow up; here only valid constraints are ever added, which is what
makes incrementality pay.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from looprover.deadline import Deadline, OutOfTime, now
from looprover.domains import Candidate, candidates, sample_states
from looprover.domains.strings import StringLengths
from looprover.engines.base import Engine, Run, Task
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.instances import GrowingInstances
from looprover.verdict import Verdict
from looprover.evidence.confirm import confirm_model
from looprover.evidence.certify import houdini, k_inductive_proof
from looprover.evidence.proofs import KInductiveProof, invariant_formula


STRINGS_SHARE = 0.5     # of the time left, for the string-terminator abstraction of a program with char arrays


QUICK_K = 2             # the quantifier-free invariants' proof tried before the quantified Houdini round


def _quick_proof(program: Program, kept: list[Candidate], bitvector: bool, deadline: Deadline,
                 out: list[KInductiveProof]) -> bool:
    """Do the quantifier-free invariants `kept` give a k-inductive proof with k ≤ `QUICK_K`? The proof goes to
    `out`. Why: Houdini's round over the quantified array facts costs most of its time (MemSafety's
    substring-alloca-2: 6.8 s for the quantifier-free candidates, 26 s for all), and programs that need no array
    invariant should not wait for it (`evidence/certify.py` does the same)."""
    try:
        proof, _ = k_inductive_proof(program, kept, bitvector, deadline, QUICK_K)
    except (OutOfTime, GiveUp):
        return False
    if proof is not None:
        out.append(proof)
    return proof is not None


# ------------------------------------------------------------------------------------------ engine
@dataclass
class KInductionSettings:
    invariants: bool = field(default=True, metadata={"help": "strengthen the step case with Houdini invariants"})
    simple_path: bool = field(default=False, metadata={"help": "require the states of the step case to differ"})
    seed: int = field(default=0, metadata={"help": "random seed of the state sampling for candidates"})
    arrays: str = field(default="auto", metadata={
        "help": "a program with char arrays: first on its string-terminator abstraction (auto), or only as it "
                "is (native)"})

    def __post_init__(self) -> None:
        if self.arrays not in ("auto", "native"):
            raise ValueError(f"kinduction.arrays: expected auto or native, got {self.arrays!r}")


class KInduction(Engine):
    name = "kinduction"
    summary = "k-induction on the cutpoint graph, strengthened with Houdini-filtered invariant candidates"
    Settings = KInductionSettings

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: KInductionSettings = self.settings(run)
        if opts.arrays == "auto":
            v = self._on_strings(program, task, run)
            if v is not None:
                return v
        t0 = now()
        stats = run.stats
        deadline = run.deadline
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, run.bitvector, deadline)
        ts = sys.ts
        inv: list[Candidate] = []
        if opts.invariants:
            span = max(deadline.at - t0, 0.0) if not deadline.unlimited else 60.0
            samples = sample_states(program, set(cpg.cutpoints), seed=opts.seed, bitvector=run.bitvector,
                                    arrays=True, deadline=Deadline(min(deadline.at, t0 + span / 10)), system=sys)
            # on the string-terminator abstraction, over the live variables only: its ghosts multiply the
            # relations (outer_ok at BASE_SZ 1000: 524 candidates, Houdini 8.6 s; live ones 175, 1.0 s, and
            # the same proof)
            cands = candidates(program, cpg, samples, run.bitvector, live_only=StringLengths().wants_scope(program))
            stats["candidates"] = len(cands)
            hd = Deadline(min(deadline.at, t0 + max(0.5, span / 3)))
            quick: list[KInductiveProof] = []
            found = houdini(sys, cands, hd, enough=lambda kept: _quick_proof(program, kept, run.bitvector, hd, quick))
            stats["houdini"] = "done" if found is not None else "gave up"
            inv = found or []
            stats["invariants"] = len(inv)
            if quick:
                return self.true(f"{quick[0].k}-inductive with {len(inv)} quantifier-free invariants", quick[0])
        inv_f = invariant_formula(sys, inv)

        base = sys.enc.solver(deadline)
        base.add(ts.at(ts.init, 0))
        step = sys.enc.solver(deadline)
        inst = GrowingInstances()       # quantified invariants: instantiated, as in Houdini (`smt/instances.py`)
        step.add(*inst.assume([ts.at(inv_f, 0)]))
        states: list[list[z3.ExprRef]] = [ts.step_vars(0)]
        k = 0
        while run.max_bound is None or k < run.max_bound:
            k += 1
            deadline.check()
            run.stage = f"k={k}"
            run.report(f"kinduction: k={k}")
            stats["k"] = k
            # base case at depth k-1
            j = k - 1
            if j > 0:
                base.add(ts.trans_at(j - 1))
            lit = z3.Bool(f"!bad{j}")
            base.add(z3.Implies(lit, ts.at(ts.bad, j)))
            r = base.check(lit)
            if r == z3.sat:
                return self._falsify(program, sys, base.model(), j, run)
            if r != z3.unsat:
                return self.unknown(f"{base.why_unknown()} in the base case at depth {j}")
            # step case k
            step.add(ts.trans_at(k - 1), z3.Not(ts.at(ts.bad, k - 1)))
            step.add(*inst.ground([ts.trans_at(k - 1), ts.at(ts.bad, k)]))
            step.add(*inst.assume([ts.at(inv_f, k)]))
            states.append(ts.step_vars(k))
            if opts.simple_path:
                for i in range(k):
                    step.add(z3.Or([a != b for a, b in zip(states[i], states[k])]))
            lit = z3.Bool(f"!step{k}")
            step.add(z3.Implies(lit, ts.at(ts.bad, k)))
            r = step.check(lit)
            if r == z3.unsat:
                return self.true(f"{k}-inductive with {len(inv)} invariants", KInductiveProof(k, tuple(inv)))
            if r != z3.sat:
                return self.unknown(f"{step.why_unknown()} in the step case at k={k}")
        return self.unknown(f"not k-inductive up to k={k} (max bound)")

    def _on_strings(self, program: Program, task: Task, run: Run) -> Verdict | None:
        """k-induction on the string-terminator abstraction of a program with char arrays (`STRINGS_SHARE` of
        the time left): its verdict, or None when the program itself is next."""
        from looprover.engines.transformed import OnStrings, on_abstractions
        from looprover.transforms.strings import has_strings
        if not has_strings(program):
            return None
        return on_abstractions(self, program, task, run, ((OnStrings, STRINGS_SHARE),))

    def _falsify(self, program: Program, sys: CPGSystem, model: z3.ModelRef, depth: int, run: Run) -> Verdict:
        """Rebuild the CFA path of a base-case model step by step and replay it."""
        c = confirm_model(program, sys, model, depth, run.bitvector)
        if not c.ok:
            return self.unknown(c.why, c.candidate)
        return self.false(f"assertion violated after {depth} cutpoint steps ({len(c.cex.steps)} edges)", c.cex)
