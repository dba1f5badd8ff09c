"""Command line: `looprover verify | check | validate | engines | transform | bench`: arguments, commands, exit
codes.

Why the care about exit codes and errors: looprover runs inside benchmark scripts and CI, which read the exit
code and the first line of output. So user mistakes are one `error: ...` line (exit 1), usage mistakes are
argparse's message (exit 2), and a verdict, including UNKNOWN for an unsupported construct or an internal
failure, is exit 0. A Python traceback is shown only with `--debug`. Ctrl-C exits 130 and SIGTERM 143, both
after stopping every process the command started.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import NoReturn, Sequence

from looprover.argtypes import engine_option, positive_float, positive_int
from looprover.deadline import Deadline, OutOfTime
from looprover.engines import engine_names, get_engine, settings_map
from looprover.errors import InputError, UnsupportedError
from looprover.jobs import JobOptions, limit_memory, load_job_program, resolve_job, run_job_limited
from looprover.processes import out_of_memory_reason
from looprover.report import print_error

EXIT_VERDICT = 0      # a verdict was printed (TRUE, FALSE(p), UNKNOWN; sat, unsat, unknown)
EXIT_INPUT_ERROR = 1  # missing/empty/unparsable file, malformed task definition or property file
EXIT_USAGE = 2        # bad command line (argparse)
EXIT_INTERNAL = 3     # transform/bench only: an unexpected internal failure (verify answers UNKNOWN)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143   # SIGTERM (kill, timeout(1), a batch system)

DEFAULT_TIMEOUT = 60.0
DATA_MODELS = ("ILP32", "LP64")

EXIT_CODES_HELP = f"""exit codes:
  {EXIT_VERDICT}    a verdict was printed (TRUE, FALSE(...) or UNKNOWN; sat, unsat or unknown for .smt2),
       including UNKNOWN for an unsupported construct, a timeout, memory or an internal error
  {EXIT_INPUT_ERROR}    input error: missing, empty or unparsable file, malformed .yml task or .prp property
       (one line 'error: ...' on stderr; with --json also {{"status": "ERROR", ...}} on stdout)
  {EXIT_USAGE}    usage error (unknown option, bad value)
  {EXIT_INTERNAL}    transform/bench only: internal error
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C, SIGINT)
  {EXIT_TERMINATED}  terminated (SIGTERM)
       after either, no looprover process (engine, bench run) is left running
"""


# ------------------------------------------------------------------------------------------ commands
class _Progress:
    """`--verbose`: timestamped status lines on stderr (rich), fed by `Run.progress`."""

    def __init__(self, start: float):
        from rich.console import Console
        self.console = Console(stderr=True, highlight=False)
        self.start = start

    def __call__(self, msg: str) -> None:
        from rich.markup import escape
        self.console.print(f"[dim]\\[{time.monotonic() - self.start:7.2f}s][/dim] {escape(msg)}", markup=True,
                           highlight=False, soft_wrap=True)


def _error(msg: str, as_json: bool, **extra) -> int:
    print_error(msg, as_json, **extra)
    return EXIT_INPUT_ERROR


def _internal_error(exc: Exception, debug: bool) -> int:
    """`transform`/`bench` only (`verify` answers UNKNOWN): one line, the traceback only with --debug."""
    if debug:
        traceback.print_exc()
    print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return EXIT_INTERNAL


def cmd_verify(args: argparse.Namespace) -> int:
    start = time.monotonic()
    deadline = Deadline(start + args.timeout)
    progress = _Progress(start) if args.verbose else None
    try:
        job = resolve_job(args.file, args.property, args.data_model, tuple(args.cpp_flags),
                          args.undefined_functions == "nondet", args.allocation == "may-fail")
    except InputError as exc:
        return _error(str(exc), args.json, file=args.file[0])
    if args.chc_comp and not job.is_chc:
        print(f"looprover verify: error: --chc-comp needs a Horn-clause (.smt2) input, not {job.input.name}",
              file=sys.stderr)
        return EXIT_USAGE
    encoding = True if args.bitvector else False if args.integer else None
    options = JobOptions(args.engine, encoding, args.settings, progress, args.memory, witness=bool(args.witness))
    outcome = run_job_limited(job, options, start, deadline)
    if outcome.error is not None:
        return _error(outcome.error, args.json, file=args.file[0])
    if args.debug:
        for tb in outcome.tracebacks:
            print(tb, file=sys.stderr)
    if args.witness:
        _write_witness(args.witness, outcome)
    if args.json:
        print(json.dumps(outcome.json))
    else:
        print("\n".join(outcome.text[:1] if args.chc_comp else outcome.text))
    return EXIT_VERDICT


def cmd_check(args: argparse.Namespace) -> int:
    """`check FILE...`: every run-time check of a C program, one verdict each (`runtime_checks.py`); a line per
    check as it is settled, then the totals (or one JSON object), and with `--sarif` a SARIF 2.1.0 log."""
    from looprover.runtime_checks import (
        UNKNOWN, CheckResult, at_places, checked_program_within, checks_of, compiled_check, of_kinds, refusal_lines,
        run_checks, summary, table,
    )
    from looprover.sarif import sarif_log
    start = time.monotonic()
    deadline = Deadline(start + args.timeout)
    progress = _Progress(start) if args.verbose else None
    try:
        job = resolve_job(args.file, None, args.data_model, tuple(args.cpp_flags), args.undefined_functions == "nondet",
                          args.allocation == "may-fail")
        if job.is_chc:
            raise InputError(f"{job.input}: `check` verifies the run-time checks of C programs, not Horn clauses")
        no_room = limit_memory(job, args.engine, args.memory)
        if no_room is not None:
            raise MemoryError(no_room)
        program = checked_program_within(job, deadline)
        if args.kinds:
            program = of_kinds(program, args.kinds)
    except InputError as exc:
        return _error(str(exc), args.json, file=args.file[0])
    except (UnsupportedError, OutOfTime, MemoryError) as exc:
        # nothing can be checked in a program the front-end cannot build: UNKNOWN for the file, with the reason
        why = str(exc) if isinstance(exc, UnsupportedError) else \
            (str(exc) or out_of_memory_reason("while building the program")) if isinstance(exc, MemoryError) else \
            f"timeout while building the program (not built within {args.timeout:g} s)"
        if args.sarif:
            _write_json(args.sarif, sarif_log([], f"UNKNOWN: {why}"))
        print(json.dumps({"file": args.file[0], "status": "UNKNOWN", "reason": why, "checks": []})
              if args.json else f"UNKNOWN\n  reason:   {why}")
        return EXIT_VERDICT
    checks = checks_of(program)
    if progress is not None:
        progress(f"front-end: {len(checks)} checks, {len(program.edges)} edges, "
                 f"{sum(len(e.stmts) for e in program.edges)} statements; refused calls: {len(program.refusals)}")
    if args.at:
        checks = at_places(checks, args.at)
    base = Path(args.file[0])
    refused = refusal_lines(program)
    if not args.json:
        files = args.file[0] + (f" and {len(args.file) - 1} more file{'s' if len(args.file) > 2 else ''}"
                                if len(args.file) > 1 else "")
        print(f"{len(checks)} checks in {files} (at most {args.check_timeout:g} s each, "
              f"{args.timeout:g} s in all)", flush=True)
        for line in refused:
            print(f"warning: {line}", flush=True)
    options = JobOptions(args.engine, None, args.settings, progress)
    settled: dict[str, CheckResult] = {}

    def done(r: CheckResult) -> None:
        settled[r.check.id] = r
        if not args.json:
            print(table([r], base)[0], flush=True)
    try:
        results = run_checks(program, checks, job.data_model, options, deadline, args.check_timeout, done=done,
                             slicing=args.slice, interval_pass=args.intervals,
                             harness=lambda check, cex: compiled_check(check, cex, [job.input, *job.more_inputs],
                                                                       job.data_model, deadline, checks,
                                                                       job.cpp_flags, program))
    except MemoryError:
        # what is settled stands; the others are unknown (the memory the failed step held is free again here)
        why = out_of_memory_reason("before this check was settled")
        results = [settled.get(c.id) or CheckResult(c, UNKNOWN, why) for c in checks]
        for r in results:
            if r.check.id not in settled:
                done(r)
    if args.sarif:
        _write_json(args.sarif, sarif_log(results, warnings=refused))
    if args.json:
        print(json.dumps({"file": args.file[0], "checks": [r.to_json() for r in results],
                          "refused": refused, "summary": summary(results),
                          "time": round(time.monotonic() - start, 3)}))
    else:
        print(table(results)[-1] + f" ({time.monotonic() - start:.1f} s)")
    return EXIT_VERDICT


def _write_json(path: str, data) -> None:
    try:
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
    except OSError as exc:
        print(f"error: cannot write {path}: {exc.strerror}", file=sys.stderr)


def _write_witness(path: str, outcome) -> None:
    """`verify --witness FILE`: write the job's witness there (or say why there is none) and report it in the
    output (`witness` in --json, a `witness:` line in text)."""
    w = outcome.witness
    info = {"file": None, "kind": None, "note": "no witness: the run was stopped before it could write one"}
    if w is not None:
        info = {"file": None, "kind": w.kind, "note": w.note}
        if w.text is not None:
            try:
                Path(path).write_text(w.text)
                info["file"] = path
            except OSError as exc:
                info["note"] = f"no witness: cannot write {path}: {exc.strerror}"
    if outcome.json is not None:
        outcome.json["witness"] = info
    line = f"written to {path} ({info['note']})" if info["file"] else info["note"]
    outcome.text.append(f"  witness:  {line}")


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    """`validate --witness W FILE`: confirmed / rejected: reason / unknown: reason (exit 0). For a Horn-clause
    file the witness is a model or a derivation (`witness/chc.py`)."""
    from looprover.witness.validate import Validation, validate
    deadline = Deadline(time.monotonic() + args.timeout)
    try:
        job = resolve_job(args.file, args.property, args.data_model, (),
                          args.undefined_functions == "nondet", args.allocation == "may-fail")
        if job.is_chc:
            from looprover.witness.chc import check_witness_by
            result = check_witness_by(_read_text(args.witness), Path(job.input), deadline)
        else:
            result = validate(Path(args.witness), job, args.data_model or (job.data_model if job.task else None),
                              deadline, property_given=args.property is not None)
    except InputError as exc:
        return _error(str(exc), args.json, file=args.file)
    except UnsupportedError as exc:
        result = Validation("unknown", str(exc))
    except Exception as exc:  # noqa: BLE001 -- a verdict on the witness, never a traceback
        if args.debug:
            traceback.print_exc()
        result = Validation("unknown", f"internal error: {type(exc).__name__}: {exc}")
    print(json.dumps(result.to_json()) if args.json else result.line())
    return EXIT_VERDICT


def cmd_engines(args: argparse.Namespace) -> int:
    """List the engines, what each accepts, and its options."""
    from looprover.engines.base import user_fields
    for name in engine_names():
        e = get_engine(name)
        print(f"{name}: {e.summary}")
        print(f"    input: {', '.join(sorted(e.languages))}; properties: {', '.join(sorted(e.properties))}; "
              f"verdicts: {', '.join(sorted(v.value for v in e.verdicts))}; "
              f"--bitvector: {'yes' if e.bitvector else 'no'}")
        for f in user_fields(e.Settings):
            default = f.default
            if isinstance(default, tuple):
                default = "+".join(map(str, default))
            elif isinstance(default, bool):
                default = "on" if default else "off"
            print(f"    --option {name}.{f.name}={default}   {f.metadata['help']}")
    return EXIT_VERDICT


def cmd_transform(args: argparse.Namespace) -> int:
    from looprover.program.emit_c import emit_c
    from looprover.transforms import TRANSFORMS, get_transform

    if args.technique not in TRANSFORMS:
        print(f"looprover transform: error: unknown technique {args.technique!r} "
              f"(known: {', '.join(sorted(TRANSFORMS))})", file=sys.stderr)
        return EXIT_USAGE
    try:
        job = resolve_job(args.file, args.property, args.data_model, tuple(args.cpp_flags),
                          args.undefined_functions == "nondet", args.allocation == "may-fail")
        result = get_transform(args.technique).apply(load_job_program(job))
        code = emit_c(result.program)
    except (InputError, UnsupportedError) as exc:
        return _error(str(exc), False)
    except Exception as exc:
        return _internal_error(exc, args.debug)
    if args.output:
        Path(args.output).write_text(code)
    else:
        sys.stdout.write(code)
    return EXIT_VERDICT


def cmd_bench(args: argparse.Namespace) -> int:
    from looprover.bench.runner import run_bench_command
    try:
        if args.compare:
            from looprover.bench.compare import compare
            a, b = Path(args.compare[0]), Path(args.compare[1])
            timeout = args.timeout if args.timeout_given else None
            print("\n".join(compare(a, b, timeout)))
            if not args.no_plots:
                from looprover.bench.plots import compare_plots, unavailable
                why = unavailable()
                if why is not None:
                    print(f"warning: {why}", file=sys.stderr)
                else:
                    paths = compare_plots(a, b, Path(args.plots) if args.plots else b.parent, timeout)
                    print(f"plots: {', '.join(map(str, paths))}")
            return EXIT_VERDICT
        if args.dir is None:
            print("looprover bench: error: DIR is required (or --compare A.csv B.csv)", file=sys.stderr)
            return EXIT_USAGE
        return run_bench_command(args)
    except InputError as exc:
        return _error(str(exc), False)
    except Exception as exc:
        return _internal_error(exc, args.debug)


# -------------------------------------------------------------------------------------------- parser
def _engine_list(text: str) -> list[str]:
    """`bench --engine`: one name or a comma-separated list of engines and reference solvers."""
    from looprover.bench.reference import REFERENCE_NAMES
    from looprover.bench.runner import split_variant
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    known = engine_names() + REFERENCE_NAMES
    bad = [n for n in names if split_variant(n)[0] not in known]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown engine {', '.join(bad) or repr(text)} "
                                         f"(known: {', '.join(known)})")
    for n in names:               # a variant's settings are checked like --option
        engine, variant = split_variant(n)
        if variant:
            try:
                settings_map({engine: dict(engine_option(o)[1:] for o in variant)})
            except (ValueError, argparse.ArgumentTypeError) as exc:
                raise argparse.ArgumentTypeError(f"engine variant {n!r}: {exc}") from None
    return names


def _place(text: str) -> tuple[str, int]:
    """`check --at FILE:LINE`."""
    file, _, line = text.rpartition(":")
    if not file or not line.isdigit() or int(line) < 1:
        raise argparse.ArgumentTypeError(f"expected FILE:LINE, got {text!r}")
    return file, int(line)


def _check_kinds(text: str) -> frozenset[str]:
    """`check --kinds`: a comma-separated list of kinds of checks (`runtime_checks.KINDS`)."""
    from looprover.runtime_checks import KINDS
    known = [k for k, _ in KINDS.values()]
    kinds = frozenset(k.strip() for k in text.split(",") if k.strip())
    if not kinds or kinds - set(known):
        raise argparse.ArgumentTypeError(f"unknown kind {', '.join(sorted(kinds - set(known))) or repr(text)} "
                                         f"(known: {', '.join(known)})")
    return kinds


def _techniques() -> list[str]:
    from looprover.transforms import TRANSFORMS
    return sorted(TRANSFORMS)


_TECHNIQUES = "techniques:"     # transform's epilog, filled in only when the help is shown


def techniques_help() -> str:
    """Each technique `transform --technique` accepts, with its summary (importing them costs a tenth of a
    second, which only `transform --help` pays)."""
    from looprover.transforms import get_transform
    names = _techniques()
    width = max(map(len, names))
    return "techniques:\n" + "\n".join(f"  {n:<{width}}  {get_transform(n).summary}" for n in names)


class _TransformHelp(argparse.RawDescriptionHelpFormatter):
    def add_text(self, text):
        super().add_text(techniques_help() if text is _TECHNIQUES else text)


def version_text() -> str:
    """`--version`: looprover's version and its solvers', from the installed packages' metadata (what a bug
    report needs)."""
    from importlib.metadata import PackageNotFoundError, version

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"
    return f"looprover {of('looprover')} (z3-solver {of('z3-solver')}, libclang {of('libclang')})"


class _Version(argparse.Action):
    """`--version`, looked up only when asked for (package metadata is not free to read on every run)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def _preprocessor_args(p: argparse.ArgumentParser) -> None:
    """-D and -I, kept in their command-line order in `cpp_flags` as gcc takes them (the harness is compiled
    with the same ones). A directory is made absolute: the compiled harness runs gcc elsewhere."""
    p.add_argument("-D", dest="cpp_flags", action="append", default=[], metavar="NAME[=VALUE]",
                   type=lambda d: f"-D{d}", help="a preprocessor definition for C input files (repeatable)")
    p.add_argument("-I", dest="cpp_flags", action="append", metavar="DIR",
                   type=lambda d: f"-I{Path(d).resolve()}",
                   help="a directory to search for #include files (repeatable)")


def _input_args(p: argparse.ArgumentParser, property_help: str) -> None:
    """FILE..., -D, -I and --property: what `verify` and `transform` build the program from."""
    p.add_argument("file", metavar="FILE", nargs="+",
                   help="a .c/.i program (several C files are linked into one program), a .smt2 Horn-clause "
                        "file or a .yml task")
    _preprocessor_args(p)
    p.add_argument("--property", metavar="PRP", help=property_help)
    _c_model_args(p)


def _c_model_args(p: argparse.ArgumentParser) -> None:
    """`--undefined-functions` (how `verify`, `check`, `transform` and `validate` read calls of undefined functions;
    a witness written under `nondet` is checked under it) and `--allocation`."""
    p.add_argument("--undefined-functions", choices=("unknown", "nondet"), default="unknown",
                   help="a call of a C function with neither a body nor a model: UNKNOWN naming it (default), or "
                        "nondet: its result and every global and address-taken object take any value (a TRUE "
                        "stays sound; a FALSE says it rests on that assumption)")
    _allocation_arg(p)


def _allocation_arg(p: argparse.ArgumentParser) -> None:
    """`--allocation`: which C library convention allocations follow (verify, check, transform, validate, bench)."""
    p.add_argument("--allocation", choices=("may-fail", "succeeds"), default="may-fail",
                   help="malloc and calloc may return NULL (may-fail: C11 and SV-COMP from 2027, the default), or "
                        "every allocation succeeds (succeeds: SV-COMP's rule before 2027)")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    common.add_argument("-v", "--verbose", action="store_true", help="progress lines on stderr")

    parser = argparse.ArgumentParser(
        prog="looprover", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A verifier for C programs (SV-COMP conventions) whose edge is loops.",
        epilog=EXIT_CODES_HELP)
    parser.add_argument("--version", action=_Version, help="print the versions of looprover, z3 and libclang")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    v = sub.add_parser("verify", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="verify a C program, Horn-clause file or SV-COMP task (.yml)",
                       description="Prints SV-COMP's result TRUE (the property holds), FALSE(unreach-call) (a "
                                   "validated counterexample follows) or UNKNOWN (with the reason), plus the engine "
                                   "and the time. For a .smt2 Horn-clause file the first line is CHC-COMP's answer "
                                   "instead: sat, unsat or unknown.",
                       epilog=EXIT_CODES_HELP)
    _input_args(v, "an SV-COMP .prp file or a property name (default: unreach-call; for .yml tasks the task's "
                   "property; for .smt2 check-sat)")
    v.add_argument("--engine", default="portfolio", choices=engine_names(),
                   help="default: portfolio (`looprover engines` lists them)")
    v.add_argument("--option", action="append", type=engine_option, default=[], metavar="ENGINE.OPTION=VALUE",
                   help="an engine setting, e.g. tpa.seeds=off (repeatable; `looprover engines` lists them)")
    v.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"wall-clock seconds for the whole run (default {DEFAULT_TIMEOUT:g})")
    enc = v.add_mutually_exclusive_group()
    enc.add_argument("--bitvector", action="store_true",
                     help="bit-precise encoding (default: integers with explicit wrap-around, or bit-vectors "
                          "for a program with bitwise operators that integers cannot express linearly)")
    enc.add_argument("--integer", action="store_true",
                     help="integer encoding even for such programs (no automatic choice)")
    v.add_argument("--data-model", choices=DATA_MODELS, default=None,
                   help="C data model (default: the task's, else ILP32)")
    v.add_argument("--memory", type=positive_int, metavar="MB", default=None,
                   help="limit the address space of each looprover process (RLIMIT_AS)")
    v.add_argument("--witness", metavar="FILE",
                   help="write the answer's witness to FILE: for a C program an SV-COMP witness (format 2.0, "
                        "YAML) of a TRUE or FALSE, for Horn clauses a model (sat) or a derivation (unsat)")
    out = v.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    out.add_argument("--chc-comp", action="store_true",
                     help="for .smt2 input: print only the answer line (sat, unsat or unknown), as CHC-COMP expects")
    v.set_defaults(func=cmd_verify)

    c = sub.add_parser("check", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="verify every run-time check of a C program, one verdict per check",
                       description="Instruments every array index and pointer dereference, signed arithmetic "
                                   "operation, division, remainder and shift, and assertion (reach_error) as a "
                                   "check of its own, and verifies each: safe (a checked proof), violated (a "
                                   "counterexample replayed on the program) or unknown (with the reason). A check "
                                   "speaks of the executions that reach it without an earlier run-time error.",
                       epilog=EXIT_CODES_HELP)
    c.add_argument("file", metavar="FILE", nargs="+", help="a .c/.i program (several files are linked) or a .yml task")
    _preprocessor_args(c)
    _c_model_args(c)
    c.add_argument("--engine", default="portfolio", choices=engine_names(),
                   help="the engine for every check (default: portfolio)")
    c.add_argument("--option", action="append", type=engine_option, default=[], metavar="ENGINE.OPTION=VALUE",
                   help="an engine setting (repeatable)")
    c.add_argument("--timeout", type=positive_float, default=600.0, metavar="S",
                   help="wall-clock seconds for all checks together (default 600)")
    c.add_argument("--check-timeout", type=positive_float, default=30.0, metavar="S",
                   help="wall-clock seconds for one check (default 30)")
    c.add_argument("--data-model", choices=DATA_MODELS, default=None,
                   help="C data model (default: the task's, else ILP32)")
    c.add_argument("--memory", type=positive_int, metavar="MB", default=None,
                   help="limit the address space of looprover's processes (RLIMIT_AS): past it a check is unknown "
                        "(out of memory), and the checks settled so far are still reported")
    c.add_argument("--kinds", metavar="K[,K...]", type=_check_kinds,
                   help="only these kinds of checks (memory-access, free, signed-overflow, undefined-operation, "
                        "assertion); the others are neither checked nor assumed")
    c.add_argument("--at", metavar="FILE:LINE", type=_place, action="append", default=[],
                   help="only the checks on this line (repeatable; FILE by path or by name): e.g. a static "
                        "analyser's alarms; the other checks are assumed, as each check assumes the others")
    c.add_argument("--no-slice", dest="slice", action="store_false",
                   help="verify each check on the whole program, not on the program sliced to what the check "
                        "depends on")
    c.add_argument("--no-intervals", dest="intervals", action="store_false",
                   help="skip the first pass, an interval analysis of the whole program that settles the checks it "
                        "shows to hold (with its invariants checked by z3) before the engine sees the rest")
    c.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    c.add_argument("--sarif", metavar="FILE", help="also write the results as a SARIF 2.1.0 log to FILE")
    c.set_defaults(func=cmd_check)

    t = sub.add_parser("transform", parents=[common], help="print the program (after a transformation) as C",
                       formatter_class=_TransformHelp, epilog=_TECHNIQUES,
                       description="Prints the program as C (SV-COMP conventions), as the front-end built it or "
                                   "after a transformation.")
    _input_args(t, "an SV-COMP .prp file or a property name whose checks the program gets, as verify checks it "
                   "(default: as for verify)")
    t.add_argument("--technique", default="none", metavar="NAME",
                   help="the transformation to apply: " + ", ".join(_techniques()) +
                        " (default: none = the IR as the front-end built it)")
    t.add_argument("--data-model", choices=DATA_MODELS, default=None)
    t.add_argument("-o", "--output", metavar="FILE", help="write the C here instead of stdout")
    t.set_defaults(func=cmd_transform)

    w = sub.add_parser("validate", parents=[common],
                       help="check an SV-COMP witness (format 2.0) for a C program, or a model or derivation for "
                            "Horn clauses",
                       description="Replays a violation witness on the program, or checks that a correctness "
                                   "witness's loop invariants are inductive and exclude the error, without any "
                                   "engine. For a Horn-clause file (.smt2): checks with z3 that a model "
                                   "(define-funs) satisfies every clause, or that each step of a derivation "
                                   "(Golem's format) follows by a clause. Prints `confirmed`, `rejected: reason` "
                                   "or `unknown: reason` (exit 0).")
    w.add_argument("file", metavar="FILE", help="the .c/.i program (or .yml task) or .smt2 file the witness is about")
    w.add_argument("--witness", metavar="W", required=True,
                   help="the witness file (YAML; for Horn clauses a model or a derivation)")
    w.add_argument("--property", metavar="PRP", help="an SV-COMP .prp file or property name (default unreach-call)")
    w.add_argument("--data-model", choices=DATA_MODELS, default=None,
                   help="C data model (default: the witness's, else ILP32)")
    w.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds for the solver checks (default {DEFAULT_TIMEOUT:g})")
    w.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    _c_model_args(w)
    w.set_defaults(func=cmd_validate)

    e = sub.add_parser("engines", parents=[common], help="list the engines, what they accept, and their options")
    e.set_defaults(func=cmd_engines)

    b = sub.add_parser("bench", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="run a benchmark directory of tasks in parallel and score the results",
                       description="Runs every (task, property) pair with an expected verdict below DIR "
                                   "(SV-COMP .yml tasks; CHC directories with expected.csv), each in its own "
                                   "process with a wall-clock and memory limit, then prints SV-COMP scores.")
    b.add_argument("dir", metavar="DIR", nargs="?")
    b.add_argument("--compare", nargs=2, metavar=("A.csv", "B.csv"),
                   help="compare two earlier runs' result CSVs per engine instead of running (with --timeout S, "
                        "tasks solved within 10%% of S are marked near the limit)")
    b.add_argument("--jobs", type=positive_int, default=2, metavar="N",
                   help="cores for the runs (default 2): a run takes as many as its engine keeps busy, a "
                        "portfolio run all of its cores, any other engine one")
    b.add_argument("--timeout", type=positive_float, default=None, metavar="S",
                   help=f"seconds per task (default {DEFAULT_TIMEOUT:g})")
    b.add_argument("--memory", type=positive_int, default=4096, metavar="MB",
                   help="address-space limit per task process (default 4096)")
    b.add_argument("--engine", type=_engine_list, default="portfolio", metavar="E[,E...]",
                   help="engine, or a comma-separated list run side by side; besides our engines (default "
                        "portfolio) the reference solvers z3-spacer and z3-spacer-global (z3's Spacer) and "
                        "golem, golem-split-tpa, golem-tpa (an installed Golem: LOOPROVER_GOLEM or PATH); "
                        "ENGINE:FIELD=VALUE[:...] is a variant with its own settings, e.g. "
                        "portfolio:engines=bmc+kinduction+labmc")
    b.add_argument("--option", action="append", type=engine_option, default=[], metavar="ENGINE.OPTION=VALUE",
                   help="an engine setting passed to every run (repeatable)")
    b.add_argument("--bitvector", action="store_true")
    _allocation_arg(b)
    b.add_argument("--output", metavar="CSV", help="results CSV (default: bench-results/<dir>-<time>.csv)")
    b.add_argument("--filter", metavar="SUBSTR", help="only tasks whose id contains SUBSTR")
    b.add_argument("--cluster", metavar="ADDRESS",
                   help="run on the Dask distributed cluster whose scheduler is at ADDRESS (e.g. tcp://host:8786); "
                        "its workers need looprover and the benchmark files at the same paths; --jobs is then "
                        "the workers' threads")
    b.add_argument("--runexec", action="store_true",
                   help="measure and limit each run with BenchExec's RunExecutor (cgroups: CPU time and memory of "
                        "all its processes); where cgroups cannot be used, a warning and the usual runner")
    b.add_argument("--property", metavar="NAME", help="only runs of this property (e.g. unreach-call, termination)")
    b.add_argument("--expected", choices=("true", "false"), help="only runs with this expected verdict")
    b.add_argument("--witnesses", metavar="DIR",
                   help="every C run of our engines writes its SV-COMP witness to DIR, and `looprover validate` "
                        "checks it (same time limit); the CSV and summary say how many were confirmed")
    plots = b.add_mutually_exclusive_group()
    plots.add_argument("--plots", metavar="DIR",
                       help="write the quantile plot (and with two engines, or --compare, the scatter plot) as PNG "
                            "and SVG here (default: next to the results CSV; for --compare next to B.csv)")
    plots.add_argument("--no-plots", action="store_true", help="write no plots")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    b.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_bench)
    return parser


class Terminated(BaseException):
    """SIGTERM as an exception in the main thread, so that it unwinds like Ctrl-C: the job's process is killed,
    the bench stops its runs' process groups, and the exit code is 143."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    # z3 answers a SIGINT that arrives during one of its calls by cancelling the call ("interrupted from
    # keyboard", an `unknown`) and Python never sees it: a Ctrl-C while the command loaded its input was
    # swallowed and the run went on to its time limit. Without z3's handler the interrupt is raised in Python
    # once the call returns (the engines' children ignore SIGINT anyway; the command kills them).
    import z3
    z3.set_param("ctrl_c", False)
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:          # not the main thread (an embedding program): SIGTERM keeps its meaning there
        previous = None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# one-shot commands: their process does nothing after printing the answer
_FAST_EXIT = ("verify", "check", "validate")


def entry() -> NoReturn:
    """The `looprover` command (and `python -m looprover`): `main`, after which a one-shot command that
    answered ends its process at once instead of through Python's teardown, which frees every module and z3
    object one by one (measured 40-70 ms of a half-second `verify`). Nothing is lost: the output is flushed
    here, every file the commands write is closed by then, and they kill their child processes themselves
    (`run_job_limited`). Any other ending (an error, an interrupt, a failed write) and the other commands
    (`bench`: Dask and BenchExec clean up at exit) go through the normal exit."""
    argv = sys.argv[1:]
    code = main(argv)
    if code == EXIT_VERDICT and argv[:1] and argv[0] in _FAST_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:             # a closed pipe or a full disk: Python's own exit reports it
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def _stop_children() -> None:
    """Kill every child process this command started that is still alive. The `finally` that kills the job's
    process does not see a child whose creation the interrupt cut short (measured: a Ctrl-C that landed while
    the job's process was being forked left it running, and the command waited for it at exit)."""
    import multiprocessing as mp
    for p in mp.active_children():
        p.kill()
        p.join(timeout=2)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "command", None) == "bench":
        args.timeout_given = args.timeout is not None
        if args.timeout is None:
            args.timeout = DEFAULT_TIMEOUT
    if hasattr(args, "option"):
        grouped: dict[str, dict[str, str]] = {}
        for engine, name, value in args.option:
            grouped.setdefault(engine, {})[name] = value
        try:
            args.settings = settings_map(grouped)
        except ValueError as exc:
            parser.error(f"--option: {exc}")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        _stop_children()
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        _stop_children()
        print("error: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:   # `looprover transform x.c | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_VERDICT


if __name__ == "__main__":
    entry()
