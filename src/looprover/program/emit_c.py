"""Program -> compilable, readable C with the same semantics.

Why: every transformation must be inspectable (`looprover transform`) and its output must be checkable by
other verifiers (CBMC, CPAchecker) and by gcc-compiled test runs. So the output is plain SV-COMP C:
`__VERIFIER_nondet_*` for havocs, `__VERIFIER_assume` for assumptions, `reach_error()` for violated
assertions, one label per location that is jumped to, and `goto` for the control flow.

How the CFA maps to C:
  * every IR variable becomes a `static` file-scope variable (static: no clash with libc symbols at link
    time; file scope: large arrays do not live on the stack). Names come from `VarInfo.c_name`, made unique.
  * the IR's initial state is arbitrary, C's globals are zero: variables that may be read before they are
    written (live at `init`) are havocked at the start of `main`, so no behaviour is lost or added.
  * a location with one out-edge falls through or jumps; with several out-edges it is a nondeterministic
    choice among the edges whose leading `Assume` holds (statements all edges begin with run before it). The
    choice asks `__VERIFIER_nondet_int()` only when more than one guard holds, so a deterministic program (the usual front-end output) reads exactly the
    inputs its havocs read and a test harness's input sequence lines up with `interp.run`.
  * `a := Store(a, i, v)` is `a[i] = v;`; `ConstArray`, copies, `Ite` over arrays and store chains on other
    arrays become element loops over the array's `size` (a temporary array when the right-hand side reads
    the target in other ways).
  * C's arrays start zero (static storage): a zero `ConstArray` assigned to an array not yet written, on the
    edge that leaves `init` once at the start of `main`, prints as a comment, not as a loop over the array
    (a compiled run of a program with a 10^9-cell buffer would spend its time zeroing memory already zero).
  * the exit location is `return 0;`; a location without out-edges blocks: `__VERIFIER_assume(0);`.

Known limitations (stated in the file header when they apply):
  * arrays without a known size (`ArrayType.size is None`) get `__LR_UNSIZED_LEN` elements (default 1024,
    override with `-D__LR_UNSIZED_LEN=n`); indices outside `[0, size)` have no C meaning, while the IR's arrays
    are total maps.
  * mathematical integers (CHC inputs) are printed as `long long`; values beyond 64 bits wrap in C.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, SrcLoc, Stmt
from looprover.program.expr import (
    FALSE, TRUE, ArrayFill, ArrayType, BoolConst, BoolType, Compare, ConstArray, Expr, IntConst, IntType, Ite, Not,
    Select, Store, Var,
    cmp,
    free_vars, ite, not_, or_, rename, transform,
)
from looprover.program.liveness import liveness
from looprover.program.printer import c_type, expr_to_str

UNSIZED_LEN_MACRO = "__LR_UNSIZED_LEN"
UNSIZED_LEN_DEFAULT = 1024
CHOICE = "__VERIFIER_nondet_int()"

_C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
asm typeof main abort reach_error __assert_fail
""".split())
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED_PREFIXES = ("__VERIFIER_", "__lr_", "__LR_", "__CPROVER", "__builtin")

# (bits, signed) -> SV-COMP nondet function suffix
_NONDET = {
    (8, True): "char", (8, False): "uchar", (16, True): "short", (16, False): "ushort",
    (32, True): "int", (32, False): "uint", (64, True): "longlong", (64, False): "ulonglong",
}
_NONDET_RET = {"bool": "_Bool", "char": "char", "uchar": "unsigned char", "short": "short",
               "ushort": "unsigned short", "int": "int", "uint": "unsigned int", "longlong": "long long",
               "ulonglong": "unsigned long long"}


def nondet_suffix(t) -> str:
    """The `__VERIFIER_nondet_<suffix>` that returns a value of scalar type `t`."""
    if isinstance(t, BoolType) or (isinstance(t, IntType) and t.bits == 1):
        return "bool"
    assert isinstance(t, IntType), t
    if t.bits is None:
        return "longlong"
    return _NONDET.get((t.bits, t.signed), "longlong" if t.signed else "ulonglong")


def c_names(program: Program) -> dict[str, str]:
    """IR variable name -> a unique C identifier, preferring the source name (`VarInfo.c_name`) when it is an
    identifier (a front-end may describe a temporary as `__VERIFIER_nondet_int()`; then the IR name is
    used)."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name, info in program.variables.items():
        preferred = info.c_name if info.c_name and _IDENT.fullmatch(info.c_name) else name
        base = _sanitize(preferred)
        cand, k = base, 1
        while cand in taken:
            cand = f"{base}_{k}"
            k += 1
        taken.add(cand)
        out[name] = cand
    return out


def _sanitize(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name) or "v"
    if s[0].isdigit():
        s = "v_" + s
    if s in _C_KEYWORDS or s.startswith(_RESERVED_PREFIXES):
        s = "v_" + s.lstrip("_")
    return s


def _comment(text: str) -> str:
    return "/* " + text.replace("*/", "* /") + " */"


def _where(src: SrcLoc | None) -> str:
    return f"{Path(src.file).name}:{src.line}" if src is not None else ""


def strip_parens(s: str) -> str:
    """`(x < y)` -> `x < y` when the outer parentheses enclose the whole string (for `if (...)` and traces); a
    GNU statement expression `({ ... })` keeps them (they are part of its syntax)."""
    if not (s.startswith("(") and s.endswith(")")) or s.startswith("({"):
        return s
    depth = 0
    for i, ch in enumerate(s):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(s) - 1:
            return s
    return s[1:-1]


def _select(array: Expr, index: Expr) -> Expr:
    """`array[index]` for an array *expression*: reads through stores, constant arrays and array ites, so
    that only `var[index]` remains (C has no array values)."""
    if isinstance(array, Store):
        return ite(cmp("==", index, array.index), array.value, _select(array.array, index))
    if isinstance(array, ConstArray):
        return array.value
    if isinstance(array, Ite):
        return ite(array.cond, _select(array.then, index), _select(array.orelse, index))
    return Select(array, index, array.type.elem)


def _lower(e: Expr) -> Expr:
    return transform(e, lambda n: _select(n.array, n.index) if isinstance(n, Select) and
                     not isinstance(n.array, Var) else None)


@dataclass
class _Emitter:
    program: Program
    names: dict[str, str]
    body: list[str] = field(default_factory=list)
    nondet_used: set[str] = field(default_factory=set)
    temps: list[str] = field(default_factory=list)   # declarations of temporary arrays
    uses_unsized: bool = False
    last_src: str = ""
    ntemp: int = 0
    zero: set[str] = field(default_factory=set)      # arrays still all zero as C started them (see module doc)

    # ------------------------------------------------------------------------------- expressions
    def expr(self, e: Expr) -> str:
        e = rename(_lower(e), lambda n: self.names.get(n, n))
        return expr_to_str(e)

    def cond(self, e: Expr) -> str:
        if isinstance(e, Not) and isinstance(e.arg, Compare):   # `x >= n` reads better than `!(x < n)`
            e = _negate(e.arg)
        return strip_parens(self.expr(e))

    def name(self, v: Var) -> str:
        return self.names.get(v.name, v.name)

    def nondet(self, t) -> str:
        suffix = nondet_suffix(t)
        self.nondet_used.add(suffix)
        return f"__VERIFIER_nondet_{suffix}()"

    def length(self, t: ArrayType) -> str:
        if t.size is None:
            self.uses_unsized = True
            return UNSIZED_LEN_MACRO
        return str(t.size)

    # -------------------------------------------------------------------------------- statements
    def line(self, indent: int, text: str, src: SrcLoc | None = None) -> None:
        where = _where(src)
        if where and where != self.last_src:
            text = f"{text} {_comment(where)}"
            self.last_src = where
        self.body.append("  " * indent + text)

    def stmt(self, s: Stmt, ind: int) -> None:
        if isinstance(s, Assign):
            if isinstance(s.lhs.type, ArrayType):
                if s.lhs.name in self.zero and isinstance(s.rhs, ConstArray) and _is_zero(s.rhs.value):
                    self.line(ind, _comment(f"{self.name(s.lhs)} = all zero: static storage already is"), s.src)
                    return
                self.zero.discard(s.lhs.name)
                self.array_assign(s.lhs, s.rhs, ind, s.src)
            else:
                self.line(ind, f"{self.name(s.lhs)} = {strip_parens(self.expr(s.rhs))};", s.src)
        elif isinstance(s, Havoc):
            for v in s.vars:
                self.havoc(v, ind, s.src)
        elif isinstance(s, Assume):
            if s.cond != TRUE:
                self.line(ind, f"__VERIFIER_assume({self.cond(s.cond)});", s.src)
        elif isinstance(s, Assert):
            note = "" if s.prop == "unreach-call" else " " + _comment(f"property {s.prop}")
            if s.cond == FALSE:
                self.line(ind, f"reach_error();{note}", s.src)
            elif s.cond != TRUE:
                self.line(ind, f"if ({self.cond(_negate(s.cond))}) reach_error();{note}", s.src)
        else:
            raise TypeError(f"unknown statement {type(s).__name__}")

    def havoc(self, v: Var, ind: int, src: SrcLoc | None) -> None:
        self.zero.discard(v.name)
        kind = self.program.variables[v.name].kind if v.name in self.program.variables else "temp"
        note = "" if kind == "nondet" else " " + _comment("havoc")
        if isinstance(v.type, ArrayType):
            n = self.length(v.type)
            self.line(ind, f"for (unsigned long long __lr_k = 0; __lr_k < {n}; __lr_k++) "
                           f"{self.name(v)}[__lr_k] = {self.nondet(v.type.elem)};{note}", src)
        else:
            self.line(ind, f"{self.name(v)} = {self.nondet(v.type)};{note}", src)

    def array_assign(self, target: Var, rhs: Expr, ind: int, src: SrcLoc | None) -> None:
        if rhs == target:
            return
        if isinstance(rhs, ArrayFill) and rhs.array == target and not any(
                target in free_vars(x) for x in (rhs.start, rhs.count, rhs.value)):
            self.fill(self.name(target), rhs, ind, src)
            return
        stores, base = [], rhs
        while isinstance(base, Store):
            stores.append((base.index, base.value))
            base = base.array
        stores.reverse()
        if base == target:
            # a store chain on the target itself: evaluate every index and value first (they may read the
            # target), then write in order
            if len(stores) == 1:
                (i, v), = stores
                self.line(ind, f"{self.name(target)}[{self.cond(i)}] = {self.cond(v)};", src)
                return
            self.line(ind, "{", src)
            for k, (i, v) in enumerate(stores):
                self.line(ind + 1, f"{c_type(i.type)} __lr_i{k} = {self.cond(i)};")
                self.line(ind + 1, f"{c_type(v.type)} __lr_v{k} = {self.cond(v)};")
            for k in range(len(stores)):
                self.line(ind + 1, f"{self.name(target)}[__lr_i{k}] = __lr_v{k};")
            self.line(ind, "}")
            return
        if target not in free_vars(rhs):
            self.array_into(self.name(target), target.type, rhs, ind, src)
            return
        tmp = f"__lr_tmp{self.ntemp}"
        self.ntemp += 1
        self.temps.append(f"static {c_type(target.type.elem)} {tmp}[{self.length(target.type)}];")
        self.array_into(tmp, target.type, rhs, ind, src)
        self.copy(self.name(target), tmp, target.type, ind)

    def array_into(self, dst: str, t: ArrayType, rhs: Expr, ind: int, src: SrcLoc | None) -> None:
        """dst := rhs, where rhs does not read dst (so writing dst early is harmless)."""
        if isinstance(rhs, Var):
            self.copy(dst, self.name(rhs), t, ind, src)
        elif isinstance(rhs, ConstArray):
            self.line(ind, f"for (unsigned long long __lr_k = 0; __lr_k < {self.length(t)}; __lr_k++) "
                           f"{dst}[__lr_k] = {self.cond(rhs.value)};", src)
        elif isinstance(rhs, Store):
            self.array_into(dst, t, rhs.array, ind, src)
            self.line(ind, f"{dst}[{self.cond(rhs.index)}] = {self.cond(rhs.value)};", src)
        elif isinstance(rhs, ArrayFill):
            self.array_into(dst, t, rhs.array, ind, src)
            self.fill(dst, rhs, ind, None)
        elif isinstance(rhs, Ite):
            self.line(ind, f"if ({self.cond(rhs.cond)}) {{", src)
            self.array_into(dst, t, rhs.then, ind + 1, None)
            self.line(ind, "} else {")
            self.array_into(dst, t, rhs.orelse, ind + 1, None)
            self.line(ind, "}")
        else:
            raise TypeError(f"unexpected array expression {type(rhs).__name__}")

    def fill(self, dst: str, rhs: ArrayFill, ind: int, src: SrcLoc | None) -> None:
        """The cells of an `ArrayFill`, one iteration at a time (its value does not read `dst`)."""
        k, kt = rhs.var.name, c_type(rhs.var.type)
        idx = f"({c_type(rhs.type.index)})({self.cond(rhs.start)} + ({kt}){rhs.stride} * {k})"
        self.line(ind, f"for ({kt} {k} = 0; {k} < {self.cond(rhs.count)}; {k}++) "
                       f"{dst}[{idx}] = {self.cond(rhs.value)};", src)

    def copy(self, dst: str, src_name: str, t: ArrayType, ind: int, src: SrcLoc | None = None) -> None:
        self.line(ind, f"for (unsigned long long __lr_k = 0; __lr_k < {self.length(t)}; __lr_k++) "
                       f"{dst}[__lr_k] = {src_name}[__lr_k];", src)


def emit_c(program: Program, observe: Mapping[int, Sequence[str]] | None = None) -> str:
    """The program as a C translation unit (SV-COMP conventions; see the module docstring). With `observe`, each
    of its locations calls `__lr_observe(k, values)` on arrival (k: the location's position in `observe`, values:
    its listed scalar variables as `long long`), which a translation unit linked beside defines
    (`witness/closed_run.py` records loop-head states that way)."""
    names = c_names(program)
    em = _Emitter(program, names)
    order = _layout(program)
    pos = {loc: i for i, loc in enumerate(order)}

    def falls_through(loc: int, dst: int) -> bool:
        return pos.get(loc, -2) + 1 == pos.get(dst, -1)

    targets: set[int] = set()
    for loc in order:
        outs = [] if loc == program.exit else [e for e in program.out_edges(loc)]
        if len(outs) == 1 and not falls_through(loc, outs[0].dst):
            targets.add(outs[0].dst)
        elif len(outs) > 1:
            targets.update(e.dst for e in outs)

    live = initial_havocs(program)
    if live:
        em.body.append("  " + _comment("the IR's initial state is arbitrary: values read before written"))
        for v in live:
            em.havoc(v, 1, None)
    if program.init not in targets and program.init != program.exit and len(program.out_edges(program.init)) == 1:
        em.zero = {n for n, i in program.variables.items() if isinstance(i.var.type, ArrayType)} - \
            {v.name for v in live}

    for loc in order:
        info = [f"L{loc}"]
        if loc in program.loc_names:
            info.append(program.loc_names[loc])
        if loc in program.loc_src:
            info.append(_where(program.loc_src[loc]))
        if loc in targets:
            em.body.append(f" L{loc}: ;" + (" " + _comment(", ".join(info[1:])) if len(info) > 1 else ""))
        elif len(info) > 1:
            em.body.append("  " + _comment(", ".join(info)))
        if observe and loc in observe:
            k = list(observe).index(loc)
            values = ", ".join(f"(long long){names[v]}" for v in observe[loc]) or "0"
            em.line(1, f"__lr_observe({k}, (const long long[]){{{values}}});")
        if loc == program.exit:
            em.line(1, "return 0;")
            continue
        outs = program.out_edges(loc)
        if not outs:
            em.line(1, "__VERIFIER_assume(0); " + _comment("no successor: the execution is blocked"))
            em.line(1, "return 0;")
        elif len(outs) == 1:
            for s in outs[0].stmts:
                em.stmt(s, 1)
            em.zero = set()             # past the start of `main`
            if not falls_through(loc, outs[0].dst):
                em.line(1, f"goto L{outs[0].dst};")
        else:
            _emit_choice(em, outs)
    return _assemble(program, em, names, bool(observe))


def initial_havocs(program: Program) -> list[Var]:
    """The variables `emit_c` havocs at the start of `main`, in that order (a harness that runs the C on a
    given initial state feeds their values first): those live at `init`, which some path reads before writing."""
    live = liveness(program)[program.init]
    rank = {name: i for i, name in enumerate(program.variables)}
    return sorted(live, key=lambda v: rank.get(v.name, -1))


def _is_zero(e: Expr) -> bool:
    return isinstance(e, IntConst) and e.value == 0 or isinstance(e, BoolConst) and not e.value


def _split_guard(stmts: tuple[Stmt, ...]) -> tuple[Expr, tuple[Stmt, ...]]:
    """An edge's guard (its leading Assume, or true) and the statements after it."""
    if stmts and isinstance(stmts[0], Assume):
        return stmts[0].cond, stmts[1:]
    return TRUE, stmts


def _common_prefix(edges: list[Edge]) -> int:
    """How many leading statements all edges share (ignoring source positions): they run before the choice,
    so a shared `havoc x; assume ...` pattern still branches on the assume alone."""
    k = 0
    first = edges[0].stmts
    while k < len(first) and not isinstance(first[k], Assume) and all(
            len(e.stmts) > k and replace(e.stmts[k], src=None) == replace(first[k], src=None) for e in edges):
        k += 1
    return k


_NEGATED_CMP = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


def _complementary(a: Expr, b: Expr) -> bool:
    """True if b is syntactically the negation of a (so an if/else needs no nondeterministic choice)."""
    if b == not_(a) or a == not_(b):
        return True
    return (isinstance(a, Compare) and isinstance(b, Compare) and a.lhs == b.lhs and a.rhs == b.rhs
            and _NEGATED_CMP[a.op] == b.op)


def _negate(c: Expr) -> Expr:
    """!c, flipping a comparison instead of wrapping it (`x == 5` rather than `!(x != 5)`)."""
    if isinstance(c, Compare):
        return Compare(_NEGATED_CMP[c.op], c.lhs, c.rhs)
    return not_(c)


def _emit_choice(em: _Emitter, outs: list[Edge]) -> None:
    """Nondeterministic choice among edges; an edge is enabled when its leading Assume holds."""
    shared = _common_prefix(outs)
    for st in outs[0].stmts[:shared]:
        em.stmt(st, 1)
    branches = [(e, *_split_guard(e.stmts[shared:])) for e in outs]
    branches = [b for b in branches if b[1] != FALSE]
    if not branches:
        em.line(1, "__VERIFIER_assume(0); " + _comment("no enabled successor"))
        em.line(1, "return 0;")
        return
    two_way = len(branches) == 2 and _complementary(branches[0][1], branches[1][1])
    for k, (e, g, rest) in enumerate(branches):
        pre: list[Stmt] = []
        if k == len(branches) - 1:
            head = "} else {" if k else "{"
            if not two_way:
                pre = [Assume(g)]          # the last branch is taken when no earlier one was
        else:
            others = or_(*[b[1] for b in branches[k + 1:]])
            if two_way or others == FALSE:
                c = em.cond(g)
            else:
                em.nondet_used.add("int")
                amb = CHOICE if others == TRUE else f"(!{em.expr(others)} || {CHOICE})"
                c = strip_parens(amb) if g == TRUE else f"{em.expr(g)} && {amb}"
            head = f"{'} else ' if k else ''}if ({c}) {{"
        em.line(1, head, e.src_loc)
        for s in (*pre, *rest):
            em.stmt(s, 2)
        em.line(2, f"goto L{e.dst};")
    em.line(1, "}")


def _layout(program: Program) -> list[int]:
    """Reachable locations in an order where a single successor tends to come next (fewer gotos)."""
    order: list[int] = []
    seen: set[int] = set()
    stack = [program.init]
    while stack:
        loc: int | None = stack.pop()
        while loc is not None and loc not in seen:
            seen.add(loc)
            order.append(loc)
            nxt = None
            succs = [] if loc == program.exit else [e.dst for e in program.out_edges(loc)]
            for d in reversed(succs):
                if d not in seen:
                    if nxt is not None:
                        stack.append(nxt)
                    nxt = d
            loc = nxt
    return order


def _assemble(program: Program, em: _Emitter, names: dict[str, str], observed: bool = False) -> str:
    src = Path(program.source_file).name if program.source_file else f"{program.name}.c"
    c_src = src.replace("\\", "\\\\").replace('"', '\\"')
    decls = []
    math_int = False
    for name, info in program.variables.items():
        t = info.var.type
        scalar = t.elem if isinstance(t, ArrayType) else t
        math_int |= isinstance(scalar, IntType) and scalar.bits is None
        decl = f"static {c_type(t)} {names[name]}"
        if isinstance(t, ArrayType):
            decl += f"[{em.length(t)}]"
        desc = [info.kind]
        if info.c_name and info.c_name != names[name]:
            desc.append(info.c_name)
        if name != names[name] and name != info.c_name:
            desc.append(f"IR {name}")
        if info.src is not None:
            desc.append(_where(info.src))
        decls.append(f"{decl}; {_comment(', '.join(desc))}")

    out = [_comment(f"Generated by looprover from {src} (program {program.name}, data model "
                    f"{program.data_model}). Semantics: see looprover.program.emit_c.")]
    if math_int:
        out.append(_comment("note: mathematical integers are printed as long long (64-bit)"))
    out += [
        "extern void abort(void);",
        "extern void __assert_fail(const char *, const char *, unsigned int, const char *) "
        "__attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));",
        f'void reach_error(void) {{ __assert_fail("0", "{c_src}", 0, "reach_error"); }}',
        "extern void __VERIFIER_assume(int cond);",
    ]
    if observed:
        out.append("void __lr_observe(int, const long long *);")
    out += [f"extern {_NONDET_RET[s]} __VERIFIER_nondet_{s}(void);" for s in sorted(em.nondet_used)]
    if em.uses_unsized:
        out += [_comment("arrays of unknown length get this many elements"),
                f"#ifndef {UNSIZED_LEN_MACRO}", f"#define {UNSIZED_LEN_MACRO} {UNSIZED_LEN_DEFAULT}", "#endif"]
    out += ["", *decls, *em.temps, "", "int main(void) {", *em.body, "}", ""]
    return "\n".join(out)
