"""SV-COMP 2.0 witnesses: written by `verify --witness`, valid against our schema of the format, confirmed by our
own validator on safe and unsafe examples, and rejected when tampered with."""
from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from looprover.deadline import Deadline
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import default_property
from looprover.tpa.options import TPAOptions
from looprover.verdict import Status
from looprover.witness.svcomp import witness_for
from looprover.witness.validate import validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((Path(__file__).parent / "witness-2.0.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def _verify(path: Path, engine: str, settings=None):
    job = Job(path, default_property(), "ILP32")
    options = JobOptions(engine, settings={engine: settings} if settings is not None else {})
    verdict, program = verify_job(job, options, Deadline(time.monotonic() + 60))
    return verdict, program


def _witness(path: Path, engine: str, expected: Status, tmp_path: Path, settings=None) -> tuple[Path, list]:
    verdict, program = _verify(path, engine, settings)
    assert verdict.status == expected, verdict.reason
    w = witness_for(verdict, program, path, "unreach-call", "ILP32")
    assert w.text is not None, w.note
    out = tmp_path / f"{path.stem}.{engine}.yml"
    out.write_text(w.text)
    data = yaml.safe_load(w.text)
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert not errors, errors
    return out, data


def _validate(witness: Path, program: Path, prop=None):
    job = Job(program, prop or default_property(), "ILP32")
    return validate(witness, job, None, Deadline(time.monotonic() + 60), property_given=prop is not None)


def _check(witness: Path, program: Path) -> str:
    return _validate(witness, program).status


def test_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", ["count_unsafe.c", "branch_unsafe.c", "multiloop_unsafe.c"])
def test_violation_witness_is_valid_and_confirmed(name, tmp_path):
    path = EXAMPLES / name
    out, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    (entry,) = data
    assert entry["entry_type"] == "violation_sequence"
    meta = entry["metadata"]
    assert meta["format_version"] == "2.0" and meta["task"]["specification"] == "G ! call(reach_error())"
    import hashlib
    assert meta["task"]["input_file_hashes"][str(path)] == hashlib.sha256(path.read_bytes()).hexdigest()
    waypoints = [s["segment"][0]["waypoint"] for s in entry["content"]]
    assert waypoints[-1]["type"] == "target" and waypoints[-1]["location"]["function"] == "main"
    assert all(w["type"] == "function_return" for w in waypoints[:-1]) and len(waypoints) >= 2
    assert _check(out, path) == "confirmed"


def test_violation_witness_points_at_the_call_and_the_failing_statement(tmp_path):
    path = EXAMPLES / "count_unsafe.c"
    _, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    lines = path.read_text().splitlines()
    ret, target = [s["segment"][0]["waypoint"] for s in data[0]["content"]]
    loc = ret["location"]
    assert lines[loc["line"] - 1][loc["column"] - 1] == ")"
    assert "__VERIFIER_nondet_uint(" in lines[loc["line"] - 1]
    assert ret["constraint"] == {"value": "\\result == 1", "format": "acsl_expression"}
    t = target["location"]
    assert lines[t["line"] - 1][t["column"] - 1:].startswith("__VERIFIER_assert(")


def test_tampered_violation_witness_is_rejected(tmp_path):
    path = EXAMPLES / "count_unsafe.c"
    out, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    data[0]["content"][0]["segment"][0]["waypoint"]["constraint"]["value"] = "\\result == 4"   # x reaches n
    out.write_text(yaml.safe_dump(data))
    assert _check(out, path) == "rejected"


def test_violation_witness_with_a_wrong_target_line_is_rejected(tmp_path):
    path = EXAMPLES / "branch_unsafe.c"
    out, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    data[0]["content"][-1]["segment"][0]["waypoint"]["location"]["line"] = 1
    out.write_text(yaml.safe_dump(data))
    assert _check(out, path) == "rejected"


@pytest.mark.parametrize("engine", ["kinduction", "spacer", "tpa"])
def test_correctness_witness_is_valid_and_confirmed(engine, tmp_path):
    path = EXAMPLES / "count_safe.c"
    out, data = _witness(path, engine, Status.TRUE, tmp_path)
    (entry,) = data
    assert entry["entry_type"] == "invariant_set"
    (item,) = entry["content"]
    inv = item["invariant"]
    assert inv["type"] == "loop_invariant" and inv["format"] == "c_expression"
    line = path.read_text().splitlines()[inv["location"]["line"] - 1]
    assert line[inv["location"]["column"] - 1:].startswith("while")
    assert _check(out, path) == "confirmed"


def _tampered(tmp_path, value: str) -> tuple[Path, Path]:
    path = EXAMPLES / "count_safe.c"
    out, data = _witness(path, "spacer", Status.TRUE, tmp_path)
    data[0]["content"][0]["invariant"]["value"] = value
    out.write_text(yaml.safe_dump(data))
    return out, path


def test_correctness_witness_with_a_false_invariant_is_rejected(tmp_path):
    out, path = _tampered(tmp_path, "x == 0")       # true on entry, false after one iteration
    res = _validate(out, path)
    assert res.status == "rejected", res.reason


def test_correctness_witness_with_a_non_inductive_invariant_is_not_confirmed(tmp_path):
    # true (x <= n always holds) but too weak alone to exclude the error: not confirmed, not rejected
    out, path = _tampered(tmp_path, "(long long)x <= (long long)n + 1")
    res = _validate(out, path)
    assert res.status == "unknown" and "not confirmed" in res.reason


def test_integer_truth_values_are_conditions(tmp_path):
    """C's `1` and `0` as invariants: true (inductive, too weak: not confirmed) and false (rejected), never an
    internal error."""
    out, path = _tampered(tmp_path, "1")
    res = _validate(out, path)
    assert res.status == "unknown" and "not confirmed" in res.reason, res.reason
    out, path = _tampered(tmp_path, "0")
    res = _validate(out, path)
    assert res.status == "rejected", res.reason


def test_invariant_outside_the_exact_c_subset_is_not_read(tmp_path):
    out, path = _tampered(tmp_path, "x + 1 >= 1")    # unsigned arithmetic wraps in C: not the integer meaning
    res = _validate(out, path)
    assert res.status == "unknown" and "C subset" in res.reason


@pytest.mark.parametrize("value", ["x > 0 ? 1 : 0", "(unsigned int)x <= n", "x <= 10u", "a[0] == x",
                                   "x >> 1 <= n", "sizeof(int) == 4"])
def test_c_outside_the_subset_is_unknown_never_an_error(tmp_path, value):
    out, path = _tampered(tmp_path, value)
    res = _validate(out, path)
    assert res.status == "unknown" and "C subset" in res.reason, res.reason


@pytest.mark.parametrize("value", ["x <=", "x <= n)", "x =< n", "@x", "x ? n", "x.", "true or false"])
def test_a_value_that_is_no_c_expression_is_rejected(tmp_path, value):
    out, path = _tampered(tmp_path, value)
    res = _validate(out, path)
    assert res.status == "rejected" and "not a C expression" in res.reason, res.reason


def test_engines_without_invariants_write_no_witness_and_say_why():
    path = EXAMPLES / "max_safe.c"
    verdict, program = _verify(path, "bmc")
    assert verdict.status == Status.TRUE
    w = witness_for(verdict, program, path, "unreach-call", "ILP32")
    assert w.text is None and "no correctness witness" in w.note


def test_horn_clauses_get_a_model_not_an_svcomp_witness(chc_file):
    """A TRUE without invariants of its own (here: none at all) gets its model from Spacer's, as a C TRUE gets
    its witness; it is CHC-COMP's `define-fun` list, not YAML (`witness/chc.py`)."""
    from looprover.frontend.chc import load_chc_program
    from looprover.verdict import Verdict
    program = load_chc_program(chc_file)
    w = witness_for(Verdict(Status.TRUE, "x", "r"), program, chc_file, "check-sat", "ILP32")
    assert w.kind == "correctness" and w.text.startswith("(\n  (define-fun "), w.note


def test_a_horn_clause_answer_s_witness_on_the_command_line(tmp_path, capsys, chc_file):
    from looprover.cli import main
    out = tmp_path / "model"
    assert main(["verify", str(chc_file), "--engine", "spacer", "--witness", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["chc_answer"] == "sat" and result["witness"]["file"] == str(out)
    assert main(["validate", "--witness", str(out), str(chc_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "confirmed"
    out.write_text("((define-fun inv ((x Int) (y Int)) Bool true))")
    assert main(["validate", "--witness", str(out), str(chc_file)]) == 0
    assert capsys.readouterr().out.startswith("rejected: clause")


def test_verify_witness_and_validate_on_the_command_line(tmp_path, capsys):
    from looprover.cli import main
    out = tmp_path / "w.yml"
    assert main(["verify", str(EXAMPLES / "branch_unsafe.c"), "--engine", "bmc", "--witness", str(out),
                 "--json", "--timeout", "60"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["witness"]["file"] == str(out) and result["witness"]["kind"] == "violation"
    assert main(["validate", "--witness", str(out), str(EXAMPLES / "branch_unsafe.c")]) == 0
    assert capsys.readouterr().out.strip().startswith("confirmed")
    assert main(["validate", "--witness", str(out), str(EXAMPLES / "branch_unsafe.c"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "confirmed"


def test_verify_witness_without_one_says_why(tmp_path, capsys):
    from looprover.cli import main
    out = tmp_path / "w.yml"
    assert main(["verify", str(EXAMPLES / "max_safe.c"), "--engine", "bmc", "--witness", str(out)]) == 0
    text = capsys.readouterr().out
    assert "witness:  no correctness witness" in text and not out.exists()


def test_validate_reports_a_witness_for_another_file(tmp_path, capsys):
    from looprover.cli import main
    out, _ = _witness(EXAMPLES / "count_unsafe.c", "bmc", Status.FALSE, tmp_path)
    assert main(["validate", "--witness", str(out), str(EXAMPLES / "branch_unsafe.c")]) == 0
    assert capsys.readouterr().out.startswith("unknown: the witness is for another file")


def test_validate_input_errors_exit_1(tmp_path, capsys):
    from looprover.cli import main
    bad = tmp_path / "w.yml"
    bad.write_text("just: a mapping\n")
    assert main(["validate", "--witness", str(bad), str(EXAMPLES / "count_safe.c")]) == 1
    assert main(["validate", "--witness", str(tmp_path / "missing.yml"), str(EXAMPLES / "count_safe.c")]) == 1


def test_correctness_witness_of_two_loops_is_confirmed(tmp_path):
    path = EXAMPLES / "multiloop_safe.c"
    out, data = _witness(path, "spacer", Status.TRUE, tmp_path)
    assert len(data[0]["content"]) == 2          # one loop invariant per loop
    assert _check(out, path) == "confirmed"


# two loops in sequence that keep y = 2x: TPA proves it on the pc-encoded system started after the entry step
# (the relational seed y' - y = 2(x' - x) closes level 1; with a nondeterministic loop bound instead of the
# counter c, TPA's run time varied from 8 s to over 60 s within one test process)
TWO_COPYING_LOOPS = """extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
extern int __VERIFIER_nondet_int(void);
void reach_error(void) { __assert_fail("0", "two.c", 4, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
int main(void) {
  int c = 0, x = __VERIFIER_nondet_int(), y = 2 * x;
  if (x < 0 || x > 1000) return 0;
  while (c < 100) { c++; x++; y += 2; }
  while (c < 200) { c++; x++; y += 2; }
  __VERIFIER_assert(y == 2 * x);
  return 0;
}
"""


def test_tpa_witness_from_the_entry_system_is_confirmed(tmp_path):
    """TPA's TRUE on the system that starts after the entry step writes a witness `validate` confirms (its
    state invariant, joined with the entry's Init, split by loop head)."""
    path = tmp_path / "two.c"
    path.write_text(TWO_COPYING_LOOPS)
    single = TPAOptions(loops="single")        # two loops in sequence: by default the network's
    verdict, _ = _verify(path, "tpa", single)
    assert verdict.stats["system"] == "pc-encoded cutpoint graph after the entry step", verdict.stats
    out, data = _witness(path, "tpa", Status.TRUE, tmp_path, single)
    assert len(data[0]["content"]) == 2          # one loop invariant per loop
    assert _check(out, path) == "confirmed"


def test_tpa_witness_from_the_network_of_loops_is_confirmed(tmp_path):
    """By default TPA solves two loops in sequence as Golem does, one TPA per loop composed by the network
    search; its TRUE writes a witness `validate` confirms (the network's safe sets at the loop heads)."""
    path = tmp_path / "two.c"
    path.write_text(TWO_COPYING_LOOPS)
    verdict, _ = _verify(path, "tpa")
    assert verdict.stats["system"] == "network of loops", verdict.stats
    out, data = _witness(path, "tpa", Status.TRUE, tmp_path)
    assert _check(out, path) == "confirmed"


BRANCHY = """extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }
int read(void) { return __VERIFIER_nondet_int(); }
int main(void) {
  int x = __VERIFIER_nondet_int();
  if (x > 3) {
    int y = read();
    if (y == x + 5) reach_error();
  } else {
    int z = __VERIFIER_nondet_int();
    if (z == 1) return 1;
  }
  return 0;
}
"""


def test_violation_witness_with_inputs_in_branches_and_functions(tmp_path):
    path = tmp_path / "branchy.c"
    path.write_text(BRANCHY)
    out, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    waypoints = [s["segment"][0]["waypoint"] for s in data[0]["content"]]
    assert [w["location"]["function"] for w in waypoints] == ["main", "read", "main"]
    assert _check(out, path) == "confirmed"
    x = int(waypoints[0]["constraint"]["value"].split("==")[1])
    waypoints[1]["constraint"]["value"] = f"\\result == {x + 6}"
    out.write_text(yaml.safe_dump(data))
    assert _check(out, path) == "rejected"


# ----------------------------------------------------------------- candidate invariants (summarize, multiloop)
# the declarations of the C programs below
ASSERT_HEADER = """extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
"""

RELATED = ASSERT_HEADER + """int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int i = 0, j = 0;
  while (i < n) { i++; j += 2; }
  __VERIFIER_assert(j == 2 * n);
  return 0;
}
"""

TWO_LOOPS = ASSERT_HEADER + """int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int i = 0;
  while (i < n) { i++; }
  int k = n;
  while (k > 0) { k--; }
  __VERIFIER_assert(i + k == n);
  return 0;
}
"""


@pytest.mark.parametrize("engine", ["summarize", "multiloop"])
@pytest.mark.parametrize("name,text,loops", [("related", RELATED, 1), ("two_loops", TWO_LOOPS, 2)])
def test_candidate_invariants_give_a_confirmed_witness(engine, name, text, loops, tmp_path):
    # summarize's summary conjuncts (entry copies through the constants they start from) and the multi-loop
    # engine's safe sets are candidates: what is written is what the validator confirms
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    out, data = _witness(path, engine, Status.TRUE, tmp_path)
    (entry,) = data
    assert entry["entry_type"] == "invariant_set" and len(entry["content"]) == loops
    lines = text.splitlines()
    for item in entry["content"]:
        loc = item["invariant"]["location"]
        assert lines[loc["line"] - 1][loc["column"] - 1:].startswith("while")
    assert _check(out, path) == "confirmed"


def test_summarize_relates_the_loop_to_its_entry_constants(tmp_path):
    path = tmp_path / "related.c"
    path.write_text(RELATED)
    _, data = _witness(path, "summarize", Status.TRUE, tmp_path)
    value = data[0]["content"][0]["invariant"]["value"]
    assert "2LL * (long long)i" in value          # j == 2*i: j - j0 == 2*(i - i0) with i0 = j0 = 0


SEQUENCE = ASSERT_HEADER + """int main(void) {
  int a = __VERIFIER_nondet_int(), b = __VERIFIER_nondet_int();
  if (a < 0 || a > 100 || b < 0 || b > 100) return 0;
  int i = 0, k = 0;
  while (i < a) { i++; k++; }
  int j = 0;
  while (j < b) { j++; k++; }
  int m = 0;
  while (m < i + j) { __VERIFIER_assert(k > 0); m++; k--; }
  return 0;
}
"""


@pytest.mark.slow
def test_summarize_entry_value_as_a_sum_of_unchanged_variables(tmp_path):
    # the third loop starts with k == a + b (a, b unchanged there): k - k0 == -(m - m0) reads k == a + b - m; the
    # certificate states it as the domains' affine hull does (`k + m - a - b == 0`) when that certifies first
    path = tmp_path / "sequence.c"
    path.write_text(SEQUENCE)
    out, data = _witness(path, "summarize", Status.TRUE, tmp_path)
    assert len(data[0]["content"]) == 3
    value = data[0]["content"][2]["invariant"]["value"]
    assert any(all(f"(long long){v}" in eq for v in "kmab") for eq in value.split("&&")), value
    assert _check(out, path) == "confirmed"


def _hints(path: Path, *atoms: str):
    """Summarize-style candidates at the program's only loop head, parsed from C-like text over IR names."""
    from looprover.domains import Candidate
    from looprover.jobs import load_program
    from looprover.program.cpg import build_cpg
    from looprover.program.expr import IntConst, cmp
    from looprover.evidence.hints import LoopInvariantHints
    program = load_program(path, "ILP32")
    (head,) = build_cpg(program).cutpoints
    var = {info.c_name: info.var for info in program.variables.values() if info.c_name}
    made = []
    for a in atoms:
        lhs, op, rhs = a.split()
        right = var[rhs] if rhs in var else IntConst(int(rhs), var[lhs].type)
        made.append(Candidate(head, cmp(op, var[lhs], right)))
    return program, LoopInvariantHints("test", tuple(made))


def _engine_witness(hints, program, path: Path):
    """The witness of the engine's own candidates, without `witness_for`'s fallback to the domains' ones."""
    from looprover.witness.csource import CSource
    from looprover.witness.svcomp import correctness_witness
    return correctness_witness(hints, program, CSource(path, "ILP32"), str(path), "unreach-call", "ILP32")


def test_candidates_that_are_false_or_not_inductive_are_not_written(tmp_path):
    path = EXAMPLES / "count_safe.c"
    # x == 0 fails after one iteration: dropped; x <= n is inductive and excludes the error: written alone
    program, hints = _hints(path, "x == 0", "x <= n")
    w = _engine_witness(hints, program, path)
    assert w.text is not None, w.note
    (item,) = yaml.safe_load(w.text)[0]["content"]
    assert item["invariant"]["value"] == "x <= n"
    out = tmp_path / "w.yml"
    out.write_text(w.text)
    assert _check(out, path) == "confirmed"
    # only a false one: nothing is written
    program, hints = _hints(path, "x == 0")
    w = _engine_witness(hints, program, path)
    assert w.text is None and "no candidate invariant is inductive" in w.note


def test_candidates_that_do_not_exclude_the_error_are_not_written(tmp_path):
    path = EXAMPLES / "count_safe.c"
    program, hints = _hints(path, "x != 7")        # true on entry, not inductive: dropped
    w = _engine_witness(hints, program, path)
    assert w.text is None and "no candidate invariant is inductive" in w.note
    path = tmp_path / "related.c"
    path.write_text(RELATED)
    program, hints = _hints(path, "i >= 0")        # true and inductive, but j == 2*i is missing
    w = _engine_witness(hints, program, path)
    assert w.text is None and "not confirmed" in w.note


def _true_witness(tmp_path: Path, text: str, engine: str):
    """The engine's TRUE on the program `text`, and the witness written for it: valid against the schema and
    confirmed by `validate`."""
    path = tmp_path / "p.c"
    path.write_text(ASSERT_HEADER + text)
    verdict, program = _verify(path, engine)
    assert verdict.status == Status.TRUE, verdict.reason
    w = witness_for(verdict, program, path, "unreach-call", "ILP32", Deadline(time.monotonic() + 60))
    assert w.text is not None, w.note
    data = yaml.safe_load(w.text)
    assert not [e.message for e in VALIDATOR.iter_errors(data)]
    out = tmp_path / "w.yml"
    out.write_text(w.text)
    assert _check(out, path) == "confirmed"
    return w, data


@pytest.mark.parametrize("engine", ["labmc", "bmc"])
def test_a_true_without_invariants_gets_the_domains_candidates_the_validator_confirms(engine, tmp_path):
    """bmc's TRUE carries no invariants: the writer falls back (the program reads input, so not to its run) to the
    abstract domains' candidates and writes them only once the validator's checks confirm them, saying where they
    came from. labmc's carries its certificate,
    the candidates the domains offer that prove it (`evidence/certify.py`), which the writer prints."""
    w, _ = _true_witness(tmp_path, "int main(void) {\n  int i = __VERIFIER_nondet_int(), s = 0;\n  i = 0;\n"
                                   "  while (i < 20) { i++; s += 2; }\n"
                                   "  __VERIFIER_assert(s == 40);\n  return 0;\n}\n", engine)
    assert ("candidates" in w.note and engine in w.note) if engine == "bmc" else "k-induction checked" in w.note


def test_a_true_the_domains_cannot_explain_gets_spacers_invariants(tmp_path):
    """x == 0 after the loop needs a disjunction (x is 1 only before the first iteration): no domain offers it,
    so the writer (the program reads input: no single run to read them off) asks Spacer for invariants of the
    program and writes them once the validator confirms them."""
    w, _ = _true_witness(tmp_path, "int main(void) {\n  unsigned int x = 1, y = 0;\n  int u = __VERIFIER_nondet_int();\n"
                                   "  while (y < 1024) {\n"
                                   "    x = 0;\n    y++;\n  }\n  __VERIFIER_assert(x == 0);\n  return 0;\n}\n", "bmc")
    assert "cutpoint-invariants checked" in w.note, w.note


def test_a_proof_that_needs_no_invariant_gets_the_invariant_1(tmp_path):
    """The loop's exit condition alone gives the assertion (and the unsigned range): `1` at the loop."""
    _, data = _true_witness(tmp_path, "extern unsigned int __VERIFIER_nondet_uint(void);\nint main(void) {\n"
                                      "  unsigned int x = __VERIFIER_nondet_uint();\n  while (x < 100) {\n"
                                      "    x++;\n  }\n  __VERIFIER_assert(x >= 100);\n  return 0;\n}\n",
                            "kinduction")
    (item,) = data[0]["content"]
    assert item["invariant"]["value"] == "1"


# ------------------------------------------------------------------------------------- no-overflow witnesses
OVERFLOW_SAFE = """extern int __VERIFIER_nondet_int(void);
int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  int i = 0, s = 0;
  while (i < n) { i++; s += 2; }
  return s;
}
"""

OVERFLOW_UNSAFE = """extern int __VERIFIER_nondet_int(void);
int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = 0;
  if (x > 100) y = x * 1000;
  return y;
}
"""


def _no_overflow():
    from looprover.properties import NO_OVERFLOW, Property
    return Property(NO_OVERFLOW)


def _written_witness(text: str, prop, engine: str, expected: Status, tmp_path: Path):
    """`text` as p.c verified for `prop` by `engine` (the verdict must be `expected`), its witness written to
    w.yml and valid against our 2.0 schema: (w.yml, p.c, the witness's entries, the job, the verdict)."""
    path = tmp_path / "p.c"
    path.write_text(text)
    job = Job(path, prop, "ILP32")
    verdict, program = verify_job(job, JobOptions(engine), Deadline(time.monotonic() + 60))
    assert verdict.status == expected, verdict.reason
    w = witness_for(verdict, program, path, prop.name, "ILP32", Deadline(time.monotonic() + 30))
    assert w.text is not None, w.note
    data = yaml.safe_load(w.text)
    assert not [e.message for e in VALIDATOR.iter_errors(data)]
    out = tmp_path / "w.yml"
    out.write_text(w.text)
    return out, path, data, job, verdict


def _overflow_witness(text: str, engine: str, expected: Status, tmp_path: Path) -> tuple[Path, Path, list]:
    out, path, data, _, _ = _written_witness(text, _no_overflow(), engine, expected, tmp_path)
    assert data[0]["metadata"]["task"]["specification"] == "G ! overflow"
    return out, path, data


@pytest.mark.parametrize("engine", ["kinduction", "spacer"])
def test_no_overflow_correctness_witness_is_confirmed(engine, tmp_path):
    out, path, data = _overflow_witness(OVERFLOW_SAFE, engine, Status.TRUE, tmp_path)
    assert _validate(out, path, _no_overflow()).status == "confirmed"
    # read for the witness's own property even when none is given
    assert _check(out, path) == "confirmed"


def test_no_overflow_invariant_too_weak_for_the_checks_is_not_confirmed(tmp_path):
    # 0 <= i is inductive but says nothing about s: s += 2 may overflow as far as it goes
    out, path, data = _overflow_witness(OVERFLOW_SAFE, "spacer", Status.TRUE, tmp_path)
    data[0]["content"][0]["invariant"]["value"] = "0 <= i"
    out.write_text(yaml.safe_dump(data))
    res = _validate(out, path, _no_overflow())
    assert res.status == "unknown" and "not confirmed" in res.reason, res.reason


def test_no_overflow_violation_witness_is_confirmed_and_checked(tmp_path):
    out, path, data = _overflow_witness(OVERFLOW_UNSAFE, "bmc", Status.FALSE, tmp_path)
    assert _validate(out, path, _no_overflow()).status == "confirmed"
    ret = data[0]["content"][0]["segment"][0]["waypoint"]
    ret["constraint"]["value"] = "\\result == 101"        # 101 * 1000 fits: no overflow on this run
    out.write_text(yaml.safe_dump(data))
    assert _validate(out, path, _no_overflow()).status == "rejected"


def test_a_witness_for_another_property_is_not_checked_against_it(tmp_path):
    out, path, _ = _overflow_witness(OVERFLOW_UNSAFE, "bmc", Status.FALSE, tmp_path)
    res = _validate(out, path, default_property())
    assert res.status == "unknown" and "is for no-overflow" in res.reason


# ------------------------------------------------------------------------------------- deep counterexamples
DEEP = """extern unsigned int __VERIFIER_nondet_uint(void);
extern void abort(void);
void reach_error(void) { abort(); }
int main(void) {
  unsigned int n = __VERIFIER_nondet_uint();
  if (n != 7) return 0;
  unsigned int x = 0;
  while (x < 100000000) { x += 2; }
  if (x + n == 100000007) reach_error();
  return 0;
}
"""


def test_deep_violation_witness_is_confirmed_by_a_compiled_run(tmp_path, gcc):
    """accel's counterexample of 5·10^7 iterations: its one input is read before the loop, so the witness
    lists it; `validate` interprets the first 10^6 edges, has used every value by then, and compiles the rest
    (LP64 here, so that no 32-bit C library is needed)."""
    path = tmp_path / "deep.c"
    path.write_text(DEEP)
    job = Job(path, default_property(), "LP64")
    verdict, program = verify_job(job, JobOptions("accel"), Deadline(time.monotonic() + 60))
    assert verdict.status == Status.FALSE, verdict.reason
    assert verdict.evidence.length > 10**7 and verdict.evidence.omitted
    w = witness_for(verdict, program, path, "unreach-call", "LP64", Deadline(time.monotonic() + 60))
    assert w.text is not None, w.note
    data = yaml.safe_load(w.text)
    assert not [e.message for e in VALIDATOR.iter_errors(data)]
    (ret, target) = [s["segment"][0]["waypoint"] for s in data[0]["content"]]
    assert ret["constraint"]["value"] == "\\result == 7"
    out = tmp_path / "w.yml"
    out.write_text(w.text)
    res = validate(out, job, None, Deadline(time.monotonic() + 60))
    assert res.status == "confirmed" and "compiled" in res.reason, res.reason
    ret["constraint"]["value"] = "\\result == 8"        # returns at once: a fully pinned run without the error
    out.write_text(yaml.safe_dump(data))
    assert validate(out, job, None, Deadline(time.monotonic() + 60)).status == "rejected"


FILL = """int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 1 || n > 100000) return 0;
  int a[100000];
  for (int i = 0; i < n; i++) a[i] = 7;
  for (int j = 0; j < n; j++) __VERIFIER_assert(a[j] == %s);
  return 0;
}
"""


@pytest.fixture(scope="module")
def fill_witness(tmp_path_factory) -> tuple[Path, list]:
    """k-induction proves the fill loop with `∀k ∈ [0, i): a[k] == 7`: the program's directory (p.c, w.yml) and
    the witness's entries (checked against the schema and confirmed by `_true_witness`)."""
    tmp = tmp_path_factory.mktemp("fill")
    _, data = _true_witness(tmp, FILL % "7", "kinduction")
    return tmp, data


def test_a_quantified_array_invariant_is_written_in_acsl_and_confirmed(fill_witness):
    """C cannot say `∀k ∈ [0, i): a[k] == 7`, so the writer prints it in ACSL (`acsl_expression`), and `validate`
    reads it back and confirms it (instantiated, `smt/instances.py`)."""
    invs = [c["invariant"] for c in fill_witness[1][0]["content"]]
    on_cells = [i for i in invs if "a[" in i["value"]]
    assert any("\\forall integer k;" in i["value"] for i in on_cells), invs
    assert all(i["format"] == ("acsl_expression" if i in on_cells else "c_expression") for i in invs), invs


@pytest.mark.parametrize("old,new,status", [
    ("7 == a[k]", "8 == a[k]", "rejected"),          # false at the first loop's second visit
    ("k < i)", "k < i + 1)", "rejected"),            # claims the cell the loop writes next
    ("7 == a[k]", "7 <= a[k]", "unknown"),           # true and inductive, but not enough for `a[j] == 7`
])
def test_a_tampered_quantified_invariant_is_not_confirmed(fill_witness, tmp_path, old, new, status):
    text = (fill_witness[0] / "w.yml").read_text()
    assert old in text
    out = tmp_path / "tampered.yml"
    out.write_text(text.replace(old, new))
    assert _check(out, fill_witness[0] / "p.c") == status


def test_the_quantified_invariants_of_a_safe_program_do_not_confirm_its_unsafe_twin(fill_witness, tmp_path):
    """The same loops asserting `a[j] == 8`: the invariants still hold, but they do not exclude the error."""
    twin = tmp_path / "twin.c"
    twin.write_text(ASSERT_HEADER + FILL % "8")
    assert _check(fill_witness[0] / "w.yml", twin) != "confirmed"


def test_a_run_that_leaves_the_model_confirms_no_violation_witness(tmp_path):
    """The validator's run fails the model's own assertion at line 7 (two string literals compared: whether they
    share storage is not modelled), which is no violation: a witness targeting that line is not confirmed."""
    path = tmp_path / "lit.c"
    path.write_text("extern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n"
                    "char *p = \"ab\";\nint main(void) {\n  int k = __VERIFIER_nondet_int();\n"
                    "  if (k == 5) reach_error();\n  if (p == \"b\") reach_error();\n  return 0;\n}\n")
    out, data = _witness(path, "bmc", Status.FALSE, tmp_path)
    assert _check(out, path) == "confirmed"
    data[0]["content"][0]["segment"][0]["waypoint"]["constraint"]["value"] = "\\result == 0"
    data[0]["content"][-1]["segment"][0]["waypoint"]["location"]["line"] = 7
    out.write_text(yaml.safe_dump(data))
    v = _validate(out, path)
    assert v.status == "unknown" and "no violation" in v.reason, v.reason


# ------------------------------------------------------------------------------- memory safety (violation only)
MEMORY_HEADER = """extern int __VERIFIER_nondet_int(void);
extern void *malloc(unsigned int);
extern void free(void *);
"""
# each program violates one part of valid-memsafety (or valid-memcleanup) when the input is 3, and none when it
# is 1: (program, the part, the property)
MEMORY_BUGS = {
    "deref": ("int main(void) {\n  int a[3] = {0, 0, 0};\n  int i = __VERIFIER_nondet_int();\n  if (i >= 0 && i < 4)\n"
              "    a[i] = 1;\n  return 0;\n}\n", "valid-deref", "valid-memsafety"),
    "free": ("int main(void) {\n  int *p = malloc(sizeof(int));\n  int i = __VERIFIER_nondet_int();\n"
             "  free(p);\n  if (i == 3)\n    free(p);\n  return 0;\n}\n", "valid-free", "valid-memsafety"),
    "memtrack": ("int *g;\nint main(void) {\n  int i = __VERIFIER_nondet_int();\n  g = malloc(sizeof(int));\n"
                 "  if (i == 3)\n    g = 0;\n  else\n    free(g);\n  return 0;\n}\n", "valid-memtrack",
                 "valid-memsafety"),
    "memcleanup": ("int main(void) {\n  int i = __VERIFIER_nondet_int();\n  int *p = malloc(sizeof(int));\n"
                   "  if (i != 3)\n    free(p);\n  return 0;\n}\n", "valid-memcleanup", "valid-memcleanup"),
}


def _memory_witness(case: str, tmp_path: Path) -> tuple[Path, Path, list, Job]:
    from looprover.properties import load_property
    text, part, prop = MEMORY_BUGS[case]
    out, path, data, job, verdict = _written_witness(MEMORY_HEADER + text, load_property(prop), "bmc",
                                                     Status.FALSE, tmp_path)
    assert verdict.evidence.violated.prop == part, verdict.reason
    return out, path, data, job


def _memory_check(out: Path, job: Job):
    return validate(out, job, None, Deadline(time.monotonic() + 60), property_given=True)


@pytest.mark.parametrize("case", sorted(MEMORY_BUGS))
def test_memory_safety_violation_witness_names_the_part_and_is_confirmed(case, tmp_path):
    out, path, data, job = _memory_witness(case, tmp_path)
    _, part, _ = MEMORY_BUGS[case]
    assert data[0]["metadata"]["task"]["specification"] == f"G {part}"
    ret, target = [s["segment"][0]["waypoint"] for s in data[0]["content"]]
    assert ret["constraint"]["value"] == "\\result == 3" and target["type"] == "target"
    res = _memory_check(out, job)
    assert res.status == "confirmed" and part in res.reason, res.reason


@pytest.mark.parametrize("case", sorted(MEMORY_BUGS))
def test_a_memory_safety_witness_with_another_input_or_part_is_not_confirmed(case, tmp_path):
    """With an input on which the run makes no error: rejected, unless the run allocates, as the validator
    makes allocations succeed where the witness cannot say whether it meant one to fail (then unknown). A
    witness that names another part than the one the run violates first is never confirmed."""
    out, path, data, job = _memory_witness(case, tmp_path)
    ret = data[0]["content"][0]["segment"][0]["waypoint"]
    ret["constraint"]["value"] = "\\result == 1"          # no violation on this run
    out.write_text(yaml.safe_dump(data))
    res = _memory_check(out, job)
    if case == "deref":
        assert res.status == "rejected", res.reason
    else:
        assert res.status == "unknown" and "allocation(s) made to succeed" in res.reason, res.reason
    ret["constraint"]["value"] = "\\result == 3"
    _, part, prop = MEMORY_BUGS[case]
    if prop == "valid-memsafety":                           # the run violates another part than the witness says
        other = "valid-free" if part != "valid-free" else "valid-deref"
        data[0]["metadata"]["task"]["specification"] = f"G {other}"
        out.write_text(yaml.safe_dump(data))
        res = _memory_check(out, job)
        assert res.status == "unknown" and f"not {other} as the witness says" in res.reason, res.reason


def test_a_memory_safe_true_gets_no_witness_and_says_why(tmp_path):
    from looprover.properties import load_property
    path = tmp_path / "p.c"
    path.write_text(MEMORY_HEADER + "int main(void) {\n  int a[3];\n  int i = __VERIFIER_nondet_int();\n"
                    "  if (i >= 0 && i < 3)\n    a[i] = 1;\n  return 0;\n}\n")
    job = Job(path, load_property("valid-memsafety"), "ILP32")
    verdict, program = verify_job(job, JobOptions("bmc"), Deadline(time.monotonic() + 60))
    assert verdict.status == Status.TRUE, verdict.reason
    w = witness_for(verdict, program, path, "valid-memsafety", "ILP32")
    assert w.text is None and "SV-COMP validates none for valid-memsafety" in w.note


@pytest.mark.parametrize("case,reached", [("deref", True), ("free", True), ("memtrack", None)])
def test_a_memory_safety_violation_runs_compiled_under_address_sanitizer(case, reached, tmp_path, gcc):
    """An invalid access or free is run again by gcc's sanitizers at the violation's line (not our model of C);
    a leak is not run rather than reported as not reached. With the input changed the run makes no error."""
    from looprover.properties import load_property
    from looprover.witness.harness import harness_for
    text, part, prop = MEMORY_BUGS[case]
    path = tmp_path / "p.c"
    path.write_text(MEMORY_HEADER + text)
    verdict, _ = verify_job(Job(path, load_property(prop), "ILP32"), JobOptions("bmc"), Deadline.after(60))
    res = harness_for(verdict, path, "ILP32", True, Deadline.after(60), prop)
    assert res.reached_error is reached, res.detail
    if reached:
        verdict.evidence.inputs[:] = [1]
        # compiled LP64: "not reached" only counts for an LP64 task, an ILP32 one's run says nothing
        res = harness_for(verdict, path, "LP64", True, Deadline.after(60), prop)
        assert res.reached_error is False and "without an error" in res.detail, res.detail
        res = harness_for(verdict, path, "ILP32", True, Deadline.after(60), prop)
        assert res.reached_error is None and "another data model" in res.detail, res.detail


def test_a_memory_safety_run_that_needs_an_allocation_to_fail_is_not_run_compiled(tmp_path, gcc):
    """The compiled program's malloc succeeds: a run that dereferences the NULL of a failed malloc says nothing
    there, and its witness cannot pin the failure (unknown, not confirmed, so not written)."""
    from looprover.properties import load_property
    from looprover.witness.harness import harness_for
    path = tmp_path / "p.c"
    path.write_text(MEMORY_HEADER + "int main(void) {\n  int *p = malloc(sizeof(int));\n  *p = 1;\n"
                    "  free(p);\n  return 0;\n}\n")
    job = Job(path, load_property("valid-memsafety"), "ILP32")
    verdict, program = verify_job(job, JobOptions("bmc"), Deadline.after(60))
    assert verdict.status == Status.FALSE and verdict.evidence.violated.prop == "valid-deref", verdict.reason
    res = harness_for(verdict, path, "ILP32", True, Deadline.after(60), "valid-memsafety", program=program)
    assert res.reached_error is None and "allocation to fail" in res.detail, res.detail
    w = witness_for(verdict, program, path, "valid-memsafety", "ILP32", Deadline.after(30))
    assert w.text is None and "allocation(s) made to succeed" in w.note, w.note


def test_the_address_sanitizer_harness_runs_under_an_address_space_limit(tmp_path, gcc):
    """`--memory` (the bench's default 4096 MB) limits the address space, under which AddressSanitizer cannot
    reserve its shadow memory: the sanitized run is exempt (its resident memory capped instead)."""
    import subprocess
    import sys
    text, _, _ = MEMORY_BUGS["deref"]
    path = tmp_path / "p.c"
    path.write_text(MEMORY_HEADER + text)
    out = subprocess.run([sys.executable, "-m", "looprover", "verify", str(path), "--property", "valid-memsafety",
                          "--engine", "bmc", "--memory", "4096", "--json", "--timeout", "60"],
                         capture_output=True, text=True, timeout=120)
    harness = json.loads(out.stdout)["harness"]
    assert harness["reached_error"] is True, harness


def test_a_violation_that_needs_uninitialised_memory_is_not_rejected(tmp_path):
    """The validator reads uninitialised memory as 0 (as the compiled harness does), where C leaves its value
    open and the format cannot pin it: a run that then ends without the violation leaves the witness unknown,
    so our own witness of it is not written (cstrlen_unsafe's malloc'd bytes), never a correct one rejected."""
    path = tmp_path / "p.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\nint main(void) {\n"
                    "  int x;\n  int y = __VERIFIER_nondet_int();\n  if (y == 3 && x != 0)\n    reach_error();\n"
                    "  return 0;\n}\n")
    verdict, program = _verify(path, "bmc")
    assert verdict.status == Status.FALSE, verdict.reason
    w = witness_for(verdict, program, path, "unreach-call", "ILP32", Deadline.after(30))
    assert w.text is None and "uninitialised object(s) read as 0" in w.note, w.note
