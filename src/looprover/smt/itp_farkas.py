"""Farkas interpolation: for each conflicting pair of an A-cube and a B-cube, non-negative multipliers of a minimal
LRA core (by Gaussian elimination when z3's core is already irreducible, else an exact rational LP in z3) give an
interpolant; integer constraints are tightened, A-side equations
weakened to `≤`; a conflict without a rational certificate (parity) gets the exact projection of the A-cube,
weakened by an unsat core against B. The method `smt/interpolate.py` tries first (its docstring has the
measurements); this module is the linear-arithmetic machinery it needs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator
from fractions import Fraction

import z3

from looprover.linalg import nullspace
from looprover.smt.itp_problem import MAX_ROUNDS, MethodFailed, Problem, op_kind, weaken
from looprover.smt.terms import all_of, any_of
from looprover.smt.mbp import IteCache, ModelValues, QEError, implicant, qe


_ARITH_REL = (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT)


class _NonLinear(Exception):
    pass


@dataclass
class _Lin:
    """Σ coeffs[v]·v  rel  const, rel ∈ {'<=', '<', '='}; `lit` is the literal it came from."""
    coeffs: dict[int, Fraction]
    rel: str
    const: Fraction
    lit: z3.BoolRef

    @cached_property
    def content(self) -> tuple:
        """The constraint as a hashable key (computed once: a literal's `_Lin` is cached for the whole run)."""
        return tuple(sorted(self.coeffs.items())), self.rel, self.const


def _linear(t: z3.ExprRef, syms: dict[int, z3.ExprRef], memo: dict) -> tuple[dict[int, Fraction], Fraction]:
    """Σ coeffs·vars + const for a linear term; raises _NonLinear. `memo` maps id → (term, result) and keeps the
    term alive, because z3 reuses the ids of freed terms."""
    tid = t.get_id()
    hit = memo.get(tid)
    if hit is not None:
        return hit[1]
    if z3.is_int_value(t):
        res: tuple[dict[int, Fraction], Fraction] = ({}, Fraction(t.as_long()))
    elif z3.is_rational_value(t):
        res = ({}, Fraction(t.numerator_as_long(), t.denominator_as_long()))
    elif z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        syms[tid] = t
        res = ({tid: Fraction(1)}, Fraction(0))
    else:
        k = op_kind(t)
        if k in (z3.Z3_OP_ADD, z3.Z3_OP_SUB):
            parts = [_linear(c, syms, memo) for c in t.children()]
            co: dict[int, Fraction] = dict(parts[0][0])
            const = parts[0][1]
            sign = 1 if k == z3.Z3_OP_ADD else -1
            for pc, pk in parts[1:]:
                for v, a in pc.items():
                    co[v] = co.get(v, Fraction(0)) + sign * a
                const += sign * pk
            res = ({v: a for v, a in co.items() if a != 0}, const)
        elif k == z3.Z3_OP_UMINUS:
            pc, pk = _linear(t.arg(0), syms, memo)
            res = ({v: -a for v, a in pc.items()}, -pk)
        elif k == z3.Z3_OP_MUL:
            parts = [_linear(c, syms, memo) for c in t.children()]
            scale, lin = Fraction(1), None
            for pc, pk in parts:
                if pc:
                    if lin is not None:
                        raise _NonLinear
                    lin = (pc, pk)
                else:
                    scale *= pk
            if lin is None:
                res = ({}, scale)
            else:
                res = ({v: scale * a for v, a in lin[0].items() if scale * a != 0}, scale * lin[1])
        elif k == z3.Z3_OP_DIV:
            (nc, nk), (dc, dk) = (_linear(c, syms, memo) for c in t.children())
            if dc or dk == 0:
                raise _NonLinear
            res = ({v: a / dk for v, a in nc.items()}, nk / dk)
        elif k == z3.Z3_OP_TO_REAL:
            res = _linear(t.arg(0), syms, memo)
        else:
            raise _NonLinear
    memo[tid] = (t, res)
    return res


def _is_int_lin(coeffs: dict[int, Fraction], syms: dict[int, z3.ExprRef]) -> bool:
    return all(syms[v].is_int() for v in coeffs)


def _tighten(coeffs: dict[int, Fraction], rel: str, const: Fraction) -> tuple[dict[int, Fraction], str, Fraction]:
    """Integer normal form of an all-integer constraint: integer coprime coefficients, `<` turned into `<=`,
    constant rounded (an equation with no integer solution becomes `0 <= -1`). Equivalent over the integers, and
    stronger over the rationals, which is what lets Farkas refute more integer conflicts (e.g. `0 < x < 1`).
    """
    if not coeffs:
        return coeffs, rel, const
    lcm = 1
    for a in coeffs.values():
        lcm = lcm * a.denominator // math.gcd(lcm, a.denominator)
    ints = {v: int(a * lcm) for v, a in coeffs.items()}
    c = const * lcm
    g = 0
    for a in ints.values():
        g = math.gcd(g, abs(a))
    if rel == "=":
        if c.denominator != 1 or int(c) % g != 0:
            return {}, "<=", Fraction(-1)
        return {v: Fraction(a // g) for v, a in ints.items()}, "=", Fraction(int(c) // g)
    bound = math.ceil(c) - 1 if rel == "<" else math.floor(c)
    return {v: Fraction(a // g) for v, a in ints.items()}, "<=", Fraction(bound // g)


def _scale(coeffs: dict[int, Fraction], const: Fraction) -> tuple[dict[int, Fraction], Fraction]:
    """Multiply by the positive factor that makes the coefficients coprime integers (readability only)."""
    lcm = 1
    for a in coeffs.values():
        lcm = lcm * a.denominator // math.gcd(lcm, a.denominator)
    g = 0
    for a in coeffs.values():
        g = math.gcd(g, abs(int(a * lcm)))
    f = Fraction(lcm, g)
    return {v: a * f for v, a in coeffs.items()}, const * f


def _to_lin(lit: z3.BoolRef, val: ModelValues, syms: dict[int, z3.ExprRef],
            memo: dict) -> _Lin | None:
    """The literal as a linear constraint, None if it is not an arithmetic (in)equation; raises _NonLinear."""
    pol = True
    atom = lit
    if op_kind(atom) == z3.Z3_OP_NOT:
        pol, atom = False, atom.arg(0)
    k = op_kind(atom)
    if k not in _ARITH_REL and not (k == z3.Z3_OP_EQ and z3.is_arith(atom.arg(0))):
        return None
    (lc, lk), (rc, rk) = _linear(atom.arg(0), syms, memo), _linear(atom.arg(1), syms, memo)
    co = dict(lc)
    for v, a in rc.items():
        co[v] = co.get(v, Fraction(0)) - a
    co = {v: a for v, a in co.items() if a != 0}
    k0 = lk - rk                      # the atom is  Σ co·x + k0  ⋈  0
    neg = {v: -a for v, a in co.items()}
    if k == z3.Z3_OP_EQ:
        if pol:
            rel, coeffs, const = "=", co, -k0
        elif not val(atom.arg(0) < atom.arg(1)):     # the model picks the side of the disequality
            rel, coeffs, const = "<", neg, k0
        else:
            rel, coeffs, const = "<", co, -k0
    else:
        # normalise to  e ≤ 0 / e < 0 with e = ±(Σ co·x + k0)
        le, lt, ge, gt = z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT
        if not pol:
            k = {le: gt, lt: ge, ge: lt, gt: le}[k]
        if k in (le, lt):
            coeffs, const = co, -k0
        else:
            coeffs, const = neg, k0
        rel = "<=" if k in (le, ge) else "<"
    if _is_int_lin(coeffs, syms):
        coeffs, rel, const = _tighten(coeffs, rel, const)
    return _Lin(coeffs, rel, const, lit)


def _iis_multipliers(core: list[_Lin]) -> list[Fraction] | None:
    """The Farkas multipliers of `core` when the core is an irreducible infeasible system and they show it, else
    None (the caller then minimises and solves an LP as before).

    Why: the multipliers λ of a certificate solve Σ λ_i·a_i = 0. When that system has a one-dimensional solution
    space spanned by a vector with no zero entry that is a valid certificate (the inequalities' entries of one
    sign, the constants summing below zero), every infeasible subset would need a solution with a zero entry, so
    the core is already minimal and λ is its certificate, unique up to a positive factor (which the weighted sum
    normalises away). Gaussian elimination over the rationals on the core's few constraints replaces the
    deletion round (one SMT check per constraint) and the LP (another) that give the same answer."""
    k = len(core)
    if k == 0:
        return None
    variables = sorted({v for c in core for v in c.coeffs})
    basis = nullspace([[c.coeffs.get(v, Fraction(0)) for c in core] for v in variables], k)
    if len(basis) != 1:
        return None
    lam = basis[0]
    if any(w == 0 for w in lam):
        return None
    signs = {w > 0 for w, c in zip(lam, core) if c.rel != "="}
    if len(signs) > 1:
        return None
    if signs == {False}:
        lam = [-w for w in lam]
    total = sum((w * c.const for w, c in zip(lam, core)), Fraction(0))
    strict = any(c.rel == "<" for c in core)
    if total < 0 or (total == 0 and strict):
        return lam
    return None


@dataclass
class _Cube:
    lits: list[z3.BoolRef]
    lin: list[_Lin]
    props: dict[tuple[int, bool], z3.BoolRef]     # non-arithmetic literals by (atom id, polarity)
    opaque: list[z3.BoolRef]                      # arithmetic literals Farkas cannot use (mod, div, products)


_OPAQUE = object()


def _cube(lits: list[z3.BoolRef], m: z3.ModelRef, syms: dict[int, z3.ExprRef], memo: dict) -> _Cube:
    """Classify a cube's literals. Conversions of literals that do not depend on the model (all but
    disequalities) are cached in `memo` under ('lit', id), next to the term cache of `_linear`."""
    val = ModelValues(m)
    cube = _Cube(lits, [], {}, [])
    for lit in lits:
        key = ("lit", lit.get_id())
        hit = memo.get(key)
        if hit is not None:
            lin = hit[1]
        else:
            try:
                lin = _to_lin(lit, val, syms, memo)
            except (_NonLinear, RecursionError):
                lin = _OPAQUE
            diseq = op_kind(lit) == z3.Z3_OP_NOT and op_kind(lit.arg(0)) == z3.Z3_OP_EQ
            if not diseq:
                memo[key] = (lit, lin)         # the literal is kept alive: z3 reuses ids of freed terms
        if lin is _OPAQUE:
            cube.opaque.append(lit)
            continue
        if lin is None:
            pol = op_kind(lit) != z3.Z3_OP_NOT
            atom = lit if pol else lit.arg(0)
            cube.props[(atom.get_id(), pol)] = lit
        elif not lin.coeffs and _const_true(lin):
            continue
        else:
            cube.lin.append(lin)
    return cube


def _const_true(c: _Lin) -> bool:
    return {"<=": 0 <= c.const, "<": 0 < c.const, "=": c.const == 0}[c.rel]


def _lin_expr(coeffs: dict[int, Fraction], rel: str, const: Fraction, syms: dict[int, z3.ExprRef],
              ctx: z3.Context) -> z3.BoolRef:
    if not coeffs:
        return z3.BoolVal({"<=": 0 <= const, "<": 0 < const, "=": const == 0}[rel], ctx)
    ordered = sorted(coeffs.items(), key=lambda kv: str(syms[kv[0]]))
    if _is_int_lin(coeffs, syms) and all(a.denominator == 1 for a in coeffs.values()) and const.denominator == 1:
        terms = [syms[v] if a == 1 else z3.IntVal(int(a), ctx) * syms[v] for v, a in ordered]
        rhs: z3.ArithRef = z3.IntVal(int(const), ctx)
    else:
        def real(v: int) -> z3.ArithRef:
            s = syms[v]
            return z3.ToReal(s) if s.is_int() else s
        terms = [real(v) if a == 1 else z3.RealVal(a, ctx) * real(v) for v, a in ordered]
        rhs = z3.RealVal(const, ctx)
    lhs = terms[0] if len(terms) == 1 else z3.Sum(terms)
    return lhs <= rhs if rel == "<=" else lhs < rhs if rel == "<" else lhs == rhs


# --------------------------------------------------------------------------------------------------------------------
# method 2: Farkas

class Farkas:
    """`decompose`: each certificate gives its A-sum split by A-local symbols plus the whole sum (`_components`),
    a stronger interpolant with more, smaller conjuncts; otherwise the whole sum alone."""

    def __init__(self, p: Problem, decompose: bool = False):
        self.p = p
        self.decompose = decompose
        self.syms: dict[int, z3.ExprRef] = {}
        self.memo: dict = {}
        self.relax: dict[int, z3.ArithRef] = {}
        self.relaxed: dict[tuple, z3.BoolRef] = {}
        self.names: dict[tuple, z3.BoolRef] = {}           # (side, constraint) -> its literal in the core solver
        self._core_solver: z3.Solver | None = None
        self.ites = IteCache()
        # one solver each for B's cubes and the subsumption checks, their per-query parts in push/pop scopes:
        # a fresh solver per A-cube (and per pair of pieces) re-internalised B (and made a solver) every time
        self._b_solver: z3.Solver | None = None
        self._scratch: z3.Solver | None = None

    def run(self) -> z3.BoolRef:
        p = self.p
        sA = p.solver(p.A)
        disj: list[z3.BoolRef] = []
        for cA in self._cubes(sA, p.A, "A"):
            K = self._cube_vs_b(cA)
            # later pieces often subsume earlier ones (`x'' ≤ 52` after `x'' ≤ 51`): keep the disjunction small
            disj = [D for D in disj if not self._implies(D, K)] + [K]
            sA.add(z3.Not(K))
        return any_of(disj, p.ctx)

    def _cubes(self, s: z3.Solver, F: z3.BoolRef, side: str) -> Iterator[_Cube]:
        """Implicant cubes of F from the models of `s` (which holds F), until `s` is unsat; the caller blocks each
        cube's region in `s` before asking for the next. MethodFailed after MAX_ROUNDS cubes."""
        for _ in range(MAX_ROUNDS):
            if self.p.check(s) == z3.unsat:
                return
            m = s.model()
            yield _cube(implicant(F, m, ites=self.ites), m, self.syms, self.memo)
        raise MethodFailed(f"too many {side}-cubes")

    def _implies(self, f: z3.BoolRef, g: z3.BoolRef) -> bool:
        if self._scratch is None:
            self._scratch = self.p.solver()
        s = self._scratch
        s.push()
        try:
            s.add(f, z3.Not(g))
            return self.p.check(s) == z3.unsat
        finally:
            s.pop()

    def _cube_vs_b(self, cA: _Cube) -> z3.BoolRef:
        """An interpolant of (∧cA, B): the conjunction of per-B-cube pieces until B is blocked."""
        p = self.p
        if self._b_solver is None:
            self._b_solver = p.solver(p.B)
        sB = self._b_solver
        sB.push()
        try:
            conj: list[z3.BoolRef] = []
            for cB in self._cubes(sB, p.B, "B"):
                piece = self._cube_vs_cube(cA, cB)
                if piece is None:
                    # no rational certificate: the exact projection of cA, weakened against all of B at once
                    conj.append(self._project_weaken(cA))
                    break
                conj.append(piece)
                sB.add(piece)
            return all_of(conj, p.ctx)
        finally:
            sB.pop()

    def _cube_vs_cube(self, cA: _Cube, cB: _Cube) -> z3.BoolRef | None:
        # a propositional conflict needs no arithmetic
        for (aid, pol), lit in cA.props.items():
            if (aid, not pol) in cB.props:
                return lit
        for c in cA.lin:
            if not c.coeffs:          # a constant-false constraint: the A-cube is contradictory by itself
                return z3.BoolVal(False, self.p.ctx)
        for c in cB.lin:
            if not c.coeffs:
                return z3.BoolVal(True, self.p.ctx)
        found = self._lra_core(cA.lin, cB.lin)
        if found is None:
            return None
        core, lam = found
        return self._certificate(core, lam)

    def _rel_term(self, c: _Lin, key: tuple) -> z3.BoolRef:
        """The constraint over rational copies of its variables (the LRA relaxation), cached by its content `key`
        (`_named`'s, shared by a constraint's A and B copies)."""
        hit = self.relaxed.get(key)
        if hit is not None:
            return hit
        ctx = self.p.ctx
        for v in c.coeffs:
            if v not in self.relax:
                self.relax[v] = z3.Real(f"farkas!{v}", ctx)
        lhs = z3.Sum([z3.RealVal(a, ctx) * self.relax[v] for v, a in c.coeffs.items()])
        rhs = z3.RealVal(c.const, ctx)
        term = lhs <= rhs if c.rel == "<=" else lhs < rhs if c.rel == "<" else lhs == rhs
        self.relaxed[key] = term
        return term

    def _named(self, side: int, c: _Lin) -> z3.BoolRef:
        """The assumption literal that switches on constraint `c` of side `side` in the core solver, made and asserted
        once per run: the cube pairs of one interpolation share most of their constraints (the level's lemmas, Tr),
        and building and asserting them afresh for every pair took three quarters of the core search."""
        content = c.content
        n = self.names.get((side, content))
        if n is None:
            if self._core_solver is None:
                self._core_solver = self.p.solver()
                self._core_solver.set("core.minimize", True)
            n = self.names[(side, content)] = z3.Bool(f"farkas!p{len(self.names)}", self.p.ctx)
            self._core_solver.add(z3.Implies(n, self._rel_term(c, content)))
        return n

    def _lra_core(self, la: list[_Lin], lb: list[_Lin]
                  ) -> tuple[list[tuple[int, _Lin]], list[Fraction] | None] | None:
        """A minimal subset of the constraints (tagged 0 = A, 1 = B) that is unsat over the rationals, with its
        Farkas multipliers when they came for free (`_iis_multipliers`), or None when the constraints are sat.

        Minimal cores give Farkas sums over few atoms, i.e. short, general interpolants.
        """
        p = self.p
        tagged = [(0, c) for c in la] + [(1, c) for c in lb]
        names = [self._named(side, c) for side, c in tagged]
        by_id: dict[int, int] = {}
        for i, n in enumerate(names):
            by_id.setdefault(n.get_id(), i)
        s = self._core_solver
        if s is None or p.check(s, *[names[i] for i in by_id.values()]) == z3.sat:
            return None

        def core_of() -> list[int]:
            return sorted(by_id[n.get_id()] for n in s.unsat_core())

        core = core_of()
        lam = _iis_multipliers([tagged[j][1] for j in core])
        if lam is not None:        # z3's core is already minimal: no deletion round, no LP
            return [tagged[j] for j in core], lam
        # deletion-based minimisation on top of z3's, on the same solver (assumptions only)
        i = 0
        while i < len(core):
            trial = core[:i] + core[i + 1:]
            if p.check(s, *[names[j] for j in trial]) == z3.unsat:
                core = [j for j in core_of() if j in set(trial)]
            else:
                i += 1
        return [tagged[j] for j in core], None

    def _certificate(self, core: list[tuple[int, _Lin]], lam: list[Fraction] | None = None) -> z3.BoolRef:
        """The A-side weighted sum (decomposed, if asked) of the core under Farkas multipliers λ: `lam` when given,
        else solved for."""
        weights = self._multipliers(core) if lam is None else lam
        parts = [(w, c) for w, (side, c) in zip(weights, core) if side == 0 and w != 0]
        groups = self._components(parts) if self.decompose else [parts]
        pieces = [self._weighted_sum(group) for group in groups]
        if len(pieces) > 1:
            pieces.append(self._weighted_sum(parts))
        return all_of(pieces, self.p.ctx)

    def _multipliers(self, core: list[tuple[int, _Lin]]) -> list[Fraction]:
        """Farkas multipliers of an LRA-unsat core, by an exact rational LP in z3."""
        p, ctx = self.p, self.p.ctx
        lam = [z3.Real(f"farkas!l{i}", ctx) for i in range(len(core))]
        s = p.solver()
        for l, (_, c) in zip(lam, core):
            if c.rel != "=":
                s.add(l >= 0)
        variables = sorted({v for _, c in core for v in c.coeffs})
        for v in variables:
            s.add(z3.Sum([z3.RealVal(c.coeffs[v], ctx) * l for l, (_, c) in zip(lam, core) if v in c.coeffs]
                         + [z3.RealVal(0, ctx)]) == 0)
        total = z3.Sum([z3.RealVal(c.const, ctx) * l for l, (_, c) in zip(lam, core)] + [z3.RealVal(0, ctx)])
        strict = [l for l, (_, c) in zip(lam, core) if c.rel == "<"]
        s.add(z3.Or(total < 0, z3.And(total <= 0, z3.Sum(strict + [z3.RealVal(0, ctx)]) > 0)))
        if p.check(s) != z3.sat:
            raise MethodFailed("farkas: no certificate for an LRA-unsat core")
        m = s.model()
        return [m.eval(l, model_completion=True).as_fraction() for l in lam]

    def _components(self, parts: list[tuple[Fraction, _Lin]]) -> list[list[tuple[Fraction, _Lin]]]:
        """The weighted A-constraints grouped by the A-local symbols they share (union-find).

        Why (decomposed Farkas interpolants, as OpenSMT's and so Golem's TPA use them): every A-local symbol occurs
        in one group only, and the whole A-sum cancels it, so each group's sum is over shared symbols alone and
        implied by the A-cube; together they imply the whole sum, which B refutes. Where the plain sum mixes
        independent facts (`x'' - x + y'' - y ≤ 4`), the groups state them one by one (`x'' - x ≤ 2`,
        `y'' - y ≤ 2`), each a lemma TPA can keep when the other does not generalise. The groups are stronger
        than the sum (a sum of two chains can be a relation like `y'' - y = 2(x'' - x)` that neither chain
        states), so the caller keeps the sum as well."""
        shared = self.p.shared_ids
        parent = list(range(len(parts)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        owner: dict[int, int] = {}
        for i, (_, c) in enumerate(parts):
            for v in c.coeffs:
                if v in shared:
                    continue
                j = owner.setdefault(v, i)
                parent[find(i)] = find(j)
        groups: dict[int, list[tuple[Fraction, _Lin]]] = {}
        for i, part in enumerate(parts):
            groups.setdefault(find(i), []).append(part)
        return list(groups.values())

    def _weighted_sum(self, parts: list[tuple[Fraction, _Lin]]) -> z3.BoolRef:
        """Σ w·c over the weighted A-constraints, as a constraint over their (shared) symbols."""
        co: dict[int, Fraction] = {}
        const = Fraction(0)
        rels = set()
        for w, c in parts:
            for v, a in c.coeffs.items():
                co[v] = co.get(v, Fraction(0)) + w * a
            const += w * c.const
            rels.add(c.rel)
        co = {v: a for v, a in co.items() if a != 0}
        # An A-sum of equations is weakened to `≤` in the direction the certificate uses: still implied by the
        # A-cube, still refuted by the B-sum (the B side supplies any strictness), and far more general (a path
        # `x'' = x + 2` yields `x'' - x ≤ 2`, which also covers the shorter paths TPA would otherwise enumerate).
        rel = "<" if "<" in rels else "<="
        if co and _is_int_lin(co, self.syms):
            co, rel, const = _tighten(co, rel, const)
        elif co:
            co, const = _scale(co, const)
        return _lin_expr(co, rel, const, self.syms, self.p.ctx)

    def _project_weaken(self, cA: _Cube) -> z3.BoolRef:
        p = self.p
        try:
            P = qe(z3.And(cA.lits) if cA.lits else z3.BoolVal(True, p.ctx), keep=p.shared, deadline=p.limit())
        except QEError as e:
            raise MethodFailed(str(e)) from e
        return weaken(p, P)
