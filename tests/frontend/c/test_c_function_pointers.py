"""Function pointers, designated initialisers and gotos out of blocks whose locals die: each on a safe and an
unsafe program, and what stays outside the model answered UNKNOWN, never TRUE."""
from __future__ import annotations

import pytest

from tests.helpers.c_verdicts import body_verdict

HEAD = "extern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n"

TABLE = HEAD + """
static int inc(int x) { return x + 1; }
static int dec(int x) { return x - 1; }
static int sq(int x) { return x * x; }
struct op { const char *name; int (*f)(int); };
static const struct op ops[] = { {"inc", inc}, {"dec", dec} };
static int g;
static void set(int v) { g = v; }
static long wide(long v) { return v; }
static int (*pick(int k))(int) { return k ? inc : dec; }
static int app(int f(int), int x) { return f(x); }
static __attribute__((noreturn)) void stop(int c) { if (c) reach_error(); for (;;) ; }
"""

CASES = [
    # (name, body, property, expected)
    ("table_safe", "int k = __VERIFIER_nondet_int(), x = __VERIFIER_nondet_int();"
     " if (k < 0 || k > 1 || x < 0 || x > 100) return 0;"
     " int y = ops[k].f(x); if (y < -1 || y > 101) reach_error();", "unreach-call", "T"),
    ("table_unsafe", "int k = __VERIFIER_nondet_int(), x = __VERIFIER_nondet_int();"
     " if (k < 0 || k > 1 || x < 0 || x > 100) return 0;"
     " int y = ops[k].f(x); if (y > 100) reach_error();", "unreach-call", "F"),
    ("deref_call", "int (*h)(int) = &sq; if ((*h)(3) != 9) reach_error();", "unreach-call", "T"),
    ("deref_call_unsafe", "int (*h)(int) = sq; if (h(3) == 9) reach_error();", "unreach-call", "F"),
    # the callee's writes are seen after the call
    ("global_write", "void (*s)(int) = set; s(5); if (g != 5) reach_error();", "unreach-call", "T"),
    ("global_write_unsafe", "void (*s)(int) = set; s(5); if (g == 5) reach_error();", "unreach-call", "F"),
    # a pointer chosen at run time between two functions, compared and reassigned
    ("chosen", "int (*h)(int) = __VERIFIER_nondet_int() ? inc : dec; if (h == inc && h(1) != 2) reach_error();"
     " h = 0; if (h) reach_error();", "unreach-call", "T"),
    # NULL: a violation of memory safety; any other property: undefined behaviour, not followed
    ("null_call", "int (*h)(int) = 0; if (__VERIFIER_nondet_int()) h = inc; h(1);", "valid-memsafety",
     "F(valid-deref)"),
    ("null_call_reach", "int (*h)(int) = 0; h(1); reach_error();", "unreach-call", "T"),
    # returned by a function, given as a parameter declared with function type, noreturn
    ("returned", "if (pick(1)(1) != 2 || pick(0)(1) != 0) reach_error();", "unreach-call", "T"),
    ("parameter", "if (app(inc, 1) != 2) reach_error();", "unreach-call", "T"),
    ("parameter_unsafe", "if (app(sq, 3) == 9) reach_error();", "unreach-call", "F"),
    ("noreturn", "void (*s)(int) = stop; s(__VERIFIER_nondet_int());", "unreach-call", "F"),
    # reach_error through a pointer is reach_error
    ("reach_error", "void (*e)(void) = reach_error; if (__VERIFIER_nondet_int()) e();", "unreach-call", "F"),
    # a call through a pointer of another type (C11 6.3.2.3p8) is outside the model: UNKNOWN, not TRUE
    ("other_type", "int (*h)(int) = (int (*)(int))wide; if (h(1) == 12345) reach_error();", "unreach-call", "U"),
]


@pytest.mark.parametrize("name, body, prop, expected", CASES, ids=[c[0] for c in CASES])
def test_calls_through_function_pointers(tmp_path, name, body, prop, expected):
    got, verdict, _ = body_verdict(tmp_path, name, TABLE, body, prop)
    assert got == expected, verdict


DESIGNATED = HEAD + """
struct s { int a; int b[3]; int (*f)(int); };
static int id(int x) { return x; }
struct s v = { .b = {1, 2}, .a = 3, .f = id };
int arr[5] = { [2] = 7, 8, [0] = 1 };
struct s w = { .b[1] = 5 };
struct t { int c[2]; int d; };
struct t x = { 1, .d = 3 };
"""
DESIGNATED_BODY = ("struct s loc = { .f = id, .b = {4} };"
                   " if (v.a != 3 || v.b[0] != 1 || v.b[1] != 2 || v.b[2] != 0 || v.f(9) != 9) reach_error();"
                   " if (arr[0] != 1 || arr[1] != 0 || arr[2] != 7 || arr[3] != 8 || arr[4] != 0) reach_error();"
                   " if (w.b[1] != 5 || w.b[0] != 0 || w.a != 0) reach_error();"
                   " if (x.c[0] != 1 || x.c[1] != 0 || x.d != 3) reach_error();"
                   " if (loc.a != 0 || loc.b[0] != 4 || loc.b[2] != 0 || loc.f(2) != 2) reach_error();")


@pytest.mark.parametrize("mutation, expected", [(None, "T"), (("arr[3] != 8", "arr[3] != 9"), "F"),
                                                (("x.d != 3", "x.d != 0"), "F"), (("loc.a != 0", "loc.a != 3"), "F")])
def test_designated_initialisers_give_the_values_gcc_gives(tmp_path, mutation, expected):
    """The unmutated program is what gcc runs without failing (the values in its conditions are C's)."""
    body = DESIGNATED_BODY if mutation is None else DESIGNATED_BODY.replace(*mutation)
    got, verdict, _ = body_verdict(tmp_path, "designated", DESIGNATED, body, "unreach-call")
    assert got == expected, verdict


@pytest.mark.parametrize("decl, cond", [
    ("struct Q q = { {1, 2}, 3, .s = {9} };", "q.s.y != 0 || q.s.x != 9 || q.z != 3"),
    ("struct Q q = { .s.y = 5, .s = { 1 } };", "q.s.y != 0"),
    ("int a[2][3] = { [1] = {7, 8, 9}, [1] = {4} };", "a[1][1] != 0 || a[1][0] != 4"),
    ("char s[4] = \"abc\"; struct { char t[4]; } u = { .t = \"abc\", .t = \"x\" };", "u.t[1] != 0"),
])
def test_a_later_designator_replaces_the_whole_sub_object(tmp_path, decl, cond):
    """C11 6.7.9p19: what an earlier item wrote into a sub-object that a later braced item initialises is gone."""
    head = HEAD + "struct P { int x, y; }; struct Q { struct P s; int z; };\n"
    for where in ("local", "global"):
        body = f"{decl} if ({cond}) reach_error();" if where == "local" else f"if ({cond}) reach_error();"
        got, verdict, _ = body_verdict(tmp_path, f"over_{where}", head + (decl + "\n" if where == "global" else ""),
                                       body, "unreach-call")
        assert got == "T", (where, verdict)


def test_reach_error_with_a_body_called_through_a_pointer_is_reached(tmp_path):
    head = ("extern void abort(void);\nextern int __VERIFIER_nondet_int(void);\n"
            "void reach_error(void) { abort(); }\n")
    got, verdict, _ = body_verdict(tmp_path, "reach_body", head, "if (__VERIFIER_nondet_int()) (*reach_error)();",
                                   "unreach-call")
    assert got == "F", verdict


def test_a_designator_chain_followed_by_a_plain_item_is_refused(tmp_path):
    got, verdict, _ = body_verdict(tmp_path, "chain", HEAD + "struct s { int b[3]; int a; };\n"
                                   "struct s w = { .b[1] = 5, 6 };\n", "if (w.a) reach_error();", "unreach-call")
    assert got == "U" and "chain of designators" in verdict.reason


GOTO_OUT = "int *p = 0; { int x = 1; p = &x; if (__VERIFIER_nondet_int()) goto out; x = 2; }\nout:\n"


@pytest.mark.parametrize("tail, expected", [("  return 0;", "T"), ("  return *p;", "F(valid-deref)")])
def test_a_goto_out_of_a_block_ends_its_locals_lives(tmp_path, tail, expected):
    """Frama-C and hand-written error paths (`goto out`) leave blocks with address-taken locals: they die there,
    so a pointer kept to one dangles."""
    path = tmp_path / "goto_out.c"
    path.write_text(HEAD + "int main(void) {\n  " + GOTO_OUT + tail + "\n}\n")
    from tests.helpers.c_verdicts import short_verdict
    got, verdict = short_verdict(path, "valid-memsafety")
    assert got == expected, verdict


@pytest.mark.parametrize("step, words", [("g = g + 1;", "arithmetic on a function pointer"),
                                         ("g++;", "arithmetic on a function pointer"),
                                         ("g -= 1;", "arithmetic on a function pointer"),
                                         ("if (g < dec) reach_error();", "order of function pointers"),
                                         ("if (g - dec) reach_error();", "difference of function pointers")])
def test_arithmetic_and_order_of_function_pointers_are_refused(tmp_path, step, words):
    """GNU C lets them through: the pointer then points into a function's code, or the answer depends on where
    the functions lie (gcc puts inc before dec here, so `g < dec` is true)."""
    got, verdict, _ = body_verdict(tmp_path, "fp_arith", TABLE, f"int (*g)(int) = inc; {step} if (g(1) == 2) "
                                   "reach_error();", "unreach-call")
    assert got == "U" and words in verdict.reason, verdict


def test_a_goto_into_a_block_with_an_address_taken_local_stays_refused(tmp_path):
    body = "int *p = 0; if (__VERIFIER_nondet_int()) goto in; { int x = 1; p = &x;\n in: x = 2; }"
    got, verdict, _ = body_verdict(tmp_path, "goto_in", HEAD, body, "valid-memsafety")
    assert got == "U" and "label inside a block" in verdict.reason


def test_a_call_through_a_table_leaves_the_model_only_where_another_type_can_be_called(tmp_path):
    """The call's assertion against a function of another type names those functions' ids, which drop out where
    the pointer cannot hold them: with `set` (another type) used as a value elsewhere, `ops[k].f(x)` has no such
    assertion left, and with `wide` stored in the table through a cast it keeps one."""
    from looprover.frontend.c import load_c_program
    from looprover.program.model_exits import exits_of
    from looprover.properties import UNMODELLED_CALL

    def exits(entry: str) -> int:
        f = tmp_path / "t.c"
        f.write_text(HEAD + "static int g;\nstatic void set(int v) { g = v; }\n"
                     "static long wide(long v) { return v; }\nstatic int inc(int x) { return x + 1; }\n"
                     "struct op { int (*f)(int); };\n"
                     f"static const struct op ops[] = {{ {{inc}}, {{{entry}}} }};\n"
                     "int main(void) {\n  void (*s)(int) = set; s(1);\n  int k = __VERIFIER_nondet_int();\n"
                     "  if (k < 0 || k > 1) return 0;\n  return ops[k].f(3);\n}\n")
        p = load_c_program(f, memsafety=True)
        return sum(1 for ei, si in exits_of(p) if p.edges[ei].stmts[si].prop == UNMODELLED_CALL)
    assert exits("inc") == 0
    assert exits("(int (*)(int))wide") >= 1
