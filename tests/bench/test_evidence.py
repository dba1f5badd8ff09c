"""bench --witnesses: every C run writes its witness, `looprover validate` checks it, the summary counts both."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from looprover.bench.evidence import confirmed_scores, read_evidence, summarize_evidence, witness_path
from looprover.bench.runner import RunResult
from looprover.bench.tasks import BenchTask

REPO = Path(__file__).resolve().parents[2]


def _task(tid: str, suffix: str = ".c") -> BenchTask:
    return BenchTask(tid, Path(f"/x/{tid}{suffix}"), "unreach-call", "unreach-call", False, "ILP32",
                     Path(f"/x/{tid}.yml"))


def test_evidence_fields_of_a_verify_answer():
    data = {"status": "FALSE", "counterexample": {"length": 1027}, "harness": {"reached_error": True},
            "witness": {"kind": "violation", "file": "w.yml"}}
    assert read_evidence(data) == {"depth": 1027, "harness": "reached", "witness": "violation", "witness_check": ""}
    assert read_evidence({"status": "TRUE", "counterexample": None, "harness": None, "witness": None}) == \
        {"depth": None, "harness": "", "witness": "", "witness_check": ""}
    none = {"status": "TRUE", "witness": {"kind": None, "file": None, "note": "no correctness witness: why"}}
    assert read_evidence(none)["witness_check"] == "not written: no correctness witness: why"
    assert read_evidence({"harness": {"reached_error": False}})["harness"] == "not reached"
    assert read_evidence({"harness": {"reached_error": None, "detail": "no time left"}})["harness"] == \
        "not run: no time left"


def test_c_and_horn_clause_tasks_get_witness_paths_of_their_own_kind(tmp_path):
    assert witness_path(tmp_path, _task("a/b"), "portfolio").name.endswith(".witness.yml")
    horn = witness_path(tmp_path, _task("a/b", ".smt2"), "portfolio")
    assert horn.parent == tmp_path and horn.suffix == ".witness"


def test_counts_per_engine_name_what_was_not_confirmed():
    def run(status, witness, check, harness="", solver="portfolio"):
        return RunResult(_task(f"t{status}{check}"), status, solver, "", solver=solver, witness=witness,
                         witness_check=check, harness=harness)
    ev = summarize_evidence([run("FALSE", "violation", "confirmed", "reached"),
                             run("FALSE", "violation", "rejected: no error", "not reached"),
                             run("FALSE", "", "", "not run: no time left"),
                             run("TRUE", "correctness", "confirmed"), run("TRUE", "", ""),
                             run("UNKNOWN", "", "")])["portfolio"]
    assert (ev["violation_witnesses"], ev["violation_confirmed"]) == (2, 1)
    assert (ev["correctness_witnesses"], ev["correctness_confirmed"]) == (1, 1)
    assert (ev["false_answers"], ev["harness_run"], ev["harness_reached"]) == (3, 2, 1)
    assert ev["not_confirmed"] == ["tFALSErejected: no error: rejected: no error"]
    ev = summarize_evidence([run("TRUE", "", "not written: no correctness witness: why")])["portfolio"]
    assert ev["not_written"] == ["tTRUEnot written: no correctness witness: why: no correctness witness: why"]


def test_bench_writes_and_validates_witnesses(tmp_path):
    """The repository's examples: the FALSE's violation witness replays, the TRUE's invariants are proved
    inductive by the validator, and the FALSE's compiled harness reaches reach_error."""
    out, wdir = tmp_path / "r.csv", tmp_path / "w"
    r = subprocess.run([sys.executable, "-m", "looprover", "bench", str(REPO / "examples"), "--json", "-q",
                        "--no-plots", "--timeout", "60", "--output", str(out), "--witnesses", str(wdir)],
                       capture_output=True, text=True, timeout=400, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    ev = json.loads(r.stdout)["evidence"]["portfolio"]
    assert ev["violation_witnesses"] == ev["violation_confirmed"] == 1, ev
    assert ev["harness_reached"] == 1
    rows = {row["task"]: row for row in csv.DictReader(out.open())}
    assert rows["count_unsafe.yml"]["witness_check"] == "confirmed"
    assert int(rows["count_unsafe.yml"]["depth"]) > 0
    assert len(list(wdir.glob("*.witness.yml"))) == ev["violation_witnesses"] + ev["correctness_witnesses"]


def test_scores_counting_only_confirmed_answers():
    def run(tid, status, expected, check, prop="unreach-call"):
        t = BenchTask(tid, Path(f"/x/{tid}.c"), prop, prop, expected, "ILP32", Path(f"/x/{tid}.yml"))
        return RunResult(t, status, "portfolio", "", solver="portfolio", witness_check=check)
    scores = confirmed_scores([run("a", "TRUE", True, "confirmed"), run("b", "TRUE", True, "not written: why"),
                               run("c", "FALSE", False, "unknown: why"), run("d", "TRUE", False, "confirmed"),
                               run("e", "TRUE", True, "", "valid-memsafety")])["portfolio"]
    u = scores["unreach-call"]
    assert (u["correct_true"], u["true_confirmed"], u["correct_false"], u["false_confirmed"]) == (2, 1, 1, 0)
    assert (u["score"], u["score_confirmed"]) == (2 + 2 + 1 - 32, 2 - 32)
    assert scores["valid-memsafety"]["score_confirmed"] == 2       # memory safety's TRUE needs no witness
