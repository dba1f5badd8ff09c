"""Benchmark runner: task readers, scoring, limits (killed runs count as UNKNOWN), CSV/JSON output."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from looprover.bench import runner
from looprover.bench.runner import RunResult, interpret, run_one, run_tasks, summarize, write_csv
from looprover.bench.tasks import BenchTask, collect_tasks, read_task_definition
from looprover.errors import InputError
from looprover.timeshare import usable_cores

REPO = Path(__file__).resolve().parents[2]
UNREACH = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n"
TERMINATION = "CHECK( init(main()), LTL(F end) )\n"
NO_OVERFLOW = "CHECK( init(main()), LTL(G ! overflow) )\n"
DEF_BEHAVIOR = "CHECK( init(main()), LTL(G def-behavior) )\n"     # recognised, not checked
COUNTER_SMT2 = """(set-logic HORN)
(declare-fun inv (Int) Bool)
(assert (forall ((x Int)) (=> (= x 0) (inv x))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x) (< x 5) (= y (+ x 1))) (inv y))))
(assert (forall ((x Int)) (=> (and (inv x) (> x 5)) false)))
"""


@pytest.fixture
def taskdir(tmp_path) -> Path:
    """A tiny benchmark tree: SV-COMP tasks in both formats, termination, no-overflow, an unsupported property
    (memory safety), a broken task, and a
    CHC directory with expected.csv."""
    sv = tmp_path / "sv"
    (sv / "properties").mkdir(parents=True)
    (sv / "properties" / "unreach-call.prp").write_text(UNREACH)
    (sv / "properties" / "termination.prp").write_text(TERMINATION)
    (sv / "properties" / "no-overflow.prp").write_text(NO_OVERFLOW)
    (sv / "properties" / "def-behavior.prp").write_text(DEF_BEHAVIOR)
    cat = sv / "cat"
    cat.mkdir()
    for n in ("a", "b", "c"):
        (cat / f"{n}.c").write_text("int main(void) { return 0; }\n")
    (cat / "a.yml").write_text("format_version: '1.0'\ninput_files: 'a.c'\nproperties:\n"
                               "  - property_file: ../properties/unreach-call.prp\n    expected_verdict: true\n")
    (cat / "b.yml").write_text("format_version: '2.0'\ninput_files: 'b.c'\nproperties:\n"
                               "  - property_file: ../properties/unreach-call.prp\n    expected_verdict: false\n"
                               "  - property_file: ../properties/termination.prp\n    expected_verdict: true\n"
                               "  - property_file: ../properties/no-overflow.prp\n    expected_verdict: true\n"
                               "  - property_file: ../properties/def-behavior.prp\n    expected_verdict: true\n"
                               "  - property_file: ../properties/coverage.prp\n"
                               "options:\n  language: C\n  data_model: LP64\n")
    (cat / "broken.yml").write_text("input_files: 'gone.c'\nproperties: []\n")
    chc = tmp_path / "chc"
    (chc / "sat").mkdir(parents=True)
    (chc / "sat" / "counter.smt2").write_text(COUNTER_SMT2)
    (chc / "expected.csv").write_text("file,expected\nsat/counter.smt2,sat\n")
    return tmp_path


def test_collect_tasks(taskdir):
    tasks = collect_tasks(taskdir)
    by = {(t.id, t.property): t for t in tasks}
    assert set(by) == {("sv/cat/a.yml", "unreach-call"), ("sv/cat/b.yml", "unreach-call"),
                       ("sv/cat/b.yml", "termination"), ("sv/cat/b.yml", "no-overflow"),
                       ("sv/cat/b.yml", "def-behavior"), ("sv/cat/broken.yml", "?"),
                       ("chc/sat/counter.smt2", "check-sat")}
    a, b = by["sv/cat/a.yml", "unreach-call"], by["sv/cat/b.yml", "unreach-call"]
    assert a.expected is True and a.data_model == "ILP32" and a.runnable
    assert b.expected is False and b.data_model == "LP64" and b.input_file.name == "b.c"
    assert by["sv/cat/b.yml", "termination"].runnable and by["sv/cat/b.yml", "no-overflow"].runnable
    assert by["sv/cat/broken.yml", "?"].error and "gone.c" in by["sv/cat/broken.yml", "?"].error
    chc = by["chc/sat/counter.smt2", "check-sat"]
    assert chc.expected is True and chc.runnable and chc.property_spec == "check-sat"
    assert [t.id for t in collect_tasks(taskdir, filter_substr="cat/a")] == ["sv/cat/a.yml"]


def test_chc_yml_and_expected_csv_are_not_counted_twice(taskdir):
    chc = taskdir / "chc"
    (chc / "properties").mkdir()
    (chc / "properties" / "check-sat.prp").write_text("")
    (chc / "sat" / "counter.yml").write_text("format_version: '2.0'\ninput_files: counter.smt2\nproperties:\n"
                                             "- expected_verdict: true\n  property_file: ../properties/check-sat.prp\n"
                                             "options:\n  language: SMT-LIB\n")
    ids = [t.id for t in collect_tasks(taskdir / "chc")]
    assert ids == ["sat/counter.yml"]


def test_read_task_definition_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_task_definition(tmp_path / "x.yml")


def _task(expected, tid="t"):
    return BenchTask(tid, Path("t.c"), "unreach-call", "unreach-call", expected, "ILP32", Path("t.yml"))


def test_score_arithmetic():
    results = [
        RunResult(_task(True), "TRUE", "e", "", 1.0, 2.0),     # correct TRUE   +2
        RunResult(_task(True), "TRUE", "e", "", 1.0, 2.0),     # correct TRUE   +2
        RunResult(_task(False), "FALSE", "e", "", 1.0, 1.0),   # correct FALSE  +1
        RunResult(_task(False), "TRUE", "e", "", 1.0, 1.0),    # wrong TRUE    -32
        RunResult(_task(True), "FALSE", "e", "", 1.0, 1.0),    # wrong FALSE   -16
        RunResult(_task(True), "UNKNOWN", "e", "timeout", 3.0, 0.5),
        RunResult(_task(True), "UNKNOWN", "-", "unsupported property: termination", ran=False),
    ]
    assert [r.category for r in results] == ["correct-true", "correct-true", "correct-false", "wrong-true",
                                             "wrong-false", "unknown", "unsupported"]
    s = summarize(results)
    assert (s["correct_true"], s["correct_false"], s["wrong_true"], s["wrong_false"], s["unknown"]) == \
        (2, 1, 1, 1, 1)
    assert s["unsupported_property"] == 1 and s["runs"] == 6
    assert s["score"] == 2 + 2 + 1 - 32 - 16
    assert s["max_score"] == 2 + 2 + 1 + 1 + 2 + 2
    assert s["cpu_time"] == 7.5 and s["wall_time"] == 8.0


def test_a_false_must_name_the_subproperty_the_task_expects(tmp_path):
    """SV-COMP scores FALSE(valid-deref) on a task expecting FALSE(valid-memtrack) as a wrong answer."""
    (tmp_path / "m.i").write_text("int main(void) { return 0; }\n")
    (tmp_path / "m.prp").write_text("CHECK( init(main()), LTL(G valid-free) )\n")
    (tmp_path / "m.yml").write_text("format_version: '2.0'\ninput_files: 'm.i'\nproperties:\n"
                                    "  - property_file: m.prp\n    expected_verdict: false\n"
                                    "    subproperty: valid-memtrack\n")
    task = read_task_definition(tmp_path / "m.yml")
    assert task.properties[0].subproperty == "valid-memtrack"
    t = BenchTask("m", Path("m.i"), "valid-memsafety", "m.prp", False, "ILP32", Path("m.yml"),
                  subproperty="valid-memtrack")
    runs = {v: RunResult(t, "FALSE", "e", "", 1.0, 1.0, violated=v) for v in ("valid-memtrack", "valid-deref")}
    assert runs["valid-memtrack"].category == "correct-false" and runs["valid-deref"].category == "wrong-false"
    out = '{"status": "FALSE", "result": "FALSE(valid-deref)", "engine": "bmc", "reason": ""}'
    assert interpret(t, 0, out, "", 1.0, 1.0).category == "wrong-false"


def test_csv_output(tmp_path):
    results = [RunResult(_task(True, "x/a.yml"), "TRUE", "portfolio:kinduction", "k=1", 0.5, 0.7),
               RunResult(_task(False, "x/b.yml"), "UNKNOWN", "-", "timeout (killed after 3.0 s)", 3.0, 2.9)]
    out = tmp_path / "res" / "r.csv"
    write_csv(results, out)
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == runner.CSV_FIELDS
    assert rows[0]["task"] == "x/a.yml" and rows[0]["expected"] == "true" and rows[0]["result"] == "correct"
    assert rows[0]["score"] == "2" and rows[1]["result"] == "unknown" and rows[1]["score"] == "0"


def test_partial_csv_keeps_finished_runs_until_the_end(tmp_path):
    """An interrupted long run leaves `<csv>.partial` with every run finished so far; completion removes it."""
    out = tmp_path / "res" / "r.csv"
    log = runner.PartialCsv(out)
    log.add(RunResult(_task(True, "x/a.yml"), "TRUE", "tpa", "ok", 0.5, 0.7))
    rows = list(csv.DictReader(log.path.open()))
    assert log.path.name == "r.csv.partial" and [r["task"] for r in rows] == ["x/a.yml"]
    log.finish()
    assert not log.path.exists()


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_run_that_hangs_is_killed_and_counted_unknown(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    # the "verifier" starts a grandchild (like a portfolio engine) and both ignore the deadline
    code = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; "
            f"time.sleep(60)']); open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    t0 = time.monotonic()
    r = run_one(_task(True), _py(code), timeout=1.0, grace=0.5)
    assert time.monotonic() - t0 < 8
    assert r.status == "UNKNOWN" and r.reason.startswith("timeout (killed") and r.category == "unknown"
    gpid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(gpid):
        time.sleep(0.1)
    assert not _alive(gpid), "the whole process group must be killed"


def test_a_runs_peak_memory_is_recorded(tmp_path):
    """Without runexec the peak is the largest process's (wait4's ru_maxrss): a run that holds 200 MB shows it,
    and the CSV has it."""
    code = ("import json; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
            "print(json.dumps({'status': 'TRUE', 'engine': 'fake', 'reason': 'done'}))")
    r = run_one(_task(True), _py(code), timeout=30)
    assert r.status == "TRUE" and 200 <= r.memory_mb < 400, r.memory_mb
    write_csv([r], tmp_path / "r.csv")
    assert 200 <= float(next(csv.DictReader((tmp_path / "r.csv").open()))["memory_mb"]) < 400


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("code, status, reason", [
    ('import json; print(json.dumps({"status": "TRUE", "engine": "e", "reason": "r"}))', "TRUE", "r"),
    ('import json; print("noise"); print(json.dumps({"status": "FALSE", "engine": "e", "reason": "cex"}))',
     "FALSE", "cex"),
    ('import json, sys; print(json.dumps({"status": "ERROR", "error": "bad.c: no such file"})); sys.exit(1)',
     "UNKNOWN", "error: bad.c: no such file"),
    ('import sys; sys.stderr.write("Traceback...\\nMemoryError\\n"); sys.exit(1)', "UNKNOWN", "memout"),
    ('import os, signal; os.kill(os.getpid(), signal.SIGSEGV)', "UNKNOWN", "killed by signal 11"),
    ('import json; print(json.dumps({"status": "UNKNOWN", "engine": "e", "reason": "out of memory"}))',
     "UNKNOWN", "memout"),
])
def test_outcomes_of_a_run(code, status, reason):
    r = run_one(_task(True), _py(code), timeout=30)
    assert r.status == status and reason in r.reason and r.wall_time > 0


def test_tasks_run_in_parallel_and_keep_their_order(tmp_path):
    tasks = [_task(True, f"t{i}") for i in range(4)]
    cmd = _py('import json, time; a = time.time(); time.sleep(0.6); print(json.dumps({"status": "TRUE", '
              '"engine": "e", "reason": f"{a} {time.time()}"}))')
    seen = []
    results = run_tasks(tasks, timeout=30, jobs=4, command=lambda t: cmd, on_result=seen.append, engine="bmc")
    spans = [tuple(map(float, r.reason.split())) for r in results]
    assert any(a < d and c < b for i, (a, b) in enumerate(spans) for c, d in spans[i + 1:])   # some overlap
    assert [r.task.id for r in results] == ["t0", "t1", "t2", "t3"] and len(seen) == 4
    assert all(r.category == "correct-true" for r in results)


def test_a_portfolio_run_takes_all_its_cores_and_other_engines_one():
    assert runner.run_cores("portfolio") == usable_cores()
    assert runner.run_cores("portfolio:cores=3") == 3
    assert runner.run_cores("portfolio", ["portfolio.cores=1", "bmc.max_bound=4"]) == 1
    assert runner.run_cores("bmc") == runner.run_cores("tpa:seeds=off") == runner.run_cores("z3-spacer") == 1


def test_the_core_budget_is_never_exceeded_and_runs_start_in_order():
    budget = runner.CoreBudget(2)
    asks = [2, 1, 1, 2, 1, 1, 2]
    lock = threading.Lock()
    busy, peak, started = [0], [0], []

    def run(i: int, n: int) -> None:
        with budget.hold(n):
            with lock:
                busy[0] += n
                peak[0] = max(peak[0], busy[0])
                started.append(i)
            time.sleep(0.02)
            with lock:
                busy[0] -= n

    threads = []
    for i, n in enumerate(asks):     # each asks only once the one before holds its ticket: a known order
        threads.append(threading.Thread(target=run, args=(i, n)))
        threads[-1].start()
        while budget.tickets <= i:
            time.sleep(0.001)
    for t in threads:
        t.join()
    assert peak[0] == 2 and started == list(range(len(asks)))
    assert runner.CoreBudget(1).cores == 1       # a wide run on a narrow budget takes all there is
    with runner.CoreBudget(1).hold(4):
        pass


def test_bench_runs_hold_the_cores_of_their_engine(monkeypatch):
    held = []

    class Recording(runner.CoreBudget):
        def hold(self, n):
            held.append(n)
            return super().hold(n)

    monkeypatch.setattr(runner, "CoreBudget", Recording)
    cmd = _py('import json; print(json.dumps({"status": "TRUE", "engine": "e", "reason": ""}))')
    results = run_tasks([_task(True, "t0"), _task(True, "t1")], timeout=30, jobs=2, command=lambda t: cmd,
                        engine=["portfolio:cores=2", "bmc"])
    assert sorted(held) == [1, 1, 2, 2] and len(results) == 4


def test_unsupported_and_invalid_tasks_are_not_run(taskdir):
    tasks = [t for t in collect_tasks(taskdir) if not t.runnable]
    results = run_tasks(tasks, timeout=5, command=lambda t: ["false"])
    cats = sorted(r.category for r in results)
    assert cats == ["invalid", "unsupported"]
    assert all(not r.ran for r in results)


def test_bench_command_end_to_end(taskdir, tmp_path):
    """The CLI on the tiny tree: every runnable task runs in a subprocess; nothing may be *wrong*."""
    out = tmp_path / "results.csv"
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(taskdir / "chc"), "--json", "-q",
                        "--timeout", "20", "--output", str(out)], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["runs"] == 1 and summary["wrong_true"] == summary["wrong_false"] == 0
    assert summary["csv"] == str(out)
    assert sorted(Path(p).name for p in summary["plots"]) == ["results-quantile.png", "results-quantile.svg"]
    assert all(Path(p).parent == tmp_path and Path(p).stat().st_size > 0 for p in summary["plots"])
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["task"] == "sat/counter.smt2" and rows[0]["status"] in ("TRUE", "UNKNOWN")


def test_bench_text_summary(taskdir, tmp_path):
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(taskdir), "-q", "--filter", "b.yml",
                        "--timeout", "5", "--output", str(tmp_path / "r.csv")], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    for word in ("correct TRUE", "wrong FALSE", "unknown", "score", "not run: unsupported property", "CPU time"):
        assert word in r.stdout
    assert "results: " in r.stdout


def test_a_filter_that_matches_nothing_is_named_as_the_cause(taskdir, tmp_path):
    """The tree has tasks; the filter excludes them all: the error is about the filter, with an id that exists,
    not "no tasks found" about a directory that has them."""
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(taskdir), "-q", "--filter", "nomatch",
                        "--output", str(tmp_path / "r.csv")], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    # the count: every (task, property) pair the tree has (termination is one since the termination engine)
    assert re.fullmatch(rf"error: --filter 'nomatch' matches no task id under {re.escape(str(taskdir))} "
                        rf"\(\d+ tasks there, with ids such as sv/cat/a\.yml\)\n", r.stderr), r.stderr


def test_examples_as_a_benchmark(tmp_path):
    """The repository's own examples, with the real pipeline when it exists (else every run is UNKNOWN)."""
    out = tmp_path / "r.csv"
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(REPO / "examples"), "--json", "-q",
                        "--timeout", "60", "--output", str(out)], capture_output=True, text=True, timeout=400,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["runs"] == 2 and s["wrong_true"] == 0 and s["wrong_false"] == 0


def test_shared_benchmarks_are_read_completely(shared_dir):
    """The counts of ../shared/benchmarks/README.md: 88 + 19 unreach-call runs, 104 CHC problems. (The Verisec
    suite beside them has an expected.csv of its own format, for memory safety: not read here.) Every property
    of the dev tasks is runnable now, memory safety (6 tasks) included."""
    from collections import Counter
    tasks = collect_tasks(shared_dir / "benchmarks/svcomp") + collect_tasks(shared_dir / "benchmarks/chc")
    assert not [t for t in tasks if t.error]
    runnable = Counter((t.property, t.expected) for t in tasks if t.runnable)
    assert runnable[("unreach-call", True)] == 88 and runnable[("unreach-call", False)] == 19
    assert runnable[("check-sat", True)] + runnable[("check-sat", False)] == 104
    assert runnable[("termination", True)] == 48 and runnable[("termination", False)] == 6
    assert runnable[("no-overflow", True)] == 11 and runnable[("no-overflow", False)] == 0
    assert runnable[("valid-memsafety", True)] == 6 and runnable[("valid-memsafety", False)] == 0
    assert not [t for t in tasks if not t.runnable]
    lp64 = [t for t in tasks if t.data_model == "LP64"]
    assert lp64 and all("Velroyen" in t.id for t in lp64)


def test_verify_flags_reach_every_run_of_ours(taskdir):
    """`bench --allocation succeeds` passes the flag to each `looprover verify` it starts."""
    task = collect_tasks(taskdir / "chc")[0]
    cmd = runner.verify_command(task, 5, "bmc", None, flags=["--allocation", "succeeds"])
    assert cmd[cmd.index("--allocation") + 1] == "succeeds"
    assert "--allocation" not in runner.verify_command(task, 5, "bmc", None)


def test_engine_variants_run_side_by_side(taskdir, tmp_path):
    """`--engine portfolio,portfolio:engines=bmc` runs two configurations in one bench run, each labelled by its
    spec, the variant with its setting passed as an option; a variant with an unknown setting is a usage error."""
    task = collect_tasks(taskdir / "chc")[0]
    cmd = runner.verify_command(task, 5, "portfolio:engines=bmc+kinduction:cores=1", None)
    assert cmd[cmd.index("--engine") + 1] == "portfolio"
    assert "portfolio.engines=bmc+kinduction" in cmd and "portfolio.cores=1" in cmd
    out = tmp_path / "v.csv"
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(taskdir / "chc"), "-q", "--timeout", "20",
                        "--engine", "kinduction,kinduction:invariants=off", "--output", str(out)],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert sorted(row["solver"] for row in csv.DictReader(out.open())) == ["kinduction", "kinduction:invariants=off"]
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(taskdir / "chc"), "-q",
                        "--engine", "kinduction:nosuch=1"], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "unknown option kinduction.nosuch" in r.stderr


def test_a_tasks_default_property_is_reachability_then_termination_then_no_overflow(tmp_path):
    from looprover.bench.tasks import choose_property
    (tmp_path / "no-overflow.prp").write_text(NO_OVERFLOW)
    (tmp_path / "termination.prp").write_text(TERMINATION)
    (tmp_path / "unreach-call.prp").write_text(UNREACH)
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")

    def default(*props):
        (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: 'a.c'\nproperties:\n" + "".join(
            f"  - property_file: {p}.prp\n    expected_verdict: true\n" for p in props))
        return choose_property(read_task_definition(tmp_path / "t.yml"))[0].name

    assert default("no-overflow", "termination") == "termination"
    assert default("no-overflow", "termination", "unreach-call") == "unreach-call"
    assert default("no-overflow") == "no-overflow"


def test_the_sources_are_byte_compiled_before_runs_are_timed():
    """Without it, under PYTHONDONTWRITEBYTECODE every run of a never-compiled checkout compiled its modules
    again (about 0.3 s of each run's time)."""
    import importlib.util
    from looprover.bench import runner, tasks
    cached = Path(importlib.util.cache_from_source(tasks.__file__))
    cached.unlink(missing_ok=True)
    runner.byte_compile()
    assert cached.exists()
