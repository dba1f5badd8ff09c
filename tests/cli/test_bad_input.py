"""Bad input never produces a traceback: a one-line `error: ...` and exit 1, or an UNKNOWN verdict (exit 0)
for constructs we cannot model. Runs the real command in a subprocess, as a user or a script would."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from looprover import cli

REPO = Path(__file__).resolve().parents[2]
PRP = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n"


def looprover(*argv):
    return subprocess.run([sys.executable, "-m", "looprover", *map(str, argv)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def assert_input_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == cli.EXIT_INPUT_ERROR, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def task(tmp_path: Path, text: str, name: str = "t.yml") -> Path:
    write(tmp_path, "unreach-call.prp", PRP)
    return write(tmp_path, name, text)


GOOD_C = "extern void reach_error(void);\nint main(void) { return 0; }\n"


def test_missing_file(tmp_path):
    assert_input_error(looprover("verify", tmp_path / "nope.c"), "nope.c", "no such file")


def test_missing_file_json(tmp_path):
    r = looprover("verify", tmp_path / "nope.c", "--json")
    assert_input_error(r, "no such file")
    data = json.loads(r.stdout)
    assert data["status"] == "ERROR" and "no such file" in data["error"]


def test_directory_instead_of_file(tmp_path):
    assert_input_error(looprover("verify", tmp_path), "not a regular file")


@pytest.mark.parametrize("name", ["empty.c", "blank.i", "empty.smt2"])
def test_empty_file(tmp_path, name):
    assert_input_error(looprover("verify", write(tmp_path, name, " \n\t\n")), "empty file")


def test_horn_clause_syntax_error(tmp_path):
    f = write(tmp_path, "bad.smt2", "(set-logic HORN)\n(assert (forall ((x Int)) (=> (> x 0) \n")
    r = looprover("verify", f)
    assert_input_error(r, "bad.smt2:3:0: invalid expression")
    assert "b'" not in r.stderr


def test_binary_file_gives_one_short_line(tmp_path):
    f = tmp_path / "x.c"
    f.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 2000)
    r = looprover("verify", f, "--json")
    assert_input_error(r, "x.c: binary file", "not C source")
    assert len(r.stderr) < 200 and len(r.stdout) < 300 and json.loads(r.stdout)["status"] == "ERROR"


def test_c_syntax_error(tmp_path):
    f = write(tmp_path, "bad.c", "int main(void) { int x = ; return 0 }\n")
    assert_input_error(looprover("verify", f), "bad.c")


def test_unsupported_construct_is_unknown(tmp_path):
    f = write(tmp_path, "real.smt2", "(set-logic HORN)\n(declare-fun p (Real) Bool)\n"
                                     "(assert (forall ((x Real)) (=> (> x 0.0) (p x))))\n")
    r = looprover("verify", f, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "UNKNOWN" and "unsupported" in data["reason"] and "Real" in data["reason"]


def test_unsupported_c_construct_is_unknown(tmp_path):
    f = write(tmp_path, "float.c", "extern void reach_error(void);\nextern float __VERIFIER_nondet_float(void);\n"
                                   "int main(void) { float f = __VERIFIER_nondet_float();\n"
                                   "  if (f * f < 0.0f) reach_error();\n  return 0; }\n")
    r = looprover("verify", f, "--json", "--timeout", "30")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "UNKNOWN" and "unsupported" in data["reason"]


def test_yml_with_wrong_input_path(tmp_path):
    t = task(tmp_path, "format_version: '2.0'\ninput_files: 'missing.c'\nproperties:\n"
                       "  - property_file: unreach-call.prp\n    expected_verdict: true\n")
    assert_input_error(looprover("verify", t), "t.yml", "missing.c", "does not exist")


@pytest.mark.parametrize("text, words", [
    ("input_files: [unclosed\n", ["malformed YAML"]),
    ("- just\n- a list\n", ["not a task definition"]),
    ("format_version: '2.0'\nproperties: []\n", ["input_files"]),
    ("input_files: prog.c\nproperties: {a: 1}\n", ["'properties' must be a list"]),
    ("input_files: prog.c\nproperties:\n  - expected_verdict: true\n", ["property_file"]),
    ("input_files: prog.c\nproperties:\n  - property_file: unreach-call.prp\n    expected_verdict: maybe\n",
     ["expected_verdict"]),
    ("input_files: prog.c\nproperties:\n  - property_file: unreach-call.prp\noptions:\n  data_model: ILP64\n",
     ["data_model"]),
    ("input_files: prog.c\nproperties: []\n", ["lists no properties"]),
])
def test_malformed_yml(tmp_path, text, words):
    write(tmp_path, "prog.c", GOOD_C)
    assert_input_error(looprover("verify", task(tmp_path, text)), *words)


def test_yml_pointing_at_a_missing_property_file(tmp_path):
    write(tmp_path, "prog.c", GOOD_C)
    t = task(tmp_path, "input_files: prog.c\nproperties:\n  - property_file: ../props/gone.prp\n"
                       "    expected_verdict: true\n")
    assert_input_error(looprover("verify", t), "gone.prp")


@pytest.mark.parametrize("text, words", [
    ("this is not a property\n", ["not an SV-COMP property"]),
    ("CHECK( init(main()), LTL(G something-new) )\n", ["unknown property formula"]),
    ("", ["empty property file"]),
    ("CHECK( init(main()), LTL(F end) )\nCHECK( init(main()), LTL(G ! overflow) )\n", ["several properties"]),
])
def test_unknown_property_file(tmp_path, text, words):
    prog = write(tmp_path, "prog.c", GOOD_C)
    prp = write(tmp_path, "odd.prp", text)
    assert_input_error(looprover("verify", prog, "--property", prp), "odd.prp", *words)


def test_unknown_property_name(tmp_path):
    prog = write(tmp_path, "prog.c", GOOD_C)
    assert_input_error(looprover("verify", prog, "--property", "reach-everything"), "no such property file",
                       "unreach-call")


def test_bench_on_a_missing_directory(tmp_path):
    assert_input_error(looprover("bench", tmp_path / "nope", "-q"), "not a directory")


def test_bench_on_a_directory_without_tasks(tmp_path):
    assert_input_error(looprover("bench", tmp_path, "-q"), "no tasks found")


def test_usage_error_exit_code():
    r = looprover("verify")
    assert r.returncode == cli.EXIT_USAGE and "usage:" in r.stderr and "Traceback" not in r.stderr
