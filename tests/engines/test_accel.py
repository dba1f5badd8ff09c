"""The `accel` engine: under-approximating acceleration, then BMC (`engines/accel.py`).

It finds bugs behind many iterations with a shallow unwinding, answers FALSE only with a counterexample of the
original program (replayed, or run: interpreted or compiled), and never TRUE: on safe programs it stays UNKNOWN,
even when BMC exhausts the accelerated program. The transform alone: tests/transforms/test_accelerate.py.
"""
from __future__ import annotations

import pytest

from looprover.deadline import Deadline
from looprover.engines import ENGINES, get_engine, verify
from looprover.program.expr import I32, U8, U32, ArrayType, ConstArray, cmp
from looprover.verdict import Status
from looprover.evidence import native
from looprover.evidence.deep import PlanSeq, Repeat, RunCounterexample
from looprover.evidence.recheck import recheck_counterexample
from looprover.evidence.replay import replay

from helpers.progdsl import Prog, add, c, eq, lt, ne, sel
from helpers.randprog import random_program


def counter(bound: int, bad: int, t=U32):
    """x, y := 0; while (x < bound) { x++; y += 2; } assert(y != bad)."""
    p = Prog(f"count{bound}")
    x, y = p.var("x", t), p.var("y", t)
    p.assign(x, c(0, t))
    p.assign(y, c(0, t))
    with p.while_(lt(x, c(bound, t))):
        p.assign(x, add(x, c(1, t)))
        p.assign(y, add(y, c(2, t)))
    p.assert_(ne(y, c(bad, t)))
    return p.build()


def needs_gcc():
    why = native.why_not(counter(1, 0))
    if why is not None:
        pytest.skip(why)


def test_registered_as_a_falsifier():
    assert "accel" in ENGINES
    e = get_engine("accel")
    assert e.cost == 0 and e.verdicts == frozenset({Status.FALSE})      # in the portfolio's first group


def test_bug_after_five_thousand_iterations_is_a_replayed_trace():
    p = counter(5_000, 10_000)
    v = verify("accel", p, timeout=60)
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and len(v.evidence.steps) == 2 * 5_000 + 3      # entry, 2 edges per iteration, exit
    assert replay(p, v.evidence).ok                     # a trace of the original program, edge by edge


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_bug_after_two_hundred_million_iterations(bitvector):
    needs_gcc()
    p = counter(200_000_000, 400_000_000)
    v = verify("accel", p, timeout=60, bitvector=bitvector)
    assert v.status == Status.FALSE, v.reason
    cex = v.evidence
    assert isinstance(cex, RunCounterexample) and cex.native and cex.length == 2 * 200_000_000 + 3
    assert recheck_counterexample(p, cex, bitvector, Deadline.after(60)) is None
    # the portfolio's recheck runs it again: on a program one iteration longer it is no violation
    assert recheck_counterexample(counter(200_000_001, 400_000_000), cex, bitvector,
                                  Deadline.after(60)) is not None


def buffer(n: int):
    """`ch = nondet(); if (ch == ' ') { assert(i + 1 < N); i += 2 } else { a[i] = ch; i++ }`."""
    p = Prog("buffer")
    a = p.var("a", ArrayType(I32, U8, n))
    i, ch = p.var("i", I32), p.var("ch", U8, kind="nondet")
    p.assign(i, c(0))
    with p.while_(lt(i, c(n))):
        p.havoc(ch)
        with p.if_(eq(ch, c(32, U8))) as els:
            p.assert_(lt(add(i, c(1)), c(n)))
            p.assign(i, add(i, c(2)))
            els()
            p.store(a, i, ch)
            p.assign(i, add(i, c(1)))
    return p.build()


def test_inputs_read_in_the_accelerated_path_are_replayed():
    """The else path is accelerated with one frozen input (the same character every iteration), the array
    write is a fill; the bug needs N - 1 such iterations, then a space."""
    n = 3000
    v = verify("accel", buffer(n), timeout=60)
    assert v.status == Status.FALSE, v.reason
    assert len(v.evidence.inputs) == n and v.evidence.inputs[-1] == 32 and 32 not in v.evidence.inputs[:-1]


def test_runs_too_long_to_store_are_run_with_their_compressed_inputs():
    """60 000 edges: no stored trace, a run of the program on the interpreter (less than a second of it); its
    havoc plan is compressed (the accelerated iterations' inputs once, repeated), and the portfolio's recheck runs
    the program on it again."""
    prog = buffer(12_000)
    v = verify("accel", prog, timeout=60)
    assert v.status == Status.FALSE, v.reason
    cex = v.evidence
    assert isinstance(cex, RunCounterexample) and not cex.native and cex.length > 20_000
    assert any(isinstance(x, Repeat) and x.times == 11_999 for x in cex.plan)
    assert recheck_counterexample(prog, cex, False, Deadline.after(60)) is None
    assert PlanSeq([1, Repeat(3, [2, Repeat(2, [3])]), 4])[:] == [1, 2, 3, 3, 2, 3, 3, 2, 3, 3, 4]


def test_phases_and_nested_loops():
    needs_gcc()
    p = Prog("phases")
    x, y = p.var("x", U32), p.var("y", U32)
    p.assign(x, c(0, U32))
    with p.while_(lt(x, c(0x0fffffff, U32))):
        p.assign(y, c(0, U32))
        with p.while_(lt(y, c(3, U32))):
            p.assign(y, add(y, c(1, U32)))
        with p.if_(lt(x, c(0xfff1, U32))) as els:
            p.assign(x, add(x, c(1, U32)))
            els()
            p.assign(x, add(x, c(2, U32)))
    p.assert_(ne(x, c(0x0fffffff, U32)))
    v = verify("accel", p.build(), timeout=60)
    assert v.status == Status.FALSE, v.reason


# ------------------------------------------------------------------------------------ never TRUE
def test_safe_deep_loop_stays_unknown():
    v = verify("accel", counter(1_000_000, 7), timeout=4)
    assert v.status == Status.UNKNOWN


def test_exhausted_under_approximation_proves_nothing():
    """A loop-free accelerated program that BMC proves safe: still no TRUE."""
    v = verify("accel", counter(3, 7), timeout=20)
    assert v.status == Status.UNKNOWN and "proves nothing" in v.reason


def test_a_violation_behind_signed_overflow_is_no_counterexample():
    """x counts up from 0 and fails once negative: only signed overflow (undefined) gets there. The
    accelerated branch never overflows, so there is no counterexample to find."""
    p = Prog("ovf")
    x = p.var("x", I32)
    p.assign(x, c(0))
    with p.while_(None):
        p.assign(x, add(x, c(1)))
        p.assert_(cmp(">=", x, c(0)))
    v = verify("accel", p.build(), timeout=4)
    assert v.status == Status.UNKNOWN


def test_compiled_runs_refuse_undefined_behaviour():
    needs_gcc()
    p = Prog("ub")
    x = p.var("x", I32, kind="nondet")
    p.havoc(x)
    p.assign(x, add(x, c(1)))
    p.assert_(ne(x, c(-2147483648)))
    prog = p.build()
    assert "signal" in native.run(prog, {}, [2147483647], 20)          # INT_MAX + 1 traps
    assert native.run(prog, {}, [5], 20) is not None                    # no violation
    p2 = Prog("plain")
    y = p2.var("y", I32, kind="nondet")
    p2.havoc(y)
    p2.assert_(ne(y, c(-7)))
    assert native.run(p2.build(), {}, [Repeat(1, [-7])], 20) is None


@pytest.mark.slow
def test_no_false_where_bmc_proves_safety_on_random_programs():
    """Differential: on random programs with small loops, BMC decides; accel's FALSE (replayed) must agree."""
    wrong, found = [], 0
    for seed in range(30):
        prog = random_program(seed)
        v = verify("accel", prog, timeout=10, max_bound=8)
        assert v.status != Status.TRUE
        if v.status == Status.FALSE:
            found += 1
            if verify("bmc", prog, timeout=20, max_bound=64).status == Status.TRUE:
                wrong.append(seed)
    assert not wrong and found >= 3, (wrong, found)


def test_example_counter_from_the_shared_examples(shared_dir, tmp_path):
    from looprover.frontend.c import load_c_program
    template = (shared_dir / "examples" / "underapprox_counter_N.c.in").read_text()
    (tmp_path / "sv.h").write_text((shared_dir / "examples" / "sv.h").read_text())
    for n in (10, 1000):
        src = tmp_path / f"counter_{n}.c"
        src.write_text(template.replace("@N@", str(n)))
        v = verify("accel", load_c_program(src, "ILP32"), timeout=30)
        assert v.status == Status.FALSE, (n, v.reason)


def test_read_only_array_scan():
    """`while (a[i] != 0) i++` over a prefix written by an earlier (accelerated) loop."""
    p = Prog("scan")
    a = p.var("a", ArrayType(I32, U8, 5000))
    i, j, n = p.var("i", I32), p.var("j", I32), p.var("n", I32, kind="nondet")
    p.assign(a, ConstArray(c(0, U8), a.type))
    p.havoc(n)
    p.assume(lt(c(0), n))
    p.assume(lt(n, c(5000)))
    p.assign(j, c(0))
    with p.while_(lt(j, n)):
        p.store(a, j, c(120, U8))
        p.assign(j, add(j, c(1)))
    p.assign(i, c(0))
    with p.while_(ne(sel(a, i), c(0, U8))):
        p.assign(i, add(i, c(1)))
    p.assert_(ne(i, c(4000)))
    v = verify("accel", p.build(), timeout=60)
    assert v.status == Status.FALSE and v.evidence.inputs == [4000], v.reason


def test_quantified_branches_come_second():
    """A guard that keeps a quantifier (here `a[i] != i` for a read-only array: neither monotone nor a
    membership of cells) can slow every BMC query: BMC gets the program without that branch first."""
    from looprover.engines.accel import Accel
    from looprover.transforms.accelerate import AccelerateTransform
    p = Prog("q")
    a = p.var("a", ArrayType(I32, I32, 100))
    i = p.var("i", I32)
    p.assign(i, c(0))
    with p.while_(ne(sel(a, i), i)):
        p.assign(i, add(i, c(1)))
    p.assert_(ne(i, c(5)))
    t = AccelerateTransform().apply(p.build())
    (acc,) = t.back.accels.values()
    assert acc.quantified
    (first, share), (second, _) = Accel().stages(t)
    assert acc.edge not in first.program.edges and acc.edge in second.program.edges and share == 0.5
    v = verify("accel", p.build(), timeout=20)
    assert v.status == Status.FALSE and len(v.stats["stages"]) == 1


COPY_THROUGH_POINTER = """extern char __VERIFIER_nondet_char(void);
char *copy(char *dest, const char *src) {
  int i;
  for (i = 0; ; i++) { dest[i] = src[i]; if (src[i] == 0) break; }
  return dest;
}
void keep(char *line) {
  char user[SMALL];
  copy(user, line);
}
int main(void) {
  char in[N + 5];
  int k;
  for (k = 0; k < N + 4; k++) in[k] = __VERIFIER_nondet_char();
  in[N + 4] = 0;
  keep(in);
  return 0;
}
"""


@pytest.mark.parametrize("n", [4, 1000])
def test_a_copy_into_a_local_of_a_called_function_overflows_at_any_size(tmp_path, n):
    """`user`'s object id is a variable (a new one per activation of `keep`), so the front-end writes the copy's
    `dest[i] = src[i]` as writes of both objects, `in[i] = id == in's id ? src[i] : in[i]`: a path that reads what it
    writes until the write of `in` is recognised as `in[i] = in[i]` (or split on the id, tests/transforms/
    test_accelerate.py). The overflow after N iterations is found at N = 1000 as at 4, replayed."""
    from looprover.engines import run_engine
    from looprover.engines.base import Run, Task
    from looprover.frontend.c import load_c_program
    from looprover.properties import Property
    f = tmp_path / "copy.c"
    f.write_text(COPY_THROUGH_POINTER)
    _found_by_accel_in_a_fresh_process(f, (f"-DN={n}", f"-DSMALL={n}"))
    safe = load_c_program(f, memsafety=True, cpp_flags=(f"-DN={n}", f"-DSMALL={n + 5}"))
    v = run_engine(get_engine("accel"), safe, Task(Property("valid-memsafety"), "c", "ILP32"), Run.with_timeout(5))
    assert v.status == Status.UNKNOWN, v.reason


def _found_by_accel_in_a_fresh_process(f, cpp_flags: tuple[str, ...]) -> None:
    """accel's FALSE, replayed, from `looprover verify` as a user runs it. In the test process z3's main context
    holds the terms of every earlier test, and term order makes the quantified BMC queries' run time
    heavy-tailed (`smt.solver.Solver.check_restarting`): under two busy xdist workers the scan once ran out of
    30 s at N = 4 that takes 0.5 s in a fresh process (40 of 40 hash seeds)."""
    import json
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "looprover", "verify", str(f), "--engine", "accel", "--property", "valid-memsafety",
           "--timeout", "30", "--json", *(x for d in cpp_flags for x in (d[:2], d[2:]))]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout)
    assert out["status"] == "FALSE" and out["counterexample"]["validated"], out["reason"]


SCAN = """extern char __VERIFIER_nondet_char(void);
int main(void) {
  char line[N + 1];
  char word[WORD];
  int i, k;
  for (k = 0; k < N; k++) line[k] = __VERIFIER_nondet_char();
  line[N] = 0;
  i = 0;
  while (line[i] != 0 && line[i] != ',') i++;
  if (i > 0) word[i - 1] = line[0];
  return 0;
}
"""


@pytest.mark.parametrize("n", [4, 1000])
def test_a_scan_whose_guard_reads_the_buffer_is_found_at_any_size(tmp_path, n):
    """The scan's guard reads `line[i]`, so its accelerated branch assumes `∀j ∈ cells. line[j] != 0 && line[j]
    != ','`; the BMC of the accelerated program looks for violations only and names that guard one way
    (`smt.dag.DagEncoding.one_way_binders`). A first word longer than `word` is found at N = 1000 as at 4; with
    `word` large enough the engine stays UNKNOWN (its BMC's exhausted unrolling proves nothing)."""
    from looprover.engines import run_engine
    from looprover.engines.base import Run, Task
    from looprover.frontend.c import load_c_program
    from looprover.properties import Property
    f = tmp_path / "scan.c"
    f.write_text(SCAN)
    task = Task(Property("valid-memsafety"), "c", "ILP32")
    _found_by_accel_in_a_fresh_process(f, (f"-DN={n}", f"-DWORD={n // 2}"))
    v = run_engine(get_engine("accel"), load_c_program(f, memsafety=True, cpp_flags=(f"-DN={n}", f"-DWORD={n}")),
                   task, Run.with_timeout(5))
    assert v.status == Status.UNKNOWN, v.reason


def test_the_falsifying_bmc_never_answers_true():
    """`FalsifyingBMC` (accel's inner engine) answers UNKNOWN where BMC proves the program by exhausting it."""
    from looprover.engines.accel import FalsifyingBMC
    from looprover.engines import run_engine
    from looprover.engines.base import Run, Task
    from looprover.properties import Property
    program = counter(5, 7)
    task = Task(Property("unreach-call"), "c", "ILP32")
    assert run_engine(get_engine("bmc"), program, task, Run.with_timeout(10)).status == Status.TRUE
    v = run_engine(FalsifyingBMC(), program, task, Run.with_timeout(10))
    assert v.status == Status.UNKNOWN and "falsification only" in v.reason, v.reason
    assert run_engine(FalsifyingBMC(), counter(5, 10), task, Run.with_timeout(10)).status == Status.FALSE


def test_a_program_that_only_writes_its_buffer_is_accelerated_on_its_slice():
    """`buffer`'s array is written, never read: its fill would be a z3 lambda in BMC's queries, so accel
    works on the slice, which drops the writes, and its counterexample is run on the program itself (above:
    the long run keeps its compressed plan). An array the program reads back keeps the program whole."""
    from looprover.engines.accel import write_only_arrays
    assert write_only_arrays(buffer(10)) == {"a"}
    p = Prog("copy")
    a, b = p.var("a", ArrayType(I32, U8, 10)), p.var("b", ArrayType(I32, U8, 10))
    i = p.var("i", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(10))):
        p.store(b, i, sel(a, i))
        p.store(a, i, c(0, U8))
        p.assign(i, add(i, c(1)))
    assert write_only_arrays(p.build()) == {"b"}
    v = verify("accel", buffer(3000), timeout=60)
    assert v.status == Status.FALSE and "slice" in v.reason, v.reason
