"""`void *` (`frontend/c/void_pointers.py`): a pointer converted to `void *` and back keeps its object and offset;
every use that reads a `void *`'s offset is checked, when the lowering is done, to reach only objects of the
element type it assumes; allocations returned as `void *` by wrappers get the type their pointer is converted
to. The values a program computes through them agree with gcc's, and what the check refuses names its place."""
from __future__ import annotations

import pytest

from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict

COMMON = r"""#include <stdlib.h>
#include <string.h>
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
static void *calloc_model(size_t nmemb, size_t size) {
    void *ptr = malloc(nmemb * size);
    if (!ptr) return 0;
    return memset(ptr, 0, nmemb * size);
}
static void *zalloc_or_die(unsigned size) {
    void *ptr = calloc_model(1U, size);
    if (ptr) return ptr;
    abort();
}
struct node { int v; struct node *next; };
struct pair { short a; short b; };
static void *pick(int k, void *x, void *y) { return k ? x : y; }
"""
HEAD = COMMON + r"""void reach_error(void) { abort(); }
void __VERIFIER_assert(int c) { if (!c) { reach_error(); abort(); } }
"""

# a list built through a void * wrapper, a generic pick between pointers of one type, a struct copied by memcpy
# into a void * allocation: the values are gcc's
PROGRAM = COMMON + r"""
int r1, r2, r3, r4, r5;
int main(void) {
  int k = __VERIFIER_nondet_int();
  struct node *h = 0;
  for (int i = 0; i < 3; i++) {
    struct node *n = zalloc_or_die(sizeof *n);
    r1 += n->v;                       /* zero-filled */
    n->v = k * 10 + i; n->next = h; h = n;
  }
  r2 = h->v + h->next->next->v;
  int a = k, b = -k;
  int *p = pick(k > 0, &a, &b);
  r3 = *p;
  struct pair s = { 3, (short)k };
  void *copy = malloc(sizeof s);
  if (!copy) return 1;
  memcpy(copy, &s, sizeof s);
  struct pair *t = copy;
  r4 = t->a * 100 + t->b;
  free(copy);
  while (h) { struct node *n = h->next; r5 += h->v; free(h); h = n; }
  return 0;
}
"""


def test_values_through_void_pointers_are_gccs(gcc, tmp_path):
    crosscheck(gcc, tmp_path, PROGRAM, [[0], [1], [-3], [7]], ["r1", "r2", "r3", "r4", "r5"], ("LP64", "ILP32"))


@pytest.mark.parametrize("name, body, prop, expected", [
    ("wrapper_list", "struct node *h = 0; for (int i = 0; i < 2; i++) {\n"
                     "struct node *n = zalloc_or_die(sizeof *n); __VERIFIER_assert(n->v == 0 && n->next == 0);\n"
                     "n->v = i + 1; n->next = h; h = n; }\n"
                     "__VERIFIER_assert(h->v == 2 && h->next->v == 1);", "unreach-call", "T"),
    ("wrapper_list_unsafe", "struct node *h = 0; for (int i = 0; i < 2; i++) {\n"
                            "struct node *n = zalloc_or_die(sizeof *n); n->v = i + 1; n->next = h; h = n; }\n"
                            "__VERIFIER_assert(h->v == h->next->v);", "unreach-call", "F"),
    ("round_trip", "int a = 5, b = 6; int *p = pick(__VERIFIER_nondet_int(), &a, &b);\n"
                   "__VERIFIER_assert(*p == 5 || *p == 6);", "unreach-call", "T"),
    ("round_trip_unsafe", "int a = 5, b = 6; int *p = pick(__VERIFIER_nondet_int(), &a, &b);\n"
                          "__VERIFIER_assert(*p == 5);", "unreach-call", "F"),
    # the allocation holds one node: the memset of two is out of it
    ("wrapper_memset_out_of_bounds", "struct node *n = calloc_model(1U, sizeof *n); if (!n) return 0;\n"
                                     "memset((void *)n, 0, 2 * sizeof *n); free(n);", "valid-memsafety",
     "F(valid-deref)"),
    ("wrapper_in_bounds", "struct node *n = calloc_model(2U, sizeof *n); if (!n) return 0;\n"
                          "n[1].v = 1; free(n);", "valid-memsafety", "T"),
    # a struct and its first member have one address; as void *s the model's two objects would differ
    ("struct_and_member", "struct pair s; void *p = &s, *q = &s.a; if (p != q) reach_error();", "unreach-call",
     "U"),
    # one past the end of one object may be the start of another
    ("one_past_the_end", "int a[1], b[1]; void *p = &a[1], *q = &b[0]; if (p == q) reach_error();",
     "unreach-call", "U"),
    # a void * to unsigned chars given to memset: the bytes are the unsigned chars'
    ("unsigned_chars", "static unsigned char buf[4]; void *d = buf; memset(d, 1, 4);\n"
                       "if (buf[3] == 1) reach_error();", "unreach-call", "F"),
    # calloc_model's memset of a NULL pointer (malloc may fail) is an invalid access
    ("memset_of_null", "void *v = malloc(8); memset(v, 0, 8); free(v);", "valid-memsafety", "F(valid-deref)"),
    # a local of a block entered again has a new id per entry (a variable): it still designates that one
    # object, whose elements the conversion reads (Verisec's encode_ie was refused)
    ("block_local_in_bounds", "for (int k = 0; k < 2; k++) { unsigned char buf[4]; void *v = buf;\n"
                              "unsigned char *p = v; p[3] = 1; }", "valid-memsafety", "T"),
    ("block_local_out_of_bounds", "for (int k = 0; k < 2; k++) { unsigned char buf[4]; void *v = buf;\n"
                                  "unsigned char *p = v; p[4 - k] = 1; }", "valid-memsafety", "F(valid-deref)"),
])
def test_void_pointer_verdicts(tmp_path, name, body, prop, expected):
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop, timeout=60)
    assert got == expected, verdict.reason


@pytest.mark.parametrize("body, memsafety, words", [
    # a void * to an int read as chars (under valid-memsafety a char pointer may read any char object)
    ("int x = 1; void *v = &x; char *c = v; return c[0];", True, "read as pointing to i8 that may point into x"),
    # the same in a block entered again (the local's id is a variable)
    ("for (int k = 0; k < 2; k++) { int x = 1; void *v = &x; short *c = v; if (*c) return 1; }", True,
     "read as pointing to i16 that may point into x"),
    # a void * to a struct read as an int
    ("struct pair s = { 1, 2 }; void *v = &s; int *p = v; return *p;", False, "may point into s"),
    # one allocation converted to two types: it stays chars, which neither conversion may read
    ("void *v = malloc(8); if (!v) return 0; int *a = v; short *b = v; return *a + *b;", False,
     "read as pointing to i32 that may point into malloc"),
    # GNU arithmetic on a void * counts bytes, the object's elements are ints
    ("int x[4] = {0}; void *v = x; v = v + 4; int *p = v; return *p;", False, "read as pointing to i8"),
])
def test_a_void_pointer_read_as_another_type_is_refused_with_its_place(tmp_path, body, memsafety, words):
    src = tmp_path / "v.c"
    src.write_text(HEAD + f"int main(void) {{\n{body}\n}}\n")
    line = HEAD.count("\n") + 2
    with pytest.raises(UnsupportedError) as e:
        load_c_program(src, memsafety=memsafety)
    assert words in str(e.value) and f"v.c:{line}" in str(e.value), str(e.value)
