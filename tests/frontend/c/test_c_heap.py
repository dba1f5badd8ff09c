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

from helpers.c_harness import crosscheck

HEAD = """extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
extern void abort(void);
extern void *malloc(unsigned int);
extern void *calloc(unsigned int, unsigned int);
extern void *alloca(unsigned int);
extern void *realloc(void *, unsigned int);
extern void free(void *);
extern void *memset(void *, int, unsigned int);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
int release(int *p) { free(p); return 1; }
struct node { int val; struct node *next; };
struct node *head;
int pop(void) { struct node *n = head; int v = n->val; head = n->next; free(n); return v; }
int *stack_object(void) { int *p = alloca(sizeof(int)); *p = 1; return p; }
int main(void) {
"""

# name -> (main's body, expected under unreach-call, expected under valid-memsafety: T, F(property) or U)
CASES = {
    # a failing allocation returns NULL (malloc, calloc), alloca does not fail
    "malloc_may_fail": ("int *a = malloc(4 * sizeof(int)); __VERIFIER_assert(a != 0);", "F",
                        "F(valid-memtrack)"),   # and when it does not, main ends with the object not freed
    "alloca_does_not_fail": ("int *a = alloca(4 * sizeof(int)); __VERIFIER_assert(a != 0); a[3] = 1;", "T", "T"),
    "alloca_not_freed": ("int *a = alloca(sizeof(int)); free(a);", "T", "F(valid-free)"),
    # calloc zero-fills, malloc does not
    "calloc_zero": ("unsigned n = __VERIFIER_nondet_uint(); int *a = calloc(n, sizeof(int));\n"
                    "if (a && n > 2) __VERIFIER_assert(a[2] == 0); free(a);", "T", "T"),
    "malloc_not_zero": ("int *a = malloc(4 * sizeof(int)); if (a) { __VERIFIER_assert(a[2] == 0); free(a); }",
                        "F", "T"),
    # calloc of more than size_t holds fails (ILP32: 2^30 ints are 2^32 bytes)
    "calloc_overflow_fails": ("unsigned n = __VERIFIER_nondet_uint(); int *a = calloc(n, 4);\n"
                              "if (n >= 0x40000000u) __VERIFIER_assert(a == 0);", "T", "F(valid-memtrack)"),
    # the object holds the requested bytes: 4 ints, not 5
    "in_bounds": ("int *a = malloc(4 * sizeof(int)); if (!a) return 0; a[3] = 1; free(a);", "T", "T"),
    "out_of_bounds": ("int *a = malloc(4 * sizeof(int)); if (!a) return 0; a[4] = 1; free(a);", "T", "F(valid-deref)"),
    "partial_element": ("int *a = malloc(10); if (!a) return 0; a[2] = 1; free(a);", "T", "F(valid-deref)"),
    # loops of gotos (as Frama-C writes them) after the allocation: every access knows the object
    "goto_loop": ("int *a = malloc(2 * sizeof(int)); int i = 0; if (!a) return 0; goto L2;\n"
                  "L1: a[i] = i; i++;\nL2: if (i < 2) goto L1; free(a);", "T", "T"),
    "goto_loop_unsafe": ("int *a = malloc(2 * sizeof(int)); int i = 0; if (!a) return 0; goto L2;\n"
                         "L1: a[i] = i; i++;\nL2: if (i <= 2) goto L1; free(a);", "T", "F(valid-deref)"),
    "null_deref": ("int *a = malloc(sizeof(int)); *a = 1; free(a);", "T", "F(valid-deref)"),
    "use_after_free": ("int *a = malloc(sizeof(int)); if (!a) return 0; free(a); *a = 1;", "T", "F(valid-deref)"),
    "double_free": ("int *a = malloc(sizeof(int)); if (!a) return 0; free(a); free(a);", "T", "F(valid-free)"),
    "free_inside": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; free(a + 1);", "T", "F(valid-free)"),
    "free_stack": ("int x; int *a = &x; free(a);", "T", "F(valid-free)"),
    # an alloca object dies when its function returns
    "alloca_dangling": ("int *q = stack_object(); *q = 2;", "T", "F(valid-deref)"),
    "free_null": ("int *a = 0; free(a); free(0); __VERIFIER_assert(1);", "T", "T"),
    # a call between the read and the write of `*p += ...` frees the object: the write is an access too
    "free_in_compound": ("int *p = malloc(sizeof(int)); if (!p) return 0; *p = 0; *p += release(p);", "T",
                         "F(valid-deref)"),
    # the call frees the node and moves the pointer the store goes through: a use after free (or NULL)
    "free_in_assignment": ("struct node *a = malloc(sizeof(struct node)); if (!a) return 0;\n"
                           "a->val = 1; a->next = 0; head = a; head->val = pop();", "T", "F(valid-deref)"),
    # glibc refuses more than PTRDIFF_MAX bytes, whatever the element type
    "too_large_fails": ("int *p = malloc(0x80000000u); __VERIFIER_assert(p == 0);", "T", "T"),
    # a struct on the heap, reached through the pointer
    "struct": ("struct S { int v; int w[2]; }; struct S *s = malloc(sizeof(struct S));\n"
               "if (!s) return 0; s->v = 3; s->w[1] = s->v; __VERIFIER_assert(s->w[1] == 3); free(s);", "T", "T"),
    "struct_unsafe": ("struct S { int v; int w[2]; }; struct S *s = malloc(sizeof(struct S));\n"
                      "if (!s) return 0; s->v = 3; __VERIFIER_assert(s->w[1] == 3); free(s);", "F", "T"),
    # an allocation a loop executes: a pool of objects, each allocation a fresh one in the first dead slot
    "loop_buffers": ("for (int k = 0; k < 50; k++) { int *p = malloc(2 * sizeof(int)); if (!p) return 0;\n"
                     "p[1] = k; __VERIFIER_assert(p[1] == k); free(p); }", "T", "T"),
    "loop_buffers_out_of_bounds": ("for (int k = 0; k < 50; k++) { int *p = malloc(2 * sizeof(int));\n"
                                   "if (!p) return 0; p[1] = k; if (k == 7) p[2] = k; free(p); }", "T",
                                   "F(valid-deref)"),
    # (the pointer in a variable of main's: a local of the loop's block would keep the object "maybe" reached
    # at the loop's head, `memtrack.py`, and the leak UNKNOWN)
    "loop_buffers_leak": ("int *p; for (int k = 0; k < 50; k++) { p = malloc(2 * sizeof(int));\n"
                          "if (!p) return 0; p[1] = k; if (k != 7) free(p); }", "T", "F(valid-memtrack)"),
    # iteration 1 reuses the slot of iteration 0's freed object, with a new id: `first` names no live object
    "loop_stale_pointer": ("int *first = 0; for (int k = 0; k < 2; k++) { int *p = malloc(sizeof(int));\n"
                           "if (!p) return 0; *p = k; if (first) *first = 5; else first = p; free(p); }", "T",
                           "F(valid-deref)"),
    # two nodes of one call live at once are two objects; the second is reached through the first (memtrack)
    "loop_list": ("struct node *h = 0; for (int k = 0; k < 2; k++) { struct node *n = malloc(sizeof(struct node));\n"
                  "if (!n) break; n->val = k; n->next = h; h = n; }\n"
                  "if (h && h->next) __VERIFIER_assert(h->val == 1 && h->next->val == 0);\n"
                  "while (h) { struct node *t = h->next; free(h); h = t; }", "T", "T"),
    "loop_list_unsafe": ("struct node *h = 0; for (int k = 0; k < 2; k++) {\n"
                         "struct node *n = malloc(sizeof(struct node)); if (!n) break;\n"
                         "n->val = k; n->next = h; h = n; }\n"
                         "if (h && h->next) __VERIFIER_assert(h->val == h->next->val);\n"
                         "while (h) { struct node *t = h->next; free(h); h = t; }", "F", "T"),
    # an allocation used as void * is the requested bytes, an array of chars
    "void_bytes": ("void *q = malloc(8); if (!q) return 0; memset(q, 1, 8); free(q);", "T", "T"),
    "void_bytes_out_of_bounds": ("void *q = malloc(8); if (!q) return 0; memset(q, 1, 9); free(q);", "T",
                                 "F(valid-deref)"),
    "void_bytes_leak": ("void *q = malloc(8); if (!q) return 0; q = 0; __VERIFIER_assert(1);", "T",
                        "F(valid-memtrack)"),
    # a pointer to a struct the program never defines is a pointer like any other
    "incomplete_pointee": ("struct never; struct holder { struct never *p; int v; };\n"
                           "struct holder *h = malloc(sizeof *h); if (!h) return 0; h->p = 0; h->v = 1;\n"
                           "__VERIFIER_assert(h->p == 0 && h->v == 1); free(h);", "T", "T"),
    # a list built in a loop and then dropped: its head is reached by nothing (the nodes of a pool are lost
    # like any other object)
    "loop_list_lost": ("struct node *h = 0; for (int k = 0; k < 2; k++) {\n"
                       "struct node *n = malloc(sizeof(struct node)); if (!n) break;\n"
                       "n->val = k; n->next = h; h = n; }\n"
                       "h = 0; while (1) { }", "T", "F(valid-memtrack)"),
    # realloc: a new object with the old one's first elements (the rest indeterminate), the old one freed
    "realloc_grows": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; a[0] = 1; a[1] = 2;\n"
                      "int *b = realloc(a, 4 * sizeof(int)); if (!b) { free(a); return 0; }\n"
                      "b[3] = b[0] + b[1]; __VERIFIER_assert(b[3] == 3); free(b);", "T", "T"),
    "realloc_grows_unsafe": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; a[0] = 1; a[1] = 2;\n"
                             "int *b = realloc(a, 4 * sizeof(int)); if (!b) { free(a); return 0; }\n"
                             "__VERIFIER_assert(b[2] == 0); free(b);", "F", "T"),
    "realloc_frees_the_old": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; a[0] = 1;\n"
                              "int *b = realloc(a, 4 * sizeof(int)); if (!b) { free(a); return 0; }\n"
                              "b[1] = a[0]; free(b);", "T", "F(valid-deref)"),
    "realloc_shrinks": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0; a[0] = 1; a[1] = 2;\n"
                        "int *b = realloc(a, sizeof(int)); if (!b) { free(a); return 0; }\n"
                        "__VERIFIER_assert(b[0] == 1); b[1] = 0; free(b);", "T", "F(valid-deref)"),
    # the classic: a failing realloc returns NULL, and the old object is lost with the pointer overwritten
    "realloc_failure_leaks": ("int *a = malloc(2 * sizeof(int)); if (!a) return 0;\n"
                              "a = realloc(a, 4 * sizeof(int)); if (!a) return 0; free(a);", "T",
                              "F(valid-memtrack)"),
    # a char object reallocated through an unsigned char pointer (valid-memsafety lets it read the chars): its
    # bytes are copied, so b[0] is 1 and the store is in bounds (unreach-call refuses the conversion)
    "realloc_other_signedness": ("char *a = malloc(2); if (!a) return 0; a[0] = 1; a[1] = 2;\n"
                                 "unsigned char *b = realloc((unsigned char *)a, 4); if (!b) { free(a); return 0; }\n"
                                 "b[b[0] + 2] = 0; free(b);", "U", "T"),
    "realloc_of_null": ("int *a = realloc(0, 2 * sizeof(int)); if (!a) return 0; a[1] = 1;\n"
                        "__VERIFIER_assert(a[1] == 1); free(a);", "T", "T"),
    "realloc_of_stack": ("int x[2]; int *a = realloc(x, 4 * sizeof(int)); free(a);", "T", "F(valid-free)"),
    # a size of 0: C leaves it to the implementation whether the old object is freed
    "realloc_to_zero": ("int *a = malloc(sizeof(int)); if (!a) return 0; int *b = realloc(a, 0);\n"
                        "if (b) free(b); __VERIFIER_assert(1);", "U", "U"),
    # a growing buffer: each realloc takes a slot of its pool and frees the old one
    "realloc_in_loop": ("int n = 1; int *a = malloc(sizeof(int)); if (!a) return 0; a[0] = 0;\n"
                        "for (int k = 0; k < 3; k++) { int *b = realloc(a, (n + 1) * sizeof(int));\n"
                        "if (!b) { free(a); return 0; } a = b; a[n] = n; n++; }\n"
                        "__VERIFIER_assert(a[0] == 0 && a[3] == 3); free(a);", "T", "T"),
    # more live objects of one call than its pool holds: UNKNOWN, never a verdict on a run the model lacks
    "loop_list_beyond_the_pool": ("struct node *h = 0; for (int k = 0; k < 4; k++) {\n"
                                  "struct node *n = malloc(sizeof(struct node)); if (!n) return 0; n->val = k;\n"
                                  "n->next = h; h = n; }\n"
                                  "__VERIFIER_assert(h->next->next->next->val == 0);", "U",
                                  # (a failing malloc returns from main while main's h holds the list)
                                  "F(valid-memtrack)"),
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
    valid-memsafety it is the violation, and so is an object main ends without freeing (valid-memtrack; an
    assertion that fails calls abort here, which ends the run keeping what main points to)."""
    want = CASES[name][1] if prop == "unreach-call" else CASES[name][2]
    got = _verdict(tmp_path, name, prop)
    assert got == want, (name, prop, got)


@pytest.mark.parametrize("body,words,memsafety", [
    # an allocation used as void * and converted to two types stays chars, which neither may read
    ("void *q = malloc(8); int *p = q; short *s = q; free(p);", "read as pointing to i32 that may point into malloc",
     (False, True)),
    # realloc's object is a copy of its argument's elements: what type, a void * does not say
    ("int *p = malloc(4); void *q = realloc(p, 8); free(q);", "realloc used as void *", (False, True)),
    # a dereference lowered before the allocation it reads (through goto) would know no object of it
    ("int *p = 0; goto A; B: *p = 1; return 0; A: p = malloc(4); if (p) goto B;", "goto", (False, True)),
    # accesses to the fields of a partial struct would be valid: its byte count must be a visible multiple
    ("struct S { int a; char c; }; struct S *s = malloc(5);", "multiple of sizeof(struct S)", (True,)),
    # n * sizeof(struct S) wraps around in size_t: not a multiple
    ("struct S { int a; int b; int c; }; unsigned n = __VERIFIER_nondet_uint(); "
     "struct S *s = malloc(n * sizeof(struct S));", "multiple of sizeof(struct S)", (True,)),
])
def test_what_the_heap_model_does_not_cover_is_unsupported_with_its_place(tmp_path, body, words, memsafety):
    path = tmp_path / "h.c"
    path.write_text(HEAD + body + "\n  return 0;\n}\n")
    for m in memsafety:
        with pytest.raises(UnsupportedError) as e:
            load_c_program(path, memsafety=m)
        assert words in str(e.value) and "h.c:18" in str(e.value), str(e.value)


def test_ids_of_locals_do_not_collide_with_heap_objects(tmp_path, capsys):
    """Under valid-memsafety a re-entered local gets a new id per activation; allocations made while lowering
    must not change the step of those sequences (two live locals once shared an id, so a write through one
    pointer changed the other local)."""
    from looprover import cli
    path = tmp_path / "ids.c"
    path.write_text(HEAD.replace("int main(void) {\n", """void g(void) { int y = 10; int *py = &y; *py = 11; }
void f(void) { int x = 0; int *px = &x; int *m = malloc(sizeof(int)); g(); __VERIFIER_assert(x == 0); free(m); }
int main(void) {
""") + "if (__VERIFIER_nondet_int()) { g(); return 0; }\n  f();\n  return 0;\n}\n")
    assert cli.main(["check", str(path), "--json"]) == cli.EXIT_VERDICT
    import json
    got = json.loads(capsys.readouterr().out)
    assert got["checks"] and all(c["status"] == "safe" for c in got["checks"]), got


def test_an_undefined_function_that_can_reach_pointers_is_refused(tmp_path):
    """`--undefined-functions nondet` havocs what the callee can reach; a pointer it stores could name fresh
    storage (a malloc of its own), which no object models: refused rather than a TRUE that misses it."""
    path = tmp_path / "outp.c"
    path.write_text(HEAD.replace("int main(void) {\n", "extern int get(int **out);\nint main(void) {\n")
                    + "int *p = 0; if (get(&p) != 0 || p == 0) return 0; *p = 5; reach_error();\n  return 0;\n}\n")
    with pytest.raises(UnsupportedError, match="fresh storage"):
        load_c_program(path, nondet_undefined=True)


@pytest.mark.parametrize("body, written", [
    # two allocations of a loop's pool that succeed: what a compiled run does, so the validator follows it
    ("int *old = 0; for (int k = 0; k < 3; k++) { int *p = malloc(sizeof(int)); if (!p) return 0; *p = k;\n"
     "if (old) { __VERIFIER_assert(*old == k - 2); free(old); } old = p; }", True),
    # only a failing malloc reaches the error: no waypoint of a witness can make malloc fail
    ("int *p = malloc(sizeof(int)); __VERIFIER_assert(p != 0); free(p);", False),
])
def test_violation_witnesses_of_heap_programs(tmp_path, capsys, body, written):
    """A run of the validator lets every allocation succeed, as a compiled run does (`interp.InputOracle`)."""
    import json
    from looprover import cli
    path = tmp_path / "w.c"
    path.write_text(HEAD + body + "\n  return 0;\n}\n")
    out = tmp_path / "w.yml"
    cli.main(["verify", str(path), "--witness", str(out), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert got["result"] == "FALSE(unreach-call)", got
    assert out.exists() == written, got["witness"]
    if written:
        assert "the validator confirms it" in got["witness"]["note"]


def test_allocations_succeed_under_the_convention_that_says_so(tmp_path, capsys):
    """`--allocation succeeds` (SV-COMP's rule before 2027): malloc and calloc never return NULL; alloca never
    did."""
    import json
    from looprover import cli
    path = tmp_path / "a.c"
    path.write_text(HEAD + "int *a = malloc(4 * sizeof(int)); int *b = calloc(2, sizeof(int));\n"
                           "__VERIFIER_assert(a != 0 && b != 0 && b[1] == 0); free(a); free(b);\n  return 0;\n}\n")
    for flag, want in (("may-fail", "FALSE(unreach-call)"), ("succeeds", "TRUE")):
        cli.main(["verify", str(path), "--allocation", flag, "--json"])
        assert json.loads(capsys.readouterr().out)["result"] == want, flag


def _random_heap_program(rng) -> str:
    """A program that pushes and pops list nodes and takes a buffer per iteration in a loop, at most three nodes
    live at once (what a pool holds), its results summed into globals."""
    ops = []
    for _ in range(rng.randrange(3, 7)):
        ops.append(rng.choice([
            "if (n < 3) { struct node *x = malloc(sizeof *x); if (!x) return 1; x->val = k * c + {a};"
            " x->next = h; h = x; n++; }",
            "if (h) { struct node *t = h->next; r1 += h->val * {a}; free(h); h = t; n--; }",
            "if (h && h->next) h->next->val += c - {a};",
            "{ int *b = calloc(2, sizeof(int)); if (!b) return 1; b[1] = c + {a}; r2 += b[0] + b[1]; free(b); }",
            "{ struct node *s = h; while (s) { r2 += s->val % 5; s = s->next; } }",
        ]).replace("{a}", str(rng.randrange(1, 9))))
    body = "\n      ".join(f"if (c % {len(ops)} == {i}) {op}" for i, op in enumerate(ops))
    return f"""#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
struct node {{ int val; struct node *next; }};
int r1, r2, r3;
int main(void) {{
  struct node *h = 0;
  int n = 0;
  for (int k = 0; k < {rng.randrange(4, 12)}; k++) {{
      int c = __VERIFIER_nondet_int() & 255;
      {body}
  }}
  while (h) {{ struct node *t = h->next; r3 += h->val; free(h); h = t; }}
  r1 += n; r2 -= n;
  return 0;
}}
"""


@pytest.mark.parametrize("seed", range(4))
def test_pools_run_as_gcc_runs_random_list_programs(gcc, tmp_path, seed):
    """Every run that needs at most three live nodes of an allocation in a loop is modelled exactly: the
    interpreter's results on random programs and inputs (every malloc succeeding, as in gcc's runs) are gcc's,
    and no run leaves the model."""
    import random
    rng = random.Random(seed)
    for i in range(3):
        inputs = [[rng.randrange(256) for _ in range(12)] for _ in range(4)]
        crosscheck(gcc, tmp_path, _random_heap_program(rng), inputs, ["r1", "r2", "r3"], ("LP64", "ILP32"),
                   name=f"p{seed}_{i}")
