"""`bench --cluster`: runs on a Dask cluster of two worker processes on 127.0.0.1 that the test starts, one of them
killed halfway; the results are those of the local run."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from looprover import cli
from looprover.bench import cluster as bench_cluster
from looprover.bench.runner import run_tasks
from looprover.bench.tasks import collect_tasks

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).parent / "dask"

# a fake verifier: logs "<worker pid> start|end <file>", takes a second, answers what the file says
FAKE = """import json, os, sys, time
log, f = sys.argv[1], sys.argv[2]
def note(what):
    with open(log, "a") as fh:
        fh.write(f"{os.getppid()} {what} {f}\\n")
note("start")
time.sleep(1)
note("end")
status = open(f).read().strip()
print(json.dumps({"status": status, "engine": "fake", "reason": f"says {status}"}))
"""


def _start(cmd: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


@pytest.fixture
def dask_cluster(tmp_path):
    """A scheduler and two single-thread workers without nannies (a killed worker stays dead), all on 127.0.0.1.
    Yields (address, {worker pid: process})."""
    if not DASK.exists():
        pytest.skip(f"{DASK} is missing (distributed not installed in this environment)")
    from distributed import Client
    sched_file = tmp_path / "scheduler.json"
    procs = [_start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sched_file)], tmp_path / "scheduler.log")]
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.read_text().strip():
                break
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for i in range(2):
            procs.append(_start([str(DASK), "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--no-nanny", "--no-dashboard", "--name", f"w{i}"], tmp_path / f"worker{i}.log"))
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        yield address, {p.pid: p for p in procs[1:]}
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.fixture
def fake_tasks(tmp_path):
    """Eight CHC-style tasks whose fake verifier answers take a second each."""
    root = tmp_path / "tasks"
    root.mkdir()
    answers = ["TRUE", "FALSE", "UNKNOWN", "TRUE", "TRUE", "FALSE", "TRUE", "UNKNOWN"]
    rows = []
    for i, status in enumerate(answers):
        (root / f"t{i}.smt2").write_text(status)
        rows.append(f"t{i}.smt2,{'unsat' if status == 'FALSE' else 'sat'}")
    (root / "expected.csv").write_text("file,expected\n" + "\n".join(rows) + "\n")
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    return collect_tasks(root), script


def _key(results):
    return [(r.task.id, r.status, r.engine, r.reason, r.category) for r in results]


@pytest.mark.slow
def test_a_worker_killed_halfway_changes_no_result(dask_cluster, fake_tasks, tmp_path):
    address, workers = dask_cluster
    tasks, script = fake_tasks
    log = tmp_path / "runs.log"
    local = run_tasks(tasks, timeout=30, jobs=2, command=lambda t: [sys.executable, str(script), str(log),
                                                                    str(t.input_file)])
    log.write_text("")
    killed: list[tuple[int, str]] = []

    def running(pid: int) -> list[str]:
        started, ended = {}, set()
        for line in log.read_text().splitlines():
            who, what, f = line.split(" ", 2)
            if int(who) == pid:
                (ended.add(f) if what == "end" else started.setdefault(f, True))
        return [f for f in started if f not in ended]

    def on_result(r):
        if len(seen) == 2 and not killed:       # halfway (of what the two workers run): kill one mid-run
            for _ in range(300):
                busy = [(pid, running(pid)) for pid in workers]
                pid, files = next(((p, fs) for p, fs in busy if fs), (None, []))
                if pid:
                    workers[pid].send_signal(signal.SIGKILL)
                    killed.append((pid, files[0]))
                    break
                time.sleep(0.05)
        seen.append(r)

    seen: list = []
    remote = run_tasks(tasks, timeout=30, cluster=address, on_result=on_result,
                       command=lambda t: [sys.executable, str(script), str(log), str(t.input_file)])
    assert killed, "no worker was running a task after two results"
    assert _key(remote) == _key(local)
    assert len(seen) == len(tasks)
    pid, lost = killed[0]
    starts = [line.split(" ", 2) for line in log.read_text().splitlines() if " start " in line]
    restarts = [who for who, _, f in starts if f == lost]
    assert len(restarts) == 2 and restarts[1] != str(pid)                  # re-run on the other worker
    # the results collected before the kill are not run again (Dask recomputes every result a lost worker holds
    # for a client; a run that finished there while the kill was under way may be, as it was not collected yet)
    collected = [str(r.task.input_file) for r in seen[:2]]
    assert all(sum(f == c for _, _, f in starts) == 1 for c in collected)
    assert all(sum(f == str(t.input_file) for _, _, f in starts) in (1, 2) for t in tasks)


@pytest.mark.slow
def test_bench_command_on_the_cluster_answers_the_examples(dask_cluster, tmp_path):
    address, _ = dask_cluster
    out = tmp_path / "r.csv"
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(REPO / "examples"), "--json", "-q",
                        "--timeout", "60", "--output", str(out), "--cluster", address, "--no-plots"],
                       capture_output=True, text=True, timeout=400, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["runs"] == 2 and s["correct_true"] == 1 and s["correct_false"] == 1, s


def test_an_unreachable_scheduler_is_an_input_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench_cluster, "CONNECT_TIMEOUT", 1)
    code = cli.main(["bench", str(REPO / "examples"), "-q", "--output", str(tmp_path / "r.csv"),
                     "--cluster", "tcp://127.0.0.1:9"])
    assert code == cli.EXIT_INPUT_ERROR
    assert "--cluster tcp://127.0.0.1:9: cannot reach the Dask scheduler" in capsys.readouterr().err
    assert os.path.exists(tmp_path / "r.csv.partial") is False


def test_a_run_that_fails_on_its_worker_is_unknown_with_the_reason(monkeypatch):
    """What the client does with a worker's exception, without a cluster: a fake client whose futures fail."""
    from distributed.scheduler import KilledWorker

    from looprover.bench.tasks import BenchTask

    class Future:
        def __init__(self, key, exc):
            self.key, self.exc = key, exc

        def result(self):
            raise self.exc

        def release(self):
            pass

    class Client:
        loop = None

        def __init__(self, *args, **kwargs):
            self.n = 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, *args, key, **kwargs):
            self.n += 1
            return Future(key, ModuleNotFoundError("No module named 'looprover'") if self.n == 1 else
                          KilledWorker(key, SimpleNamespace(address="tcp://127.0.0.1:1"), 3))

        def cancel(self, futures):
            pass

    import distributed
    monkeypatch.setattr(distributed, "Client", Client)
    class AsCompleted(list):
        futures = ()

        def __init__(self, futures, loop=None):
            super().__init__(futures)
    monkeypatch.setattr(distributed, "as_completed", AsCompleted)
    task = BenchTask("t.smt2", Path("t.smt2"), "check-sat", "check-sat", True, "ILP32", Path("expected.csv"))
    a, b = bench_cluster.run_on_cluster("tcp://x:1", [(task, "tpa", ["v"]), (task, "bmc", ["v"])], 10, 1)
    assert (a.status, a.solver, a.reason) == ("UNKNOWN", "tpa", "error: on the cluster: ModuleNotFoundError: "
                                                                "No module named 'looprover'")
    assert (b.status, b.solver) == ("UNKNOWN", "bmc") and b.reason.startswith("error: the cluster lost every worker")
