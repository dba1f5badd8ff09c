"""Names of internal linkage kept apart when several files are linked into one translation unit.

Why: `parse` links files by concatenating their preprocessed texts, so one file's `static` function or variable
and another file's entity of the same name (static or not) would be one name to clang, where a compiler and
linker keep them apart (C11 6.2.2p3: an internal name denotes its own file's entity). Real programs have many
such pairs (gzip's `build_tree` in two files, a test driver's `store64_le` next to the library's). Each such
name is renamed in its own file, at the places clang says refer to it, to a name no file uses. The columns of
the code after a renamed name on its line are mapped back (`ColumnShifts`), so the places we report stay those
of the source.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import clang.cindex as ci

from looprover.errors import UnsupportedError
from looprover.frontend.c.clang_api import presumed_location

_WORD = re.compile(r"[A-Za-z_]\w*")
MARKER = re.compile(r'# (\d+) "([^"]*)"')     # a line marker: the next line is this line of this file
_K = ci.CursorKind


@dataclass
class ColumnShifts:
    """Where renaming made a line longer: (file, line) -> [(original column of a renamed name, growth)]."""
    lines: dict[tuple[str, int], list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, file: str, line: int, col: int, growth: int) -> None:
        self.lines.setdefault((file, line), []).append((col, growth))

    def original(self, file: str, line: int, col: int) -> int:
        """The source column of what the renamed text has at `col`."""
        shifts = self.lines.get((file, line))
        if not shifts:
            return col
        moved = 0
        for start, growth in sorted(shifts):
            if col <= start + moved:        # at or before this renamed name: later growth does not move it
                break
            moved += growth
        return max(1, col - moved) if col > 0 else col


def _mentions_static(name: str, text: str) -> bool:
    """Whether this file's own lines (not its headers') have the word `static`: files without it need no parse of
    their own (the names themselves may be on other lines: `static int\ncounter;`)."""
    own = os.path.realpath(name)
    here = True
    for ln in text.split("\n"):
        m = MARKER.match(ln)
        if m is not None:
            here = os.path.realpath(m.group(2)) == own
        elif here and "static" in ln and re.search(r"\bstatic\b", ln):
            return True
    return False


# what a place spelt like a renamed name may also be, and is then left alone: another name space (a member, a tag,
# a label), or no name at all (text in a literal)
_NOT_THE_NAME = frozenset({_K.MEMBER_REF_EXPR, _K.FIELD_DECL, _K.MEMBER_REF, _K.TYPE_REF, _K.STRUCT_DECL,
                           _K.UNION_DECL, _K.ENUM_DECL, _K.LABEL_STMT, _K.LABEL_REF, _K.STRING_LITERAL,
                           _K.CHARACTER_LITERAL})


def _refers_to(cur: ci.Cursor, name: str) -> bool:
    """Whether the cursor at a place spelt `name` is a file-scope internal declaration of it or a use of one
    (not a member, a parameter, a local that shadows it, or text in a string)."""
    d = cur if cur.kind in (_K.FUNCTION_DECL, _K.VAR_DECL) else cur.referenced
    return (d is not None and d.kind in (_K.FUNCTION_DECL, _K.VAR_DECL) and d.spelling == name
            and d.linkage == ci.LinkageKind.INTERNAL and d.semantic_parent is not None
            and d.semantic_parent.kind == _K.TRANSLATION_UNIT)


def _fresh(name: str, file: str, used: set[str]) -> str:
    stem = re.sub(r"\W", "_", os.path.basename(file)) or "file"
    new = f"{name}__{stem}"
    k = 2
    while new in used:
        new, k = f"{name}__{stem}{k}", k + 1
    used.add(new)
    return new


def rename_internal_names(texts: list[tuple[str, str]], parse_alone: Callable[[str, str], ci.TranslationUnit],
                          shifts: ColumnShifts) -> list[str]:
    """`texts`: each file's name and preprocessed text, in link order. Returns the texts with every internal
    name that another file also uses renamed (`shifts` records the columns that moved). `parse_alone(name, text)`
    parses one text as its own translation unit; a file clang cannot parse alone is left as it is (the linked
    parse then reports its errors)."""
    words = [set(_WORD.findall(t)) for _, t in texts]
    count = Counter(w for ws in words for w in ws)
    used = set(count)
    out = []
    for name, text in texts:
        if not _mentions_static(name, text):
            out.append(text)
            continue
        try:
            tu = parse_alone(name, text)
        except ci.TranslationUnitLoadError:
            out.append(text)
            continue
        if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
            out.append(text)
            continue
        own = os.path.realpath(name)
        internal = sorted({c.spelling for c in tu.cursor.get_children()
                           if c.kind in (_K.FUNCTION_DECL, _K.VAR_DECL) and count[c.spelling] > 1
                           and c.linkage == ci.LinkageKind.INTERNAL
                           and os.path.realpath(presumed_location(c.location)[0] or name) == own})
        if not internal:
            out.append(text)
            continue
        data = text.encode()                # clang's offsets count bytes
        edits = []
        for old in internal:
            new = _fresh(old, name, used)
            for m in re.finditer(rb"(?<![\w$])" + re.escape(old.encode()) + rb"(?![\w$])", data):
                if data[data.rfind(b"\n", 0, m.start()) + 1:m.start()].lstrip().startswith(b"#"):
                    continue        # a line marker's file name ("<built-in>", "main.c")
                loc = tu.get_location(name, m.start())
                cur = ci.Cursor.from_location(tu, loc)
                if not _refers_to(cur, old):
                    if cur.kind not in _NOT_THE_NAME and cur.spelling != old:
                        f, line, _ = presumed_location(loc)
                        raise UnsupportedError(f"the static name '{old}', which another linked file also uses, "
                                               f"where clang shows no use of a declaration (an attribute?)",
                                               f"{f}:{line}")
                    continue
                edits.append((m.start(), m.end(), new.encode()))
                f, line, col = presumed_location(loc)
                shifts.add(f, line, col, len(new) - len(old))
        out.append(_applied(data, edits).decode())
    return out


def _applied(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    parts, at = [], 0
    for start, end, new in sorted(edits):
        parts += [data[at:start], new]
        at = end
    parts.append(data[at:])
    return b"".join(parts)
