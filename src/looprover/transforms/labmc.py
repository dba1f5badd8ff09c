"""LABMC: replace every loop by a bounded over-approximating loop (output abstraction, abstract acceleration,
induction), so that BMC can exhaust it.

Guarantee: **over-approximation**. Every execution of the input program, up to its first assertion failure,
has a counterpart in the output with the same inputs reaching the same failure (or the same exit values of
every variable live there). So a TRUE on the output is a TRUE on the input; a FALSE is only a hint.

Per loop L = `while (C) B` with header H, innermost first (inner loops are already abstract, their bodies are
part of B), `classify` splits B's written variables into IO and pure outputs (PO) and derives the bound M
(`classify.abstract_bound`, with the soundness argument). L becomes

    cnt := 0
    H:     exits of H (assume !C ...)                       # the loop may be left here, as before
           or: assume(cnt < M); cnt++; IO := accelerated(IO, k) or havoc; then only H's body edges
               (assume C; B), whose back edges return to H and whose other exits stay exits

The abstract loop is a natural loop at H bounded by `cnt`, so BMC's unwinding assertions can be discharged
and BMC proves TRUE once its bound reaches M. PO are never havocked: every iteration writes them before
reading them, so their incoming values do not matter, and the last writer of each live PO is replayed.

**Acceleration** (`closed_forms`): instead of havocking an IO variable, set it to its value after a fresh
number k of skipped iterations. One abstract iteration then stands for k skipped + 1 concrete iteration; the
same k for all variables keeps their linear relations. Where H has a single body edge starting with
`assume(c)` and every variable of c is invariant or exactly accelerated, we also add
`assume(k == 0 || c[state after k-1 skipped iterations])`: every skipped iteration started with c true, so
this constraint holds on every real execution (it only removes impossible states).

**Induction** (loops with an assertion on a body or exit edge): the body is copied three times:
  * base (copy 1): L's entry goes to a concrete first iteration with the assertions live; its back edges
    enter the abstract loop (cnt := 0);
  * hypothesis (copy 2, the abstract loop above): assertions become assumptions;
  * step (copy 3): from the abstract header, one concrete iteration with the assertions live, then a sink.
Soundness: let iteration n be the first to fail an assertion of L's body. n = 1 is the base. Otherwise
iterations 1..n-1 satisfy every assertion, so copy 2 replays the kept ones among 2..n-1 (their assumptions
hold) and reaches the state iteration n starts from (IO exact), and the step replays iteration n up to the
failure. Executions without such a failure only need copies 1 and 2, which keep all of L's exits. Anything
reached through an exit edge is outside L and keeps its assertions live.

**Arrays**: a written array is IO (a store reads the array), so it is havocked as a whole at each abstract
iteration (all cells: the IR has no way to say "only cells i0..i"); arrays that are only read keep their
contents, and so do arrays written in no loop. What survives about a written array is therefore only what
the replayed concrete iterations write into it after the last havoc.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from looprover.errors import UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt, VarInfo
from looprover.program.expr import (
    I32, MATH_INT, TRUE, BoolType, Expr, IntType, Var, and_, cast, cmp, const, free_vars, or_, substitute,
)
from looprover.program.loops import Loop, analyze_loops
from looprover.transforms.base import Guarantee, RunOnInputs, Transform, Transformed
from looprover.program.liveness import liveness
from looprover.transforms.classify import Classification, classify
from looprover.transforms.closed_forms import (
    FormAnalysis, Offset, Summary, add, closed_form, is_zero, sub, summarize,
)


@dataclass(frozen=True)
class LabmcOptions:
    """LABMC's settings; the fields with a `help` entry are user options (`--option labmc.FIELD=VALUE`)."""
    accelerate: bool = field(default=True, metadata={
        "help": "closed forms for IO variables (off: plain havoc, output abstraction only)"})
    induction: bool = field(default=True, metadata={
        "help": "base/hypothesis/step copies for loops with assertions"})
    exit_hint: bool = field(default=True, metadata={
        "help": "assume the loop condition held before the last skipped iteration"})
    max_edges: int = field(default=20000, metadata={
        "help": "induction copies only while the program stays below this many edges"})
    max_bound: int | None = None  # cap M (testing only: a smaller M is unsound, so it is no user option)


@dataclass
class LoopReport:
    header: int
    src: str
    classification: Classification
    bound: int
    accelerated: dict[str, str] = field(default_factory=dict)   # var -> summary kind
    havocked: list[str] = field(default_factory=list)
    induction: bool = False
    exit_hint: bool = False

    def describe(self) -> str:
        acc = ", ".join(f"{n}:{k}" for n, k in sorted(self.accelerated.items())) or "-"
        hv = ", ".join(sorted(self.havocked)) or "-"
        return (f"loop L{self.header}{' (' + self.src + ')' if self.src else ''}: "
                f"{self.classification.describe()}; accelerated {{{acc}}}; havoc {{{hv}}}"
                f"{'; induction' if self.induction else ''}{'; exit hint' if self.exit_hint else ''}")


@dataclass
class LabmcResult:
    program: Program
    loops: list[LoopReport]

    @property
    def max_bound(self) -> int:
        return max((r.bound for r in self.loops), default=1)


class _State:
    """The program under construction (edges and variables change loop by loop)."""

    def __init__(self, program: Program):
        self.base = program
        self.variables: dict[str, VarInfo] = dict(program.variables)
        self.edges: list[Edge] = list(program.edges)
        self.num_locs = program.num_locs
        self.loc_names = dict(program.loc_names)
        self.loc_src = dict(program.loc_src)
        self.init = program.init
        if any(e.dst == program.init for e in program.edges):
            # The first loop's counter must be set on an edge into its header: give init no in-edges.
            new = self.new_loc("labmc.init")
            self.edges.append(Edge(new, program.init, ()))
            self.init = new

    def new_loc(self, name: str | None = None, like: int | None = None) -> int:
        l = self.num_locs
        self.num_locs += 1
        if name:
            self.loc_names[l] = name
        if like is not None and like in self.loc_src:
            self.loc_src[l] = self.loc_src[like]
        return l

    def fresh(self, base: str, t) -> Var:
        name, i = base, 1
        while name in self.variables:
            name = f"{base}_{i}"
            i += 1
        v = Var(name, t)
        self.variables[name] = VarInfo(v, "temp", name)
        return v

    def program(self) -> Program:
        p = Program(self.base.name, dict(self.variables), tuple(self.edges), self.init, self.base.exit,
                    self.num_locs, dict(self.loc_src), dict(self.loc_names), self.base.data_model,
                    self.base.source_file)
        p.check()
        return p


def _to_assume(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    return tuple(Assume(s.cond, s.src) if isinstance(s, Assert) else s for s in stmts)


def _has_assert(edges) -> bool:
    return any(isinstance(s, Assert) for e in edges for s in e.stmts)


def abstract(program: Program, options: LabmcOptions = LabmcOptions()) -> LabmcResult:
    """Abstract every loop of `program` (innermost first); see the module docstring."""
    st = _State(program)
    done: set[int] = set()
    reports: list[LoopReport] = []
    while True:
        prog = st.program()
        forest = analyze_loops(prog)
        if forest.irreducible:
            e = forest.irreducible_edges[0]
            raise UnsupportedError("irreducible control flow (LABMC needs natural loops)",
                                   e.src_loc or f"edge L{e.src} -> L{e.dst}")
        todo = [h for h in forest.order if h not in done]
        if not todo:
            return LabmcResult(prog, reports)
        h = todo[0]
        loop = forest.loops[h]
        assert all(c in done for c in loop.children), "innermost first"
        reports.append(_abstract_loop(st, prog, loop, liveness(prog), options, done))
        done.add(h)


class LABMCTransform(Transform):
    name = "labmc"
    summary = "LABMC abstraction (output abstraction/acceleration/induction)"
    guarantee = Guarantee.OVER
    Settings = LabmcOptions

    def apply(self, program: Program, settings: LabmcOptions | None = None) -> Transformed:
        result = abstract(program, settings or LabmcOptions())
        # the abstraction keeps every input call of the program in order: its counterexamples' inputs are a
        # test of the original
        return Transformed(result.program, self.guarantee, RunOnInputs(), unwind_bound=result.max_bound,
                           notes=[r.describe() for r in result.loops])


# ------------------------------------------------------------------------------------------ one loop
def _abstract_loop(st: _State, prog: Program, loop: Loop, live, options: LabmcOptions,
                   done: set[int]) -> LoopReport:
    h = loop.header
    cls = classify(prog, loop, live)
    bound = cls.bound if options.max_bound is None else min(cls.bound, options.max_bound)
    src = prog.loc_src.get(h)
    rep = LoopReport(h, str(src) if src else "", cls, bound)
    cnt = st.fresh(f"labmc_cnt_{h}", I32)

    iteration: list[Stmt] = [Assume(cmp("<", cnt, const(bound, I32))), Assign(cnt, add(cnt, const(1, I32)))]
    iteration += _update_io(st, loop, cls, options, rep)

    body = loop.body
    in_loop = set(loop.body_edges) | set(loop.exit_edges)
    inductive = (options.induction and _has_assert(in_loop)
                 and len(st.edges) + 2 * len(in_loop) <= options.max_edges)
    rep.induction = inductive
    edges = [e for e in st.edges if e not in in_loop and e not in loop.entry_edges]
    h_in = st.new_loc(f"labmc.iter{h}", like=h)
    edges.append(Edge(h, h_in, tuple(iteration)))
    if not inductive:
        for e in loop.entry_edges:
            edges.append(Edge(e.src, h, e.stmts + (Assign(cnt, const(0, I32)),)))
        for e in in_loop:
            src_ = h_in if (e.src == h and e.dst in body) else e.src
            edges.append(Edge(src_, e.dst, e.stmts))
    else:
        c1 = {l: st.new_loc(f"labmc.base{h}.{l}", like=l) for l in sorted(body)}
        c3 = {l: st.new_loc(f"labmc.step{h}.{l}", like=l) for l in sorted(body)}
        sink = st.new_loc(f"labmc.sink{h}")
        for e in loop.entry_edges:
            edges.append(Edge(e.src, c1[h], e.stmts))
        for e in in_loop:
            # copy 1 (base): concrete first iteration, assertions live, back edges enter the abstract loop
            if e.dst == h:
                edges.append(Edge(c1[e.src], h, e.stmts + (Assign(cnt, const(0, I32)),)))
            else:
                edges.append(Edge(c1[e.src], c1[e.dst] if e.dst in body else e.dst, e.stmts))
            # copy 2 (hypothesis): the abstract loop, assertions assumed
            src_ = h_in if (e.src == h and e.dst in body) else e.src
            edges.append(Edge(src_, e.dst, _to_assume(e.stmts)))
            # copy 3 (step): one concrete iteration with assertions live, then stop
            dst3 = c3[e.dst] if (e.dst in body and e.dst != h) else sink
            edges.append(Edge(c3[e.src], dst3, e.stmts))
        edges.append(Edge(h, c3[h], ()))
        for l in body:
            if l in done:
                done.add(c1[l])
                done.add(c3[l])
    st.edges = edges
    return rep


def _update_io(st: _State, loop: Loop, cls: Classification, options: LabmcOptions,
               rep: LoopReport) -> list[Stmt]:
    """Statements that move the IO variables over an arbitrary number of skipped iterations."""
    io = sorted(cls.io, key=lambda v: v.name)
    summaries: dict[Var, Summary] = {}
    fa_paths = None
    if options.accelerate:
        cands = frozenset(v for v in io if isinstance(v.type, (IntType, BoolType)))
        fa = FormAnalysis(loop, cands, cls.written)
        forms = fa.run()
        fa_paths = fa.paths()
        for v in sorted(cands, key=lambda v: v.name):
            s = summarize(v, forms.get(v))
            if s is not None:
                summaries[v] = s
    havoc = [v for v in io if v not in summaries]
    rep.havocked = [v.name for v in havoc]
    out: list[Stmt] = []
    if havoc:
        out.append(Havoc(tuple(havoc)))
    active = {v: s for v, s in summaries.items() if not s.unchanged}
    for v, s in summaries.items():
        rep.accelerated[v.name] = s.kind
    if not active:
        return out
    h = loop.header
    widths = [v.type.bits for v in active if isinstance(v.type, IntType) and v.type.bits is not None]
    k = km = None
    if widths:
        k = st.fresh(f"labmc_k_{h}", IntType(max(widths), False))
        out.append(Havoc((k,)))
    if any(isinstance(v.type, IntType) and v.type.bits is None for v in active):
        km = st.fresh(f"labmc_km_{h}", MATH_INT)
        out += [Havoc((km,)), Assume(cmp(">=", km, const(0, MATH_INT)))]
        if k is not None:
            out.append(Assume(cmp("==", _cast_counter(km, k.type), k)))

    # The exit hint reads the variables' values at the start of the abstract iteration: emit it first.
    hint = _exit_hint(loop, cls, summaries, k, km) if options.exit_hint else None
    if hint is not None:
        out.append(Assume(hint))
        rep.exit_hint = True

    shared = _path_counts(st, loop, fa_paths, active, k, km) if fa_paths is not None else {}
    for counts in {id(c): c for c in shared.values()}.values():
        out += [Havoc(tuple(p for p, _ in counts.parts)), *counts.side]
    for v, s in sorted(active.items(), key=lambda kv: kv[0].name):
        kv = km if isinstance(v.type, IntType) and v.type.bits is None else k
        out += _accelerate(st, h, v, s, kv, shared.get(v), rep)
    return out


def _accelerate(st: _State, h: int, v: Var, s: Summary, kv: Var | None, shared: "_Counts | None",
                rep: LoopReport) -> list[Stmt]:
    """Statements giving v its value after kv skipped iterations (see closed_forms for the forms)."""
    if isinstance(v.type, BoolType):
        t = st.fresh(f"labmc_t_{h}_{v.name}", v.type)
        return [Havoc((t,)), Assume(or_(cmp("==", t, v), *(cmp("==", t, g) for g in s.resets))), Assign(v, t)]
    if s.exact:
        return [Assign(v, closed_form(v, s.offsets[0], kv))]
    math = v.type.bits is None

    def nonneg(vs: list[Var]) -> list[Stmt]:
        return [Assume(cmp(">=", p, const(0, MATH_INT))) for p in vs] if math else []

    if shared is not None and not s.resets:
        val: Expr = v
        for p, incs in shared.parts:
            val = closed_form(v, incs[v], p, base=val)
        rep.accelerated[v.name] = "multi-path (shared)"
        return [Assign(v, val)]
    out: list[Stmt] = []
    # No reset among the skipped iterations: x0 + sum k_i*b_i with one count per increment, summing to k.
    no_reset_cond: Expr = TRUE
    if len(s.offsets) <= 1:
        no_reset_val = closed_form(v, s.offsets[0], kv) if s.offsets else v
    else:
        parts = [st.fresh(f"labmc_k_{h}_{v.name}_{i}", kv.type) for i in range(len(s.offsets))]
        no_reset_val = v
        total: Expr = parts[0]
        for p, b in zip(parts, s.offsets):
            no_reset_val = closed_form(v, b, p, base=no_reset_val)
        for p in parts[1:]:
            total = add(total, p)
        no_reset_cond = cmp("==", total, kv)
        out += [Havoc(tuple(parts)), *nonneg(parts)]
    if not s.resets:
        return out + ([Assume(no_reset_cond)] if no_reset_cond != TRUE else []) + [Assign(v, no_reset_val)]
    # Some skipped iteration reset v: the value after the last reset plus later increments (free counts).
    nz = [b for b in s.offsets if not is_zero(b)]
    after = [st.fresh(f"labmc_k_{h}_{v.name}_r{i}", kv.type) for i in range(len(nz))]
    t = st.fresh(f"labmc_t_{h}_{v.name}", v.type)
    alts = [and_(no_reset_cond, cmp("==", t, no_reset_val))]
    for g in s.resets:
        val = g
        for p, b in zip(after, nz):
            val = closed_form(v, b, p, base=val)
        alts.append(cmp("==", t, val))
    return out + [Havoc(tuple(after) + (t,)), *nonneg(after), Assume(or_(*alts)), Assign(v, t)]


@dataclass
class _Counts:
    """Iteration counts per path class, shared by the variables of one counter type."""
    parts: list[tuple[Var, dict[Var, Expr]]]     # (count, increment of each variable on that class)
    side: list[Stmt]                             # sum of counts == k (and >= 0 for mathematical ones)


def _path_counts(st: _State, loop: Loop, paths, active: dict[Var, Summary], k: Var | None,
                 km: Var | None) -> dict[Var, _Counts]:
    """Shared per-path-class counts for the multi-path variables (increments only, no resets). Paths with
    the same increments of all these variables form one class; each class gets a count, the counts sum to
    k. A real execution's number of iterations along each class is such a solution (modulo 2^w of k), so
    the closed forms below include it."""
    out: dict[Var, _Counts] = {}
    for bounded in (True, False):
        ctr = k if bounded else km
        vs = sorted((v for v, s in active.items() if isinstance(v.type, IntType)
                     and (v.type.bits is not None) == bounded and not s.resets and len(s.offsets) > 1),
                    key=lambda v: v.name)
        if not vs or ctr is None:
            continue
        classes: dict[tuple, dict[Var, Expr]] = {}
        ok = True
        for path in paths:
            incs: dict[Var, Expr] = {}
            for v in vs:
                f = path.get(v)
                if f is None or len(f) != 1 or not isinstance(next(iter(f)), Offset):
                    ok = False
                    break
                incs[v] = next(iter(f)).beta
            if not ok:
                break
            classes.setdefault(tuple(incs[v] for v in vs), incs)
        if not ok or len(classes) < 2:
            continue
        parts = [(st.fresh(f"labmc_p_{loop.header}_{i}", ctr.type), incs)
                 for i, incs in enumerate(classes.values())]
        total: Expr = parts[0][0]
        for p, _ in parts[1:]:
            total = add(total, p)
        side: list[Stmt] = [Assume(cmp("==", total, ctr))]
        if not bounded:
            side += [Assume(cmp(">=", p, const(0, MATH_INT))) for p, _ in parts]
        counts = _Counts(parts, side)
        for v in vs:
            out[v] = counts
    return out


def _cast_counter(km: Var, t: IntType) -> Expr:
    return cast(t, km)


def _exit_hint(loop: Loop, cls: Classification, summaries: dict[Var, Summary], k: Var | None,
               km: Var | None) -> Expr | None:
    """`k == 0 || c[x := value after k-1 skipped iterations]` for H's unique body edge `assume(c); ...`,
    when every variable of c is loop-invariant or exactly accelerated (else None)."""
    h = loop.header
    entries = [e for e in loop.body_edges if e.src == h]
    if len(entries) != 1 or not entries[0].stmts or not isinstance(entries[0].stmts[0], Assume):
        return None
    c = entries[0].stmts[0].cond
    mapping: dict[Var, Expr] = {}
    uses_math = False
    for v in free_vars(c):
        if v not in cls.written:
            continue
        s = summaries.get(v)
        if s is None or not s.exact or isinstance(v.type, BoolType):
            return None
        if not is_zero(s.offsets[0]):
            mapping[v] = s.offsets[0]
            uses_math |= v.type.bits is None
    if not mapping:
        return None
    ctr = km if uses_math else k
    if ctr is None:
        return None
    prev = sub(ctr, const(1, ctr.type))   # wraps for k = 0, where the first disjunct holds anyway
    subst = {v: closed_form(v, b, prev) for v, b in mapping.items()}
    return or_(cmp("==", ctr, const(0, ctr.type)), substitute(c, subst))
