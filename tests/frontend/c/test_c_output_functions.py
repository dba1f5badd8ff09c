"""printf and the other output functions (`frontend/c/output_functions.py`): what they read is checked under
valid-memsafety, what they return is what C allows (so both answers stand), and what the model cannot follow is
refused with the place."""
from __future__ import annotations

import pytest

from helpers.c_verdicts import body_verdict
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program.expr import ArrayType

HEAD = "#include <stdio.h>\nextern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n"

# name -> (main's body, property, expected: T, F or F(valid-deref))
CASES = {
    "prints_terminated": ("char b[4] = {'a', 'b', 'c', 0}; printf(\"%d %s|%5.2s\\n\", 1, b, b); puts(b);\n"
                          "fputs(b, stderr); fprintf(stdout, \"%s\", b); putchar(b[0]); fflush(stdout);",
                          "valid-memsafety", "T"),
    "prints_unterminated": ("char b[3] = {'a', 'b', 'c'}; printf(\"%s\\n\", b);", "valid-memsafety",
                            "F(valid-deref)"),
    "puts_unterminated": ("char b[3] = {'a', 'b', 'c'}; if (__VERIFIER_nondet_int()) puts(b);", "valid-memsafety",
                          "F(valid-deref)"),
    "precision_within": ("char b[3] = {'a', 'b', 'c'}; printf(\"%.3s\", b);", "valid-memsafety", "T"),
    # `%.*s`: the precision is the argument before the string; a negative one is none
    "star_precision_within": ("char b[3] = {'a', 'b', 'c'}; int n = __VERIFIER_nondet_int();"
                              " if (n >= 0 && n <= 3) printf(\"%-4.*s|\", n, b);", "valid-memsafety", "T"),
    "star_precision_past": ("char b[3] = {'a', 'b', 'c'}; int n = __VERIFIER_nondet_int();"
                            " if (n >= 0 && n <= 4) printf(\"%.*s\", n, b);", "valid-memsafety", "F(valid-deref)"),
    "star_precision_negative": ("char b[3] = {'a', 'b', 'c'}; printf(\"%.*s\", -1, b);", "valid-memsafety",
                                "F(valid-deref)"),
    "precision_beyond": ("char b[3] = {'a', 'b', 'c'}; printf(\"%.4s\", b);", "valid-memsafety", "F(valid-deref)"),
    "count_of_a_fixed_format": ("int r = printf(\"ab%%%3c\\n\", 'x'); if (r >= 0 && r != 7) reach_error();",
                                "unreach-call", "T"),
    "count_reached": ("int r = printf(\"ab\"); if (r == 2) reach_error();", "unreach-call", "F"),
    "output_error": ("if (puts(\"ab\") == EOF) reach_error();", "unreach-call", "F"),
    "putchar_result": ("int r = putchar(300); if (r != 44 && r != EOF) reach_error();", "unreach-call", "T"),
    # printf stops at the format's first NUL: it neither counts nor reads what follows
    "count_stops_at_nul": ("int r = printf(\"ab\\0cd\"); if (r >= 0 && r != 2) reach_error();", "unreach-call",
                           "T"),
    "reads_stop_at_nul": ("char b[3] = {'a', 'b', 'c'}; printf(\"x\\0%s\\n\", b);", "valid-memsafety", "T"),
    # glibc's %m takes no argument: the %s after it reads b
    "errno_message": ("char b[3] = {'a', 'b', 'c'}; printf(\"%m: %s\\n\", b, \"x\");", "valid-memsafety",
                      "F(valid-deref)"),
    "arguments_evaluated": ("int x = 0; printf(\"%d\", x++); if (x != 1) reach_error();", "unreach-call", "T"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_verdicts(tmp_path, name):
    body, prop, want = CASES[name]
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop)
    assert got == want, (name, verdict.reason)


def test_printing_literals_makes_no_arrays(tmp_path):
    path = tmp_path / "hello.c"
    path.write_text(HEAD + "int main(void) { int i; for (i = 0; i < 3; i++) printf(\"%d: %s\\n\", i, \"hi\");\n"
                    "  puts(\"done\"); return 0; }\n")
    program = load_c_program(path)
    assert not any(isinstance(info.var.type, ArrayType) for info in program.variables.values())


@pytest.mark.parametrize("body, memsafety, what", [
    ("int x; printf(\"%n\", &x);", False, "%n"),
    ("printf(\"%d %d\", 1);", False, "more conversions than arguments"),
    ("int r = printf(\"%d\", 5); return r;", False, "its count depends on the values"),
    ("char b[2] = {0, 0}; char *f = b; printf(f, b);", True, "not a string literal and pointer arguments"),
    ("char b[2] = {0, 0}; printf(\"%.*s\", \"1\", b);", True, "precision is not an int"),
    ("int b[2] = {0, 0}; printf(\"%s\", b);", True, "%s of a i32"),
    ("int x = 5; const char *f = \"%n\"; printf(f, &x);", False, "a %n in it would write through one"),
    ("int x = 5; printf(\"ab%1$n\", &x);", False, "positional arguments"),
    ("char b[2] = {0, 0}; printf(\"%1$s\", b);", True, "positional arguments"),
    ("int w[2] = {65, 0}; printf(\"%S\", w);", True, "%S"),
    ("printf(\"%.-1s\", \"a\");", False, "the conversion"),
])
def test_what_is_not_modelled_is_refused(tmp_path, body, memsafety, what):
    path = tmp_path / "refused.c"
    path.write_text(f"{HEAD}int main(void) {{ {body} return 0; }}\n")
    with pytest.raises(UnsupportedError, match=what) as exc:
        load_c_program(path, memsafety=memsafety)
    assert exc.value.where is not None and exc.value.where.line == 4
