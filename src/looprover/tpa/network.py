"""Multi-loop TPA over a DAG of loops (design/algorithms.md B4, Golem's `TransitionSystemNetworkManager`).

A *network* (`smt.systems.Network`, built there from a cutpoint graph like every other system) is a set of
nodes over one state vocabulary x: an entry node with its initial states, per node an optional self-loop
transition relation (its loop body), and bridge edges between nodes (loop-free code from one loop head to the
next, or to the error node). Ignoring self-loops the bridges must form a DAG (nested loops are contracted into
one edge of their enclosing loop's body first, `tpa/nested.py`). Each loop gets its own TPA
instance whose learned levels are reused across queries (they abstract the loop body alone).

Per node v the search maintains two under-approximations of the safe states, both growing monotonically:
  preSafe[v]   on arrival at v, before any iteration: every run from here avoids the error;
  postSafe[v]  at v when leaving it: every bridge out of v avoids the error.
A node without a self-loop has preSafe = postSafe (`pre_of`). The search is a depth-first stack of PRE frames
(ask the loop's TPA whether postSafe can be left from the reached states) and POST frames (ask each bridge
whether it can leave postSafe of its target); truly reachable state sets flow forward (TPA targets, MBPs),
safe sets backward (safety explanations, negated interpolants). When the stack empties the safe sets form a
proof, which `check_proof` re-checks with fresh solvers (the loops by the search's TPA certificates, checked, or
fresh TPA runs); an error reached on a bridge gives
the path (node, loop iterations) that the caller replays on the original program.

Nothing here is trusted for a verdict: UNSAFE is only a path to replay, SAFE only a proof to re-check.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

import z3

from looprover.smt.divmod import purify_divmod
from looprover.smt.interpolate import SatisfiableError, compute_interpolant
from looprover.smt.mbp import project
from looprover.smt.systems import Bridge, Network, Node
from looprover.tpa.options import TPAOptions
from looprover.tpa.loop_solver import LoopSolver
from looprover.deadline import Deadline, OutOfTime, now
from looprover.errors import GiveUp
from looprover.smt.solver import check, plain_solver, valid
from looprover.smt.solver import unsat as solver_unsat
from looprover.smt.tactics import merged_bounds
from looprover.smt.terms import dag_size
from looprover.smt.ts import TransitionSystem
from looprover.tpa.proof import CertificateText
from looprover.tpa.core import TPA
from looprover.tpa.result import SafeCertificate, TPAStatus, is_state

MAX_FORMULA = 20_000       # DAG nodes a safe set or reached set may have before the run gives up (blow-up guard)
EXIT_UNROLL = 256          # steps at most of a loop's counterexample unrolled to generalise its reached set
ITP_CAP = 10.0             # seconds per blocking-reason interpolation
CANDIDATES = 4             # the search's newest certificates per loop the proof check tries before a fresh TPA


@dataclass
class NetworkResult:
    status: TPAStatus
    reason: str = ""
    path: list[tuple[Node, int]] = field(default_factory=list)   # UNSAFE: (node, loop iterations), then error
    pre: dict[Node, z3.BoolRef] = field(default_factory=dict)     # SAFE: the proof (see `check_proof`)
    post: dict[Node, z3.BoolRef] = field(default_factory=dict)
    certificates: dict[Node, list[CertificateText]] = field(default_factory=dict)  # SAFE: the loops' TPA answers
    stats: dict = field(default_factory=dict)


@dataclass
class _Frame:
    kind: str                    # "PRE" or "POST"
    node: Node
    reached: z3.BoolRef          # over vocab(node); each state truly reachable from Init along the stack's path
    depth: int = 0               # POST: loop iterations that led from the PRE frame's states to `reached`
    reasons: list[z3.BoolRef] = field(default_factory=list)     # POST: one per blocked child, in order


class _SafeSet:
    """A disjunction kept small: a new disjunct implied by the set is dropped, old ones it implies are removed."""

    def __init__(self, ctx: z3.Context, value: bool):
        self.ctx = ctx
        self.parts: list[z3.BoolRef] = [z3.BoolVal(True, ctx)] if value else []

    @property
    def formula(self) -> z3.BoolRef:
        if not self.parts:
            return z3.BoolVal(False, self.ctx)
        return self.parts[0] if len(self.parts) == 1 else z3.Or(self.parts)

    def add(self, f: z3.BoolRef, deadline: Deadline) -> None:
        f = z3.simplify(f)
        if z3.is_false(f) or valid(z3.Implies(f, self.formula), deadline):
            return
        self.parts = [p for p in self.parts if not valid(z3.Implies(p, f), deadline)] + [f]
        size = dag_size(self.formula)
        if size > MAX_FORMULA:
            raise GiveUp(f"safe set grew to {size} terms")


class NetworkTPA:
    """The B4 search. `solve` never raises: every failure is an UNKNOWN result with its reason."""

    def __init__(self, net: Network, options: TPAOptions | None = None,
                 report: Callable[[str], None] | None = None):
        self.net = net
        self.opt = options or TPAOptions()
        self.report = report or (lambda msg: None)
        ctx = net.init.ctx
        self.ctx = ctx
        # nodes without a loop and without bridges (exit) are safe wherever the run arrives
        terminal = {v for v in net.nodes if v not in net.loops and not net.out(v) and v != net.error}
        self.pre = {v: _SafeSet(ctx, v in terminal) for v in net.nodes}
        self.post = {v: _SafeSet(ctx, v in terminal) for v in net.nodes}
        self._tpa: dict[Node, LoopSolver] = {}
        self.certificates: dict[Node, list[CertificateText]] = {}
        self.stats: Counter = Counter()
        self.times: Counter = Counter()
        self.deadline = Deadline(now())

    def pre_of(self, v: Node) -> z3.BoolRef:
        if v == self.net.error:
            return z3.BoolVal(False, self.ctx)
        return (self.pre[v] if v in self.net.loops else self.post[v]).formula

    def solve(self, deadline: Deadline) -> NetworkResult:
        """SAFE, UNSAFE or UNKNOWN (the deadline, `GiveUp`); other errors propagate to the engine runner."""
        self.deadline = deadline
        t0 = time.monotonic()
        try:
            res = self._search()
        except OutOfTime:
            res = NetworkResult(TPAStatus.UNKNOWN, "deadline reached")
        except GiveUp as exc:
            res = NetworkResult(TPAStatus.UNKNOWN, str(exc))
        res.stats.update(dict(self.stats))
        res.stats.update({k: round(t, 3) for k, t in self.times.items()})
        res.stats["time"] = round(time.monotonic() - t0, 3)
        return res

    # ------------------------------------------------------------------------------------------ search
    def _search(self) -> NetworkResult:
        net = self.net
        stack = [_Frame("PRE", net.entry, net.init)]
        while stack:
            if self.deadline.expired():
                raise OutOfTime()
            f = stack[-1]
            if f.kind == "PRE":
                if f.node not in net.loops:           # no loop: arrival = departure
                    stack[-1] = _Frame("POST", f.node, f.reached)
                    continue
                self._traverse_loop(stack)
            else:
                found = self._traverse_bridge(stack)
                if found is not None:
                    return found
        return NetworkResult(TPAStatus.SAFE, "every bridge is blocked",
                             pre={v: self.pre_of(v) for v in net.nodes if v != net.error},
                             post={v: self.post[v].formula for v in net.nodes if v != net.error},
                             certificates=self.certificates)

    def _loop_tpa(self, v: Node) -> LoopSolver:
        t = self._tpa.get(v)
        if t is None:
            false = z3.BoolVal(False, self.ctx)
            t = self._tpa[v] = LoopSolver(self.net.loop_system(v, false, false), self.opt, self.deadline)
        return t

    def _traverse_loop(self, stack: list[_Frame]) -> None:
        f = stack[-1]
        v = f.node
        if self._closed(v, f.reached):
            self.pre[v].add(f.reached, self.deadline)
            stack.pop()
            return
        solver = self._loop_tpa(v)
        self.stats["tpa_queries"] += 1
        self.report(f"multiloop: TPA query {self.stats['tpa_queries']} on the loop at node {v}")
        t0 = time.monotonic()
        bad = z3.simplify(z3.Not(self.post[v].formula))
        res, tpa = solver.solve(f.reached, bad, self.deadline)
        self.times["tpa_time"] += time.monotonic() - t0
        if res.status == TPAStatus.UNSAFE:
            w = res.witness
            target = self._exits(solver, f.reached, bad, w.path)
            if target is None:
                target = w.target if w.target is not None else is_state(self.net.vocab(v), w.final, self.ctx)
            stack.append(_Frame("POST", v, self._small(z3.simplify(target), "reached set"), depth=w.depth))
        elif res.status == TPAStatus.SAFE:
            t0 = time.monotonic()
            self.pre[v].add(tpa.safety_explanation(res.certificate), self.deadline)
            self.certificates.setdefault(v, []).append(_certificate_text(solver, res.certificate, tpa))
            self.times["explanation_time"] += time.monotonic() - t0
            stack.pop()
        else:
            if self.deadline.expired():
                raise OutOfTime()
            raise GiveUp(f"loop at node {v}: TPA: {res.reason}")

    def _exits(self, solver: LoopSolver, init: z3.BoolRef, bad: z3.BoolRef, path: list | None
               ) -> z3.BoolRef | None:
        t0 = time.monotonic()
        try:
            return reached_exits(solver.ts, init, bad, path, self.deadline)
        finally:
            self.times["exit_time"] += time.monotonic() - t0

    def _closed(self, v: Node, reached: z3.BoolRef) -> bool:
        """Is `reached` inside postSafe[v] and closed under the loop body? Then it is its own safety explanation
        (two small queries instead of a TPA run; typical when the loop cannot run from `reached`)."""
        self.stats["closure_checks"] += 1
        for fs in ([reached, z3.Not(self.post[v].formula)],
                   [reached, self.net.loops[v], z3.Not(self.net.prime(reached))]):
            s = plain_solver(self.ctx)
            s.add(*fs)
            if check(s, self.deadline) != z3.unsat:
                return False
        self.stats["closed_loops"] += 1
        return True

    def _traverse_bridge(self, stack: list[_Frame]) -> NetworkResult | None:
        net = self.net
        f = stack[-1]
        children = net.out(f.node)
        if len(f.reasons) == len(children):
            self.post[f.node].add(z3.And(f.reasons) if f.reasons else z3.BoolVal(True, self.ctx), self.deadline)
            stack.pop()
            return None
        b = children[len(f.reasons)]
        not_pre = z3.Not(net.prime(self.pre_of(b.dst)))
        if z3.is_false(z3.simplify(not_pre)):
            f.reasons.append(z3.BoolVal(True, self.ctx))
            return None
        s = plain_solver(self.ctx)
        s.add(f.reached, b.label, not_pre)
        self.stats["bridge_queries"] += 1
        if check(s, self.deadline) == z3.sat:
            if b.dst == net.error:
                path = [(fr.node, fr.depth) for fr in stack if fr.kind == "POST"]
                return NetworkResult(TPAStatus.UNSAFE, f"error reached from node {f.node}", path=path + [(b.dst, 0)])
            fml = z3.And(f.reached, b.label, not_pre)
            post = net.unprime(self._project(fml, s.model(), net.primed(net.vocab(b.dst))))
            stack.append(_Frame("PRE", b.dst, self._small(z3.simplify(post), "reached set")))
            return None
        f.reasons.append(self._reason(b, not_pre, f.reached))
        return None

    def _reason(self, b: Bridge, not_pre: z3.BoolRef, reached: z3.BoolRef) -> z3.BoolRef:
        """A set ⊇ reached whose states cannot take b into ¬preSafe[b.dst]: ¬Itp(b ∧ ¬pre', reached) over x.
        Without an interpolant, `reached` itself is such a set (sound, generalises nothing)."""
        t0 = time.monotonic()
        try:
            cap = min(ITP_CAP, self.deadline.left())
            if cap <= 0:
                raise OutOfTime()
            r = compute_interpolant(z3.And(b.label, not_pre), reached, self.net.vocab(b.src), cap,
                                    check_unsat=False)
        except (SatisfiableError, z3.Z3Exception, ValueError):
            r = None
        finally:
            self.times["itp_time"] += time.monotonic() - t0
        self.stats["interpolations"] += 1
        if r is None:
            self.stats["itp_failed"] += 1
            return reached
        return z3.simplify(z3.Not(r.formula))

    def _project(self, fml: z3.BoolRef, m: z3.ModelRef, keep_vars: list[z3.ExprRef]) -> z3.BoolRef:
        """MBP onto `keep_vars` of an implicant cube of `fml` (`smt.mbp.project`): a subset of ∃others. fml that
        contains the model's state. Projecting the cube rather than `fml` keeps reached sets conjunctive; z3's
        projection of `fml` itself carries `¬preSafe'` along, and nested negations pile up frame after frame."""
        t0 = time.monotonic()
        try:
            return project(fml, m, keep=keep_vars)
        finally:
            self.times["mbp_time"] += time.monotonic() - t0

    @staticmethod
    def _small(f: z3.BoolRef, what: str) -> z3.BoolRef:
        size = dag_size(f)
        if size > MAX_FORMULA:
            raise GiveUp(f"{what} grew to {size} terms")
        return f


def _certificate_text(solver: LoopSolver, cert: SafeCertificate, used: TPA) -> CertificateText:
    """`cert` (a SAFE answer of `used`, one of the solver's TPA instances) as proof text, with the wrap-free
    relation and the wrap states when `used` ran on them."""
    return CertificateText.of(cert, (used.ts.trans, solver.wrap_bad) if used is solver.free else None)


# ---------------------------------------------------------------------------------------------- proof check
def check_proof(net: Network, pre: dict[Node, z3.BoolRef], post: dict[Node, z3.BoolRef], deadline: Deadline,
                options: TPAOptions | None = None, certificates: Mapping[Node, CertificateText] | None = None,
                found: dict[Node, CertificateText] | None = None,
                candidates: Mapping[Node, list[CertificateText]] | None = None) -> tuple[str | None, dict[Node, str]]:
    """(None, how each loop was proved) if (pre, post) prove the error unreachable, else (what failed, ...).

    Fresh solvers, and nothing from the search that is not checked here. The obligations:
      Init ⇒ pre[entry];
      every bridge u -> t: post[u](x) ∧ label(x,x') ⇒ pre[t](x')  (pre[error] = false);
      every loop v: no run of its body from pre[v] leaves post[v] -- by induction (pre[v] ⇒ post[v] and
      pre[v] ∧ body ⇒ pre[v]') when that holds, else by a TPA certificate for Init = pre[v], Bad = ¬post[v]
      that certify.py checks (one of `candidates`, else one from a fresh TPA run; wrap-around split off as in
      the search, see `LoopSolver`);
      a node without a loop has pre = post.
    Runs therefore arrive at each node inside pre, leave it inside post, and never take an error bridge.
    `found` collects the certificates used per loop. With `certificates` (a proof checked in another
    process, `tpa/proof.NetworkProof`) no TPA runs: a loop that is not inductive must have a certificate that
    holds for its system. `candidates` (the search's own TPA answers per loop, newest last; the last CANDIDATES
    of them) are tried before a fresh TPA: a candidate counts only when it passes the same certificate check on
    the loop's system with Init = pre[v] and Bad = ¬post[v], so the search's answers are checked, not trusted,
    and a loop whose last answer still covers its final safe sets costs a few queries instead of a second TPA run.
    """
    dl = deadline
    ctx = net.init.ctx
    false = z3.BoolVal(False, ctx)
    how: dict[Node, str] = {}

    def unsat(*fs: z3.BoolRef) -> bool:
        return solver_unsat(dl, *fs)

    def pre_of(v: Node) -> z3.BoolRef:
        return false if v == net.error else pre[v]

    for v in net.nodes:
        if v == net.error:
            continue
        if v not in net.loops and not pre[v].eq(post[v]) and not unsat(pre[v] != post[v]):
            return f"node {v} has no loop but pre ≠ post", how
    if not unsat(net.init, z3.Not(pre_of(net.entry))):
        return "Init ⇏ pre[entry]", how
    for b in net.bridges:
        if b.src == b.dst:
            continue
        if not unsat(post[b.src], b.label, z3.Not(net.prime(pre_of(b.dst)))):
            return f"bridge {b.src} -> {b.dst} leaves the safe sets", how
    for v, body in net.loops.items():
        if unsat(pre[v], z3.Not(post[v])) and unsat(pre[v], body, z3.Not(net.prime(pre[v]))):
            how[v] = "inductive"
            continue
        ts = net.loop_system(v, pre[v], z3.Not(post[v]))
        if certificates is not None:
            cert = certificates.get(v)
            why = "neither inductive nor with a certificate" if cert is None else cert.check_on(ts, dl)
            if why is not None:
                return f"loop at node {v}: {why}", how
            how[v] = "certificate"
            continue
        newest = (candidates or {}).get(v, [])[-CANDIDATES:]
        hint = next((c for c in reversed(newest) if c.check_on(ts, dl) is None), None)
        if hint is not None:
            how[v] = "certificate of the search, checked"
            if found is not None:
                found[v] = hint
            continue
        solver = LoopSolver(ts, options, dl)
        res, used = solver.solve(pre[v], z3.Not(post[v]), deadline)
        if res.status == TPAStatus.UNKNOWN and dl.expired():
            raise OutOfTime()
        if res.status != TPAStatus.SAFE:
            return f"loop at node {v} not re-proved by a fresh TPA: {res.status.value} ({res.reason})", how
        how[v] = f"fresh TPA: {res.reason}"
        if found is not None:
            found[v] = _certificate_text(solver, res.certificate, used)
    return None, how


def reached_exits(ts: TransitionSystem, init: z3.BoolRef, bad: z3.BoolRef, path: list | None,
                  deadline: Deadline) -> z3.BoolRef | None:
    """States of `bad` each reachable from `init` in exactly the path's number of steps of `ts`: the MBP onto the
    last step of the unrolling `init ∧ Tr^k ∧ bad` at the concrete `path` (k ≤ `EXIT_UNROLL`), or None. TPA's
    own target follows its concrete waypoints, so it fixes what the loop leaves unchanged (a bound its guard
    reads) to the path's value, and every later loop is then asked about that one value; the unrolling's
    projection keeps only what the k steps require of it (fm24 dillig19: a chain of five loops went from three
    rounds of queries per loop to one)."""
    if path is None or not 0 < len(path) - 1 <= EXIT_UNROLL:
        return None
    k = len(path) - 1
    ctx = init.ctx
    try:
        fml = z3.And([ts.at(init, 0)] + [ts.trans_at(j) for j in range(k)] + [ts.at(bad, k)])
        # linear atoms for div/mod by constants: projecting `x div 100 = y` pins x to its model value, so every
        # exit of a loop that tracks a quotient was one point (fm24 const_div_4: one query per value of x)
        fml, _ = purify_divmod(fml, "exit")
        s = plain_solver(ctx)
        s.add(fml, *(is_state(ts.step_vars(j), st, ctx) for j, st in enumerate(path)))
        if check(s, deadline) != z3.sat:
            return None
        last = ts.step_vars(k)
        return merged_bounds(z3.substitute(project(fml, s.model(), keep=last), *zip(last, ts.state)), deadline)
    except (z3.Z3Exception, ValueError, GiveUp):     # (the deadline's OutOfTime ends the search as anywhere)
        return None
