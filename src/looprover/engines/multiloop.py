"""Multi-loop TPA engine: one TPA instance per loop of the cutpoint graph, loops composed by `tpa.network`.

Program -> cutpoint graph -> `Network` (state = the program variables without a pc; per cutpoint its self-loop
label, the other CPG edges as bridges) -> `NetworkTPA`. Loops in sequence are solved one at a time, each TPA
seeing only its own loop body, which is what lets a deep first loop and a second loop be proved separately
(the pc-encoded single system of `engines/tpa.py` has to abstract both at once).

Nested loops (`tpa/nested.py`): a loop nested in another makes a cycle through both heads, which the network
search cannot take. Each nested loop head is eliminated, innermost first, by a summary S ⊇ Body* of its loop
(reflexive-transitive seed lemmas of its body, Houdini-checked): every path "enter the inner loop, run it to
completion, leave" becomes one edge of the enclosing loop's body, `enter ∘ S ∘ exit`. So every outer loop keeps
its own TPA over its own body, instead of one pc-encoded system for the whole program -- the former fallback,
which ran out of memory on SV-COMP tasks. Only irreducible flow (a cycle with two entries, no natural loop to
contract) is still handed to the single-system TPA engine, and the verdict says so (`stats["fallback"]`).

Evidence (as in `engines/tpa.py`):
- TRUE only after `network.check_proof` re-checked the per-node safe sets with fresh solvers, each loop that is
  not inductive by a TPA certificate certify.py checks (the search's own when one passes, else a fresh TPA
  run's); the sets and the loops' certificates are the evidence (`tpa.proof.NetworkProof`).
- FALSE only with a counterexample replayed on the original program: the violating path (nodes and loop
  iterations) is pinned as the pc sequence of one exact BMC query over `CPGSystem.ts`, whose model becomes a
  CFA trace for `evidence.replay.validate`. Longer than `loop_path.REPLAY_LIMIT` steps: the path up to the first deep loop
  is solved by BMC for the initial state and the inputs read so far, and the program is *run* from there on the
  interpreter (`evidence.deep`); only a run that fails the assertion counts. A path through contracted loops
  names only the outer nodes: it is first expanded by an exact BMC query over the program whose outer steps
  follow it and whose inner-loop steps are free (`nested.expand_path`); no expansion within the replay limit
  is UNKNOWN (the summaries were too weak), never FALSE.
- With contracted loops, TRUE also needs every summary re-checked (`nested.contract`): Id ⊆ S, S ∘ Body ⊆ S.
"""
from __future__ import annotations

import dataclasses

from looprover.engines.base import Engine, Run, Task, run_engine
from looprover.engines import loop_path
from looprover.engines.loop_path import falsify_loop_path
from looprover.engines.transformed import on_cells
from looprover.program.cfa import Program
from looprover.program.cpg import CutpointGraph, build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.systems import Network, cpg_network, shape_network
from looprover.tpa import TPAOptions, TPAStatus
from looprover.transforms.cells import has_arrays
from looprover.tpa.nested import Summary, contract, contract_nested, expand_path, nested_heads
from looprover.tpa.network import NetworkResult, NetworkTPA, check_proof
from looprover.tpa.proof import NetworkProof
from looprover.program.liveness import liveness
from looprover.verdict import Verdict



class MultiLoop(Engine):
    name = "multiloop"
    summary = ("Golem's multi-loop TPA: one TPA per loop of a DAG of loops (nested loops contracted into summaries), "
               "bridges by MBP and interpolation")
    Settings = TPAOptions

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        if has_arrays(program):
            return on_cells(self, program, task, run)
        opts: TPAOptions = self.settings(run)
        cpg = build_cpg(program)
        cycle = _cycle(cpg)
        if cycle is not None and cpg.loops.irreducible:
            return self._fallback(program, task, run, "irreducible control flow: cutpoint graph has a cycle "
                                  "through " + " -> ".join(program.loc_label(v) for v in cycle))
        sys = CPGSystem(cpg, run.bitvector, run.deadline)
        net = network(sys)
        heads = nested_heads(cpg)
        summaries: list[Summary] = []
        if heads:
            run.report(f"multiloop: contracting {len(heads)} nested loop(s) into summaries")
            net, summaries = contract_nested(net, heads, run.deadline)
            run.stats["contracted"] = [program.loc_label(v) for v in heads]
        cycle = net.cycle()
        if cycle is not None:      # not expected after contracting a reducible graph's nested loops
            return self._fallback(program, task, run, "cutpoint graph has a cycle through "
                                  + " -> ".join(program.loc_label(v) for v in cycle))
        return solve_network(self, program, sys, net, heads, summaries, run, opts)

    def _fallback(self, program: Program, task: Task, run: Run, why: str) -> Verdict:
        """Irreducible flow: the single-system TPA engine, with its default settings."""
        from looprover.engines.tpa import TPAEngine  # only needed here: a DAG of loops never loads it
        run.report(f"multiloop: {why}; running the single-system TPA engine")
        sub = run.sub()
        v = run_engine(TPAEngine(), program, task, sub)
        return dataclasses.replace(v, engine=self.name, reason=f"{why}; single-system TPA: {v.reason}",
                                   stats={**v.stats, "fallback": "tpa", "fallback_reason": why})


def loops_in_sequence(cpg: CutpointGraph) -> bool:
    """Whether the cutpoint graph is a DAG of loops, none nested (Golem's "transition system DAG"): the shape its
    TPA engine solves by the network of per-loop TPA instances, without contracting anything."""
    return bool(cpg.cutpoints) and _cycle(cpg) is None


def solve_network(engine: Engine, program: Program, sys: CPGSystem, net: Network, heads: list[int],
                  summaries: list[Summary], run: Run, opts: TPAOptions) -> Verdict:
    """The network search on `net` (nested loops `heads` already contracted into `summaries`), its proof
    re-checked or its counterexample replayed: the multi-loop engine's work, and the `tpa` engine's on loops in
    sequence, as Golem's TPA engine does."""
    who = engine.name
    run.stats["loops"] = [program.loc_label(v) for v in net.loops]
    run.report(f"{who}: {len(net.loops)} loops, {len(net.bridges)} bridges")
    res = NetworkTPA(net, opts, run.report).solve(run.deadline)
    run.stats.update(res.stats)
    if res.status == TPAStatus.SAFE:
        return _prove(engine, program, sys, heads, summaries, net, res, run, opts)
    if res.status == TPAStatus.UNSAFE:
        return _falsify(engine, program, sys, set(heads), res.path, run)
    return engine.unknown(f"{who}: {res.reason}")


def _prove(engine: Engine, program: Program, sys: CPGSystem, heads: list[int], summaries: list[Summary],
           net: Network, res: NetworkResult, run: Run, opts: TPAOptions) -> Verdict:
    who = engine.name
    run.report(f"{who}: re-checking the proof")
    if heads:      # the summaries again, on a network rebuilt from the program
        net = contract(network(sys), heads, summaries, run.deadline)
        if isinstance(net, str):
            return engine.unknown(f"internal error: {who} proof failed its re-check: {net}")
    certificates: dict = {}
    why, how = check_proof(net, res.pre, res.post, run.deadline, opts, found=certificates,
                           candidates=res.certificates)
    if why is not None:
        return engine.unknown(f"internal error: {who} proof failed its re-check: {why}")
    run.stats["loop_checks"] = {program.loc_label(v): h for v, h in how.items()}
    inner = f", {len(heads)} nested loop(s) summarised" if heads else ""
    return engine.true(f"{who}: safe sets for {len(net.loops)} loops{inner}, re-checked",
                       NetworkProof.of(program, res.pre, res.post, certificates, summaries))


def _falsify(engine: Engine, program: Program, sys: CPGSystem, hidden: set[int], path: list[tuple[int, int]],
             run: Run) -> Verdict:
    if hidden:
        run.stage = "expanding the counterexample through the contracted loops"
        run.stats["abstract_cex_path"] = [program.loc_label(v) for v, _ in path]
        full = expand_path(sys, path, hidden, run.deadline, loop_path.REPLAY_LIMIT)
        if isinstance(full, str):
            return engine.unknown(f"{engine.name}: {full}")
        path = full
    return falsify_loop_path(engine, program, sys, path, run)


def network(sys: CPGSystem) -> Network:
    """The cutpoint graph of `sys` as a network over the program variables (`smt.systems.cpg_network`), each
    node's vocabulary restricted to the variables live there."""
    return cpg_network(sys, liveness(sys.program))


def _cycle(cpg: CutpointGraph) -> list[int] | None:
    return shape_network(cpg).cycle()
