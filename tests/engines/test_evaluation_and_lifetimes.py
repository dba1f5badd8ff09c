"""Programs written to trip a verifier on what C evaluates and how long its objects live, each with a safe twin,
under every engine that accepts the property:

  * no-overflow: an overflowing argument of a call whose callee never reads the parameter (unused, second of
    two, read only in dead code, an empty `void` callee, inside a loop), of `exit`, and an overflow in a
    discarded expression that also has a side effect. C evaluates every argument before the call (C11
    6.5.2.2p4) and every full expression, used or not;
  * no-overflow: an operation in an operand that a simplification would drop (`(x + 1) && 0`, `e || 1`,
    `c ? 0 : 0`, a pointer's offset in a truth test): C evaluates it all the same;
  * valid-memsafety: a pointer to a local kept past the end of the local's lifetime and used in a later
    activation of the same function, or a later iteration of the loop whose body declares it (C11 6.2.4p2:
    each activation, each execution of the block, is a new object); and a local whose declaration a `switch`
    jumps over, live from the entry into its block (6.2.4p6) -- its safe twin must not be FALSE.

An unsafe program is never TRUE under any engine, and FALSE under the default portfolio, with a counterexample
replayed on the program that ends at the violated check; a safe twin is never FALSE. And against gcc's
-fsanitize=signed-integer-overflow: random programs whose helper functions ignore some of their parameters.
"""
from __future__ import annotations

import random

import pytest

from helpers.c_harness import overflow_agreement
from looprover.deadline import Deadline
from looprover.engines import engine_names, get_engine
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import NO_OVERFLOW, VALID_MEMSAFETY, Property
from looprover.verdict import Status

HEADER = """extern int __VERIFIER_nondet_int(void); extern void __VERIFIER_assume(int); extern void exit(int);
"""

# name -> (property, unsafe program, safe twin); the twins differ only where the unsafe one goes wrong
CASES = {
    "unused_parameter": (NO_OVERFLOW, """int g(int unused) { return 0; }
int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ int r = g(x + 1); return r; }
""", "__VERIFIER_assume(x < 100);"),
    "second_parameter_unused": (NO_OVERFLOW, """int g(int a, int b) { return a; }
int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ int r = g(x, x + 1); return r; }
""", "__VERIFIER_assume(x < 100);"),
    "parameter_read_in_dead_code": (NO_OVERFLOW, """int g(int a) { if (0) return a; return 0; }
int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ return g(x - 1); }
""", "__VERIFIER_assume(x > 0);"),
    "empty_void_callee": (NO_OVERFLOW, """void h(int a) { }
int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ h(x * 2); return 0; }
""", "__VERIFIER_assume(x < 1000 && x > -1000);"),
    "unused_parameter_in_a_loop": (NO_OVERFLOW, """int g(int u) { return 1; }
int main(void) { int s = __VERIFIER_nondet_int(); int c = 0; @SAFE@
  for (int k = 0; k < 3; k++) c = c + g(s + 200000000);
  return c; }
""", "__VERIFIER_assume(s < 100);"),
    "exit_argument": (NO_OVERFLOW, """int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ exit(x + 1); }
""", "__VERIFIER_assume(x < 100);"),
    "discarded_with_a_side_effect": (NO_OVERFLOW, """int n;
int f(void) { n++; return 1; }
int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@ f() + (x + 1); return n; }
""", "__VERIFIER_assume(x < 100);"),
    "and_with_false": (NO_OVERFLOW, """int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@
  int y = (x + 1) && 0; return y; }
""", "__VERIFIER_assume(x < 100);"),
    "or_with_true_in_a_loop": (NO_OVERFLOW, """int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@
  for (int i = 0; i < 10; i++) { if (x * 2 > 0 || 1) x = x + 0; }
  return 0; }
""", "__VERIFIER_assume(x < 100 && x > -100);"),
    "conditional_with_equal_arms": (NO_OVERFLOW, """int main(void) { int x = __VERIFIER_nondet_int(); @SAFE@
  int y = (x + 1) ? 0 : 0; return y; }
""", "__VERIFIER_assume(x < 100);"),
    "pointer_truth_test": (NO_OVERFLOW, """int main(void) { int a[4]; int x = __VERIFIER_nondet_int(); @SAFE@
  if (a + ((x + 1) & 1)) return 1;
  return 0; }
""", "__VERIFIER_assume(x < 100);"),
    "operand_not_evaluated": (NO_OVERFLOW, """int main(void) { int x = __VERIFIER_nondet_int();
  int c = __VERIFIER_nondet_int(); int y = (@SAFE@) || ((x + 1) && 0); return y; }
""", "1"),
    "dead_activation": (VALID_MEMSAFETY, """int *gp;
void f(int first) { int x = 0; if (first) gp = &x; else *gp = 1; }
int main(void) { f(1); f(@SAFE@); return 0; }
""", "1"),
    "dead_activation_read": (VALID_MEMSAFETY, """int *gp;
int f(int first) { int x = 7; if (first) { gp = &x; return 0; } return *gp; }
int main(void) { f(1); return f(@SAFE@); }
""", "1"),
    "earlier_for_iteration": (VALID_MEMSAFETY, """int main(void) { int *p = 0;
  for (int i = 0; i < 2; i++) { int x = 5; if (@SAFE@) p = &x; else *p = 1; }
  return 0; }
""", "1"),
    "earlier_while_iteration": (VALID_MEMSAFETY, """int main(void) { int *p = 0; int i = 0; int s = 0;
  while (i < 3) { int x = i; if (@SAFE@) p = &x; s += *p; i++; }
  return s; }
""", "1"),
    "function_called_in_a_loop": (VALID_MEMSAFETY, """int *gp;
void f(int i) { int x = i; if (@SAFE@) gp = &x; *gp = 2; }
int main(void) { for (int i = 0; i < 3; i++) f(i); return 0; }
""", "1"),
    "function_in_a_loop_condition": (VALID_MEMSAFETY, """int *gp;
int f(int i) { int x = i; if (@SAFE@) gp = &x; return *gp < 2; }
int main(void) { int i = 0; while (f(i)) i++; return 0; }
""", "1"),
    "function_in_a_for_increment": (VALID_MEMSAFETY, """int *gp;
void g(int i) { int x = i; if (@SAFE@) gp = &x; *gp = 2; }
int main(void) { for (int i = 0; i < 3; g(i++)) ; return 0; }
""", "1"),
    "switch_over_a_declaration": (VALID_MEMSAFETY, """int a[2];
int main(void) { int *p = 0; int c = __VERIFIER_nondet_int();
  switch (c) { int x; case 1: p = &x; *p = 1; if (p == 0) a[5] = 0; break; default: break; }
  @SAFE@ return 0; }
""", ""),
}
# each safe twin's replacement of @SAFE@; the unsafe program has its own (nothing, or the condition that
# keeps a pointer only in the first activation)
UNSAFE_FILL = {"dead_activation": "0", "dead_activation_read": "0", "earlier_for_iteration": "i == 0",
               "earlier_while_iteration": "i == 0", "function_called_in_a_loop": "i == 0",
               "function_in_a_loop_condition": "i == 0", "function_in_a_for_increment": "i == 0",
               "operand_not_evaluated": "c", "switch_over_a_declaration": "if (p) *p = 2;"}


def _source(name: str, safe: bool) -> str:
    _, text, fill = CASES[name]
    return HEADER + text.replace("@SAFE@", fill if safe else UNSAFE_FILL.get(name, ""))


def _verify(tmp_path, name: str, safe: bool, engine: str, timeout: float = 10.0):
    prop = CASES[name][0]
    f = tmp_path / f"{name}_{'safe' if safe else 'unsafe'}.c"
    f.write_text(_source(name, safe))
    job = Job(f, Property(prop), "ILP32")
    verdict, _ = verify_job(job, JobOptions(engine=engine), Deadline.after(timeout))
    return verdict


def _safety_engines(prop: str) -> list[str]:
    return [n for n in engine_names() if n != "portfolio" and prop in get_engine(n).properties]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_portfolio_finds_each_violation_and_proves_no_twin_wrong(tmp_path, name):
    prop = CASES[name][0]
    v = _verify(tmp_path, name, False, "portfolio", timeout=30)
    assert v.status == Status.FALSE, (name, v.reason)
    cex = v.evidence
    assert cex.validated, (name, v.reason)
    assert cex.violated.prop == ("valid-deref" if prop == VALID_MEMSAFETY else NO_OVERFLOW), cex.violated
    v = _verify(tmp_path, name, True, "portfolio", timeout=30)
    assert v.status != Status.FALSE, (name, v.reason)


@pytest.mark.slow
@pytest.mark.parametrize("prop", [NO_OVERFLOW, VALID_MEMSAFETY])
def test_no_engine_says_true_on_a_violation_or_false_on_a_twin(tmp_path, prop):
    names = [n for n in sorted(CASES) if CASES[n][0] == prop]
    engines = _safety_engines(prop)
    assert {"bmc", "kinduction", "summarize", "labmc", "spacer", "tpa", "multiloop"} <= set(engines), engines
    found = 0
    for engine in engines:
        for name in names:
            v = _verify(tmp_path, name, False, engine, timeout=5)
            assert v.status != Status.TRUE, (engine, name, v.reason)
            if v.status == Status.FALSE:
                assert v.evidence.validated, (engine, name)
                found += 1
            v = _verify(tmp_path, name, True, engine, timeout=5)
            assert v.status != Status.FALSE, (engine, name, v.reason)
    assert found >= len(names), found      # bmc alone finds every one


def test_the_argument_is_checked_at_the_call(tmp_path):
    """The counterexample of an unused overflowing argument ends at the call, on the argument's operation."""
    v = _verify(tmp_path, "unused_parameter", False, "bmc")
    assert v.status == Status.FALSE
    assert v.evidence.violated.src.line == 3 and "2147483646" in str(v.evidence.violated.cond)


# ------------------------------------------------------------------------------- differential against gcc
_CALLEES = """int take_first(int p, int q) { return p; }
int take_none(int p) { return 7; }
int dead_read(int p) { if (0) return p; return 1; }
void ignore(int p) { }
"""


def _random_program(rng: random.Random) -> str:
    """Straight-line int code over three inputs whose operations are mostly arguments of calls that ignore
    them (or one of them)."""
    vals = ["a", "b", "c"]
    lines = []
    for k in range(rng.randint(2, 5)):
        def operation():
            return f"{rng.choice(vals)} {rng.choice(['+', '-', '*'])} " \
                   f"{rng.choice(vals + [str(rng.choice([1, 3, 1000, 65536, 2147483647]))])}"
        kind = rng.random()
        if kind < 0.3:
            e = f"take_first({rng.choice(vals)}, {operation()})"
        elif kind < 0.55:
            e = f"take_none({operation()})"
        elif kind < 0.75:
            e = f"dead_read({operation()})"
        elif kind < 0.9:
            lines.append(f"  ignore({operation()});")
            e = rng.choice(vals)
        else:
            e = operation()
        lines.append(f"  int t{k} = {e};")
        vals.append(f"t{k}")
    return (_CALLEES + "int main(void) {\n  int a = __VERIFIER_nondet_int(); int b = __VERIFIER_nondet_int();\n"
            "  int c = __VERIFIER_nondet_int();\n" + "\n".join(lines) + "\n  return 0;\n}\n")


def test_differential_against_gcc_sanitizer_with_ignored_arguments(tmp_path, gcc):
    """On random programs and inputs, the instrumented program fails a check iff gcc's
    -fsanitize=signed-integer-overflow reports an overflow in the compiled program."""
    rng = random.Random(31)
    agree = overflow_agreement(gcc, tmp_path, [_random_program(rng) for _ in range(12)], rng)
    assert agree[True] > 5 and agree[False] > 5, agree


def test_an_object_never_born_shares_no_id_with_a_live_one(tmp_path):
    """`y` is never born (its function is not called), so its id is 0, not an arbitrary value that could equal
    `x`'s constant and make `*p` read `y` (which comes first among the candidates): no violation."""
    f = tmp_path / "never_born.c"
    f.write_text(HEADER + """int *gp;
void g(void) { int y = 5; gp = &y; }
void f(void) { int x = 1; int *p = &x; if (*p != 1) { int a[1]; a[0] = 0; int *q = a; q[3] = 0; } }
int main(void) { if (__VERIFIER_nondet_int() == 7 && 0) g(); f(); return 0; }
""")
    for engine in ("bmc", "kinduction"):
        v, _ = verify_job(Job(f, Property(VALID_MEMSAFETY), "ILP32"), JobOptions(engine=engine), Deadline.after(10))
        assert v.status == Status.TRUE, (engine, v.reason)


def test_operands_of_sizeof_are_not_evaluated(tmp_path):
    """`sizeof` and `_Alignof` do not evaluate their operand (C11 6.5.3.4p2): no overflow, no access."""
    f = tmp_path / "sizeof.c"
    f.write_text(HEADER + """int a[2];
int main(void) { int x = __VERIFIER_nondet_int(); int *p = 0;
  int r = sizeof(x + 1) + sizeof(x * x) + _Alignof(int) + sizeof(a[x + 5]) + sizeof(*p);
  (void)sizeof(x - 1);
  return r; }
""")
    for prop in (NO_OVERFLOW, VALID_MEMSAFETY):
        v, _ = verify_job(Job(f, Property(prop), "ILP32"), JobOptions(engine="bmc"), Deadline.after(10))
        assert v.status == Status.TRUE, (prop, v.reason)
