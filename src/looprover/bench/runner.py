"""Run benchmark tasks in parallel, each in its own process with hard limits, and score the results.

Why one `python -m looprover verify --json` subprocess per task: it is the same code path a user runs, a
crash or a runaway solver takes down only that run, and the whole process group (the verifier and its
portfolio children) can be killed at the wall-clock limit. The memory limit is the verifier's own
`--memory` (RLIMIT_AS set at its start), so nothing runs between fork and exec in this multi-threaded
parent. A run that is killed, crashes or runs out of memory counts as UNKNOWN with the reason.

With several engines (`--engine tpa,z3-spacer`), every task runs once per engine in the same run; the
reference solvers of `bench/reference.py` (z3's Spacer) print the same JSON as `verify`, so they are run,
limited and scored the same way, and the summary shows the engines side by side.
"""
from __future__ import annotations

import csv
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from looprover.bench.evidence import (
    confirmed_scores, print_confirmed_scores, print_evidence, read_evidence, summarize_evidence, validate_witness,
    witness_path,
)
from looprover.bench.reference import REFERENCE_NAMES
from looprover.bench.tasks import BenchTask, collect_tasks
from looprover.errors import InputError

RUN_KILL_GRACE = 5.0          # seconds past the task timeout before its process group is killed
POLL = 0.05

# SV-COMP scoring (https://sv-comp.sosy-lab.org/rules.php)
SCORE = {"correct-true": 2, "correct-false": 1, "wrong-true": -32, "wrong-false": -16}

CSV_FIELDS = ["task", "property", "expected", "status", "result", "score", "engine", "reason",
              "cpu_time", "wall_time", "input", "solver", "depth", "harness", "witness", "witness_check", "memory_mb",
              "violated"]


@dataclass
class RunResult:
    task: BenchTask
    status: str            # TRUE | FALSE | UNKNOWN (a run that failed is UNKNOWN with the reason)
    engine: str
    reason: str
    wall_time: float = 0.0
    cpu_time: float = 0.0
    ran: bool = True       # False for tasks we did not run (unsupported property, invalid definition)
    solver: str = ""       # the --engine this run was asked to use (`engine` is what the run reported)
    depth: int | None = None   # steps of a FALSE's validated counterexample
    harness: str = ""      # reached | not reached | not run: why -- the compiled harness of a FALSE
    witness: str = ""      # violation | correctness: the SV-COMP witness the run wrote (bench --witnesses)
    witness_check: str = ""    # confirmed | rejected: why | unknown: why (looprover validate on it) | not written: why
    memory_mb: float | None = None  # peak memory: of all the run's processes (runexec's cgroup), else of the
                                    # largest one (wait4's ru_maxrss)
    violated: str = ""     # the property a FALSE says is violated (valid-deref of FALSE(valid-deref))

    @property
    def category(self) -> str:
        """correct-true | correct-false | wrong-true | wrong-false | unknown | unsupported | invalid."""
        if self.task.error is not None:
            return "invalid"
        if not self.ran:
            return "unsupported"
        if self.status not in ("TRUE", "FALSE") or self.task.expected is None:
            return "unknown"
        said_true = self.status == "TRUE"
        right = said_true == self.task.expected
        if right and not said_true and self.task.subproperty and self.violated:
            right = self.violated == self.task.subproperty     # SV-COMP: a FALSE names the right part
        return f"{'correct' if right else 'wrong'}-{'true' if said_true else 'false'}"

    @property
    def result(self) -> str:
        c = self.category
        return c.split("-")[0] if c.startswith(("correct", "wrong")) else c

    @property
    def score(self) -> int:
        return SCORE.get(self.category, 0)


def split_variant(spec: str) -> tuple[str, list[str]]:
    """An engine variant `ENGINE:FIELD=VALUE[:FIELD=VALUE...]` as (engine, its `--option` strings), so that one
    bench run can compare configurations side by side (e.g. `portfolio:engines=bmc+kinduction+labmc`)."""
    engine, *settings = spec.split(":")
    return engine, [f"{engine}.{s}" for s in settings if s]


def run_cores(spec: str, options: Sequence[str] = ()) -> int:
    """How many cores one run of the engine `spec` (a name or variant) keeps busy: the engine processes it runs
    at once -- a portfolio run all of its cores, any other engine or reference solver one."""
    name, variant = split_variant(spec)
    if name in REFERENCE_NAMES:
        return 1
    from looprover.argtypes import engine_option
    from looprover.engines import get_engine
    from looprover.engines.base import make_settings
    engine = get_engine(name)
    values = {key: value for e, key, value in map(engine_option, [*options, *variant]) if e == name}
    return max(1, engine.processes(make_settings(engine, values)))


class CoreBudget:
    """`cores` cores shared by runs that take one or several each. Runs start in the order they ask, so a run
    that needs every core is not passed over forever by one-core runs; a run never takes more than `cores`."""

    def __init__(self, cores: int):
        self.cores = self.free = max(1, cores)
        self.lock = threading.Condition()
        self.tickets = 0          # the next ticket to hand out
        self.turn = 0             # the ticket whose turn it is to take cores

    @contextmanager
    def hold(self, n: int) -> Iterator[None]:
        n = min(n, self.cores)
        with self.lock:
            ticket, self.tickets = self.tickets, self.tickets + 1
            self.lock.wait_for(lambda: self.turn == ticket and self.free >= n)
            self.turn += 1
            self.free -= n
            self.lock.notify_all()
        try:
            yield
        finally:
            with self.lock:
                self.free += n
                self.lock.notify_all()


def verify_command(task: BenchTask, timeout: float, engine: str, memory: int | None,
                   bitvector: bool = False, options: Sequence[str] = (), witness: Path | None = None,
                   flags: Sequence[str] = ()) -> list[str]:
    engine, variant = split_variant(engine)
    options = [*options, *variant]
    cmd = [sys.executable, "-m", "looprover", "verify", str(task.input_file), *map(str, task.more_inputs),
           "--property", task.property_spec,
           "--data-model", task.data_model, "--engine", engine, "--timeout", f"{timeout:g}", "--json"]
    if memory:
        cmd += ["--memory", str(memory)]
    if bitvector:
        cmd.append("--bitvector")
    if witness is not None:
        cmd += ["--witness", str(witness)]
    cmd += flags
    for o in options:
        cmd += ["--option", o]
    return cmd


def run_command(task: BenchTask, timeout: float, engine: str, memory: int | None,
                bitvector: bool = False, options: Sequence[str] = (), witness: Path | None = None,
                flags: Sequence[str] = ()) -> list[str]:
    """One run's command line: `looprover verify` for our engines, `bench.reference` for reference solvers."""
    if engine not in REFERENCE_NAMES:
        return verify_command(task, timeout, engine, memory, bitvector, options, witness, flags)
    cmd = [sys.executable, "-m", "looprover.bench.reference", str(task.input_file), "--solver", engine,
           "--timeout", f"{timeout:g}", "--json"]
    return cmd + (["--memory", str(memory)] if memory else [])


def kill_group(pgid: int) -> None:
    """SIGKILL a process group that may already be gone (a verifier and the engine processes it started)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_one(task: BenchTask, cmd: Sequence[str], timeout: float, grace: float = RUN_KILL_GRACE,
            stop: threading.Event | None = None) -> RunResult:
    """Run one verifier process; kill its process group at timeout + grace (or when `stop` is set)."""
    if task.error is not None:
        return RunResult(task, "UNKNOWN", "-", task.error, ran=False)
    if not task.runnable:
        return RunResult(task, "UNKNOWN", "-", f"unsupported property: {task.property}", ran=False)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        killed = None
        exited = _exit_waiter(proc.pid)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if stop is not None and stop.is_set():
                killed = "interrupted"
            elif time.monotonic() - start > timeout + grace:
                killed = f"timeout (killed after {time.monotonic() - start:.1f} s)"
            if killed:
                kill_group(proc.pid)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            exited(POLL)
        wall = time.monotonic() - start
        exited(None)
        proc.returncode = os.waitstatus_to_exitcode(status)
        kill_group(proc.pid)          # stragglers of a crashed verifier (its portfolio children)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    cpu = usage.ru_utime + usage.ru_stime
    r = RunResult(task, "UNKNOWN", "-", killed, wall, cpu) if killed else \
        interpret(task, proc.returncode, stdout, stderr, wall, cpu)
    r.memory_mb = usage.ru_maxrss / 1024          # Linux reports kilobytes
    return r


def _exit_waiter(pid: int) -> Callable[[float | None], None]:
    """A wait of at most `seconds` that ends as soon as process `pid` exits (None: release the handle). Why not
    a plain sleep between polls: a run's wall time would be rounded up to the next poll, 25 ms on average and
    50 ms at worst, a tenth of the half second a quick answer takes. A pidfd (Linux 5.3) wakes the poll at the
    exit; elsewhere the sleep stays."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return lambda seconds: time.sleep(seconds) if seconds is not None else None
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def wait(seconds: float | None) -> None:
        if seconds is None:
            os.close(fd)
        else:
            poller.poll(seconds * 1000)
    return wait


def interpret(task: BenchTask, code: int, stdout: str, stderr: str, wall: float, cpu: float) -> RunResult:
    """A finished run's result from its exit code (negative: the signal) and output, whichever way it was run."""
    data = None
    for line in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(line)
            break
        except ValueError:
            continue
    # what Python, z3 (C++) and thread creation under RLIMIT_AS print when memory runs out
    memout = any(m in stderr for m in ("MemoryError", "std::bad_alloc", "out of memory",
                                       "Resource temporarily unavailable"))
    if isinstance(data, dict) and data.get("status") in ("TRUE", "FALSE", "UNKNOWN"):
        reason = str(data.get("reason", ""))
        if data["status"] == "UNKNOWN" and (memout or "out of memory" in reason):
            reason = f"memout ({reason})"
        said = str(data.get("result", ""))
        violated = said[said.index("(") + 1:-1] if data["status"] == "FALSE" and said.endswith(")") else ""
        return RunResult(task, data["status"], str(data.get("engine", "-")), reason, wall, cpu,
                         violated=violated, **read_evidence(data))
    if isinstance(data, dict) and data.get("status") == "ERROR":
        return RunResult(task, "UNKNOWN", "-", f"error: {data.get('error', '')}", wall, cpu)
    last = (stderr.strip().splitlines() or [""])[-1][:200]
    if memout:
        return RunResult(task, "UNKNOWN", "-", f"memout ({last})", wall, cpu)
    how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
    return RunResult(task, "UNKNOWN", "-", f"error: verifier {how}" + (f": {last}" if last else ""), wall, cpu)


def byte_compile() -> None:
    """Byte-compile looprover's sources once before any run is timed. Where PYTHONDONTWRITEBYTECODE is set (CI
    images, these machines) and the sources were never compiled (a git worktree, a checkout without
    `setup.sh`), every run compiled every module it imported again: measured 0.74-0.87 s per trivial Horn file
    instead of 0.44-0.49 s, which no engine change could show. A read-only install is left as it is."""
    import compileall
    try:
        compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)
    except OSError:
        pass


def run_tasks(tasks: Sequence[BenchTask], timeout: float, jobs: int = 2, *,
              command: Callable[[BenchTask], list[str]] | None = None, grace: float = RUN_KILL_GRACE,
              on_result: Callable[[RunResult], None] | None = None, engine: str | Sequence[str] = "portfolio",
              memory: int | None = None, bitvector: bool = False, options: Sequence[str] = (),
              cluster: str | None = None, runexec: bool = False,
              witness_dir: Path | None = None, flags: Sequence[str] = ()) -> list[RunResult]:
    """Every task once per engine (`engine`: a name or a list of names) on `jobs` cores, a run taking as
    many as its engine keeps busy (`run_cores`: a portfolio run all of them, so portfolio runs do not share
    cores with other runs and their times stay comparable); results in the order of `tasks`, the engines of
    one task in the order given. `command` (for tests) replaces the command line of every run; `flags` are
    further `verify` arguments of our engines' runs. With `cluster` (a Dask scheduler's address) the runs go to
    its workers (`bench/cluster.py`) instead of this machine's processes; with `runexec` each local run is
    measured and limited by BenchExec's RunExecutor (`bench/runexec.py`). With `witness_dir`, every C run of our
    engines writes its SV-COMP witness there and the witness is checked by `looprover validate`
    (`bench/evidence.py`)."""
    engines = [engine] if isinstance(engine, str) else list(engine)
    runs = [(t, e) for t in tasks for e in engines]
    byte_compile()

    def witness_of(t: BenchTask, e: str) -> Path | None:
        return witness_path(witness_dir, t, e) if witness_dir and e not in REFERENCE_NAMES else None

    def cmd_of(t: BenchTask, e: str) -> list[str]:
        return command(t) if command else run_command(t, timeout, e, memory, bitvector, options, witness_of(t, e),
                                                      flags)

    def check_witness(r: RunResult) -> None:
        w = witness_of(r.task, r.solver)
        if w is not None and r.witness and w.exists():
            r.witness_check = validate_witness(r.task, w, timeout, grace)

    if witness_dir:
        witness_dir.mkdir(parents=True, exist_ok=True)
    if cluster:
        from looprover.bench.cluster import run_on_cluster
        done = run_on_cluster(cluster, [(t, e, cmd_of(t, e)) for t, e in runs], timeout, grace, on_result)
        for r in done:            # the workers write witnesses on the shared file system; checked here
            check_witness(r)
        return done
    stop = threading.Event()
    results: dict[int, RunResult] = {}
    budget = CoreBudget(jobs)
    cores = {e: run_cores(e, options) for e in engines}

    def one(t: BenchTask, e: str) -> RunResult:
        with budget.hold(cores[e]) if t.runnable else nullcontext():    # a task not run needs no core
            if stop.is_set():
                r = RunResult(t, "UNKNOWN", "-", "bench interrupted", ran=False)
            elif runexec and t.runnable:
                from looprover.bench.runexec import run_measured
                r = run_measured(t, cmd_of(t, e), timeout, grace, memory, stop)
            else:
                r = run_one(t, cmd_of(t, e), timeout, grace, stop)
            r.solver = e
            check_witness(r)      # `looprover validate` runs on the same cores
        return r

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, t, e): i for i, (t, e) in enumerate(runs)}
        try:
            for fut in as_completed(futures):
                results[futures[fut]] = r = fut.result()
                if on_result is not None:
                    on_result(r)
        except BaseException:
            stop.set()
            for f in futures:
                f.cancel()
            raise
    return [results[i] for i in range(len(runs))]


# ------------------------------------------------------------------------------------------- summary
def summarize(results: Iterable[RunResult], wall_time: float | None = None) -> dict:
    results = list(results)
    count = {c: 0 for c in ("correct-true", "correct-false", "wrong-true", "wrong-false", "unknown",
                            "unsupported", "invalid")}
    for r in results:
        count[r.category] += 1
    ran = [r for r in results if r.ran]
    return {
        "runs": len(ran),
        "correct_true": count["correct-true"],
        "correct_false": count["correct-false"],
        "wrong_true": count["wrong-true"],
        "wrong_false": count["wrong-false"],
        "unknown": count["unknown"],
        "unsupported_property": count["unsupported"],
        "invalid_task": count["invalid"],
        "score": sum(r.score for r in results),
        "max_score": sum(2 if r.task.expected else 1 for r in ran),
        "cpu_time": round(sum(r.cpu_time for r in ran), 2),
        "wall_time": round(wall_time if wall_time is not None else sum(r.wall_time for r in ran), 2),
    }


def solved_differences(results: Iterable[RunResult], engines: Sequence[str]) -> list[dict]:
    """For each ordered pair of engines (a, b): the tasks a solved (a correct verdict) and b did not."""
    solved: dict[str, list[str]] = {e: [] for e in engines}
    for r in results:
        if r.category.startswith("correct") and r.solver in solved:
            solved[r.solver].append(r.task.id)
    solved_sets = {e: set(ts) for e, ts in solved.items()}
    out = []
    for a in engines:
        for b in engines:
            if a != b and (only := [t for t in solved[a] if t not in solved_sets[b]]):
                out.append({"solved_by": a, "not_by": b, "tasks": only})
    return out


def summarize_engines(results: Iterable[RunResult], engines: Sequence[str],
                      wall_time: float | None = None) -> dict:
    """Several engines on the same tasks: one `summarize` per engine (its wall time is the sum of its runs'),
    the tasks solved by one engine but not another, and the wall time of the whole bench run."""
    results = list(results)
    return {
        "engines": {e: summarize([r for r in results if r.solver == e]) for e in engines},
        "differences": solved_differences(results, engines),
        "wall_time": round(wall_time if wall_time is not None else sum(r.wall_time for r in results), 2),
    }


def _csv_row(r: RunResult) -> dict:
    return {
        "task": r.task.id, "property": r.task.property,
        "expected": "" if r.task.expected is None else str(r.task.expected).lower(),
        "status": r.status, "result": r.result, "score": r.score, "engine": r.engine,
        "reason": r.reason, "cpu_time": f"{r.cpu_time:.2f}", "wall_time": f"{r.wall_time:.2f}",
        "input": str(r.task.input_file), "solver": r.solver,
        "depth": "" if r.depth is None else r.depth, "harness": r.harness, "witness": r.witness,
        "witness_check": r.witness_check, "memory_mb": "" if r.memory_mb is None else f"{r.memory_mb:.0f}",
        "violated": r.violated,
    }


def write_csv(results: Iterable[RunResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in results:
            w.writerow(_csv_row(r))


class PartialCsv:
    """`<output>.partial`: one row per finished run, flushed as it arrives, in completion order.

    Why: a long run (hours at 60 s per task) that is interrupted would otherwise leave nothing; the final CSV
    (in task order) replaces it when the run completes."""

    def __init__(self, path: Path):
        self.path = path.with_name(path.name + ".partial")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = self.path.open("w", newline="")
        self.w = csv.DictWriter(self.fh, fieldnames=CSV_FIELDS)
        self.w.writeheader()
        self.fh.flush()

    def add(self, r: RunResult) -> None:
        self.w.writerow(_csv_row(r))
        self.fh.flush()

    def finish(self) -> None:
        self.fh.close()
        self.path.unlink(missing_ok=True)


_TABLE_ROWS = [("correct TRUE", "correct_true"), ("correct FALSE", "correct_false"),
               ("wrong TRUE", "wrong_true"), ("wrong FALSE", "wrong_false"), ("unknown", "unknown"),
               ("runs", "runs"), ("not run: unsupported property", "unsupported_property"),
               ("not run: invalid task definition", "invalid_task")]


def _summary_table(columns: dict[str, dict], wall_label: str):
    """One rich table with a column of counts per `summarize` result in `columns` (column title -> summary)."""
    from rich.table import Table
    table = Table(title="looprover bench", show_header=True)
    table.add_column("")
    for title in columns:
        table.add_column(title, justify="right")
    per = list(columns.values())
    for label, key in _TABLE_ROWS:
        table.add_row(label, *(str(s[key]) for s in per))
    table.add_row("score (SV-COMP)", *(f"{s['score']} of {s['max_score']}" for s in per))
    table.add_row("CPU time", *(f"{s['cpu_time']:.1f} s" for s in per))
    table.add_row(wall_label, *(f"{s['wall_time']:.1f} s" for s in per))
    return table


def print_summary(summary: dict, console) -> None:
    console.print(_summary_table({"count": summary}, "wall time"))


def print_engines_summary(summary: dict, console) -> None:
    """`summarize_engines` as one table with a column per engine, then the tasks solved by one engine but
    not by another."""
    console.print(_summary_table(summary["engines"], "wall time (sum of runs)"))
    print(f"wall time: {summary['wall_time']:.1f} s")
    for d in summary["differences"]:
        print(f"solved by {d['solved_by']} but not {d['not_by']} ({len(d['tasks'])}): {', '.join(d['tasks'])}")
    if not summary["differences"]:
        print("every task solved by one engine is solved by all")


def run_bench_command(args) -> int:
    """`looprover bench`: collect, run with a progress bar, write the CSV, print the summary."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    engines = [args.engine] if isinstance(args.engine, str) else list(args.engine)
    multi = len(engines) > 1
    tasks = [t for t in collect_tasks(args.dir, filter_substr=args.filter)
             if (args.property is None or t.property == args.property)
             and (args.expected is None or t.expected == (args.expected == "true"))]
    if not tasks:
        if args.property or args.expected:
            raise InputError(f"no task under {args.dir} matches --property {args.property or 'any'} "
                             f"--expected {args.expected or 'any'}" + (f" --filter {args.filter!r}" if args.filter else ""))
        every = collect_tasks(args.dir) if args.filter else []
        if not every:
            raise InputError(f"{args.dir}: no tasks found (no *.yml task definitions or expected.csv)")
        raise InputError(f"--filter {args.filter!r} matches no task id under {args.dir} ({len(every)} tasks "
                         f"there, with ids such as {every[0].id})")
    to_run = [t for t in tasks if t.runnable]
    err_console = Console(stderr=True)
    from looprover.bench.runexec import choose
    runexec = choose(args.runexec, args.cluster)
    show = not args.quiet and sys.stderr.isatty()
    out_path = Path(args.output) if args.output else \
        Path("bench-results") / f"{Path(args.dir).resolve().name}-{datetime.now():%Y%m%d-%H%M%S}.csv"
    start = time.monotonic()
    with Progress(TextColumn("[bold]bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=err_console, disable=not show) as bar:
        job = bar.add_task("", total=len(to_run) * len(engines))

        partial = PartialCsv(out_path)

        def done(r: RunResult) -> None:
            partial.add(r)
            who = f" {r.solver}" if multi else ""
            if r.ran:
                bar.update(job, advance=1, description=f"{r.task.id}{who}: {r.status} ({r.result})")
            if args.verbose:
                err_console.print(f"{r.task.id} [{r.task.property}]{who}: {r.status} ({r.result}) {r.reason}",
                                  highlight=False, markup=False)

        try:
            results = run_tasks(tasks, args.timeout, args.jobs, on_result=done, engine=engines,
                                memory=args.memory, bitvector=args.bitvector,
                                flags=["--allocation", args.allocation] if args.allocation != "may-fail" else [],
                                options=[f"{e}.{k}={v}" for e, k, v in args.option], cluster=args.cluster,
                                runexec=runexec, witness_dir=Path(args.witnesses) if args.witnesses else None)
        except InputError:
            partial.finish()          # nothing ran (the cluster was unreachable): no partial results to keep
            raise
    wall = time.monotonic() - start
    summary = summarize_engines(results, engines, wall) if multi else summarize(results, wall)
    write_csv(results, out_path)
    partial.finish()
    summary["csv"] = str(out_path)
    summary["evidence"] = summarize_evidence(results)
    if args.witnesses:
        summary["witness_scores"] = confirmed_scores(results)
    if not args.no_plots:
        from looprover.bench.plots import bench_plots, unavailable
        why = unavailable()
        if why is None:
            summary["plots"] = [str(p) for p in bench_plots(out_path, Path(args.plots) if args.plots else
                                                            out_path.parent, args.timeout)]
        else:
            summary["plots_skipped"] = why
            print(f"warning: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary))
    else:
        (print_engines_summary if multi else print_summary)(summary, Console())
        print_evidence(summary["evidence"])
        if args.witnesses:
            print_confirmed_scores(summary["witness_scores"])
        print(f"results: {out_path}")
        if summary.get("plots"):
            print(f"plots: {', '.join(summary['plots'])}")
    return 0
