"""evidence/native.py: the compiled run's input stream and its checks.

The plan stays compressed all the way into the compiled program (`native.READER` serves a repeat of plain
values as a cycle, and walks nested repeats); these tests compile a program that prints every value it reads
and compare with the plan expanded in Python (`deep.iter_plan`), on hand-picked and random plans.
"""
from __future__ import annotations

import random
import subprocess

import pytest

from looprover.program.emit_c import initial_havocs
from looprover.program.expr import I32, ArrayType
from looprover.program.interp import ArrayValue
from looprover.evidence import native
from looprover.evidence.deep import Repeat, iter_plan

from helpers.progdsl import Prog, add, c, lt, ne, sel

EXTRA = 3          # values read past the plan's end: 0 each

PRINTER = r"""
extern int printf(const char *, ...);
extern long long __VERIFIER_nondet_longlong(void);
extern char __VERIFIER_nondet_char(void);
int main(int argc, char **argv) {
  long n = 0;
  for (char *p = argv[1]; *p; p++) n = 10 * n + (*p - '0');
  for (long k = 0; k < n; k++) printf("%lld\n", k % 2 ? (long long)__VERIFIER_nondet_char()
                                                     : __VERIFIER_nondet_longlong());
  return 0;
}
"""


@pytest.fixture(scope="module")
def printer(tmp_path_factory):
    if native.why_not(Prog("p").build()) is not None:
        pytest.skip("gcc is not installed")
    exe = native.build(PRINTER, tmp_path_factory.mktemp("printer"), 60)
    assert exe is not None
    return exe


def read_back(exe, tmp_path, plan) -> list[int]:
    native.write_plan(tmp_path / "plan", plan)
    n = sum(1 for _ in iter_plan(plan)) + EXTRA
    r = subprocess.run([str(exe), str(n)], env={"LR_PLAN": str(tmp_path / "plan")}, capture_output=True,
                       text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    return [int(x) for x in r.stdout.split()]


def expected(plan) -> list[int]:
    """What the program reads: the plan in order (odd reads through `char`), then zeros."""
    vals = [native._value(v) for v in iter_plan(plan)] + [0] * EXTRA
    return [((v + 128) % 256) - 128 if k % 2 else v for k, v in enumerate(vals)]


@pytest.mark.parametrize("plan", [
    [1, Repeat(3, [2, Repeat(2, [3])]), 4],
    [Repeat(0, [5]), 6, Repeat(2, []), 7],
    [Repeat(4, [1, 2, 3]), Repeat(2, [Repeat(3, [8]), 9, Repeat(1, [10, 11])])],
    [Repeat(2, [Repeat(2, [Repeat(2, [Repeat(2, [-1, 2 ** 63 - 1])])])]), 2 ** 64 - 1, -(2 ** 63)],
    [],
])
def test_the_compiled_stream_is_the_expanded_plan(printer, tmp_path, plan):
    assert read_back(printer, tmp_path, plan) == expected(plan)


def test_random_plans_read_back_as_expanded(printer, tmp_path):
    rng = random.Random(11)

    def gen(depth: int) -> list:
        out = []
        for _ in range(rng.randint(0, 4)):
            if depth < 4 and rng.random() < 0.4:
                out.append(Repeat(rng.randint(-1, 4), gen(depth + 1)))
            else:
                out.append(rng.randint(-300, 300))
        return out
    for _ in range(25):
        plan = gen(0)
        assert read_back(printer, tmp_path, plan) == expected(plan), plan


def test_initial_arrays_are_runs_of_their_cells():
    """An array read before written gets its initial cells from the plan: as runs, the same values as cell by
    cell."""
    p = Prog("init")
    a = p.var("a", ArrayType(I32, I32, 10))
    x = p.var("x", I32)
    p.assert_(ne(add(sel(a, c(3)), sel(a, c(9))), x))
    prog = p.build()
    names = [v.name for v in initial_havocs(prog)]
    assert sorted(names) == ["a", "x"]
    arr = ArrayValue(5, {3: 7, 4: 7, 12: 1, -1: 2})
    items = native.initial_plan(prog, {"a": arr, "x": 4})
    assert len(items) < 10
    cells = {"a": [arr.get(i) for i in range(10)], "x": [4]}
    assert list(iter_plan(items)) == [v for n in names for v in cells[n]]
    assert native.initial_plan(prog, {}) == [0 if n == "x" else Repeat(10, [0]) for n in names]


def test_a_deep_loop_overflowing_on_repeated_inputs_traps():
    """The inlined cycle at -O2 keeps the sanitizer's signed-overflow trap: s += d a million times with d from
    the cycle overflows for d = 3000 (the run is refused), reaches the assertion exactly for d = 2000, and runs
    past it for d = 1999."""
    p = Prog("sum")
    s, i, d = p.var("s", I32), p.var("i", I32), p.var("d", I32, kind="nondet")
    p.assign(s, c(0))
    p.assign(i, c(0))
    with p.while_(lt(i, c(1_000_000))):
        p.havoc(d)
        p.assign(s, add(s, d))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(s, c(2_000_000_000)))
    prog = p.build()
    if native.why_not(prog) is not None:
        pytest.skip(native.why_not(prog))
    assert native.run(prog, {}, [Repeat(1_000_000, [2000])], 20) is None
    assert "signal" in native.run(prog, {}, [Repeat(1_000_000, [3000])], 20)
    assert "without a violation" in native.run(prog, {}, [Repeat(1_000_000, [1999])], 20)
    # one value short of the plan: the last iteration reads 0, the sum misses the failing value
    assert native.run(prog, {}, [Repeat(999_999, [2000])], 20) is not None


def test_a_havoc_overwritten_before_any_read_leaves_the_program_closed(tmp_path):
    """`int x;` havocs x in the IR; `x = 0;` before any read leaves one execution. A havoc whose value an
    assumption or a branch reads does not."""
    from looprover.frontend.c import load_c_program
    closed, open_ = tmp_path / "closed.c", tmp_path / "open.c"
    closed.write_text("int main(void) {\n  int x, y;\n  x = 0;\n  y = x + 1;\n  return y;\n}\n")
    open_.write_text("extern int __VERIFIER_nondet_int(void);\nint main(void) {\n  int x = __VERIFIER_nondet_int();\n"
                     "  int y = 0;\n  if (x > 0) y = 1;\n  return y;\n}\n")
    assert native.why_open(load_c_program(str(closed))) is None
    assert "reads input (nondet_int" in native.why_open(load_c_program(str(open_)))
