"""Members of structs reached through pointers (`memory.py`, `Obj.members`): `&p->x`, `p->buf` used as a pointer,
`&(*p).in.y` have objects in every object that holds structs of p's type (heap objects, pool objects, arrays and
variables of them), made with that object. The values a program computes through them agree with gcc's; where the
model has no such object (a member of the second struct of an array, a NULL pointer, a free of a member) the
answer is UNKNOWN, never a verdict; under valid-memsafety a pointer to a member keeps its heap object tracked and
dies with it."""
from __future__ import annotations

import pytest

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict

COMMON = r"""#include <stdlib.h>
#include <string.h>
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
struct in { short y; int z[2]; };
struct node { int val; struct node *next; int buf[4]; struct in in; };
struct other { char tag; long n; };
static void *xmalloc(size_t n) { void *p = malloc(n); if (!p) abort(); return p; }
static void set(int *p, int v) { *p = v; }
static void fill(int *b, int n, int v) { for (int i = 0; i < n; i++) b[i] = v + i; }
"""
HEAD = COMMON + r"""void reach_error(void) { abort(); }
void __VERIFIER_assert(int c) { if (!c) { reach_error(); abort(); } }
"""

# heap nodes (one allocation, and a pool: a loop allocates), nested members, an array member used as a pointer, a
# struct variable reached through a pointer, one wrapper allocating two types: the values are gcc's
PROGRAM = COMMON + r"""
int r1, r2, r3, r4, r5, r6;
int main(void) {
  int k = __VERIFIER_nondet_int();
  struct node *h = 0;
  for (int i = 0; i < 3; i++) {
    struct node *n = xmalloc(sizeof *n);
    set(&n->val, k + i);
    fill(n->buf, 4, i * 10);
    short *y = &n->in.y; *y = (short)(k - i);
    int *z = n->in.z; z[1] = i;
    n->next = h; h = n;
  }
  for (struct node *p = h; p; p = p->next) {
    int *v = &(*p).val;
    r1 += *v; r2 += p->buf[3] + p->in.z[1]; r3 = r3 * 3 + p->in.y;
  }
  struct node s; struct node *ps = &s;
  int *sv = &ps->val; *sv = k * 2;
  int *sb = ps->buf; fill(sb, 4, k);
  r4 = s.val + s.buf[2];
  struct other *o = xmalloc(sizeof *o);
  long *on = &o->n; *on = (long)k * 7; o->tag = 'a';
  r5 = (int)o->n + o->tag;
  free(o);
  int *keep = &h->next->val;
  while (h) { struct node *n = h->next; free(h); h = n; }
  r6 = keep != 0;
  return 0;
}
"""


def test_values_through_member_pointers_are_gccs(gcc, tmp_path):
    crosscheck(gcc, tmp_path, PROGRAM, [[0], [1], [-3], [7]], ["r1", "r2", "r3", "r4", "r5", "r6"],
               ("LP64", "ILP32"))


@pytest.mark.parametrize("name, body, prop, expected", [
    ("heap_member", "struct node *n = xmalloc(sizeof *n); set(&n->val, 5); fill(n->buf, 4, 1);\n"
                    "__VERIFIER_assert(n->val == 5 && n->buf[3] == 4); free(n);", "unreach-call", "T"),
    ("heap_member_unsafe", "struct node *n = xmalloc(sizeof *n); set(&n->val, 5); fill(n->buf, 4, 1);\n"
                           "__VERIFIER_assert(n->buf[3] == 5); free(n);", "unreach-call", "F"),
    # the member pointers of nodes a loop allocates: each node's own
    ("pool_members", "int *vs[2]; for (int i = 0; i < 2; i++) { struct node *n = xmalloc(sizeof *n);\n"
                     "vs[i] = &n->val; *vs[i] = i; }\n__VERIFIER_assert(*vs[0] == 0 && *vs[1] == 1);",
     "unreach-call", "T"),
    ("pool_members_unsafe", "int *vs[2]; for (int i = 0; i < 2; i++) { struct node *n = xmalloc(sizeof *n);\n"
                            "vs[i] = &n->val; *vs[i] = i; }\n__VERIFIER_assert(*vs[0] == *vs[1]);",
     "unreach-call", "F"),
    # a member pointer used after its node is freed
    ("member_after_free", "struct node *n = malloc(sizeof *n); if (!n) return 0; int *p = &n->val; *p = 1;\n"
                          "free(n); if (__VERIFIER_nondet_int()) *p = 2;", "valid-memsafety", "F(valid-deref)"),
    # a member pointer kept to a node of a pool slot that a later allocation reuses: still dangling
    ("member_of_reused_slot", "int *old = 0; struct node *n = 0; for (int i = 0; i < 2; i++) {\n"
                              "n = malloc(sizeof *n); if (!n) return 0; if (i == 0) { old = &n->val; free(n); } }\n"
                              "*old = 3; free(n);", "valid-memsafety", "F(valid-deref)"),
    ("member_in_bounds", "struct node *n = malloc(sizeof *n); if (!n) return 0; int *b = n->buf;\n"
                         "for (int i = 0; i < 4; i++) b[i] = i; free(n);", "valid-memsafety", "T"),
    # a pointer into a node keeps it tracked where the run ends with main's locals (exit)
    ("member_pointer_tracks", "struct node *n = malloc(sizeof *n); if (!n) return 0; int *p = &n->val;\n"
                              "n = 0; while (__VERIFIER_nondet_int()) *p = 1; exit(0);", "valid-memsafety", "T"),
    # ... and the node is lost when main returns
    ("member_pointer_leaks", "struct node *n = malloc(sizeof *n); if (!n) return 0; int *p = &n->val;\n"
                             "n = 0; *p = 1;", "valid-memsafety", "F(valid-memtrack)"),
    # beyond the member: the next member of the struct in C's layout, outside the model
    ("beyond_the_member", "struct node *n = malloc(sizeof *n); if (!n) return 0; int *b = n->buf;\n"
                          "b[4] = 1; free(n);", "valid-memsafety", "U"),
    # a member of the second struct of an array: no object in the model
    ("member_of_second_element", "struct node a[2]; struct node *p = a; int *v = &p[1].val; *v = 1;\n"
                                 "if (a[1].val == 1) reach_error();", "unreach-call", "U"),
    # free of a pointer to a first member is free of its struct in C: not modelled
    ("free_of_first_member", "struct node *n = malloc(sizeof *n); if (!n) return 0; free(&n->val);",
     "valid-memsafety", "U"),
    # a struct and its first member have one address in C; as void *s the model's two objects would differ
    ("struct_and_member_as_void", "struct node *n = xmalloc(sizeof *n); void *a = n, *b = &n->val;\n"
                                  "if (a == b) reach_error(); free(n);", "unreach-call", "U"),
    # a node inside a struct variable, reached through a pointer to it
    ("member_of_nested_node", "struct wrap { int pad; struct node t; } w = {0}; struct node *p = &w.t;\n"
                              "int *v = &p->in.z[1]; *v = 3; __VERIFIER_assert(w.t.in.z[0] == 0 && w.t.in.z[1] == 3);",
     "unreach-call", "T"),
    ("member_of_nested_node_unsafe", "struct wrap { int pad; struct node t; } w = {0}; struct node *p = &w.t;\n"
                                     "int *v = &p->in.z[1]; *v = 3; __VERIFIER_assert(w.t.in.z[1] == 0);",
     "unreach-call", "F"),
    # ... and so as pointers to a struct the program never defines (converted from void *s)
    ("struct_and_member_as_opaque", "struct node *n = xmalloc(sizeof *n); struct hidden *a = (void *)n;\n"
                                    "struct hidden *b = (void *)&n->val; if (a == b) reach_error(); free(n);",
     "unreach-call", "U"),
    ("members_ordered_as_opaque", "struct node *n = xmalloc(sizeof *n); struct hidden *a = (void *)&n->val;\n"
                                  "struct hidden *b = (void *)&n->next; if (a < b) reach_error(); free(n);",
     "unreach-call", "U"),
    # a malloc'd buffer kept as a pointer to a struct the program never defines
    ("opaque_pointer", "struct hidden *h = xmalloc(16); void *v = h; free(v);", "valid-memsafety", "T"),
    ("opaque_pointer_leaks", "struct hidden *h = malloc(16); h = 0;", "valid-memsafety", "F(valid-memtrack)"),
])
def test_member_pointer_verdicts(tmp_path, name, body, prop, expected):
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop, timeout=60)
    assert got == expected, verdict.reason
