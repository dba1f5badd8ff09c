"""Results CSVs as `looprover bench` writes them, from a few fields per row (for the compare and plot tests)."""
from __future__ import annotations

import csv
from pathlib import Path

from looprover.bench.runner import CSV_FIELDS

DEFAULTS = {"property": "unreach-call", "expected": "true", "score": 0, "engine": "bmc", "reason": "r",
            "solver": "bmc"}


def write_results(path: Path, rows: list[dict]) -> Path:
    """One CSV row per dict: the given fields over DEFAULTS, `wall_time` = `cpu_time` and `input` = `task` unless
    given."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        w.writeheader()
        for row in rows:
            full = {**DEFAULTS, "input": row["task"], "wall_time": row.get("cpu_time"), **row}
            w.writerow(full)
    return path
