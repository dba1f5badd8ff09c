"""CFA clean-up after lowering: drop unreachable locations and merge straight-line chains.

Why: the lowering creates a location for every join, label and statement boundary; engines pay per location
(BMC unrolls edges, cutpoint graphs enumerate paths). Merging a location that has exactly one way in and one
way out into a single edge keeps the semantics (edges are atomic statement sequences) and keeps every loop head,
because a loop head has at least two incoming edges.
"""
from __future__ import annotations

from looprover.program.cfa import Edge, SrcLoc


def simplify(edges: list[Edge], init: int, exit_: int, num_locs: int,
             loc_src: dict[int, SrcLoc], loc_names: dict[int, str]):
    """Returns (edges, init, exit, num_locs, loc_src, loc_names) with locations renumbered densely."""
    edges = list(edges)
    # 1. skip empty edges out of a location whose only out-edge is empty: redirect its in-edges
    out: dict[int, list[int]] = {}
    for i, e in enumerate(edges):
        out.setdefault(e.src, []).append(i)
    forward: dict[int, int] = {}
    for loc, idxs in out.items():
        if loc in (init, exit_) or len(idxs) != 1:
            continue
        e = edges[idxs[0]]
        if not e.stmts and e.dst != loc:
            forward[loc] = e.dst
    for start in list(forward):  # a cycle of empty edges (`while (1);`) must stay a cycle
        path: list[int] = []
        l = start
        while l in forward and l not in path:
            path.append(l)
            l = forward[l]
        if l in path:
            for x in path[path.index(l):]:
                forward.pop(x, None)

    def resolve(l: int) -> int:
        while l in forward:
            l = forward[l]
        return l

    if forward:
        new_edges = []
        for e in edges:
            if e.src in forward:
                continue  # the skipped location's own empty edge
            d = resolve(e.dst)
            if d != e.dst:
                if e.dst in loc_names and d not in loc_names:
                    loc_names[d] = loc_names[e.dst]
                e = Edge(e.src, d, e.stmts)
            new_edges.append(e)
        edges = new_edges

    # 2. merge A -e1-> L -e2-> B when L has exactly one in-edge and one out-edge
    while True:
        ins: dict[int, list[int]] = {}
        outs: dict[int, list[int]] = {}
        for i, e in enumerate(edges):
            outs.setdefault(e.src, []).append(i)
            ins.setdefault(e.dst, []).append(i)
        merged = False
        dead: set[int] = set()
        for loc in list(outs):
            if loc in (init, exit_):
                continue
            if len(ins.get(loc, ())) != 1 or len(outs.get(loc, ())) != 1:
                continue
            i_in, i_out = ins[loc][0], outs[loc][0]
            if i_in in dead or i_out in dead:
                continue
            e1, e2 = edges[i_in], edges[i_out]
            if e1.src == loc or e2.dst == loc:
                continue
            edges[i_in] = Edge(e1.src, e2.dst, e1.stmts + e2.stmts)
            dead.add(i_out)
            merged = True
        if not merged:
            break
        edges = [e for i, e in enumerate(edges) if i not in dead]

    # 3. keep what is reachable from init; renumber (init first, exit kept even if unreachable)
    succ: dict[int, list[int]] = {}
    for e in edges:
        succ.setdefault(e.src, []).append(e.dst)
    order = [init]
    seen = {init}
    i = 0
    while i < len(order):
        for d in succ.get(order[i], ()):
            if d not in seen:
                seen.add(d)
                order.append(d)
        i += 1
    if exit_ not in seen:
        order.append(exit_)
        seen.add(exit_)
    ren = {old: new for new, old in enumerate(order)}
    new_edges = [Edge(ren[e.src], ren[e.dst], e.stmts) for e in edges if e.src in ren]
    new_src = {ren[l]: s for l, s in loc_src.items() if l in ren}
    new_names = {ren[l]: n for l, n in loc_names.items() if l in ren}
    return new_edges, ren[init], ren[exit_], len(order), new_src, new_names
