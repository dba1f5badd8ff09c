"""A child's native stderr (z3's internal failures) is kept out of the user's output and put in the reason."""
from __future__ import annotations

import os
import sys

from looprover.processes import Child


def _z3_like_failure() -> None:
    sys.stderr.write("a progress line\n")          # Python's stderr: still the user's
    sys.stderr.flush()
    os.write(2, b"ASSERTION VIOLATION\nFile: ../src/muz/spacer/spacer_global_generalizer.cpp\nLine: 337\n")
    os._exit(114)


def _grandchild_progress() -> int:
    child = Child("grandchild", _say, "from the grandchild\n")
    ok, value = child.result()
    child.kill()
    return value


def _say(text: str) -> int:
    sys.stderr.write(text)
    sys.stderr.flush()
    os.write(2, b"native noise\n")
    return 1


def test_native_stderr_goes_to_the_reason_and_python_stderr_to_the_user(capfd):
    child = Child("z3-like", _z3_like_failure)
    ok, why = child.result()
    child.kill()
    assert not ok and "exit code 114" in why and "ASSERTION VIOLATION" in why and "Line: 337" in why
    out, err = capfd.readouterr()
    assert "a progress line" in err and "ASSERTION" not in err and "ASSERTION" not in out


def test_a_grandchilds_progress_reaches_the_user_and_its_native_noise_does_not(capfd):
    child = Child("child", _grandchild_progress, daemon=False)
    ok, value = child.result()
    child.kill()
    assert ok and value == 1
    out, err = capfd.readouterr()
    assert "from the grandchild" in err and "native noise" not in err + out
