"""`verify --timeout T` is a hard limit: the job (front-end and engine) runs in a child process killed at T
plus a second, whatever the engine does; Ctrl-C leaves no process behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from looprover import cli
from looprover.bench.runner import kill_group

SLACK = 3.0     # the limit is T + 2 s; a loaded CI machine gets a little more before the test calls it a failure


def test_an_engine_that_ignores_its_deadline_is_stopped(capsys, fake_engines, chc_file):
    t0 = time.monotonic()
    code = cli.main(["verify", str(chc_file), "--engine", "fake_hang", "--timeout", "1.5", "--json"])
    elapsed = time.monotonic() - t0
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "UNKNOWN"
    assert data["reason"].startswith("timeout while running the engine") and data["engine"] == "fake_hang"
    assert elapsed < 1.5 + 2 + SLACK
    assert data["encoding"] is None                 # not known: the child never reported one


def test_a_portfolio_cuts_its_stuck_engines_before_the_job_is_killed(capsys, fake_engines, chc_file):
    """The portfolio kills an engine that ignores the deadline half a grace before the job's own kill, so its
    answer still names each engine and why (with equal graces the job's kill won the race and the reasons
    were lost)."""
    code = cli.main(["verify", str(chc_file), "--engine", "portfolio", "--option", "portfolio.engines=fake_hang",
                     "--timeout", "1.5", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "UNKNOWN" and data["engine"] == "portfolio", data
    assert "fake_hang: timeout (killed at the deadline)" in data["reason"], data["reason"]


def test_a_stopped_run_still_reports_the_encoding_the_user_forced(capsys, fake_engines, chc_file):
    for flag, encoding in (("--bitvector", "bit-vector"), ("--integer", "integer")):
        cli.main(["verify", str(chc_file), "--engine", "fake_hang", "--timeout", "0.5", flag, "--json"])
        data = json.loads(capsys.readouterr().out)
        assert data["reason"].startswith("timeout while") and data["encoding"] == encoding


def test_the_front_end_counts_against_the_same_limit(capsys, chc_file, monkeypatch):
    from looprover import jobs

    def slow_load(path, data_model="ILP32", *more, **options):
        time.sleep(60)
    monkeypatch.setattr(jobs, "load_program", slow_load)
    t0 = time.monotonic()
    code = cli.main(["verify", str(chc_file), "--engine", "bmc", "--timeout", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "UNKNOWN" and data["engine"] == "frontend"
    assert data["reason"].startswith("timeout while loading the program")
    assert time.monotonic() - t0 < 1 + 2 + SLACK


def test_a_crashing_job_is_unknown(capsys, fake_engines, chc_file):
    code = cli.main(["verify", str(chc_file), "--engine", "fake_crash", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "UNKNOWN" and "crashed while running the engine" in data["reason"]


HANG = """
import sys, time
from looprover import cli, engines
from looprover.engines.base import Engine

class Hang(Engine):
    name = "hang"
    def solve(self, program, task, run):
        while True:
            time.sleep(0.05)

sys.modules["hangmod"] = sys.modules[__name__]
engines.ENGINES["hang"] = "hangmod:Hang"
import looprover.portfolio as p
p.choose_engines = lambda task, run: ["hang", "hang"]
print("started", flush=True)
sys.exit(cli.main(["verify", sys.argv[1], "--engine", sys.argv[2], "--timeout", "60"]))
"""


def _start(script, *args) -> subprocess.Popen:
    """The command in a session of its own, with SIGINT's default action even when the tests themselves run
    with SIGINT ignored (a background job of a non-interactive shell, `nohup`), which a child inherits and
    Python then keeps: such a command rightly ignores Ctrl-C."""
    return subprocess.Popen([sys.executable, str(script), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, message", [(signal.SIGINT, cli.EXIT_INTERRUPTED, "error: interrupted"),
                                                (signal.SIGTERM, cli.EXIT_TERMINATED, "error: terminated")])
def test_ctrl_c_and_sigterm_leave_no_process_behind(tmp_path, chc_file, sig, code, message):
    """Ctrl-C (a terminal signals the whole process group) exits 130, SIGTERM (`kill PID`, to the command
    alone) exits 143; after either, no job or engine process is left."""
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent(HANG))
    for engine in ("hang", "portfolio"):        # the portfolio's engines are grandchildren of the command
        proc = _start(script, chc_file, engine)
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.5)                     # the job and its engines are running now
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == code, err
        assert err.strip().splitlines()[-1] == message and "Traceback" not in err
        for _ in range(50):
            try:
                os.killpg(proc.pid, 0)      # anything left in the group?
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"processes of {engine} survived {sig.name}")


@pytest.mark.slow
def test_ctrl_c_during_z3_work_of_the_command_is_not_swallowed(tmp_path, chc_file):
    """A Ctrl-C that lands while the command itself is inside a z3 call (here: before the job starts) still
    ends the command with 130 once the call returns; z3's own SIGINT handler used to cancel the call and
    drop the interrupt, and the run went on to its time limit."""
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent(HANG).replace('print("started", flush=True)', textwrap.dedent("""
        import z3
        resolve = cli.resolve_job
        def slow_resolve(*args):
            print("started", flush=True)
            a, b, c = z3.Ints("a b c")
            s = z3.Solver()
            s.set(timeout=4000)
            s.add(a > 1, b > 1, c > 1, a * a * a + b * b * b == c * c * c)
            s.check()                       # hard: runs to its 4 s timeout
            return resolve(*args)
        cli.resolve_job = slow_resolve
        """)))
    proc = _start(script, chc_file, "hang")
    assert proc.stdout.readline().strip() == "started"
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        kill_group(proc.pid)
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert err.strip().splitlines()[-1] == "error: interrupted"


def test_a_memory_limit_too_small_to_load_is_out_of_memory(tmp_path):
    """`--memory` applies to the job's process; when it leaves no room for the front-end's library, the answer
    is UNKNOWN(out of memory), never an input error or a traceback."""
    c = tmp_path / "p.c"
    c.write_text("extern void reach_error(void);\nint main(void) { int x = 1; if (x != 1) reach_error(); return 0; }\n")
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", str(c), "--memory", "30", "--json"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "UNKNOWN" and data["reason"].startswith("out of memory")


def _verify_json(*argv):
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", *map(str, argv), "--json"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("mb", [10, 60])
def test_a_limit_below_what_looprover_loads_says_so(chc_file, mb):
    """--memory 10 used to end in 'internal error: ImportError' (a module that could not be mapped) and a
    little more in engines killed by SIGABRT (z3 could not start a thread): the job now loads its code first
    and answers out of memory when the limit leaves too little, naming both sizes."""
    data = _verify_json(chc_file, "--memory", mb)
    assert data["status"] == "UNKNOWN", data
    assert data["reason"].startswith(f"out of memory (--memory {mb} MB: looprover maps "), data["reason"]


@pytest.mark.parametrize("engine", ["bmc", "tpa", "portfolio"])
def test_a_tight_limit_is_never_an_internal_error(chc_file, engine):
    """Between 'too little to start' and enough, native code dies of a failed allocation (SIGSEGV, SIGABRT):
    reported as out of memory with the evidence, never as an internal error."""
    for mb in (100, 106, 200):     # just above what looprover maps before it starts (about 98 MB), and plenty
        data = _verify_json(chc_file, "--memory", mb, "--engine", engine, "--timeout", "20")
        assert data["status"] in ("TRUE", "UNKNOWN"), data
        assert data["status"] == "TRUE" or data["reason"].startswith("out of memory"), (mb, data["reason"])


def test_a_native_crash_under_a_limit_is_out_of_memory(capsys, fake_engines, chc_file, monkeypatch):
    from looprover import portfolio
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_abort"])
    for engine in ("fake_abort", "portfolio"):      # the job's own process, and an engine under the portfolio
        assert cli.main(["verify", str(chc_file), "--engine", engine, "--memory", "4096", "--json"]) == 0
        reason = json.loads(capsys.readouterr().out)["reason"]
        assert "out of memory (--memory 4096 MB: the process crashed with SIGABRT" in reason, reason
        assert cli.main(["verify", str(chc_file), "--engine", engine, "--json"]) == 0      # no limit: a crash
        reason = json.loads(capsys.readouterr().out)["reason"]
        assert "crashed" in reason and "SIGABRT" in reason and "out of memory" not in reason, reason


def test_engines_that_all_ran_out_of_memory_make_one_reason(capsys, fake_engines, chc_file, monkeypatch):
    from looprover import portfolio
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_abort", "fake_segv"])
    assert cli.main(["verify", str(chc_file), "--memory", "4096", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reason"] == "out of memory (--memory 4096 MB; in every engine)", data["reason"]
