"""The engine interface (`engines/base.py`): the guarded runner, the evidence rule, settings from `--option`."""
from __future__ import annotations

import dataclasses

import pytest
import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.engines import ENGINES, engine_names, get_engine, settings_map
from looprover.engines.base import Engine, Run, Task, make_settings, run_engine, vet
from looprover.errors import GiveUp, UnsupportedError
from looprover.program.cfa import ProgramBuilder
from looprover.properties import Property
from looprover.verdict import Counterexample, Status, Verdict


@pytest.fixture(scope="module")
def program():
    b = ProgramBuilder("p")
    end = b.new_loc()
    b.add_edge(b.init, end)
    return b.build(end)


class Raising(Engine):
    name = "raising"

    def __init__(self, exc):
        self.exc = exc

    def solve(self, program, task, run):
        run.stage = "bound 4"
        run.stats["seen"] = 1
        raise self.exc


@pytest.mark.parametrize("exc,reason", [
    (OutOfTime(), "timeout at bound 4"),
    (MemoryError(), "out of memory"),
    (RecursionError(), "recursion too deep"),
    (GiveUp("interpolation failed"), "interpolation failed"),
    (UnsupportedError("floating point", "a.c:3"), "unsupported: floating point at a.c:3"),
    (z3.Z3Exception(b"parser error"), "z3 error: parser error"),
    (RuntimeError("bug"), "internal error: RuntimeError: bug"),
])
def test_runner_turns_every_failure_into_unknown_with_a_reason(program, exc, reason):
    v = run_engine(Raising(exc), program, Task(), Run.with_timeout(5))
    assert v.status == Status.UNKNOWN and v.reason == reason and v.engine == "raising"
    assert v.stats["seen"] == 1 and v.time >= 0
    assert ("traceback" in v.stats) == (type(exc) is RuntimeError)


class Answering(Engine):
    name = "answering"
    verdicts = frozenset({Status.TRUE})
    properties = frozenset({"unreach-call"})
    languages = frozenset({"c"})
    bitvector = False

    def __init__(self, verdict):
        self.verdict = verdict

    def solve(self, program, task, run):
        return self.verdict


def test_runner_refuses_what_the_engine_does_not_accept(program):
    e = Answering(Verdict(Status.TRUE, "answering", "ok"))
    assert run_engine(e, program, Task(), Run.with_timeout(5)).status == Status.TRUE
    v = run_engine(e, program, Task(Property("termination")), Run.with_timeout(5))
    assert v.status == Status.UNKNOWN and "unsupported property: termination" in v.reason
    v = run_engine(e, program, Task(), Run.with_timeout(5, bitvector=True))
    assert v.status == Status.UNKNOWN and "bit-vector" in v.reason
    v = run_engine(e, program, Task(language="chc"), Run.with_timeout(5))
    assert v.status == Status.UNKNOWN and "CHC" in v.reason


def test_runner_rejects_undeclared_verdicts_and_unvalidated_false(program):
    cex = Counterexample([], [], validated=True)
    v = run_engine(Answering(Verdict(Status.FALSE, "answering", "bug", cex)), program, Task(),
                   Run.with_timeout(5))
    assert v.status == Status.UNKNOWN and "does not declare" in v.reason
    bad = Verdict(Status.FALSE, "bmc", "found", evidence=Counterexample([], [], validated=False))
    assert vet(bad).status == Status.UNKNOWN and "not validated" in vet(bad).reason
    assert vet(Verdict(Status.FALSE, "bmc", "found")).status == Status.UNKNOWN
    assert vet(dataclasses.replace(bad, evidence=cex)).status == Status.FALSE


def test_registry_and_settings():
    assert set(ENGINES) <= set(engine_names()) and "portfolio" in engine_names() and "portfolio" not in ENGINES
    tpa = get_engine("tpa")
    s = make_settings(tpa, {"seeds": "off", "replay_limit": "10", "itp_methods": "farkas+mbp"})
    assert s.seeds is False and s.replay_limit == 10 and s.itp_methods == ("farkas", "mbp")
    for bad in ({"seeds": "maybe"}, {"replay_limit": "ten"}, {"no_such": "1"}, {"rebuild_after": "5"}):
        with pytest.raises(ValueError):
            make_settings(tpa, bad)
    with pytest.raises(ValueError):
        make_settings(get_engine("bmc"), {"x": "1"})          # bmc has no options
    with pytest.raises(ValueError):
        settings_map({"nosuch": {"a": "1"}})
    assert settings_map({"kinduction": {"seed": "7"}})["kinduction"].seed == 7


def test_deadline():
    d = Deadline.after(10)
    assert 9 < d.left() <= 10 and not d.expired() and d.cap(1).left() <= 1
    assert d.earliest(Deadline.after(1)).left() <= 1 and d.earliest(None) is d
    assert Deadline.never().unlimited and Deadline.never().ms() == 4_294_967_295
    with pytest.raises(OutOfTime):
        Deadline.after(-1).check()
    with pytest.raises(OutOfTime):
        Deadline.after(-1).ms()


def test_every_card_names_its_engine_and_the_engine_takes_the_cards_facts():
    """The portfolio chooses engines from their cards without importing them (`engines/cards.py`): a card
    must lead to the engine of its name, which then states exactly the card's facts."""
    from looprover.engines import get_engine
    from looprover.engines.cards import CARDS
    for name, card in CARDS.items():
        e = get_engine(name)
        assert e.name == name
        assert (e.cost, e.languages, e.properties, e.verdicts, e.bitvector, e.portfolio) == \
            (card.cost, card.languages, card.properties, card.verdicts, card.bitvector, card.portfolio)
