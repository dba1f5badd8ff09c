"""Independent checks of TPA's answers: every SAFE and UNSAFE leaves the core only through these functions.

They use fresh solvers and the transition system as given (never the engine's levels, caches or solvers), so a
bug in the search shows up as a failed check -- which the core turns into UNKNOWN, never into a verdict.
"""
from __future__ import annotations

import z3

from looprover.smt.mbp import QEError, free_constants, qe
from looprover.smt.ts import TransitionSystem
from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.smt.solver import check, plain_solver, unsat
from looprover.tpa.result import SafeCertificate, State, UnsafeWitness, Vocabulary, is_state, state_of


def _bad_symbols(f: z3.ExprRef, allowed: list[z3.ExprRef]) -> list[z3.ExprRef]:
    ok = {v.get_id() for v in allowed}
    return [c for c in free_constants(f) if c.get_id() not in ok]


# --------------------------------------------------------------------------------------------------- SAFE
def check_safe_certificate(ts: TransitionSystem, cert: SafeCertificate, deadline: Deadline) -> str | None:
    """None if `cert` proves that Bad is unreachable (conditions in `SafeCertificate`), else what failed.

    Timeouts count as failures (OutOfTime propagates; the caller reports UNKNOWN).
    """
    voc = Vocabulary(ts)
    x, x1, x2 = voc.x, voc.x1, voc.x2
    ti = cert.ti
    extra = _bad_symbols(ti, x + x1)
    if extra:
        return f"transition invariant mentions non-state symbols {extra[:5]}"
    init, bad = ts.init, ts.bad
    if cert.kind in ("split-right", "split-left"):
        return _check_split(voc, ts, cert, deadline)
    ti_refl = voc.rel_to(ti, x, x)
    ti_02 = voc.rel_to(ti, x, x2)
    if cert.kind == "right":
        conds = [
            ("Init(x) ⇒ TI(x,x)", [init, z3.Not(ti_refl)]),
            ("Init(x) ∧ TI(x,x') ∧ Tr(x',x'') ⇒ TI(x,x'')",
             [init, ti, voc.trans(x1, x2, "chk"), z3.Not(ti_02)]),
        ]
    elif cert.kind == "left":
        conds = [
            ("Bad(x) ⇒ TI(x,x)", [bad, z3.Not(ti_refl)]),
            ("Tr(x,x') ∧ TI(x',x'') ∧ Bad(x'') ⇒ TI(x,x'')",
             [voc.trans(x, x1, "chk"), voc.rel_to(ti, x1, x2), voc.cur_to(bad, x2), z3.Not(ti_02)]),
        ]
    else:
        return f"unknown certificate kind {cert.kind!r}"
    conds.append(("Init(x) ∧ TI(x,x') ∧ Bad(x') unsat", [init, ti, voc.cur_to(bad, x1)]))
    for name, fs in conds:
        if not unsat(deadline, *fs):
            return f"certificate condition fails: {name}"
    return None


def _check_split(voc: Vocabulary, ts: TransitionSystem, cert: SafeCertificate, deadline: Deadline) -> str | None:
    """The conditions of a split certificate (`SafeCertificate`), each decided by a fresh solver: the chain
    from E_0 = Tr and L_0 = Id, E_i's (restricted) transitivity, and that no path in the TI meets Init and Bad."""
    x, x1, x2 = voc.x, voc.x1, voc.x2
    w = [z3.Const(f"{v}!chk3", v.sort()) for v in x]
    i = cert.level
    if i < 1 or len(cert.chain) != i:
        return f"split certificate of level {i} has {len(cert.chain)} levels"
    for e, lt in cert.chain:
        extra = _bad_symbols(e, x + x1) + _bad_symbols(lt, x + x1)
        if extra:
            return f"split certificate level mentions non-state symbols {extra[:5]}"

    def rel(f: z3.BoolRef, a: list, b: list) -> z3.BoolRef:
        return voc.rel_to(f, a, b)
    conds = []
    for k in range(i):
        e_next, l_next = cert.chain[k]
        if k == 0:
            conds += [("Tr∘Tr ⊆ E_1", [voc.trans(x, x1, "chk1"), voc.trans(x1, x2, "chk2"),
                                        z3.Not(rel(e_next, x, x2))]),
                      ("Id ⊆ L_1", [z3.Not(rel(l_next, x, x))]),
                      ("Tr ⊆ L_1", [voc.trans(x, x2, "chk1"), z3.Not(rel(l_next, x, x2))])]
            continue
        e, lt = cert.chain[k - 1]
        conds += [(f"E_{k}∘E_{k} ⊆ E_{k + 1}", [rel(e, x, x1), rel(e, x1, x2), z3.Not(rel(e_next, x, x2))]),
                  (f"L_{k} ⊆ L_{k + 1}", [rel(lt, x, x2), z3.Not(rel(l_next, x, x2))]),
                  (f"L_{k}∘E_{k} ⊆ L_{k + 1}", [rel(lt, x, x1), rel(e, x1, x2), z3.Not(rel(l_next, x, x2))])]
    e, lt = cert.chain[-1]
    trans = [rel(e, x, x1), rel(e, x1, x2), z3.Not(rel(e, x, x2))]
    if cert.restricted:
        trans += [voc.cur_to(ts.init, w), rel(lt, w, x)] if cert.kind == "split-right" else \
            [rel(lt, x2, w), voc.cur_to(ts.bad, w)]
    conds.append((f"E_{i} transitive{' (restricted)' if cert.restricted else ''}", trans))
    conds.append((f"Init ∧ L_{i} ∧ Bad' unsat", [ts.init, rel(lt, x, x1), voc.cur_to(ts.bad, x1)]))
    if cert.kind == "split-right":
        conds.append((f"Init ∧ L_{i}∘E_{i} ∧ Bad'' unsat", [ts.init, rel(lt, x, x1), rel(e, x1, x2),
                                                           voc.cur_to(ts.bad, x2)]))
    else:
        conds.append((f"Init ∧ E_{i}∘L_{i} ∧ Bad'' unsat", [ts.init, rel(e, x, x1), rel(lt, x1, x2),
                                                           voc.cur_to(ts.bad, x2)]))
    for name, fs in conds:
        if not unsat(deadline, *fs):
            return f"certificate condition fails: {name}"
    return None


def check_state_invariant(ts: TransitionSystem, inv: z3.BoolRef, deadline: Deadline) -> str | None:
    """None if `inv` (over ts.state) is an inductive invariant that excludes Bad."""
    voc = Vocabulary(ts)
    extra = _bad_symbols(inv, voc.x)
    if extra:
        return f"invariant mentions non-state symbols {extra[:5]}"
    conds = [
        ("Init ⇒ Inv", [ts.init, z3.Not(inv)]),
        ("Inv ∧ Tr ⇒ Inv'", [inv, ts.trans, z3.Not(voc.cur_to(inv, voc.x1))]),
        ("Inv ∧ Bad unsat", [inv, ts.bad]),
    ]
    for name, fs in conds:
        if not unsat(deadline, *fs):
            return f"state invariant condition fails: {name}"
    return None


def state_invariant(ts: TransitionSystem, cert: SafeCertificate, deadline: Deadline,
                    timeout: float = 2.0) -> z3.BoolRef | None:
    """The state invariant of a checked certificate by exact QE, checked inductive; None if QE is too costly.

    right: `∃x. Init(x) ∧ TI(x, x')` renamed to x (the states reachable "as far as TI knows");
    left: `¬∃x'. TI(x, x') ∧ Bad(x')` (the states that TI says cannot reach Bad).
    """
    voc = Vocabulary(ts)
    if deadline.expired() or cert.kind not in ("right", "left"):
        return None          # split: the TI composes two levels, its state invariant is not 1-inductive
    t = deadline.cap(timeout)
    try:
        if cert.kind == "right":
            post = qe(z3.And(ts.init, cert.ti), eliminate=voc.x, deadline=t)
            inv = voc._sub(post, voc.x1, voc.x)
        else:
            pre = qe(z3.And(cert.ti, voc.cur_to(ts.bad, voc.x1)), eliminate=voc.x1, deadline=t)
            inv = z3.simplify(z3.Not(pre))
    except (QEError, z3.Z3Exception):
        return None
    try:
        if check_state_invariant(ts, inv, deadline) is not None:
            return None
    except (OutOfTime, GiveUp):
        return None
    return inv


# --------------------------------------------------------------------------------------------------- UNSAFE
def _replay(voc: Vocabulary, start: State, steps: int, pins: list[tuple[int, State]], deadline: Deadline,
            first: z3.BoolRef | None = None, last: z3.BoolRef | None = None) -> list[State] | None:
    """A concrete path of exactly `steps` Tr-steps from `start` through the pinned (index, state) points, or None
    if no such path exists. `first`/`last` are extra state formulas at the ends (Init, Bad)."""
    ys = [voc.step(t) for t in range(steps + 1)]
    s = plain_solver(voc.ctx)
    s.add(is_state(ys[0], start, voc.ctx))
    if first is not None:
        s.add(voc.cur_to(first, ys[0]))
    for t in range(steps):
        s.add(voc.trans(ys[t], ys[t + 1], f"r{t}"))
    for idx, st in pins:
        s.add(is_state(ys[idx], st, voc.ctx))
    if last is not None:
        s.add(voc.cur_to(last, ys[steps]))
    if check(s, deadline) != z3.sat:
        return None
    m = s.model()
    return [state_of(m, y) for y in ys]


DENSE_CHUNK = 16       # a power segment longer than this is split through the powers before it is unrolled


def _densified(voc: Vocabulary, waypoints: list[tuple[int, State]], powers: list[z3.BoolRef], limit: int,
               deadline: Deadline) -> list[tuple[int, State]]:
    """`waypoints` with each segment of 2^j steps (DENSE_CHUNK < 2^j ≤ `limit`) split at a midpoint through
    E_{j-1} ∘ E_{j-1}, down to DENSE_CHUNK steps. Why: unrolling a long segment of a branching Tr with only its
    ends pinned is hard for z3 (500 steps of a +1/+2 counter: 22 s), a midpoint query over two powers is not.
    Only an aid: the replay still checks every step against Tr, so a midpoint from a wrong power makes the
    replay fail, never pass."""
    out = [waypoints[0]]
    for (i, p), (k, q) in zip(waypoints, waypoints[1:]):
        out.extend(_bisected(voc, powers, (i, p), (k, q), limit, deadline))
    return out


def _bisected(voc: Vocabulary, powers: list[z3.BoolRef], a: tuple[int, State], b: tuple[int, State], limit: int,
              deadline: Deadline) -> list[tuple[int, State]]:
    """The points after `a` up to `b` (included) that split a..b into pieces of at most DENSE_CHUNK steps."""
    length = b[0] - a[0]
    j = length.bit_length() - 1
    if length <= DENSE_CHUNK or length > limit or length != 1 << j or j - 1 > len(powers):
        return [b]
    half = powers[j - 2]                                    # E_{j-1} (powers[0] is E_1)
    s = plain_solver(voc.ctx)
    s.add(is_state(voc.x, a[1], voc.ctx), half, voc.rel_to(half, voc.x1, voc.x2), is_state(voc.x2, b[1], voc.ctx))
    if check(s, deadline) != z3.sat:
        return [b]
    mid = (a[0] + length // 2, state_of(s.model(), voc.x1))
    return _bisected(voc, powers, a, mid, limit, deadline) + _bisected(voc, powers, mid, b, limit, deadline)


REPLAY_CHUNK = 64      # steps per BMC query of a replay whose waypoints are at most this far apart


def _replay_in_chunks(voc: Vocabulary, waypoints: list[tuple[int, State]], deadline: Deadline,
                      init: z3.BoolRef | None = None, bad: z3.BoolRef | None = None) -> list[State] | None:
    """The whole path through `waypoints` (`init` at the first, `bad` at the last), unrolled a chunk of consecutive
    waypoints at a time: each chunk's path joins the next at a pinned state, so together they are one path.
    (One query over all 895 steps of a +1/+2 counter, pinned every 16, took z3 22 s.)"""
    if len(waypoints) == 1:
        return _replay(voc, waypoints[0][1], 0, [], deadline, first=init, last=bad)
    path: list[State] = [waypoints[0][1]]
    i = 0
    while i < len(waypoints) - 1:
        j = i + 1
        while j + 1 < len(waypoints) and waypoints[j + 1][0] - waypoints[i][0] <= REPLAY_CHUNK:
            j += 1
        a_idx, a_state = waypoints[i]
        pins = [(idx - a_idx, st) for idx, st in waypoints[i + 1:j + 1]]
        part = _replay(voc, a_state, waypoints[j][0] - a_idx, pins, deadline, first=init if i == 0 else None,
                       last=bad if j == len(waypoints) - 1 else None)
        if part is None:
            return None
        path.extend(part[1:])
        i = j
    return path


def _power_chain_ok(voc: Vocabulary, powers: list[z3.BoolRef], j: int, deadline: Deadline,
                    done: set[int]) -> str | None:
    """E_1..E_j (over x, x') each a real composition of the previous one (E_0 = Tr): `E_i ∧ ∀mid. ¬(E_{i-1} ∘
    E_{i-1})` unsat, decided by quantifier instantiation with a fresh solver."""
    for i in range(1, j + 1):
        if i in done:
            continue
        e = powers[i - 1]
        if [c for c in free_constants(e) if c.get_id() not in {v.get_id() for v in voc.x + voc.x1}]:
            return f"power {i} mentions non-state symbols"
        if i == 1:
            a, b = voc.aux_copy("vp1"), voc.aux_copy("vp2")
            comp = z3.And(voc.trans(voc.x, voc.x2, "vp1"), voc.trans(voc.x2, voc.x1, "vp2"))
            elim = voc.x2 + a + b
        else:
            prev = powers[i - 2]
            comp = z3.And(voc.rel_to(prev, voc.x, voc.x2), voc.rel_to(prev, voc.x2, voc.x1))
            elim = list(voc.x2)
        s = plain_solver(voc.ctx)
        s.add(e, z3.ForAll(elim, z3.Not(comp)) if elim else z3.Not(comp))
        if check(s, deadline) != z3.unsat:
            return f"power {i} is not a composition of power {i - 1}"
        done.add(i)
    return None


def replay_counterexample(ts: TransitionSystem, depth: int, waypoints: list[tuple[int, State]],
                          deadline: Deadline, replay_limit: int = 2000,
                          powers: list[z3.BoolRef] | None = None) -> UnsafeWitness | str:
    """Confirm a counterexample claimed by the search; returns the witness, or the reason the claim failed.

    depth ≤ replay_limit: one exact BMC query `Init(y_0) ∧ Tr^depth ∧ Bad(y_depth)` pinned to the waypoints gives
    the whole path. Deeper: Init(initial) and Bad(final) are checked, and the waypoint-to-waypoint segments are
    replayed in chunks of at most `replay_limit` steps. A single segment longer than that (only exact powers
    produce those) cannot be unrolled: it must be 2^j steps long with `E_j(p, q)` true for the given powers
    `powers[j-1]` = E_j(x, x'), and the power chain is re-validated from Tr here; without powers it fails.
    A caller can then replay the original program from `initial` (deterministic when the loop's only
    nondeterminism is the initial state).
    """
    voc = Vocabulary(ts)
    if not waypoints or waypoints[0][0] != 0 or waypoints[-1][0] != depth:
        return "malformed waypoints"
    if any(b[0] < a[0] for a, b in zip(waypoints, waypoints[1:])):
        return "waypoints out of order"
    src, dst = waypoints[0][1], waypoints[-1][1]
    if powers:
        waypoints = _densified(voc, waypoints, powers, replay_limit, deadline)
    if depth <= replay_limit:
        path = _replay_in_chunks(voc, waypoints, deadline, ts.init, ts.bad)
        if path is None:
            return f"BMC replay of the {depth}-step counterexample is unsat"
        return UnsafeWitness(depth, path[0], path[-1], path, list(waypoints), "bmc", list(ts.names))
    ends = [(is_state(voc.x, src, voc.ctx), ts.init, "Init(initial)"), (is_state(voc.x, dst, voc.ctx), ts.bad,
                                                                      "Bad(final)")]
    for pt, f, name in ends:
        s = plain_solver(voc.ctx)
        s.add(pt, f)
        if check(s, deadline) != z3.sat:
            return f"{name} does not hold"
    replayed = by_powers = 0
    validated: set[int] = set()
    i = 0
    while i < len(waypoints) - 1:
        a_idx, a_state = waypoints[i]
        j = i + 1
        length = waypoints[j][0] - a_idx
        if length > replay_limit:                            # a power segment: too long to unroll
            p = length.bit_length() - 1
            if length != 1 << p or not powers or p > len(powers):
                return f"segment {a_idx}..{waypoints[j][0]} is too long to replay and not an exact power"
            why = _power_chain_ok(voc, powers, p, deadline, validated)
            if why is not None:
                return why
            s = plain_solver(voc.ctx)
            s.add(is_state(voc.x, a_state, voc.ctx), is_state(voc.x1, waypoints[j][1], voc.ctx), powers[p - 1])
            if check(s, deadline) != z3.sat:
                return f"segment {a_idx}..{waypoints[j][0]} is not in power {p}"
            by_powers += length
            i = j
            continue
        while j + 1 < len(waypoints) and waypoints[j + 1][0] - waypoints[j][0] <= replay_limit:
            j += 1                                          # the run of segments short enough to unroll
        if _replay_in_chunks(voc, waypoints[i:j + 1], deadline) is None:
            return f"segment {a_idx}..{waypoints[j][0]} does not replay"
        replayed += waypoints[j][0] - a_idx
        i = j
    how = "segments" if by_powers == 0 else \
        f"segments ({replayed} of {depth} steps replayed, {by_powers} by re-validated exact powers)"
    return UnsafeWitness(depth, src, dst, None, list(waypoints), how, list(ts.names))
