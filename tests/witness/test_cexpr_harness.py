"""Invariants as C (`witness/cexpr.py`): what is printed means in C what the formula means over the integers
(checked by gcc on random values), and is read back to an equivalent formula; and the compiled harness
(`witness/harness.py`): the counterexample's inputs reach `reach_error` in the original program, other inputs
do not."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import z3

from looprover.program.expr import BOOL, ArrayType, IntType
from looprover.smt.encode import cell_read
from looprover.witness.cexpr import NotC, acsl_from_z3, check, check_acsl, from_z3, parse, range_of, to_z3

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TYPES = {"a": IntType(32, True), "b": IntType(32, True), "u": IntType(32, False), "c": IntType(8, True),
         "w": IntType(64, False), "f": BOOL}
C_TYPES = {"a": "int", "b": "int", "u": "unsigned int", "c": "signed char", "w": "unsigned long long", "f": "_Bool"}
Z3 = {n: (z3.Bool(n) if n == "f" else z3.Int(n)) for n in TYPES}


def _random_formula(rng: random.Random) -> z3.BoolRef:
    ints = [Z3[n] for n in ("a", "b", "u", "c")]

    def term(d: int):
        if d == 0 or rng.random() < 0.3:
            return rng.choice(ints) if rng.random() < 0.7 else z3.IntVal(rng.randint(-1000, 1000))
        if rng.random() < 0.1:      # an If, as the encoding's unsigned wrap-around has it
            x, y = term(d - 1), term(d - 1)
            return z3.If(x > y, x - y, y)
        op = rng.choice("+-*")
        x, y = term(d - 1), z3.IntVal(rng.randint(-5, 5)) if op == "*" else term(d - 1)
        return x + y if op == "+" else x - y if op == "-" else x * y

    def atom():
        if rng.random() < 0.1:
            return Z3["f"]
        if rng.random() < 0.15:     # a remainder of a non-negative value (k-induction's congruences)
            return Z3["u"] % rng.randint(1, 7) + term(1) == rng.randint(0, 3)
        if rng.random() < 0.1:      # divisibility of a signed term, C's truncating remainder as `smt.encode` has it
            x, c = term(1), rng.randint(1, 7)
            rem = z3.If(x >= 0, x % c, -((-x) % c))
            return rem == 0 if rng.random() < 0.5 else rem != 0
        if rng.random() < 0.1:      # z3's Euclidean remainder or quotient of a signed term (Spacer's facts)
            x, c = term(1), rng.randint(1, 7)
            return (x % c if rng.random() < 0.5 else x / c) + term(1) >= rng.randint(-3, 3)
        if rng.random() < 0.05:     # C's truncating quotient as `smt.encode` has it
            x, c = term(1), rng.randint(1, 7)
            return z3.If(x >= 0, x / c, -((-x) / c)) <= term(1)
        x, y = term(2), term(2)
        return rng.choice([x <= y, x < y, x == y, x != y, x >= y])
    parts = [atom() for _ in range(rng.randint(1, 3))]
    f = z3.And(parts) if rng.random() < 0.5 else z3.Or(parts)
    return z3.Not(f) if rng.random() < 0.2 else f


def _names(t):
    return t.decl().name()


def test_printed_invariants_read_back_to_equivalent_formulas():
    rng = random.Random(7)
    for _ in range(200):
        f = _random_formula(rng)
        text = from_z3(f, _names, TYPES)
        node = parse(text)
        check(node, TYPES)
        back = to_z3(node, Z3)
        s = z3.Solver()
        # C's meaning: every value in its type's range (which the printer may use to drop a sign fix-up)
        s.add(*[z3.And(Z3[n] >= lo, Z3[n] <= hi) for n in ("a", "b", "u", "c")
                for lo, hi in [range_of(TYPES[n])]])
        s.add(z3.Not(f == back))
        assert s.check() == z3.unsat, (f, text)


@pytest.mark.parametrize("text,why", [("u + 1 > 0", "fit in int"), ("a * b > 0", "overflow"),
                                      ("a % 0 == 1", "remainder"), ("(long long)u % a == 0", "remainder"),
                                      ("a / b > 0", "quotient"), ("a & 2 > 0", "cannot read"), ("(long long)w > 0", "long long"),
                                      ("a > 1u", "suffix")])
def test_c_whose_meaning_is_not_the_integer_one_is_refused(text, why):
    with pytest.raises(NotC, match=why):
        check(parse(text), TYPES)


def test_a_remainder_is_read_as_cs_truncating_one_and_z3s_mod_printed_as_its_euclidean_value():
    node = parse("a % 2 == 1")                  # false for a = -1 in C (-1 % 2 is -1)
    check(node, TYPES)
    s = z3.Solver()
    s.add(to_z3(node, Z3), Z3["a"] == -1)
    assert s.check() == z3.unsat
    text = from_z3(Z3["a"] % 2 == 1, _names, TYPES)       # z3's mod: 1 for a = -1
    assert text == "(a % 2 + 2) % 2 == 1"
    s = z3.Solver()
    s.add(to_z3(parse(text), Z3), Z3["a"] == -1)
    assert s.check() == z3.sat


ARRAYS = {"x": ArrayType(IntType(32, True), IntType(32, True)), "y": ArrayType(IntType(32, True), IntType(8, False))}
ARRAY_Z3 = {n: z3.Array(n, z3.IntSort(), z3.IntSort()) for n in ARRAYS}


def test_quantified_invariants_over_cells_read_back_in_acsl_to_equivalent_formulas():
    """Random `∀k ∈ [lo, hi): φ(x[k], y[k], ...)` as k-induction encodes them (cells read clamped, guard as a
    disjunction), printed in ACSL and read back: the same formula, and never C."""
    rng = random.Random(5)
    types = {**TYPES, **ARRAYS}
    env = {**Z3, **{n: (lambda i, a=ARRAY_Z3[n], t=ARRAYS[n]: cell_read(a, i, t.elem, False)) for n in ARRAYS}}
    for _ in range(100):
        k = z3.Int("k")
        cells = [cell_read(ARRAY_Z3[n], k + rng.choice([0, 1]), ARRAYS[n].elem, False) for n in ARRAYS]
        other = rng.choice([Z3["a"], Z3["b"] + 1, z3.IntVal(rng.randint(-3, 3)), cells[1]])
        body = rng.choice([cells[0] >= other, cells[0] == cells[1] + other, z3.Or(cells[1] < 2, cells[0] != other)])
        lo, hi = rng.choice([z3.IntVal(0), Z3["a"]]), rng.choice([Z3["b"], 2 * Z3["b"] - 1, Z3["u"]])
        f = z3.ForAll([k], z3.Or(z3.Not(lo <= k), z3.Not(k < hi), body))
        f = f if rng.random() < 0.6 else z3.And(f, Z3["a"] <= Z3["b"])
        text = acsl_from_z3(f, _names, types)
        node = parse(text)
        check_acsl(node, types)
        with pytest.raises(NotC):
            check(node, types)
        s = z3.Solver()
        s.add(z3.Not(f == to_z3(node, env)))
        assert s.check() == z3.unsat, (f, text)


@pytest.mark.parametrize("text,why", [(r"\forall int k; x[k] > 0", "integer"), ("z[0] > 0", "no array"),
                                      ("x > 0", "no integer variable"), ("a[1] > 0", "no array"),
                                      (r"\forall integer k; x[k] / a > 0", "divisor")])
def test_acsl_we_cannot_read_exactly_is_refused(text, why):
    with pytest.raises(NotC, match=why):
        check_acsl(parse(text), {**TYPES, **ARRAYS})


def test_a_read_that_is_not_the_cells_c_value_is_not_printed():
    """A Select of a bounded element type that is not clamped to exactly its range is no C cell value."""
    k = z3.Int("k")
    raw = z3.ForAll([k], z3.Select(ARRAY_Z3["x"], k) >= 0)
    narrow = z3.ForAll([k], cell_read(ARRAY_Z3["x"], k, IntType(8, True), False) >= 0)
    for f in (raw, narrow):
        with pytest.raises(NotC, match="not the C value"):
            acsl_from_z3(f, _names, {**TYPES, **ARRAYS})


def test_unsigned_comparisons_without_arithmetic_are_exact():
    check(parse("u <= 5 && u != 0"), TYPES)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_printed_invariants_mean_in_c_what_they_mean_over_the_integers(tmp_path):
    """gcc evaluates each printed formula on random values of the variables' C types; z3 evaluates the formula
    on the same values as integers: they agree."""
    rng = random.Random(11)
    cases = []
    for _ in range(60):
        f = _random_formula(rng)
        text = from_z3(f, _names, TYPES)
        for _ in range(5):
            vals = {"a": rng.randint(-(1 << 31), (1 << 31) - 1), "b": rng.randint(-50, 50),
                    "u": rng.choice([0, 1, rng.randint(0, (1 << 32) - 1)]), "c": rng.randint(-128, 127),
                    "f": rng.randint(0, 1), "w": 0}
            m = z3.Solver()
            m.add(*[Z3[n] == (bool(v) if n == "f" else v) for n, v in vals.items() if n != "w"])
            assert m.check() == z3.sat
            expected = z3.is_true(m.model().eval(f, model_completion=True))
            cases.append((text, vals, expected))
    body = []
    for i, (text, vals, expected) in enumerate(cases):
        decls = " ".join(f"{C_TYPES[n]} {n} = ({C_TYPES[n]}){v}{'LL' if n != 'f' else ''};" for n, v in vals.items())
        body.append(f"  {{ {decls} (void)w; if ((({text}) ? 1 : 0) != {int(expected)}) printf(\"%d\\n\", {i}); }}")
    src = tmp_path / "t.c"
    src.write_text("#include <stdio.h>\nint main(void) {\n" + "\n".join(body) + "\n  return 0;\n}\n")
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-w", "-fwrapv", "-o", str(exe), str(src)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert not out, [cases[int(i)] for i in out[:3]]


# -------------------------------------------------------------------------------------------- harness
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
def test_harness_reaches_the_error_with_the_counterexample_inputs_only():
    from looprover.witness.harness import run_harness
    assert run_harness([EXAMPLES / "count_unsafe.c"], [1], "ILP32", 20).reached_error is True
    assert run_harness([EXAMPLES / "count_unsafe.c"], [2], "ILP32", 20).reached_error is False     # tampered
    assert run_harness([EXAMPLES / "branch_unsafe.c"], [42], "ILP32", 20).reached_error is True
    assert run_harness([EXAMPLES / "branch_unsafe.c"], [43], "ILP32", 20).reached_error is False


@needs_gcc
def test_harness_detects_reach_error_whatever_its_body(tmp_path):
    """reach_error is found by instrumentation, not by what it does (here: nothing at all)."""
    from looprover.witness.harness import run_harness
    prog = tmp_path / "p.c"
    prog.write_text("extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void) {}\n"
                    "int main(void) { int x = __VERIFIER_nondet_int(); if (x == -7) reach_error(); return 0; }\n")
    assert run_harness([prog], [-7], "LP64", 20).reached_error is True
    assert run_harness([prog], [7], "LP64", 20).reached_error is False


@needs_gcc
def test_every_false_reports_its_compiled_harness(capsys):
    from looprover.cli import main
    assert main(["verify", str(EXAMPLES / "count_unsafe.c"), "--engine", "bmc", "--json", "--timeout", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "FALSE" and out["harness"]["reached_error"] is True
    assert main(["verify", str(EXAMPLES / "count_unsafe.c"), "--engine", "bmc", "--timeout", "60"]) == 0
    assert "harness:  compiled with gcc and run on the inputs: reach_error() reached" in capsys.readouterr().out


def test_harness_is_skipped_for_horn_clauses(tmp_path):
    from looprover.deadline import Deadline
    from looprover.verdict import Counterexample, Status, Verdict
    from looprover.witness.harness import harness_for
    v = Verdict(Status.FALSE, "x", "r", Counterexample([], [1], validated=True))
    res = harness_for(v, tmp_path / "f.smt2", "ILP32", False, Deadline(time.monotonic() + 10))
    assert res.reached_error is None and "not C" in res.detail


def test_harness_is_not_run_for_other_properties(tmp_path):
    """It detects reach_error only: an overflow FALSE is not reported as 'not reached'."""
    from looprover.deadline import Deadline
    from looprover.verdict import Counterexample, Status, Verdict
    from looprover.witness.harness import harness_for
    v = Verdict(Status.FALSE, "x", "r", Counterexample([], [1], validated=True))
    deadline = Deadline(time.monotonic() + 10)
    for prop in ("no-overflow", "valid-memsafety"):
        res = harness_for(v, EXAMPLES / "count_unsafe.c", "ILP32", True, deadline, prop)
        assert res.reached_error is None and prop in res.detail


# Verisec's shape: a test case and a library file, the buffer size a `-D` definition without default, inputs from
# CBMC's undefined `nondet_int()`, and `assert` a function the program calls without defining it
_TWO_FILES = {
    "case.c": "extern int nondet_int(void);\nvoid assert(int);\nint pick(int);\n"
              "void reach_error(void) {}\n"
              "int main(void) {\n  char buf[SIZE];\n  int i = pick(nondet_int());\n  assert(i >= -1);\n"
              "  if (i == SIZE + 1) reach_error();\n  buf[i] = 'a';\n  return buf[0];\n}\n",
    "lib.c": "int pick(int x) { return x < 0 ? 0 : x; }\n",
}


@needs_gcc
@pytest.mark.parametrize("prop, line", [("unreach-call", 9), ("valid-memsafety", 10)])
def test_a_task_of_several_files_and_defines_gets_its_harness(tmp_path, capsys, prop, line):
    """The harness is compiled from every input file with verify's `-D` definitions and feeds CBMC-style
    `nondet_X()` calls; `SIZE` has no default, so without the definitions it would not compile."""
    from looprover.cli import main
    for name, text in _TWO_FILES.items():
        (tmp_path / name).write_text(text)
    args = ["verify", str(tmp_path / "case.c"), str(tmp_path / "lib.c"), "-DSIZE=1000", "--property", prop,
            "--engine", "bmc", "--timeout", "60", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "FALSE"
    assert out["harness"]["reached_error"] is True, out["harness"]
    if prop == "valid-memsafety":           # the line of the out-of-bounds write, found by the sanitizers
        assert f"case.c:{line}:" in out["harness"]["detail"]


@needs_gcc
def test_a_deep_run_without_havocs_gets_its_harness_and_one_with_havocs_does_not(tmp_path):
    """A run too long to store keeps its havoc plan: an empty plan means the harness without inputs feeds the
    program what the confirming run fed it, so the harness runs; a run with havoc values it cannot list does not."""
    from looprover.deadline import Deadline
    from looprover.verdict import Status, Verdict
    from looprover.evidence.deep import Repeat, RunCounterexample
    from looprover.witness.harness import harness_for
    prog = tmp_path / "deep.c"
    prog.write_text("void reach_error(void) {}\nint main(void) { unsigned x = 0;\n"
                    "  while (x < 0x0fffffffu) x += 2;\n  if (x % 2 == 0) reach_error();\n  return 0; }\n")
    deadline = Deadline(time.monotonic() + 30)

    def cex(plan):
        return Verdict(Status.FALSE, "accel", "r", RunCounterexample([], [], {}, True, length=10**8, omitted=10**8,
                                                                     plan=plan))
    assert harness_for(cex([]), prog, "LP64", True, deadline).reached_error is True
    res = harness_for(cex([Repeat(10**6, [1])]), prog, "LP64", True, deadline)
    assert res.reached_error is None and "too long" in res.detail


@needs_gcc
@pytest.mark.parametrize("prop, violation", [("unreach-call", "reach_error();"), ("valid-memsafety", "a[5] = 1;")])
def test_a_run_through_uninitialised_memory_missed_by_the_harness_says_nothing(tmp_path, capsys, prop, violation):
    """The violation needs an uninitialised local to be 7, which the harness cannot give the compiled program:
    its run missing the violation is not reported as 'not reached'."""
    from looprover.cli import main
    prog = tmp_path / "p.c"
    prog.write_text("void reach_error(void) {}\nint main(void) {\n  int a[4];\n  int k;\n  a[0] = 0;\n"
                    f"  if (k == 7) {violation}\n  return a[0];\n}}\n")
    assert main(["verify", str(prog), "--property", prop, "--engine", "bmc", "--timeout", "60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "FALSE"
    assert out["harness"]["reached_error"] is None, out["harness"]
    assert "uninitialised memory (a)" in out["harness"]["detail"]      # the first one the run havocs


@needs_gcc
def test_a_memory_violation_behind_a_returning_reach_error_is_reached(tmp_path, capsys):
    """Under valid-memsafety reach_error is an ordinary function: its empty body returns and the run goes on to the
    out-of-bounds write, in the model as in the compiled program, whose harness must not stop at its entry."""
    from looprover.cli import main
    prog = tmp_path / "p.c"
    prog.write_text("extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void) {}\nint main(void) {\n"
                    "  int a[4] = {0, 0, 0, 0};\n  int i = __VERIFIER_nondet_int();\n  if (i != 5) return 0;\n"
                    "  reach_error();\n  a[i] = 1;\n  return a[0];\n}\n")
    assert main(["verify", str(prog), "--property", "valid-memsafety", "--engine", "bmc", "--timeout", "60",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "FALSE"
    assert out["harness"]["reached_error"] is True, out["harness"]
    assert "p.c:8:" in out["harness"]["detail"]
