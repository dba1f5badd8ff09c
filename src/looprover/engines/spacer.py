"""z3's Spacer as an engine: the program's cutpoint graph as Horn clauses, one relation per cutpoint.

Program -> cutpoint graph -> `CPGSystem` -> `smt.systems.cpg_horn` (a relation per cutpoint over the variables
live there, a clause per CPG edge, a query per edge into ERROR) -> `smt.horn.spacer`. Horn-clause input
takes the same route: the CHC front-end has already made it a program, so a CHC file's clauses reach Spacer
re-encoded through the cutpoint graph, which is what lets its answers be checked against the program.

Evidence:
- TRUE only after Spacer's solution passed `HornSystem.check_solution`: every clause of the system Spacer
  answered for, checked with the solution in fresh plain solvers (integer mode: exact for executions without
  signed overflow, like every engine on `CPGSystem`). The evidence holds the invariant per cutpoint.
- FALSE only with a counterexample replayed on the original program: Spacer's derivation names the clauses it
  used, i.e. the CPG edges of the violating path; its node sequence pins the pc of every step of one exact BMC
  query over `CPGSystem.ts` (`evidence.confirm.confirm_loop_path`, as the multiloop engine does), deep paths are
  run on the interpreter. Spacer's preprocessing may merge clauses, and its derivation then skips some: a
  derivation that is not a path of the cutpoint graph is asked for again with those passes off.

Configuration, measured (`looprover verify --engine spacer --timeout 10`, one run each, 2 busy cores): 20 files,
12 from shared/benchmarks/chc (every 13th of expected.csv and 4 more unsat ones) and 8 SV-COMP tasks (every 14th
unreach-call task of tasks.csv). Plain Spacer solved 7 (4 FALSE, 3 TRUE), global guidance (`fp.spacer.global`)
12 (the same 7 and 5 more TRUE: s_split_13, abdu_02, formula27, seq-3, in-de31, in 0.3-3 s); on the 7 both
solve, 3.5 s vs 3.3 s in total. Wrong answers: none. Hence global guidance by default. Its weakness is depth:
a 33-step counterexample through two loops (tests/engines/test_spacer.py, `test_horn_clauses`) takes plain
Spacer ~1 s and global guidance more than 20 s (z3's own HORN solver on the .smt2 file alike: 1.2 s vs 19.5 s).
z3 5.4.0's global generalizer prints an "ASSERTION VIOLATION ... UNEXPECTED CODE WAS REACHED" to stderr on some
inputs and carries on; every answer is checked anyway.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from looprover.engines.base import Engine, Run, Task
from looprover.engines.loop_path import falsify_loop_path
from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, CPGEdge, CutpointGraph, build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.deadline import OutOfTime
from looprover.domains.strings import StringLengths
from looprover.errors import GiveUp
from looprover.evidence.certify import domain_candidates, quantified
from looprover.smt.horn import HornSystem, SpacerAnswer, inductive_subset, spacer
from looprover.smt.mbp import free_constants
from looprover.smt.terms import mk_and
from looprover.smt.systems import cpg_horn
from looprover.program.liveness import liveness
from looprover.transforms.cells import has_arrays
from looprover.verdict import Verdict
from looprover.evidence.proofs import CutpointInvariantProof



ARRAY_MODES = ("auto", "native", "cells", "strings")
HOUDINI_SHARE = 0.25    # of the time left, at most, for the domains' invariants before Spacer


@dataclass
class SpacerSettings:
    global_guidance: bool = field(default=True, metadata={
        "help": "Spacer's global guidance (fp.spacer.global: subsume, concretize and conjecture lemmas)"})
    seed: int = field(default=0, metadata={"help": "Spacer's random seed (fp.spacer.random_seed)"})
    # off by default: on the Verisec sample's fixed files at BASE_SZ 1000 (30 s, portfolio) it proved one file
    # Spacer does not (a copy behind a length check, 5.4 s) and cost another, and the files both prove took
    # about twice as long, Spacer's share of the portfolio going to the Houdini stage first (issue 30's note)
    houdini: str = field(default="off", metadata={
        "help": "first the domains' candidate invariants: TRUE when those the clauses preserve (Houdini on the "
                "clauses) solve them; on, off, or auto: on for the string-terminator abstraction"})
    arrays: str = field(default="auto", metadata={
        "help": "a program with arrays: as it is (native), on its cell abstraction (cells), on the cell "
                "abstraction with its strings' terminators as ghost variables (strings), or (auto) a program "
                "with char arrays on strings, then cells, then native, others native"})

    def __post_init__(self) -> None:
        if self.arrays not in ARRAY_MODES:
            raise ValueError(f"spacer.arrays: expected one of {', '.join(ARRAY_MODES)}, got {self.arrays!r}")
        if self.houdini not in ("auto", "on", "off"):
            raise ValueError(f"spacer.houdini: expected auto, on or off, got {self.houdini!r}")


class SpacerEngine(Engine):
    name = "spacer"
    summary = "z3's Spacer on the cutpoint graph as Horn clauses; its solution re-checked, its derivation replayed"
    Settings = SpacerSettings

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: SpacerSettings = self.settings(run)
        if opts.arrays != "native" and has_arrays(program):
            v = self._abstracted(program, task, run, opts.arrays)
            if v is not None:
                return v
        cpg = build_cpg(program)
        sys = CPGSystem(cpg, run.bitvector, run.deadline)
        horn = cpg_horn(sys, liveness(program))
        run.stats.update(relations=len(horn.params), clauses=len(horn.clauses))
        run.stage = "spacer"
        run.report(f"spacer: {len(horn.params)} relations, {len(horn.clauses)} clauses")
        if opts.houdini == "on" or opts.houdini == "auto" and StringLengths().wants_scope(program):
            v = self._from_domains(program, sys, horn, run)
            if v is not None:
                return v
        ans = self._spacer(horn, run, opts, merge=True)
        path = _path(cpg, ans) if ans.status == "unsafe" else None
        if ans.status == "unsafe" and path is None:
            run.report("spacer: the derivation skips merged clauses; asking again without merging")
            run.stats["merged_derivation"] = True
            ans = self._spacer(horn, run, opts, merge=False)
            if ans.status == "safe":      # the two runs disagree: believe neither
                return self.unknown("spacer: safe without merging clauses after unsafe with it")
            path = _path(cpg, ans) if ans.status == "unsafe" else None
            if ans.status == "unsafe" and path is None:
                return self.unknown("spacer: its derivation is not a path of the cutpoint graph")
        if ans.status == "safe":
            return self._prove(program, horn, ans, run)
        if path is not None:
            return self._falsify(program, sys, path, run)
        return self.unknown(f"spacer: {ans.reason}")

    def _abstracted(self, program: Program, task: Task, run: Run, mode: str) -> Verdict | None:
        """Spacer on abstractions of a program with arrays (`mode` as `SpacerSettings.arrays`): their verdict,
        or None when the program itself is next.

        Why auto: Spacer on array state rarely finds the invariants of buffer code (Verisec: timeouts at
        BASE_SZ 100), while on the cell abstraction with terminator ghosts it proves the fixed string programs
        in a few seconds at any size; where the ghosts cost more than they give (no string scan), the plain cell
        abstraction or the arrays themselves still get their turn. The strings stage gets 70 % of the time: on
        the 21 fixed files of issue 30's Verisec sample at BASE_SZ 1000 (20 s each, alone) it proved 11 in
        1.2-19.7 s (9 of them within 14 s), where native Spacer and the plain cell abstraction proved the same
        3 of them, each in under 1.5 s; in the portfolio Spacer gets a fraction of the wall clock, and with 40 %
        the strings stage ran out of time on proofs it finds alone."""
        from looprover.engines.transformed import OnCells, OnStrings, on_abstractions, on_cells
        from looprover.transforms.strings import has_strings
        if mode == "cells":
            return on_cells(self, program, task, run)
        if mode == "strings":
            run.report("spacer: the program has arrays; running on its string-terminator abstraction")
            return OnStrings(self).solve(program, task, run)
        if not has_strings(program):
            return None
        return on_abstractions(self, program, task, run, ((OnStrings, 0.7), (OnCells, 1 / 3)))

    def _spacer(self, horn: HornSystem, run: Run, opts: SpacerSettings, merge: bool) -> SpacerAnswer:
        ans = spacer(horn, run.deadline, global_guidance=opts.global_guidance, seed=opts.seed, merge=merge)
        run.stats["spacer"] = ans.stats
        return ans

    def _from_domains(self, program: Program, sys: CPGSystem, horn: HornSystem, run: Run) -> Verdict | None:
        """TRUE when the domains' candidate invariants (`evidence.certify.domain_candidates`) that every clause
        of `horn` preserves also exclude its queries; None otherwise, or when `HOUDINI_SHARE` of the time left
        runs out first.

        Why: on the string-terminator abstraction Spacer finds the length relations of a copy or a scan slowly
        and erratically (a copy loop behind a length check at BASE_SZ 1000 took it 3.7 s to over 30 s, by its
        random seed; issue 30), where the domains offer them (`domains.strings.StringLengths`) and Houdini
        decides them in about a second. Given to Spacer as lemmas (its covers) they did not help: it still took
        5-25 s there and lost proofs it found without them, so Spacer runs as before when they do not suffice."""
        run.stage = "houdini"
        dl = run.deadline.cap(run.deadline.left() * HOUDINI_SHARE)
        try:
            cands = domain_candidates(program, run.bitvector, dl, live_only=True)
            over = {rel: {p.get_id() for p in ps} for rel, ps in horn.params.items()}
            by_rel: dict = {rel: [] for rel in horn.params}
            for c in cands:
                if quantified(c):
                    continue        # quantified array facts: the clauses' solution stays quantifier-free
                f = sys.enc.expr(c.atom, sys.cur)
                used = {k.get_id() for k in free_constants(f)}
                for rel in horn.params:
                    if (c.node is None or c.node == rel) and used <= over[rel]:
                        by_rel[rel].append(f)
            kept = inductive_subset(horn, by_rel, dl)
            interp = {rel: mk_and(*fs) for rel, fs in kept.items()}
            why = horn.check_solution(interp, dl)
        except (OutOfTime, GiveUp) as exc:
            run.stats["houdini"] = f"undecided ({exc or 'out of time'})"
            return None
        run.stats["houdini"] = f"{sum(map(len, kept.values()))} of {len(cands)} candidates inductive" + \
            ("" if why is None else "; not a solution")
        run.report(f"spacer: {run.stats['houdini']}")
        if why is not None:
            return None
        return self.true("the domains' candidate invariants that the clauses preserve solve them (Houdini), "
                         "checked", CutpointInvariantProof.of(interp, program))

    def _prove(self, program: Program, horn: HornSystem, ans: SpacerAnswer, run: Run) -> Verdict:
        run.stage = "re-checking the solution"
        run.report("spacer: re-checking the solution")
        assert ans.interp is not None
        why = horn.check_solution(ans.interp, run.deadline)
        if why is not None:
            return self.unknown(f"spacer: its solution failed the re-check: {why}")
        return self.true(f"spacer: invariants at {len(ans.interp)} cutpoint-graph nodes, re-checked",
                         CutpointInvariantProof.of(ans.interp, program))

    def _falsify(self, program: Program, sys: CPGSystem, path: list[tuple[int, int]], run: Run) -> Verdict:
        return falsify_loop_path(self, program, sys, path, run)


def _path(cpg: CutpointGraph, ans: SpacerAnswer) -> list[tuple[int, int]] | None:
    """The derivation's CPG edges as a path [(node, iterations of its self-loop), ..., (ERROR, 0)] from init,
    or None if they do not form one (Spacer merged clauses)."""
    edges: list[CPGEdge] = [c.tag for c in ans.trace or () if isinstance(c.tag, CPGEdge)]
    if not edges or edges[0].src != cpg.init or edges[-1].dst != ERROR:
        return None
    if any(a.dst != b.src for a, b in zip(edges, edges[1:])):
        return None
    path: list[tuple[int, int]] = [(edges[0].src, 0)]
    for e in edges:
        if e.dst == path[-1][0]:
            path[-1] = (e.dst, path[-1][1] + 1)
        else:
            path.append((e.dst, 0))
    return path
