"""witness/closed_run.py: a closed program's loop-head states read off its compiled run, printed exactly.

The invariant is only worth writing if it is exactly the visited states: the progressions' formulas are checked
against their points (random progressions), the recorded progressions against the interpreter's own run of the
program, and the witnesses built from them against the validator, on programs whose phases the domains cannot
describe.
"""
from __future__ import annotations

import random
import time

import pytest
import yaml
import z3

from looprover.deadline import Deadline
from looprover.frontend.c import load_c_program
from looprover.program.cpg import build_cpg
from looprover.program.interp import InputOracle, run
from looprover.verdict import Status, Verdict
from looprover.witness.closed_run import MAX_PROGRESSIONS, Progression, _merged, observe, progression_formula
from looprover.evidence.proofs import ClosedRunProof
from looprover.witness.svcomp import witness_for
from looprover.witness.validate import validate_entries
from looprover.witness.csource import CSource

HEADER = """extern void abort(void);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
"""

PHASES = HEADER + """int main(void) {
  int x = 0, y = 500, z = 0;
  while (x < 10000) {
    if (x < 500) x++;
    else { x++; y++; }
  }
  while (y > z) { y--; x--; }
  __VERIFIER_assert(x == z);
  return 0;
}
"""


def _points(p: Progression) -> set[tuple[int, ...]]:
    d = p.delta()
    return {tuple(s + k * di for s, di in zip(p.start, d)) for k in range(p.count)}


@pytest.mark.parametrize("seed", range(40))
def test_a_progression_formula_holds_exactly_at_its_points(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 3)
    count = rng.randint(1, 6)
    start = tuple(rng.randint(-5, 5) for _ in range(n))
    delta = tuple(rng.choice([0, 0, 1, -1, 2, -3]) for _ in range(n))
    p = Progression(count, start, tuple(s + (count - 1) * d for s, d in zip(start, delta)))
    xs = [z3.Int(f"x{i}") for i in range(n)]
    f = progression_formula(p, xs)
    s = z3.Solver()
    s.add(f, *[z3.And(x >= -30, x <= 30) for x in xs])
    models = set()
    while s.check() == z3.sat and len(models) <= count:
        m = s.model()
        point = tuple(m.eval(x, model_completion=True).as_long() for x in xs)
        models.add(point)
        s.add(z3.Or(*[x != v for x, v in zip(xs, point)]))
    assert models == _points(p)


def test_a_progression_with_a_boolean_that_flips_is_its_two_points():
    b, x = z3.Bool("b"), z3.Int("x")
    f = progression_formula(Progression(2, (0, 3), (1, 4)), [b, x])
    s = z3.Solver()
    s.add(f, z3.Not(z3.Or(z3.And(z3.Not(b), x == 3), z3.And(b, x == 4))))
    assert s.check() == z3.unsat


def test_progressions_that_continue_one_another_merge_and_repeats_go():
    a = Progression(3, (0, 7), (2, 7))           # x = 0, 1, 2 with y = 7
    b = Progression(2, (3, 7), (4, 7))           # x = 3, 4: the same progression continued
    c = Progression(1, (9, 9), (9, 9))
    assert _merged([a, b, c, c]) == [Progression(5, (0, 7), (4, 7)), c]
    assert _merged([a, Progression(2, (4, 7), (6, 7))]) == [a, Progression(2, (4, 7), (6, 7))]


def _program(tmp_path, text):
    path = tmp_path / "p.c"
    path.write_text(text)
    return path, load_c_program(str(path))


def test_the_recorded_progressions_are_the_interpreters_loop_head_states(gcc, tmp_path):
    _, program = _program(tmp_path, PHASES)
    heads = list(build_cpg(program).cutpoints)
    got = observe(program, heads, 30.0)
    assert not isinstance(got, str), got
    names, visits = got
    seen: dict[int, list[tuple[int, ...]]] = {h: [] for h in heads}

    def record(loc, state) -> bool:
        if loc in seen:
            seen[loc].append(tuple(int(state[n]) for n in names))
        return False
    assert run(program, InputOracle(program), until=record).outcome == "exit"
    for h in heads:
        points = [pt for p in visits[h].progressions for pt in sorted(_points(p), key=seen[h].index)]
        assert points == seen[h]
        assert visits[h].low == tuple(map(min, zip(*seen[h]))) and visits[h].high == tuple(map(max, zip(*seen[h])))
    assert [len(visits[h].progressions) for h in heads] == [2, 1]


def _closed_true_witness(tmp_path, text):
    path, program = _program(tmp_path, text)
    verdict = Verdict(Status.TRUE, "execute", "the only execution returns from main", ClosedRunProof())
    return path, program, witness_for(verdict, program, path, "unreach-call", "ILP32",
                                      Deadline(time.monotonic() + 60))


def test_a_closed_run_in_phases_gets_a_witness_the_validator_confirms(gcc, tmp_path):
    path, program, w = _closed_true_witness(tmp_path, PHASES)
    assert w.text is not None, w.note
    values = [e["invariant"]["value"] for e in yaml.safe_load(w.text)[0]["content"]]
    assert len(values) == 2 and "||" in values[0]
    res = validate_entries(yaml.safe_load(w.text), program, CSource(path, "ILP32"), Deadline(time.monotonic() + 60))
    assert res.status == "confirmed", res.reason


def test_a_stride_and_an_unsigned_phase_are_printed_with_their_remainder(gcc, tmp_path):
    _, _, w = _closed_true_witness(tmp_path, HEADER + """int main(void) {
  unsigned int x = 0;
  while (x < 100000) { if (x < 1000) x++; else x += 2; }
  __VERIFIER_assert(!(x % 2));
  return 0;
}
""")
    assert w.text is not None, w.note
    assert "% 2" in w.text


def test_a_head_with_more_phases_than_recorded_gets_the_ranges_of_its_variables(gcc, tmp_path):
    """The inner loop's head sees one progression per outer iteration, more than are recorded: its variables'
    ranges take the place of the disjunction, and with the outer head's exact set they are inductive."""
    path, program, w = _closed_true_witness(tmp_path, HEADER + f"""int main(void) {{
  int i = 0, j = 0;
  while (i < {MAX_PROGRESSIONS + 10}) {{
    j = 0;
    while (j < 3) j++;
    i++;
  }}
  __VERIFIER_assert(j == 3);
  return 0;
}}
""")
    assert w.text is not None, w.note
    inner = [e["invariant"]["value"] for e in yaml.safe_load(w.text)[0]["content"]
             if e["invariant"]["location"]["line"] == 8]
    assert inner and "||" not in inner[0] and f"i <= {MAX_PROGRESSIONS + 9}" in inner[0]


def test_any_engines_true_of_a_closed_program_gets_the_runs_invariants(gcc, tmp_path):
    """bmc's TRUE carries no invariants; the program is closed, so its run's loop-head states are the witness."""
    path = tmp_path / "p.c"
    path.write_text(PHASES)
    program = load_c_program(str(path))
    w = witness_for(Verdict(Status.TRUE, "bmc", "unwound", None), program, path, "unreach-call", "ILP32",
                    Deadline(time.monotonic() + 60))
    assert w.text is not None and "closed-run" in w.note, w.note
