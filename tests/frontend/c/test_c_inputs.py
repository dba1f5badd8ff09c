"""Bad inputs and unsupported constructs: InputError / UnsupportedError with a location, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from looprover.errors import InputError, UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program import interp

PROGRAMS = Path(__file__).parent / "programs"


def test_syntax_error_is_input_error_with_line():
    with pytest.raises(InputError) as ei:
        load_c_program(PROGRAMS / "syntax_error.c")
    msg = str(ei.value)
    assert "syntax_error.c:2" in msg and "expected ';'" in msg


def test_missing_include_is_input_error(gcc):
    with pytest.raises(InputError) as ei:
        load_c_program(PROGRAMS / "missing_include.c")
    assert "does_not_exist.h" in str(ei.value)


def test_empty_missing_and_mainless_files():
    with pytest.raises(InputError, match="empty"):
        load_c_program(PROGRAMS / "empty.c")
    with pytest.raises(InputError, match="no such file"):
        load_c_program(PROGRAMS / "nope.c")
    with pytest.raises(InputError, match="main"):
        load_c_program(PROGRAMS / "no_main.c")
    with pytest.raises(InputError, match="data model"):
        load_c_program(PROGRAMS / "counter_unsafe.c", "LLP64")


@pytest.mark.parametrize("name", ["prog.txt", "prog"])
def test_c_in_a_file_with_another_suffix_is_c(tmp_path, name):
    """Any input that is not .i, .smt2 or .yml is C: gcc must be told so, or it hands prog.txt to the linker
    and preprocesses nothing ("no definition of main()")."""
    f = tmp_path / name
    f.write_text("#define N 3\nint r;\nint main(void) { r = N; return 0; }\n")
    p = load_c_program(f)
    assert interp.run(p, interp.Oracle()).state["r"] == 3


def test_binary_file_is_refused_before_the_compiler(tmp_path):
    """An executable named x.c: one short error, not the compiler's complaints about each of its bytes."""
    f = tmp_path / "x.c"
    f.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 2000)
    with pytest.raises(InputError) as ei:
        load_c_program(f)
    assert str(ei.value) == f"{f}: binary file (NUL byte at offset 7), not C source"


def test_compiler_errors_are_few_and_short(tmp_path, gcc):
    """gcc echoes the offending source line after each error: the message keeps the diagnostics only, at most
    five, each cut to a readable length."""
    f = tmp_path / "many.c"
    f.write_text("\n".join("#error " + "e" * 2000 for _ in range(500)) + "\n")
    with pytest.raises(InputError) as ei:
        load_c_program(f)
    msg = str(ei.value)
    assert len(msg) < 1200 and msg.count("error: #error") == 5 and msg.endswith("(and 495 more)")
    assert "many.c:1:2: error: #error eee" in msg and "|" not in msg
    g = tmp_path / "long.c"
    g.write_text("\n".join(f"int x{i} = " + "y" * 2000 + ";" for i in range(500)) + "\n")
    with pytest.raises(InputError) as ei:
        load_c_program(g)
    assert len(str(ei.value)) < 1200 and "long.c:1: error: use of undeclared identifier" in str(ei.value)


@pytest.mark.parametrize("name, construct, line", [
    ("uses_float.c", "floating-point", 4),
    ("recursion.c", "recursion ('fib')", 3),
    ("uses_realloc.c", "realloc", 4),
    ("function_pointer.c", "function pointer", 3),
    ("uses_usleep.c", "undefined function 'usleep'", 4),
])
def test_unsupported_constructs_name_construct_and_line(name, construct, line):
    with pytest.raises(UnsupportedError) as ei:
        load_c_program(PROGRAMS / name)
    err = ei.value
    assert construct in err.construct
    assert err.where is not None and err.where.line == line and err.where.file.endswith(name)


UNSUPPORTED_SNIPPETS = [
    ("struct s { int a : 3; }; int main(void) { struct s x; x.a = 1; return x.a; }", "bit-field"),
    ("int main(void) { int x = 0; __asm__(\"nop\"); return x; }", "inline assembly"),
    ("int main(void) { int x; long p = (long)&x; return p != 0; }", "pointer to an integer"),
    ("int main(void) { int *p = (int *)1234; return *p; }", "integer to a pointer"),
    ("int main(void) { int x; char *p = (char *)&x; return *p; }", "pointer conversion"),
    ("int main(void) { int x; void *v = &x; short *p = v; return *p; }", "may point into x, of i32 elements"),
    ("extern int __VERIFIER_nondet_int(void); int main(void) { int n = __VERIFIER_nondet_int();"
     " int a[n][n]; unsigned s = sizeof(a); return s == 0; }", "sizeof of a variable-length array"),
    ("int f(int n, ...) { return n; } int main(void) { return f(1, 2); }", "variadic"),
    ("extern int *__VERIFIER_nondet_pointer(void); int main(void) { int *p = __VERIFIER_nondet_pointer();"
     " return p != 0; }", "__VERIFIER_nondet_pointer"),
    ("extern int ext; int g; int main(void) { g = ext; return 0; }", "extern variable 'ext'"),
    ("int main(int argc, char **argv, char **envp) { return envp[0][0]; }", "main's pointer parameter envp"),
    ("int main(void) { int x = 0; void *l = &&lab; goto *l; lab: return x; }", "address of label"),
    ("struct s { int a; }; int main(void) { struct s v[2]; int *p = &v[1].a; *p = 1; return v[1].a; }",
     "struct member"),
    ("int main(void) { int big = 1e30; return big; }", "floating-point constant 1e+30 out of the range of 'int'"),
    ("int main(void) { unsigned u = -1.0; return u; }", "out of the range of 'unsigned int'"),
    ("extern int __VERIFIER_nondet_int(void); int g; int main(void) { int n = __VERIFIER_nondet_int();"
     " g = (int)(n * 2.5); return g; }", "floating-point value converted to an integer"),
]


@pytest.mark.parametrize("src, construct", UNSUPPORTED_SNIPPETS)
def test_unsupported_snippets(tmp_path, src, construct):
    f = tmp_path / "u.c"
    f.write_text(src + "\n")
    with pytest.raises(UnsupportedError) as ei:
        load_c_program(f)
    assert construct in str(ei.value)
    assert ei.value.where is not None


def test_sv_header_program_with_defined_reach_error_and_assert():
    p = load_c_program(PROGRAMS / "counter_unsafe.c")
    assert len(p.assertions()) == 1 and p.properties() == {"unreach-call"}
    assert interp.run(p, interp.InputOracle(p, [3])).outcome == "exit"
    assert interp.run(p, interp.InputOracle(p, [11])).outcome == "blocked"
    bad = interp.run(p, interp.InputOracle(p, [5]))
    # reported at the __VERIFIER_assert call, not at the reach_error() call in its body (in the header)
    assert bad.outcome == "violation" and bad.violated.src.line == 8
    assert bad.violated.src.file.endswith("counter_unsafe.c")


def test_only_verifier_assert_reports_at_its_call(tmp_path):
    """__VERIFIER_assert is SV-COMP's assertion, so its whole body takes the call's line; any other function's
    reach_error() keeps its own line (it may be one of several in that function)."""
    f = tmp_path / "calls.c"
    f.write_text("extern void reach_error(void);\n"
                 "void __VERIFIER_assert(int c) {\n  if (!c) {\n    reach_error();\n  }\n}\n"
                 "void check(int c) {\n  if (!c) reach_error();\n}\n"
                 "extern int __VERIFIER_nondet_int(void);\n"
                 "int main(void) {\n  int x = __VERIFIER_nondet_int();\n"
                 "  __VERIFIER_assert(x != 1);\n  check(x != 2);\n  return 0;\n}\n")
    p = load_c_program(f)
    assert sorted(a.src.line for _, a in p.assertions()) == [8, 13]
    assert interp.run(p, interp.InputOracle(p, [1])).violated.src.line == 13
    assert interp.run(p, interp.InputOracle(p, [2])).violated.src.line == 8


@pytest.mark.parametrize("dm", ["ILP32", "LP64"])
def test_system_headers_follow_the_data_model(gcc, dm):
    p = load_c_program(PROGRAMS / "zilu_style.c", dm)
    assert str(p.var("big").type) == ("i32" if dm == "ILP32" else "i64")
    res = interp.run(p, interp.InputOracle(p, [5]))
    assert res.outcome == "exit"
    assert res.state["big"] == (2**31 - 1 if dm == "ILP32" else 2**63 - 1)


def test_preprocessed_file_locations_are_physical(tmp_path):
    f = tmp_path / "pre.i"
    f.write_text('# 1 "orig.c"\n# 1 "<built-in>"\n# 1 "orig.c"\nint main(void) {\n  double d = 1.0;\n'
                 '  return 0;\n}\n')
    with pytest.raises(UnsupportedError) as ei:
        load_c_program(f)
    assert ei.value.where.file == str(f) and ei.value.where.line == 5


def test_deeply_nested_expressions_do_not_crash(tmp_path):
    """Generated code nests deeper than clang's default bracket limit (256) and than libclang's 8 MB parser
    thread allows (it segfaulted); gcc accepts it, so must we."""
    f = tmp_path / "deep.c"
    n = 20000
    f.write_text("int r; int main(void) { int a = 1; r = " + "(" * n + "a + 1" + ")" * n + "; return 0; }\n")
    p = load_c_program(f)
    assert interp.run(p, interp.Oracle()).state["r"] == 2
