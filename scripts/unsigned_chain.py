#!/usr/bin/env python3
"""Time against n for the unsigned chain `unsigned y = x; y += 3u; (n times) assert(y == x + 3n)` (issue 14).

Writes the program for each n, safe and unsafe (the assertion off by one), runs
`python -m looprover verify FILE --engine E --timeout T --json` one at a time and prints a table of verdict and
wall time per engine and n. `--src DIR` runs another checkout's sources (e.g. a `git worktree` of an older commit)
for a before/after comparison.

    python scripts/unsigned_chain.py [--n 20,80,160,400,1000] [--engines bmc,kinduction,tpa] [--timeout 10]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = """extern void reach_error(void);
void __VERIFIER_assert(int c) {{ if (!c) reach_error(); }}
extern unsigned int __VERIFIER_nondet_uint(void);
int main(void) {{
  unsigned int x = __VERIFIER_nondet_uint();
  unsigned int y = x;
{body}
  __VERIFIER_assert(y == x + {total}u);
  return 0;
}}
"""


def program(n: int, unsafe: bool) -> str:
    return PROGRAM.format(body="\n".join("  y += 3u;" for _ in range(n)), total=3 * n + (1 if unsafe else 0))


def run(path: Path, engine: str, timeout: float, src: str | None) -> tuple[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "looprover", "verify", str(path), "--engine", engine,
                        "--timeout", f"{timeout:g}", "--json"], capture_output=True, text=True, env=env,
                       timeout=timeout + 60)
    wall = time.monotonic() - t0
    try:
        return json.loads(p.stdout)["status"], wall
    except (ValueError, KeyError):
        return f"error ({p.returncode})", wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="20,80,160,400,1000")
    ap.add_argument("--engines", default="bmc,kinduction,tpa")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--src", help="PYTHONPATH of the looprover sources to run (default: the installed one)")
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    print(f"{'engine':<11} {'variant':<7} " + " ".join(f"{'n=' + str(n):>16}" for n in ns))
    with tempfile.TemporaryDirectory() as tmp:
        for engine in args.engines.split(","):
            for unsafe in (False, True):
                cells = []
                for n in ns:
                    f = Path(tmp) / f"chain_{n}_{'unsafe' if unsafe else 'safe'}.c"
                    f.write_text(program(n, unsafe))
                    status, wall = run(f, engine, args.timeout, args.src)
                    cells.append(f"{status:>8} {wall:6.2f}s")
                print(f"{engine:<11} {'unsafe' if unsafe else 'safe':<7} " + " ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
