"""Which checks a refused call can touch (`looprover check`).

Under `check`, a call whose function's body has a construct the front-end refuses is an assertion that no run
makes it (`properties.UNMODELLED_REFUSED`, with the call's `cfa.Refusal`), and the code after the call stays in
the CFA. A run that makes the call leaves the model there; what it does next is not modelled, but where it can go
is known: through the refused code (the function and everything it calls: the refusal's source extents), then
back along the CFA from the call. So a check can be reached after a refused call only if one of its sites lies on
the CFA after the call, or its source line lies in the code the call runs, or in that of another refused call
on the way (or a call through a function pointer to a function of another type is on the way: its callee is not
in the CFA either).

A check that no refused call touches has the refused calls' assertions as assumptions (`asserting`): a real run
that reaches its violation never made such a call (it could not have reached the check after it), so it is a run
of the model up to there. The checks a refused call touches keep its assertion and stay unknown unless a proof
shows no run makes the call. Without this, one refused function called at start-up left every check of the
program unknown.
"""
from __future__ import annotations

import os
from functools import lru_cache

from looprover.program.cfa import Assert, Assume, Edge, Program, Refusal, reached_from, successors
from looprover.properties import UNMODELLED_CALL, UNMODELLED_REFUSED

Site = tuple[int, int]      # (edge index, statement index)


class RefusalReach:
    """The refused calls of a program and, for each, what a run that makes it can reach next (module
    docstring)."""

    def __init__(self, program: Program):
        self.program = program
        edges = program.edges
        # the model's exits on the way: refused calls and calls of functions no CFA edge reaches
        marks = [(ei, si, s) for ei, e in enumerate(edges) for si, s in enumerate(e.stmts)
                 if isinstance(s, Assert) and s.prop in (UNMODELLED_REFUSED, UNMODELLED_CALL)]
        self.sites: list[Site] = [(ei, si) for ei, si, s in marks if s.prop == UNMODELLED_REFUSED]
        succ = successors(edges)
        self._after: dict[Site, frozenset[int]] = {}
        self._code: dict[Site, tuple | None] = {}
        for site in self.sites:
            dst = edges[site[0]].dst
            after = frozenset({dst} | reached_from(edges, dst, succ))
            self._after[site] = after
            self._code[site] = self._code_on_the_way(site, after, marks)

    def _code_on_the_way(self, site: Site, after: frozenset[int], marks) -> tuple | None:
        """The source extents of the refused code a run from `site` can run: its own call's and those of the
        refused calls after it; None when that is not known."""
        extents: list = []
        for ei, si, s in marks:
            if self.program.edges[ei].src not in after and not (ei == site[0] and si >= site[1]):
                continue
            if s.prop == UNMODELLED_CALL:
                return None
            code = self._refused_code(s)
            if code is None:
                return None
            extents.extend(code)
        return tuple(extents)

    def _refused_code(self, s: Assert) -> tuple | None:
        found = [r for r in self.program.refusals if r.call == s.src]
        if not found or any(r.extents is None for r in found):
            return None
        return tuple(x for r in found for x in r.extents)

    def touches(self, refusal: Site, site: Site) -> bool:
        """Whether a run that makes the refused call at `refusal` can go on to the check assertion at `site`."""
        code = self._code[refusal]
        if code is None:
            return True
        e = self.program.edges[site[0]]
        if e.src in self._after[refusal] or (site[0] == refusal[0] and site[1] > refusal[1]):
            return True
        src = e.stmts[site[1]].src
        if src is None:
            return True
        return any(first <= src.line <= last and _same_file(file, src.file) for file, first, last in code)

    def touching(self, sites) -> set[Site]:
        """The refused calls that touch any of `sites`."""
        sites = list(sites)
        return {r for r in self.sites if any(self.touches(r, s) for s in sites)}


def touching_note(program: Program, sites) -> str:
    """Why a check at `sites` that stays unknown may do so: the refused calls a run can make before it (``
    when none can)."""
    if not program.refusals:
        return ""
    reach = reach_of(program)
    calls = sorted(reach.touching(sites))
    if not calls:
        return ""
    first = reach.program.edges[calls[0][0]].stmts[calls[0][1]].src
    what = next((r.describe() for r in program.refusals if r.call == first), "a refused construct")
    more = f" and {len(calls) - 1} other refused call{'s' if len(calls) > 2 else ''}" if len(calls) > 1 else ""
    return f"; a run can reach it after the call at {first}{more}, whose code looprover refuses ({what})"


_REACH: dict[int, tuple[tuple[Refusal, ...], RefusalReach]] = {}


def reach_of(program: Program) -> RefusalReach:
    """`RefusalReach` of `program`, computed once for all the programs `check` derives from one lowering: they
    share its refusals and its graph, and differ only in which checks are assertions (on debie1, computing it
    for each took 140 s)."""
    got = _REACH.get(id(program.refusals))
    if got is not None and got[0] is program.refusals and _same_graph(got[1], program):
        return got[1]
    if len(_REACH) > 8:
        _REACH.clear()
    reach = RefusalReach(program)
    _REACH[id(program.refusals)] = (program.refusals, reach)
    return reach


def _same_graph(reach: RefusalReach, program: Program) -> bool:
    """Whether `reach`, computed for another program, holds for `program`: same edges between the same
    locations, the refused calls at the same sites."""
    a, b = reach.program.edges, program.edges
    if len(a) != len(b) or any(x.src != y.src or x.dst != y.dst for x, y in zip(a, b)):
        return False
    for ei, si in reach.sites:
        stmts = b[ei].stmts
        s = stmts[si] if si < len(stmts) else None
        if not (isinstance(s, Assert) and s.prop == UNMODELLED_REFUSED and s.src == a[ei].stmts[si].src):
            return False
    return True


def asserting_refusals(program: Program, sites) -> Program:
    """`program` with the refused calls that touch none of the check assertions at `sites` as assumptions."""
    if not program.refusals:
        return program
    reach = reach_of(program)
    keep = reach.touching(sites)
    if len(keep) == len(reach.sites):
        return program
    edges = []
    for ei, e in enumerate(program.edges):
        if any(isinstance(s, Assert) and s.prop == UNMODELLED_REFUSED for s in e.stmts):
            e = Edge(e.src, e.dst, tuple(Assume(s.cond, s.src) if isinstance(s, Assert) and
                                         s.prop == UNMODELLED_REFUSED and (ei, si) not in keep else s
                                         for si, s in enumerate(e.stmts)))
        edges.append(e)
    return program.with_edges(edges)


@lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def _same_file(a: str, b: str) -> bool:
    return a == b or _real(a) == _real(b)
