"""Nested loops in the multi-loop network: each inner loop contracted into a summary of its iterations.

Why: the network search (`tpa/network.py`) needs the bridges to form a DAG; nested loops make a cycle through
the outer and the inner loop head. Handing such programs to one pc-encoded system (the old fallback) makes a
single TPA abstract every loop at once, which ran out of memory on SV-COMP tasks. Instead each nested loop head h
is eliminated, innermost first: with S_h ⊇ Body_h* (every run of h's loop body, zero iterations included), every
pair of bridges a: u -> h, c: h -> w becomes the bridge u -> w labelled `a ∘ S_h ∘ c` (a self-loop of u when
w = u, i.e. one iteration of the enclosing loop through the inner one). The exit condition comes with c, so
the composed edge describes "enter, run the inner loop to completion, leave". The result is a network over the
remaining nodes that over-approximates the original one step for step.

S_h is the conjunction of TPA's seed lemmas for h's body (`tpa/seeds.transitive_seeds`): relations R with
`Id ∨ Body ⊆ R` and `R ∘ R ⊆ R`, checked by Houdini, from the relational templates of the domains, with the
comparison atoms of the body, of h's exits and of the error bridges. Before a TRUE they are re-checked
(`contract`, also by `NetworkProof.check` in another process): `Id ⊆ S` and `S ∘ Body ⊆ S` with fresh solvers,
which together give `Body* ⊆ S` by induction on the number of iterations.

A counterexample of the contracted network is a path of visible nodes only (`expand_path`): it is turned into a
path of the cutpoint graph by an exact BMC query over the pc-encoded program whose visible cutpoint steps follow
the abstract path and whose steps through the contracted loops are free, deepening until it is satisfiable
(then the engine replays it on the program as for every other path) or the step limit is reached (UNKNOWN:
the summary let through a run the inner loops cannot do, at least not within the limit).
"""
from __future__ import annotations

import itertools
from typing import Sequence

import z3

from looprover.deadline import Deadline
from looprover.errors import GiveUp
from looprover.program.cpg import ERROR, CutpointGraph
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.mbp import free_constants
from looprover.smt.solver import check, plain_solver
from looprover.smt.systems import Bridge, Network, Node
from looprover.smt.terms import mk_and, mk_or
from looprover.tpa.result import Vocabulary
from looprover.tpa.seeds import bound_atoms, transitive_seeds

Summary = tuple[Node, z3.BoolRef]          # (eliminated head, S over its vocabulary and the primed copy)


def nested_heads(cpg: CutpointGraph) -> list[int]:
    """The cutpoints that head a loop nested in another loop, innermost first (children before parents).
    Empty for irreducible flow: its cycles have no natural loop to contract (the caller falls back)."""
    forest = cpg.loops
    if forest.irreducible:
        return []
    return [h for h in forest.order if forest.loops[h].depth >= 2 and h in cpg.cutpoints]


def contract_nested(net: Network, heads: Sequence[Node], deadline: Deadline) -> tuple[Network, list[Summary]]:
    """`net` with every node of `heads` eliminated in order, each through the summary found for its loop at
    that point (its body then already holds the contractions of the loops nested in it)."""
    summaries: list[Summary] = []
    counter = itertools.count()
    for h in heads:
        s = find_summary(net, h, deadline) if h in net.loops else None
        if s is not None:
            summaries.append((h, s))
        net = eliminate(net, h, s, counter)
    return net, summaries


def contract(net: Network, heads: Sequence[Node], summaries: Sequence[Summary], deadline: Deadline
             ) -> Network | str:
    """The contraction of `contract_nested` with given summaries, each re-checked first (fresh solvers):
    the contracted network, or why a summary is not an over-approximation of its loop's closure."""
    given = dict(summaries)
    if set(given) - set(heads):
        return f"summaries for node(s) {sorted(set(given) - set(heads))} that head no nested loop"
    counter = itertools.count()
    for h in heads:
        s = given.get(h)
        if h in net.loops:
            if s is None:
                return f"no summary for the nested loop at node {h}"
            why = check_summary(net, h, s, deadline)
            if why is not None:
                return f"summary of the nested loop at node {h}: {why}"
        elif s is not None:
            return f"a summary for node {h}, which has no loop"
        net = eliminate(net, h, s, counter)
    return net


def find_summary(net: Network, h: Node, deadline: Deadline) -> z3.BoolRef:
    """S ⊇ Body_h* over (vocab(h), its primed copy): the reflexive-transitive seed lemmas of h's body, with
    the comparison atoms of the body, of h's out-bridges (the exit conditions) and of the error bridges."""
    ts = net.body_system(h)
    voc = Vocabulary(ts)
    atoms: dict[int, z3.BoolRef] = {}
    for f in [ts.trans] + [b.label for b in net.bridges if b.src == h or b.dst == net.error]:
        for a in bound_atoms(f, voc, deadline):
            atoms.setdefault(a.get_id(), a)
    try:
        seeds = transitive_seeds(voc, deadline, atoms=list(atoms.values()))
    except GiveUp:              # a solver that does not answer: the trivial summary is still sound
        seeds = []
    return mk_and(*seeds) if seeds else z3.BoolVal(True, ts.init.ctx)


def check_summary(net: Network, h: Node, s: z3.BoolRef, deadline: Deadline) -> str | None:
    """None if `Id ⊆ S` and `S ∘ Body_h ⊆ S` (hence Body_h* ⊆ S), else which one fails."""
    voc = Vocabulary(net.body_system(h))
    x, x1, x2 = voc.x, voc.x1, voc.x2
    for what, fs in (("it is not reflexive", [voc.identity(x, x1), z3.Not(s)]),
                     ("it is not closed under one more iteration",
                      [voc.rel_to(s, x, x2), voc.trans(x2, x1, "sumchk"), z3.Not(s)])):
        solver = plain_solver(s.ctx)
        solver.add(*fs)
        try:
            if check(solver, deadline) != z3.unsat:
                return what
        except GiveUp as exc:
            return f"undecided whether {what} ({exc})"
    return None


def eliminate(net: Network, h: Node, s: z3.BoolRef | None, counter: itertools.count) -> Network:
    """`net` without node h: each pair of bridges u -> h -> w becomes u -> w through `s` (None: no loop at h,
    the identity), a self-loop of u when w = u (disjoined with u's body)."""
    ins = [b for b in net.bridges if b.dst == h and b.src != h]
    outs = [b for b in net.bridges if b.src == h and b.dst != h]
    loops = {v: body for v, body in net.loops.items() if v != h}
    bridges = [b for b in net.bridges if h not in (b.src, b.dst)]
    for a in ins:
        for c in outs:
            label = _compose(net, a.label, h, s, c.label, next(counter))
            if a.src == c.dst:
                loops[a.src] = z3.Or(loops[a.src], label) if a.src in loops else label
            else:
                bridges.append(Bridge(a.src, c.dst, label))
    return Network(state=net.state, next=net.next, entry=net.entry, init=net.init,
                   nodes=[v for v in net.nodes if v != h], loops=loops, bridges=bridges, error=net.error,
                   names=net.names, live={v: xs for v, xs in net.live.items() if v != h})


def _compose(net: Network, a: z3.BoolRef, h: Node, s: z3.BoolRef | None, c: z3.BoolRef, n: int) -> z3.BoolRef:
    """a(x, m1) ∧ S(m1, m2) ∧ c(m2, x') with fresh intermediate states and the auxiliaries of a and c renamed
    apart (a label may be composed into several edges that later meet in one formula)."""
    m1 = [z3.Const(f"{x}!in{n}", x.sort()) for x in net.state]
    m2 = [z3.Const(f"{x}!out{n}", x.sort()) for x in net.state] if s is not None else m1
    first = _rename(net, a, net.next, m1, f"a{n}")
    last = _rename(net, c, net.state, m2, f"c{n}")
    if s is None:
        return mk_and(first, last)
    pos = {x.get_id(): i for i, x in enumerate(net.state)}
    vocab = net.vocab(h)
    pairs = [(x, m1[pos[x.get_id()]]) for x in vocab] + \
            [(x1, m2[pos[x.get_id()]]) for x, x1 in zip(vocab, net.primed(vocab))]
    return mk_and(first, z3.substitute(s, *pairs) if pairs else s, last)


def _rename(net: Network, f: z3.BoolRef, frm: list[z3.ExprRef], to: list[z3.ExprRef], tag: str) -> z3.BoolRef:
    known = {x.get_id() for x in net.state + net.next}
    aux = [k for k in free_constants(f) if k.get_id() not in known]
    pairs = list(zip(frm, to)) + [(k, z3.Const(f"{k}!{tag}", k.sort())) for k in aux]
    return z3.substitute(f, *pairs) if pairs else f


# ---------------------------------------------------------------------------------------------- counterexamples
def expand_path(sys: CPGSystem, path: Sequence[tuple[Node, int]], hidden: set[Node], deadline: Deadline,
                limit: int) -> list[tuple[int, int]] | str:
    """A path [(node, loop iterations), ..., (ERROR, 0)] of the cutpoint graph whose steps at visible nodes (not
    in `hidden`) are those of the contracted network's `path`, with the contracted loops' steps in between --
    the shortest one, found by deepening an exact BMC query of `sys.ts` up to `limit` steps -- or why none was.

    Exact BMC over the whole program: a path found is a real run of the cutpoint graph (still replayed on the
    program by the caller); position counters p_j track how far along the abstract path step j is."""
    last = sum(d + 1 for _, d in path[:-1])      # counted first: a deep outer loop has 10^8 iterations
    if last > limit:
        return f"the abstract counterexample has {last} steps at the outer loops, more than {limit} to expand"
    visible = [v for v, d in path[:-1] for _ in range(d + 1)] + [path[-1][0]]
    ts = sys.ts
    ids = [sys.pc_id[v] for v in visible]
    hidden_ids = [sys.pc_id[v] for v in hidden]
    seq = z3.Function("nested!seq", z3.IntSort(), z3.IntSort())
    s = plain_solver()
    s.add(ts.at(ts.init, 0), *(seq(i) == p for i, p in enumerate(ids)))
    pos = [z3.Int("nested!p0")]
    s.add(pos[0] == 0, sys.pc_at(0) == seq(0))
    done = sys.pc_id[ERROR]
    for n in range(1, limit + 1):
        if deadline.expired():
            return f"deadline reached while expanding the counterexample through the inner loops ({n} steps)"
        pc = sys.pc_at(n)
        is_hidden = mk_or(*(pc == i for i in hidden_ids))
        p = z3.Int(f"nested!p{n}")
        s.add(ts.trans_at(n - 1), p == pos[-1] + z3.If(is_hidden, 0, 1), p <= last,
              z3.Or(is_hidden, pc == seq(p)))
        pos.append(p)
        if n < last:
            continue
        try:
            r = check(s, deadline, pc == done, p == last)
        except GiveUp as exc:
            return f"expanding the counterexample through the inner loops: {exc}"
        if r == z3.sat:
            m = s.model()
            pcs = [sys.node_of[m.eval(sys.pc_at(j), model_completion=True).as_long()] for j in range(n + 1)]
            return [(v, len(list(g)) - 1) for v, g in itertools.groupby(pcs[:-1])] + [(ERROR, 0)]
    return (f"no run of the program follows the abstract counterexample within {limit} cutpoint steps (its inner "
            "loops would need more iterations, or their summaries let through runs they cannot do)")
