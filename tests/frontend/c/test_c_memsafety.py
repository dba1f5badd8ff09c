"""Bounds checking for valid-memsafety: the front-end's `valid-deref` assertions on array indices, pointer
dereferences and struct field arrays (safe programs TRUE, unsafe ones FALSE with a replayed counterexample that
ends at the assertion), NULL and dangling pointers, and what stays UNKNOWN. The unreach-call lowering of the
same programs carries none of these assertions (it presupposes valid accesses)."""
from __future__ import annotations

import random

import pytest

from looprover.engines import get_engine
from looprover.engines.base import Run, Task, run_engine
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program import interp
from looprover.program.cfa import Assert
from looprover.properties import UNMODELLED, Property
from looprover.verdict import Status

MEMSAFETY = Property("valid-memsafety")
HEAD = "extern int __VERIFIER_nondet_int(void);\n"

# name -> (program, expected verdict): an in-bounds and an out-of-bounds access through an index, a pointer
# (arithmetic, then a dereference) and a struct field array; NULL and dangling pointers.
CASES = {
    "index_safe": ("int a[4];\nint main(void) { int i = __VERIFIER_nondet_int();\n"
                   "  if (i >= 0 && i < 4) { a[i] = 1; return a[i]; }\n  return 0; }\n", True),
    "index_unsafe": ("int a[4];\nint main(void) { int i = __VERIFIER_nondet_int();\n"
                     "  if (i >= 0 && i <= 4) { a[i] = 1; }\n  return 0; }\n", False),
    "index_read_unsafe": ("int main(void) { int a[4] = {0}; int i = __VERIFIER_nondet_int();\n"
                          "  if (i >= -1 && i < 4) return a[i];\n  return 0; }\n", False),
    "pointer_safe": ("int main(void) { char buf[5]; char *p = buf; int k;\n"
                     "  for (k = 0; k < 5; k++) *p++ = 'a';\n  return buf[4]; }\n", True),
    "pointer_unsafe": ("int main(void) { char buf[5]; char *p = buf; int k;\n"
                       "  for (k = 0; k <= 5; k++) *p++ = 'a';\n  return buf[4]; }\n", False),
    "pointer_param_unsafe": ("int get(int *p, int k) { return p[k]; }\nint a[3];\n"
                             "int main(void) { int n = __VERIFIER_nondet_int(); if (n < 0 || n > 3) return 0;\n"
                             "  return get(a + 1, n - 1) + get(a, n); }\n", False),
    "one_past_safe": ("int a[4];\nint main(void) { int *end = &a[4]; int *p = a; int s = 0;\n"
                      "  while (p != end) { s += *p; p++; }\n  return s; }\n", True),
    "struct_field_safe": ("struct S { int f[3]; int g; };\nint main(void) { struct S s; s.g = 0;\n"
                          "  int i = __VERIFIER_nondet_int();\n  if (i >= 0 && i < 3) s.f[i] = 2;\n"
                          "  return s.g; }\n", True),
    "struct_field_unsafe": ("struct S { int f[3]; int g; };\nint main(void) { struct S s; s.g = 0;\n"
                            "  int i = __VERIFIER_nondet_int();\n  if (i >= 0 && i <= 3) s.f[i] = 2;\n"
                            "  return s.g; }\n", False),
    "struct_pointer_unsafe": ("struct S { int f[3]; int g; };\nstruct S t[2];\n"
                              "int main(void) { struct S *q = t; int i = __VERIFIER_nondet_int();\n"
                              "  if (i >= 0 && i <= 2) q[i].g = 1;\n  return 0; }\n", False),
    "null_unsafe": ("int main(void) { int x = 1; int *p = 0;\n  if (__VERIFIER_nondet_int()) p = &x;\n"
                    "  return *p; }\n", False),
    "null_safe": ("int main(void) { int x = 1; int *p = 0;\n  if (__VERIFIER_nondet_int()) p = &x;\n"
                  "  if (p) return *p;\n  return 0; }\n", True),
    "dangling_unsafe": ("int *f(void) { int x = 1; return &x; }\nint main(void) { int *p = f();\n"
                        "  return *p; }\n", False),
    "block_safe": ("int main(void) { int s = 0; int k;\n  for (k = 0; k < 3; k++) {\n"
                   "    int buf[2]; int *q = buf; q[1] = k; s += *q + buf[1]; }\n  return s; }\n", True),
    "block_dangling_unsafe": ("int main(void) { int *p = 0;\n  if (__VERIFIER_nondet_int()) { int x = 1; p = &x; }\n"
                              "  else { int y = 2; p = &y; }\n  return *p; }\n", False),
    "break_dangling_unsafe": ("int main(void) { int *p = 0;\n  while (1) { int x = 1; p = &x;\n"
                              "    if (__VERIFIER_nondet_int()) break; }\n  return *p; }\n", False),
    "short_circuit_safe": ("int a[4];\nint main(void) { int i = __VERIFIER_nondet_int();\n"
                           "  if (i >= 0 && i < 4 && a[i] == 0) return 1;\n"
                           "  int r = (i < 4 && i >= 0) ? a[i] : 0;\n  return r || (i >= 0 && i < 4 && a[i]); }\n",
                           True),
    "short_circuit_unsafe": ("int a[4];\nint main(void) { int i = __VERIFIER_nondet_int();\n"
                             "  return i >= 0 && i <= 4 && a[i] == 0; }\n", False),
    "scalar_offset_unsafe": ("int main(void) { int x = 1; int *p = &x;\n"
                             "  if (__VERIFIER_nondet_int()) p++;\n  return *p; }\n", False),
    # a pointer into a struct's member array is bounded by the member (C11 6.5.6p8), not by the struct
    "member_array_safe": ("struct d { int n; char name[4]; int m; };\nint main(void) { struct d v; char *s = v.name;\n"
                          "  for (int i = 0; i < 4; i++) s[i] = 0;\n  return v.name[3]; }\n", True),
    # the member's object dies with its struct
    "member_dangling_unsafe": ("struct d { int n; char name[4]; };\nchar *f(void) { struct d v; v.name[0] = 1;\n"
                               "  return v.name; }\nint main(void) { char *s = f();\n  return s[0]; }\n", False),
    "member_live_safe": ("struct d { int n; char name[4]; };\nint g(char *s) { return s[1]; }\n"
                         "int f(void) { struct d v; v.name[1] = 1;\n  return g(v.name); }\n"
                         "int main(void) { return f() + f(); }\n", True),
}


# string literals are read-only char arrays, and char pointers convert to and from void* (the conversions under
# valid-memsafety only; the unreach-call lowering refuses them)
LITERALS = {
    "literal_safe": ("int len(const char *s) { int i = 0; while (s[i] != 0) i++; return i; }\n"
                     "int main(void) { char *p = \"abc\"; int n = len(p); int k = __VERIFIER_nondet_int();\n"
                     "  if (k >= 0 && k <= n) return p[k];\n  return \"xy\"[1]; }\n", True),
    "literal_unsafe": ("int main(void) { char *p = \"abc\"; int k = __VERIFIER_nondet_int();\n"
                       "  if (k >= 0 && k <= 4) return p[k];\n  return 0; }\n", False),
    "literal_write_unsafe": ("int main(void) { char *p = \"abc\";\n  if (__VERIFIER_nondet_int()) p[1] = 0;\n"
                             "  return 0; }\n", False),
}


# char* -> void* -> unsigned char* (memcpy-style): byte offsets, values converted between character types;
# the NULL dereference is reached only if the copy got a value wrong
COPY = ("void *cpy(void *dest, const void *src, int n) {\n  int i; unsigned char *s = (unsigned char *)src;\n"
        "  unsigned char *d = (unsigned char *)dest;\n  for (i = n - 1; i >= 0; i--) d[i] = s[i];\n"
        "  return dest; }\n"
        "int main(void) { char a[4]; char b[6]; int k;\n  for (k = 0; k < 6; k++) b[k] = -k;\n"
        "  int n = __VERIFIER_nondet_int();\n  if (n < 0 || n > LIMIT) return 0;\n  cpy(a, b, n);\n"
        "  if (n == 4 && a[3] != -3) { int *z = 0; return *z; }\n  return 0; }\n")
LITERALS["copy_safe"] = (COPY.replace("LIMIT", "4"), True)
LITERALS["copy_unsafe"] = (COPY.replace("LIMIT", "5"), False)


def _load(tmp_path, name: str, memsafety: bool = True):
    f = tmp_path / f"{name}.c"
    f.write_text(HEAD + {**CASES, **LITERALS}[name][0])
    return load_c_program(f, memsafety=memsafety)


def _verify(program, engine: str = "bmc", timeout: float = 30):
    return run_engine(get_engine(engine), program, Task(MEMSAFETY, "c", "ILP32"), Run.with_timeout(timeout))


@pytest.mark.parametrize("name", sorted(CASES) + sorted(LITERALS))
def test_bmc_decides_each_case(tmp_path, name):
    program = _load(tmp_path, name)
    expected = {**CASES, **LITERALS}[name][1]
    v = _verify(program)
    assert v.status == (Status.TRUE if expected else Status.FALSE), (name, v.reason)
    if not expected:
        cex = v.evidence
        assert cex.validated
        last = [s for s in cex.steps[-1].edge.stmts if isinstance(s, Assert) and s.prop not in UNMODELLED]
        assert last and {s.prop for s in last} == {"valid-deref"}
        assert any(s.src is not None and s.src.line == cex.violated_at.line for s in last)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unreach_call_lowering_has_no_bounds_assertions(tmp_path, name):
    program = _load(tmp_path, name, memsafety=False)
    assert all(s.prop == "unreach-call" or s.prop in UNMODELLED for _, s in program.assertions())
    assert {s.prop for _, s in _load(tmp_path, name).assertions()} - set(UNMODELLED) == {"valid-deref"}


def test_string_literals_are_read_only_objects_under_unreach_call_too(tmp_path):
    """Without valid-memsafety a literal is an object as well; writing into one is undefined behaviour, so the
    run that writes is not followed (the others are)."""
    program = _load(tmp_path, "literal_write_unsafe", memsafety=False)
    assert not program.assertions()
    outcomes = {interp.run(program, interp.InputOracle(program, [k])).outcome for k in (0, 1)}
    assert outcomes == {"exit", "blocked"}, outcomes


def test_forming_a_pointer_is_not_an_access(tmp_path):
    """`&a[4]` (one past the end) and `&*p` check nothing; only reads and writes do."""
    program = _load(tmp_path, "one_past_safe")
    assert [s.src.line for _, s in program.assertions()] == [4]    # `s += *p` only
    assert _verify(program).status == Status.TRUE


RANDOM = HEAD + r"""
struct S { int f[3]; int g; };
int a[4]; struct S s; int r;
int main(void) {
  int i = __VERIFIER_nondet_int(), j = __VERIFIER_nondet_int(), k = __VERIFIER_nondet_int();
  int *p = a + 1;
  a[i] = 7;
  r = *(p + j);
  s.f[k] = r;
  return 0;
}
"""


def test_a_run_fails_exactly_at_the_first_out_of_bounds_access(tmp_path):
    """Random concrete runs of the instrumented program: the run violates an assertion iff some access is out
    of bounds, and then at the first one (the accesses before it happen, the ones after do not)."""
    f = tmp_path / "random.c"
    f.write_text(RANDOM)
    program = load_c_program(f, memsafety=True)
    lines = RANDOM.splitlines()
    at = {what: 1 + next(n for n, text in enumerate(lines) if text.strip().startswith(what))
          for what in ("a[i]", "r = *", "s.f[k]")}
    rng = random.Random(11)
    for _ in range(200):
        i, j, k = (rng.randint(-3, 6) for _ in range(3))
        res = interp.run(program, interp.InputOracle(program, [i, j, k]))
        bad = [at[w] for w, ok in (("a[i]", 0 <= i < 4), ("r = *", 0 <= j + 1 < 4), ("s.f[k]", 0 <= k < 3))
               if not ok]
        if bad:
            assert res.outcome == "violation", (i, j, k, res.outcome)
            stmt = res.violated
            assert stmt.prop == "valid-deref" and stmt.src.line == bad[0], (i, j, k)
        else:
            assert res.outcome == "exit", (i, j, k, res.outcome)
            assert res.state["r"] == 0 and res.state["a"].get(i) == 7


UNSUPPORTED = {   # what stays UNKNOWN under valid-memsafety: (program, words of the reason, line)
    # an allocation used as void * and converted to two types stays chars, which neither may read
    "heap": ("void *malloc(unsigned long);\nint main(void) {\n  void *q = malloc(8);\n  int *a = q; short *b = q;\n"
             "  return *a + *b; }\n", "read as pointing to i32 that may point into malloc", 4),
    "for_init": ("int main(void) { int *p = 0;\n  for (int k = 0; k < 2; k++) {\n    p = &k; }\n"
                 "  return *p; }\n", "outside a block", 2),
    "goto": ("int main(void) { int *p = 0;\n  { int x = 1; p = &x;\n    goto out; }\n  { out:\n  return *p; } }\n",
             "goto", 3),
    "reach": ("void reach_error(void);\nint main(void) {\n  reach_error();\n  return 0; }\n", "reach_error", 3),
    # a member of an element of a struct array, or of a struct reached through a pointer, has no object
    "element_member": ("struct d { int n; char name[4]; };\nint main(void) { struct d v[2];\n"
                       "  char *s = v[1].name;\n  return s[0]; }\n", "array member of a struct", 3),
    "pointer_union_member": ("union d { int n; char name[4]; };\nint main(void) { union d v; union d *p = &v;\n"
                             "  int *q = &p->n;\n  return *q; }\n", "address of a union member", 3),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_under_memsafety_names_construct_and_place(tmp_path, name):
    text, words, line = UNSUPPORTED[name]
    f = tmp_path / f"{name}.c"
    f.write_text(text)
    with pytest.raises(UnsupportedError) as e:
        load_c_program(f, memsafety=True)
    assert words in str(e.value) and f"{name}.c:{line}" in str(e.value)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["kinduction", "labmc", "accel", "tpa", "multiloop", "spacer"])
def test_every_safety_engine_is_never_wrong_on_bounds(tmp_path, engine):
    """The other engines check the valid-deref assertions like any other (TRUE/FALSE or UNKNOWN, never
    wrong); `test_bmc_decides_each_case` requires the verdicts."""
    for name in ("pointer_safe", "pointer_unsafe", "index_unsafe", "struct_field_safe"):
        v = _verify(_load(tmp_path, name), engine, timeout=10)
        expected = Status.TRUE if CASES[name][1] else Status.FALSE
        assert v.status in (expected, Status.UNKNOWN), (engine, name, v.reason)
        if v.status == Status.FALSE:
            assert v.evidence.validated


def test_a_dereference_before_the_declaration_checks_liveness(tmp_path):
    """On a loop's way back, `*p` is lowered before `f`'s local `s` is declared: its liveness flag exists from
    the start, so the access to the dead `s` is a violation (it was TRUE)."""
    f = tmp_path / "back.c"
    f.write_text("int *p; int r;\nvoid f(void) { int s; s = 1; p = &s; }\n"
                 "int main(void) { for (int i = 0; i < 2; i++) { if (i > 0) r = *p; f(); }\n  return r; }\n")
    v = _verify(load_c_program(f, memsafety=True))
    assert v.status == Status.FALSE and v.evidence.validated, v.reason
