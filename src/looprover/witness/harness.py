"""A compiled test harness for a FALSE: the counterexample's inputs, the ORIGINAL C file, gcc, and a run.

Why: every other check of a counterexample goes through our own model of C (the front-end and the interpreter).
This one does not: the input values become C definitions of the `__VERIFIER_nondet_*` functions that return
them in order (`native.NONDET_DEFS`, the same definitions the compiled deep runs use), the harness is compiled and
linked with the unmodified source by gcc, and the program runs under a time limit. `reach_error` is detected
by gcc's function instrumentation (`-finstrument-functions` on the source only: the harness's entry hook
exits with the violation code when the entered function is `reach_error`), so it does not matter what the
program's `reach_error` does. Undefined behaviour traps (gcc's sanitizers, `native.FLAGS`), so a run that
relies on it reaches nothing. The answer is reported next to the verdict and never changes it.

`check`'s violations of other kinds (an overflow, an out-of-bounds access) are run the same way with the
sanitizers reporting instead of trapping (`run_sanitized`): where the run stopped, and with what error, tells
whether it stopped at the violated check (`runtime_checks.compiled_check`). So are `verify`'s valid-memsafety
FALSEs whose run fails an access (valid-deref) or a free (valid-free): AddressSanitizer, not our model, says
whether the compiled program makes that error at that line.

Hosts without a 32-bit C library compile ILP32 programs for the host's data model, and say so.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from looprover.deadline import Deadline
from looprover.program.cfa import Assert, Assign, Havoc, Program, SrcLoc
from looprover.program.expr import IntType
from looprover.program.printer import c_type
from looprover.properties import UNREACH_CALL, VALID_MEMSAFETY
from looprover.verdict import Counterexample, Status, Verdict
from looprover.evidence.native import BLOCKED, FLAGS, NONDET_DEFS, VIOLATION, run_executable, run_limited
from looprover.frontend.c.known_functions import NONDET_TYPES
from looprover.processes import memory_limit_mb

MAX_SECONDS = 10.0
UNINITIALISED_SECONDS = 1.0     # a run that depends on uninitialised memory (`reads_uninitialised`)

# reach_error is weak: a program without one (real code under `check`) links, and no function is entered as it;
# a program that declares it without a body calls this one, which ends the run as entering the program's would.
# Older SV-COMP tasks (Juliet's) declare `__VERIFIER_error`, which looprover does not model: a weak definition
# lets them link, and a run that calls it ends blocked, claiming nothing.
# A run checked for another kind of violation (an access, an overflow) does not stop there: reach_error then does
# what the program's body says, as in looprover's model (a `{}` body returns and the run goes on to the access).
ENTRY_HOOK = r"""
__attribute__((weak)) void reach_error() { if (LR_STOP_AT_REACH_ERROR) _exit(VIOLATION); }
__attribute__((weak)) void __VERIFIER_error(void) { _exit(BLOCKED); }
void __cyg_profile_func_enter(void *fn, void *site) { if (LR_STOP_AT_REACH_ERROR && fn && fn == (void *)reach_error) _exit(VIOLATION); }
void __cyg_profile_func_exit(void *fn, void *site) { }
"""


def _c_type(bits) -> str:
    """The C type of a `NONDET_TYPES` entry ((bits, signed), "long" for the data model's long, None for _Bool)."""
    if bits is None:
        return "_Bool"
    width, signed = bits
    if width == "long":         # whatever the compiled data model's long is
        return "long" if signed else "unsigned long"
    return c_type(IntType(width, signed))


# Older benchmarks (Verisec) call CBMC's `nondet_X()` without defining it, and `assert` as a function of their own:
# the front-end reads the first as an input (`known_functions.nondet_suffix`) and the second as an assertion
# (`frontend/c/calls.py`); weak definitions feed the one the same inputs in order and make the other's failure
# the exit `__assert_fail` has (`native.EXIT_DEFS`), and yield to the program's own definitions where it has them.
CBMC_DEFS = "".join(f"__attribute__((weak)) {_c_type(bits)} nondet_{suffix}(void) "
                    f"{{ return ({_c_type(bits)})__lr_next(); }}\n"
                    for suffix, bits in NONDET_TYPES.items() if suffix != "_Bool") + \
    "__attribute__((weak)) void assert(int c) { if (!c) _exit(VIOLATION); }\n"


@dataclass
class HarnessResult:
    reached_error: bool | None      # None: not run (the reason says why)
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"reached_error": self.reached_error, "detail": self.detail}


def harness_source(inputs: list[int], stop_at_reach_error: bool = True) -> str:
    values = ", ".join(str(_c_value(v)) for v in inputs) or "0"
    return (f"#include <unistd.h>\n#define VIOLATION {VIOLATION}\n#define BLOCKED {BLOCKED}\n"
            f"#define LR_STOP_AT_REACH_ERROR {int(stop_at_reach_error)}\n"
            f"static const long long __lr_inputs[] = {{{values}}};\n"
            f"static long __lr_pos;\n"
            f"static long long __lr_next(void) {{ return __lr_pos < {len(inputs)} ? __lr_inputs[__lr_pos++] : 0; }}\n"
            + NONDET_DEFS + CBMC_DEFS + ENTRY_HOOK)


def _c_value(v: Any) -> str:
    v = int(v)
    if not -(1 << 63) <= v < 1 << 64:
        raise ValueError(f"input {v} does not fit in 64 bits")
    if v >= 1 << 63:
        v -= 1 << 64                  # the function's cast restores an unsigned 64-bit value
    return f"({v + 1}LL - 1)" if v == -(1 << 63) else f"{v}LL"


@lru_cache(maxsize=None)
def _m32_links() -> bool:
    with tempfile.TemporaryDirectory(prefix="looprover-m32-") as tmp:
        src = Path(tmp, "t.c")
        src.write_text("int main(void) { return 0; }\n")
        try:
            return subprocess.run(["gcc", "-m32", "-o", str(Path(tmp, "t")), str(src)], capture_output=True,
                                   timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


def _data_model_flags(data_model: str, exact_model: bool) -> tuple[list[str], str] | HarnessResult:
    """gcc's flags for the data model and a note on the run, or why it is not run."""
    if data_model != "ILP32":
        return [], ""
    if _m32_links():
        return ["-m32"], ""
    if exact_model:
        return HarnessResult(None, "not run: no 32-bit C library on this host to compile the ILP32 program "
                                   "for its data model (Debian: gcc-multilib)")
    return [], ", compiled LP64: no 32-bit C library on this host"


def _compiled(sources: list[Path], inputs: list[int], flags: list[str], tmp: str, budget: float,
              cpp_flags: tuple[str, ...] = (), stop_at_reach_error: bool = True) -> Path | HarnessResult:
    """The sources linked with a harness feeding `inputs` (reach_error's entry exits with VIOLATION, unless not
    `stop_at_reach_error`), compiled with `flags` and the task's `-D`/`-I` `cpp_flags` (the ones verify
    preprocessed them with) into `tmp`; or why not."""
    if shutil.which("gcc") is None:
        return HarnessResult(None, "gcc is not installed")
    try:
        harness = harness_source(inputs, stop_at_reach_error)
    except ValueError as exc:
        return HarnessResult(None, str(exc))
    h, exe = Path(tmp, "lr_harness.c"), Path(tmp, "prog.exe")
    h.write_text(harness)
    files: list[str] = []
    for source in sources:
        files += ["-x", "cpp-output" if source.suffix == ".i" else "c", str(source)]
    cmd = ["gcc", *flags, *cpp_flags, "-finstrument-functions",
           "-finstrument-functions-exclude-file-list=lr_harness", "-o", str(exe), *files, "-x", "c", str(h)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=max(budget, 1.0))
    except subprocess.TimeoutExpired:
        return HarnessResult(None, "gcc did not finish in time")
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200])
        return HarnessResult(None, f"the program and harness did not compile: {first[:300]}")
    return exe


def run_harness(sources: list[Path], inputs: list[int], data_model: str, budget: float, exact_model: bool = False,
                cpp_flags: tuple[str, ...] = ()) -> HarnessResult:
    """Compile `sources` with a harness feeding `inputs` and run it for at most `budget` seconds. With
    `exact_model`, an ILP32 program is not run where it cannot be compiled for ILP32 (the validator's use)."""
    model = _data_model_flags(data_model, exact_model)
    if isinstance(model, HarnessResult):
        return model
    flags, note = model
    with tempfile.TemporaryDirectory(prefix="looprover-harness-") as tmp:
        exe = _compiled(sources, inputs, [*FLAGS, *flags], tmp, budget, cpp_flags)
        if isinstance(exe, HarnessResult):
            return exe
        why = run_executable(exe, {}, max(budget, 0.5))
    if why is None:
        return HarnessResult(True, f"gcc-compiled original program, {len(inputs)} input(s){note}")
    return HarnessResult(False, why + note)


# `check`'s harness: the run must stop at the check's own place, so the sanitizers report instead of trapping
# (UBSan prints `file:line:col: runtime error: …`, ASan its error and the frame `#0 … in f file:line`), and the
# first error ends the run
SANITIZED = ["-O0", "-g", "-w", "-fsanitize=address,signed-integer-overflow,shift,integer-divide-by-zero,bounds",
             "-fno-sanitize-recover=all"]
_UBSAN = re.compile(r"^(.*?):(\d+):(\d+): runtime error: (.*)$", re.M)
_ASAN = re.compile(r"ERROR: AddressSanitizer: ([^\n]*?)(?: on (?:address|unknown address)\b|$)", re.M)
_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in \S+ (.*?):(\d+)", re.M)


@dataclass(frozen=True)
class SanitizerStop:
    """Where and why a sanitized run stopped: an error a sanitizer reported, or reach_error entered."""
    file: str | None
    line: int | None
    what: str
    col: int | None = None


def run_sanitized(sources: list[Path], inputs: list[int], data_model: str, budget: float,
                  cpp_flags: tuple[str, ...] = (), stop_at_reach_error: bool = True) -> SanitizerStop | HarnessResult:
    """Compile `sources` with a harness feeding `inputs` and the sanitizers reporting (`SANITIZED`), run it
    for at most `budget` seconds: where it stopped at an error, or a `HarnessResult` saying why there is none.
    Entering reach_error stops the run only with `stop_at_reach_error` (the violation sought is an assertion's)."""
    # ASan and UBSan's 32-bit runtimes are not assumed: the host's model, said so
    note = ", compiled LP64 (the sanitizers' 32-bit runtimes are not assumed)" if data_model == "ILP32" else ""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="looprover-harness-") as tmp:
        exe = _compiled(sources, inputs, SANITIZED, tmp, budget, cpp_flags, stop_at_reach_error)
        if isinstance(exe, HarnessResult):
            return exe
        left = max(budget - (time.monotonic() - start), 0.5)
        with open(Path(tmp, "stderr"), "w+b") as err:
            # ASan cannot start under an address-space limit (`--memory`): its resident memory is capped instead
            mb = memory_limit_mb()
            asan = "detect_leaks=0" + (f":hard_rss_limit_mb={mb}" if mb else "")
            code = run_limited(exe, {"ASAN_OPTIONS": asan, "UBSAN_OPTIONS": "print_stacktrace=0"},
                               left, subprocess.DEVNULL, err, any_address_space=True)
            if isinstance(code, str):
                return HarnessResult(False, code + note)
            err.seek(0)
            stderr = err.read(1 << 16).decode(errors="replace")
    if code == VIOLATION:
        return SanitizerStop(None, None, "reach_error was called" + note)
    if (m := _UBSAN.search(stderr)) is not None:
        return SanitizerStop(m.group(1), int(m.group(2)), f"runtime error: {m.group(4)}{note}", int(m.group(3)))
    if (m := _ASAN.search(stderr)) is not None:
        # the first frame in the program's own files: a `memcpy` that overflows stops in ASan's interceptor
        names = {s.name for s in sources}
        frames = list(_FRAME.finditer(stderr, m.end()))
        frame = next((f for f in frames if Path(f.group(1)).name in names), frames[0] if frames else None)
        return SanitizerStop(frame.group(1) if frame else None, int(frame.group(2)) if frame else None,
                             f"AddressSanitizer: {m.group(1)}{note}")
    return HarnessResult(False, f"the compiled run ended with exit code {code} without an error{note}")


def harness_for(verdict: Verdict, input_path: Path, data_model: str, is_c: bool, deadline: Deadline,
                prop: str = UNREACH_CALL, more_inputs: tuple[Path, ...] = (), program: Program | None = None,
                cpp_flags: tuple[str, ...] = ()) -> HarnessResult | None:
    """The compiled harness's result for a FALSE with a counterexample (None for other verdicts). It detects
    the entry of `reach_error`, and for valid-memsafety an invalid access or free that AddressSanitizer reports
    at the violation's line; other properties' violations (an overflow, a leak) are not run rather than
    reported as "not reached"."""
    if verdict.status != Status.FALSE or not isinstance(verdict.evidence, Counterexample):
        return None
    cex = verdict.evidence
    if not is_c:
        return HarnessResult(None, "the input is not C")
    part = getattr(cex.violated, "prop", None)
    if prop == VALID_MEMSAFETY and part in ("valid-deref", "valid-free"):
        return _memory_harness(cex, part, [input_path, *more_inputs], data_model, deadline, program, cpp_flags)
    if prop != UNREACH_CALL:
        return HarnessResult(None, f"not run: the harness detects calls of reach_error, not {prop} violations")
    if getattr(cex, "omitted", 0) and not cex.inputs and getattr(cex, "plan", None) != []:
        # a deep run with an empty havoc plan read no value (or only the 0 every harness gives past its
        # inputs): the harness without inputs feeds the program exactly that
        return HarnessResult(None, "the run is too long to list its inputs")
    uninit = reads_uninitialised(cex, program)
    budget = min(UNINITIALISED_SECONDS if uninit else MAX_SECONDS, deadline.left() - 0.3)
    if budget < 0.5:
        return HarnessResult(None, "no time left")
    if takes_arguments(cex):
        return HarnessResult(None, "not run: the counterexample's run starts main with an argc and argv of its "
                                   "choice, which the harness does not pass to the compiled program")
    if reads_library_input(cex):
        return HarnessResult(None, "not run: the counterexample's run reads input through a library function "
                                   "(stdin, rand, time), which the harness does not feed")
    res = run_harness([input_path, *more_inputs], list(cex.inputs), data_model, budget, cpp_flags=cpp_flags)
    return says_nothing(res, uninit)


def _memory_harness(cex: Counterexample, part: str, sources: list[Path], data_model: str, deadline: Deadline,
                    program: Program | None, cpp_flags: tuple[str, ...]) -> HarnessResult:
    """An invalid access or free run under the sanitizers (`runtime_checks.compiled_check`): reached when the
    compiled program stops with an error of that kind at the violation's line (and column, if another check of
    the kind on the run shares the line). Not run when the run needs an allocation to fail (the compiled
    program's allocator does not); an error of another kind that stops the run first says nothing either way."""
    from looprover.runtime_checks import KINDS, Check, compiled_check
    kinds = {n: i.kind for n, i in program.variables.items()} if program is not None else {}
    if any(kinds.get(name) == "allocated" and value is False for step in cex.steps
           for name, value in (step.values or {}).items()):
        return HarnessResult(None, "not run: the run needs an allocation to fail, which the compiled program's "
                                   "allocator does not do on demand")
    where = cex.violated_at or getattr(cex.violated, "src", None)
    kind = KINDS[part][0]
    twins = {(s.src.line, s.src.col) for step in cex.steps for s in step.edge.stmts
             if isinstance(s, Assert) and s.prop == part and s.src is not None and where is not None
             and s.src.line == where.line and s.src.col != where.col}
    others = [Check(f"other{i}", kind, SrcLoc(where.file, line, col), ()) for i, (line, col) in enumerate(twins)]
    res = compiled_check(Check("this", kind, where, ()), cex, sources, data_model, deadline, others, cpp_flags,
                         program)
    if res.reached_error is False and "runtime error:" in res.detail and not any(
            w in res.detail for w in ("out of bounds", "null pointer", "misaligned")):
        return HarnessResult(None, f"{res.detail} (an error of another kind stopped the run first)")
    if res.reached_error is False and data_model == "ILP32":
        # sizes and wrap-arounds differ in LP64 (knapsack_alloca_unsafe: N * sizeof(int) wraps to 4 bytes in
        # ILP32 and asks for 4 GB of stack in LP64): a run that misses the violation there says nothing
        return HarnessResult(None, f"{res.detail}; compiled for another data model than the task's ILP32, so not "
                                   f"reaching the violation says nothing")
    return res


def reads_uninitialised(cex: Counterexample, program: Program | None) -> str | None:
    """The first uninitialised object the run gives a value (`VarInfo.uninitialised`), by its C name, or None.
    The harness cannot give the compiled program those values (its stack and heap hold what they hold), so a
    compiled run that misses the violation says nothing, and one that loops on other values should not cost
    long: `UNINITIALISED_SECONDS`. (Whether the run reads the value before writing it is not tracked.)"""
    if program is None:
        return None
    for step in cex.steps:
        for s in step.edge.stmts:
            if isinstance(s, Havoc):
                for v in s.vars:
                    info = program.variables.get(v.name)
                    if info is not None and info.uninitialised:
                        return info.c_name or v.name
    return None


def says_nothing(res: HarnessResult, uninit: str | None) -> HarnessResult:
    """`res`, but a compiled run that missed the violation after the run gave uninitialised memory values says
    nothing (`reads_uninitialised`)."""
    if res.reached_error is not False or uninit is None:
        return res
    return HarnessResult(None, f"{res.detail}; the run gives uninitialised memory ({uninit}) values the compiled "
                               f"program does not get, so not reaching the violation says nothing")


def reads_library_input(cex: Counterexample) -> bool:
    """Whether the run reads a value through `getchar`, `fgets`, `rand`, ... (`frontend/c/input_functions.py`)."""
    from looprover.frontend.c.input_functions import reads_input
    return any(isinstance(s, Havoc) and any(reads_input(v.name) for v in s.vars)
               for step in cex.steps for s in step.edge.stmts)


def takes_arguments(cex: Counterexample) -> bool:
    """Whether the run starts `main` with arguments of the model's choice (`frontend/c/main_args.py`)."""
    from looprover.frontend.c.main_args import ARGV_COUNT
    return any(isinstance(s, Assign) and s.lhs.name == ARGV_COUNT for step in cex.steps for s in step.edge.stmts)
