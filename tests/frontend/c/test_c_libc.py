"""The C library models (`frontend/c/libc_models.py`): the same results as glibc on concrete inputs (gcc
cross-check), bounds checked inside them under valid-memsafety, and a program's own definition kept."""
from __future__ import annotations

import pytest

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict
from looprover.frontend.c import load_c_program

STRINGS = r"""
#include <string.h>
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
int r_len, r_cpy, r_ncpy, r_cat, r_ncat, r_cmp, r_ncmp, r_chr, r_rchr, r_atoi, r_abs, r_spn, r_str;
int sign(int x) { return (x > 0) - (x < 0); }
int main(void) {
  char a[8], b[8], c[16], d[12];
  for (int i = 0; i < 7; i++) { a[i] = (char)(__VERIFIER_nondet_int() & 3) + 'a'; b[i] = (char)(__VERIFIER_nondet_int() & 3) + 'a'; }
  a[__VERIFIER_nondet_int() & 7] = 0; a[7] = 0;
  b[__VERIFIER_nondet_int() & 7] = 0; b[7] = 0;
  r_len = (int)strlen(a) * 10 + (int)strlen(b);
  strcpy(c, a); r_cpy = (int)strlen(c) + c[0];
  strncpy(d, b, 5); d[5] = 0; r_ncpy = (int)strlen(d) + d[4];
  strcat(c, b); r_cat = (int)strlen(c) + c[3];
  strncat(d, a, 3); r_ncat = (int)strlen(d) * 100 + d[(int)strlen(d) / 2];
  r_cmp = sign(strcmp(a, b)) + 3 * sign(strcmp(b, a)) + 9 * sign(strcmp(a, a));
  r_ncmp = sign(strncmp(a, b, 2)) + 3 * sign(strncmp(a, b, 0)) + 9 * sign(strncmp(c, a, strlen(a)));
  char *p = strchr(a, 'b'); r_chr = p ? (int)(p - a) : -1;
  char *q = strrchr(b, 'c'); r_rchr = (q ? (int)(q - b) : -1) + 10 * (strchr(a, 0) == a + strlen(a));
  char num[6] = "  -0";
  num[4] = (char)('0' + (__VERIFIER_nondet_int() & 7)); num[5] = 0;
  r_atoi = atoi(num) + atoi("+12z") * 100;
  r_abs = abs(__VERIFIER_nondet_int() % 1000) + (int)labs(-5L);
  char *m = strpbrk(a, "cd");
  r_spn = (int)strnlen(a, 3) + 10 * (int)strspn(a, "ab") + 100 * (int)strcspn(b, "bc") + 1000 * (m ? (int)(m - a) : 9);
  char *f = strstr(a, b), *g = strstr(c, "ab");
  r_str = (f ? (int)(f - a) : -1) + 10 * (g ? (int)(g - c) : -1) + 100 * (strstr(a, "") == a);
  return 0;
}
"""


def test_string_functions_agree_with_glibc(gcc, tmp_path):
    inputs = [[i * 7 % 5, i % 4, (i * 3) % 4, i % 3, (i * 5) % 4, i, i % 8, i * 3 % 8, i, -i * 37] + [i % 4] * 6
              for i in range(12)]
    crosscheck(gcc, tmp_path, STRINGS, inputs,
               ["r_len", "r_cpy", "r_ncpy", "r_cat", "r_ncat", "r_cmp", "r_ncmp", "r_chr", "r_rchr", "r_atoi",
                "r_abs", "r_spn", "r_str"], ("LP64", "ILP32"))


STRTO = r"""
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
int r_val, r_end, r_uval, r_uend, r_ll, r_big;
int main(void) {
  static const char alpha[] = " -+01789xXafzg\t0";
  static const int bases[8] = {0, 2, 8, 10, 16, 36, 1, 37};
  char s[8], big[24], *e;
  for (int i = 0; i < 7; i++) s[i] = alpha[__VERIFIER_nondet_int() & 15];
  s[7] = 0;
  s[__VERIFIER_nondet_int() & 7] = 0;
  int base = bases[__VERIFIER_nondet_int() & 7];
  e = s; long v = strtol(s, &e, base);
  r_val = (int)(v % 1000003); r_end = (int)(e - s);
  e = s; unsigned long u = strtoul(s, &e, base);
  r_uval = (int)(u % 1000003); r_uend = (int)(e - s);
  r_ll = (int)(strtoll(s, 0, base) % 1000003) + (int)(atol(s) % 1000) * 7;
  big[0] = alpha[__VERIFIER_nondet_int() & 3];
  for (int i = 1; i < 23; i++) big[i] = (__VERIFIER_nondet_int() & 1) ? 'z' : '9';
  big[23] = 0;
  int bb = bases[__VERIFIER_nondet_int() & 7];
  e = big;
  long w = strtol(big, &e, bb);
  r_big = (int)(w % 1000003) + (int)(e - big) * 1000 + (int)(strtoull(big, 0, bb) % 999);
  return 0;
}
"""


def test_strtol_family_agrees_with_glibc(gcc, tmp_path):
    import random
    rng = random.Random(7)
    inputs = [[rng.randrange(16) for _ in range(7)] + [rng.randrange(8), rng.randrange(8), rng.randrange(4)]
              + [rng.randrange(2) for _ in range(22)] + [rng.randrange(8)] for _ in range(40)]
    crosscheck(gcc, tmp_path, STRTO, inputs, ["r_val", "r_end", "r_uval", "r_uend", "r_ll", "r_big"], ("LP64",))


HEAD = "#include <string.h>\n#include <stdlib.h>\nextern void reach_error(void);\n" \
       "extern int __VERIFIER_nondet_int(void);\n"

# name -> (main's body, property, expected: T, F or F(valid-deref))
CASES = {
    "results": ('char a[8]; strcpy(a, "hello"); if (strlen(a) != 5 || atoi(" -42x") != -42) reach_error();',
                "unreach-call", "T"),
    "results_unsafe": ('char a[8]; strcpy(a, "hello"); if (strlen(a) == 5) reach_error();', "unreach-call", "F"),
    "copy_fits": ('char a[6]; strcpy(a, "hello"); return a[4];', "valid-memsafety", "T"),
    "copy_overflows": ('char a[5]; strcpy(a, "hello"); return a[4];', "valid-memsafety", "F(valid-deref)"),
    "scan_unterminated": ("char a[4]; a[0] = 'x'; a[1] = 'y'; a[2] = 'z'; a[3] = 'w'; return (int)strlen(a);",
                          "valid-memsafety", "F(valid-deref)"),
    "bounded_copy": ('char a[4]; strncpy(a, "hello", 4); return a[3];', "valid-memsafety", "T"),
    "strtol": ('char *e; long v = strtol("  -0x1Fz", &e, 0); if (v != -31 || *e != \'z\') reach_error();',
               "unreach-call", "T"),
    "strtol_unsafe": ('char *e; long v = strtol(" 12", &e, 10); if (e[0] == 0) reach_error();', "unreach-call",
                      "F"),
    "strtol_unterminated": ("char a[2]; a[0] = '1'; a[1] = '2'; return (int)strtol(a, 0, 10);", "valid-memsafety",
                            "F(valid-deref)"),
    "strnlen_bounded": ("char a[4]; a[0] = 'x'; a[1] = 'y'; a[2] = 'z'; a[3] = 'w'; return (int)strnlen(a, 4);",
                        "valid-memsafety", "T"),
    "strnlen_past": ("char a[4]; a[0] = 'x'; a[1] = 'y'; a[2] = 'z'; a[3] = 'w'; return (int)strnlen(a, 5);",
                     "valid-memsafety", "F(valid-deref)"),
    "strstr_found": ('char h[8] = "abcabd"; char *p = strstr(h, "abd"); if (p != h + 3 || strstr(h, "x"))'
                     " reach_error();", "unreach-call", "T"),
    "strstr_unsafe": ('char h[8] = "abcabd"; if (strstr(h, "abd") == h + 3) reach_error();', "unreach-call", "F"),
    "strstr_unterminated": ("char n[2]; n[0] = 'a'; n[1] = 'a'; return strstr(\"aaaa\", n) != 0;",
                            "valid-memsafety", "F(valid-deref)"),
    "strspn_sets": ('if (strspn("aab:c", "ab") != 3 || strcspn("xy:z", ":;") != 2 || *strpbrk("k=v", "=") != \'=\')'
                    " reach_error();", "unreach-call", "T"),
    # atoi's value is the digits' for any input string the program builds
    "atoi_of_input": ("char s[3]; s[0] = (char)__VERIFIER_nondet_int(); s[1] = 0; s[2] = 0;\n"
                      "if (s[0] >= '0' && s[0] <= '9' && atoi(s) != s[0] - '0') reach_error();", "unreach-call", "T"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_library_calls(tmp_path, name):
    body, prop, want = CASES[name]
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop)
    assert got == want, (name, verdict.reason)


def test_a_program_s_own_definition_is_kept(tmp_path):
    path = tmp_path / "own.c"
    path.write_text("unsigned long strlen(const char *s) { return 7; }\n"
                    "int main(void) { char a[2] = {0, 0}; return (int)strlen(a); }\n")
    program = load_c_program(path)
    assert not any("looprover-libc" in (src.file or "") for src in program.loc_src.values())


CTYPE = r"""
#include <ctype.h>
int r_class[384], r_lower[384], r_upper[384], r_fn[384], r_tab[384];
int main(void) {
  for (int c = -128; c < 256; c++) {
    int k = c + 128;
    r_class[k] = !!isupper(c) | !!islower(c) << 1 | !!isalpha(c) << 2 | !!isdigit(c) << 3 | !!isxdigit(c) << 4
                 | !!isspace(c) << 5 | !!isprint(c) << 6 | !!isgraph(c) << 7 | !!isblank(c) << 8
                 | !!iscntrl(c) << 9 | !!ispunct(c) << 10 | !!isalnum(c) << 11;
    r_lower[k] = tolower(c);
    r_upper[k] = toupper(c);
    r_fn[k] = !!(isdigit)(c) | !!(isspace)(c) << 1 | !!(ispunct)(c) << 2;
    r_tab[k] = (*__ctype_tolower_loc())[c] * 1000 + (*__ctype_toupper_loc())[c];   /* glibc's inline versions */
  }
  return 0;
}
"""


def test_ctype_agrees_with_glibc(gcc, tmp_path):
    """Every class and case mapping for every argument glibc's tables cover ([-128, 256), more than C allows),
    through the header's macros, as functions, and through the tables glibc's inline versions read."""
    crosscheck(gcc, tmp_path, CTYPE, [[]], ["r_class", "r_lower", "r_upper", "r_fn", "r_tab"], ("LP64", "ILP32"))


@pytest.mark.parametrize("body, prop, want", [
    ("char c = (char)__VERIFIER_nondet_int(); if (isdigit(c) && (c < '0' || c > '9')) reach_error();",
     "unreach-call", "T"),
    ("char c = (char)__VERIFIER_nondet_int(); if (isalnum(c) && !isdigit(c) && c < 'A') reach_error();",
     "unreach-call", "T"),
    ("char c = (char)__VERIFIER_nondet_int(); if (isxdigit(c) && c > 'a') reach_error();", "unreach-call", "F"),
    # only in the function form: the call the models must find
    ("char c = (char)__VERIFIER_nondet_int(); if ((isdigit)(c) && (c < '0' || c > '9')) reach_error();",
     "unreach-call", "T"),
    # C says nonzero: gcc's built-in isdigit gives 1, glibc's function the table's bit
    ("if ((isdigit)('7') == 1) reach_error();", "unreach-call", "F"),
    ("if ((isdigit)('7') == 2048) reach_error();", "unreach-call", "F"),
    ("int c = __VERIFIER_nondet_int(); if (c >= -1 && c < 256) return isspace(c);", "valid-memsafety", "T"),
    # outside [-128, 256) glibc reads outside its table
    ("int c = __VERIFIER_nondet_int(); if (c >= -1 && c < 512) return isspace(c);", "valid-memsafety",
     "F(valid-deref)"),
])
def test_ctype_verdicts(tmp_path, body, prop, want):
    got, verdict, _ = body_verdict(tmp_path, "ctype", f"#include <ctype.h>\n{HEAD}", body, prop)
    assert got == want, verdict.reason
