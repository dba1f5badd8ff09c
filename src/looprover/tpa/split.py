"""Split Transition Power Abstraction (design/algorithms.md B3, FMCAD'22; Golem's `tpa` engine's default).

Two hierarchies instead of basic TPA's one (`core.py`): `E[n] ⊇ Tr^{=2^n}` (E[0] = Tr) and `L[n] ⊇ Tr^{<2^n}`
(L[0] = Id), each level a conjunction of learned lemmas over (x, x'). Level n asks two questions:
- ReachLT(S, T, n), fewer than 2^{n+1} steps, through `L[n] ∨ L[n]∘E[n]` (encoded as
  `L[n](x,x') ∧ (sel ⇒ x' = x'') ∧ (¬sel ⇒ E[n](x',x''))`, so strengthening either level only adds
  constraints to the level's incremental solver); UNSAT teaches L[n+1], SAT recurses into ReachLT(n-1) (first
  disjunct) or ReachLT(S, mid, n-1) then ReachEQ(mid, T, n-1);
- ReachEQ(S, T, n), exactly 2^{n+1} steps, through `E[n]∘E[n]`; UNSAT teaches E[n+1], SAT recurses into two
  ReachEQ(n-1).
Why it helps: an exact power is a much smaller relation than "up to 2^n steps", so its interpolants are
simpler and E[n] often becomes transitive (the exact fixed point) where basic TPA's ATr[n] is not closed.

Fixed points:
- L[i] closed under Tr (right or left, with the Houdini-filtered closure facts): basic TPA's certificate kinds
  (`core._closure` on the L levels, which all contain Id);
- E[i] transitive (unrestricted, else with its first state in Init∘L[i], else its last in L[i]∘Bad), after
  Houdini keeps the largest transitive subset of its conjuncts when E[i] itself is not: the certificate is
  the whole chain ((E_1, L_1) … (E_i, L_i)), which `certify.check_safe_certificate` re-checks step by step, so
  the inductive transition invariant is checked, not trusted.
The search machinery (seeds, unsat-core interpolation problems, adaptive interpolation order, MBP midpoints,
concrete chaining of halves, exact-power confirmation, answer checks) is the basic engine's, inherited.

Measured (CHC, 20 s per file, one job, loaded 2-core machine; final code): hcai-bench 9 of 10 for both,
eldarica-misc 6 of 8 for both (each solves one the other does not), fm24-multiloop unsat 0 of 12 for both,
zero wrong; so basic stays the default. Without seed lemmas the hand-built deep counter (N = 1000) and
`down_up` close with split (an exact fixed point) and not with basic. In the multi-loop network split was
slower (fm24 unsat 4 vs 5 of 12, sat 2 vs 3 of 11).
"""
from __future__ import annotations

import time

import z3

from looprover.deadline import OutOfTime
from looprover.smt.houdini import houdini
from looprover.smt.terms import all_of
from looprover.smt.ts import TransitionSystem
from looprover.tpa.core import TPA, _Reach
from looprover.tpa.levels import LevelSolver
from looprover.tpa.options import TPAOptions
from looprover.tpa.result import SafeCertificate, TPAResult, TPAStatus, is_state, state_of
from looprover.smt.solver import plain_solver


class SplitTPA(TPA):
    """Split TPA over a transition system. `self.levels` is the L hierarchy (so the basic closure check and the
    seed bookkeeping apply to it unchanged), `self.exact` the E hierarchy; both survive `reset_query`."""

    def __init__(self, ts: TransitionSystem, options: TPAOptions | None = None):
        super().__init__(ts, options)
        self.exact: list[list[z3.BoolRef]] = [[]]         # exact[n] for n ≥ 1: lemmas over (x, x')
        self._exact_ids: list[set[int]] = [set()]
        self._lt: dict[int, LevelSolver] = {}
        self._eq: dict[int, LevelSolver] = {}
        self._eq_cache: dict[tuple[int, int, int], tuple[z3.BoolRef, z3.BoolRef, _Reach]] = {}
        self._efp_seen: dict[int, tuple[int, int]] = {}
        self._sel = z3.Bool("tpa!sel", self.ctx)
        self._seed_forms: tuple[int, set[int], list] = (0, set(), [])     # (#seeds, ids, the forms kept alive)
        # a third copy of the state for the restricted transitivity checks, made once (the vocabulary's renamings
        # are cached by the variables' identities)
        self._w = [z3.Const(f"{v}!tpa3", v.sort()) for v in self.voc.x]

    def reset_query(self, init: z3.BoolRef, bad: z3.BoolRef) -> None:
        super().reset_query(init, bad)
        self._eq_cache.clear()
        self._efp_seen.clear()

    def _stats(self, elapsed: float) -> dict:
        st = super()._stats(elapsed)
        st["variant"] = "split"
        st["exact_lemmas"] = [len(lv) for lv in self.exact]
        st["exact_fixpoint_checks"] = self.stats["efp"]
        return st

    def _solve(self) -> TPAResult:
        if self.opt.seeds:
            self._grow_seeds()
        for n in range(self.opt.max_level + 1):
            self.stats["level"] = n
            r = self._reach_lt(self.init, self.bad, n)
            if r.reachable:
                return self._unsafe(r)
            cert = self._fixed_point(n + 1) or self._exact_fixed_point(n)
            if cert is not None:
                return self._safe(cert)
            r = self._reach_eq(self.init, self.bad, n)
            if r.reachable:
                return self._unsafe(r)
            cert = self._exact_fixed_point(n)
            if cert is not None:
                return self._safe(cert)
        return TPAResult(TPAStatus.UNKNOWN, f"no fixed point up to level {self.opt.max_level}")

    def _grow_seeds(self) -> None:
        super()._grow_seeds()                  # the L levels and the closure invariants
        for n in range(1, len(self.exact)):
            self._add_exact(n, self.seeds or [])

    # ------------------------------------------------------------------------------------------ levels
    def _ensure_exact(self, n: int) -> None:
        while len(self.exact) <= n:
            self.exact.append(list(self.seeds or []))
            self._exact_ids.append({c.get_id() for c in self.exact[-1]})

    def _e(self, n: int, a: list[z3.ExprRef], b: list[z3.ExprRef], tag: str) -> z3.BoolRef:
        """E[n](a, b); E[0] is Tr with the aux copy `tag`."""
        if n == 0:
            return self.voc.trans(a, b, tag)
        self._ensure_exact(n)
        return self.voc.rel_to(self._conj(self.exact[n]), a, b)

    def _l(self, n: int, a: list[z3.ExprRef], b: list[z3.ExprRef]) -> z3.BoolRef:
        """L[n](a, b); L[0] is Id."""
        if n == 0:
            return self.voc.identity(a, b)
        self._ensure_level(n)
        return self.voc.rel_to(self._conj(self.levels[n]), a, b)

    def _lt_parts(self, n: int) -> list[z3.BoolRef]:
        """`L[n](x,x') ∧ (sel ⇒ x' = x'') ∧ (¬sel ⇒ E[n](x',x''))`, one part per lemma."""
        voc = self.voc
        sel = self._sel
        ls = [voc.identity(voc.x, voc.x1)] if n == 0 else [voc.rel_to(c, voc.x, voc.x1) for c in self.levels[n]]
        es = [voc.trans(voc.x1, voc.x2, "e0b")] if n == 0 else \
            [voc.rel_to(c, voc.x1, voc.x2) for c in self.exact[n]]
        return ls + [z3.Implies(sel, voc.identity(voc.x1, voc.x2))] + [z3.Implies(z3.Not(sel), e) for e in es]

    def _eq_parts(self, n: int) -> list[z3.BoolRef]:
        voc = self.voc
        if n == 0:
            return [voc.trans(voc.x, voc.x1, "e0a"), voc.trans(voc.x1, voc.x2, "e0b")]
        return [voc.rel_to(c, a, b) for c in self.exact[n] for a, b in ((voc.x, voc.x1), (voc.x1, voc.x2))]

    def _level_solver(self, table: dict[int, LevelSolver], n: int, parts) -> LevelSolver:
        s = table.get(n)
        if s is None:
            self._ensure_level(n)
            self._ensure_exact(n)
            s = table[n] = LevelSolver(self.ctx, parts(n), self.opt.incremental, self.opt.rebuild_after)
        return s

    def _add_to_level(self, n: int, cs: list[z3.BoolRef]) -> int:
        """A new L[n] lemma: L[n] and the LT solver of level n."""
        self._ensure_level(n)
        new = [c for c in cs if c.get_id() not in self._level_ids[n]]
        for c in new:
            self._level_ids[n].add(c.get_id())
            self.levels[n].append(c)
        if new and n in self._lt:
            self._lt[n].strengthen([self.voc.rel_to(c, self.voc.x, self.voc.x1) for c in new])
        return len(new)

    def _add_exact(self, n: int, cs: list[z3.BoolRef]) -> int:
        """A new E[n] lemma: E[n], the EQ solver (both copies) and the LT solver (the ¬sel branch) of level n."""
        self._ensure_exact(n)
        new = [c for c in cs if c.get_id() not in self._exact_ids[n]]
        for c in new:
            self._exact_ids[n].add(c.get_id())
            self.exact[n].append(c)
        voc = self.voc
        if new and n in self._eq:
            self._eq[n].strengthen([voc.rel_to(c, a, b) for c in new for a, b in ((voc.x, voc.x1), (voc.x1, voc.x2))])
        if new and n in self._lt:
            self._lt[n].strengthen([z3.Implies(z3.Not(self._sel), voc.rel_to(c, voc.x1, voc.x2)) for c in new])
        return len(new)

    def _own(self, n: int, parts: list[z3.BoolRef]) -> list[z3.BoolRef]:
        """The parts of a level-n query that are not seed lemmas (seeds go to the B side, `_reduced_problem`)."""
        if n == 0 or not self.seeds:
            return parts
        if self._seed_forms[0] != len(self.seeds):          # seeds only grow
            voc = self.voc
            forms = [voc.rel_to(c, a, b) for c in self.seeds for a, b in ((voc.x, voc.x1), (voc.x1, voc.x2))]
            forms += [z3.Implies(z3.Not(self._sel), voc.rel_to(c, voc.x1, voc.x2)) for c in self.seeds]
            self._seed_forms = (len(self.seeds), {f.get_id() for f in forms}, forms)
        return [p for p in parts if p.get_id() not in self._seed_forms[1]]

    def _learn_from(self, kind: str, n: int, S: z3.BoolRef, T2: z3.BoolRef) -> None:
        """After an unsat level-n query: an interpolant over (x, x'') becomes a lemma of level n+1."""
        voc = self.voc
        parts = self._lt_parts(n) if kind == "lt" else self._eq_parts(n)
        A, B = self._reduced_problem(self._own(n, parts), parts, S, T2)
        I = self._interpolate(A, B, voc.x + voc.x2)
        lemma = z3.substitute(I, *zip(voc.x2, voc.x1)) if voc.x else I
        cs = self._lemma_parts(lemma)
        self.stats["lemmas"] += self._add_to_level(n + 1, cs) if kind == "lt" else self._add_exact(n + 1, cs)

    # ------------------------------------------------------------------------------------------ Reach
    def _reach_lt(self, S: z3.BoolRef, T: z3.BoolRef, n: int) -> _Reach:
        """Is T reachable from S in fewer than 2^{n+1} steps?"""
        return self._reach_split("lt", S, T, n)

    def _reach_eq(self, S: z3.BoolRef, T: z3.BoolRef, n: int) -> _Reach:
        """Is T reachable from S in exactly 2^{n+1} steps? (An exact-power confirmation may return a path of
        another length; every REACHABLE carries a real path with its length, which is all callers need.)"""
        return self._reach_split("eq", S, T, n)

    def _reach_split(self, kind: str, S: z3.BoolRef, T: z3.BoolRef, n: int) -> _Reach:
        """The query loop of both kinds: UNSAT teaches level n+1 of the kind's hierarchy, SAT is confirmed by
        `_expand` or, when that strengthened a level instead, asked again."""
        cache = self._cache if kind == "lt" else self._eq_cache
        key = (S.get_id(), T.get_id(), n)
        hit = cache.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return hit[2]
        T2 = self.voc.cur_to(T, self.voc.x2)
        solver = self._level_solver(self._lt, n, self._lt_parts) if kind == "lt" else \
            self._level_solver(self._eq, n, self._eq_parts)
        res = None
        while res is None:
            if self.deadline.expired():
                raise OutOfTime()
            self.stats["queries"] += 1
            m = solver.query([S, T2], self.deadline)
            if m is None:
                self._learn_from(kind, n, S, T2)
                res = _Reach(False)
            else:
                res = self._expand(kind, S, T, T2, n, m)
        cache[key] = (S, T, res)      # keep S, T alive: z3 ids are reused after garbage collection
        return res

    def _expand(self, kind: str, S: z3.BoolRef, T: z3.BoolRef, T2: z3.BoolRef, n: int, m: z3.ModelRef
                ) -> _Reach | None:
        """A real path for the model `m` of a level-n query, or None when a lower level learned that the
        model's midpoint does not connect (the level-n solver then excludes it)."""
        voc = self.voc
        short = kind == "lt" and z3.is_true(m.eval(self._sel, model_completion=True))   # L[n](x, x'') alone
        if n == 0:
            return self._base(S, T2, m, 2 if kind == "eq" else 0 if short else 1)
        res = self._confirm_by_powers(S, T, n if kind == "eq" else n - 1)      # lengths < 2^{n+2} / 2^{n+1}
        if res is not None:
            return res
        if short:
            res = self._reach_lt(S, T, n - 1)
            return res if res.reachable else None
        first = self._l(n, voc.x, voc.x1) if kind == "lt" else self._e(n, voc.x, voc.x1, "")
        mid = self._mid(z3.And(S, first), z3.And(T2, self._e(n, voc.x1, voc.x2, "")), m)
        r1 = self._reach_split(kind, S, mid, n - 1)
        if not r1.reachable:
            return None
        r2 = self._reach_eq(is_state(voc.x, r1.dst, self.ctx), T, n - 1)
        if not r2.reachable:
            return None                                     # E[n] learned dst ↛ T
        return self._chain(r1, r2)

    @staticmethod
    def _chain(r1: _Reach, r2: _Reach) -> _Reach:
        wp = r1.waypoints + tuple((r1.steps + i, st) for i, st in r2.waypoints[1:])
        return _Reach(True, r1.steps + r2.steps, r2.target, wp)

    def _mid(self, left: z3.BoolRef, right: z3.BoolRef, m: z3.ModelRef) -> z3.BoolRef:
        """The MBP midpoint over x' of `left(x, x')` and `right(x', x'')`, renamed to x."""
        voc = self.voc
        mid = z3.simplify(z3.And(self._project(left, m, voc.x, voc.x1), self._project(right, m, voc.x2, voc.x1)))
        return z3.substitute(mid, *zip(voc.x1, voc.x)) if voc.x else mid

    def _base(self, S: z3.BoolRef, T2: z3.BoolRef, m: z3.ModelRef, steps: int) -> _Reach:
        """Level 0: exactly `steps` ∈ {0, 1, 2} real steps from S to T, as the model took them."""
        voc = self.voc
        self.stats["base"] += 1
        if steps == 0:
            parts = [voc.identity(voc.x, voc.x1), voc.identity(voc.x1, voc.x2)]
        elif steps == 1:
            parts = [voc.identity(voc.x, voc.x1), voc.trans(voc.x1, voc.x2, "e0b")]
        else:
            parts = [voc.trans(voc.x, voc.x1, "e0a"), voc.trans(voc.x1, voc.x2, "e0b")]
        fml = z3.And(S, *parts, T2)
        elim = voc.x + voc.x1 + voc.aux_copy("e0a") + voc.aux_copy("e0b")
        target = self._project(fml, m, elim, voc.x2, direct=self._direct_mbp_of_tr or steps == 0)
        target = z3.substitute(target, *zip(voc.x2, voc.x)) if voc.x else target
        src, dst = state_of(m, voc.x), state_of(m, voc.x2)
        return _Reach(True, steps, target, ((0, src), (steps, dst)))

    # ------------------------------------------------------------------------------------------ fixed point
    def _exact_fixed_point(self, upto: int) -> SafeCertificate | None:
        t0 = time.monotonic()
        try:
            for i in range(1, upto + 1):
                if i >= len(self.exact) or i >= len(self.levels) or not self.exact[i]:
                    continue
                sig = (len(self.exact[i]), len(self.levels[i]))
                if self._efp_seen.get(i) == sig:
                    continue
                self.stats["efp"] += 1
                capped = self.stats["fixpoint_capped"]
                cert = self._undecided_is_none(self._exact_closure, i)
                if self.stats["fixpoint_capped"] == capped:     # capped checks are tried again later
                    self._efp_seen[i] = sig
                if cert is not None:
                    return cert
            return None
        finally:
            self.times["fixpoint"] += time.monotonic() - t0

    def _exact_closure(self, i: int) -> SafeCertificate | None:
        """E[i] (or its largest transitive subset) transitive and, composed with L[i], safe: the split certificate."""
        voc = self.voc
        x, x1, x2 = voc.x, voc.x1, voc.x2
        w = self._w
        lt = self._conj(self.levels[i])
        init, bad = self.init, self.bad

        def safe(e: z3.BoolRef, side: str) -> bool:
            comp = [voc.rel_to(lt, x, x1), voc.rel_to(e, x1, x2)] if side == "split-right" else \
                [voc.rel_to(e, x, x1), voc.rel_to(lt, x1, x2)]
            return self._unsat(init, voc.rel_to(lt, x, x1), voc.cur_to(bad, x1)) and \
                self._unsat(init, *comp, voc.cur_to(bad, x2))

        def transitive(e: z3.BoolRef, *restriction: z3.BoolRef) -> bool:
            return self._unsat(e, voc.rel_to(e, x1, x2), z3.Not(voc.rel_to(e, x, x2)), *restriction)

        def cert(e: z3.BoolRef, side: str, restricted: bool) -> SafeCertificate:
            chain = tuple((self._conj(self.exact[k]), self._conj(self.levels[k])) for k in range(1, i))
            return SafeCertificate(side, e, i, restricted, chain=chain + ((e, lt),))

        e = self._conj(self.exact[i])
        if transitive(e):
            return cert(e, "split-right", False) if safe(e, "split-right") else None
        kept = self._transitive_subset(self.exact[i])
        if kept is not None and len(kept) < len(self.exact[i]):
            h = all_of(kept, self.ctx)
            if safe(h, "split-right"):
                return cert(h, "split-right", False)
        if transitive(e, voc.cur_to(init, w), voc.rel_to(lt, w, x)) and safe(e, "split-right"):
            return cert(e, "split-right", True)
        if transitive(e, voc.rel_to(lt, x2, w), voc.cur_to(bad, w)) and safe(e, "split-left"):
            return cert(e, "split-left", True)
        return None

    def _transitive_subset(self, cs: list[z3.BoolRef]) -> list[z3.BoolRef] | None:
        """The largest subset H of the conjuncts `cs` with `H ∘ H ⊆ H` (Houdini); None past the candidate cap."""
        if len(cs) > self.opt.houdini_cap:
            return None
        voc = self.voc
        pre = [z3.And(c, voc.rel_to(c, voc.x1, voc.x2)) for c in cs]
        post = [voc.rel_to(c, voc.x, voc.x2) for c in cs]
        alive = houdini([], pre, post, self.deadline, new_solver=lambda: plain_solver(self.ctx))
        return [cs[k] for k in alive]

    # ------------------------------------------------------------------------------------------ answers
    def safety_explanation(self, cert: SafeCertificate) -> z3.BoolRef:
        """As `TPA.safety_explanation`; a split certificate covers every run towards Bad unless it is restricted
        to Init-sources, through `L ∨ E∘L` (unrestricted E is transitive from every state)."""
        if cert.kind not in ("split-right", "split-left"):
            return super().safety_explanation(cert)
        if cert.kind == "split-right" and cert.restricted:
            return self.init
        voc = self.voc
        e, lt = cert.chain[-1]
        return self._explanation_from(z3.Or(
            z3.And(voc.rel_to(lt, voc.x, voc.x2), voc.cur_to(self.bad, voc.x2)),
            z3.And(voc.rel_to(e, voc.x, voc.x1), voc.rel_to(lt, voc.x1, voc.x2), voc.cur_to(self.bad, voc.x2))))


def make_tpa(ts: TransitionSystem, options: TPAOptions | None = None) -> TPA:
    """The TPA instance the options ask for (`variant`): basic or split."""
    if options is not None and options.variant == "split":
        return SplitTPA(ts, options)
    return TPA(ts, options)

