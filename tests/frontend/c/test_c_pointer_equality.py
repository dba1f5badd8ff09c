"""Pointer equality across objects (C11 6.5.9p6): a pointer one past the end of one object may equal a pointer to
the start of another that happens to follow it, so such a comparison is UNKNOWN naming the layout
(`properties.UNMODELLED_LAYOUT`), never TRUE; every other comparison keeps its one answer."""
from __future__ import annotations

import time

import pytest

from looprover.deadline import Deadline
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import default_property
from looprover.verdict import Status

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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pointer_equality_across_objects(tmp_path, name):
    body, want = CASES[name]
    path = tmp_path / f"{name}.c"
    path.write_text(f"{HEAD}int main(void) {{\n  {body}\n  return 0;\n}}\n")
    verdict, _ = verify_job(Job(path, default_property(), "ILP32"), JobOptions("portfolio"),
                            Deadline(time.monotonic() + 60))
    got = {Status.TRUE: "T", Status.FALSE: "F"}.get(verdict.status, "U")
    assert got == want, (name, verdict.reason)
    if got == "U":
        assert "where the two lie in memory" in verdict.reason, verdict.reason
