"""Basic Transition Power Abstraction (design/algorithms.md B2) on a `TransitionSystem`.

Level n holds `ATr[n] ⊇ Tr^{≤2^n}`: level 0 is `Id ∨ Tr` (exact), every higher level a conjunction of learned
interpolants over (x, x') only. `Reach(S, T, n)` asks whether T is reachable from S in ≤ 2^{n+1} steps using
two copies of `ATr[n]`; UNSAT teaches level n+1 an interpolant, SAT is confirmed by two recursive half-queries
at level n-1 through an MBP midpoint, down to the exact base case. A level that is closed under composition
with Tr (after Houdini filtering) is a safe transition invariant.

Choices that differ from a literal reading of the notes, and why:
- *Exact step counts*: the base case re-projects with the disjuncts (Id or Tr) the model actually took, so every
  state of a returned target is reachable in exactly `steps` steps (Golem projects the whole `Id ∨ Tr` formula
  and leaves a "might be off" remark).
- *Concrete chaining*: the second half starts from the concrete end state of the first half rather than from
  its projected target set, so a REACHABLE result always carries a real (source, …, target) chain of
  waypoints -- the top level gets a concrete initial state that really fails after exactly `steps` steps,
  even when Init is a set. Progress is preserved: a failed second half adds a level-n lemma that excludes that
  state from every later midpoint (midpoints are projections of the current, stronger ATr[n]).
- *Exact powers* (powers.py): when QE keeps `Tr^{=2^j}` small, a SAT node is confirmed by one query instead of
  2^n base cases; otherwise the plain recursion runs, down to the levels the powers computed so far cover.
- *Seed lemmas* (seeds.py): checked reflexive-transitive template facts conjoined to every level. With the
  interpolants we have, plain TPA needs ~16 s and 84 interpolations for the N=10 safe counter and does not
  close for N=1000; with seeds every N closes at level 1. `seeds=False` gives the plain algorithm.
- *Interpolation problems* (`_itp_problem`): unsat-core reduced on both sides, seeds moved to the B side, and
  the method order adapts per system (`_interpolate`).
- *Solvers*: one incremental solver per level holding `ATr[n](x,x') ∧ ATr[n](x',x'')`; queries are push/pop
  scoped, new lemmas are added permanently, and the solver is rebuilt after `rebuild_after` pushes (Golem's
  remedy for accumulated solver state). Measured (one process per run, two runs each): query-bound runs are
  1.5-2x faster than with a fresh solver per query (N=1000 unsafe counter by plain recursion, 1025 queries:
  4.6/5.5 s vs 7.8/7.0 s; nondeterministic-step counter, 519 queries: 2.3/2.7 s vs 4.6/4.4 s); interpolation-
  bound runs are equal within noise. The fresh mode stays as an option.
- *Closure checks during a query*: a level i below or at the current top level is checked for closure as soon
  as it learns a lemma, not only after the top-level query. A deep query can run for seconds while recursing
  through the lower levels, and which lemma lands on which level depends on the models z3 returns (on the
  syntactic form of Init, on the context's history). Measured on CHC-COMP's s_split_17 (issue 14): runs that
  had closed level 2 after 5-6 s ran into a 10 s deadline in the level-9 query instead, with levels 1-9 all
  closed by then; checking as lemmas arrive closes level 1 after ~3.5-4 s, for ~1 s of closure checks.

Every SAFE/UNSAFE is re-checked by `certify.py` with fresh solvers; a failing check gives UNKNOWN.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import z3

from looprover.smt.divmod import purify_divmod
from looprover.smt.houdini import houdini
from looprover.smt.interpolate import ItpStats, SatisfiableError, compute_interpolant
from looprover.smt.terms import all_of, clauses, conjuncts
from looprover.smt.mbp import free_constants, ite_depth, project
from looprover.smt.ts import TransitionSystem
from looprover.tpa.certify import check_safe_certificate, replay_counterexample, state_invariant
from looprover.tpa.levels import LevelSolver
from looprover.tpa.options import TPAOptions
from looprover.tpa.powers import ExactPowers, convex
from looprover.tpa.seeds import bound_atoms, transitive_seeds
from looprover.deadline import Deadline, OutOfTime, now
from looprover.errors import GiveUp
from looprover.smt.solver import check, plain_solver, unsat
from looprover.tpa.result import SafeCertificate, State, TPAResult, TPAStatus, Vocabulary, is_state, state_of


SEED_BUDGET = 5.0          # seconds at most for the first query's seed lemmas
SEED_BUDGET_LATER = 1.0    # ... and for those of a later query's new Bad atoms
DIRECT_MBP_ITE_DEPTH = 8   # z3's projection of Tr itself only up to this ite nesting (`smt.mbp.ite_depth`)
WIDEN_CAP = 1.0            # seconds to widen one safety explanation (`TPA._widened`)
FIXPOINT_CAP = 0.5         # seconds for a fixed-point check at first (doubled each time one runs into it)


class _Closed(Exception):
    """A level closed while a deeper query was still running (`_reach`): the query is moot."""

    def __init__(self, cert: SafeCertificate):
        super().__init__(cert.kind)
        self.cert = cert


@dataclass(frozen=True)
class _Reach:
    """Outcome of Reach(S, T, n). When reachable: every state of `target` (⊆ T, over x) is reachable from some
    S-state in exactly `steps` steps, and `waypoints` is a concrete chain (relative step index, state) from a
    state of S (index 0) to a state of `target` (index `steps`), each segment a real path."""
    reachable: bool
    steps: int = 0
    target: z3.BoolRef | None = None
    waypoints: tuple[tuple[int, State], ...] = ()

    @property
    def dst(self) -> State:
        return self.waypoints[-1][1]


def _linear_steps(ts: TransitionSystem) -> TransitionSystem:
    """`ts` with division and remainder by constants in Tr as auxiliary quotient and remainder (`smt.divmod`):
    the same relation, whose atoms Farkas interpolation handles. The search steps with it; the seeds' atoms
    (parity, `x mod 2 = 0`) and every certificate and counterexample check use `ts` as given (measured on fm24:
    a multi-loop run over `div` by 10 took 15 s instead of 50 s; seeded from the purified Tr alone, a parity loop
    lost its `mod 2` seeds and went from TRUE in 1 s to UNKNOWN)."""
    trans, fresh = purify_divmod(ts.trans)
    return ts.with_trans(trans) if fresh else ts


def _unique(fs: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """Drop repeated conjuncts (seeds sit in the closure invariants and in every level)."""
    seen: set[int] = set()
    return [f for f in fs if not (f.get_id() in seen or seen.add(f.get_id()))]


class TPA:
    """One TPA run over a transition system. Levels survive `reset_query` (they abstract Tr alone)."""

    def __init__(self, ts: TransitionSystem, options: TPAOptions | None = None):
        self.ts = ts
        self.opt = options or TPAOptions()
        self.voc = Vocabulary(_linear_steps(ts) if self.opt.divmod else ts)
        self.ctx = self.voc.ctx
        self.init: z3.BoolRef = ts.init
        self.bad: z3.BoolRef = ts.bad
        self.levels: list[list[z3.BoolRef]] = [[]]      # levels[n] for n ≥ 1: lemmas over (x, x')
        self._level_ids: list[set[int]] = [set()]
        self._solvers: dict[int, LevelSolver] = {}
        self._cache: dict[tuple[int, int, int], tuple[z3.BoolRef, z3.BoolRef, _Reach]] = {}
        self.right_inv: list[z3.BoolRef] = []
        self.left_inv: list[z3.BoolRef] = []
        self._fp_seen: dict[int, tuple[int, int, int]] = {}
        self.powers = ExactPowers(self.voc, self.opt.exact_powers, convex=convex(ts.trans))   # ts: before purification
        self.seeds: list[z3.BoolRef] | None = None
        self._seed_atoms: set[int] = set()              # ids of the atoms seeds were built from
        self._probe: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}
        self._direct_mbp_of_tr = ite_depth(self.voc.ts.trans) <= DIRECT_MBP_ITE_DEPTH
        self.itp_stats = ItpStats()
        self._itp_ok: Counter = Counter()
        self._itp_fail: Counter = Counter()
        self.stats: Counter = Counter()
        self.times: Counter = Counter()
        self.deadline = Deadline(now())
        self._fp_cap = FIXPOINT_CAP
        self._conjs: dict[int, tuple[int, z3.BoolRef, list]] = {}
        self._check_vocabulary()

    def _check_vocabulary(self) -> None:
        """Init/Bad over x only, Tr over x, x' and aux (algorithms.md pitfall: aux in Init/Bad breaks MBP and
        interpolation silently)."""
        xs = {v.get_id() for v in self.voc.x}
        for name, f in (("Init", self.init), ("Bad", self.bad)):
            extra = [c for c in free_constants(f) if c.get_id() not in xs]
            if extra:
                raise GiveUp(f"{name} mentions non-state symbols {extra[:5]}")
        for v in self.voc.x:
            if v.sort().kind() not in (z3.Z3_INT_SORT, z3.Z3_BOOL_SORT, z3.Z3_REAL_SORT, z3.Z3_BV_SORT):
                raise GiveUp(f"state variable {v} has unsupported sort {v.sort()}")

    # ------------------------------------------------------------------------------------------ query API
    def reset_query(self, init: z3.BoolRef, bad: z3.BoolRef) -> None:
        """New Init/Bad over the same Tr: learned levels and closure facts stay (they only abstract Tr), the
        reachability cache and the fixed-point memo go (B2: cache keyed per Init/Bad)."""
        self.init, self.bad = init, bad
        self._cache.clear()
        self._fp_seen.clear()
        self._check_vocabulary()

    def solve(self, deadline: Deadline) -> TPAResult:
        """SAFE (checked certificate), UNSAFE (checked witness) or UNKNOWN by `deadline`.

        The search's own dead ends (the deadline, `GiveUp`) are UNKNOWN results, so a caller can try another
        system (`LoopSolver`); anything else (memory, z3 errors, bugs) propagates to the engine runner."""
        self.deadline = deadline
        t0 = time.monotonic()
        try:
            res = self._solve()
        except OutOfTime:
            res = TPAResult(TPAStatus.UNKNOWN, f"deadline reached at level {self.stats['level']}")
        except GiveUp as exc:
            res = TPAResult(TPAStatus.UNKNOWN, str(exc))
        res.stats.update(self._stats(time.monotonic() - t0))
        return res

    def _stats(self, elapsed: float) -> dict:
        return {
            "time": round(elapsed, 3),
            "level": self.stats["level"],
            "lemmas": [len(lv) for lv in self.levels],
            "queries": self.stats["queries"],
            "base_cases": self.stats["base"],
            "power_confirmations": self.stats["power_ok"],
            "power_queries": self.stats["power_q"],
            "powers_computed": len(self.powers.powers),
            "powers_stopped": self.powers.slow or self.powers.failed,
            "interpolations": self.itp_stats.calls,
            "itp_time": round(self.itp_stats.seconds, 3),
            "itp_methods": dict(self.itp_stats.wins),
            "fixpoint_time": round(self.times["fixpoint"], 3),
            "fixpoint_capped": self.stats["fixpoint_capped"],
            "mbp_time": round(self.times["mbp"], 3),
            "seeds": len(self.seeds or []),
            "seed_time": round(self.times["seeds"], 3),
            "right_inv": len(self.right_inv),
            "left_inv": len(self.left_inv),
            "incremental": self.opt.incremental,
        }

    def _solve(self) -> TPAResult:
        if self.opt.seeds:
            self._grow_seeds()
        for n in range(self.opt.max_level + 1):
            self.stats["level"] = n
            try:
                r = self._reach(self.init, self.bad, n)
            except _Closed as closed:
                return self._safe(closed.cert)
            if r.reachable:
                return self._unsafe(r)
            cert = self._fixed_point(n + 1)
            if cert is not None:
                return self._safe(cert)
        return TPAResult(TPAStatus.UNKNOWN, f"no fixed point up to level {self.opt.max_level}")

    def _grow_seeds(self) -> None:
        """Seed lemmas for the atoms of the TS (Init, Tr, Bad), then for the new atoms of each later query's Bad.

        A loop of the multi-loop network is queried with a Bad that changes query by query (its TS has Init =
        Bad = false), and a seed such as `x%2 = 0 ⇒ x'%2 = 0` comes from a Bad atom only a later query has.
        Query Inits are left out, and so is the first query's Bad: in the network they are MBP cubes and
        interpolant sets whose many bound atoms (y ≤ 31, y ≤ 36, ...) gave dozens of useless seeds, which showed
        up again in the next cubes (measured: with the first query's Init/Bad atoms, multiloop lost 11 CHC and 6
        SV-COMP tasks it had solved; a two-loop unsigned program went from TRUE in 3 s to UNKNOWN at 30 s)."""
        first = self.seeds is None
        t0 = time.monotonic()
        budget = self.deadline.cap(SEED_BUDGET if first else SEED_BUDGET_LATER)
        try:
            parts = [self.ts.init, self.ts.trans, self.ts.bad] if first else [self.bad]
            atoms = [a for a in bound_atoms(z3.And(parts), self.voc, budget)
                     if a.get_id() not in self._seed_atoms]
            if not first and not atoms:
                return
            self._seed_atoms.update(a.get_id() for a in atoms)
            new = transitive_seeds(self.voc, budget, atoms, known=self.seeds or [], relational=first)
        except (OutOfTime, GiveUp):
            if self.deadline.expired():
                raise
            new = []                    # seeds are an optimisation: without them TPA is still complete
        finally:
            self.times["seeds"] += time.monotonic() - t0
        self.seeds = (self.seeds or []) + new
        # Tr-closed and reflexive, so they are closure invariants on both sides, and they hold at every level
        self.right_inv.extend(new)
        self.left_inv.extend(new)
        for n in range(1, len(self.levels)):
            self._add_to_level(n, new)

    # ------------------------------------------------------------------------------------------ levels
    def _atr(self, n: int, a: list[z3.ExprRef], b: list[z3.ExprRef], tag: str) -> z3.BoolRef:
        """ATr[n](a, b); level 0 uses the aux copy `tag`."""
        voc = self.voc
        if n == 0:
            return z3.Or(voc.identity(a, b), voc.trans(a, b, tag))
        return voc.rel_to(self._conj(self.levels[n]), a, b)

    def _conj(self, fs: list[z3.BoolRef]) -> z3.BoolRef:
        """The conjunction of a level's lemma list, memoised per list and length (levels only grow): building it
        anew for every query took ~2 ms with 44 seed lemmas, 3.7 s of a 30 s split-TPA run."""
        hit = self._conjs.get(id(fs))
        if hit is None or hit[0] != len(fs):
            hit = self._conjs[id(fs)] = (len(fs), all_of(fs, self.ctx), fs)     # fs kept alive: ids are reused
        return hit[1]

    def _level_pair(self, n: int) -> list[z3.BoolRef]:
        voc = self.voc
        return [self._atr(n, voc.x, voc.x1, "l0a"), self._atr(n, voc.x1, voc.x2, "l0b")]

    def _ensure_level(self, n: int) -> None:
        while len(self.levels) <= n:
            self.levels.append(list(self.seeds or []))
            self._level_ids.append({c.get_id() for c in self.levels[-1]})

    def _solver(self, n: int) -> LevelSolver:
        s = self._solvers.get(n)
        if s is None:
            self._ensure_level(n)
            s = LevelSolver(self.ctx, self._level_pair(n), self.opt.incremental, self.opt.rebuild_after)
            self._solvers[n] = s
        return s

    def _learn(self, n: int, lemma: z3.BoolRef) -> None:
        """Add the conjuncts of `lemma` (over x, x') to level n and to its solver."""
        self.stats["lemmas"] += self._add_to_level(n, self._lemma_parts(lemma))

    def _lemma_parts(self, lemma: z3.BoolRef) -> list[z3.BoolRef]:
        """The facts a learned lemma adds to a level: its conjuncts, or with `lemma_clauses` its clauses (the
        closure checks and the interpolation cores pick level facts one by one)."""
        f = z3.simplify(lemma)
        return clauses(f, self.opt.lemma_clauses) if self.opt.lemma_clauses > 1 else conjuncts(f)

    def _add_to_level(self, n: int, cs: list[z3.BoolRef]) -> int:
        """Add the facts `cs` not yet in level n to it and to its solver; how many were new."""
        self._ensure_level(n)
        new = []
        for c in cs:
            if c.get_id() not in self._level_ids[n]:
                self._level_ids[n].add(c.get_id())
                self.levels[n].append(c)
                new.append(c)
        if new and n in self._solvers:
            voc = self.voc
            self._solvers[n].strengthen([f for c in new for f in (c, voc.rel_to(c, voc.x1, voc.x2))])
        return len(new)

    def _itp_problem(self, n: int, S: z3.BoolRef, T2: z3.BoolRef) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(A, B) for the lemma of level n+1 after `S ∧ ATr[n] ∧ ATr[n]' ∧ T''` was unsat.

        Two sound reductions keep the problem small (cube-enumerating interpolation blows up on the many
        disjunctive seed lemmas of encoded programs):
        - seeds go to the B side as `Seeds(x, x'')`: they hold for ATr[n]∘ATr[n] (every level contains them and
          they are transitive) and level n+1 contains them anyway, so a lemma only has to refute
          `S ∧ T'' ∧ Seeds(x, x'')`;
        - only what an unsat core needs is kept, on both sides: A_full ⇒ A_core ⇒ I keeps I a valid
          abstraction, and dropping conjuncts of S, T or the seeds only makes B weaker, so I still refutes the
          full B. This is what keeps lemmas general when S is a concrete state (the second half of a split
          starts from one): the core usually keeps only the few equalities that matter.
        """
        voc = self.voc
        seed_ids = {c.get_id() for c in self.seeds or []}
        if n == 0:
            a_parts = self._level_pair(0)
        else:
            own = [c for c in self.levels[n] if c.get_id() not in seed_ids]
            a_parts = own + [voc.rel_to(c, voc.x1, voc.x2) for c in own]
        return self._reduced_problem(a_parts, self._level_pair(n), S, T2)

    def _reduced_problem(self, a_parts: list[z3.BoolRef], full: list[z3.BoolRef], S: z3.BoolRef,
                         T2: z3.BoolRef) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(A, B) from the non-seed parts `a_parts` of a refuted query `full ∧ S ∧ T''` (reductions above;
        `full` is the whole A side, seeds included, used when the reduction does not apply)."""
        voc = self.voc
        if not self.opt.itp_core:
            return all_of(full, self.ctx), z3.And(S, T2)
        b_parts = conjuncts(S) + conjuncts(T2) + [voc.rel_to(c, voc.x, voc.x2) for c in self.seeds or []]
        parts = a_parts + b_parts
        lits = [z3.Bool(f"tpa!core{i}", self.ctx) for i in range(len(parts))]
        s = plain_solver(self.ctx)
        s.set("core.minimize", True)
        s.add(*[z3.Implies(a, p) for a, p in zip(lits, parts)])
        if check(s, self.deadline, *lits) == z3.unsat:
            core = {c.get_id() for c in s.unsat_core()}
            keep = [a.get_id() in core for a in lits]
            A = [p for p, k in zip(a_parts, keep) if k]
            B = [p for p, k in zip(b_parts, keep[len(a_parts):]) if k]
            return all_of(A, self.ctx), all_of(B, self.ctx)
        return all_of(full, self.ctx), z3.And(S, T2)      # the seeds were needed mid-way

    def _unsat(self, *fs: z3.BoolRef) -> bool:
        return unsat(self.deadline, *fs)

    def _interpolate(self, A: z3.BoolRef, B: z3.BoolRef, shared: list[z3.ExprRef]) -> z3.BoolRef:
        """First checked interpolant of the methods, each under its own cap (a stuck cube enumeration must not
        eat the budget of the next method); a second round gives the first method what is left.

        The order adapts per system: a method that has failed more often than it succeeded moves behind the
        others (measured: Farkas is best on counters, Spacer on pc-encoded programs with If-terms, where
        Farkas' cube enumeration times out)."""
        caps = dict(zip(self.opt.itp_methods, self.opt.itp_caps))
        order = sorted(self.opt.itp_methods, key=lambda m: self._itp_fail[m] > self._itp_ok[m])
        rounds = [[(m, caps.get(m, 3.0)) for m in order], [(order[0], self.opt.itp_timeout)]]
        for plan in rounds:
            for method, cap in plan:
                left = min(cap, self.deadline.left())
                if left <= 0:
                    raise OutOfTime()
                try:
                    r = compute_interpolant(A, B, shared, left, check_unsat=False, stats=self.itp_stats,
                                            methods=[method])
                except SatisfiableError:
                    raise GiveUp("internal error: interpolation query is satisfiable") from None
                if r is not None:
                    self._itp_ok[method] += 1
                    return r.formula
                self._itp_fail[method] += 1
        if self.deadline.expired():
            raise OutOfTime()
        raise GiveUp("interpolation failed (no method produced a checked interpolant)")

    # ------------------------------------------------------------------------------------------ Reach
    def _reach(self, S: z3.BoolRef, T: z3.BoolRef, n: int) -> _Reach:
        key = (S.get_id(), T.get_id(), n)
        hit = self._cache.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return hit[2]
        voc = self.voc
        T2 = voc.cur_to(T, voc.x2)
        while True:
            if self.deadline.expired():
                raise OutOfTime()
            self.stats["queries"] += 1
            m = self._solver(n).query([S, T2], self.deadline)
            if m is None:
                A, B = self._itp_problem(n, S, T2)
                I = self._interpolate(A, B, voc.x + voc.x2)
                self._learn(n + 1, z3.substitute(I, *zip(voc.x2, voc.x1)) if voc.x else I)
                if n + 1 <= self.stats["level"]:
                    cert = self._level_fixed_point(n + 1)
                    if cert is not None:
                        raise _Closed(cert)
                res = _Reach(False)
                break
            if n == 0:
                res = self._base_case(S, T2, m)
                break
            res = self._confirm_by_powers(S, T, n)
            if res is not None:
                break
            mid = self._midpoint(S, T2, n, m)
            r1 = self._reach(S, mid, n - 1)
            if not r1.reachable:
                continue          # ATr[n] learned S ↛ mid; re-query
            r2 = self._reach(is_state(voc.x, r1.dst, self.ctx), T, n - 1)
            if not r2.reachable:
                continue          # ATr[n] learned dst ↛ T; later midpoints exclude dst
            shift = r1.steps
            wp = r1.waypoints + tuple((shift + i, st) for i, st in r2.waypoints[1:])
            res = _Reach(True, r1.steps + r2.steps, r2.target, wp)
            break
        self._cache[key] = (S, T, res)      # keep S, T alive: z3 ids are reused after garbage collection
        return res

    def _project(self, fml: z3.BoolRef, m: z3.ModelRef, elim: list[z3.ExprRef],
                 keep: list[z3.ExprRef], direct: bool = True) -> z3.BoolRef:
        """MBP: z3's projection directly, checked (true in m, only `keep` symbols); the careful, slower
        `smt.mbp.project` when that check fails, or right away unless `direct` (z3's projection cannot be
        interrupted and is exponential in nested ites, which `project` resolves by the model first). Either way
        R ∋ m and R ⇒ ∃elim. fml."""
        t0 = time.monotonic()
        try:
            r = None
            try:
                r = m.project(elim, fml) if direct else None
            except z3.Z3Exception:
                r = None
            if r is not None and not z3.is_false(r) and z3.is_true(m.eval(r, model_completion=True)) \
                    and not self._mentions(r, elim):
                return r
            if direct:
                self.stats["mbp_slow"] += 1
            return project(fml, m, keep=keep)
        finally:
            self.times["mbp"] += time.monotonic() - t0

    def _mentions(self, r: z3.ExprRef, vs: list[z3.ExprRef]) -> bool:
        """Does r contain one of vs? One C-level substitution instead of a Python walk: hash-consing makes the
        result the same AST exactly when nothing was replaced."""
        if not vs:
            return False
        pairs = []
        for v in vs:
            p = self._probe.get(v.get_id())
            if p is None:
                p = self._probe[v.get_id()] = (v, z3.FreshConst(v.sort(), "probe"))
            pairs.append(p)
        return not z3.substitute(r, *pairs).eq(r)

    def _base_case(self, S: z3.BoolRef, T2: z3.BoolRef, m: z3.ModelRef) -> _Reach:
        """≤ 2 exact steps: count the steps where the model leaves the state, re-project with those disjuncts."""
        voc = self.voc
        self.stats["base"] += 1
        parts = [S]
        steps = 0
        for a, b, tag in ((voc.x, voc.x1, "l0a"), (voc.x1, voc.x2, "l0b")):
            ident = voc.identity(a, b)
            if z3.is_true(m.eval(ident, model_completion=True)):
                parts.append(ident)
            else:
                parts.append(voc.trans(a, b, tag))
                steps += 1
        parts.append(T2)
        elim = voc.x + voc.x1 + voc.aux_copy("l0a") + voc.aux_copy("l0b")
        target = self._project(z3.And(parts), m, elim, voc.x2, direct=self._direct_mbp_of_tr or steps == 0)
        target = z3.substitute(target, *zip(voc.x2, voc.x)) if voc.x else target
        src, dst = state_of(m, voc.x), state_of(m, voc.x2)
        return _Reach(True, steps, target, ((0, src), (steps, dst)))

    def _midpoint(self, S: z3.BoolRef, T2: z3.BoolRef, n: int, m: z3.ModelRef) -> z3.BoolRef:
        voc = self.voc
        left = self._project(z3.And(S, self._atr(n, voc.x, voc.x1, "")), m, voc.x, voc.x1)
        right = self._project(z3.And(T2, self._atr(n, voc.x1, voc.x2, "")), m, voc.x2, voc.x1)
        mid = z3.simplify(z3.And(left, right))
        return z3.substitute(mid, *zip(voc.x1, voc.x)) if voc.x else mid

    def _confirm_by_powers(self, S: z3.BoolRef, T: z3.BoolRef, n: int) -> _Reach | None:
        """One exact query over E_0..E_{n+1} (lengths < 2^{n+2}) instead of the recursion, when available and the
        powers are likely to pay (`ExactPowers.worth_it`)."""
        if not self.powers.worth_it(n + 1) or self.powers.slow is not None or \
                not self.powers.available(n + 1, self.deadline):
            return None
        self.stats["power_q"] += 1
        r = self.powers.reach(S, T, n + 1, self.deadline)
        if r is None:
            return None
        self.stats["power_ok"] += 1
        k, wp = r
        return _Reach(True, k, is_state(self.voc.x, wp[-1][1], self.ctx), tuple(wp))

    # ------------------------------------------------------------------------------------------ fixed point
    def _fixed_point(self, upto: int) -> SafeCertificate | None:
        """A safe closure of one of the levels 1..upto that changed since its last check, or None."""
        for i in range(1, upto + 1):
            cert = self._level_fixed_point(i)
            if cert is not None:
                return cert
        return None

    def _level_fixed_point(self, i: int) -> SafeCertificate | None:
        """Level i's right or left closure (`_closure`) unless nothing changed since it last failed."""
        if i >= len(self.levels):
            return None
        t0 = time.monotonic()
        try:
            sig = (len(self.levels[i]), len(self.right_inv), len(self.left_inv))
            if self._fp_seen.get(i) == sig:
                return None           # nothing changed since this level last failed
            if not self.levels[i] and not self._empty_query():
                self._fp_seen[i] = sig
                return None
            capped = self.stats["fixpoint_capped"]
            cert = self._undecided_is_none(self._closure, i, "right") or \
                self._undecided_is_none(self._closure, i, "left")
            if self.stats["fixpoint_capped"] == capped:     # a check stopped by its cap is tried again later
                self._fp_seen[i] = (len(self.levels[i]), len(self.right_inv), len(self.left_inv))
            return cert
        finally:
            self.times["fixpoint"] += time.monotonic() - t0

    def _undecided_is_none(self, check_fp, *args) -> SafeCertificate | None:
        """A fixed-point check whose query z3 leaves undecided (e.g. its incomplete difference-logic solver), or
        that runs past its time cap, finds no fixed point at this level; the search goes on instead of ending in
        UNKNOWN. The cap doubles each time it is hit, and a capped level is checked again: a closure query over
        lemmas with nested `mod` terms took 14 s of a 20 s run (fm24 const_div_3_copies) that the search needed."""
        real = self.deadline
        self.deadline = real.cap(self._fp_cap)
        try:
            return check_fp(*args)
        except GiveUp:
            self.stats["fixpoint_undecided"] += 1
            return None
        except OutOfTime:
            if real.expired():
                raise
            self.stats["fixpoint_capped"] += 1
            self._fp_cap *= 2
            return None
        finally:
            self.deadline = real

    def _empty_query(self) -> bool:
        """Init or Bad is empty, so an empty level (`true`) is a safe transition invariant; an undecided query
        (z3's incomplete difference-logic solver) counts as not empty rather than ending the run."""
        try:
            return self._unsat(self.init) or self._unsat(self.bad)
        except GiveUp:
            return False

    def _closure(self, i: int, side: str) -> SafeCertificate | None:
        """Right: `Inv ∧ ATr[i](x,x') ∧ Tr(x',x'') ⇒ ATr[i](x,x'')` (else from Init); left: the mirror image
        (else towards Bad). Inv collects Houdini-inductive conjuncts of all levels seen so far."""
        voc = self.voc
        x, x1, x2 = voc.x, voc.x1, voc.x2
        if side == "right":
            first = lambda c: c                                        # noqa: E731  c(x, x')
            context = voc.trans(x1, x2, "fp")
            inv = self.right_inv
            restriction = self.init
        else:
            first = lambda c: voc.rel_to(c, x1, x2)                    # noqa: E731  c(x', x'')
            context = voc.trans(x, x1, "fp")
            inv = self.left_inv
            restriction = voc.cur_to(self.bad, x2)
        second = lambda c: voc.rel_to(c, x, x2)                        # noqa: E731  c(x, x'')
        inv_ids = {c.get_id() for c in inv}
        cands = [c for c in self.levels[i] if c.get_id() not in inv_ids]
        if cands:
            inv.extend(self._houdini(cands, inv, first, second, context))
        atr = self._conj(self.levels[i])
        s = plain_solver(self.ctx)
        s.add(*[first(c) for c in inv], first(atr), context, z3.Not(second(atr)))
        if check(s, self.deadline) == z3.unsat:
            return SafeCertificate(side, all_of(_unique(inv + self.levels[i]), self.ctx), i, restricted=False)
        s.add(restriction)
        if check(s, self.deadline) == z3.unsat:
            return SafeCertificate(side, all_of(_unique(inv + self.levels[i]), self.ctx), i, restricted=True)
        if inv:
            s = plain_solver(self.ctx)
            s.add(self.init, *inv, voc.cur_to(self.bad, x1))
            if check(s, self.deadline) == z3.unsat:
                return SafeCertificate(side, all_of(list(inv), self.ctx), i, restricted=False)
        return None

    def _houdini(self, cands, inv, first, second, context) -> list[z3.BoolRef]:
        """Largest subset H of `cands` with `inv ∧ H ∧ context ⇒ H''` (`smt/houdini.py`); more than `houdini_cap`
        candidates are conjoined pairwise first to bound the query size, and the survivors split again."""
        cands = list(cands)
        while len(cands) > self.opt.houdini_cap:          # keep the query size bounded: conjoin pairwise
            cands = [z3.And(cands[k], cands[k + 1]) if k + 1 < len(cands) else cands[k]
                     for k in range(0, len(cands), 2)]
        alive = houdini([context, *[first(c) for c in inv]], [first(c) for c in cands],
                        [second(c) for c in cands], self.deadline, new_solver=lambda: plain_solver(self.ctx))
        out = []
        for i in alive:
            out.extend(conjuncts(cands[i]))
        return out

    # ------------------------------------------------------------------------------------------ answers
    def _safe(self, cert: SafeCertificate) -> TPAResult:
        why = check_safe_certificate(self._query_ts(), cert, self.deadline)
        if why is not None:
            return TPAResult(TPAStatus.UNKNOWN, f"internal error: {why} (level {cert.level}, {cert.kind})")
        cert.checked = True
        if self.opt.state_invariant:
            cert.state_invariant = state_invariant(self._query_ts(), cert, self.deadline, self.opt.qe_timeout)
        kind = f"{cert.kind}{' restricted' if cert.restricted else ''}"
        return TPAResult(TPAStatus.SAFE, f"transition invariant at level {cert.level} ({kind}), checked",
                         certificate=cert)

    def _query_ts(self) -> TransitionSystem:
        return self.ts.with_query(self.init, self.bad)

    def _unsafe(self, r: _Reach) -> TPAResult:
        w = replay_counterexample(self._query_ts(), r.steps, list(r.waypoints), self.deadline,
                                  self.opt.replay_limit, self.powers.powers)
        if isinstance(w, str):
            return TPAResult(TPAStatus.UNKNOWN, f"internal error: counterexample of depth {r.steps} failed its "
                                                f"check: {w}")
        w.target = r.target
        return TPAResult(TPAStatus.UNSAFE, f"Bad reachable in exactly {w.depth} steps ({w.checked})", witness=w)

    def safety_explanation(self, cert: SafeCertificate) -> z3.BoolRef:
        """A state set E ⊇ Init from which Bad is unreachable (the multi-loop layer's `preSafe` increment).

        A left certificate, or an unrestricted right one, over-approximates every run that ends in Bad (resp.
        every run), so `¬∃x'. TI(x,x') ∧ Bad(x')` is safe; an interpolant I of (A = TI ∧ Bad', B = Init) gives
        the generalisation E = ¬I (Golem's explanation). A right certificate restricted to Init only speaks
        about Init-sources, so E = Init there, and also when interpolation fails."""
        if cert.kind == "right" and cert.restricted:
            return self.init
        return self._explanation_from(z3.And(cert.ti, self.voc.cur_to(self.bad, self.voc.x1)))

    def _explanation_from(self, towards_bad: z3.BoolRef) -> z3.BoolRef:
        """¬I for an interpolant I of (`towards_bad`, Init): the states of x that cannot reach Bad; Init itself
        when interpolation fails."""
        try:
            r = compute_interpolant(towards_bad, self.init, self.voc.x,
                                    min(self.opt.itp_timeout, max(self.deadline.left(), 0.1)),
                                    check_unsat=True, stats=self.itp_stats)
        except (SatisfiableError, z3.Z3Exception):
            return self.init
        if r is None:
            return self.init
        return self._widened(r.formula, towards_bad)

    def _widened(self, itp: z3.BoolRef, towards_bad: z3.BoolRef) -> z3.BoolRef:
        """¬itp with as few of its clauses (the negated disjuncts of itp) as keep it apart from `towards_bad`.

        Every E with `E ∧ towards_bad` unsat is a safe superset of Init, and the largest generalises best: the
        network's bridge into this loop is blocked only by states inside E. A Farkas interpolant keeps, per
        A-cube, whatever contradicts this particular Init -- for a single start state often a bound on one
        counter (`i ≤ -1`) where the relational fact (`x ≥ i`) alone separates every start; Golem's strong
        interpolants do not have that bias. An unsat core, then one try per remaining clause, drops the others."""
        parts = [z3.simplify(z3.Not(d)) for d in (itp.children() if z3.is_or(itp) else [itp])]
        if len(parts) < 2:
            return z3.simplify(z3.Not(itp))
        deadline = self.deadline.cap(WIDEN_CAP)
        s = plain_solver(self.ctx)
        s.add(towards_bad)
        marks = [z3.Bool(f"widen!{k}", self.ctx) for k in range(len(parts))]
        for m, p in zip(marks, parts):
            s.add(z3.Implies(m, p))
        try:
            if check(s, deadline, *marks) != z3.unsat:
                return z3.simplify(z3.Not(itp))
            core = {m.get_id() for m in s.unsat_core()}
            keep = [m for m in marks if m.get_id() in core]
            for m in list(keep):
                trial = [k for k in keep if k is not m]
                if check(s, deadline, *trial) == z3.unsat:
                    keep = trial
        except (GiveUp, OutOfTime):
            if self.deadline.expired():
                raise
            return z3.simplify(z3.Not(itp))
        self.stats["explanation_clauses_dropped"] += len(parts) - len(keep)
        return all_of([parts[marks.index(m)] for m in keep], self.ctx)


def solve_tpa(ts: TransitionSystem, deadline: Deadline | None = None, *, timeout: float | None = None,
              options: TPAOptions | None = None) -> TPAResult:
    """Run TPA (the variant `options` asks for) on `ts` until `deadline` (or `timeout` seconds from now)."""
    if deadline is None:
        deadline = Deadline.after(timeout if timeout is not None else 60.0)
    from looprover.tpa.split import make_tpa      # split.py builds on this module
    try:
        engine = make_tpa(ts, options)
    except GiveUp as exc:
        return TPAResult(TPAStatus.UNKNOWN, str(exc))
    return engine.solve(deadline)
