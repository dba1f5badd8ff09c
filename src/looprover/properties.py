"""SV-COMP property files (`.prp`) and the properties looprover knows by name.

Why a parser rather than matching file names: task definitions point at property files by relative path and
users pass their own copies, so the file's *text* decides what is checked. Each `CHECK(init(f()), FORMULA)`
line (or `COVER(...)` for test-generation goals) is recognised separately; a file is one property. Text we do
not recognise is an input error, never a silent default to reachability.

`unreach-call`, `termination`, `no-overflow`, `valid-memsafety` and `valid-memcleanup` (C only) and `check-sat`
(Horn-clause inputs) are verified; the CLI answers UNKNOWN("unsupported property: ...") for every other recognised property. Which
engine checks a verifiable property is the engines' business: each declares the properties it accepts (`Engine.properties`), the runner
refuses the others, and the portfolio runs only engines that accept the task.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from looprover.errors import InputError

UNREACH_CALL = "unreach-call"
TERMINATION = "termination"   # every execution of main ends (exit, abort, reach_error, or return)
CHECK_SAT = "check-sat"       # CHC-COMP tasks: the clauses are satisfiable (= the program is safe)
# valid-deref, valid-free, valid-memtrack: C only; the front-end asserts every access valid (`valid-deref`
# assertions) and every free (`valid-free`, `frontend/c/heap.py`), and that no heap object is lost
# (`valid-memtrack`, `frontend/c/memtrack.py`)
VALID_MEMSAFETY = "valid-memsafety"
# every heap object freed when the run ends (`frontend/c/memtrack.py`); accesses are not checked (C only)
VALID_MEMCLEANUP = "valid-memcleanup"
MEMORY_PROPERTIES = (VALID_MEMSAFETY, VALID_MEMCLEANUP)
# their parts, by the tag of the front-end's assertions, with the formula SV-COMP's property files and witnesses
# name each by (a violation witness names the part its run violates)
MEMORY_PARTS = {"valid-deref": "G valid-deref", "valid-free": "G valid-free", "valid-memtrack": "G valid-memtrack",
                VALID_MEMCLEANUP: "G valid-memcleanup"}

NO_OVERFLOW = "no-overflow"   # no signed arithmetic leaves its type (checked as assertions: program/instrument.py)

# Not a property one verifies, the tag of an assertion whose failure no property defines: a call of `assert` that
# the program leaves undefined (no <assert.h>, no body; Verisec's inlined cases). What such a call does when its
# condition is false is unknown (C's macro would abort, an external function could return), so the condition is
# asserted: a TRUE proves it never fails, and a counterexample that fails it is UNKNOWN naming the call
# (`jobs.undecided_verdict`), never FALSE and never a path cut off as if the run had ended.
UNDEFINED_ASSERT = "undefined-assert"
# Nor this: undefined behaviour SV-COMP's overflow definition does not classify (`program/instrument.py`)
UNDECIDED = "no-overflow-undecided"
# Nor these: the tags of assertions that a run stays inside what the front-end models, with what lies outside.
# A TRUE proves no run leaves the model; a counterexample that does is UNKNOWN naming it (`jobs.undecided_verdict`).
UNMODELLED_ARGV = "unmodelled-argv"
UNMODELLED_LAYOUT = "unmodelled-layout"
UNMODELLED_MEMBER = "unmodelled-member"
UNMODELLED_BYTES = "unmodelled-bytes"
UNMODELLED_CALL = "unmodelled-call"
UNMODELLED_UNION = "unmodelled-union"
UNMODELLED_MEMTRACK = "unmodelled-memtrack"
UNMODELLED_HEAP = "unmodelled-heap"
UNMODELLED_REFUSED = "unmodelled-refused"
UNMODELLED_VOID = "unmodelled-void"
UNMODELLED_OVERLAP = "unmodelled-overlap"
UNMODELLED = {
    # `frontend/c/main_args.py`
    UNMODELLED_ARGV: "an element of argv past the argument strings that have objects in the model",
    # `frontend/c/lvalues.py` (assert_layout_free): C11 6.5.9p6 lets a pointer one past the end of an object equal
    # a pointer to the start of another object that happens to follow it, 6.4.5p7 lets string literals share
    # storage; whether they do depends on the layout
    UNMODELLED_LAYOUT: "an equality of pointers into different objects that depends on where they lie in memory "
                       "(one past the end of one and the start of another, two string literals, or a struct and "
                       "one of its members as void *), or an order of pointers to two members of one struct",
    # `frontend/c/lvalues.py` (deref): C11 6.5.6p8 bounds a pointer into a struct member by the member, while
    # tools that take the struct as one object (SV-COMP's memory safety) accept an access elsewhere in the struct
    UNMODELLED_MEMBER: "an access through a pointer to a struct member outside that member, the address of a "
                       "member of a struct reached through a pointer the model has no object for (not at the "
                       "start of the object it points into, NULL, a reused pool object's), or a free of a "
                       "pointer to a member of a heap object",
    # `frontend/c/byte_functions.py`: memset/memcpy/memmove are modelled on whole elements of the pointed-to type
    UNMODELLED_BYTES: "a memset, memcpy or memmove of a byte count that is not a whole number of the elements "
                      "it writes",
    # `frontend/c/function_pointers.py`: a call through a pointer is a case split over the functions of its type
    UNMODELLED_CALL: "a call through a function pointer to a function of another type than the pointer's, to "
                     "one without a body or already being called, or to one modelled by its name",
    # `frontend/c/lvalues.py` (member): a union's members have storage of their own in the model, so a value
    # is read back only through the member that stored it (C11 6.5.2.3p3 footnote 95 reinterprets the bytes)
    UNMODELLED_UNION: "a read of a union member other than the one last stored (the bytes reinterpreted), or a "
                      "store into part of a member while another one's value is there",
    # `frontend/c/memtrack.py`: a heap object is tracked when a variable of a live function or a global points
    # into it; reachability through arrays of pointers and through other heap objects is not modelled
    UNMODELLED_MEMTRACK: "a live heap object that no global or variable of a running function points into, "
                         "while a pointer the model does not place may (a returned function's local, a temporary, "
                         "an element of an array, a pointer in another heap object, one far past its end) "
                         "(valid-memtrack)",
    # `frontend/c/heap.py`: an allocation a loop executes has a fixed pool of objects (`POOL_SLOTS`)
    UNMODELLED_HEAP: "an allocation while every object of the pool its call has in the model is still live "
                     "(more objects of one allocation in a loop live at once than the model holds), or after "
                     "2^29 allocations of pools (their ids would repeat), or a realloc of a non-NULL pointer to 0 "
                     "bytes (C leaves it to the implementation whether the old object is freed)",
    # `frontend/c/calls.py` (`looprover check` only): a call whose body has a construct the front-end refuses is
    # this assertion instead of the body (`Program.refusals` names the construct); which checks it can touch is
    # `model_exits.py`'s business
    UNMODELLED_REFUSED: "a call of a function whose body (or a function it calls) has a construct looprover "
                        "refuses",
    # `frontend/c/void_pointers.py` (`looprover check` only): a void * keeps its offset in the elements of the
    # object it points into, so a use that reads it in other units (bytes of a struct or of a u32) is not modelled
    UNMODELLED_VOID: "a use of a void * (a conversion to another pointer type, a memset or memcpy, arithmetic) "
                     "that may point into an object whose elements are not of the type the use reads (the bytes "
                     "of a struct or of a wider integer)",
    # `frontend/c/format_functions.py`: C11 7.21.6.6p2 leaves copying between overlapping objects undefined
    UNMODELLED_OVERLAP: "a sprintf or snprintf whose %s argument points into the object it writes",
}

# properties the engines can check (others are recognised and reported as unsupported)
VERIFIABLE = frozenset({UNREACH_CALL, TERMINATION, NO_OVERFLOW, CHECK_SAT, VALID_MEMSAFETY, VALID_MEMCLEANUP})

KNOWN = (
    UNREACH_CALL, TERMINATION, NO_OVERFLOW, VALID_MEMSAFETY, VALID_MEMCLEANUP, "def-behavior",
    "no-data-race", "coverage-error-call", "coverage-branches", "coverage-conditions", "coverage-statements",
    CHECK_SAT,
)

# (regex over the formula with whitespace removed, property name); memory-safety parts are merged below
_FORMULAS = [
    (r"LTL\(G!call\((?P<fn>[A-Za-z_]\w*)\(\)\)\)", UNREACH_CALL),
    (r"LTL\(Fend\)", TERMINATION),
    (r"LTL\(G!overflow\)", NO_OVERFLOW),
    (r"LTL\(Gvalid-(free|deref|memtrack)\)", "valid-memsafety"),
    (r"LTL\(Gvalid-memcleanup\)", VALID_MEMCLEANUP),
    (r"LTL\(Gdef-behavior\)", "def-behavior"),
    (r"LTL\(G!data-race\)", "no-data-race"),
    (r"FQL\(COVEREDGES\(@CALL\((?P<fn>[A-Za-z_]\w*)\)\)\)", "coverage-error-call"),
    (r"FQL\(COVEREDGES\(@DECISIONEDGE\)\)", "coverage-branches"),
    (r"FQL\(COVEREDGES\(@CONDITIONEDGE\)\)", "coverage-conditions"),
    (r"FQL\(COVEREDGES\(@BASICBLOCKENTRY\)\)", "coverage-statements"),
]
_LINE = re.compile(r"^(CHECK|COVER)\(init\((?P<entry>[A-Za-z_]\w*)\(\)\),(?P<formula>.*)\)$")


@dataclass(frozen=True)
class Property:
    """A property to check: its SV-COMP name, the entry function, and for unreach-call the function whose
    call must be unreachable (`reach_error` in current SV-COMP)."""
    name: str
    entry: str = "main"
    function: str | None = None
    path: str | None = None

    def unsupported_reason(self) -> str | None:
        """Why this property cannot be verified, or None if it can."""
        if self.name not in VERIFIABLE:
            return f"unsupported property: {self.name}"
        if self.name == UNREACH_CALL and self.function != "reach_error":
            return f"unsupported property: unreachability of {self.function}() (only reach_error)"
        if self.entry != "main":
            return f"unsupported property: entry function {self.entry} (only main)"
        return None

    def __str__(self) -> str:
        return self.name


def parse_property_text(text: str, where: str = "<property>") -> Property:
    """The property a `.prp` text states; raises InputError for anything unrecognised."""
    lines = [ln for ln in (re.sub(r"\s+", "", raw) for raw in text.splitlines()) if ln and not ln.startswith("//")]
    if not lines:
        raise InputError(f"{where}: empty property file")
    names: list[str] = []
    entry, function = "main", None
    for ln in lines:
        m = _LINE.match(ln)
        if m is None:
            raise InputError(f"{where}: not an SV-COMP property: {ln[:80]!r}")
        entry = m["entry"]
        for pattern, name in _FORMULAS:
            f = re.fullmatch(pattern, m["formula"])
            if f is not None:
                names.append(name)
                function = f.groupdict().get("fn", function)
                break
        else:
            raise InputError(f"{where}: unknown property formula {m['formula'][:80]!r}")
    distinct = sorted(set(names))
    if distinct == [VALID_MEMCLEANUP, VALID_MEMSAFETY]:   # upstream's file lists all four valid-* parts
        distinct = [VALID_MEMSAFETY]
    if len(distinct) > 1:
        raise InputError(f"{where}: several properties in one file ({', '.join(distinct)})")
    return Property(distinct[0], entry, function, None)


def load_property(spec: str | os.PathLike) -> Property:
    """A property from a `.prp` file, or from a known name such as `unreach-call` (handy on the command line).

    CHC-COMP task definitions point at an empty `check-sat.prp`; that file name stands for the check-sat
    property.
    """
    path = Path(spec)
    if path.is_file():
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise InputError(f"{path}: cannot read property file: {exc.strerror}") from None
        if not text.strip() and path.name == "check-sat.prp":
            return Property(CHECK_SAT, path=str(path))
        prop = parse_property_text(text, str(path))
        return Property(prop.name, prop.entry, prop.function, str(path))
    if str(spec) in KNOWN:
        return Property(str(spec), function="reach_error" if str(spec) == UNREACH_CALL else None)
    raise InputError(f"{spec}: no such property file (known property names: {', '.join(KNOWN)})")


def default_property() -> Property:
    return Property(UNREACH_CALL, function="reach_error")


def defines_violation(tag: str) -> bool:
    """Whether a failed assertion of this tag is a violation of a property (not undefined behaviour that no
    property classifies, an undefined `assert`, or a run that leaves the model: those make a run UNKNOWN)."""
    return tag not in UNMODELLED and tag not in (UNDEFINED_ASSERT, UNDECIDED)
