"""z3 solver calls under a `Deadline`: per-call timeouts, and `unknown` never mistaken for an answer.

Two styles, one deadline type (`looprover.deadline`):
- `Solver` wraps a z3 solver for the unrolling engines (bmc, kinduction): `check` returns sat/unsat/unknown and
  gets the time left as its z3 timeout; with no time left it returns `unknown` without calling z3, and
  `why_unknown` tells a timeout from a solver give-up; `check_restarting` retries heavy-tailed (quantified)
  queries with new random seeds.
- `check(s, deadline, ...)` is for search algorithms (TPA, the network, certificate checks) that must not go on
  after an unanswered query: `unknown` raises `OutOfTime` (deadline) or `GiveUp` (the solver's own reason).
A query capped below the time left is asked again when it timed out while the portfolio had paused the process
(`check_unpaused`); an uncapped one needs no retry, as the pause used up its deadline too.
"""
from __future__ import annotations

import ctypes
import itertools
import math
import time
from typing import Callable

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp


def luby(i: int) -> int:
    """The i-th term (from 1) of Luby's sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, …: restart lengths within a
    logarithmic factor of the best fixed strategy for any run time distribution (Luby, Sinclair, Zuckerman 1993)."""
    k = i.bit_length()
    while i != (1 << k) - 1:          # i lies in the k-th block (2^(k-1) <= i < 2^k - 1): recurse into its prefix
        i -= (1 << (k - 1)) - 1
        k = i.bit_length()
    return 1 << (k - 1)


def timed_out(why: str) -> bool:
    """Whether z3's reason for `unknown` (or a canceled call's message) is its timer, not a give-up."""
    return "timeout" in why or "cancel" in why


def check_deadline(deadline: Deadline | None) -> None:
    """Raise OutOfTime once `deadline` has passed (no-op without a deadline)."""
    if deadline is not None:
        deadline.check()


def _bools_of(s, fs) -> bool:
    """Are `fs` z3 Booleans of the z3 solver `s`'s context (what the C API may take without the casts)?"""
    return isinstance(s, z3.Solver) and all(isinstance(f, z3.BoolRef) and f.ctx is s.ctx for f in fs)


def check_assuming(s: z3.Solver, assumptions: tuple) -> z3.CheckSatResult:
    """`s.check(*assumptions)` without the z3 API's per-assumption cast: it makes and compares each one's sort
    through ctypes, about 10 µs each, and Houdini and summarize's support queries pass a literal per candidate
    (Verisec's simp_ok at BASE_SZ 1000: a thousand literals in each of hundreds of queries, 40 % of summarize's
    time). Anything but z3 Booleans of the solver's context goes through the API's own check."""
    if not assumptions or not _bools_of(s, assumptions):
        return s.check(*assumptions)
    arr = (z3.Ast * len(assumptions))()
    for i, a in enumerate(assumptions):
        arr[i] = a.ast
    return z3.CheckSatResult(z3.Z3_solver_check_assumptions(s.ctx.ref(), s.solver, len(assumptions), arr))


def add_all(s: z3.Solver, forms) -> None:
    """`s.add(*forms)` without the API's per-formula cast (as `check_assuming`): Houdini asserts a guarded
    formula per candidate in each round, two thousand on Verisec's bind rrextract, where the casts cost as much
    as asserting."""
    forms = list(forms)
    if not _bools_of(s, forms):
        s.add(*forms)
        return
    ref = s.ctx.ref()
    for f in forms:
        z3.Z3_solver_assert(ref, s.solver, f.ast)


def holds_in(m: z3.ModelRef, f: z3.BoolRef) -> bool:
    """Whether `f` is true in `m` (model completion on): `is_true(m.eval(f, True))` without the Python wrapper
    the API makes for the result, 2.4 times faster; Houdini asks it for every alive candidate in every round."""
    ref = m.ctx.ref()
    r = z3.Ast(0)
    if not z3.Z3_model_eval(ref, m.model, f.ast, True, ctypes.byref(r)):
        return False
    z3.Z3_inc_ref(ref, r)
    try:
        return z3.Z3_get_bool_value(ref, r) == z3.Z3_L_TRUE
    finally:
        z3.Z3_dec_ref(ref, r)


PAUSE_RETRIES = 3
RESTART_FIRST = 1.0      # seconds: `Solver.check_restarting`'s first try, on the solver as it is,
RESTART_UNIT = 1.0       # then tries capped at this times Luby's sequence,
RESTART_GIVE_UPS = 3     # until z3 gave up (not timed out) on this many


def check_unpaused(s: z3.Solver, *assumptions: z3.BoolRef, deadline: Deadline | None = None,
                   timeout: float | None = None) -> z3.CheckSatResult:
    """`s.check()`, asked again when it timed out while this process was paused: the portfolio time-shares its
    engines by stopping them (SIGSTOP), and z3's timeout runs on the wall clock, so a query capped at a second
    could time out during someone else's turn (accel's path search did, and found "no path" where alone it
    found three; summarize's capped queries drop candidates the same way). Paused means the query took more than
    twice the wall time of the CPU time the process spent. `timeout`: seconds per try, capped by `deadline`
    and set on `s` before each (None: the timeout already set on `s`)."""
    r = z3.unknown
    for _ in range(PAUSE_RETRIES):
        capped = True                   # else the try had all the time left: a pause used up the deadline too
        if timeout is not None and deadline is not None:
            capped = timeout < deadline.left()
            try:
                s.set("timeout", deadline.ms(timeout))
            except OutOfTime:           # nothing left: unknown, as z3 says it at its timeout
                return r
        wall, cpu = time.monotonic(), time.process_time()
        r = check_assuming(s, assumptions)
        if r != z3.unknown or not capped or (deadline is not None and deadline.expired()):
            return r
        if not timed_out(s.reason_unknown()) \
                or time.monotonic() - wall <= 2 * (time.process_time() - cpu) + 0.05:
            return r
    return r


def check(s: z3.Solver, deadline: Deadline, *assumptions: z3.BoolRef, cap: float | None = None
          ) -> z3.CheckSatResult:
    """`s.check()` with the timeout taken from the deadline (optionally capped at `cap` seconds), asked again
    when it timed out while paused (`check_unpaused`); `unknown` becomes OutOfTime or GiveUp, so callers only
    ever see sat/unsat."""
    deadline.ms(cap)                    # OutOfTime when nothing is left (also for cap <= 0)
    r = check_unpaused(s, *assumptions, deadline=deadline, timeout=math.inf if cap is None else cap)
    if r == z3.unknown:
        why = s.reason_unknown()
        if deadline.expired() or timed_out(why):
            raise OutOfTime()
        raise GiveUp(f"solver returned unknown ({why})")
    return r


def plain_solver(ctx: z3.Context | None = None) -> z3.Solver:
    """z3's incremental SMT core alone (`z3.SimpleSolver`), for the search algorithms' many small queries (TPA,
    accel's path search). Why not `z3.Solver()`: it runs a first check without assumptions through its logic's
    preprocessing tactics, which on these queries costs more than it saves. Measured, TPA split on the 104 CHC dev
    files (20 s, one core, each file run both ways in turn): solved 78 -> 79, 0 wrong either way, time on the 76
    both solve 414 -> 367 s (median per-file ratio 0.91; per file from 2.1x slower to 2.6x faster); accel's path
    query on a string loop's doubled body: 0.2-0.4 s -> 5-15 ms."""
    return z3.SimpleSolver(ctx=ctx)


def unsat(deadline: Deadline, *fs: z3.BoolRef) -> bool:
    """Whether the conjunction of `fs` is unsatisfiable, in a fresh solver of their context (undecided raises, as
    `check`): the one form of "this proof obligation holds" for the search algorithms and certificate checks."""
    s = plain_solver(fs[0].ctx)
    s.add(*fs)
    return check(s, deadline) == z3.unsat


def valid(f: z3.BoolRef, deadline: Deadline) -> bool:
    """Whether `f` holds in every model (`unsat` of its negation)."""
    return unsat(deadline, z3.Not(f))


def obligation_failure(s: "Solver", what: str, *fs: z3.BoolRef) -> str | None:
    """None when the conjunction of `fs` is unsatisfiable in the (fresh) solver `s`, else why the proof
    obligation `what` does not hold: "fails", or "undecided" with the solver's reason. For proof checks that
    report a reason instead of raising."""
    s.add(*fs)
    r = s.check()
    if r == z3.unsat:
        return None
    return f"{what} fails" if r == z3.sat else f"{what} undecided ({s.why_unknown()})"


class Solver:
    def __init__(self, deadline: Deadline | None = None, solver: z3.Solver | None = None):
        self.deadline = deadline
        self.z3 = solver if solver is not None else z3.Solver()
        self.checks = 0
        self.check_time = 0.0

    def add(self, *fs: z3.BoolRef) -> None:
        self.z3.add(*fs)

    def check(self, *assumptions: z3.BoolRef, deadline: Deadline | None = None) -> z3.CheckSatResult:
        """`sat`/`unsat`/`unknown`; `deadline` may tighten (never extend) the solver's deadline."""
        dl = self.deadline if deadline is None else deadline.earliest(self.deadline)
        if dl is not None:
            if dl.expired():
                return z3.unknown
            self.z3.set("timeout", dl.ms())
        t = time.monotonic()
        try:
            return check_assuming(self.z3, assumptions)
        finally:
            self.checks += 1
            self.check_time += time.monotonic() - t

    def check_restarting(self, *assumptions: z3.BoolRef, fresh: Callable[[], z3.Solver],
                         first: float = RESTART_FIRST, unit: float = RESTART_UNIT) -> z3.CheckSatResult:
        """`check` for queries whose run time is heavy-tailed (quantified formulas, array fills as lambdas: z3's
        instantiation loop): a first try capped at `first` seconds, then tries capped at `unit` times Luby's
        sequence (1, 1, 2, 1, 1, 2, 4, …), each on a `fresh` solver (the same assertions, no learned state) with
        a new `random_seed`, until one answers or the deadline passes; the last try gets the time left. A try
        that gives up before its cap (z3's "incomplete quantifiers") counts too, but after RESTART_GIVE_UPS of
        those the query is left unknown: an engine that cannot decide it ends instead of spinning to its
        deadline (in the portfolio, on the other engines' CPU).
        Measured on accel's scan test at N = 1000 (BMC of the accelerated program, bound 2): 3 of 28 Python hash
        seeds (the order in which terms are built) made the query run out of 30 s, the others answered in 0.3 s;
        on one of the three, five of five fresh solvers with a new seed answered (four within 1 s), while a new
        seed on the same solver did not help. On mime7to8's three characters at BASE_SZ 1000 caps doubling from
        1 s (1, 2, 4, 8, 16) still lost one run of two; Luby's sequence tries more seeds before it spends long on
        one (z3's own SAT restarts follow it). A first try of 3 s was tried and dropped: on mime7to8 one char at
        BASE_SZ 1000 the query on the incremental solver runs past 3 s while the first fresh solver answers at
        once (1.05 s in all with a first try of 1 s, 3.06 s with 3 s)."""
        gave_up = 0
        for seed in itertools.count(0):
            cap = first if seed == 0 else unit * luby(seed)
            last = self.deadline is not None and self.deadline.left() <= cap
            r = self.check(*assumptions, deadline=None if last else Deadline.after(cap))
            if r != z3.unknown or last or (self.deadline is not None and self.deadline.expired()):
                return r
            gave_up += not timed_out(self.z3.reason_unknown())
            if gave_up == RESTART_GIVE_UPS:
                return r
            self.z3 = fresh()
            self.z3.set("random_seed", seed + 1)
        raise AssertionError("unreachable")

    def model(self) -> z3.ModelRef:
        return self.z3.model()

    def reason_unknown(self) -> str:
        return self.z3.reason_unknown()

    def why_unknown(self) -> str:
        """'timeout' when the deadline has (nearly) passed, else z3's reason."""
        if self.deadline is not None and self.deadline.left() < 0.2:
            return "timeout"
        return f"solver returned unknown ({self.z3.reason_unknown()})"

    def push(self) -> None:
        self.z3.push()

    def pop(self) -> None:
        self.z3.pop()
