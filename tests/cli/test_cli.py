"""`looprover verify / transform`: output formats, options, exit codes (with fake engines), and the real
end-to-end runs on `examples/` once the C front-end and the engines exist."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from looprover import cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def looprover(*argv, timeout=120):
    """The real command in a fresh process (what users and the bench runner see)."""
    return subprocess.run([sys.executable, "-m", "looprover", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


# ------------------------------------------------------------------------------------------- help
def test_help_documents_commands_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    for word in ("verify", "transform", "bench", "exit codes", "input error", "usage error", "130  interrupted",
                 "143  terminated (SIGTERM)"):
        assert word in out
    with pytest.raises(SystemExit):
        cli.main(["verify", "--help"])
    out = capsys.readouterr().out
    for word in ("--property", "--engine", "portfolio", "--timeout", "--bitvector", "--data-model", "--json",
                 "exit codes"):
        assert word in out


def test_version_comes_from_the_package_metadata(capsys):
    from importlib.metadata import version
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == (f"looprover {version('looprover')} (z3-solver {version('z3-solver')}, "
                                       f"libclang {version('libclang')})\n")


def test_python_dash_m_works():
    r = looprover("--help")
    assert r.returncode == 0 and "verify" in r.stdout


@pytest.mark.parametrize("argv", [[], ["verify"], ["frobnicate"], ["verify", "x.c", "--engine", "nope"],
                                  ["verify", "x.c", "--timeout", "-1"], ["verify", "x.c", "--timeout", "abc"],
                                  ["verify", "x.c", "--data-model", "ILP64"], ["bench", "d", "--jobs", "0"]])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == cli.EXIT_USAGE
    assert "usage:" in capsys.readouterr().err


# ----------------------------------------------------------------------------- verify, fake engines
def test_true_text_output(capsys, fake_engines, chc_file):
    code, out, err = run_cli(capsys, "verify", chc_file, "--engine", "fake_true")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "sat"                    # a Horn-clause file: CHC-COMP's answer first
    assert "engine:   fake_true" in out and "reason:   proved by fiat" in out and "time:" in out
    assert "property: check-sat" in out


@pytest.fixture
def unchecked(monkeypatch):
    """The job's check of evidence off: `fake_false`'s counterexample is a made-up trace (the program is safe),
    and these tests are about how a FALSE is rendered. `test_a_made_up_false_is_unknown` is the check's own."""
    from looprover.evidence import recheck
    monkeypatch.setattr(recheck, "evidence_failure", lambda *a: None)


def test_a_made_up_false_is_unknown(capsys, fake_engines, chc_file):
    code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", "fake_false")
    assert code == 0 and out.startswith("unknown\n")
    assert "its counterexample did not replay in the job's check with fresh solvers" in out


def test_json_output_shape(capsys, fake_engines, chc_file, unchecked):
    code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", "fake_false", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"status", "engine", "reason", "time", "property", "file", "counterexample", "stats"}
    assert data["status"] == "FALSE" and data["engine"] == "fake_false" and data["property"] == "check-sat"
    cex = data["counterexample"]
    assert cex["validated"] is True and cex["inputs"] == [7] and cex["violated_at"] == "prog.c:9"
    assert len(cex["steps"]) == 2
    step = cex["steps"][0]
    # a Horn-clause step: the clause (its position, its line), the fact it derives, its variables by name
    assert set(step) == {"location", "edge", "statements", "values", "clause", "derived"}
    assert step["clause"] == 1 and step["location"] == f"{chc_file}:3" and step["derived"] == "inv(0, 0)"
    assert step["values"] == {"x": 0, "y": 0} and step["statements"][0].startswith("(forall ((x Int) (y Int))")


def test_result_lines_follow_svcomp_and_chc_comp(capsys, fake_engines, chc_file, unchecked):
    """The first line is what each competition's scripts read: SV-COMP's `FALSE(unreach-call)` for C, CHC-COMP's
    sat/unsat/unknown for Horn clauses, which `--chc-comp` prints alone; `--json` keeps `status` and adds both."""
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_unsafe.c", "--engine", "bmc")
    assert code == 0 and out.splitlines()[0] == "FALSE(unreach-call)"
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_unsafe.c", "--engine", "bmc", "--json")
    data = json.loads(out)
    assert (data["status"], data["result"], data["chc_answer"]) == ("FALSE", "FALSE(unreach-call)", None)
    for engine, answer, status in (("fake_true", "sat", "TRUE"), ("fake_false", "unsat", "FALSE"),
                                   ("fake_unknown", "unknown", "UNKNOWN")):
        code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", engine, "--chc-comp")
        assert code == 0 and out == answer + "\n"
        code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", engine, "--json")
        data = json.loads(out)
        assert (data["status"], data["result"], data["chc_answer"]) == (status, status, answer)


def test_chc_comp_output_needs_a_horn_clause_file(capsys):
    code, out, err = run_cli(capsys, "verify", EXAMPLES / "count_safe.c", "--chc-comp")
    assert code == cli.EXIT_USAGE and out == "" and "--chc-comp needs a Horn-clause (.smt2) input" in err


def test_false_prints_a_readable_trace(capsys, fake_engines, chc_file, unchecked):
    code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", "fake_false")
    assert code == 0 and out.startswith("unsat\n")
    assert "counterexample (validated by replay)" in out
    assert "clause 1 (line 3)  inv(0, 0)   with x = 0, y = 0" in out
    # the fake's second step wrote nothing the clause's variables can be computed from: shown without values
    assert "clause 2 (line 4)  inv(?, ?)" in out


def test_c_trace_names_inputs_and_the_violated_call(capsys, fake_engines, unchecked):
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_unsafe.c", "--engine", "fake_false")
    assert code == 0 and out.startswith("FALSE(unreach-call)\n")
    assert "counterexample (validated by replay): reach_error() is reached at prog.c:9" in out
    assert "inputs" in out and "7" in out and "=> x = 1" in out


def test_unvalidated_false_is_reported_unknown(capsys, fake_engines, chc_file):
    code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", "fake_false_unvalidated")
    assert code == 0 and out.startswith("unknown\n") and "not validated" in out


def test_internal_error_is_unknown_with_traceback_only_in_debug(capsys, fake_engines, chc_file):
    code, out, err = run_cli(capsys, "verify", chc_file, "--engine", "fake_raise")
    assert code == 0 and out.startswith("unknown\n")
    assert "internal error: RuntimeError: engine bug" in out and "Traceback" not in err
    code, out, err = run_cli(capsys, "verify", chc_file, "--engine", "fake_raise", "--debug")
    assert code == 0 and "Traceback" in err


def test_unsupported_construct_from_engine_is_unknown(capsys, fake_engines, chc_file):
    code, out, _ = run_cli(capsys, "verify", chc_file, "--engine", "fake_unsupported", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "UNKNOWN" and "unsupported: floating point" in data["reason"]


def test_portfolio_is_the_default_engine(capsys, fake_engines, chc_file, monkeypatch):
    from looprover import portfolio
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_unknown", "fake_true"])
    code, out, _ = run_cli(capsys, "verify", chc_file, "--json")
    data = json.loads(out)
    assert data["status"] == "TRUE" and data["engine"] == "portfolio:fake_true"
    assert set(data["stats"]["portfolio"]) == {"fake_unknown", "fake_true"}


def test_verbose_progress_goes_to_stderr(capfd, fake_engines, chc_file):
    # the job runs in a forked child that writes its progress to the inherited stderr: capture at fd level
    code, out, err = run_cli(capfd, "verify", chc_file, "--engine", "fake_true", "-v")
    assert code == 0 and "loading" in err and "running fake_true" in err and "loading" not in out


def test_yml_task_supplies_property_and_data_model(tmp_path, capsys, fake_engines, chc_file):
    (tmp_path / "check-sat.prp").write_text("")
    (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: counter.smt2\nproperties:\n"
                                    "  - property_file: check-sat.prp\n    expected_verdict: true\n"
                                    "options:\n  language: SMT-LIB\n  data_model: LP64\n")
    code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_true", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "TRUE" and data["expected"] is True
    assert data["property"] == "check-sat" and data["data_model"] == "LP64" and data["task"].endswith("t.yml")
    code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_true", "--json",
                           "--data-model", "ILP32")
    assert json.loads(out)["data_model"] == "ILP32"


def test_an_answer_that_contradicts_the_tasks_expected_verdict_is_marked(tmp_path, capsys, fake_engines):
    import shutil
    shutil.copy(EXAMPLES / "count_safe.c", tmp_path)
    shutil.copy(EXAMPLES / "unreach-call.prp", tmp_path)
    for expected, mark, match in (("false", "(expected FALSE: the answer DIFFERS)", False),
                                  ("true", "(expected TRUE)\n", True)):
        (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: count_safe.c\nproperties:\n"
                                        f"  - property_file: unreach-call.prp\n    expected_verdict: {expected}\n")
        code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_true")
        assert code == 0 and out.startswith("TRUE\n") and f"property: unreach-call {mark}" in out, out
        code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_true", "--json")
        assert json.loads(out)["matches_expected"] is match
    code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_unknown", "--json")
    assert json.loads(out)["matches_expected"] is None       # UNKNOWN neither agrees nor contradicts
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_safe.c", "--engine", "fake_true", "--json")
    assert json.loads(out)["matches_expected"] is None       # no task, no expectation


def test_unsupported_property_is_unknown(tmp_path, capsys, fake_engines, chc_file):
    prp = tmp_path / "termination.prp"
    prp.write_text("CHECK( init(main()), LTL(F end) )\n")
    code, out, _ = run_cli(capsys, "verify", chc_file, "--property", prp, "--engine", "fake_true")
    assert code == 0 and out.startswith("unknown\n") and "unsupported property: termination" in out
    code, out, _ = run_cli(capsys, "verify", chc_file, "--property", "unreach-call", "--engine", "fake_true")
    assert code == 0 and out.startswith("unknown\n") and "check-sat" in out


# ------------------------------------------------------------------------------------------ transform
def test_transform_prints_compilable_c(tmp_path, capsys, chc_file, gcc):
    code, out, _ = run_cli(capsys, "transform", chc_file)
    assert code == 0 and "int main(void)" in out and "reach_error" in out
    c = tmp_path / "out.c"
    code, _, _ = run_cli(capsys, "transform", chc_file, "--technique", "none", "-o", c)
    assert code == 0
    assert subprocess.run([gcc, "-fsyntax-only", str(c)], capture_output=True).returncode == 0


def test_transform_help_lists_the_techniques_with_what_they_do(capsys):
    from looprover.transforms import TRANSFORMS, get_transform
    with pytest.raises(SystemExit) as e:
        cli.main(["transform", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "\ntechniques:\n" in out
    for name in TRANSFORMS:
        assert re.search(rf"^  {name} +{re.escape(get_transform(name).summary)}$", out, re.M), name
    # the list is built when the help is shown: other commands do not import every transformation
    r = subprocess.run([sys.executable, "-c", "import sys; from looprover import cli; cli.build_parser(); "
                        "print('looprover.transforms.labmc' in sys.modules)"], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


def test_transform_unknown_technique_is_a_usage_error(capsys, chc_file):
    code, out, err = run_cli(capsys, "transform", chc_file, "--technique", "magic")
    assert code == cli.EXIT_USAGE and "unknown technique 'magic'" in err and "none" in err and out == ""


def test_transform_missing_file_is_an_input_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "transform", tmp_path / "nope.c")
    assert code == cli.EXIT_INPUT_ERROR and err.startswith("error: ") and "no such file" in err


def test_transform_builds_the_program_as_verify_does(capsys, tmp_path):
    """Several files linked, `-D` and the property's checks: a Verisec file with its stubs prints as verified."""
    main = tmp_path / "main.c"
    main.write_text("void fill(char *b, int n);\nint main(void) { char buf[N]; fill(buf, N + 1); return 0; }\n")
    lib = tmp_path / "lib.c"
    lib.write_text("void fill(char *b, int n) { for (int i = 0; i < n; i++) b[i] = 1; }\n")
    code, out, err = run_cli(capsys, "transform", main, lib, "-DN=5", "--property", "valid-memsafety")
    assert code == 0, err
    assert "buf[5]" in out and "property valid-deref" in out
    code, out, _ = run_cli(capsys, "transform", main, lib, "-DN=5")           # unreach-call: no bounds checks
    assert code == 0 and "property valid-deref" not in out
    code, out, err = run_cli(capsys, "transform", main, "--property", "check-sat")   # not a C property
    assert code == cli.EXIT_INPUT_ERROR and out == "" and "unsupported property: check-sat" in err


# ------------------------------------------------------------------------ end-to-end (real pipeline)
EXPECTED = {"count_safe.c": "TRUE", "count_unsafe.c": "FALSE", "max_safe.c": "TRUE", "branch_unsafe.c": "FALSE"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_examples_get_their_expected_verdicts(name):
    r = looprover("verify", EXAMPLES / name, "--json", "--timeout", "60")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == EXPECTED[name], data
    if data["status"] == "FALSE":
        assert data["counterexample"]["validated"] and data["counterexample"]["steps"]


def test_example_task_yml_and_text_trace():
    r = looprover("verify", EXAMPLES / "count_unsafe.yml", "--timeout", "60")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("FALSE(unreach-call)\n")
    assert "expected FALSE" in r.stdout and "count_unsafe.c:" in r.stdout
    assert "    n = " in r.stdout and "(__VERIFIER_nondet_uint() at " in r.stdout   # the input, by C name
    r = looprover("verify", EXAMPLES / "count_safe.yml", "--property", EXAMPLES / "unreach-call.prp",
                  "--timeout", "60", "--json")
    assert json.loads(r.stdout)["status"] == "TRUE"


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["bmc", "kinduction", "spacer"])
def test_single_engines_never_contradict_the_examples(engine):
    for name, expected in EXPECTED.items():
        r = looprover("verify", EXAMPLES / name, "--engine", engine, "--json", "--timeout", "8")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["status"] in (expected, "UNKNOWN"), name


def test_transform_of_an_example_compiles(tmp_path, gcc):
    r = looprover("transform", EXAMPLES / "count_unsafe.c")
    assert r.returncode == 0, r.stderr
    (tmp_path / "t.c").write_text(r.stdout)
    assert subprocess.run([gcc, "-fsyntax-only", str(tmp_path / "t.c")]).returncode == 0


@pytest.mark.parametrize("task, status", [("loop-acceleration/const_1-1", "TRUE"),
                                          ("loops/count_up_down-2", "FALSE")])
def test_shared_svcomp_tasks(shared_dir, task, status):
    r = looprover("verify", shared_dir / "benchmarks" / "svcomp" / f"{task}.yml", "--json", "--timeout", "30")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["expected"] is (status == "TRUE") and data["property"] == "unreach-call"
    assert data["status"] in (status, "UNKNOWN"), data      # never wrong; UNKNOWN only on a slow machine


def test_shared_termination_task(shared_dir):
    """A task whose only verifiable property is termination is checked for it (Velroyen: non-terminating, LP64);
    a property no engine checks is still UNKNOWN with the reason. (FALSE or UNKNOWN: its partner,
    engines/test_required_answers.py::test_shared_velroyen_is_false, requires the FALSE.)"""
    task = shared_dir / "benchmarks" / "svcomp" / "termination-crafted-lit" / "Velroyen.yml"
    r = looprover("verify", task, "--json", "--timeout", "30")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["property"] == "termination" and data["data_model"] == "LP64"
    assert data["expected"] is False and data["status"] in ("FALSE", "UNKNOWN"), data   # never wrong
    r = looprover("verify", task, "--json", "--property", "def-behavior")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["status"] == "UNKNOWN" and data["reason"].startswith("unsupported property: ")


def test_transform_of_a_task_and_a_task_with_a_missing_extra_property(tmp_path, capsys, fake_engines, chc_file):
    (tmp_path / "check-sat.prp").write_text("")
    (tmp_path / "t.yml").write_text("input_files: counter.smt2\nproperties:\n"
                                    "  - property_file: gone/coverage.prp\n"
                                    "  - property_file: check-sat.prp\n    expected_verdict: true\n")
    code, out, _ = run_cli(capsys, "transform", tmp_path / "t.yml")
    assert code == 0 and "int main(void)" in out
    code, out, _ = run_cli(capsys, "verify", tmp_path / "t.yml", "--engine", "fake_true")
    assert code == 0 and out.startswith("sat\n") and "(expected sat)" in out


def test_verbose_shows_the_engines_progress_through_the_portfolio(capfd, fake_engines, chc_file, monkeypatch):
    from looprover import portfolio
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_hang", "fake_slow_true"])
    assert cli.main(["verify", str(chc_file), "-v"]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("sat\n")
    assert "[fake_hang] hanging" in err and "portfolio: fake_slow_true answered TRUE" in err


def test_engine_tracebacks_from_the_portfolio_only_with_debug(capfd, fake_engines, chc_file, monkeypatch):
    from looprover import portfolio
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_raise", "fake_unknown"])
    assert cli.main(["verify", str(chc_file), "--json"]) == 0
    out, err = capfd.readouterr()
    data = json.loads(out)
    assert "engine bug" in data["reason"] and "Traceback" not in out + err
    assert cli.main(["verify", str(chc_file), "--debug"]) == 0
    out, err = capfd.readouterr()
    assert "Traceback" in err and "RuntimeError: engine bug" in err


def test_true_json_carries_the_checked_proof(capsys):
    """A TRUE comes with its safety evidence in `--json` (here TPA's transition invariant and the state
    invariant derived from it); a FALSE has none."""
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_safe.c", "--engine", "tpa", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "TRUE"
    assert data["proof"]["transition_invariant"] and data["proof"]["side"] in ("left", "right")
    assert data["proof"]["kind"] == "transition-invariant"
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_unsafe.c", "--engine", "tpa", "--json")
    data = json.loads(out)
    assert data["status"] == "FALSE" and data["proof"] is None and data["counterexample"]["validated"]


@pytest.mark.slow
def test_deep_counterexample_is_shown_abbreviated(capsys, tmp_path):
    """A run of a million iterations is replayed by running the program and printed with the middle left out."""
    f = tmp_path / "deep.c"
    f.write_text("extern void reach_error(void);\nint main(void) { unsigned int x = 0, y = 0;\n"
                 "  while (x < 1000000u) { x++; y += 2u; }\n  if (y == 2000000u) reach_error();\n  return 0; }\n")
    code, out, _ = run_cli(capsys, "verify", f, "--engine", "tpa", "--json")
    data = json.loads(out)
    assert data["status"] == "FALSE", data["reason"]
    cex = data["counterexample"]
    assert cex["validated"] and cex["length"] > 1000000 and cex["omitted"] == cex["length"] - len(cex["steps"])
    code, out, _ = run_cli(capsys, "verify", f, "--engine", "tpa")
    assert "edges executed here are not shown" in out


def test_bitwise_programs_are_encoded_with_bitvectors_automatically(capsys):
    """Bitwise operators without a linear identity make the integer encoding hopeless; the default chooses
    bit-vectors for such a program and says so in --json. `--integer` and `--bitvector` force either."""
    prog = REPO / "tests" / "helpers" / "programs" / "bitops_safe.c"
    code, out, _ = run_cli(capsys, "verify", prog, "--engine", "bmc", "--timeout", "30", "--json")
    data = json.loads(out)
    assert data["status"] == "TRUE" and data["encoding"].startswith("bit-vector (chosen automatically")
    assert "bitops_safe.c:" in data["encoding"]                # where the first such operator is
    code, out, _ = run_cli(capsys, "verify", prog, "--engine", "bmc", "--timeout", "1", "--integer", "--json")
    assert json.loads(out)["encoding"] == "integer"
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_safe.c", "--engine", "bmc", "--timeout", "2", "--json")
    assert json.loads(out)["encoding"] == "integer"           # nothing bitwise: integers (bmc need not finish)
    code, out, _ = run_cli(capsys, "verify", EXAMPLES / "count_safe.c", "--engine", "bmc", "--bitvector", "--timeout", "5",
                           "--json")   # BMC cannot finish this loop bit-precisely: only the label is asked for
    assert json.loads(out)["encoding"] == "bit-vector"


def test_svcomp_result_names_the_violated_property():
    """FALSE(p) names the property of the assertion the counterexample violates (a memory-safety part such as
    valid-deref), else the checked one; a Horn-clause query (`chc-query`) is no SV-COMP property."""
    from looprover.program.cfa import Assert, Edge
    from looprover.program.expr import FALSE
    from looprover.report import svcomp_result
    from looprover.verdict import Counterexample, Status, TraceStep, Verdict

    def false_at(prop):
        cex = Counterexample([TraceStep(Edge(0, 1, (Assert(FALSE, prop),)), None)], [], validated=True)
        return Verdict(Status.FALSE, "e", "r", evidence=cex)
    assert svcomp_result(false_at("valid-deref"), "valid-memsafety") == "FALSE(valid-deref)"
    assert svcomp_result(false_at("unreach-call"), "unreach-call") == "FALSE(unreach-call)"
    assert svcomp_result(false_at("chc-query"), "check-sat") == "FALSE"
    assert svcomp_result(Verdict(Status.FALSE, "e", "r"), "termination") == "FALSE(termination)"
    assert svcomp_result(Verdict.unknown("e", "r"), "unreach-call") == "UNKNOWN"


def test_horn_clause_counterexample_is_a_derivation_in_the_files_terms(capsys, tmp_path):
    """unsat with the clauses applied, named by their position and line, the facts they derive and the
    clause's variables under their names in the file: no slot (i0, i1) and no clause number posing as a line."""
    from helpers.fake_engines import COUNTER_SMT2
    f = tmp_path / "unsafe.smt2"
    f.write_text(COUNTER_SMT2.replace("(not (= y 20))", "(= y 20)"))
    code, out, _ = run_cli(capsys, "verify", f, "--engine", "bmc")
    assert code == 0 and out.startswith("unsat\n"), out
    assert "false is derived by clause 3 (unsafe.smt2:6)" in out
    assert "clause 1 (line 3)  inv(0, 0)  " in out and "with x = 0, y = 0" in out
    assert "clause 2 (line 4)  inv(1, 2)  " in out and "with x = 0, y = 0, x1 = 1, y1 = 2" in out
    assert "clause 3 (line 6)  false" in out and "with x = 10, y = 20" in out
    assert "i0" not in out and "i1" not in out
    code, out, _ = run_cli(capsys, "verify", f, "--engine", "bmc", "--json")
    cex = json.loads(out)["counterexample"]
    assert [s["clause"] for s in cex["steps"]] == [1] + [2] * 10 + [3]
    assert cex["steps"][-1]["values"] == {"x": 10, "y": 20} and cex["steps"][-1]["derived"] == "false"
    assert "i0" not in json.dumps(cex)


def test_a_derivation_is_built_once_per_rendering_and_again_after_its_trace_changes(tmp_path):
    """Text and JSON of one verdict share the derivation (`derivations_shared`); outside that block a
    counterexample whose steps changed (replay trims them in place) is shown as it is now."""
    from helpers.fake_engines import COUNTER_SMT2
    from looprover.engines import verify
    from looprover.frontend.chc import load_chc_program
    from looprover.report import counterexample_json, derivations_shared
    f = tmp_path / "unsafe.smt2"
    f.write_text(COUNTER_SMT2.replace("(not (= y 20))", "(= y 20)"))
    p = load_chc_program(f)
    cex = verify("bmc", p, timeout=30).evidence
    with derivations_shared():
        first = counterexample_json(cex, p)["steps"]
        assert counterexample_json(cex, p)["steps"] == first and len(first) == 12
    del cex.steps[3:]
    assert [s["clause"] for s in counterexample_json(cex, p)["steps"]] == [1, 2, 2]


def test_a_program_file_job_does_not_load_the_task_reader(tmp_path):
    """YAML and the task reader cost 50 ms of every start; only a `.yml` task needs them."""
    code = ("import sys; from looprover.jobs import resolve_job; j = resolve_job({f!r}, None, None); "
            "print('yaml' in sys.modules, 'looprover.bench.tasks' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code.format(f=str(tmp_path / "a.c"))], capture_output=True, text=True)
    assert r.stdout.split() == ["False", "False"], r.stderr
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "u.prp").write_text("CHECK( init(main()), LTL(G ! call(reach_error())) )\n")
    task = tmp_path / "t.yml"
    task.write_text("format_version: '2.0'\ninput_files: 'a.c'\nproperties:\n"
                    "  - property_file: u.prp\n    expected_verdict: true\n")
    r = subprocess.run([sys.executable, "-c", code.format(f=str(task))], capture_output=True, text=True)
    assert r.stdout.split() == ["True", "True"], r.stderr


def test_engines_are_imported_beside_the_front_end_and_joined_before_the_run(chc_file):
    """The job imports the engines the portfolio starts first (the cheapest for Horn clauses: bmc, spacer)
    in a thread while the front-end works; that thread must be gone before the engine runs (a fork while it
    holds an import lock would hang the portfolio's children). The other engines load in their own processes
    only when they get a turn: the parent never imports them."""
    code = f"""
import sys, threading
from looprover import engines, jobs
from looprover.deadline import Deadline
seen = []
real = engines.base.run_engine
def spy(*a, **k):
    seen.append([t.name for t in threading.enumerate() if t.name == "looprover-imports"])
    return real(*a, **k)
jobs.run_engine = spy
job = jobs.resolve_job({str(chc_file)!r}, None, None)
v, _ = jobs.verify_job(job, jobs.JobOptions(engine="portfolio"), Deadline.after(30))
print(v.status.name, seen, ",".join(n for n, m in engines.ENGINES.items() if m.partition(":")[0] in sys.modules))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["TRUE", "[[]]", "bmc,spacer"], r.stderr
