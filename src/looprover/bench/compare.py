"""`looprover bench --compare A.csv B.csv`: two earlier bench runs side by side, per engine.

Why: a change that should not alter verdicts (a refactoring) or should only add some (a new technique) is judged by
comparing a run before it with a run after it, on the same tasks and limits. The table gives, per engine, the
counts and CPU time of both runs; then every task one run solved and the other did not, with the time the solving
run took, marked `near the limit` when that time was within 10 % of `--timeout` (such a task flips with the
machine's load, not with the code).
"""
from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from looprover.errors import InputError

NEAR = 0.9        # a solving run within the last 10 % of the limit counts as near the limit


@dataclass(frozen=True)
class Row:
    task: str
    property: str
    result: str        # correct | wrong | unknown | unsupported | invalid
    status: str
    wall: float
    cpu: float
    score: int


def read_results(path: Path) -> dict[str, dict[tuple[str, str], Row]]:
    """solver -> (task, property) -> row of a bench results CSV."""
    try:
        fh = path.open(newline="")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    out: dict[str, dict[tuple[str, str], Row]] = defaultdict(dict)
    with fh:
        reader = csv.DictReader(fh)
        need = {"task", "property", "result", "status", "wall_time", "cpu_time", "score"}
        if reader.fieldnames is None or not need <= set(reader.fieldnames):
            raise InputError(f"{path}: not a looprover bench results CSV")
        for r in reader:
            solver = r.get("solver") or r.get("engine") or "?"
            out[solver][(r["task"], r["property"])] = Row(r["task"], r["property"], r["result"], r["status"],
                                                         float(r["wall_time"] or 0), float(r["cpu_time"] or 0),
                                                         int(r["score"] or 0))
    return out


def _summary(rows: dict[tuple[str, str], Row]) -> dict[str, float]:
    """The counts of one run; `compare` lists the tasks only one run has, so partial runs stay readable."""
    ran = [r for r in rows.values() if r.result not in ("unsupported", "invalid")]
    return {
        "runs": len(ran),
        "correct TRUE": sum(r.result == "correct" and r.status == "TRUE" for r in ran),
        "correct FALSE": sum(r.result == "correct" and r.status == "FALSE" for r in ran),
        "wrong": sum(r.result == "wrong" for r in ran),
        "unknown": sum(r.result == "unknown" for r in ran),
        "score": sum(r.score for r in ran),
        "CPU time (s)": round(sum(r.cpu for r in ran), 1),
    }


def compare(a: Path, b: Path, timeout: float | None) -> list[str]:
    """The comparison as text lines."""
    ra, rb = read_results(a), read_results(b)
    lines: list[str] = [f"A = {a}", f"B = {b}"]
    for solver in sorted(set(ra) | set(rb)):
        sa, sb = _summary(ra.get(solver, {})), _summary(rb.get(solver, {}))
        lines.append("")
        lines.append(f"{solver}:" + " " * max(1, 24 - len(solver)) + f"{'A':>10} {'B':>10}")
        for key in sa:
            lines.append(f"  {key:<24}{sa[key]:>10} {sb[key]:>10}")
        for name, one, other in (("A", ra.get(solver, {}), rb.get(solver, {})),
                                 ("B", rb.get(solver, {}), ra.get(solver, {}))):
            missing = [k for k in one if k not in other]
            if missing:        # e.g. an unfinished run: its tasks are compared, the others counted here
                lines.append(f"  runs in {name} only, not compared: {len(missing)}")
            gained = sorted(k for k, r in one.items() if r.result == "correct" and k in other and
                            other[k].result != "correct")
            if not gained:
                continue
            lines.append(f"  solved in {name} only ({len(gained)}):")
            for k in gained:
                r, o = one[k], other[k]
                near = timeout is not None and r.wall >= NEAR * timeout
                lines.append(f"    {k[0]} [{k[1]}]: {r.status} in {r.wall:.1f} s"
                             f"{' (near the limit)' if near else ''}; other run: {o.status} {o.wall:.1f} s")
    return lines
