"""The LABMC transformation on C programs (no engine): the reports of the abstraction, and its C output, which
gcc compiles and CBMC agrees with. Programs: tests/helpers/programs. The `labmc` engine end to end:
tests/engines/test_labmc_engine.py."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from looprover.frontend.c import load_c_program
from looprover.program.emit_c import emit_c
from looprover.transforms.labmc import abstract

PROGRAMS = Path(__file__).resolve().parents[1] / "helpers" / "programs"


def load(name: str):
    return load_c_program(PROGRAMS / name, "ILP32")


def test_reports_describe_forms():
    res = abstract(load("reset_unsafe.c"))
    assert res.loops[0].accelerated["x"] == "reset"
    res = abstract(load("flag_unsafe.c"))
    assert "found" in {v.name for v in res.loops[0].classification.po_live}    # never read in the loop
    res = abstract(load("flag_io_unsafe.c"))
    assert res.loops[0].accelerated["found"] == "non-recurrent"
    res = abstract(load("multipath_unsafe.c"))
    assert res.loops[0].accelerated["x"] == "multi-path (shared)"


# ------------------------------------------------------------------------------------ emitted C
@pytest.mark.parametrize("name", ["labmc_xmit_safe.c", "labmc_fragtest_safe.c", "nested_safe.c",
                                  "reset_unsafe.c", "flag_safe.c", "array_unsafe.c"])
def test_transform_output_compiles(name, gcc, tmp_path):
    code = emit_c(abstract(load(name)).program)
    src = tmp_path / "abs.c"
    src.write_text(code)
    r = subprocess.run([gcc, "-std=gnu11", "-c", "-o", str(tmp_path / "abs.o"), str(src)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_cli_transform_labmc(capsys):
    from looprover import cli
    code = cli.main(["transform", "--technique", "labmc", str(PROGRAMS / "labmc_accel_safe.c")])
    out = capsys.readouterr().out
    assert code == 0
    assert "labmc_cnt_" in out and "labmc_k_" in out


@pytest.mark.parametrize("name,expected", [("labmc_accel_safe.c", "VERIFICATION SUCCESSFUL"),
                                           ("labmc_xmit_safe.c", "VERIFICATION SUCCESSFUL")])
def test_cbmc_agrees_on_the_abstraction(name, expected, tmp_path):
    """CBMC on the emitted abstraction (bounded loops: --unwind M+1 with unwinding assertions)."""
    cbmc = shutil.which("cbmc")
    if cbmc is None:
        pytest.skip("cbmc is not installed")
    res = abstract(load(name))
    src = tmp_path / "abs.c"
    src.write_text(emit_c(res.program))
    r = subprocess.run([cbmc, str(src), "--unwind", str(res.max_bound + 2), "--unwinding-assertions"],
                       capture_output=True, text=True, timeout=120)
    assert expected in r.stdout, r.stdout[-2000:]
