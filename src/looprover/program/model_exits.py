"""Which checks a run can reach after it leaves the model (`looprover check`).

The front-end's own assertions (`properties.UNMODELLED`) mark where a run leaves what the model follows: an access
outside a struct member, a layout-dependent pointer equality, a call of a function the CFA does not hold, and
under `check` a call whose function's body has a construct the front-end refuses (`properties.UNMODELLED_REFUSED`,
with the call's `cfa.Refusal`; the code after the call stays in the CFA). Such an *exit* is where the model stops
following a run, not where the run stops: it goes on along the CFA from there in a state the model does not
know, and a refused call first runs its refused code (the function and everything it calls: the refusal's source
extents). So a check can be reached after an exit only if one of its sites lies on the CFA after it, or its
source line lies in the refused code of the exit or of a refused call after it (a call of a function the CFA
does not hold, after it or as the exit, reaches everything).

A real run that reaches a check's violation without passing an exit that cannot touch the check is a run of the
model up to there; so each check is verified with the exits that cannot touch it as assumptions
(`assuming_untouched`), and a proof that does not show an exit shows only the checks the exit cannot touch
(`touched`). Without this, one refused function called at start-up, or one access the model cannot follow, left
every check of the program unknown.
"""
from __future__ import annotations

from dataclasses import dataclass

from looprover.program.cfa import Assert, Assume, Edge, Program, closure, same_file, successors
from looprover.program.expr import TRUE
from looprover.properties import UNMODELLED, UNMODELLED_CALL, UNMODELLED_REFUSED

Site = tuple[int, int]      # (edge index, statement index)
Code = tuple[tuple[str, int, int], ...]     # source extents: (file, first line, last line)


def exits_of(program: Program) -> list[Site]:
    """The sites of the model's own assertions (but those that are true in every state: no run leaves there)."""
    return list(_graph(program).exits)


def refused_of(program: Program) -> list[Site]:
    """The sites of the refused calls (`properties.UNMODELLED_REFUSED`) among the exits."""
    return [x for x in _graph(program).exits if _stmt(program, x).prop == UNMODELLED_REFUSED]


def touched(program: Program, exits, sites) -> set[Site]:
    """The sites of `sites` that a run leaving the model at one of `exits` can reach next: one walk forward."""
    edges = program.edges
    exits = list(exits)
    if not exits:
        return set()
    graph = _graph(program)
    after = closure(graph.succ, {edges[ei].dst for ei, _ in exits})
    first = _first_on_edge(exits)
    code: list = []
    for k, own in graph.calls:
        if edges[k[0]].src in after or (k[0] in first and first[k[0]] <= k[1]):  # passed after an exit, or one
            if own is None:
                return set(sites)
            code.extend(own)
    return {site for site in sites
            if edges[site[0]].src in after or _later(first, site) or _in_code(_stmt(program, site).src, code)}


def touching(program: Program, exits, sites) -> set[Site]:
    """The exits of `exits` after which a run can reach one of `sites`: one walk backward (the same relation
    as `touched`'s)."""
    edges = program.edges
    sites = list(sites)
    if not sites:
        return set()
    graph = _graph(program)
    # the refused calls (and calls of functions the CFA does not hold) whose own code can hold a site
    places = {_stmt(program, s).src for s in sites}
    hits = [k for k, own in graph.calls if own is None or any(_in_code(src, own) for src in places)]
    targets = sites + hits
    before = closure(graph.preds, {edges[ei].src for ei, _ in targets})
    last: dict[int, int] = {}
    for ei, si in targets:
        last[ei] = max(si, last.get(ei, si))
    hit = set(hits)
    return {x for x in exits if x in hit or edges[x[0]].dst in before or last.get(x[0], -1) > x[1]}


def assuming_untouched(program: Program, sites) -> Program:
    """`program` with the exits that touch none of the check assertions at `sites` as assumptions."""
    exits = exits_of(program)
    if not exits:
        return program
    return assuming(program, set(exits) - touching(program, exits, sites))


def assuming(program: Program, sites) -> Program:
    """`program` with the assertions at `sites` as assumptions."""
    sites = set(sites)
    if not sites:
        return program
    on = {ei for ei, _ in sites}
    return program.with_edges(
        Edge(e.src, e.dst, tuple(Assume(s.cond, s.src) if (ei, si) in sites and isinstance(s, Assert) else s
                                 for si, s in enumerate(e.stmts))) if ei in on else e
        for ei, e in enumerate(program.edges))


def touching_note(program: Program, sites) -> str:
    """Why a check at `sites` that stays unknown may do so: the refused calls a run can make before it (``
    when none can)."""
    if not program.refusals:
        return ""
    calls = sorted(touching(program, refused_of(program), sites))
    if not calls:
        return ""
    first = _stmt(program, calls[0]).src
    what = next((r.describe() for r in program.refusals if r.call == first), "a refused construct")
    more = f" and {len(calls) - 1} other refused call{'s' if len(calls) > 2 else ''}" if len(calls) > 1 else ""
    return f"; a run can reach it after the call at {first}{more}, whose code looprover refuses ({what})"


def _stmt(program: Program, site: Site):
    return program.edges[site[0]].stmts[site[1]]


@dataclass
class _Graph:
    """What the walks need of a program, made once per program (`check` asks again for each check)."""
    exits: tuple[Site, ...]
    calls: list[tuple[Site, Code | None]]    # the exits that run code the CFA does not hold (None: any code)
    succ: dict[int, list[int]]
    preds: dict[int, list[int]]


_GRAPHS: dict[int, tuple[Program, _Graph]] = {}


def _graph(program: Program) -> _Graph:
    got = _GRAPHS.get(id(program))
    if got is not None and got[0] is program:
        return got[1]
    exits = tuple((ei, si) for ei, e in enumerate(program.edges) for si, s in enumerate(e.stmts)
                  if isinstance(s, Assert) and s.prop in UNMODELLED and s.cond != TRUE)
    calls = []
    for site in exits:
        s = _stmt(program, site)
        if s.prop == UNMODELLED_CALL:
            calls.append((site, None))
        elif s.prop == UNMODELLED_REFUSED:
            found = [r for r in program.refusals if r.call == s.src]
            known = found and all(r.extents is not None for r in found)
            calls.append((site, tuple(x for r in found for x in r.extents) if known else None))
    preds: dict[int, list[int]] = {}
    for e in program.edges:
        preds.setdefault(e.dst, []).append(e.src)
    graph = _Graph(exits, calls, successors(program.edges), preds)
    if len(_GRAPHS) >= 4:
        _GRAPHS.clear()
    _GRAPHS[id(program)] = (program, graph)
    return graph


def _first_on_edge(sites) -> dict[int, int]:
    """Per edge, the least statement index of `sites` on it."""
    first: dict[int, int] = {}
    for ei, si in sites:
        first[ei] = min(si, first.get(ei, si))
    return first


def _later(first: dict[int, int], site: Site) -> bool:
    """Whether `site` comes after one of the sites `first` was made of, on the same edge."""
    return site[0] in first and first[site[0]] < site[1]


def _in_code(src, code) -> bool:
    """Whether the source place `src` lies in the extents `code` (a place not known could lie anywhere)."""
    if src is None:
        return True
    return any(first <= src.line <= last and same_file(file, src.file) for file, first, last in code)
