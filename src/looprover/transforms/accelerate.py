"""Under-approximating acceleration (Impulse, FMSD'15; CBMC `goto-instrument --accelerate`): each loop keeps
its body and gains accelerated branches, each taking one path of the body n >= 1 times in one step.

Guarantee: **under-approximation**. Every execution of the result is an execution of the input program, an
accelerated step standing for n iterations of its path, all reading the same values at the path's havocs
(inputs). So a counterexample of the result, expanded (`ExpandAccelerated`), is a counterexample of the
program, while a bug behind 10^9 iterations costs BMC one step. A TRUE of the result proves nothing.

Per loop, innermost first (an outer loop's paths may take an inner loop's accelerated branch once and leave
it), `paths.loop_paths` yields the paths that can run twice in a row, and up to `max_paths` of them are
accelerated (of at most `CANDIDATES`·`max_paths` asked for). For a path π:

* **Semantics.** π's statements are run symbolically (havocked variables become *frozen inputs*: fresh
  variables havocked once by the accelerated branch). Every expression π evaluates is restated over WIDE, a
  signed type of 3w+8 bits for the widest type w on the path (`Mathify`), where each C operation is the
  mathematical one, and gets a *no-overflow* condition: its value lies in its C type (signed overflow,
  unsigned wrap-around and narrowing conversions excluded), divisors are non-zero, shift amounts in range.
  The branch is only taken when every iteration meets these conditions, so there the C semantics (either
  encoding: bit-vector, or integers with explicit unsigned wrap) coincides with WIDE arithmetic.
* **Closed forms** (`closed_forms`): a variable whose value after π depends on its own previous value (a
  cycle of the dependencies among written variables) is *recursive*: `x += c` and `x = c - x` are matched
  syntactically, anything else is fitted to sample runs from models of π's condition with the template
  `Σ_v (a_v v0 + b_v v0 n) + c2 n² + c1 n + c0` in exact rationals. Every form is accepted only after the
  inductive check `x = p(x0, k) ∧ π ⇒ x' = p(x0, k+1)` (with x = p(x0, 0)); if one fails, the path gets no
  branch (leaving a variable unchanged would not be an under-approximation). A written variable that is not
  recursive takes its value from the last iteration, `f(state after n-1 iterations)`; if π reads its value
  from before the iteration, the path is refused.
* **The guard** `∀k ∈ [0, n). G(k)`, G being π's assumes, asserts and no-overflow conditions at the state after
  k iterations, is split into conjuncts. A conjunct that stays false once false (checked valid over all
  k >= 0) holds for all k iff it holds at 0 and at n-1; one that stays true once true iff it holds at 0
  (monotone predicates). Otherwise, if k occurs only in the index of reads `b[i0 ± k]` of an array π does not
  write, the quantifier moves to the cells: `∀j ∈ [lo, hi]. G[b[j]]` (membership of array indices). Otherwise
  z3's quantifier elimination over the integers is tried, and the formula is read back; failing that, the
  branch keeps `ForAll`.
* **Arrays**: π may write each array at indices linear in the iteration (stride s from a model, then checked
  valid), and must not read an array it writes; the n writes become one `ArrayFill`. Several writes per
  iteration (`buf[i] = c1; buf[i+1] = c2; i += 2`) must share a stride s and start at constant distances that
  s does not divide, so no cell is written twice in the n iterations and the fills, one per write, commute; or
  all have stride 0 and become the last iteration's stores, in order.
* **Invariant write conditions**: a write through a pointer that may point into several objects is a write of
  each, `a[i] = c ? v : a[i]`, whose condition c (which object the pointer designates) no statement of π
  changes. Such a path reads what it writes; it is split on the valuations of these conditions
  (`invariant_write_conditions`), each variant assuming its valuation, which leaves at most the one real write
  per array. The variants' union is π, so each is an under-approximation of π on its own.

The branch is an edge from the header to itself (BMC counts it as one iteration):
    havoc n, frozen inputs; assume 1 <= n <= 2^w; assume guard; t_x := closed form (each x);
    arrays := fills; x := t_x
Why `n <= 2^w`: it keeps every closed-form term inside WIDE. Loops in irreducible code are left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import LooproverError
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt, VarInfo
from looprover.program.expr import (
    BINDERS, FALSE, TRUE, And, ArrayFill, ArrayType, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr,
    ForAll, IntConst, IntType, Ite, Not, Or, Select, Store, Unary, Var, and_, cast, cmp, const, conjuncts,
    free_vars, ite, not_, or_, rebuild, substitute, transform, walk,
)
from looprover.program.loops import Loop, analyze_loops
from looprover.smt.encode import Encoder
from looprover.smt.readback import Readback
from looprover.smt.solver import check_unpaused
from looprover.transforms.base import Guarantee, Transform, Transformed
from looprover.transforms.closed_forms import (
    MathForm, add, check_inductive, fit, linear_in, mul, occurrence, sub, syntactic_form, template,
)
from looprover.transforms.paths import loop_paths


@dataclass(frozen=True)
class AccelOptions:
    """Settings of the transform; the fields with a `help` entry are user options (`--option accel.FIELD=V`)."""
    max_paths: int = field(default=4, metadata={"help": "accelerated paths (phases) per loop"})
    degree: int = field(default=2, metadata={"help": "highest power of n in fitted closed forms (0-2)"})
    quantified: bool = field(default=True, metadata={
        "help": "keep paths whose guard keeps a quantifier (off: refuse them; they can make BMC slow)"})
    query_timeout: float = 2.0            # seconds per solver query of the transform
    deadline: Deadline | None = None      # the transform's share of a run (set by the engine)


class NotAccelerable(Exception):
    """Why a path gets no accelerated branch (one line of the transform's notes)."""


class ReadsWhatItWrites(NotAccelerable):
    """The path reads an array it writes (which a split on its invariant write conditions may undo)."""


# ----------------------------------------------------------------------------------- C -> WIDE arithmetic
def wide_type(bits: int) -> IntType:
    """Wide enough for `coefficient * v0 * n` and `n^2 * c` with v0, c, n < 2^bits: 3*bits + 8."""
    return IntType(3 * bits + 8, True)


class Mathify:
    """A path's C expressions in WIDE arithmetic (`mathify(e)`), collecting the no-overflow conditions under
    which both agree (`needs`). Integer variables appear as `(WIDE)v`, which is how `occurrence` and the
    closed forms find them."""

    def __init__(self, wide: IntType):
        self.w = wide
        self.needs: dict[Expr, None] = {}
        self.memo: dict[Expr, Expr] = {}

    def _need(self, c: Expr) -> None:
        if c != TRUE:
            self.needs[c] = None

    def _fits(self, r: Expr, t: IntType) -> None:
        self._need(cmp(">=", r, const(t.min, self.w)))
        self._need(cmp("<=", r, const(t.max, self.w)))

    def __call__(self, e: Expr) -> Expr:
        r = self.memo.get(e)
        if r is None:
            r = self._go(e)
            self.memo[e] = r
        return r

    def _int(self, t) -> IntType:
        if not isinstance(t, IntType) or not t.bounded:
            raise NotAccelerable(f"type {t} on the path")
        return t

    def _go(self, e: Expr) -> Expr:
        w = self.w
        t = e.type
        if isinstance(e, Var):
            return Cast(w, e) if isinstance(t, IntType) and self._int(t) else e
        if isinstance(e, IntConst):
            self._int(t)
            return IntConst(e.value, w)
        if isinstance(e, BoolConst):
            return e
        if isinstance(e, Binary):
            t = self._int(t)
            a, b = self(e.lhs), self(e.rhs)
            op = e.op
            if op in ("+", "-", "*"):
                r = Binary(op, a, b, w)
                self._fits(r, t)
            elif op in ("/", "%"):
                self._need(cmp("!=", b, const(0, w)))
                r = Binary(op, a, b, w)
                self._fits(r, t)
            elif op in ("&", "|", "^"):
                r = Binary(op, a, b, w)      # operands in range: the result is too, and equal
            elif op in ("<<", ">>"):
                self._need(cmp(">=", b, const(0, w)))
                self._need(cmp("<", b, const(t.bits, w)))
                if op == "<<" and t.signed:
                    self._need(cmp(">=", a, const(0, w)))
                r = Binary(op, a, b, w)
                if op == "<<":
                    self._fits(r, t)
            else:
                raise NotAccelerable(f"operator {op}")
            return r
        if isinstance(e, Unary):
            t = self._int(t)
            a = self(e.arg)
            if e.op == "-":
                r = Unary("-", a, w)
                self._fits(r, t)
                return r
            return Binary("-", const(t.max, w), a, w) if not t.signed else Unary("~", a, w)
        if isinstance(e, Compare):
            return Compare(e.op, self(e.lhs), self(e.rhs))
        if isinstance(e, (Not, And, Or)):
            return rebuild(e, tuple(self(k) for k in e.children()))
        if isinstance(e, Ite):
            c_, a, b = self(e.cond), self(e.then), self(e.orelse)
            return Ite(c_, a, b, w if isinstance(t, IntType) else t)
        if isinstance(e, Cast):
            a = self(e.arg)
            if isinstance(t, BoolType):
                return Compare("!=", a, const(0, w)) if isinstance(e.arg.type, IntType) else a
            t = self._int(t)
            if isinstance(e.arg.type, BoolType):
                return ite(a, const(1, w), const(0, w))
            s = self._int(e.arg.type)
            if not (t.min <= s.min and s.max <= t.max):      # a narrowing conversion: it must not wrap
                self._fits(a, t)
            return a
        if isinstance(e, Select):
            at: ArrayType = e.array.type
            r = Select(self(e.array), cast(at.index, self(e.index)), e.type)
            return Cast(w, r) if isinstance(e.type, IntType) and self._int(e.type) else r
        if isinstance(e, Store):
            at = e.type
            v = self(e.value)
            return Store(self(e.array), cast(at.index, self(e.index)),
                         cast(at.elem, v) if isinstance(at.elem, IntType) else v, at)
        if isinstance(e, ConstArray):
            return e
        raise NotAccelerable(f"{type(e).__name__} on the path")


# ----------------------------------------------------------------------------------- one path, symbolically
@dataclass
class SymPath:
    """One run of a path over the values before it: written variables' values, the conditions it assumes
    (assumes and asserts), every expression it evaluates, and its havocs as frozen inputs."""
    post: dict[Var, Expr] = field(default_factory=dict)
    cond: list[Expr] = field(default_factory=list)
    evaluated: list[Expr] = field(default_factory=list)
    frozen: list[tuple[Var, Var]] = field(default_factory=list)     # (havocked variable, its input)


def specialize(sp: SymPath, fixed: tuple[tuple[Expr, bool], ...]) -> SymPath:
    """`sp` under the valuation `fixed` of conditions no statement of the path changes: they are replaced by
    their values, writes `a[i] = a[i]` (also where the front-end wrote one for a pointer that designates another
    object) and assignments `x = x` are dropped, a read of the cell the path just wrote is the value written,
    and the valuation is part of the path's condition."""
    vals = dict(fixed)

    def node(x: Expr) -> Expr | None:
        if x in vals:
            return TRUE if vals[x] else FALSE
        if (same := _cmp_self(x)) is not None:
            return same
        if isinstance(x, Store) and x.value == Select(x.array, x.index, x.value.type):
            return x.array
        if isinstance(x, Select) and isinstance(x.array, Store) and x.array.index == x.index:
            return x.array.value            # the cell the path just wrote
        return None

    post = {v: transform(e, node) for v, e in sp.post.items()}
    return SymPath({v: e for v, e in post.items() if e != v},
                   [transform(c_, node) for c_ in sp.cond] + [c_ if val else not_(c_) for c_, val in fixed],
                   [transform(e, node) for e in sp.evaluated], sp.frozen)


def _cmp_self(x: Expr) -> Expr | None:
    """The value of `e op e` (a pointer compared with itself), else None."""
    if isinstance(x, Compare) and x.lhs == x.rhs:
        return TRUE if x.op in ("==", "<=", ">=") else FALSE
    return None


def invariant_write_conditions(path: tuple[Edge, ...]) -> list[Expr]:
    """Conditions of the `ite`s in the path's array writes that read no variable the path writes (which object
    a pointer designates, say): the same in every iteration, so the path can be split on them."""
    sp = run_symbolically(path, lambda v: Var(f"__lr_h_{v.name}", v.type))
    # `p = p` (a pointer the front-end re-assigns to itself as it steps its offset) writes nothing; the havocs'
    # values differ per iteration
    written = {v for v, e in sp.post.items() if e != v} | {h for _, h in sp.frozen}
    found: dict[Expr, None] = {}
    for v, e in sp.post.items():
        if not isinstance(v.type, ArrayType):
            continue
        for x in walk(e):
            if isinstance(x, Ite) and not (free_vars(x.cond) & written) and _cmp_self(x.cond) is None \
                    and not any(isinstance(y, (Select, Store)) for y in walk(x.cond)):
                found[x.cond] = None
    return list(found)


def run_symbolically(path: tuple[Edge, ...], frozen_var) -> SymPath:
    sp = SymPath()
    for e in path:
        for s in e.stmts:
            if isinstance(s, Assign):
                rhs = substitute(s.rhs, sp.post)
                sp.post[s.lhs] = rhs
                sp.evaluated.append(rhs)
            elif isinstance(s, Havoc):
                for v in s.vars:
                    h = frozen_var(v)
                    sp.post[v] = h
                    sp.frozen.append((v, h))
            elif isinstance(s, (Assume, Assert)):
                sp.cond.append(substitute(s.cond, sp.post))
    return sp


def _recursive(deps: dict[Var, frozenset[Var]]) -> set[Var]:
    """Variables on a dependency cycle (self-loops included): Tarjan's strongly connected components."""
    index: dict[Var, int] = {}
    low: dict[Var, int] = {}
    stack: list[Var] = []
    on: set[Var] = set()
    out: set[Var] = set()
    counter = [0]

    def visit(v: Var) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w_ in deps.get(v, ()):
            if w_ not in index:
                visit(w_)
                low[v] = min(low[v], low[w_])
            elif w_ in on:
                low[v] = min(low[v], index[w_])
        if low[v] == index[v]:
            comp = []
            while True:
                x = stack.pop()
                on.discard(x)
                comp.append(x)
                if x == v:
                    break
            if len(comp) > 1 or v in deps.get(v, ()):
                out.update(comp)

    for v in sorted(deps, key=lambda v: v.name):
        if v not in index:
            visit(v)
    return out


# ----------------------------------------------------------------------------------- building a branch
@dataclass(frozen=True)
class Accelerator:
    """An accelerated branch and what it stands for: `edge` (header to header) havocs the iteration count
    and then one frozen input per havocked variable of `path`, in order (`havocs[i]` of them on path edge i)."""
    edge: Edge
    path: tuple[Edge, ...]
    havocs: tuple[int, ...]
    describe: str
    quantified: bool = False       # its guard keeps a quantifier (costly for BMC)


def havoc_count(e: Edge) -> int:
    return sum(len(s.vars) for s in e.stmts if isinstance(s, Havoc))


class _Builder:
    """The program under construction: fresh names for counts, inputs, temporaries and bound variables."""

    def __init__(self, program: Program, options: AccelOptions):
        self.base = program
        self.options = options
        self.variables: dict[str, VarInfo] = dict(program.variables)
        self.edges: list[Edge] = list(program.edges)
        self.taken: set[str] = set(program.variables)
        self.accels: dict[Edge, Accelerator] = {}

    def fresh(self, base: str, t, declare: bool = True) -> Var:
        name, i = base, 1
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        v = Var(name, t)
        if declare:
            self.variables[name] = VarInfo(v, "temp", name)
        return v

    def program(self) -> Program:
        p = self.base.with_edges(self.edges, variables=dict(self.variables))
        p.check()
        return p

    def timeout_ms(self) -> int:
        cap = self.options.query_timeout
        dl = self.options.deadline
        if dl is not None:
            cap = min(cap, max(dl.left(), 0.01))
        return max(10, int(cap * 1000))

    def out_of_time(self) -> bool:
        return self.options.deadline is not None and self.options.deadline.expired()


def _ranges(enc: Encoder, env: dict, vs) -> list:
    out = []
    for v in vs:
        if v.name in env:
            out += enc.in_range(env[v.name], v.type)
    return out


def _env(enc: Encoder, vs) -> dict:
    return {v.name: enc.const(v.name, v.type) for v in vs}


class PathAccelerator:
    """The accelerated branch of one path π at header `h` (see the module docstring); raises NotAccelerable."""

    def __init__(self, b: _Builder, h: int, path: tuple[Edge, ...], tag: str,
                 fixed: tuple[tuple[Expr, bool], ...] = ()):
        self.b, self.h, self.path, self.tag, self.fixed = b, h, path, tag, fixed
        self.kinds: dict[str, str] = {}
        self.guard_kinds: list[str] = []

    def build(self) -> Accelerator:
        b, path, tag = self.b, self.path, self.tag
        for e in path:
            for s in e.stmts:
                for x in ([s.rhs] if isinstance(s, Assign) else [s.cond] if isinstance(s, (Assume, Assert)) else []):
                    if any(isinstance(n, BINDERS) for n in walk(x)):
                        raise NotAccelerable("the path takes an accelerated branch with a quantifier or an array fill")
        inputs: list[Var] = []

        def frozen_var(v: Var) -> Var:
            h = b.fresh(f"{tag}_in{len(inputs)}_{v.name}", v.type)
            inputs.append(h)
            return h

        sp = specialize(run_symbolically(path, frozen_var), self.fixed)
        written = set(sp.post)
        scalars = {v for v in written if not isinstance(v.type, ArrayType)}
        arrays = written - scalars
        exprs = list(sp.post.values()) + sp.cond + sp.evaluated
        used: set[Var] = set(written)
        for x in exprs:
            used |= free_vars(x)
        bits = [v.type.bits for v in used if isinstance(v.type, IntType)]
        bits += [v.type.elem.bits for v in used if isinstance(v.type, ArrayType) and isinstance(v.type.elem, IntType)]
        bits += [v.type.index.bits for v in used if isinstance(v.type, ArrayType)]
        if any(x is None for x in bits):
            raise NotAccelerable("mathematical integers on the path")
        # C types only: an inner loop's iteration count (WIDE already) is below 2^64 by its own guard
        width = max((x for x in bits if x <= 64), default=32)
        w = self.w = wide_type(width)
        m = Mathify(w)
        fm = {v: m(sp.post[v]) for v in scalars}
        pc = [m(c_) for c_ in sp.cond]
        for x in sp.evaluated:
            m(x)
        fills: dict[Var, list[tuple[Expr, Expr]]] = {}
        for a in sorted(arrays, key=lambda v: v.name):
            st, writes = sp.post[a], []
            while isinstance(st, Store):
                writes.append((st.index, st.value))
                st = st.array
            if st != a or not writes:
                raise NotAccelerable(f"array {a.name} is not written exactly once")
            if any(a in free_vars(i) | free_vars(v) for i, v in writes):
                raise ReadsWhatItWrites(f"the path reads array(s) it writes: {a.name}")
            fills[a] = [(m(i), m(v)) for i, v in reversed(writes)]
        atoms: list[Expr] = []
        for c_ in pc + list(m.needs):
            for x in _flatten(c_):
                if x not in atoms:
                    atoms.append(x)
        reads: set[Var] = set()      # what the values read
        for x in list(fm.values()) + [y for ws in fills.values() for pair in ws for y in pair]:
            reads |= free_vars(x)
        tested: set[Var] = set()     # what the guard reads
        for x in atoms:
            tested |= free_vars(x)
        if (reads | tested) & arrays:
            raise ReadsWhatItWrites(f"the path reads array(s) it writes: {_names((reads | tested) & arrays)}")
        deps = {v: frozenset(free_vars(fm[v]) & scalars) for v in scalars}
        rec = _recursive(deps)
        nonrec = scalars - rec
        carried = tested & nonrec
        if reads & nonrec or any(free_vars(fm[v]) & nonrec or not isinstance(v.type, IntType) for v in carried):
            raise NotAccelerable(f"the path reads the previous iteration's value of {_names((reads | tested) & nonrec)}")
        self.carried, self.fm = carried, fm
        if any(isinstance(v.type, BoolType) for v in rec):
            raise NotAccelerable(f"a Boolean depends on itself: {_names(v for v in rec if isinstance(v.type, BoolType))}")

        count = b.fresh(f"{tag}_count", w, declare=False)      # placeholder for "iterations" in the forms
        self.count = count
        forms = self.forms = self._closed_forms(rec, scalars, fm, atoms, count)
        failed = check_inductive(list(forms.values()), {r: fm[r] for r in rec}, atoms, count, b.timeout_ms())
        if failed:
            raise NotAccelerable(f"closed form not inductive for {_names(failed)}")

        n = b.fresh(f"{tag}_n", w)
        self.n = n
        one = const(1, w)
        n1 = Binary("-", n, one, w)
        stmts: list[Stmt] = [Havoc((n, *inputs)), Assume(cmp(">=", n, one)),
                             Assume(cmp("<=", n, const(1 << width, w)))]
        for g in self._guard(atoms, n):
            stmts.append(Assume(g))
        commits: list[Stmt] = []
        for v in sorted(scalars, key=lambda v: v.name):
            val = fold(forms[v].at(count, n) if v in rec else self.at(fm[v], n1))
            if isinstance(v.type, IntType):
                val = cast(v.type, val)
            t = b.fresh(f"{tag}_{v.name}", v.type)
            stmts.append(Assign(t, val))
            commits.append(Assign(v, t))
            self.kinds.setdefault(v.name, forms[v].kind if v in rec else "last iteration")
        for a, ws in fills.items():
            stmts.append(Assign(a, self._fills(a, ws, n)))
        stmts += commits
        edge = Edge(self.h, self.h, tuple(stmts))
        desc = (f"{', '.join(f'{k}: {v}' for k, v in sorted(self.kinds.items())) or 'no variables'}; guard "
                f"{', '.join(self.guard_kinds) or 'true'}"
                + (f"; assuming {', '.join(str(c_ if v else not_(c_)) for c_, v in self.fixed)}" if self.fixed else ""))
        return Accelerator(edge, path, tuple(havoc_count(e) for e in path), desc, "quantified" in self.guard_kinds)

    # ------------------------------------------------------------------------- closed forms
    def at(self, e: Expr, k: Expr) -> Expr:
        """`e` (over the values before the iterations) at the state after `k` iterations of the path."""
        vals = {r: f.at(self.count, k) for r, f in self.forms.items()}
        return transform(e, lambda x: vals.get(occurrence(x)) if occurrence(x) in vals else None)

    def _closed_forms(self, rec: set[Var], scalars: set[Var], fm: dict[Var, Expr], atoms: list[Expr],
                      count: Var) -> dict[Var, MathForm]:
        def invariant(c_: Expr) -> bool:
            return not (free_vars(c_) & scalars)

        forms: dict[Var, MathForm] = {}
        for r in sorted(rec, key=lambda v: v.name):
            f = syntactic_form(r, fm[r], count, invariant)
            if f is None:
                f = self._fit(r, rec, fm, atoms, count)
            if f is None:
                raise NotAccelerable(f"no closed form for {r.name}")
            forms[r] = f
        return forms

    def _fit(self, r: Var, rec: set[Var], fm: dict[Var, Expr], atoms: list[Expr], count: Var) -> MathForm | None:
        """Fit the template to sample runs (see the module docstring): start states from models of the path's
        condition, and each of them with one variable moved by 1 and 2 (CBMC's unit samples)."""
        from looprover.program.interp import Evaluator, UndefinedBehavior
        cone, todo = {r}, [r]
        while todo:
            for v in free_vars(fm[todo.pop()]) & rec:
                if v not in cone:
                    cone.add(v)
                    todo.append(v)
        reads: set[Var] = set(cone)
        for v in cone:
            reads |= free_vars(fm[v])
        if any(not isinstance(v.type, IntType) for v in reads):
            return None
        vs = sorted(reads, key=lambda v: v.name)
        starts = self._models(vs, atoms, 3)
        if not starts:
            return None
        base = starts[0]
        for v in vs:
            for d in (1, 2):
                starts.append({**base, v: base[v] + d})
        ev = Evaluator("math")
        samples: list[tuple[dict[Var, int], int, int]] = []
        for x0 in starts:
            state = {v.name: val for v, val in x0.items()}
            try:
                for n in range(4):
                    samples.append((x0, n, state[r.name]))
                    new = {v.name: ev.eval(fm[v], state) for v in cone}
                    state.update(new)
            except (UndefinedBehavior, ArithmeticError):
                continue
        monomials = template(vs, self.b.options.degree)
        return fit(r, monomials, samples, count, self.w)

    def _models(self, vs: list[Var], atoms: list[Expr], k: int) -> list[dict[Var, int]]:
        enc = Encoder(None, bitvector=False)
        names: set[Var] = set(vs)
        for a in atoms:
            names |= free_vars(a)
        env = _env(enc, names)
        s = z3.Solver()
        s.set("timeout", self.b.timeout_ms())
        s.add(*_ranges(enc, env, names))
        try:
            s.add(*[enc.expr(a, env) for a in atoms])
        except Exception:       # noqa: BLE001 -- a condition the encoder cannot take: sample without it
            pass
        out: list[dict[Var, int]] = []
        while len(out) < k and check_unpaused(s) == z3.sat:
            mdl = s.model()
            vals = {v: enc.to_python(mdl.eval(env[v.name], model_completion=True), v.type) for v in vs}
            out.append(vals)
            s.add(z3.Or([env[v.name] != enc.value(vals[v], v.type) for v in vs]) if vs else z3.BoolVal(False))
        return out

    # ------------------------------------------------------------------------- the guard
    def after(self, e: Expr, k: Expr) -> Expr:
        """`e` at the state after `k` + 1 iterations of the path, where it reads the variables the previous
        iteration wrote (`carried`): those hold what iteration k wrote (`at` of their values)."""
        k1 = Binary("+", k, const(1, self.w), self.w)
        vals = {r: f.at(self.count, k1) for r, f in self.forms.items()}
        vals.update({v: self.at(self.fm[v], k) for v in self.carried})
        return transform(e, lambda x: vals.get(occurrence(x)) if occurrence(x) in vals else None)

    def _guard(self, atoms: list[Expr], n: Var) -> list[Expr]:
        """`∀k < n. atom at iteration k`, one constraint per atom where it can. An atom that reads a value the
        previous iteration wrote (`carried`, a lookahead such as `c` in `if (c != NOCHAR) ...; c = s[p++]`) is
        taken at iteration 0 on the value before the loop, and at iterations 1..n-1 on the value the one
        before wrote: exactly the n iterations' conditions."""
        w = self.w
        one = const(1, w)
        k = self.b.fresh("__lr_k", w, declare=False)
        own = [a for a in atoms if not free_vars(a) & self.carried]
        out = self._guard_over([fold(self.at(a, k)) for a in own], k, n)
        shifted = [a for a in atoms if free_vars(a) & self.carried]
        if shifted:
            out += [fold(self.at(a, const(0, w))) for a in shifted]
            later = self._guard_over([fold(self.after(a, k)) for a in shifted], k, Binary("-", n, one, w))
            out += [or_(cmp("==", n, one), g) for g in later]
        return out

    def _guard_over(self, gs: list[Expr], k: Var, n: Expr) -> list[Expr]:
        """`∀k ∈ [0, n). g` for each g of `gs` (a condition at iteration k), without the quantifier where the
        module docstring's methods allow; n >= 1."""
        w = self.w
        zero, one = const(0, w), const(1, w)
        last = Binary("-", n, one, w)
        out: list[Expr] = []
        for g in gs:
            if k not in free_vars(g):
                out.append(g)
                self._kind("constant")
                continue
            if _affine_atom(g, k):
                out += [fold(substitute(g, {k: zero})), fold(substitute(g, {k: last}))]
                self._kind("affine")
                continue
            mono = self._monotone(g, k)
            if mono == "false-stays-false":
                out += [fold(substitute(g, {k: zero})), fold(substitute(g, {k: last}))]
                self._kind("monotone")
                continue
            if mono == "true-stays-true":
                out.append(fold(substitute(g, {k: zero})))
                self._kind("monotone")
                continue
            r = self._membership(g, k, n)
            if r is not None:
                out.append(r)
                self._kind("array cells")
                continue
            r = self._qe(g, k, n)
            if r is not None:
                out.append(r)
                self._kind("z3 qe")
                continue
            if not self.b.options.quantified:
                raise NotAccelerable(f"the guard keeps a quantifier: {g}")
            out.append(ForAll(k, zero, n, g))
            self._kind("quantified")
        return out

    def _kind(self, k: str) -> None:
        self.guard_kinds.append(k)

    def _monotone(self, g: Expr, k: Var) -> str | None:
        enc = Encoder(None, bitvector=False)
        vs = free_vars(g)
        env = _env(enc, vs)
        g0 = enc.expr(g, env)
        g1 = enc.expr(substitute(g, {k: Binary("+", k, const(1, k.type), k.type)}), env)
        for kind, fs in (("false-stays-false", [z3.Not(g0), g1]), ("true-stays-true", [g0, z3.Not(g1)])):
            s = z3.Solver()
            s.set("timeout", self.b.timeout_ms())
            s.add(env[k.name] >= 0, *_ranges(enc, env, vs - {k}), *fs)
            if check_unpaused(s) == z3.unsat:
                return kind
        return None

    def _membership(self, g: Expr, k: Var, n: Expr) -> Expr | None:
        """`∀k<n. G(b[i0 ± k])` as `∀j ∈ cells. G(b[j])` when k occurs only in those reads' index."""
        reads = {x for x in walk(g) if isinstance(x, Select) and k in free_vars(x.index)}
        if not reads:
            return None
        idx = {x.index for x in reads}
        arrays = {x.array for x in reads}
        if len(idx) != 1 or len(arrays) != 1 or not isinstance(next(iter(arrays)), Var):
            return None
        (i,), (arr,) = idx, arrays
        lin = i.arg if isinstance(i, Cast) and i.arg.type == self.w else None
        aff = linear_in(lin, k) if lin is not None else None
        if aff is None or fold(aff[0]) not in (const(1, self.w), const(-1, self.w)):
            return None
        aff = (fold(aff[0]).value, aff[1])
        it: IntType = arr.type.index
        j = self.b.fresh("__lr_j", it, declare=False)
        body = transform(g, lambda x: Select(x.array, j, x.type) if x in reads else None)
        if k in free_vars(body):
            return None
        w = self.w
        first = aff[1]
        final = add(first, mul(const(aff[0], w), Binary("-", n, const(1, w), w)))
        lo, hi = (first, final) if aff[0] == 1 else (final, first)
        return and_(cmp(">=", lo, const(it.min, w)), cmp("<", hi, const(it.max, w)),
                    ForAll(j, cast(it, lo), cast(it, Binary("+", hi, const(1, w), w)), body))

    def _qe(self, g: Expr, k: Var, n: Expr) -> Expr | None:
        """z3's quantifier elimination of `∀k. 0 <= k < n ⇒ g` over the integers, read back as an expression."""
        from looprover.smt.mbp import QEError, eliminate_quantifiers
        if any(isinstance(x, (Select, Store, ArrayFill, ForAll)) for x in walk(g)):
            return None
        for x in walk(g):      # linear integer arithmetic in k only (what z3's QE decides)
            if isinstance(x, Compare) and isinstance(x.lhs.type, IntType):
                lin = linear_in(Binary("-", x.lhs, x.rhs, x.lhs.type), k)
                if lin is None or not isinstance(fold(lin[0]), IntConst):
                    return None
        enc = Encoder(None, bitvector=False)
        vs = free_vars(g) | free_vars(n)
        env = _env(enc, vs)
        kz = env[k.name]
        body = enc.expr(g, env)
        f = z3.ForAll([kz], z3.Implies(z3.And(kz >= 0, kz < enc.expr(n, env)), body))
        try:
            res = eliminate_quantifiers(f, deadline=Deadline.after(self.b.timeout_ms() / 1000))
        except (QEError, z3.Z3Exception):
            return None
        back = {}
        for v in vs - {k}:
            back[env[v.name].get_id()] = v if not isinstance(v.type, IntType) or v.type == self.w else Cast(self.w, v)
        try:
            r = Readback(lambda t: back.get(t.get_id()), self.w, NotAccelerable)(res)
        except NotAccelerable:
            return None
        return r if len(list(walk(r))) < 200 else None

    # ------------------------------------------------------------------------- arrays
    def _fills(self, a: Var, writes: list[tuple[Expr, Expr]], n: Var) -> Expr:
        """The array after n iterations of the path's writes `a[idx(k)] = val(k)`, in order, each idx linear in
        k (see the module docstring for when several writes per iteration are exact)."""
        w = self.w
        at: ArrayType = a.type
        ks = [self.b.fresh("__lr_c", w, declare=False) for _ in writes]     # each fill binds its own
        lines = [self._line(a, idx, k) for (idx, _), k in zip(writes, ks)]
        strides = {stride for _, stride in lines}
        if len(writes) > 1 and strides != {0}:
            stride = lines[0][1]
            # the cells i0 + s·k and j0 + s·k' never meet iff j0 - i0 is a constant that s does not divide
            distances = [_constant(Binary("-", lines[y][0], lines[x][0], w), self.b.timeout_ms())
                         for x in range(len(lines)) for y in range(x + 1, len(lines))]
            if len(strides) > 1 or any(d is None or d % stride == 0 for d in distances):
                raise NotAccelerable(f"array {a.name} is not written exactly once per cell (its writes meet "
                                     f"across iterations)")
        out: Expr = a
        for (i0, stride), (_, val), k in zip(lines, writes, ks):
            vk = self.at(val, k)
            vk = cast(at.elem, vk) if isinstance(at.elem, IntType) else vk
            if stride == 0:
                out = Store(out, cast(at.index, i0), substitute(vk, {k: Binary("-", n, const(1, w), w)}), at)
            else:
                out = ArrayFill(out, i0, stride, n, k, vk, at)
        self.kinds[a.name] = f"fill, stride {', '.join(str(x) for _, x in lines)}"
        return out

    def _line(self, a: Var, idx: Expr, k: Var) -> tuple[Expr, int]:
        """`idx` after k iterations as start + stride·k: (start, stride); NotAccelerable if it is not linear."""
        w, t = self.w, self.b.timeout_ms()
        ik = self.at(idx, k)
        i0 = substitute(ik, {k: const(0, w)})
        stride = _constant(Binary("-", substitute(ik, {k: const(1, w)}), i0, w), t)
        if stride is None or _constant(Binary("-", ik, add(i0, mul(const(stride, w), k)), w), t, counter=k) != 0:
            raise NotAccelerable(f"the index of the writes to {a.name} is not linear in the iteration")
        return i0, stride


def _constant(e: Expr, timeout_ms: int, counter: Var | None = None) -> int | None:
    """The one value `e` takes for every valuation of its variables in their types' ranges (`counter`, an
    iteration count, at any k >= 0); None if it takes several, or z3 cannot tell in time."""
    enc = Encoder(None, bitvector=False)
    vs = free_vars(e)
    env = _env(enc, vs)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*_ranges(enc, env, vs - {counter}))
    if counter is not None and counter in vs:
        s.add(env[counter.name] >= 0)
    if check_unpaused(s) != z3.sat:
        return None
    x = enc.expr(e, env)
    value = s.model().eval(x, model_completion=True).as_long()
    s.add(x != value)
    return value if check_unpaused(s) == z3.unsat else None


def fold(e: Expr) -> Expr:
    """Constant folding of WIDE arithmetic (substituting k := 0 or n - 1 leaves `x + 0*c`-like terms)."""
    def node(x: Expr) -> Expr | None:
        if isinstance(x, Binary) and x.op in ("+", "-", "*"):
            a, b = x.lhs, x.rhs
            if isinstance(a, IntConst) and isinstance(b, IntConst):
                v = a.value + b.value if x.op == "+" else a.value - b.value if x.op == "-" else a.value * b.value
                if x.type.contains(v):
                    return IntConst(v, x.type)
            if x.op == "+":
                return add(a, b)
            if x.op == "-":
                return sub(a, b)
            return mul(a, b)
        return None
    return transform(e, node)


def _affine_atom(g: Expr, k: Var) -> bool:
    """`L(k) op 0` for L affine in k (any slope, even symbolic) and op one of < <= > >= ==: the k where it
    holds form an interval, so it holds on all of [0, n) iff at 0 and at n-1 (no solver needed)."""
    if not isinstance(g, Compare) or g.op == "!=" or not isinstance(g.lhs.type, IntType):
        return False
    return linear_in(Binary("-", g.lhs, g.rhs, g.lhs.type), k) is not None


def _flatten(c_: Expr) -> list[Expr]:
    out: list[Expr] = []
    for x in conjuncts(c_):
        if isinstance(x, And):
            out += _flatten(x)
        elif x != TRUE:
            out.append(x)
    return out


def _names(vs) -> str:
    return ", ".join(sorted(v.name for v in vs))


# ----------------------------------------------------------------------------------- the transform
@dataclass
class AccelResult:
    program: Program
    accelerators: dict[Edge, Accelerator]
    notes: list[str]


def accelerate(program: Program, options: AccelOptions = AccelOptions()) -> AccelResult:
    """Add accelerated branches to every loop of `program`, innermost first (see the module docstring)."""
    b = _Builder(program, options)
    forest = analyze_loops(program)
    notes: list[str] = []
    if forest.irreducible:
        return AccelResult(program, {}, ["irreducible control flow: no loop accelerated"])
    done: set[int] = set()
    while True:
        prog = b.program()
        forest = analyze_loops(prog)
        todo = [h for h in forest.order if h not in done]
        if not todo or b.out_of_time():
            if todo:
                notes.append(f"out of time: {len(todo)} loop(s) not accelerated")
            return AccelResult(prog, dict(b.accels), notes)
        h = todo[0]
        done.add(h)
        notes.append(_loop(b, prog, forest, forest.loops[h]))


def _loop(b: _Builder, prog: Program, forest, loop: Loop) -> str:
    h = loop.header
    src = prog.loc_src.get(h)
    head = f"loop L{h}{' (' + str(src) + ')' if src else ''}"
    candidates = loop_paths(prog, forest, loop, b.accels, b.timeout_ms(), b.options.deadline)
    parts = []
    accelerated = 0
    for i in range(CANDIDATES * b.options.max_paths):
        if accelerated == b.options.max_paths:
            break
        try:
            path = next(candidates, None)
        except Exception as exc:       # noqa: BLE001 -- an encoding the path query cannot take: no branch
            parts.append(f"no more paths ({type(exc).__name__}: {exc})")
            break
        if path is None:
            break
        if b.out_of_time():
            parts.append(f"path {i + 1}: out of time")
            break
        what, why = _accelerate_path(b, h, path, f"acc{h}_{i}")
        variants = _valuations(invariant_write_conditions(path), b.timeout_ms()) \
            if isinstance(why, ReadsWhatItWrites) else []
        if variants:
            what = "; ".join(_accelerate_path(b, h, path, f"acc{h}_{i}{chr(97 + j)}", fixed)[0]
                             for j, fixed in enumerate(variants))
        accelerated += why is None or bool(variants)
        parts.append(f"path {i + 1} ({len(path)} edges): {what}")
    if not parts:
        return f"{head}: no path can run twice in a row"
    return f"{head}: " + "; ".join(parts)


# paths asked for per accelerated path wanted (`max_paths`): the path query finds paths in no useful order, and
# the ones a loop spends its iterations on may come after branches that cannot be accelerated (mime7to8's copy
# of two characters a turn came fifth, behind newline branches)
CANDIDATES = 2


MAX_VARIANTS = 4


def _accelerate_path(b: _Builder, h: int, path: tuple[Edge, ...], tag: str,
                     fixed: tuple[tuple[Expr, bool], ...] = ()) -> tuple[str, Exception | None]:
    """Add the accelerated branch of `path` (under the valuation `fixed`) to `b`: what happened, for the notes,
    and why the path was refused (None if it was not)."""
    pa = PathAccelerator(b, h, path, tag, fixed)
    declared = set(b.variables)
    try:
        acc = pa.build()
    except (NotAccelerable, LooproverError, z3.Z3Exception, OutOfTime, ArithmeticError) as why:
        for name in set(b.variables) - declared:      # the refused branch's inputs and temporaries
            del b.variables[name]
        what = str(why) if isinstance(why, NotAccelerable) else f"{type(why).__name__}: {why}"
        return f"not accelerated: {what}", why
    b.accels[acc.edge] = acc
    b.edges.append(acc.edge)
    return acc.describe, None


def _valuations(conds: list[Expr], timeout_ms: int) -> list[tuple[tuple[Expr, bool], ...]]:
    """The satisfiable valuations of `conds` (at most MAX_VARIANTS, fewest true first: those write least)."""
    if not conds or len(conds) > 6:
        return []
    enc = Encoder(None, bitvector=False)
    vs: set[Var] = set()
    for c_ in conds:
        vs |= free_vars(c_)
    env = _env(enc, vs)
    try:
        zs = [enc.expr(c_, env) for c_ in conds]
    except Exception:       # noqa: BLE001 -- a condition the encoder cannot take: no variants
        return []
    out = []
    for bits in sorted(range(1 << len(conds)), key=lambda m: (bin(m).count("1"), m)):
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(*_ranges(enc, env, vs), *[z if bits >> j & 1 else z3.Not(z) for j, z in enumerate(zs)])
        if check_unpaused(s) == z3.sat:
            out.append(tuple((c_, bool(bits >> j & 1)) for j, c_ in enumerate(conds)))
            if len(out) == MAX_VARIANTS:
                break
    return out


class AccelerateTransform(Transform):
    name = "accelerate"
    summary = "under-approximating acceleration (accelerated branches for loop paths)"
    guarantee = Guarantee.UNDER
    Settings = AccelOptions

    def apply(self, program: Program, settings: AccelOptions | None = None) -> Transformed:
        from looprover.transforms.expand import ExpandAccelerated
        result = accelerate(program, settings or AccelOptions())
        return Transformed(result.program, self.guarantee, ExpandAccelerated(result.accelerators),
                           notes=result.notes)

