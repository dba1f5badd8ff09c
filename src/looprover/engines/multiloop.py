"""Multi-loop TPA engine: one TPA instance per loop of the cutpoint graph, loops composed by `tpa.network`.

Program -> cutpoint graph -> `Network` (state = the program variables without a pc; per cutpoint its self-loop
label, the other CPG edges as bridges) -> `NetworkTPA`. Loops in sequence are solved one at a time, each TPA
seeing only its own loop body, which is what lets a deep first loop and a second loop be proved separately
(the pc-encoded single system of `engines/tpa.py` has to abstract both at once).

A cutpoint graph with a cycle through several nodes (nested loops, irreducible flow) is not a DAG of loops:
the run is handed to the single-system TPA engine, and the verdict says so.

Evidence (as in `engines/tpa.py`):
- TRUE only after `network.check_proof` re-checked the per-node safe sets with fresh solvers and fresh TPA
  runs; the sets and the loops' certificates are the evidence (`tpa.proof.NetworkProof`).
- FALSE only with a counterexample replayed on the original program: the violating path (nodes and loop
  iterations) is pinned as the pc sequence of one exact BMC query over `CPGSystem.ts`, whose model becomes a
  CFA trace for `witness.replay.validate`. Longer than `loop_path.REPLAY_LIMIT` steps: the path up to the first deep loop
  is solved by BMC for the initial state and the inputs read so far, and the program is *run* from there on the
  interpreter (`witness.deep`); only a run that fails the assertion counts.
"""
from __future__ import annotations

import dataclasses

from looprover.engines.base import Engine, Run, Task, run_engine
from looprover.engines.loop_path import falsify_loop_path
from looprover.program.cfa import Program
from looprover.program.cpg import CutpointGraph, build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.systems import Network, cpg_network, shape_network
from looprover.tpa import TPAOptions, TPAStatus
from looprover.tpa.network import NetworkResult, NetworkTPA, check_proof
from looprover.tpa.proof import NetworkProof
from looprover.transforms.classify import liveness
from looprover.verdict import Verdict



class MultiLoop(Engine):
    name = "multiloop"
    summary = "Golem's multi-loop TPA: one TPA per loop of a DAG of loops, bridges by MBP and interpolation"
    cost = 2
    Settings = TPAOptions

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: TPAOptions = self.settings(run)
        cpg = build_cpg(program)
        cycle = _cycle(cpg)
        if cycle is not None:
            return self._fallback(program, task, run, cycle)
        sys = CPGSystem(cpg, run.bitvector, run.deadline)
        net = network(sys)
        run.stats["loops"] = [program.loc_label(v) for v in net.loops]
        run.report(f"multiloop: {len(net.loops)} loops, {len(net.bridges)} bridges")
        res = NetworkTPA(net, opts, run.report).solve(run.deadline)
        run.stats.update(res.stats)
        if res.status == TPAStatus.SAFE:
            return self._prove(program, net, res, run, opts)
        if res.status == TPAStatus.UNSAFE:
            return self._falsify(program, sys, res.path, run)
        return self.unknown(f"multiloop: {res.reason}")

    def _fallback(self, program: Program, task: Task, run: Run, cycle: list[int]) -> Verdict:
        """A cutpoint graph that is not a DAG of loops: the single-system TPA engine, with its default settings."""
        from looprover.engines.tpa import TPAEngine  # only needed here: a DAG of loops never loads it
        why = "cutpoint graph has a cycle through " + " -> ".join(program.loc_label(v) for v in cycle)
        run.report(f"multiloop: {why}; running the single-system TPA engine")
        sub = run.sub()
        v = run_engine(TPAEngine(), program, task, sub)
        return dataclasses.replace(v, engine=self.name, reason=f"{why}; single-system TPA: {v.reason}",
                                   stats={**v.stats, "fallback": "tpa", "fallback_reason": why})

    def _prove(self, program: Program, net: Network, res: NetworkResult, run: Run, opts: TPAOptions) -> Verdict:
        run.report("multiloop: re-checking the proof")
        certificates: dict = {}
        why, how = check_proof(net, res.pre, res.post, run.deadline, opts, found=certificates)
        if why is not None:
            return self.unknown(f"internal error: multiloop proof failed its re-check: {why}")
        run.stats["loop_checks"] = {program.loc_label(v): h for v, h in how.items()}
        return self.true(f"multiloop: safe sets for {len(net.loops)} loops, re-checked",
                         NetworkProof.of(program, res.pre, res.post, certificates))

    def _falsify(self, program: Program, sys: CPGSystem, path: list[tuple[int, int]], run: Run) -> Verdict:
        return falsify_loop_path(self, program, sys, path, run)


def network(sys: CPGSystem) -> Network:
    """The cutpoint graph of `sys` as a network over the program variables (`smt.systems.cpg_network`), each
    node's vocabulary restricted to the variables live there."""
    return cpg_network(sys, liveness(sys.program))


def _cycle(cpg: CutpointGraph) -> list[int] | None:
    return shape_network(cpg).cycle()
