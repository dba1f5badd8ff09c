"""The cell abstraction (`transforms/cells.py`): the direction of its over-approximation on concrete runs (every
run of the program, seen at any cell, is a run of the abstract program, a violation included), and its TRUE
carried over with a proof that is checked on the program."""
from __future__ import annotations

import random

import pytest
import z3

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.program.cfa import Assert, Assign, Assume, Havoc
from looprover.program.expr import ArrayType, BoolType, IntType, Select, Store, walk
from looprover.program.interp import ArrayValue, Evaluator, Oracle, UndefinedBehavior, commit, try_edge
from looprover.smt.encode import Encoder
from looprover.evidence.proofs import TransformedProof
from looprover.transforms.cells import CellAbstraction
from looprover.verdict import Status

from helpers.svcomp_c import load_main

# array programs with small bounds, most of them unsafe for some inputs (so that violations are simulated too)
PROGRAMS = [
    "int a[6], b[6]; int n = __VERIFIER_nondet_int(); __VERIFIER_assume(n >= 0 && n <= 6);"
    " for (int i = 0; i < n; i++) { a[i] = __VERIFIER_nondet_int(); b[i] = a[i] + 1; }"
    " for (int i = 0; i < n; i++) __VERIFIER_assert(b[i] > a[i] && a[i] < 5);",
    "int a[5]; for (int i = 0; i < 5; i++) a[i] = i; for (int i = 0; i + 1 < 5; i++) __VERIFIER_assert(a[i] < a[i+1]);"
    " int k = __VERIFIER_nondet_int(); __VERIFIER_assume(k >= 0 && k < 5); a[k] = 7; __VERIFIER_assert(a[4] != 7);",
    "int a[4], c[4]; for (int i = 0; i < 4; i++) { int x = __VERIFIER_nondet_int(); if (x > 2) a[i] = x; else a[i] = 0; }"
    " for (int i = 0; i < 4; i++) c[3 - i] = a[i]; for (int i = 0; i < 4; i++) __VERIFIER_assert(c[i] != 5);",
    "int a[8]; int j = 0; for (int i = 0; i < 8; i++) { if (__VERIFIER_nondet_int() > 6) break; a[i] = j; j = j + i - 3; }"
    " int m = __VERIFIER_nondet_int(); __VERIFIER_assume(m >= 0 && m < 8); if (a[m] < -2) reach_error();",
]


class _Random(Oracle):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def __call__(self, v):
        return _value(self.rng, v.type)


def _value(rng, t):
    if isinstance(t, BoolType):
        return rng.random() < 0.5
    if isinstance(t, IntType):
        return t.wrap(rng.randint(-2, 8))
    return ArrayValue(_value(rng, t.elem), {k: _value(rng, t.elem) for k in range(8) if rng.random() < 0.5})


def _run(p, rng, steps=400):
    """A random run: [(edge, state before, state after or None when the edge violates)]."""
    ev = Evaluator("math")
    state = {n: _value(rng, i.var.type) for n, i in p.variables.items()}
    oracle, loc, out = _Random(rng), p.init, []
    for _ in range(steps):
        edges = list(p.out_edges(loc))
        rng.shuffle(edges)
        for e in edges:
            try:
                r = try_edge(ev, e, state, oracle)
            except UndefinedBehavior:
                return out
            if r.blocked is not None:
                continue
            if r.violated is not None:
                out.append((e, state, None))
                return out
            before = _copy(state)               # `commit` updates the arrays in place
            new = commit(r)
            out.append((e, before, _copy(new)))
            state, loc = new, e.dst
            break
        else:
            return out
    return out


def _copy(state: dict) -> dict:
    return {n: v.copy() if isinstance(v, ArrayValue) else v for n, v in state.items()}


def _step_possible(abstract, edge, pre: dict, post: dict | None) -> bool:
    """Whether the abstract `edge` can go from state `pre` to `post` (to a violation of its assertion when
    `post` is None), some values of its havocs chosen by z3."""
    enc = Encoder(abstract, False, prefix="sim.")
    env = {n: _literal(enc, v, abstract.variables[n].var.type) for n, v in pre.items()}
    conds, failed = [], []
    for st in edge.stmts:
        if isinstance(st, Assign):
            env[st.lhs.name] = enc.expr(st.rhs, env)
        elif isinstance(st, Havoc):
            for v in st.vars:
                c = enc.fresh(v.name, v.type)
                conds += enc.in_range(c, v.type)
                env[v.name] = c
        elif isinstance(st, Assume):
            conds.append(enc.expr(st.cond, env))
        elif isinstance(st, Assert):
            if post is None:
                failed.append(z3.Not(enc.expr(st.cond, env)))
                break
            conds.append(enc.expr(st.cond, env))
    s = z3.Solver()
    s.add(*conds)
    if post is None:
        s.add(z3.Or(failed) if failed else z3.BoolVal(False))
    else:
        s.add(*[env[n] == _literal(enc, v, abstract.variables[n].var.type) for n, v in post.items()])
    return s.check() == z3.sat


def _literal(enc, v, t):
    """A value of the interpreter as a z3 literal (arrays as a constant array with stores)."""
    if not isinstance(v, ArrayValue):
        return enc.value(v, t)
    a = z3.K(enc.sort(t.index), enc.value(v.default, t.elem))
    for k, x in v.cells.items():
        a = z3.Store(a, enc.value(k, t.index), enc.value(x, t.elem))
    return a


def _project(p, abstract, state: dict, cell: int) -> dict:
    out = {}
    for n, info in p.variables.items():
        if isinstance(info.var.type, ArrayType):
            out[f"{n}@cell"] = state[n].get(cell)
        else:
            out[n] = state[n]
    out.update({n: cell for n in abstract.variables if n.startswith("__lr_idx_")})
    return out


def _violation_cell(edge, state) -> int | None:
    ev = Evaluator("math")
    for n in (n for st in edge.stmts if isinstance(st, (Assume, Assert)) for n in walk(st.cond)):
        if isinstance(n, Select):
            return ev.eval(n.index, state)
    return None


@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_every_run_seen_at_any_cell_is_a_run_of_the_abstraction(index, tmp_path):
    pytest.importorskip("looprover.frontend.c")
    p = load_main(tmp_path, "p", PROGRAMS[index])
    t = CellAbstraction().apply(p)
    a = t.program
    assert not any(isinstance(v.type, ArrayType) for v in a.all_vars)
    assert not any(isinstance(n, (Select, Store)) for _, st in a.statements()
                   for e in (getattr(st, "rhs", None), getattr(st, "cond", None)) if e is not None for n in walk(e))
    twin = dict(zip(p.edges, a.edges[1:]))          # the abstraction keeps the edges in order after its entry
    rng = random.Random(index)
    steps = violations = 0
    for _ in range(30):
        run = _run(p, rng)
        if not run:
            continue
        last_edge, last_pre, last_post = run[-1]
        vc = _violation_cell(last_edge, last_pre) if last_post is None else None
        for cell in {rng.randint(0, 7), 0, vc if vc is not None else 1}:
            for e, pre, post in run:
                if post is None and cell != vc:
                    break           # the abstract run checks this violation at its own cell only
                ok = _step_possible(a, twin[e], _project(p, a, pre, cell),
                                    _project(p, a, post, cell) if post is not None else None)
                assert ok, f"cell {cell}: the abstraction cannot follow {e}"
                steps += 1
                violations += post is None
    assert steps > 100 and violations > 0


@pytest.mark.parametrize("engine", ["tpa", "multiloop"])
def test_engines_without_arrays_prove_an_array_program_on_its_cell_abstraction(engine, tmp_path):
    pytest.importorskip("looprover.frontend.c")
    body = "int a[100000]; int i = 0, j = 0; while (i < 100000) { a[i] = j; j = j + 2; __VERIFIER_assert(a[i] >= 0); i++; }"
    p = load_main(tmp_path, "p", body)
    v = verify(engine, p, timeout=30)
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TransformedProof)
    assert v.evidence.check(p, False, Deadline.after(30)) is None
    bad = load_main(tmp_path, "bad", body.replace("j = j + 2;", "j = j - 2;"))
    assert verify(engine, bad, timeout=10).status != Status.TRUE


EQUAL = """(set-logic HORN)
(declare-fun inv (Int Int (Array Int Int) (Array Int Int)) Bool)
(assert (forall ((n Int) (a (Array Int Int)) (b (Array Int Int))) (=> (= a b) (inv 0 n a b))))
(assert (forall ((i Int) (n Int) (a (Array Int Int)) (b (Array Int Int)) (v Int))
  (=> (and (inv i n a b) (< i n)) (inv (+ i 1) n (store a i v) (store b i v)))))
(assert (forall ((i Int) (n Int) (a (Array Int Int)) (b (Array Int Int)))
  (=> (and (inv i n a b) (not (= a b))) false)))
"""


@pytest.mark.parametrize("twin", [False, True], ids=["sat", "unsat"])
def test_whole_array_equalities_are_abstracted_soundly(tmp_path, twin):
    """`a == b` of a Horn clause becomes `a@cell == b@cell ∧ fresh`: the abstraction takes the file, and tpa
    on it never answers wrongly (the twin, which writes v + 1 to b, is unsat)."""
    from looprover.frontend.chc import load_chc_program
    path = tmp_path / "eq.smt2"
    path.write_text(EQUAL.replace("(store b i v)", "(store b i (+ v 1))") if twin else EQUAL)
    p = load_chc_program(path)
    assert not any(isinstance(v.type, ArrayType) for v in CellAbstraction().apply(p).program.all_vars)
    v = verify("tpa", p, timeout=10)
    assert v.status != (Status.TRUE if twin else Status.FALSE), v.reason
    if not twin:
        assert v.status == Status.TRUE, v.reason
