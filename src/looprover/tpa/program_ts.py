"""A program's loop as a plain transition system, when its cutpoint graph has Golem's "transition system" shape.

Why: the pc-encoded whole-program system (`CPGSystem.ts`) folds the program counter and every fragment's
ite-merged next-state terms into one Tr. TPA's interpolants then have to speak about the pc and the other
fragments, and on C programs they did not generalise: `deep_safe_N` and `multiloop_safe` ran into the deadline
at level 9 and 7 (40 s). A program with exactly one loop (entry -> L, L -> L, L -> exit/ERROR) is a TS over
the program variables live at L alone (the dead ones, a Horn clause's locals among them, are auxiliaries of Tr_L):

    Init_L(x) = ∃x0, aux. Init(x0) ∧ entry(x0, x, aux)       Tr_L = the self-loop edge of L
    Bad_L(x)  = ∃aux. L's fragment fails an assertion from x

computed by exact quantifier elimination, so the system is *equivalent* to the program: Bad_L is reachable in
k steps exactly when the program fails an assertion after k+2 cutpoint steps (entry, k iterations, the failing
fragment). When QE does not finish quickly, or the shape is different, callers use the pc-encoded system.

Any other program keeps the pc-encoded system, started after its entry step (`EntrySystem`, below).

The shape test and the QE are TPA's choice and live here; the system itself (vocabulary, names, Tr_L) is
assembled by `smt.systems.loop_system`, like every other system of the cutpoint graph.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from looprover.deadline import Deadline
from looprover.program.cpg import ERROR
from looprover.program.liveness import liveness
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.mbp import QEError, has_quantifier, qe
from looprover.smt.systems import loop_system, program_state
from looprover.smt.ts import TransitionSystem
from looprover.tpa.loop_solver import may_be_sat

QE_SHARE = 0.2        # at most this share of the remaining time goes into building the system
ENTRY_QE = 2.0        # ... and at most this many seconds for the states after the entry step
LIVE_QE = 0.5         # ... and for an Init over the live variables only (else over all of them)


@dataclass
class LoopSystem:
    """The TS of the single loop at cutpoint `head`; its state is the program variables live at the head, in
    program-variable order (`project_live`): `kept` are the positions of the pc and of these variables in the
    pc-encoded system's state, where a counterexample's states are pinned."""
    ts: TransitionSystem
    head: int
    sys: CPGSystem
    kept: list[int]

    def program_depth(self, k: int) -> int:
        """Cutpoint steps of the program for a TS counterexample of depth k: entry, k iterations, the failure."""
        return k + 2


def one_loop(cpg) -> tuple[int, dict] | None:
    """(the loop head, the CPG edges by (src, dst)) when the cutpoint graph is one loop in Golem's "transition
    system" shape (entry -> L, L -> L, L -> exit/ERROR, and possibly entry -> exit/ERROR), else None."""
    if len(cpg.cutpoints) != 1:
        return None
    head = cpg.cutpoints[0]
    allowed = {(cpg.init, head), (head, head), (head, ERROR), (head, cpg.exit), (cpg.init, cpg.exit),
               (cpg.init, ERROR)}
    by_pair = {(e.src, e.dst): e for e in cpg.edges}
    if not set(by_pair) <= allowed or (cpg.init, head) not in by_pair:
        return None
    return head, by_pair


def single_loop_system(sys: CPGSystem, deadline: Deadline) -> LoopSystem | None:
    """The loop's TS, or None when the program is not one loop or the system could not be built in time."""
    cpg = sys.cpg
    shape = one_loop(cpg)
    if shape is None:
        return None
    head, by_pair = shape
    left = deadline.left()
    if left <= 0:
        return None
    budget = min(left, max(0.5, left * QE_SHARE))
    stop = deadline.cap(budget)

    def qe_limit(cap: float | None = None) -> Deadline:
        """What is left of the budget (or `cap` seconds of it), at least 0.1 s (but never past the run's
        deadline)."""
        left = stop.left()
        return deadline.cap(max(0.1, left if cap is None else min(cap, left)))
    init0 = z3.And(sys.range_constraints(sys.cur))
    if (cpg.init, ERROR) in by_pair:
        # the error right at the start is the pc-encoded system's job (one step); keep the loop TS exact
        if may_be_sat(z3.And(init0, sys.edge_formula(by_pair[(cpg.init, ERROR)])), stop.left()):
            return None
    try:
        entry = z3.And(init0, sys.edge_formula(by_pair[(cpg.init, head)]))
        live = liveness(sys.program).get(head, frozenset())
        init_next, cur, nxt = project_live(sys, live, entry, [], qe_limit(LIVE_QE), qe_limit())
        init = z3.substitute(init_next, *zip(nxt, cur)) if cur else init_next
        err = by_pair.get((head, ERROR))
        bad = z3.BoolVal(False) if err is None else qe(sys.edge_formula(err), keep=cur, deadline=qe_limit())
    except QEError:
        return None
    if has_quantifier(init) or has_quantifier(bad):
        return None
    ts = loop_system(sys, head, z3.simplify(init), z3.simplify(bad))
    return LoopSystem(ts.restricted(cur), head, sys, _positions(sys, cur))


def project_live(sys: CPGSystem, read: frozenset, formula: z3.BoolRef, keep: list[z3.ExprRef], quick: Deadline,
                 full: Deadline) -> tuple[z3.BoolRef, list[z3.ExprRef], list[z3.ExprRef]]:
    """(∃the rest. formula, cur, nxt): `formula` projected by QE onto `keep` and the next-state copies `nxt` of
    the program variables in `read` (`cur` their current copies), the state of TPA's systems.

    Why only those: the state is what the future reads. A Horn clause's locals and a C loop's temporaries are
    program variables too, and as state they only gave TPA more to interpolate over (O3_id_o1000: 13 state
    variables, 2 live); as auxiliaries of Tr (`TransitionSystem.restricted`) they change nothing, as nothing
    reads them. When that projection does not finish by `quick` (a wide Lustre system's guarded locals: 2.3 s
    in `qe2`), every program variable stays state, by `full` (its definitions substituted: 0.04 s there).
    Raises QEError when neither finishes."""
    every, every_next, _ = program_state(sys)
    cur, nxt, _ = program_state(sys, read)
    if len(cur) < len(every):
        try:
            return qe(formula, keep=keep + nxt, deadline=quick), cur, nxt
        except QEError:
            pass
    return qe(formula, keep=keep + every_next, deadline=full), every, every_next


def _positions(sys: CPGSystem, cur: list[z3.ExprRef]) -> list[int]:
    """Where the pc and the program variables `cur` are in the pc-encoded system's state (`kept`)."""
    ids = {c.get_id() for c in cur}
    return [0] + [k for k, x in enumerate(sys.ts.state) if k > 0 and x.get_id() in ids]


@dataclass
class EntrySystem:
    """The pc-encoded system started one cutpoint step later: Init' = the states after the entry step.

    Why: in the pc-encoded system Init is "pc at the entry, every variable anything", and the entry edge sets
    the variables (`i = 0`, a Horn file's facts). That one edge breaks every relational seed lemma: `y' - y =
    2(x' - x)` holds for all loop edges but not for the entry, so TPA had to learn it level by level (the
    fm24-multiloop files: 0 of 52 at 10 s; `abdu_02` closes at level 1 in 0.7 s from Init'). Golem's transition
    system starts where the facts put it, too. Equivalent when Init ∧ Bad is empty: Bad is reachable in k + 1
    steps from Init exactly when it is reachable in k steps from Init' = post(Init).

    Its state is the pc and the program variables live at some cutpoint (`project_live`); `kept` are their
    positions in the pc-encoded system's state."""
    ts: TransitionSystem
    original_init: z3.BoolRef
    kept: list[int]

    def program_depth(self, k: int) -> int:
        return k + 1


def entry_system(sys: CPGSystem, deadline: Deadline) -> EntrySystem | None:
    """`EntrySystem` of the pc-encoded system, or None when Init' needs quantifiers or time it does not get, or
    Init may meet Bad (a zero-step counterexample is the plain system's case)."""
    ts = sys.ts
    left = deadline.left()
    if left <= 0:
        return None
    limit = deadline.cap(min(left, ENTRY_QE, max(0.5, left * QE_SHARE)))
    # only the entry fragment of Tr: the pc is known there
    entry = z3.simplify(z3.substitute(ts.trans, (sys.pc, z3.IntVal(sys.pc_id[sys.cpg.init], sys.pc.ctx))))
    try:
        if may_be_sat(z3.And(ts.init, ts.bad), limit.left()):
            return None
        live = liveness(sys.program)
        # what a fragment from a cutpoint reads; and, to keep Tr's entry branch (which Init' no longer enables)
        # free of dead variables, what the entry reads (nothing, for the C and Horn front-ends)
        read = frozenset().union(*(live.get(c, frozenset()) for c in (*sys.cpg.cutpoints, sys.cpg.init)))
        post, cur, _ = project_live(sys, read, z3.And(ts.init, entry), [sys.pc_next], limit.cap(LIVE_QE), limit)
    except QEError:
        return None
    if has_quantifier(post):
        return None
    init = z3.simplify(z3.substitute(post, *zip(ts.next, ts.state)))
    return EntrySystem(ts.with_query(init, ts.bad).restricted([sys.pc] + cur), ts.init, _positions(sys, cur))
