"""Affine equalities over any number of variables: the affine hull of the sampled states (`c·x == d` for every
sampled x), found by Gaussian elimination over the rationals.

Why: a loop that moves several variables in step keeps a sum fixed whose value is set by a third variable
(`x = n; y = 0; while (x > 0) { x--; y++; }` keeps `x + y == n`); the pair domains cannot state it, and it is
what a proof of `y == n` after the loop needs. The hull of the samples contains every affine invariant, so a
basis of the equalities the samples satisfy is a short list of candidates; with too few samples some are
accidental and Houdini drops them. Over variables of one unsigned type the same equality is also offered modulo
2^bits, in that type (`_wrapped`): C's unsigned arithmetic keeps that one where the exact one overflows. The
exact atom's arithmetic is exact: `long long` (`I64`) over variables of at most
32 bits (at most `MAX_TERMS` terms of |c| ≤ `MAX_COEFFICIENT` cannot leave it), which bit-vector encodings keep in
bit-vectors; mathematical integers for wider ones, which only the integer encoding takes without mixing theories.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

from looprover.domains.base import Domain, Site
from looprover.linalg import nullspace
from looprover.program.expr import I64, MATH_INT, Expr, IntType, Var, binary, cast, cmp, const

MAX_TERMS = 10        # variables in one equality (`sum of the counters == l` in a loop that counts cases)
MAX_COEFFICIENT = 64


class AffineHull(Domain):
    name = "affine"

    def site_atoms(self, site: Site, ints: list[Var]) -> list[Expr]:
        """A basis of the affine equalities of the sampled states over the variables that take more than one
        value there (one that always has the same value is left to the interval domains), each with at least
        three variables (two are the pair domains' `linear` and `equalities`)."""
        if len(site.samples) < 3:
            return []
        vs = [v for v in ints if isinstance(v.type, IntType) and len({s.get(v.name) for s in site.samples}) > 1
              and all(isinstance(s.get(v.name), int) for s in site.samples)]
        if len(vs) < 3:
            return []
        rows = [[Fraction(s[v.name]) for v in vs] + [Fraction(1)] for s in site.samples]
        out = []
        for vec in nullspace(rows, len(vs) + 1):
            coeffs, scale = _integral(vec[:-1])
            d = -vec[-1] * scale
            terms = [(c, v) for c, v in zip(coeffs, vs) if c]
            if not 3 <= len(terms) <= MAX_TERMS or max(abs(c) for c, _ in terms) > MAX_COEFFICIENT \
                    or d.denominator != 1:
                continue
            if all(c < 0 for c, _ in terms):
                terms, d = [(-c, v) for c, v in terms], -d
            t = _exact_type([v for _, v in terms], site.bitvector)
            if t is not None and t.contains(int(d)):
                out.append(cmp("==", _sum(terms, t), const(int(d), t)))
            wrapped = _wrapped(terms, int(d))
            if wrapped is not None:
                out.append(wrapped)
        return out


def _integral(vec: list[Fraction]) -> tuple[list[int], Fraction]:
    """`vec` scaled to coprime integers, with the scale factor."""
    den = lcm(*(x.denominator for x in vec)) if vec else 1
    ints = [int(x * den) for x in vec]
    g = gcd(*ints) or 1
    return [x // g for x in ints], Fraction(den, g)


def _wrapped(terms: list[tuple[int, Var]], d: int) -> Expr | None:
    """For variables of one unsigned type: the positive terms == the negative ones + d, computed in that type
    (modulo 2^bits, as C computes it). What holds of the exact sums holds modulo, and it stays inductive where an
    increment wraps around: `x--; z++` keeps `x + z == 2u * n` in C even when 2n does not fit."""
    t = terms[0][1].type
    if t.signed or t.bits is None or any(v.type != t for _, v in terms):
        return None
    pos = [(c, v) for c, v in terms if c > 0]
    neg = [(-c, v) for c, v in terms if c < 0]
    if not pos:
        return None
    rhs: Expr = const(t.wrap(d), t)
    if neg:
        rhs = binary("+", _sum(neg, t), rhs) if d else _sum(neg, t)
    return cmp("==", _sum(pos, t), rhs)


def _exact_type(vs: list[Var], bitvector: bool) -> IntType | None:
    """The type an affine sum over `vs` is computed in exactly (module docstring), or None."""
    if all(v.type.bits is not None and v.type.bits <= 32 for v in vs):
        return I64
    return None if bitvector else MATH_INT


def _sum(terms: list[tuple[int, Var]], t: IntType) -> Expr:
    """c1·v1 + c2·v2 - ... computed in `t`, positive terms first (`x + y - n`, not `-n + x + y`)."""
    terms = sorted(terms, key=lambda ct: ct[0] < 0)

    def term(c: int, v: Var) -> Expr:
        x = cast(t, v)
        return x if abs(c) == 1 else binary("*", const(abs(c), t), x)
    e = term(*terms[0])
    for c, v in terms[1:]:
        e = binary("+" if c > 0 else "-", e, term(c, v))
    return e
