"""TPA engine: Program -> one transition system -> `looprover.tpa` core.

Which system:
- a program with one loop (Golem's "transition system" shape) becomes the loop's own TS over the program
  variables (`tpa.program_ts`); anything else becomes the pc-encoded cutpoint-graph system, like Golem's
  single-loop transformation (loops in sequence or nested share one level hierarchy);
- in integer mode, wrap-around is split off as a side obligation (`smt.nowrap`): TPA runs on the wrap-free
  relation with "a wrap is possible" added to Bad, and falls back to the exact system only when the run it
  finds ends in the wrap part.

Evidence:
- TRUE: the core's safe transition invariant, re-checked with fresh solvers against the system it was found for
  (integer mode: exact for executions without signed overflow, like every engine on `CPGSystem`).
- FALSE: only after the counterexample replays on the *original program*. Up to `replay_limit` cutpoint steps
  the exact BMC model of the path, pinned to the core's concrete states, becomes a CFA trace (`validate`).
  Deeper ones are run on the concrete interpreter from the initial state and first-fragment inputs an SMT
  query pins to the core's start state (`witness.deep`).
"""
from __future__ import annotations

import time

import z3

from looprover.engines import EngineOptions
from looprover.errors import LooproverError
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.solver import OutOfTime
from looprover.tpa import TPAOptions, TPAStatus
from looprover.tpa.loop_solver import LoopSolver
from looprover.tpa.program_ts import single_loop_system
from looprover.tpa.result import Deadline, GiveUp, UnsafeWitness, is_state
from looprover.verdict import Status, Verdict
from looprover.witness.deep import run_from_model
from looprover.witness.replay import cpg_trace, validate

NAME = "tpa"


def verify(program: Program, options: EngineOptions, *, tpa_options: TPAOptions | None = None) -> Verdict:
    t0 = time.monotonic()
    stats: dict = {}

    def done(status: Status, reason: str, evidence=None) -> Verdict:
        return Verdict(status, NAME, reason, evidence, stats, time.monotonic() - t0)

    try:
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, options.bitvector, options.deadline)
        loop = single_loop_system(sys, options.deadline)
        exact = loop.ts if loop is not None else sys.ts
        stats["system"] = f"loop at L{loop.head}" if loop is not None else "pc-encoded cutpoint graph"
        try:
            solver = LoopSolver(exact, tpa_options, Deadline(options.deadline))
            if solver.free is not None:
                stats["wrap_split"] = True
            options.report(f"tpa: solving ({stats['system']}{', wrap-free first' if solver.free else ''})")
            res, used = solver.solve(exact.init, exact.bad, options.deadline)
        except GiveUp as exc:       # TPA refuses the system (e.g. array state variables)
            return done(Status.UNKNOWN, str(exc))
        stats["tpa"] = res.stats
        if solver.free is not None and used is solver.exact:
            stats["wrap_fallback"] = True
        if res.status == TPAStatus.SAFE:
            cert = res.certificate
            evidence = {"system": stats["system"], "wrap_free": used is solver.free,
                        "transition_invariant": str(cert.ti), "kind": cert.kind, "level": cert.level,
                        "state_invariant": None if cert.state_invariant is None else str(cert.state_invariant)}
            return done(Status.TRUE, f"TPA: {res.reason}", evidence)
        if res.status == TPAStatus.UNSAFE:
            return _falsify(program, sys, loop, res.witness, options, done, stats, tpa_options)
        return done(Status.UNKNOWN, f"TPA: {res.reason}")
    except OutOfTime:
        return done(Status.UNKNOWN, "timeout")
    except LooproverError as err:
        return done(Status.UNKNOWN, str(err))
    except z3.Z3Exception as exc:
        return done(Status.UNKNOWN, f"z3 error: {exc}")


def _falsify(program: Program, sys: CPGSystem, loop, w: UnsafeWitness, options: EngineOptions, done, stats,
             tpa_options: TPAOptions | None) -> Verdict:
    """Turn a TS counterexample into a replayed program trace (see the module docstring)."""
    ts = sys.ts
    k = w.depth
    head = None if loop is None else sys.pc_id[loop.head]
    K = k if loop is None else loop.program_depth(k)
    stats["cex_depth"] = K
    if loop is not None:
        stats["loop_iterations"] = k
    limit = (tpa_options or TPAOptions()).replay_limit
    s = sys.enc.solver(options.deadline)
    s.add(ts.at(ts.init, 0))
    if K <= limit:
        s.add(ts.at(ts.bad, K))
        for j in range(K):
            s.add(ts.trans_at(j))
        if loop is None:
            pins = [(j, st) for j, st in enumerate(w.path)] if w.path is not None else list(w.waypoints)
        else:
            for j in range(1, K):
                s.add(sys.pc_at(j) == head)
            pins = [(j + 1, (head,) + st) for j, st in
                    (enumerate(w.path) if w.path is not None else w.waypoints)]
        for j, st in pins:
            s.add(is_state(ts.step_vars(j), st))
        r = s.check()
        if r != z3.sat:
            return done(Status.UNKNOWN, f"TPA counterexample of depth {K} has no BMC model ({r})")
        cex = cpg_trace(program, sys, s.model(), K)
        rep = validate(program, cex, options.bitvector)
        if rep.ok:
            return done(Status.FALSE, f"TPA: assertion violated after {K} cutpoint steps ({len(cex.steps)} edges)",
                        cex)
        return done(Status.UNKNOWN, f"TPA counterexample did not replay: {rep.reason}")
    # deep: pin the start (the program's initial state, or the state entering the loop) and run the program
    if loop is None:
        s.add(is_state(ts.step_vars(0), w.initial))
    else:
        s.add(ts.trans_at(0), sys.pc_at(1) == head, is_state(ts.step_vars(1), (head,) + tuple(w.initial)))
    r = s.check()
    if r != z3.sat:
        return done(Status.UNKNOWN, f"no program run reaches the start state of TPA's counterexample ({r})")
    cex, why = run_from_model(program, sys, s.model(), 0 if loop is None else 1, K, options.bitvector)
    if cex is None:
        return done(Status.UNKNOWN, f"TPA: error reachable in {K} cutpoint steps, but {why}")
    return done(Status.FALSE, f"TPA: assertion violated after {K} cutpoint steps ({cex.length} edges, "
                              f"replayed by running the program)", cex)
