"""Deep counterexamples confirmed by a compiled run of the program.

Why: the interpreter executes about 10^5 edges a second; an accelerated counterexample (`transforms/expand.py`)
may need 10^9 iterations, which no stored trace or interpreted run can cover in a verification's time, while
compiled code runs them in a second or two. So the program is printed as C by `program.emit_c` (plain C with
the IR's meaning: it is what `looprover transform` prints and what the round-trip tests compile), compiled by
gcc together with a harness, and run: every `__VERIFIER_nondet_*()` call, which is how the printed C havocs
(the initial values of variables read before written first, `emit_c.initial_havocs`, then every havoc in
order), returns the next value of the counterexample's compressed havoc plan. Only a run that reaches
`reach_error()` confirms the counterexample.

What would make such a run differ from the IR's semantics is refused: the C has undefined behaviour where the
IR has none or a different one, so signed overflow, bad shifts, division by zero and array indices out of the
declared bounds (the IR's arrays are total) trap (gcc's sanitizers in trap mode: the run fails, nothing is
confirmed); programs with mathematical integers (Horn clauses), arrays of unknown size, array havocs or
assertions of more than one property (all of them print as `reach_error()`) are not compiled at all, nor plans with values beyond 64 bits (the harness reads 64-bit values). A run that reads a value the plan does not have gets 0 and is still a run of the program,
so whatever reaches `reach_error` is a real violation.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from looprover.program.cfa import Assert, Edge, Havoc, Program, SrcLoc
from looprover.program.expr import ArrayType, IntType
from looprover.program.interp import ArrayValue
from looprover.verdict import TraceStep
from looprover.witness.deep import Repeat, RunCounterexample

VIOLATION, BLOCKED = 86, 87
ENDED_WITHOUT_VIOLATION = "the compiled run ended with exit code {code} without a violation"
FLAGS = ["-O1", "-w", "-fsanitize=signed-integer-overflow,shift,integer-divide-by-zero,bounds",
         "-fsanitize-undefined-trap-on-error"]

# the SV-COMP input functions, each returning the next value of `lr_next()` (which the including harness defines),
# an assumption that fails and `__assert_fail` as exit codes (shared with `witness/harness.py`)
NONDET_DEFS = r"""
_Bool __VERIFIER_nondet_bool(void) { return lr_next() != 0; }
char __VERIFIER_nondet_char(void) { return (char)lr_next(); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)lr_next(); }
short __VERIFIER_nondet_short(void) { return (short)lr_next(); }
unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)lr_next(); }
int __VERIFIER_nondet_int(void) { return (int)lr_next(); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)lr_next(); }
long long __VERIFIER_nondet_longlong(void) { return lr_next(); }
unsigned long long __VERIFIER_nondet_ulonglong(void) { return (unsigned long long)lr_next(); }
void __VERIFIER_assume(int c) { if (!c) _exit(BLOCKED); }
void __assert_fail(const char *a, const char *f, unsigned int l, const char *fn) { _exit(VIOLATION); }
long __VERIFIER_nondet_long(void) { return (long)lr_next(); }
unsigned long __VERIFIER_nondet_ulong(void) { return (unsigned long)lr_next(); }
unsigned int __VERIFIER_nondet_unsigned(void) { return (unsigned int)lr_next(); }
"""

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static long long *lr_val; static int *lr_op; static long lr_n, lr_pc;
static long lr_stack_pc[64]; static long long lr_stack_left[64]; static int lr_sp;
__attribute__((constructor)) static void lr_load(void) {
  const char *path = getenv("LR_PLAN"); FILE *f = path ? fopen(path, "r") : 0; long cap = 1024; char op;
  long long v; lr_val = malloc(cap * sizeof *lr_val); lr_op = malloc(cap * sizeof *lr_op);
  while (f && fscanf(f, " %c %lld", &op, &v) == 2) {
    if (lr_n == cap) { cap *= 2; lr_val = realloc(lr_val, cap * sizeof *lr_val); lr_op = realloc(lr_op, cap * sizeof *lr_op); }
    lr_op[lr_n] = op; lr_val[lr_n++] = v;
  }
  if (f) fclose(f);
}
/* v x: the value x; r t: repeat what follows up to the matching e t times; e 0: end of a repeat */
static long long lr_next(void) {
  for (;;) {
    if (lr_pc >= lr_n) return 0;
    int op = lr_op[lr_pc];
    if (op == 'v') return lr_val[lr_pc++];
    if (op == 'r') {
      if (lr_val[lr_pc] <= 0) { int depth = 0; do { if (lr_op[lr_pc] == 'r') depth++; if (lr_op[lr_pc] == 'e') depth--; lr_pc++; } while (depth > 0 && lr_pc < lr_n); continue; }
      if (lr_sp == 64) _exit(2);
      lr_stack_pc[lr_sp] = lr_pc + 1; lr_stack_left[lr_sp++] = lr_val[lr_pc]; lr_pc++; continue;
    }
    if (--lr_stack_left[lr_sp - 1] > 0) lr_pc = lr_stack_pc[lr_sp - 1]; else { lr_sp--; lr_pc++; }
  }
}
""" + NONDET_DEFS

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


def compile_program(program: Program, where: Path, budget: float) -> Path | None:
    from looprover.program.emit_c import emit_c
    src, harness, exe = where / "prog.c", where / "harness.c", where / "prog.exe"
    src.write_text(emit_c(program))
    harness.write_text(f"#define VIOLATION {VIOLATION}\n#define BLOCKED {BLOCKED}\n" + HARNESS)
    try:
        r = subprocess.run(["gcc", *FLAGS, "-o", str(exe), str(src), str(harness)], capture_output=True,
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


def _write_plan(path: Path, program: Program, initial: dict[str, Any], plan: Sequence[Any]) -> None:
    from looprover.program.emit_c import initial_havocs
    lines: list[str] = []
    for v in initial_havocs(program):
        val = initial.get(v.name)
        if isinstance(v.type, ArrayType):
            arr = val if isinstance(val, ArrayValue) else None
            for i in range(v.type.size):
                lines.append(f"v {_value(arr.get(i)) if arr is not None else 0}")
        else:
            lines.append(f"v {_value(val) if val is not None else 0}")

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
        exe = compile_program(program, Path(tmp), budget)
        if exe is None:
            return "the program's C did not compile"
        plan_file = Path(tmp) / "plan"
        try:
            _write_plan(plan_file, program, initial, plan)
        except ValueError as err:
            return f"no compiled run: {err}"
        left = budget - (time.monotonic() - t0)
        if left <= 0.05:
            return "no time left for the compiled run"
        return run_executable(exe, {"LR_PLAN": str(plan_file)}, left)


def run_executable(exe: Path, env: dict[str, str], budget: float) -> str | None:
    """Run a compiled program built with `NONDET_DEFS` for at most `budget` seconds: None if it exited with
    the violation code (it reached `reach_error`), else why not."""
    # coreutils' `timeout` kills the run at its deadline even if this process is killed first
    limit = ["timeout", "-s", "KILL", f"{budget:.2f}"] if shutil.which("timeout") else []
    try:
        r = subprocess.run([*limit, str(exe)], env={**os.environ, **env}, capture_output=True, timeout=budget + 1)
    except subprocess.TimeoutExpired:
        return "the compiled run did not end in time"
    except OSError as exc:
        return f"the compiled run could not start: {exc.strerror}"
    if r.returncode == VIOLATION:
        return None
    if r.returncode == BLOCKED:
        return "the compiled run was blocked by an assumption"
    if r.returncode in (-9, 128 + 9):
        return "the compiled run did not end in time"
    if r.returncode < 0 or r.returncode > 128:
        sig = -r.returncode if r.returncode < 0 else r.returncode - 128
        return f"the compiled run stopped with signal {sig} (undefined behaviour trapped, or abort())"
    return ENDED_WITHOUT_VIOLATION.format(code=r.returncode)


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

