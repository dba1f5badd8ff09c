"""Verdicts as users read them: the text report, the `--json` object, and counterexample traces in C terms.

Why a module of its own: `verify`, the reference solvers of `bench` and the child process that runs a job all
print the same output; keeping the rendering here (and nothing else) lets each of them produce exactly what a
user or a script of theirs reads, without importing the command line.
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looprover.program.cfa import Assert, Assign, Assume, ClauseStep, Havoc, Program, Stmt
from looprover.program.emit_c import strip_parens
from looprover.program.expr import Expr, Store, free_vars, rename
from looprover.program.interp import ArrayValue, Evaluator, UndefinedBehavior
from looprover.program.printer import expr_to_str
from looprover.properties import CHECK_SAT, KNOWN, NO_OVERFLOW, UNMODELLED, UNREACH_CALL
from looprover.verdict import Counterexample, LeapingCounterexample, NonTermination, Status, Verdict

MAX_TRACE_LINES = 400
CHC_ANSWERS = {Status.TRUE: "sat", Status.FALSE: "unsat", Status.UNKNOWN: "unknown"}


def svcomp_result(verdict: Verdict, prop: str | None) -> str:
    """SV-COMP's result string: `TRUE`, `UNKNOWN`, or `FALSE(p)` with the property p that is violated (what
    BenchExec scores). p is the violated assertion's property when it names one (so a memory-safety violation
    reads `FALSE(valid-deref)`), else the checked property; Horn clauses have none (plain `FALSE`)."""
    if verdict.status != Status.FALSE:
        return verdict.status.value
    violated = _violated_property(verdict.evidence)
    name = violated or (prop if prop in KNOWN and prop != CHECK_SAT else None)
    return f"FALSE({name})" if name else "FALSE"


def _violated_property(cex: Any) -> str | None:
    """The SV-COMP property of the assertion a counterexample violates (on its last edge), if it names one."""
    if not isinstance(cex, Counterexample) or not cex.steps:
        return None
    if isinstance(cex.violated, Assert):
        props = {cex.violated.prop}
    else:
        props = {s.prop for s in cex.steps[-1].edge.stmts if isinstance(s, Assert)}
    if len(props) == 1:
        (p,) = props
        return p if p in KNOWN or p.startswith("valid-") else None
    return None


def matches_expected(verdict: Verdict, expected: bool | None) -> bool | None:
    """Whether a TRUE/FALSE agrees with the task's expected verdict (None: no expectation, or UNKNOWN)."""
    if expected is None or verdict.status == Status.UNKNOWN:
        return None
    return (verdict.status == Status.TRUE) == expected


def chc_answer(verdict: Verdict) -> str:
    """CHC-COMP's answer: sat (the clauses have a model: safe), unsat (a derivation of false), unknown."""
    return CHC_ANSWERS[verdict.status]


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


def _shown_values(values: dict[str, Any], names: dict[str, str]) -> list[tuple[str, Any]]:
    """A step's written values (keyed by IR name, array cells `a[i]`) under their source names, in order. Two
    variables may share a source name (the results of two `__VERIFIER_nondet_int()` calls): both are kept."""
    out = []
    for key, v in values.items():
        base, bracket, rest = key.partition("[")
        out.append((names.get(base, base) + bracket + rest, v))
    return out


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`--json` needs distinct keys: a repeated source name gets `#2`, `#3`, ... in the order written."""
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for name, v in pairs:
        seen[name] = seen.get(name, 0) + 1
        out[name if seen[name] == 1 else f"{name}#{seen[name]}"] = v
    return out


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
    if hasattr(v, "to_json"):          # a TRUE's proof (evidence/proofs.py)
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


# ------------------------------------------------------------------------------ Horn-clause derivations
@dataclass
class Derived:
    """One step of a Horn-clause counterexample in the file's terms: the clause applied, the fact it derives,
    and the values of the clause's variables (None where the trace does not determine them)."""
    clause: ClauseStep
    args: list[Any] | None
    variables: list[tuple[str, Any]] | None

    @property
    def where(self) -> str:
        return f"clause {self.clause.number}" + (f" (line {self.clause.line})" if self.clause.line else "")

    @property
    def fact(self) -> str:
        if self.clause.head is None:
            return "false"
        if not self.clause.head_args:
            return self.clause.head
        args = self.args if self.args is not None else ["?"] * len(self.clause.head_args)
        return f"{self.clause.head}({', '.join(_smt_value(v) for v in args)})"


def _smt_value(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


_shared_derivations: dict[tuple[int, int], tuple[Counterexample, Program, list]] | None = None


@contextmanager
def derivations_shared():
    """Within the block, a Horn-clause counterexample's derivation is built once however often it is shown:
    a verdict's text and its JSON both show it (on a 500-step derivation, 25 ms each). Only within the block:
    a counterexample may change afterwards (replay trims its steps)."""
    global _shared_derivations
    outer = _shared_derivations
    _shared_derivations = {} if outer is None else outer
    try:
        yield
    finally:
        _shared_derivations = outer


def derivation(cex: Counterexample, program: Program) -> list[Derived | None]:
    """The trace of a Horn-clause program as the clauses it applies. The state before each step is rebuilt
    from the initial values and the values the steps wrote (all of them, for a replayed trace); an
    abbreviated run, a step without recorded values or one that wrote an array leaves the values from there on
    unknown."""
    shared = _shared_derivations
    if shared is None:
        return _derive(cex, program)
    hit = shared.get((id(cex), id(program)))
    if hit is None:                     # the entry keeps both alive, so their ids stay theirs
        hit = shared[(id(cex), id(program))] = (cex, program, _derive(cex, program))
    return hit[2]


def _derive(cex: Counterexample, program: Program) -> list[Derived | None]:
    ev = Evaluator("math")
    state = dict(cex.initial)
    known = not getattr(cex, "omitted", 0)
    out: list[Derived | None] = []
    for st in cex.steps:
        clause = program.clauses.get(st.edge)
        # a whole array is recorded as `<array>`, a cell as `a[i]`: the state cannot be rebuilt from there on
        known = known and (bool(st.values) or not st.edge.writes()) and \
            not any(isinstance(v, str) or "[" in n for n, v in st.values.items())
        if clause is None:
            out.append(None)
            continue
        args = variables = None
        if known:
            havocked = {v.name for s in st.edge.stmts if isinstance(s, Havoc) for v in s.vars}
            env = {**state, **{n: v for n, v in st.values.items() if n in havocked}}
            try:
                args = [ev.eval(e, env) for e in clause.head_args]
                variables = [(n, ev.eval(e, env)) for n, e in clause.variables]
            except (KeyError, UndefinedBehavior, ZeroDivisionError):
                args = variables = None
            state.update(st.values)
        out.append(Derived(clause, args, variables))
    return out


def _is_chc(program: Program | None) -> bool:
    return program is not None and bool(program.clauses)


def _overflow_check(cex: Counterexample, names: dict[str, str]) -> tuple[str, dict[str, Any]] | None:
    """For a trace ending at a failed overflow check: the check as C text and the values of the variables it
    reads there (rebuilt from the initial values and what every step wrote; none for an abbreviated run)."""
    a = cex.failed_check(NO_OVERFLOW)
    if a is None:
        return None
    operands: dict[str, Any] = {}
    if not getattr(cex, "omitted", 0):
        state = dict(cex.initial)
        for st in cex.steps:
            state.update(st.values)
        for v in sorted(free_vars(a.cond), key=lambda v: v.name):
            if v.name in state and not isinstance(state[v.name], ArrayValue):
                operands[names.get(v.name, v.name)] = state[v.name]
    return stmt_text(a, names), operands


def _edge_texts(cex: Counterexample, names: dict[str, str]) -> list[list[str]]:
    """Each step's statements as text, each edge's made once: a run through a loop of a thousand iterations
    takes the same few edges thousands of times (rendering them took 0.4 s of a 2-s run)."""
    made: dict[int, list[str]] = {}
    out = []
    for st in cex.steps:
        texts = made.get(id(st.edge))
        if texts is None:
            texts = made[id(st.edge)] = [t for t in (stmt_text(s, names) for s in st.edge.stmts) if t]
        out.append(texts)
    return out


def counterexample_json(cex: Counterexample, program: Program | None) -> dict[str, Any]:
    names = _names(program)
    if _is_chc(program):
        steps = []
        for st, d in zip(cex.steps, derivation(cex, program)):
            step: dict[str, Any] = {"location": str(st.src) if st.src else None, "edge": [st.edge.src, st.edge.dst]}
            if d is not None:
                step.update({"clause": d.clause.number, "derived": d.fact, "statements": [d.clause.text],
                             "values": {n: value_json(v) for n, v in d.variables or ()}})
            steps.append(step)
    else:
        steps = [{"location": str(st.src) if st.src else None, "edge": [st.edge.src, st.edge.dst],
                  "statements": texts, "values": value_json(_unique_keys(_shown_values(st.values, names)))}
                 for st, texts in zip(cex.steps, _edge_texts(cex, names))]
    return {
        "validated": cex.validated,
        "violated_at": str(cex.violated_at) if cex.violated_at else None,
        "inputs": [value_json(v) for v in cex.inputs],
        "named_inputs": [{"name": i.name, "call": i.call, "value": value_json(i.value), "location": i.where}
                         for i in _named_inputs(cex, program) if i.name or i.call],
        # a Horn-clause derivation starts from facts: the slots' initial values mean nothing there
        "initial": {} if _is_chc(program) else value_json(cex.initial),
        # an abbreviated run (evidence.deep): `steps` are its first and last edges, `omitted` ran in between
        "length": getattr(cex, "length", 0) or len(cex.steps),
        "omitted": getattr(cex, "omitted", 0),
        "omitted_at": getattr(cex, "omitted_at", None),
        "compiled_run": getattr(cex, "native", False),
        "steps": steps,
        **({"overflow": {"check": overflow[0], "operands": value_json(overflow[1])}}
           if (overflow := _overflow_check(cex, names)) is not None else {}),
    }


def _derivation_lines(cex: Counterexample, program: Program, head: str) -> list[str]:
    """A Horn-clause counterexample: the clauses applied, by their position in the file, each with the fact it
    derives and its variables' values under their names in the file."""
    derived = derivation(cex, program)
    last = next((d for d in reversed(derived) if d is not None), None)
    if last is not None and last.clause.head is None:
        file = Path(program.source_file).name if program.source_file else None
        at = f" ({file}:{last.clause.line})" if file and last.clause.line else ""
        head += f": false is derived by clause {last.clause.number}{at}"
    width = max((len(d.fact) for d in derived if d is not None), default=0)
    rows: list = [(d.where, f"{d.fact:<{width}}", ", ".join(f"{n} = {_smt_value(v)}" for n, v in d.variables or ()))
                  if d is not None else None for d in derived]
    omitted = getattr(cex, "omitted", 0)
    if omitted:
        rows.insert(cex.omitted_at, ("...", f"{omitted} clause applications here are not shown", ""))
    return [head, "  derivation (clause, the fact it derives, with the values of the clause's variables):"] + \
        _table([r for r in rows if r is not None], "with")


def _table(rows: list[tuple[str, str, str]], sep: str) -> list[str]:
    """Trace rows (where, what, values) aligned, the middle of a very long trace left out."""
    width = max((len(r[0]) for r in rows), default=0)
    body = [f"    {where:<{width}}  {text}" + (f"   {sep} {vals}" if vals else "") for where, text, vals in rows]
    if len(body) > MAX_TRACE_LINES:
        cut = len(body) - MAX_TRACE_LINES
        body = body[: MAX_TRACE_LINES // 2] + [f"    ... {cut} steps omitted (see --json) ..."] + \
            body[-MAX_TRACE_LINES // 2:]
    return body


def counterexample_lines(cex: Counterexample, program: Program | None) -> list[str]:
    names = _names(program)
    how = "by a compiled run" if getattr(cex, "native", False) else \
        "by running the program" if getattr(cex, "omitted", 0) else "by replay"
    head = "counterexample" + (f" (validated {how})" if cex.validated else " (NOT validated)")
    if _is_chc(program):
        return _derivation_lines(cex, program, head)
    overflow = _overflow_check(cex, names)
    if overflow is not None:
        check, operands = overflow
        head += f": a signed overflow at {cex.violated_at}: {check} fails" + \
            (" with " + ", ".join(f"{n} = {value_text(v)}" for n, v in operands.items()) if operands else "")
    elif cex.violated_at is not None:
        violated = _violated_property(cex)
        tag = cex.violated.prop if isinstance(cex.violated, Assert) else None
        what = f"the run leaves the model: {UNMODELLED[tag]}" if tag in UNMODELLED else \
            "reach_error() is reached" if violated in (None, UNREACH_CALL) else f"{violated} is violated"
        head += f": {what} at {cex.violated_at}"
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
    rows = [(f"{Path(st.src.file).name}:{st.src.line}" if st.src else "-", "; ".join(texts),
             ", ".join(f"{k} = {value_text(v)}" for k, v in _shown_values(st.values, names)))
            if st.edge.stmts else None for st, texts in zip(cex.steps, _edge_texts(cex, names))]
    omitted = getattr(cex, "omitted", 0)
    if omitted:
        rows.insert(cex.omitted_at, ("...", f"{omitted} edges executed here are not shown", ""))
    rows = [r for r in rows if r is not None]
    return lines + _table(rows, "=>")


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
                 stats: dict[str, Any], chc: bool = False) -> dict[str, Any]:
    """The `verify --json` object. `job` holds the keys file, task, property, data_model and expected; `chc`
    says the input is a Horn-clause file, which has a CHC-COMP answer."""
    return {
        "status": verdict.status.value,
        "result": svcomp_result(verdict, job.get("property")),
        "chc_answer": chc_answer(verdict) if chc else None,
        "matches_expected": matches_expected(verdict, job.get("expected")),
        "engine": verdict.engine,
        "reason": verdict.reason,
        "time": round(elapsed, 3),
        **job,
        "encoding": stats.get("encoding"),          # integer or bit-vector, and why when chosen automatically
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
        # a FALSE's inputs run on the gcc-compiled original program (witness/harness.py)
        "harness": stats.get("harness"),
        "stats": value_json({k: v for k, v in stats.items() if k != "harness"}),
        # an UNKNOWN's counterexample that did not replay on the program: shown, never a FALSE
        **({"unconfirmed_counterexample": counterexample_json(verdict.evidence, program)}
           if verdict.status == Status.UNKNOWN and isinstance(verdict.evidence, Counterexample)
           and not isinstance(verdict.evidence, LeapingCounterexample) else {}),
        # a counterexample of the loop-summarized program that did not replay: over its steps
        **({"leaping_counterexample": counterexample_json(verdict.evidence, verdict.evidence.program)}
           if verdict.status == Status.UNKNOWN and isinstance(verdict.evidence, LeapingCounterexample) else {}),
        # the portfolio's bug reports: evidence that failed its own check, engines that disagree
        **({"bugs": value_json(stats["bugs"])} if stats.get("bugs") else {}),
    }


def verdict_text(verdict: Verdict, program: Program | None, elapsed: float, prop: str | None,
                 expected: bool | None, chc: bool = False) -> list[str]:
    """The text report: the result line (SV-COMP's result string, or CHC-COMP's answer for a Horn-clause
    file, so that the first line is what each competition's scripts read), engine, reason, time, property, and
    a counterexample if any."""
    lines = [chc_answer(verdict) if chc else svcomp_result(verdict, prop),
             f"  engine:   {verdict.engine}",
             f"  reason:   {verdict.reason}",
             f"  time:     {elapsed:.2f} s"]
    if prop is not None:
        shown = (CHC_ANSWERS[Status.TRUE if expected else Status.FALSE] if chc else str(expected).upper())
        mark = ": the answer DIFFERS" if matches_expected(verdict, expected) is False else ""
        lines.append(f"  property: {prop}" + (f" (expected {shown}{mark})" if expected is not None else ""))
    if isinstance(verdict.evidence, LeapingCounterexample):
        lines.append("  leaping counterexample: a run of the loop-summarized program that did not replay on the "
                     "program (it may leap over loop iterations)")
        lines += counterexample_lines(verdict.evidence, verdict.evidence.program)
    elif isinstance(verdict.evidence, Counterexample):
        lines += counterexample_lines(verdict.evidence, program)
    if isinstance(verdict.evidence, NonTermination):
        lines += nontermination_lines(verdict.evidence, program)
    harness = verdict.stats.get("harness")
    if harness:
        what = "reach_error()" if prop in (None, UNREACH_CALL) else "the violation"
        shown = ("not run" if harness["reached_error"] is None else
                 f"{what} reached" if harness["reached_error"] else f"{what} NOT reached")
        lines.append(f"  harness:  compiled with gcc and run on the inputs: {shown} ({harness['detail']})")
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
