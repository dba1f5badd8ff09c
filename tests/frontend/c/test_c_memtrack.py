"""valid-memtrack (`frontend/c/memtrack.py`) under SV-COMP's reading: a heap object not freed is lost when no
pointer of the running program reaches it any more; at the end of main the locals of main die with it, while
`exit` and `abort` keep the locals of every function being run. Each case is small enough to read its answer
off; a lost object is FALSE(valid-memtrack) whether the run then ends or loops forever, and what the model cannot
place (a pointer kept only inside another heap object) is UNKNOWN, never TRUE."""
from __future__ import annotations

import pytest

from helpers.c_verdicts import body_verdict

HEAD = ("#include <stdlib.h>\nextern int __VERIFIER_nondet_int(void);\nint *g;\n"
        "struct node { struct node *next; int v; };\n"
        "void lose(void) { int *q = malloc(sizeof(int)); if (q) *q = 2; }\n"
        "int *make(void) { return malloc(sizeof(int)); }\n"
        "void clear(int *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; free(a); }\n"
        "void assume_abort_if_not(int cond) { if (!cond) { abort(); } }\n"
        "int forever(void) { while (1) { } return 0; }\n"
        "void release(int *p, int x) { free(p); }\n"
        "void keep(int *x, int k) { if (k == 1) { for (;;) { } } int *p = x; int **pp = &p; *pp = x; }\n")


@pytest.mark.parametrize("name, body, expected", [
    ("freed", "int *p = malloc(sizeof(int)); if (!p) return 0; *p = 1; free(p);", "T"),
    ("main_ends_holding_it", "int *p = malloc(sizeof(int)); if (p) *p = 1;", "F(valid-memtrack)"),
    ("freed_on_one_branch", "int *p = malloc(sizeof(int)); if (__VERIFIER_nondet_int()) free(p);",
     "F(valid-memtrack)"),
    ("a_global_keeps_it", "g = malloc(sizeof(int));", "T"),
    ("exit_keeps_the_locals", "int *p = malloc(sizeof(int)); if (p) exit(1);", "T"),
    ("abort_keeps_the_locals", "int *p = malloc(sizeof(int)); int *q = malloc(sizeof(int)); if (!q) abort();"
     " free(q); free(p);", "T"),
    ("lost_before_exit", "int *p = malloc(sizeof(int)); p = 0; exit(0);", "F(valid-memtrack)"),
    ("lost_before_an_endless_loop", "int *p = malloc(sizeof(int)); p = 0; while (1) { }", "F(valid-memtrack)"),
    ("allocated_after_a_loop", "for (int i = 0; i < 3; i++) { } int *p = malloc(sizeof(int)); free(p);", "T"),
    ("lost_before_a_goto_loop", "int *p = malloc(sizeof(int)); int i = 0; p = 0;"
     " L: i++; if (__VERIFIER_nondet_int()) goto L;", "F(valid-memtrack)"),
    ("kept_by_a_struct_member", "struct node x; x.next = malloc(sizeof(struct node));"
     " for (int i = 0; i < 2; i++) { } free(x.next);", "T"),
    ("kept_through_a_loop", "int *p = malloc(4 * sizeof(int)); if (!p) return 0; int i = 0;"
     " while (__VERIFIER_nondet_int()) { p[i % 4] = i; i++; } free(p);", "T"),
    ("one_past_the_end_keeps_it", "char *p = malloc(10); if (!p) return 0; p += 10;"
     " for (int i = 0; i < 2; i++) { } p -= 10; free(p);", "T"),
    ("returned_then_freed", "int *p = make(); for (int i = 0; i < 3; i++) { } free(p);", "T"),
    ("freed_by_a_callee_given_it", "clear((int *)malloc(4 * sizeof(int)), 0);", "T"),
    # a callee's local held it; at the loop head after the call it is gone, but the model still sees the dead
    # local's value and cannot tell: UNKNOWN (at the end of main it would be FALSE)
    ("a_returned_callee_held_it", "lose(); while (1) { }", "U"),
    # the block's local died when the block was left; the goto back into it skips its declaration, so what it
    # holds is no pointer of the running program (C: indeterminate), and it is not taken for one
    ("a_goto_into_a_block_past_the_local_holding_it", "int *p = malloc(sizeof(int)); int k = 0;"
     " { if (k) goto L; int *q = p; p = 0; L: k = 1; } goto L;", "U"),
    # the same, entering the case past the declaration; and an address-taken local of a function called again,
    # before its declaration runs: what it holds is an earlier activation's, whose object died with it
    ("a_case_past_the_local_holding_it", "int *q = malloc(sizeof(int)); int i = 0; while (1) { switch (i) {"
     " case 0: ; int *p = q; i = 1; break; case 1: q = 0; for (;;) { } } }", "U"),
    ("a_callee_local_from_an_earlier_call", "int *q = malloc(sizeof(int)); keep(q, 0); q = 0; keep(q, 1);", "U"),
    # assume_abort_if_not aborts the run where its condition fails: after a loss that is a leak
    ("lost_before_a_failed_assumption", "int *p = malloc(sizeof(int)); int x = __VERIFIER_nondet_int();"
     " if (x) p = 0; assume_abort_if_not(!x); free(p);", "F(valid-memtrack)"),
    # an argument not yet passed holds the pointer while the next one is evaluated (forever): not lost
    ("an_argument_being_passed", "release((int *)malloc(sizeof(int)), forever());", "U"),
    # the union's pointer member was overwritten through another member: whether the pointer's bytes survive
    # is the representation's business, so the object is not surely reached
    ("a_union_held_it", "union { int *p; long x; } u; u.p = malloc(sizeof(int)); u.x = 5; while (1) { }", "U"),
    # only another heap object points to b when the run ends, and a local reaches that one: b is reached
    ("kept_only_by_a_heap_object", "struct node *a = malloc(sizeof(struct node)); if (!a) return 0;"
     " struct node *b = malloc(sizeof(struct node)); a->next = b; b = 0; exit(0);", "T"),
    # a list whose head nothing points to any more is lost, the node it points to with it
    ("lost_with_what_it_points_to", "struct node *a = malloc(sizeof(struct node)); if (!a) return 0;"
     " struct node *b = malloc(sizeof(struct node)); a->next = b; a = 0; b = 0; while (1) { }",
     "F(valid-memtrack)"),
])
def test_memtrack_verdicts(tmp_path, name, body, expected):
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, "valid-memsafety", timeout=60)
    assert got == expected, verdict.reason
    if expected == "U":
        assert "valid-memtrack" in verdict.reason, verdict.reason


@pytest.mark.parametrize("name, body, expected", [
    ("freed", "int *p = malloc(sizeof(int)); if (!p) return 0; *p = 1; free(p);", "T"),
    ("main_ends_holding_it", "int *p = malloc(sizeof(int)); if (p) *p = 1;", "F(valid-memcleanup)"),
    # still reached, but not freed when the run ends: a violation of valid-memcleanup alone
    ("a_global_keeps_it", "g = malloc(sizeof(int));", "F(valid-memcleanup)"),
    ("exit_keeps_the_locals", "int *p = malloc(sizeof(int)); if (p) exit(1); free(p);", "F(valid-memcleanup)"),
    ("abort_after_a_failed_allocation", "int *p = malloc(sizeof(int)); int *q = malloc(sizeof(int));"
     " if (!q) abort(); free(q); free(p);", "F(valid-memcleanup)"),
    # a run that never ends never terminates holding anything
    ("lost_before_an_endless_loop", "int *p = malloc(sizeof(int)); p = 0; while (1) { }", "T"),
    ("freed_by_a_callee", "int *p = malloc(4 * sizeof(int)); if (!p) return 0; clear(p, 4);", "T"),
    ("a_failed_assumption_aborts", "int *p = malloc(sizeof(int)); assume_abort_if_not(__VERIFIER_nondet_int());"
     " free(p);", "F(valid-memcleanup)"),
])
def test_memcleanup_verdicts(tmp_path, name, body, expected):
    """valid-memcleanup: every heap object freed when the run ends (the end of main, exit or abort), whether
    or not something still points to it; accesses are not its business (an invalid one is not followed)."""
    got, verdict, _ = body_verdict(tmp_path, name, HEAD, body, "valid-memcleanup", timeout=60)
    assert got == expected, verdict.reason


def test_a_pointer_stored_in_argv_outlives_main(tmp_path):
    """main's argv array is not main's: a pointer stored there still reaches its object after main returns,
    so that is no leak (valgrind: still reachable); the model does not follow the array, so UNKNOWN."""
    from helpers.c_verdicts import short_verdict
    path = tmp_path / "argv.c"
    path.write_text("#include <stdlib.h>\nint main(int argc, char **argv) {\n"
                    "  if (argc > 1) argv[1] = (char *)malloc(4);\n  return 0;\n}\n")
    got, verdict = short_verdict(path, "valid-memsafety", timeout=60)
    assert got == "U", verdict.reason
