"""The `termination` engine: per-loop termination arguments for TRUE, a checked lasso for FALSE.

Semantics (SV-COMP's `termination.prp`, `LTL(F end)`): the program terminates when every execution reaches the
end of `main`, `exit`/`abort`, or a failing assertion (`reach_error`); a blocked execution (`assume(false)`)
terminates too. Non-termination needs one infinite execution, with any nondet values.

TRUE (`termination/proof.py`): the CFA must be reducible (a `goto` cycle with two entries gives UNKNOWN); the
front-end inlines every call and refuses recursion, so the natural loops are the only way not to terminate.
The program's invariants are k-induction's Houdini-checked candidates (`domains/`, `smt/houdini.py`). Then,
innermost loop first, each loop gets its iteration relation (`termination/relation.py`: nested loops summarised
by checked relations between the outer head and the inner cutpoints) and an argument is searched
(`termination/ranking.py`: strict-order transition invariants from the loop's comparisons, then linear and
lexicographic ranking functions synthesised from counterexample pairs, then a disjunctive transition
invariant). TRUE only when every loop has one; the whole proof is then checked again from the program with
fresh solvers (`TerminationProof.check`, which the portfolio also runs) and printed per loop.

FALSE (`termination/lasso.py`): for the loops without an argument (every cutpoint, if the CFA is
irreducible), bounded model checking looks for a lasso, and each candidate recurrent set goes through the
independent check (`evidence/nontermination.py`); only a witness that passed it (its `validated` flag, which
`run_engine`'s `vet` requires) is a FALSE.

Integer mode: unsigned arithmetic wraps (so a loop that stops only because a counter wraps is ranked on the
wrapped values, and one that runs forever because of a wrap has a recurrent set), and a TRUE speaks about the
executions without signed overflow (undefined behaviour in C): no argument relies on a signed variable staying
within its type, and a FALSE's cycle is checked to have no signed overflow. `--bitvector`: gcc's wrap-around,
ranking functions over the values of the bit-vectors.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from looprover.deadline import Deadline, OutOfTime, now
from looprover.domains import Candidate, candidates, sample_states
from looprover.domains.state import QUANTIFIER_FREE_DOMAINS
from looprover.engines.base import Engine, Run, Task
from looprover.evidence.certify import houdini
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.program.loops import analyze_loops
from looprover.smt.cpg_system import CPGSystem
from looprover.termination.lasso import LassoSearch
from looprover.termination.proof import TerminationProof
from looprover.termination.ranking import ArgumentSearch, LoopArgument
from looprover.termination.relation import LoopRelation
from looprover.verdict import Verdict

RANKING_SHARE = 0.6     # of the time left after the invariants, for the termination arguments


@dataclass
class TerminationSettings:
    invariants: bool = field(default=True, metadata={
        "help": "use Houdini-checked program invariants as the loops' context"})
    lexicographic: int = field(default=3, metadata={
        "help": "most components of a lexicographic ranking function"})
    stem: int = field(default=12, metadata={
        "help": "most cutpoint steps of a non-termination lasso's stem"})
    cycle: int = field(default=8, metadata={
        "help": "most cutpoint steps of a non-termination lasso's cycle"})
    seed: int = field(default=0, metadata={"help": "random seed of the state sampling for invariant candidates"})


class Termination(Engine):
    name = "termination"
    summary = "per-loop termination arguments (strict orders, linear/lexicographic ranking functions, " \
              "disjunctive transition invariants) for TRUE; a checked lasso with a recurrent set for FALSE"
    Settings = TerminationSettings

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        opts: TerminationSettings = self.settings(run)
        stats, deadline = run.stats, run.deadline
        t0 = now()
        forest = analyze_loops(program)
        names = tuple((n, i.c_name or n) for n, i in program.variables.items())
        stats["loops"] = len(forest.loops)
        if not forest.loops and not forest.irreducible:
            return self.true("no loops (calls are inlined, recursion is refused)",
                             TerminationProof((), (), names))
        cpg = build_cpg(program, forest)
        sys = CPGSystem(cpg, run.bitvector, deadline)
        invs = self._invariants(program, cpg, sys, opts, run, t0) if opts.invariants else []

        args: dict[int, LoopArgument] = {}
        open_loops: list[str] = []
        if forest.irreducible:
            open_loops.append("irreducible control flow (a cycle with two entries)")
        else:
            # the arguments get a share of the time, split over the loops; the first loop without one ends
            # the search (TRUE needs them all) and the rest of the time goes to the lasso search
            ranking = deadline.cap(RANKING_SHARE * max(deadline.left(), 0.0))
            for i, h in enumerate(forest.order):
                run.stage = f"loop at L{h}"
                run.report(f"termination: loop at L{h}")
                where = self._where(program, forest.loops[h])
                share = ranking.left() / (len(forest.order) - i)
                loop_deadline = deadline if deadline.unlimited else deadline.cap(max(share, 0.2))
                arg, why = self._argue(sys, forest.loops[h], invs, opts, loop_deadline, where, stats)
                if arg is None:
                    open_loops.append(f"{where or 'L' + str(h)}: {why}")
                    break
                args[h] = arg
            if len(args) == len(forest.loops):
                proof = TerminationProof(tuple(invs), tuple(args[h] for h in forest.order), names)
                run.stage = "checking the proof"
                why = proof.check(program, run.bitvector, deadline)
                if why is not None and "undecided" in why:     # a solver's unknown, not a wrong argument
                    return self.unknown(f"timeout while checking the termination proof ({why})")
                if why is not None:
                    return self.unknown(f"internal error: the termination proof failed its check: {why}")
                kinds = sorted({a.kind for a in args.values()})
                return self.true(f"every loop has a checked argument ({', '.join(kinds)})", proof)

        heads = sorted(set(forest.loops) - set(args)) if not forest.irreducible else \
            sorted(set(cpg.cutpoints))
        run.stage = "searching a lasso"
        run.report(f"termination: non-termination search at {', '.join('L' + str(h) for h in heads)}")
        search = LassoSearch(program, sys, heads, invs, run.bitvector, deadline, opts.stem, opts.cycle)
        lasso = f"no non-termination lasso within {opts.stem}+{opts.cycle} cutpoint steps"
        try:
            w = search.run()
        except OutOfTime:
            w, lasso = None, "timeout in the search for a non-termination lasso"
        finally:
            stats["lasso_candidates"] = search.candidates
            if search.rejected:
                stats["lasso_rejected"] = search.rejected[:5]
        if w is not None:
            return self.false(f"non-termination: a lasso at {w.where or 'L' + str(w.head)} with a recurrent set "
                              f"({len(w.stem)} stem edges, {len(w.loop)} cycle edges)", w)
        return self.unknown("no termination argument for " + "; ".join(open_loops) + "; " + lasso)

    # -------------------------------------------------------------------------------------- pieces
    @staticmethod
    def _where(program: Program, loop) -> str:
        src = program.loc_src.get(loop.header)
        if src is None:
            src = next((e.src_loc for e in loop.body_edges if e.src_loc is not None), None)
        return str(src) if src is not None else ""

    @staticmethod
    def _invariants(program: Program, cpg, sys: CPGSystem, opts: TerminationSettings, run: Run, t0: float
                    ) -> list[Candidate]:
        deadline = run.deadline
        span = max(deadline.at - t0, 0.0) if not deadline.unlimited else 60.0
        samples = sample_states(program, set(cpg.cutpoints), seed=opts.seed, bitvector=run.bitvector,
                                deadline=Deadline(min(deadline.at, t0 + span / 10)))
        # quantifier-free: the ranking and recurrence searches ask z3 for models under these invariants
        cands = candidates(program, cpg, samples, run.bitvector, QUANTIFIER_FREE_DOMAINS)
        found = houdini(sys, cands, deadline.cap(max(0.5, span / 4)))
        run.stats["invariants"] = len(found) if found is not None else "gave up"
        return found or []

    @staticmethod
    def _argue(sys: CPGSystem, loop, invs: list[Candidate], opts: TerminationSettings, deadline: Deadline,
               where: str, stats: dict) -> tuple[LoopArgument | None, str]:
        rel = LoopRelation(sys, loop, invs)
        try:
            summary = rel.find_summary(deadline) if rel.inner else ()
        except GiveUp as exc:
            return None, f"no summary of the nested loops ({exc})"
        except OutOfTime:
            return None, "out of its share of the time (summary of the nested loops)"
        search = ArgumentSearch(rel, summary, deadline, opts.lexicographic, where)
        try:
            arg = search.run()
        except GiveUp as exc:
            return None, f"solver gave up ({exc})"
        except OutOfTime:
            return None, "out of its share of the time (" + ", ".join(search.stats.tried) + ")"
        finally:
            stats.setdefault("ranking", {})[f"L{loop.header}"] = {
                "tried": search.stats.tried, "cegis_rounds": search.stats.rounds, "pairs": search.stats.pairs}
        if arg is None:
            return None, "no argument found (" + ", ".join(search.stats.tried) + ")"
        return arg, ""
