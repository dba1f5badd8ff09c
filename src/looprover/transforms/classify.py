"""Variable classification of one natural loop for output abstraction (LABMC).

For a loop L with header H, one *iteration* is a path from H through the body that ends at a back edge (to H)
or leaves L through an exit edge. Over the variables `W` written on L's body edges:

  * **IO** (input-output): some iteration may read the value it had at the start of the iteration, i.e. the
    value from an earlier iteration or from before the loop: an *upward-exposed* use. Uses in the loop
    condition (the `Assume`s on H's out-edges) are upward-exposed by construction.
  * **PO** (pure output): every read in an iteration follows a write of the same iteration on every path to
    it (a must-write analysis), so the incoming value never matters to an iteration.
  * **inputs**: read but not in `W` (constant during the loop).

Conservatism comes for free from the IR: an array write `a := Store(a, i, v)` reads `a`, so a written array is
IO unless it is wholly assigned first; pointers are (id, offset) integer pairs and dereferences are case splits
over ordinary variables; calls are inlined, so globals are ordinary variables too. Nothing here can be
"unclassifiable": any variable that is not provably PO is IO.

Two refinements shrink the bound of the abstract loop (`abstract_bound`): a PO that is dead where the loop
is left (no path reads it before overwriting it) does not need its last writing iteration replayed, and a PO
written by every complete iteration has the final (or last complete) iteration as its last writer.
"""
from __future__ import annotations

from dataclasses import dataclass

from looprover.program.cfa import Assert, Edge, Program
from looprover.program.expr import FALSE, Var
from looprover.program.liveness import live_through
from looprover.program.loops import Loop


@dataclass(frozen=True)
class Classification:
    header: int
    written: frozenset[Var]        # written on body edges (loop-carried candidates)
    io: frozenset[Var]             # written and upward-exposed
    po: frozenset[Var]             # written, never upward-exposed
    po_live: frozenset[Var]        # POs live where the loop is left
    inputs: frozenset[Var]         # read in the loop (body or exit edges), not written on body edges
    po_always: frozenset[Var]      # live POs written by every iteration that returns to the header
    po_edges: int                  # body edges writing a live PO that is not in `po_always`
    partial_exit: bool             # the loop can be left in the middle of an iteration (break, return)
    bound: int                     # M: iterations of the abstract loop (see `abstract_bound`)

    def describe(self) -> str:
        names = lambda vs: ", ".join(sorted(v.name for v in vs)) or "-"  # noqa: E731
        return (f"IO {{{names(self.io)}}}, PO {{{names(self.po)}}} (live {{{names(self.po_live)}}}, "
                f"always written {{{names(self.po_always)}}}), inputs {{{names(self.inputs)}}}, M = {self.bound}")


def must_written(program: Program, loop: Loop) -> dict[int, frozenset[Var]]:
    """For each body location, the variables written on every path from the start of an iteration (H) to
    it within one iteration (back edges end an iteration, so H itself has none)."""
    body = loop.body
    h = loop.header
    top = None
    mw: dict[int, frozenset[Var] | None] = {l: top for l in body}
    mw[h] = frozenset()
    ins: dict[int, list[Edge]] = {l: [] for l in body}
    for e in loop.body_edges:
        if e.dst != h:
            ins[e.dst].append(e)
    order = sorted(body)
    changed = True
    while changed:
        changed = False
        for l in order:
            if l == h:
                continue
            acc: frozenset[Var] | None = None
            for e in ins[l]:
                src = mw[e.src]
                if src is None:
                    continue      # not yet reached: the identity of the meet
                val = src | e.writes()
                acc = val if acc is None else acc & val
            if acc is not None and acc != mw[l]:
                mw[l] = acc
                changed = True
    return {l: (v if v is not None else frozenset()) for l, v in mw.items()}


def upward_exposed(program: Program, loop: Loop, mw: dict[int, frozenset[Var]]) -> frozenset[Var]:
    """Variables some iteration may read before writing them (on body and exit edges)."""
    ue: set[Var] = set()
    for e in loop.body_edges + loop.exit_edges:
        w = set(mw[e.src])
        for s in e.stmts:
            ue |= s.reads() - w
            w |= s.writes()
    return frozenset(ue)


def abstract_bound(po_other: int, po_edges: int, extra_complete: bool) -> int:
    """M = min(|PO'|, #body edges writing PO') + 1 (+ 1 when `extra_complete`), where PO' are the live POs
    not written by every complete iteration.

    Why this is enough. Take any execution of the loop and keep these iterations:
      (a) the final one: it leaves the loop (at the header, or in the middle through a break/return), or
          fails an assertion;
      (b) for each p in PO', the last iteration writing p. Each such iteration is the last one to take some
          PO'-writing body edge (an edge's statements all run when it is taken, so a later iteration through
          that edge would write p again), so there are at most min(|PO'|, #edges) of them;
      (c) if some live PO is written by every complete iteration and the final iteration may be partial
          (`extra_complete`): the last complete iteration. Such a PO's last writer is (a) or (c).
    Replay only the kept iterations, in order, each from a state whose IO part equals the real one
    (havoc or acceleration can pick it). An iteration reads only IO variables and inputs before writing, so
    it computes the same IO values, takes the same path, and writes the same outputs. So the replay ends
    with the real IO values, the real value of every live PO (its last writer is replayed and no later
    kept iteration writes it), and the same exit or assertion failure. Dead POs may differ; nothing reads
    them before overwriting them.
    """
    return min(po_other, po_edges) + 1 + (1 if extra_complete else 0)


def always_written(loop: Loop, mw: dict[int, frozenset[Var]]) -> frozenset[Var]:
    """Variables written on every path from the header to a back edge (every complete iteration)."""
    acc: frozenset[Var] | None = None
    for e in loop.back_edges:
        w = mw[e.src] | e.writes()
        acc = w if acc is None else acc & w
    return acc or frozenset()


def _partial_exit(loop: Loop) -> bool:
    """Can an iteration leave the loop after running part of the body? Exit edges from the header leave
    between iterations; an exit edge whose statements include `assert(false)` ends in a failure (or
    blocks), after which nothing is observed."""
    for e in loop.exit_edges:
        if e.src == loop.header:
            continue
        if any(isinstance(s, Assert) and s.cond == FALSE for s in e.stmts):
            continue
        return True
    return False


def classify(program: Program, loop: Loop, live: dict[int, frozenset[Var]]) -> Classification:
    mw = must_written(program, loop)
    written: set[Var] = set()
    reads: set[Var] = set()
    for e in loop.body_edges:
        written |= e.writes()
    for e in loop.body_edges + loop.exit_edges:
        reads |= e.reads()
    ue = upward_exposed(program, loop, mw)
    io = frozenset(written) & ue
    po = frozenset(written) - ue
    live_out: set[Var] = set()
    for e in loop.exit_edges:
        live_out |= live_through(e, live.get(e.dst, frozenset()))
    po_live = po & frozenset(live_out)
    po_always = po_live & always_written(loop, mw)
    po_other = po_live - po_always
    po_edges = sum(1 for e in loop.body_edges if e.writes() & po_other)
    partial = _partial_exit(loop)
    inputs = frozenset(reads) - frozenset(written)
    return Classification(loop.header, frozenset(written), io, po, po_live, inputs, po_always, po_edges,
                          partial, abstract_bound(len(po_other), po_edges, bool(po_always) and partial))
