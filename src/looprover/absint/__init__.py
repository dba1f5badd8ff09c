"""Abstract interpretation of the IR: a cheap, whole-program over-approximation of the reachable states.

Why: `check` on real code has hundreds of run-time checks, and most of them (an index bounded by its loop's
guard, a divisor that is a non-zero constant) need no engine at all. An interval analysis settles those in one
pass over the program; what it proves is handed to z3 as invariants at the cutpoints (`engines/intervals.py`),
so no TRUE rests on this package's word.

`values`: the interval lattice and each expression's abstract meaning; `fixpoint`: the iteration over the CFA.
"""
