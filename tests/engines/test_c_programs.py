"""The engines (bmc, kinduction, spacer) on small C programs through the C front-end (skipped when it or gcc is
unavailable)."""
import pytest

from looprover.engines import verify
from looprover.verdict import Status

HEADER = """
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern void __VERIFIER_assume(int cond);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error(void) { __assert_fail("0", "t.c", 1, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
"""

PROGRAMS = {
    # name: (body of main, expected, engines that must decide it)
    "even_safe": ("int x = 0; while (__VERIFIER_nondet_bool()) x += 2; __VERIFIER_assert(x != 7);",
                  Status.TRUE, ("kinduction", "spacer")),
    "even_unsafe": ("int x = 0; while (__VERIFIER_nondet_bool()) x += 2; __VERIFIER_assert(x != 6);",
                    Status.FALSE, ("bmc", "kinduction", "spacer")),
    "uwrap_unsafe": ("unsigned x = 0; x--; __VERIFIER_assert(x < 100u);", Status.FALSE,
                     ("bmc", "kinduction", "spacer")),
    "udec_safe": ("unsigned x = 0; x--; __VERIFIER_assert(x > 0u);", Status.TRUE, ("bmc", "kinduction", "spacer")),
    "sucmp_safe": ("int x = -1; unsigned y = 1; __VERIFIER_assert(x > y);", Status.TRUE,
                   ("bmc", "kinduction", "spacer")),
    "negdiv_unsafe": ("int x = __VERIFIER_nondet_int(); __VERIFIER_assume(-10 <= x && x <= -1);"
                      "__VERIFIER_assert(x % 3 >= 0);", Status.FALSE, ("bmc", "kinduction", "spacer")),
    # (Spacer proves it too, but in 24 s on the integer encoding on a slow machine: no timed assertion here)
    "bounded_safe": ("int a[8]; int i; for (i = 0; i < 8; i++) a[i] = 2 * i; __VERIFIER_assert(a[5] == 10);",
                     Status.TRUE, ("bmc",)),
    "uchar_unsafe": ("unsigned char c = 250; while (__VERIFIER_nondet_bool()) c++; __VERIFIER_assert(c >= 250);",
                     Status.FALSE, ("bmc", "kinduction", "spacer")),
}


@pytest.fixture
def load(gcc, tmp_path):
    frontend = pytest.importorskip("looprover.frontend.c")

    def _load(name: str, body: str):
        path = tmp_path / f"{name}.c"
        path.write_text(HEADER + "int main(void) { " + body + " return 0; }\n")
        return frontend.load_c_program(path)
    return _load


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_c_program(load, name, bitvector):
    body, expected, deciders = PROGRAMS[name]
    prog = load(name, body)
    for engine in ("bmc", "kinduction", "spacer"):
        v = verify(engine, prog, timeout=20, bitvector=bitvector, max_bound=64)
        if engine in deciders:
            assert v.status == expected, f"{engine}: {v.reason}"
        else:
            assert v.status in (expected, Status.UNKNOWN), f"{engine}: {v.reason}"
        if v.status == Status.FALSE:
            assert v.evidence.validated
