"""Seed lemmas: cheap reflexive-transitive transition invariants that hold at *every* TPA level.

Why: TPA converges only when its interpolants generalise. On counter-like loops the interpolants we get
(smt/interpolate.py: per-cube Farkas, Spacer) describe the queried states rather than the loop, so the level
hierarchy creeps up one distance bound at a time and a deep safe counter never closes. The facts that close it
are usually tiny relational ones -- `y'-y = 2(x'-x)`, `x ≤ x'`, `x ≤ N ⇒ x' ≤ N` -- and any relation R with
`Id ∨ Tr ⊆ R` and `R∘R ⊆ R` contains Tr^k for every k, so it may be conjoined to every level and to both
closure invariants without losing soundness.

Candidates come from the relational templates of the abstract domains (`domains/transition.py`: monotonicity
per variable, difference equalities and congruences from models of Tr, bound preservation for the linear atoms
of Init/Tr/Bad, Boolean persistence); Houdini (`smt/houdini.py`) drops the ones not implied by `Id ∨ Tr`, then
keeps the largest transitive subset. Everything kept is verified by a solver. What stays here is TPA-specific:
which atoms the bound templates get (`bound_atoms`, read off the z3 formulas of the TS) and the known/new
split of a TPA instance that meets new Bad atoms query by query.

A TPA instance that answers many queries over one Tr (a loop of the multi-loop network) meets new Bad atoms
query by query; `transitive_seeds(..., known=...)` adds the seeds of those atoms to the ones it has. The
union stays sound: each kept candidate c satisfies `⋀H ∘ ⋀H ⊆ c` for a premise H ⊆ known ∪ new, and a larger
premise only makes that easier.
"""
from __future__ import annotations

import z3

from looprover.deadline import Deadline
from looprover.domains.transition import transition_candidates
from looprover.smt.houdini import houdini
from looprover.tpa.result import Vocabulary

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
    cands = transition_candidates(x, x1, voc.ts.trans, atoms, lambda f: voc.cur_to(f, x1), relational, deadline,
                                  voc.ctx)
    cands = [c for c in cands if c.get_id() not in have]
    if not cands:
        return []
    # Houdini (smt/houdini.py): initiation `Id ∨ Tr ⇒ c`, then transitivity `K∘K ∧ H(x,x') ∧ H(x',x'') ⇒ c(x,x'')`
    # with the premise H shrinking to the fixed point
    alive = houdini([*known, *[voc.rel_to(c, x1, x2) for c in known]],
                    [z3.And(c, voc.rel_to(c, x1, x2)) for c in cands], [voc.rel_to(c, x, x2) for c in cands],
                    deadline, init=z3.Or(voc.identity(x, x1), voc.trans(x, x1, "seed")), at_init=cands)
    return [cands[i] for i in alive]
