"""Models and derivations of Horn-clause answers (`witness/chc.py`): written from every engine's evidence, checked
on the file's own clauses, and the check refuses what does not hold.

The random systems are the property test of the front-end's preprocessing (predicates as locations, shared
slots, definitions substituted, loop-free predicates folded into the cutpoint graph's edges): each engine's
answer must be z3 Spacer's on the original clauses, and its model or derivation, translated back to the file's
predicates, must hold for the original clauses.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import z3

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.frontend.chc import load_chc_program
from looprover.verdict import Status
from looprover.witness.chc import check_witness, chc_witness

from helpers.randhorn import random_system, spacer_answer

SAFE = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(declare-fun mid (Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int))
  (=> (and (inv x y) (< x 10) (= x1 (+ x 1)) (= y1 (+ y 2))) (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) (>= x 10)) (mid y))))
(assert (forall ((y Int)) (=> (and (mid y) (not (= y 20))) false)))
(check-sat)
"""
UNSAFE = SAFE.replace("(= y 20)", "(= y 22)")


def _file(tmp_path: Path, text: str, name: str = "h.smt2") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _witness(path: Path, engine: str, timeout: float = 20.0):
    program = load_chc_program(path)
    v = verify(engine, program, timeout=timeout)
    return v, chc_witness(v, program, Deadline.after(timeout))


@pytest.mark.parametrize("engine", ["spacer", "tpa", "kinduction", "multiloop", "bmc"])
def test_every_engine_s_sat_answer_comes_with_a_model_the_file_s_clauses_confirm(tmp_path, engine):
    path = _file(tmp_path, SAFE)
    v, w = _witness(path, engine)
    assert v.status == Status.TRUE, v.reason
    assert w.text is not None, w.note
    assert "define-fun inv" in w.text and "define-fun mid" in w.text
    assert check_witness(w.text, path, Deadline.after(10)).status == "confirmed"
    # the same model is no model of the unsafe twin (its query excludes a state the model keeps)
    assert check_witness(w.text, _file(tmp_path, UNSAFE, "u.smt2"), Deadline.after(10)).status == "rejected"


@pytest.mark.parametrize("engine", ["spacer", "tpa", "bmc"])
def test_an_unsat_answer_comes_with_a_derivation_each_step_of_which_a_clause_makes(tmp_path, engine):
    path = _file(tmp_path, UNSAFE)
    v, w = _witness(path, engine)
    assert v.status == Status.FALSE, v.reason
    assert w.text is not None, w.note
    lines = w.text.splitlines()
    assert lines[0] == "0:\ttrue" and lines[-1].split("\t")[1].startswith("false")
    assert "(mid 20)" in w.text
    assert check_witness(w.text, path, Deadline.after(10)).status == "confirmed"
    assert check_witness(w.text, _file(tmp_path, SAFE, "s.smt2"), Deadline.after(10)).status == "rejected"


def test_models_that_do_not_hold_are_rejected(tmp_path):
    path = _file(tmp_path, SAFE)
    weak = "((define-fun inv ((a Int) (b Int)) Bool true) (define-fun mid ((a Int)) Bool true))"
    strong = "((define-fun inv ((a Int) (b Int)) Bool (= b (* 2 a))) (define-fun mid ((a Int)) Bool false))"
    good = "((define-fun inv ((a Int) (b Int)) Bool (and (= b (* 2 a)) (<= a 10))) " \
           "(define-fun mid ((a Int)) Bool (= a 20)))"
    missing = "((define-fun inv ((a Int) (b Int)) Bool (and (= b (* 2 a)) (<= a 10))))"
    dl = Deadline.after(10)
    assert check_witness(good, path, dl).status == "confirmed"
    assert check_witness("sat\n" + good, path, dl).status == "confirmed"
    assert check_witness(weak, path, dl).reason.startswith("clause 4")          # the query
    assert check_witness(strong, path, dl).reason.startswith("clause 3")        # mid is derived
    assert check_witness(missing, path, dl).reason == "no definition of mid"
    assert check_witness("((define-fun inv ((a Int)) Bool true))", path, dl).status == "rejected"
    assert check_witness("((define-fun inv ((a Int) (b Int)) Bool (< a", path, dl).status == "rejected"


def test_derivations_that_do_not_follow_are_rejected(tmp_path):
    path = _file(tmp_path, UNSAFE)
    steps = ["0:\ttrue", "1:\t(inv 0 0) -> 0"] + \
        [f"{k + 1}:\t(inv {k} {2 * k}) -> {k}" for k in range(1, 11)] + ["12:\t(mid 20) -> 11", "13:\tfalse -> 12"]
    dl = Deadline.after(10)
    assert check_witness("\n".join(steps), path, dl).status == "confirmed"
    # Golem prints its derivations so: an `unsat` line first, two spaces after the arrow
    assert check_witness("unsat\n" + "\n".join(s.replace("-> ", "->  ") for s in steps), path, dl).status == \
        "confirmed"
    wrong_value = steps[:5] + ["5:\t(inv 4 9) -> 4"] + steps[6:]
    assert check_witness("\n".join(wrong_value), path, dl).reason.startswith("step 5")
    assert check_witness("\n".join(steps[:-1]), path, dl).reason == "the derivation does not end with false"
    skipped = steps[:3] + steps[4:]                 # step 4 follows from step 3, which is not there
    assert check_witness("\n".join(skipped), path, dl).status == "rejected"
    early = steps[:-2] + ["12:\t(mid 20) -> 12", "13:\tfalse -> 12"]
    assert check_witness("\n".join(early), path, dl).status == "rejected"


# ------------------------------------------------------------------------------ random Horn systems
@pytest.mark.parametrize("engine", ["tpa", "kinduction", "spacer", "multiloop", "bmc"])
def test_random_horn_systems_keep_their_answer_and_their_evidence_holds_for_the_original_clauses(tmp_path, engine):
    """Property check (seeded random; the project does not use hypothesis)."""
    rng = random.Random({"tpa": 31, "kinduction": 32, "spacer": 33, "multiloop": 34, "bmc": 35}[engine])
    answered = witnessed = 0
    for i in range(14):
        text = random_system(rng)
        expected = spacer_answer(text)
        if expected == "unknown":
            continue
        path = _file(tmp_path, text, f"r{i}.smt2")
        v, w = _witness(path, engine, timeout=5.0)
        if v.status == Status.UNKNOWN:
            continue
        answered += 1
        assert (v.status == Status.TRUE) == (expected == "sat"), text
        if w.text is not None:
            witnessed += 1
            assert check_witness(w.text, path, Deadline.after(10)).status == "confirmed", (text, w.text)
        else:
            assert "does not confirm" not in w.note, (text, w.note)      # a witness that fails is a bug
    assert answered >= 10 and witnessed == answered


# ------------------------------------------------------------------------------ the cvc5 second opinion
def _cvc5_script():
    import importlib.util
    spec = importlib.util.spec_from_file_location("chc_model_cvc5",
                                                  Path(__file__).parents[2] / "scripts" / "chc_model_cvc5.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_cvc5_script_replaces_the_predicates_declarations_by_the_model_and_negates_each_clause():
    mod = _cvc5_script()
    model = "sat\n((define-fun inv ((a Int) (b Int)) Bool (= b (* 2 a)))\n (define-fun mid ((a Int)) Bool (= a 20)))"
    script, n = mod.check_script(SAFE, model)
    assert n == 4 and "declare-fun" not in script and script.count("(check-sat)") == 4
    assert script.index("(define-fun mid") < script.index("(push 1)")
    assert "(assert (not (forall ((y Int)) (=> (and (mid y) (not (= y 20))) false))))" in script


def test_cvc5_confirms_our_model_and_rejects_a_weak_one(tmp_path):
    pytest.importorskip("cvc5", reason="cvc5 (pip install cvc5) is a measurement tool, not a dependency")
    mod = _cvc5_script()
    path = _file(tmp_path, SAFE)
    v, w = _witness(path, "spacer")
    model = tmp_path / "m"
    model.write_text(w.text)
    assert mod.check(path, model) == "confirmed"
    model.write_text("((define-fun inv ((a Int) (b Int)) Bool true) (define-fun mid ((a Int)) Bool true))")
    assert mod.check(path, model) == "rejected: clause 4 is violated"


def test_the_reachable_states_of_an_exhaustively_unwound_program_are_exact(tmp_path):
    """bmc's TRUE has no invariants: its model is the union of the states of every depth, which runs out."""
    from looprover.witness.chc import predicate_locations, reachable_states
    program = load_chc_program(_file(tmp_path, SAFE))
    got = reachable_states(program, Deadline.after(20))
    loc = {name: n for n, name in predicate_locations(program).items()}
    x, y = z3.Ints("i0 i1")
    exact = z3.And(0 <= x, x <= 10, y == 2 * x)
    s = z3.Solver()
    s.add(got[loc["inv"]] != exact)
    assert s.check() == z3.unsat
    # a counter without a bound never runs out: the iteration gives up instead of looping
    endless = SAFE.replace("(< x 10)", "(>= x 0)")
    assert isinstance(reachable_states(load_chc_program(_file(tmp_path, endless, "e.smt2")), Deadline.after(2)), str)


def test_models_as_other_solvers_print_them_are_read(tmp_path):
    """Golem writes `let`s nested thousands deep and `(error ...)` lines for commands it ignores before its
    answer: neither stops the check."""
    path = _file(tmp_path, SAFE)
    inv = "(and (= b (* 2 a)) (<= a 10))"
    for k in range(3000):
        inv = f"(let ((l{k} {inv})) l{k})"
    model = f'(error "Unknown command, ignoring")\nsat\n((define-fun inv ((a Int) (b Int)) Bool {inv})\n' \
            "(define-fun mid ((a Int)) Bool (= a 20)))"
    assert check_witness(model, path, Deadline.after(10)).status == "confirmed"
