"""Each domain on a small loop it must offer a candidate for, and on one it must not."""
from __future__ import annotations

import z3

from helpers.domain_sites import step_site
from looprover.domains import STATE_DOMAINS, TRANSITION_DOMAINS, Site, transition_candidates
from looprover.domains.booleans import Booleans
from looprover.domains.congruence import Congruence
from looprover.domains.equalities import Equalities
from looprover.domains.intervals import Intervals
from looprover.domains.linear import Linear
from looprover.domains.ranges import TypeRanges
from looprover.domains.strings import Strings
from looprover.domains.octagon import Octagon
from looprover.domains.deltas import Deltas
from looprover.domains.contents import Contents
from looprover.domains.zones import Zones
from looprover.deadline import Deadline
from looprover.program.expr import BOOL, BoolConst, Var, cmp


def strs(atoms) -> list[str]:
    return [str(a) for a in atoms]


def test_every_domain_has_a_name_and_one_instance_per_driver():
    for domains in (STATE_DOMAINS, TRANSITION_DOMAINS):
        names = [d.name for d in domains]
        assert all(names) and len(set(names)) == len(names)


def test_type_ranges(loop):
    lp = loop("int x = 0; while (x < 10) x++;")
    x = lp.var("x")
    assert strs(TypeRanges().var_atoms(Site(None, []), x)) == ["(x >= (-2147483647-1))", "(x <= 2147483647)"]
    assert TypeRanges().var_atoms(Site(None, [], bitvector=True), x) == []      # tautologies over bit-vectors


def test_intervals(loop):
    lp = loop("int x = 0; while (x < 10) x++;")
    got = strs(Intervals().var_atoms(lp.site, lp.var("x")))
    assert "(x >= 0)" in got and "(x <= 10)" in got
    f = Var("f", BOOL)                                  # Boolean state (CHC inputs): no bounds
    assert Intervals().var_atoms(Site(1, [0, 1], [{"f": True}, {"f": False}]), f) == []


def test_intervals_bound_preservation():
    x, x1 = z3.Int("x"), z3.Int("x'")
    rel = Intervals().relations(step_site([x], [x1], x1 == x + 1, atoms=[x <= 10]))
    assert any(z3.eq(r, z3.Implies(x <= 10, x1 <= 10)) for r in rel)
    assert Intervals().relations(step_site([x], [x1], x1 == x + 1)) == []


def test_zones(loop):
    lp = loop("int i = 0, n = 5; while (i < n) i++;")
    assert strs(Zones().pair_atoms(lp.site, lp.var("i"), lp.var("n"))) == ["(i <= n)", "(i >= n)"]
    x, x1 = z3.Int("x"), z3.Int("x'")
    assert len(Zones().var_relations(x, x1)) == 2
    b, b1 = z3.Bool("b"), z3.Bool("b'")
    assert Zones().var_relations(b, b1) == []


def test_equalities(loop):
    lp = loop("int i = 0, j = 1; while (i < 10) { i++; j++; }")
    assert strs(Equalities().pair_atoms(lp.site, lp.var("i"), lp.var("j"))) == ["(i == (j + (-1)))"]
    lp = loop("int i = 0, j = 0; while (i < 10) { i++; j += 2; }")
    assert Equalities().pair_atoms(lp.site, lp.var("i"), lp.var("j")) == []


def test_congruence(loop):
    lp = loop("int x = 0; while (x < 100) x += 2;")
    assert "((x % 2) == 0)" in strs(Congruence().var_atoms(lp.site, lp.var("x")))
    lp = loop("int x = 0; while (x < 100) x++;")
    assert Congruence().var_atoms(lp.site, lp.var("x")) == []
    lp = loop("int x = 0, y = 6; while (x < 100) x += 2;")     # y is constant: the intervals' equality
    assert Congruence().var_atoms(lp.site, lp.var("y")) == []
    assert "(y <= 6)" in strs(Intervals().var_atoms(lp.site, lp.var("y")))


def test_congruence_moduli_from_the_samples_and_the_constants(loop):
    """A counter stepping by 10 from 7 has residue 7 mod 10 (the gcd of the sampled spread, no `10` needed in
    a modulus position); a `% 6` in the code offers modulus 6; a counter stepping by 1 gets neither."""
    lp = loop("int x = 7; while (x < 500) x += 10;")
    assert "((x % 10) == 7)" in strs(Congruence().var_atoms(lp.site, lp.var("x")))
    lp = loop("int x = 0; int y = 0; while (x < 500) { x += 6; y = x % 6; }")
    assert "((x % 6) == 0)" in strs(Congruence().var_atoms(lp.site, lp.var("x")))
    lp = loop("int x = 0; while (x < 500) x++;")
    assert Congruence().var_atoms(lp.site, lp.var("x")) == []


def test_congruence_between_counters(loop):
    lp = loop("int i = 0, j = 0; while (i < 10) { i += 2; j += 4; }")
    assert strs(Congruence().pair_atoms(lp.site, lp.var("i"), lp.var("j"))) == ["(((i - j) % 2) == 0)"]
    lp = loop("int i = 0, j = 0; while (i < 10) { i++; j += 2; }")
    assert Congruence().pair_atoms(lp.site, lp.var("i"), lp.var("j")) == []


def test_congruence_relation():
    x, x1 = z3.Int("x"), z3.Int("x'")
    assert strs(Congruence().relations(step_site([x], [x1], x1 == x + 2, deltas=[[2], [4]]))) == ["(x' - x)%2 == 0"]
    assert Congruence().relations(step_site([x], [x1], x1 == x + 1, deltas=[[1]])) == []


def test_linear(loop):
    lp = loop("int i = 0, j = 0; while (i < 10) { i++; j += 3; }")
    assert strs(Linear().pair_atoms(lp.site, lp.var("i"), lp.var("j"))) == ["(j == ((3 * i) + 0))"]
    lp = loop("int i = 0, j = 0; while (i < 10) { i++; j++; }")      # slope 1 is an offset, not a line
    assert Linear().pair_atoms(lp.site, lp.var("i"), lp.var("j")) == []


def test_linear_relation():
    (x, y), (x1, y1) = [z3.Int("x"), z3.Int("y")], [z3.Int("x'"), z3.Int("y'")]
    rel = list(Linear().relations(step_site([x, y], [x1, y1], z3.And(x1 == x + 1, y1 == y + 3), deltas=[[1, 3]])))
    assert len(rel) == 1
    s = z3.Solver()
    s.add(x1 == x + 5, y1 == y + 15, z3.Not(rel[0]))
    assert s.check() == z3.unsat
    assert list(Linear().relations(step_site([x, y], [x1, y1], z3.And(x1 == x, y1 == y), deltas=[[0, 0]]))) == []


def test_booleans():
    """Boolean state variables come from CHC inputs (C's `_Bool` is an integer type); the sites are built here."""
    f = Var("f", BOOL)
    assert Booleans().var_atoms(Site(1, [], [{"f": False}, {"f": False}]), f) == [cmp("==", f, BoolConst(False))]
    assert Booleans().var_atoms(Site(1, [], [{"f": False}, {"f": True}]), f) == []
    b, b1 = z3.Bool("b"), z3.Bool("b'")
    assert len(Booleans().var_relations(b, b1)) == 2
    assert Booleans().var_relations(z3.Int("x"), z3.Int("x'")) == []


def test_transition_driver_takes_steps_from_models():
    """The driver samples Tr's steps once; the congruence of a step-2 counter comes out of it."""
    x, x1 = z3.Int("x"), z3.Int("x'")
    got = transition_candidates([x], [x1], z3.And(x < 100, x1 == x + 2), [], lambda f: z3.substitute(f, (x, x1)),
                                True, Deadline.after(10), z3.main_ctx())
    assert any("%" in str(c) for c in got)
    got = transition_candidates([x], [x1], z3.And(x < 100, x1 == x + 2), [], lambda f: z3.substitute(f, (x, x1)),
                                False, Deadline.after(10), z3.main_ctx())
    assert got == []


def test_strings(loop):
    lp = loop("char a[8]; int n = 5, p = 0; a[n] = 0; while (a[p] != 0) p++;")
    got = strs(Strings().array_atoms(lp.site, lp.var("a"), [lp.var("n"), lp.var("p")]))
    assert "(a[n] == 0)" in got and "(p < 8)" in got
    assert "(a[7] == 0)" in got and "(p < 7)" in got                    # a terminator in the last cell
    lp = loop("char c[1]; int p = 0; c[0] = 0; while (c[p] != 0) p++;")     # no last cell besides the first
    assert "(p < 0)" not in strs(Strings().array_atoms(lp.site, lp.var("c"), [lp.var("p")]))
    lp = loop("int n = 5; char *s = __builtin_alloca(n); int p = 0; s[n - 1] = 0; while (s[p] != 0) p++;")
    alloc = next(v for v in lp.prog.variables if v.startswith("__builtin_alloca@") and "." not in v
                 and "@alive" not in v)
    assert f"({alloc}[(n - 1)] == 0)" in strs(Strings().array_atoms(lp.site, lp.var(alloc), [lp.var("n")]))
    lp = loop("int b[8]; int p = 0; while (p < 8) { b[p] = 1; p++; }")    # not a char buffer
    assert Strings().array_atoms(lp.site, lp.var("b"), [lp.var("p")]) == []


def test_octagon(loop):
    lp = loop("int i = 1, j = 10; while (j >= i) { i = i + 2; j = j - 1; }")
    got = strs(Octagon().pair_atoms(lp.site, lp.var("i"), lp.var("j")))
    assert "((i - j) <= 3)" in got and "((i + j) >= 11)" in got
    lp = loop("int i = 0, j = 0; while (i < 10) { i++; j++; }")      # i - j constant: an equality's job
    assert not [a for a in strs(Octagon().pair_atoms(lp.site, lp.var("i"), lp.var("j"))) if "-" in a]


def test_deltas():
    from looprover.program.expr import I32
    x, y, x0, y0 = (Var(n, I32) for n in ("x", "y", "x0", "y0"))
    site = Site(1, [], [{"x": 5, "y": 3, "x0": 5, "y0": 3}, {"x": 7, "y": 2, "x0": 5, "y0": 3},
                        {"x": 9, "y": 1, "x0": 5, "y0": 3}], entry={"x": x0, "y": y0})
    assert strs(Deltas().pair_atoms(site, x, y)) == ["(((-1) * (x - x0)) == (2 * (y - y0)))"]
    site.samples.append({"x": 8, "y": 0, "x0": 5, "y0": 3})             # not proportional
    assert Deltas().pair_atoms(site, x, y) == []
    assert Deltas().pair_atoms(Site(1, [], site.samples), x, y) == []   # no entry copies: nothing to relate


def test_contents():
    from looprover.program.expr import I32, ArrayType
    from looprover.program.interp import ArrayValue
    a, i, i0 = Var("a", ArrayType(I32, I32, 8)), Var("i", I32), Var("i0", I32)
    filled = [{"a": ArrayValue(7, {k: 3 for k in range(n)}), "i": n, "i0": 0} for n in range(5)]
    got = strs(Contents().array_atoms(Site(1, [], filled, entry={"i": i0}), a, [i]))
    assert any("i0" in g and "== 3" in g for g in got)                  # ∀ k ∈ [i0, i): a[k] == 3
    mixed = [{"a": ArrayValue(7, {0: 3, 1: 5}), "i": 2, "i0": 0}]
    assert not any("==" in g for g in strs(Contents().array_atoms(Site(1, [], mixed, entry={"i": i0}), a, [i])))
    assert Contents().array_atoms(Site(1, [], filled), a, [i]) == []   # no entry copy: no swept range


def test_contents_of_a_counter_sampled_far_from_its_entry_value():
    """A sampled counter 10^12 cells from its entry value: only the first cells are looked at (the swept range
    was once built as a list, a MemoryError under the bench's address-space limit)."""
    from looprover.program.expr import I64, ArrayType
    from looprover.program.interp import ArrayValue
    a, i, i0 = Var("a", ArrayType(I64, I64, None)), Var("i", I64), Var("i0", I64)
    far = [{"a": ArrayValue(0, {}), "i": 10 ** 12, "i0": 0}]
    got = strs(Contents().array_atoms(Site(1, [], far, entry={"i": i0}), a, [i]))
    assert any("== 0" in g for g in got)                                   # ∀ k ∈ [i0, i): a[k] == 0


def test_affine_hull(loop):
    """x + y == n over three variables (what `y == n` after the loop needs), computed in long long over 32-bit
    variables; none over two variables (the pair domains' job) or when the samples span every direction."""
    from looprover.domains.affine import AffineHull
    lp = loop("unsigned n = __VERIFIER_nondet_uint(); unsigned x = n, y = 0; while (x > 0) { x--; y++; }")
    ints = [lp.var(v) for v in ("n", "x", "y")]
    atoms = strs(AffineHull().site_atoms(lp.site, ints))
    # exact, and modulo 2^32 as C's unsigned arithmetic computes it (what stays inductive where a sum wraps)
    assert atoms == ["(((((long long)x) + ((long long)y)) - ((long long)n)) == 0ll)", "((x + y) == n)"], atoms
    assert AffineHull().site_atoms(lp.site, ints[1:]) == []
    lp = loop("int a = __VERIFIER_nondet_int(), b = __VERIFIER_nondet_int(), c = __VERIFIER_nondet_int();"
              " while (a < 3) a++;")
    assert AffineHull().site_atoms(lp.site, [lp.var(v) for v in "abc"]) == []


def test_affine_hull_over_many_counters(loop):
    """A loop that counts each case in a counter of its own keeps their sum equal to the iteration count: an
    equality over seven variables (what `sum == l` in the body needs to be 1-inductive)."""
    from looprover.domains.affine import AffineHull
    lp = loop("unsigned l = 0, a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;"
              " while (l < 1000) { if (l % 5 == 0) a++; else if (l % 5 == 1) b++; else if (l % 7 == 0) c++;"
              " else if (l % 3 == 0) d++; else if (l % 2 == 0) e++; else f++; l++; }")
    atoms = strs(AffineHull().site_atoms(lp.site, [lp.var(v) for v in "labcdef"]))
    assert any(all(v in a for v in "labcdef") for a in atoms), atoms


def test_intervals_offer_the_guards_limits_where_the_samples_stay_low(loop):
    """The outer loop's samples never leave x = 0 (the inner loop runs 10^8 times): its guard's limit is the
    bound at the head (x <= 10^8) and in the body (x <= 10^8 - 1, what the inner head needs)."""
    lp = loop("unsigned x = 0, y; while (x < 100000000) { y = 0; while (y < 100000000) y++; x++; }")
    assert {s["x"] for s in lp.site.samples} == {0}
    atoms = strs(Intervals().var_atoms(lp.site, lp.var("x")))
    assert any("100000000" in a for a in atoms) and any("99999999" in a for a in atoms), atoms


def test_nullspace_is_exact():
    from fractions import Fraction
    from looprover.linalg import nullspace
    # points on x + 2y - 3z = 1, as rows [x, y, z, 1]
    pts = [(1, 0, 0), (0, 2, 1), (4, 0, 1), (2, 1, 1)]
    (vec,) = nullspace([[Fraction(v) for v in p] + [Fraction(1)] for p in pts], 4)
    scale = vec[0]
    assert [v / scale for v in vec] == [1, 2, -3, -1]


def test_a_guards_large_constant_is_a_candidate_bound_and_the_overflow_checks_limits_are_not(tmp_path):
    """`while (x <= 1073741823)` bounds x inside the loop (an inner loop's overflow check needs exactly that
    bound); the no-overflow checks' type limits are left to the ranges domain."""
    from looprover.domains import program_constants
    from looprover.frontend.c import load_c_program
    from looprover.program.instrument import instrument_no_overflow
    f = tmp_path / "p.c"
    f.write_text("extern int __VERIFIER_nondet_int(void);\nint main(void) {\n  int x = __VERIFIER_nondet_int();\n"
                 "  while (x >= 0 && x <= 1073741823) x = x - 1;\n  return 0;\n}\n")
    consts = program_constants(instrument_no_overflow(load_c_program(f, "ILP32")))
    assert 1073741823 in consts and 2147483647 not in consts and -2147483647 not in consts


def test_string_lengths_relate_the_loop_counters_to_a_ghost_length():
    """On the string-terminator abstraction (a live `s@len`, counters the loop writes): the copy bound with a
    guard's constant, the offset scan, the terminator's last cell, the scan-before-terminator fact for a char the
    loop reads; nothing without liveness (another program) and nothing for a variable the loop does not write."""
    from looprover.domains.strings import StringLengths
    from looprover.program.expr import I8, I32, Binary, const, or_
    g, i, j, n, c = Var("s@len", I32), Var("i", I32), Var("j", I32), Var("n", I32), Var("c", I8)
    samples = [{"s@len": 5, "i": 1, "j": 0, "n": 3, "c": 7}]
    site = Site(3, [0, 1, 10, 1001], samples, guard_bounds={"l": [(">=", 1000)]},
                live=frozenset({"s@len", "i", "j", "n", "c"}), loop_writes=frozenset({"i", "j", "c"}))
    atoms = {str(a) for a in StringLengths().site_atoms(site, [g, i, j, n, c])}
    assert str(cmp("<=", Binary("+", Binary("-", j, i, I32), g, I32), const(1000, I32))) in atoms
    assert str(cmp("<=", Binary("+", i, n, I32), g)) in atoms
    assert str(cmp("<=", g, const(1000, I32))) in atoms and str(cmp("<=", g, const(9, I32))) in atoms
    assert str(or_(cmp("==", c, const(0, I8)), cmp("<", i, g))) in atoms
    assert not any(str(Binary("-", n, i, I32)) in a or str(Binary("-", i, n, I32)) in a for a in atoms)
    assert StringLengths().site_atoms(Site(3, [0], samples), [g, i, j, n, c]) == []


def test_guard_relations_offer_a_bound_of_several_variables_and_its_weakening(loop):
    """A copy of `j - start + 1` cells runs while `k < j - start + 1`: the guard, the bound the loop leaves with
    (`k <= ...`) and the length check's negation come from the branches; a comparison of one variable with a
    constant does not (the guard bounds' job), nor one over a variable that is not live."""
    from looprover.domains.guards import GuardRelations, guard_comparisons
    from looprover.domains.state import atoms_at
    from looprover.program.expr import free_vars
    lp = loop("int start = __VERIFIER_nondet_int(), j = __VERIFIER_nondet_int(), k = 0;\n"
              "if (start < 0 || j < start || j - start + 1 >= 8) return 0;\n"
              "while (k < j - start + 1) k++;")
    comparisons = guard_comparisons(lp.prog)
    assert comparisons and all(len(free_vars(c)) >= 2 for c in comparisons)     # not `start < 0`
    site = Site(lp.site.node, lp.site.consts, lp.site.samples, comparisons=comparisons)
    ints = [lp.var(n) for n in ("start", "j", "k")]
    got = strs(GuardRelations().site_atoms(site, ints))
    assert "(k <= (((j - start) + 1) + 0))" not in got                        # no `+ 0`
    assert "(k <= ((j - start) + 1))" in got and "(k < ((j - start) + 1))" in got
    assert "(((j - start) + 1) < 8)" in got and "(((j - start) + 1) <= 8)" in got      # the check's negation
    assert "(j >= start)" in got and "(j >= (start + (-1)))" in got
    dead = Site(lp.site.node, [], [], comparisons=comparisons, live=frozenset({"start", "j"}))
    assert not any("k" in a for a in strs(GuardRelations().site_atoms(dead, ints)))
    # what the samples refute is not kept: at the head k never exceeds the bound
    kept = strs(atoms_at(lp.prog, lp.site.node, lp.site.samples, False, (GuardRelations(),)))
    assert "(k <= ((j - start) + 1))" in kept and "(k > ((j - start) + 1))" not in kept
