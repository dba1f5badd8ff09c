"""Under CI=true a test that skips for a missing ../shared or gcc fails instead (tests/conftest.py), so CI cannot
pass without running them; elsewhere (a user's fresh clone) it skips as before."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = '''
import pytest

def test_shared():
    pytest.skip("/nowhere/shared is absent (fresh clone without the team's shared folder)")

@pytest.mark.skipif(True, reason="gcc is not installed")
def test_gcc():
    pass

def test_other():
    pytest.skip("cbmc is not installed")
'''


def _pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_skips.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(CONFTEST.parent)        # the conftest loads `helpers.fake_engines`
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_required_skips_fail_under_ci(tmp_path):
    r = _pytest(tmp_path, "true")
    assert r.returncode != 0, r.stdout
    assert "1 failed" in r.stdout and "1 skipped" in r.stdout and "1 error" in r.stdout, r.stdout
    assert "CI=true requires what this test skipped for" in r.stdout


def test_they_skip_elsewhere(tmp_path):
    r = _pytest(tmp_path, None)
    assert r.returncode == 0 and "3 skipped" in r.stdout, r.stdout
