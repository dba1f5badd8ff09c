#!/usr/bin/env python3
"""Copy one CHC-COMP category's tasks with a known answer out of a checkout of the competition's benchmarks.

    python scripts/collect_chc_category.py REPO CATEGORY OUT [--every N] [--offset K]

REPO is a git checkout of `leventeBajczi/chc-comp25-benchmarks` (the CHC-COMP 2025 selection), CATEGORY a
`.set` file name without suffix (`LIA-Lin-Arrays`). A task is taken when its `.yml` has an
`expected_verdict` of `true` (the solvers that answered said `sat`) or `false` (`unsat`); tasks without one
(no tool solved them) or with `inconsistent` are left out. `--every N --offset K` keeps every N-th of them in
sorted order starting at the K-th, per directory, so a dev set and an unseen set can be cut apart without
looking at the tasks. The `.smt2` files are copied unmodified under OUT, with `expected.csv` (`file,expected`,
as `bench` reads it) and `provenance.csv` (repository, commit, upstream path, where the answer comes from).
Why a script: the dev set's provenance is then a command, not a claim.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from collections import defaultdict
from pathlib import Path, PurePosixPath

import yaml

REPO_NAME = "leventeBajczi/chc-comp25-benchmarks"
EXPECTED = {"true": "sat", "false": "unsat"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("category")
    ap.add_argument("out", type=Path)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--offset", type=int, default=0)
    a = ap.parse_args(argv)
    git = _git_dir(a.repo)
    commit = _git(git, "rev-parse", "HEAD").strip()
    tasks = _git(git, "show", f"HEAD:{a.category}.set").split()
    known: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for task in sorted(tasks):
        meta = yaml.safe_load(_git(git, "show", f"HEAD:{task}"))
        verdicts = {str(p.get("expected_verdict")).lower() for p in meta.get("properties", [])
                    if "expected_verdict" in p}
        if len(verdicts) != 1 or next(iter(verdicts)) not in EXPECTED:
            continue
        smt2 = str(PurePosixPath(task).parent / meta["input_files"])
        known[str(PurePosixPath(task).parent)].append((smt2, EXPECTED[verdicts.pop()]))
    rows = [r for d in sorted(known) for i, r in enumerate(known[d]) if i % a.every == a.offset]
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "expected.csv", "w", newline="") as ef, open(a.out / "provenance.csv", "w", newline="") as pf:
        ew, pw = csv.writer(ef), csv.writer(pf)
        ew.writerow(["file", "expected"])
        pw.writerow(["file", "expected", "repo", "commit", "upstream_path", "expected_from"])
        for smt2, expected in rows:
            target = a.out / smt2
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_git(git, "show", f"HEAD:{smt2}"))
            ew.writerow([smt2, expected])
            pw.writerow([smt2, expected, REPO_NAME, commit, smt2,
                         "expected_verdict in CHC-COMP 2025 task .yml (true=sat, false=unsat; consensus of solvers)"])
    print(f"{len(rows)} of {sum(len(v) for v in known.values())} tasks with a known answer "
          f"({len(tasks)} in {a.category}) written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
