"""emit_c: the printed C compiles and means what the IR means.

The round-trip check compiles the emitted C together with a small harness (nondet functions read the next
input from stdin, a destructor prints the final variable values) and compares each run with `interp.run` on
the same inputs: same outcome (violation / exit / blocked) and, on exit, the same final state.
"""
from __future__ import annotations

import random
import re
import signal
import subprocess
from pathlib import Path

import pytest

from looprover.program import interp
from looprover.program.cfa import Assert, Assign, Assume, Havoc, Program, ProgramBuilder, SrcLoc
from looprover.program.emit_c import c_names, emit_c
from looprover.program.expr import (
    BOOL, FALSE, I8, I16, I32, I64, MATH_INT, TRUE, U8, U16, U32, U64, And, ArrayType, Binary, BoolConst, Cast,
    ConstArray, IntType, Ite, Not, Or, Select, Store, Unary, Var, binary, cast, cmp, const, ite, not_, or_,
)

BLOCKED = 77

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
static long long __lrh_next(void) { long long v; return scanf("%lld", &v) == 1 ? v : 0; }
_Bool __VERIFIER_nondet_bool(void) { return __lrh_next() != 0; }
char __VERIFIER_nondet_char(void) { return (char)__lrh_next(); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)__lrh_next(); }
short __VERIFIER_nondet_short(void) { return (short)__lrh_next(); }
unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)__lrh_next(); }
int __VERIFIER_nondet_int(void) { return (int)__lrh_next(); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)__lrh_next(); }
long long __VERIFIER_nondet_longlong(void) { return __lrh_next(); }
unsigned long long __VERIFIER_nondet_ulonglong(void) { return (unsigned long long)__lrh_next(); }
void __VERIFIER_assume(int c) { if (!c) exit(BLOCKED); }
static void __attribute__((destructor)) __lrh_dump(void) {
DUMP}
""".replace("BLOCKED", str(BLOCKED))


def _dump_code(p: Program) -> str:
    """printf lines for every scalar variable and every element of small sized arrays."""
    names = c_names(p)
    lines = []
    for name, info in p.variables.items():
        t, c = info.var.type, names[name]
        if isinstance(t, ArrayType):
            assert t.size is not None and t.size <= 64, "round-trip programs use small sized arrays"
            elem_unsigned = isinstance(t.elem, IntType) and not t.elem.signed
            fmt, cast_ = ("%llu", "unsigned long long") if elem_unsigned else ("%lld", "long long")
            lines.append(f'for (int k = 0; k < {t.size}; k++) printf("{name}[%d]={fmt}\\n", k, ({cast_}){c}[k]);')
        else:
            unsigned = isinstance(t, IntType) and not t.signed
            fmt, cast_ = ("%llu", "unsigned long long") if unsigned else ("%lld", "long long")
            lines.append(f'printf("{name}={fmt}\\n", ({cast_}){c});')
    return "  fflush(stdout);\n".join("  " + l + "\n" for l in lines) + "  fflush(stdout);\n"


def compile_program(p: Program, tmp_path: Path, gcc: str) -> Path:
    src = tmp_path / f"{p.name}.c"
    src.write_text(emit_c(p) + HARNESS.replace("DUMP", _dump_code(p)))
    exe = tmp_path / p.name
    r = subprocess.run([gcc, "-std=gnu11", "-O0", "-fwrapv", "-w", "-o", str(exe), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + "\n" + src.read_text()
    return exe


def run_c(exe: Path, inputs: list[int]) -> tuple[str, dict[str, int]]:
    r = subprocess.run([str(exe)], input=" ".join(map(str, inputs)), capture_output=True, text=True, timeout=20)
    if r.returncode == -signal.SIGABRT and "reach_error" in r.stderr:
        return "violation", {}
    if r.returncode == BLOCKED:
        return "blocked", {}
    assert r.returncode == 0, (r.returncode, r.stderr)
    state = {}
    for line in r.stdout.splitlines():
        k, v = line.split("=")
        state[k] = int(v)
    return "exit", state


class AllHavocs(interp.Oracle):
    """Feeds the inputs to every havoc in order (the emitted C calls a nondet function for each)."""

    def __init__(self, inputs):
        self.inputs, self.pos = list(inputs), 0

    def _next(self, t):
        v = self.inputs[self.pos] if self.pos < len(self.inputs) else 0
        self.pos += 1
        return bool(v) if t == BOOL else t.wrap(v)

    def __call__(self, v: Var):
        if isinstance(v.type, ArrayType):
            return interp.ArrayValue(interp.default_value(v.type.elem),
                                     {k: self._next(v.type.elem) for k in range(v.type.size)})
        return self._next(v.type)

    def snapshot(self):
        return self.pos

    def restore(self, snap):
        self.pos = snap


def flatten_state(p: Program, state: dict) -> dict[str, int]:
    out = {}
    for name, info in p.variables.items():
        v = state[name]
        if isinstance(info.var.type, ArrayType):
            for k in range(info.var.type.size):
                out[f"{name}[{k}]"] = int(v.get(k))
        else:
            out[name] = int(v)
    return out


def round_trip(p: Program, tmp_path: Path, gcc: str, input_sets) -> set[str]:
    exe = compile_program(p, tmp_path, gcc)
    seen = set()
    for inputs in input_sets:
        ref = interp.run(p, AllHavocs(inputs), max_steps=100_000, signed_overflow="wrap")
        if ref.outcome == "undefined":
            continue
        assert ref.outcome in ("violation", "exit", "blocked"), (ref.outcome, inputs)
        outcome, state = run_c(exe, inputs)
        assert outcome == ref.outcome, (inputs, outcome, ref.outcome)
        if outcome == "exit":
            assert state == flatten_state(p, ref.state), inputs
        seen.add(outcome)
    return seen


GCC_CHECK = ["-fsyntax-only", "-std=gnu11", "-Wall", "-Wno-unused", "-Werror"]


def syntax_ok(code: str, tmp_path: Path, gcc: str, name: str = "prog.c") -> None:
    f = tmp_path / name
    f.write_text(code)
    r = subprocess.run([gcc, *GCC_CHECK, str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + "\n" + code


def all_syntax_ok(units: dict[str, str], tmp_path: Path, gcc: str) -> None:
    """Many translation units, one gcc call (each file is still checked on its own)."""
    files = []
    for name, code in units.items():
        (tmp_path / name).write_text(code)
        files.append(str(tmp_path / name))
    r = subprocess.run([gcc, *GCC_CHECK, *files], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:5000]


# ------------------------------------------------------------------------------------------ programs
def counting_loop() -> Program:
    """x counts up to a nondet n; an assertion fails when the loop ran exactly 5 times; arrays record it."""
    b = ProgramBuilder("count", source_file="/tmp/count.c")
    x = b.declare("main::x", U32, c_name="x", src=SrcLoc("/tmp/count.c", 3))
    n = b.declare("main::n", I32, kind="nondet", c_name="n")
    a = b.declare("a", ArrayType(U32, I32, 8), kind="global")
    head = b.new_loc(SrcLoc("/tmp/count.c", 5), name="loop head")
    body, done = b.new_loc(), b.new_loc()
    src = SrcLoc("/tmp/count.c", 4)
    b.add_edge(b.init, head, Havoc((n,), src), Assign(x, const(0, U32), src),
               Assign(a, ConstArray(const(7, I32), a.type)))
    guard = cmp("<", cast(I32, x), n)
    b.add_edge(head, body, Assume(guard))
    b.add_edge(body, head, Assign(a, Store(a, binary("&", x, const(7, U32)), cast(I32, x), a.type)),
               Assign(x, binary("+", x, const(1, U32))))
    b.add_edge(head, done, Assume(not_(guard)), Assert(cmp("!=", x, const(5, U32)), src=SrcLoc("/tmp/count.c", 9)))
    return b.build(exit_loc=done)


def every_expression() -> Program:
    """One edge per kind of computation, over every integer width; the final assertion depends on inputs."""
    b = ProgramBuilder("exprs")
    ins = {t: b.declare(f"in_{t}", t, kind="nondet") for t in (I8, U8, I16, U16, I32, U32, I64, U64, MATH_INT)}
    flag = b.declare("flag", BOOL, kind="nondet")
    res = {t: b.declare(f"r_{t}", t) for t in ins}
    bres = b.declare("bres", BOOL)
    arr = b.declare("arr", ArrayType(I32, I16, 6))
    arr2 = b.declare("arr2", ArrayType(I32, I16, 6))
    barr = b.declare("barr", ArrayType(U8, BOOL, 4))
    acc = b.declare("acc", I64)
    stmts: list = [Havoc(tuple(ins.values()) + (flag,)), Assign(acc, const(0, I64))]
    for t, v in ins.items():
        r = res[t]
        one = const(1, t)
        nonzero = ite(cmp("==", v, const(0, t)), one, v)
        stmts.append(Assign(r, v))
        for op in ("+", "-", "*"):
            stmts.append(Assign(r, binary(op, r, binary("+", v, const(3, t)))))
        stmts.append(Assign(r, binary("/", r, nonzero)))
        stmts.append(Assign(r, binary("+", r, binary("%", const(1000, t), nonzero))))
        if t.bits is not None:
            for op in ("&", "|", "^"):
                stmts.append(Assign(r, binary(op, r, v)))
            stmts.append(Assign(r, Unary("~", r, t)))
            if not t.signed:
                amount = binary("&", v, const(7, t))
                stmts.append(Assign(r, Binary("<<", r, cast(I32, amount), t)))
                stmts.append(Assign(r, Binary(">>", r, cast(U8, amount), t)))
            else:
                stmts.append(Assign(r, Binary(">>", r, const(1, I32), t)))
        stmts.append(Assign(r, Unary("-", r, t)))
        stmts.append(Assign(acc, binary("+", acc, cast(I64, r))))
    # Booleans: comparisons, connectives, ite, casts both ways
    i32, u8 = ins[I32], ins[U8]
    c1, c2 = cmp("<", i32, const(10, I32)), cmp(">=", u8, const(100, U8))
    stmts += [
        Assign(bres, Or((And((c1, Not(c2))), flag, cmp("==", cast(BOOL, u8), flag)))),
        Assign(bres, ite(flag, Not(bres), cmp("!=", bres, BoolConst(True)))),
        Assign(acc, binary("+", acc, cast(I64, bres))),
        Assign(acc, binary("+", acc, Ite(c1, cast(I64, ins[I16]), cast(I64, ins[U16]), I64))),
        Assign(acc, binary("+", acc, cast(I64, Cast(I8, ins[U64])))),
    ]
    # arrays: constant array, self stores, store chains reading the target, copies, ites, selects of stores
    idx = binary("&", i32, const(3, I32))
    stmts += [
        Assign(arr, ConstArray(const(5, I16), arr.type)),
        Assign(arr2, ConstArray(cast(I16, i32), arr.type)),
        Assign(barr, ConstArray(FALSE, barr.type)),
        Assign(arr, Store(arr, idx, cast(I16, u8), arr.type)),
        Assign(arr, Store(Store(arr, const(0, I32), Select(arr, idx, I16), arr.type),
                          binary("+", idx, const(1, I32)), Select(arr, const(0, I32), I16), arr.type)),
        Assign(arr2, Store(arr, const(5, I32), const(-3, I16), arr.type)),
        Assign(arr, Ite(flag, arr2, Store(arr, const(4, I32), const(9, I16), arr.type), arr.type)),
        Assign(arr2, Ite(c2, Store(arr2, const(2, I32), Select(arr2, const(3, I32), I16), arr.type), arr,
                         arr.type)),
        Assign(barr, Store(barr, cast(U8, idx), c1, barr.type)),
        Assign(acc, binary("+", acc, cast(I64, Select(Store(arr, idx, const(11, I16), arr.type),
                                                      const(2, I32), I16)))),
        Assign(acc, binary("+", acc, cast(I64, Select(ConstArray(const(4, I16), arr.type), idx, I16)))),
        Assign(acc, binary("+", acc, cast(I64, Select(barr, const(1, U8), BOOL)))),
    ]
    done = b.new_loc()
    b.add_edge(b.init, done, *stmts, Assert(cmp("!=", binary("%", acc, const(3, I64)), const(0, I64))))
    return b.build(exit_loc=done)


def branching() -> Program:
    """Three-way branch with mutually exclusive guards (x<0, x==0, x>0) and an assume that can block."""
    b = ProgramBuilder("branch")
    x = b.declare("x", I32, kind="nondet")
    y = b.declare("y", I32)
    l1, l2, done = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1, Havoc((x,)), Assign(y, const(0, I32)))
    zero = const(0, I32)
    b.add_edge(l1, l2, Assume(cmp("<", x, zero)), Assign(y, const(-1, I32)))
    b.add_edge(l1, l2, Assume(cmp("==", x, zero)), Assign(y, const(0, I32)))
    b.add_edge(l1, l2, Assume(cmp(">", x, zero)), Assign(y, const(1, I32)))
    b.add_edge(l2, done, Assume(cmp("!=", x, const(7, I32))), Assert(cmp("!=", x, const(-4, I32))))
    return b.build(exit_loc=done)


# --------------------------------------------------------------------------------------------- tests
def test_counting_loop_round_trip(tmp_path, gcc):
    rng = random.Random(1)
    inputs = [[n] for n in range(-2, 9)] + [[rng.randint(-50, 50)] for _ in range(10)]
    assert round_trip(counting_loop(), tmp_path, gcc, inputs) == {"violation", "exit"}


def test_every_expression_round_trip(tmp_path, gcc):
    rng = random.Random(2)
    inputs = [[rng.randint(-300, 300) for _ in range(10)] for _ in range(40)]
    inputs += [[0] * 10, [1] * 10, [-1] * 10]
    assert round_trip(every_expression(), tmp_path, gcc, inputs) == {"violation", "exit"}


def test_branching_round_trip_needs_no_choice_inputs(tmp_path, gcc):
    p = branching()
    code = emit_c(p)
    assert "__VERIFIER_nondet_int()) {" not in code.replace("x = __VERIFIER_nondet_int();", "")
    assert round_trip(p, tmp_path, gcc, [[v] for v in range(-6, 9)]) == {"violation", "exit", "blocked"}


def test_two_way_branch_is_if_else(tmp_path, gcc):
    code = emit_c(counting_loop())
    assert "if (((int)x) < n) {" in code and "} else {" in code
    assert "if (x == 5u) reach_error();" in code
    assert "a[x & 7u] = (int)x;" in code
    assert "/* count.c:4 */" in code and "loop head" in code
    syntax_ok(code, tmp_path, gcc)


def test_nondeterministic_choice_reads_a_choice_only_when_ambiguous(tmp_path, gcc):
    """Guards x>0, x<5 and none: each edge is reachable exactly when its guard holds."""
    b = ProgramBuilder("choice")
    x = b.declare("x", I32, kind="nondet")
    h = b.declare("h", I32, kind="temp")
    l1, done, sink = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1, Havoc((x,)))
    b.add_edge(l1, done, Assume(cmp(">", x, const(0, I32))), Assert(FALSE))           # violation
    b.add_edge(l1, done, Assume(cmp("<", x, const(5, I32))))                          # exit
    b.add_edge(l1, sink, Havoc((h,)), Assume(cmp("==", h, const(1, I32))))            # blocked at sink
    p = b.build(exit_loc=done)
    code = emit_c(p)
    assert "__VERIFIER_nondet_int()" in code and "__VERIFIER_assume(0);" in code
    exe = compile_program(p, tmp_path, gcc)
    # x = 3: all three guards hold -> first choice input decides edge 1, then edge 2 vs 3
    assert run_c(exe, [3, 1])[0] == "violation"
    assert run_c(exe, [3, 0, 1])[0] == "exit"
    assert run_c(exe, [3, 0, 0, 1])[0] == "blocked"   # h = 1: reaches the sink, which blocks
    assert run_c(exe, [3, 0, 0, 2])[0] == "blocked"   # h != 1: the assume blocks
    # x = 9: edge 2 disabled -> edge 1 or 3; x = -1: edge 1 disabled -> edge 2 or 3
    assert run_c(exe, [9, 1])[0] == "violation"
    assert run_c(exe, [-1, 1])[0] == "exit"


def test_names_are_unique_valid_identifiers(tmp_path, gcc):
    b = ProgramBuilder("names")
    weird = ["x", "x#1", "main::x", "int", "abort", "__lr_k", "1st", "reach_error", "a.b", "x_1"]
    vs = [b.declare(n, I32, c_name=("x" if n.startswith(("x", "main")) else n)) for n in weird]
    done = b.new_loc()
    total = vs[0]
    for v in vs[1:]:
        total = binary("+", total, v)
    b.add_edge(b.init, done, *[Assign(v, const(i, I32)) for i, v in enumerate(vs)],
               Assert(cmp("==", total, const(sum(range(len(vs))), I32))))
    p = b.build(exit_loc=done)
    names = c_names(p)
    assert len(set(names.values())) == len(weird)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in names.values())
    assert names["x"] == "x" and "int" not in names.values() and "abort" not in names.values()
    assert round_trip(p, tmp_path, gcc, [[]]) == {"exit"}


def test_uninitialised_reads_are_havocked_at_start(tmp_path, gcc):
    b = ProgramBuilder("uninit")
    x = b.declare("x", U16)
    y = b.declare("y", U16)
    u = b.declare("u", ArrayType(I64, BOOL, None))
    done = b.new_loc()
    b.add_edge(b.init, done, Assign(y, const(1, U16)), Assign(u, Store(u, const(3, I64), TRUE, u.type)),
               Assert(or_(cmp("!=", x, y), Select(u, const(0, I64), BOOL))))
    code = emit_c(b.build(exit_loc=done))
    start = code[code.index("int main"):]
    assert start.index("x = __VERIFIER_nondet_ushort();") < start.index("y = 1u;")
    assert "y = __VERIFIER_nondet" not in code                  # written before read: stays zero
    assert "u[__lr_k] = __VERIFIER_nondet_bool()" in code        # the store keeps the other cells
    assert "#define __LR_UNSIZED_LEN 1024" in code
    syntax_ok(code, tmp_path, gcc)


def test_blocked_unreachable_and_exit_locations(tmp_path, gcc):
    b = ProgramBuilder("shapes")
    x = b.declare("x", I32, kind="nondet")
    stuck, done, dead = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, stuck, Havoc((x,)), Assume(cmp(">", x, const(100, I32))))
    b.add_edge(b.init, done, Havoc((x,)), Assume(cmp("<=", x, const(100, I32))))
    b.add_edge(dead, done, Assert(FALSE))       # unreachable: not printed
    b.add_edge(done, dead)                      # out-edge of exit: irrelevant (the run ends at exit)
    p = b.build(exit_loc=done)
    code = emit_c(p)
    assert "reach_error();" not in code.split("int main")[1]
    assert round_trip(p, tmp_path, gcc, [[5], [500]]) == {"exit", "blocked"}


def test_math_ints_and_chc_programs_compile(tmp_path, gcc):
    import looprover.frontend.chc as chc
    f = tmp_path / "counter.smt2"
    f.write_text("""(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int))
  (=> (and (inv x y) (< x 10) (= x1 (+ x 1)) (= y1 (+ y 2))) (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) (>= x 10) (not (= y 20))) false)))
""")
    p = chc.load_chc_program(f)
    code = emit_c(p)
    assert "mathematical integers" in code and "long long" in code
    syntax_ok(code, tmp_path, gcc)
    assert round_trip(p, tmp_path, gcc, [[]]) == {"blocked"}


@pytest.mark.slow
def test_every_shared_chc_file_emits_compilable_c(shared_dir, tmp_path, gcc):
    import looprover.frontend.chc as chc
    files = sorted((shared_dir / "benchmarks" / "chc").rglob("*.smt2"))
    units = {}
    for k, f in enumerate(files):
        try:
            p = chc.load_chc_program(f)
        except Exception:       # unsupported files are the front-end's business
            continue
        units[f"chc{k}_{f.stem}.c"] = emit_c(p)
    assert units
    all_syntax_ok(units, tmp_path, gcc)


@pytest.mark.slow
def test_shared_c_tasks_emit_compilable_c(shared_dir, tmp_path, gcc):
    from looprover.errors import LooproverError
    from looprover.frontend.c import load_c_program
    files = sorted((shared_dir / "benchmarks" / "svcomp").rglob("*.c"))
    units = {}
    for k, f in enumerate(files):
        try:
            p = load_c_program(f)
        except LooproverError:
            continue
        units[f"sv{k}_{f.stem}.c"] = emit_c(p)
    assert len(units) > len(files) // 2
    all_syntax_ok(units, tmp_path, gcc)


@pytest.mark.parametrize("name", ["count_safe.c", "count_unsafe.c", "max_safe.c", "branch_unsafe.c"])
def test_examples_round_trip_through_the_c_front_end(tmp_path, gcc, name):
    """C -> IR (front-end) -> C (emit_c) -> gcc: same outcome as the interpreter on the IR."""
    from looprover.frontend.c import load_c_program
    p = load_c_program(Path(__file__).resolve().parents[2] / "examples" / name)
    rng = random.Random(name)
    low = 0 if name.startswith("count") else -100    # unsigned loop bounds: keep the loops short
    inputs = [[v, w] for v in range(0, 12) for w in (0, 5)] + [[42, 0], [abs(low) // 2, 7]]
    inputs += [[rng.randint(low, 100), rng.randint(low, 100)] for _ in range(20)]
    outcomes = round_trip(p, tmp_path, gcc, inputs)
    assert outcomes == ({"exit", "violation"} if "unsafe" in name else {"exit"})


def test_arrays_zero_at_the_start_are_not_zeroed_again(tmp_path, gcc):
    """C starts static arrays zeroed: a zero `ConstArray` on the edge leaving `init`, before any other write of
    the array, prints as a comment (a compiled deep run need not zero 10^9 cells). Any other zeroing stays: after
    a write, at a location `main` returns to, or of a nonzero constant."""
    b = ProgramBuilder("zeros")
    a = b.declare("a", ArrayType(I32, I32, 8), kind="global")
    z = b.declare("z", ArrayType(I32, I32, 8), kind="global")
    n = b.declare("n", I32, kind="nondet")
    head, done = b.new_loc(), b.new_loc()
    zero = ConstArray(const(0, I32), a.type)
    b.add_edge(b.init, head, Havoc((n,)), Assign(a, zero), Assign(a, Store(a, const(2, I32), const(9, I32), a.type)),
               Assign(z, ConstArray(const(3, I32), z.type)), Assign(z, zero))
    b.add_edge(head, head, Assume(cmp(">", n, const(0, I32))), Assign(a, zero),
               Assign(n, binary("-", n, const(1, I32))))
    b.add_edge(head, done, Assume(cmp("<=", n, const(0, I32))))
    p = b.build(exit_loc=done)
    code = emit_c(p)
    assert "a = all zero: static storage already is" in code
    assert code.count("a[__lr_k] = 0;") == 1                    # the loop's zeroing
    assert "z[__lr_k] = 3;" in code and "z[__lr_k] = 0;" in code
    assert round_trip(p, tmp_path, gcc, [[0], [2], [-1]]) == {"exit"}
