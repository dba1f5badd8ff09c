"""A certificate for a TRUE whose engine holds no invariants of the program it was given: the largest inductive
subset of candidate invariants, which must exclude every violation k-inductively (`KInductiveProof`), k small.

Why: `summarize` and `labmc` prove a transformed program (summarized loops, abstract loops) by BMC, so their TRUE
rests on the transformation's soundness argument and on BMC. The certificate restates the TRUE as invariants of
the program itself, which the portfolio and the job decide again with fresh solvers (`evidence.recheck`) and the
witness writer prints. Candidates come from the engine (`summarize`'s kept summary conjuncts) and from the
abstract domains filtered by sampled states (`domain_candidates`, the ones k-induction starts from). A TRUE they
cannot certify is UNKNOWN with the reason: it needs relations the domains do not offer.
"""
from __future__ import annotations

import random
from typing import Callable

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.domains import Candidate
from looprover.domains.samples import RandomRuns
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, build_cpg
from looprover.program.expr import BINDERS, Expr, ForAll, Var, and_, cmp, implies, substitute, walk
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.smt.cpg_system import CPGSystem
from looprover.evidence.proofs import KInductiveProof, candidate_formula
from looprover.evidence.replay import model_state
from looprover.smt.houdini import houdini as smt_houdini
from looprover.smt.instances import index_terms, instantiate

MAX_K = 4      # the invariants may need a few steps of k-induction to exclude the violation
RUN_STEPS = 1000   # CFA edges of the run from each Houdini model (see `RunRefuter`)


def houdini(sys: CPGSystem, cands: list[Candidate], deadline: Deadline | None,
            enough: Callable[[list[Candidate]], bool] | None = None) -> list[Candidate] | None:
    """The largest inductive subset of `cands` (None if the solver gave up before a fixed point): initiation
    from Init, consecution over the transition relation with valid pcs (`smt/houdini.py`).

    A quantified candidate `∀k ∈ [lo, hi): φ(k)` is checked at a fresh cell c (`lo ≤ c < hi ⇒ φ(c)`; c is
    free, so unsat means every cell; one c serves all candidates, as a round asks whether one of them fails
    somewhere) and assumed through its instances at the query's index terms
    (`smt/instances.py`, complete for these candidates): every query is quantifier-free, so the models Houdini
    reads decide every check. Houdini runs on the quantifier-free candidates first, then on all: when the
    second run does not finish in time, the first one's result stands. `enough(found)` true after the first
    run skips the second (a caller whose proof needs no more: the quantified round costs most of the time)."""
    if not cands:
        return []
    plain = [c for c in cands if not quantified(c)]
    found = _houdini(sys, plain, deadline)
    if found is None or len(plain) == len(cands) or (enough is not None and enough(found)):
        return found
    joint = _houdini(sys, cands, deadline)      # a quantifier-free invariant may need a quantified one
    return joint if joint is not None else found


def _houdini(sys: CPGSystem, cands: list[Candidate], deadline: Deadline | None) -> list[Candidate] | None:
    if not cands:
        return []
    enc = sys.enc
    cur = [candidate_formula(sys, c, sys.cur, sys.pc) for c in cands]
    nxt = [_checked_formula(sys, c, sys.nxt, sys.pc_next, "nxt") for c in cands]
    at_init = [_checked_formula(sys, c, sys.cur, sys.pc, "init") for c in cands]
    if any(quantified(c) for c in cands):
        terms = index_terms([sys.ts.trans, *cur, *nxt])
        cur = [instantiate(f, terms) for f in cur]
    try:
        alive = smt_houdini([sys.ts.trans, sys.valid_pc()], cur, nxt, deadline, init=sys.ts.init, at_init=at_init,
                            new_solver=lambda: enc.solver().z3, refute=RunRefuter(sys, cands))
    except (OutOfTime, GiveUp):
        return None
    return [cands[i] for i in alive]


class RunRefuter:
    """Houdini's extra drops (`smt.houdini.Refuter`): run the program from a round's model state for up to
    `RUN_STEPS` edges with random inputs, and drop the alive candidates false in a state the run reaches.

    Why: a round's model usually falsifies one or two candidates, and the domains offer hundreds or thousands.
    Many of those are guesses from short sampled runs, which a longer run from the model's state may refute at
    once; the solver would take a round for each.

    Why it is right: every state of the run is reachable from its start. The initiation model's state is an
    initial state, so a candidate false later is no invariant. A consecution model's pre-state satisfies the
    alive candidates in the encoding; the run starts from it only when the interpreter (`program.interp`, the
    semantics the encoding is tested against) finds them all true there too, so it lies inside the largest
    inductive subset and so does every state after it (`smt/houdini.py`). Not with quantified candidates alive:
    the encoding assumes them at a few instances only (`smt/instances.py`), so the model's arrays need not
    satisfy them (on array-cav19's tasks a run from such a state dropped invariants). An atom the interpreter
    cannot evaluate on a state is kept."""

    def __init__(self, sys: CPGSystem, cands: list[Candidate], seed: int = 0):
        self.sys = sys
        self.points = {n for n in sys.cpg.nodes if n != ERROR}
        self.atoms: dict[int | None, list[tuple[int, Expr]]] = {}
        for i, c in enumerate(cands):
            self.atoms.setdefault(c.node, []).append((i, c.atom))
        self.quantified = {i for i, c in enumerate(cands) if quantified(c)}
        self.runs = RandomRuns(sys.program, sys.bitvector, True, random.Random(seed))
        self.ev = Evaluator("wrap" if sys.bitvector else "math")

    def at_init(self, m: z3.ModelRef, alive: list[int]) -> set[int]:
        start = self._state(m, self.sys.cur, self.sys.pc)
        return set() if start is None else self._refuted(*start, alive)

    def after_step(self, m: z3.ModelRef, alive: list[int]) -> set[int]:
        live = set(alive)
        if live & self.quantified:
            return set()
        start = self._state(m, self.sys.cur, self.sys.pc)
        if start is None:
            return set()
        node, state = start
        for i, atom in self.atoms.get(node, []) + self.atoms.get(None, []):
            if i in live and self._value(atom, state) is not True:
                return set()
        return self._refuted(node, state, alive)

    def _state(self, m: z3.ModelRef, env: dict[str, z3.ExprRef], pc: z3.ExprRef) -> tuple[int, dict] | None:
        """The model's location and program state (read from the constants `env`), if at a CPG node."""
        node = self.sys.node_of.get(m.eval(pc, model_completion=True).as_long())
        return None if node not in self.points else (node, model_state(self.sys, m, env))

    def _refuted(self, node: int, state: dict, alive: list[int]) -> set[int]:
        seen = self.runs.states_from(node, state, self.points, RUN_STEPS)
        live = set(alive)
        gone: set[int] = set()
        for point, states in seen.items():
            for i, atom in self.atoms.get(point, []) + self.atoms.get(None, []):
                if i in live and i not in gone and any(self._value(atom, st) is False for st in states):
                    gone.add(i)
        return gone

    def _value(self, atom: Expr, state: dict) -> object:
        """The atom's value on `state`, None where the interpreter cannot evaluate it (neither true nor false)."""
        try:
            return self.ev.eval(atom, state)
        except (UndefinedBehavior, ArithmeticError, KeyError, TypeError, ValueError):
            return None


def quantified(c: Candidate) -> bool:
    """Does the candidate bind a variable (the quantified array facts of `domains/cells.py`)?"""
    return any(isinstance(n, BINDERS) for n in walk(c.atom))


def _checked_formula(sys: CPGSystem, c: Candidate, env: dict, pc, tag: str):
    """`c` over a state, a top-level `ForAll` of it at a fresh cell (see `houdini`)."""
    if not isinstance(c.atom, ForAll):
        return candidate_formula(sys, c, env, pc)
    q = c.atom
    cell = Var(f"{q.var.name}!{tag}", q.var.type)
    inst = implies(and_(cmp("<=", q.lo, cell), cmp("<", cell, q.hi)), substitute(q.body, {q.var: cell}))
    return candidate_formula(sys, Candidate(c.node, inst), {**env, cell.name: sys.enc.const(cell.name, cell.type)}, pc)


def domain_candidates(program: Program, bitvector: bool, deadline: Deadline | None, live_only: bool = False,
                      system: CPGSystem | None = None) -> list[Candidate]:
    """The abstract domains' candidate invariants at the program's cutpoints (`domains.candidates`; `live_only`:
    over the variables live there), less those a sampled state falsifies (random runs, and paths z3 finds to the
    cutpoints no run reaches: `domains.samples`, over `system`, the program's cutpoint-graph system, when the
    caller has one)."""
    from looprover.domains import candidates, sample_states
    system = system if system is not None else CPGSystem(build_cpg(program), bitvector, deadline)
    cpg = system.cpg
    samples = sample_states(program, set(cpg.cutpoints), bitvector=bitvector, deadline=deadline, arrays=True,
                            system=system)
    return list(candidates(program, cpg, samples, bitvector, live_only=live_only))


def certify(program: Program, atoms: list[Candidate], bitvector: bool, deadline: Deadline,
            more: list[Candidate] | None = None, system: CPGSystem | None = None
            ) -> tuple[KInductiveProof | None, str]:
    """A checked proof from `atoms`: their largest inductive subset (Houdini on the program's cutpoint graph),
    which must exclude every violation k-inductively for some k ≤ `MAX_K`, as the checks of the portfolio decide
    again. (None, why) when they do not. With `more`, the union of both is tried after `atoms`; `system`: the
    program's cutpoint-graph system, when the caller has made it.

    The quantifier-free atoms are tried first (of `atoms`, then of the union), and the quantified ones only when
    those do not certify: the quantified array facts cost most of Houdini's time (MemSafety's
    substring-alloca-2: 8.7 s for a proof from the quantifier-free ones, 52 s through the round over all 964;
    Verisec's bind rrextract at BASE_SZ 1000: 12 s for the domains' quantifier-free ones, over 40 s for
    all, so the summaries' quantifier-free ones were never tried), and most proofs do not need them."""
    known = set(atoms)
    union = atoms + [c for c in (more or []) if c not in known]
    tries: list[list[Candidate]] = []
    for cands in ([c for c in atoms if not quantified(c)], [c for c in union if not quantified(c)], atoms, union):
        if cands and all(len(cands) != len(t) or cands != t for t in tries):
            tries.append(cands)
    tries = tries or [[]]           # no candidates: the property may still be k-inductive alone
    why = "no candidate invariants"
    try:
        sys = system if system is not None else CPGSystem(build_cpg(program), bitvector, deadline)
        for cands in tries:
            kept = _houdini(sys, cands, deadline)
            if kept is None:
                return None, "Houdini did not finish in time"
            proof, why = k_inductive_proof(program, kept, bitvector, deadline)
            if proof is not None:
                return proof, ""
    except (OutOfTime, GiveUp) as exc:
        return None, f"the check did not finish ({exc or 'deadline'})"
    return None, why


def k_inductive_proof(program: Program, kept: list[Candidate], bitvector: bool, deadline: Deadline,
                      max_k: int = MAX_K) -> tuple[KInductiveProof | None, str]:
    """The proof from the invariants `kept` with the least k ≤ `max_k` whose step holds, checked as the
    portfolio checks it; (None, why) otherwise. Raises OutOfTime or GiveUp when the check runs out."""
    why = ""
    for k in range(1, max_k + 1):
        proof = KInductiveProof(k, tuple(kept))
        why = proof.check(program, bitvector, deadline)
        if why is None:
            return proof, ""
        if not why.startswith(f"the {k}-induction step fails"):
            break
    return None, why


def certify_with_domains(program: Program, atoms: list[Candidate], bitvector: bool, deadline: Deadline
                         ) -> tuple[KInductiveProof | None, str]:
    """`certify` on the domains' candidates, then, when they do not certify the TRUE, on their union with the
    engine's `atoms` (Houdini over every source of candidates); quantifier-free ones first (see `certify`).

    Why the domains first: an engine's atoms are many and mostly local to one loop (a loop summary's conjuncts
    that hold alone: 1031 on MemSafety's cstrcmp-alloca-2, where Houdini over them took 14 s and did not
    certify), while the domains' quantifier-free candidates certified each MemSafety string task in 0.6-8.7 s."""
    try:
        system = CPGSystem(build_cpg(program), bitvector, deadline)    # one encoding for the samples and Houdini
        more = domain_candidates(program, bitvector, deadline, system=system)
    except (OutOfTime, GiveUp):
        return None, "the domains' candidates were not sampled in time"
    return certify(program, more, bitvector, deadline, atoms, system)
