"""What SV-COMP witnesses need to know about the original C text that the IR does not keep.

Why: a witness speaks of the C file, not of the CFA. Its waypoints name the function a location is in and, for a
nondet call, the position of the call's closing parenthesis; its invariants are C expressions over the variables in
scope at a loop's keyword. The IR keeps a line and column per statement and the declaration site of each variable
(`VarInfo.src`), so the rest is read here from the same libclang parse the front-end uses: the function definitions
with their extents, and each loop statement with its keyword position and the declarations visible there. A C name
at a loop is tied to an IR variable only through that declaration site, so a name that several IR variables share
(a function inlined twice) or that is shadowed is never confused with another.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from looprover.program.cfa import Program, SrcLoc


@dataclass(frozen=True)
class CLoop:
    """A loop statement: its keyword (`for`, `while`, `do`) at `line`:`col`, the function it is in, and the
    declarations visible at its head (C name -> (line, column) of the declared name)."""
    keyword: str
    line: int
    col: int
    function: str
    scope: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, hash=False)


_LOOP_KINDS = {"FOR_STMT": "for", "WHILE_STMT": "while", "DO_STMT": "do"}


class CSource:
    """One C input file: its text, SHA-256, functions and loops (parsed lazily, once)."""

    def __init__(self, path: str | Path, data_model: str = "ILP32"):
        self.path = Path(path)
        self.data_model = data_model
        self.data = self.path.read_bytes()
        self.lines = self.data.decode("utf-8", errors="replace").splitlines()

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def same_file(self, name: str | None) -> bool:
        if not name:
            return False
        try:
            return Path(name).resolve() == self.path.resolve()
        except OSError:
            return False

    @cached_property
    def _parsed(self):
        from looprover.frontend.c.parse import parse
        return parse(self.path, self.data_model)

    @cached_property
    def functions(self) -> list[tuple[str, int, int]]:
        """(name, first line, last line) of each function defined in this file."""
        import clang.cindex as ci
        p = self._parsed
        out = []
        for c in p.tu.cursor.get_children():
            if c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition():
                f, l1, _ = p.where(c.extent.start)
                _, l2, _ = p.where(c.extent.end)
                if self.same_file(f):
                    out.append((c.spelling, l1, l2))
        return out

    def function_at(self, line: int) -> str | None:
        return next((name for name, l1, l2 in self.functions if l1 <= line <= l2), None)

    @cached_property
    def loops(self) -> list[CLoop]:
        import clang.cindex as ci
        p = self._parsed
        globals_: dict[str, tuple[int, int]] = {}
        found: list[CLoop] = []

        def decl(c, scope: dict[str, tuple[int, int]]) -> None:
            f, line, col = p.where(c.location)
            if self.same_file(f):
                scope[c.spelling] = (line, col)

        def visit(c, scope: dict[str, tuple[int, int]], fn: str) -> None:
            kind = c.kind.name
            if kind in _LOOP_KINDS:
                f, line, col = p.where(c.extent.start)
                inner = dict(scope)
                children = list(c.get_children())
                if kind == "FOR_STMT":       # `for (int i = 0; ...)`: i is in scope at the head
                    for ch in children:
                        if ch.kind == ci.CursorKind.DECL_STMT:
                            for d in ch.get_children():
                                if d.kind == ci.CursorKind.VAR_DECL:
                                    decl(d, inner)
                if self.same_file(f):
                    found.append(CLoop(_LOOP_KINDS[kind], line, col, fn, inner))
                for ch in children:
                    visit(ch, dict(inner), fn)
                return
            if kind == "COMPOUND_STMT":
                local = dict(scope)
                for ch in c.get_children():
                    if ch.kind == ci.CursorKind.DECL_STMT:
                        for d in ch.get_children():
                            if d.kind == ci.CursorKind.VAR_DECL:
                                decl(d, local)
                            visit(d, dict(local), fn)
                    else:
                        visit(ch, local, fn)
                return
            for ch in c.get_children():
                visit(ch, dict(scope), fn)

        for c in p.tu.cursor.get_children():
            if c.kind == ci.CursorKind.VAR_DECL:
                decl(c, globals_)
            elif c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition():
                params: dict[str, tuple[int, int]] = dict(globals_)
                for ch in c.get_children():
                    if ch.kind == ci.CursorKind.PARM_DECL:
                        decl(ch, params)
                for ch in c.get_children():
                    if ch.kind == ci.CursorKind.COMPOUND_STMT:
                        visit(ch, params, c.spelling)
        return found

    def loop_of_head(self, program: Program, head: int) -> CLoop | None:
        """The C loop whose head the CFA location `head` is (front-end names `while@12`, `for@8`, `do@11`),
        if exactly one loop of that kind starts on that line of this file."""
        name = program.loc_names.get(head, "")
        kw, _, line = name.partition("@")
        if kw not in ("for", "while", "do") or not line.isdigit():
            return None
        src = program.loc_src.get(head)
        if src is not None and not self.same_file(src.file):
            return None
        hits = [lp for lp in self.loops if lp.keyword == kw and lp.line == int(line)]
        return hits[0] if len(hits) == 1 else None

    def call_end(self, loc: SrcLoc) -> tuple[int, int] | None:
        """(line, column) of the closing parenthesis of the call that starts at `loc` (1-based columns), found
        by matching parentheses in the text (calls of `__VERIFIER_nondet_*` take no arguments, so the
        parenthesis is usually on the same line)."""
        if not self.same_file(loc.file) or not 1 <= loc.line <= len(self.lines):
            return None
        depth, started = 0, False
        for li in range(loc.line - 1, min(len(self.lines), loc.line + 20)):
            text = self.lines[li]
            start = max(loc.col - 1, 0) if li == loc.line - 1 else 0
            for ci_ in range(start, len(text)):
                ch = text[ci_]
                if ch == "(":
                    depth, started = depth + 1, True
                elif ch == ")" and started:
                    depth -= 1
                    if depth == 0:
                        return li + 1, ci_ + 1
                elif ch == ";" and not started:
                    return None
        return None

    def ir_variables_at(self, program: Program, loop: CLoop) -> dict[str, str]:
        """C name -> IR variable name for the declarations visible at `loop` that exactly one IR variable
        comes from (matched by the declared name's position)."""
        by_site: dict[tuple[int, int], list[str]] = {}
        for n, info in program.variables.items():
            if info.src is not None and info.kind in ("global", "local", "param") and self.same_file(info.src.file):
                by_site.setdefault((info.src.line, info.src.col), []).append(n)
        out = {}
        for c_name, site in loop.scope.items():
            ir = by_site.get(site, [])
            if len(ir) == 1 and (program.variables[ir[0]].c_name or ir[0]) == c_name:
                out[c_name] = ir[0]
        return out
