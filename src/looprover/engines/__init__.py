"""The engine registry: each engine by the name users give `--engine`, loaded on first use.

Engines are imported lazily (their cards' `module:Class`, `engines/cards.py`) so that `looprover --help` or a
Horn-clause run does not pay for every engine's imports. The portfolio is a strategy over these engines, not one of them: it is resolved by
`get_engine` like an engine (it has the same interface), but it is not in `ENGINES`, so it never runs itself.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Mapping

from looprover.engines.base import Engine, Run, Task, run_engine
from looprover.engines.cards import CARDS
from looprover.program.cfa import Program
from looprover.verdict import Verdict

ENGINES: dict[str, str] = {name: card.path for name, card in CARDS.items()}
STRATEGIES: dict[str, str] = {
    "portfolio": "looprover.portfolio:Portfolio",
}


def engine_names() -> list[str]:
    """Every name `--engine` accepts: the engines, then the strategies."""
    return sorted(ENGINES) + sorted(STRATEGIES)


def get_engine(name: str) -> Engine:
    path = ENGINES.get(name) or STRATEGIES.get(name)
    if path is None:
        raise KeyError(f"unknown engine {name!r}; known: {', '.join(engine_names())}")
    module, _, cls = path.partition(":")
    return getattr(importlib.import_module(module), cls or "Engine")()


def unavailable(name: str) -> str | None:
    """Why engine `name` cannot be loaded (unknown, or its module is not there), found without importing it;
    None if it can be."""
    path = ENGINES.get(name) or STRATEGIES.get(name)
    if path is None:
        return f"unknown engine {name!r}"
    module = path.partition(":")[0]
    if module in sys.modules:           # loaded already (or registered by hand, without a spec)
        return None
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if found is not None else f"no module named {module!r}"


def verify(name: str, program: Program, task: Task | None = None, *, timeout: float = 60.0,
           bitvector: bool = False, max_bound: int | None = None, settings: Any = None,
           progress=None) -> Verdict:
    """Run one engine by name under the guarded runner (library and test entry point). `settings` is the
    engine's own settings object; `task` defaults to the program's default property."""
    engine = get_engine(name)
    run = Run.with_timeout(timeout, bitvector=bitvector, max_bound=max_bound, progress=progress,
                           settings={name: settings} if settings is not None else {})
    return run_engine(engine, program, task or Task.for_program(program), run)


def settings_map(options: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """`--option` values grouped by engine (name -> {field: text}) as typed settings objects per engine.
    Raises ValueError for an unknown engine, field or value."""
    from looprover.engines.base import make_settings
    out: dict[str, Any] = {}
    for name, values in options.items():
        if name not in ENGINES and name not in STRATEGIES:
            raise ValueError(f"unknown engine {name!r} in --option (known: {', '.join(engine_names())})")
        out[name] = make_settings(get_engine(name), values)
    return out
