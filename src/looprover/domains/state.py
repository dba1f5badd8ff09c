"""State candidates for k-induction's Houdini: the atoms the domains offer at each cutpoint, pc-guarded.

Why a driver: the domains are asked in one fixed order (`STATE_DOMAINS`), per variable and then per pair of
variables, and an atom is kept only once and only if every sampled state at the cutpoint satisfies it -- the
same list, in the same order, that k-induction's own generator produced. Type ranges are asked once, unguarded.
"""
from __future__ import annotations

from dataclasses import dataclass

from looprover.domains.affine import AffineHull
from looprover.domains.base import Domain, Site, guard_bounds, program_constants
from looprover.domains.booleans import Booleans
from looprover.domains.cells import Cells, CellShapes, cell_shapes
from looprover.domains.congruence import Congruence
from looprover.domains.contents import Contents
from looprover.domains.deltas import Deltas
from looprover.domains.equalities import Equalities
from looprover.domains.guards import GuardRelations, guard_comparisons
from looprover.domains.intervals import Intervals
from looprover.domains.linear import Linear
from looprover.domains.octagon import Octagon
from looprover.domains.ranges import TypeRanges
from looprover.domains.strings import StringLengths, Strings, index_sums
from looprover.domains.zones import Zones
from looprover.program.cfa import Program
from looprover.program.cpg import CutpointGraph
from looprover.program.expr import ArrayType, BoolType, Expr, IntType
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.program.liveness import liveness

QUANTIFIER_FREE_DOMAINS: tuple[Domain, ...] = (TypeRanges(), Intervals(), Zones(), Equalities(), Congruence(),
                                               Linear(), Booleans(), AffineHull())
# k-induction and its certificates: the quantifier-free atoms, the branches' comparisons of several variables
# (`guards.py`), the buffers' terminators (`strings.py`: a summary's `a[n-1] == 0` must be restated at the loop
# heads to certify its TRUE), then the quantified array facts (`cells.py`) and, on the string-terminator
# abstraction, the relations of its length ghosts (`strings.py`)
STATE_DOMAINS: tuple[Domain, ...] = QUANTIFIER_FREE_DOMAINS + (GuardRelations(), Strings(), Cells(),
                                                               StringLengths())
# loop summaries (`transforms/summarize.py`): the state domains at one loop head, plus the buffer facts
SUMMARY_DOMAINS: tuple[Domain, ...] = (Intervals(), Zones(), Equalities(), Congruence(), Linear(), Booleans(),
                                       Strings(), Octagon(), Deltas(), Contents(), AffineHull())


@dataclass(frozen=True)
class Candidate:
    node: int | None      # cutpoint it is guarded by; None = everywhere
    atom: Expr

    def __str__(self) -> str:
        return f"{'L' + str(self.node) + ': ' if self.node is not None else ''}{self.atom}"


def _holds(ev: Evaluator, atom: Expr, samples: list[dict]) -> bool:
    try:
        return all(ev.eval(atom, s) for s in samples)
    except (UndefinedBehavior, KeyError, TypeError, ZeroDivisionError):
        return False


MANY_INTS = 24      # integer variables above which a pair must change in the loop, or be live (`candidates`)


def candidates(program: Program, cpg: CutpointGraph, samples: dict[int, list[dict]], bitvector: bool,
               domains: tuple[Domain, ...] = STATE_DOMAINS, live_only: bool = False) -> list[Candidate]:
    """Unguarded atoms of the `everywhere` domains, then per cutpoint the atoms of `atoms_at`; `live_only`: over
    the variables live at each cutpoint only (for Horn clauses, whose relations range over those alone)."""
    consts, guards, comparisons = program_constants(program), guard_bounds(program), guard_comparisons(program)
    sums = index_sums(program)
    ints = [i.var for i in program.variables.values() if isinstance(i.var.type, IntType)]
    many = len(ints) > MANY_INTS
    live = liveness(program) if live_only or many or any(d.wants_scope(program) for d in domains) else None
    anywhere = set().union(*live.values()) if live_only and live else None
    if anywhere is not None:
        ints = [v for v in ints if v in anywhere]
    glob = [d for d in domains if d.everywhere]
    everywhere = Site(None, consts, [], bitvector)
    shapes = cell_shapes(program, samples) if any(isinstance(d, Cells) for d in domains) else None
    out = [Candidate(None, a) for v in ints for d in glob for a in d.var_atoms(everywhere, v)]
    for c in cpg.cutpoints:
        # Relations need one side to change in the loop; with many variables, pairs of two loop-invariant
        # variables are skipped to keep Houdini's candidate set (quadratic in the variables) small, unless both
        # are live there: such a relation carries a fact from before the loop through it to where it is read
        # (Verisec's bind rrextract: `cp.off - n == 2` across a `strlen` whose loop writes neither).
        lp = cpg.loops.loops.get(c)
        changing = lp.writes if (lp is not None and len(ints) > MANY_INTS) else None
        carried = frozenset(v.name for v in live.get(c, ())) if changing is not None and live else None
        scope = None if live is None else (frozenset(v.name for v in live.get(c, ())),
                                           frozenset(v.name for v in lp.writes) if lp is not None else None)
        out.extend(Candidate(c, a) for a in atoms_at(program, c, samples.get(c, []), bitvector, domains, changing,
                                                     consts, guards=guards, cells=shapes, scope=scope,
                                                     only=scope[0] if live_only else None,
                                                     comparisons=comparisons, carried=carried, sums=sums))
    return out


def atoms_at(program: Program, node: int, samples: list[dict], bitvector: bool,
             domains: tuple[Domain, ...] = STATE_DOMAINS, changing: frozenset | None = None,
             consts: list[int] | None = None, entry: dict | None = None,
             guards: dict[str, list[tuple[str, int]]] | None = None, cells: CellShapes | None = None,
             scope: tuple[frozenset[str], frozenset[str] | None] | None = None,
             only: frozenset[str] | None = None, comparisons: tuple | None = None,
             carried: frozenset[str] | None = None, sums: dict | None = None) -> list[Expr]:
    """The atoms the non-`everywhere` domains offer at `node` that every sampled state satisfies: over each
    integer variable, over each pair of integer variables of one type (a pair needs a variable in `changing`,
    when given, or both in `carried`), over each array with the integer variables as indices, and over each
    Boolean variable.
    `entry`: the entry copies of a loop summary (`Site.entry`); `consts`, `guards`: the program's constants and
    guard bounds when the caller has them (`candidates` asks every cutpoint); `cells`: the quantified templates
    (`cells.cell_shapes`, from every cutpoint's samples; default: from this one's); `scope`: the variables live
    at `node` and those its loop writes (`Site.live`, `Site.loop_writes`), when the caller has them; `only`:
    the variables to speak of (default: all); `comparisons`, `sums`: the program's `guard_comparisons` and
    `strings.index_sums`, when the caller has them."""
    ev = Evaluator("wrap" if bitvector else "math")
    consts = consts if consts is not None else program_constants(program)
    vs = [i.var for i in program.variables.values() if only is None or i.var.name in only]
    ints = [v for v in vs if isinstance(v.type, IntType)]
    bools = [v for v in vs if isinstance(v.type, BoolType)]
    arrays = [v for v in vs if isinstance(v.type, ArrayType)]
    local = [d for d in domains if not d.everywhere]
    guards = guards if guards is not None else guard_bounds(program)
    if cells is None and any(isinstance(d, Cells) for d in local):
        cells = cell_shapes(program, {node: samples})
    if comparisons is None and any(isinstance(d, GuardRelations) for d in local):
        comparisons = guard_comparisons(program)
    if sums is None and any(isinstance(d, Strings) for d in local):
        sums = index_sums(program)
    site = Site(node, consts, samples, bitvector, dict(entry or {}), guards, cells,
                *(scope if scope is not None else (None, None)), comparisons or (), sums or {})
    atoms: list[Expr] = []

    def add(new: list[Expr], cap: int | None = None) -> None:
        for a in new:
            if cap is not None and cap <= 0:
                return
            if a not in atoms and _holds(ev, a, site.samples):
                atoms.append(a)
                cap = cap - 1 if cap is not None else None

    for v in ints:
        for d in local:
            add(d.var_atoms(site, v))
    for i, x in enumerate(ints):
        for y in ints[i + 1:]:
            if x.type != y.type:
                continue
            if changing is not None and x not in changing and y not in changing \
                    and not (carried is not None and x.name in carried and y.name in carried):
                continue
            for d in local:
                add(d.pair_atoms(site, x, y))
    for d in local:
        add(d.site_atoms(site, ints), d.max_atoms)
    for a in arrays:
        for d in local:
            add(d.array_atoms(site, a, ints))
    for b in bools:
        for d in local:
            add(d.var_atoms(site, b))
    return atoms
