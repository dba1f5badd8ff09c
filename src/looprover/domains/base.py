"""The domain interface and what a domain is asked about.

A domain offers candidates; it never decides them. Every candidate is checked by the caller (samples, then
Houdini), so a domain may guess freely -- soundness does not depend on it. Two kinds of question:
- state atoms at a cutpoint (`Site`): program IR expressions over one variable (`var_atoms`), a pair of
  variables of one type (`pair_atoms`) or an array and the integer variables that may index it
  (`array_atoms`), suggested by the program's constants and the sampled states;
- relations of a loop body (`StepSite`): z3 formulas over the pre and post values (x, x') of one variable
  (`var_relations`) or of the whole state (`relations`), suggested by sampled steps and the loop's atoms.
A domain answers the questions it has templates for; the others return nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

import z3

from looprover.program.cfa import Assert, Program
from looprover.program.expr import Compare, Expr, IntConst, Var, walk

if TYPE_CHECKING:
    from looprover.domains.cells import CellShapes


@dataclass
class Site:
    """A cutpoint (`node`; None = every location) with the program's constants and the states sampled there;
    `entry` maps a variable to its copy on entering the loop, where a loop summary keeps one."""
    node: int | None
    consts: list[int]
    samples: list[dict] = field(default_factory=list)
    bitvector: bool = False
    entry: dict[str, Var] = field(default_factory=dict)
    guard_bounds: dict[str, list[tuple[str, int]]] = field(default_factory=dict)   # `guard_bounds(program)`
    cells: "CellShapes | None" = None       # the program's quantified-invariant templates (`cells.cell_shapes`)
    live: frozenset[str] | None = None      # variables live at the cutpoint (None: not known)
    loop_writes: frozenset[str] | None = None   # variables the loop headed there writes (None: not known)
    comparisons: tuple = ()                 # the branch comparisons of variables (`guards.guard_comparisons`)
    index_sums: dict = field(default_factory=dict)   # char arrays' `a[x + y]` index pairs (`strings.index_sums`)


@dataclass
class StepSite:
    """A loop body: `nums` are the (x, x') pairs of the integer state variables, `deltas` the steps x' - x of each
    sampled transition (one list per sample, in `nums` order; iterable more than once), `atoms` comparison atoms over x, `to_post` renames
    a formula over x to x'."""
    nums: list[tuple[z3.ExprRef, z3.ExprRef]]
    deltas: Iterable[list[int]]
    atoms: list[z3.BoolRef]
    to_post: Callable[[z3.ExprRef], z3.ExprRef]
    ctx: z3.Context


class Domain:
    """One template family. `relational`: it also offers relations over a loop's pre/post values (x, x')."""
    name: str = ""
    relational: bool = False
    everywhere: bool = False        # its state atoms hold at every location (asked once, with Site.node None)
    max_atoms: int | None = None    # at most this many of its `site_atoms` that the samples keep, in its order

    def wants_scope(self, program: Program) -> bool:
        """Does it read `Site.live` and `Site.loop_writes` on `program` (a liveness analysis the driver then
        runs)?"""
        return False

    def var_atoms(self, site: Site, v: Var) -> list[Expr]:
        return []

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        return []

    def array_atoms(self, site: Site, a: Var, indices: list[Var]) -> list[Expr]:
        return []

    def site_atoms(self, site: Site, ints: list[Var]) -> list[Expr]:
        """Atoms over any number of the integer variables `ints`, asked once per site."""
        return []

    def var_relations(self, v: z3.ExprRef, w: z3.ExprRef) -> list[z3.BoolRef]:
        return []

    def relations(self, site: StepSite) -> Iterable[z3.BoolRef]:
        """Relations over (x, x') of a loop body; may be a generator (the caller reads them up to a cap)."""
        return []


def program_constants(program: Program) -> list[int]:
    """0, 1 and the integer literals of the program's statements (the 24 smallest in magnitude). An assertion's
    literals count only up to 2^20: the no-overflow checks compare with the types' limits, which the ranges
    domain already has; a guard's or an assignment's count at any size (`while (x <= 1073741823)` bounds x in
    the loops it encloses)."""
    vals: set[int] = {0, 1}
    for _, st in program.statements():
        limit = 1 << 20 if isinstance(st, Assert) else None
        for e in (getattr(st, "rhs", None), getattr(st, "cond", None)):
            if e is None:
                continue
            for n in walk(e):
                if isinstance(n, IntConst) and (limit is None or abs(n.value) <= limit):
                    vals.add(n.value)
    return sorted(vals, key=lambda v: (abs(v), v))[:24]


_BOUND = {"<": ("<=", 0, -1), "<=": ("<=", 1, 0), ">": (">=", 0, 1), ">=": (">=", -1, 0)}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def guard_bounds(program: Program) -> dict[str, list[tuple[str, int]]]:
    """Per variable, the bounds each comparison of it with a constant in a branch condition gives at the head of
    a loop that it guards and inside its body: `x < K` leaves the loop with x = K, so `x <= K` at the head and
    `x <= K - 1` in the body, where an inner loop's head needs it (`x <= K` gives K + 1 and K, `x > K` gives K
    and K + 1). Why: a loop that no sampled run got past its first iterations has samples far below the limit,
    and the limit is the bound that generalises; the constant list alone may not reach it."""
    out: dict[str, list[tuple[str, int]]] = {}
    for _, st in program.statements():
        cond = getattr(st, "cond", None)
        if cond is None or isinstance(st, Assert):
            continue
        for n in walk(cond):
            if not isinstance(n, Compare) or n.op not in _BOUND:
                continue
            for v, k, op in ((n.lhs, n.rhs, n.op), (n.rhs, n.lhs, _MIRROR[n.op])):
                if isinstance(v, Var) and isinstance(k, IntConst):
                    rel, head, body = _BOUND[op]
                    for b in ((rel, k.value + head), (rel, k.value + body)):
                        if b not in out.setdefault(v.name, []):
                            out[v.name].append(b)
    return out
