"""Command line: `looprover verify | transform | bench`.

Why the care about exit codes and errors: looprover runs inside benchmark scripts and CI, which read the exit
code and the first line of output. So user mistakes are one `error: ...` line (exit 1), usage mistakes are
argparse's message (exit 2), and a verdict, including UNKNOWN for an unsupported construct or an internal
failure, is exit 0. A Python traceback is shown only with `--debug`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from looprover.engines import ENGINES, EngineOptions, get_engine
from looprover.portfolio import accept
from looprover.errors import InputError, LooproverError, UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Havoc, Program, Stmt
from looprover.program.expr import Expr, Store, free_vars, rename
from looprover.program.emit_c import strip_parens
from looprover.program.interp import ArrayValue
from looprover.program.printer import expr_to_str
from looprover.properties import CHECK_SAT, Property, default_property, load_property
from looprover.verdict import Counterexample, Status, Verdict

EXIT_VERDICT = 0      # TRUE, FALSE or UNKNOWN was printed
EXIT_INPUT_ERROR = 1  # missing/empty/unparsable file, malformed task definition or property file
EXIT_USAGE = 2        # bad command line (argparse)
EXIT_INTERNAL = 3     # transform/bench only: an unexpected internal failure (verify answers UNKNOWN)
EXIT_INTERRUPTED = 130

DEFAULT_TIMEOUT = 60.0
DATA_MODELS = ("ILP32", "LP64")
MAX_TRACE_LINES = 400

EXIT_CODES_HELP = f"""exit codes:
  {EXIT_VERDICT}    a verdict was printed (TRUE, FALSE or UNKNOWN, including UNKNOWN for an unsupported
       construct, a timeout or an internal error)
  {EXIT_INPUT_ERROR}    input error: missing, empty or unparsable file, malformed .yml task or .prp property
       (one line 'error: ...' on stderr; with --json also {{"status": "ERROR", ...}} on stdout)
  {EXIT_USAGE}    usage error (unknown option, bad value)
  {EXIT_INTERNAL}    transform/bench only: internal error
"""


# ------------------------------------------------------------------------------------------- loading
def load_program(path: Path, data_model: str = "ILP32") -> Program:
    """Parse a C file (`.c`, `.i`) or a Horn-clause file (`.smt2`) into the IR."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file():
        raise InputError(f"{path}: not a regular file")
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if not text.strip():
        raise InputError(f"{path}: empty file")
    if path.suffix == ".smt2":
        from looprover.frontend.chc import load_chc_program
        return load_chc_program(path)
    from looprover.frontend.c import load_c_program
    return load_c_program(path, data_model=data_model)


@dataclass
class Job:
    """What `verify` checks: resolved from the command line and, for a `.yml` task, the task definition."""
    input: Path
    property: Property
    data_model: str
    expected: bool | None = None
    task: Path | None = None
    extra_inputs: int = 0       # SV-COMP tasks may list several input files; we handle one


def resolve_job(file: str, property_spec: str | None, data_model: str | None) -> Job:
    from looprover.bench.tasks import choose_property, read_task_definition

    path = Path(file)
    if path.suffix in (".yml", ".yaml"):
        task = read_task_definition(path)
        if property_spec is not None:
            prop = load_property(property_spec)
            expected = next((tp.expected for tp in task.properties if _same_property(tp.property_file, prop)),
                            None)
        else:
            prop, expected = choose_property(task)
        return Job(task.input_files[0], prop, data_model or task.data_model or "ILP32", expected, path,
                   len(task.input_files) - 1)
    if property_spec is not None:
        prop = load_property(property_spec)
    else:
        prop = Property(CHECK_SAT) if path.suffix == ".smt2" else default_property()
    return Job(path, prop, data_model or "ILP32")


def _same_property(prp: Path, prop: Property) -> bool:
    try:
        return load_property(prp).name == prop.name
    except InputError:
        return False


def verify_job(job: Job, engine: str, timeout: float, bitvector: bool,
               progress: Callable[[str], None] | None, start: float) -> tuple[Verdict, Program | None]:
    """Load, check that the property applies, run the engine, and vet the evidence. Returns the verdict and
    the program (None if it could not be built), whose C names the counterexample trace uses."""
    report = progress or (lambda msg: None)
    report(f"loading {job.input} ({job.data_model})")
    try:
        program = load_program(job.input, job.data_model)
    except UnsupportedError as exc:
        return Verdict.unknown("frontend", str(exc)), None
    report(f"program {program.name}: {program.num_locs} locations, {len(program.edges)} edges, "
           f"{len(program.variables)} variables")
    why = job.property.unsupported_reason()
    if why is None and job.extra_inputs:
        why = f"unsupported: task with {job.extra_inputs + 1} input files"
    is_chc = job.input.suffix == ".smt2"
    if why is None and is_chc != (job.property.name == CHECK_SAT):
        why = (f"unsupported property: {job.property.name} for "
               f"{'Horn clauses (use check-sat)' if is_chc else 'C programs'}")
    if why is not None:
        return Verdict.unknown("none", why), program
    remaining = max(timeout - (time.monotonic() - start), 0.1)
    options = EngineOptions(timeout=remaining, bitvector=bitvector, progress=progress)
    report(f"running {engine} (timeout {remaining:.1f} s)")
    try:
        verdict = get_engine(engine)(program, options)
    except UnsupportedError as exc:
        return Verdict.unknown(engine, str(exc)), program
    return accept(verdict), program


# --------------------------------------------------------------------------------------- rendering
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


# ------------------------------------------------------------------------------------------ commands
class _Progress:
    """`--verbose`: timestamped status lines on stderr (rich), fed by `EngineOptions.progress`."""

    def __init__(self, start: float):
        from rich.console import Console
        self.console = Console(stderr=True, highlight=False)
        self.start = start

    def __call__(self, msg: str) -> None:
        from rich.markup import escape
        self.console.print(f"[dim]\\[{time.monotonic() - self.start:7.2f}s][/dim] {escape(msg)}", markup=True,
                           highlight=False, soft_wrap=True)


def _error(msg: str, as_json: bool, **extra) -> int:
    print(f"error: {msg}", file=sys.stderr)
    if as_json:
        print(json.dumps({"status": "ERROR", "error": msg, **extra}))
    return EXIT_INPUT_ERROR


def _set_memory_limit(mb: int | None) -> None:
    """Cap this process's address space (inherited by portfolio children): a memout is an UNKNOWN, not a
    machine that swaps."""
    if not mb:
        return
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def cmd_verify(args: argparse.Namespace) -> int:
    start = time.monotonic()
    progress = _Progress(start) if args.verbose else None
    job: Job | None = None
    program: Program | None = None
    try:
        _set_memory_limit(args.memory)
        job = resolve_job(args.file, args.property, args.data_model)
        verdict, program = verify_job(job, args.engine, args.timeout, args.bitvector, progress, start)
    except InputError as exc:
        return _error(str(exc), args.json, file=args.file)
    except MemoryError:
        verdict = Verdict.unknown(args.engine, "out of memory")
    except LooproverError as exc:
        verdict = Verdict.unknown(args.engine, str(exc))
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        verdict = Verdict.unknown(args.engine, f"internal error: {type(exc).__name__}: {exc}")
    elapsed = time.monotonic() - start
    # tracebacks of internal errors in engines (the portfolio collects its children's) are for --debug only
    stats = dict(verdict.stats)
    tracebacks = [stats.pop("traceback")] if "traceback" in stats else []
    if isinstance(stats.get("portfolio"), dict):
        stats["portfolio"] = {n: dict(e) for n, e in stats["portfolio"].items()}
        tracebacks += [e.pop("traceback") for e in stats["portfolio"].values() if "traceback" in e]
    if args.debug:
        for tb in tracebacks:
            print(tb, file=sys.stderr)
    out = {
        "status": verdict.status.value,
        "engine": verdict.engine,
        "reason": verdict.reason,
        "time": round(elapsed, 3),
        "file": str(job.input) if job else args.file,
        "task": str(job.task) if job and job.task else None,
        "property": job.property.name if job else None,
        "data_model": job.data_model if job else None,
        "expected": job.expected if job else None,
        "counterexample": (counterexample_json(verdict.evidence, program)
                           if isinstance(verdict.evidence, Counterexample) else None),
        # the checked safety evidence of a TRUE (invariants, transition invariants), as the engine reports it
        "proof": (value_json(verdict.evidence) if verdict.status == Status.TRUE and verdict.evidence is not None
                  else None),
        "stats": value_json(stats),
    }
    if args.json:
        print(json.dumps(out))
        return EXIT_VERDICT
    print(out["status"])
    print(f"  engine:   {verdict.engine}")
    print(f"  reason:   {verdict.reason}")
    print(f"  time:     {elapsed:.2f} s")
    if job is not None:
        print(f"  property: {job.property.name}" + (f" (expected {str(job.expected).upper()})"
                                                    if job.expected is not None else ""))
    if isinstance(verdict.evidence, Counterexample):
        for line in counterexample_lines(verdict.evidence, program):
            print(line)
    return EXIT_VERDICT


def _transforms() -> dict[str, Callable[[Program], Program]]:
    """Available program transformations; `none` is the identity. The transforms package may register
    more in a `TRANSFORMS` dict (name -> function)."""
    known: dict[str, Callable[[Program], Program]] = {"none": lambda p: p}
    mod = importlib.import_module("looprover.transforms")
    known.update(getattr(mod, "TRANSFORMS", {}) or {})
    return known


def cmd_transform(args: argparse.Namespace) -> int:
    from looprover.program.emit_c import emit_c

    techniques = _transforms()
    if args.technique not in techniques:
        print(f"looprover transform: error: unknown technique {args.technique!r} "
              f"(known: {', '.join(sorted(techniques))})", file=sys.stderr)
        return EXIT_USAGE
    try:
        path, data_model = Path(args.file), args.data_model
        if path.suffix in (".yml", ".yaml"):      # only the input file and data model matter here
            from looprover.bench.tasks import read_task_definition
            task = read_task_definition(path)
            path, data_model = task.input_files[0], data_model or task.data_model
        program = techniques[args.technique](load_program(path, data_model or "ILP32"))
        code = emit_c(program)
    except InputError as exc:
        return _error(str(exc), False)
    except UnsupportedError as exc:
        return _error(str(exc), False)
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    if args.output:
        Path(args.output).write_text(code)
    else:
        sys.stdout.write(code)
    return EXIT_VERDICT


def cmd_bench(args: argparse.Namespace) -> int:
    from looprover.bench.runner import run_bench_command
    try:
        return run_bench_command(args)
    except InputError as exc:
        return _error(str(exc), False)
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


# -------------------------------------------------------------------------------------------- parser
def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def _engine_list(text: str) -> list[str]:
    """`bench --engine`: one name or a comma-separated list of engines and reference solvers."""
    from looprover.bench.reference import REFERENCE_SOLVERS
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    known = sorted(ENGINES) + sorted(REFERENCE_SOLVERS)
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown engine {', '.join(bad) or repr(text)} "
                                         f"(known: {', '.join(known)})")
    return names


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    common.add_argument("-v", "--verbose", action="store_true", help="progress lines on stderr")

    parser = argparse.ArgumentParser(
        prog="looprover", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A verifier for C programs (SV-COMP conventions) whose edge is loops.",
        epilog=EXIT_CODES_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    v = sub.add_parser("verify", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="verify a C program, Horn-clause file or SV-COMP task (.yml)",
                       description="Prints TRUE (the property holds), FALSE (a validated counterexample "
                                   "follows) or UNKNOWN (with the reason), plus the engine and the time.",
                       epilog=EXIT_CODES_HELP)
    v.add_argument("file", metavar="FILE", help="a .c/.i program, a .smt2 Horn-clause file or a .yml task")
    v.add_argument("--property", metavar="PRP",
                   help="an SV-COMP .prp file or a property name (default: unreach-call; for .yml tasks the "
                        "task's property; for .smt2 check-sat)")
    v.add_argument("--engine", default="portfolio", choices=sorted(ENGINES), help="default: portfolio")
    v.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"wall-clock seconds for the whole run (default {DEFAULT_TIMEOUT:g})")
    v.add_argument("--bitvector", action="store_true",
                   help="bit-precise encoding (default: integers with explicit wrap-around)")
    v.add_argument("--data-model", choices=DATA_MODELS, default=None,
                   help="C data model (default: the task's, else ILP32)")
    v.add_argument("--memory", type=_positive_int, metavar="MB", default=None,
                   help="limit the address space of each looprover process (RLIMIT_AS)")
    v.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    v.set_defaults(func=cmd_verify)

    t = sub.add_parser("transform", parents=[common], help="print the program (after a transformation) as C")
    t.add_argument("file", metavar="FILE")
    t.add_argument("--technique", default="none", metavar="NAME",
                   help="the transformation to apply (default: none = the IR as the front-end built it)")
    t.add_argument("--data-model", choices=DATA_MODELS, default=None)
    t.add_argument("-o", "--output", metavar="FILE", help="write the C here instead of stdout")
    t.set_defaults(func=cmd_transform)

    b = sub.add_parser("bench", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="run a benchmark directory of tasks in parallel and score the results",
                       description="Runs every (task, property) pair with an expected verdict below DIR "
                                   "(SV-COMP .yml tasks; CHC directories with expected.csv), each in its own "
                                   "process with a wall-clock and memory limit, then prints SV-COMP scores.")
    b.add_argument("dir", metavar="DIR")
    b.add_argument("--jobs", type=_positive_int, default=2, metavar="N", help="parallel runs (default 2)")
    b.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds per task (default {DEFAULT_TIMEOUT:g})")
    b.add_argument("--memory", type=_positive_int, default=4096, metavar="MB",
                   help="address-space limit per task process (default 4096)")
    b.add_argument("--engine", type=_engine_list, default="portfolio", metavar="E[,E...]",
                   help="engine, or a comma-separated list run side by side; besides our engines (default "
                        "portfolio) the reference solvers z3-spacer and z3-spacer-global (z3's Spacer)")
    b.add_argument("--bitvector", action="store_true")
    b.add_argument("--output", metavar="CSV", help="results CSV (default: bench-results/<dir>-<time>.csv)")
    b.add_argument("--filter", metavar="SUBSTR", help="only tasks whose id contains SUBSTR")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    b.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:   # `looprover transform x.c | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_VERDICT


if __name__ == "__main__":
    sys.exit(main())
