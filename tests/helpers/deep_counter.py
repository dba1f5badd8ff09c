"""The unsigned deep-counter C program (`@N@` iterations, assertion `y @OP@ 2u * @N@u`) and a loader for C text,
shared by the TPA-on-C engine tests and the single-loop-system tests."""
from __future__ import annotations

from looprover.frontend.c import load_c_program

HEADER = "extern void __assert_fail(void); extern void reach_error(void);\n" \
         "void __VERIFIER_assert(int c) { if (!c) reach_error(); }\n" \
         "extern unsigned int __VERIFIER_nondet_uint(void);\n"

DEEP = HEADER + """int main(void) {
  unsigned int x = 0, y = 0;
  while (x < @N@u) { x++; y += 2; }
  __VERIFIER_assert(y @OP@ 2u * @N@u);
  return 0;
}"""


def load(tmp_path, text: str, name: str = "p.c"):
    f = tmp_path / name
    f.write_text(text)
    return load_c_program(f, "ILP32")
