"""sprintf and snprintf (`frontend/c/format_functions.py`): the characters and counts glibc gives (gcc
cross-check on concrete inputs), their writes checked under valid-memsafety (snprintf's limit respected, sprintf's
overflow found at the call), and what the model does not format refused with the place."""
from __future__ import annotations

import random

import pytest

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program.expr import ArrayType

FORMATS = r"""
#include <stdio.h>
extern int __VERIFIER_nondet_int(void);
extern long __VERIFIER_nondet_long(void);
extern unsigned int __VERIFIER_nondet_uint(void);
int r_a, r_b, r_c, r_d, r_e, r_f;
static int h(const char *s, int n) { int v = n; for (int i = 0; s[i] != 0 && i < 120; i++) v = v * 31 + s[i]; return v; }
int main(void) {
  char b[128], s[8];
  int x = __VERIFIER_nondet_int(); long l = __VERIFIER_nondet_long(); unsigned u = __VERIFIER_nondet_uint();
  int p = __VERIFIER_nondet_int() & 7;
  for (int i = 0; i < 7; i++) s[i] = 'a' + i;
  s[__VERIFIER_nondet_int() & 7] = 0; s[7] = 0;
  r_a = h(b, sprintf(b, "[%d|%5d|%-5d|%05d|%+d|% d|%.3d|%.0d]", x, x, x, x, x, x, x, x));
  r_b = h(b, sprintf(b, "%u %x %X %o %8.4x %-3u|%hhd %hu %ld %-+7.2d", u, u, u, u, u, u, x, x, l, x));
  r_c = h(b, sprintf(b, "<%s|%6s|%-6s|%.2s|%.*s|%c%3c%-2c%%|%4s|%.1s>", s, s, s, s, p, s, 'q', x & 127 ? x & 127 : 1,
                     'z', "ab", "xyz"));
  r_d = h(b, snprintf(b, (unsigned)p, "%d-%s", x, s));
  b[0] = 'k'; b[1] = 0; r_e = h(b, snprintf(b, 0, "%d", x)) + 1000 * snprintf(0, 0, "%ld%s", l, "lit");
  r_f = h(b, snprintf(b, 5 + p, "%s%d%s", "ab", x, s));
  return 0;
}
"""


def test_formatting_agrees_with_glibc(gcc, tmp_path):
    rng = random.Random(3)
    pool = [0, 1, -1, 7, -7, 9, 10, 99, 100, -100, 12345, -98765, 2**31 - 1, -2**31, 255, 65535, 4096]
    longs = pool + [2**63 - 1, -2**63, 10**12, -10**15]
    inputs = [[rng.choice(pool), rng.choice(longs), rng.choice(pool) & 0xFFFFFFFF, rng.randrange(8), rng.randrange(8)]
              for _ in range(30)]
    crosscheck(gcc, tmp_path, FORMATS, inputs, ["r_a", "r_b", "r_c", "r_d", "r_e", "r_f"], ("LP64",))


HEAD = "#include <stdio.h>\nextern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n"

# name -> (main's body, property, expected: T, F or F(valid-deref))
CASES = {
    "value_read_back": ("char b[16]; int x = __VERIFIER_nondet_int(); int r = sprintf(b, \"v=%d;\", x);\n"
                        "if (r < 4 || r > 14 || (x == -5 && (b[2] != '-' || b[3] != '5' || b[4] != ';' || b[5]))) "
                        "reach_error();", "unreach-call", "T"),
    "value_read_back_unsafe": ("char b[16]; int x = __VERIFIER_nondet_int(); sprintf(b, \"%x\", x);\n"
                               "if (x > 0 && b[0] == 'f' && b[1] == 0) reach_error();", "unreach-call", "F"),
    # the longest int is 11 characters: 12 cells hold it, 11 do not
    "int_fits": ("char b[12]; sprintf(b, \"%d\", __VERIFIER_nondet_int());", "valid-memsafety", "T"),
    "int_overflows": ("char b[11]; sprintf(b, \"%d\", __VERIFIER_nondet_int());", "valid-memsafety",
                      "F(valid-deref)"),
    "string_overflows": ("char s[8] = \"abcdefg\", b[8]; sprintf(b, \"<%s\", s);", "valid-memsafety",
                         "F(valid-deref)"),
    "limited_by_size": ("char s[8] = \"abcdefg\", b[4]; int r = snprintf(b, sizeof b, \"<%s>\", s);\n"
                        "if (r != 9 || b[3] != 0) reach_error();", "unreach-call", "T"),
    "limit_within": ("char s[8] = \"abcdefg\", b[4]; snprintf(b, sizeof b, \"%s%d\", s, __VERIFIER_nondet_int());",
                     "valid-memsafety", "T"),
    "limit_too_large": ("char b[4]; snprintf(b, 8, \"%d\", __VERIFIER_nondet_int());", "valid-memsafety",
                        "F(valid-deref)"),
    "size_zero_writes_nothing": ("return snprintf(0, 0, \"%d\", __VERIFIER_nondet_int());", "valid-memsafety", "T"),
    "size_zero_count": ("int r = snprintf(0, 0, \"%d\", __VERIFIER_nondet_int()); if (r < 1 || r > 11) reach_error();",
                        "unreach-call", "T"),
    "unterminated_argument": ("char s[3] = {'a', 'b', 'c'}, b[16]; sprintf(b, \"%s\", s);", "valid-memsafety",
                              "F(valid-deref)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_format_verdicts(tmp_path, name):
    body, prop, want = CASES[name]
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop)
    assert got == want, (name, verdict.reason)


def test_overlapping_copy_is_unknown(tmp_path):
    """sprintf(b, "x%s", b) copies between overlapping objects, which C leaves undefined: no answer."""
    got, verdict, _ = body_verdict(tmp_path, "overlap", HEAD, "char b[8] = \"ab\"; sprintf(b, \"x%s\", b);",
                                   "valid-memsafety")
    assert got == "U" and "%s argument points into the object it writes" in verdict.reason, verdict.reason


def test_literal_arguments_make_no_arrays(tmp_path):
    path = tmp_path / "lit.c"
    path.write_text(HEAD + "int g; int main(void) { char b[8]; sprintf(b, \"%s%d\", \"hi\", 3); g = b[2]; return 0; }\n")
    program = load_c_program(path)
    assert [v for v, info in program.variables.items() if isinstance(info.var.type, ArrayType)] == ["b"]


@pytest.mark.parametrize("body, what", [
    ("char b[8]; char *f = \"%d\"; sprintf(b, f, 1);", "not a string literal"),
    ("char b[8]; sprintf(b, \"%f\", 1.5);", "%f"),
    ("char b[8]; sprintf(b, \"%p\", (void *)b);", "%p"),
    ("char b[8]; int n; sprintf(b, \"%n\", &n);", "%n"),
    ("char b[8]; sprintf(b, \"%#x\", 3);", "the flags"),
    ("char b[8]; sprintf(b, \"%*d\", 3, 4);", "a width"),
    ("char b[8]; sprintf(b, \"%d %d\", 3);", "more conversions than arguments"),
    ("char b[8]; sprintf(b, \"%ld\", 3);", "%ld of a i32 argument"),
    ("char b[8]; sprintf(b, \"%d\", 3L);", "%d of a i64 argument"),
    ("char b[8]; sprintf(b, \"ab%\");", "a format ending"),
    ("sprintf(\"ab\", \"x\");", "into a string literal"),
])
def test_what_is_not_formatted_is_refused(tmp_path, body, what):
    path = tmp_path / "refused.c"
    path.write_text(f"{HEAD}int main(void) {{ {body} return 0; }}\n")
    with pytest.raises(UnsupportedError, match=what) as exc:
        load_c_program(path, "LP64")
    assert exc.value.where is not None and exc.value.where.line == 4
