"""The `loop` fixture of the domain tests: a C loop's head as a `Site`."""
from __future__ import annotations

import pytest

from looprover.domains import Site, program_constants, sample_states
from looprover.domains.base import guard_bounds
from looprover.frontend.c import load_c_program
from looprover.program.cpg import build_cpg

HEADER = ("extern void reach_error(void);\nvoid __VERIFIER_assert(int c) { if (!c) reach_error(); }\n"
          "extern unsigned int __VERIFIER_nondet_uint(void);\nextern int __VERIFIER_nondet_int(void);\n")


class Loop:
    def __init__(self, prog, site: Site):
        self.prog, self.site = prog, site

    def var(self, name: str):
        return self.prog.var(name)


@pytest.fixture
def loop(tmp_path):
    """`loop("int x = 0; while (x < 10) x++;")`: the program's loop head with its sampled states."""
    def make(body: str, bitvector: bool = False) -> Loop:
        f = tmp_path / "p.c"
        f.write_text(HEADER + "int main(void) {\n" + body + "\nreturn 0; }\n")
        prog = load_c_program(f, "ILP32")
        cpg = build_cpg(prog)
        head = next(iter(cpg.loops.loops))
        samples = sample_states(prog, {head}, bitvector=bitvector)
        assert samples[head], "the loop head was never reached"
        return Loop(prog, Site(head, program_constants(prog), samples[head], bitvector,
                               guard_bounds=guard_bounds(prog)))
    return make
