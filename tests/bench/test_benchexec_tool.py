"""The BenchExec tool-info module, checked with BenchExec's own `test_tool_info` and benchmark-definition reader."""
from __future__ import annotations

import datetime
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("benchexec")

import benchexec.result as result  # noqa: E402

from looprover.bench.benchexec_tool import Tool, answer_to_result  # noqa: E402
from looprover.bench.tasks import collect_tasks  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOL = "looprover.bench.benchexec_tool"
XML = REPO / "contrib" / "benchexec" / "looprover-dev.xml"


@pytest.mark.parametrize("line, expected", [
    ("TRUE", result.RESULT_TRUE_PROP),
    ("FALSE(unreach-call)", result.RESULT_FALSE_REACH),
    ("FALSE(termination)", result.RESULT_FALSE_TERMINATION),
    ("FALSE(valid-deref)", result.RESULT_FALSE_DEREF),
    ("FALSE(no-overflow)", result.RESULT_FALSE_OVERFLOW),
    ("FALSE(valid-memtrack)", result.RESULT_FALSE_MEMTRACK),
    ("FALSE(some-new-property)", "false(some-new-property)"),
    ("UNKNOWN", result.RESULT_UNKNOWN),
    ("sat", result.RESULT_TRUE_PROP),
    ("unsat", result.RESULT_FALSE_PROP),
    ("unknown", result.RESULT_UNKNOWN),
    ("  engine:   portfolio:bmc", None),
    ("TRUE but more", None),
])
def test_answer_lines(line, expected):
    assert answer_to_result(line) == expected


def _run(lines, value=0, signal=None):
    return SimpleNamespace(output=lines, exit_code=SimpleNamespace(value=value, signal=signal))


def test_determine_result_takes_the_first_answer_and_reports_errors():
    tool = Tool()
    assert tool.determine_result(_run(["warning: x", "FALSE(unreach-call)", "  TRUE"])) == "false(unreach-call)"
    assert tool.determine_result(_run(["error: x.c: no such file"], value=1)) == "ERROR (exit code 1)"
    assert tool.determine_result(_run([], value=None, signal=9)) == "ERROR (signal 9)"


def test_benchexec_test_tool_info(tmp_path):
    """BenchExec's own checker loads the module, finds the executable, reads the version, builds command lines
    (from a real task definition too) and analyses sample outputs."""
    outputs = {"false.txt": "FALSE(unreach-call)\n  engine:   portfolio:bmc\n",
               "true.txt": "TRUE\n  engine:   portfolio:kinduction\n",
               "unsat.txt": "unsat\n", "unknown.txt": "UNKNOWN\n  reason:   timeout\n"}
    for name, text in outputs.items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "benchexec.test_tool_info", TOOL, "--no-container",
         "--tool-directory", str(Path(sys.executable).parent.parent),
         "--task-definition", "examples/count_safe.yml",
         "--tool-output", *(str(tmp_path / n) for n in outputs)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    out = proc.stderr
    assert proc.returncode == 0, out
    assert "Name of tool: “looprover”" in out
    assert f"Version: “{version('looprover')}”" in out
    assert "WARNING: Designated executable" not in out and "Determining version failed" not in out
    assert "'verify', '-SOME_OPTION', 'INPUT.FILE'" in out
    assert "'INPUT.FILE', '--property', 'PROPERTY.PRP', '--data-model', 'ILP32', '--timeout', '900'" in out
    assert "'examples/count_safe.c', '--property', 'examples/unreach-call.prp', '--data-model', 'ILP32'" in out
    assert "does not support tasks with multiple input files" in out        # said, not silently dropped
    for name, answer in [("false.txt", "false(unreach-call)"), ("true.txt", "true"), ("unsat.txt", "false"),
                         ("unknown.txt", "unknown")]:
        assert f"{name}”:\n\t“{answer}”" in out


def _load_benchmark(xml: Path, out: Path):
    from benchexec import benchexec as be, model
    config = be.BenchExec().create_argument_parser().parse_args(
        [str(xml), "--no-container", "--outputpath", f"{out}/"])
    return model.Benchmark(str(xml), config, datetime.datetime.now())


def _svcomp_task(root: Path, name: str, props: dict[str, bool], version_: str = "2.0") -> None:
    (root / f"{name}.c").write_text("int main() { return 0; }\n")
    lines = "".join(f"  - property_file: ../properties/{p}.prp\n    expected_verdict: {str(v).lower()}\n"
                    for p, v in props.items())
    (root / f"{name}.yml").write_text(f"format_version: '{version_}'\ninput_files: '{name}.c'\n"
                                      f"properties:\n{lines}options:\n  language: C\n  data_model: ILP32\n")


def test_benchmark_definition_reads_the_dev_sets_beside_the_repository(tmp_path):
    """The XML, copied into a repository laid out as ours (benchmarks in ../shared), loads with BenchExec's own
    reader and finds every task of every set in a miniature of the dev sets."""
    repo = tmp_path / "repo"
    (repo / "contrib" / "benchexec").mkdir(parents=True)
    xml = repo / "contrib" / "benchexec" / XML.name
    xml.write_text(XML.read_text())
    sv = tmp_path / "shared" / "benchmarks" / "svcomp"
    (sv / "properties").mkdir(parents=True)
    for p in ("unreach-call", "termination", "no-overflow", "valid-memsafety"):
        (sv / "properties" / f"{p}.prp").write_text(f"CHECK( init(main()), LTL(G ! {p}) )\n")
    (sv / "loops").mkdir()
    _svcomp_task(sv / "loops", "a", {"unreach-call": True, "termination": False})
    _svcomp_task(sv / "loops", "b", {"unreach-call": False, "no-overflow": True})
    chc = tmp_path / "shared" / "benchmarks" / "chc"
    (chc / "chc-comp25-LIA-Lin" / "properties").mkdir(parents=True)
    (chc / "chc-comp25-LIA-Lin" / "properties" / "check-sat.prp").write_text("")
    deep = chc / "chc-comp25-LIA-Lin" / "set" / "LIA" / "sub"
    deep.mkdir(parents=True)
    (deep / "c.smt2").write_text("(set-logic HORN)\n")
    (deep / "c.yml").write_text("format_version: '2.0'\ninput_files: c.smt2\noptions:\n  language: SMT-LIB\n"
                                "properties:\n- expected_verdict: false\n"
                                "  property_file: ../../../properties/check-sat.prp\n")
    (chc / "fm24-multiloop" / "sat").mkdir(parents=True)
    (chc / "fm24-multiloop" / "unsat").mkdir()
    (chc / "fm24-multiloop" / "sat" / "d.smt2").write_text("(set-logic HORN)\n")

    bench = _load_benchmark(xml, tmp_path / "out")
    assert bench.tool_name == "looprover"
    sets = {rs.real_name: [(Path(r.identifier).name, r.expected_results) for r in rs.runs]
            for rs in bench.run_sets}
    assert {k: [n for n, _ in v] for k, v in sets.items()} == {
        "unreach-call": ["a.yml", "b.yml"], "termination": ["a.yml"], "no-overflow": ["b.yml"],
        "valid-memsafety": [], "chc": ["c.yml"], "chc-fm24-sat": ["d.smt2"], "chc-fm24-unsat": []}
    (_, expected), = sets["chc"]
    assert [e.result for e in expected.values()] == [False]
    # one run definition per property: no two runs of one definition share a log file name
    for rs in bench.run_sets:
        names = [Path(r.identifier).name for r in rs.runs]
        assert len(names) == len(set(names))


def test_benchmark_definition_on_the_shared_dev_sets(shared_dir, tmp_path):
    """On the real dev sets: as many unreach-call runs as `looprover bench` finds, less the one task definition
    BenchExec rejects (format_version 1.1), which the XML excludes."""
    repo = tmp_path / "repo"
    (repo / "contrib" / "benchexec").mkdir(parents=True)
    xml = repo / "contrib" / "benchexec" / XML.name
    xml.write_text(XML.read_text())
    (tmp_path / "shared").symlink_to(shared_dir)
    bench = _load_benchmark(xml, tmp_path / "out")
    sets = {rs.real_name: rs.runs for rs in bench.run_sets}
    ours = [t for t in collect_tasks(shared_dir / "benchmarks" / "svcomp") if t.property == "unreach-call"]
    assert len(sets["unreach-call"]) == len(ours) - sum("format_version: '1.1'" in t.origin.read_text()
                                                                 for t in ours)
    assert len(sets["chc"]) == len(list((shared_dir / "benchmarks" / "chc").rglob("*.yml")))
