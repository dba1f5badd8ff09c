"""`bench --runexec`: runs measured and limited by BenchExec's RunExecutor (cgroups), and the fallback without."""
from __future__ import annotations

import sys

import pytest

from looprover import cli
from looprover.bench import runexec
from looprover.bench.runner import run_tasks
from looprover.bench.tasks import collect_tasks

@pytest.fixture
def one_task(chc_file):
    """A CHC directory with one safe task (the fake commands below ignore it; the fallback test verifies it)."""
    (chc_file.parent / "expected.csv").write_text(f"file,expected\n{chc_file.name},sat\n")
    return chc_file.parent


@pytest.fixture
def cgroups():
    ex, why = runexec.executor()
    if ex is None:
        pytest.skip(f"BenchExec's RunExecutor cannot run here: {why}")


def _python(code: str):
    return lambda t: [sys.executable, "-c", code]


CHILD = """import sys, time
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
open(sys.argv[1], "w").close()
"""
PARENT = """import json, os, subprocess, sys, time
child, flag = sys.argv[1], sys.argv[2]
subprocess.Popen([sys.executable, child, flag])
while not os.path.exists(flag):
    time.sleep(0.02)
print(json.dumps({"status": "TRUE", "engine": "fake", "reason": "done"}))
"""


def test_a_run_is_measured_by_its_cgroup(cgroups, one_task, tmp_path):
    """CPU time is the cgroup's: it includes a child that used 0.3 s and that the verifier never waited for (wait4
    does not count such a child)."""
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "parent.py").write_text(PARENT)
    cmd = [sys.executable, str(tmp_path / "parent.py"), str(tmp_path / "child.py"), str(tmp_path / "done")]
    r, = run_tasks(collect_tasks(one_task), timeout=60, command=lambda t: cmd, runexec=True)
    assert (r.status, r.engine, r.reason, r.category) == ("TRUE", "fake", "done", "correct-true")
    assert r.cpu_time >= 0.3
    assert r.memory_mb is not None and r.memory_mb > 1       # the cgroup's peak


def test_a_run_is_killed_at_its_wall_time(cgroups, one_task):
    r, = run_tasks(collect_tasks(one_task), timeout=1, grace=0.5, command=_python("import time; time.sleep(60)"),
                   runexec=True)
    assert r.status == "UNKNOWN" and r.reason.startswith("timeout (killed after")


def test_the_memory_limit_is_on_the_whole_run(cgroups, one_task):
    code = "import time; x = b'x' * (400 * 2**20); time.sleep(5)"
    r, = run_tasks(collect_tasks(one_task), timeout=20, command=_python(code), memory=100, runexec=True)
    assert (r.status, r.reason) == ("UNKNOWN", "memout (the run's processes reached 100 MB)")


def test_without_cgroups_bench_warns_and_runs_as_usual(one_task, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runexec, "executor", lambda: (None, "cgroup subsystems missing: freezer"))
    out = tmp_path / "r.csv"
    assert cli.main(["bench", str(one_task), "--runexec", "-q", "--timeout", "20", "--output", str(out),
                     "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert "warning: --runexec: cgroup subsystems missing: freezer; the runs are measured with wait4" in err
    assert "counter.smt2" in out.read_text()


def test_runexec_is_for_local_runs(one_task, tmp_path, capsys):
    assert cli.main(["bench", str(one_task), "--runexec", "--cluster", "tcp://127.0.0.1:9", "-q",
                     "--output", str(tmp_path / "r.csv")]) == cli.EXIT_INPUT_ERROR
    assert "cannot be combined with --cluster" in capsys.readouterr().err
