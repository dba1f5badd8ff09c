"""Checkable evidence of a TRUE: what an engine proved, in a form another process can check again.

Why: the portfolio answers for engines that run in other processes. A TRUE it passes on should not rest on an
engine's word, so an engine that has a proof hands it over as a `Proof`: picklable data (program-level atoms, or
formulas as SMT-LIB text, `smt/text.py`), with a `check` that rebuilds the system from the program and decides the
proof obligations with fresh solvers. The portfolio runs that check (`portfolio._checked`); a proof that fails it makes the answer UNKNOWN and
is reported as a bug.

Proof kinds:
- `KInductiveProof` (k-induction): invariants at cutpoints that are inductive as a set, and a bound k with no
  violation within k-1 steps and no k-step path that ends in one with the invariants holding throughout
  (k = 1 and no invariants: no step reaches a violation, BMC's "no reachable assertion").
- `engines.bmc.UnwindingProof` (bmc): at its bound the unrolling exhausts every loop and reaches no violation.
- `ClosedRunProof` (execute): the program's only execution ends without a violation (run again to check).
- `CutpointInvariantProof` (spacer, intervals): an invariant per cutpoint-graph node over the program variables
  that satisfies every clause of the cutpoint graph as Horn clauses (`smt.systems.cpg_horn`): the initial states
  imply init's, each edge preserves them, no edge into the error is enabled. Checked one fragment at a time
  (`cutpoint_failure`).
- `tpa.proof.TransitionInvariantProof` (TPA): a safe transition invariant and the system it holds for.
- `termination.proof.TerminationProof` (termination): invariants as above and one checked argument per loop.
- `TransformedProof` (an engine on an over-approximating transform of the program, e.g. tpa on the cell
  abstraction, `transforms/cells.py`): the engine's proof, checked on the transform applied again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import z3

from looprover.deadline import Deadline
from looprover.domains import Candidate
from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.errors import GiveUp
from looprover.smt.mbp import vocabulary
from looprover.smt.solver import check, obligation_failure
from looprover.smt.systems import clause_name
from looprover.smt.terms import mk_and, mk_not, mk_or
from looprover.smt.text import from_text, to_text


class Proof:
    """A TRUE's checkable evidence. `proves` says what of: that no assertion fails ("safety") or that every run
    ends ("termination"); a proof of the one is no evidence of the other."""
    kind: ClassVar[str]
    proves: ClassVar[str] = "safety"

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        """Why the proof does not hold for `program` (None if it does)."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def lines(self) -> list[str]:
        """Lines for the text report (default: none)."""
        return []


def invariant_formula(sys: CPGSystem, invariants: tuple[Candidate, ...] | list[Candidate],
                      env: dict[str, z3.ExprRef] | None = None, pc: z3.ExprRef | None = None) -> z3.BoolRef:
    """The conjunction of cutpoint-guarded invariants over a state (default: the current one), valid pc included."""
    env = sys.cur if env is None else env
    pc = sys.pc if pc is None else pc
    return mk_and(sys.valid_pc(pc), *(candidate_formula(sys, c, env, pc) for c in invariants))


def candidate_formula(sys: CPGSystem, c: Candidate, env: dict[str, z3.ExprRef], pc: z3.ExprRef) -> z3.BoolRef:
    """One candidate over a state: its atom, guarded by its cutpoint."""
    a = sys.enc.expr(c.atom, env)
    return a if c.node is None else z3.Implies(pc == sys.pc_id[c.node], a)


def invariants_failure(sys: CPGSystem, invariants: tuple[Candidate, ...] | list[Candidate], deadline: Deadline
                       ) -> str | None:
    """Why the cutpoint-guarded `invariants` are not inductive on `sys`'s pc-encoded system (initiation from
    Init, consecution over one step), or None when they are."""
    ts = sys.ts
    inv = invariant_formula(sys, invariants)
    return _unsat(sys, deadline, "initiation of the invariants", ts.init, z3.Not(inv)) or \
        _unsat(sys, deadline, "consecution of the invariants", inv, ts.trans,
               z3.Not(z3.substitute(inv, *zip(ts.state, ts.next))))


def _unsat(sys: CPGSystem, deadline: Deadline, what: str, *fs: z3.BoolRef) -> str | None:
    """None when the conjunction of `fs` is unsatisfiable, else why `what` does not hold."""
    return obligation_failure(sys.enc.solver(deadline), what, *fs)


@dataclass(frozen=True)
class KInductiveProof(Proof):
    k: int
    invariants: tuple[Candidate, ...] = ()
    kind: ClassVar[str] = "k-induction"

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        sys = CPGSystem(build_cpg(program), bitvector, deadline)
        ts = sys.ts
        inv = invariant_formula(sys, self.invariants)
        why = invariants_failure(sys, self.invariants, deadline)
        if why:
            return why
        why = _base_case(sys, self.k, deadline)
        if why:
            return why
        step = [ts.at(inv, 0)]
        for j in range(self.k):
            step += [ts.trans_at(j), z3.Not(ts.at(ts.bad, j)), ts.at(inv, j + 1)]
        return _unsat(sys, deadline, f"the {self.k}-induction step", *step, ts.at(ts.bad, self.k))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "k": self.k, "invariants": [str(c) for c in self.invariants]}



def _base_case(sys: CPGSystem, k: int, deadline: Deadline) -> str | None:
    """Why some execution reaches a violation within `k` - 1 cutpoint-graph steps, None when none does; one
    incremental solver, a depth per query."""
    ts = sys.ts
    base = sys.enc.solver(deadline)
    base.add(ts.at(ts.init, 0))
    for j in range(k):
        if j > 0:
            base.add(ts.trans_at(j - 1))
        lit = z3.Bool(f"!proofbad{j}")
        base.add(z3.Implies(lit, ts.at(ts.bad, j)))
        r = base.check(lit)
        if r != z3.unsat:
            return f"base case at depth {j} " + ("fails" if r == z3.sat else f"undecided ({base.why_unknown()})")
    return None


INTERPRETED_STEPS = 100_000     # about a second of the interpreter (`evidence/native.py`)


@dataclass(frozen=True)
class ClosedRunProof(Proof):
    """The program reads no input, so it has one execution, and that execution ends (returns or is blocked)
    without a violation: what `execute`'s compiled run showed. Checked by running it again: on the interpreter,
    which shares nothing with the compiled run but the IR, when it ends within `INTERPRETED_STEPS` edges; a
    longer run is compiled and run once more (the interpreter would need minutes for it)."""
    kind: ClassVar[str] = "closed-run"

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        from looprover.program.interp import InputOracle, run
        from looprover.evidence import native
        why = native.why_open(program)
        if why is not None:
            return f"the program is not closed: {why}"
        # any value for a havoc: `why_open` found none whose value is read
        res = run(program, InputOracle(program), max_steps=INTERPRETED_STEPS,
                  signed_overflow="wrap" if bitvector else "math", stop=deadline.expired)
        if res.outcome in ("exit", "blocked"):
            return "the run depends on signed overflow (undefined behaviour)" if res.overflowed else None
        if res.outcome == "stopped":
            return "the deadline passed while running the program"
        if res.outcome != "steps-exhausted":
            return f"the interpreted run ended with '{res.outcome}' after {res.steps} edges {res.detail}".strip()
        ok, how = native.run_closed(program, deadline.left())
        return None if ok else how

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind}


@dataclass(frozen=True)
class CutpointInvariantProof(Proof):
    invariants: tuple[tuple[int, str], ...]     # (CPG node, the invariant as SMT-LIB text over its live variables)
    labels: tuple[tuple[int, str], ...] = ()    # (node, how users know it: `Program.loc_label`), for --json
    # locations the graph is cut at besides the loop heads (`cpg.split_points`): a proof of a large program
    # gives invariants there too, so that code the loop heads' fragments share is checked once
    splits: tuple[int, ...] = ()
    kind: ClassVar[str] = "cutpoint-invariants"

    @staticmethod
    def of(interp, program: Program, splits: frozenset[int] = frozenset()) -> "CutpointInvariantProof":
        """The proof for `interp` (CPG node -> z3 formula over the node's live variables)."""
        nodes = sorted(interp)
        return CutpointInvariantProof(tuple((n, to_text(interp[n])) for n in nodes),
                                      tuple((n, program.loc_label(n)) for n in nodes), tuple(sorted(splits)))

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        odd = [n for n in self.splits if not 0 <= n < program.num_locs]
        if odd:
            return f"the proof cuts the graph at {odd[0]}, which is no location of the program"
        sys = CPGSystem(build_cpg(program, splits=frozenset(self.splits)), bitvector, deadline)
        return cutpoint_failure(sys, {n: from_text(t) for n, t in self.invariants}, deadline)

    def to_json(self) -> dict[str, Any]:
        label = dict(self.labels)
        return {"kind": self.kind,
                "invariants": {label.get(n, f"L{n}"): str(from_text(t)) for n, t in self.invariants}}


def cutpoint_failure(sys: CPGSystem, interp: dict[int, z3.BoolRef], deadline: Deadline) -> str | None:
    """Why `interp` (CPG node -> formula over the current-state constants) is not a safe inductive invariant of
    the cutpoint graph, or None: the obligations of `cpg_horn`'s clauses, named as those are.

    Why per fragment: a CPG edge's formula encodes its own sub-DAG of its source's fragment, and the fragments of
    inlined real code share long prefixes among their edges: cwalk's 944 fragments hold 7,061 CFA edges, its
    17,195 CPG edges 741,006, and their clauses did not finish encoding in 20 minutes. Here each fragment is
    encoded once (`CPGSystem.region`) and its obligations -- each target's invariant at the values the
    fragment ends with there, no failed assertion -- are asked together of one solver holding the source's
    invariant and the fragment (`failure`). Quantified invariants (Spacer's) are checked clause by clause instead
    (`by_clause`): small programs, where incremental solving gives up on them."""
    var_of = {sys.cur[v.name].get_id(): v for v in sys.vars}
    quantified = False
    over: dict[int, list] = {}          # per source the variables its invariant mentions (a substitution of
    for n in sys.cpg.sources:           # all of them took two thirds of cwalk's check); others have no clauses
        if n not in interp:
            return f"no interpretation of {sys.program.loc_label(n)}"
        voc = vocabulary(interp[n])
        extra = [c for c in voc.constants if c.get_id() not in var_of]
        if extra or voc.functions:
            return f"the interpretation of {sys.program.loc_label(n)} is not over its parameters " \
                   f"({', '.join(map(str, extra or voc.functions))})"
        over[n] = [var_of[c.get_id()] for c in voc.constants]
        quantified = quantified or voc.quantified

    def solver(*fs: z3.BoolRef) -> z3.Solver:
        s = z3.Solver()
        s.set("random_seed", 0)
        s.add(*fs)
        return s

    def outcome(s: z3.Solver, name: str) -> str | None:
        r = check(s, deadline)
        return None if r == z3.unsat else f"clause {name} does not hold (a counterexample to it: {s.model()})"

    def decided(s: z3.Solver, name: str) -> str | None:
        try:
            return outcome(s, name)
        except GiveUp as err:
            return f"clause {name}: {err}"

    def failure(src: int, goals: list[tuple[int, z3.BoolRef]], *given: z3.BoolRef) -> str | None:
        """The obligations `goals` (target, the clause's failure) of `src`'s fragment `given` (the source's
        invariant, the fragment's side conditions), asked at once: one query per fragment, since building the
        solver's state for a large fragment is what costs (pushing a scope for each target took four times the
        solving on x509-parser). Where they do not all hold, or the solver gives up, each clause is asked on
        its own (`by_clause`), which names the one that fails."""
        gave_up = False
        try:
            if check(solver(*given, mk_or(*(f for _, f in goals))), deadline) == z3.unsat:
                return None
        except GiveUp:
            gave_up = True
        for dst, _ in goals:
            why = by_clause(edge_of[(src, dst)])
            if why:
                return why
        if gave_up:
            return None             # each clause holds on its own
        # each holds alone, yet the fragment's encoding has a model that breaks one: the encodings disagree
        return f"the clauses of {sys.program.loc_label(src)}'s fragment hold one by one, not in its encoding"

    def by_clause(edge) -> str | None:
        """The clause of one CPG edge (its own sub-DAG) in a fresh solver: what quantified invariants need
        (Spacer's have `exists`; an incremental solver left nested6's open, `incomplete quantifiers`)."""
        src, dst = edge.src, edge.dst
        if dst == ERROR:
            alone = solver(interp[src], sys.edge_formula(edge, ()))
        else:
            head = z3.substitute(interp[dst], *((sys.cur[v.name], sys.nxt[v.name]) for v in over[dst]))
            alone = solver(interp[src], sys.edge_formula(edge, over[dst]), mk_not(head))
        return decided(alone, clause_name(src, dst))

    why = decided(solver(*sys.range_constraints(sys.cur), mk_not(interp[sys.cpg.init])), "init")
    if why:
        return why
    edge_of = {(e.src, e.dst): e for e in sys.cpg.edges}
    if quantified:
        for e in sys.cpg.edges:
            if e.dst == ERROR or e.dst in over:
                why = by_clause(e)
                if why:
                    return why
        return None
    for src in sys.cpg.sources:
        R = sys.region(src)
        goals: list[tuple[int, z3.BoolRef]] = []
        for t in sys.cpg.fragment(src).targets:
            g = R.guard(("t", t))
            if t not in over or z3.is_false(g):          # an exit: nothing follows
                continue
            env = R.envs[("t", t)]
            after = z3.substitute(interp[t], *((sys.cur[v.name], sys.enc.term(env[v.name], v.type)) for v in over[t]))
            goals.append((t, mk_and(g, mk_not(after))))
        if R.violations:
            goals.append((ERROR, R.error()))
        why = failure(src, goals, interp[src], *R.side) if goals else None
        if why:
            return why
    return None


@dataclass(frozen=True)
class TransformedProof(Proof):
    """A proof of the program's over-approximation by the transform `technique`: checked by applying the
    transform to the program again (it is deterministic) and checking `inner` on the result."""
    technique: str
    inner: Proof
    kind: ClassVar[str] = "transformed"

    @property
    def proves(self) -> str:      # type: ignore[override]
        return self.inner.proves

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        from looprover.transforms import get_transform
        t = get_transform(self.technique).apply(program)
        if not t.guarantee.keeps_true:
            return f"the {self.technique} transform does not over-approximate"
        why = self.inner.check(t.program, bitvector, deadline)
        return None if why is None else f"on the {self.technique} abstraction: {why}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "technique": self.technique, "inner": self.inner.to_json()}

    def lines(self) -> list[str]:
        return [f"on the {self.technique} abstraction of the program:"] + ["  " + x for x in self.inner.lines()]
