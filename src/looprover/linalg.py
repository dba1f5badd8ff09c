"""Exact linear algebra over the rationals: reduced row echelon form, the solutions and null space built on it.

Why exact: its users turn the results into program facts (a closed form fitted to sampled runs, affine
equalities between sampled states), and a floating-point coefficient would be a wrong fact, not a rounding error.
"""
from __future__ import annotations

from fractions import Fraction


def rref(rows: list[list[Fraction]], columns: int) -> tuple[list[list[Fraction]], list[int]]:
    """The reduced row echelon form of `rows` (pivots chosen among the first `columns` columns, left to right)
    and the pivot columns, in order."""
    a = [list(r) for r in rows]
    pivots: list[int] = []
    r = 0
    for col in range(columns):
        if r == len(a):
            break
        p = next((i for i in range(r, len(a)) if a[i][col] != 0), None)
        if p is None:
            continue
        a[r], a[p] = a[p], a[r]
        piv = a[r][col]
        a[r] = [v / piv for v in a[r]]
        for i in range(len(a)):
            if i != r and a[i][col] != 0:
                f = a[i][col]
                a[i] = [vi - f * vr for vi, vr in zip(a[i], a[r])]
        pivots.append(col)
        r += 1
    return a, pivots


def solve_exact(rows: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """A solution of rows * c = rhs (free unknowns 0), or None if there is none."""
    m = len(rows[0]) if rows else 0
    a, pivots = rref([list(r) + [b] for r, b in zip(rows, rhs)], m)
    if any(all(v == 0 for v in row[:m]) and row[m] != 0 for row in a[len(pivots):]):
        return None
    sol = [Fraction(0)] * m
    for i, col in enumerate(pivots):
        sol[col] = a[i][m]
    return sol


def nullspace(rows: list[list[Fraction]], n: int) -> list[list[Fraction]]:
    """A basis of {a : r·a = 0 for every row r} (rows of length n), one vector per free column."""
    m, pivots = rref(rows, n)
    basis = []
    for free in (c for c in range(n) if c not in pivots):
        vec = [Fraction(0)] * n
        vec[free] = Fraction(1)
        for i, pc in enumerate(pivots):
            vec[pc] = -m[i][free]
        basis.append(vec)
    return basis
