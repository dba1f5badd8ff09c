"""Termination arguments for one loop: what they are, how they are checked, and how they are found.

An argument is a relation that every step of T2 (`relation.py`: an iteration followed by another one, between
reachable states at the head) satisfies and that admits no infinite chain:

  * at most one iteration: T2 is empty;
  * strict-order transition invariant: `e(x') < e(x) ∧ e(x) ≥ 0` for a linear term e taken from the loop's own
    comparisons (`i < n` gives `n - i`): a single strict order bounded below, well-founded over the integers
    without a separate check (the bound `≥ 0` is what makes it so over mathematical integers);
  * linear ranking function r: the same condition for a synthesised r (`linrank`);
  * lexicographic ranking function (r_1, ..., r_k): each step has an i with r_j(x') ≤ r_j(x) for j < i and
    r_i(x') < r_i(x) ∧ r_i(x) ≥ 0. An infinite chain would make r_1 non-increasing and decrease it, while
    non-negative, infinitely often -- impossible -- so eventually only i ≥ 2 steps remain, and so on;
  * disjunctive transition invariant D = ⋁ (e_i(x') < e_i(x) ∧ e_i(x) ≥ 0): T2 ⊆ D and D ∘ T2 ⊆ D, so D
    contains every pair (x_i, x_j), i < j, of a chain; by Ramsey's theorem an infinite chain would have an
    infinite sub-chain in one disjunct, which is well-founded (Podelski-Rybalchenko).

Every argument is checked by `check_argument` with a fresh solver: the negation of its condition together with
T2 must be unsatisfiable. The search (`ArgumentSearch`) tries the kinds above in order. Ranking functions are
synthesised by counterexample-guided inductive synthesis (algorithms.md C, linrank/lexlinrank): the outer
query asks for a step of T2 that the current candidate does not rank; the inner one, over the recorded steps
(p, q) only, finds integer coefficients that rank all of them -- in [-1, 1] first, then [-10, 10], then
unbounded, at most `MAX_ROUNDS` rounds each (`SCHEDULE`). The integer values of bit-vector variables are used (signed or
unsigned per their C type), so an argument means the same in both encodings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import z3

from looprover.deadline import Deadline
from looprover.errors import GiveUp
from looprover.program.cfa import Assume
from looprover.program.expr import Binary, Cast, Compare, Expr, IntConst, IntType, Not, Unary, Var
from looprover.smt.solver import check, obligation_failure
from looprover.smt.terms import mk_and
from looprover.termination.relation import LoopRelation, State

NONE = "at most one iteration"
STRICT = "strict-order transition invariant"
RANKING = "linear ranking function"
LEX = "lexicographic ranking function"
DISJUNCTIVE = "disjunctive transition invariant"
KINDS = (NONE, STRICT, RANKING, LEX, DISJUNCTIVE)

MAX_ROUNDS = 30                     # CEGIS rounds per (components, coefficient range)
# (components, |coefficient| bound or None): small coefficients first, and a lexicographic function with small
# coefficients before a linear one with large coefficients
SCHEDULE = ((1, 1), (1, 10), (2, 1), (2, 10), (3, 1), (3, 10), (1, None), (2, None), (3, None))


@dataclass(frozen=True)
class LinearTerm:
    """Σ coefficient·variable + const over the integer values of program variables (by IR name)."""
    coeffs: tuple[tuple[str, int], ...]
    const: int = 0

    def z3(self, rel: LoopRelation, env: State) -> z3.ExprRef:
        """The term's value over a state: an Int in integer mode; in bit-vector mode a bit-vector wide enough
        for the exact value (the variables sign- or zero-extended per their C type), compared as signed --
        z3's `<`, `>=` on bit-vectors are the signed comparisons, so callers use the same operators."""
        items = [(rel.sys.program.variables[n].var, c) for n, c in self.coeffs if c]
        terms = [env[v.name] for v, _ in items]
        if not any(z3.is_bv(t) for t in terms):
            out: z3.ExprRef = z3.IntVal(self.const)
            for (_, c), t in zip(items, terms):
                out = out + c * t
            return out
        bits = max(v.type.bits for v, _ in items)
        width = self.width(bits)
        out = z3.BitVecVal(self.const, width)
        for (v, c), t in zip(items, terms):
            ext = (z3.SignExt if v.type.signed else z3.ZeroExt)(width - v.type.bits, t)
            out = out + z3.BitVecVal(c, width) * ext
        return out

    def width(self, bits: int) -> int:
        """Bits that hold Σ c·v + const exactly for values of at most `bits` bits (and the sign)."""
        return bits + 2 + (sum(abs(c) for _, c in self.coeffs) + 1).bit_length() + abs(self.const).bit_length()

    def value(self, state: Mapping[str, int]) -> int:
        """The term's value in a concrete state (the interpreter's values are the integer values)."""
        return sum(c * int(state[n]) for n, c in self.coeffs) + self.const

    def text(self, names: Mapping[str, str] | None = None) -> str:
        names = names or {}
        parts: list[tuple[int, str]] = []
        for n, c in self.coeffs:
            if c:
                parts.append((c, ("" if abs(c) == 1 else f"{abs(c)}*") + names.get(n, n)))
        if self.const or not parts:
            parts.append((self.const, str(abs(self.const))))
        parts.sort(key=lambda p: p[0] < 0)          # positive parts first: `255 - x`, not `-x + 255`
        s = " ".join(("- " if c < 0 else "+ ") + t for c, t in parts)
        return s[2:] if s.startswith("+ ") else "-" + s[2:]


@dataclass(frozen=True)
class LoopArgument:
    """A loop's termination argument: its kind, its terms, and the summary of the nested loops it relies on."""
    header: int
    kind: str
    terms: tuple[LinearTerm, ...] = ()
    summary: tuple[tuple[int, Expr], ...] = ()
    where: str = ""

    def text(self, names: Mapping[str, str] | None = None) -> str:
        ts = [t.text(names) for t in self.terms]
        if self.kind == NONE:
            return "the loop body cannot run twice in a row"
        if self.kind in (STRICT, RANKING):
            return f"{ts[0]} decreases and stays >= 0"
        if self.kind == LEX:
            return "(" + ", ".join(ts) + ") decreases lexicographically, each component >= 0 when it decreases"
        return " or ".join(f"[{t} decreases, >= 0]" for t in ts) + " holds between any two iterations"

    def to_json(self, names: Mapping[str, str] | None = None) -> dict:
        def rel(e: Expr) -> str:
            return str(e)
        return {"location": self.where, "header": self.header, "kind": self.kind,
                "argument": self.text(names), "terms": [t.text(names) for t in self.terms],
                "inner_summary": [f"L{n}: {rel(e)}" for n, e in self.summary]}


# ------------------------------------------------------------------------------------------ checking
def bounded_decrease(t: LinearTerm, rel: LoopRelation, x: State, x1: State) -> z3.BoolRef:
    a = t.z3(rel, x)
    return z3.And(a > t.z3(rel, x1), a >= 0)


def condition(kind: str, terms: Sequence[LinearTerm], rel: LoopRelation, x: State, x1: State) -> z3.BoolRef:
    """What every step x -> x1 of T2 must satisfy for an argument of `kind`."""
    if kind == NONE:
        return z3.BoolVal(False)
    if kind in (STRICT, RANKING):
        return bounded_decrease(terms[0], rel, x, x1)
    if kind == LEX:
        alts = []
        for i, t in enumerate(terms):
            alts.append(z3.And(*[u.z3(rel, x) >= u.z3(rel, x1) for u in terms[:i]],
                               bounded_decrease(t, rel, x, x1)))
        return z3.Or(*alts)
    if kind == DISJUNCTIVE:
        return z3.Or(*[bounded_decrease(t, rel, x, x1) for t in terms])
    raise ValueError(kind)


def _unsat(rel: LoopRelation, deadline: Deadline, what: str, *fs: z3.BoolRef) -> str | None:
    return obligation_failure(rel.sys.enc.solver(deadline), what, *fs)


def check_argument(rel: LoopRelation, arg: LoopArgument, deadline: Deadline) -> str | None:
    """Why `arg` does not prove that `rel`'s loop has no infinite chain of iterations (None if it does)."""
    if arg.header != rel.head:
        return f"the argument is for L{arg.header}, not L{rel.head}"
    if arg.kind not in KINDS:
        return f"unknown kind of argument {arg.kind!r}"
    if (arg.kind == NONE) != (not arg.terms) or (arg.kind in (STRICT, RANKING) and len(arg.terms) != 1):
        return f"a {arg.kind} with {len(arg.terms)} terms"
    info = rel.sys.program.variables
    for t in arg.terms:
        for n, _ in t.coeffs:
            if n not in info or not isinstance(info[n].var.type, IntType):
                return f"the term {t.text()} uses {n}, which is not an integer variable of the program"
    why = rel.check_summary(arg.summary, deadline)
    if why is not None:
        return why
    x, x1, x2 = rel.state("cx"), rel.state("cx1"), rel.state("cx2")
    t2 = rel.two_steps(arg.summary, x, x1, x2, "chk")
    why = _unsat(rel, deadline, f"the {arg.kind} on every pair of iterations", t2,
                 z3.Not(condition(arg.kind, arg.terms, rel, x, x1)))
    if why is not None or arg.kind != DISJUNCTIVE:
        return why
    # D ∘ T2 ⊆ D, from a reachable first state
    y, y1, y2 = rel.state("cy"), rel.state("cy1"), rel.state("cy2")
    d = condition(DISJUNCTIVE, arg.terms, rel, y, y1)
    return _unsat(rel, deadline, "the composition of the disjunctive transition invariant with an iteration",
                  rel.inv(rel.head, y), d, rel.two_steps(arg.summary, y1, y2, rel.state("cy3"), "chk2"),
                  z3.Not(condition(DISJUNCTIVE, arg.terms, rel, y, y2)))


# ------------------------------------------------------------------------------------------ search
def linear_form(e: Expr, allowed: set[str]) -> tuple[dict[str, int], int] | None:
    """`e` as Σ c·v + k over the integer values of the variables in `allowed`, if it is such a form (casts are
    read as the identity: only a candidate, the check decides)."""
    if isinstance(e, IntConst):
        return {}, e.value
    if isinstance(e, Var):
        return ({e.name: 1}, 0) if e.name in allowed else None
    if isinstance(e, Cast) and isinstance(e.type, IntType):
        return linear_form(e.arg, allowed)
    if isinstance(e, Unary) and e.op == "-":
        got = linear_form(e.arg, allowed)
        return None if got is None else ({n: -c for n, c in got[0].items()}, -got[1])
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        a, b = linear_form(e.lhs, allowed), linear_form(e.rhs, allowed)
        if a is None or b is None:
            return None
        if e.op == "*":
            if a[0] and b[0]:
                return None
            (lin, k), s = (a, b[1]) if not b[0] else (b, a[1])
            return {n: c * s for n, c in lin.items()}, k * s
        sign = 1 if e.op == "+" else -1
        out = dict(a[0])
        for n, c in b[0].items():
            out[n] = out.get(n, 0) + sign * c
        return out, a[1] + sign * b[1]
    return None


def _term(lin: dict[str, int], k: int) -> LinearTerm:
    return LinearTerm(tuple(sorted((n, c) for n, c in lin.items() if c)), k)


def guard_terms(rel: LoopRelation) -> list[LinearTerm]:
    """Strict-order candidates from the loop's comparisons: for `a < b`, `a <= b` (and the reverse), the terms
    b - a and a - b; then ±v for each ranking variable."""
    allowed = {v.name for v in rel.rank_vars()}
    out: list[LinearTerm] = []
    for e in rel.loop.body_edges + rel.loop.exit_edges:
        for st in e.stmts:
            if not isinstance(st, Assume):
                continue
            c = st.cond.arg if isinstance(st.cond, Not) else st.cond
            if not isinstance(c, Compare) or c.op not in ("<", "<=", ">", ">=") or \
                    not isinstance(c.lhs.type, IntType):
                continue
            a, b = linear_form(c.lhs, allowed), linear_form(c.rhs, allowed)
            if a is None or b is None:
                continue
            diff = dict(b[0])
            for n, k in a[0].items():
                diff[n] = diff.get(n, 0) - k
            for sign in (1, -1):
                t = _term({n: sign * k for n, k in diff.items()}, sign * (b[1] - a[1]))
                if t.coeffs and t not in out:
                    out.append(t)
    for v in rel.rank_vars():
        for sign in (1, -1):
            t = LinearTerm(((v.name, sign),), 0)
            if t not in out:
                out.append(t)
    return out


@dataclass
class SearchStats:
    rounds: int = 0
    pairs: int = 0
    tried: list[str] = field(default_factory=list)


class ArgumentSearch:
    """Finds an argument for one loop (the kinds in order, see the module docstring)."""

    def __init__(self, rel: LoopRelation, summary: Sequence[tuple[int, Expr]], deadline: Deadline,
                 max_lex: int = 3, where: str = "", every_iteration: bool = False):
        """`every_iteration`: rank every iteration between reachable states, the last one included, instead of
        those followed by another one (T2): what a transition invariant over all pairs of visits needs (the
        2.1 witness, `witness/termination_witness.py`); a disjunctive argument is not searched then."""
        self.rel, self.summary, self.deadline = rel, tuple(summary), deadline
        self.max_lex, self.where, self.every_iteration = max_lex, where, every_iteration
        self.x, self.x1, x2 = rel.state("sx"), rel.state("sx1"), rel.state("sx2")
        self.t2 = mk_and(rel.inv(rel.head, self.x), rel.relation(self.summary, self.x, self.x1, "srch"),
                         rel.inv(rel.head, self.x1)) if every_iteration else \
            rel.two_steps(self.summary, self.x, self.x1, x2, "srch")
        self.s = rel.sys.enc.solver(deadline).z3
        self.s.add(self.t2)
        self.vars = rel.rank_vars()
        self.pairs: list[tuple[list[int], list[int]]] = []
        self.nogoods: list[tuple[int, tuple]] = []     # (components, coefficient prefix) with no bound
        self.stats = SearchStats()
        self._lits = 0

    def arg(self, kind: str, terms: Sequence[LinearTerm] = ()) -> LoopArgument:
        return LoopArgument(self.rel.head, kind, tuple(terms), self.summary, self.where)

    def run(self) -> LoopArgument | None:
        if check(self.s, self.deadline) == z3.unsat:
            return self.arg(NONE)
        cands = guard_terms(self.rel)
        self.stats.tried.append("strict orders")
        for t in cands:
            if self._counterexample(STRICT, [t]) is None:
                return self.arg(STRICT, [t])
        if not self.vars:
            return None
        for k, bound in SCHEDULE:
            if k > self.max_lex:
                continue
            self.stats.tried.append(f"{'linrank' if k == 1 else f'lexlinrank({k})'}"
                                    f"[{'|c|<=' + str(bound) if bound else 'any c'}]")
            terms = self._cegis(k, bound)
            if terms is not None:
                return self.arg(RANKING if k == 1 else LEX, terms)
        if len(cands) > 1 and not self.every_iteration:
            self.stats.tried.append("disjunctive")
            a = self.arg(DISJUNCTIVE, cands)
            if check_argument(self.rel, a, self.deadline) is None:
                return a
        return None

    # ------------------------------------------------------------------ CEGIS
    def _values(self, m: z3.ModelRef) -> tuple[list[int], list[int]]:
        return [self.rel.value(m, self.x, v) for v in self.vars], [self.rel.value(m, self.x1, v) for v in self.vars]

    def _counterexample(self, kind: str, terms: Sequence[LinearTerm]) -> tuple[list[int], list[int]] | None:
        """A step of T2 the candidate does not satisfy (as integer values of the ranking variables), or None.

        When the step fails only because a decreasing component is below 0, the step returned is one where
        that component is smallest (`_lowest`): a model on the boundary would move the inner solver's constant
        by 1 per round. If the component is unbounded below, its coefficients are excluded from later inner
        queries (that only narrows the search)."""
        self._lits += 1
        lit = z3.Bool(f"!rank{self._lits}")
        self.s.add(z3.Implies(lit, z3.Not(condition(kind, terms, self.rel, self.x, self.x1))))
        if check(self.s, self.deadline, lit) == z3.unsat:
            return None
        m = self.s.model()
        pair = self._values(m)
        if kind not in (RANKING, LEX):
            return pair
        x, x1 = self.x, self.x1
        for i, t in enumerate(terms):
            prefix = [u.z3(self.rel, x) >= u.z3(self.rel, x1) for u in terms[:i]]
            dec = t.z3(self.rel, x) > t.z3(self.rel, x1)
            if not z3.is_true(m.eval(z3.And(*prefix, dec), model_completion=True)):
                continue
            # the step's alternative i fails on the bound only: the lowest value of t on such steps
            low = self._lowest(t, z3.And(*prefix, dec), m)
            if low is None:
                self.nogoods.append((len(terms), tuple(tuple(u.coeffs) for u in terms[:i + 1])))
            else:
                pair = low
            break
        return pair

    def _lowest(self, t: LinearTerm, where: z3.BoolRef, m: z3.ModelRef) -> tuple[list[int], list[int]] | None:
        """A step of T2 satisfying `where` with the lowest value of t(x), or None when t(x) is unbounded below
        there. Integer mode: z3's optimiser (capped; linear arithmetic, fast, and it says "unbounded").
        Bit-vector mode: galloping down from the model `m` with the incremental solver, then halving the step
        (the optimiser took seconds per call on bit-vectors; the values are bounded there)."""
        tx = t.z3(self.rel, self.x)
        if not z3.is_bv(tx):
            opt = z3.Optimize()
            opt.set("timeout", self.deadline.ms(cap=2.0))
            opt.add(self.t2, where)
            h = opt.minimize(tx)
            if opt.check() != z3.sat:
                return self._values(m)
            if not z3.is_int_value(h.value()):
                return None
            return self._values(opt.model())
        best = m.eval(tx, model_completion=True)
        best_v = best.as_signed_long() if z3.is_bv_value(best) else best.as_long()
        pair = self._values(m)
        step = 1
        for _ in range(128):
            if step > 1 << 40:
                return None
            self._lits += 1
            lit = z3.Bool(f"!low{self._lits}")
            target = best_v - step
            self.s.add(z3.Implies(lit, z3.And(where, tx <= target)))
            if check(self.s, self.deadline, lit) == z3.sat:
                m2 = self.s.model()
                got = m2.eval(tx, model_completion=True)
                best_v = got.as_signed_long() if z3.is_bv_value(got) else got.as_long()
                pair = self._values(m2)
                step *= 2
            elif step == 1:
                break
            else:
                step = 1
        return pair

    def _cegis(self, k: int, bound: int | None) -> list[LinearTerm] | None:
        kind = RANKING if k == 1 else LEX
        inner = _Inner(self.vars, k, bound, self.deadline)
        for p in self.pairs:
            inner.add_pair(p)
        seen_nogoods = 0
        for _ in range(MAX_ROUNDS):
            self.deadline.check()
            for nk, prefix in self.nogoods[seen_nogoods:]:
                if nk == k:
                    inner.exclude(prefix)
            seen_nogoods = len(self.nogoods)
            terms = inner.solve()
            if terms is None:
                return None
            self.stats.rounds += 1
            pair = self._counterexample(kind, terms)
            if pair is None:
                return terms
            self.pairs.append(pair)
            inner.add_pair(pair)
            self.stats.pairs = len(self.pairs)
        return None


class _Inner:
    """The inner CEGIS problem for k components with |coefficients| ≤ bound: integer coefficients c_i and
    constants d_i that rank every recorded pair (p, q) lexicographically (some i with c_j·p ≥ c_j·q for j < i,
    c_i·p ≥ c_i·q + 1 and c_i·p + d_i ≥ 0). One incremental solver per attempt; pairs are added as found."""

    def __init__(self, vars_: Sequence[Var], k: int, bound: int | None, deadline: Deadline):
        self.vars, self.k, self.deadline = list(vars_), k, deadline
        n = len(self.vars)
        self.cs = [[z3.Int(f"c{i}_{j}") for j in range(n)] for i in range(k)]
        self.ds = [z3.Int(f"d{i}") for i in range(k)]
        self.s = z3.Solver()
        if bound is not None:
            self.s.add(*[z3.And(c >= -bound, c <= bound) for row in self.cs for c in row])

    def _lin(self, i: int, point: list[int]) -> z3.ArithRef:
        terms = [c * v for c, v in zip(self.cs[i], point) if v]
        return z3.Sum(terms) if terms else z3.IntVal(0)

    def add_pair(self, pair: tuple[list[int], list[int]]) -> None:
        p, q = pair
        lp = [self._lin(i, p) for i in range(self.k)]
        lq = [self._lin(i, q) for i in range(self.k)]
        alts = [z3.And(*[lp[j] >= lq[j] for j in range(i)], lp[i] >= lq[i] + 1, lp[i] + self.ds[i] >= 0)
                for i in range(self.k)]
        self.s.add(z3.Or(*alts) if len(alts) > 1 else alts[0])

    def exclude(self, prefix: tuple) -> None:
        same = []
        for i, coeffs in enumerate(prefix):
            want = dict(coeffs)
            same += [self.cs[i][j] == want.get(v.name, 0) for j, v in enumerate(self.vars)]
        self.s.add(z3.Not(z3.And(*same)))

    def solve(self) -> list[LinearTerm] | None:
        try:
            if check(self.s, self.deadline, cap=5.0) != z3.sat:
                return None
        except GiveUp:
            return None
        m = self.s.model()
        out = []
        for i in range(self.k):
            coeffs = [(v.name, m.eval(c, model_completion=True).as_long()) for v, c in zip(self.vars, self.cs[i])]
            out.append(LinearTerm(tuple((nm, c) for nm, c in coeffs if c),
                                  m.eval(self.ds[i], model_completion=True).as_long()))
        return out
