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

import z3

from looprover.engines.base import Engine, Run, Task
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.tpa import TPAOptions, TPAStatus
from looprover.tpa.loop_solver import LoopSolver
from looprover.tpa.program_ts import single_loop_system
from looprover.tpa.result import UnsafeWitness, is_state
from looprover.verdict import Verdict
from looprover.witness.deep import run_from_model
from looprover.witness.replay import cpg_trace, validate


class TPAEngine(Engine):
    name = "tpa"
    summary = "Transition Power Abstraction on one transition system (the loop's own, or the pc-encoded CPG)"
    Settings = TPAOptions

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: TPAOptions = self.settings(run)
        stats = run.stats
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, run.bitvector, run.deadline)
        loop = single_loop_system(sys, run.deadline)
        exact = loop.ts if loop is not None else sys.ts
        stats["system"] = f"loop at L{loop.head}" if loop is not None else "pc-encoded cutpoint graph"
        solver = LoopSolver(exact, opts, run.deadline)      # GiveUp (e.g. array state variables): UNKNOWN
        if solver.free is not None:
            stats["wrap_split"] = True
        run.report(f"tpa: solving ({stats['system']}{', wrap-free first' if solver.free else ''})")
        res, used = solver.solve(exact.init, exact.bad, run.deadline)
        stats["tpa"] = res.stats
        if solver.free is not None and used is solver.exact:
            stats["wrap_fallback"] = True
        if res.status == TPAStatus.SAFE:
            cert = res.certificate
            evidence = {"system": stats["system"], "wrap_free": used is solver.free,
                        "transition_invariant": str(cert.ti), "kind": cert.kind, "level": cert.level,
                        "state_invariant": None if cert.state_invariant is None else str(cert.state_invariant)}
            return self.true(f"TPA: {res.reason}", evidence)
        if res.status == TPAStatus.UNSAFE:
            return self._falsify(program, sys, loop, res.witness, run, opts)
        return self.unknown(f"TPA: {res.reason}")

    def _falsify(self, program: Program, sys: CPGSystem, loop, w: UnsafeWitness, run: Run, opts: TPAOptions
                 ) -> Verdict:
        """Turn a TS counterexample into a replayed program trace (see the module docstring)."""
        ts = sys.ts
        k = w.depth
        head = None if loop is None else sys.pc_id[loop.head]
        K = k if loop is None else loop.program_depth(k)
        run.stats["cex_depth"] = K
        if loop is not None:
            run.stats["loop_iterations"] = k
        s = sys.enc.solver(run.deadline)
        s.add(ts.at(ts.init, 0))
        if K <= opts.replay_limit:
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
                return self.unknown(f"TPA counterexample of depth {K} has no BMC model ({r})")
            cex = cpg_trace(program, sys, s.model(), K)
            rep = validate(program, cex, run.bitvector)
            if rep.ok:
                return self.false(f"TPA: assertion violated after {K} cutpoint steps ({len(cex.steps)} edges)",
                                  cex)
            return self.unknown(f"TPA counterexample did not replay: {rep.reason}")
        # deep: pin the start (the program's initial state, or the state entering the loop) and run the program
        if loop is None:
            s.add(is_state(ts.step_vars(0), w.initial))
        else:
            s.add(ts.trans_at(0), sys.pc_at(1) == head, is_state(ts.step_vars(1), (head,) + tuple(w.initial)))
        r = s.check()
        if r != z3.sat:
            return self.unknown(f"no program run reaches the start state of TPA's counterexample ({r})")
        cex, why = run_from_model(program, sys, s.model(), 0 if loop is None else 1, K, run.bitvector)
        if cex is None:
            return self.unknown(f"TPA: error reachable in {K} cutpoint steps, but {why}")
        return self.false(f"TPA: assertion violated after {K} cutpoint steps ({cex.length} edges, "
                          f"replayed by running the program)", cex)
