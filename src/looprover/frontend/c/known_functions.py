"""Functions the front-end models by name instead of inlining a definition: SV-COMP's `__VERIFIER_*`
built-ins and the libc/compiler functions that end the program.

Why a module: the lowering of calls and the side-effect analysis (which variables a call may write) must agree
on exactly which names are modelled.
"""
from __future__ import annotations

# What <assert.h>'s `assert` calls when its condition fails (terminating; under `looprover check` also a check).
ASSERT_FAILURES = {"__assert_fail", "__assert", "__assert_perror_fail", "__assert_rtn"}
# Functions that end the program (not an error): the edge goes to Program.exit.
TERMINATING_FUNCTIONS = {"abort", "exit", "_exit", "_Exit", "__builtin_abort", "__builtin_exit",
                         "__builtin_trap"} | ASSERT_FAILURES
ASSUME_FUNCTIONS = {"__VERIFIER_assume", "assume_abort_if_not"}
# what a program reads from outside (`input_functions.py`): name -> whether the call writes the program's memory
INPUT_FUNCTIONS = {"getchar": False, "getc": False, "fgetc": False, "fgets": True, "rand": False, "srand": False,
                   "time": True}
# <stdio.h>'s output functions (`output_functions.py`): name -> (index of the format argument, indices of the
# strings read whole, index of the stream argument); they write no variable of the program
OUTPUT_FUNCTIONS = {
    "printf": (0, (), None), "fprintf": (1, (), 0), "puts": (None, (0,), None), "fputs": (None, (0,), 1),
    "putchar": (None, (), None), "putc": (None, (), 1), "fputc": (None, (), 1), "fflush": (None, (), 0),
}
# <stdio.h>'s formatting into memory (`format_functions.py`): name -> index of the format argument
FORMAT_FUNCTIONS = {"sprintf": 1, "snprintf": 2}

# SV-COMP: `__VERIFIER_nondet_X()` returns an arbitrary value of type X, whatever the program declares.
# (bits, signed); "long" means the data model's long; None: _Bool.
NONDET_TYPES = {
    "bool": None, "_Bool": None, "char": (8, True), "schar": (8, True), "uchar": (8, False),
    "short": (16, True), "ushort": (16, False), "int": (32, True), "uint": (32, False),
    "unsigned": (32, False), "u32": (32, False), "u16": (16, False), "u8": (8, False),
    "s32": (32, True), "s16": (16, True), "s8": (8, True), "long": ("long", True), "ulong": ("long", False),
    "longlong": (64, True), "ulonglong": (64, False), "size_t": ("long", False), "loff_t": (64, True),
    "sector_t": ("long", False),
}


def nondet_suffix(name: str, defined: bool) -> str | None:
    """X for a nondeterministic-value function: SV-COMP's `__VERIFIER_nondet_X`, or CBMC's convention of a
    `nondet_X` without a definition (the Verisec suite and other older benchmarks use it); else None."""
    if name.startswith("__VERIFIER_nondet_"):
        return name[len("__VERIFIER_nondet_"):]
    if name.startswith("nondet_") and not defined:
        return name[len("nondet_"):]
    return None
