"""Unions (`ctype.CStruct.union`, `lvalues.LValueMixin.member`): each member has leaves of its own and the
union a tag that says whose value its bytes hold. A value read back through the member that stored it, whole
copies, zero initialisation and unions inside structs and arrays agree with gcc; a read through another member
(the bytes reinterpreted) is outside the model and makes the answer UNKNOWN, never TRUE or FALSE."""
from __future__ import annotations

import pytest

from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program import interp

from helpers.c_harness import crosscheck
from helpers.c_verdicts import body_verdict

UNIONS = r"""
#include <string.h>
extern int __VERIFIER_nondet_int(void);
union num { int i; unsigned char c[4]; struct { short a, b; } s; };
struct tagged { int kind; union { int i; long l; union num n; } v; };
union num gz;                               /* static: every byte zero, every member reads 0 */
union num gi = { 7 };                       /* the first member */
union num gd = { .s = { 3, -4 } };          /* a designated member */
struct tagged arr[3];
int r1, r2, r3, r4, r5, r6, r7, r8;
union num make(int x) { union num u; u.s.a = x; u.s.b = x + 1; return u; }
int get(union num *p) { return p->s.a * 10 + p->s.b; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  union num u;
  u.i = x;
  r1 = u.i + gz.i + gz.c[3] + gz.s.b + gi.i + gd.s.b;
  union num v;                              /* no value yet: a part of any member may be stored */
  v.c[0] = x & 15;
  v.c[1] = 2; v.c[2] = 3; v.c[3] = v.c[0];  /* then more of the same member's parts */
  r2 = v.c[0] + v.c[1] * v.c[3];
  union num w = make(x);                    /* whole copies carry the member stored */
  r3 = get(&w);
  union num *p = &w;
  p->i = x - 1;
  r4 = w.i;
  for (int j = 0; j < 3; j++) {
    arr[j].kind = j;
    if (j == 1) arr[j].v.l = x; else arr[j].v.n.s.a = j;
  }
  r5 = arr[0].v.n.s.a + arr[1].v.l + arr[2].v.n.s.a + arr[1].kind;
  union num z;
  memset(&z, 0, sizeof z);                  /* every byte zero again */
  r6 = z.i + z.c[2] + z.s.a;
  struct tagged t = { 2, { .i = x } };
  r7 = t.v.i + t.kind;
  t.v.n = v;
  r8 = t.v.n.c[3];
  return 0;
}
"""


def test_unions_read_back_what_was_stored_as_gcc_does(gcc, tmp_path):
    """Stored and read through the same member, zero and designated initialisers, whole copies through
    functions and pointers, unions in struct arrays and in unions: the interpreter's values are gcc's, and no
    run leaves the model."""
    crosscheck(gcc, tmp_path, UNIONS, [[0], [5], [-3], [1000], [2147483647]],
               ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"], ("LP64", "ILP32"))
    p = load_c_program(tmp_path / "prog.c")
    for x in (0, 5, -3):
        res = interp.run(p, interp.InputOracle(p, [x]), signed_overflow="wrap")
        assert res.outcome == "exit", (x, res.outcome, res.detail)


HEAD = ("extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void);\n"
        "union num { int i; unsigned char c[4]; struct { int a, b; } s; };\n")


@pytest.mark.parametrize("name, body, prop, expected", [
    # the stored member read back: the usual verdicts
    ("same_safe", "union num u; int x = __VERIFIER_nondet_int(); u.i = x; if (u.i != x) reach_error();",
     "unreach-call", "T"),
    ("same_unsafe", "union num u; int x = __VERIFIER_nondet_int(); u.s.a = x; u.s.b = 2;"
     " if (u.s.a + u.s.b == 7) reach_error();", "unreach-call", "F"),
    ("zero_safe", "static union num u; if (u.s.b != 0 || u.c[1] != 0) reach_error();", "unreach-call", "T"),
    # the bytes of another member: gcc reaches the error on a little-endian machine, we do not model it
    ("reinterpreted", "union num u; u.i = 1; if (u.c[0] == 1) reach_error();", "unreach-call", "U"),
    # part of a member written over another one's value: the rest of it would be the other's bytes
    ("partial_over_other", "union num u; u.i = 5; u.s.b = 1; if (u.s.a == 5) reach_error();",
     "unreach-call", "U"),
    # an index out of a union's array member, and a NULL pointer to a union
    ("member_array_oob", "union num u; int k = __VERIFIER_nondet_int();"
     " if (k >= 0 && k <= 4) u.c[k] = 1;", "valid-memsafety", "F(valid-deref)"),
    ("member_array_in_bounds", "union num u; int k = __VERIFIER_nondet_int();"
     " if (k >= 0 && k < 4) u.c[k] = 1;", "valid-memsafety", "T"),
    ("null_union", "union num u; union num *p = __VERIFIER_nondet_int() ? &u : 0; p->i = 1;",
     "valid-memsafety", "F(valid-deref)"),
])
def test_union_verdicts(tmp_path, name, body, prop, expected):
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, prop, timeout=60)
    assert got == expected, verdict.reason
    if expected == "U":
        assert "union member other than the one last stored" in verdict.reason, verdict.reason


@pytest.mark.parametrize("body, construct", [
    ("union num u; int *q = &u.i; *q = 3; return u.i;", "address of a union member"),
    ("union num u; unsigned char *q = u.c; q[0] = 3; return u.c[0];", "pointer to an array member of a union"),
])
def test_a_pointer_into_a_union_member_is_refused(tmp_path, body, construct):
    """A store through such a pointer would not set the union's tag: refused, naming the construct."""
    src = tmp_path / "p.c"
    src.write_text(HEAD + f"int main(void) {{ {body} }}\n")
    with pytest.raises(UnsupportedError) as ei:
        load_c_program(src)
    assert construct in ei.value.construct
