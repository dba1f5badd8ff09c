"""Verdicts as users read them: the text report, the `--json` object, and counterexample traces in C terms.

Why a module of its own: `verify`, the reference solvers of `bench` and the child process that runs a job all
print the same output; keeping the rendering here (and nothing else) lets each of them produce exactly what a
user or a script of theirs reads, without importing the command line.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looprover.program.cfa import Assert, Assign, Assume, Havoc, Program, Stmt
from looprover.program.emit_c import strip_parens
from looprover.program.expr import Expr, Store, free_vars, rename
from looprover.program.interp import ArrayValue
from looprover.program.printer import expr_to_str
from looprover.verdict import Counterexample, NonTermination, Status, Verdict

MAX_TRACE_LINES = 400


def print_error(msg: str, as_json: bool, **extra) -> None:
    """An input error as users see it: one `error: ...` line on stderr (and a JSON object with --json)."""
    print(f"error: {msg}", file=sys.stderr)
    if as_json:
        print(json.dumps({"status": "ERROR", "error": msg, **extra}))


def _names(program: Program | None) -> dict[str, str]:
    if program is None:
        return {}
    return {n: info.c_name or n for n, info in program.variables.items()}


def _expr(e: Expr, names: dict[str, str], limit: int = 160) -> str:
    s = strip_parens(expr_to_str(rename(e, lambda n: names.get(n, n))))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def stmt_text(s: Stmt, names: dict[str, str]) -> str:
    """A statement in C-like syntax with source names (for counterexample traces)."""
    if isinstance(s, Assign):
        lhs = names.get(s.lhs.name, s.lhs.name)
        if isinstance(s.rhs, Store) and s.rhs.array == s.lhs:
            return f"{lhs}[{_expr(s.rhs.index, names)}] = {_expr(s.rhs.value, names)}"
        return f"{lhs} = {_expr(s.rhs, names)}"
    if isinstance(s, Havoc):
        # a front-end names the result of an input call after the call (`__VERIFIER_nondet_int()`); the
        # statement that reads it and the values column already show it, so it is left out
        shown = [names.get(v.name, v.name) for v in s.vars]
        return ", ".join(f"{n} = nondet()" for n in shown if not n.endswith(")"))
    if isinstance(s, Assume):
        return f"[{_expr(s.cond, names)}]"
    if isinstance(s, Assert):
        return f"assert({_expr(s.cond, names)})"
    return str(s)


def value_json(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, ArrayValue):
        return {"default": value_json(v.default), "cells": {str(k): value_json(x) for k, x in sorted(v.cells.items())}}
    if isinstance(v, dict):
        return {str(k): value_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [value_json(x) for x in v]
    if v is None or isinstance(v, (float, str)):
        return v
    if isinstance(v, Status):
        return v.value
    if hasattr(v, "to_json"):          # a TRUE's proof (witness/proofs.py)
        return value_json(v.to_json())
    return str(v)


def value_text(v: Any) -> str:
    if isinstance(v, ArrayValue):
        cells = ", ".join(f"[{k}]={value_text(x)}" for k, x in sorted(v.cells.items())[:8])
        more = ", ..." if len(v.cells) > 8 else ""
        return "{" + cells + more + (", " if cells else "") + f"else {value_text(v.default)}" + "}"
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


@dataclass
class _Input:
    value: Any
    name: str | None = None     # the variable the input is stored into (or the havocked variable)
    call: str | None = None     # the input call, when the front-end recorded it (`__VERIFIER_nondet_int()`)
    where: str | None = None


def _named_inputs(cex: Counterexample, program: Program | None) -> list[_Input]:
    """Pair the input values with the nondet havocs of the trace, in order, where they line up. An input is
    named after the variable it is stored into on the same edge (`x = __VERIFIER_nondet_int()`), else after
    the havocked variable."""
    slots: list[_Input] = []
    if program is not None:
        for step in cex.steps:
            stmts = step.edge.stmts
            for i, s in enumerate(stmts):
                if not isinstance(s, Havoc):
                    continue
                for v in s.vars:
                    info = program.variables.get(v.name)
                    if info is None or info.kind != "nondet":
                        continue
                    c_name = info.c_name or v.name
                    call = c_name if c_name.endswith(")") else None
                    name = None if call else c_name
                    target = next((t for t in stmts[i + 1:] if isinstance(t, Assign) and
                                   free_vars(t.rhs) == {v}), None)
                    if target is not None:
                        tinfo = program.variables.get(target.lhs.name)
                        name = tinfo.c_name if tinfo and tinfo.c_name else target.lhs.name
                    where = s.src or step.src
                    slots.append(_Input(None, name, call, str(where) if where else None))
    if len(slots) != len(cex.inputs):
        return [_Input(val) for val in cex.inputs]
    for slot, val in zip(slots, cex.inputs):
        slot.value = val
    return slots


def counterexample_json(cex: Counterexample, program: Program | None) -> dict[str, Any]:
    names = _names(program)
    return {
        "validated": cex.validated,
        "violated_at": str(cex.violated_at) if cex.violated_at else None,
        "inputs": [value_json(v) for v in cex.inputs],
        "named_inputs": [{"name": i.name, "call": i.call, "value": value_json(i.value), "location": i.where}
                         for i in _named_inputs(cex, program) if i.name or i.call],
        "initial": value_json(cex.initial),
        # an abbreviated run (witness.deep): `steps` are its first and last edges, `omitted` ran in between
        "length": getattr(cex, "length", 0) or len(cex.steps),
        "omitted": getattr(cex, "omitted", 0),
        "omitted_at": getattr(cex, "omitted_at", None),
        "steps": [{"location": str(st.src) if st.src else None, "edge": [st.edge.src, st.edge.dst],
                   "statements": [t for t in (stmt_text(s, names) for s in st.edge.stmts) if t],
                   "values": value_json(st.values)} for st in cex.steps],
    }


def counterexample_lines(cex: Counterexample, program: Program | None) -> list[str]:
    names = _names(program)
    head = "counterexample" + (" (validated by replay)" if cex.validated else " (NOT validated)")
    if cex.violated_at is not None:
        head += f": reach_error() is reached at {cex.violated_at}"
    lines = [head]
    inputs = _named_inputs(cex, program)
    if inputs:
        lines.append("  inputs (in the order the program reads them):")
        for i in inputs:
            origin = " at ".join(x for x in (i.call, i.where) if x)
            lines.append(f"    {i.name + ' = ' if i.name else ''}{value_text(i.value)}"
                         + (f"   ({origin})" if origin else ""))
    else:
        lines.append("  inputs: none")
    lines.append("  trace (location, statements => values written):")
    rows = [(f"{Path(st.src.file).name}:{st.src.line}" if st.src else "-",
             "; ".join(t for t in (stmt_text(s, names) for s in st.edge.stmts) if t),
             ", ".join(f"{k} = {value_text(v)}" for k, v in st.values.items()))
            if st.edge.stmts else None for st in cex.steps]
    omitted = getattr(cex, "omitted", 0)
    if omitted:
        rows.insert(cex.omitted_at, ("...", f"{omitted} edges executed here are not shown", ""))
    rows = [r for r in rows if r is not None]
    width = max((len(r[0]) for r in rows), default=0)
    body = [f"    {where:<{width}}  {text}" + (f"   => {vals}" if vals else "") for where, text, vals in rows]
    if len(body) > MAX_TRACE_LINES:
        cut = len(body) - MAX_TRACE_LINES
        body = body[: MAX_TRACE_LINES // 2] + [f"    ... {cut} steps omitted (see --json) ..."] + \
            body[-MAX_TRACE_LINES // 2:]
    return lines + body


def _edge_rows(edges, names: dict[str, str]) -> list[dict[str, Any]]:
    return [{"location": str(e.src_loc) if e.src_loc else None, "edge": [e.src, e.dst],
             "statements": [t for t in (stmt_text(s, names) for s in e.stmts) if t]} for e in edges]


def nontermination_json(w: NonTermination, program: Program | None) -> dict[str, Any]:
    """A non-termination witness: the stem (inputs, edges), the cycle (edges, its fixed nondet values) and the
    recurrent set in C terms."""
    names = _names(program)
    return {
        "validated": w.validated,
        "loop_location": str(w.where) if w.where else None,
        "loop_head": w.head,
        "recurrent_set": _expr(w.recurrent, names, limit=2000),
        "stem": {"inputs": [value_json(v) for v in w.inputs], "initial": value_json(w.stem_initial),
                 "havocs": [value_json(v) for v in w.stem_havocs], "length": len(w.stem),
                 "steps": _edge_rows(w.stem[-MAX_TRACE_LINES:], names)},
        "cycle": {"havocs": [value_json(v) for v in w.loop_havocs], "steps": _edge_rows(w.loop, names)},
    }


def nontermination_lines(w: NonTermination, program: Program | None) -> list[str]:
    names = _names(program)
    where = f" at {w.where}" if w.where else ""
    lines = ["non-termination witness" + (" (checked: stem replayed, recurrent set closed)" if w.validated
                                         else " (NOT validated)") + f": the loop{where} runs forever"]
    lines.append("  stem inputs (in the order the program reads them): " +
                 (", ".join(value_text(v) for v in w.inputs) or "none") + f"  ({len(w.stem)} edges)")
    lines.append(f"  recurrent set at the loop head: {_expr(w.recurrent, names, limit=400)}")
    lines.append("  cycle, repeated forever" + (f" (nondet values {', '.join(value_text(v) for v in w.loop_havocs)})"
                                               if w.loop_havocs else "") + ":")
    for row in _edge_rows(w.loop[:MAX_TRACE_LINES], names):
        where_ = Path(row["location"].rsplit(":", 1)[0]).name + ":" + row["location"].rsplit(":", 1)[1] \
            if row["location"] else "-"
        lines.append(f"    {where_}  {'; '.join(row['statements']) or 'skip'}")
    return lines


def split_tracebacks(stats: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The statistics without the tracebacks of internal errors (the portfolio collects its children's), and
    those tracebacks, which only `--debug` shows."""
    stats = dict(stats)
    tracebacks = [stats.pop("traceback")] if "traceback" in stats else []
    if isinstance(stats.get("portfolio"), dict):
        stats["portfolio"] = {n: dict(e) for n, e in stats["portfolio"].items()}
        tracebacks += [e.pop("traceback") for e in stats["portfolio"].values() if "traceback" in e]
    return stats, tracebacks


def verdict_json(verdict: Verdict, program: Program | None, elapsed: float, job: dict[str, Any],
                 stats: dict[str, Any]) -> dict[str, Any]:
    """The `verify --json` object. `job` holds the keys file, task, property, data_model and expected."""
    return {
        "status": verdict.status.value,
        "engine": verdict.engine,
        "reason": verdict.reason,
        "time": round(elapsed, 3),
        **job,
        "counterexample": (counterexample_json(verdict.evidence, program)
                           if verdict.status == Status.FALSE and isinstance(verdict.evidence, Counterexample)
                           else None),
        # a termination FALSE: the lasso (stem, cycle) and its recurrent set
        **({"nontermination": nontermination_json(verdict.evidence, program)}
           if verdict.status == Status.FALSE and isinstance(verdict.evidence, NonTermination) else {}),
        # the checked evidence of a TRUE (invariants, transition invariants, termination arguments per loop),
        # as the engine reports it
        "proof": (value_json(verdict.evidence) if verdict.status == Status.TRUE and verdict.evidence is not None
                  else None),
        "stats": value_json(stats),
        # an UNKNOWN's counterexample that did not replay on the program: shown, never a FALSE
        **({"unconfirmed_counterexample": counterexample_json(verdict.evidence, program)}
           if verdict.status == Status.UNKNOWN and isinstance(verdict.evidence, Counterexample) else {}),
        # the portfolio's bug reports: evidence that failed its own check, engines that disagree
        **({"bugs": value_json(stats["bugs"])} if stats.get("bugs") else {}),
    }


def verdict_text(verdict: Verdict, program: Program | None, elapsed: float, prop: str | None,
                 expected: bool | None) -> list[str]:
    """The text report: the status line, engine, reason, time, property, and a counterexample if any."""
    lines = [verdict.status.value,
             f"  engine:   {verdict.engine}",
             f"  reason:   {verdict.reason}",
             f"  time:     {elapsed:.2f} s"]
    if prop is not None:
        lines.append(f"  property: {prop}" + (f" (expected {str(expected).upper()})" if expected is not None
                                                else ""))
    if isinstance(verdict.evidence, Counterexample):
        lines += counterexample_lines(verdict.evidence, program)
    if isinstance(verdict.evidence, NonTermination):
        lines += nontermination_lines(verdict.evidence, program)
    if verdict.status == Status.TRUE and hasattr(verdict.evidence, "lines"):
        lines += verdict.evidence.lines()
    for bug in verdict.stats.get("bugs", ()):
        lines.append(f"  BUG:      {_bug_line(bug)} (please report it)")
    return lines


def _bug_line(bug: dict[str, Any]) -> str:
    if bug.get("kind") == "engines disagree":
        return "engines disagree: " + "; ".join(f"{a['engine']} says {a['answer']} ({a['reason']})"
                                                for a in bug.get("answers", ()))
    return f"{bug.get('engine')} answered {bug.get('answer')} with evidence that failed the check: " \
           f"{bug.get('rejected_because')}"
