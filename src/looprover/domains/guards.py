"""Guard relations: the program's branch comparisons between variables (`_i < j - start + 1`, `j - start + 1 >=
K`), their negations, and each of these one weaker (`i <= n`, the value a counting loop leaves with), as
candidates at every cutpoint whose live variables they speak of.

Why: a loop's bound is often an expression of other variables -- a copy of `n = j - start + 1` cells, inlined,
runs while `_i < j - start + 1` -- and the relation that bounds the loop then involves three variables, which no
template over one or two variables states; Spacer found such relations slowly on string code at large buffer
sizes (issue 30), and k-induction not at all. A guard a branch tests is the likeliest relation to hold where the
branch was taken or left, so these few candidates cost Houdini little."""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.cfa import Assume, Program
from looprover.program.expr import Binary, Compare, Expr, IntConst, IntType, Var, cmp, const, free_vars, walk

MAX_COMPARISONS = 48     # per program, the first in program order

_WEAKER = {"<": ("<=", 0), "<=": ("<=", 1), ">": (">=", 0), ">=": (">=", -1)}
_NEGATION = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def guard_comparisons(program: Program) -> tuple[Compare, ...]:
    """The order comparisons in the program's branch conditions (assumes) that relate two or more integer
    variables (a variable against a constant is `base.guard_bounds`' job)."""
    found: dict[Compare, None] = {}
    for _, st in program.statements():
        if not isinstance(st, Assume):
            continue
        for n in walk(st.cond):
            if isinstance(n, Compare) and n.op in _WEAKER and n not in found and isinstance(n.lhs.type, IntType):
                vs = free_vars(n)
                if len(vs) >= 2 and all(isinstance(v.type, IntType) for v in vs) \
                        and all(isinstance(x, (Var, IntConst, Binary)) or x is n for x in walk(n)):
                    found[n] = None
                    if len(found) == MAX_COMPARISONS:
                        return tuple(found)
    return tuple(found)


def _weaker(op: str, lhs: Expr, rhs: Expr) -> Compare:
    rel, d = _WEAKER[op]
    if not d:
        return cmp(rel, lhs, rhs)
    return cmp(rel, lhs, const(rhs.value + d, rhs.type) if isinstance(rhs, IntConst)
               else Binary("+", rhs, const(d, rhs.type), rhs.type))


class GuardRelations(Domain):
    name = "guard-relations"
    max_atoms = 40

    def site_atoms(self, site: Site, ints: list[Var]) -> list[Expr]:
        names = {v.name for v in ints}
        if site.live is not None:
            names &= site.live
        out: list[Expr] = []
        for c in site.comparisons:
            if not all(v.name in names for v in free_vars(c)):
                continue
            neg = _NEGATION[c.op]
            out += [c, _weaker(c.op, c.lhs, c.rhs), cmp(neg, c.lhs, c.rhs), _weaker(neg, c.lhs, c.rhs)]
        return out
