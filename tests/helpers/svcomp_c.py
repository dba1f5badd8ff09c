"""C programs written the SV-COMP way, for tests that need the C front-end: the usual declarations and a loader
of a `main` body."""
from __future__ import annotations

from pathlib import Path

HEADER = """
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern void __VERIFIER_assume(int cond);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error(void) { __assert_fail("0", "t.c", 1, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
"""


def load_main(directory: Path, name: str, body: str, globals_: str = ""):
    """The program `HEADER + globals_ + int main(void) { body return 0; }`, written to `directory/name.c` and
    loaded by the C front-end."""
    from looprover.frontend.c import load_c_program
    path = directory / f"{name}.c"
    path.write_text(HEADER + globals_ + "int main(void) { " + body + " return 0; }\n")
    return load_c_program(path)
