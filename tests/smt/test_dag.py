"""The SSA encoding of DAGs (`smt.dag`): every path's values reach its end, whatever joins lie between.

Why random DAGs: a join compares only the names written since its incoming environments last agreed
(`dag._diverged`); a name it missed would keep one branch's value on the other's paths. Here every path of a
random DAG of assignments is forced in z3 and each variable's value at the sink is compared with the path's own
execution (most variables are never written, as in inlined code, where a join has thousands to skip)."""
from __future__ import annotations

import random

import pytest
import z3

from looprover.program.cfa import Assign, Edge
from looprover.program.expr import I32, Binary, IntConst, Var
from looprover.smt.dag import DagSpec, SsaEnv, _diverged, encode_dag
from looprover.smt.encode import Encoder

VARS = [Var(f"x{i}", I32) for i in range(12)]


def _random_dag(rng: random.Random, n: int) -> tuple[DagSpec, list[list[Edge]]]:
    """A DAG over nodes 0..n-1 (sink n-1, every node reaches it) whose edges assign constants or sums; and its
    paths from 0 to the sink."""
    succ: dict[int, list[tuple[Edge, int]]] = {}
    for u in range(n - 1):
        dsts = {u + 1} | {rng.randrange(u + 1, n) for _ in range(rng.randrange(0, 3))}
        for v in sorted(dsts):
            stmts = []
            for _ in range(rng.randrange(0, 3)):
                x = rng.choice(VARS[:6])        # x6.. are never written
                rhs = IntConst(rng.randrange(-5, 6), I32) if rng.random() < 0.5 else \
                    Binary("+", rng.choice(VARS), IntConst(rng.randrange(1, 4), I32), I32)
                stmts.append(Assign(x, rhs))
            succ.setdefault(u, []).append((Edge(u, v, tuple(stmts)), v))
    paths: list[list[Edge]] = []

    def walk(u: int, path: list[Edge]) -> None:
        if u == n - 1:
            paths.append(list(path))
            return
        for e, v in succ[u]:
            walk(v, path + [e])
    walk(0, [])
    return DagSpec(0, list(range(n)), succ, frozenset({n - 1})), paths


def _run(path: list[Edge], start: dict[str, int]) -> dict[str, int]:
    vals = dict(start)
    for e in path:
        for st in e.stmts:
            r = st.rhs
            vals[st.lhs.name] = r.value if isinstance(r, IntConst) else vals[r.lhs.name] + r.rhs.value
    return vals


@pytest.mark.parametrize("seed", range(25))
def test_every_path_ends_with_its_own_values(seed):
    rng = random.Random(seed)
    spec, paths = _random_dag(rng, rng.randrange(3, 9))
    enc = Encoder(None, False)
    enc.var_types = {v.name: v.type for v in VARS}
    env0 = {v.name: z3.Int(f"{v.name}@0") for v in VARS}
    dag = encode_dag(enc, spec, env0)
    end = dag.envs[spec.order[-1]]
    taken = {id(ee.edge): ee.taken for eds in dag.out.values() for ee in eds}
    start = {v.name: rng.randrange(-3, 4) for v in VARS}
    for path in paths[:40]:
        s = z3.Solver()
        s.add(*dag.side, *(x == start[n] for n, x in env0.items()), *(taken[id(e)] for e in path))
        assert s.check() == z3.sat, "a path of the DAG cannot be taken"
        want = _run(path, start)
        s.add(z3.Or(*(enc.term(end[n], I32) != want[n] for n in want)))
        assert s.check() == z3.unsat, f"a variable ends with another path's value: {s.model()}"


def test_a_join_compares_only_what_was_written_since_its_inputs_agreed():
    root = SsaEnv.of({"a": 0, "b": 0, "c": 0}, entry=True)
    shared = root.written({"a": 1})
    left, right = shared.written({"b": 2}), shared.written({"c": 3}).written({"b": 4})
    names, common = _diverged([left, right])
    assert sorted(names) == ["b", "c"] and common is shared.log
    assert _diverged([shared, shared]) == ([], shared.log)
    # an environment made from a mapping counts every name as written
    assert sorted(_diverged([SsaEnv.of({"a": 1, "b": 0, "c": 0}), shared])[0]) == ["a", "b", "c"]
