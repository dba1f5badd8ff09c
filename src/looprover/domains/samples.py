"""States seen in short random runs of the concrete interpreter: the `samples` of a `Site`.

Why here: the domains read their bounds, offsets, residues and lines off these states, and the state driver
drops every atom some sampled (hence reachable) state falsifies, before Houdini sees it. Inputs are small
numbers mostly, with a few type extremes, so wrap-around paths get sampled too. Where no edge can run on
random values (a Horn clause or an `assume` that havocs a variable and then pins it down, `x' = x + y'`), z3
picks the havoc values for the edge from the concrete state (`_EdgeSolver`); the interpreter still runs the
edge, so every sample is a state of a real run.
"""
from __future__ import annotations

import random
from typing import Any

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.domains.base import program_constants
from looprover.errors import GiveUp
from looprover.program.cfa import Assign, Assume, Edge, Havoc, Program
from looprover.program.expr import ArrayType, BoolType, IntType, Var
from looprover.program.interp import ArrayValue, Evaluator, Oracle, UndefinedBehavior, commit, try_edge
from looprover.smt.encode import Encoder
from looprover.smt.solver import check_unpaused, plain_solver

SOLVE_MS = 50      # z3's time per solved step: a sample is a hint, not worth more
CONSTANT_SHARE = 0.2    # of the random inputs of the runs for unreached points: a program constant


class _RandomOracle(Oracle):
    """Random inputs; given the program's constants, a `CONSTANT_SHARE` of them one of those: a scan that
    branches on `','` or `'"'` takes those branches, and the loops behind them get samples, only if its inputs
    sometimes are those characters (small random numbers never are)."""

    def __init__(self, rng: random.Random, consts: list[int]):
        self.rng, self.consts = rng, consts

    def __call__(self, v: Var):
        pick = self.consts and self.rng.random() < CONSTANT_SHARE
        return _random_value(self.rng, v.type, self.consts if pick else None)


class _ListOracle(Oracle):
    """z3's values for an edge's havocs, then random ones: the solver encodes an edge up to its first
    assertion, and a havoc after one that holds (the string ghosts' next terminator) still needs a value."""

    def __init__(self, values: list[Any], rng: random.Random):
        self.values, self.rng = list(values), rng

    def __call__(self, v: Var):
        return self.values.pop(0) if self.values else _random_value(self.rng, v.type)


class _EdgeSolver:
    """Havoc values with which one edge runs from a concrete state, found by z3: the edge is encoded once over
    symbolic pre-state constants (integer or bit-vector semantics, as sampled); each query binds them to the
    state and nudges every havoc above or below a random value, so repeated runs spread out."""

    def __init__(self, program: Program, edge: Edge, bitvector: bool):
        self.ok = not any(isinstance(v.type, ArrayType) for v in edge.reads() | edge.writes())
        if not self.ok:
            return
        enc = self.enc = Encoder(program, bitvector, prefix="smp.")
        self.pre = {v.name: (enc.const(f"smp.{v.name}", v.type), v.type) for v in edge.reads()}
        env: dict[str, Any] = {n: c for n, (c, _) in self.pre.items()}
        self.havocs: list[tuple[Var, z3.ExprRef]] = []
        conds: list[z3.BoolRef] = []
        for st in edge.stmts:
            if isinstance(st, Assign):
                env[st.lhs.name] = enc.expr(st.rhs, env)
            elif isinstance(st, Havoc):
                for v in st.vars:
                    c = enc.fresh(v.name, v.type)
                    self.havocs.append((v, c))
                    conds += enc.in_range(c, v.type)
                    env[v.name] = c
            elif isinstance(st, Assume):
                conds.append(enc.expr(st.cond, env))
            else:               # an assertion: the states before it are what is sampled
                break
        self.ok = bool(self.havocs)
        self.solver = z3.Solver()
        self.solver.set("timeout", SOLVE_MS)
        self.solver.add(*conds)

    def values(self, state: dict, rng: random.Random) -> list[Any] | None:
        s = self.solver
        s.push()
        try:
            for n, (c, t) in self.pre.items():
                s.add(c == self.enc.value(state[n], t))
            nudge = []
            for v, c in self.havocs:
                if isinstance(v.type, IntType):
                    r = self.enc.value(_random_value(rng, v.type), v.type)
                    nudge.append(c >= r if rng.random() < 0.5 else c <= r)
            if s.check(*nudge) != z3.sat and (not nudge or s.check() != z3.sat):
                return None
            m = s.model()
            return [self.enc.to_python(m.eval(c, model_completion=True), v.type) for v, c in self.havocs]
        except (z3.Z3Exception, KeyError, TypeError, ValueError):
            return None
        finally:
            s.pop()


def _random_value(rng: random.Random, t, consts: list[int] | None = None) -> Any:
    """A random value of type `t`; one of `consts` (wrapped into `t`), when given, for an integer."""
    if isinstance(t, BoolType):
        return rng.random() < 0.5
    if isinstance(t, IntType) and consts:
        k = rng.choice(consts)
        return t.wrap(k) if t.bounded else k
    if isinstance(t, IntType):
        r = rng.random()
        if r < 0.75 or not t.bounded:
            return t.wrap(rng.randint(-4, 16)) if t.bounded else rng.randint(-4, 16)
        if r < 0.85:
            return rng.choice([t.min, t.max, t.min + 1, t.max - 1])
        return rng.randint(t.min, t.max)
    return ArrayValue(_random_value(rng, t.elem, consts))


LONG_RUNS = 2              # runs for the points no short run reached ...
LONG_STEPS = 25            # ... each this many times the short runs' steps
_CHECK_EVERY = 64          # steps between two looks at the deadline and the samples' count
RUNS_PER_POINT = 4         # the short runs share a point's samples: no run records more than 1/4 of them, so
                           # one long loop does not fill them all with the same inputs


PATH_STEPS = 6             # cutpoint steps of the paths z3 finds to points no run reached
PATH_SHARE = 0.5           # of the time left to the deadline, for those paths,
PATH_SECONDS = 2.0         # and at most this long: samples are hints, the caller's search needs the time


def sample_states(program: Program, points: set[int], seed: int = 0, runs: int = 32, max_steps: int = 600,
                  per_point: int = 200, bitvector: bool = False, deadline: Deadline | None = None,
                  arrays: bool = False, system=None) -> dict[int, list[dict]]:
    """States (scalar variables, and copies of the arrays with `arrays`) seen at `points` in random runs of the
    concrete interpreter. A point that no short run reaches gets short runs whose inputs are sometimes the
    program's constants (one behind a branch on a character), then, if still unreached (one behind a loop of
    a thousand iterations), a few long runs: without samples, every candidate there reaches Houdini, and
    contradictory ones (`k ≥ 0` and `k ≤ -1`) make any set of candidates vacuously inductive. The long runs take random steps only (a
    step z3 must find values for costs about a millisecond, too much for thousands of them) and stop at the
    deadline. Points still unreached, given the cutpoint graph's encoding `system` (`smt.cpg_system.CPGSystem`),
    get the states of paths z3 finds to them (`solved_states`) and of random runs from those."""
    rng = random.Random(seed)
    out: dict[int, list[dict]] = {p: [] for p in points}
    sampler = RandomRuns(program, bitvector, arrays, rng)
    for _ in range(runs):
        if deadline is not None and deadline.expired():
            break
        sampler.run(out, max_steps, per_point, max(per_point // RUNS_PER_POINT, 1))
    missing = {p: [] for p in points if not out[p]}
    for _ in range(runs if missing else 0):     # runs whose inputs are sometimes the program's constants
        if deadline is not None and deadline.expired():
            break
        sampler.run(missing, max_steps, per_point, max(per_point // RUNS_PER_POINT, 1), constants=True)
    out.update({p: v for p, v in missing.items() if v})
    missing = {p: [] for p in points if not out[p]}
    for _ in range(LONG_RUNS if missing else 0):
        if deadline is not None and deadline.expired():
            break
        sampler.run(missing, max_steps * LONG_STEPS, per_point, per_point, solve=False, deadline=deadline)
    out.update({p: v for p, v in missing.items() if v})
    missing = {p: [] for p in points if not out[p]}
    if missing and system is not None:
        cap = Deadline.after(PATH_SECONDS) if deadline is None \
            else deadline.cap(min(deadline.left() * PATH_SHARE, PATH_SECONDS))
        for node, state in solved_states(system, set(missing), cap):
            for p, states in sampler.states_from(node, state, set(missing), max_steps, per_point).items():
                missing[p].extend(states[:per_point - len(missing[p])])
    return {**out, **missing}


def solved_states(system, points: set[int], deadline: Deadline, steps: int = PATH_STEPS
                  ) -> list[tuple[int, dict]]:
    """(point, state) of the first visit of each of `points` that some path of at most `steps` cutpoint steps
    reaches, as z3 finds the paths in `system`'s pc-encoded transition system; a point found is not asked for
    again. The states are the model's, read as the interpreter's values (`evidence.replay.model_state`): a
    state of the encoding's semantics, which the interpreter's is tested against; a wrong one could only make
    the samples drop a candidate, never make a proof."""
    from looprover.evidence.replay import model_state     # evidence builds on the domains, not the reverse
    found: list[tuple[int, dict]] = []
    try:
        ts = system.ts
        s = plain_solver()
        s.add(ts.at(ts.init, 0))
        todo = {p for p in points if p in system.pc_id}
        for k in range(1, steps + 1):
            if not todo or deadline.expired():
                break
            s.add(ts.trans_at(k - 1))
            while todo and not deadline.expired():
                hit = z3.Bool(f"!reach{k}.{len(found)}")
                s.add(z3.Implies(hit, z3.Or([system.pc_at(k) == system.pc_id[p] for p in todo])))
                if check_unpaused(s, hit, deadline=deadline, timeout=deadline.left()) != z3.sat:
                    break
                m = s.model()
                for j in range(k + 1):
                    node = system.node_of.get(m.eval(system.pc_at(j), model_completion=True).as_long())
                    if node in todo:
                        todo.discard(node)
                        found.append((node, model_state(system, m, system.state_at(j))))
    except (OutOfTime, GiveUp):
        pass                # the encoding or a query ran out: the paths found so far
    return found


class RandomRuns:
    """Random runs of the concrete interpreter from a random state, recording the states at given points."""

    def __init__(self, program: Program, bitvector: bool, arrays: bool, rng: random.Random):
        self.program, self.bitvector, self.rng = program, bitvector, rng
        self.scalars = [n for n, i in program.variables.items() if not hasattr(i.var.type, "elem")]
        self.arrs = [n for n, i in program.variables.items() if arrays and hasattr(i.var.type, "elem")]
        self.solvers: dict[int, _EdgeSolver] = {}
        self.consts = program_constants(program)

    def states_from(self, loc: int, state: dict, points: set[int], max_steps: int, per_point: int = 8
                    ) -> dict[int, list[dict]]:
        """States seen at `points` in one random run from `loc` in `state` (which the run changes): every one is
        reachable from it. Houdini's refutation by running (`evidence/certify.py`) asks for them."""
        out: dict[int, list[dict]] = {p: [] for p in points}
        self.run(out, max_steps, per_point, per_point, solve=False, start=(loc, state))
        return out

    def run(self, out: dict[int, list[dict]], max_steps: int, per_point: int, per_run: int, solve: bool = True,
            deadline: Deadline | None = None, constants: bool = False, start: tuple[int, dict] | None = None
            ) -> None:
        """Record up to `per_run` states of this run at each point, up to `per_point` in all. `solve`: where no
        edge runs on random values, let z3 choose them (`_solved_step`). Every
        `_CHECK_EVERY` steps the run looks at the deadline and ends once every point has its samples. `start`:
        the run's first location and state (which it changes), instead of a random state at the entry."""
        program, rng = self.program, self.rng
        ev = Evaluator("wrap" if self.bitvector else "math")
        oracle = _RandomOracle(rng, self.consts if constants else [])
        if start is None:
            loc, state = program.init, {n: _random_value(rng, i.var.type) for n, i in program.variables.items()}
        else:
            loc, state = start
        mine: dict[int, int] = {}
        try:
            for step in range(max_steps):
                if loc in out and len(out[loc]) < per_point and mine.get(loc, 0) < per_run:
                    mine[loc] = mine.get(loc, 0) + 1
                    out[loc].append({**{n: state[n] for n in self.scalars}, **{n: state[n].copy() for n in self.arrs}})
                if loc == program.exit:
                    break
                if step % _CHECK_EVERY == 0 and ((deadline is not None and deadline.expired())
                                                 or all(len(v) >= per_point for v in out.values())):
                    break
                edges = list(program.out_edges(loc))
                rng.shuffle(edges)
                moved = False
                for e in edges:
                    r = try_edge(ev, e, state, oracle)
                    if r.blocked is not None:
                        continue
                    if r.violated is not None:
                        break
                    state = commit(r)
                    loc, moved = e.dst, True
                    break
                else:
                    moved = solve and _solved_step(program, edges, state, ev, rng, self.solvers, self.bitvector)
                    if moved:
                        loc, state = moved
                if not moved:
                    break
        except (UndefinedBehavior, KeyError, TypeError):
            pass


def _solved_step(program: Program, edges: list[Edge], state: dict, ev: Evaluator, rng: random.Random,
                 solvers: dict[int, _EdgeSolver], bitvector: bool) -> tuple[int, dict] | None:
    """(the next location, the next state) of an edge that z3's havoc values let run, if one does."""
    for e in edges:
        es = solvers.get(id(e))
        if es is None:
            es = solvers[id(e)] = _EdgeSolver(program, e, bitvector)
        if not es.ok:
            continue
        vals = es.values(state, rng)
        if vals is None:
            continue
        r = try_edge(ev, e, state, _ListOracle(vals, rng))
        if r.blocked is None and r.violated is None:
            return e.dst, commit(r)
    return None
