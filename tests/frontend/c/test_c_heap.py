"""The heap (`frontend/c/heap.py`): each allocation function and each memory property on a safe and an unsafe
program, under unreach-call and valid-memsafety; allocation failure; what stays UNKNOWN, with its place."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from looprover.deadline import Deadline
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import Property, default_property
from looprover.verdict import Status

HEAD = """extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
extern void abort(void);
extern void *malloc(unsigned int);
extern void *calloc(unsigned int, unsigned int);
extern void *alloca(unsigned int);
extern void free(void *);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
int main(void) {
"""

# name -> (main's body, expected under unreach-call, expected under valid-memsafety: T, F(property) or U)
CASES = {
    # a failing allocation returns NULL (malloc, calloc), alloca does not fail
    "malloc_may_fail": ("int *a = malloc(4 * sizeof(int)); __VERIFIER_assert(a != 0);", "F", "U"),
    "alloca_does_not_fail": ("int *a = alloca(4 * sizeof(int)); __VERIFIER_assert(a != 0); a[3] = 1;", "T", "U"),
    # calloc zero-fills, malloc does not
    "calloc_zero": ("unsigned n = __VERIFIER_nondet_uint(); int *a = calloc(n, sizeof(int));\n"
                    "if (a && n > 2) __VERIFIER_assert(a[2] == 0); free(a);", "T", "U"),
    "malloc_not_zero": ("int *a = malloc(4 * sizeof(int)); if (a) { __VERIFIER_assert(a[2] == 0); free(a); }",
                        "F", "U"),
    # calloc of more than size_t holds fails (ILP32: 2^30 ints are 2^32 bytes)
    "calloc_overflow_fails": ("unsigned n = __VERIFIER_nondet_uint(); int *a = calloc(n, 4);\n"
                              "if (n >= 0x40000000u) __VERIFIER_assert(a == 0);", "T", "U"),
    # the object holds the requested bytes: 4 ints, not 5
    "in_bounds": ("int *a = malloc(4 * sizeof(int)); if (!a) return 0; a[3] = 1; free(a);", "T", "U"),
    "out_of_bounds": ("int *a = malloc(4 * sizeof(int)); if (!a) return 0; a[4] = 1; free(a);", "T", "F(valid-deref)"),
    "partial_element": ("int *a = malloc(10); if (!a) return 0; a[2] = 1; free(a);", "T", "F(valid-deref)"),
    "null_deref": ("int *a = malloc(sizeof(int)); *a = 1; free(a);", "T", "F(valid-deref)"),
    "use_after_free": ("int *a = malloc(sizeof(int)); if (!a) return 0; free(a); *a = 1;", "T", "F(valid-deref)"),
    "double_free": ("int *a = malloc(sizeof(int)); if (!a) return 0; free(a); free(a);", "T", "F(valid-free)"),
    "free_inside": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; free(a + 1);", "T", "F(valid-free)"),
    "free_stack": ("int x; int *a = &x; free(a);", "T", "F(valid-free)"),
    "free_null": ("int *a = 0; free(a); __VERIFIER_assert(1);", "T", "T"),
    # a struct on the heap, reached through the pointer
    "struct": ("struct S { int v; int w[2]; }; struct S *s = malloc(sizeof(struct S));\n"
               "if (!s) return 0; s->v = 3; s->w[1] = s->v; __VERIFIER_assert(s->w[1] == 3); free(s);", "T", "U"),
    "struct_unsafe": ("struct S { int v; int w[2]; }; struct S *s = malloc(sizeof(struct S));\n"
                      "if (!s) return 0; s->v = 3; __VERIFIER_assert(s->w[1] == 3); free(s);", "F", "U"),
}


def _verdict(tmp_path: Path, name: str, prop: str) -> str:
    path = tmp_path / f"{name}.c"
    path.write_text(HEAD + CASES[name][0] + "\n  return 0;\n}\n")
    job = Job(path, default_property() if prop == "unreach-call" else Property(prop), "ILP32")
    verdict, _ = verify_job(job, JobOptions("portfolio"), Deadline(time.monotonic() + 60))
    if verdict.status == Status.FALSE:
        violated = verdict.evidence.violated.prop if prop == "valid-memsafety" else None
        return f"F({violated})" if violated else "F"
    return {Status.TRUE: "T"}.get(verdict.status, "U")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("prop", ["unreach-call", "valid-memsafety"])
def test_heap_programs(tmp_path, name, prop):
    """Under unreach-call an invalid access is undefined behaviour (its executions are not followed); under
    valid-memsafety it is the violation. A program that allocates is never TRUE for valid-memsafety
    (valid-memtrack is not checked)."""
    want = CASES[name][1] if prop == "unreach-call" else CASES[name][2]
    got = _verdict(tmp_path, name, prop)
    assert got == want, (name, prop, got)


@pytest.mark.parametrize("body,words", [
    ("for (int k = 0; k < 2; k++) { int *p = malloc(4); free(p); }", "loop executes more than once"),
    ("void *q = malloc(4); free(q);", "used as void *"),
    ("int *p = malloc(4); p = realloc(p, 8);", "realloc"),
])
def test_what_the_heap_model_does_not_cover_is_unsupported_with_its_place(tmp_path, body, words):
    path = tmp_path / "h.c"
    path.write_text(HEAD.replace("int main(void) {\n", "extern void *realloc(void *, unsigned int);\n"
                                                       "int main(void) {\n") + body + "\n  return 0;\n}\n")
    for memsafety in (False, True):
        with pytest.raises(UnsupportedError) as e:
            load_c_program(path, memsafety=memsafety)
        assert words in str(e.value) and "h.c:12" in str(e.value), str(e.value)
