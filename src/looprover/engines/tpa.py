"""TPA engine: Program -> one transition system -> `looprover.tpa` core.

Which system:
- loops in sequence, none nested (Golem's "transition system DAG"): as Golem's TPA engine, one TPA per loop composed
  by the network search (`engines.multiloop.solve_network`), which learns each loop alone; the pc-encoded system
  below must abstract all loops at once and its lemmas creep one bound per level (`tpa.loops=single` keeps it, as
  the portfolio does beside the multiloop engine, so that the two give different views of such programs);
- a program with one loop (Golem's "transition system" shape) becomes the loop's own TS over the program
  variables live at its head (`tpa.program_ts`); anything else becomes the pc-encoded cutpoint-graph system,
  like Golem's single-loop transformation (loops in sequence or nested share one level hierarchy), started
  after its entry step (`program_ts.EntrySystem`: Init is where the entry edge puts the variables, as Golem's
  facts);
- in integer mode, wrap-around is split off as a side obligation (`smt.nowrap`): TPA runs on the wrap-free
  relation with "a wrap is possible" added to Bad, and falls back to the exact system only when the run it
  finds ends in the wrap part.

Evidence:
- TRUE: the core's safe transition invariant, re-checked with fresh solvers against the system it was found for
  (integer mode: exact for executions without signed overflow, like every engine on `CPGSystem`), handed over as
  a `TransitionInvariantProof` (`tpa/proof.py`) that the portfolio checks again against the program.
- FALSE: only after the counterexample replays on the *original program*. Up to `replay_limit` cutpoint steps
  the exact BMC model of the path, pinned to the core's concrete states, becomes a CFA trace (`validate`).
  Deeper ones are run on the concrete interpreter from the initial state and first-fragment inputs an SMT
  query pins to the core's start state (`evidence.deep`).
"""
from __future__ import annotations

import z3

from looprover.engines.base import Engine, Run, Task
from looprover.engines.transformed import on_cells
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.tpa import TPAOptions, TPAStatus
from looprover.transforms.cells import has_arrays
from looprover.tpa.loop_solver import LoopSolver
from looprover.tpa.program_ts import EntrySystem, LoopSystem, entry_system, one_loop, single_loop_system
from looprover.tpa.proof import TransitionInvariantProof, system_label
from looprover.tpa.result import UnsafeWitness, is_state
from looprover.verdict import Verdict
from looprover.evidence.confirm import confirm_cpg_path


class TPAEngine(Engine):
    name = "tpa"
    summary = ("Transition Power Abstraction as Golem's TPA engine: a loop's own transition system, loops in sequence "
               "by the multi-loop network, other shapes as one pc-encoded system")
    Settings = TPAOptions

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        if has_arrays(program):
            return on_cells(self, program, task, run)
        opts: TPAOptions = self.settings(run)
        stats = run.stats
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, run.bitvector, run.deadline)
        if opts.loops == "auto" and one_loop(cpg) is None:
            # (imported here: a one-loop program, the common case, does not load the network's modules)
            from looprover.engines.multiloop import loops_in_sequence, network, solve_network
            if loops_in_sequence(cpg):
                stats["system"] = "network of loops"
                return solve_network(self, program, sys, network(sys), [], [], run, opts)
        loop = single_loop_system(sys, run.deadline)
        start = entry_system(sys, run.deadline) if loop is None else None
        exact = loop.ts if loop is not None else start.ts if start is not None else sys.ts
        stats["system"] = system_label(None if loop is None else loop.head, start is not None)
        solver = LoopSolver(exact, opts, run.deadline)      # GiveUp (e.g. array state variables): UNKNOWN
        if solver.free is not None:
            stats["wrap_split"] = True
        run.report(f"tpa: solving ({stats['system']}{', wrap-free first' if solver.free else ''})")
        res, used = solver.solve(exact.init, exact.bad, run.deadline)
        stats["tpa"] = res.stats
        if solver.free is not None and used is solver.exact:
            stats["wrap_fallback"] = True
        if res.status == TPAStatus.SAFE:
            free = used is solver.free
            cert = res.certificate
            if start is not None and cert.state_invariant is not None:
                # an invariant of the states after the entry step; with Init, of every reachable state
                cert.state_invariant = z3.Or(start.original_init, cert.state_invariant)
            proof = TransitionInvariantProof.of(exact, cert, None if loop is None else loop.head,
                                                (used.ts.trans, solver.wrap_bad) if free else None,
                                                entry=start is not None)
            return self.true(f"TPA: {res.reason}", proof)
        if res.status == TPAStatus.UNSAFE:
            return self._falsify(program, sys, loop or start, res.witness, run, opts)
        return self.unknown(f"TPA: {res.reason}")

    def _falsify(self, program: Program, sys: CPGSystem, system: LoopSystem | EntrySystem | None, w: UnsafeWitness,
                 run: Run, opts: TPAOptions) -> Verdict:
        """Turn a TS counterexample into a replayed program trace (see the module docstring)."""
        ts = sys.ts
        k = w.depth
        loop = system if isinstance(system, LoopSystem) else None
        head = None if loop is None else sys.pc_id[loop.head]
        K = k if system is None else system.program_depth(k)
        run.stats["cex_depth"] = K
        if loop is not None:
            run.stats["loop_iterations"] = k
        # the path: the core's concrete states (all of them, or its waypoints) at their cutpoint steps; a loop
        # system's or an entry system's step j is the program's step j + 1 (after the entry), and the program
        # stays at the loop head
        states = enumerate(w.path) if w.path is not None else w.waypoints
        shift = 0 if system is None else 1

        def state(j: int) -> list:
            """The pc-encoded system's variables at program step j that the TPA system's states give values to,
            with the pc (`kept`: the pc and the program variables live at the system's cutpoints)."""
            vs = ts.step_vars(j)
            return vs if system is None else [vs[k] for k in system.kept]

        def pins() -> list:
            if loop is None:
                return [ts.at(ts.bad, K)] + [is_state(state(j + shift), st) for j, st in states]
            return ([ts.at(ts.bad, K)] + [sys.pc_at(j) == head for j in range(1, K)] +
                    [is_state(state(j + 1), (head,) + st) for j, st in states])
        if loop is None:
            prefix, prefix_pins = shift, [is_state(state(shift), w.initial)]
        else:
            prefix, prefix_pins = 1, [sys.pc_at(1) == head, is_state(state(1), (head,) + tuple(w.initial))]
        c = confirm_cpg_path(program, sys, K, pins, run.deadline, run.bitvector, opts.replay_limit, prefix,
                             prefix_pins)
        if not c.ok:
            return self.unknown(f"TPA: error reachable in {K} cutpoint steps, but {c.why}", c.candidate)
        how = ", replayed by running the program" if c.deep else ""
        return self.false(f"TPA: assertion violated after {K} cutpoint steps ({c.cex.length} edges{how})", c.cex)
