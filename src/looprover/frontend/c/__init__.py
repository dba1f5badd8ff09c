"""The C front-end: a C file (SV-COMP conventions) -> `Program`.

    load_c_program(path, data_model="ILP32", memsafety=False, cpp_flags=()) -> Program

`path` may be a list of files, linked into one program (a task's program plus library stubs); `memsafety`
instruments every array and pointer access with a `valid-deref` assertion (see `memory.py`); `cpp_flags` are
preprocessor options (`-DNAME=VALUE`, `-IDIR`).

`.c` files are preprocessed with `gcc -E` for the data model's target (`-m32` for ILP32), `.i` files are taken as
preprocessed; libclang parses the text for `i386-pc-linux-gnu` (ILP32) or `x86_64-pc-linux-gnu` (LP64) and
`lower` turns the typed AST into the CFA (every function inlined into `main`).

Errors: `InputError` (missing/unreadable/empty file, preprocessor or compiler errors with file:line, no `main`,
unknown data model) and `UnsupportedError(construct, SrcLoc)` for anything that cannot be modelled soundly
(floating point, pointers into union members, bit-fields, recursion, calls to undefined functions such as fopen,
a `realloc` used as `void *` (`heap.py`: malloc, calloc, realloc, alloca and free are modelled, in loops with a
pool of objects per call),
function pointers converted to or from data pointers, pointer/integer casts, inline asm...). Calls through
function pointers are case splits over the functions the program takes the address of (`function_pointers.py`).
String literals are read-only objects; the C library
functions of `libc_models.py` that a program calls without defining them are linked in as C bodies, and
`memset`/`memcpy`/`memmove` are loops over the argument's elements (`byte_functions.py`), printf and the other
output functions read what they print and return what C allows (`output_functions.py`), and getchar, fgets,
rand and time return any value C allows (`input_functions.py`).

Semantics chosen (details in `lower.py` and `memory.py`): explicit casts for every C conversion; `_Bool` is
the IR's BOOL; left-to-right evaluation where C leaves the order open; SV-COMP built-ins modelled by name
(`reach_error` = `Assert(false, "unreach-call")`, `__VERIFIER_nondet_X` = havoc of a `nondet` variable of type X,
`__VERIFIER_assume`/`assume_abort_if_not` = `Assume`, `abort`/`exit`/`__assert_fail` = jump to `Program.exit`);
pointers are (object id, offset) pairs over address-taken objects, and dereferencing an invalid pointer (UB)
is blocked with an `Assume` (under valid-memsafety: asserted against).
"""
from __future__ import annotations

import os
import threading

from looprover.errors import InputError, UnsupportedError
from looprover.processes import out_of_memory
from looprover.program.cfa import Program

__all__ = ["load_c_program"]


# Parsing and lowering recurse as deep as the program's expressions nest; the main thread's 8 MB C stack
# overflows (a segfault inside libclang) on machine-generated code, so the work runs on a thread with a larger
# stack (address space is reserved, memory is only used as the recursion needs it).
_STACK_BYTES = 256 * 1024 * 1024


def load_c_program(path: str | os.PathLike | list, data_model: str = "ILP32", memsafety: bool = False,
                   cpp_flags: tuple[str, ...] = (), keep_values: bool = False, nondet_undefined: bool = False,
                   reach_checks: bool = False, memcleanup: bool = False, allocation_fails: bool = True) -> Program:
    """`keep_values`: unused values computed by operations (`x + 1;`) stay in the program as assignments to
    temporaries (for the no-overflow property; `ExpressionMixin.discard`). `nondet_undefined`: a call of a
    function without a body or a model havocs its result and what it can reach (`CallMixin.undefined_call`)
    instead of being refused. `reach_checks`: a call of `reach_error` is asserted unreachable under `memsafety`
    too (`looprover check`: every kind of check in one program). `memcleanup`: assert that every heap object is
    freed where a run ends (valid-memcleanup, `memtrack.py`). `allocation_fails`: malloc and calloc may return
    NULL (C11; SV-COMP's rules from 2027), else every allocation the machine can serve succeeds (SV-COMP's rules
    before: "malloc always returns a valid pointer"; `heap.py`)."""
    result: dict = {}
    opts = (memsafety, tuple(cpp_flags), keep_values, nondet_undefined, reach_checks, memcleanup, allocation_fails)

    def work() -> None:
        try:
            result["program"] = _load(path, data_model, *opts)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    try:
        old = threading.stack_size(_STACK_BYTES)
    except (ValueError, RuntimeError):  # platform without settable stacks: run here
        return _load(path, data_model, *opts)
    try:
        t = threading.Thread(target=work, name="looprover-c-frontend", daemon=True)
        t.start()
    except RuntimeError:   # no room for the large stack under a small --memory limit: the usual stack then
        return _load(path, data_model, *opts)
    finally:
        threading.stack_size(old)
    t.join()
    if "error" in result:
        raise result["error"]
    return result["program"]


def _load(path, data_model: str, memsafety: bool, cpp_flags: tuple[str, ...], keep_values: bool = False,
          nondet_undefined: bool = False, reach_checks: bool = False, memcleanup: bool = False,
          allocation_fails: bool = True) -> Program:
    from looprover.frontend.c.lower import lower
    from looprover.frontend.c.parse import parse

    try:
        parsed = parse(path, data_model, cpp_flags)
        parsed = _with_libc_models(parsed, path, data_model, cpp_flags)
    except (InputError, UnsupportedError):
        raise
    except Exception as exc:  # noqa: BLE001 - libclang/ctypes failures must not escape as tracebacks
        if out_of_memory(exc):      # libclang could not even be loaded under --memory: no fault of the input
            raise MemoryError(str(exc)) from exc
        raise InputError(f"{path}: cannot parse: {type(exc).__name__}: {exc}") from exc
    return lower(parsed, data_model, memsafety, keep_values, nondet_undefined, reach_checks, memcleanup,
                 allocation_fails)


def _with_libc_models(parsed, path, data_model: str, cpp_flags: tuple[str, ...]):
    """The program parsed again with the bodies of the C library functions it calls but does not define
    (`libc_models.py`) linked in; as it is when it calls none (or gcc, which linking needs, is missing)."""
    import shutil
    import tempfile
    from pathlib import Path

    import clang.cindex as ci

    from looprover.frontend.c import libc_models
    from looprover.frontend.c.parse import parse

    paths = [Path(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    names: set[str] = set()
    for p in paths:
        names |= libc_models.called(p.read_text(errors="replace"))
    if not names:               # most programs: no walk over the translation unit's declarations
        return parsed
    defined = {c.spelling for c in parsed.tu.cursor.get_children()
               if c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition()}
    wanted = libc_models.needed(names, defined)
    if not wanted or shutil.which("gcc") is None:
        return parsed
    with tempfile.TemporaryDirectory(prefix="looprover-libc-") as tmp:
        model = Path(tmp, libc_models.FILE_NAME)
        model.write_text(libc_models.source(wanted, data_model))
        try:
            return parse([*paths, model], data_model, cpp_flags)
        except InputError:      # the program declares one differently (`int strlen();`): no models then
            return parsed
