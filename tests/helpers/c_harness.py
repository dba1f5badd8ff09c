"""Cross-checking the C front-end against gcc: same program, same inputs, same final values and outcome.

The program under test uses SV-COMP conventions without defining them; the gcc build gets a harness that
  * feeds `__VERIFIER_nondet_*()` from the command line (0 once the inputs run out, like `InputOracle`),
  * turns `reach_error()` / a failing `__VERIFIER_assert` into outcome `violation`, a failing
    `__VERIFIER_assume` into `blocked`, and `abort()`, `exit()` and returning from main into `exit`,
  * prints the listed globals at the end.
The front-end lowers the program alone (those functions undefined, so it uses its built-in models) and the IR
interpreter runs it with `signed_overflow="wrap"`; gcc builds with `-fwrapv` to agree on signed overflow.
The host is x86_64, so gcc runs are LP64; ILP32-insensitive programs are also checked with data model ILP32.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from looprover.frontend.c import load_c_program
from looprover.program import interp
from looprover.program.expr import ArrayType, BoolType
from looprover.program.printer import c_type

PRELUDE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static long long __lr_in[64]; static int __lr_n, __lr_k;
static long long __lr_next(void) { return __lr_k < __lr_n ? __lr_in[__lr_k++] : (__lr_k++, 0); }
int __VERIFIER_nondet_int(void) { return (int)__lr_next(); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)__lr_next(); }
unsigned __VERIFIER_nondet_unsigned(void) { return (unsigned)__lr_next(); }
char __VERIFIER_nondet_char(void) { return (char)__lr_next(); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)__lr_next(); }
short __VERIFIER_nondet_short(void) { return (short)__lr_next(); }
unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)__lr_next(); }
long __VERIFIER_nondet_long(void) { return (long)__lr_next(); }
unsigned long __VERIFIER_nondet_ulong(void) { return (unsigned long)__lr_next(); }
long long __VERIFIER_nondet_longlong(void) { return (long long)__lr_next(); }
unsigned long long __VERIFIER_nondet_ulonglong(void) { return (unsigned long long)__lr_next(); }
_Bool __VERIFIER_nondet_bool(void) { return (_Bool)__lr_next(); }
static void __lr_print(void);
static void __lr_outcome(const char *o) { printf("OUTCOME %s\n", o); __lr_print(); fflush(stdout); _exit(0); }
void reach_error(void) { __lr_outcome("violation"); }
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
void __VERIFIER_assume(int c) { if (!c) __lr_outcome("blocked"); }
void assume_abort_if_not(int c) { if (!c) __lr_outcome("blocked"); }
void __lr_abort(void) { __lr_outcome("exit"); }
void __lr_exit(int s) { (void)s; __lr_outcome("exit"); }
#define abort __lr_abort
#define exit __lr_exit
#define main __lr_main
#line 1 "prog.c"
"""


def _printer(program, names: list[str]) -> str:
    lines = ["#undef main", "#undef exit", "#undef abort", "static void __lr_print(void) {"]
    for n in names:
        t = program.variables[n].var.type
        if isinstance(t, ArrayType):
            elem_signed = not isinstance(t.elem, BoolType) and t.elem.signed
            fmt, cast = ("%lld", "long long") if elem_signed else ("%llu", "unsigned long long")
            elem = c_type(t.elem)  # multi-dimensional arrays are flat in the IR: print them flat
            lines.append(f'  for (int i = 0; i < {t.size}; i++) printf("{n}[%d]={fmt}\\n", i, ({cast})(({elem} *){n})[i]);')
        else:
            signed = not isinstance(t, BoolType) and t.signed
            fmt, cast = ("%lld", "long long") if signed else ("%llu", "unsigned long long")
            lines.append(f'  printf("{n}={fmt}\\n", ({cast})({n}));')
    lines.append("}")
    lines.append("int main(int argc, char **argv) {")
    lines.append("  for (int i = 1; i < argc && i <= 64; i++)")
    lines.append("    __lr_in[__lr_n++] = argv[i][0] == '-' ? strtoll(argv[i], 0, 0) : (long long)strtoull(argv[i], 0, 0);")
    lines.append("  __lr_main(); __lr_outcome(\"exit\"); return 0; }")
    return "\n".join(lines) + "\n"


def _ir_output(program, res, names: list[str]) -> list[str]:
    out = [f"OUTCOME {res.outcome}"]
    for n in names:
        t = program.variables[n].var.type
        v = res.state[n]
        if isinstance(t, ArrayType):
            for i in range(t.size):
                x = v.get(i)
                out.append(f"{n}[{i}]={int(x) if not isinstance(t.elem, BoolType) else int(bool(x))}")
        else:
            out.append(f"{n}={int(v)}")
    return out


def crosscheck(gcc: str, tmp_path: Path, source: str, inputs: list[list[int]], outputs: list[str],
               data_models=("LP64",), name: str = "prog") -> None:
    """Assert that gcc's executable and the IR interpreter agree on every input vector."""
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    programs = {dm: load_c_program(src, dm) for dm in data_models}
    ref = programs["LP64"] if "LP64" in programs else next(iter(programs.values()))
    harness = tmp_path / f"{name}_harness.c"
    harness.write_text(PRELUDE + source + "\n" + _printer(ref, outputs))
    exe = tmp_path / f"{name}.exe"
    r = subprocess.run([gcc, "-O0", "-fwrapv", "-w", "-o", str(exe), str(harness)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for inp in inputs:
        got = subprocess.run([str(exe), *map(str, inp)], capture_output=True, text=True, timeout=20)
        expected = got.stdout.split("\n")
        expected = [l for l in expected if l]
        for dm, prog in programs.items():
            res = interp.run(prog, interp.InputOracle(prog, inp), signed_overflow="wrap", max_steps=2_000_000)
            assert res.outcome in ("exit", "violation", "blocked"), (dm, inp, res.outcome, res.detail)
            mine = _ir_output(prog, res, outputs)
            assert mine == expected, f"{name} {dm} inputs={inp}\n gcc: {expected}\n IR:  {mine}"


OVERFLOW_POOL = [0, 1, -1, 2, 3, 2147483647, -2147483648, 65536, 46341, -46341, 1000]


def overflow_agreement(gcc: str, tmp_path: Path, sources: list[str], rng, runs: int = 8) -> dict[bool, int]:
    """Each source with `runs` random inputs (three ints): the no-overflow instrumentation of the program the
    job builds (`keep_values`) fails a check iff gcc's -fsanitize=signed-integer-overflow reports an overflow
    in the compiled program. Returns how many runs agreed with and without an overflow."""
    from looprover.program.instrument import instrument_no_overflow
    from looprover.properties import NO_OVERFLOW
    agree = {True: 0, False: 0}
    for n, src in enumerate(sources):
        f = tmp_path / f"r{n}.c"
        f.write_text(src)
        program = instrument_no_overflow(load_c_program(f, "LP64", keep_values=True))
        harness = tmp_path / f"r{n}_h.c"
        harness.write_text(PRELUDE + src + "\n" + _printer(program, []))
        exe = tmp_path / f"r{n}.exe"
        r = subprocess.run([gcc, "-O0", "-w", "-fsanitize=signed-integer-overflow", "-fno-sanitize-recover=all",
                            "-o", str(exe), str(harness)], capture_output=True, text=True)
        assert r.returncode == 0, f"gcc cannot build with the sanitizer: {r.stderr[:400]}"
        for _ in range(runs):
            inputs = [rng.choice(OVERFLOW_POOL + [rng.randint(-2**31, 2**31 - 1)]) for _ in range(3)]
            got = subprocess.run([str(exe), *map(str, inputs)], capture_output=True, text=True, timeout=20)
            gcc_overflow = "runtime error" in got.stderr
            res = interp.run(program, interp.InputOracle(program, inputs), signed_overflow="wrap")
            assert res.outcome in ("exit", "violation"), (src, inputs, res.outcome)
            ours = res.outcome == "violation" and res.violated.prop == NO_OVERFLOW
            assert ours == gcc_overflow and not res.overflowed, (src, inputs, got.stderr)
            agree[gcc_overflow] += 1
    return agree
