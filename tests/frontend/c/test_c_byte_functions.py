"""memset, memcpy, memmove, memcmp and memchr (`frontend/c/byte_functions.py`): the same results as glibc on concrete inputs (gcc
cross-check), their accesses checked under valid-memsafety, a count of part of an element UNKNOWN naming it, and
what is not modelled refused."""
from __future__ import annotations

import pytest

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.properties import UNMODELLED_BYTES

BYTES = r"""
#include <string.h>
extern int __VERIFIER_nondet_int(void);
struct s { int x; unsigned char c; short v[3]; _Bool b; long l; };
struct z { int x; int *p; } zs;
int a[6], b[6], m[2][3], r_s;
signed char sc[5];
unsigned short us[4];
struct s t, u;
int one;
int main(void) {
  int k = __VERIFIER_nondet_int() & 7, fill = __VERIFIER_nondet_int(), from = __VERIFIER_nondet_int() & 3;
  for (int i = 0; i < 6; i++) { a[i] = __VERIFIER_nondet_int(); b[i] = i * 11; }
  if (k > 6) k = 6;
  memset(a, fill, k * sizeof(int));
  memset(sc, fill, sizeof sc - 1);
  memset(us, fill, 3 * sizeof(unsigned short));
  memset(m, fill, sizeof m);
  memset(&t, fill, sizeof t);
  t.b = fill & 1;
  zs.p = &one;
  memset(&zs, 0, sizeof zs);
  memcpy(b + 1, a + (k & 1), (size_t)(5 - (k & 1)) * sizeof(int));
  memmove(a + from, a, (6 - from) * sizeof(int));
  memmove(b, b + from, (6 - from) * sizeof(int));
  memcpy(&u, &t, sizeof u);
  r_s = t.x + t.c + t.v[2] + t.b + (int)t.l + (zs.p == 0) + u.v[1];
  return 0;
}
"""


def test_byte_functions_agree_with_glibc(gcc, tmp_path):
    inputs = [[k, fill, frm] + [i * 37 - 100 for i in range(6)]
              for k, fill, frm in [(0, 0, 0), (3, -1, 1), (6, 1, 2), (7, 300, 3), (5, -129, 0), (1, 0x7f, 2)]]
    crosscheck(gcc, tmp_path, BYTES, inputs, ["a", "b", "m", "sc", "us", "r_s"], ("LP64", "ILP32"))


SCANS = r"""
#include <string.h>
extern int __VERIFIER_nondet_int(void);
int r_cmp, r_chr;
int sign(int x) { return (x > 0) - (x < 0); }
int main(void) {
  unsigned char a[6], b[6];
  for (int i = 0; i < 6; i++) { a[i] = (unsigned char)(__VERIFIER_nondet_int() & 3) * 100; b[i] = (unsigned char)(__VERIFIER_nondet_int() & 3) * 100; }
  int n = __VERIFIER_nondet_int() & 7, c = __VERIFIER_nondet_int();
  if (n > 6) n = 6;
  r_cmp = sign(memcmp(a, b, n)) + 3 * sign(memcmp(b, a, 6)) + 9 * sign(memcmp(a, a, n));
  unsigned char *p = memchr(a, c, n), *q = memchr(b, 200, 6);
  r_chr = (p ? (int)(p - a) : -1) + 10 * (q ? (int)(q - b) : -1);
  return 0;
}
"""


def test_memcmp_and_memchr_agree_with_glibc(gcc, tmp_path):
    """Bytes above 127 too (compared as unsigned char), counts short of and up to the arrays' sizes, the sought
    byte given as an int that converts to it (-56 is 200) or to none of the bytes."""
    import random
    rng = random.Random(3)
    inputs = [[rng.randrange(4) for _ in range(12)] + [rng.randrange(8), rng.choice([0, 100, 200, -56, 300, 7])]
              for _ in range(16)]
    crosscheck(gcc, tmp_path, SCANS, inputs, ["r_cmp", "r_chr"], ("LP64", "ILP32"))


HEAD = "#include <string.h>\n#include <stdlib.h>\nextern void reach_error(void);\n" \
       "extern int __VERIFIER_nondet_int(void);\nstruct s { int x; char *p; };\n"

# name -> (main's body, property, expected: T, F, F(valid-deref) or U)
CASES = {
    "set_safe": ("int a[8]; int k = __VERIFIER_nondet_int(); memset(a, 0, sizeof a);\n"
                 "if (k >= 0 && k < 8 && a[k] != 0) reach_error();", "unreach-call", "T"),
    "set_unsafe": ("int a[8]; int k = __VERIFIER_nondet_int(); memset(a, 0, 4 * sizeof(int));\n"
                   "a[4] = 1; if (k >= 0 && k < 8 && a[k] != 0) reach_error();", "unreach-call", "F"),
    "copy_safe": ("int a[4] = {1, 2, 3, 4}, b[4]; memcpy(b, a, sizeof a); if (b[3] != 4) reach_error();",
                  "unreach-call", "T"),
    "copy_unsafe": ("int a[4] = {1, 2, 3, 4}, b[4] = {0}; memcpy(b, a, 3 * sizeof(int)); if (b[3] != 4) reach_error();",
                    "unreach-call", "F"),
    "struct_zeroed": ("struct s v; v.p = \"a\"; memset(&v, 0, sizeof v); if (v.p || v.x) reach_error();",
                      "unreach-call", "T"),
    "set_fits": ("int n = __VERIFIER_nondet_int(); if (n < 1 || n > 64) return 0;\n"
                 "char a[64]; memset(a, 'x', n); a[n - 1] = 0; return a[0];",
                 "valid-memsafety", "T"),
    "set_overflows": ("int a[4]; memset(a, 0, 5 * sizeof(int)); return a[0];", "valid-memsafety", "F(valid-deref)"),
    "copy_overreads": ("int n = __VERIFIER_nondet_int(); if (n < 1 || n > 64) return 0;\n"
                       "char *p = calloc(n, 1); char *q = malloc(n + 1); if (!p || !q) { free(p); free(q); return 0; }\n"
                       "memcpy(q, p, n + 1); free(p); free(q); return 0;", "valid-memsafety", "F(valid-deref)"),
    "move_after_free": ("char *p = malloc(4); if (!p) return 0; free(p); char a[4]; memmove(a, p, 4); return a[0];",
                        "valid-memsafety", "F(valid-deref)"),
    # the value is read once, at the call, though the loop writes what it reads
    "fill_read_once": ("char a[4] = {1, 0, 0, 0}; memset(a, a[0] + 1, sizeof a); if (a[3] != 2) reach_error();",
                       "unreach-call", "T"),
    "fill_read_once_unsafe": ("char a[4] = {1, 0, 0, 0}; memset(a, a[0] + 1, sizeof a); if (a[3] == 2) reach_error();",
                              "unreach-call", "F"),
    "compare_safe": ("char a[4] = \"abc\", b[4] = \"abc\"; b[2] = (char)__VERIFIER_nondet_int();\n"
                     "int r = memcmp(a, b, 4); if ((b[2] == 'c') != (r == 0)) reach_error();\n"
                     "if (b[2] == 'a' && r <= 0) reach_error();", "unreach-call", "T"),
    # only the sign is defined: 1 is one value a difference of 2 may give, not the only one
    "compare_value_unsafe": ("char a[2] = \"c\", b[2] = \"a\"; if (memcmp(a, b, 2) != 2 && memcmp(a, b, 2) != 1)"
                             " return 0; reach_error();", "unreach-call", "F"),
    "compare_overreads": ("char a[4] = \"ab\", b[3] = \"ab\"; return memcmp(a, b, 4);", "valid-memsafety",
                          "F(valid-deref)"),
    # the scan stops at the first difference, inside the shorter array
    "compare_stops_early": ("char a[4] = \"abc\", b[2] = \"x\"; return memcmp(a, b, 4);", "valid-memsafety", "T"),
    "find_safe": ("char a[4] = \"abc\"; char *p = memchr(a, 'c', 4); if (p != a + 2 || memchr(a, 'z', 3))"
                  " reach_error();", "unreach-call", "T"),
    "find_overreads": ("char a[4]; for (int i = 0; i < 4; i++) a[i] = (char)__VERIFIER_nondet_int();\n"
                       "return memchr(a, 'x', 5) != 0;", "valid-memsafety", "F(valid-deref)"),
    # 6 bytes are one int and half of another
    "part_of_an_element": ("int a[4]; memset(a, 0, 6); if (a[0] != 0) reach_error();", "unreach-call", "U"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_byte_function_verdicts(tmp_path, name):
    body, prop, want = CASES[name]
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop)
    assert got == want, (name, verdict.reason)
    if want == "U":
        assert "not a whole number of the elements" in verdict.reason, verdict.reason


def test_a_whole_count_needs_no_assertion(tmp_path):
    """Counts that are multiples of the element size by their form (constants, `n * sizeof`) carry no
    `unmodelled-bytes` assertion; a count of another form does."""
    path = tmp_path / "counts.c"
    path.write_text(HEAD + "int a[8];\nint main(void) { int n = __VERIFIER_nondet_int() & 7;\n"
                    "  memset(a, 0, sizeof a); memset(a, 1, n * sizeof(int)); memcpy(a, a + 4, 16);\n"
                    "  return 0; }\n")
    assert UNMODELLED_BYTES not in load_c_program(path).properties()
    path.write_text(HEAD + "int a[8];\nint main(void) { int n = __VERIFIER_nondet_int() & 31;\n"
                    "  memset(a, 0, n); return 0; }\n")
    assert UNMODELLED_BYTES in load_c_program(path).properties()


@pytest.mark.parametrize("body, what", [
    ("int a[2]; char c[8]; memcpy(a, c, 8);", "memcpy from i8 to i32"),
    ("struct s v; memset(&v, 1, sizeof v);", "holds pointers"),
    # the result is the destination as a void *, which counts its ints (`void_pointers.py`)
    ("int a[2]; short *q = memset(a, 0, sizeof a); return *q;", "read as pointing to i16 that may point into a"),
    ("int a[2], b[2]; return memcmp(a, b, sizeof a);", "memcmp of the bytes of i32"),
    ("short a[2]; return memchr(a, 1, sizeof a) != 0;", "memchr of the bytes of i16"),
])
def test_what_is_not_modelled_is_refused(tmp_path, body, what):
    path = tmp_path / "refused.c"
    path.write_text(f"{HEAD}int main(void) {{ {body} return 0; }}\n")
    with pytest.raises(UnsupportedError, match=what) as exc:
        load_c_program(path)
    assert exc.value.where is not None and exc.value.where.line == 6
