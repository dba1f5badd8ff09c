"""Seed lemmas: cheap reflexive-transitive transition invariants that hold at *every* TPA level.

Why: TPA converges only when its interpolants generalise. On counter-like loops the interpolants we get
(smt/interpolate.py: per-cube Farkas, Spacer) describe the queried states rather than the loop, so the level
hierarchy creeps up one distance bound at a time and a deep safe counter never closes. The facts that close it
are usually tiny relational ones -- `y'-y = 2(x'-x)`, `x ≤ x'`, `x ≤ N ⇒ x' ≤ N` -- and any relation R with
`Id ∨ Tr ⊆ R` and `R∘R ⊆ R` contains Tr^k for every k, so it may be conjoined to every level and to both
closure invariants without losing soundness.

Candidates come from small templates (monotonicity per variable, difference equalities from models of Tr,
bound preservation for the linear atoms of Init/Tr/Bad, Boolean persistence); the ones not implied by
`Id ∨ Tr` are dropped, then Houdini keeps the largest transitive subset. Everything kept is verified by a solver.

A TPA instance that answers many queries over one Tr (a loop of the multi-loop network) meets new Bad atoms
query by query; `transitive_seeds(..., known=...)` adds the seeds of those atoms to the ones it has. The
union stays sound: each kept candidate c satisfies `⋀H ∘ ⋀H ⊆ c` for a premise H ⊆ known ∪ new, and a larger
premise only makes that easier.
"""
from __future__ import annotations

import math

import z3

from looprover.deadline import Deadline
from looprover.smt.houdini import houdini
from looprover.smt.solver import check
from looprover.tpa.result import Vocabulary

MAX_MODELS = 4
MAX_CANDIDATES = 300
MAX_ATOMS = 60


def _is_num(v: z3.ExprRef) -> bool:
    return v.sort().kind() in (z3.Z3_INT_SORT, z3.Z3_REAL_SORT)


_CMP = (z3.Z3_OP_LE, z3.Z3_OP_GE, z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_EQ, z3.Z3_OP_ULEQ, z3.Z3_OP_UGEQ,
        z3.Z3_OP_ULT, z3.Z3_OP_UGT, z3.Z3_OP_SLEQ, z3.Z3_OP_SGEQ, z3.Z3_OP_SLT, z3.Z3_OP_SGT)


def _atoms(f: z3.ExprRef, xs: set[int], deadline: Deadline, limit: int = MAX_ATOMS) -> list[z3.BoolRef]:
    """Comparison atoms (arithmetic or bit-vector) of f that mention only current-state variables.

    One memoised post-order pass over the DAG: encoded programs share big If-terms between many atoms, and a
    per-atom walk would revisit them (measured: minutes on a rust-horn CHC file)."""
    only: dict[int, bool] = {}          # node id -> no constants other than xs
    out: dict[int, z3.BoolRef] = {}
    stack: list[tuple[z3.ExprRef, bool]] = [(f, False)]
    steps = 0
    while stack and len(out) < limit:
        t, expanded = stack.pop()
        tid = t.get_id()
        if tid in only and not expanded:
            continue
        steps += 1
        if steps % 2000 == 0 and deadline.expired():
            break
        if not z3.is_app(t):
            only[tid] = False
            continue
        kids = t.children()
        if not expanded:
            if not kids:
                only[tid] = not (t.decl().kind() == z3.Z3_OP_UNINTERPRETED and tid not in xs)
                continue
            stack.append((t, True))
            stack.extend((c, False) for c in kids if c.get_id() not in only)
            continue
        only[tid] = all(only.get(c.get_id(), False) for c in kids)
        k = t.decl().kind()
        if k in _CMP and len(kids) == 2 and (_is_num(kids[0]) or z3.is_bv(kids[0])) and only[tid]:
            out.setdefault(tid, t)
    return list(out.values())


def bound_atoms(f: z3.ExprRef, voc: Vocabulary, deadline: Deadline) -> list[z3.BoolRef]:
    """The atoms of f the bound-preservation templates are built from."""
    return _atoms(f, {v.get_id() for v in voc.x}, deadline)


def _candidates(voc: Vocabulary, atoms: list[z3.BoolRef], relational: bool,
                deadline: Deadline) -> list[z3.BoolRef]:
    """Template candidates: per-variable and difference relations (`relational`), bound preservation for `atoms`."""
    ts, x, x1 = voc.ts, voc.x, voc.x1
    cands: list[z3.BoolRef] = []
    for v, w in zip(x if relational else [], x1):
        if _is_num(v):
            cands += [w >= v, w <= v]
        elif v.sort().kind() == z3.Z3_BOOL_SORT:
            cands += [z3.Implies(v, w), z3.Implies(z3.Not(v), z3.Not(w))]
        elif v.sort().kind() == z3.Z3_BV_SORT:
            cands += [w == v, z3.UGE(w, v), z3.ULE(w, v), w >= v, w <= v]
    # difference equalities a·(u'-u) = b·(v'-v) and congruences u' ≡ u (mod g) read off models of Tr (both are
    # translation-invariant, hence transitive; the models only suggest a and b or g, the filters below decide)
    nums = [(v, w) for v, w in zip(x, x1) if v.sort().kind() == z3.Z3_INT_SORT]
    steps = [0] * len(nums)
    if relational and nums:
        s = z3.Solver(ctx=voc.ctx)
        s.add(ts.trans)
        for _ in range(MAX_MODELS):
            if check(s, deadline, cap=1.0) != z3.sat:
                break
            m = s.model()
            d = [m.eval(w - v, model_completion=True).as_long() for v, w in nums]
            steps = [math.gcd(g, abs(di)) for g, di in zip(steps, d)]
            for i in range(len(nums)):
                for j in range(i + 1, len(nums)):
                    if d[i] == 0 and d[j] == 0:
                        continue
                    g = math.gcd(d[i], d[j]) or 1
                    a, b = d[j] // g, d[i] // g
                    (u, u1), (v, v1) = nums[i], nums[j]
                    cands.append(a * (u1 - u) == b * (v1 - v))
            s.add(z3.Or([w - v != dv for (v, w), dv in zip(nums, d)]))
        cands += [(w - v) % g == 0 for (v, w), g in zip(nums, steps) if g >= 2]
    # bound preservation for the atoms of Init, Tr and Bad: t ≤ k ⇒ t' ≤ k, t ≥ k ⇒ t' ≥ k
    for atom in atoms:
        a1 = voc.cur_to(atom, x1)
        cands += [z3.Implies(atom, a1), z3.Implies(z3.Not(atom), z3.Not(a1))]      # atom persistence
        lhs, rhs = atom.arg(0), atom.arg(1)
        if z3.is_bv(lhs):
            # t ⋈ c with a numeral c: the bounds c-1, c, c+1 in both signednesses (wrap-around is fine: every
            # candidate is checked, only its shape is guessed here)
            for t, c in ((lhs, rhs), (rhs, lhs)):
                if not z3.is_bv_value(c) or z3.is_bv_value(t):
                    continue
                t1 = voc.cur_to(t, x1)
                for d in (-1, 0, 1):
                    k = z3.BitVecVal(c.as_long() + d, c.size(), voc.ctx)
                    cands += [z3.Implies(z3.ULE(t, k), z3.ULE(t1, k)), z3.Implies(z3.UGE(t, k), z3.UGE(t1, k)),
                              z3.Implies(t <= k, t1 <= k), z3.Implies(t >= k, t1 >= k)]
            continue
        t = lhs - rhs
        t1 = voc.cur_to(t, x1)
        deltas = (-1, 0, 1) if t.sort().kind() == z3.Z3_INT_SORT else (0,)
        for k in deltas:
            cands += [z3.Implies(t <= k, t1 <= k), z3.Implies(t >= k, t1 >= k)]
    uniq: dict[int, z3.BoolRef] = {}
    for c in cands:
        c = z3.simplify(c)
        if not z3.is_true(c) and not z3.is_false(c):
            uniq.setdefault(c.get_id(), c)
    return list(uniq.values())[:MAX_CANDIDATES]


def transitive_seeds(voc: Vocabulary, deadline: Deadline, atoms: list[z3.BoolRef] | None = None,
                     known: list[z3.BoolRef] = (), relational: bool = True) -> list[z3.BoolRef]:
    """New conjuncts R(x, x') such that, with K = `known` (a set with these properties already), `Id ∨ Tr ⊆ ⋀R`
    and `⋀(K ∪ R) ∘ ⋀(K ∪ R) ⊆ ⋀R` (both checked) -- so K ∪ R is again reflexive, Tr-including and transitive.

    `atoms`: the comparison atoms for the bound templates (default: those of Init, Tr and Bad). `relational`: also
    the per-variable and difference templates, which depend on Tr alone (a later call for new atoms skips them)."""
    x, x1, x2 = voc.x, voc.x1, voc.x2
    if atoms is None:
        ts = voc.ts
        atoms = bound_atoms(z3.And(ts.init, ts.trans, ts.bad), voc, deadline)
    have = {c.get_id() for c in known}
    cands = [c for c in _candidates(voc, atoms, relational, deadline) if c.get_id() not in have]
    if not cands:
        return []
    # Houdini (smt/houdini.py): initiation `Id ∨ Tr ⇒ c`, then transitivity `K∘K ∧ H(x,x') ∧ H(x',x'') ⇒ c(x,x'')`
    # with the premise H shrinking to the fixed point
    alive = houdini([*known, *[voc.rel_to(c, x1, x2) for c in known]],
                    [z3.And(c, voc.rel_to(c, x1, x2)) for c in cands], [voc.rel_to(c, x, x2) for c in cands],
                    deadline, init=z3.Or(voc.identity(x, x1), voc.trans(x, x1, "seed")), at_init=cands)
    return [cands[i] for i in alive]
