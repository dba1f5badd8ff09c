"""Termination witnesses, format 2.1: a termination TRUE's arguments written as `loop_transition_invariant`s, valid
against our 2.1 schema, confirmed by `validate`, and not confirmed (or rejected) when tampered with: a transition
invariant that does not decrease, one that is not well-founded, a missing loop, a weakened state invariant."""
from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from looprover.deadline import Deadline
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import TERMINATION, load_property
from looprover.verdict import Status
from looprover.witness.svcomp import witness_for
from looprover.witness.validate import validate

SCHEMA = json.loads((Path(__file__).parent / "witness-2.1.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
HEADER = "extern int __VERIFIER_nondet_int(void);\nextern unsigned int __VERIFIER_nondet_uint(void);\n"

COUNT_UP = HEADER + """int main(void) {
  int n = __VERIFIER_nondet_int();
  int i = 0;
  while (i < n) {
    i++;
  }
  return 0;
}
"""

NESTED = HEADER + """int main(void) {
  int n = __VERIFIER_nondet_int();
  int m = __VERIFIER_nondet_int();
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++) {
      n = n + 0;
    }
  }
  return 0;
}
"""

LEXICOGRAPHIC = HEADER + """int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  while (x > 0 && y > 0) {
    if (__VERIFIER_nondet_int()) { x = x - 1; y = __VERIFIER_nondet_int(); } else { y = y - 1; }
  }
  return 0;
}
"""

NO_LOOPS = HEADER + "int main(void) { return __VERIFIER_nondet_int() > 0; }\n"


def _witness(tmp_path: Path, text: str, expected: Status = Status.TRUE) -> tuple[Path, Path, list]:
    path = tmp_path / "p.c"
    path.write_text(text)
    job = Job(path, load_property(TERMINATION), "ILP32")
    verdict, program = verify_job(job, JobOptions("termination"), Deadline(time.monotonic() + 60))
    assert verdict.status == expected, verdict.reason
    w = witness_for(verdict, program, path, TERMINATION, "ILP32", Deadline(time.monotonic() + 60))
    assert w.text is not None, w.note
    data = yaml.safe_load(w.text)
    assert not [e.message for e in VALIDATOR.iter_errors(data)]
    out = tmp_path / "w.yml"
    out.write_text(w.text)
    return out, path, data


def _validate(witness: Path, program: Path):
    return validate(witness, Job(program, load_property(TERMINATION), "ILP32"), None,
                    Deadline(time.monotonic() + 60), property_given=True)


def _transitions(data: list) -> list[dict]:
    return [c["invariant"] for c in data[0]["content"] if c["invariant"]["type"] == "loop_transition_invariant"]


@pytest.mark.parametrize("text,loops", [(COUNT_UP, 1), (NESTED, 2), (LEXICOGRAPHIC, 1), (NO_LOOPS, 0)],
                         ids=["count", "nested", "lexicographic", "no-loops"])
def test_termination_witness_is_valid_and_confirmed(tmp_path, text, loops):
    out, path, data = _witness(tmp_path, text)
    (entry,) = data
    assert entry["metadata"]["format_version"] == "2.1" and entry["metadata"]["task"]["specification"] == "F end"
    ts = _transitions(data)
    assert len(ts) == loops and all(t["format"] == "ext_c_expression" and "\\at(" in t["value"] for t in ts)
    res = _validate(out, path)
    assert res.status == "confirmed", res.reason


def _tampered(tmp_path, text: str, value: str):
    out, path, data = _witness(tmp_path, text)
    _transitions(data)[0]["value"] = value
    out.write_text(yaml.safe_dump(data))
    return _validate(out, path)


def test_transition_invariant_that_does_not_decrease_is_rejected(tmp_path):
    res = _tampered(tmp_path, COUNT_UP, "\\at(i, AnyPrev) > i")       # i grows
    assert res.status == "rejected", res.reason


def test_transition_invariant_that_is_not_well_founded_is_not_confirmed(tmp_path):
    res = _tampered(tmp_path, COUNT_UP, "\\at(i, AnyPrev) < i")       # true, but no bound: not well-founded
    assert res.status == "unknown" and "well-founded" in res.reason, res.reason


def test_transition_invariant_without_its_bound_is_not_confirmed(tmp_path):
    # n - i decreases, but nothing in the relation bounds it: `n - i >= 0` was the well-foundedness
    res = _tampered(tmp_path, COUNT_UP, "(long long)\\at(n, AnyPrev) - \\at(i, AnyPrev) > (long long)n - i")
    assert res.status == "unknown" and "well-founded" in res.reason, res.reason


def test_a_measure_that_reads_the_current_state_is_not_taken_as_well_founded(tmp_path):
    # true between any two visits, but `n - \\at(i, AnyPrev)` mixes the two states: a bound that moves with the
    # current n is no well-founded measure in general, so it is not confirmed
    res = _tampered(tmp_path, COUNT_UP, "(long long)n - \\at(i, AnyPrev) > (long long)n - i && "
                                        "(long long)n - \\at(i, AnyPrev) >= 0")
    assert res.status == "unknown" and "well-founded" in res.reason, res.reason


def test_witness_missing_a_loop_is_not_confirmed(tmp_path):
    out, path, data = _witness(tmp_path, NESTED)
    inner = _transitions(data)[-1]
    data[0]["content"] = [c for c in data[0]["content"] if c["invariant"] is not inner]
    out.write_text(yaml.safe_dump(data))
    res = _validate(out, path)
    assert res.status == "unknown" and "no transition invariant" in res.reason, res.reason


def test_false_state_invariant_is_rejected(tmp_path):
    out, path, data = _witness(tmp_path, COUNT_UP)
    loop = _transitions(data)[0]["location"]
    data[0]["content"].append({"invariant": {"type": "loop_invariant", "location": loop, "value": "i == 0",
                                             "format": "c_expression"}})
    out.write_text(yaml.safe_dump(data))
    assert _validate(out, path).status == "rejected"


def test_a_termination_witness_is_not_read_for_another_property(tmp_path):
    out, path, _ = _witness(tmp_path, COUNT_UP)
    res = validate(out, Job(path, load_property("unreach-call"), "ILP32"), None, Deadline(time.monotonic() + 60),
                   property_given=True)
    assert res.status == "unknown" and "is for termination" in res.reason


# ------------------------------------------------------------------------------------------ non-termination
# cycles of seven iterations through a reset (the recurrent set is a state the cycle comes back to), and a loop
# whose nondet condition may stay true forever while y moves (any state: a set closed under one iteration)
RESET = HEADER + """int main(void) {
  int x = __VERIFIER_nondet_int();
  while (x >= 0) {
    if (x > 5) x = 0; else x = x + 1;
  }
  return 0;
}
"""

NONDET_GUARD = HEADER + """int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = 0;
  while (__VERIFIER_nondet_int()) {
    y = y + x;
  }
  return y;
}
"""


def _violation(tmp_path: Path, text: str) -> tuple[Path, Path, list]:
    return _witness(tmp_path, text, Status.FALSE)


def _waypoints(data: list) -> list[dict]:
    return [s["segment"][0]["waypoint"] for s in data[0]["content"]]


@pytest.mark.parametrize("text", [RESET, NONDET_GUARD], ids=["reset", "nondet-guard"])
def test_nontermination_witness_is_valid_and_confirmed(tmp_path, text):
    out, path, data = _witness_checked(tmp_path, text)
    (entry,) = data
    assert entry["entry_type"] == "violation_sequence" and entry["metadata"]["format_version"] == "2.1"
    wps = _waypoints(data)
    assert wps[-1]["action"] == "cycle" and wps[-1]["type"] == "assumption"
    assert [w["type"] for w in wps[:-1]] == ["function_return"]


def _witness_checked(tmp_path, text):
    out, path, data = _violation(tmp_path, text)
    res = _validate(out, path)
    assert res.status == "confirmed", res.reason
    return out, path, data


def test_nontermination_stem_that_leaves_the_loop_is_rejected(tmp_path):
    out, path, data = _violation(tmp_path, RESET)
    _waypoints(data)[0]["constraint"]["value"] = "\\result == -1"       # the loop does not start
    out.write_text(yaml.safe_dump(data))
    res = _validate(out, path)
    assert res.status == "rejected", res.reason


def test_recurrent_set_that_is_not_closed_is_rejected(tmp_path):
    out, path, data = _violation(tmp_path, NONDET_GUARD)
    wps = _waypoints(data)
    wps[0]["constraint"]["value"] = "\\result == 1"     # x = 1: the stem reaches the loop with y == 0 ...
    wps[-1]["constraint"]["value"] = "y == 0"        # ... and y grows by 1: no few iterations come back to y == 0
    out.write_text(yaml.safe_dump(data))
    res = _validate(out, path)
    assert res.status == "rejected" and "not closed" in res.reason, res.reason


def test_a_dead_variable_is_left_out_of_the_stems_end_state(tmp_path):
    """`i` is never read: its value in the engine's model is arbitrary and a validator's run need not repeat it,
    so the recurrent set read off the stem's end (a cycle of four iterations through a reset) does not name it."""
    out, path, data = _witness_checked(tmp_path, HEADER + """int main(void) {
  int i;
  unsigned int len = 0;
  while (__VERIFIER_nondet_int()) {
    if (len == 4) len = 0;
    len++;
  }
  return 0;
}
""")
    value = _waypoints(data)[-1]["constraint"]["value"]
    assert "len" in value and "i" not in value.replace("len", "")
