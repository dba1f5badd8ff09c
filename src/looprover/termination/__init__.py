"""Termination analysis: per-loop termination arguments and non-termination witnesses.

relation.py   one natural loop's iteration relation T_L(x, x') (head to head), nested loops summarised by
              Houdini-checked relations between the state at L's head and at the inner cutpoints, the program's
              invariants as context; T2 = pairs of T_L steps that are followed by another one
ranking.py    termination arguments for one loop and their check: strict-order transition invariants from
              the loop's guards, linear ranking functions (linrank CEGIS), lexicographic ones (lexlinrank), and
              disjunctive transition invariants
proof.py      `TerminationProof`: the invariants and one checked argument per loop, re-checked from the
              program by fresh solvers (the portfolio's check of a TRUE)
lasso.py      the search for a non-termination witness (stem + cycle + recurrent set), which
              `evidence/nontermination.py` checks independently
"""
