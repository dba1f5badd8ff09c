"""The evidence behind a bench run's answers: counterexample depth, the compiled harness, witnesses (SV-COMP's
for C, models and derivations for Horn clauses).

Why in the bench: a verifier is judged by whether its answers can be checked elsewhere, so a dev-set run
should say, per engine, how many witnesses it wrote and how many an independent check confirmed, and how
many FALSE harnesses reached the error when compiled and run. `bench --witnesses DIR` has every run write
its witness there (`verify --witness`) and then checks it with `looprover validate` in a process of its own,
with the task's time limit: the validator runs no engine, so a witness it confirms does not depend on the
engine's own reasoning.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterable

from looprover.bench.tasks import BenchTask

C_SUFFIXES = (".c", ".i")


def witness_path(directory: Path, task: BenchTask, engine: str) -> Path | None:
    """Where the run of `engine` on `task` writes its witness: an SV-COMP witness for C, a model or a
    derivation for Horn clauses (`witness/chc.py`)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{task.id}.{task.property}.{engine}")
    if task.input_file.suffix == ".smt2":
        return directory / f"{name}.witness"
    if task.input_file.suffix not in C_SUFFIXES:
        return None
    return directory / f"{name}.witness.yml"


def validate_command(task: BenchTask, witness: Path, timeout: float) -> list[str]:
    """`looprover validate` on the task's definition (so the program's files, property and data model are
    the task's own) or, for a task without a .yml, its input file."""
    target = task.origin if task.origin.suffix == ".yml" else task.input_file
    return [sys.executable, "-m", "looprover", "validate", str(target), "--witness", str(witness),
            "--property", task.property_spec, "--data-model", task.data_model, "--timeout", f"{timeout:g}",
            "--json"]


def validate_witness(task: BenchTask, witness: Path, timeout: float, grace: float) -> str:
    """`confirmed`, `rejected: why` or `unknown: why` -- the validator's answer, or why there is none."""
    try:
        proc = subprocess.run(validate_command(task, witness, timeout), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=timeout + grace)
    except subprocess.TimeoutExpired:
        return f"unknown: validator killed after {timeout + grace:g} s"
    for line in reversed(proc.stdout.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        status, reason = data.get("status", "unknown"), data.get("reason", "")
        return status if status == "confirmed" else f"{status}: {reason}"[:200]
    return f"unknown: validator exit code {proc.returncode}: {proc.stderr.strip()[-150:]}"


def read_evidence(data: dict) -> dict:
    """The evidence fields of one `verify --json` answer: counterexample depth, harness outcome, witness kind
    (and, where no witness was written, why not)."""
    cex = data.get("counterexample") or {}
    harness = data.get("harness") or {}
    witness = data.get("witness") or {}
    return {
        "depth": cex.get("length") if isinstance(cex, dict) else None,
        "harness": "" if not harness else {True: "reached", False: "not reached"}.get(
            harness.get("reached_error"), f"not run: {harness.get('detail', '')}"[:80]),
        "witness": (witness.get("kind") or "") if isinstance(witness, dict) else "",
        # why no witness was written (the writer's note), for the runs that wrote none
        "witness_check": f"not written: {witness.get('note', '')}"[:200]
        if isinstance(witness, dict) and witness and not witness.get("file") else "",
    }


def summarize_evidence(results: Iterable) -> dict:
    """Per engine (the bench `solver`): witnesses written by kind and how the validator judged them, and the
    FALSE answers whose compiled harness reached the error."""
    out: dict[str, dict] = {}
    for r in results:
        if not r.ran or r.status not in ("TRUE", "FALSE"):
            continue
        e = out.setdefault(r.solver, {"violation_witnesses": 0, "violation_confirmed": 0,
                                      "correctness_witnesses": 0, "correctness_confirmed": 0,
                                      "false_answers": 0, "harness_run": 0, "harness_reached": 0,
                                      "not_confirmed": [], "not_written": []})
        if r.status == "FALSE":
            e["false_answers"] += 1
            if r.harness in ("reached", "not reached"):
                e["harness_run"] += 1
                e["harness_reached"] += r.harness == "reached"
        if r.witness in ("violation", "correctness"):
            e[f"{r.witness}_witnesses"] += 1
            if r.witness_check == "confirmed":
                e[f"{r.witness}_confirmed"] += 1
            elif r.witness_check:
                e["not_confirmed"].append(f"{r.task.id}: {r.witness_check}")
        elif r.witness_check.startswith("not written: "):
            e["not_written"].append(f"{r.task.id}: {r.witness_check.removeprefix('not written: ')}")
    return out


# SV-COMP (2027): a correct answer scores only with a witness a validator confirms; memory safety's TRUE needs none
NEEDS_WITNESS = {"unreach-call": ("TRUE", "FALSE"), "no-overflow": ("TRUE", "FALSE"),
                 "termination": ("TRUE", "FALSE"), "valid-memsafety": ("FALSE",)}


def confirmed_scores(results: Iterable) -> dict:
    """Per engine and property: correct TRUE/FALSE answers, how many of them have a confirmed witness, and the
    score as it stands next to the score that counts a correct answer only with its confirmed witness (a wrong
    answer costs the same either way)."""
    out: dict[str, dict[str, dict]] = {}
    for r in results:
        if not r.ran:
            continue
        e = out.setdefault(r.solver, {}).setdefault(r.task.property, {
            "correct_true": 0, "true_confirmed": 0, "correct_false": 0, "false_confirmed": 0,
            "score": 0, "score_confirmed": 0})
        e["score"] += r.score
        if not r.category.startswith("correct"):
            e["score_confirmed"] += r.score
            continue
        kind = r.status.lower()
        e[f"correct_{kind}"] += 1
        ok = r.witness_check == "confirmed"
        e[f"{kind}_confirmed"] += ok
        if ok or r.status not in NEEDS_WITNESS.get(r.task.property, ("TRUE", "FALSE")):
            e["score_confirmed"] += r.score
    return out


def print_confirmed_scores(scores: dict) -> None:
    for engine, props in scores.items():
        for prop, e in props.items():
            print(f"witnesses {engine} {prop}: {e['true_confirmed']} of {e['correct_true']} correct TRUE and "
                  f"{e['false_confirmed']} of {e['correct_false']} correct FALSE confirmed; score "
                  f"{e['score_confirmed']} counting only confirmed answers, {e['score']} plain")


def print_evidence(evidence: dict) -> None:
    for engine, e in evidence.items():
        print(f"evidence {engine}: {e['violation_witnesses']} violation witnesses ({e['violation_confirmed']} "
              f"confirmed), {e['correctness_witnesses']} correctness witnesses ({e['correctness_confirmed']} "
              f"confirmed); compiled harness reached the error for {e['harness_reached']} of "
              f"{e['harness_run']} FALSE runs it was run on ({e['false_answers']} FALSE)")
        for line in e["not_confirmed"]:
            print(f"  not confirmed: {line}")
        for line in e["not_written"]:
            print(f"  not written: {line}")
