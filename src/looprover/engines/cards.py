"""What each engine accepts and what a first answer from it costs, readable without importing the engine.

Why: the portfolio chooses and orders its engines from these facts before it starts any, and importing all ten
engine modules to read them took a quarter of a second of every run -- more than a Horn-clause file's whole
answer. The engine classes take these attributes from their card (`Engine.__init_subclass__`), so each fact is
stated once, here; an engine module is imported only when its engine runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from looprover.properties import (
    CHECK_SAT, NO_OVERFLOW, TERMINATION, UNREACH_CALL, VALID_MEMCLEANUP, VALID_MEMSAFETY,
)
from looprover.verdict import Status

# safety properties: each is a set of assertions in the program (no-overflow's are added by the job,
# `program/instrument.py`; under valid-memsafety the front-end emits `valid-deref` ones), and a safety engine
# treats every assertion alike
SAFETY = frozenset({UNREACH_CALL, NO_OVERFLOW, CHECK_SAT, VALID_MEMSAFETY, VALID_MEMCLEANUP})
BOTH = frozenset({Status.TRUE, Status.FALSE})


@dataclass(frozen=True)
class EngineCard:
    name: str
    path: str                                   # `module:Class`
    # the relative cost of a first answer: lower-cost engines get the portfolio's first turns (0 = cheap
    # unrolling, 1 = a transformation plus unrolling, 2 = deep search)
    cost: int = 1
    # a cost measured different for one input language: (language, cost) pairs
    language_costs: tuple[tuple[str, int], ...] = ()
    # ... or for one property of C programs: (property, cost) pairs
    property_costs: tuple[tuple[str, int], ...] = ()
    languages: frozenset[str] = frozenset({"c", "chc"})
    properties: frozenset[str] = SAFETY
    verdicts: frozenset[Status] = BOTH
    bitvector: bool = True                      # has the bit-precise encoding
    portfolio: bool = True                      # the portfolio runs it

    def cost_for(self, language: str, prop: str | None = None) -> int:
        cost = dict(self.language_costs).get(language, self.cost)
        return dict(self.property_costs).get(prop, cost) if language == "c" else cost


def refusal(e: Any, task: Any, run: Any) -> str | None:
    """Why engine (or card) `e` cannot run `task` under `run`'s options; None if it can."""
    if task.property.name not in e.properties:
        return f"unsupported property: {task.property.name} (engine {e.name})"
    if task.language not in e.languages:
        return f"engine {e.name} does not read {task.language.upper()} input"
    if run.bitvector and not e.bitvector:
        return f"engine {e.name} has no bit-vector encoding"
    return None


_C = frozenset({"c"})
CARDS: dict[str, EngineCard] = {c.name: c for c in (
    EngineCard("bmc", "looprover.engines.bmc:BMC", cost=0),
    # On Horn clauses z3's Spacer, not k-induction, gets the second first turn: at 10 s on
    # ../shared/benchmarks/chc Spacer gave 21 of the portfolio's 93 answers (median 1.2 s, after bmc's and
    # k-induction's first slices), k-induction 8 (issue 27's note)
    # Under valid-memsafety k-induction waits for the second turns, so that accel starts beside bmc: on the
    # Verisec sample (40 files, 3 sizes, 20 s) it gave 1 of the portfolio's 81 answers, while accel's deep
    # overflows came a turn late (median time to find at BASE_SZ 1000: 2.7 s, alone about 1 s; issue 30)
    EngineCard("kinduction", "looprover.engines.kinduction:KInduction", cost=0, language_costs=(("chc", 1),),
               property_costs=((VALID_MEMSAFETY, 1),)),
    EngineCard("labmc", "looprover.engines.labmc:LABMC"),
    EngineCard("tpa", "looprover.engines.tpa:TPAEngine", cost=2),
    EngineCard("multiloop", "looprover.engines.multiloop:MultiLoop", cost=2),
    EngineCard("termination", "looprover.engines.termination:Termination", languages=_C,
               properties=frozenset({TERMINATION})),
    # Horn clauses' mathematical integers get no accelerated branch (yet). A first answer costs a transform and
    # a shallow unrolling, about a second: in the first group, as its bugs are the deep ones the others miss
    # (Verisec at BASE_SZ 1000: alone it found its overflows in about 1 s, in the portfolio's second group 5-11 s)
    EngineCard("accel", "looprover.engines.accel:Accel", cost=0, languages=_C, verdicts=frozenset({Status.FALSE})),
    # Spacer proves fixed buffer code on its strings' cell abstraction (`engines/spacer.py`) in 1-13 s alone at
    # any size, where in the portfolio's second group its turns came late: under valid-memsafety it joins the
    # first group, after accel (Verisec, 40-file sample, 20 s: fixed files proved at BASE_SZ 100 / 1000 8 / 5 in
    # the second group, 9 / 5 in the first, overflows found 11 / 9 and 11 / 10; issue 30's note)
    EngineCard("spacer", "looprover.engines.spacer:SpacerEngine", language_costs=(("chc", 0),),
               property_costs=((VALID_MEMSAFETY, 0),)),
    EngineCard("summarize", "looprover.engines.summarize:Summarize", languages=_C),
    EngineCard("execute", "looprover.engines.execute:Execute", cost=0, languages=_C,
               verdicts=frozenset({Status.TRUE})),
    # one pass of abstract interpretation: `check` runs it before the other engines (`runtime_checks`)
    EngineCard("intervals", "looprover.engines.intervals:Intervals", cost=0, verdicts=frozenset({Status.TRUE}),
               portfolio=False),
)}
