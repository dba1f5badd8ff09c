"""Preprocess (gcc -E) and parse (libclang) a C file for a data model; compiler errors become InputError.

Why gcc for preprocessing: the libclang wheel ships without its builtin headers and without system include
paths, while the SV-COMP `.c` files include glibc headers. For ILP32 we preprocess with `-m32` so that glibc's
`__WORDSIZE`-dependent typedefs (int64_t, size_t, LONG_MAX) match the 32-bit target clang parses for; hosts
without the 32-bit multilib headers get the x86 biarch headers of the host plus an empty `gnu/stubs-32.h`
(it only lists unimplemented libc functions).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import clang.cindex as ci

from looprover.errors import InputError, UnsupportedError
from looprover.frontend import check_text
from looprover.frontend.c.clang_api import presumed_location
from looprover.frontend.c.internal_names import MARKER as _MARKER, ColumnShifts, rename_internal_names

TRIPLES = {"ILP32": "i386-pc-linux-gnu", "LP64": "x86_64-pc-linux-gnu"}

# glibc headers preprocessed by a recent gcc use _FloatN types that clang 18 does not know as keywords (measured,
# see stack.md); needed for `.i` files produced elsewhere.
_GLIBC_FLOAT_DEFINES = ["-D_Float128=__float128", "-D_Float64x=long double", "-D_Float32x=double",
                        "-D_Float64=double", "-D_Float32=float"]
# When we preprocess, we make gcc present itself as the GNU C version clang claims to be (4.2), so that glibc
# selects declarations clang can parse (e.g. no `__malloc__(deallocator)` attributes, no _FloatN keywords).
_AS_CLANG = ["-U__GNUC__", "-D__GNUC__=4", "-U__GNUC_MINOR__", "-D__GNUC_MINOR__=2",
             "-U__GNUC_PATCHLEVEL__", "-D__GNUC_PATCHLEVEL__=1"]
# gcc accepts these (as warnings) and so must we: all benchmark inputs pass `gcc -fsyntax-only`.
_RELAX = ["-Wno-error=implicit-function-declaration", "-Wno-error=int-conversion",
          "-Wno-error=incompatible-pointer-types", "-Wno-error=implicit-int", "-Wno-error=return-type",
          "-Wno-error=incompatible-function-pointer-types"]

# libclang parses on a helper thread with its own (8 MB) stack unless told not to; we give the calling thread
# a large stack instead (see load_c_program), which deep expressions in generated code need.
os.environ.setdefault("LIBCLANG_NOTHREADS", "1")

_index: ci.Index | None = None
_shim_dir: str | None = None


@dataclass
class Parsed:
    tu: ci.TranslationUnit
    path: str            # the input file as given
    presumed: bool       # report presumed (line-marker) locations: True for .c files we preprocessed
    shifts: ColumnShifts | None = None      # columns that renamed internal names moved (linked files)

    def where(self, loc: ci.SourceLocation) -> tuple[str, int, int]:
        if self.presumed:
            f, line, col = presumed_location(loc)
            if self.shifts is not None:
                col = self.shifts.original(f, line, col)
            return (f or self.path), line, col
        f = loc.file.name if loc.file is not None else self.path
        return f, loc.line, loc.column


def _shim() -> str:
    """A directory holding an empty gnu/stubs-32.h (one per user, shared by all processes: the portfolio and
    the benchmark runner start many)."""
    global _shim_dir
    if _shim_dir is None or not os.path.isfile(os.path.join(_shim_dir, "gnu", "stubs-32.h")):
        uid = os.getuid() if hasattr(os, "getuid") else 0
        d = os.path.join(tempfile.gettempdir(), f"looprover-inc32-{uid}")
        os.makedirs(os.path.join(d, "gnu"), exist_ok=True)
        stub = Path(d, "gnu", "stubs-32.h")
        if not stub.is_file():
            tmp = stub.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("/* looprover: no unimplemented-function stubs needed */\n")
            os.replace(tmp, stub)  # atomic: concurrent processes never see a partial file
        _shim_dir = d
    return _shim_dir


@lru_cache(maxsize=None)
def _multiarch(gcc: str) -> str:
    try:
        return subprocess.run([gcc, "-print-multiarch"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _gcc_flags(data_model: str, gcc: str) -> list[str]:
    if data_model != "ILP32":
        return []
    flags = ["-m32"]
    arch = _multiarch(gcc)
    if arch:
        flags += ["-idirafter", f"/usr/include/{arch}"]
    flags += ["-idirafter", _shim()]
    return flags


def _run_cpp(gcc: str, flags: list[str], path: Path, cpp_flags: tuple[str, ...] = ()):
    # -x c: gcc picks the language by suffix and passes a prog.txt on to the linker, preprocessing nothing
    cmd = [gcc, "-E", "-x", "c", "-std=gnu17", *flags, *_AS_CLANG, *cpp_flags,
           "-I", str(path.parent), str(path)]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InputError(f"{path}: preprocessing failed: {exc}") from None


def preprocess(path: Path, data_model: str, cpp_flags: tuple[str, ...] = ()) -> str | None:
    """`gcc -E` output for a .c file (`cpp_flags`: `-DNAME[=VALUE]` and `-IDIR` options), or None when gcc is not
    installed (libclang then preprocesses)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    flags = _gcc_flags(data_model, gcc)
    r = _run_cpp(gcc, flags, path, cpp_flags)
    if r.returncode != 0 and flags and "-m32" in r.stderr:
        # a gcc built without 32-bit support: host headers (only matters for __WORDSIZE-dependent typedefs)
        r = _run_cpp(gcc, [], path, cpp_flags)
    if r.returncode != 0:
        raise InputError(f"preprocessing failed: {_gcc_errors(r.stderr)}")
    return r.stdout


_GCC_ERROR = re.compile(r"^(?P<where>[^\s:][^:]*:\d+(?::\d+)?): (?:fatal )?error: (?P<msg>.*)$")
MAX_ERRORS = 5          # compiler errors quoted in one InputError
MAX_ERROR_CHARS = 200   # of each: a message quotes the offending source, which may be one enormous line


def _short(msg: str) -> str:
    msg = " ".join(msg.split())
    return msg if len(msg) <= MAX_ERROR_CHARS else msg[:MAX_ERROR_CHARS - 3] + "..."


def _summary(errors: list[str]) -> str:
    more = f" (and {len(errors) - MAX_ERRORS} more)" if len(errors) > MAX_ERRORS else ""
    return "; ".join(_short(e) for e in errors[:MAX_ERRORS]) + more


def _gcc_errors(stderr: str) -> str:
    """gcc's error diagnostics (`file:line:col: error: ...`), without the source lines and carets it echoes
    after each, a few and each short: the message is one line for the user."""
    errors = [f"{m['where']}: error: {m['msg']}" for m in map(_GCC_ERROR.match, stderr.splitlines()) if m]
    return _summary(errors) if errors else _short(stderr.strip().splitlines()[0] if stderr.strip() else
                                                   "gcc failed without a message")


def _read(path_like: str | os.PathLike) -> Path:
    path = Path(path_like)
    shown = str(path_like)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        raise InputError(f"{shown}: empty file")
    check_text(shown, raw, "C source")
    return path


def _linked_text(paths: list[Path], data_model: str, cpp_flags: tuple[str, ...], args: list[str],
                 shifts: ColumnShifts) -> str:
    """Several input files as one translation unit: each preprocessed on its own (macros and include guards
    do not leak from one file into the next), then concatenated, each behind a line marker naming it. That
    is what linking them does for the programs clang accepts: a function or variable defined twice, or two
    different types of one name, is a compiler error (an input error). A file's `static` names that another
    file also uses are renamed in it first (`internal_names`), as a compiler keeps them apart. The exception is
    a header that two files include with the same text: from the second file on it is left out
    (`_without_shared_headers`), as C takes the types both files declare by it to be one."""
    texts = []
    for path in paths:
        if path.suffix == ".i":
            text = path.read_text(errors="replace")
        else:
            text = preprocess(path, data_model, cpp_flags)
            if text is None:
                raise InputError(f"{path}: several input files need gcc to preprocess them")
        texts.append((str(path), text))

    def parse_alone(name: str, text: str) -> ci.TranslationUnit:
        return _the_index().parse(name, args=args, unsaved_files=[(name, text)])

    renamed = rename_internal_names(texts, parse_alone, shifts)
    seen: dict[str, set] = {}
    return "".join(f'# 1 "{path}"\n{_without_shared_headers(text, path, seen)}\n'
                   for path, text in zip(paths, renamed))


def _the_index() -> ci.Index:
    global _index
    if _index is None:
        _index = ci.Index.create()
    return _index


_STATIC = re.compile(r"\bstatic\b(?!\s+(?:__inline__|__inline|inline)\b)")


@lru_cache(maxsize=4096)
def _real(name: str) -> str:
    return os.path.realpath(name)


def _header_lines(text: str, own: str) -> list[tuple[str | None, int, str]]:
    """Each line of a preprocessed text with the file and line it comes from (None for markers)."""
    out = []
    file, line = own, 1
    for ln in text.split("\n"):
        m = _MARKER.match(ln)
        if m is not None:
            file, line = _real(m.group(2)), int(m.group(1))
            out.append((None, 0, ln))
            continue
        out.append((file, line, ln))
        line += 1
    return out


def _without_shared_headers(text: str, path: Path, seen: dict) -> str:
    """`text` (one preprocessed file) without the headers all of whose lines here (text at a line of the header)
    earlier files had: blank lines stand for them, so later lines keep their numbers. A header that gives this
    file a line no earlier file had (other macros before it) is kept whole, and the compiler says whether the
    versions agree. (A header seen whole before and in part here, `__need_size_t`, is left out: its part was
    declared already; so is one whose struct here lacks a member an earlier file's has, which the model, by
    member names, reads the same but for its size.) A header line that defines static storage is refused where
    a second file has it: each file has its own object, which one translation unit cannot keep apart. `seen`:
    header -> the lines earlier files had of it."""
    own = _real(str(path))
    lines = _header_lines(text, own)
    mine: dict[str, list] = {}
    for file, line, ln in lines:
        if file is not None and file != own and ln.strip():
            mine.setdefault(file, []).append((line, ln))
    drop = set()
    for file, body in mine.items():
        earlier = seen.setdefault(file, set())
        for line, ln in body:
            if _STATIC.search(ln) and (line, ln) in earlier:
                raise UnsupportedError(f"static storage defined in a header that several files include "
                                       f"('{ln.strip()[:60]}')", f"{file}:{line}")
        if earlier and earlier.issuperset(body):
            drop.add(file)
        earlier.update(body)
    return "\n".join("" if file in drop else ln for file, _, ln in lines)


def parse(path_like: str | os.PathLike | list, data_model: str, cpp_flags: tuple[str, ...] = ()) -> Parsed:
    """Parse one C file, or several linked into one program (a list of paths; see `_linked_text`)."""
    if data_model not in TRIPLES:
        raise InputError(f"unknown data model {data_model!r} (expected ILP32 or LP64)")
    several = isinstance(path_like, (list, tuple))
    paths = [_read(p) for p in (path_like if several else [path_like])]
    path = paths[0]
    shown = str(path_like[0] if several else path_like)

    args = ["-x", "c", "-std=gnu17", "-target", TRIPLES[data_model], "-Ulinux", "-Uunix", "-Ui386",
            *_RELAX, "-ferror-limit=0", "-fbracket-depth=100000"]
    unsaved = None
    presumed = False
    shifts = None
    if len(paths) > 1:
        if any(p.suffix == ".i" for p in paths):
            args += _GLIBC_FLOAT_DEFINES
        shifts = ColumnShifts()
        unsaved = [(shown, _linked_text(paths, data_model, tuple(cpp_flags), args, shifts))]
        presumed = True
    elif path.suffix == ".i":
        args += _GLIBC_FLOAT_DEFINES
    else:
        text = preprocess(path, data_model, tuple(cpp_flags))
        if text is None:
            args += ["-I", str(path.parent), *cpp_flags]
        else:
            unsaved = [(shown, text)]
        presumed = True
    try:
        tu = _the_index().parse(shown, args=args, unsaved_files=unsaved)
    except ci.TranslationUnitLoadError as exc:
        raise InputError(f"{shown}: clang could not parse the file: {exc}") from None
    parsed = Parsed(tu, shown, presumed, shifts if shifts and shifts.lines else None)
    errors = []
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error:
            f, line, _ = parsed.where(d.location) if d.location.file is not None else (shown, 0, 0)
            errors.append(f"{f}:{line}: error: {d.spelling}")
    if errors:
        raise InputError(_summary(errors))
    return parsed
