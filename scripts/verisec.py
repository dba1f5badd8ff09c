#!/usr/bin/env python3
"""Run looprover on the Verisec buffer-overflow suite (valid-memsafety) at one or more buffer sizes.

    python scripts/verisec.py VERISEC_DIR [--size 2 --size 10] [--timeout 10] [--limit 30] [--filter SUBSTR]
                              [--engine portfolio] [--command verify|check] [--csv OUT.csv [--resume]]
    python scripts/verisec.py --tables RUN1.csv RUN2.csv ...      (the tables of earlier runs together)

Verisec has no `.yml` tasks: `expected.csv` lists `file,expected` (`false` for `_bad`, `true` for `_ok`), and
`lib/stubs.c` (library stubs) is linked with every test case, and so is the program's own helper file where the
suite has one (`programs/apps/<program>/<vulnerability>/<program>.c`, e.g. `bind.c`: the functions the test cases
declare in `<program>.h`; `helper_files`). A leak found first (`FALSE(valid-memtrack)`: valid-memsafety includes
it, the suite's labels do not) counts as UNKNOWN. Each run is
`looprover verify FILE [HELPER] STUBS --property valid-memsafety -DBASE_SZ=N --json`, one at a time (the machine is
shared). With `--command check`, each run is `looprover check ... --kinds memory-access --json` instead (the
same time budget for all of a file's checks): a file counts FALSE when one access check is violated, TRUE when
all are safe, else UNKNOWN. The tables: per file and size the answer and time; per size found (`_bad` FALSE), proved (`_ok` TRUE),
WRONG, unknown; the constructs that made runs UNKNOWN, most frequent first; and the time to find each
overflow against the size.

`lib/stubs.c` as shipped does not compile (`TYPECAST_MEMCPY 0` dereferences `void *`, which gcc and clang
reject), so the runs use a temporary copy of `lib/` with the stubs' own other variant, `TYPECAST_MEMCPY 1`
(copies through `unsigned char *`). The suite itself is read, never changed.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def select(rows: list[dict], limit: int | None, substr: str | None) -> list[dict]:
    """The rows matching `substr`, at most `limit` of them spread evenly over the (sorted) list."""
    rows = sorted((r for r in rows if substr is None or substr in r["file"]), key=lambda r: r["file"])
    if limit is None or len(rows) <= limit:
        return rows
    return [rows[i * len(rows) // limit] for i in range(limit)]


def stubs_copy(lib: Path, into: Path) -> Path:
    """A copy of `lib/` whose stubs compile (see the module docstring); returns the copied stubs.c."""
    dest = into / "lib"
    shutil.copytree(lib, dest)
    h = dest / "stubs.h"
    h.write_text(re.sub(r"#define\s+TYPECAST_MEMCPY\s+0", "#define TYPECAST_MEMCPY 1", h.read_text()))
    return dest / "stubs.c"


def helper_files(file: Path) -> list[Path]:
    """The program's own helper file of a test case: `<program>.c` in the `programs/apps/<program>/<vulnerability>/`
    directory above it, where the suite has one (see its README)."""
    for d in file.parents:
        if d.parent.parent.name == "apps":
            own = d / f"{d.parent.name}.c"
            return [own] if own.is_file() and own != file else []
    return []


def run_one(file: Path, stubs: Path, size: int, timeout: float, engine: str, command: str = "verify",
            options: tuple[str, ...] = ()) -> dict:
    files = [str(file), *map(str, helper_files(file)), str(stubs)]
    opts = [a for o in options for a in ("--option", o)]
    if command == "check":
        cmd = [sys.executable, "-m", "looprover", "check", *files, "--kinds", "memory-access", f"-DBASE_SZ={size}",
               "--timeout", f"{timeout:g}", "--check-timeout", f"{timeout:g}", "--engine", engine, *opts, "--json"]
    else:
        cmd = [sys.executable, "-m", "looprover", "verify", *files, "--property", "valid-memsafety",
               f"-DBASE_SZ={size}", "--timeout", f"{timeout:g}", "--engine", engine, *opts, "--json"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        return {"status": "UNKNOWN", "reason": "killed (no answer 30 s after the timeout)", "time": timeout + 30}
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"status": "UNKNOWN", "reason": f"no JSON (exit {r.returncode}): {r.stderr.strip()[:200]}",
                "time": 0.0}
    if data.get("status") == "ERROR":
        return {"status": "UNKNOWN", "reason": "input error: " + data.get("error", ""), "time": 0.0}
    if data.get("result") == "FALSE(valid-memtrack)":
        # a leak is a violation of valid-memsafety but not the overflow the suite's labels speak of
        return {**data, "status": "UNKNOWN", "reason": "a memory leak (valid-memtrack), not an overflow: "
                + data.get("reason", "")}
    return data if command == "verify" else file_verdict(data)


def harness_columns(harness: dict | None) -> dict:
    """A FALSE's compiled harness (`verify --json`'s `harness`): reached / not reached / not run, and its time,
    which is part of the run's time: the time to find without it is `time - harness_time`."""
    if not harness:
        return {"harness": "", "harness_time": 0.0}
    said = {True: "reached", False: "not reached", None: "not run"}[harness.get("reached_error")]
    return {"harness": said, "harness_time": float(harness.get("seconds") or 0.0)}


def file_verdict(data: dict) -> dict:
    """A `check --json` answer as one verdict for the file: FALSE when an access check is violated, TRUE when
    every one is safe, else UNKNOWN."""
    checks = data.get("checks") or []
    if "status" in data:            # the file itself is UNKNOWN (a construct the front-end refuses)
        return {"status": data["status"], "reason": data.get("reason", ""), "time": data.get("time", 0.0)}
    bad = [c for c in checks if c["status"] == "violated"]
    open_ = [c for c in checks if c["status"] == "unknown"]
    status = "FALSE" if bad else "UNKNOWN" if open_ else "TRUE"
    first = (bad or open_ or [{}])[0]
    reason = (f"{len(checks)} checks, {len(bad)} violated, {len(open_)} unknown"
              + (f"; first: {first.get('reason', '')}" if first else ""))
    return {"status": status, "reason": reason, "time": data.get("time", 0.0), "engine": first.get("engine", "")}


def category(reason: str) -> str:
    """What made a run UNKNOWN, without the place (`unsupported: X at f.c:3` -> `unsupported: X`)."""
    reason = re.sub(r" at \S+:\d+(:\d+)?\)?$", "", reason or "")
    if reason.startswith("input error: "):
        reason = "input error: " + re.sub(r"^\S+:\d+: (error: )?", "", reason[len("input error: "):])
        reason = reason.split(";")[0]
    if reason.startswith(("unsupported", "input error")):
        return reason[:100]
    return "undecided in time" if "timeout" in reason else reason[:100]


def outcome(expected: bool, status: str) -> str:
    if status == "UNKNOWN":
        return "unknown"
    if (status == "TRUE") == expected:
        return "found" if not expected else "proved"
    return "WRONG"


def read_results(paths: list[Path]) -> list[dict]:
    """The rows of earlier runs' --csv files, with their numbers and Booleans read back."""
    rows = []
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                rows.append({**r, "size": int(r["size"]), "expected": r["expected"] == "True",
                             "time": float(r["time"]), "harness": r.get("harness") or "",
                             "harness_time": float(r.get("harness_time") or 0.0)})
    return rows


def print_tables(results: list[dict], sizes: list[int]) -> list[dict]:
    """Per size the counts, the causes of UNKNOWN, the time to find each overflow by size, and the wrong
    answers (returned)."""
    print()
    print(f"{'BASE_SZ':>8} {'bad':>5} {'found':>6} {'ok':>5} {'proved':>7} {'WRONG':>6} {'unknown':>8}")
    for size in sizes:
        rs = [r for r in results if r["size"] == size]
        c = collections.Counter(r["outcome"] for r in rs)
        print(f"{size:>8} {sum(not r['expected'] for r in rs):>5} {c['found']:>6} {sum(r['expected'] for r in rs):>5}"
              f" {c['proved']:>7} {c['WRONG']:>6} {c['unknown']:>8}")
    print("\nwhat made runs UNKNOWN (runs, over all sizes):")
    for why, n in collections.Counter(category(r["reason"]) for r in results
                                      if r["outcome"] == "unknown").most_common():
        print(f"  {n:4}  {why}")
    found = sorted({r["file"] for r in results if r["outcome"] == "found"})
    if found:
        print("\ntime to find the overflow (s) by BASE_SZ:")
        print("  " + "".join(f"{s:>9}" for s in sizes) + "  file")
        by = {(r["file"], r["size"]): r for r in results}
        for f in found:
            cells = [by.get((f, s)) for s in sizes]
            print("  " + "".join(f"{c['time']:9.2f}" if c and c["outcome"] == "found" else f"{'-':>9}"
                                 for c in cells) + f"  {f}")
        times = [sorted(r["time"] for r in results if r["size"] == s and r["outcome"] == "found") for s in sizes]
        print("  " + "".join(f"{statistics.median(t):9.2f}" if t else f"{'-':>9}" for t in times) + "  median")
        print("  " + "".join(f"{t[-1]:9.2f}" if t else f"{'-':>9}" for t in times) + "  max")
        # the verdict's own time: the compiled harness that follows it is evidence, not search
        bare = [sorted(r["time"] - r["harness_time"] for r in results if r["size"] == s and r["outcome"] == "found")
                for s in sizes]
        print("  " + "".join(f"{statistics.median(t):9.2f}" if t else f"{'-':>9}" for t in bare)
              + "  median without the compiled harness")
        print("\ncompiled harness of the FALSE answers, by BASE_SZ:")
        for s in sizes:
            c = collections.Counter(r["harness"] or "none" for r in results if r["size"] == s and r["status"] == "FALSE")
            print(f"  {s:>8}: " + ", ".join(f"{n} {what}" for what, n in sorted(c.items())))
    wrong = [r for r in results if r["outcome"] == "WRONG"]
    for r in wrong:
        print(f"WRONG: {r['file']} at BASE_SZ={r['size']}: {r['status']} ({r['engine']}: {r['reason']})")
    return wrong


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, nargs="?", help="the Verisec directory (with expected.csv and lib/)")
    ap.add_argument("--tables", type=Path, nargs="+", metavar="CSV",
                    help="run nothing: print the tables of earlier runs' --csv files together (e.g. one per size)")
    ap.add_argument("--size", type=int, action="append", help="BASE_SZ (repeatable; default 2)")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--limit", type=int, default=30, help="at most this many files, spread over the suite")
    ap.add_argument("--filter", help="only files whose path contains this")
    ap.add_argument("--engine", default="portfolio")
    ap.add_argument("--option", action="append", default=[], metavar="ENGINE.OPTION=VALUE",
                    help="an engine setting passed to every run (repeatable), e.g. spacer.arrays=strings")
    ap.add_argument("--command", choices=("verify", "check"), default="verify",
                    help="verify each file (valid-memsafety), or check each of its accesses (`looprover check`)")
    ap.add_argument("--csv", type=Path, help="also write one row per run here, as each run ends")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows already in --csv and run only the (file, size) pairs it lacks (a run of "
                         "the whole suite at 60 s takes over an hour per size)")
    args = ap.parse_args(argv)
    if args.tables:
        results = read_results(args.tables)
        return 1 if print_tables(results, sorted({r["size"] for r in results})) else 0
    if args.dir is None:
        ap.error("the Verisec directory is needed (or --tables)")
    sizes = args.size or [2]
    with open(args.dir / "expected.csv", newline="") as fh:
        rows = select(list(csv.DictReader(fh)), args.limit, args.filter)
    fields = ["file", "size", "expected", "status", "outcome", "time", "engine", "reason", "harness",
              "harness_time"]
    results = read_results([args.csv]) if args.resume and args.csv and args.csv.exists() else []
    done = {(r["file"], r["size"]) for r in results}
    out = open(args.csv, "a" if results else "w", newline="") if args.csv else None
    writer = csv.DictWriter(out, fieldnames=fields) if out else None
    if writer and not results:
        writer.writeheader()
    with tempfile.TemporaryDirectory(prefix="verisec-") as tmp:
        stubs = stubs_copy(args.dir / "lib", Path(tmp))
        for size in sizes:
            todo = [row for row in rows if (row["file"], size) not in done]
            print(f"== BASE_SZ={size}: {len(todo)} files" + (f" ({len(rows) - len(todo)} done earlier)"
                                                           if len(todo) < len(rows) else "")
                  + f", --timeout {args.timeout:g}, --engine {args.engine}, {args.command}")
            for row in todo:
                expected = row["expected"].strip().lower() == "true"
                data = run_one(args.dir / row["file"], stubs, size, args.timeout, args.engine, args.command,
                               tuple(args.option))
                res = {"file": row["file"], "size": size, "expected": expected, "status": data["status"],
                       "outcome": outcome(expected, data["status"]), "time": float(data.get("time") or 0.0),
                       "engine": data.get("engine") or "", "reason": data.get("reason") or "",
                       **harness_columns(data.get("harness"))}
                results.append(res)
                if writer:
                    writer.writerow(res)
                    out.flush()
                print(f"  {res['outcome']:<8} {res['status']:<8} {res['time']:7.2f}s  {row['file']}"
                      + (f"   [{category(res['reason'])}]" if res["status"] == "UNKNOWN" else ""), flush=True)
    if out:
        out.close()
    wrong = print_tables([r for r in results if r["size"] in sizes], sizes)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
