"""The front-end over real inputs: the team's examples and every SV-COMP task input load or are UNSUPPORTED."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.program import interp

PROGRAMS = Path(__file__).parent / "programs"


def _tasks(shared: Path) -> list[tuple[Path, str]]:
    out = []
    for y in sorted((shared / "benchmarks" / "svcomp").rglob("*.yml")):
        d = yaml.safe_load(y.read_text())
        dm = (d.get("options") or {}).get("data_model", "ILP32")
        files = d["input_files"]
        for f in [files] if isinstance(files, str) else files:
            out.append((y.parent / f, dm))
    return out


def _smoke_run(p) -> None:
    """A few concrete runs: the CFA must be deterministic for fixed inputs (disjoint branch guards)."""
    for inputs in ([], [1, 2, 3, 4, 5, 6], [-1] * 6, [7, 0, 100, 3, 2, 1]):
        res = interp.run(p, interp.InputOracle(p, inputs), max_steps=3000, signed_overflow="wrap")
        assert res.outcome != "nondeterministic", (p.name, inputs, res.loc)


def _load_or_unsupported(path: Path, dm: str, counts: dict) -> None:
    try:
        p = load_c_program(path, dm)
    except UnsupportedError as e:
        assert e.where is not None, f"{path}: {e}"
        counts.setdefault("unsupported", []).append(f"{path.name}: {e.construct}")
        return
    assert p.data_model == dm and p.source_file == str(path)
    assert p.assertions() or "termination" in str(path), f"{path}: no assertion"
    _smoke_run(p)
    counts.setdefault("loaded", []).append(path.name)


def test_shared_examples(shared_dir, tmp_path):
    counts: dict = {}
    ex = shared_dir / "examples"
    for f in sorted(ex.glob("*.c")):
        _load_or_unsupported(f, "ILP32", counts)
    # the *_N.c.in templates, instantiated
    (tmp_path / "sv.h").write_text((ex / "sv.h").read_text())
    for t in sorted(ex.glob("*_N.c.in")):
        f = tmp_path / t.name.replace("_N.c.in", "_10.c")
        f.write_text(t.read_text().replace("@N@", "10"))
        _load_or_unsupported(f, "ILP32", counts)
    assert not counts.get("unsupported"), counts.get("unsupported")


@pytest.mark.slow
def test_svcomp_task_inputs(shared_dir):
    counts: dict = {}
    tasks = _tasks(shared_dir)
    assert tasks
    for path, dm in tasks:
        _load_or_unsupported(path, dm, counts)
    loaded = len(counts.get("loaded", []))
    assert loaded >= 0.9 * len(tasks), counts.get("unsupported")


@pytest.mark.parametrize("name", ["counter_unsafe.c", "zilu_style.c"])
def test_repo_programs(name):
    p = load_c_program(PROGRAMS / name)
    _smoke_run(p)
