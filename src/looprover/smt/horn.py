"""Linear Horn clauses over z3 terms: solved by z3's Spacer, solutions checked without it.

A `HornSystem` has relations (any hashable key, e.g. a cutpoint) with formal parameters (z3 constants), and
clauses `body atoms ∧ constraint → head atom` (head None: `→ false`, a query). Every constant of a clause that
is not a relation is universally quantified in that clause. Built from a program by `smt.systems.cpg_horn`.

* `spacer(system, deadline, ...)` hands the clauses to z3's Spacer (`z3.Fixedpoint`, engine `spacer`) in a
  fresh z3 context, so the answer depends on the clauses alone, not on what the caller's context has seen
  (Spacer's choices follow term ids). Safe: the solution per relation, read from `get_answer()` and brought back
  as a formula over the relation's parameters. Unsafe: the clauses along Spacer's derivation
  (`get_rule_names_along_trace`), from the fact to the query. Spacer's preprocessing merges clauses (it inlines
  relations, and its subsumption checker renames the clauses it rewrites to `<null>`), after which a derivation
  skips clauses: a caller that needs the whole path checks it and asks again with `merge=False`, which turns
  those passes off.
* `HornSystem.check_solution(interp, deadline)` is the independent check of a solution: for every clause,
  `constraint ∧ body instances ∧ ¬head instance` is unsat in a fresh plain solver. It is all a proof needs:
  every fact implies its head, every rule preserves the interpretation, and no query is satisfiable.
* `relation_body` reads one relation's definition out of Spacer's answer (shared with `smt.interpolate`,
  which drives Spacer for interpolation).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping, Sequence

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.smt.mbp import free_constants, vocabulary
from looprover.smt.solver import check, timed_out
from looprover.smt.terms import mk_not

Rel = Hashable


@dataclass(frozen=True)
class Atom:
    rel: Rel
    args: tuple[z3.ExprRef, ...]


@dataclass(frozen=True)
class Clause:
    name: str                      # unique within the system (Spacer reports derivations by clause name)
    body: tuple[Atom, ...]
    constraint: z3.BoolRef
    head: Atom | None              # None: a query (`→ false`)
    tag: Any = None                # what the clause stands for (e.g. a CPG edge)


@dataclass
class HornSystem:
    params: dict[Rel, list[z3.ExprRef]]      # per relation its formal parameters
    clauses: list[Clause]
    names: dict[Rel, str] = field(default_factory=dict)   # relation names for z3 (default: `rel<i>`)

    def __post_init__(self) -> None:
        for i, r in enumerate(self.params):
            self.names.setdefault(r, f"rel{i}")
        assert len(set(self.names.values())) == len(self.names), "relation names must be unique"
        assert len({c.name for c in self.clauses}) == len(self.clauses), "clause names must be unique"

    def instance(self, interp: Mapping[Rel, z3.BoolRef], atom: Atom) -> z3.BoolRef:
        """The interpretation of `atom.rel` at the atom's arguments."""
        f = interp[atom.rel]
        ps = self.params[atom.rel]
        return z3.substitute(f, *zip(ps, atom.args)) if ps else f

    def check_solution(self, interp: Mapping[Rel, z3.BoolRef], deadline: Deadline) -> str | None:
        """None if `interp` (a formula over its parameters per relation) satisfies every clause, else why not.
        Each clause is checked in a fresh solver; `unknown` is a failure (OutOfTime past the deadline)."""
        for r, ps in self.params.items():
            if r not in interp:
                return f"no interpretation of {self.names[r]}"
            voc = vocabulary(interp[r])
            allowed = {p.get_id() for p in ps}
            extra = [c for c in voc.constants if c.get_id() not in allowed]
            if extra or voc.functions:
                return f"the interpretation of {self.names[r]} is not over its parameters " \
                       f"({', '.join(map(str, extra or voc.functions))})"
        for c in self.clauses:
            s = z3.Solver()
            s.set("random_seed", 0)
            s.add(c.constraint, *(self.instance(interp, a) for a in c.body))
            if c.head is not None:
                s.add(mk_not(self.instance(interp, c.head)))
            try:
                r = check(s, deadline)
            except GiveUp as err:
                return f"clause {c.name}: {err}"
            if r != z3.unsat:
                return f"clause {c.name} does not hold (a counterexample to it: {s.model()})"
        return None


def inductive_subset(system: HornSystem, candidates: Mapping[Rel, Sequence[z3.BoolRef]], deadline: Deadline
                     ) -> dict[Rel, list[z3.BoolRef]]:
    """The largest subset of `candidates` (per relation, formulas over its parameters) that every fact and rule
    preserves (Houdini on the clauses): a partial solution, and a whole one when the queries fail too.

    Why on the clauses, not on the program's transition system: the clauses project each relation onto the
    variables live there, so a candidate the transition system keeps with the help of a dead variable's bound
    may fail a clause, and a solution must be one of the very clauses Spacer would solve. Each round
    asks per clause for a model of its body lemmas, its constraint and a failing head lemma, and drops every
    head lemma that model falsifies. OutOfTime past the deadline, GiveUp on a solver's unknown."""
    alive = {r: list(candidates.get(r, ())) for r in system.params}
    changed = True
    while changed:
        changed = False
        for c in system.clauses:
            if c.head is None or not alive[c.head.rel]:
                continue
            s = z3.Solver()
            s.add(c.constraint, *(system.instance({a.rel: z3.And(alive[a.rel])}, a) for a in c.body))
            heads = [(lemma, system.instance({c.head.rel: lemma}, c.head)) for lemma in alive[c.head.rel]]
            while heads:
                s.push()
                s.add(z3.Not(z3.And([h for _, h in heads])))
                r = check(s, deadline)
                m = s.model() if r == z3.sat else None
                s.pop()
                if m is None:
                    break
                bad = {i for i, (_, h) in enumerate(heads) if z3.is_false(m.eval(h, model_completion=True))}
                assert bad, "a model of the negated conjunction falsifies one of its conjuncts"
                heads = [x for i, x in enumerate(heads) if i not in bad]
                alive[c.head.rel] = [lemma for lemma, _ in heads]
                changed = True
    return alive


# ------------------------------------------------------------------------------------------------- Spacer
_STATS = ("SPACER max depth", "SPACER num lemmas", "SPACER num invariants", "SPACER num queries", "time.spacer.solve")


@dataclass
class SpacerAnswer:
    status: str                                          # "safe" | "unsafe" | "unknown"
    interp: dict[Rel, z3.BoolRef] | None = None          # safe: the solution (in the caller's context)
    trace: list[Clause] | None = None                    # unsafe: clauses of the derivation, fact first
    reason: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def spacer(system: HornSystem, deadline: Deadline, *, global_guidance: bool = False, seed: int = 0,
           merge: bool = True) -> SpacerAnswer:
    """Solve `system` with z3's Spacer (see the module docstring). OutOfTime when the deadline passes."""
    home = system.clauses[0].constraint.ctx if system.clauses else z3.main_ctx()
    ctx = z3.Context()
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("spacer.random_seed", seed)
    if global_guidance:
        fp.set("spacer.global", True)
    if not merge:
        fp.set("xform.inline_eager", False, "xform.inline_linear", False, "xform.subsumption_checker", False)
    decls = {r: z3.Function(system.names[r], *(p.sort().translate(ctx) for p in ps), z3.BoolSort(ctx))
             for r, ps in system.params.items()}
    query = z3.Function("query!", z3.BoolSort(ctx))
    fp.register_relation(*decls.values(), query)
    by_name = {c.name: c for c in system.clauses}

    def atom(a: Atom) -> z3.BoolRef:
        return decls[a.rel](*(t.translate(ctx) for t in a.args))
    for c in system.clauses:
        atoms = (*c.body, c.head) if c.head is not None else c.body
        variables = free_constants(c.constraint, *(t for a in atoms for t in a.args))
        if variables:
            fp.declare_var(*(v.translate(ctx) for v in variables))
        head = query() if c.head is None else atom(c.head)
        fp.rule(head, [*(atom(a) for a in c.body), c.constraint.translate(ctx)], c.name)
    fp.set("timeout", deadline.ms())
    try:
        r = fp.query(query())
    except z3.Z3Exception as exc:     # the timer cancels Spacer with an exception rather than `unknown`
        if deadline.expired() or timed_out(str(exc)):
            raise OutOfTime() from exc
        raise
    st = fp.statistics()
    stats = {k: st.get_key_value(k) for k in st.keys() if k in _STATS}
    if r == z3.unknown:
        why = fp.reason_unknown()
        if deadline.expired() or timed_out(why):
            raise OutOfTime()
        return SpacerAnswer("unknown", reason=f"unknown ({why})", stats=stats)
    if r == z3.sat:
        names = fp.get_rule_names_along_trace()
        trace = [by_name[n] for n in reversed(names) if n in by_name]
        return SpacerAnswer("unsafe", trace=trace, reason="the query is derivable", stats=stats)
    answer = fp.get_answer()
    interp: dict[Rel, z3.BoolRef] = {}
    for r, d in decls.items():
        ps = [p.translate(ctx) for p in system.params[r]]
        body = relation_body(answer, d, ps)
        if body is None:      # not in the answer: Spacer's lemmas at the infinity level (`true` without any)
            cover = fp.get_cover_delta(-1, d)
            body = z3.substitute_vars(cover, *ps) if ps else cover
        interp[r] = body.translate(home)
    return SpacerAnswer("safe", interp=interp, reason="the clauses have a solution", stats=stats)


def relation_body(answer: z3.ExprRef, rel: z3.FuncDeclRef, args: Sequence[z3.ExprRef]) -> z3.BoolRef | None:
    """The body of `rel` in Spacer's answer `And(..., ForAll(vs, rel(vs) == body), ...)`, over `args`."""
    todo = [answer]
    while todo:
        t = todo.pop()
        if z3.is_and(t):
            todo.extend(t.children())
            continue
        n = 0
        if z3.is_quantifier(t):
            if not t.is_forall():
                continue
            n, t = t.num_vars(), t.body()
        if z3.is_app(t) and t.decl() == rel:
            head, body = t, z3.BoolVal(True, t.ctx)
        elif z3.is_not(t) and z3.is_app(t.arg(0)) and t.arg(0).decl() == rel:
            head, body = t.arg(0), z3.BoolVal(False, t.ctx)
        elif z3.is_eq(t) and z3.is_app(t.arg(0)) and t.arg(0).decl() == rel:
            head, body = t.arg(0), t.arg(1)
        else:
            continue
        subst: list[z3.ExprRef | None] = [None] * n
        for k, a in enumerate(head.children()):
            if not z3.is_var(a) or subst[z3.get_var_index(a)] is not None:
                return None
            subst[z3.get_var_index(a)] = args[k]
        if any(v is None for v in subst):
            return None
        return z3.substitute_vars(body, *subst) if n else body
    return None
