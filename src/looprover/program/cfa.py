"""The program IR: a control-flow automaton (CFA) whose edges carry straight-line statement lists.

Every front-end produces a `Program`; every transformation maps `Program -> Program`; every engine consumes
one (directly, or through the cutpoint graph). The statement set is deliberately tiny:

  Assign(v, e)     v := e                 (array writes are `a := Store(a, i, x)`)
  Havoc(vs)        give each v an arbitrary value of its type (nondet inputs, uninitialised locals)
  Assume(c)        block executions where c is false (branches, __VERIFIER_assume)
  Assert(c, prop)  c must hold here; a violation is a property violation named `prop`

An edge's statements run in order, atomically. Branching is several out-edges whose first statement is an
`Assume`. Program termination is reaching `exit` (including via abort()/exit()); there is no other sink
except locations with no out-edges, where executions are blocked.

The initial state is arbitrary (every variable holds any value of its type); front-ends make C's
initialisation (zeroed globals, havocked locals) explicit on the first edges.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Iterable, Iterator, Mapping

from looprover.program.expr import BOOL, Expr, Var, free_vars


@dataclass(frozen=True, slots=True)
class SrcLoc:
    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


# ---------------------------------------------------------------------------------------- statements
@dataclass(frozen=True, slots=True)
class Assign:
    lhs: Var
    rhs: Expr
    src: SrcLoc | None = None

    def reads(self) -> frozenset[Var]:
        return free_vars(self.rhs)

    def writes(self) -> frozenset[Var]:
        return frozenset((self.lhs,))


@dataclass(frozen=True, slots=True)
class Havoc:
    vars: tuple[Var, ...]
    src: SrcLoc | None = None

    def reads(self) -> frozenset[Var]:
        return frozenset()

    def writes(self) -> frozenset[Var]:
        return frozenset(self.vars)


@dataclass(frozen=True, slots=True)
class Assume:
    cond: Expr
    src: SrcLoc | None = None

    def reads(self) -> frozenset[Var]:
        return free_vars(self.cond)

    def writes(self) -> frozenset[Var]:
        return frozenset()


@dataclass(frozen=True, slots=True)
class Assert:
    cond: Expr
    prop: str = "unreach-call"
    src: SrcLoc | None = None

    def reads(self) -> frozenset[Var]:
        return free_vars(self.cond)

    def writes(self) -> frozenset[Var]:
        return frozenset()


Stmt = Assign | Havoc | Assume | Assert


@dataclass(frozen=True, slots=True)
class Edge:
    src: int
    dst: int
    stmts: tuple[Stmt, ...] = ()

    def reads(self) -> frozenset[Var]:
        out: set[Var] = set()
        for s in self.stmts:
            out |= s.reads()
        return frozenset(out)

    def writes(self) -> frozenset[Var]:
        out: set[Var] = set()
        for s in self.stmts:
            out |= s.writes()
        return frozenset(out)

    @property
    def src_loc(self) -> SrcLoc | None:
        for s in self.stmts:
            if s.src is not None:
                return s.src
        return None


# ---------------------------------------------------------------------------------------- variables
@dataclass(frozen=True, slots=True)
class VarInfo:
    """Where a variable came from; `c_name` is its name in the source.

    `kind`: global | local | param | temp | ret | nondet | allocated. A `nondet` variable is havocked exactly
    where the source program asks for an input (`__VERIFIER_nondet_*`); other havocs (uninitialised locals,
    abstraction) are not inputs. Replays and test harnesses feed inputs to `nondet` havocs only. An `allocated`
    variable is an allocation's success flag (`frontend/c/heap.py`), havocked where it runs: no input either,
    and true where nothing chose its value, as in a compiled run (`interp.InputOracle`).
    """
    var: Var
    kind: str = "local"
    c_name: str | None = None
    src: SrcLoc | None = None

    @property
    def uninitialised(self) -> bool:
        """Whether a havoc of this variable is uninitialised memory (a compiled run's is whatever the stack or
        heap held, so neither a test harness nor a witness can give it the values a trace took)."""
        return self.kind in ("local", "global")


@dataclass(frozen=True)
class ClauseStep:
    """The Horn clause an edge of a CHC program applies, as the file states it, so that a trace can speak of
    clauses, predicates and variables instead of locations and slots. `head_args` and the variables' values
    are IR expressions over the state before the edge and the values its havocs chose."""
    number: int                                 # the clause's position in the file, from 1
    line: int | None                            # the line of its `(assert`
    head: str | None                            # the head predicate, None for a query (head `false`)
    head_args: tuple[Expr, ...]
    variables: tuple[tuple[str, Expr], ...]     # the clause's variables by their names in the file
    text: str                                   # the clause in SMT-LIB syntax


# ------------------------------------------------------------------------------------------ program
@dataclass(frozen=True)
class Refusal:
    """A call whose function the front-end refuses (`looprover check`): the construct and where it is, and the
    source extents (file, first line, last line) of the code a run of the call executes -- the function and
    every function it calls, directly or not -- or None when that is not known (a call through a pointer)."""
    call: SrcLoc
    construct: str
    where: str
    extents: tuple[tuple[str, int, int], ...] | None

    def describe(self) -> str:
        return f"{self.construct} at {self.where}" if self.where else self.construct


@dataclass(frozen=True)
class Program:
    """An immutable CFA. Build one with `ProgramBuilder`; derive new ones with `dataclasses.replace`."""
    name: str
    variables: Mapping[str, VarInfo]
    edges: tuple[Edge, ...]
    init: int
    exit: int
    num_locs: int
    loc_src: Mapping[int, SrcLoc] = field(default_factory=dict)  # a source position per location, if known
    loc_names: Mapping[int, str] = field(default_factory=dict)   # e.g. loop heads, labels (for printing)
    data_model: str = "ILP32"
    source_file: str | None = None
    clauses: Mapping[Edge, ClauseStep] = field(default_factory=dict)   # Horn-clause input: each edge's clause
    # what the model assumes beyond C (`--undefined-functions nondet`: a call of an undefined function); a FALSE
    # rests on these, a TRUE does not (each is an over-approximation)
    assumptions: tuple[str, ...] = ()
    # `looprover check`: the calls whose function's body the front-end refuses, each an `UNMODELLED_REFUSED`
    # assertion at the call (`Refusal`)
    refusals: tuple["Refusal", ...] = ()

    @cached_property
    def _out(self) -> dict[int, list[Edge]]:
        out: dict[int, list[Edge]] = {l: [] for l in range(self.num_locs)}
        for e in self.edges:
            out[e.src].append(e)
        return out

    @cached_property
    def _in(self) -> dict[int, list[Edge]]:
        inc: dict[int, list[Edge]] = {l: [] for l in range(self.num_locs)}
        for e in self.edges:
            inc[e.dst].append(e)
        return inc

    def out_edges(self, loc: int) -> list[Edge]:
        return self._out[loc]

    def in_edges(self, loc: int) -> list[Edge]:
        return self._in[loc]

    @property
    def locations(self) -> range:
        return range(self.num_locs)

    def var(self, name: str) -> Var:
        return self.variables[name].var

    @cached_property
    def all_vars(self) -> tuple[Var, ...]:
        return tuple(info.var for info in self.variables.values())

    def loc_label(self, loc: int) -> str:
        """A location as users know it: its number with its name (CHC predicate, label) or source line."""
        name = self.loc_names.get(loc)
        src = self.loc_src.get(loc)
        where = name or (f"line {src.line}" if src is not None else "")
        return f"{loc} ({where})" if where else str(loc)

    def statements(self) -> Iterator[tuple[Edge, Stmt]]:
        for e in self.edges:
            for s in e.stmts:
                yield e, s

    def assertions(self) -> list[tuple[Edge, Assert]]:
        return [(e, s) for e, s in self.statements() if isinstance(s, Assert)]

    def properties(self) -> set[str]:
        return {s.prop for _, s in self.assertions()}

    def with_edges(self, edges: Iterable[Edge], num_locs: int | None = None, **changes) -> "Program":
        return replace(self, edges=tuple(edges), num_locs=self.num_locs if num_locs is None else num_locs,
                       **changes)

    def check(self) -> None:
        """Internal consistency: locations in range, variables declared, statement types right."""
        declared = set(self.variables)
        for e in self.edges:
            assert 0 <= e.src < self.num_locs and 0 <= e.dst < self.num_locs, e
            for s in e.stmts:
                for v in s.reads() | s.writes():
                    assert v.name in declared, f"undeclared variable {v.name} in {s}"
                    assert self.variables[v.name].var.type == v.type, f"type mismatch for {v.name}"
                if isinstance(s, (Assume, Assert)):
                    assert s.cond.type == BOOL, s
                if isinstance(s, Assign):
                    assert s.rhs.type == s.lhs.type, f"{s}: {s.rhs.type} != {s.lhs.type}"


class ProgramBuilder:
    """Mutable construction helper used by front-ends, transformations and tests."""

    def __init__(self, name: str, data_model: str = "ILP32", source_file: str | None = None):
        self.name = name
        self.data_model = data_model
        self.source_file = source_file
        self.variables: dict[str, VarInfo] = {}
        self.edges: list[Edge] = []
        self.num_locs = 0
        self.loc_src: dict[int, SrcLoc] = {}
        self.loc_names: dict[int, str] = {}
        self.clauses: dict[Edge, ClauseStep] = {}
        self.init = self.new_loc()
        self.exit: int | None = None

    def new_loc(self, src: SrcLoc | None = None, name: str | None = None) -> int:
        loc = self.num_locs
        self.num_locs += 1
        if src is not None:
            self.loc_src[loc] = src
        if name is not None:
            self.loc_names[loc] = name
        return loc

    def declare(self, name: str, type_, kind: str = "local", c_name: str | None = None,
                src: SrcLoc | None = None) -> Var:
        """Declare a variable; the name must be fresh (use `fresh_name` for generated ones)."""
        if name in self.variables:
            raise ValueError(f"variable {name} declared twice")
        v = Var(name, type_)
        self.variables[name] = VarInfo(v, kind, c_name if c_name is not None else name, src)
        return v

    def fresh_name(self, base: str) -> str:
        if base not in self.variables:
            return base
        i = 1
        while f"{base}#{i}" in self.variables:
            i += 1
        return f"{base}#{i}"

    def add_edge(self, src: int, dst: int, *stmts: Stmt) -> Edge:
        e = Edge(src, dst, tuple(stmts))
        self.edges.append(e)
        return e

    def build(self, exit_loc: int | None = None) -> Program:
        exit_loc = exit_loc if exit_loc is not None else self.exit
        if exit_loc is None:
            exit_loc = self.new_loc(name="exit")
        p = Program(self.name, dict(self.variables), tuple(self.edges), self.init, exit_loc, self.num_locs,
                    dict(self.loc_src), dict(self.loc_names), self.data_model, self.source_file,
                    dict(self.clauses))
        p.check()
        return p


def successors(edges) -> dict[int, list[int]]:
    """Each location's successors along `edges`."""
    succ: dict[int, list[int]] = {}
    for e in edges:
        succ.setdefault(e.src, []).append(e.dst)
    return succ


def closure(step: dict[int, list[int]], start) -> set[int]:
    """`start` and every location `step` (a successor or predecessor map) leads to from it."""
    seen = set(start)
    todo = list(seen)
    while todo:
        for y in step.get(todo.pop(), ()):
            if y not in seen:
                seen.add(y)
                todo.append(y)
    return seen


def reached_from(edges, start: int) -> set[int]:
    """The locations a path of at least one of `edges` leads to from `start` (`start` itself only on a cycle)."""
    succ = successors(edges)
    return closure(succ, succ.get(start, ()))


@lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def same_file(a: str, b: str) -> bool:
    """Whether two source file names (of `SrcLoc`s, of a compiler's report) name one file."""
    return a == b or _real(a) == _real(b)


def stmt_to_str(s: Stmt) -> str:
    if isinstance(s, Assign):
        return f"{s.lhs.name} := {s.rhs}"
    if isinstance(s, Havoc):
        return "havoc " + ", ".join(v.name for v in s.vars)
    if isinstance(s, Assume):
        return f"assume {s.cond}"
    if isinstance(s, Assert):
        return f"assert {s.cond}"
    raise TypeError(s)


def program_to_str(p: Program) -> str:
    """A compact textual dump of the CFA (debugging and test failure messages)."""
    lines = [f"program {p.name}: init L{p.init}, exit L{p.exit}, {p.num_locs} locations"]
    for name, info in p.variables.items():
        lines.append(f"  var {name}: {info.var.type} ({info.kind})")
    for e in p.edges:
        body = "; ".join(stmt_to_str(s) for s in e.stmts) or "skip"
        lines.append(f"  L{e.src} -> L{e.dst}: {body}")
    return "\n".join(lines)

