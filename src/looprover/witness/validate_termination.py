"""Termination witnesses (format 2.1 `invariant_set`): every loop's `loop_transition_invariant` checked from the
program, with the witness's `loop_invariant`s as the states it may assume.

A transition invariant R at loop L's head relates `\\at(x, AnyPrev)` (the state at an earlier visit of the head in
the same execution of L) to the current state. The witness is confirmed when, for every natural loop L of the
program (calls are inlined, recursion is refused by the front-end, irreducible control flow is not read):
  1. the state invariants are inductive (then they hold at every reachable head state);
  2. R contains one iteration: Inv(x) ∧ T_L(x, x') ⇒ R(x, x'), and R composed with one more iteration stays in R:
     Inv(x0) ∧ R(x0, x) ∧ Inv(x) ∧ T_L(x, x') ⇒ R(x0, x'). Then R holds between every pair of visits of an
     execution of L. T_L is one iteration of L (`termination.relation.LoopRelation`; nested loops through a
     summary this validator finds and checks itself with Houdini, not read from the witness);
  3. R is disjunctively well-founded: each disjunct of R implies `e(prev) > e(x) ∧ e(prev) ≥ 0` for an integer
     term e it compares (`\\at(e, AnyPrev) > e` read off one of its comparisons). By Podelski and Rybalchenko's
     theorem, a disjunctively well-founded transition invariant admits no infinite execution of L.
Rejected: a state invariant that fails on an execution within a few steps (as for 2.0 witnesses), or a transition
invariant that fails for one iteration from such a state of a loop without nested loops (a real pair of visits).
Anything else that does not check is unknown: true invariants can be too weak to be inductive.
"""
from __future__ import annotations

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.program.loops import analyze_loops
from looprover.smt.cpg_system import CPGSystem
from looprover.termination.relation import LoopRelation
from looprover.witness.csource import CSource
from looprover.witness.validate import (
    BOUNDED_STEPS, TRANSITION, Validation, _check_invariants, _fails_early, _guarded, _loop_invariants,
)

PREV = "!prev:"      # the constants standing for `\at(x, AnyPrev)`
MAX_ITERATIONS = 8   # iterations of the cycle after which a run is back in a non-termination witness's recurrent set


def validate_termination(entries, program: Program, src: CSource, deadline: Deadline) -> Validation:
    forest = analyze_loops(program)
    if forest.irreducible:
        return _unknown("the program has irreducible control flow")
    sys = CPGSystem(build_cpg(program, forest), False, deadline)
    prev = {n: sys.enc.const(PREV + n, info.var.type) for n, info in program.variables.items()}
    items = _loop_invariants(entries, program, src, sys, prev)
    if isinstance(items, Validation):
        return items
    states: dict[int, list[tuple[str, z3.BoolRef]]] = {}
    relations: dict[int, list[tuple[str, z3.BoolRef]]] = {}
    for h, what, f, kind in items:
        (relations if kind == TRANSITION else states).setdefault(h, []).append((what, f))
    missing = [h for h in forest.order if h not in relations]
    if missing:
        loop = src.loop_of_head(program, missing[0])
        where = f"line {loop.line}" if loop is not None else program.loc_label(missing[0])
        return _unknown(f"no transition invariant for the loop at {where}")
    try:
        return _check(sys, forest, states, relations, prev, program, deadline)
    except (OutOfTime, GiveUp) as exc:
        return _unknown(f"the check did not finish ({exc or 'deadline'})")


def _unknown(why: str) -> Validation:
    return Validation("unknown", why, "correctness")


def _check(sys: CPGSystem, forest, states, relations, prev, program: Program, deadline: Deadline) -> Validation:
    if states:
        early = _fails_early(sys, states, deadline)
        if early is not None:
            h, i, j = early
            return Validation("rejected", f"invariant {states[h][i][0]} fails on an execution that reaches the "
                                          f"loop ({j} cutpoint step(s) from the start)", "correctness")
        inductive = _check_invariants(sys, states, program, deadline, exclude_error=False)
        if inductive.status != "confirmed":
            return inductive
    guarded = _guarded(sys, states, exclude_error=False)
    for h in forest.order:
        rel = LoopRelation(sys, forest.loops[h], state_invariant=guarded)
        whats = " and ".join(w for w, _ in relations[h])
        r = z3.And([f for _, f in relations[h]])
        why = _transition_invariant(rel, r, prev, deadline)
        if why is not None and why.startswith("reject:"):
            return Validation("rejected", f"transition invariant {whats}: {why[7:]}", "correctness", h)
        why = why or _well_founded(sys, r, prev, deadline)
        if why is not None:
            return Validation("unknown", f"not confirmed: transition invariant {whats}: {why}", "correctness", h)
    return Validation("confirmed", f"{len(forest.order)} loop(s): transition invariants that hold between any two "
                                   f"visits of their loop's head and are disjunctively well-founded", "correctness")


def _transition_invariant(rel: LoopRelation, r: z3.BoolRef, prev, deadline: Deadline) -> str | None:
    """Why `r` is not shown to hold between every two visits of the loop's head (None when it is); `reject:`
    first when a real iteration falsifies it."""
    sys, h = rel.sys, rel.head
    summary = rel.find_summary(deadline)
    x0, x, x1 = rel.state("p"), rel.state("x"), rel.state("x1")

    def between(a, b) -> z3.BoolRef:
        return z3.substitute(r, *[(prev[n], a[n]) for n in sys.cur], *[(sys.cur[n], b[n]) for n in sys.cur])
    step = z3.And(rel.inv(h, x), rel.relation(summary, x, x1, "t"), rel.inv(h, x1))
    if not rel.inner and _reachable_violation(rel, step, z3.Not(between(x, x1)), x, deadline):
        return "reject:it fails for an iteration from a state an execution reaches within a few steps"
    for what, fs in (("it does not hold for one iteration", [step, z3.Not(between(x, x1))]),
                     ("it is not closed under one more iteration",
                      [rel.inv(h, x0), between(x0, x), step, z3.Not(between(x0, x1))])):
        s = sys.enc.solver(deadline)
        s.add(*fs)
        res = s.check()
        if res != z3.unsat:
            return what + (" (with the witness's state invariants)" if res == z3.sat else
                           f": undecided ({s.why_unknown()})")
    return None


def _reachable_violation(rel: LoopRelation, step: z3.BoolRef, bad: z3.BoolRef, x, deadline: Deadline) -> bool:
    """Whether some execution within `BOUNDED_STEPS` cutpoint steps reaches the head in a state x from which one
    iteration (`step`) satisfies `bad`."""
    sys = rel.sys
    ts = sys.ts
    for j in range(1, BOUNDED_STEPS + 1):
        s = sys.enc.solver(deadline)
        s.add(ts.at(ts.init, 0), *[ts.trans_at(i) for i in range(j)], ts.at(sys.pc == sys.pc_id[rel.head], j))
        s.add(*[x[n] == ts.at(sys.cur[n], j) for n in sys.cur], step, bad)
        if s.check() == z3.sat:
            return True
    return False


def _well_founded(sys: CPGSystem, r: z3.BoolRef, prev, deadline: Deadline) -> str | None:
    """Why `r` is not shown disjunctively well-founded (None when each disjunct bounds a decreasing term)."""
    cur_of = [(prev[n], sys.cur[n]) for n in sys.cur]
    disjuncts = _disjuncts(r)
    for d in disjuncts:
        terms = _compared_terms(d, cur_of)
        if not any(_bounds_decrease(sys, d, e, cur_of, deadline) for e in terms):
            return f"no term of {d} that decreases and is bounded below: not shown well-founded"
    return None


def _disjuncts(r: z3.BoolRef) -> list[z3.BoolRef]:
    """The top-level disjuncts of `r` (through a conjunction with a single disjunction)."""
    if z3.is_or(r):
        return list(r.children())
    if z3.is_and(r) and len(r.children()) == 1:
        return _disjuncts(r.children()[0])
    return [r]


def _compared_terms(d: z3.BoolRef, cur_of) -> list[z3.ExprRef]:
    """The terms e over the earlier state alone that `d` compares with the same term over the current state. A
    term that also reads the current state is no measure of the earlier one: `\\at(x, AnyPrev) + y > x + y` with
    `\\at(x, AnyPrev) + y >= 0` bounds x by a moving -y, which an infinite chain can follow."""
    from looprover.smt.mbp import free_constants
    current = {c.get_id() for _, c in cur_of}
    out = []
    todo = [d]
    while todo:
        t = todo.pop()
        if z3.is_and(t) or z3.is_or(t) or z3.is_not(t):
            todo.extend(t.children())
            continue
        if z3.is_app(t) and t.num_args() == 2 and t.arg(0).sort() == z3.IntSort():
            for a, b in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
                if z3.eq(z3.simplify(z3.substitute(a, *cur_of)), z3.simplify(b)) and not z3.eq(a, b) and \
                        not any(c.get_id() in current for c in free_constants(a)):
                    out.append(a)
    return out


def _bounds_decrease(sys: CPGSystem, d: z3.BoolRef, e: z3.ExprRef, cur_of, deadline: Deadline) -> bool:
    s = sys.enc.solver(deadline)
    s.add(d, z3.Not(z3.And(e > z3.substitute(e, *cur_of), e >= 0)))
    return s.check() == z3.unsat


# ------------------------------------------------------------------------------------------ non-termination
def validate_nontermination(entries, program: Program, src: CSource, deadline: Deadline) -> Validation:
    """A 2.1 non-termination witness: `function_return` waypoints for the stem, then one `cycle` waypoint, an
    `assumption` R at a loop's head. Confirmed when
      1. the run that follows the stem's values (as for violation witnesses) reaches the head, every value used,
         in a state where R holds (the interpreter: it traps undefined behaviour);
      2. R is a recurrent set: from every state in R some k ≤ `MAX_ITERATIONS` paths from the head back to it,
         each through no other loop head (an edge of the cutpoint graph, nondet values included), end in R with
         every variable in its type's range on the way: R(x) ⇒ ∃ x1..xk, aux. E(x, x1) ∧ ... ∧ E(xk-1, xk) ∧
         R(xk) ∧ in-range(x1..xk), decided by a fresh solver.
    Then the stem and repetitions of such paths form an infinite execution. Rejected when the run with every
    input pinned never gets there, or when R holds at the stem's end but no path returns to R from that state."""
    from looprover.program.interp import run
    from looprover.smt.mbp import free_constants
    from looprover.witness.cexpr import NotC, as_condition, check, parse, to_z3
    from looprover.witness.validate import MAX_RUN_STEPS, Pinned, _pinned_values, _waypoints, unread
    wps = _waypoints(entries)
    if not wps or wps[-1].get("action") != "cycle" or wps[-1].get("type") != "assumption" or \
            any(w.get("action") == "cycle" for w in wps[:-1]):
        return _refused("a non-termination witness ending in one `assumption` waypoint with action `cycle`")
    pinned = _pinned_values(wps[:-1])
    if isinstance(pinned, Validation):
        return pinned
    cyc = wps[-1]
    loc = cyc.get("location") or {}
    sys = CPGSystem(build_cpg(program), False, deadline)
    heads = [h for h in sys.cpg.cutpoints if (lp := src.loop_of_head(program, h)) is not None
             and lp.line == loc.get("line") and loc.get("column") in (None, lp.col)]
    if len(heads) != 1:
        return _refused(f"a cycle at a single loop head (line {loc.get('line')} has {len(heads)})")
    h = heads[0]
    c_to_ir = src.ir_variables_at(program, src.loop_of_head(program, h))
    text = str((cyc.get("constraint") or {}).get("value", ""))
    try:
        node = parse(text)
        check(node, {c: program.variables[ir].var.type for c, ir in c_to_ir.items()})
    except NotC as exc:
        return unread(text, f"recurrent set {text!r}", exc, "violation")
    r = as_condition(to_z3(node, {c: sys.cur[ir] for c, ir in c_to_ir.items()}))
    oracle = Pinned(program, src, pinned)
    res = run(program, oracle, max_steps=MAX_RUN_STEPS, stop=deadline.expired,
              until=lambda at, state: at == h and oracle.used_all and _holds(sys, r, state))
    if res.outcome != "reached" or res.overflowed:
        exact = oracle.used_all and oracle.state["free"] == 0 and not res.overflowed
        what = f"the run following the stem ended with '{res.outcome}' before the cycle's head in its recurrent set"
        if exact and res.outcome in ("exit", "blocked", "violation"):
            return Validation("rejected", what, "violation")
        return Validation("unknown", what + ("; signed overflow on the way" if res.overflowed else ""), "violation")
    edges = [e for e in sys.cpg.edges if e.src == h and e.dst == h]
    if not edges:
        return Validation("unknown", "no path from the cycle's head back to it without another loop head",
                          "violation")
    step = z3.Or([sys.edge_formula(e) for e in edges])
    known = {t.get_id() for t in list(sys.cur.values()) + list(sys.nxt.values())}
    aux = [c for c in free_constants(step) if c.get_id() not in known]
    in_range = sys.range_constraints(sys.cur)
    got, stucks = z3.unknown, []
    for k in range(1, MAX_ITERATIONS + 1):
        stuck = _no_return(sys, r, step, aux, in_range, k)
        stucks.append(stuck)
        s = sys.enc.solver(deadline)
        s.add(r, stuck, *in_range)         # a real state is in range
        got = s.check()
        if got == z3.unsat:
            return Validation("confirmed", f"the stem reaches the loop at line {loc.get('line')} in the recurrent "
                                           f"set, to which {k} iteration(s) can always return", "violation")
    s2 = sys.enc.solver(deadline)
    s2.add(*stucks, *[sys.cur[n] == _value(sys.cur[n], v) for n, v in res.state.items() if n in sys.cur
                      and _value(sys.cur[n], v) is not None])
    if s2.check() == z3.sat:
        return Validation("rejected", f"the recurrent set is not closed: from the state the stem reaches, no "
                                      f"{MAX_ITERATIONS} iterations or fewer return to it", "violation")
    return Validation("unknown", "the recurrent set is not shown closed under iterations "
                                 + ("" if got == z3.sat else f"(undecided: {s.why_unknown()})"), "violation")


def _no_return(sys: CPGSystem, r: z3.BoolRef, step: z3.BoolRef, aux: list, in_range: list, k: int) -> z3.BoolRef:
    """Over sys.cur: no k head-to-head paths (`step`, its `aux` constants renamed apart per path) lead from the
    current state back into `r` through states in range."""
    states = [dict(sys.cur)] + [{n: z3.Const(f"{t}!it{i}", t.sort()) for n, t in sys.cur.items()}
                                for i in range(1, k + 1)]
    bound, path = [], []
    for i in range(k):
        fresh = [z3.Const(f"{a}!it{i}", a.sort()) for a in aux]
        bound += fresh + list(states[i + 1].values())
        path.append(z3.substitute(step, *[(sys.cur[n], states[i][n]) for n in sys.cur],
                                  *[(sys.nxt[n], states[i + 1][n]) for n in sys.cur], *zip(aux, fresh)))
        path += [z3.substitute(c, *[(sys.cur[n], states[i + 1][n]) for n in sys.cur]) for c in in_range]
    back = z3.substitute(r, *[(sys.cur[n], states[k][n]) for n in sys.cur])
    return z3.ForAll(bound, z3.Not(z3.And(*path, back)))


def _refused(what: str) -> Validation:
    return Validation("unknown", f"only {what} is supported", "violation")


def _value(const: z3.ExprRef, v) -> z3.ExprRef | None:
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if isinstance(v, int) and const.sort() == z3.IntSort():
        return z3.IntVal(v)
    return None


def _holds(sys: CPGSystem, r: z3.BoolRef, state: dict) -> bool:
    """Whether `r` (over sys.cur) holds in a concrete state."""
    pairs = [(sys.cur[n], val) for n, v in state.items() if n in sys.cur
             and (val := _value(sys.cur[n], v)) is not None]
    return z3.is_true(z3.simplify(z3.substitute(r, *pairs)))
