"""Integer `div` and `mod` by constants replaced by auxiliary quotient and remainder variables.

`t div c` and `t mod c` (c a non-zero numeral) become fresh q and r with `t = c·q + r ∧ 0 ≤ r < |c|`: SMT-LIB's
definition of both, so the result is equivalent to the input with q and r existentially quantified. A
transition relation rewritten this way is the same relation (q and r are auxiliaries of one step), and its
atoms are linear: Farkas interpolation sees linear constraints instead of `mod` terms, which it can only
project exactly (learned lemmas then carry nested `mod` and `ite` terms, and the closure checks over them ran
for seconds where the search needed less than one; fm24's const_div files). OpenSMT, under Golem, treats
division by constants the same way.
"""
from __future__ import annotations

import z3

from looprover.smt.terms import subterms

_DIVMOD = (z3.Z3_OP_IDIV, z3.Z3_OP_MOD)


def _numeral(t: z3.ExprRef) -> int | None:
    return t.as_long() if z3.is_int_value(t) and t.as_long() != 0 else None


def purify_divmod(f: z3.BoolRef, prefix: str = "dm") -> tuple[z3.BoolRef, list[z3.ExprRef]]:
    """(f with every `div`/`mod` by a non-zero numeral replaced, the fresh variables) -- `f` itself and [] when
    there is nothing to replace or f has quantifiers (a bound variable cannot be named by a free one)."""
    ctx = f.ctx
    found: dict[tuple[int, int], tuple[z3.ExprRef, z3.ExprRef]] = {}     # (id of t, c) -> (q, r)
    defs: list[z3.BoolRef] = []
    subst: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    for t in subterms(f):
        if z3.is_quantifier(t):
            return f, []
        if z3.is_app(t) and t.decl().kind() in _DIVMOD and z3.is_int(t):
            a, b = t.arg(0), t.arg(1)
            c = _numeral(b)
            if c is not None:
                key = (a.get_id(), c)
                if key not in found:
                    k = len(found)
                    q, r = z3.Int(f"{prefix}!q{k}", ctx), z3.Int(f"{prefix}!r{k}", ctx)
                    found[key] = (q, r)
                    defs += [a == c * q + r, r >= 0, r < abs(c)]
                q, r = found[key]
                subst.append((t, q if t.decl().kind() == z3.Z3_OP_IDIV else r))
    if not subst:
        return f, []
    # innermost first is not needed: substitute replaces whole subterms, and a div inside the dividend of
    # another is replaced inside the definition below by the same simultaneous substitution
    # one call for the formula and all definitions: a call per definition converts the whole substitution list
    # each time (quadratic; 1 s per 100-step unrolling with a `mod` per step)
    fresh = [v for qr in found.values() for v in qr]
    return z3.substitute(z3.And(f, *defs), *subst), fresh
