"""From an engine's counterexample to a trace that replayed on the program: the one pipeline every FALSE
passes through.

Engines find violations in different shapes: a model of an unrolling (bmc), a model of k steps of the
cutpoint-graph system (kinduction), a path of loop iterations that is only pinned down by states or cutpoints
(tpa, multiloop), a trace of a transformed program (labmc). They all end here:

  * `confirm_trace`: replay a CFA trace on the program (`replay.validate`);
  * `confirm_model`: the CFA trace of the first steps of a model of the cutpoint-graph system, replayed;
  * `confirm_cpg_path`: a path of the cutpoint-graph system given by constraints on its step copies. Up to
    `replay_limit` steps, one exact BMC query over the system with the path's constraints gives a model,
    replayed as above. A deeper path would need millions of edges in a model and a trace: an SMT query fixes
    only its first `prefix` steps (initial values and inputs), and the program is *run* from there on the
    concrete interpreter (`deep.run_from_model`); only a run that fails the assertion counts.
  * `confirm_loop_path`: a path given only by the cutpoint-graph nodes it visits and how often each loop
    iterates (multiloop, spacer): `confirm_cpg_path` with the pc of every step pinned; a deep path is solved up
    to the entry of its first deep loop and run from there.

A `Confirmed` either carries a validated counterexample, or says why there is none and keeps the unreplayed
candidate trace, if there was one, for the user to see.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Program
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.mbp import free_constants
from looprover.verdict import Counterexample
from looprover.evidence.deep import run_from_model
from looprover.evidence.replay import cpg_trace, validate


@dataclass
class Confirmed:
    cex: Counterexample | None              # validated, or None
    why: str = ""                           # why there is none
    candidate: Counterexample | None = None  # a trace that did not replay
    deep: bool = False                      # confirmed by running the program (an abbreviated run)

    @property
    def ok(self) -> bool:
        return self.cex is not None


def confirm_trace(program: Program, cex: Counterexample, bitvector: bool) -> Confirmed:
    rep = validate(program, cex, bitvector)
    if rep.ok:
        return Confirmed(cex)
    return Confirmed(None, f"counterexample did not replay: {rep.reason}", candidate=cex)


def confirm_model(program: Program, sys: CPGSystem, model: z3.ModelRef, steps: int, bitvector: bool
                  ) -> Confirmed:
    """Replay the first `steps` cutpoint steps of a model of `Init@0 ∧ trans_at(0) ∧ …` over `sys`."""
    return confirm_trace(program, cpg_trace(program, sys, model, steps), bitvector)


def confirm_cpg_path(program: Program, sys: CPGSystem, steps: int, pins: Callable[[], Sequence[z3.BoolRef]],
                     deadline: Deadline, bitvector: bool, replay_limit: int, prefix: int = 0,
                     prefix_pins: Sequence[z3.BoolRef] = (), pcs: Sequence[Hashable] | None = None) -> Confirmed:
    """A violating path of `steps` cutpoint steps of `sys`, pinned by the formulas `pins()` returns (over the
    step copies `sys.ts.step_vars(j)`; they must make step `steps` a violation), confirmed on the program.
    `pins` is only called for a path short enough to replay: a deep path has millions of steps.

    Past `replay_limit` steps, `prefix_pins` pin the first `prefix` steps and the program is run from the start
    they fix, for at most the path's length (see the module docstring). A shorter path whose exact query is
    left unknown after half the time left (hundreds of steps through deep loops: fm24-multiloop's 407-step
    paths timed out there) is run the same way when `prefix` is shorter than the path.

    `pcs`, the node of every step when the pins fix them, lets each step's copy of Tr be the one fragment it runs
    (`_unrolling`); the query is the same, only smaller: on fm24-multiloop's 406-step paths building it took
    0.9 s instead of 3 s (z3's time on it varies from 0.7 to 12 s either way)."""
    ts = sys.ts
    can_run = prefix < steps
    unroll = _unrolling(sys, pcs)
    if steps <= replay_limit:
        # a path that can also be run from its prefix gives the exact query half of the time left, not all
        s = sys.enc.solver(deadline.cap(max(1.0, deadline.left() / 2)) if can_run else deadline)
        s.add(ts.at(ts.init, 0), *unroll(steps), *pins())
        r = s.check()
        if r == z3.sat:
            return confirm_model(program, sys, s.model(), steps, bitvector)
        if r != z3.unknown:
            return Confirmed(None, f"internal error: the counterexample path of {steps} steps has no BMC model")
        if not can_run:
            return Confirmed(None, f"the BMC query for the counterexample path of {steps} steps is unknown "
                                   f"({s.why_unknown()})")
    s = sys.enc.solver(deadline)
    s.add(ts.at(ts.init, 0), *unroll(prefix), *prefix_pins)
    r = s.check()
    if r != z3.sat:
        return Confirmed(None, f"no program run reaches the start of the counterexample path of {steps} steps "
                               f"(its first {prefix} steps: {r})")
    cex, why = run_from_model(program, sys, s.model(), prefix, steps, bitvector)
    if cex is None:
        return Confirmed(None, f"counterexample path of {steps} steps not confirmed by running the program: {why}")
    return Confirmed(cex, deep=True)


def confirm_loop_path(program: Program, sys: CPGSystem, path: Sequence[tuple[Hashable, int]], deadline: Deadline,
                      bitvector: bool, replay_limit: int, deep_loop: int) -> Confirmed:
    """Replay the violating path `[(node, loop iterations), ..., (ERROR, 0)]` of the cutpoint graph: the node is
    visited once and then once per iteration of its self-loop, so the path's pc sequence pins every cutpoint step.
    A path longer than `replay_limit` steps is solved up to the entry of its first deep loop (`deep_loop`
    iterations or more) and the program is run from there (`confirm_cpg_path`)."""
    pcs = [v for v, d in path[:-1] for _ in range(d + 1)] + [path[-1][0]]
    k = len(pcs) - 1
    prefix, idx = k, 0
    for v, d in path[:-1]:
        if v in sys.cpg.cutpoints and d >= deep_loop:
            prefix = idx
            break
        idx += d + 1

    def pins(upto: int) -> list[z3.BoolRef]:
        return [sys.pc_at(j) == sys.pc_id[v] for j, v in enumerate(pcs[:upto + 1])]
    return confirm_cpg_path(program, sys, k, lambda: pins(k), deadline, bitvector, replay_limit, prefix,
                            pins(prefix), pcs)


def _unrolling(sys: CPGSystem, pcs: Sequence[Hashable] | None) -> Callable[[int], list[z3.BoolRef]]:
    """steps -> Tr's copies for steps 0 .. steps-1; with the node of every step known, step j's copy is Tr with
    its pc and next pc set to those nodes and simplified (the pc-encoded ites fall away), made once per pair of
    nodes and then renamed: equivalent to `trans_at(j)` under the pins that fix the pcs."""
    ts = sys.ts
    if pcs is None:
        return lambda steps: [ts.trans_at(j) for j in range(steps)]
    made: dict[tuple[Hashable, Hashable], tuple[z3.BoolRef, list[z3.ExprRef]]] = {}
    aux = {a.get_id() for a in ts.aux_vars}

    def step(j: int) -> z3.BoolRef:
        pair = (pcs[j], pcs[j + 1])
        hit = made.get(pair)
        if hit is None:
            tr = z3.simplify(z3.substitute(ts.trans, (sys.pc, z3.IntVal(sys.pc_id[pair[0]])),
                                           (sys.pc_next, z3.IntVal(sys.pc_id[pair[1]]))))
            hit = made[pair] = (tr, [c for c in free_constants(tr) if c.get_id() in aux])
        tr, own = hit
        return z3.substitute(tr, *ts.step_substitution(j, own))
    return lambda steps: [step(j) for j in range(steps)]
