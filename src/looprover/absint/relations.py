"""Orderings between two variables that the interval analysis cannot show, kept where z3 finds them inductive.

Why: real code bounds one counter by another -- jsmn's token count equals its next-token index, which its
limit bounds -- and intervals lose that: widening takes the count to its type's end, and every `count + 1` is
then a possible overflow. The zone candidates `x <= y` between two variables live at a cutpoint, one of them
moved by the loops around it (`candidates`), are kept where they are inductive together with the
analysis's states (Houdini, one cutpoint fragment at a time, as the proof check works: `evidence.proofs`), and
each assertion the intervals left open is then asked of z3 under both. This only proposes: the caller has the
states and the relations checked as one proof with fresh solvers (`runtime_checks`), so no answer rests on it.
"""
from __future__ import annotations

from itertools import chain, combinations

import z3

from looprover.absint.fixpoint import Analysis
from looprover.absint.values import lookup
from looprover.deadline import Deadline
from looprover.errors import GiveUp
from looprover.program.cfa import Assign, Havoc, Program
from looprover.program.cpg import CutpointGraph
from looprover.program.expr import Compare, IntType, Var, cmp
from looprover.program.liveness import liveness
from looprover.program.loops import postorder
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.solver import check
from looprover.smt.terms import mk_and, mk_not

MAX_PER_CUTPOINT = 48       # candidates at one cutpoint (pairs of the variables its loop moves, both ways)


def candidates(program: Program, cpg: CutpointGraph, analysis: Analysis, bitvector: bool
               ) -> dict[int, list[Compare]]:
    """Per cutpoint, `x <= y` and `y <= x` for two integer variables live there, at least one written in the
    fragments of its strongly connected component of the cutpoint graph (the loops around it move it: jsmn's
    inner loops leave `count` and `pos` alone, yet the outer loop's `count <= pos` must hold there too), where
    its state neither implies nor refutes it (with bit-vectors only between variables of one type)."""
    live = liveness(program)
    written: dict[int, set[str]] = {}
    for c in cpg.sources:
        frag = cpg.fragment(c)
        stmts = [s for l in frag.inner for e in frag.out_edges(l) for s in e.stmts]
        written[c] = {s.lhs.name for s in stmts if isinstance(s, Assign)} | \
                     {v.name for s in stmts if isinstance(s, Havoc) for v in s.vars}
    component = _components(cpg)
    moving_in: dict[int, set[str]] = {}         # per component (its least cutpoint), what its fragments write
    out: dict[int, list[Compare]] = {}
    for c in sorted(analysis.cutpoints):
        state = analysis.states.get(c)
        if state is None:
            continue
        members = component.get(c, {c})
        key = min(members)
        if key not in moving_in:
            moving_in[key] = set().union(*(written.get(d, set()) for d in members))
        moving = moving_in[key]
        ints = sorted((v for v in live.get(c, ()) if isinstance(v.type, IntType)), key=lambda v: v.name)
        moved = [v for v in ints if v.name in moving]
        # both moved first, then a moved one against one its loops leave alone (a limit such as jsmn's
        # num_tokens, which the intervals may miss where the limit is read through a pointer)
        pairs = chain(combinations(moved, 2), ((x, y) for x in moved for y in ints if y.name not in moving))
        atoms: list[Compare] = []
        for x, y in pairs:
            if len(atoms) >= MAX_PER_CUTPOINT:
                break
            if bitvector and x.type != y.type:
                continue
            (xl, xh), (yl, yh) = lookup(state, x), lookup(state, y)
            if not (xh <= yl or xl > yh):
                atoms.append(cmp("<=", x, y))
            if not (yh <= xl or yl > xh):
                atoms.append(cmp("<=", y, x))
        if atoms:
            out[c] = atoms[:MAX_PER_CUTPOINT]
    return out


def _components(cpg: CutpointGraph) -> dict[int, set[int]]:
    """Each reachable cutpoint's strongly connected component of the cutpoint graph (Kosaraju: the nodes in
    reverse DFS postorder, each collecting what reaches it backwards)."""
    succ: dict[int, set[int]] = {}
    pred: dict[int, set[int]] = {}
    for e in cpg.edges:
        succ.setdefault(e.src, set()).add(e.dst)
        pred.setdefault(e.dst, set()).add(e.src)
    order = postorder({n: sorted(ns) for n, ns in succ.items()}, cpg.init)
    seen = set(order)
    comp: dict[int, set[int]] = {}
    for root in reversed(order):
        if root in comp:
            continue
        members = {root}
        stack = [root]
        while stack:
            for n in pred.get(stack.pop(), ()):
                if n not in comp and n not in members and n in seen:
                    members.add(n)
                    stack.append(n)
        for n in members:
            comp[n] = members
    return comp


def inductive(sys: CPGSystem, base: dict[int, z3.BoolRef], cands: dict[int, list[z3.BoolRef]],
              over: dict[int, list[Var]], deadline: Deadline) -> dict[int, list[z3.BoolRef]]:
    """The largest subset of `cands` (per cutpoint, over the state constants) that `base` (per source, itself
    inductive) keeps inductive with it: every fragment from a source whose `base` and kept candidates hold
    ends, at each target, in a state of the target's kept candidates. The initial location has none, so the
    fragments from it are the initiation. A candidate a model refutes is dropped, and the fragments from where
    it was are asked again (their assumption is weaker) until none is dropped.
    `over[t]`: the variables of `t`'s candidates, the only ones substituted (all of them cost cwalk's proof
    check two thirds of its time)."""
    alive = {n: list(fs) for n, fs in cands.items()}
    after: dict[tuple[int, int, int], z3.BoolRef] = {}     # (source, target, candidate) -> it at the end values
    work = list(sys.cpg.sources)       # a source's fragments are asked again when its own candidates shrink
    queued = set(work)
    while work:
        src = work.pop()
        queued.discard(src)
        targets = [t for t in sys.cpg.fragment(src).targets if alive.get(t)]
        if not targets:
            continue
        R = sys.regions[src]
        s = z3.Solver()
        s.set("random_seed", 0)
        s.add(base[src], *alive.get(src, ()), *R.side)
        for t in targets:
            g = R.guard(("t", t))
            if z3.is_false(g):
                continue
            env = R.envs[("t", t)]
            pairs = [(sys.cur[v.name], sys.enc.term(env[v.name], v.type)) for v in over[t]]
            before = len(alive[t])
            while alive[t]:
                ends = []
                for f in alive[t]:
                    key = (src, t, f.get_id())
                    if key not in after:
                        after[key] = z3.substitute(f, *pairs)
                    ends.append(after[key])
                s.push()
                s.add(g, mk_not(mk_and(*ends)))
                try:
                    r = check(s, deadline)
                except GiveUp:
                    r = z3.unknown
                if r == z3.unsat:
                    s.pop()
                    break
                if r != z3.sat:         # undecided: keep nothing there rather than guess
                    s.pop()
                    alive[t] = []
                    break
                m = s.model()
                keep = [f for f, a in zip(alive[t], ends) if not z3.is_false(m.eval(a, model_completion=True))]
                s.pop()
                alive[t] = keep if len(keep) < len(alive[t]) else []   # a model refutes one: else end
            if len(alive[t]) < before and t not in queued and t in base:
                work.append(t)
                queued.add(t)
    return {n: fs for n, fs in alive.items() if fs}


def shown_sites(sys: CPGSystem, interp: dict[int, z3.BoolRef], open_sites: set[tuple[int, int]],
                deadline: Deadline) -> set[tuple[int, int]]:
    """The assertion sites (edge index, statement index) among `open_sites` that no fragment can fail from a
    state of its source's `interp`."""
    index = {e: ei for ei, e in enumerate(sys.program.edges)}
    shown: set[tuple[int, int]] = set()
    failed: set[tuple[int, int]] = set()
    for src in sys.cpg.sources:
        R = sys.regions[src]
        mine = [(v, (index.get(v.edge, -1), v.index)) for v in R.violations]
        mine = [(v, site) for v, site in mine if site in open_sites and site not in failed]
        if not mine:
            continue
        s = z3.Solver()
        s.set("random_seed", 0)
        s.add(interp[src], *R.side)
        for v, site in mine:
            s.push()
            s.add(v.cond)
            try:
                r = check(s, deadline)
            except GiveUp:
                r = z3.unknown
            s.pop()
            (shown if r == z3.unsat else failed).add(site)
    return shown - failed


def strengthened(program: Program, analysis: Analysis, bitvector: bool, open_sites: set[tuple[int, int]],
                 base: dict[int, z3.BoolRef], deadline: Deadline
                 ) -> tuple[dict[int, z3.BoolRef], int, set[tuple[int, int]]]:
    """The analysis's states `base` (formulas over `CPGSystem`'s state constants, per cutpoint-graph source)
    with the relations kept at each cutpoint, as the proof's formula per source; how many relations were kept;
    and the open assertion sites both show."""
    from looprover.program.cpg import build_cpg
    cpg = build_cpg(program)
    atoms = candidates(program, cpg, analysis, bitvector)
    if not atoms:
        return base, 0, set()
    sys = CPGSystem(cpg, bitvector, deadline)
    env = {v.name: sys.cur[v.name] for v in sys.vars}
    formula = {n: [sys.enc.expr(a, env) for a in xs] for n, xs in atoms.items()}
    over = {n: sorted({v for a in xs for v in (a.lhs, a.rhs)}, key=lambda v: v.name) for n, xs in atoms.items()}
    kept = inductive(sys, base, formula, over, deadline)
    if not kept:
        return base, 0, set()
    interp = {n: mk_and(base[n], *kept.get(n, ())) for n in base}
    return interp, sum(map(len, kept.values())), shown_sites(sys, interp, open_sites, deadline)
