"""CHC front-end: SMT-LIB2 `(set-logic HORN)` files (CHC-COMP format) into the program IR.

Why into the CFA and not a separate graph type: one IR means every engine (BMC, k-induction, TPA, the
multi-loop engine) and every printer works on Horn clauses too. The translation is the usual one:

  predicate P            -> a location; its arguments -> "slot" variables (the k-th Int argument of every
                            predicate is the variable `i<k>`, the k-th Bool argument `b<k>`, so predicates in
                            a chain share state and transition systems stay small)
  fact   phi -> Q(u)     -> edge init -> Q:  havoc clause vars; assume phi; Q's slots := u
  rule   P(t) & phi -> Q(u) -> edge P -> Q: the same, with P's slots equated to t (a clause variable used
                            as a plain argument is replaced by the slot itself, so no equation is needed)
  query  P(t) & phi -> false -> edge P -> exit: ...; assume phi; assert false ("chc-query")

Each edge keeps its clause as the file states it (`Program.clauses`: position, line, predicate, the clause's
variable names and their values as IR expressions), so a counterexample is shown as a derivation in the
file's terms (clause 2 derives inv(1, 2) with x = 0, x1 = 1, ...), not in slots.

So the clauses are satisfiable (sat, safe) iff the assertion is never violated (TRUE). Linear clauses over Int,
Bool and `(Array Int Int)` (LIA, CHC-COMP's LIA-Lin-Arrays) are in scope, an array argument becoming an IR array
slot `a<k>` read with `select`/`store`/constant arrays; anything else raises UnsupportedError. SMT-LIB `div`/`mod` are Euclidean;
they are rewritten into C's truncating `/` and `%` (constant divisors only). Constant sub-expressions
(`(- 2)`, which z3 parses as a unary minus, or `(* 2 3)`) are folded to literals, so a divisor or factor that
is a constant expression counts as a constant, as it does for z3.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import z3

from looprover.errors import InputError, UnsupportedError
from looprover.frontend import check_text
from looprover.program.cfa import Assert, Assign, Assume, ClauseStep, Havoc, Program, ProgramBuilder, SrcLoc
from looprover.program.expr import BOOL, FALSE, MATH_INT, TRUE, ArrayType, Expr, Var, and_, cmp
from looprover.smt.readback import Readback
from looprover.smt.terms import Renaming, uninterpreted_apps

QUERY_PROP = "chc-query"


@dataclass
class Clause:
    """A Horn clause with its quantified variables instantiated as fresh z3 constants."""
    body_preds: list[z3.ExprRef]   # predicate applications in the body (at most one in scope)
    constraint: z3.BoolRef         # the interpreted part of the body
    head: z3.ExprRef | None        # predicate application, or None for a query (head false)
    variables: list[z3.ExprRef]
    index: int
    names: list[str]               # the variables' names in the file
    line: int | None               # where its `(assert` is
    text: str                      # the clause in SMT-LIB syntax


_Z3_ERROR = re.compile(r'\(error "line (\d+) column (\d+): (.*?)"\)', re.S)


def parse_error(path: Path, exc: z3.Z3Exception) -> str:
    """z3's parse error as `file:line:column: message` (z3 gives it as the bytes of `(error "line L column C:
    ...")` lines, one per error; the first is the one to fix)."""
    v = getattr(exc, "value", exc)
    text = v.decode(errors="replace") if isinstance(v, bytes) else str(v)
    errors = _Z3_ERROR.findall(text)
    if not errors:
        return f"{path}: cannot parse SMT-LIB2: {' '.join(text.split())}"
    line, col, msg = errors[0]
    more = f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{path}:{line}:{col}: {' '.join(msg.split())}{more}"


def _where(path: Path, line: int | None, index: int) -> str:
    """How messages name a clause: its line and its position (clause k is the k-th assert of the file)."""
    return (f"{path}:{line} " if line else f"{path}: ") + f"(clause {index + 1})"


def assert_lines(text: str) -> list[int]:
    """The line of every top-level `(assert` in SMT-LIB2 text, in order (z3's parser keeps no positions).
    Skips comments, string literals and |quoted symbols|, which may contain parentheses."""
    lines: list[int] = []
    line, depth, i, n = 1, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif ch in "\"|":
            j = i + 1
            while j < n:
                if text[j] == ch:
                    if ch == '"' and j + 1 < n and text[j + 1] == '"':   # "" is an escaped quote
                        j += 2
                        continue
                    break
                j += 1
            line += text.count("\n", i, j)
            i = j + 1
            continue
        elif ch == "(":
            if depth == 0 and text.startswith("assert", i + 1) and \
                    (i + 7 >= n or not (text[i + 7].isalnum() or text[i + 7] in "_-!.")):
                lines.append(line)
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        i += 1
    return lines


def load_chc_program(path: str | os.PathLike) -> Program:
    path = Path(path)
    preds, clauses, _ = read_clauses(path)
    return _build_program(path, preds, clauses)


def read_clauses(path: Path) -> tuple[dict[str, z3.FuncDeclRef], list[Clause], list[z3.BoolRef]]:
    """The file's predicates, its clauses split into body, constraint and head, and its assertions as z3 reads
    them (closed formulas: what a model of the file must satisfy)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    raw = path.read_bytes()
    check_text(str(path), raw, "SMT-LIB2 text")
    text = raw.decode(errors="replace")
    if not text.strip():
        raise InputError(f"{path}: empty file")
    try:
        assertions = z3.parse_smt2_string(text)
    except z3.Z3Exception as exc:
        raise InputError(parse_error(path, exc)) from None
    lines: list[int | None] = list(assert_lines(text))
    if len(lines) != len(assertions):       # not one assertion per assert command: no lines rather than wrong ones
        lines = [None] * len(assertions)
    preds: dict[str, z3.FuncDeclRef] = {}
    clauses = [_split_clause(a, i, preds, path, lines[i]) for i, a in enumerate(assertions)]
    return preds, clauses, list(assertions)


# ------------------------------------------------------------------------------------ clause shapes
def _is_pred_app(t: z3.ExprRef, preds: dict[str, z3.FuncDeclRef]) -> bool:
    return z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and z3.is_bool(t) and \
        t.decl().name() in preds


def _split_clause(a: z3.ExprRef, index: int, preds: dict, path: Path, line: int | None = None) -> Clause:
    where = _where(path, line, index)
    variables: list[z3.ExprRef] = []
    names: list[str] = []
    body = a
    while z3.is_quantifier(body):
        if not body.is_forall():
            raise UnsupportedError("existential quantifier in a clause", where)
        n = body.num_vars()
        consts = [z3.Const(f"{body.var_name(i)}!{index}", body.var_sort(i)) for i in range(n)]
        variables.extend(consts)
        names.extend(body.var_name(i) for i in range(n))
        # de Bruijn index 0 is the last bound variable
        body = z3.substitute_vars(body.body(), *reversed(consts))
    var_ids = {v.get_id() for v in variables}

    # Uninterpreted Bool-valued applications that are not bound variables are predicates.
    for t in uninterpreted_apps(body):
        if t.get_id() not in var_ids:
            if z3.is_bool(t):
                d = t.decl()
                preds.setdefault(d.name(), d)
            else:
                raise UnsupportedError(f"uninterpreted function {t.decl().name()}", where)
    if z3.is_implies(body):
        lhs, head = body.arg(0), body.arg(1)
    elif z3.is_not(body):                          # (not (and body...)) is a query
        lhs, head = body.arg(0), z3.BoolVal(False)
    elif z3.is_or(body):                           # (or (not b1) ... h)
        heads = [c for c in body.children() if _is_pred_app(c, preds)]
        negs = [c for c in body.children() if not _is_pred_app(c, preds)]
        if len(heads) > 1:
            raise UnsupportedError("clause with several positive predicates", where)
        head = heads[0] if heads else z3.BoolVal(False)
        lhs = z3.And(*[z3.Not(c) for c in negs]) if negs else z3.BoolVal(True)
    else:
        lhs, head = z3.BoolVal(True), body
    conj = _flatten_and(lhs)
    body_preds = [c for c in conj if _is_pred_app(c, preds)]
    rest = [c for c in conj if not _is_pred_app(c, preds)]
    if len(body_preds) > 1:
        raise UnsupportedError(f"non-linear clause ({len(body_preds)} predicates in the body)", where)
    for c in rest:
        if _mentions_pred(c, preds):
            raise UnsupportedError("predicate under negation or disjunction", where)
    if z3.is_false(head):
        head_app = None
    elif _is_pred_app(head, preds):
        head_app = head
    else:
        # An interpreted head h: P(t) & phi -> h is the query P(t) & phi & !h -> false.
        rest.append(z3.Not(head))
        head_app = None
    return Clause(body_preds, z3.And(*rest) if rest else z3.BoolVal(True), head_app, variables, index, names, line,
                  " ".join(a.sexpr().split()))


def _flatten_and(t: z3.ExprRef) -> list[z3.ExprRef]:
    if z3.is_and(t):
        out = []
        for c in t.children():
            out.extend(_flatten_and(c))
        return out
    return [t]


def _mentions_pred(t: z3.ExprRef, preds: dict) -> bool:
    return any(_is_pred_app(u, preds) for u in uninterpreted_apps(t))


# ------------------------------------------------------------------------------------- translation
INT_ARRAY = ArrayType(MATH_INT, MATH_INT)
_POOL = {MATH_INT: "i", BOOL: "b", INT_ARRAY: "a"}      # slot and temporary names by type


def _ir_type(sort: z3.SortRef, where: str):
    if sort.kind() == z3.Z3_INT_SORT:
        return MATH_INT
    if sort.kind() == z3.Z3_BOOL_SORT:
        return BOOL
    if sort.kind() == z3.Z3_ARRAY_SORT and sort.domain().kind() == z3.Z3_INT_SORT and \
            sort.range().kind() == z3.Z3_INT_SORT:
        return INT_ARRAY
    raise UnsupportedError(f"sort {sort}", where)


def argument_slots(d: z3.FuncDeclRef, where: str) -> list[tuple[Any, int]]:
    """Where a predicate's arguments live: (IR type, k) per argument, the k-th slot of that type (`i<k>`,
    `b<k>`, `a<k>`, `slot_name`). The CHC witnesses read a model back into the file's predicates through it."""
    counters = dict.fromkeys(_POOL, 0)
    out = []
    for i in range(d.arity()):
        t = _ir_type(d.domain(i), where)
        out.append((t, counters[t]))
        counters[t] += 1
    return out


def slot_name(t: Any, k: int) -> str:
    """The IR variable of the k-th slot of type t."""
    return f"{_POOL[t]}{k}"


def _build_program(path: Path, preds: dict[str, z3.FuncDeclRef], clauses: list[Clause]) -> Program:
    b = ProgramBuilder(path.stem, data_model="CHC", source_file=str(path))
    b.exit = b.new_loc(name="error")
    loc = {name: b.new_loc(name=name) for name in preds}
    pools: dict[str, list[Var]] = {}

    def pooled(kind: str, type_, k: int) -> Var:
        """The k-th variable of a pool (slots `i<k>`/`b<k>`/`a<k>`, temporaries `h…`, parallel-assign `n…`)."""
        key = f"{kind}{_POOL[type_]}"
        pool = pools.setdefault(key, [])
        while len(pool) <= k:
            name = f"{key}{len(pool)}"
            pool.append(b.declare(name, type_, kind="temp" if kind else "local"))
        return pool[k]

    slots = {name: [pooled("", t, k) for t, k in argument_slots(d, f"{path}: predicate {name}")]
             for name, d in preds.items()}

    for c in clauses:
        where = _where(path, c.line, c.index)
        src = SrcLoc(str(path), c.line) if c.line else None
        mapping: dict[int, Expr] = {}
        equations: list[tuple[z3.ExprRef, Var]] = []
        src_loc = b.init
        if c.body_preds:
            app = c.body_preds[0]
            src_loc = loc[app.decl().name()]
            for arg, slot in zip(app.children(), slots[app.decl().name()]):
                if z3.is_const(arg) and arg.decl().kind() == z3.Z3_OP_UNINTERPRETED and arg.get_id() not in mapping:
                    mapping[arg.get_id()] = slot
                else:
                    equations.append((arg, slot))
        defs, constraint = _definitions(c, mapping)
        counters = dict.fromkeys(_POOL, 0)
        havoc: list[Var] = []
        for v in c.variables:
            if v.get_id() not in mapping and v.get_id() not in defs:
                t = _ir_type(v.sort(), where)
                h = pooled("h", t, counters[t])
                counters[t] += 1
                mapping[v.get_id()] = h
                havoc.append(h)
        tr = Readback(lambda t: mapping.get(t.get_id()), MATH_INT, lambda msg: UnsupportedError(msg, where))
        for vid, term in defs.items():
            mapping[vid] = tr(term)
        cond = and_(*[cmp("==", slot, tr(arg)) for arg, slot in equations], *[tr(x) for x in constraint])
        stmts: list = [Havoc(tuple(havoc), src)] if havoc else []
        if cond != TRUE:
            stmts.append(Assume(cond, src))
        clause_vars = tuple((n, mapping[v.get_id()]) for n, v in zip(c.names, c.variables))
        if c.head is None:
            edge = b.add_edge(src_loc, b.exit, *stmts, Assert(FALSE, QUERY_PROP, src))
            b.clauses[edge] = ClauseStep(c.index + 1, c.line, None, (), clause_vars, c.text)
            continue
        name = c.head.decl().name()
        targets = slots[name]
        values = [tr(a) for a in c.head.children()]
        stmts.extend(_parallel_assign(targets, values, lambda t, k: pooled("n", t, k), src))
        edge = b.add_edge(src_loc, loc[name], *stmts)
        b.clauses[edge] = ClauseStep(c.index + 1, c.line, name, tuple(values), clause_vars, c.text)
    return b.build()


def _definitions(c: Clause, mapping: dict[int, Expr]) -> tuple[dict[int, z3.ExprRef], list[z3.ExprRef]]:
    """Top-level conjuncts `v = t` (v a clause variable not bound to a slot, not occurring in t once the
    earlier definitions are substituted) become substitutions v := t, so primed variables are not havocked and
    re-constrained. Returns the definitions (closed under each other) and the remaining conjuncts with the
    definitions substituted. Each term is substituted once, after the definitions are chosen (substituting
    every definition into the next conjunct as it was read was quadratic: a quarter of a second on a
    77-variable Lustre clause)."""
    clause_vars = {v.get_id() for v in c.variables}
    defs: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}   # id -> (var, term as written)
    reads: dict[int, set[int]] = {}                         # id -> the clause variables its term reads

    def reaches(start: set[int], target: int) -> bool:
        """`target` occurs in a term reading `start` once the definitions are substituted."""
        todo, seen = list(start), set()
        while todo:
            w = todo.pop()
            if w == target:
                return True
            if w not in seen:
                seen.add(w)
                todo.extend(reads.get(w, ()))
        return False

    def alias_end(v: z3.ExprRef) -> z3.ExprRef:
        """What a side of an equation becomes once the definitions are substituted, as far as it matters:
        a variable defined as another variable stands for that one (y := z, then y = 3 defines z := 3)."""
        while z3.is_const(v) and v.get_id() in defs and z3.is_const(defs[v.get_id()][1]):
            v = defs[v.get_id()][1]
        return v

    rest: list[z3.ExprRef] = []
    for cj in _flatten_and(c.constraint):
        done = False
        if z3.is_eq(cj):
            for v, t in ((cj.arg(0), cj.arg(1)), (cj.arg(1), cj.arg(0))):
                v = alias_end(v)
                vid = v.get_id()
                if z3.is_const(v) and vid in clause_vars and vid not in mapping and vid not in defs:
                    read = {u.get_id() for u in uninterpreted_apps(t)} & clause_vars
                    if not reaches(read, vid):
                        defs[vid], reads[vid] = (v, t), read
                        done = True
                        break
        if not done:
            rest.append(cj)
    closed: dict[int, z3.ExprRef] = {}

    def close(vid: int) -> None:
        """Close the definition of `vid`: those it reads first (they are acyclic: `reaches`)."""
        todo = [(vid, False)]
        while todo:
            w, ready = todo.pop()
            if w in closed:
                continue
            below = [u for u in reads[w] if u in defs]
            if ready:
                v, t = defs[w]
                closed[w] = z3.substitute(t, *[(defs[u][0], closed[u]) for u in below]) if below else t
            else:
                todo.append((w, True))
                todo.extend((u, False) for u in below if u not in closed)

    for vid in defs:
        close(vid)
    closing = Renaming([(v, closed[vid]) for vid, (v, _) in defs.items()])
    rest = [z3.simplify(closing(cj)) for cj in rest]
    return closed, [cj for cj in rest if not z3.is_true(cj)]


def _parallel_assign(targets: list[Var], values: list[Expr], temp, src: SrcLoc) -> list[Assign]:
    """`targets := values` simultaneously: route a value through a temporary only when its target is read
    by another pending value (so the common shifts like i0 := i0 + 1 need none)."""
    from looprover.program.expr import free_vars
    pending = [(t, v) for t, v in zip(targets, values) if t != v]
    reads = [free_vars(v) for _, v in pending]
    needs_temp = [any(t in reads[j] for j in range(len(pending)) if j != i) for i, (t, _) in enumerate(pending)]
    first, direct, last = [], [], []
    counters = dict.fromkeys(_POOL, 0)
    for (t, v), via in zip(pending, needs_temp):
        if via:
            tmp = temp(t.type, counters[t.type])
            counters[t.type] += 1
            first.append(Assign(tmp, v, src))
            last.append(Assign(t, tmp, src))
        else:
            direct.append(Assign(t, v, src))
    return first + direct + last
