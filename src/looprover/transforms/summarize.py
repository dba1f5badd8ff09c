"""Loop summarization (Loopfrog, with a 2LS-style joint check): every loop, innermost first, becomes

    x0 := x (modified integers); g := c(x, x0) (each kept conjunct, at entry); havoc(modified);
    assume(⋀ g ⇒ c(x, x0));  then ONE iteration of the body from the head, its back edges blocked,

an over-approximation of the original (`Guarantee.OVER`): a TRUE of the result is a TRUE of the program.

Why this shape (design notes, section C): the summary `assume` holds in every state the loop head can be in
after any number of iterations from entry state x0 (`LoopSummary`), so one more partial iteration from such a
state reaches every exit (the loop condition, `break`, `goto`, `return`) and every assertion of the body that
the original reaches; back edges are blocked because the summary already stands for the iterations they
start. A summarized inner loop is loop-free code inside the outer loop's body.

The conjuncts c are state atoms of the `domains/` plug-ins (`SUMMARY_DOMAINS`, asked by `atoms_at` at the
loop head, filtered by states sampled there), over the program variables and the entry copies x0 (so
`x <= x0`, `(x - x0) % 2 == 0` are candidates too: their premise c(x0, x0) is trivially true). A conjunct is
kept only when `c ∧ Iter ⇒ c'` is valid, with Iter one iteration head to head (inner summaries included, the
entry copies unchanged), checked two ways (three with synthesis); all are sound, so all are kept:
  * loopfrog: each candidate on its own; each survivor gets its own `g ⇒ c` (true at entry or not);
  * houdini:  the largest jointly inductive set S (`smt/houdini.py`), split by unsat cores into small closed
    subsets C, one conjunct `⋀C(entry) ⇒ ⋀C` each (`_closures`). It keeps facts that are inductive only
    together (`p <= n` needs `a[n] == 0` in a string scan); one conjunct `⋀S(entry) ⇒ ⋀S` would be void as
    soon as any sampled guess in S is false at entry.
  * synthesis (`summarize.synthesis`, on by default, 2LS style, `_synthesized`): octagon rows whose constants no program
    or sample suggests, found by strategy iteration and kept only after one check of all rows together.
Arrays the loop writes are havocked whole; what the cells a counter swept hold comes back through the contents
domain (`∀ k ∈ [i0, i): a[k] ⋈ e`), checked quantifier-free at one fresh cell (`_instance`). The summaries'
own temporaries (entry copies, premises) are never havocked: every edge that reads one writes it first. Signed ranges are not assumed in the checks (integer mode keeps
the mathematical value of an overflow), unsigned ones are (their wrap-around is explicit).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.domains import SUMMARY_DOMAINS, atoms_at, sample_states
from looprover.errors import GiveUp, UnsupportedError
from looprover.program.cfa import Assign, Assume, Edge, Havoc, Program, VarInfo
from looprover.program.cpg import build_cpg
from looprover.program.expr import (BOOL, FALSE, Expr, ForAll, IntType, Var, and_, binary, cmp, const, free_vars,
                                   implies, substitute)
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.program.loops import Loop, analyze_loops
from looprover.smt.cpg_system import CPGSystem, fragment_spec
from looprover.smt.dag import encode_dag
from looprover.smt.encode import Encoder
from looprover.smt.houdini import houdini
from looprover.smt.solver import check
from looprover.smt.strategy import synthesize
from looprover.smt.terms import FALSE as Z3_FALSE, mk_and
from looprover.transforms.base import Guarantee, RunOnInputs, Transform, Transformed


Iteration = tuple[Encoder, dict[str, z3.ExprRef], dict[str, z3.ExprRef], list[z3.BoolRef]]
_SYNTH_VARS = 4          # integers per row family (2n + 4·n(n-1)/2 rows each: relative, absolute)
_SYNTH_QUERIES = 2       # synthesis's time per loop, in one-by-one query timeouts


@dataclass
class SummarizeOptions:
    """Settings of the transform; the fields with a `help` entry are user options (`--option summarize.F=V`)."""
    loopfrog: bool = field(default=True, metadata={"help": "keep each candidate inductive on its own"})
    houdini: bool = field(default=True, metadata={"help": "keep jointly inductive groups (houdini's set, split by unsat cores)"})
    synthesis: bool = field(default=True, metadata={"help": "also synthesise octagon rows by 2LS strategy iteration (integer mode)"})
    query_timeout: float = 2.0            # seconds per one-by-one solver query
    bitvector: bool = False               # the encoding of the checks (set by the engine from the run)
    deadline: Deadline | None = None      # the transform's share of a run (set by the engine)


@dataclass(frozen=True)
class LoopSummary:
    """What replaced one loop: its entry copies, the havocked variables and the kept conjuncts."""
    header: int
    where: str
    entry: Mapping[str, Var]              # modified integer variable -> its entry copy
    havocked: tuple[Var, ...]
    candidates: int
    loopfrog: tuple[Expr, ...]            # each inductive alone: c(entry) ⇒ c
    houdini: tuple[tuple[tuple[Expr, ...], tuple[Expr, ...]], ...]   # (P, S) jointly inductive: ⋀(P∪S)(entry) ⇒ ⋀S
    synthesized: tuple[Expr, ...] = ()    # rows T·(x - x0) <= d, jointly inductive and true at entry: no premise
    synthesized_abs: tuple[Expr, ...] = ()   # rows T·x <= d, inductive given the above: ⋀A(entry) ⇒ ⋀A
    entry_terms: tuple[tuple[str, Expr], ...] = ()   # entry copy -> a constant or unmodified variable it equalled
                                                     # in every sampled state (a guess, for witness candidates)
    frame: tuple[Expr, ...] = ()          # sampled atoms over the variables the loop leaves alone (witness only)

    def witness_candidates(self) -> list[Expr]:
        """The kept conjuncts (and the premises of the jointly inductive groups) as state atoms at the head over
        the program's variables (entry copies replaced by `entry_terms`, conjuncts over other copies left out), and
        the `frame` atoms, which carry facts from before
        the loop through it (the summarized program keeps them in its own state; a loop invariant must state them):
        candidates, not facts -- a conjunct whose premise failed at entry, or a wrong guess, is caught by the
        witness writer's check."""
        terms = {Var(n, c.type): e for n, e in self.entry_terms for c in self.entry.values() if c.name == n}
        copies = {c.name for c in self.entry.values()}
        out = []
        # a group's premises hold at entry; over what the loop leaves alone they hold throughout (`s[n] == 0`
        # for a scan that stops there), and Houdini or the witness writer drops the others
        for c in (*self.loopfrog, *(x for pre, joint in self.houdini for x in (*pre, *joint)), *self.synthesized,
                  *self.synthesized_abs, *self.frame):
            c = substitute(c, terms)
            if not any(v.name in copies for v in free_vars(c)):
                out.append(c)
        return out

    def holds(self, ev: Evaluator, entry: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
        """The summary relation between the state on entering the loop and a later state at its head (both
        over the original variables): what the `assume` claims, evaluated concretely."""
        copies = {c.name: entry[v] for v, c in self.entry.items()}
        at0, at1 = {**entry, **copies}, {**now, **copies}

        def val(e: Expr, st) -> bool:
            try:
                return bool(ev.eval(e, st))
            except (UndefinedBehavior, ArithmeticError):
                return False
        return (all(not val(c, at0) or val(c, at1) for c in self.loopfrog)
                and all(not all(val(c, at0) for c in p + s) or all(val(c, at1) for c in s) for p, s in self.houdini)
                and all(val(c, at1) for c in self.synthesized)
                and (not all(val(c, at0) for c in self.synthesized_abs)
                     or all(val(c, at1) for c in self.synthesized_abs)))

    def describe(self) -> str:
        return (f"loop at {self.where}: {len(self.havocked)} variable(s) havocked; of {self.candidates} "
                f"candidates {len(self.loopfrog)} inductive alone (loopfrog), "
                f"{'+'.join(str(len(s)) for _, s in self.houdini) or 0} jointly (houdini)"
                + (f", {len(self.synthesized)}+{len(self.synthesized_abs)} synthesized row(s)"
                   if self.synthesized or self.synthesized_abs else ""))


class Summaries(RunOnInputs):
    """The original program run on a counterexample's inputs (a summary's havocs are no inputs); `loops`
    records what replaced each loop, innermost first."""

    def __init__(self, loops: list[LoopSummary]):
        self.loops = loops

    def invariant(self, evidence: Any) -> Any | None:
        """The summaries' conjuncts as loop-invariant candidates at the original loop heads (for SV-COMP
        correctness witnesses, `evidence/hints.py`); BMC's TRUE of the summarized program has no evidence of its own."""
        from looprover.domains import Candidate
        from looprover.evidence.hints import LoopInvariantHints
        atoms = tuple(Candidate(s.header, c) for s in self.loops for c in s.witness_candidates())
        return LoopInvariantHints("summarize", atoms) if atoms else None


class SummarizeTransform(Transform):
    name = "summarize"
    summary = "loop summaries (domain candidates checked against one iteration; loopfrog and houdini)"
    guarantee = Guarantee.OVER
    Settings = SummarizeOptions

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        opts: SummarizeOptions = settings if settings is not None else SummarizeOptions()
        deadline = opts.deadline if opts.deadline is not None else Deadline.never()
        forest = analyze_loops(program)
        if forest.irreducible:
            e = forest.irreducible_edges[0]
            raise UnsupportedError(f"irreducible control flow (no natural loop to summarize) at "
                                   f"{e.src_loc or program.loc_label(e.dst)}")
        # entry copies for every loop's modified integers, and the states sampled at every loop head of the
        # original program (the copies made on entry), in one go
        variables, temps = dict(program.variables), set()
        entries: dict[int, dict[str, Var]] = {}
        for h, lp in forest.loops.items():
            entries[h] = {}
            for v in sorted(lp.writes, key=lambda v: v.name):
                if isinstance(v.type, IntType) and program.variables[v.name].kind != "nondet":
                    name = _fresh(variables, f"{v.name}__entry{h}")
                    variables[name] = VarInfo(Var(name, v.type), "temp", name)
                    temps.add(name)
                    entries[h][v.name] = variables[name].var
        made = {id(e): tuple(Assign(c, Var(n, c.type)) for n, c in entries[h].items())
                for h, lp in forest.loops.items() for e in lp.entry_edges}
        sprog = program.with_edges([Edge(e.src, e.dst, e.stmts + made[id(e)]) if id(e) in made else e
                                    for e in program.edges], variables=variables)
        samples = sample_states(sprog, set(forest.loops), bitvector=opts.bitvector, deadline=deadline, arrays=True,
                                system=CPGSystem(build_cpg(sprog), opts.bitvector, deadline))
        prog, done = dataclasses.replace(program, variables=variables), []
        while True:
            forest = analyze_loops(prog)
            if not forest.loops:
                break
            loop = forest.loops[forest.order[0]]
            prog, s = _summarize(prog, loop, entries.get(loop.header, {}), samples.get(loop.header, []), temps,
                                 opts, deadline)
            done.append(s)
        prog.check()
        return Transformed(prog, self.guarantee, Summaries(done), unwind_bound=1,
                           notes=[s.describe() for s in done])


def _fresh(variables: dict[str, VarInfo], base: str) -> str:
    name, i = base, 0
    while name in variables:
        i += 1
        name = f"{base}_{i}"
    return name


def _summarize(prog: Program, loop: Loop, entry: dict[str, Var], samples: list[dict], temps: set[str],
               opts: SummarizeOptions, deadline: Deadline) -> tuple[Program, LoopSummary]:
    """Replace `loop` (innermost in `prog`) by its summary; `entry` are its entry copies, `samples` the states
    seen at its head. The summaries' own temporaries (`temps`) are written before they are read on every edge
    that reads them, so they are never havocked."""
    h = loop.header
    variables = dict(prog.variables)

    def declare(base: str, t) -> Var:
        name = _fresh(variables, base)
        v = Var(name, t)
        variables[name] = VarInfo(v, "temp", name)
        temps.add(name)
        return v

    modified = sorted((v for v in loop.writes if v.name not in temps), key=lambda v: v.name)
    cands = _candidates(prog, loop, entry, samples, temps, opts)
    it = _iteration(prog, h, opts, deadline) if cands or opts.synthesis else None
    lf, hs = _inductive(it, h, cands, {v.name for v in modified}, opts, deadline) if cands else ([], [])
    rows, s_joint = _synthesized(it, loop, entry, samples, temps, opts, deadline) if opts.synthesis else ([], [])
    # the summary edge: entry copies, the conjuncts' premises at entry, havoc, assume
    stmts: list = [Assign(c, Var(n, c.type)) for n, c in entry.items()]
    kept: list[tuple[Var, Expr]] = []
    for i in lf:
        kept.append((declare(f"__summary{h}_{len(kept)}", BOOL), cands[i]))
    stmts += [Assign(g, c) for g, c in kept]
    for premise, joint in hs:
        g = declare(f"__summary{h}_{len(kept)}", BOOL)
        stmts.append(Assign(g, and_(*(cands[i] for i in premise + joint))))
        kept.append((g, and_(*(cands[i] for i in joint))))
    if s_joint:
        g = declare(f"__summary{h}_{len(kept)}", BOOL)
        stmts.append(Assign(g, and_(*s_joint)))
        kept.append((g, and_(*s_joint)))
    plain = [v for v in modified if prog.variables[v.name].kind != "nondet"]
    if plain:
        stmts.append(Havoc(tuple(plain)))
    for v in modified:
        if prog.variables[v.name].kind == "nondet":     # not an input of the program: havoc through a temp
            t = declare(f"{v.name}__havoc{h}", v.type)
            stmts += [Havoc((t,)), Assign(v, t)]
    if kept or rows:
        stmts.append(Assume(and_(*(implies(g, c) for g, c in kept), *rows)))
    s_loc, b_loc = prog.num_locs, prog.num_locs + 1
    back = {id(e) for e in loop.back_edges}
    entering = {id(e) for e in loop.entry_edges}
    edges: list[Edge] = []
    for e in prog.edges:
        if id(e) in back:
            edges.append(Edge(e.src, b_loc, e.stmts + (Assume(FALSE),)))
        elif id(e) in entering:
            edges.append(Edge(e.src, s_loc, e.stmts))
        else:
            edges.append(e)
    edges.append(Edge(s_loc, h, tuple(stmts)))
    loc_src = dict(prog.loc_src)
    if h in loc_src:
        loc_src[s_loc] = loc_src[h]
    out = prog.with_edges(edges, num_locs=prog.num_locs + 2, variables=variables, loc_src=loc_src,
                          init=s_loc if prog.init == h else prog.init)
    src = prog.loc_src.get(h)
    summary = LoopSummary(h, str(src) if src is not None else prog.loc_label(h), entry, tuple(modified),
                          len(cands), tuple(cands[i] for i in lf),
                          tuple((tuple(cands[i] for i in p), tuple(cands[i] for i in j)) for p, j in hs),
                          tuple(rows), tuple(s_joint), _entry_terms(prog, loop, entry, samples, temps),
                          _frame(prog, loop, samples, temps, opts))
    return out, summary


_FRAME_VARS = 10         # witness candidates over the variables a loop leaves alone: only up to this many


def _frame(prog: Program, loop: Loop, samples: list[dict], temps: set[str], opts: SummarizeOptions
           ) -> tuple[Expr, ...]:
    """The domains' atoms over the integer variables `loop` does not write that every sampled head state
    satisfies (no solver: they are witness candidates only, never part of the summary)."""
    written = {v.name for v in loop.writes}
    still = {n: i for n, i in prog.variables.items()
             if n not in temps and n not in written and isinstance(i.var.type, IntType) and i.kind != "nondet"}
    if not samples or not still or len(still) > _FRAME_VARS:
        return ()
    view = dataclasses.replace(prog, variables=still)
    return tuple(atoms_at(view, loop.header, samples, opts.bitvector, SUMMARY_DOMAINS))


def _entry_terms(prog: Program, loop: Loop, entry: Mapping[str, Var], samples: list[dict], temps: set[str]
                 ) -> tuple[tuple[str, Expr], ...]:
    """Per entry copy, a constant, an integer variable the loop does not write, or the sum of two such variables
    (up to `_FRAME_VARS` of them) that it equalled in every state sampled at the head: how a relation to the entry
    state may read at the loop head in C."""
    if not samples:
        return ()
    written = {v.name for v in loop.writes}
    steady = [info.var for n, info in prog.variables.items()
              if n not in written and n not in temps and isinstance(info.var.type, IntType)
              and info.kind != "nondet"]
    terms: list[tuple[Expr, Any]] = [(u, lambda st, u=u: st.get(u.name)) for u in steady]
    if len(steady) <= _FRAME_VARS:
        terms += [(binary("+", u, w), lambda st, u=u, w=w: _sum(st.get(u.name), st.get(w.name)))
                  for i, u in enumerate(steady) for w in steady[i + 1:] if u.type == w.type]
    out = []
    for c in entry.values():
        vals = {s.get(c.name) for s in samples}
        if len(vals) == 1 and isinstance(next(iter(vals)), int):
            out.append((c.name, const(next(iter(vals)), c.type)))
            continue
        same = next((t for t, val in terms if t.type == c.type and all(val(s) == s.get(c.name) for s in samples)),
                    None)
        if same is not None:
            out.append((c.name, same))
    return tuple(out)


def _sum(a: Any, b: Any) -> Any:
    return a + b if isinstance(a, int) and isinstance(b, int) else None


def _candidates(prog: Program, loop: Loop, entry: Mapping[str, Var], samples: list[dict], temps: set[str],
                opts: SummarizeOptions) -> list[Expr]:
    """The domains' atoms at the loop head over the program's variables and the loop's entry copies (the
    summaries' other temporaries left out), filtered by the states sampled there."""
    copies = {c.name for c in entry.values()}
    view = dataclasses.replace(prog, variables={n: i for n, i in prog.variables.items()
                                                if n not in temps or n in copies})
    changing = frozenset(loop.writes)          # a pair of unchanged variables (or entry copies) says nothing new
    return atoms_at(view, loop.header, samples, opts.bitvector, SUMMARY_DOMAINS, changing, entry=dict(entry))


def _iteration(prog: Program, h: int, opts: SummarizeOptions, deadline: Deadline) -> Iteration:
    """One iteration of the loop at `h` (every path of h's fragment back to h), the encoding all checks of
    the loop share: (encoder, pre-state, post-state, background = the step and the unsigned ranges)."""
    enc = Encoder(prog, opts.bitvector, prefix=f"s{h}.", deadline=deadline)
    pre = {v.name: enc.const(f"s{h}.{v.name}", v.type) for v in prog.all_vars}
    cpg = build_cpg(prog)
    edge = next((e for e in cpg.out_edges(h) if e.dst == h), None)
    step, post = Z3_FALSE, pre
    if edge is not None:
        dag = encode_dag(enc, fragment_spec(cpg, h, edge.edges), pre)
        env = dag.envs.get(("t", h))
        if env is not None:
            step = mk_and(*dag.side, dag.guard(("t", h)))
            post = {v.name: enc.term(env[v.name], v.type) for v in prog.all_vars}
    background = [step] + [c for v in prog.all_vars if isinstance(v.type, IntType) and not v.type.signed
                           for c in enc.in_range(pre[v.name], v.type)]
    return enc, pre, post, background


def _inductive(it: Iteration, h: int, cands: list[Expr], modified: set[str], opts: SummarizeOptions,
               deadline: Deadline) -> tuple[list[int], list[tuple[list[int], list[int]]]]:
    """Over one iteration `it` of the loop at `h`: the candidates over a `modified` variable that are
    inductive on their own (loopfrog), and the inductive groups (context, conclusion) that the largest
    jointly inductive set (houdini) splits into (`_closures`)."""
    if not cands:
        return [], []
    enc, pre, post, background = it
    pre_f, post_f = [], []
    for n, c in enumerate(cands):
        if isinstance(c, ForAll):   # at one fresh cell: its pre- and post-state instance (see `_instance`)
            kc = enc.const(f"s{h}.{c.var.name}!{n}", c.var.type)
            pre_f.append(_instance(enc, c, pre, kc))
            post_f.append(_instance(enc, c, post, kc))
        else:
            pre_f.append(enc.expr(c, pre))
            post_f.append(enc.expr(c, post))
    moving = [i for i, c in enumerate(cands) if any(v.name in modified for v in free_vars(c))]
    try:
        # every candidate inductive on its own lies in the largest jointly inductive set: check only those
        joint: list[int] | None = houdini(background, pre_f, post_f, deadline)
    except GiveUp:
        joint = None
    lf: list[int] = []
    if opts.loopfrog:
        s = z3.Solver()
        s.add(*background)
        for i in (moving if joint is None else [i for i in joint if i in set(moving)]):
            lit = z3.Bool(f"!lf{h}.{i}")
            s.add(z3.Implies(lit, z3.And(pre_f[i], z3.Not(post_f[i]))))
            try:
                if check(s, deadline, lit, cap=opts.query_timeout) == z3.unsat:
                    lf.append(i)
            except (GiveUp, OutOfTime):
                if deadline.expired():
                    raise
    groups: list[tuple[list[int], list[int]]] = []
    if opts.houdini and joint:
        groups = _closures(background, joint, set(moving), set(lf), pre_f, post_f, h, opts, deadline)
    return lf, groups


def _synthesized(it: Iteration | None, loop: Loop, entry: Mapping[str, Var], samples: list[dict], temps: set[str],
                 opts: SummarizeOptions, deadline: Deadline) -> tuple[list[Expr], list[Expr]]:
    """2LS-style rows, their bounds found by strategy iteration (`smt/strategy.py`), each family accepted only
    after its one check that all its rows together are inductive over `it`:
      * R, relative rows over the changes since entry, δx = x - x0 of the modified signed integers (entry
        copies x0): intervals ±δx, zones δx - δy, octagon sums ±(δx + δy). Each is 0 at entry and its bound
        starts at 0 and only grows, so R holds at entry by construction: stated without premise;
      * A, absolute rows ±x, x - y, ±(x + y) over the modified and the read signed integers, checked with R
        assumed (R ∧ A is then inductive), their bounds starting at the largest value sampled at entry --
        which need not bound every real entry, so they are stated as `A(entry) ⇒ A`.
    Integer mode only: in bit-vector mode the program's `x - x0` wraps, so its rows would not be the ones
    checked."""
    if opts.bitvector or it is None:
        return [], []
    enc, pre, post, background = it
    signed = [(Var(n, c.type), c) for n, c in entry.items() if isinstance(c.type, IntType) and c.type.signed]
    moved = {v.name for v, _ in signed}
    read = sorted((v for v in loop.reads if v.name not in moved and v.name not in temps
                   and isinstance(v.type, IntType) and v.type.signed), key=lambda v: v.name)
    at_entry = {v: c for v, c in signed}
    ev = Evaluator("math")

    def entry_max(t: Expr) -> int | None:
        try:
            vals = [ev.eval(substitute(t, at_entry), st) for st in samples]
        except (UndefinedBehavior, ArithmeticError, KeyError):
            return None
        return max(vals) if vals else None

    def family(terms: list[Expr], starts: list[int | None], context: list[z3.BoolRef]) -> list[Expr]:
        terms, starts = [t for t, b in zip(terms, starts) if b is not None], [b for b in starts if b is not None]
        if not terms:
            return []
        # its own share of the run (a quarter of what is left, a few queries' worth): it only adds facts
        budget = deadline.cap(min(_SYNTH_QUERIES * opts.query_timeout, deadline.left() / 4))
        try:
            bounds = synthesize(background + context, [enc.expr(t, pre) for t in terms],
                                [enc.expr(t, post) for t in terms], starts, budget, query_timeout=opts.query_timeout)
        except (GiveUp, OutOfTime, z3.Z3Exception):
            if deadline.expired():
                raise
            return []
        return [cmp("<=", t, const(b, t.type)) for t, b in zip(terms, bounds or []) if b is not None]

    rel = _octagon([binary("-", v, c) for v, c in signed][:_SYNTH_VARS], None)
    r_rows = family(rel, [0] * len(rel), [])
    absolute = _octagon([v for v, _ in signed][:_SYNTH_VARS] + read[:max(0, _SYNTH_VARS - len(signed))], moved)
    return r_rows, family(absolute, [entry_max(t) for t in absolute], [enc.expr(r, pre) for r in r_rows])


def _octagon(xs: list[Expr], moved: set[str] | None) -> list[Expr]:
    """±x, x - y, y - x, ±(x + y) over `xs` (pairs of one type; with `moved`, pairs with a moved variable)."""
    out: list[Expr] = []
    for i, a in enumerate(xs):
        zero = const(0, a.type)
        if moved is None or any(v.name in moved for v in free_vars(a)):
            out += [a, binary("-", zero, a)]
        for b in xs[i + 1:]:
            if b.type == a.type and (moved is None or any(v.name in moved for v in free_vars(a) | free_vars(b))):
                out += [binary("-", a, b), binary("-", b, a), binary("+", a, b), binary("-", zero, binary("+", a, b))]
    return out


def _instance(enc: Encoder, c: ForAll, env: Mapping[str, z3.ExprRef], kc: z3.ExprRef) -> z3.BoolRef:
    """`c`'s body at the cell `kc` (inside its range): the post-state instance at a free `kc` says the
    quantified post-state fact, and assuming only the pre-state instance at the same cell weakens the premise,
    so a candidate proved this way is inductive (and the query stays quantifier-free)."""
    inside = and_(cmp("<=", c.lo, c.var), cmp("<", c.var, c.hi))
    return enc.expr(implies(inside, c.body), {**env, c.var.name: kc})


def _closures(background: list[z3.BoolRef], joint: list[int], moving: set[int], alone: set[int], pre_f, post_f,
              h: int, opts: SummarizeOptions, deadline: Deadline) -> list[tuple[list[int], list[int]]]:
    """Split the jointly inductive set into small inductive subsets: per candidate c over a modified variable,
    the least set containing c and, with each member, the members an unsat core says its preservation needs.
    Each such closure is inductive on its own, so it becomes one conjunct `⋀C(entry) ⇒ ⋀C` whose premise
    holds whenever the few facts c depends on held at entry -- one sampled bound such as `n - p <= 16` that is
    false at entry then voids only its own conjunct, not the whole set. Returns (context, closure) pairs,
    context being the members over unchanged variables only (premise, no conclusion needed)."""
    s = z3.Solver()
    s.add(*background)
    lits = {i: z3.Bool(f"!j{h}.{i}") for i in joint}
    by_id = {lit.get_id(): i for i, lit in lits.items()}
    for i, lit in lits.items():
        s.add(z3.Implies(lit, pre_f[i]))
    support: dict[int, set[int]] = {}

    def needs(i: int) -> set[int]:
        if i not in support:
            if i not in moving or i in alone:
                support[i] = set()           # unchanged by the loop, or inductive on its own: no support
            else:
                try:
                    r = check(s, deadline, *lits.values(), z3.Not(post_f[i]), cap=opts.query_timeout)
                except (GiveUp, OutOfTime):
                    if deadline.expired():
                        raise
                    r = z3.unknown
                support[i] = ({by_id[c.get_id()] for c in s.unsat_core() if c.get_id() in by_id}
                              if r == z3.unsat else set(joint))
        return support[i]

    out: list[tuple[list[int], list[int]]] = []
    seen: set[frozenset[int]] = set()
    for c in joint:
        if c not in moving or c in alone:
            continue
        closure, todo = {c}, [c]
        while todo:
            for d in needs(todo.pop()) - closure:
                closure.add(d)
                todo.append(d)
        key = frozenset(closure)
        if key in seen:
            continue
        seen.add(key)
        members = sorted(closure)
        out.append(([i for i in members if i not in moving], [i for i in members if i in moving]))
    return out
