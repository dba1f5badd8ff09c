"""Single-predicate CHC files (CHC-COMP format) as transition systems, for the TPA tests only.

The engine glue goes through the CHC front-end and the cutpoint-graph encoder; this direct translation keeps
the core's tests independent of them: state = one variable per argument of the predicate P, Init/Bad = the
facts/queries with their clause variables eliminated by QE, Tr = the disjunction of the P -> P rules with the
clause variables as auxiliaries.
"""
from __future__ import annotations

from pathlib import Path

import z3

from looprover.deadline import Deadline
from looprover.smt.mbp import qe
from looprover.smt.ts import TransitionSystem


def _parts(a: z3.ExprRef, k: int):
    consts = []
    body = a
    if z3.is_quantifier(body):
        n = body.num_vars()
        consts = [z3.Const(f"{body.var_name(i)}!c{k}", body.var_sort(i)) for i in range(n)]
        body = z3.substitute_vars(body.body(), *reversed(consts))
    if z3.is_implies(body):
        lhs, head = body.arg(0), body.arg(1)
    elif z3.is_not(body):
        lhs, head = body.arg(0), z3.BoolVal(False)
    else:
        lhs, head = z3.BoolVal(True), body
    conj = list(lhs.children()) if z3.is_and(lhs) else [lhs]
    return consts, conj, head


def chc_to_ts(path: str | Path, qe_timeout: float = 10.0) -> TransitionSystem | None:
    """None if the file is not a linear single-predicate system."""
    asserts = z3.parse_smt2_file(str(path))
    preds = {}

    def is_pred(t):
        return z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and t.decl().arity() > 0 \
            and z3.is_bool(t)

    clauses = []
    for k, a in enumerate(asserts):
        consts, conj, head = _parts(a, k)
        apps = [c for c in conj if is_pred(c)]
        rest = [c for c in conj if not is_pred(c)]
        for p in apps + ([head] if is_pred(head) else []):
            preds[p.decl().name()] = p.decl()
        if len(apps) > 1:
            return None
        clauses.append((consts, apps[0] if apps else None, z3.And(rest) if rest else z3.BoolVal(True), head))
    if len(preds) != 1:
        return None
    P = next(iter(preds.values()))
    xs = [z3.Const(f"a{i}", P.domain(i)) for i in range(P.arity())]
    x1 = [z3.Const(f"a{i}'", P.domain(i)) for i in range(P.arity())]
    inits, trs, bads = [], [], []
    for consts, body, phi, head in clauses:
        if body is None and is_pred(head):
            f = z3.And(phi, *[v == t for v, t in zip(xs, head.children())])
            inits.append(qe(f, eliminate=consts, deadline=Deadline.after(qe_timeout)) if consts else f)
        elif body is not None and is_pred(head):
            trs.append(z3.And(phi, *[v == t for v, t in zip(xs, body.children())],
                              *[v == t for v, t in zip(x1, head.children())]))
        elif body is not None:
            f = z3.And(phi, *[v == t for v, t in zip(xs, body.children())])
            bads.append(qe(f, eliminate=consts, deadline=Deadline.after(qe_timeout)) if consts else f)
        else:
            return None          # a query without P: not a transition system
    return TransitionSystem(xs, x1, z3.Or(inits) if inits else z3.BoolVal(False),
                            z3.Or(trs) if trs else z3.BoolVal(False), z3.Or(bads) if bads else z3.BoolVal(False))
