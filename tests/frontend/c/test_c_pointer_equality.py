"""Pointer equality across objects: a pointer one past the end of one object may equal a pointer to the start of
another that happens to follow it (C11 6.5.9p6), and string literals may share storage (6.4.5p7), so such a
comparison is UNKNOWN naming the layout (`properties.UNMODELLED_LAYOUT`), never TRUE; every other comparison
keeps its one answer. Under termination, where assertions are not checked, such a program is never TRUE."""
from __future__ import annotations

import time

import pytest

from looprover.deadline import Deadline
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import Property, default_property
from looprover.verdict import Status

TERMINATION = Property("termination")

HEAD = "extern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\nint a[2], b[2];\n"

CASES = {
    "past_the_end_meets_a_start": ("if (a + 2 == b) reach_error();", "U"),
    "the_other_way": ("int *p = b; if (p == &a[2] || p != a + 2) return 0; reach_error();", "U"),
    "two_starts": ("if (a == b) reach_error();", "T"),
    "inside_meets_a_start": ("if (a + 1 == b) reach_error();", "T"),
    "same_object": ("int *p = a; p++; p++; if (p != a + 2) reach_error();", "T"),
    "same_object_unsafe": ("int *p = a; if (__VERIFIER_nondet_int()) p++; if (p != a) reach_error();", "F"),
    "null": ("int *p = 0; if (__VERIFIER_nondet_int()) p = b; if (p == a + 2) reach_error();", "U"),
    "null_only": ("int *p = 0; if (p == a) reach_error();", "T"),
    "equal_literals": ('char *p = "ab"; char *q = "ab"; if (p == q) reach_error();', "U"),
    "literal_tails": ('char *p = "abc"; char *q = "bc"; if (p + 1 == q) reach_error();', "U"),
    "one_literal": ('char *p = "abc"; char *q = p; q++; if (q != p + 1) reach_error();', "T"),
    # two members of one struct are ordered by declaration (C11 6.5.8p5), which the model does not see
    "member_order": ("struct S { int x; int y; } s; if (&s.y > &s.x) reach_error();", "U"),
    "member_order_same_member": ("struct S { int x[2]; int y; } s; if (&s.x[1] <= &s.x[0]) reach_error();", "T"),
    # a pointer into a member that leaves it: undefined in C11, valid where the struct is one object
    "leaving_a_member": ("struct S { int x; int y; } s; s.y = 2; int *p = &s.x; if (p[1] == 2) reach_error();",
                         "U:member"),
    "leaving_a_member_array": ("struct S { char n[4]; char m[4]; } s; char *p = s.n;\n"
                               "  for (int i = 0; i < 8; i++) p[i] = 0;", "U:member"),
    # a variable-length array's end is wherever it may be: comparisons into it are not refused
    "vla_walk": ("int n = __VERIFIER_nondet_int(); if (n < 1 || n > 9) return 0; int v[n]; int *p = v;\n"
                 "  int *e = v + n; int k = 0; while (p != e) { p++; k++; } if (k != n) reach_error();", "T"),
}


def _verdict(path, text: str, prop=None):
    path.write_text(text)
    verdict, _ = verify_job(Job(path, prop or default_property(), "ILP32"), JobOptions("portfolio"),
                            Deadline(time.monotonic() + 60))
    return verdict


@pytest.mark.parametrize("name", sorted(CASES))
def test_pointer_equality_across_objects(tmp_path, name):
    body, want = CASES[name]
    verdict = _verdict(tmp_path / f"{name}.c", f"{HEAD}int main(void) {{\n  {body}\n  return 0;\n}}\n")
    got = {Status.TRUE: "T", Status.FALSE: "F"}.get(verdict.status, "U")
    assert got == want[0], (name, verdict.reason)
    if want == "U":
        assert "where they lie in memory" in verdict.reason, verdict.reason
    if want == "U:member":
        assert "outside that member" in verdict.reason, verdict.reason


def test_termination_is_not_true_past_a_layout_question(tmp_path):
    """Termination does not check assertions, so a run that leaves the model would count as one that ends:
    with a layout-dependent equality in the program, a termination proof is UNKNOWN naming it."""
    verdict = _verdict(tmp_path / "loop.c", "int a[1], b[1];\nint main(void) { int *p = a + 1;\n"
                       "  if (p == b) while (1) {}\n  int i = 0; while (i < 10) i++; return 0; }\n", TERMINATION)
    assert verdict.status == Status.UNKNOWN and "where they lie in memory" in verdict.reason, verdict.reason


def test_termination_is_true_once_no_run_leaves_the_model(tmp_path):
    """Two pointer walks `p != a + 4` over two arrays: each comparison could in principle be layout-dependent,
    but no run makes it one (a safety run on those assertions proves it), so termination is TRUE."""
    verdict = _verdict(tmp_path / "walks.c", "int a[4], b[4];\nint main(void) {\n"
                       "  int *p = a; while (p != a + 4) { *p = 0; p++; }\n"
                       "  int *q = b; while (q != b + 4) { *q = 1; q++; }\n  return 0; }\n", TERMINATION)
    assert verdict.status == Status.TRUE and "no run leaves the model" in verdict.reason, verdict.reason
