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
