"""Model-based projection (MBP) and exact quantifier elimination over z3 terms (LIA/LRA, Booleans).

Why both: TPA needs a *cheap under-approximation* of `∃v. F` that still contains a given model (to build truly
reachable midpoints and targets, design/algorithms.md B2) -- that is MBP, a single call per model. Witnesses and
aux-variable elimination need the *exact* `∃v. F` -- that is QE, which can be much more expensive.

- `project(F, model, keep=... | eliminate=...)` returns R over the kept symbols with `model ⊨ R` and
  `R ⇒ ∃eliminated. F`. It projects a convex implicant of F under the model (disequalities split by the model)
  with z3's `Z3_qe_model_project` (`ModelRef.project`): projecting F itself with `distinct` in it gave a
  different answer per model, so enumerating projections never terminated. Integer projection introduces
  divisibility atoms such as `(1 + y) % 2 == 0`. Variables z3 cannot eliminate (e.g. under non-linear terms)
  are replaced by their model values, which keeps both properties.
- `qe(F, eliminate)` returns R with `R ⇔ ∃eliminated. F`, quantifier-free, trying z3 tactics `qe2` → `qe` →
  `qe_rec` (each with a share of the time), then `mbp_enumerate`. The result is exact because these tactics
  are equivalence-preserving goal transformers (and the enumeration is exhaustive); we only accept an answer
  that is quantifier-free and free of the eliminated symbols. `eliminate_quantifiers` does the same for a
  formula that already contains quantifiers. Both return by their `Deadline`: all but the first tactic run in
  a child process killed at the deadline (smt/tactics.py: some z3 QE code never checks its limit).
- `implicant(F, model)` is the model-guided cube extraction shared with `interpolate.py`; `vocabulary` /
  `free_constants` are the (C-level, fast) vocabulary walks.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import z3
from z3 import z3 as _z3  # _to_expr_ref: wraps a raw AST (not re-exported by the package)
from z3 import z3core as _C

from looprover.deadline import Deadline
from looprover.smt.terms import all_of, conjuncts, distinct_asts
from looprover.smt.tactics import apply as tactics_apply
from looprover.smt.tactics import run_killable
from looprover.smt.solver import plain_solver

__all__ = ["ModelValues", "QEError", "Vocabulary", "eliminate_definitions", "eliminate_quantifiers", "free_constants", "implicant",
           "ite_depth", "mbp_enumerate", "project", "qe", "vocabulary"]


class QEError(RuntimeError):
    """No QE tactic produced a quantifier-free equivalent within the time limit."""


# --------------------------------------------------------------------------------------------------------------------
# vocabulary helpers

@dataclass
class Vocabulary:
    constants: list[z3.ExprRef]          # uninterpreted constants, first-seen order
    functions: list[z3.FuncDeclRef]      # uninterpreted function symbols of arity > 0
    quantified: bool                     # a quantifier occurs


def vocabulary(*formulas: z3.ExprRef) -> Vocabulary:
    """One walk over the formulas' DAG collecting what the engines ask about their vocabulary.

    Walks the raw C-level ASTs (`terms.distinct_asts`): creating a Python wrapper per node made these walks a
    third of the time of a TPA run on small problems (measured with cProfile).
    """
    consts: dict[int, int] = {}
    funcs: dict[int, object] = {}
    quantified = False
    ctx = formulas[0].ctx if formulas else z3.main_ctx()
    ref = ctx.ref()
    for a in distinct_asts(*formulas):
        kind = _C.Z3_get_ast_kind(ref, a)
        if kind == z3.Z3_APP_AST:
            d = _C.Z3_get_app_decl(ref, a)
            if _C.Z3_get_decl_kind(ref, d) == z3.Z3_OP_UNINTERPRETED:
                if _C.Z3_get_app_num_args(ref, a) == 0:
                    consts.setdefault(_C.Z3_get_ast_id(ref, a), a)
                else:
                    funcs.setdefault(_C.Z3_get_ast_id(ref, _C.Z3_func_decl_to_ast(ref, d)), d)
        elif kind == z3.Z3_QUANTIFIER_AST:
            quantified = True
    return Vocabulary([_z3._to_expr_ref(a, ctx) for a in consts.values()],
                      [z3.FuncDeclRef(d, ctx) for d in funcs.values()], quantified)


def free_constants(*formulas: z3.ExprRef) -> list[z3.ExprRef]:
    """Uninterpreted constants occurring in the formulas, each once, in first-seen (deterministic) order.

    Bound variables of quantifiers are `Var`s in z3, not constants, so they are never reported.
    """
    return vocabulary(*formulas).constants


def uninterpreted_functions(*formulas: z3.ExprRef) -> list[z3.FuncDeclRef]:
    """Uninterpreted function symbols of arity > 0 (we support none of them, but callers want to know)."""
    return vocabulary(*formulas).functions


def has_quantifier(f: z3.ExprRef) -> bool:
    return vocabulary(f).quantified


def ite_depth(f: z3.ExprRef) -> int:
    """The largest number of term-level if-then-elses nested in one another (through arithmetic) in f.

    Why: z3's own projection (`ModelRef.project`, no time limit) is exponential in this depth and cannot be
    interrupted -- measured on chained `y += 3u` wraps: 1 ms at depth 10, 46 ms at 12, 2 s at 16 -- while it
    is fast for many side-by-side ites (17 ms for 32). A raw-AST walk, linear in the DAG.
    """
    ctx = f.ctx
    ref = ctx.ref()
    depth: dict[int, int] = {}
    stack = [(f.as_ast(), False)]
    while stack:
        a, ready = stack.pop()
        i = _C.Z3_get_ast_id(ref, a)
        if i in depth:
            continue
        if _C.Z3_get_ast_kind(ref, a) != z3.Z3_APP_AST:
            depth[i] = 0
            continue
        kids = [_C.Z3_get_app_arg(ref, a, j) for j in range(_C.Z3_get_app_num_args(ref, a))]
        if not ready:
            stack.append((a, True))
            stack.extend((k, False) for k in kids if _C.Z3_get_ast_id(ref, k) not in depth)
            continue
        d = max((depth[_C.Z3_get_ast_id(ref, k)] for k in kids), default=0)
        is_term_ite = (_C.Z3_get_decl_kind(ref, _C.Z3_get_app_decl(ref, a)) == z3.Z3_OP_ITE
                       and _C.Z3_get_sort_kind(ref, _C.Z3_get_sort(ref, a)) != z3.Z3_BOOL_SORT)
        depth[i] = d + 1 if is_term_ite else d
    return depth[_C.Z3_get_ast_id(ref, f.as_ast())]


def _ids(vs: Iterable[z3.ExprRef]) -> set[int]:
    return {v.get_id() for v in vs}


def _split_vars(formula: z3.ExprRef, keep: Sequence[z3.ExprRef] | None,
                eliminate: Sequence[z3.ExprRef] | None) -> list[z3.ExprRef]:
    """The constants to eliminate, from exactly one of `keep` / `eliminate`."""
    if (keep is None) == (eliminate is None):
        raise ValueError("give exactly one of keep= or eliminate=")
    if eliminate is not None:
        for v in eliminate:
            if not (z3.is_const(v) and v.decl().kind() == z3.Z3_OP_UNINTERPRETED):
                raise ValueError(f"can only eliminate uninterpreted constants, not {v}")
        present = _ids(free_constants(formula))
        return [v for v in eliminate if v.get_id() in present]
    kept = _ids(keep)
    return [c for c in free_constants(formula) if c.get_id() not in kept]


# --------------------------------------------------------------------------------------------------------------------
# implicants: a cube of literals, true in a model, that implies the formula

class ModelValues:
    """Truth values in a model, cached per term. The cache keeps each term alive: z3 recycles the ids of freed
    terms, so caching a temporary (e.g. `a < b` built on the fly) by id alone returned stale values."""

    def __init__(self, m: z3.ModelRef):
        self.m = m
        self.cache: dict[int, tuple[z3.ExprRef, bool]] = {}

    def __call__(self, t: z3.BoolRef) -> bool:
        tid = t.get_id()
        hit = self.cache.get(tid)
        if hit is None:
            hit = (t, z3.is_true(self.m.eval(t, model_completion=True)))
            self.cache[tid] = hit
        return hit[1]


def _kind(t: z3.ExprRef) -> int | None:
    return t.decl().kind() if z3.is_app(t) else None


def _resolve_ites(t: z3.ExprRef, val: ModelValues, memo: dict[int, tuple[z3.ExprRef, z3.ExprRef]]
                  ) -> tuple[z3.ExprRef, list[z3.BoolRef]]:
    """Replace every term-level if-then-else in an atom by the branch the model takes; return the conditions.

    `conds ∧ atom'` implies the original atom, and Farkas needs ite-free linear atoms. One bottom-up pass with
    `memo` (id -> (term kept alive, resolved term)) shared by the atoms of one implicant: resolving the
    outermost ites round by round, each condition again, took time cubic in the nesting depth (17 s for 100
    chained `y += 3u` wraps, measured). A condition is returned only when its ite is first resolved: the
    implicant already holds it as a literal for every later atom that shares the memo.
    """
    conds: list[z3.BoolRef] = []
    stack: list[tuple[z3.ExprRef, bool]] = [(t, False)]
    while stack:
        u, ready = stack.pop()
        uid = u.get_id()
        if uid in memo:
            continue
        if u is not t and (not z3.is_app(u) or u.num_args() == 0 or z3.is_bool(u)):
            memo[uid] = (u, u)                # leaves, and Boolean sub-terms (literals of their own)
            continue
        if _kind(u) == z3.Z3_OP_ITE and u is not t:
            c = u.arg(0)
            branch = u.arg(1) if val(c) else u.arg(2)
            if not ready:
                stack.append((u, True))
                stack.append((branch, False))
                continue
            conds.append(c)
            memo[uid] = (u, memo[branch.get_id()][1])
            continue
        kids = u.children()
        if not ready:
            stack.append((u, True))
            stack.extend((k, False) for k in kids if k.get_id() not in memo)
            continue
        new = [memo[k.get_id()][1] for k in kids]
        memo[uid] = (u, u if all(a.eq(b) for a, b in zip(new, kids)) else u.decl()(*new))
    return memo[t.get_id()][1], conds


class _Raw:
    """Thin, fast access to raw ASTs of one context (the Python wrappers cost ~10 µs per node; this walk is the
    inner loop of Farkas interpolation and MBP). Raw sub-terms are kept alive by the formula they come from."""

    def __init__(self, ctx: z3.Context, m: z3.ModelRef, ites: "IteCache | None" = None):
        self.ctx, self.ref, self.m = ctx, ctx.ref(), m
        self.values: dict[int, bool] = {}
        # a cache shared across calls keeps the atoms it walked alive (`IteCache`); one of this call's own need not
        self.ites = ites.ites if ites is not None else {}
        self.keep = ites.alive if ites is not None else None

    def id(self, a) -> int:
        return _C.Z3_get_ast_id(self.ref, a)

    def kind(self, a) -> int | None:
        if _C.Z3_get_ast_kind(self.ref, a) != z3.Z3_APP_AST:
            return None
        return _C.Z3_get_decl_kind(self.ref, _C.Z3_get_app_decl(self.ref, a))

    def args(self, a) -> list:
        if _C.Z3_get_ast_kind(self.ref, a) != z3.Z3_APP_AST:
            return []
        return [_C.Z3_get_app_arg(self.ref, a, i) for i in range(_C.Z3_get_app_num_args(self.ref, a))]

    def sort_kind(self, a) -> int:
        return _C.Z3_get_sort_kind(self.ref, _C.Z3_get_sort(self.ref, a))

    def value(self, a) -> bool:
        """Truth value in the model (completed); only called on sub-terms of live formulas."""
        i = self.id(a)
        v = self.values.get(i)
        if v is None:
            out = (_C.Ast * 1)()
            if not _C.Z3_model_eval(self.ref, self.m.model, a, True, out):
                raise ValueError("implicant: model evaluation failed")
            v = _C.Z3_get_bool_value(self.ref, out[0]) == z3.Z3_L_TRUE
            self.values[i] = v
        return v

    def has_term_ite(self, a) -> bool:
        """Does the atom contain an if-then-else below a non-Boolean position? (Iterative: chains of wrap-around
        ites nest hundreds deep.)"""
        stack = [(a, False)]
        while stack:
            b, ready = stack.pop()
            i = self.id(b)
            if i in self.ites:
                continue
            kids = [c for c in self.args(b) if self.sort_kind(c) != z3.Z3_BOOL_SORT]
            if not ready:
                stack.append((b, True))
                stack.extend((c, False) for c in kids if self.id(c) not in self.ites)
                continue
            self.ites[i] = any(self.kind(c) == z3.Z3_OP_ITE or self.ites[self.id(c)] for c in kids)
            if b is a and self.keep is not None:
                self.keep.append(self.wrap(a))          # its sub-terms' entries stay valid while it lives
        return self.ites[self.id(a)]

    def wrap(self, a) -> z3.ExprRef:
        return _z3._to_expr_ref(a, self.ctx)


class IteCache:
    """Which terms contain a term-level if-then-else (`_Raw.has_term_ite`), kept across the `implicant` calls of
    one formula: the answer does not depend on the model, and Farkas interpolation extracts dozens of cubes of
    the same A and B (HOLA 06: 3,783 walks, 0.8 s of a 9.8 s TPA run). Each walked atom is kept alive, and with
    it its sub-terms, because z3 reuses the ids of freed terms."""

    def __init__(self):
        self.ites: dict[int, bool] = {}
        self.alive: list[z3.ExprRef] = []


def implicant(f: z3.BoolRef, m: z3.ModelRef, *, split_disequalities: bool = False,
              ites: IteCache | None = None) -> list[z3.BoolRef]:
    """Literals, each true in m, whose conjunction implies f (m must satisfy f; ValueError otherwise).

    Disjunctions are resolved by the model (the first true child, preferring one already used), Boolean
    equivalences by the model values of both sides, term if-then-elses by the branch the model takes (the
    condition becomes a literal). With `split_disequalities`, an arithmetic `a ≠ b` becomes `a < b` or `a > b`,
    whichever the model satisfies: projection and Farkas reasoning need convex literals. `ites`: a cache
    shared by the calls on one formula (`IteCache`).
    """
    raw = _Raw(f.ctx, m, ites)
    slow = ModelValues(m)                  # for the rare terms built on the fly (ite resolution, distinct)
    lits: dict[tuple[int, bool], z3.BoolRef] = {}
    done: set[tuple[int, bool]] = set()
    alive: list[z3.ExprRef] = [f]          # keeps every term we pushed alive: `done` is keyed by id
    resolved: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}     # `_resolve_ites` memo
    todo: list[tuple[object, bool]] = [(f.as_ast(), True)]
    while todo:
        a, pol = todo.pop()
        key = (raw.id(a), pol)
        if key in done:
            continue
        done.add(key)
        k = raw.kind(a)
        if k == z3.Z3_OP_TRUE or k == z3.Z3_OP_FALSE:
            if (k == z3.Z3_OP_TRUE) != pol:
                raise ValueError("implicant: model does not satisfy the formula")
            continue
        if k == z3.Z3_OP_NOT:
            todo.append((raw.args(a)[0], not pol))
        elif (k == z3.Z3_OP_AND and pol) or (k == z3.Z3_OP_OR and not pol):
            todo.extend((c, pol) for c in reversed(raw.args(a)))
        elif (k == z3.Z3_OP_OR and pol) or (k == z3.Z3_OP_AND and not pol):
            good = [c for c in raw.args(a) if raw.value(c) == pol]
            if not good:
                raise ValueError("implicant: model does not satisfy the formula")
            pick = next((c for c in good if (raw.id(c), pol) in done), good[0])
            todo.append((pick, pol))
        elif k == z3.Z3_OP_IMPLIES:
            x, y = raw.args(a)
            if pol:
                todo.append((x, False) if not raw.value(x) else (y, True))
            else:
                todo.extend([(x, True), (y, False)])
        elif k == z3.Z3_OP_ITE and raw.sort_kind(a) == z3.Z3_BOOL_SORT:
            c, x, y = raw.args(a)
            vc = raw.value(c)
            todo.extend([(c, vc), (x if vc else y, pol)])
        elif (k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_XOR, z3.Z3_OP_IFF)
              and raw.sort_kind(raw.args(a)[0]) == z3.Z3_BOOL_SORT):
            todo.extend((c, raw.value(c)) for c in raw.args(a))
        elif k == z3.Z3_OP_DISTINCT:
            kids = [raw.wrap(c) for c in raw.args(a)]
            pairs = [(kids[i], kids[j]) for i in range(len(kids)) for j in range(i + 1, len(kids))]
            if pol:
                eqs = [(x == y, False) for x, y in pairs]
            else:
                x, y = next((x, y) for x, y in pairs if slow(x == y))
                eqs = [(x == y, True)]
            alive.extend(e for e, _ in eqs)
            todo.extend((e.as_ast(), p) for e, p in eqs)
        else:
            atom = raw.wrap(a)
            if raw.has_term_ite(a):
                atom, conds = _resolve_ites(atom, slow, resolved)
                alive.append(atom)
                alive.extend(conds)
                todo.extend((c.as_ast(), slow(c)) for c in conds)
            if (split_disequalities and not pol and k == z3.Z3_OP_EQ
                    and raw.sort_kind(raw.args(a)[0]) in (z3.Z3_INT_SORT, z3.Z3_REAL_SORT)):
                x, y = atom.arg(0), atom.arg(1)
                lit = x < y if slow(x < y) else x > y
                lits.setdefault((lit.get_id(), True), lit)
                continue
            lit = atom if pol else z3.Not(atom)
            lits.setdefault((atom.get_id(), pol), lit)
    return list(lits.values())


# --------------------------------------------------------------------------------------------------------------------
# model-based projection

def _completed_model(model: z3.ModelRef, symbols: Sequence[z3.ExprRef]) -> z3.ModelRef:
    """`model` extended with a value for every symbol it leaves undefined.

    z3's projection returns `false` when the model does not define a variable of the formula (measured), so a
    partial model from the caller (e.g. one that only defines the variables of a sub-formula) must be completed.
    """
    missing = [c for c in symbols if model.get_interp(c.decl()) is None]
    if not missing:
        return model
    m = z3.Model(ctx=model.ctx)
    for d in model.decls():
        if d.arity() == 0:
            m.update_value(d, model.get_interp(d))
    for c in symbols:
        if m.get_interp(c.decl()) is None:
            m.update_value(c, model.eval(c, model_completion=True))
    return m


def project(formula: z3.BoolRef, model: z3.ModelRef, *, keep: Sequence[z3.ExprRef] | None = None,
            eliminate: Sequence[z3.ExprRef] | None = None, simplify: bool = True) -> z3.BoolRef:
    """Model-based projection: R over the kept symbols with `model ⊨ R` and `R ⇒ ∃eliminated. formula`.

    Give exactly one of `keep` (every other constant of `formula` is eliminated) or `eliminate`. `model` must
    satisfy `formula` (undefined symbols are completed); raises ValueError otherwise. The result is an
    under-approximation of the existential projection chosen by the model, cheap enough to call per model
    (about a millisecond on small LIA formulas); enumerate models (`mbp_enumerate`) to get the exact projection.
    """
    elim = _split_vars(formula, keep, eliminate)
    m = _completed_model(model, free_constants(formula))
    if not z3.is_true(m.eval(formula, model_completion=True)):
        raise ValueError("project: the model does not satisfy the formula")
    if not elim:
        return z3.simplify(formula) if simplify else formula
    elim_ids = _ids(elim)
    # Project a convex implicant rather than the formula: z3's projection substitutes model values for variables
    # under `distinct`/disjunctions, so enumerating models of a formula with `distinct` never terminated
    # (measured: 441 different projections). Projecting a cube of the formula is still an under-approximation
    # of ∃elim. formula, true in the model.
    cube = implicant(formula, m, split_disequalities=True)
    target = z3.BoolVal(True, formula.ctx) if not cube else cube[0] if len(cube) == 1 else z3.And(cube)
    try:
        r = m.project(elim, target)
    except z3.Z3Exception:
        r = None
    if r is not None:
        # Whatever z3 could not eliminate (non-linear occurrences, unsupported sorts) is fixed to its model value:
        # R[v := m(v)] is still true in m and still implies ∃v. R.
        left = [c for c in free_constants(r) if c.get_id() in elim_ids]
        if left:
            r = z3.substitute(r, *[(c, m.eval(c, model_completion=True)) for c in left])
        if has_quantifier(r) or not z3.is_true(m.eval(r, model_completion=True)):
            r = None
    if r is None:
        # Trivial but always valid projection: substitute the model values of all eliminated variables.
        r = z3.substitute(target, *[(c, m.eval(c, model_completion=True)) for c in elim])
    return z3.simplify(r) if simplify else r


def mbp_enumerate(formula: z3.BoolRef, *, keep: Sequence[z3.ExprRef] | None = None,
                  eliminate: Sequence[z3.ExprRef] | None = None, deadline: Deadline | None = None,
                  max_rounds: int = 1000) -> z3.BoolRef | None:
    """Exact `∃eliminated. formula` as a disjunction of MBPs, one per model of `formula ∧ ¬(disjuncts so far)`.

    Terminates because MBP has a finite image for LRA/LIA. Returns None at the deadline (default:
    QE_DEFAULT_SECONDS from now) or after `max_rounds`. Used as the QE fallback when the tactics give up;
    usually slower than `qe` on formulas with many disjunctions. Each projection is one z3 call without a
    limit: `qe` runs this in a child that is killed at the deadline.
    """
    ctx = formula.ctx
    elim = _split_vars(formula, keep, eliminate)
    if not elim:
        return formula
    deadline = deadline or Deadline.after(QE_DEFAULT_SECONDS)
    s = plain_solver(ctx)
    s.add(formula)
    parts: list[z3.BoolRef] = []
    for _ in range(max_rounds):
        left = deadline.left()
        if left <= 0:
            return None
        s.set("timeout", max(1, int(min(left * 1000, 4_294_967_295))))
        r = s.check()
        if r == z3.unsat:
            return z3.simplify(z3.Or(parts)) if parts else z3.BoolVal(False, ctx)
        if r != z3.sat:
            return None
        p = project(formula, s.model(), eliminate=elim)
        parts.append(p)
        s.add(z3.Not(p))
    return None


# --------------------------------------------------------------------------------------------------------------------
# exact quantifier elimination

# Measured on 40 random 4-variable LIA formulas with divisibility atoms (3 s cap): qe2 and qe_rec solved 38 in
# 3-60 ms each, qe solved 34 and needed up to 0.65 s, but solved one that qe2/qe_rec could not. So `qe2` runs
# first, in this process (it honours its limit with QEL off, smt/tactics.py), with a share of the time; `qe`,
# `qe_rec` and the MBP enumeration run in a child that is killed at the deadline (qe_rec overran its limit by
# seconds), each with a share of what is left so that one slow method cannot starve the next.
QE_FIRST = ("qe2", 0.4)
QE_KILLABLE = (("qe", 0.5), ("qe_rec", 0.6))
QE_DEFAULT_SECONDS = 10.0


def _qe_tactics(problem: z3.BoolRef, forbidden: set[int], deadline: Deadline,
                tactics: Sequence[tuple[str, float]]) -> z3.BoolRef | None:
    """The first tactic result, each tactic with its share of the time left, that is quantifier-free and avoids
    the `forbidden` constant ids."""
    for name, share in tactics:
        res = tactics_apply(name, problem, deadline.cap(deadline.left() * share))
        if res is not None and _eliminated(res, forbidden):
            return res
    return None


def _eliminated(res: z3.BoolRef, forbidden: set[int]) -> bool:
    voc = vocabulary(res)
    return not voc.quantified and not _ids(voc.constants) & forbidden


def _exact_qe(problem: z3.BoolRef, forbidden: set[int], deadline: Deadline,
              enumerate_: Callable[[Deadline], z3.BoolRef | None] | None) -> z3.BoolRef | None:
    """Cheap first, in this process; then the rest in a child killed at the deadline. None if nothing worked."""
    res = _qe_tactics(problem, forbidden, deadline, (QE_FIRST,))
    if res is not None:
        return res

    def hard() -> z3.BoolRef | None:
        r = _qe_tactics(problem, forbidden, deadline, QE_KILLABLE)
        return r if r is not None or enumerate_ is None else enumerate_(deadline)
    res = run_killable(hard, problem.ctx, deadline)
    # checked again here: the child's answer came back as text
    return res if res is not None and _eliminated(res, forbidden) else None


def eliminate_definitions(formula: z3.BoolRef, elim: Sequence[z3.ExprRef]
                          ) -> tuple[z3.BoolRef, list[z3.ExprRef]]:
    """(F', rest) with `∃elim. formula ⇔ ∃rest. F'`: every eliminated v with a top-level conjunct `v = t` (t free
    of v; for a Boolean v also `v` or `¬v`) is replaced by t. Exact, as ∃v. (v = t ∧ F) ⇔ F[t/v].

    Why before the tactics: a Horn clause's or a program fragment's locals are mostly such definitions, and z3's
    QE tactics treat them like any other variable: the entry clause of a 159-variable Lustre system (75 locals,
    144 defining equalities) took 12.9 s in `qe2`/`qe` and nothing here (issue 27's profile). Golem's
    preprocessing substitutes them, too."""
    todo = {v.get_id(): v for v in elim}
    parts = conjuncts(formula)
    while todo:
        # a round: definitions independent of each other (no chosen v in another chosen t), substituted at once
        chosen: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}
        mentioned: set[int] = set()
        kept: list[z3.BoolRef] = []
        for c in parts:
            d = _definition(c, todo)
            if d is not None:
                v, t, t_vars = d
                if v.get_id() not in chosen and v.get_id() not in mentioned and not t_vars & chosen.keys():
                    chosen[v.get_id()] = (v, t)
                    mentioned |= t_vars
                    continue
            kept.append(c)
        if not chosen:
            break
        for i in chosen:
            del todo[i]
        parts = conjuncts(z3.substitute(all_of(kept, formula.ctx), *chosen.values()))
    return all_of(parts, formula.ctx), [v for v in elim if v.get_id() in todo]


def _definition(c: z3.BoolRef, todo: dict[int, z3.ExprRef]) -> tuple[z3.ExprRef, z3.ExprRef, set[int]] | None:
    """(v, t, ids of t's constants) when the conjunct c says v = t for a v in `todo` that t does not mention."""
    if z3.is_const(c) and c.get_id() in todo:
        return c, z3.BoolVal(True, c.ctx), set()
    if z3.is_not(c) and c.arg(0).get_id() in todo and z3.is_const(c.arg(0)):
        return c.arg(0), z3.BoolVal(False, c.ctx), set()
    if not z3.is_eq(c):
        return None
    for v, t in ((c.arg(0), c.arg(1)), (c.arg(1), c.arg(0))):
        if v.get_id() in todo:
            t_vars = _ids(free_constants(t))
            if v.get_id() not in t_vars:
                return v, t, t_vars
    return None


def eliminate_quantifiers(formula: z3.BoolRef, *, deadline: Deadline | None = None) -> z3.BoolRef:
    """A quantifier-free equivalent of a (quantified) formula, e.g. a Spacer answer with `∃` inside.

    Raises QEError when no tactic succeeds by the deadline (default: QE_DEFAULT_SECONDS from now).
    """
    if not has_quantifier(formula):
        return formula
    deadline = deadline or Deadline.after(QE_DEFAULT_SECONDS)
    res = _exact_qe(formula, set(), deadline, None)
    if res is None:
        raise QEError("quantifier elimination failed in time")
    return z3.simplify(res)


def qe(formula: z3.BoolRef, *, eliminate: Sequence[z3.ExprRef] | None = None,
       keep: Sequence[z3.ExprRef] | None = None, deadline: Deadline | None = None,
       simplify: bool = True) -> z3.BoolRef:
    """Exact quantifier elimination: a quantifier-free R over the kept symbols with `R ⇔ ∃eliminated. formula`.

    Tries the tactics in order (see QE_FIRST), the first one whose result is quantifier-free and free of the
    eliminated symbols wins (`qe-light` is not used: it may leave quantifiers); then `mbp_enumerate` (also
    exact). Everything after the first tactic runs in a child killed at the deadline (default:
    QE_DEFAULT_SECONDS from now), so the call returns by then. Raises QEError when nothing succeeds in time.
    """
    elim = _split_vars(formula, keep, eliminate)
    if elim:
        formula, elim = eliminate_definitions(formula, elim)
    if not elim:
        return z3.simplify(formula) if simplify else formula
    deadline = deadline or Deadline.after(QE_DEFAULT_SECONDS)
    res = _exact_qe(z3.Exists(elim, formula), _ids(elim), deadline,
                    lambda d: mbp_enumerate(formula, eliminate=elim, deadline=d))
    if res is None:
        raise QEError(f"quantifier elimination of {len(elim)} variable(s) failed in time")
    return z3.simplify(res) if simplify else res
