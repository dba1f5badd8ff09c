"""Reference solvers (z3's Spacer) and several engines side by side in `looprover bench`."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from looprover.bench.reference import ONLY_HORN
from looprover.bench.runner import RunResult, run_command, solved_differences
from looprover.bench.tasks import BenchTask
from looprover.cli import build_parser

# y = 2x holds forever (safe, needs an invariant: BMC cannot prove it); y reaches 20 after 10 steps (unsafe)
HORN = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int))
  (=> (and (inv x y) (= x1 (+ x 1)) (= y1 (+ y 2))) (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) {bad}) false)))
(check-sat)
"""
SAFE = HORN.format(bad="(not (= y (* 2 x)))")
UNSAFE = HORN.format(bad="(= y 20)")
GLOBAL_STAT = "time.spacer.solve.reach.gen.global"     # only present when global guidance ran


def _reference(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "looprover.bench.reference", *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("solver", ["z3-spacer", "z3-spacer-global"])
@pytest.mark.parametrize("text, status", [(SAFE, "TRUE"), (UNSAFE, "FALSE")], ids=["safe", "unsafe"])
def test_reference_solver_on_horn_files(tmp_path, solver, text, status):
    f = tmp_path / "p.smt2"
    f.write_text(text)
    r = _reference(str(f), "--solver", solver, "--timeout", "20", "--json", "--memory", "2048")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == status and out["engine"] == solver and out["property"] == "check-sat"
    assert {"reason", "time", "file", "expected", "counterexample", "stats"} <= set(out)
    if status == "FALSE":      # the setting takes effect: global guidance runs only when asked for
        assert (GLOBAL_STAT in out["stats"]["z3"]) == (solver == "z3-spacer-global")


def test_reference_solver_reads_only_horn_files(tmp_path):
    c = tmp_path / "a.c"
    c.write_text("int main(void) { return 0; }\n")
    r = _reference(str(c), "--solver", "z3-spacer", "--timeout", "5", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "UNKNOWN"
    assert json.loads(r.stdout)["reason"] == ONLY_HORN
    r = _reference(str(tmp_path / "gone.smt2"), "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "ERROR"


def test_run_command_and_engine_list(tmp_path):
    t = BenchTask("x.smt2", tmp_path / "x.smt2", "check-sat", "check-sat", True, "ILP32", tmp_path)
    assert run_command(t, 7, "z3-spacer-global", 512)[2:] == [
        "looprover.bench.reference", str(t.input_file), "--solver", "z3-spacer-global", "--timeout", "7",
        "--json", "--memory", "512"]
    assert run_command(t, 7, "bmc", None)[2:4] == ["looprover", "verify"]
    args = build_parser().parse_args(["bench", "d", "--engine", "bmc, z3-spacer,bmc"])
    assert args.engine == ["bmc", "z3-spacer"]
    assert build_parser().parse_args(["bench", "d"]).engine == ["portfolio"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "d", "--engine", "bmc,nope"])


def test_solved_differences(tmp_path):
    def res(tid, status, solver):
        return RunResult(BenchTask(tid, tmp_path / tid, "check-sat", "check-sat", True, "ILP32", tmp_path),
                         status, solver, "", solver=solver)
    results = [res("a", "TRUE", "e1"), res("a", "UNKNOWN", "e2"), res("b", "TRUE", "e1"), res("b", "TRUE", "e2"),
               res("c", "FALSE", "e1"), res("c", "TRUE", "e2")]       # e1 is wrong on c: not solved
    assert solved_differences(results, ["e1", "e2"]) == [
        {"solved_by": "e1", "not_by": "e2", "tasks": ["a"]}, {"solved_by": "e2", "not_by": "e1", "tasks": ["c"]}]


@pytest.fixture
def horn_dir(tmp_path) -> Path:
    d = tmp_path / "chc"
    for sub, text in (("sat", SAFE), ("unsat", UNSAFE)):
        (d / sub).mkdir(parents=True)
        (d / sub / "p.smt2").write_text(text)
    (d / "expected.csv").write_text("file,expected\nsat/p.smt2,sat\nunsat/p.smt2,unsat\n")
    return d


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "looprover", "bench", *args, "-q"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_bench_with_several_engines(horn_dir, tmp_path):
    out = tmp_path / "r.csv"
    r = _bench(str(horn_dir), "--engine", "bmc,z3-spacer,z3-spacer-global", "--timeout", "3", "--jobs", "2",
               "--json", "--output", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert list(s["engines"]) == ["bmc", "z3-spacer", "z3-spacer-global"]
    bmc = s["engines"]["bmc"]           # BMC finds the counterexample but cannot prove the safe file
    assert (bmc["correct_true"], bmc["correct_false"], bmc["unknown"], bmc["score"]) == (0, 1, 1, 1)
    for name in ("z3-spacer", "z3-spacer-global"):
        z = s["engines"][name]
        assert (z["correct_true"], z["correct_false"], z["wrong_true"] + z["wrong_false"], z["unknown"],
                z["score"], z["max_score"]) == (1, 1, 0, 0, 3, 3)
    assert s["differences"] == [{"solved_by": "z3-spacer", "not_by": "bmc", "tasks": ["sat/p.smt2"]},
                                {"solved_by": "z3-spacer-global", "not_by": "bmc", "tasks": ["sat/p.smt2"]}]
    rows = list(csv.DictReader(out.open()))
    assert [(row["task"], row["solver"]) for row in rows] == [
        (t, e) for t in ("sat/p.smt2", "unsat/p.smt2") for e in ("bmc", "z3-spacer", "z3-spacer-global")]


def test_bench_text_summary_with_several_engines(horn_dir, tmp_path):
    r = _bench(str(horn_dir), "--engine", "bmc,z3-spacer", "--filter", "unsat", "--timeout", "5",
               "--output", str(tmp_path / "r.csv"))
    assert r.returncode == 0, r.stderr
    for word in ("bmc", "z3-spacer", "correct FALSE", "score (SV-COMP)", "CPU time", "results: "):
        assert word in r.stdout
    assert "every task solved by one engine is solved by all" in r.stdout


def _fake_golem(tmp_path: Path, answer: str) -> Path:
    """A stand-in for the Golem binary: records its arguments, prints `answer`."""
    exe = tmp_path / "golem"
    exe.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'args'}\necho '{answer}'\n")
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("answer, status", [("sat", "TRUE"), ("unsat", "FALSE"), ("unknown", "UNKNOWN")])
def test_golem_reference_solver_runs_the_named_engine(tmp_path, monkeypatch, answer, status):
    f = tmp_path / "p.smt2"
    f.write_text(SAFE)
    monkeypatch.setenv("LOOPROVER_GOLEM", str(_fake_golem(tmp_path, answer)))
    r = _reference(str(f), "--solver", "golem-split-tpa", "--timeout", "20", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == status and out["engine"] == "golem-split-tpa"
    assert (tmp_path / "args").read_text().split() == ["--engine", "split-tpa", str(f)]
    if status == "UNKNOWN":
        assert out["reason"] == "golem split-tpa: unknown"


def test_golem_reference_solver_says_when_golem_is_missing(tmp_path, monkeypatch):
    f = tmp_path / "p.smt2"
    f.write_text(SAFE)
    monkeypatch.delenv("LOOPROVER_GOLEM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))         # no golem there (nor anything else it could find)
    r = subprocess.run([sys.executable, "-m", "looprover.bench.reference", str(f), "--solver", "golem", "--json"],
                       capture_output=True, text=True, timeout=60)
    out = json.loads(r.stdout)
    assert out["status"] == "UNKNOWN" and "LOOPROVER_GOLEM" in out["reason"]
    assert build_parser().parse_args(["bench", "d", "--engine", "golem-split-tpa,tpa"]).engine == [
        "golem-split-tpa", "tpa"]
