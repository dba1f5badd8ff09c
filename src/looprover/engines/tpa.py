"""TPA engine: Program -> cutpoint graph -> one transition system (pc + variables) -> `looprover.tpa` core.

Like Golem's single-loop transformation, the whole cutpoint graph becomes one transition system whose state
carries the program counter, so loops in sequence or nested are handled by the same level hierarchy.

Evidence:
- TRUE: the core's safe transition invariant, already re-checked with fresh solvers against the encoded system
  (integer mode: exact for executions without signed overflow, like every engine on `CPGSystem`).
- FALSE: only after the counterexample replays on the *original program* with the concrete interpreter. For
  depths up to the core's replay limit the exact BMC model of the path (pinned to the core's concrete states)
  is turned into a CFA trace, as k-induction does. Deeper counterexamples (found through exact powers) are
  reported as UNKNOWN with the depth and the concrete initial state in the stats: replaying 10^6 cutpoint steps
  as a CFA trace is not something the witness layer can carry today.
"""
from __future__ import annotations

import time

import z3

from looprover.engines import EngineOptions
from looprover.errors import LooproverError
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.smt.encode import CPGSystem
from looprover.smt.solver import OutOfTime
from looprover.tpa import TPA, TPAOptions, TPAStatus
from looprover.tpa.result import GiveUp, UnsafeWitness, is_state
from looprover.verdict import Status, Verdict
from looprover.witness.replay import TraceBuilder, validate

NAME = "tpa"


def verify(program: Program, options: EngineOptions, *, tpa_options: TPAOptions | None = None) -> Verdict:
    t0 = time.monotonic()
    stats: dict = {}

    def done(status: Status, reason: str, evidence=None) -> Verdict:
        return Verdict(status, NAME, reason, evidence, stats, time.monotonic() - t0)

    try:
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, options.bitvector, options.deadline)
        ts = sys.ts
        try:
            engine = TPA(ts, tpa_options)
        except GiveUp as exc:
            return done(Status.UNKNOWN, str(exc))
        options.report("tpa: solving")
        res = engine.solve(options.deadline)
        stats.update(res.stats)
        if res.status == TPAStatus.SAFE:
            cert = res.certificate
            evidence = {"transition_invariant": str(cert.ti), "kind": cert.kind, "level": cert.level,
                        "state_invariant": None if cert.state_invariant is None else str(cert.state_invariant)}
            return done(Status.TRUE, f"TPA: {res.reason}", evidence)
        if res.status == TPAStatus.UNSAFE:
            return _falsify(program, sys, res.witness, options, done, stats)
        return done(Status.UNKNOWN, f"TPA: {res.reason}")
    except OutOfTime:
        return done(Status.UNKNOWN, "timeout")
    except LooproverError as err:
        return done(Status.UNKNOWN, str(err))


def _falsify(program: Program, sys: CPGSystem, w: UnsafeWitness, options: EngineOptions, done, stats) -> Verdict:
    ts = sys.ts
    k = w.depth
    stats["cex_depth"] = k
    if w.path is None:
        stats["cex_initial"] = w.named(w.initial)
        return done(Status.UNKNOWN, f"TPA: error reachable in exactly {k} transition steps ({w.checked}); too "
                                    f"deep to replay as a program trace")
    s = sys.enc.solver(options.deadline)
    s.add(ts.at(ts.init, 0), ts.at(ts.bad, k))
    for j in range(k):
        s.add(ts.trans_at(j))
    for j, st in enumerate(w.path):
        s.add(is_state(ts.step_vars(j), st))
    r = s.check()
    if r != z3.sat:
        return done(Status.UNKNOWN, f"TPA counterexample of depth {k} has no BMC model ({r})")
    model = s.model()
    tb = TraceBuilder(program, sys.enc)
    for j in range(k):
        _, path, viol, _, value = sys.step_path(model, j)
        tb.add_path(path, viol, value)
        if viol is not None:
            break
    cex = tb.build(sys.state_at(0), lambda t: model.eval(t, model_completion=True))
    rep = validate(program, cex, options.bitvector)
    if rep.ok:
        return done(Status.FALSE, f"TPA: assertion violated after {k} cutpoint steps ({len(cex.steps)} edges)", cex)
    return done(Status.UNKNOWN, f"TPA counterexample did not replay: {rep.reason}")
