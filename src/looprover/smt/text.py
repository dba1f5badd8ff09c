"""Formulas as SMT-LIB text, so that proofs can cross a process boundary and be checked in another one.

z3 terms cannot be pickled. A formula written out with the declarations of its constants and read back in another
process (or context) denotes the same formula over the constants of the same names and sorts -- which is what
a rebuilt system has, since systems name their variables deterministically from the program.
"""
from __future__ import annotations

import z3


def to_text(f: z3.BoolRef) -> str:
    """`f` as SMT-LIB2 declarations and one assertion. z3's benchmark printer writes it ten to twenty times
    faster than its pretty-printer (an interval proof of inlined x509-parser: 1,800 invariants of about 900
    bounds each, 115 s with the pretty-printer), but it does not always write what its parser reads back as the
    same term (a quantifier's): its text is used where it reads back as `f`, the pretty-printer's elsewhere."""
    fast = z3.Z3_benchmark_to_smtlib_string(f.ctx_ref(), "", "", "unknown", "", 0, None, f.as_ast())
    try:
        if from_text(fast, f.ctx).eq(f):
            return fast
    except z3.Z3Exception:
        pass
    s = z3.Solver(ctx=f.ctx)
    s.add(f)
    return s.sexpr()


def from_text(text: str, ctx: z3.Context | None = None) -> z3.BoolRef:
    """The formula `to_text` wrote (the conjunction of its assertions). Raises z3.Z3Exception on bad text."""
    fs = list(z3.parse_smt2_string(text, ctx=ctx))
    if not fs:
        return z3.BoolVal(True, ctx)
    return fs[0] if len(fs) == 1 else z3.And(fs)
