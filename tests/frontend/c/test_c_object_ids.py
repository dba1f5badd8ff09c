"""`object_ids.py`: the values a pointer's id can take, and the comparisons with other ids dropped. The narrowed
program must have exactly the runs of the program before narrowing (random pointer programs on the interpreter),
and a pointer read uninitialised must stay an invalid access."""
from __future__ import annotations

import random

import pytest

import looprover.frontend.c.lower as lower_module
from looprover.frontend.c import load_c_program
from looprover.frontend.c.object_ids import ANY, narrowed, values
from looprover.program import interp
from looprover.program.cfa import Assign, Assume, Edge, Havoc
from looprover.program.expr import BOOL, I32, FALSE, ArrayType, Binary, Compare, IntConst, Select, Store, Var, ite
from tests.helpers.c_verdicts import body_verdict


def test_value_sets_follow_copies_conditionals_and_arrays():
    v, w, u, t, h = (Var(n, I32) for n in "vwuth")
    c = Var("c", BOOL)
    arr = Var("arr", ArrayType(I32, I32, 4))
    one, two, i = IntConst(1, I32), IntConst(2, I32), IntConst(0, I32)
    edges = [Edge(0, 1, (Assign(v, one), Assign(w, ite(c, v, two)), Assign(arr, Store(arr, i, w, arr.type)),
                         Assign(u, Select(arr, i, I32)), Assign(t, Binary("+", u, one, I32)), Havoc((h,)))),
             Edge(1, 2, (Assume(Compare("==", u, IntConst(5, I32))), Assume(Compare("==", IntConst(2, I32), u)),
                         Assume(Compare("==", t, IntConst(5, I32)))))]
    sets = values(edges, {v, w, u, t, h, arr})
    assert sets[v] == {1} and sets[w] == {1, 2} and sets[arr] == {1, 2} and sets[u] == {1, 2}
    assert sets[t] is ANY and sets[h] is ANY
    conds = [s.cond for s in narrowed(edges, {v, w, u, t, h, arr})[1].stmts]
    assert conds[0] == FALSE and conds[1] != FALSE and conds[2] != FALSE   # t's values are unknown


def _random_program(rng: random.Random, block_locals: bool = False) -> str:
    """Pointers assigned among arrays and compared with them; `block_locals`: two of the arrays (d, e) are
    locals of a loop's block, whose ids are variables under valid-memsafety (a new one per iteration)."""
    targets = ["a", "b", "c", "q", "p", "g"] + (["d", "e"] if block_locals else [])

    def stmt(depth: int) -> str:
        ptr = rng.choice(["p", "q", "g"])
        forms = [
            lambda: f"{ptr} = {rng.choice(targets)};",
            lambda: f"r += {ptr}[{rng.randrange(2)}];",
            lambda: f"{ptr}[{rng.randrange(2)}] = __VERIFIER_nondet_int() % 7;",
            lambda: f"if ({ptr} == {rng.choice(['a', 'b', 'c'] + (['d', 'e'] if block_locals else []))}) r += 100;",
            lambda: f"{ptr} = {ptr} + 0;",
            lambda: f"if (__VERIFIER_nondet_int() & 1) {{ {stmt(depth + 1)} }} else {{ {stmt(depth + 1)} }}",
            lambda: f"for (int i = 0; i < 2; i++) {{ {stmt(depth + 1)} {stmt(depth + 1)} }}",
        ]
        return forms[rng.randrange(7 if depth < 2 else 5)]()

    body = " ".join(stmt(0) for _ in range(rng.randrange(3, 8)))
    if block_locals:    # g may keep a dead iteration's d or e: reading it is invalid, comparing it is not
        body = f"for (int k = 0; k < 2; k++) {{ int d[2] = {{k, 1}}, e[3] = {{0}}; p = a; q = c; {body} }}"
    return ("extern int __VERIFIER_nondet_int(void);\nint a[2], b[2], c[3], r; int *g = b;\n"
            f"int main(void) {{ int *p = a, *q = c; {body} return 0; }}\n")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("memsafety", [False, True])
def test_narrowing_keeps_every_run_of_random_pointer_programs(tmp_path, monkeypatch, seed, memsafety):
    """Under valid-memsafety with locals of a block entered again: their ids are `Instances` (a test that took
    an instance id for a static one, or no id for any, would change a comparison's outcome)."""
    rng = random.Random(seed)
    changed = 0
    for n in range(10):
        path = tmp_path / f"p{seed}_{n}.c"
        path.write_text(_random_program(rng, block_locals=memsafety))
        narrow = load_c_program(path, memsafety=memsafety)
        with monkeypatch.context() as m:
            m.setattr(lower_module, "narrowed", lambda edges, tracked, seeds=None: edges)
            plain = load_c_program(path, memsafety=memsafety)
        changed += narrow.edges != plain.edges
        for _ in range(4):
            inputs = [rng.randrange(-3, 9) for _ in range(40)]
            runs = [interp.run(prog, interp.InputOracle(prog, inputs), signed_overflow="wrap", max_steps=100_000)
                    for prog in (narrow, plain)]
            r = [run.state.get("r") for run in runs]
            assert (runs[0].outcome, r[0]) == (runs[1].outcome, r[1]), (path.read_text(), inputs)
    assert changed >= 3     # the narrowing had something to drop


@pytest.mark.parametrize("init, expected", [("p = a;", "T"), ("if (__VERIFIER_nondet_int()) p = a;", "F(valid-deref)")])
def test_a_pointer_read_uninitialised_stays_an_invalid_access(tmp_path, init, expected):
    """p's only assigned value is a's id, but where it was never assigned its value is indeterminate."""
    got, verdict, _ = body_verdict(tmp_path, "uninit", "extern int __VERIFIER_nondet_int(void);\n",
                                   f"int a[2]; int *p; {init} *p = 1;", "valid-memsafety")
    assert got == expected, verdict


def test_a_pointer_to_a_block_local_designates_no_static_object(tmp_path):
    """Under valid-memsafety a local of a block entered again has a new id per entry (a variable); a pointer to
    it is still known not to designate the global array of the same type, so its writes are no writes of that
    array (they were `g[i] = p == g ? v : g[i]` in every iteration)."""
    path = tmp_path / "local.c"
    path.write_text("char g[4];\nint main(void) { for (int k = 0; k < 3; k++) { char buf[4]; char *p = buf;\n"
                    "p[k] = 1; if (p == g) return 1; } return 0; }\n")
    prog = load_c_program(path, memsafety=True)
    writes = [s for e in prog.edges for s in e.stmts if isinstance(s, Assign) and s.lhs.name == "g"]
    assert len(writes) <= 1, writes      # its initialisation only


def test_resolved_ids_fold_what_the_edge_decides_and_nothing_else():
    """`p := w; p == w` is true and `p == u` false (u another object's id), also `p == 0`; after w's rebirth, p's
    write or a havoc nothing is folded; a variable that is no object's id (`n`) is never taken for one."""
    from looprover.frontend.c.object_ids import resolved_ids
    from looprover.program.cfa import Assert
    from looprover.program.expr import TRUE
    w, u, p, q, n = (Var(x, I32) for x in ("w@id", "u@id", "p.obj", "q.obj", "n"))
    eq = lambda a, b: Compare("==", a, b)   # noqa: E731
    stmts = (Assign(p, w), Assign(q, p), Assert(eq(p, w)), Assert(eq(q, u)), Assert(eq(p, IntConst(0, I32))),
             Assert(eq(n, u)), Assert(eq(w, w)), Assert(Compare("!=", u, w)),
             Assign(w, Binary("-", w, IntConst(7, I32), I32)), Assert(eq(p, w)), Assert(eq(q, u)),
             Assign(p, u), Assert(eq(p, u)), Havoc((p,)), Assert(eq(p, u)))
    (edge,) = resolved_ids([Edge(0, 1, stmts)], frozenset({w, u}))
    conds = [str(s.cond) for s in edge.stmts if isinstance(s, Assert)]
    assert conds == [str(TRUE), str(FALSE), str(FALSE), str(eq(n, u)), str(TRUE), str(TRUE), str(eq(p, w)),
                     str(eq(q, u)), str(TRUE), str(eq(p, u))], conds


@pytest.mark.parametrize("seed", range(3))
def test_resolved_ids_keep_every_comparison_of_random_straight_line_code(seed):
    """On random straight-line code over the ids of three objects (each -k - jN, a birth subtracting N) and
    pointer variables copying them, constants or havocked, every folded comparison has the value the original
    has on random runs."""
    from looprover.frontend.c.object_ids import resolved_ids
    from looprover.program.cfa import Assert
    rng = random.Random(seed)
    N = 3
    ids = [Var(f"o{k}@id", I32) for k in (1, 2, 3)]
    ptrs = [Var(f"p{k}", I32) for k in range(3)]
    folded = 0
    for _ in range(60):
        stmts = []
        for _ in range(12):
            r = rng.random()
            if r < 0.35:
                stmts.append(Assign(rng.choice(ptrs), rng.choice(ids + ptrs + [IntConst(0, I32), IntConst(-2, I32)])))
            elif r < 0.45:
                o = rng.choice(ids)
                stmts.append(Assign(o, Binary("-", o, IntConst(N, I32), I32)))
            elif r < 0.5:
                stmts.append(Havoc((rng.choice(ptrs),)))
            else:
                a, b = rng.choice(ids + ptrs), rng.choice(ids + ptrs + [IntConst(0, I32), IntConst(-1, I32)])
                stmts.append(Assert(Compare(rng.choice(["==", "!="]), a, b)))
        (edge,) = resolved_ids([Edge(0, 1, tuple(stmts))], frozenset(ids))
        for _ in range(10):
            env = {o: -(k + 1) - N * rng.randrange(3) for k, o in enumerate(ids)}
            env.update({p: rng.choice([0, -1, -2, -3, -4, 5]) for p in ptrs})
            havocs = [rng.choice([0, -1, -2, -5, 7]) for _ in range(20)]

            def run(code):
                st, hv, out = dict(env), list(havocs), []

                def ev(x):
                    if isinstance(x, IntConst):
                        return x.value
                    if isinstance(x, Var):
                        return st[x]
                    if isinstance(x, Binary):
                        return ev(x.lhs) - ev(x.rhs)
                    if isinstance(x, Compare):
                        return (ev(x.lhs) == ev(x.rhs)) == (x.op == "==")
                    return x.value          # a folded BoolConst
                for s in code:
                    if isinstance(s, Assign):
                        st[s.lhs] = ev(s.rhs)
                    elif isinstance(s, Havoc):
                        st[s.vars[0]] = hv.pop()
                    else:
                        out.append(ev(s.cond))
                return out
            assert run(stmts) == run(edge.stmts), (stmts, edge.stmts, env)
        folded += edge.stmts != tuple(stmts)
    assert folded >= 20


def test_a_struct_pointer_copied_into_a_local_designates_one_object_per_call(tmp_path, monkeypatch):
    """Each inlined call of f gets its own `q = p->a` on the edge, so `q[i]` reads one object instead of every
    int array of the program; the program runs as before, with its out-of-bounds access."""
    path = tmp_path / "calls.c"
    path.write_text(
        "extern int __VERIFIER_nondet_int(void);\nstruct s { int a[2]; int b; };\nint r;\n"
        "void f(struct s *p, int k) { int *q = p->a; q[k] += p->b; r += q[0]; }\n"
        "int main(void) { for (int i = 0; i < 2; i++) { struct s x = {{1, 2}, 3}, y = {{4, 5}, 6};\n"
        "  struct s *z = __VERIFIER_nondet_int() ? &x : &y; int k = __VERIFIER_nondet_int();\n"
        "  if (k < 0 || k > 2) return 0;\n"
        "  f(&x, k & 1); f(z, 1); f(&y, k); r += x.a[0] + y.a[1]; } return 0; }\n")
    resolved = load_c_program(path, memsafety=True)
    with monkeypatch.context() as m:
        m.setattr(lower_module, "resolved_ids", lambda edges, distinct: edges)
        plain = load_c_program(path, memsafety=True)
    size = lambda prog: sum(len(str(s)) for e in prog.edges for s in e.stmts)   # noqa: E731
    assert size(resolved) < size(plain)
    rng = random.Random(5)
    outcomes = set()
    for _ in range(40):
        inputs = [rng.randrange(-1, 4) for _ in range(10)]
        runs = [interp.run(prog, interp.InputOracle(prog, inputs), signed_overflow="wrap", max_steps=100_000)
                for prog in (resolved, plain)]
        assert (runs[0].outcome, runs[0].state.get("r")) == (runs[1].outcome, runs[1].state.get("r")), inputs
        outcomes.add(str(runs[0].outcome))
    assert len(outcomes) >= 2, outcomes     # safe runs and the access at a[2]
