"""A counterexample given as a path through the cutpoint graph -- the nodes visited and the iterations of each
node's loop -- turned into a verdict: replayed on the program (`evidence.confirm.confirm_loop_path`), described by
its loops. Shared by the engines whose counterexamples have this form (multiloop, spacer)."""
from __future__ import annotations

from looprover.engines.base import Engine, Run
from looprover.program.cfa import Program
from looprover.smt.cpg_system import CPGSystem
from looprover.verdict import Verdict
from looprover.evidence.confirm import confirm_loop_path

REPLAY_LIMIT = 2000        # cutpoint steps a counterexample may have to be replayed by one BMC query
DEEP_LOOP = 100            # iterations from which a loop is run on the interpreter instead of unrolled


def falsify_loop_path(engine: Engine, program: Program, sys: CPGSystem, path: list[tuple[int, int]], run: Run
                      ) -> Verdict:
    """FALSE if the path [(node, loop iterations), ..., (ERROR, 0)] replays on the program (a path longer than
    REPLAY_LIMIT is solved up to the entry of its first deep loop and the program is run from there), else
    UNKNOWN with the unreplayed candidate."""
    stats = run.stats
    run.stage = "replaying the counterexample"
    iterations = [(program.loc_label(v), d) for v, d in path[:-1] if v in sys.cpg.cutpoints]
    stats["cex_path"] = [program.loc_label(v) for v, _ in path]
    stats["loop_iterations"] = dict(iterations)
    k = sum(d + 1 for _, d in path[:-1])
    stats["cex_depth"] = k
    through = ", ".join(f"loop {n}: {d} iteration{'' if d == 1 else 's'}" for n, d in iterations) or "no loop"
    c = confirm_loop_path(program, sys, path, run.deadline, run.bitvector, REPLAY_LIMIT, DEEP_LOOP)
    if not c.ok:
        return engine.unknown(f"{engine.name}: {c.why} ({through})", c.candidate)
    how = ", replayed by running the program" if c.deep else ""
    return engine.false(f"{engine.name}: assertion violated after {k} cutpoint steps ({through}; {c.cex.length} "
                        f"edges{how})", c.cex)
