"""Deep counterexamples confirmed by a compiled run of the program.

Why: the interpreter executes about 10^5 edges a second; an accelerated counterexample (`transforms/expand.py`)
may need 10^9 iterations, which no stored trace or interpreted run can cover in a verification's time, while
compiled code runs them in a second or two. So the program is printed as C by `program.emit_c` (plain C with
the IR's meaning: it is what `looprover transform` prints and what the round-trip tests compile), compiled by
gcc together with a harness, and run: every `__VERIFIER_nondet_*()` call, which is how the printed C havocs
(the initial values of variables read before written first, `emit_c.initial_havocs`, then every havoc in
order), returns the next value of the counterexample's compressed havoc plan. Only a run that reaches
`reach_error()` confirms the counterexample.

Why it is fast: such a run is the program's own loop 10^9 times, so nothing per iteration may cost more than the
loop. The plan stays compressed in the file and in memory (a repeat of an accelerated path's inputs is a few
lines, an initial array of 10^9 equal cells one repeat), its reader is compiled into the program's translation
unit at -O2 so that the input functions inline, and a repeat of plain values is served as a cycle from a few
variables (`READER`); `emit_c` does not zero arrays C already starts zeroed.

What would make such a run differ from the IR's semantics is refused: the C has undefined behaviour where the
IR has none or a different one, so signed overflow, bad shifts, division by zero and array indices out of the
declared bounds (the IR's arrays are total) trap (gcc's sanitizers in trap mode: the run fails, nothing is
confirmed); programs with mathematical integers (Horn clauses), arrays of unknown size, array havocs or
assertions of more than one property (all of them print as `reach_error()`) are not compiled at all, nor plans
with values beyond 64 bits (the reader reads 64-bit values). A run that reads a value the plan does not have gets
0 and is still a run of the program, so whatever reaches `reach_error` is a real violation.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from looprover.program.cfa import Edge, Havoc, Program, SrcLoc
from looprover.program.expr import ArrayType, IntType
from looprover.program.interp import ArrayValue
from looprover.verdict import TraceStep
from looprover.evidence.deep import Repeat, RunCounterexample

VIOLATION, BLOCKED = 86, 87
ENDED_WITHOUT_VIOLATION = "the compiled run ended with exit code {code} without a violation"
BLOCKED_WITHOUT_VIOLATION = "the compiled run was blocked by an assumption"
SANITIZE = ["-fsanitize=signed-integer-overflow,shift,integer-divide-by-zero,bounds",
            "-fsanitize-undefined-trap-on-error"]
FLAGS = ["-O1", "-w", *SANITIZE]        # a test harness of the original source (`witness/harness.py`): short runs
# A deep run's 10^9 iterations are worth -O2's longer compile: the reader below inlines into the program's
# loops. The sanitizers are instrumented before gcc optimises and trap at any level (signed overflow still
# refuses a run: tests/evidence/test_native.py, tests/engines/test_accel.py).
RUN_FLAGS = ["-O2", "-w", *SANITIZE]

# the SV-COMP input functions, each returning the next value of `__lr_next()` (which the including harness
# defines; names in `emit_c`'s reserved `__lr_` space, so they can share the program's translation unit)
NONDET_READS = r"""
_Bool __VERIFIER_nondet_bool(void) { return __lr_next() != 0; }
char __VERIFIER_nondet_char(void) { return (char)__lr_next(); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)__lr_next(); }
short __VERIFIER_nondet_short(void) { return (short)__lr_next(); }
unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)__lr_next(); }
int __VERIFIER_nondet_int(void) { return (int)__lr_next(); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)__lr_next(); }
long long __VERIFIER_nondet_longlong(void) { return __lr_next(); }
unsigned long long __VERIFIER_nondet_ulonglong(void) { return (unsigned long long)__lr_next(); }
long __VERIFIER_nondet_long(void) { return (long)__lr_next(); }
unsigned long __VERIFIER_nondet_ulong(void) { return (unsigned long)__lr_next(); }
unsigned int __VERIFIER_nondet_unsigned(void) { return (unsigned int)__lr_next(); }
"""
# an assumption that fails and `__assert_fail` as exit codes (they need <unistd.h>)
EXIT_DEFS = r"""
void __VERIFIER_assume(int c) { if (!c) _exit(BLOCKED); }
void __assert_fail(const char *a, const char *f, unsigned int l, const char *fn) { _exit(VIOLATION); }
"""
NONDET_DEFS = NONDET_READS + EXIT_DEFS      # a test harness's definitions (`witness/harness.py`)

# The plan is a file of lines `v x` (the value x), `r t` (repeat what follows up to the matching `e` t times),
# `e 0` (the end of a repeat). This translation unit of its own (libc's headers could clash with the program's
# names) loads it before `main`; `__lr_end[i]` is the matching end of the repeat at i.
RUNTIME = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
long long *__lr_val; int *__lr_op; long *__lr_end; long __lr_n;
__attribute__((constructor)) static void __lr_load(void) {
  const char *path = getenv("LR_PLAN"); FILE *f = path ? fopen(path, "r") : 0; long cap = 1024, sp = 0; char op;
  long long v; __lr_val = malloc(cap * sizeof *__lr_val); __lr_op = malloc(cap * sizeof *__lr_op);
  while (f && fscanf(f, " %c %lld", &op, &v) == 2) {
    if (__lr_n == cap) {
      cap *= 2; __lr_val = realloc(__lr_val, cap * sizeof *__lr_val); __lr_op = realloc(__lr_op, cap * sizeof *__lr_op);
    }
    __lr_op[__lr_n] = op; __lr_val[__lr_n++] = v;
  }
  if (f) fclose(f);
  __lr_end = malloc((__lr_n + 1) * sizeof *__lr_end);
  long *open = malloc((__lr_n + 1) * sizeof *open);
  for (long i = 0; i < __lr_n; i++) {
    __lr_end[i] = __lr_n;
    if (__lr_op[i] == 'r') open[sp++] = i;
    else if (__lr_op[i] == 'e' && sp > 0) __lr_end[open[--sp]] = i;
  }
  free(open);
}
""" + EXIT_DEFS

# The plan's reader, appended to the program's translation unit (no header: `__builtin__exit`). A repeat of
# plain values -- an accelerated path's frozen inputs, read again by each of its iterations -- becomes a cycle
# that `__lr_next` serves from a few variables without walking the plan: inlined, a loop of 10^9 iterations
# costs about what the program's own loop costs, not a call and an interpreter step per input.
READER = r"""
extern long long *__lr_val; extern int *__lr_op; extern long *__lr_end; extern long __lr_n;
static long __lr_pc, __lr_stack_pc[64]; static long long __lr_stack_left[64]; static int __lr_sp;
static const long long *__lr_cyc; static long __lr_cyc_len, __lr_cyc_pos; static long long __lr_cyc_left;
static long long __lr_slow(void) {
  for (;;) {
    if (__lr_cyc_left > 0) {
      long long v = __lr_cyc[__lr_cyc_pos];
      if (++__lr_cyc_pos == __lr_cyc_len) { __lr_cyc_pos = 0; __lr_cyc_left--; }
      return v;
    }
    if (__lr_pc >= __lr_n) return 0;
    int op = __lr_op[__lr_pc];
    if (op == 'v') return __lr_val[__lr_pc++];
    if (op == 'r') {
      long body = __lr_pc + 1, end = __lr_end[__lr_pc], j = body;
      while (j < end && __lr_op[j] == 'v') j++;
      if (__lr_val[__lr_pc] <= 0 || end == body) { __lr_pc = end + 1; continue; }
      if (j == end) {
        __lr_cyc = __lr_val + body; __lr_cyc_len = end - body; __lr_cyc_pos = 0;
        __lr_cyc_left = __lr_val[__lr_pc]; __lr_pc = end + 1; continue;
      }
      if (__lr_sp == 64) __builtin__exit(2);
      __lr_stack_pc[__lr_sp] = body; __lr_stack_left[__lr_sp++] = __lr_val[__lr_pc]; __lr_pc = body; continue;
    }
    if (__lr_sp == 0) { __lr_pc++; continue; }
    if (--__lr_stack_left[__lr_sp - 1] > 0) __lr_pc = __lr_stack_pc[__lr_sp - 1]; else { __lr_sp--; __lr_pc++; }
  }
}
static inline long long __lr_next(void) {
  if (__lr_cyc_left > 0) {
    long long v = __lr_cyc[__lr_cyc_pos];
    if (++__lr_cyc_pos == __lr_cyc_len) { __lr_cyc_pos = 0; __lr_cyc_left--; }
    return v;
  }
  return __lr_slow();
}
""" + NONDET_READS


def why_not(program: Program) -> str | None:
    """Why `program` cannot be confirmed by a compiled run (None if it can)."""
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    if program.data_model == "CHC":
        return "Horn clauses have no C program"
    for info in program.variables.values():
        t = info.var.type
        scalar = t.elem if isinstance(t, ArrayType) else t
        if isinstance(scalar, IntType) and scalar.bits is None:
            return "mathematical integers"
        if isinstance(t, ArrayType) and t.size is None:
            return f"array {info.var.name} of unknown size"
    for e in program.edges:
        for s in e.stmts:
            if isinstance(s, Havoc) and any(isinstance(v.type, ArrayType) for v in s.vars):
                return "array havocs"
    props = program.properties()
    if len(props) > 1:
        return f"assertions of several properties ({', '.join(sorted(props))}; the compiled program reports " \
               f"every one as reach_error)"
    return None


def build(c_source: str, where: Path, budget: float, extra: str = "") -> Path | None:
    """Compile `c_source` (a translation unit that declares the `__VERIFIER_nondet_*` it calls) with the plan's
    reader in `where`, and `extra` (C) in the runtime's translation unit; the executable, or None if gcc failed."""
    src, runtime, exe = where / "prog.c", where / "runtime.c", where / "prog.exe"
    src.write_text(c_source + READER)
    runtime.write_text(f"#define VIOLATION {VIOLATION}\n#define BLOCKED {BLOCKED}\n" + RUNTIME + extra)
    try:
        r = subprocess.run(["gcc", *RUN_FLAGS, "-o", str(exe), str(src), str(runtime)], capture_output=True,
                           text=True, timeout=max(budget, 1.0))
    except (subprocess.TimeoutExpired, OSError):
        return None
    return exe if r.returncode == 0 else None


def _value(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, ArrayValue):
        raise ValueError("array value in a havoc plan")
    v = int(v)
    if not -(1 << 63) <= v < 1 << 64:
        raise ValueError(f"havoc value {v} does not fit in 64 bits")
    return v - (1 << 64) if v >= 1 << 63 else v      # the harness reads signed 64-bit; casts restore it


def initial_plan(program: Program, initial: dict[str, Any]) -> list:
    """The plan items `emit_c`'s initial havocs read: a scalar's value, an array's cells in order, runs of
    equal cells as one `Repeat` (an array of 10^9 cells that are mostly its default is a few items)."""
    from looprover.program.emit_c import initial_havocs
    items: list = []
    for v in initial_havocs(program):
        val = initial.get(v.name)
        if not isinstance(v.type, ArrayType):
            items.append(val if val is not None else 0)
            continue
        arr = val if isinstance(val, ArrayValue) else ArrayValue(0)
        pos = 0
        for i in sorted(k for k in arr.cells if isinstance(k, int) and 0 <= k < v.type.size):
            if i > pos:
                items.append(Repeat(i - pos, [arr.default]))
            items.append(arr.cells[i])
            pos = i + 1
        if v.type.size > pos:
            items.append(Repeat(v.type.size - pos, [arr.default]))
    return items


def write_plan(path: Path, plan: Sequence[Any]) -> None:
    """The plan file `READER` reads (`RUNTIME` says its format)."""
    lines: list[str] = []

    def emit(items: Sequence[Any]) -> None:
        for x in items:
            if isinstance(x, Repeat):
                lines.append(f"r {x.times}")
                emit(x.items)
                lines.append("e 0")
            else:
                lines.append(f"v {_value(x)}")
    emit(plan)
    path.write_text("\n".join(lines) + "\n")


def run(program: Program, initial: dict[str, Any], plan: Sequence[Any], budget: float) -> str | None:
    """Run the compiled program on `initial` and the havoc `plan`; None if it reached `reach_error`, else why
    not."""
    why = why_not(program)
    if why is not None:
        return f"no compiled run: {why}"
    budget = min(budget, 3600.0)
    if budget <= 0.05:
        return "no time left for a compiled run"
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="looprover-native-") as tmp:
        from looprover.program.emit_c import emit_c
        exe = build(emit_c(program), Path(tmp), budget)
        if exe is None:
            return "the program's C did not compile"
        plan_file = Path(tmp) / "plan"
        try:
            write_plan(plan_file, [*initial_plan(program, initial), *plan])
        except ValueError as err:
            return f"no compiled run: {err}"
        left = budget - (time.monotonic() - t0)
        if left <= 0.05:
            return "no time left for the compiled run"
        return run_executable(exe, {"LR_PLAN": str(plan_file)}, left)


def run_limited(exe: Path, env: dict[str, str], budget: float, stdin: Any = None,
                stderr: Any = subprocess.DEVNULL, any_address_space: bool = False) -> int | str:
    """The exit code of `exe` run for at most `budget` seconds with `env` added to the environment, or why it
    has none. Its output goes nowhere, or its stderr to the file `stderr` (never a pipe read into memory: a
    program that prints forever took 3.7 GB); coreutils' `timeout` kills the run at its deadline even if this
    process is killed first. `any_address_space`: the run is not held to this process's address-space limit
    (`--memory`), which AddressSanitizer's shadow memory (terabytes reserved, little used) cannot start under;
    the caller bounds its memory another way."""
    limit = ["timeout", "-s", "KILL", f"{budget:.2f}"] if shutil.which("timeout") else []
    try:
        r = subprocess.run([*limit, str(exe)], env={**os.environ, **env}, stdin=stdin, stdout=subprocess.DEVNULL,
                           stderr=stderr, timeout=budget + 1,
                           preexec_fn=_any_address_space if any_address_space else None)
    except subprocess.TimeoutExpired:
        return "the compiled run did not end in time"
    except OSError as exc:
        return f"the compiled run could not start: {exc.strerror}"
    if r.returncode in (-9, 128 + 9):
        return "the compiled run did not end in time"
    return r.returncode


def _any_address_space() -> None:
    """In the forked child before exec: only system calls of a module already imported (no Python lock another
    thread may hold at the fork)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def run_executable(exe: Path, env: dict[str, str], budget: float) -> str | None:
    """Run a compiled program built with `NONDET_DEFS` for at most `budget` seconds: None if it exited with
    the violation code (it reached `reach_error`), else why not."""
    code = run_limited(exe, env, budget)
    if isinstance(code, str):
        return code
    if code == VIOLATION:
        return None
    if code == BLOCKED:
        return BLOCKED_WITHOUT_VIOLATION
    if code < 0 or code > 128:
        sig = -code if code < 0 else code - 128
        return f"the compiled run stopped with signal {sig} (undefined behaviour trapped, or abort())"
    return ENDED_WITHOUT_VIOLATION.format(code=code)


def confirm(program: Program, initial: dict[str, Any], plan: list, head: list[Edge], tail: list[Edge],
            length: int, violated_at: SrcLoc | None, budget: float) -> RunCounterexample | None:
    """A validated counterexample of `length` edges (shown as `head` ... `tail`) if the compiled run on
    `initial` and `plan` reaches `reach_error`, else None."""
    if run(program, initial, plan, budget) is not None:
        return None
    shown = head + tail
    return RunCounterexample([TraceStep(e, e.src_loc, {}) for e in shown], [], dict(initial), True, violated_at,
                             length=length, omitted=length - len(shown), omitted_at=len(head), plan=list(plan),
                             native=True)



def why_open(program: Program) -> str | None:
    """Why `program` may have more than one execution (None if it is closed: no havoc whose value is ever read,
    no variable read before it is written). A havoc of a variable overwritten before any read (the front-end's
    `int x;` before `x = 0;`) leaves one execution, as far as anything the program does can tell."""
    from looprover.program.emit_c import initial_havocs
    from looprover.program.liveness import liveness
    live = liveness(program)
    for e in program.edges:
        after = set(live.get(e.dst, frozenset()))
        for s in reversed(e.stmts):
            if isinstance(s, Havoc) and after.intersection(s.vars):
                where = f" at {e.src_loc}" if e.src_loc else ""
                return f"the program reads input ({', '.join(v.name for v in s.vars if v in after)}{where})"
            after -= s.writes()
            after |= s.reads()
    uninit = initial_havocs(program)
    if uninit:
        return f"variables read before written: {', '.join(v.name for v in uninit[:5])}"
    return None


def run_closed(program: Program, budget: float) -> tuple[bool | None, str]:
    """Compile and run the closed `program` (no plan: it reads no input): (False, why) if it reached
    `reach_error`, (True, how it ended) if it ended without a violation, (None, why) if that is not known."""
    why = run(program, {}, [], budget)
    if why is None:
        return False, "the only execution reaches reach_error"
    if why == BLOCKED_WITHOUT_VIOLATION:
        return True, "the only execution is blocked by an assumption before any violation"
    if why == ENDED_WITHOUT_VIOLATION.format(code=0):
        return True, "the only execution returns from main without a violation"
    return None, why
