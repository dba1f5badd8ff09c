"""`scripts/profile_engine.py` (issue 27's profile): it must see the engine's work, which `verify` does in a child
process, so the profile of a TPA run names TPA's functions and z3's solver calls."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "profile_engine.py"

COUNTER = """(set-logic HORN)
(declare-fun inv (Int) Bool)
(assert (forall ((x Int)) (=> (= x 0) (inv x))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x) (< x 10) (= y (+ x 1))) (inv y))))
(assert (forall ((x Int)) (=> (and (inv x) (> x 10)) false)))
(check-sat)
"""


def test_the_profile_sees_the_engine(tmp_path):
    f = tmp_path / "counter.smt2"
    f.write_text(COUNTER)
    saved = tmp_path / "run.prof"
    out = subprocess.run([sys.executable, str(SCRIPT), str(f), "--engine", "tpa", "--timeout", "30",
                          "--save", str(saved), "--top", "60"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("sat"), out.stdout[:200]                      # verify's own answer first
    assert "in z3's native library" in out.stdout
    assert "z3.check" in out.stdout                                            # solver calls, by API function
    assert "tpa/core.py" in out.stdout and "engines/tpa.py" in out.stdout       # the engine ran in this process
    assert saved.stat().st_size > 0
